! MPI from Fortran 2008 (`use mpi_f08`): Open MPI's mpi_send_f08_ ... call ompi_send_f ...,
! which libcallpath-mpi.so wraps. Rank 1 sends 3 messages of N doubles to rank 0, which
! receives them with MPI_STATUS_IGNORE; then a barrier.
program fortran08
  use mpi_f08
  implicit none
  integer, parameter :: n = 250
  integer :: rank, k
  double precision :: buf(n)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  buf = rank
  do k = 1, 3
    if (rank == 1) call MPI_Send(buf, n, MPI_DOUBLE_PRECISION, 0, 5, MPI_COMM_WORLD)
    if (rank == 0) call MPI_Recv(buf, n, MPI_DOUBLE_PRECISION, 1, 5, MPI_COMM_WORLD, &
                                 MPI_STATUS_IGNORE)
  end do
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a)', 'fortran08 done'
  call MPI_Finalize()
end program fortran08

! MPI from Fortran (mpif.h-style bindings through `use mpi`): Open MPI's Fortran
! functions (mpi_send_ ...) call the PMPI_ C functions directly, so libcallpath-mpi.so
! wraps the Fortran symbols themselves. Rank 1 sends NMSG messages of N doubles to rank 0
! (8*N bytes each) after some work; everyone then joins an Allreduce of N doubles.
program fortran_mpi
  use mpi
  implicit none
  integer, parameter :: n = 500, nmsg = 4
  integer :: rank, nranks, ierr, i
  double precision :: buf(n), red(n)
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nranks, ierr)
  buf = rank
  if (rank == 1) then
    call sender(buf)
  else if (rank == 0) then
    call receiver(buf)
  end if
  call mpi_allreduce(buf, red, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a)', 'fortran done: ', nranks, ' ranks'
  call mpi_finalize(ierr)
contains
  subroutine sender(b)
    double precision, intent(inout) :: b(n)
    integer :: k, j
    do k = 1, nmsg
      do j = 1, 2000000
        b(mod(j, n) + 1) = b(mod(j, n) + 1) * 1.0000001d0 + 1d-9
      end do
      call mpi_send(b, n, MPI_DOUBLE_PRECISION, 0, 5, MPI_COMM_WORLD, ierr)
    end do
  end subroutine sender
  subroutine receiver(b)
    double precision, intent(inout) :: b(n)
    integer :: k, status(MPI_STATUS_SIZE)
    do k = 1, nmsg
      call mpi_recv(b, n, MPI_DOUBLE_PRECISION, 1, 5, MPI_COMM_WORLD, status, ierr)
    end do
  end subroutine receiver
end program fortran_mpi

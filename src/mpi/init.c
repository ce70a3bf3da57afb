/* MPI_Init, MPI_Init_thread and MPI_Finalize, and the helpers every wrapper uses. */
#include "mpi/wrap.h"

uint64_t cp_mpi_bytes(int count, MPI_Datatype t)
{
	int size = 0;
	if (count <= 0 || PMPI_Type_size(t, &size) != MPI_SUCCESS || size <= 0)
		return 0;
	return (uint64_t)count * (uint64_t)size;
}

uint64_t cp_mpi_status_bytes(const MPI_Status *st, MPI_Datatype t)
{
	int count = 0;
	if (PMPI_Get_count(st, t, &count) != MPI_SUCCESS || count == MPI_UNDEFINED)
		return 0;
	return cp_mpi_bytes(count, t);
}

int cp_mpi_comm_size(MPI_Comm comm)
{
	int n = 0;
	return PMPI_Comm_size(comm, &n) == MPI_SUCCESS ? n : 0;
}

int cp_mpi_comm_rank(MPI_Comm comm)
{
	int r = -1;
	return PMPI_Comm_rank(comm, &r) == MPI_SUCCESS ? r : -1;
}

void cp_mpi_confirm_rank(void)
{
	int rank = cp_mpi_comm_rank(MPI_COMM_WORLD), size = cp_mpi_comm_size(MPI_COMM_WORLD);
	if (callpath_mpi_rank && rank >= 0)
		callpath_mpi_rank(rank, size);
}

CP_MPI_EXPORT int MPI_Init(int *argc, char ***argv)
{
	struct cp_mpi_call c;
	cp_mpi_begin(&c);
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS)
		cp_mpi_confirm_rank();
	CP_MPI_END(&c, MPI_Init);
	return rc;
}

CP_MPI_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	struct cp_mpi_call c;
	cp_mpi_begin(&c);
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS)
		cp_mpi_confirm_rank();
	CP_MPI_END(&c, MPI_Init_thread);
	return rc;
}

CP_MPI_EXPORT int MPI_Finalize(void)
{
	struct cp_mpi_call c;
	cp_mpi_begin(&c);
	int rc = PMPI_Finalize();
	CP_MPI_END(&c, MPI_Finalize);
	return rc;
}

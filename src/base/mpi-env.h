/* What an MPI launcher tells its processes in the environment, read by `callpath record`
 * (under mpirun) and by the runtime at start (the rank in the measurement files' headers
 * from the first sample, before the program calls MPI_Init). */
#ifndef CP_BASE_MPI_ENV_H
#define CP_BASE_MPI_ENV_H

/* The MPI rank of this process from the launcher's environment (Open MPI's
 * OMPI_COMM_WORLD_RANK, MPICH/Hydra's PMI_RANK, PMIx's PMIX_RANK), or -1; *size (may be
 * NULL) gets the number of ranks, 0 if unknown. No allocation. */
int cp_mpi_env_rank(int *size);

#endif

/* The Fortran bindings. Open MPI's mpif.h and `use mpi` functions (mpi_send_ in
 * libmpi_mpifh.so) and the `use mpi_f08` ones (mpi_send_f08_, which call ompi_send_f)
 * call the PMPI_ C functions directly, never MPI_Send, so the C wrappers do not see a
 * Fortran program's calls: these wrap the Fortran entry points (mpi_X_ and ompi_X_f, the
 * same code in libmpi_mpifh.so) and forward to the next definition. Arguments are
 * Fortran handles (MPI_Fint), converted with the PMPI_*_f2c functions to size the bytes. */
#include "mpi/wrap.h"

#include <dlfcn.h>

typedef MPI_Fint fint;

static void *next_symbol(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static uint64_t fbytes(const fint *count, const fint *type)
{
	return cp_mpi_bytes(*count, PMPI_Type_f2c(*type));
}

static int froot(const fint *root, const fint *comm)
{
	return cp_mpi_comm_rank(PMPI_Comm_f2c(*comm)) == *root;
}

/* What a Fortran receive got: from its status, or the posted size when it was ignored. */
static uint64_t frecv_bytes(const fint *count, const fint *type, const fint *status)
{
	MPI_Status st;
	if (status == MPI_F_STATUS_IGNORE || PMPI_Status_f2c(status, &st) != MPI_SUCCESS)
		return fbytes(count, type);
	return cp_mpi_status_bytes(&st, PMPI_Type_f2c(*type));
}

/* The call blocked on Fortran communicator comm (wrap.h, cp_mpi_wait_on). */
static void fwait_on(struct cp_mpi_call *c, uint32_t kind, const fint *comm, int peer, int tag)
{
	cp_mpi_wait_on(c, kind, PMPI_Comm_f2c(*comm), peer, tag);
}

/* A receive: the source and tag from its status, the posted ones when it was ignored. */
static void frecv_wait(struct cp_mpi_call *c, const fint *peer, const fint *tag, const fint *comm,
		       const fint *status)
{
	MPI_Status st;
	if (status == MPI_F_STATUS_IGNORE || PMPI_Status_f2c(status, &st) != MPI_SUCCESS)
		fwait_on(c, CP_MF_SYNC_MPI_RECV, comm, *peer, *tag);
	else
		fwait_on(c, CP_MF_SYNC_MPI_RECV, comm, st.MPI_SOURCE, st.MPI_TAG);
}

/* Defines the wrapper `sym` of the Fortran function of that name: calls the next `sym`
 * with args, then runs `always` (which may use the parameters), and `account` (which may
 * use `c` too) when measuring. */
#define FWRAP_ALWAYS(sym, params, args, always, account)                                           \
	FWRAP_AROUND(sym, params, args, (void)0, always, account)
/* The same, with `before` (which may use c) run before the call when measuring. */
#define FWRAP_AROUND(sym, params, args, before, always, account)                                   \
	CP_MPI_EXPORT void sym params                                                              \
	{                                                                                          \
		static void(*real) params;                                                         \
		struct cp_mpi_call c;                                                              \
		if (!real)                                                                         \
			real = (void(*) params)next_symbol(#sym);                                  \
		cp_mpi_begin(&c);                                                                  \
		if (c.on) {                                                                        \
			before;                                                                    \
		}                                                                                  \
		real args;                                                                         \
		always;                                                                            \
		if (c.on) {                                                                        \
			account;                                                                   \
		}                                                                                  \
		CP_MPI_END(&c, sym);                                                               \
	}

#define FWRAP(sym, params, args, account) FWRAP_ALWAYS(sym, params, args, (void)0, account)

/* Both spellings of one function. */
#define FWRAP2(name, params, args, account)                                                        \
	FWRAP(mpi_##name##_, params, args, account)                                                \
	FWRAP(ompi_##name##_f, params, args, account)

/* MPI_Init confirms the rank even when the runtime records no MPI values. */
#define CONFIRM_RANK                                                                               \
	if (*ierr == MPI_SUCCESS)                                                                  \
	cp_mpi_confirm_rank()
#define FWRAP_INIT(sym, params, args) FWRAP_ALWAYS(sym, params, args, CONFIRM_RANK, (void)0)

FWRAP_INIT(mpi_init_, (fint * ierr), (ierr))
FWRAP_INIT(ompi_init_f, (fint * ierr), (ierr))
FWRAP_INIT(mpi_init_thread_, (fint * required, fint *provided, fint *ierr),
	   (required, provided, ierr))
FWRAP_INIT(ompi_init_thread_f, (fint * required, fint *provided, fint *ierr),
	   (required, provided, ierr))
FWRAP2(finalize, (fint * ierr), (ierr), (void)0)

#define SEND_PARAMS                                                                                \
	(void *buf, fint *count, fint *type, fint *peer, fint *tag, fint *comm, fint *ierr)
#define SEND_ARGS (buf, count, type, peer, tag, comm, ierr)
#define SENT_IF_PEER                                                                               \
	if (*peer != MPI_PROC_NULL)                                                                \
	cp_mpi_sent(&c, fbytes(count, type))
#define SEND_WAIT                                                                                  \
	if (*peer != MPI_PROC_NULL) {                                                              \
		cp_mpi_sent(&c, fbytes(count, type));                                              \
		fwait_on(&c, CP_MF_SYNC_MPI_SEND, comm, *peer, *tag);                              \
	}
FWRAP2(send, SEND_PARAMS, SEND_ARGS, SEND_WAIT)
FWRAP2(ssend, SEND_PARAMS, SEND_ARGS, SEND_WAIT)
FWRAP2(bsend, SEND_PARAMS, SEND_ARGS, SEND_WAIT)
FWRAP2(rsend, SEND_PARAMS, SEND_ARGS, SEND_WAIT)

FWRAP2(
    recv,
    (void *buf, fint *count, fint *type, fint *peer, fint *tag, fint *comm, fint *status,
     fint *ierr),
    (buf, count, type, peer, tag, comm, status, ierr),
    if (*peer != MPI_PROC_NULL && *ierr == MPI_SUCCESS) {
	    cp_mpi_received(&c, frecv_bytes(count, type, status));
	    frecv_wait(&c, peer, tag, comm, status);
    })

#define POST_PARAMS                                                                                \
	(void *buf, fint *count, fint *type, fint *peer, fint *tag, fint *comm, fint *req,         \
	 fint *ierr)
#define POST_ARGS (buf, count, type, peer, tag, comm, req, ierr)
/* A posted request, remembered for its wait (objects.c). */
#define FPOST(kind)                                                                                \
	if (*peer != MPI_PROC_NULL && *ierr == MPI_SUCCESS)                                        \
	cp_mpi_req_post(PMPI_Request_f2c(*req), kind, PMPI_Comm_f2c(*comm), *peer, *tag)
FWRAP2(isend, POST_PARAMS, POST_ARGS, SENT_IF_PEER; FPOST(CP_MF_SYNC_MPI_SEND))
FWRAP2(issend, POST_PARAMS, POST_ARGS, SENT_IF_PEER; FPOST(CP_MF_SYNC_MPI_SEND))
FWRAP2(irecv, POST_PARAMS, POST_ARGS,
       if (*peer != MPI_PROC_NULL) cp_mpi_received(&c, fbytes(count, type));
       FPOST(CP_MF_SYNC_MPI_RECV))

/* What Fortran requests wait on, taken before the call completes them (wrap.h). */
static void freqs_wait(struct cp_mpi_call *c, const fint *n, const fint *reqs)
{
	MPI_Request v[64];
	int k = *n < 64 ? *n : 64; /* more: the first 64 name the wait */
	for (int i = 0; i < k; i++)
		v[i] = PMPI_Request_f2c(reqs[i]);
	cp_mpi_reqs_wait(c, k, v, 1);
}
static const fint one = 1;

#define FWRAP2_AROUND(name, params, args, before)                                                  \
	FWRAP_AROUND(mpi_##name##_, params, args, before, (void)0, (void)0)                        \
	FWRAP_AROUND(ompi_##name##_f, params, args, before, (void)0, (void)0)
FWRAP2_AROUND(wait, (fint * req, fint *status, fint *ierr), (req, status, ierr),
	      freqs_wait(&c, &one, req))
FWRAP2_AROUND(waitall, (fint * n, fint *reqs, fint *statuses, fint *ierr),
	      (n, reqs, statuses, ierr), freqs_wait(&c, n, reqs))
FWRAP2(waitany, (fint * n, fint *reqs, fint *index, fint *status, fint *ierr),
       (n, reqs, index, status, ierr), (void)0)
FWRAP2(test, (fint * req, fint *flag, fint *status, fint *ierr), (req, flag, status, ierr), (void)0)
FWRAP2(testall, (fint * n, fint *reqs, fint *flag, fint *statuses, fint *ierr),
       (n, reqs, flag, statuses, ierr), (void)0)
#define COLL_WAIT(root) fwait_on(&c, CP_MF_SYNC_MPI_COLL, comm, root, CP_MF_MPI_NONE)
FWRAP2(barrier, (fint * comm, fint *ierr), (comm, ierr), COLL_WAIT(CP_MF_MPI_NONE))

FWRAP2(bcast, (void *buf, fint *count, fint *type, fint *root, fint *comm, fint *ierr),
       (buf, count, type, root, comm, ierr), COLL_WAIT(*root);
       if (froot(root, comm)) cp_mpi_sent(&c, fbytes(count, type));
       else cp_mpi_received(&c, fbytes(count, type)))
FWRAP2(reduce,
       (void *sbuf, void *rbuf, fint *count, fint *type, fint *op, fint *root, fint *comm,
	fint *ierr),
       (sbuf, rbuf, count, type, op, root, comm, ierr), COLL_WAIT(*root);
       cp_mpi_sent(&c, fbytes(count, type));
       if (froot(root, comm)) cp_mpi_received(&c, fbytes(count, type)))
FWRAP2(allreduce,
       (void *sbuf, void *rbuf, fint *count, fint *type, fint *op, fint *comm, fint *ierr),
       (sbuf, rbuf, count, type, op, comm, ierr), COLL_WAIT(CP_MF_MPI_NONE);
       cp_mpi_sent(&c, fbytes(count, type)); cp_mpi_received(&c, fbytes(count, type)))

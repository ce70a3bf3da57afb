/* MPI waits as synchronization objects (wrap.h, format/measure.h minor 4): communicators
 * numbered per process, the requests of non-blocking calls remembered until they are
 * waited for, communicator names, and the wrappers of the calls that make communicators.
 *
 * Both tables are small and short-held: a spin lock (no pthread mutex, which -e wait
 * would time as a wait of the program's). A communicator is numbered when a wrapped call
 * makes it (MPI_Comm_dup, _split, _split_type, _create, MPI_Cart_create, MPI_Cart_sub) or
 * at its first use otherwise; MPI_Comm_free forgets the handle (the MPI library may reuse
 * it for a new communicator, which gets a new number). The request table is a fixed
 * cache: a slot is taken over when its key's few slots are all in use, so a request never
 * waited for (MPI_Request_free, a Testany) costs nothing but its slot. */
#include "mpi/wrap.h"

#include <stdlib.h>

#define REQ_SLOTS 4096 /* a power of 2 */
#define REQ_PROBE 8

struct comm_entry {
	MPI_Comm comm;
	uint32_t id;
};

struct req_slot {
	uint64_t key; /* the MPI_Request's bits; 0: empty */
	struct callpath_mpi_wait w;
};

static volatile char lock_flag;
static struct comm_entry *comms;
static size_t ncomms, comms_cap;
static uint32_t next_comm = CP_MF_MPI_COMM_SELF + 1;
static struct req_slot reqs[REQ_SLOTS];

static void lock(void)
{
	while (__atomic_test_and_set(&lock_flag, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static void unlock(void)
{
	__atomic_clear(&lock_flag, __ATOMIC_RELEASE);
}

/* Under the lock: comm's entry, made when new (NULL when out of memory). */
static struct comm_entry *comm_entry(MPI_Comm comm)
{
	for (size_t i = 0; i < ncomms; i++)
		if (comms[i].comm == comm)
			return &comms[i];
	if (ncomms == comms_cap) {
		size_t cap = comms_cap ? 2 * comms_cap : 16;
		struct comm_entry *v = realloc(comms, cap * sizeof *v);
		if (!v)
			return NULL;
		comms = v;
		comms_cap = cap;
	}
	comms[ncomms] = (struct comm_entry){comm, next_comm++};
	return &comms[ncomms++];
}

uint32_t cp_mpi_comm_id(MPI_Comm comm)
{
	if (comm == MPI_COMM_WORLD)
		return CP_MF_MPI_COMM_WORLD;
	if (comm == MPI_COMM_SELF)
		return CP_MF_MPI_COMM_SELF;
	if (comm == MPI_COMM_NULL)
		return CP_MF_MPI_COMM_UNKNOWN;
	lock();
	struct comm_entry *e = comm_entry(comm);
	uint32_t id = e ? e->id : CP_MF_MPI_COMM_UNKNOWN;
	unlock();
	return id;
}

static void comm_forget(MPI_Comm comm)
{
	lock();
	for (size_t i = 0; i < ncomms; i++)
		if (comms[i].comm == comm) {
			comms[i] = comms[--ncomms];
			break;
		}
	unlock();
}

static uint64_t req_key(MPI_Request req)
{
	uint64_t key = 0;
	_Static_assert(sizeof req <= sizeof key, "MPI_Request fits a key");
	memcpy(&key, &req, sizeof req);
	return key;
}

static size_t req_hash(uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 40) & (REQ_SLOTS - 1);
}

/* Under the lock: the slot holding key (or, when empty_ok, the first empty one of its
 * slots), or NULL. */
static struct req_slot *req_find(uint64_t key, int empty_ok)
{
	struct req_slot *empty = NULL;
	for (size_t n = 0, i = req_hash(key); n < REQ_PROBE; n++, i = (i + 1) & (REQ_SLOTS - 1)) {
		if (reqs[i].key == key)
			return &reqs[i];
		if (!reqs[i].key && !empty && empty_ok)
			empty = &reqs[i];
	}
	return empty;
}

void cp_mpi_req_post(MPI_Request req, uint32_t kind, MPI_Comm comm, int peer, int tag)
{
	uint64_t key = req_key(req);
	if (!key || req == MPI_REQUEST_NULL)
		return;
	struct callpath_mpi_wait w = {kind, cp_mpi_comm_id(comm), peer, tag};
	lock();
	struct req_slot *s = req_find(key, 1);
	if (!s) /* its slots are all in use: the first one is taken over */
		s = &reqs[req_hash(key)];
	s->key = key;
	s->w = w;
	unlock();
}

int cp_mpi_req_take(MPI_Request req, struct callpath_mpi_wait *w)
{
	uint64_t key = req_key(req);
	if (!key || req == MPI_REQUEST_NULL)
		return 0;
	lock();
	struct req_slot *s = req_find(key, 0);
	if (s) {
		*w = s->w;
		s->key = 0;
	}
	unlock();
	return s != NULL;
}

void cp_mpi_req_drop(MPI_Request req)
{
	struct callpath_mpi_wait w;
	cp_mpi_req_take(req, &w);
}

/* Under the lock: request key's entry into *w (merged with the earlier ones: has). */
static void req_merge(uint64_t key, int take, struct callpath_mpi_wait *w, int *has)
{
	struct req_slot *s = req_find(key, 0);
	if (!s)
		return;
	if (!*has) {
		*w = s->w;
		*has = 1;
	} else {
		if (s->w.peer != w->peer)
			w->peer = CP_MF_MPI_NONE;
		if (s->w.tag != w->tag)
			w->tag = CP_MF_MPI_NONE;
		if (s->w.kind == CP_MF_SYNC_MPI_RECV)
			w->kind = CP_MF_SYNC_MPI_RECV;
	}
	if (take)
		s->key = 0;
}

void cp_mpi_reqs_wait(struct cp_mpi_call *c, int n, const MPI_Request *rs, int take)
{
	struct callpath_mpi_wait w = {CP_MF_SYNC_MPI_RECV, CP_MF_MPI_COMM_UNKNOWN, CP_MF_MPI_NONE,
				      CP_MF_MPI_NONE};
	int has = 0, active = 0;
	lock();
	for (int i = 0; i < n; i++)
		if (rs[i] != MPI_REQUEST_NULL && req_key(rs[i])) {
			req_merge(req_key(rs[i]), take, &w, &has);
			active++;
		}
	unlock();
	c->has_wait = active > 0; /* none active: the call returns at once */
	c->w = w;
}

/* ---- the calls that make, name and free communicators ---- */

static void made(int rc, const MPI_Comm *comm)
{
	if (rc == MPI_SUCCESS && *comm != MPI_COMM_NULL)
		cp_mpi_comm_id(*comm);
}

CP_MPI_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	int rc = PMPI_Comm_dup(comm, newcomm);
	made(rc, newcomm);
	return rc;
}

CP_MPI_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	int rc = PMPI_Comm_split(comm, color, key, newcomm);
	made(rc, newcomm);
	return rc;
}

CP_MPI_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info,
				      MPI_Comm *newcomm)
{
	int rc = PMPI_Comm_split_type(comm, type, key, info, newcomm);
	made(rc, newcomm);
	return rc;
}

CP_MPI_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	int rc = PMPI_Comm_create(comm, group, newcomm);
	made(rc, newcomm);
	return rc;
}

CP_MPI_EXPORT int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
				  int reorder, MPI_Comm *newcomm)
{
	int rc = PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm);
	made(rc, newcomm);
	return rc;
}

CP_MPI_EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *newcomm)
{
	int rc = PMPI_Cart_sub(comm, remain, newcomm);
	made(rc, newcomm);
	return rc;
}

CP_MPI_EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
	MPI_Comm old = *comm;
	int rc = PMPI_Comm_free(comm);
	if (rc == MPI_SUCCESS)
		comm_forget(old);
	return rc;
}

CP_MPI_EXPORT int MPI_Comm_set_name(MPI_Comm comm, const char *name)
{
	int rc = PMPI_Comm_set_name(comm, name);
	uint32_t id = cp_mpi_comm_id(comm);
	if (rc == MPI_SUCCESS && callpath_mpi_comm_name && id != CP_MF_MPI_COMM_UNKNOWN)
		callpath_mpi_comm_name(id, name);
	return rc;
}

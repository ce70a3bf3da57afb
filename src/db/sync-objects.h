/* Waits by synchronization object (issue 14, the SyncObject resource hierarchy): the rows
 * of every thread's sync-object table (format/measure.h, minor 3) with the object named
 * (the global variable holding it, from the module's symbol table) and the waiting call
 * site symbolized; and the `sync_object` table of a profile database that keeps them
 * (docs/format.md). An optional table, like `search`: no schema version change. */
#ifndef CP_DB_SYNC_OBJECTS_H
#define CP_DB_SYNC_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;

struct cp_sync_row {
	int pid;
	int rank; /* the MPI rank of process pid, -1 when it is none */
	uint32_t tidx;
	uint64_t object;  /* address in process pid (pthread_t for "thread"); 0 for "lost";
			   * the communicator's number for the MPI kinds (CP_MF_MPI_COMM_*) */
	const char *kind; /* cp_sync_kind_name(), or "lost": waits the full table dropped */
	char *symbol;	  /* "big_lock", "locks+0x28" (a global); NULL (heap, stack); the
			   * communicator's name for the MPI kinds ("MPI_COMM_WORLD", "comm#2") */
	int peer, tag;	  /* the MPI kinds: rank and tag, CP_MF_MPI_NONE for none */
	char *module;	  /* base name of the module holding the global; NULL */
	char *site;	  /* "update_table (lockcontention.c:36)", "[libx.so+0x1f0]" */
	uint64_t wait_ns, waits;
	/* The call site's parts, from a measurement directory only (not in the table):
	 * procedure, source file and line; NULL / 0 when unknown. */
	char *site_proc, *site_file;
	int site_line;
};

struct cp_sync_rows {
	struct cp_sync_row *v;
	size_t n;
	int present; /* the database has the table (or the directory was read) */
};

void cp_sync_rows_release(struct cp_sync_rows *r);
/* "mutex", "rwlock-read", "rwlock-write", "cond", "barrier", "thread", "sem", "mpi-recv",
 * "mpi-send", "mpi-coll" for an enum cp_mf_sync_kind; NULL for others. */
const char *cp_sync_kind_name(unsigned kind);
/* Is kind (a cp_sync_kind_name) one of the MPI kinds? */
int cp_sync_kind_is_mpi(const char *kind);

/* The rows of measurement directory dir, objects and call sites named. 0 or CP_E*. */
int cp_sync_rows_from_dir(const char *dir, struct cp_sync_rows *out);

/* Replaces the sync_object table of the database at path with rows. 0 or CP_EIO. */
int cp_db_put_sync(const char *path, const struct cp_sync_rows *rows);
/* Reads it (present = 0 and no rows when the database has none). 0 or CP_E*. */
int cp_db_get_sync(const char *path, struct cp_sync_rows *out);
/* After a database made from measurement directory dir was written to dbpath: stores
 * dir's rows in it (nothing when no thread has a table). 0 or CP_E*. */
int cp_db_save_sync(const char *dir, const char *dbpath);
/* The same when db (made from dir) has the wait-time metric (-e wait) or mpi-time (the
 * MPI wrappers), else nothing. */
struct cp_db;
int cp_db_save_sync_if_waits(const struct cp_db *db, const char *dir, const char *dbpath);

/* The rows summed by object (pid, object, kind) over threads, heaviest first; each
 * object's call sites summed over threads, heaviest first. Strings point into the rows. */
struct cp_sync_site {
	const char *site;
	const struct cp_sync_row *row; /* one of its rows (site_proc, site_file, site_line) */
	uint64_t wait_ns, waits;
};
struct cp_sync_object {
	int pid, rank;
	uint64_t object;
	const char *kind, *symbol, *module;
	int peer, tag; /* the MPI kinds (as in the rows) */
	uint64_t wait_ns, waits;
	struct cp_sync_site *sites;
	size_t nsites;
};
struct cp_sync_summary {
	struct cp_sync_object *v;
	size_t n;
	uint64_t wait_ns, waits; /* over every object, "lost" included */
};
void cp_sync_summarize(const struct cp_sync_rows *rows, struct cp_sync_summary *out);
void cp_sync_summary_release(struct cp_sync_summary *s);
/* The object's name for people: "table_lock (lockcontention global)", "heap 0x55d0c0",
 * "thread 0x7f12..." (a joined thread), "(table full)" for "lost"; for MPI the
 * communicator with the tag and peer: "MPI_COMM_WORLD tag 7 from rank 0", "rows to rank
 * 3", "comm#1 root 0", "(communicator unknown)" for a request not seen posted. */
void cp_sync_object_name(const struct cp_sync_object *o, struct strbuf *sb);

#endif

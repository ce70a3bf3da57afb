/* Reader of the measurement directory (measure.h, docs/format.md). Every bound is checked:
 * a truncated or corrupt file gives a CP_EFORMAT error naming the file and the byte offset,
 * never a crash. Files still being written are read up to their published `used` size
 * (loaded with acquire ordering), so a live run can be read too.
 * Offline tools only (allocates). */
#ifndef CP_FORMAT_MEASURE_READ_H
#define CP_FORMAT_MEASURE_READ_H

#include "format/measure.h"

#include <stddef.h>
#include <stdint.h>

/* Deepest node accepted: far beyond any stack the runtime records (it unwinds at most a
 * few hundred frames), so deeper chains can only come from corruption. */
#define CP_MF_READ_MAX_DEPTH 4096

struct cp_mf_module_info {
	uint32_t id;
	uint32_t build_id_len;
	uint64_t bias, text_lo, text_hi, load_seq;
	uint8_t build_id[32];
	char *path;
	int unloaded; /* an UNLOAD record names it */
};

struct cp_mf_thr;

struct cp_mf_comm_name {
	uint64_t comm; /* CP_MF_MPI_COMM_* numbering */
	char *name;
};

struct cp_mf_proc {
	char *file;		  /* path of the .proc file (for messages) */
	struct cp_mf_process hdr; /* fixed part (copied; `used`/`flags` as read) */
	char **argv;		  /* CMDLINE strings */
	size_t argc;
	char *exe; /* EXE record, or NULL */
	struct cp_mf_module_info *modules;
	size_t nmodules;
	uint32_t *module_index; /* module id -> index in modules[], or UINT32_MAX */
	size_t module_index_len;
	char **notes;
	size_t nnotes;
	char **env;
	size_t nenv;
	/* MPI_COMM records (minor 4): the names the program gave its communicators. */
	struct cp_mf_comm_name *comms;
	size_t ncomms;
	/* Packed threads (THREAD records that are the last record naming their tidx), sorted
	 * by tidx, each checked like a thread file. A thread file of one of these tidx is a
	 * leftover of packing and must be ignored (measure.h, "Packing"). */
	struct cp_mf_thr *packed;
	size_t npacked;
};

struct cp_mf_rnode {
	uint32_t parent;
	uint16_t kind;
	uint32_t module;
	uint64_t offset;
};

struct cp_mf_thr {
	char *file;
	struct cp_mf_thread hdr; /* fixed part (copied) */
	size_t nnodes;
	struct cp_mf_rnode *nodes;
	uint64_t *values;    /* nnodes * hdr.nmetrics exclusive values */
	uint64_t tail_bytes; /* bytes after the last complete node (a node being written) */
	/* Minor 3: the filled slots of the sync-object table (measure.h), in slot order; an
	 * entry whose node is not among the nodes read (a live file) is left out. The lost
	 * counts are hdr.sync_lost_ns / sync_lost_waits. */
	struct cp_mf_sync_obj *sync;
	size_t nsync;
};

/* Parses a process file from memory. name is used in messages. */
int cp_mf_proc_parse(struct cp_mf_proc *p, const void *buf, size_t size, const char *name);
void cp_mf_proc_release(struct cp_mf_proc *p);
/* Index of the module with this id, or -1. */
long cp_mf_proc_module(const struct cp_mf_proc *p, uint32_t id);
/* The packed thread tidx of p, or NULL (then its thread file, if any, holds its data). */
const struct cp_mf_thr *cp_mf_proc_packed(const struct cp_mf_proc *p, uint32_t tidx);

/* Parses a thread file from memory; proc (may be NULL) checks module ids and the metric
 * count against the process file. */
int cp_mf_thr_parse(struct cp_mf_thr *t, const void *buf, size_t size, const char *name,
		    const struct cp_mf_proc *proc);
void cp_mf_thr_release(struct cp_mf_thr *t);
/* A deep copy of src (release it with cp_mf_thr_release). */
void cp_mf_thr_copy(struct cp_mf_thr *dst, const struct cp_mf_thr *src);

/* A measurement directory: every process image and its threads (thread files and packed
 * threads, by tidx; proc.packed is empty here, its threads moved to threads[]). */
struct cp_mf_image {
	struct cp_mf_proc proc;
	struct cp_mf_thr *threads;
	size_t nthreads;
};

struct cp_mf_dir {
	char *path;
	struct cp_mf_image *images; /* sorted by start time, then pid, gen */
	size_t nimages;
};

int cp_mf_dir_open(struct cp_mf_dir *d, const char *path);
void cp_mf_dir_release(struct cp_mf_dir *d);

/* Streaming access to a measurement directory, for runs of thousands of process images:
 * the listing holds only file names (images in start order, like cp_mf_dir); each file is
 * mapped, parsed into memory and unmapped on demand, so at most one file is open or
 * mapped at a time and the caller keeps only what it is working on. */
struct cp_mf_list_image {
	int pid;
	unsigned gen;
	uint64_t start_ns; /* from the process file's header (0 if unreadable) */
	char *proc_name;   /* file names relative to the directory */
	char **thr_names;  /* thread files, by tidx (packed threads are in the process file) */
	unsigned *thr_tidx;
	size_t nthreads; /* thread files listed; cp_mf_list_nthreads counts the threads */
};

struct cp_mf_list {
	char *path;
	struct cp_mf_list_image *images;
	size_t nimages;
};

/* Lists path (errors as cp_mf_dir_open: missing directory, no process file, a thread file
 * without its process file). */
int cp_mf_list_open(struct cp_mf_list *l, const char *path);
void cp_mf_list_release(struct cp_mf_list *l);
/* Reads the process file of image i. */
int cp_mf_list_proc(const struct cp_mf_list *l, size_t i, struct cp_mf_proc *p);
/* Threads of image i, whose process file the caller read into proc: its packed threads
 * and the thread files whose tidx is not packed. */
size_t cp_mf_list_nthreads(const struct cp_mf_list *l, size_t i, const struct cp_mf_proc *proc);
/* Reads thread j (0 <= j < cp_mf_list_nthreads, in tidx order) of image i, checked against
 * its process file proc. A thread file packed (and unlinked) by the still running program
 * since proc was read is found in the process file read again. */
int cp_mf_list_thread(const struct cp_mf_list *l, size_t i, size_t j, const struct cp_mf_proc *proc,
		      struct cp_mf_thr *t);

/* Bytes of thread j of image i (its thread file's size, or its packed tree's), for
 * balancing work; 0 if unknown. */
uint64_t cp_mf_list_thread_bytes(const struct cp_mf_list *l, size_t i, size_t j,
				 const struct cp_mf_proc *proc);

/* Reads one file (process or thread) through mmap; for the fuzzer and tools. */
/* Is every process image of the measurement directory path done (finished, or its process
 * gone)? 1 yes, 0 no (a directory without process files yet is not done), -1 when it cannot
 * be read. For live views of a running program (report --live, top). */
int cp_mf_dir_done(const char *path);

int cp_mf_file_map(const char *path, void **buf, size_t *size);
void cp_mf_file_unmap(void *buf, size_t size);

#endif

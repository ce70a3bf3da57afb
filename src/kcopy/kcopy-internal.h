/* Internal to the kernel-copy driver: ring buffers, the target's modules, the profile. */
#ifndef CP_KCOPY_INTERNAL_H
#define CP_KCOPY_INTERNAL_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kcopy/kcopy.h"
#include "runtime/cct/cct.h"

/* ---- ring.c: one sampling event per thread and its ring buffer ---- */

/* Per-task inherited events cannot be mmap'd: like perf record, the driver opens one
 * event per (thread, CPU), inherited, and points all events of a CPU at that CPU's ring
 * (PERF_EVENT_IOC_SET_OUTPUT). */
#define KC_RING_PAGES 128 /* 512 KiB per CPU */

struct kc_ring {
	int fd; /* the event whose buffer this is (not owned) */
	struct perf_event_mmap_page *meta;
	char *data;
	size_t data_size; /* a power of two */
	size_t map_size;
};

/* The sampling attribute: ev, user registers and stack_bytes of user stack per sample,
 * side-band records for modules and threads, inherited by new threads. Time events
 * (cputime) are sampled with task-clock. */
void kc_attr(const struct cp_ev *ev, uint32_t stack_bytes, int enable_on_exec,
	     struct perf_event_attr *attr);
/* perf_event_open(attr, tid, cpu): the fd, or a CP_E* code with a message that says what
 * to do. */
int kc_event_open(struct perf_event_attr *attr, pid_t tid, int cpu);
/* Maps fd's ring (data_pages pages, a power of two). 0 or a CP_E* code. */
int kc_ring_map(struct kc_ring *r, int fd, size_t data_pages);
void kc_ring_close(struct kc_ring *r);
/* Calls fn for every complete record in the ring, then frees their space. A record that
 * wraps around the end is copied into scratch (at least 64 KiB) first. */
void kc_ring_drain(struct kc_ring *r, char *scratch,
		   void (*fn)(void *arg, const struct perf_event_header *h), void *arg);

/* ---- target.c: the target's load modules ---- */

/* Registers the module mapped at [start, ...) from file offset pgoff of path in process
 * pid (an executable mapping). Duplicates of a known module are ignored. */
void kc_target_map(pid_t pid, const char *path, uint64_t start, uint64_t pgoff);
/* Every executable mapping of /proc/pid/maps. 0, or CP_ENOENT if the process is gone. */
int kc_target_scan(pid_t pid);

/* ---- profile.c: the measurement directory ---- */

struct kc_thread {
	pid_t tid;
	struct cp_cct cct;
	uint64_t cpu_first; /* its CPU time (schedstat) when first sampled; 0 if unknown */
};

struct kc_profile {
	char dir[PATH_MAX];
	pid_t pid;
	struct cp_mf_metric metric;
	uint64_t start_ns;
	struct kc_thread *threads;
	size_t nthreads, alloc;
	char *cmdline, *exe;
	size_t cmdline_len;
	struct cp_kcopy_result *res;
};

int kc_profile_start(struct kc_profile *p, const char *dir, pid_t pid, const struct cp_ev *ev,
		     struct cp_kcopy_result *res);
/* The command of a program callpath starts itself (its /proc files are gone at the end). */
void kc_profile_command(struct kc_profile *p, char *const *argv);
/* A thread's name (COMM records), kept for its file. */
void kc_profile_comm(struct kc_profile *p, pid_t tid, const char *comm);
/* One PERF_RECORD_SAMPLE of the sampling attribute. */
void kc_profile_sample(struct kc_profile *p, const struct perf_event_header *h);
/* Writes the process file and closes the thread files. */
int kc_profile_finish(struct kc_profile *p, int exited, int status);

#endif

/* The process file <pid>.<gen>.proc: metrics, command line, executable, load modules and
 * notes. Appended only outside signal context, under cp_rt.proc_lock. */
#include "runtime/core/runtime.h"
#include "runtime/unwind/modules.h"

#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Virtual space for the process file: records, and the packed trees of ended threads. */
#define CP_PROC_RESERVE (1ul << 30)

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void proc_header_init(struct cp_mf_process *p)
{
	memcpy(p->h.magic, CP_MF_MAGIC, sizeof p->h.magic);
	p->h.version = CP_MF_VERSION;
	p->h.version_minor = CP_MF_VERSION_MINOR;
	p->h.rank = cp_rt.rank;
	p->h.nranks = cp_rt.nranks;
	p->h.kind = CP_MF_KIND_PROCESS;
	p->h.header_size = (uint32_t)((sizeof *p + 7) & ~(size_t)7);
	p->pid = cp_rt.pid;
	p->ppid = cp_rt.ppid;
	p->gen = cp_rt.gen;
	p->start_ns = now_ns(CLOCK_REALTIME);
	p->cpu_start_ns = cp_rt.cpu_start_ns;
	gethostname(p->hostname, sizeof p->hostname - 1);
	p->nmetrics = cp_rt.nmetrics;
	for (uint32_t i = 0; i < cp_rt.nmetrics; i++) {
		const struct cp_metric *m = &cp_rt.metrics[i];
		struct cp_mf_metric *d = &p->metrics[i];
		snprintf(d->name, sizeof d->name, "%s", m->src->name);
		snprintf(d->unit, sizeof d->unit, "%s", m->src->unit);
		d->source = m->src->source;
		d->mechanism = m->mechanism;
		d->period = m->period;
	}
	__atomic_store_n(&p->h.used, (uint64_t)p->h.header_size, __ATOMIC_RELEASE);
}

/* Creates the smallest-gen new file name; metric mechanisms are filled in later by
 * cp_proc_update_metrics when sources have probed the kernel. */
int cp_proc_create(void)
{
	char path[PATH_MAX + 64];
	pthread_mutex_init(&cp_rt.proc_lock, NULL);
	for (uint32_t gen = 0; gen < 100000; gen++) {
		snprintf(path, sizeof path, "%s/%d.%u%s", cp_rt.outdir, (int)cp_rt.pid, gen,
			 CP_MF_PROC_SUFFIX);
		int rc = cp_arena_create(&cp_rt.proc, path, CP_PROC_RESERVE, 4096);
		if (rc == -EEXIST)
			continue;
		if (rc) {
			fprintf(stderr,
				"callpath runtime: cannot create %s: %s; profiling "
				"disabled\n",
				path, strerror(-rc));
			return rc;
		}
		cp_rt.gen = gen;
		cp_rt.phdr = (struct cp_mf_process *)cp_rt.proc.base;
		proc_header_init(cp_rt.phdr);
		return 0;
	}
	return -EEXIST;
}

/* Under proc_lock: a record of type with room for len payload bytes at the end of the
 * file, unpublished; its payload, or NULL (*end: the `used` that publishes it). */
static char *record_reserve(uint32_t type, uint64_t len, uint64_t *end)
{
	uint64_t used = cp_rt.phdr->h.used;
	uint64_t size = sizeof(struct cp_mf_record) + len;
	*end = used + ((size + 7) & ~7ull);
	if (size > UINT32_MAX || cp_arena_ensure(&cp_rt.proc, *end))
		return NULL;
	struct cp_mf_record *r = (struct cp_mf_record *)(cp_rt.proc.base + used);
	r->type = type;
	r->size = (uint32_t)size;
	return (char *)(r + 1);
}

void cp_proc_record(uint32_t type, const void *payload, uint32_t len)
{
	uint64_t end;
	if (!cp_rt.phdr)
		return;
	pthread_mutex_lock(&cp_rt.proc_lock);
	char *pay = record_reserve(type, len, &end);
	if (pay) {
		memcpy(pay, payload, len);
		__atomic_store_n(&cp_rt.phdr->h.used, end, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&cp_rt.proc_lock);
}

int cp_proc_pack(const struct cp_mf_thread *th)
{
	uint64_t end, used = __atomic_load_n(&th->h.used, __ATOMIC_ACQUIRE);
	int rc = -1;
	if (!cp_rt.phdr || used > CP_PACK_MAX)
		return -1;
	pthread_mutex_lock(&cp_rt.proc_lock);
	char *pay = record_reserve(CP_MF_REC_THREAD, used, &end);
	if (pay) {
		memcpy(pay, th, used);
		struct cp_mf_header *h = (struct cp_mf_header *)pay;
		h->used = used;
		h->flags |= CP_MF_FINISHED;
		__atomic_store_n(&cp_rt.phdr->h.used, end, __ATOMIC_RELEASE);
		rc = 0;
	}
	pthread_mutex_unlock(&cp_rt.proc_lock);
	return rc;
}

void cp_proc_unpack(uint32_t tidx)
{
	struct cp_mf_unpack u = {.tidx = tidx, .pad = 0};
	cp_proc_record(CP_MF_REC_UNPACK, &u, sizeof u);
}

void cp_proc_trim(void)
{
	if (!cp_rt.phdr)
		return;
	pthread_mutex_lock(&cp_rt.proc_lock);
	cp_arena_trim(&cp_rt.proc, cp_rt.phdr->h.used);
	pthread_mutex_unlock(&cp_rt.proc_lock);
}

void cp_rt_note(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof msg)
		n = sizeof msg - 1;
	cp_proc_record(CP_MF_REC_NOTE, msg, (uint32_t)n + 1);
}

void cp_proc_flush_pending_note(void)
{
	if (!__atomic_exchange_n(&cp_rt.note_pending, 0, __ATOMIC_ACQ_REL))
		return;
	cp_rt_note("runtime disabled: %s; samples after this point were dropped",
		   cp_rt.failure ? cp_rt.failure : "internal failure");
}

static void proc_write_file_record(uint32_t type, const char *path, int nul_separated)
{
	char buf[65536];
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	if (!n)
		return;
	if (!nul_separated || buf[n - 1] != 0)
		buf[n++] = 0;
	cp_proc_record(type, buf, (uint32_t)n);
}

void cp_proc_write_cmdline(void)
{
	char exe[PATH_MAX];
	proc_write_file_record(CP_MF_REC_CMDLINE, "/proc/self/cmdline", 1);
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		cp_proc_record(CP_MF_REC_EXE, exe, (uint32_t)n + 1);
	}
	char env[512];
	int len = snprintf(env, sizeof env, "CALLPATH_SIGNAL=%d%cCALLPATH_FOLLOW_EXEC=%d",
			   cp_rt.signo, 0, cp_rt.follow_exec);
	/* Under an MPI launcher: the rank, also in the header since minor 1 (readers of
	 * older files take it from here). */
	if (cp_rt.rank >= 0)
		len += snprintf(env + len + 1, sizeof env - (size_t)len - 1, "CALLPATH_RANK=%d",
				(int)cp_rt.rank) +
		       1;
	cp_proc_record(CP_MF_REC_ENV, env, (uint32_t)len + 1);
}

void cp_proc_cpu_end(void)
{
	struct cp_mf_process *p = cp_rt.phdr;
	if (!p)
		return;
	p->cpu_end_ns = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	uint64_t armed = cp_rt.cpu_armed_ns ? cp_rt.cpu_armed_ns : cp_rt.cpu_start_ns;
	uint64_t fini = cp_rt.cpu_fini_ns ? cp_rt.cpu_fini_ns : p->cpu_end_ns;
	if (armed >= cp_rt.cpu_start_ns && p->cpu_end_ns >= fini)
		p->runtime_ns = (armed - cp_rt.cpu_start_ns) + (p->cpu_end_ns - fini);
}

/* Exit (normal or crash): final header fields. Crash path: AS-safe stores only. */
void cp_proc_finish(int crashed_sig)
{
	struct cp_mf_process *p = cp_rt.phdr;
	if (!p)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	p->end_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	cp_proc_cpu_end();
	p->nthreads = __atomic_load_n(&cp_rt.next_tidx, __ATOMIC_ACQUIRE);
	uint32_t flags = CP_MF_FINISHED;
	if (crashed_sig) {
		flags = CP_MF_CRASHED;
		p->exit_status = 128 + crashed_sig;
	} else if (cp_rt.exit_status_known) {
		p->exit_status = cp_rt.exit_status;
	}
	if (!cp_rt.enabled && cp_rt.failure)
		flags |= CP_MF_DISABLED;
	__atomic_or_fetch(&p->h.flags, flags, __ATOMIC_RELEASE);
}

static void on_module_loaded(const struct cp_module *m, void *arg)
{
	char buf[sizeof(struct cp_mf_module) + CP_MODULE_PATH_MAX];
	struct cp_mf_module rec;
	memset(&rec, 0, sizeof rec);
	rec.id = m->id;
	rec.build_id_len = m->build_id_len > 32 ? 32 : m->build_id_len;
	rec.bias = m->bias;
	rec.text_lo = m->text_lo;
	rec.text_hi = m->text_hi;
	rec.load_seq = m->load_seq;
	memcpy(rec.build_id, m->build_id, rec.build_id_len);
	size_t plen = strnlen(m->path, CP_MODULE_PATH_MAX - 1);
	memcpy(buf, &rec, sizeof rec);
	memcpy(buf + sizeof rec, m->path, plen);
	buf[sizeof rec + plen] = 0;
	cp_proc_record(CP_MF_REC_MODULE, buf, (uint32_t)(sizeof rec + plen + 1));
}

static void on_module_unloaded(const struct cp_module *m, void *arg)
{
	struct cp_mf_unload rec = {.id = m->id, .pad = 0, .load_seq = m->unload_seq};
	cp_proc_record(CP_MF_REC_UNLOAD, &rec, sizeof rec);
}

const struct cp_modules_listener cp_proc_module_listener = {
    .loaded = on_module_loaded,
    .unloaded = on_module_unloaded,
    .arg = NULL,
};

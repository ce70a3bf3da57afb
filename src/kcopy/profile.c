/* The kernel-copy driver's measurement directory: samples unwound from their register and
 * stack copies into one calling-context tree per thread (the runtime's cct/, its thread
 * files), and the process file written when sampling ends. */
#include "kcopy/kcopy-internal.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KC_THREAD_RESERVE (160ul << 20) /* as the runtime's thread files */
#define KC_MAX_FRAMES 512
#define KC_NREGS 17 /* popcount of the register mask (ring.c) */

/* perf's register order in a sample (ascending bit: ax bx cx dx si di bp sp ip r8-r15) ->
 * DWARF numbering. */
static const uint8_t dw_from_perf[KC_NREGS] = {0, 3, 2,	 1,  4,	 5,  6,	 7, 16,
					       8, 9, 10, 11, 12, 13, 14, 15};

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static char *file_slurp(const char *path, size_t *len)
{
	char *buf = xmalloc(65536);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, 65535) : -1;

	if (fd >= 0)
		close(fd);
	*len = n > 0 ? (size_t)n : 0;
	buf[*len] = 0;
	return buf;
}

int kc_profile_start(struct kc_profile *p, const char *dir, pid_t pid, const struct cp_ev *ev,
		     struct cp_kcopy_result *res)
{
	char path[64];

	memset(p, 0, sizeof(*p));
	snprintf(p->dir, sizeof p->dir, "%s", dir);
	p->pid = pid;
	p->res = res;
	p->start_ns = now_ns(CLOCK_REALTIME);
	snprintf(p->metric.name, sizeof p->metric.name, "%.31s", ev->name);
	if (ev->kind == CP_EV_TIMER) {
		snprintf(p->metric.unit, sizeof p->metric.unit, "ns");
		p->metric.source = CP_MF_SRC_CPUTIME;
		p->metric.mechanism = CP_MF_MECH_PERF_TASK_CLOCK;
	} else {
		const struct cp_ev_desc *d = cp_ev_find(ev->name, strlen(ev->name));
		snprintf(p->metric.unit, sizeof p->metric.unit, "%s", d ? d->unit : "events");
		p->metric.source = CP_MF_SRC_PERF;
		p->metric.mechanism = CP_MF_MECH_PERF_EVENT;
	}
	p->metric.period = ev->freq ? 0 : ev->period;
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	p->cmdline = file_slurp(path, &p->cmdline_len);
	p->exe = xmalloc(PATH_MAX);
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, p->exe, PATH_MAX - 1);
	p->exe[n > 0 ? n : 0] = 0;
	return 0;
}

/* A thread's CPU time so far in ns (/proc/PID/task/TID/schedstat), 0 if it is gone. */
static uint64_t thread_cpu_ns(pid_t pid, pid_t tid)
{
	char path[64];
	size_t len;
	unsigned long long ns = 0;

	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	char *text = file_slurp(path, &len);
	if (sscanf(text, "%llu", &ns) != 1)
		ns = 0;
	free(text);
	return ns;
}

static struct kc_thread *thread_get(struct kc_profile *p, pid_t tid)
{
	char path[PATH_MAX + 64];

	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return p->threads[i].cct.hdr ? &p->threads[i] : NULL;
	XGROW(p->threads, p->nthreads + 1, p->alloc);
	struct kc_thread *t = &p->threads[p->nthreads];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	struct cp_cct_info info = {.pid = p->pid,
				   .tid = tid,
				   .gen = 0,
				   .tidx = (uint32_t)p->nthreads,
				   .nmetrics = 1,
				   .start_ns = now_ns(CLOCK_REALTIME),
				   .reserve = KC_THREAD_RESERVE};
	snprintf(path, sizeof path, "%s/%d.0.%u%s", p->dir, (int)p->pid, info.tidx,
		 CP_MF_THREAD_SUFFIX);
	p->nthreads++;
	if (cp_cct_create(&t->cct, path, &info) != 0)
		return NULL;
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)p->pid, (int)tid);
	size_t len;
	char *comm = file_slurp(path, &len);
	comm[strcspn(comm, "\n")] = 0;
	snprintf(t->cct.hdr->name, sizeof t->cct.hdr->name, "%s", comm);
	free(comm);
	t->cpu_first = thread_cpu_ns(p->pid, tid);
	return t;
}

void kc_profile_comm(struct kc_profile *p, pid_t tid, const char *comm)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid && p->threads[i].cct.hdr)
			snprintf(p->threads[i].cct.hdr->name, sizeof p->threads[i].cct.hdr->name,
				 "%s", comm);
}

static uint16_t node_kind(const struct cp_frame *f)
{
	if (f->kind == CP_FRAME_PC)
		return CP_MF_NODE_PC;
	return f->kind == CP_FRAME_SIGNAL ? CP_MF_NODE_SIGNAL : CP_MF_NODE_CALL;
}

/* root -> [PARTIAL] -> outermost ... leaf; returns the leaf or CP_CCT_NONE. */
static uint32_t path_insert(struct cp_cct *c, const struct cp_frame *f, int n,
			    enum cp_unwind_status status)
{
	uint32_t node = 0;

	if (status != CP_UNWIND_COMPLETE)
		node = cp_cct_child(c, 0, CP_MF_NODE_PARTIAL, CP_MF_MODULE_NONE, 0);
	for (int i = n - 1; i >= 0 && node != CP_CCT_NONE; i--) {
		uintptr_t pc = f[i].pc;
		const struct cp_module *m =
		    cp_modules_find(f[i].kind == CP_FRAME_RETURN ? pc - 1 : pc);
		node = cp_cct_child(c, node, node_kind(&f[i]), m ? m->id : CP_MF_MODULE_NONE,
				    m ? pc - m->bias : pc);
	}
	return node;
}

/* The fields of a sample of the attribute kc_attr builds. */
struct kc_sample {
	uint32_t pid, tid;
	uint64_t period, abi;
	const uint64_t *regs;
	const char *stack;
	uint64_t stack_len;
};

static int sample_parse(const struct perf_event_header *h, struct kc_sample *s)
{
	const uint64_t *w = (const uint64_t *)(h + 1),
		       *end = (const uint64_t *)((const char *)h + h->size);

	if (end - w < 5)
		return -1;
	s->pid = (uint32_t)w[1];
	s->tid = (uint32_t)(w[1] >> 32);
	s->period = w[3];
	s->abi = w[4];
	w += 5;
	s->regs = w;
	if (s->abi)
		w += KC_NREGS;
	if (w >= end)
		return -1;
	s->stack_len = *w++;
	s->stack = (const char *)w;
	if (s->stack_len > (uint64_t)((const char *)end - s->stack))
		return -1;
	if (s->stack_len) {
		const uint64_t *dyn = (const uint64_t *)(s->stack + s->stack_len);
		if (dyn + 1 > end)
			return -1;
		s->stack_len = *dyn < s->stack_len ? *dyn : s->stack_len;
	}
	return 0;
}

static void sample_unwind(struct kc_thread *t, const struct kc_sample *s, struct cp_kcopy_result *r)
{
	static struct cp_frame frames[KC_MAX_FRAMES];
	struct cp_unwind_copy c;
	enum cp_unwind_status status;
	struct cp_mf_thread *hdr = t->cct.hdr;

	for (int i = 0; i < KC_NREGS; i++)
		c.regs[dw_from_perf[i]] = s->regs[i];
	c.known = (1u << KC_NREGS) - 1;
	c.stack_addr = c.regs[7];
	c.stack = s->stack;
	c.stack_len = s->stack_len;
	int n = cp_unwind_copy(&c, frames, KC_MAX_FRAMES, &status);
	uint32_t leaf = n > 0 ? path_insert(&t->cct, frames, n, status) : CP_CCT_NONE;
	if (leaf == CP_CCT_NONE) {
		hdr->dropped++;
		hdr->unwind_failed++;
		return;
	}
	cp_cct_add_sample(&t->cct, leaf, 0, s->period, n, (int)status);
	r->samples++;
	r->stack_bytes += s->stack_len;
}

void kc_profile_sample(struct kc_profile *p, const struct perf_event_header *h)
{
	struct kc_sample s;
	struct kc_thread *t;

	if (sample_parse(h, &s) < 0 || s.abi != PERF_SAMPLE_REGS_ABI_64)
		return; /* no user state: a kernel thread, or a sample taken in the kernel */
	if ((pid_t)s.pid != p->pid) {
		p->res->other_pid++;
		return;
	}
	t = thread_get(p, (pid_t)s.tid);
	if (t)
		sample_unwind(t, &s, p->res);
}

static void record_add(struct strbuf *sb, uint32_t type, const void *pay, size_t len)
{
	struct cp_mf_record r = {type, (uint32_t)(sizeof r + len)};
	static const char zero[8];

	strbuf_add(sb, &r, sizeof r);
	strbuf_add(sb, pay, len);
	strbuf_add(sb, zero, (8 - (sizeof r + len) % 8) % 8);
}

static void modules_add(struct strbuf *sb)
{
	uint32_t n = cp_modules_count();

	for (uint32_t i = 0; i < n; i++) {
		const struct cp_module *m = cp_modules_slot(i);
		struct cp_mf_module rec;
		char buf[sizeof rec + CP_MODULE_PATH_MAX];
		size_t plen = strnlen(m->path, CP_MODULE_PATH_MAX - 1);

		memset(&rec, 0, sizeof rec);
		rec.id = m->id;
		rec.build_id_len = m->build_id_len;
		rec.bias = m->bias;
		rec.text_lo = m->text_lo;
		rec.text_hi = m->text_hi;
		rec.load_seq = m->load_seq;
		memcpy(rec.build_id, m->build_id, sizeof rec.build_id);
		memcpy(buf, &rec, sizeof rec);
		memcpy(buf + sizeof rec, m->path, plen);
		buf[sizeof rec + plen] = 0;
		record_add(sb, CP_MF_REC_MODULE, buf, sizeof rec + plen + 1);
	}
}

static void header_fill(struct kc_profile *p, struct cp_mf_process *h, int exited, int status)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->h.magic, CP_MF_MAGIC, sizeof h->h.magic);
	h->h.version = CP_MF_VERSION;
	h->h.kind = CP_MF_KIND_PROCESS;
	h->h.header_size = (uint32_t)((sizeof *h + 7) & ~(size_t)7);
	h->h.flags = CP_MF_FINISHED;
	h->pid = p->pid;
	h->nmetrics = 1;
	h->metrics[0] = p->metric;
	h->start_ns = p->start_ns;
	h->end_ns = now_ns(CLOCK_REALTIME);
	h->exit_status = exited ? status : 0;
	h->nthreads = (uint32_t)p->nthreads;
	gethostname(h->hostname, sizeof h->hostname - 1);
}

static int file_write(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n = fd >= 0 ? write(fd, buf, len) : -1;

	if (fd >= 0 && close(fd) != 0)
		n = -1;
	if (n != (ssize_t)len)
		return cp_error(CP_EIO, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

int kc_profile_finish(struct kc_profile *p, int exited, int status)
{
	struct strbuf sb;
	struct cp_mf_process h;
	char path[PATH_MAX + 32], note[256];
	int rc;

	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].cct.hdr) {
			/* The delivered rate's denominator, for threads that are still there. */
			uint64_t cpu = thread_cpu_ns(p->pid, p->threads[i].tid);
			if (cpu && p->threads[i].cpu_first && cpu > p->threads[i].cpu_first)
				p->threads[i].cct.hdr->cpu_ns = cpu - p->threads[i].cpu_first;
			p->threads[i].cct.hdr->end_ns = now_ns(CLOCK_REALTIME);
			cp_cct_close(&p->threads[i].cct, 1);
		}
	strbuf_init(&sb);
	header_fill(p, &h, exited, status);
	strbuf_add(&sb, &h, h.h.header_size);
	if (p->cmdline_len)
		record_add(&sb, CP_MF_REC_CMDLINE, p->cmdline, p->cmdline_len);
	if (p->exe[0])
		record_add(&sb, CP_MF_REC_EXE, p->exe, strlen(p->exe) + 1);
	modules_add(&sb);
	snprintf(note, sizeof note,
		 "sampled from outside (kernel stack copies): %llu samples, %.1f MB of stack "
		 "copied, unwound in %.3f s of CPU, %llu samples lost by the kernel",
		 (unsigned long long)p->res->samples, (double)p->res->stack_bytes / 1e6,
		 p->res->unwind_seconds, (unsigned long long)p->res->lost);
	record_add(&sb, CP_MF_REC_NOTE, note, strlen(note) + 1);
	((struct cp_mf_process *)sb.buf)->h.used = sb.len;
	snprintf(path, sizeof path, "%s/%d.0%s", p->dir, (int)p->pid, CP_MF_PROC_SUFFIX);
	rc = file_write(path, sb.buf, sb.len);
	strbuf_release(&sb);
	free(p->threads);
	free(p->cmdline);
	free(p->exe);
	return rc;
}

void kc_profile_command(struct kc_profile *p, char *const *argv)
{
	struct strbuf sb;

	strbuf_init(&sb);
	for (int i = 0; argv[i]; i++)
		strbuf_add(&sb, argv[i], strlen(argv[i]) + 1);
	free(p->cmdline);
	p->cmdline_len = sb.len;
	p->cmdline = strbuf_detach(&sb);
	if (!realpath(argv[0], p->exe))
		snprintf(p->exe, PATH_MAX, "%s", argv[0]);
}

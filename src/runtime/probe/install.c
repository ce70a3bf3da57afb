/* Configuration of the probes and their installation: each load module's ELF symbol
 * tables (.symtab and .dynsym, read from the file with mmap, no libdw) matched against the
 * patterns, each match classified and patched. Outside signal context only. */
#include "runtime/probe/probe-internal.h"

#include "runtime/unwind/cfi.h"
#include "runtime/unwind/modules.h"

#include "patch/select.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The TSC rate against CLOCK_MONOTONIC over ~5 ms (invariant TSC assumed, as on every
 * x86-64 CPU of the last decade; the kernel's own tsc clocksource says the same). */
static uint64_t measure_tsc_hz(void)
{
	uint32_t lo, hi;
	uint64_t t0 = now_ns(), c0, c1, t1;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	c0 = ((uint64_t)hi << 32) | lo;
	do
		t1 = now_ns();
	while (t1 - t0 < 5000000);
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	c1 = ((uint64_t)hi << 32) | lo;
	return (uint64_t)((double)(c1 - c0) * 1e9 / (double)(t1 - t0));
}

static int no_thread_start(struct cp_metric *m, struct cp_source_thread *st, pid_t tid)
{
	return 0;
}
static void no_thread_stop(struct cp_metric *m, struct cp_source_thread *st)
{
}
static int no_claims(struct cp_metric *m, struct cp_source_thread *st, const siginfo_t *si,
		     uint64_t *weight)
{
	return 0;
}
static int probe_process_init(struct cp_metric *m)
{
	m->mechanism = CP_MF_MECH_NONE;
	return 0;
}
static void probe_process_fini(struct cp_metric *m)
{
}

static const struct cp_sample_source calls_source = {
    "calls",	     "calls",	     CP_MF_SRC_PROBE, probe_process_init, probe_process_fini,
    no_thread_start, no_thread_stop, no_claims,
};
static const struct cp_sample_source cpu_source = {
    "probe-cputime", "ns",	     CP_MF_SRC_PROBE, probe_process_init, probe_process_fini,
    no_thread_start, no_thread_stop, no_claims,
};
static const struct cp_sample_source iter_source = {
    "loop-iterations",	"iterations",	 CP_MF_SRC_PROBE, probe_process_init,
    probe_process_fini, no_thread_start, no_thread_stop,  no_claims,
};
static const struct cp_sample_source entries_source = {
    "loop-entries",	"entries",	 CP_MF_SRC_PROBE, probe_process_init,
    probe_process_fini, no_thread_start, no_thread_stop,  no_claims,
};
static const struct cp_sample_source ltime_source = {
    "loop-time",     "ns",	     CP_MF_SRC_PROBE, probe_process_init, probe_process_fini,
    no_thread_start, no_thread_stop, no_claims,
};
static const struct cp_sample_source time_source = {
    "probe-time",    "ns",	     CP_MF_SRC_PROBE, probe_process_init, probe_process_fini,
    no_thread_start, no_thread_stop, no_claims,
};

static int add_metric(const struct cp_sample_source *src, uint32_t *index)
{
	if (cp_rt.nmetrics >= CP_MF_MAX_METRICS)
		return -1;
	struct cp_metric *m = &cp_rt.metrics[cp_rt.nmetrics];
	memset(m, 0, sizeof *m);
	m->src = src;
	m->index = cp_rt.nmetrics;
	*index = cp_rt.nmetrics++;
	return 0;
}

int cp_probe_enabled(void)
{
	return cp_probe_g.enabled;
}

static uint32_t configured; /* patterns from CALLPATH_PROBES (not the control channel's) */

int cp_probe_config(const char *spec)
{
	static char buf[4096];
	if (strlen(spec) >= sizeof buf) {
		fprintf(stderr, "callpath runtime: CALLPATH_PROBES is too long; probes disabled\n");
		return -1;
	}
	strcpy(buf, spec);
	for (char *p = buf, *save = NULL, *tok; (tok = strtok_r(p, ";", &save)); p = NULL) {
		if (*tok && cp_probe_g.npatterns < CP_PROBE_MAX_PATTERNS)
			cp_probe_g.patterns[cp_probe_g.npatterns++] = tok;
		cp_probe_g.has_select |= *tok == '+';
	}
	if (!cp_probe_g.npatterns && *spec) /* "": none yet (the control channel adds them) */
		return -1;
	configured = cp_probe_g.npatterns;
	if (add_metric(&calls_source, &cp_probe_g.calls_metric) ||
	    add_metric(&time_source, &cp_probe_g.time_metric)) {
		fprintf(stderr, "callpath runtime: too many metrics; probes disabled\n");
		return -1;
	}
	const char *extra = cp_rt_getenv("CALLPATH_PROBE_METRICS");
	cp_probe_g.cputime = extra && strstr(extra, "cputime");
	if (cp_probe_g.cputime && add_metric(&cpu_source, &cp_probe_g.cpu_metric)) {
		fprintf(stderr, "callpath runtime: too many metrics; probes disabled\n");
		return -1;
	}
	const char *loops = cp_rt_getenv("CALLPATH_LOOPS");
	if (loops && !strcmp(loops, "1") &&
	    (add_metric(&iter_source, &cp_probe_g.iter_metric) ||
	     add_metric(&entries_source, &cp_probe_g.entry_metric) ||
	     add_metric(&ltime_source, &cp_probe_g.ltime_metric) || cp_probe_loops_config())) {
		fprintf(stderr, "callpath runtime: too many metrics; loop probes disabled\n");
		return -1;
	}
	void *m = mmap(NULL, sizeof(struct cp_probe) * CP_PROBE_MAX, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	cp_probe_g.probes = m;
	cp_probe_g.tsc_hz = measure_tsc_hz();
	cp_probe_g.ns_mult = (uint64_t)((1e9 * 4294967296.0) / (double)cp_probe_g.tsc_hz);
	cp_probe_g.enabled = 1;
	return 0;
}

/* The operation a scan performs: install the configured patterns (init, dlopen), or
 * install / remove the probes of one pattern (callpath_probe_insert/remove). */
static struct {
	const char *only; /* NULL: the configured patterns */
	int remove;
	int count;   /* probes installed or removed */
	int refused; /* functions that match but cannot be patched */
	char *why;   /* the first refusal's reason, or NULL */
	size_t why_cap;
} op;
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cp_patch_name sym_name; /* under probe_lock: the demangled forms are large */

/* Which patterns select symbol `name` of the module at `path`: CP_PROBE_* bits, 0 none. */
static uint32_t selected(const char *path, const char *name)
{
	uint32_t role = 0;
	uint32_t npat = op.only ? 1 : cp_probe_g.npatterns;
	cp_patch_name_init(&sym_name, name);
	for (uint32_t i = 0; i < npat; i++)
		role |= cp_patch_pattern_match(op.only ? op.only : cp_probe_g.patterns[i], path,
					       &sym_name);
	return role;
}

static void install_one(const struct cp_module *m, const struct cp_patch_elf *e,
			const struct cp_patch_func *fn, uint32_t role, int concurrent)
{
	const Elf64_Sym *s = fn->sym;
	uint64_t addr = m->bias + s->st_value;
	int st = cp_patch_check_function(e, fn);
	if (!st && (addr < m->text_lo || addr + s->st_size > m->text_hi))
		st = CP_PATCH_NOT_EXEC;
	if (st && op.remove)
		return;
	for (uint32_t i = 0; !st && i < cp_probe_g.nprobes; i++) {
		struct cp_probe *q = &cp_probe_g.probes[i];
		if (q->addr != addr)
			continue;
		/* Probed before (or an alias): remove, or re-insert a removed one. */
		if (op.remove && q->patch.committed)
			op.count += cp_patch_revert(&q->patch, 1) == CP_PATCH_OK;
		else if (!op.remove && !q->patch.committed)
			op.count += cp_patch_commit(&q->patch, concurrent) == CP_PATCH_OK;
		return;
	}
	if (op.remove)
		return;
	if (!st && cp_probe_g.nprobes == CP_PROBE_MAX)
		st = CP_PATCH_NO_NEAR_MEMORY;
	struct cp_probe *p = &cp_probe_g.probes[cp_probe_g.nprobes];
	if (!st) {
		p->addr = addr;
		p->offset = s->st_value;
		p->module = m->id;
		p->index = cp_probe_g.nprobes;
		p->role = role;
		st = cp_patch_prepare(addr, s->st_size, (uint64_t)cp_probe_entry, (uint64_t)p,
				      &p->patch);
	}
	if (!st) {
		p->tramp = p->patch.trampoline;
		st = cp_patch_commit(&p->patch, concurrent);
	}
	if (st) {
		cp_probe_g.refused[st]++;
		cp_rt_note("probe %s in %s not installed: %s", fn->name, m->path,
			   cp_patch_status_str(st));
		if (op.why && !op.refused++)
			snprintf(op.why, op.why_cap, "%s in %s: %s", fn->name, m->path,
				 cp_patch_status_str(st));
		return;
	}
	cp_probe_g.nprobes++;
	op.count++;
}

static const char *op_pattern(uint32_t i)
{
	return op.only ? op.only : cp_probe_g.patterns[i];
}

/* Pattern i names sub_HEX (select.h) in module m: the role of every pattern naming the same
 * address, or 0 when an earlier pattern names it (already done) or i names none. */
static uint32_t unnamed_role(const struct cp_module *m, uint32_t i, uint32_t npat, uint64_t *vaddr,
			     int *qualified)
{
	uint64_t v;
	int q;
	uint32_t role = cp_patch_pattern_unnamed(op_pattern(i), m->path, vaddr, qualified);
	for (uint32_t k = 0; role && k < npat; k++) {
		uint32_t r = cp_patch_pattern_unnamed(op_pattern(k), m->path, &v, &q);
		if (r && v == *vaddr && k < i)
			return 0;
		if (r && v == *vaddr)
			role |= r, *qualified |= q;
	}
	return role;
}

/* Functions without symbol named by sub_HEX patterns, sized by the FDE that starts there
 * (the unwinder's .eh_frame table). Without one, no function is known there: refused when
 * the pattern names this module, else it is no match here (sub_HEX names one function per
 * module that has it, as reports show). */
static void scan_unnamed(const struct cp_module *m, const struct cp_patch_elf *e, int concurrent)
{
	static char name[32];
	uint32_t npat = op.only ? 1 : cp_probe_g.npatterns;
	for (uint32_t i = 0; i < npat; i++) {
		uint64_t vaddr;
		uintptr_t lo = 0, hi = 0;
		int qualified = 0;
		Elf64_Sym sym;
		struct cp_patch_func fn;
		uint32_t role = unnamed_role(m, i, npat, &vaddr, &qualified);
		if (!role || cp_patch_elf_unnamed(e, vaddr, 0, name, &sym, &fn))
			continue;
		if (!cp_cfi_fde_range(m, m->bias + vaddr, &lo, &hi) && lo == m->bias + vaddr)
			sym.st_size = hi - lo;
		else if (!qualified)
			continue;
		install_one(m, e, &fn, role, concurrent);
	}
}

/* .symtab first: it has the static functions; .dynsym duplicates are found as probed. */
static void scan_module(const struct cp_module *m, int concurrent)
{
	struct cp_patch_elf e;
	struct cp_patch_elf_iter it;
	struct cp_patch_func fn;
	if (cp_patch_elf_map(&e, m->path))
		return;
	cp_patch_elf_iter_init(&it);
	while (cp_patch_elf_next(&e, &it, &fn)) {
		uint32_t role = selected(m->path, fn.name);
		if (role)
			install_one(m, &e, &fn, role, concurrent);
	}
	scan_unnamed(m, &e, concurrent);
	cp_patch_elf_unmap(&e);
}

static void scan_modules(uint32_t from, uint32_t to, int concurrent)
{
	struct cp_thread *t = cp_self;
	int was_busy = t ? t->busy : 0;
	if (t)
		t->busy = 1; /* functions we call while patching may be probed already */
	for (uint32_t i = from; i < to; i++) {
		const struct cp_module *m = cp_modules_slot(i);
		if (!__atomic_load_n(&m->unloaded, __ATOMIC_ACQUIRE) &&
		    !cp_patch_module_skipped(m->path))
			scan_module(m, concurrent);
	}
	if (t)
		t->busy = was_busy;
}

void cp_probe_sync(int concurrent)
{
	if (!cp_probe_g.enabled)
		return;
	if (cp_rt.phdr && !cp_rt.phdr->tsc_hz)
		cp_rt.phdr->tsc_hz = cp_probe_g.tsc_hz;
	pthread_mutex_lock(&probe_lock);
	uint32_t n = cp_modules_count();
	scan_modules(cp_probe_g.modules_seen, n, concurrent);
	cp_probe_g.modules_seen = n;
	pthread_mutex_unlock(&probe_lock);
}

/* A pattern inserted at run time is kept for later dlopens: in a free or a removed slot
 * (so that insert/remove cycles of one pattern take one slot). Under probe_lock. */
static void pattern_keep(const char *pattern)
{
	static char store[CP_PROBE_MAX_PATTERNS][256];
	static const char removed[] = "\x01"; /* matches no symbol */
	size_t len = strlen(pattern);
	uint32_t free_slot = CP_PROBE_MAX_PATTERNS;
	for (uint32_t i = 0; i < cp_probe_g.npatterns; i++) {
		if (!strcmp(cp_probe_g.patterns[i], pattern))
			return;
		if (!strcmp(cp_probe_g.patterns[i], removed) && free_slot == CP_PROBE_MAX_PATTERNS)
			free_slot = i;
	}
	if (free_slot == CP_PROBE_MAX_PATTERNS && cp_probe_g.npatterns < CP_PROBE_MAX_PATTERNS)
		free_slot = cp_probe_g.npatterns++;
	if (free_slot == CP_PROBE_MAX_PATTERNS || len >= sizeof store[0])
		return;
	memcpy(store[free_slot], pattern, len + 1);
	cp_probe_g.patterns[free_slot] = store[free_slot];
}

static void pattern_drop(const char *pattern)
{
	for (uint32_t i = 0; i < cp_probe_g.npatterns; i++)
		if (!strcmp(cp_probe_g.patterns[i], pattern))
			cp_probe_g.patterns[i] = "\x01";
}

int cp_probe_control(const char *pattern, int remove, int *refused, char *why, size_t cap)
{
	if (!cp_probe_g.enabled || !pattern || !*pattern || (!remove && strchr(pattern, ';')))
		return -1;
	pthread_mutex_lock(&probe_lock);
	op.only = pattern;
	op.remove = remove;
	op.count = op.refused = 0;
	op.why = cap ? why : NULL;
	op.why_cap = cap;
	if (cap)
		*why = 0;
	scan_modules(0, cp_probe_g.modules_seen, 1);
	int n = op.count;
	if (refused)
		*refused = op.refused;
	op.only = NULL;
	op.remove = 0;
	op.why = NULL;
	if (remove)
		pattern_drop(pattern);
	else
		pattern_keep(pattern);
	pthread_mutex_unlock(&probe_lock);
	return n;
}

/* The internal control API (probe.h): probes of one pattern in every module loaded now;
 * later dlopens match an inserted pattern too. */
CP_EXPORT int callpath_probe_insert(const char *pattern)
{
	return cp_probe_control(pattern, 0, NULL, NULL, 0);
}

CP_EXPORT int callpath_probe_remove(const char *pattern)
{
	return cp_probe_control(pattern, 1, NULL, NULL, 0);
}

void cp_probe_lock(void)
{
	pthread_mutex_lock(&probe_lock);
}

void cp_probe_unlock(void)
{
	pthread_mutex_unlock(&probe_lock);
}

/* fork: the child must not inherit probe_lock held by another thread (the control
 * thread patching); taken around fork like the module registry's lock. */
void cp_probe_fork_prepare(void)
{
	pthread_mutex_lock(&probe_lock);
}

void cp_probe_fork_parent(void)
{
	pthread_mutex_unlock(&probe_lock);
}

void cp_probe_fork_child(void)
{
	pthread_mutex_init(&probe_lock, NULL);
}

void cp_probe_notes(void)
{
	if (!cp_probe_g.enabled)
		return;
	uint32_t refused = 0;
	for (int i = 0; i < CP_PATCH_NSTATUS; i++)
		refused += cp_probe_g.refused[i];
	const char *why = refused	       ? " (the notes say why)"
			  : cp_probe_g.nprobes ? ""
			  : configured	       ? ": no function matches the patterns here"
					       : ": none inserted through the control channel";
	/* the report's summary shows this line as its "probes:" line (render-text.c) */
	cp_rt_note("probes: %u function%s probed, %u refused%s", cp_probe_g.nprobes,
		   cp_probe_g.nprobes == 1 ? "" : "s", refused, why);
}

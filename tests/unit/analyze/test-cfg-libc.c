/* The decoder and the CFG/loop builders on real code no one here wrote: the C library.
 *  - instruction boundaries of every symbol's linear decode agree with `objdump -d`;
 *  - every procedure gets a CFG and a loop nest without errors, with sane invariants.
 * Also a benchmark mode (not a test): `unit-analyze-test-cfg-libc --bench FILE...` prints
 * the time to decode, and to build CFG + loops for, every procedure (bench/struct/run.sh). */
#include "analyze/cfg/cfg-module.h"
#include "analyze/loops/loops.h"
#include "analyze/structure/recover.h"
#include "arch/x86_64/decode.h"
#include "base/error.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

static const char *libc_path(void)
{
	const char *p = getenv("CP_CFG_LIBC");
	return p ? p : "/lib/x86_64-linux-gnu/libc.so.6";
}

static bool comparable(const struct cp_proc *p)
{
	return !(p->flags & (CP_PROC_PLT | CP_PROC_DWARF | CP_PROC_NOSIZE)) &&
	       strncmp(p->name, "sub_", 4) != 0;
}

struct addrs {
	uint64_t *a;
	size_t n, alloc;
};

/* Instruction addresses objdump prints for the file (one line per instruction with -w). */
static bool objdump_addrs(const char *path, struct addrs *out)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "objdump -d -w --no-show-raw-insn '%s' 2>/dev/null", path);
	FILE *f = popen(cmd, "r");
	if (!f)
		return false;
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		char *end;
		unsigned long long a = strtoull(line, &end, 16);
		if (end == line || *end != ':' || end[1] != '\t' || line[0] != ' ')
			continue;
		if (out->n == out->alloc) {
			out->alloc = out->alloc ? out->alloc * 2 : 1 << 16;
			out->a = realloc(out->a, out->alloc * sizeof(*out->a));
		}
		out->a[out->n++] = a;
	}
	return pclose(f) == 0 && out->n > 0;
}

static size_t lower_bound(const struct addrs *x, uint64_t v)
{
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (x->a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Linear decode of [lo, hi) compared with objdump's boundaries there. */
static bool proc_agrees(const struct cp_module *m, const struct cp_proc *p, const struct addrs *ref,
			size_t *ninsns)
{
	const struct cp_elf_section *s = cp_elf_code_at(&m->image, p->lo);
	if (!s || !s->data || p->hi > s->addr + s->size)
		return true; /* nothing to compare */
	size_t k = lower_bound(ref, p->lo);
	uint64_t a = p->lo;
	while (a < p->hi) {
		struct cp_x86_insn in;
		unsigned n = cp_x86_decode(s->data + (a - s->addr), p->hi - a, a, &in);
		if (k >= ref->n || ref->a[k] != a)
			return false;
		k++;
		(*ninsns)++;
		a += n ? n : 1; /* objdump also steps one byte over "(bad)" */
	}
	return k >= ref->n || ref->a[k] >= p->hi;
}

static void test_boundaries_match_objdump(void **state)
{
	(void)state;
	const char *path = libc_path();
	if (access(path, R_OK) != 0 || system("objdump --version >/dev/null 2>&1") != 0)
		skip();
	struct cp_module m;
	assert_int_equal(cp_module_open(&m, path, 0), 0);
	struct addrs ref = {0};
	assert_true(objdump_addrs(path, &ref));
	size_t compared = 0, differ = 0, ninsns = 0;
	for (size_t i = 0; i < m.procs.nprocs; i++) {
		const struct cp_proc *p = &m.procs.procs[i];
		if (!comparable(p))
			continue;
		compared++;
		if (!proc_agrees(&m, p, &ref, &ninsns)) {
			if (differ++ < 5)
				printf("# boundaries differ from objdump in %s at 0x%llx\n",
				       p->name, (unsigned long long)p->lo);
		}
	}
	printf("# %zu procedures, %zu instructions compared with objdump; %zu differ\n", compared,
	       ninsns, differ);
	assert_true(compared > 1000);
	assert_true(differ * 1000 <= compared); /* at most 0.1% (data in text) */
	free(ref.a);
	cp_module_release(&m);
}

struct totals {
	size_t procs, failed, blocks, edges, insns, bad, loops, irreducible, jtables, unresolved,
	    maxdepth, inferred;
};

static void check_nest(const struct cp_cfg *cfg, const struct cp_loop_nest *n)
{
	for (size_t i = 0; i < n->nloops; i++) {
		const struct cp_loop *L = &n->loops[i];
		assert_true(L->nblocks > 0 && L->nheaders > 0 && L->nranges > 0);
		assert_true(L->header_block < cfg->nblocks);
		assert_true(L->parent < (int32_t)i);
		if (L->parent >= 0)
			assert_int_equal(L->depth, n->loops[L->parent].depth + 1);
		for (uint32_t k = 0; k < L->nbacks; k++)
			assert_true(n->edges[L->first_back + k] < cfg->nedges);
	}
}

static void run_all(const struct cp_module *m, struct totals *t, bool check)
{
	struct cp_cfg_module cm;
	struct cp_cfg cfg;
	struct cp_loop_nest nest;
	cp_cfg_module_init(&cm, m);
	struct cp_cfg_oracle o = cp_cfg_module_oracle(&cm);
	cp_cfg_init(&cfg);
	cp_loop_nest_init(&nest);
	t->inferred = cp_cfg_module_infer_noreturn(&cm, &cfg);
	for (size_t i = 0; i < m->procs.nprocs; i++) {
		t->procs++;
		if (cp_cfg_module_build(&cm, &cfg, i, &o) < 0) {
			t->failed++;
			continue;
		}
		cp_loops_find(&nest, &cfg);
		if (check)
			check_nest(&cfg, &nest);
		t->blocks += cfg.nblocks, t->edges += cfg.nedges, t->insns += cfg.ninsns;
		t->bad += cfg.nbad, t->jtables += cfg.njtables, t->unresolved += cfg.nunresolved;
		t->loops += nest.nloops, t->irreducible += nest.nirreducible;
		for (size_t l = 0; l < nest.nloops; l++)
			if (nest.loops[l].depth > t->maxdepth)
				t->maxdepth = nest.loops[l].depth;
	}
	cp_loop_nest_release(&nest);
	cp_cfg_release(&cfg);
	cp_cfg_module_release(&cm);
}

static void print_totals(const char *path, const struct totals *t)
{
	printf("# %s: %zu procedures (%zu without code, %zu found not to return), "
	       "%zu instructions, %zu blocks, %zu edges, %zu undecodable, %zu jump tables, "
	       "%zu unresolved indirect jumps, %zu loops (%zu irreducible, max depth %zu)\n",
	       path, t->procs, t->failed, t->inferred, t->insns, t->blocks, t->edges, t->bad,
	       t->jtables, t->unresolved, t->loops, t->irreducible, t->maxdepth);
}

static void test_every_procedure(void **state)
{
	(void)state;
	const char *path = libc_path();
	if (access(path, R_OK) != 0)
		skip();
	struct cp_module m;
	assert_int_equal(cp_module_open(&m, path, 0), 0);
	struct totals t = {0};
	run_all(&m, &t, true);
	print_totals(path, &t);
	assert_true(t.procs > 1000);
	assert_true(t.failed * 100 < t.procs);
	assert_true(t.bad * 1000 < t.insns);
	assert_true(t.inferred > 0); /* static helpers such as malloc_printerr */
	assert_true(t.loops > 500);  /* libc is full of loops (string functions, printf) */
	assert_true(t.jtables > 20); /* and of switches (vfprintf, strtod, ...) */
	/* hand-written string functions (bsf-indexed tables), computed jumps */
	assert_true(t.unresolved * 20 < t.procs);
	cp_module_release(&m);
}

/* Indirect jmps objdump shows inside functions named sw_* of path. */
static int objdump_switch_jumps(const char *path)
{
	char cmd[4200], line[1024];
	snprintf(cmd, sizeof(cmd), "objdump -d -w --no-show-raw-insn '%s'", path);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	int n = 0;
	bool in_sw = false;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, ">:\n"))
			in_sw = strstr(line, " <sw_") != NULL;
		else if (in_sw && strstr(line, "\tjmp ") && strstr(line, "*"))
			n++;
	}
	assert_int_equal(pclose(f), 0);
	return n;
}

/* Jump tables as gcc and clang emit them, PIE and non-PIE: every indirect jmp of the
 * switch functions is resolved, each to a table of at least 7 entries. */
static void test_compiled_switches(void **state)
{
	(void)state;
	const char *build = getenv("CP_BUILD_DIR");
	const char *variants[] = {"gcc.pie", "gcc.nopie", "clang.pie", "clang.nopie"};
	int checked = 0;
	for (size_t v = 0; v < 4; v++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/tests/fixtures/asm/switch.%s", build ? build : ".",
			 variants[v]);
		if (access(path, R_OK) != 0)
			continue; /* clang may be missing; gcc is required below */
		struct cp_module m;
		struct cp_cfg_module cm;
		struct cp_cfg cfg;
		assert_int_equal(cp_module_open(&m, path, 0), 0);
		cp_cfg_module_init(&cm, &m);
		cp_cfg_init(&cfg);
		struct cp_cfg_oracle o = cp_cfg_module_oracle(&cm);
		int tables = 0;
		for (size_t i = 0; i < m.procs.nprocs; i++) {
			if (strncmp(m.procs.procs[i].name, "sw_", 3))
				continue;
			assert_int_equal(cp_cfg_module_build(&cm, &cfg, i, &o), 0);
			if (cfg.nunresolved)
				fail_msg("%s: %s: unresolved jump at 0x%llx", path,
					 m.procs.procs[i].name,
					 (unsigned long long)cfg.unresolved[0]);
			for (size_t k = 0; k < cfg.njtables; k++)
				assert_true(cfg.jtables[k].entries >= 7);
			tables += (int)cfg.njtables;
		}
		int expect = objdump_switch_jumps(path);
		printf("# %s: %d jump tables (objdump: %d indirect jumps)\n", variants[v], tables,
		       expect);
		assert_true(expect >= 2);
		assert_int_equal(tables, expect);
		checked += v < 2;
		cp_cfg_release(&cfg);
		cp_cfg_module_release(&cm);
		cp_module_release(&m);
	}
	assert_int_equal(checked, 2);
}

struct par {
	const struct cp_module *m;
	struct totals t;
};

static void *par_run(void *arg)
{
	struct par *p = arg;
	run_all(p->m, &p->t, false);
	return NULL;
}

/* No hidden shared state: two threads analysing the same module (each with its own
 * cp_cfg_module, cp_cfg and cp_loop_nest) get exactly the serial result. */
static void test_parallel_matches_serial(void **state)
{
	(void)state;
	const char *path = libc_path();
	if (access(path, R_OK) != 0)
		skip();
	struct cp_module m;
	assert_int_equal(cp_module_open(&m, path, 0), 0);
	struct totals serial = {0};
	run_all(&m, &serial, false);
	struct par p[2] = {{&m, {0}}, {&m, {0}}};
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, par_run, &p[i]), 0);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_memory_equal(&p[i].t, &serial, sizeof(serial));
	}
	cp_module_release(&m);
}

/* The glue on a real ELF file with known contents: the assembly fixtures as a shared
 * library, read through the module's procedure table and image. */
static const struct cp_proc *proc_named(const struct cp_module *m, const char *name, size_t *i)
{
	for (*i = 0; *i < m->procs.nprocs; (*i)++)
		if (!strcmp(m->procs.procs[*i].linkage, name))
			return &m->procs.procs[*i];
	fail_msg("no procedure %s", name);
	return NULL;
}

static void test_module_fixtures(void **state)
{
	(void)state;
	const char *build = getenv("CP_BUILD_DIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/fixtures/asm/libcp-asm-fixtures.so",
		 build ? build : ".");
	if (access(path, R_OK) != 0)
		fail_msg("%s missing (built with the test)", path);
	struct cp_module m;
	assert_int_equal(cp_module_open(&m, path, 0), 0);
	struct cp_cfg_module cm;
	struct cp_cfg cfg;
	cp_cfg_module_init(&cm, &m);
	cp_cfg_init(&cfg);
	size_t die, noret, sw, split;
	proc_named(&m, "fx_die", &die);
	proc_named(&m, "fx_noret", &noret);
	proc_named(&m, "fx_switch", &sw);
	const struct cp_proc *ps = proc_named(&m, "fx_split", &split);
	assert_false(cm.noreturn[die]); /* no name says so ... */
	assert_true(cp_cfg_module_infer_noreturn(&cm, &cfg) >= 1);
	assert_true(cm.noreturn[die]); /* ... but it only traps */
	assert_false(cm.noreturn[noret]);
	struct cp_cfg_oracle o = cp_cfg_module_oracle(&cm);

	assert_int_equal(cp_cfg_module_build(&cm, &cfg, noret, &o), 0);
	assert_int_equal(cfg.nblocks, 4);
	assert_int_equal(cfg.nbad, 0);
	size_t nr = 0;
	for (size_t e = 0; e < cfg.nedges; e++)
		nr += cfg.edges[e].kind == CP_CFG_NORETURN;
	assert_int_equal(nr, 1);

	assert_int_equal(cp_cfg_module_build(&cm, &cfg, sw, &o), 0); /* table read from .rodata */
	assert_int_equal(cfg.njtables, 1);
	assert_int_equal(cfg.jtables[0].entries, 4);
	assert_int_equal(cfg.nblocks, 9);

	/* fx_split.cold is a part of fx_split: the cold block joins the CFG */
	assert_int_equal(ps->nparts, 1);
	assert_int_equal(cp_cfg_module_build(&cm, &cfg, split, &o), 0);
	assert_int_equal(cfg.nblocks, 4);
	assert_int_equal(cfg.blocks[cfg.entry].lo, ps->lo);
	cp_cfg_release(&cfg);
	cp_cfg_module_release(&cm);
	cp_module_release(&m);
}

/* Structure recovery uses the module oracle with no-return inference: a call to a
 * procedure that only traps (no name says so) ends its block, so the loop after it has a
 * single entry (fixture noret-loop.S) instead of a fake second one through the call. */
static void test_struct_noreturn_inferred(void **state)
{
	(void)state;
	const char *build = getenv("CP_BUILD_DIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/fixtures/asm/libcp-asm-fixtures.so",
		 build ? build : ".");
	struct cp_module m;
	assert_int_equal(cp_module_open(&m, path, 0), 0);
	size_t idx;
	const struct cp_proc *p = proc_named(&m, "fx_nrloop", &idx);
	struct cp_structure_builder b;
	cp_structure_builder_init(&b);
	assert_int_equal(cp_struct_recover(&m, &b, NULL), 0);
	uint32_t proc = CP_ST_NONE;
	for (uint32_t i = 0; i < b.nscopes; i++)
		if (b.scopes[i].kind == CP_ST_PROC && b.scopes[i].addr == p->lo)
			proc = i;
	assert_int_not_equal(proc, CP_ST_NONE);
	assert_false(b.scopes[proc].flags & CP_ST_F_IRREDUCIBLE);
	uint32_t loop = CP_ST_NONE, nloops = 0;
	for (uint32_t i = 0; i < b.nscopes; i++)
		if (b.scopes[i].kind == CP_ST_LOOP && b.scopes[i].parent == proc)
			loop = i, nloops++;
	assert_int_equal(nloops, 1);
	assert_false(b.scopes[loop].flags & CP_ST_F_IRREDUCIBLE);
	size_t entries = 0, backs = 0;
	for (size_t e = 0; e < b.nedges; e++) {
		if (b.edges[e].loop != loop)
			continue;
		entries += b.edges[e].kind == CP_ST_EDGE_ENTRY;
		backs += b.edges[e].kind == CP_ST_EDGE_BACK;
		if (b.edges[e].kind != CP_ST_EDGE_EXIT) /* into the header */
			assert_int_equal(b.edges[e].to, b.scopes[loop].addr);
	}
	assert_int_equal(entries, 1);
	assert_int_equal(backs, 1);
	for (size_t n = 0; n < b.nnotes; n++)
		assert_int_not_equal(b.notes[n].scope, proc);
	cp_structure_builder_release(&b);
	cp_module_release(&m);
}

/* Structure of m, serialized, with libdw reopened after `budget` line rows. */
static void *struct_bytes(struct cp_module *m, size_t budget, size_t *len, size_t *reopens)
{
	struct cp_structure_builder b;
	cp_structure_builder_init(&b);
	struct cp_struct_options o = {.dwarf_rows_budget = budget};
	assert_int_equal(cp_struct_recover(m, &b, &o), 0);
	void *buf = NULL;
	assert_int_equal(cp_structure_builder_finish(&b, &buf, len), 0);
	cp_structure_builder_release(&b);
	*reopens = o.dwarf_reopens;
	return buf;
}

/* Reopening libdw during recovery (to drop its per-unit line tables) changes nothing in
 * the output: libc with its debug file, reopened every few units vs never. */
static void test_struct_dwarf_reopen_same_output(void **state)
{
	(void)state;
	struct cp_module m;
	assert_int_equal(cp_module_open(&m, libc_path(), CP_MODULE_STRICT_DWARF), 0);
	if (!m.dwarf.dbg || m.dwarf.ncus < 100) {
		cp_module_release(&m);
		skip(); /* no debug file for libc here */
	}
	size_t len1, len2, reopens1, reopens2;
	void *never = struct_bytes(&m, SIZE_MAX, &len1, &reopens1);
	void *often = struct_bytes(&m, 20000, &len2, &reopens2);
	assert_int_equal(reopens1, 0);
	assert_true(reopens2 >= 5);
	print_message("# libc: %zu reopenings of libdw, %zu-byte structure\n", reopens2, len2);
	assert_int_equal(len1, len2);
	assert_memory_equal(never, often, len1);
	free(never);
	free(often);
	cp_module_release(&m);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: the VM is shared */
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t decode_all(const struct cp_module *m, size_t *bytes, bool operands)
{
	size_t ninsns = 0;
	for (size_t i = 0; i < m->procs.nprocs; i++) {
		const struct cp_proc *p = &m->procs.procs[i];
		const struct cp_elf_section *s = cp_elf_code_at(&m->image, p->lo);
		if (!s || !s->data || p->hi > s->addr + s->size)
			continue;
		*bytes += p->hi - p->lo;
		for (uint64_t a = p->lo; a < p->hi; ninsns++) {
			struct cp_x86_insn in;
			const uint8_t *b = s->data + (a - s->addr);
			unsigned n = operands ? cp_x86_decode(b, p->hi - a, a, &in)
					      : cp_x86_decode_flow(b, p->hi - a, a, &in);
			a += n ? n : 1;
		}
	}
	return ninsns;
}

static int bench(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		struct cp_module m;
		double t0 = now();
		if (cp_module_open(&m, argv[i], 0) < 0) {
			fprintf(stderr, "%s\n", cp_error_message());
			return 1;
		}
		double t1 = now();
		size_t bytes = 0, ninsns = decode_all(&m, &bytes, false);
		double tf = now();
		ninsns = decode_all(&m, &bytes, true);
		bytes /= 2;
		double t2 = now();
		struct totals t = {0};
		run_all(&m, &t, false);
		double t3 = now();
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		print_totals(argv[i], &t);
		printf("open+symbols %.3f s; linear decode without operands %.3f s, with operands "
		       "%.3f s (%zu insns, %.1f MB/s, %.1f ns/insn); "
		       "no-return inference + CFG + loops %.3f s (%.1f ns/insn); peak RSS %ld MB; "
		       "code %.1f MB\n",
		       t1 - t0, tf - t1, t2 - tf, ninsns, (double)bytes / 1e6 / (t2 - tf),
		       (t2 - tf) * 1e9 / (double)ninsns, t3 - t2,
		       (t3 - t2) * 1e9 / (double)(t.insns ? t.insns : 1), ru.ru_maxrss / 1024,
		       (double)bytes / 1e6);
		cp_module_release(&m);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--bench"))
		return bench(argc - 2, argv + 2);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_boundaries_match_objdump),
	    cmocka_unit_test(test_every_procedure),
	    cmocka_unit_test(test_module_fixtures),
	    cmocka_unit_test(test_struct_noreturn_inferred),
	    cmocka_unit_test(test_struct_dwarf_reopen_same_output),
	    cmocka_unit_test(test_compiled_switches),
	    cmocka_unit_test(test_parallel_matches_serial),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

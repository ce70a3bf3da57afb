/* Cross-check of the runtime's CFI interpreter against libdw, row by row.
 *
 * For every FDE of each module (libc, libm, ld.so, libdw itself, the C++ runtime when
 * present, this test program and the workload library), every row our interpreter
 * produces is compared with dwarf_cfi_addrframe at the same address: the pc range of the
 * row, the CFA rule, the return-address rule and the rules of the callee-saved registers
 * the unwinder tracks. libdw is used here only: the runtime must not link it. */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "runtime/unwind/cfi.h"
#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

/* A location or value in symbolic form: base + off. */
enum sym_base { SB_NONE, SB_CFA, SB_REG, SB_CONST, SB_DEREF_REG, SB_OTHER };

struct sym {
	int base;
	int reg;
	int64_t off;
};

/* Evaluates the few op shapes libdw hands back for CFI rules. */
static struct sym sym_eval(const Dwarf_Op *ops, size_t n)
{
	struct sym st[8];
	int sp = 0;

	for (size_t i = 0; i < n; i++) {
		const Dwarf_Op *o = &ops[i];
		if (sp >= 7)
			return (struct sym){SB_OTHER, 0, 0};
		if (o->atom == DW_OP_call_frame_cfa) {
			st[sp++] = (struct sym){SB_CFA, 0, 0};
		} else if (o->atom >= DW_OP_breg0 && o->atom <= DW_OP_breg31) {
			st[sp++] = (struct sym){SB_REG, o->atom - DW_OP_breg0, (int64_t)o->number};
		} else if (o->atom == DW_OP_bregx) {
			st[sp++] = (struct sym){SB_REG, (int)o->number, (int64_t)o->number2};
		} else if (o->atom >= DW_OP_lit0 && o->atom <= DW_OP_lit31) {
			st[sp++] = (struct sym){SB_CONST, 0, o->atom - DW_OP_lit0};
		} else if (o->atom == DW_OP_consts || o->atom == DW_OP_constu ||
			   (o->atom >= DW_OP_const1u && o->atom <= DW_OP_const8s)) {
			st[sp++] = (struct sym){SB_CONST, 0, (int64_t)o->number};
		} else if (o->atom == DW_OP_plus_uconst && sp >= 1) {
			st[sp - 1].off += (int64_t)o->number;
		} else if (o->atom == DW_OP_plus && sp >= 2 && st[sp - 1].base == SB_CONST) {
			st[sp - 2].off += st[sp - 1].off;
			sp--;
		} else if (o->atom == DW_OP_minus && sp >= 2 && st[sp - 1].base == SB_CONST) {
			st[sp - 2].off -= st[sp - 1].off;
			sp--;
		} else if (o->atom == DW_OP_deref && sp >= 1 && st[sp - 1].base == SB_REG) {
			st[sp - 1].base = SB_DEREF_REG;
		} else {
			return (struct sym){SB_OTHER, 0, 0};
		}
	}
	/* DWARF: the value is the top of the stack (libdw pushes the CFA first for
	 * DW_CFA_expression rules, as the standard says) */
	return sp >= 1 ? st[sp - 1] : (struct sym){SB_OTHER, 0, 0};
}

/* Is ops the binutils PLT CFA expression with threshold thr and offset off? */
static int is_plt_expr(const Dwarf_Op *ops, size_t n, int thr, int off)
{
	return n == 9 && ops[0].atom == DW_OP_breg7 && (int64_t)ops[0].number == off &&
	       ops[1].atom == DW_OP_breg16 && ops[2].atom == DW_OP_lit15 &&
	       ops[3].atom == DW_OP_and && ops[4].atom == DW_OP_lit0 + thr &&
	       ops[5].atom == DW_OP_ge && ops[6].atom == DW_OP_lit3 && ops[7].atom == DW_OP_shl &&
	       ops[8].atom == DW_OP_plus;
}

struct stats {
	long fdes, rows, mismatches, unsupported, deref_rows, rbp_rows;
};

static struct stats last_stats;

static int report(struct stats *s, const char *path, uintptr_t off, const char *what)
{
	if (s->mismatches++ < 10)
		fprintf(stderr, "  MISMATCH %s+%#lx: %s\n", path, (unsigned long)off, what);
	return 0;
}

static void compare_cfa(struct stats *s, const char *path, uintptr_t off, Dwarf_Frame *fr,
			const struct cp_cfi_row *row)
{
	Dwarf_Op *ops;
	size_t n;
	struct sym v;

	if (dwarf_frame_cfa(fr, &ops, &n) != 0) {
		report(s, path, off, "libdw has no CFA");
		return;
	}
	if (row->cfa_how == CP_CFA_PLT) {
		if (!is_plt_expr(ops, n, row->plt_thr, row->cfa_off))
			report(s, path, off, "PLT CFA differs");
		return;
	}
	v = sym_eval(ops, n);
	if (row->cfa_how == CP_CFA_REG &&
	    (v.base != SB_REG || v.reg != row->cfa_reg || v.off != row->cfa_off))
		report(s, path, off, "CFA reg+off differs");
	else if (row->cfa_how == CP_CFA_DEREF &&
		 (v.base != SB_DEREF_REG || v.reg != row->cfa_reg || v.off != row->cfa_off))
		report(s, path, off, "CFA deref differs");
}

/* Compares our rule (how, reg, off) for DWARF register regno with libdw's. */
static void compare_reg(struct stats *s, const char *path, uintptr_t off, Dwarf_Frame *fr,
			int regno, int how, int reg, int32_t roff)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	struct sym v;
	char msg[96];

	if (dwarf_frame_register(fr, regno, mem, &ops, &n) != 0) {
		report(s, path, off, "libdw cannot describe a register");
		return;
	}
	snprintf(msg, sizeof(msg), "register %d: ours how=%d off=%d", regno, how, roff);
	if (n == 0) { /* ops == mem: undefined; ops == NULL: same value */
		int want = ops ? CP_REG_UNDEF : CP_REG_SAME;
		/* libdw reports registers without a rule as same value, undefined for
		 * the ABI's call-clobbered ones; we treat "no rule" as same */
		if (how != want && !(how == CP_REG_SAME && want == CP_REG_UNDEF && regno != 16))
			report(s, path, off, msg);
		return;
	}
	v = sym_eval(ops, n);
	if (how == CP_REG_CFA) {
		if (v.base != SB_CFA || v.off != roff)
			report(s, path, off, msg);
	} else if (how == CP_REG_AT_REG) {
		if (v.base != SB_REG || v.reg != reg || v.off != roff)
			report(s, path, off, msg);
	} else if (how != CP_REG_OTHER) {
		report(s, path, off, msg);
	}
}

static void compare_row(struct stats *s, const struct cp_module *m, Dwarf_CFI *cfi,
			const struct cp_cfi_row *row)
{
	Dwarf_Frame *fr;
	Dwarf_Addr start, end;
	bool sig;
	uintptr_t off = row->lo - m->bias;

	s->rows++;
	if (dwarf_cfi_addrframe(cfi, off, &fr) != 0) {
		report(s, m->path, off, "libdw finds no frame");
		return;
	}
	dwarf_frame_info(fr, &start, &end, &sig);
	/* libdw's restore_state also restores the remembered row's start address, so its
	 * start may lie before ours; the rules and the end must agree. */
	if (start > off || end != row->hi - m->bias) {
		char b[128];
		snprintf(b, sizeof b, "row range differs: ours %#lx-%#lx libdw %#lx-%#lx",
			 (unsigned long)off, (unsigned long)(row->hi - m->bias),
			 (unsigned long)start, (unsigned long)end);
		report(s, m->path, off, b);
	}
	if ((row->kind == CP_ROW_SIGNAL) != sig)
		report(s, m->path, off, "signal-frame flag differs");
	if (row->kind == CP_ROW_UNSUPPORTED) {
		if (s->unsupported++ < 5)
			fprintf(stderr, "  unsupported row at %s+%#lx\n", m->path,
				(unsigned long)off);
	} else if (row->kind != CP_ROW_SIGNAL) {
		s->deref_rows += row->cfa_how == CP_CFA_DEREF;
		s->rbp_rows += row->cfa_how == CP_CFA_REG && row->cfa_reg == CP_DW_RBP;
		compare_cfa(s, m->path, off, fr, row);
		compare_reg(s, m->path, off, fr, CP_DW_RIP, row->ra_how, 0, row->ra_off);
		for (int i = 0; i < CP_NSAVED; i++)
			compare_reg(s, m->path, off, fr, cp_saved_regs[i], row->saved_how[i],
				    row->saved_reg[i], row->saved_off[i]);
	}
	free(fr);
}

/* Walks every FDE listed in the module's .eh_frame_hdr and every row in it. */
static void check_module(const struct cp_module *m, struct stats *s)
{
	const struct cp_ehinfo *info = m->unwind_private;
	const int32_t *t;
	int fd = open(m->path, O_RDONLY);
	Elf *elf;
	Dwarf_CFI *cfi;

	assert_true(fd >= 0);
	assert_non_null(info);
	assert_true(info->count > 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	cfi = dwarf_getcfi_elf(elf);
	assert_non_null(cfi);
	t = (const int32_t *)(const void *)info->table;
	for (uint32_t i = 0; i < info->count; i++) {
		uintptr_t pc = (uintptr_t)info->hdr + t[2 * i];
		struct cp_cfi_row row;
		s->fdes++;
		for (int guard = 0; guard < 100000; guard++) {
			assert_int_equal(cp_cfi_find_row(m, pc, &row), 0);
			if (row.kind == CP_ROW_NONE || row.hi <= pc)
				break;
			compare_row(s, m, cfi, &row);
			pc = row.hi;
		}
	}
	dwarf_cfi_end(cfi);
	elf_end(elf);
	close(fd);
}

static void check_at(const char *what, void *addr)
{
	const struct cp_module *m = cp_modules_find((uintptr_t)addr);
	struct stats s = {0, 0, 0, 0, 0, 0};

	assert_non_null(m);
	check_module(m, &s);
	last_stats = s;
	fprintf(stderr, "  %-40s %6ld FDEs %7ld rows, %ld unsupported, %ld mismatches\n", m->path,
		s.fdes, s.rows, s.unsupported, s.mismatches);
	assert_true(s.rows > s.fdes);
	assert_int_equal(s.mismatches, 0);
	assert_true(s.unsupported * 1000 <= s.rows); /* at most 0.1% of rows */
	(void)what;
}

static int setup(void **state)
{
	(void)state;
	elf_version(EV_CURRENT);
	assert_int_equal(cp_modules_init(NULL), 0);
	return 0;
}

static void test_libc(void **state)
{
	(void)state;
	check_at("libc", dlsym(RTLD_DEFAULT, "qsort"));
}

static void test_libm(void **state)
{
	void *h = dlopen("libm.so.6", RTLD_NOW);

	(void)state;
	assert_non_null(h);
	cp_modules_sync();
	check_at("libm", dlsym(h, "cos"));
}

static void test_ld_so(void **state)
{
	(void)state;
	uintptr_t base = getauxval(AT_BASE), a = base;

	while (!cp_modules_find(a) && a < base + (1 << 20))
		a += 4096;
	check_at("ld.so", (void *)a);
}

static void test_libdw(void **state)
{
	(void)state;
	check_at("libdw", (void *)dwarf_cfi_addrframe);
}

static void test_self(void **state)
{
	(void)state;
	check_at("self", (void *)check_module);
}

static void test_cxx_runtime(void **state)
{
	void *h = dlopen("libstdc++.so.6", RTLD_NOW);

	(void)state;
	if (!h)
		skip();
	cp_modules_sync();
	check_at("libstdc++", dlsym(h, "__cxa_throw"));
}

static void test_workload_lib(void **state)
{
	char path[1024];
	const char *dir = getenv("CP_BUILD_DIR");
	void *h;

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/workloads/libdlwork.so", dir ? dir : ".");
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "  %s not built: %s\n", path, dlerror());
		skip();
	}
	cp_modules_sync();
	check_at("libdlwork", dlsym(h, "dl_work"));
}

/* The -O2 workload executables are PIEs (no dlopen): map each file flat and describe it
 * as a module. Valid when the text and .eh_frame segments have file offset == vaddr,
 * which holds for the default -z separate-code layout (checked). */
static int map_flat(const char *path, struct cp_module *m, struct cp_ehinfo *info, void **img,
		    size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat sb;
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;

	if (fd < 0 || fstat(fd, &sb) < 0)
		return -1;
	*len = sb.st_size;
	*img = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	eh = *img;
	ph = (const Elf64_Phdr *)((const char *)*img + eh->e_phoff);
	memset(m, 0, sizeof(*m));
	m->bias = (uintptr_t)*img;
	memcpy(m->path, path, strnlen(path, sizeof(m->path) - 1));
	for (int i = 0; i < eh->e_phnum; i++) {
		if ((ph[i].p_type == PT_LOAD || ph[i].p_type == PT_GNU_EH_FRAME) &&
		    ph[i].p_offset != ph[i].p_vaddr && !(ph[i].p_flags & PF_W))
			return -1;
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			m->text_lo = m->bias + ph[i].p_vaddr;
			m->text_hi = m->text_lo + ph[i].p_filesz;
		} else if (ph[i].p_type == PT_GNU_EH_FRAME) {
			m->eh_frame_hdr = (const uint8_t *)(m->bias + ph[i].p_vaddr);
			m->eh_frame_hdr_size = ph[i].p_memsz;
		}
	}
	cp_cfi_prepare(m, info);
	m->unwind_private = info;
	return m->eh_frame_hdr ? 0 : -1;
}

static void test_workload_executables(void **state)
{
	static const char *const names[] = {"chain",  "callers", "recurse", "threads", "blocking",
					    "dlopen", "ownsig",	 "segv",    "forkexec"};
	const char *dir = getenv("CP_BUILD_DIR");
	int checked = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[1024];
		struct cp_module m;
		struct cp_ehinfo info;
		struct stats s = {0, 0, 0, 0, 0, 0};
		void *img = NULL;
		size_t len = 0;

		snprintf(path, sizeof(path), "%s/tests/workloads/%s.O2", dir ? dir : ".", names[i]);
		if (access(path, R_OK) != 0)
			continue;
		assert_int_equal(map_flat(path, &m, &info, &img, &len), 0);
		check_module(&m, &s);
		fprintf(stderr, "  %-40s %6ld FDEs %7ld rows, %ld unsupported, %ld mismatches\n",
			m.path, s.fdes, s.rows, s.unsupported, s.mismatches);
		assert_int_equal(s.mismatches, 0);
		assert_int_equal(s.unsupported, 0);
		munmap(img, len);
		checked++;
	}
	if (!checked) {
		fprintf(stderr, "  no workload executables under %s/tests/workloads\n", dir);
		skip();
	}
}

/* ---- libraries compiled here by gcc and clang: realigned stacks (CFA by
 * expression), alloca frames (rbp-based CFA), then cross-checked and unwound through ---- */
static const char fixture_src[] =
    "#include <alloca.h>\n"
    "#include <string.h>\n"
    "typedef int (*cb_t)(void);\n"
    /* over-aligned local + alloca + stack arguments: gcc's DRAP frame, CFA = *(rbp - k) */
    "__attribute__((noinline)) int fx_drap(int a, int b, int c, int d, int e, int f,\n"
    "                                      int g, int h, cb_t cb) {\n"
    "  char buf[128] __attribute__((aligned(64))); char *p = alloca(a + 16);\n"
    "  memset(buf, a + g + h, sizeof buf); memset(p, 1, a);\n"
    "  return buf[(b + c + d + e + f) & 127] + p[a / 2] + cb() + 1; }\n"
    "__attribute__((noinline)) int fx_alloca(int n, cb_t cb) {\n"
    "  char *p = alloca(n + 16); memset(p, 1, n);\n"
    "  return p[n / 2] + fx_drap(n, 1, 2, 3, 4, 5, 6, 7, cb) + 1; }\n"
    "__attribute__((noinline)) int fx_recurse(int n, cb_t cb) {\n"
    "  return n ? fx_recurse(n - 1, cb) + 1 : fx_alloca(32, cb) + 1; }\n"
    "__attribute__((noinline, force_align_arg_pointer)) int fx_realign(int n, cb_t cb) {\n"
    "  double d[4] __attribute__((aligned(32))); for (int i = 0; i < 4; i++) d[i] = n * i;\n"
    "  return (int)d[n & 3] + fx_recurse(n, cb) + 1; }\n"
    "int fx_entry(int n, cb_t cb) { return fx_realign(n, cb) + 1; }\n";

static struct cp_frame fx_frames[64];
static int fx_n;
static enum cp_unwind_status fx_status;

static int fx_callback(void)
{
	fx_n = cp_unwind_here(fx_frames, 64, &fx_status);
	return 0;
}

/* Builds the fixture with `cc` into a temporary shared object; NULL if cc is missing. */
static void *fixture_build(const char *cc, char *so, size_t len)
{
	char src[64] = "/tmp/cp-unwindref-XXXXXX.c", cmd[512];
	int fd = mkstemps(src, 2);
	void *h;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, fixture_src, sizeof(fixture_src) - 1),
			 (ssize_t)sizeof(fixture_src) - 1);
	close(fd);
	snprintf(so, len, "%.*s.so", (int)strlen(src) - 2, src);
	snprintf(cmd, sizeof(cmd), "%s -O2 -g -fomit-frame-pointer -fPIC -shared -o %s %s 2>&1", cc,
		 so, src);
	h = system(cmd) == 0 ? dlopen(so, RTLD_NOW) : NULL;
	unlink(src);
	return h;
}

static void check_fixture(const char *cc)
{
	char so[96];
	void *h = fixture_build(cc, so, sizeof(so));
	int (*entry)(int, int (*)(void));
	static const char *const chain[] = {"fx_drap", "fx_alloca", "fx_recurse", "fx_realign",
					    "fx_entry"};
	const char *prev = "";
	int k = 0;

	if (!h) {
		fprintf(stderr, "  %s not available or failed: skipped\n", cc);
		skip();
	}
	cp_modules_sync();
	entry = (int (*)(int, int (*)(void)))dlsym(h, "fx_entry");
	check_at(cc, (void *)entry);
	fprintf(stderr, "  %s: %ld rows with CFA = *(reg + off), %ld with CFA = rbp + off\n", cc,
		last_stats.deref_rows, last_stats.rbp_rows);
	assert_true(last_stats.deref_rows + last_stats.rbp_rows > 0); /* the shapes under test */
	fx_n = 0;
	entry(2, fx_callback);
	assert_int_equal(fx_status, CP_UNWIND_COMPLETE);
	/* fx_callback, then the fixture's frames in order (looked up by dladdr; repeated
	 * fx_recurse frames collapsed: the compiler may turn part of the recursion into a
	 * loop) */
	for (int i = 1; i < fx_n && k < 5; i++) {
		Dl_info di;
		assert_true(dladdr((void *)(fx_frames[i].pc - 1), &di) && di.dli_sname);
		if (!strcmp(di.dli_sname, prev))
			continue;
		assert_string_equal(di.dli_sname, chain[k]);
		prev = chain[k++];
	}
	assert_int_equal(k, 5);
	dlclose(h);
	unlink(so);
	cp_modules_sync();
}

static void test_fixture_gcc(void **state)
{
	(void)state;
	check_fixture("gcc");
}

static void test_fixture_clang(void **state)
{
	(void)state;
	check_fixture("clang");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_libc),	 cmocka_unit_test(test_libm),
	    cmocka_unit_test(test_ld_so),	 cmocka_unit_test(test_libdw),
	    cmocka_unit_test(test_self),	 cmocka_unit_test(test_cxx_runtime),
	    cmocka_unit_test(test_workload_lib), cmocka_unit_test(test_workload_executables),
	    cmocka_unit_test(test_fixture_gcc),	 cmocka_unit_test(test_fixture_clang),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}

/* Which functions the probe patterns name, and which of those may be probed: the one copy
 * of these rules, applied by the runtime (src/runtime/probe) when it installs probes and by
 * `callpath probe --list` (src/cli) offline, so the listing says what the run will do.
 *
 * A pattern is [+|-][MODULE:]GLOB (+: --select, -: --filter). GLOB is matched as fnmatch
 * does (cp_patch_glob) against the symbol name as in the ELF file and, for C++ (Itanium)
 * names, against its demangled forms: as reports show it (`int ns::max<int>(int, int)`), without
 * the return type (`ns::max<int>(int, int)`) and without the parameters (`ns::max<int>`). The
 * module part ends at the first ':' that is not part of a '::'.
 *
 * No allocation: demangling uses libiberty's callback demangler (stack only) into the
 * caller's buffers; the runtime calls this while the program runs, never in a signal
 * handler. */
#ifndef CP_PATCH_SELECT_H
#define CP_PATCH_SELECT_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

enum {
	CP_PATCH_ROLE_MEASURE = 1 << 0, /* every match: counted and timed */
	CP_PATCH_ROLE_SELECT = 1 << 1,	/* --select: measure only inside its activations */
	CP_PATCH_ROLE_FILTER = 1 << 2	/* --filter: measure nothing inside them */
};

/* Longer mangled names are matched as they are only: the demangler's stack use grows with
 * the name's length (~130 KiB at 1024 characters, measured), and the runtime demangles on
 * the thread that calls dlopen. Longer demangled forms are not matched either. */
#define CP_PATCH_MANGLED_MAX 1024
#define CP_PATCH_DEMANGLED_MAX 4096

/* A symbol name and its demangled forms, demangled on first use. */
struct cp_patch_name {
	const char *symbol;
	int state; /* 0: not demangled yet; 1: forms valid; -1: no demangled form */
	char full[CP_PATCH_DEMANGLED_MAX];  /* as reports show it */
	char noret[CP_PATCH_DEMANGLED_MAX]; /* without a template function's return type */
	char bare[CP_PATCH_DEMANGLED_MAX];  /* without return type and parameter list */
};

void cp_patch_name_init(struct cp_patch_name *n, const char *symbol);
/* The demangled name as reports show it, or NULL when symbol is not a C++ name. */
const char *cp_patch_name_demangled(struct cp_patch_name *n);

/* fnmatch(pattern, s, 0) == 0, byte-wise whatever the locale, without allocating. */
int cp_patch_glob(const char *pattern, const char *s);

/* The length of the function's name in a GCC clone's symbol (`f` in f.constprop.0,
 * f.isra.0, f.part.0 and their chains), 0 when symbol is no such clone (`f.cold`, the
 * cold part of f, is none). A pattern matches a clone as it matches its function. */
size_t cp_patch_clone_base_len(const char *symbol);

/* The CP_PATCH_ROLE_* bits pattern gives symbol n of the module at path; 0: no match. */
uint32_t cp_patch_pattern_match(const char *pattern, const char *path, struct cp_patch_name *n);

/* The functions reports name sub_HEX (HEX: lowercase hex ELF virtual address) have no
 * symbol: stripped code found from its .eh_frame FDE. A pattern [+|-][MODULE:]sub_HEX,
 * exactly that (no glob), names the function starting at HEX in each module it applies to
 * where no function symbol covers HEX (cp_patch_elf_unnamed), its size the FDE's. Returns
 * the role bits and *vaddr when pattern has this form and applies to the module at path
 * (*qualified: it names the module), else 0. */
uint32_t cp_patch_pattern_unnamed(const char *pattern, const char *path, uint64_t *vaddr,
				  int *qualified);

/* Modules never searched: the dynamic loader, the runtime and its decoder library. */
int cp_patch_module_skipped(const char *path);

/* A 64-bit ELF file mapped read-only, its section headers and names checked in bounds. */
struct cp_patch_elf {
	const uint8_t *f;
	size_t size;
	const Elf64_Shdr *sh;
	unsigned nsec;
	const char *shstr; /* section names (NULL when corrupt) */
};

/* 0, or -1 when path cannot be read or is not a 64-bit ELF file. */
int cp_patch_elf_map(struct cp_patch_elf *e, const char *path);
void cp_patch_elf_unmap(struct cp_patch_elf *e);

/* A defined FUNC or IFUNC symbol (or a function without one: cp_patch_elf_unnamed). */
struct cp_patch_func {
	const char *name;
	const Elf64_Sym *sym;
	const Elf64_Shdr *sec; /* the section it is defined in */
	const char *secname;   /* NULL when unknown */
	int unnamed;	       /* sym is synthesized: sub_HEX, sized by its FDE (0: none) */
};

/* Iterates over the function symbols of .symtab, then of .dynsym (duplicates included). */
struct cp_patch_elf_iter {
	int pass;
	unsigned tab;
	size_t i, n;
	const Elf64_Sym *syms;
	const char *str;
	size_t strsize;
};
void cp_patch_elf_iter_init(struct cp_patch_elf_iter *it);
/* 1 and fn filled, or 0 at the end. */
int cp_patch_elf_next(const struct cp_patch_elf *e, struct cp_patch_elf_iter *it,
		      struct cp_patch_func *fn);

/* The function without symbol at vaddr, named sub_HEX: 0 and fn filled (fn->sym points to
 * *sym, of type FUNC and size `size`: its FDE's, 0 when no FDE starts at vaddr; fn->name to
 * name, which must hold 21 bytes), or -1 when a function symbol covers vaddr (the function
 * has a name) or no executable section holds vaddr. */
int cp_patch_elf_unnamed(const struct cp_patch_elf *e, uint64_t vaddr, uint64_t size, char *name,
			 Elf64_Sym *sym, struct cp_patch_func *fn);

/* The refusal rules known from the symbol and its section (enum cp_patch_status): type,
 * size, PLT, executable, in its section, name (setjmp family, program entry); an unnamed
 * function of size 0 has no FDE starting there (CP_PATCH_NO_FDE). */
int cp_patch_check_function(const struct cp_patch_elf *e, const struct cp_patch_func *fn);
/* cp_patch_check_function, then the prologue plan on the file's bytes: what the runtime
 * will decide, offline. */
int cp_patch_check_file(const struct cp_patch_elf *e, const struct cp_patch_func *fn);

#endif

#include "analyze/dwarf/dwarf-index.h"

#include "analyze/elf/procs.h"
#include "base/error.h"
#include "base/search.h"
#include "base/xalloc.h"

#include <dwarf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cu_range_cmp(const void *a, const void *b)
{
	const struct cp_dwarf_cu_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int cp_dwarf_separate_path(const struct cp_elf_image *im, char *buf, size_t size)
{
	if (im->build_id_len < 2)
		return 0;
	char hex[2 * CP_BUILD_ID_MAX + 1];
	cp_build_id_hex(im->build_id, im->build_id_len, hex);
	const char *root = getenv("CALLPATH_DEBUG_ROOT");
	snprintf(buf, size, "%s/.build-id/%.2s/%s.debug", root ? root : "/usr/lib/debug", hex,
		 hex + 2);
	return 1;
}

/* The separate debug file of a stripped module (cp_dwarf_separate_path). */
static Dwarf *open_separate(struct cp_dwarf *d, const struct cp_elf_image *im)
{
	char path[2 * CP_BUILD_ID_MAX + PATH_MAX];
	if (!cp_dwarf_separate_path(im, path, sizeof path))
		return NULL;
	d->debug_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->debug_fd < 0)
		return NULL;
	d->debug_elf = elf_begin(d->debug_fd, ELF_C_READ_MMAP, NULL);
	Dwarf *dbg = d->debug_elf ? dwarf_begin_elf(d->debug_elf, DWARF_C_READ, NULL) : NULL;
	if (dbg)
		d->debug_path = xstrdup(path);
	return dbg;
}

static int add_cu_ranges(struct cp_dwarf *d, Dwarf_Die *cudie, size_t *alloc)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(cudie, off, &base, &start, &end)) > 0) {
		if (!start || end <= start)
			continue;
		XGROW(d->cus, d->ncus + 1, *alloc);
		d->cus[d->ncus++] = (struct cp_dwarf_cu_range){start, end, *cudie};
	}
	return off < 0 ? -1 : 0;
}

static int index_units(struct cp_dwarf *d, const char *path)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t unit_type;
	size_t alloc = 0;
	int r;
	while ((r = dwarf_get_units(d->dbg, cu, &cu, &version, &unit_type, &cudie, &subdie)) == 0) {
		d->nunits++;
		if (unit_type == DW_UT_type || unit_type == DW_UT_split_type)
			continue;
		if (add_cu_ranges(d, &cudie, &alloc))
			return cp_error(CP_EFORMAT,
					"%s: corrupt DWARF: address ranges of the unit at "
					".debug_info offset %llu: %s",
					path, (unsigned long long)dwarf_dieoffset(&cudie),
					dwarf_errmsg(-1));
	}
	if (r < 0)
		return cp_error(CP_EFORMAT, "%s: corrupt DWARF after %zu units: %s", path,
				d->nunits, dwarf_errmsg(-1));
	if (d->ncus)
		qsort(d->cus, d->ncus, sizeof(*d->cus), cu_range_cmp);
	return 0;
}

int cp_dwarf_open(struct cp_dwarf *d, const struct cp_elf_image *im)
{
	memset(d, 0, sizeof(*d));
	d->debug_fd = -1;
	if (im->has_debug_info) {
		d->dbg = dwarf_begin_elf(im->elf, DWARF_C_READ, NULL);
		if (!d->dbg)
			return cp_error(CP_EFORMAT,
					"%s: corrupt DWARF (cannot open .debug_info): %s", im->path,
					dwarf_errmsg(-1));
	} else {
		d->dbg = open_separate(d, im);
		if (!d->dbg)
			return 0;
	}
	int rc = index_units(d, d->debug_path ? d->debug_path : im->path);
	if (rc)
		cp_dwarf_release(d);
	return rc;
}

void cp_dwarf_release(struct cp_dwarf *d)
{
	if (d->dbg)
		dwarf_end(d->dbg);
	if (d->debug_elf)
		elf_end(d->debug_elf);
	if (d->debug_fd >= 0)
		close(d->debug_fd);
	free(d->debug_path);
	free(d->cus);
	memset(d, 0, sizeof(*d));
	d->debug_fd = -1;
}

int cp_dwarf_reopen(struct cp_dwarf *d, const struct cp_elf_image *im)
{
	if (!d->dbg)
		return 0;
	const char *path = d->debug_path ? d->debug_path : im->path;
	dwarf_end(d->dbg);
	free(d->cus);
	d->cus = NULL;
	d->ncus = d->nunits = 0;
	d->dbg = dwarf_begin_elf(d->debug_elf ? d->debug_elf : im->elf, DWARF_C_READ, NULL);
	if (!d->dbg)
		return cp_error(CP_EFORMAT, "%s: DWARF does not open again: %s", path,
				dwarf_errmsg(-1));
	return index_units(d, path);
}

int cp_dwarf_cu_at(const struct cp_dwarf *d, uint64_t addr, Dwarf_Die *cu)
{
	/* Last range starting at or below addr; ranges of different units do not overlap in
	 * well-formed files, but look back a little in case they do. */
	size_t lo = cp_upper_bound_u64(d->cus, d->ncus, sizeof(*d->cus),
				       offsetof(struct cp_dwarf_cu_range, lo), addr);
	for (size_t i = lo, k = 0; i > 0 && k < 8; i--, k++)
		if (addr < d->cus[i - 1].hi) {
			*cu = d->cus[i - 1].cu;
			return 1;
		}
	return 0;
}

const char *cp_dwarf_die_linkage(Dwarf_Die *die)
{
	static const int names[] = {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		Dwarf_Attribute attr;
		const char *s =
		    dwarf_attr_integrate(die, names[i], &attr) ? dwarf_formstring(&attr) : NULL;
		if (s && *s)
			return s;
	}
	return NULL;
}

char *cp_dwarf_die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	if (!dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) &&
	    !dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) {
		char *q = cp_dwarf_qualified_name(die);
		if (q)
			return q;
	}
	const char *s = cp_dwarf_die_linkage(die);
	return s ? cp_demangle(s) : xstrdup("<unknown>");
}

static const char *file_of_index(Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

void cp_dwarf_call_site(Dwarf_Die *cu, Dwarf_Die *inl, const char **file, int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;
	*file = NULL;
	*line = 0;
	if (dwarf_attr(inl, DW_AT_call_file, &attr) && !dwarf_formudata(&attr, &v))
		*file = file_of_index(cu, v);
	if (dwarf_attr(inl, DW_AT_call_line, &attr) && !dwarf_formudata(&attr, &v))
		*line = (int)v;
}

void cp_dwarf_decl(Dwarf_Die *cu, Dwarf_Die *die, const char **file, int *line)
{
	(void)cu;
	*file = dwarf_decl_file(die);
	if (dwarf_decl_line(die, line))
		*line = 0;
}

static int is_container(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_module;
}

static int chain_walk(Dwarf_Die *parent, uint64_t addr, Dwarf_Die *chain, int n, int max, int depth)
{
	Dwarf_Die child;
	if (depth > 256 || dwarf_child(parent, &child) != 0)
		return n;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_lexical_block) {
			if (dwarf_haspc(&child, addr) != 1)
				continue;
			if (tag == DW_TAG_subprogram)
				n = 0; /* a nested procedure is a procedure of its own */
			if (tag != DW_TAG_lexical_block && n < max)
				chain[n++] = child;
			return chain_walk(&child, addr, chain, n, max, depth + 1);
		}
		if (is_container(tag)) {
			int r = chain_walk(&child, addr, chain, n, max, depth + 1);
			if (r > n)
				return r;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

int cp_dwarf_inline_chain(Dwarf_Die *cu, uint64_t addr, Dwarf_Die *chain, int max)
{
	return chain_walk(cu, addr, chain, 0, max, 0);
}

int cp_dwarf_line_at(Dwarf_Die *cu, uint64_t addr, const char **file, int *line, int *column)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, addr);
	*file = NULL;
	*line = *column = 0;
	if (!l)
		return 0;
	dwarf_lineno(l, line);
	if (*line <= 0) { /* line 0: code with no source line (compiler-generated) */
		*line = 0;
		return 0;
	}
	*file = dwarf_linesrc(l, NULL, NULL);
	dwarf_linecol(l, column);
	return 1;
}

#include "analyze/structure/dump.h"

#include "analyze/elf/elf-image.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct interval {
	uint64_t lo, hi;
};

/* Per-scope address intervals (union over the subtree) and children, in CSR form. */
struct tree {
	const struct cp_structure *st;
	size_t n, i;
	size_t *ivl_first, *ivl_count;
	struct interval *ivl;
	size_t *child_first, *child_count;
	uint32_t *child;
	size_t *edge_first, *edge_count;
	struct strbuf esc;
	char build_id[65]; /* hex, "" without one */
};

static void tree_intervals(struct tree *t)
{
	const struct cp_structure *st = t->st;
	uint64_t *last = xmalloc((t->n + 1) * sizeof(*last));
	t->ivl_first = xcalloc(t->n + 1, sizeof(size_t));
	t->ivl_count = xcalloc(t->n + 1, sizeof(size_t));
	for (int pass = 0; pass < 2; pass++) {
		memset(last, 0xff, (t->n + 1) * sizeof(*last));
		memset(t->ivl_count, 0, (t->n + 1) * sizeof(size_t));
		for (size_t i = 0; i < st->hdr->nranges; i++) {
			const struct cp_st_range *r = &st->ranges[i];
			for (uint32_t s = r->scope; s != CP_ST_NONE; s = st->scopes[s].parent) {
				if (last[s] == r->lo) {
					if (pass)
						t->ivl[t->ivl_first[s] + t->ivl_count[s] - 1].hi =
						    r->lo + r->len;
				} else {
					if (pass)
						t->ivl[t->ivl_first[s] + t->ivl_count[s]] =
						    (struct interval){r->lo, r->lo + r->len};
					t->ivl_count[s]++;
				}
				last[s] = r->lo + r->len;
			}
		}
		if (!pass) {
			size_t total = 0;
			for (size_t s = 0; s < t->n; s++)
				t->ivl_first[s] = total, total += t->ivl_count[s];
			t->ivl = xmalloc((total ? total : 1) * sizeof(*t->ivl));
		}
	}
	free(last);
}

static const struct tree *sort_tree;

static uint64_t scope_start(const struct tree *t, uint32_t s)
{
	return t->ivl_count[s] ? t->ivl[t->ivl_first[s]].lo : t->st->scopes[s].addr;
}

static int child_cmp(const void *a, const void *b)
{
	uint64_t x = scope_start(sort_tree, *(const uint32_t *)a);
	uint64_t y = scope_start(sort_tree, *(const uint32_t *)b);
	return x < y ? -1 : x > y;
}

static void tree_children(struct tree *t)
{
	const struct cp_structure *st = t->st;
	t->child_first = xcalloc(t->n + 1, sizeof(size_t));
	t->child_count = xcalloc(t->n + 1, sizeof(size_t));
	t->child = xmalloc((t->n + 1) * sizeof(*t->child));
	for (size_t s = 0; s < t->n; s++)
		if (st->scopes[s].parent != CP_ST_NONE)
			t->child_count[st->scopes[s].parent]++;
	size_t total = 0;
	for (size_t s = 0; s < t->n; s++)
		t->child_first[s] = total, total += t->child_count[s], t->child_count[s] = 0;
	for (size_t s = 0; s < t->n; s++) {
		uint32_t p = st->scopes[s].parent;
		if (p != CP_ST_NONE)
			t->child[t->child_first[p] + t->child_count[p]++] = (uint32_t)s;
	}
	sort_tree = t;
	for (size_t s = 0; s < t->n; s++)
		if (t->child_count[s])
			qsort(t->child + t->child_first[s], t->child_count[s], sizeof(uint32_t),
			      child_cmp);
	t->edge_first = xcalloc(t->n + 1, sizeof(size_t));
	t->edge_count = xcalloc(t->n + 1, sizeof(size_t));
	for (size_t i = st->hdr->nedges; i-- > 0;) {
		t->edge_first[st->edges[i].loop] = i;
		t->edge_count[st->edges[i].loop]++;
	}
}

static void tree_init(struct tree *t, const struct cp_structure *st)
{
	memset(t, 0, sizeof(*t));
	t->st = st;
	t->n = st->hdr->nscopes;
	strbuf_init(&t->esc);
	cp_build_id_hex(st->hdr->build_id, st->hdr->build_id_len, t->build_id);
	tree_intervals(t);
	tree_children(t);
}

static void tree_release(struct tree *t)
{
	free(t->ivl_first);
	free(t->ivl_count);
	free(t->ivl);
	free(t->child_first);
	free(t->child_count);
	free(t->child);
	free(t->edge_first);
	free(t->edge_count);
	strbuf_release(&t->esc);
}

static const char *str(const struct tree *t, uint32_t off)
{
	return cp_structure_string(t->st, off);
}

static const struct tree *proc_sort_tree;

static int proc_cmp(const void *a, const void *b)
{
	const struct cp_structure *st = proc_sort_tree->st;
	const struct cp_st_scope *x = &st->scopes[*(const uint32_t *)a];
	const struct cp_st_scope *y = &st->scopes[*(const uint32_t *)b];
	int c = strcmp(cp_structure_string(st, x->file), cp_structure_string(st, y->file));
	if (c)
		return c;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Procedures sorted by file, then address. */
static uint32_t *sorted_procs(const struct tree *t, size_t *n)
{
	uint32_t *p = xmalloc((t->n + 1) * sizeof(*p));
	*n = 0;
	for (size_t s = 0; s < t->n; s++)
		if (t->st->scopes[s].kind == CP_ST_PROC)
			p[(*n)++] = (uint32_t)s;
	proc_sort_tree = t;
	if (*n)
		qsort(p, *n, sizeof(*p), proc_cmp);
	return p;
}

/* ---- text ---- */

static void text_intervals(const struct tree *t, uint32_t s, FILE *out)
{
	fputs(" {", out);
	for (size_t i = 0; i < t->ivl_count[s]; i++) {
		const struct interval *v = &t->ivl[t->ivl_first[s] + i];
		fprintf(out, "%s[0x%" PRIx64 "-0x%" PRIx64 ")", i ? " " : "", v->lo, v->hi);
	}
	fputs("}\n", out);
}

static void text_lines(const struct cp_st_scope *sc, FILE *out)
{
	if (sc->line_lo)
		fprintf(out, " [lines %u-%u]", sc->line_lo, sc->line_hi);
}

static void text_scope(const struct tree *t, uint32_t s, int depth, FILE *out)
{
	const struct cp_st_scope *sc = &t->st->scopes[s];
	fprintf(out, "%*s", 2 * depth, "");
	switch (sc->kind) {
	case CP_ST_PROC:
		fprintf(out, "procedure %s", str(t, sc->name));
		if (sc->line)
			fprintf(out, " (line %u)", sc->line);
		text_lines(sc, out);
		fprintf(out, " entry 0x%" PRIx64 "%s%s", sc->addr,
			sc->flags & CP_ST_F_PLT ? " plt" : "",
			sc->flags & CP_ST_F_NO_DWARF ? " no-debug-info" : "");
		break;
	case CP_ST_INLINE:
		fprintf(out, "inlined %s called at %s:%u", str(t, sc->name), str(t, sc->aux),
			sc->aux_line);
		if (sc->file)
			fprintf(out, " from %s", str(t, sc->file));
		text_lines(sc, out);
		break;
	case CP_ST_LOOP:
		fprintf(out, "loop at %s:%u", sc->file ? str(t, sc->file) : "??", sc->line);
		text_lines(sc, out);
		fprintf(out, " header 0x%" PRIx64 "%s", sc->addr,
			sc->flags & CP_ST_F_IRREDUCIBLE ? " irreducible" : "");
		break;
	default:
		fprintf(out, "statement %s:%u", str(t, sc->file), sc->line);
	}
	text_intervals(t, s, out);
	for (size_t i = 0; i < t->child_count[s]; i++)
		text_scope(t, t->child[t->child_first[s] + i], depth + 1, out);
}

static void text_notes(const struct tree *t, FILE *out)
{
	const struct cp_structure *st = t->st;
	for (size_t i = 0; i < st->hdr->nnotes; i++) {
		const struct cp_st_note *n = &st->notes[i];
		fprintf(out, "note: %s at 0x%" PRIx64 " in %s\n",
			n->kind == CP_ST_NOTE_IRREDUCIBLE ? "irreducible region"
							  : "unresolved indirect jump",
			n->addr, str(t, st->scopes[n->scope].name));
	}
}

void cp_struct_dump_text(const struct cp_structure *st, FILE *out)
{
	struct tree t;
	tree_init(&t, st);
	const char *hex = t.build_id;
	size_t n, i;
	fprintf(out, "load module %s (build-id %s): %u procedures, %u loops\n",
		str(&t, st->hdr->module_path), hex[0] ? hex : "none", st->hdr->nprocs,
		st->hdr->nloops);
	uint32_t *procs = sorted_procs(&t, &n);
	const char *file = NULL;
	for (i = 0; i < n; i++) {
		const char *f = str(&t, st->scopes[procs[i]].file);
		if (!file || strcmp(f, file))
			fprintf(out, "  file %s\n", *f ? f : "??");
		file = f;
		text_scope(&t, procs[i], 2, out);
	}
	text_notes(&t, out);
	free(procs);
	tree_release(&t);
}

/* ---- JSON ---- */

static void json_str(struct tree *t, const char *key, const char *s, FILE *out)
{
	strbuf_clear(&t->esc);
	strbuf_add_json(&t->esc, s);
	fprintf(out, ",\"%s\":\"%s\"", key, t->esc.buf);
}

static void json_edges(const struct tree *t, uint32_t s, uint32_t kind, const char *key, FILE *out)
{
	fprintf(out, ",\"%s\":[", key);
	int first = 1;
	for (size_t i = 0; i < t->edge_count[s]; i++) {
		const struct cp_st_edge *e = &t->st->edges[t->edge_first[s] + i];
		if (e->kind != kind)
			continue;
		fprintf(out, "%s[%" PRIu64 ",%" PRIu64 "]", first ? "" : ",", e->from, e->to);
		first = 0;
	}
	fputc(']', out);
}

static void json_kind_fields(struct tree *t, uint32_t s, FILE *out)
{
	const struct cp_st_scope *sc = &t->st->scopes[s];
	static const char *kinds[] = {"", "procedure", "inline", "loop", "statement"};
	fprintf(out, "{\"kind\":\"%s\"", kinds[sc->kind]);
	if (sc->kind == CP_ST_PROC || sc->kind == CP_ST_INLINE)
		json_str(t, "name", str(t, sc->name), out);
	if (sc->kind == CP_ST_PROC) {
		json_str(t, "linkage", str(t, sc->aux), out);
		json_str(t, "origin",
			 sc->flags & CP_ST_F_PLT	  ? "plt"
			 : sc->flags & CP_ST_F_FROM_DWARF ? "dwarf"
			 : sc->flags & CP_ST_F_FROM_FDE	  ? "fde"
							  : "symbol",
			 out);
		fprintf(out, ",\"plt\":%s,\"debug_info\":%s,\"split\":%s",
			sc->flags & CP_ST_F_PLT ? "true" : "false",
			sc->flags & CP_ST_F_NO_DWARF ? "false" : "true",
			sc->flags & CP_ST_F_SPLIT ? "true" : "false");
	}
	if (sc->kind == CP_ST_INLINE) {
		json_str(t, "call_file", str(t, sc->aux), out);
		fprintf(out, ",\"call_line\":%u", sc->aux_line);
	}
	if (sc->kind == CP_ST_LOOP) {
		fprintf(out, ",\"irreducible\":%s",
			sc->flags & CP_ST_F_IRREDUCIBLE ? "true" : "false");
		json_edges(t, s, CP_ST_EDGE_ENTRY, "entries", out);
		json_edges(t, s, CP_ST_EDGE_EXIT, "exits", out);
		json_edges(t, s, CP_ST_EDGE_BACK, "back_edges", out);
	}
	json_str(t, "file", str(t, sc->file), out);
	fprintf(out, ",\"line\":%u,\"line_lo\":%u,\"line_hi\":%u,\"addr\":%" PRIu64, sc->line,
		sc->line_lo, sc->line_hi, sc->addr);
}

static void json_scope(struct tree *t, uint32_t s, FILE *out)
{
	json_kind_fields(t, s, out);
	fputs(",\"ranges\":[", out);
	for (size_t i = 0; i < t->ivl_count[s]; i++) {
		const struct interval *v = &t->ivl[t->ivl_first[s] + i];
		fprintf(out, "%s[%" PRIu64 ",%" PRIu64 "]", i ? "," : "", v->lo, v->hi);
	}
	fputs("],\"children\":[", out);
	for (size_t i = 0; i < t->child_count[s]; i++) {
		if (i)
			fputc(',', out);
		json_scope(t, t->child[t->child_first[s] + i], out);
	}
	fputs("]}", out);
}

void cp_struct_dump_json(const struct cp_structure *st, FILE *out)
{
	struct tree t;
	tree_init(&t, st);
	const char *hex = t.build_id;
	size_t n, i;
	fputs("{\"format\":\"callpath-structure\",\"version\":1", out);
	json_str(&t, "module", str(&t, st->hdr->module_path), out);
	json_str(&t, "build_id", hex, out);
	fprintf(out, ",\"nprocedures\":%u,\"nloops\":%u,\"procedures\":[", st->hdr->nprocs,
		st->hdr->nloops);
	uint32_t *procs = sorted_procs(&t, &n);
	for (i = 0; i < n; i++) {
		if (i)
			fputs(",\n", out);
		json_scope(&t, procs[i], out);
	}
	fputs("],\"notes\":[", out);
	for (i = 0; i < st->hdr->nnotes; i++) {
		const struct cp_st_note *no = &st->notes[i];
		fprintf(out, "%s{\"kind\":\"%s\",\"addr\":%" PRIu64, i ? "," : "",
			no->kind == CP_ST_NOTE_IRREDUCIBLE ? "irreducible" : "unresolved_jump",
			no->addr);
		json_str(&t, "procedure", str(&t, st->scopes[no->scope].name), out);
		fputc('}', out);
	}
	fputs("]}\n", out);
	free(procs);
	tree_release(&t);
}

/* ---- lookup ---- */

void cp_struct_print_lookup(const struct cp_structure *st, uint64_t addr, int json, FILE *out)
{
	uint32_t chain[512];
	int n = cp_structure_chain(st, addr, chain, 512);
	static const char *kinds[] = {"", "procedure", "inline", "loop", "statement"};
	struct strbuf sb;
	strbuf_init(&sb);
	if (json)
		strbuf_addf(&sb, "{\"addr\":%" PRIu64 ",\"chain\":[", addr);
	else
		strbuf_addf(&sb, "0x%" PRIx64, addr);
	for (int i = 0; i < n; i++) {
		const struct cp_st_scope *sc = &st->scopes[chain[i]];
		const char *name = cp_structure_string(st, sc->name);
		const char *file =
		    cp_structure_string(st, sc->kind == CP_ST_INLINE ? sc->aux : sc->file);
		unsigned line = sc->kind == CP_ST_INLINE ? sc->aux_line : sc->line;
		if (json) {
			strbuf_addf(&sb, "%s{\"kind\":\"%s\",\"name\":\"", i ? "," : "",
				    kinds[sc->kind]);
			strbuf_add_json(&sb, name);
			strbuf_addstr(&sb, "\",\"file\":\"");
			strbuf_add_json(&sb, file);
			strbuf_addf(&sb, "\",\"line\":%u}", line);
		} else {
			strbuf_addf(&sb, "\t%s:%s@%s:%u", kinds[sc->kind], name, file, line);
		}
	}
	strbuf_addstr(&sb, json ? "]}\n" : "\n");
	fputs(sb.buf, out);
	strbuf_release(&sb);
}

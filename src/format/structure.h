/* Structure files: the static scope tree of one load module (procedures, inlined frames,
 * loops, statements) with the address ranges each covers, as recovered by `callpath
 * struct` (src/analyze/) and read by the database's correlation. Documented in
 * docs/format.md ("Structure file"); this header is authoritative for the layout.
 *
 * Addresses are ELF virtual addresses of the module (runtime address - load bias), the
 * same as cp_mf_node.offset. The file is little-endian, all records naturally aligned:
 *
 *   header | scopes[nscopes] | ranges[nranges] | edges[nedges] | notes[nnotes] | strings
 *
 * Scopes are stored parents first (scope i's parent < i). Ranges are sorted, disjoint
 * and map each covered address to its innermost scope (a statement when the module has
 * line information); the chain to the procedure follows `parent`. A reader maps or loads
 * the whole file and validates every count, offset, index and the checksum before use. */
#ifndef CP_FORMAT_STRUCTURE_H
#define CP_FORMAT_STRUCTURE_H

#include "base/hash.h"

#include <stddef.h>
#include <stdint.h>

#define CP_ST_MAGIC "CPSTRUCT"
/* FNV-1a's offset basis as the first writer of this format spelled it (14695981039346656037
 * without its last digit): part of the format, so existing files stay valid. */
#define CP_ST_CHECKSUM_SEED 1469598103934665603ull
#define CP_ST_VERSION_MAJOR 1
/* 1: a loop's line is its statement's (docs/format.md); 2: PLT stubs `name@plt` with
 * their exact ranges, inlined GCC lambdas named with their enclosing function. */
#define CP_ST_VERSION_MINOR 2
#define CP_ST_NONE UINT32_MAX

enum cp_st_kind {
	CP_ST_PROC = 1,	  /* a procedure (root of a tree; parent = CP_ST_NONE) */
	CP_ST_INLINE = 2, /* an inlined call: code of `name` inlined at aux:aux_line */
	CP_ST_LOOP = 3,	  /* a loop: header address, header line, line extent */
	CP_ST_STMT = 4	  /* a source line (leaf) */
};

enum cp_st_scope_flags {
	CP_ST_F_PLT = 1 << 0,	      /* PROC: a PLT stub */
	CP_ST_F_NO_DWARF = 1 << 1,    /* PROC: no debug information */
	CP_ST_F_IRREDUCIBLE = 1 << 2, /* PROC: has an irreducible region (see notes) */
	CP_ST_F_SPLIT = 1 << 3,	      /* PROC: has split-off parts (.cold) */
	CP_ST_F_FROM_DWARF = 1 << 4,  /* PROC: known only from a DWARF subprogram */
	CP_ST_F_FROM_FDE = 1 << 5     /* PROC: no symbol, found from its .eh_frame FDE */
};

struct cp_st_header {
	char magic[8]; /* CP_ST_MAGIC, not NUL-terminated */
	uint16_t version_major, version_minor;
	uint32_t header_size; /* offset of scopes[] */
	uint64_t file_size;
	uint64_t checksum; /* cp_fnv1a(CP_ST_CHECKSUM_SEED) of bytes [header_size, file_size) */
	uint32_t nscopes, nranges, nedges, nnotes;
	uint32_t strings_size;	 /* bytes of the string table (ends with NUL) */
	uint32_t module_path;	 /* string offset */
	uint64_t module_size;	 /* size and mtime of the analyzed file (cache key when */
	int64_t module_mtime;	 /* there is no build-id) */
	uint32_t nprocs, nloops; /* counts by kind, for quick summaries */
	uint8_t build_id_len;
	uint8_t reserved[15];
	uint8_t build_id[32];
}; /* 128 bytes */

struct cp_st_scope {
	uint32_t parent; /* scope index, CP_ST_NONE for a procedure */
	uint8_t kind;	 /* enum cp_st_kind */
	uint8_t flags;	 /* enum cp_st_scope_flags */
	uint16_t reserved;
	uint32_t name; /* string: PROC/INLINE name (demangled); 0 ("") otherwise */
	uint32_t file; /* string: source file of the scope's own lines; 0 if unknown */
	uint32_t line; /* PROC/INLINE: declaration line; LOOP: its statement; STMT: line */
	uint32_t line_lo, line_hi; /* extent of its lines in `file` (0, 0 if unknown) */
	uint32_t aux;		   /* PROC: linkage name; INLINE: call-site file (in the parent) */
	uint32_t aux_line;	   /* INLINE: call-site line */
	uint32_t reserved2;
	uint64_t addr; /* PROC: entry; INLINE: lowest address; LOOP: header; STMT: first */
};		       /* 48 bytes */

struct cp_st_range {
	uint64_t lo;
	uint32_t len;	/* [lo, lo + len) */
	uint32_t scope; /* innermost scope */
};

enum cp_st_edge_kind {
	CP_ST_EDGE_ENTRY = 1, /* from outside the loop to its header */
	CP_ST_EDGE_EXIT = 2,  /* from a block of the loop to a block outside */
	CP_ST_EDGE_BACK = 3   /* from a block of the loop to its header (iteration end) */
};

/* Loop instrumentation points (Paradyn's entry, exit, back edges), sorted by loop. `from`
 * is the address of the last instruction of the source block, `to` the target block. */
struct cp_st_edge {
	uint64_t from, to;
	uint32_t loop; /* scope index of the loop */
	uint32_t kind; /* enum cp_st_edge_kind */
};

enum cp_st_note_kind {
	CP_ST_NOTE_IRREDUCIBLE = 1,    /* an irreducible region; addr = one of its entries */
	CP_ST_NOTE_UNRESOLVED_JUMP = 2 /* an indirect jump whose targets are unknown */
};

struct cp_st_note {
	uint64_t addr;
	uint32_t scope; /* the procedure */
	uint32_t kind;	/* enum cp_st_note_kind */
};

/* A validated structure file in memory. */
struct cp_structure {
	void *buf;
	size_t size;
	const struct cp_st_header *hdr;
	const struct cp_st_scope *scopes;
	const struct cp_st_range *ranges;
	const struct cp_st_edge *edges;
	const struct cp_st_note *notes;
	const char *strings;
};

/* Reads and validates a file (errors name the file and the byte offset). */
int cp_structure_read(struct cp_structure *st, const char *path);
/* Validates a copy of buf; name is used in messages. */
int cp_structure_load(struct cp_structure *st, const void *buf, size_t len, const char *name);
/* Same without copying: takes ownership of buf (malloc'd), freed on failure too. */
int cp_structure_adopt(struct cp_structure *st, void *buf, size_t len, const char *name);
void cp_structure_release(struct cp_structure *st);

const char *cp_structure_string(const struct cp_structure *st, uint32_t off);
/* Innermost scope of addr, or CP_ST_NONE when no procedure covers it. */
uint32_t cp_structure_lookup(const struct cp_structure *st, uint64_t addr);
/* Scope chain of addr, outermost (the procedure) first, innermost (statement) last; at
 * most max entries (the innermost ones are kept). Returns the count, 0 if not covered. */
int cp_structure_chain(const struct cp_structure *st, uint64_t addr, uint32_t *chain, int max);

/* Building a file (the analyzer): append scopes parents-first, ranges in any order. */
struct cp_structure_builder {
	struct cp_st_scope *scopes;
	size_t nscopes, scopes_alloc;
	struct cp_st_range *ranges;
	size_t nranges, ranges_alloc;
	struct cp_st_edge *edges;
	size_t nedges, edges_alloc;
	struct cp_st_note *notes;
	size_t nnotes, notes_alloc;
	char *strings;
	size_t strings_len, strings_alloc;
	struct cp_hashtab str_offs; /* string offsets by the strings' hashes */
	struct cp_st_header hdr;    /* module fields filled by the caller */
};

void cp_structure_builder_init(struct cp_structure_builder *b);
void cp_structure_builder_release(struct cp_structure_builder *b);
uint32_t cp_structure_builder_string(struct cp_structure_builder *b, const char *s);
uint32_t cp_structure_builder_scope(struct cp_structure_builder *b, const struct cp_st_scope *s);
void cp_structure_builder_range(struct cp_structure_builder *b, uint64_t lo, uint64_t hi,
				uint32_t scope);
void cp_structure_builder_edge(struct cp_structure_builder *b, const struct cp_st_edge *e);
void cp_structure_builder_note(struct cp_structure_builder *b, const struct cp_st_note *n);
/* Serializes (sorting and merging ranges) into a malloc'd buffer. Consumes the tables
 * (freed as they are copied, to bound peak memory): only release b afterwards. */
int cp_structure_builder_finish(struct cp_structure_builder *b, void **buf, size_t *len);

#endif

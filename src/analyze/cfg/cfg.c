/* CFG construction: recursive-traversal decoding (phase 1) over a per-byte map of the
 * procedure, then blocks and edges from the marks (phase 2). See cfg.h. */
#include "analyze/cfg/cfg-internal.h"
#include "base/error.h"
#include "base/search.h"
#include "base/xalloc.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Procedures larger than this are refused (a corrupt symbol size, not code). */
#define CP_CFG_MAX_PROC (256u << 20)

void cp_cfg_init(struct cp_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
}

void cp_cfg_release(struct cp_cfg *cfg)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	if (s) {
		free(s->parts);
		free(s->ilen);
		free(s->mark);
		free(s->work);
		free(s->jt_targets);
		free(s->jt_first);
		free(s->pending);
		free(s->dsts);
		free(s);
	}
	free(cfg->blocks);
	free(cfg->edges);
	free(cfg->unresolved);
	free(cfg->jtables);
	cp_cfg_init(cfg);
}

uint32_t cp_cfg_flat_offset(const struct cp_cfg_scratch *s, uint64_t addr)
{
	for (size_t i = 0; i < s->nparts; i++) {
		const struct cp_cfg_flat_part *p = &s->parts[i];
		if (addr >= p->lo && addr < p->hi)
			return p->base + (uint32_t)(addr - p->lo);
	}
	return UINT32_MAX;
}

static const struct cp_cfg_flat_part *part_of(const struct cp_cfg_scratch *s, uint32_t off)
{
	size_t lo = 0, hi = s->nparts;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (s->parts[mid].base <= off)
			lo = mid;
		else
			hi = mid;
	}
	return &s->parts[lo];
}

static int part_cmp(const void *a, const void *b)
{
	const struct cp_cfg_flat_part *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Parts that touch, with contiguous bytes, become one: code falls through from one into
 * the next. */
static void merge_adjacent(struct cp_cfg_scratch *s)
{
	size_t k = 0;
	for (size_t i = 0; i < s->nparts; i++) {
		struct cp_cfg_flat_part *prev = k ? &s->parts[k - 1] : NULL;
		const struct cp_cfg_flat_part *p = &s->parts[i];
		if (prev && p->lo == prev->hi && p->bytes == prev->bytes + (prev->hi - prev->lo))
			prev->hi = p->hi;
		else
			s->parts[k++] = *p;
	}
	s->nparts = k;
}

/* Sorts the parts by address, drops empty ones and overlaps, lays them out flat. */
static int flatten_parts(struct cp_cfg_scratch *s, const struct cp_cfg_part *parts, size_t nparts)
{
	XGROW(s->parts, nparts, s->parts_alloc);
	s->nparts = 0;
	for (size_t i = 0; i < nparts; i++) {
		if (parts[i].hi <= parts[i].lo || !parts[i].bytes)
			continue;
		s->parts[s->nparts++] =
		    (struct cp_cfg_flat_part){parts[i].lo, parts[i].hi, parts[i].bytes, 0};
	}
	qsort(s->parts, s->nparts, sizeof(*s->parts), part_cmp);
	merge_adjacent(s);
	uint64_t size = 0;
	for (size_t i = 0; i < s->nparts; i++) {
		struct cp_cfg_flat_part *p = &s->parts[i];
		if (i && p->lo < s->parts[i - 1].hi) {
			p->bytes += s->parts[i - 1].hi - p->lo;
			p->lo = s->parts[i - 1].hi;
		}
		if (p->hi < p->lo)
			p->hi = p->lo;
		p->base = (uint32_t)size;
		size += p->hi - p->lo;
		if (size > CP_CFG_MAX_PROC)
			return cp_error(CP_EINVAL,
					"procedure at 0x%llx: %llu bytes of code, more "
					"than the %u the CFG builder accepts",
					(unsigned long long)parts[0].lo, (unsigned long long)size,
					CP_CFG_MAX_PROC);
	}
	s->size = (size_t)size;
	return 0;
}

static void scratch_reset(struct cp_cfg *cfg)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	if (s->size > s->size_alloc) {
		free(s->ilen);
		free(s->mark);
		s->size_alloc = s->size < 4096 ? 4096 : s->size * 2;
		s->ilen = xmalloc(s->size_alloc);
		s->mark = xmalloc(s->size_alloc);
	}
	memset(s->ilen, 0, s->size);
	memset(s->mark, 0, s->size);
	s->nwork = 0;
	s->njt_targets = 0;
	s->npending = 0;
	cfg->nblocks = cfg->nedges = cfg->nunresolved = cfg->njtables = 0;
	cfg->ninsns = cfg->nbad = 0;
	cfg->entry = CP_CFG_NONE;
}

static void push_leader(struct cp_cfg_scratch *s, uint32_t off)
{
	s->mark[off] |= MARK_LEADER;
	if (s->mark[off] & MARK_QUEUED)
		return;
	s->mark[off] |= MARK_QUEUED;
	XGROW(s->work, s->nwork + 1, s->work_alloc);
	s->work[s->nwork++] = off;
}

/* A direct branch target: a leader when it is inside the procedure. */
static void add_target(struct cp_cfg_scratch *s, uint64_t target)
{
	uint32_t off = cp_cfg_flat_offset(s, target);
	if (off != UINT32_MAX)
		push_leader(s, off);
}

static bool oracle_noreturn(const struct cp_cfg_scratch *s, uint64_t target)
{
	return s->oracle && s->oracle->is_noreturn &&
	       s->oracle->is_noreturn(s->oracle->ctx, target);
}

static bool oracle_entry(const struct cp_cfg_scratch *s, uint64_t target)
{
	return s->oracle && s->oracle->is_entry && s->oracle->is_entry(s->oracle->ctx, target);
}

/* Reads the entries of a recognised table and queues the targets inside the procedure.
 * Stops at the first entry that is unreadable or points outside. */
static void read_jtable(struct cp_cfg *cfg, uint64_t jump, const struct cp_cfg_jt_pattern *p)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	if (!s->oracle || !s->oracle->read)
		return;
	size_t first = s->njt_targets;
	uint32_t n = 0;
	for (; n < p->entries; n++) {
		uint8_t e[8];
		uint64_t at = p->table + (uint64_t)n * p->entry_size;
		if (s->oracle->read(s->oracle->ctx, at, e, p->entry_size) != p->entry_size)
			break;
		uint64_t target;
		if (p->entry_size == 4) {
			int32_t rel;
			memcpy(&rel, e, 4);
			target = p->table + (uint64_t)(int64_t)rel;
		} else {
			memcpy(&target, e, 8);
		}
		if (cp_cfg_flat_offset(s, target) == UINT32_MAX)
			break;
		XGROW(s->jt_targets, s->njt_targets + 1, s->jt_targets_alloc);
		s->jt_targets[s->njt_targets++] = target;
	}
	if (n == 0)
		return;
	XGROW(cfg->jtables, cfg->njtables + 1, cfg->jtables_alloc);
	XGROW(s->jt_first, cfg->njtables + 1, s->jt_first_alloc);
	s->jt_first[cfg->njtables] = (uint32_t)first;
	cfg->jtables[cfg->njtables++] = (struct cp_cfg_jtable){jump, p->table, n, p->entry_size};
	for (size_t i = first; i < s->njt_targets; i++)
		add_target(s, s->jt_targets[i]);
}

/* The run's last instructions, decoded with operands (only at indirect jumps). */
static void full_history(const struct cp_cfg_scratch *s, struct cp_cfg_history *h)
{
	h->n = 0;
	for (unsigned k = s->hist_n; k > 0; k--) {
		uint32_t off = s->hist_off[(s->hist_head + CP_CFG_HISTORY - k) % CP_CFG_HISTORY];
		const struct cp_cfg_flat_part *p = part_of(s, off);
		cp_x86_decode(p->bytes + (off - p->base), s->ilen[off], p->lo + (off - p->base),
			      &h->insn[h->n++]);
	}
	h->head = h->n % CP_CFG_HISTORY;
}

/* jmp *: a jump table (now, or once the code setting its base is known), a jump through
 * a code pointer, or unresolved. */
static void indirect_jump(struct cp_cfg *cfg, uint32_t off, uint64_t addr)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	struct cp_cfg_history h;
	struct cp_cfg_jt_pattern p = {0};
	full_history(s, &h);
	if (cp_cfg_jt_match(&h, &p) && p.need_base) {
		XGROW(s->pending, s->npending + 1, s->pending_alloc);
		s->pending[s->npending++] = (struct cp_cfg_pending){addr, p};
	} else if (p.entries) {
		read_jtable(cfg, addr, &p);
	} else if (cp_cfg_jt_pointer_jump(&h)) {
		s->mark[off] |= MARK_PTRJUMP;
	}
}

/* Handles the control transfer of the instruction just decoded at off. Returns true when
 * the linear run continues with the next instruction. */
static bool run_transfer(struct cp_cfg *cfg, uint32_t off, const struct cp_x86_insn *in)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	uint32_t next = off + in->len;
	bool next_inside = next < s->size && part_of(s, next) == part_of(s, off);

	switch (in->flow) {
	case CP_X86_FLOW_NONE:
	case CP_X86_FLOW_SYSCALL:
		return true;
	case CP_X86_FLOW_CALL:
	case CP_X86_FLOW_CALL_INDIRECT:
		s->mark[off] |= MARK_ENDS;
		s->hist_n = 0; /* a call clobbers registers: no slice across it */
		if (in->flow == CP_X86_FLOW_CALL && oracle_noreturn(s, in->target))
			return false;
		if (next_inside)
			s->mark[next] |= MARK_LEADER;
		return true;
	case CP_X86_FLOW_JCC:
		s->mark[off] |= MARK_ENDS;
		add_target(s, in->target);
		if (next_inside)
			s->mark[next] |= MARK_LEADER;
		return true;
	case CP_X86_FLOW_JMP:
		s->mark[off] |= MARK_ENDS;
		add_target(s, in->target);
		return false;
	case CP_X86_FLOW_JMP_INDIRECT:
		s->mark[off] |= MARK_ENDS;
		indirect_jump(cfg, off, in->addr);
		return false;
	default: /* RET, TRAP */
		s->mark[off] |= MARK_ENDS;
		return false;
	}
}

/* Decodes linearly from off until control leaves or already-decoded code is reached. */
static void decode_run(struct cp_cfg *cfg, uint32_t off)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	const struct cp_cfg_flat_part *p = part_of(s, off);
	uint32_t end = p->base + (uint32_t)(p->hi - p->lo);

	if (s->mark[off] & MARK_INSIDE)
		s->mark[off] |= MARK_OVERLAP;
	s->hist_n = s->hist_head = 0;
	while (off < end && !s->ilen[off] && !(s->mark[off] & MARK_BAD)) {
		struct cp_x86_insn in;
		uint64_t addr = p->lo + (off - p->base);
		unsigned n = cp_x86_decode_flow(p->bytes + (off - p->base), end - off, addr, &in);
		if (!n) {
			s->mark[off] |= MARK_BAD;
			cfg->nbad++;
			return;
		}
		s->hist_off[s->hist_head] = off;
		s->hist_head = (s->hist_head + 1) % CP_CFG_HISTORY;
		if (s->hist_n < CP_CFG_HISTORY)
			s->hist_n++;
		s->ilen[off] = (uint8_t)n;
		for (unsigned i = 1; i < n; i++)
			s->mark[off + i] |= MARK_INSIDE;
		cfg->ninsns++;
		if (!run_transfer(cfg, off, &in))
			return;
		off += n;
	}
	if (off < end && s->ilen[off])
		s->mark[off] |= MARK_LEADER; /* joined code decoded earlier */
}

static void drain(struct cp_cfg *cfg)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	while (s->nwork) {
		uint32_t off = s->work[--s->nwork];
		decode_run(cfg, off);
	}
}

/* For each register, the address T of the `lea T(%rip), reg` instructions in the code
 * decoded so far, when they all agree (unique[r]). */
static void lea_targets(struct cp_cfg *cfg, uint64_t *target, bool *unique)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	uint8_t seen[CP_X86_RIP] = {0}; /* 0 none, 1 one address, 2 several */
	for (uint32_t off = 0; off < s->size; off++) {
		if (!s->ilen[off] || s->ilen[off] < 7)
			continue; /* lea disp32(%rip), reg is 7 bytes (+ prefixes) */
		const struct cp_cfg_flat_part *p = part_of(s, off);
		struct cp_x86_insn in;
		const uint8_t *b = p->bytes + (off - p->base);
		uint64_t addr = p->lo + (off - p->base);
		cp_x86_decode_flow(b, s->ilen[off], addr, &in);
		if (in.opkind != CP_X86_OP_LEA || !in.rip_relative)
			continue;
		cp_x86_decode(b, s->ilen[off], addr, &in);
		if (in.op[0].reg >= CP_X86_RIP)
			continue;
		uint8_t r = in.op[0].reg;
		if (seen[r] == 0)
			seen[r] = 1, target[r] = in.mem_addr;
		else if (target[r] != in.mem_addr)
			seen[r] = 2;
	}
	for (unsigned r = 0; r < CP_X86_RIP; r++)
		unique[r] = seen[r] == 1;
}

/* Tables whose base register is set elsewhere (hoisted out of a loop): resolved once the
 * code is decoded, when one lea gives that register its value. New targets may reveal
 * more code, hence the rounds. */
static void resolve_pending(struct cp_cfg *cfg)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	for (int round = 0; round < 8 && s->npending; round++) {
		uint64_t target[CP_X86_RIP];
		bool unique[CP_X86_RIP];
		size_t keep = 0, before = cfg->njtables;
		lea_targets(cfg, target, unique);
		for (size_t i = 0; i < s->npending; i++) {
			struct cp_cfg_pending *pd = &s->pending[i];
			if (!unique[pd->p.base_reg]) {
				s->pending[keep++] = *pd;
				continue;
			}
			pd->p.table = target[pd->p.base_reg];
			read_jtable(cfg, pd->jump, &pd->p);
		}
		s->npending = keep;
		if (cfg->njtables == before)
			break;
		drain(cfg);
	}
}

static void decode_all(struct cp_cfg *cfg)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	push_leader(s, cp_cfg_flat_offset(s, s->entry));
	drain(cfg);
	resolve_pending(cfg);
}

/* Phase 2a: blocks from leaders, walking instruction lengths. */
static void make_blocks(struct cp_cfg *cfg)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	for (uint32_t off = 0; off < s->size; off++) {
		if (!(s->mark[off] & MARK_LEADER))
			continue;
		const struct cp_cfg_flat_part *p = part_of(s, off);
		uint32_t end = p->base + (uint32_t)(p->hi - p->lo), cur = off, last = off;
		uint32_t ninsns = 0, flags = 0;
		while (cur < end && s->ilen[cur]) {
			last = cur;
			ninsns++;
			cur += s->ilen[cur];
			if ((s->mark[last] & MARK_ENDS) ||
			    (cur < end && (s->mark[cur] & MARK_LEADER)))
				break;
		}
		if (!ninsns || (cur < end && !s->ilen[cur] && !(s->mark[last] & MARK_ENDS)))
			flags |= CP_CFG_BLOCK_BAD;
		if (s->mark[off] & MARK_OVERLAP)
			flags |= CP_CFG_BLOCK_OVERLAP;
		XGROW(cfg->blocks, cfg->nblocks + 1, cfg->blocks_alloc);
		struct cp_cfg_block *b = &cfg->blocks[cfg->nblocks++];
		*b = (struct cp_cfg_block){.lo = p->lo + (off - p->base),
					   .hi = p->lo + ((ninsns ? cur : off + 1) - p->base),
					   .ninsns = ninsns,
					   .flags = flags,
					   .last = p->lo + (last - p->base)};
		if (b->lo == s->entry)
			b->flags |= CP_CFG_BLOCK_ENTRY, cfg->entry = (uint32_t)(cfg->nblocks - 1);
	}
}

/* The block starting exactly at addr (every in-procedure target is a leader). */
static uint32_t block_at(const struct cp_cfg *cfg, uint64_t addr)
{
	size_t i = cp_find_u64(cfg->blocks, cfg->nblocks, sizeof(*cfg->blocks),
			       offsetof(struct cp_cfg_block, lo), addr);
	return i < cfg->nblocks ? (uint32_t)i : CP_CFG_NONE;
}

uint32_t cp_cfg_find_block(const struct cp_cfg *cfg, uint64_t addr)
{
	size_t lo = cp_upper_bound_u64(cfg->blocks, cfg->nblocks, sizeof(*cfg->blocks),
				       offsetof(struct cp_cfg_block, lo), addr);
	if (lo == 0 || addr >= cfg->blocks[lo - 1].hi)
		return CP_CFG_NONE;
	return (uint32_t)(lo - 1);
}

static void add_edge(struct cp_cfg *cfg, uint32_t src, uint32_t dst, uint64_t target, unsigned kind)
{
	XGROW(cfg->edges, cfg->nedges + 1, cfg->edges_alloc);
	cfg->edges[cfg->nedges++] = (struct cp_cfg_edge){src, dst, target, (uint8_t)kind};
}

/* A direct transfer to target: inside (kind), tail call, or outside. */
static void add_branch(struct cp_cfg *cfg, uint32_t src, uint64_t target, unsigned kind)
{
	uint32_t dst = block_at(cfg, target);
	if (dst != CP_CFG_NONE)
		add_edge(cfg, src, dst, target, kind);
	else if (oracle_entry(cfg->scratch, target))
		add_edge(cfg, src, CP_CFG_NONE, target, CP_CFG_TAILCALL);
	else
		add_edge(cfg, src, CP_CFG_NONE, target, CP_CFG_OUTSIDE);
}

/* The edge to the next instruction after block b (fallthrough-like kinds). */
static void add_next(struct cp_cfg *cfg, uint32_t src, unsigned kind, uint64_t callee)
{
	const struct cp_cfg_block *b = &cfg->blocks[src];
	uint32_t dst = block_at(cfg, b->hi);
	uint64_t target = kind == CP_CFG_CALL_FALLTHROUGH ? callee : b->hi;
	if (dst != CP_CFG_NONE)
		add_edge(cfg, src, dst, target, kind);
	else if (cp_cfg_flat_offset(cfg->scratch, b->hi) == UINT32_MAX)
		add_edge(cfg, src, CP_CFG_NONE, target,
			 kind == CP_CFG_CALL_FALLTHROUGH ? kind : CP_CFG_OUTSIDE);
	else
		cfg->blocks[src].flags |= CP_CFG_BLOCK_BAD; /* runs into undecodable bytes */
}

/* Index of the table of the jmp at addr (tables sorted by sort_jtables), or njtables. */
static size_t jtable_at(const struct cp_cfg *cfg, uint64_t addr)
{
	return cp_find_u64(cfg->jtables, cfg->njtables, sizeof(*cfg->jtables),
			   offsetof(struct cp_cfg_jtable, jump), addr);
}

struct jt_sort {
	struct cp_cfg_jtable t;
	uint32_t first;
};

static int jt_sort_cmp(const void *a, const void *b)
{
	const struct jt_sort *x = a, *y = b;
	return x->t.jump < y->t.jump ? -1 : x->t.jump > y->t.jump;
}

/* Tables by jump address (with their target slices), for jtable_at. */
static void sort_jtables(struct cp_cfg *cfg)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	if (cfg->njtables < 2)
		return;
	struct jt_sort *tmp = xmalloc(cfg->njtables * sizeof(*tmp));
	for (size_t i = 0; i < cfg->njtables; i++)
		tmp[i] = (struct jt_sort){cfg->jtables[i], s->jt_first[i]};
	qsort(tmp, cfg->njtables, sizeof(*tmp), jt_sort_cmp);
	for (size_t i = 0; i < cfg->njtables; i++)
		cfg->jtables[i] = tmp[i].t, s->jt_first[i] = tmp[i].first;
	free(tmp);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* jmp *: one INDIRECT edge per distinct table target, or UNRESOLVED. A jmp through a
 * RIP-relative slot with no index (jmp *foo@GOTPCREL(%rip)) or through a code pointer
 * loaded from a struct (cp_cfg_jt_pointer_jump) is a tail call with unknown target. */
static void indirect_edges(struct cp_cfg *cfg, uint32_t src, const struct cp_x86_insn *in)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	size_t t = jtable_at(cfg, in->addr);
	if (t < cfg->njtables) {
		const uint64_t *tg = s->jt_targets + s->jt_first[t];
		size_t n = 0;
		XGROW(s->dsts, cfg->jtables[t].entries, s->dsts_alloc);
		for (uint32_t k = 0; k < cfg->jtables[t].entries; k++) {
			uint32_t dst = block_at(cfg, tg[k]);
			if (dst != CP_CFG_NONE)
				s->dsts[n++] = dst;
		}
		qsort(s->dsts, n, sizeof(*s->dsts), u32_cmp);
		for (size_t k = 0; k < n; k++)
			if (!k || s->dsts[k] != s->dsts[k - 1])
				add_edge(cfg, src, s->dsts[k], cfg->blocks[s->dsts[k]].lo,
					 CP_CFG_INDIRECT);
		return;
	}
	uint32_t off = cp_cfg_flat_offset(s, in->addr);
	/* rip_relative from cp_x86_decode_flow implies no index */
	if ((s->mark[off] & MARK_PTRJUMP) || in->rip_relative) {
		add_edge(cfg, src, CP_CFG_NONE, 0, CP_CFG_TAILCALL);
		return;
	}
	add_edge(cfg, src, CP_CFG_NONE, 0, CP_CFG_UNRESOLVED);
	XGROW(cfg->unresolved, cfg->nunresolved + 1, cfg->unresolved_alloc);
	cfg->unresolved[cfg->nunresolved++] = in->addr;
}

/* Phase 2b: the out edges of one block, from its last instruction. */
static void block_edges(struct cp_cfg *cfg, uint32_t i)
{
	struct cp_cfg_scratch *s = cfg->scratch;
	struct cp_cfg_block *b = &cfg->blocks[i];
	b->first_edge = (uint32_t)cfg->nedges;
	if (!b->ninsns)
		return;
	uint32_t off = cp_cfg_flat_offset(s, b->last);
	const struct cp_cfg_flat_part *p = part_of(s, off);
	struct cp_x86_insn in;
	cp_x86_decode_flow(p->bytes + (off - p->base), s->ilen[off], b->last, &in);
	switch (in.flow) {
	case CP_X86_FLOW_NONE:
	case CP_X86_FLOW_SYSCALL:
		add_next(cfg, i, CP_CFG_FALLTHROUGH, 0);
		break;
	case CP_X86_FLOW_CALL:
		if (oracle_noreturn(s, in.target))
			add_edge(cfg, i, CP_CFG_NONE, in.target, CP_CFG_NORETURN);
		else
			add_next(cfg, i, CP_CFG_CALL_FALLTHROUGH, in.target);
		break;
	case CP_X86_FLOW_CALL_INDIRECT:
		add_next(cfg, i, CP_CFG_CALL_FALLTHROUGH, 0);
		break;
	case CP_X86_FLOW_JCC:
		add_branch(cfg, i, in.target, CP_CFG_COND_TAKEN);
		add_next(cfg, i, CP_CFG_COND_NOT_TAKEN, 0);
		break;
	case CP_X86_FLOW_JMP:
		add_branch(cfg, i, in.target, CP_CFG_JUMP);
		break;
	case CP_X86_FLOW_JMP_INDIRECT:
		indirect_edges(cfg, i, &in);
		break;
	case CP_X86_FLOW_RET:
		add_edge(cfg, i, CP_CFG_NONE, 0, CP_CFG_RETURN);
		break;
	default:
		b->flags |= CP_CFG_BLOCK_TRAP;
		break;
	}
	b = &cfg->blocks[i];
	b->nedges = (uint32_t)(cfg->nedges - b->first_edge);
}

int cp_cfg_build(struct cp_cfg *cfg, const struct cp_cfg_part *parts, size_t nparts,
		 const struct cp_cfg_oracle *oracle)
{
	if (!nparts || parts[0].hi <= parts[0].lo || !parts[0].bytes)
		return cp_error(CP_EINVAL, "CFG: procedure has no code (empty main part)");
	if (!cfg->scratch)
		cfg->scratch = xcalloc(1, sizeof(*cfg->scratch));
	struct cp_cfg_scratch *s = cfg->scratch;
	int rc = flatten_parts(s, parts, nparts);
	if (rc < 0)
		return rc;
	s->entry = parts[0].lo;
	s->oracle = oracle;
	scratch_reset(cfg);
	decode_all(cfg);
	sort_jtables(cfg);
	make_blocks(cfg);
	for (uint32_t i = 0; i < cfg->nblocks; i++)
		block_edges(cfg, i);
	return 0;
}

/* Functions that never return, by symbol name (without version or @plt suffix). */
static const char *const noreturn_names[] = {
    "exit",
    "_exit",
    "_Exit",
    "quick_exit",
    "abort",
    "__stack_chk_fail",
    "__chk_fail",
    "__fortify_fail",
    "__assert_fail",
    "__assert_perror_fail",
    "__assert_rtn",
    "longjmp",
    "_longjmp",
    "siglongjmp",
    "__longjmp_chk",
    "__cxa_throw",
    "__cxa_rethrow",
    "__cxa_bad_cast",
    "__cxa_bad_typeid",
    "__cxa_throw_bad_array_new_length",
    "__cxa_pure_virtual",
    "_Unwind_Resume",
    "__libc_fatal",
    "__libc_message",
    "err",
    "errx",
    "verr",
    "verrx",
    "pthread_exit",
    "__pthread_unwind",
    "__pthread_unwind_next",
    "thrd_exit",
    "__cxa_call_unexpected",
    "_ZSt9terminatev",
    "_ZSt17__throw_bad_allocv",
    "_ZSt20__throw_length_errorPKc",
    "_ZSt24__throw_out_of_range_fmtPKcz",
    "_ZSt20__throw_out_of_rangePKc",
    "_ZSt19__throw_logic_errorPKc",
    "_ZSt25__throw_bad_function_callv",
    "__ubsan_handle_builtin_unreachable",
    "_gfortran_stop_string",
    "_gfortran_error_stop_string",
    "_gfortran_runtime_error",
    "_gfortran_os_error",
    "_gfortran_runtime_error_at",
    "_gfortran_os_error_at",
    "_gfortran_stop_numeric",
    "_gfortran_error_stop_numeric",
    "_gfortran_generate_error",
    "MPI_Abort",
};

bool cp_cfg_noreturn_name(const char *name)
{
	if (!name)
		return false;
	size_t len = strcspn(name, "@");
	for (size_t i = 0; i < sizeof(noreturn_names) / sizeof(noreturn_names[0]); i++)
		if (strlen(noreturn_names[i]) == len && !strncmp(noreturn_names[i], name, len))
			return true;
	return false;
}

const char *cp_cfg_edge_kind_name(unsigned kind)
{
	static const char *const names[] = {
	    [CP_CFG_FALLTHROUGH] = "fallthrough",
	    [CP_CFG_COND_TAKEN] = "taken",
	    [CP_CFG_COND_NOT_TAKEN] = "not-taken",
	    [CP_CFG_JUMP] = "jump",
	    [CP_CFG_CALL_FALLTHROUGH] = "call-return",
	    [CP_CFG_INDIRECT] = "indirect",
	    [CP_CFG_TAILCALL] = "tailcall",
	    [CP_CFG_RETURN] = "return",
	    [CP_CFG_NORETURN] = "noreturn-call",
	    [CP_CFG_UNRESOLVED] = "unresolved",
	    [CP_CFG_OUTSIDE] = "outside",
	};
	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

/* Whole-function relocation with edge snippets (relocate-fn.h). */
#include "patch/relocate-fn.h"

#include "arch/x86_64/relocate.h"
#include "patch/patch.h"

#include <pthread.h>
#include <string.h>

/* lea -128(%rsp),%rsp; push %r11; movabs $cookie,%r11; call *2(%rip); jmp +8;
 * .quad handler; pop %r11; lea 128(%rsp),%rsp */
#define SNIPPET_LEN (5 + 2 + CP_X86_MOVABS_R11_LEN + 6 + 2 + 8 + 2 + 8)
#define MAX_COPY (60u * 1024u)

enum { PRE = 1, POST = 2, STUB = 4 }; /* where a point's snippet goes */

static struct {
	struct cp_x86_insn insn[CP_RELOC_MAX_INSNS];
	uint32_t label[CP_RELOC_MAX_INSNS + 1]; /* offset in the copy of insn i's label */
	uint32_t at[CP_RELOC_MAX_INSNS];	/* of the instruction itself */
	uint16_t where[CP_RELOC_MAX_POINTS];
	uint32_t pidx[CP_RELOC_MAX_POINTS]; /* the instruction of each point */
	uint32_t stub[CP_RELOC_MAX_POINTS]; /* offset of a taken stub */
	uint8_t out[MAX_COPY];
	size_t n;
} rs;
static pthread_mutex_t reloc_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned snippet(uint8_t *o, uint64_t cookie, uint64_t handler)
{
	static const uint8_t down[] = {0x48, 0x8d, 0x64, 0x24, 0x80};
	static const uint8_t call[] = {0x41, 0x53};
	static const uint8_t calljmp[] = {0xff, 0x15, 0x02, 0x00, 0x00, 0x00, 0xeb, 0x08};
	static const uint8_t up[] = {0x41, 0x5b, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00};
	unsigned k = 0;
	memcpy(o + k, down, sizeof down);
	k += sizeof down;
	memcpy(o + k, call, sizeof call);
	k += sizeof call;
	k += cp_x86_encode_movabs_r11(o + k, cookie);
	memcpy(o + k, calljmp, sizeof calljmp);
	k += sizeof calljmp;
	memcpy(o + k, &handler, 8);
	k += 8;
	memcpy(o + k, up, sizeof up);
	return k + sizeof up;
}

static int refuse(struct cp_reloc_result *res, int st, const char *why, uint64_t at)
{
	res->why = why;
	res->bad = at;
	return st;
}

static long insn_at(uint64_t a)
{
	size_t lo = 0, hi = rs.n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (rs.insn[mid].addr < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rs.n && rs.insn[lo].addr == a ? (long)lo : -1;
}

static int decode_all(const uint8_t *code, size_t size, uint64_t addr, struct cp_reloc_result *res)
{
	rs.n = 0;
	for (size_t off = 0; off < size;) {
		struct cp_x86_insn *in = &rs.insn[rs.n];
		if (rs.n == CP_RELOC_MAX_INSNS)
			return refuse(res, CP_PATCH_UNSUPPORTED, "function too large", addr);
		unsigned len = cp_x86_decode_flow(code + off, size - off, addr + off, in);
		if (!len)
			return refuse(res, CP_PATCH_UNDECODABLE, "bytes do not decode", addr + off);
		if (!cp_x86_reloc_size(code + off, in))
			return refuse(res, CP_PATCH_UNSUPPORTED, "an instruction cannot be moved",
				      addr + off);
		rs.n++;
		off += len;
	}
	for (size_t i = 0; i < rs.n; i++) {
		const struct cp_x86_insn *in = &rs.insn[i];
		int branch = in->flow == CP_X86_FLOW_JMP || in->flow == CP_X86_FLOW_JCC;
		if (branch && in->target >= addr && in->target < addr + size &&
		    insn_at(in->target) < 0)
			return refuse(res, CP_PATCH_JUMP_INTO,
				      "a branch lands inside an instruction", in->addr);
	}
	return 0;
}

/* Where each point's snippet goes, from its edge and the instruction it leaves. */
static int place_points(const struct cp_reloc_point *pts, size_t npts, struct cp_reloc_result *res)
{
	for (size_t k = 0; k < npts; k++) {
		long i = insn_at(pts[k].src);
		if (i < 0)
			return refuse(res, CP_PATCH_UNSUPPORTED,
				      "edge source is not an instruction", pts[k].src);
		uint8_t flow = rs.insn[i].flow;
		rs.pidx[k] = (uint32_t)i;
		if (flow == CP_X86_FLOW_JMP_INDIRECT || flow == CP_X86_FLOW_TRAP)
			return refuse(res, CP_PATCH_UNSUPPORTED, "edge of an indirect jump",
				      pts[k].src);
		if (pts[k].edge == CP_RELOC_FALLTHROUGH) {
			if (flow == CP_X86_FLOW_JMP || flow == CP_X86_FLOW_RET ||
			    (size_t)i + 1 == rs.n)
				return refuse(res, CP_PATCH_UNSUPPORTED,
					      "fall-through edge after a jump", pts[k].src);
			rs.where[k] = POST;
		} else {
			rs.where[k] = flow == CP_X86_FLOW_JCC ? STUB : PRE;
			if (rs.where[k] == PRE && flow != CP_X86_FLOW_JMP &&
			    flow != CP_X86_FLOW_RET)
				return refuse(res, CP_PATCH_UNSUPPORTED,
					      "taken edge of an instruction that does not branch",
					      pts[k].src);
		}
	}
	return 0;
}

static unsigned snippets_of(size_t i, uint16_t where, size_t npts)
{
	unsigned c = 0;
	for (size_t k = 0; k < npts; k++)
		c += rs.pidx[k] == i && rs.where[k] == where;
	return c;
}

/* Offsets of every label, instruction and stub; the copy's length. */
static size_t layout(const uint8_t *code, uint64_t addr, size_t npts)
{
	size_t off = 0;
	for (size_t i = 0; i < rs.n; i++) {
		rs.label[i] = (uint32_t)off;
		off += snippets_of(i, PRE, npts) * SNIPPET_LEN;
		rs.at[i] = (uint32_t)off;
		off += cp_x86_reloc_size(code + (rs.insn[i].addr - addr), &rs.insn[i]);
		off += snippets_of(i, POST, npts) * SNIPPET_LEN;
	}
	rs.label[rs.n] = (uint32_t)off; /* falling off the end: the original's next byte */
	off += CP_X86_JMP32_LEN;
	for (size_t k = 0; k < npts; k++)
		if (rs.where[k] == STUB) {
			rs.stub[k] = (uint32_t)off;
			off += SNIPPET_LEN + CP_X86_JMP32_LEN;
		}
	return off;
}

/* A direct branch's target in the copy (a label, or the stub of its taken point). */
static uint64_t target_of(size_t i, uint64_t addr, size_t size, uint64_t copy, size_t npts)
{
	const struct cp_x86_insn *in = &rs.insn[i];
	for (size_t k = 0; k < npts && in->flow == CP_X86_FLOW_JCC; k++)
		if (rs.pidx[k] == i && rs.where[k] == STUB)
			return copy + rs.stub[k];
	if ((in->flow == CP_X86_FLOW_JMP || in->flow == CP_X86_FLOW_JCC) && in->target >= addr &&
	    in->target < addr + size)
		return copy + rs.label[insn_at(in->target)];
	return in->target;
}

static void put_snippets(size_t i, uint16_t where, const struct cp_reloc_point *pts, size_t npts,
			 uint64_t handler, unsigned *off)
{
	for (size_t k = 0; k < npts; k++)
		if (rs.pidx[k] == i && rs.where[k] == where)
			*off += snippet(rs.out + *off, pts[k].cookie, handler);
}

static int emit(const uint8_t *code, uint64_t addr, size_t size, const struct cp_reloc_point *pts,
		size_t npts, uint64_t handler, uint64_t copy, struct cp_reloc_result *res)
{
	unsigned off = 0;
	for (size_t i = 0; i < rs.n; i++) {
		const struct cp_x86_insn *in = &rs.insn[i];
		put_snippets(i, PRE, pts, npts, handler, &off);
		unsigned w = cp_x86_relocate(code + (in->addr - addr), in, copy + off,
					     target_of(i, addr, size, copy, npts), rs.out + off);
		if (!w)
			return refuse(res, CP_PATCH_NO_NEAR_MEMORY, "a displacement does not reach",
				      in->addr);
		off += w;
		put_snippets(i, POST, pts, npts, handler, &off);
	}
	for (size_t k = 0; k < npts; k++) {
		if (rs.where[k] != STUB)
			continue;
		const struct cp_x86_insn *in = &rs.insn[rs.pidx[k]];
		off = rs.stub[k];
		off += snippet(rs.out + off, pts[k].cookie, handler);
		uint64_t t = in->target >= addr && in->target < addr + size
				 ? copy + rs.label[insn_at(in->target)]
				 : in->target;
		if (!cp_x86_encode_jmp32(rs.out + off, copy + off, t))
			return refuse(res, CP_PATCH_NO_NEAR_MEMORY, "a jump does not reach",
				      in->addr);
	}
	return 0;
}

/* Snippet layout (snippet()): lea 5, push 2, movabs, call 6 (returns to SN_RET), jmp 2,
 * .quad 8, pop 2 (at SN_POP), lea 8. */
#define SN_PUSH 5
#define SN_RET (SN_PUSH + 2 + CP_X86_MOVABS_R11_LEN + 6)
#define SN_POP (SN_RET + 2 + 8)

int cp_reloc_snippet_sp(uint32_t into, int is_return)
{
	if (is_return)
		return into == SN_RET ? 128 + 8 : -1;
	if (into < SN_PUSH || into >= SNIPPET_LEN) /* before it, or a stub's jmp after it */
		return 0;
	return into < SN_PUSH + 2 || into >= SN_POP + 2 ? 128 : 128 + 8;
}

static void map_put(struct cp_reloc_map *m, uint32_t at, uint64_t orig, uint32_t info)
{
	m->at[m->n] = at;
	m->orig[m->n] = (uint32_t)orig;
	m->info[m->n++] = info;
}

/* The snippets of instruction i placed at `where`, from copy offset *at. */
static void map_snippets(struct cp_reloc_map *m, size_t i, uint16_t where, uint64_t orig,
			 size_t npts, uint32_t *at)
{
	for (size_t k = 0; k < npts; k++)
		if (rs.pidx[k] == i && rs.where[k] == where) {
			map_put(m, *at, orig, CP_RELOC_SNIPPET | SNIPPET_LEN);
			*at += SNIPPET_LEN;
		}
}

static void map_out(struct cp_reloc_map *m, const uint8_t *code, uint64_t addr, size_t npts)
{
	m->n = 0;
	for (size_t i = 0; i < rs.n; i++) {
		uint64_t orig = rs.insn[i].addr - addr;
		uint32_t at = rs.label[i], rlen = cp_x86_reloc_size(code + orig, &rs.insn[i]);
		map_snippets(m, i, PRE, orig, npts, &at);
		map_put(m, rs.at[i], orig, rlen | (uint32_t)rs.insn[i].len << 16);
		at = rs.at[i] + rlen;
		/* After i, the state of the instruction that follows (a fall-through edge). */
		map_snippets(m, i, POST, rs.insn[i + 1 < rs.n ? i + 1 : i].addr - addr, npts, &at);
	}
	for (size_t k = 0; k < npts; k++)
		if (rs.where[k] == STUB)
			map_put(m, rs.stub[k], rs.insn[rs.pidx[k]].addr - addr,
				CP_RELOC_SNIPPET | (SNIPPET_LEN + CP_X86_JMP32_LEN));
}

int cp_reloc_function(const uint8_t *code, uint64_t addr, size_t size,
		      const struct cp_reloc_point *pts, size_t npts, uint64_t handler,
		      struct cp_reloc_result *res)
{
	struct cp_reloc_map map = res->map;
	memset(res, 0, sizeof *res);
	res->map = map;
	res->map.n = 0;
	if (npts > CP_RELOC_MAX_POINTS)
		return refuse(res, CP_PATCH_UNSUPPORTED, "too many points", addr);
	pthread_mutex_lock(&reloc_lock);
	int st = decode_all(code, size, addr, res);
	if (!st)
		st = place_points(pts, npts, res);
	size_t len = st ? 0 : layout(code, addr, npts);
	if (!st && len > MAX_COPY)
		st = refuse(res, CP_PATCH_UNSUPPORTED, "function too large", addr);
	uint64_t copy = st ? 0 : cp_patch_alloc_near(addr, (uint32_t)len);
	if (!st && !copy)
		st = refuse(res, CP_PATCH_NO_NEAR_MEMORY, "no memory near the function", addr);
	if (!st)
		st = emit(code, addr, size, pts, npts, handler, copy, res);
	if (!st) {
		/* Code that runs off the end continues in the original, as it would have. */
		cp_x86_encode_jmp32(rs.out + rs.label[rs.n], copy + rs.label[rs.n], addr + size);
		st = cp_patch_fill(copy, rs.out, len);
		if (st)
			refuse(res, st, "cannot write the copy", addr);
		res->copy = st ? 0 : copy;
		res->len = len;
	}
	if (!st && res->map.at && rs.n + npts <= res->map.cap)
		map_out(&res->map, code, addr, npts);
	pthread_mutex_unlock(&reloc_lock);
	return st;
}

/* A compact .eh_frame interpreter: finds the FDE for a pc through the in-memory
 * .eh_frame_hdr search table and runs the CIE + FDE call-frame instructions up to the pc,
 * keeping only the rules the unwinder evaluates (CFA, RA, rbp; others are parsed and
 * dropped). DWARF expressions are recognised by shape, not evaluated: the two forms gcc,
 * clang, binutils and glibc emit on x86-64 (PLT stubs, realigned-stack frames) map onto
 * dedicated recipe kinds; anything else makes the row CP_ROW_UNSUPPORTED.
 *
 * Async-signal-safe: reads only mapped module memory, no allocation, no libc calls. */
#include <string.h>

#include "runtime/unwind/cfi.h"

#include "base/sigsafe/banned.h"

#define STATE_STACK 8
#define NREGS CP_DW_NREGS

enum {
	PE_OMIT = 0xff,
	PE_ABSPTR = 0x00,
	PE_ULEB = 0x01,
	PE_UDATA2 = 0x02,
	PE_UDATA4 = 0x03,
	PE_UDATA8 = 0x04,
	PE_SLEB = 0x09,
	PE_SDATA2 = 0x0a,
	PE_SDATA4 = 0x0b,
	PE_SDATA8 = 0x0c,
	PE_PCREL = 0x10,
	PE_DATAREL = 0x30,
	PE_INDIRECT = 0x80,
};

struct cursor {
	const uint8_t *p, *end;
	int bad;
};

struct reg_rule {
	uint8_t how; /* enum cp_reg_how */
	uint8_t reg;
	int32_t off;
};

struct cfa_rule {
	uint8_t how; /* enum cp_cfa_how, or 0xff = unsupported expression */
	uint8_t reg;
	uint8_t plt_thr;
	int32_t off;
};

struct state {
	struct cfa_rule cfa;
	struct reg_rule regs[NREGS];
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint32_t ra_reg;
	uint8_t fde_enc;
	uint8_t has_z;
	uint8_t signal;
	const uint8_t *insns, *insns_end;
};

struct interp {
	struct state cur, init;
	struct state stack[STATE_STACK];
	int depth;
	uintptr_t loc, pc;
	uintptr_t row_lo, row_hi;
	const struct cie *cie;
	int bad;
};

static uint64_t rd_uleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (c->p < c->end) {
		uint8_t b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	c->bad = 1;
	return 0;
}

static int64_t rd_sleb(struct cursor *c)
{
	int64_t v = 0;
	unsigned shift = 0;

	while (c->p < c->end) {
		uint8_t b = *c->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= -((int64_t)1 << shift);
			return v;
		}
	}
	c->bad = 1;
	return 0;
}

static uint64_t rd_fixed(struct cursor *c, unsigned n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = 1;
		c->p = c->end;
		return 0;
	}
	memcpy(&v, c->p, n); /* little-endian host */
	c->p += n;
	return v;
}

static uint8_t rd_u8(struct cursor *c)
{
	return (uint8_t)rd_fixed(c, 1);
}

/* Reads an encoded pointer; datarel is relative to `data` (the .eh_frame_hdr). */
static uintptr_t rd_encoded(struct cursor *c, uint8_t enc, uintptr_t data)
{
	uintptr_t base = (uintptr_t)c->p, v;

	if (enc == PE_OMIT)
		return 0;
	switch (enc & 0x0f) {
	case PE_ABSPTR:
		v = rd_fixed(c, 8);
		break;
	case PE_ULEB:
		v = rd_uleb(c);
		break;
	case PE_UDATA2:
		v = (uint16_t)rd_fixed(c, 2);
		break;
	case PE_UDATA4:
		v = (uint32_t)rd_fixed(c, 4);
		break;
	case PE_UDATA8:
		v = rd_fixed(c, 8);
		break;
	case PE_SLEB:
		v = (uintptr_t)rd_sleb(c);
		break;
	case PE_SDATA2:
		v = (uintptr_t)(int64_t)(int16_t)rd_fixed(c, 2);
		break;
	case PE_SDATA4:
		v = (uintptr_t)(int64_t)(int32_t)rd_fixed(c, 4);
		break;
	case PE_SDATA8:
		v = rd_fixed(c, 8);
		break;
	default:
		c->bad = 1;
		return 0;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		v += base;
		break;
	case PE_DATAREL:
		v += data;
		break;
	default:
		c->bad = 1;
		return 0;
	}
	if ((enc & PE_INDIRECT) && !c->bad)
		v = *(const uintptr_t *)v;
	return v;
}

void cp_cfi_prepare(const struct cp_module *m, struct cp_ehinfo *info)
{
	const uint8_t *h = m->eh_frame_hdr;
	struct cursor c;

	memset(info, 0, sizeof(*info));
	if (!h || m->eh_frame_hdr_size < 12 || h[0] != 1 || h[3] != (PE_DATAREL | PE_SDATA4))
		return;
	c.p = h + 4;
	c.end = h + m->eh_frame_hdr_size;
	c.bad = 0;
	rd_encoded(&c, h[1], (uintptr_t)h);
	uintptr_t count = rd_encoded(&c, h[2], (uintptr_t)h);
	if (c.bad || count == 0 || count > (uintptr_t)(c.end - c.p) / 8)
		return;
	info->hdr = h;
	info->table = c.p;
	info->count = (uint32_t)count;
}

/* Address of the FDE whose initial location is the greatest <= pc, or NULL. */
static const uint8_t *fde_search(const struct cp_ehinfo *info, uintptr_t pc)
{
	const int32_t *t = (const int32_t *)(const void *)info->table;
	intptr_t rel = (intptr_t)(pc - (uintptr_t)info->hdr);
	uint32_t lo = 0, hi = info->count;

	if (!info->count || rel < t[0])
		return NULL;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t[2 * mid] <= rel)
			lo = mid;
		else
			hi = mid;
	}
	return info->hdr + t[2 * lo + 1];
}

/* Reads the length of a CIE/FDE record at p; sets *body (after the length) and *end. */
static int record_bounds(const uint8_t *p, const uint8_t **body, const uint8_t **end)
{
	uint32_t len32;
	uint64_t len;

	memcpy(&len32, p, 4);
	p += 4;
	len = len32;
	if (len32 == 0xffffffffu) {
		memcpy(&len, p, 8);
		p += 8;
	}
	if (len == 0 || len > (1u << 30))
		return -1;
	*body = p;
	*end = p + len;
	return 0;
}

static void cie_aug_data(struct cursor *c, const char *aug, struct cie *cie)
{
	uint64_t len = rd_uleb(c);
	const uint8_t *after = c->p + len;

	for (const char *a = aug + 1; *a && !c->bad; a++) {
		if (*a == 'R') {
			cie->fde_enc = rd_u8(c);
		} else if (*a == 'L') {
			rd_u8(c);
		} else if (*a == 'P') {
			uint8_t enc = rd_u8(c);
			rd_encoded(c, enc & 0x7f, 0); /* skip the personality, never dereference */
		} else if (*a == 'S') {
			cie->signal = 1;
		} else {
			break; /* unknown letters: the length lets us skip */
		}
	}
	if (after > c->end)
		c->bad = 1;
	c->p = after;
}

static int cie_parse(const uint8_t *rec, struct cie *cie)
{
	const uint8_t *body, *end;
	struct cursor c;
	const char *aug;
	uint8_t version;

	if (record_bounds(rec, &body, &end) < 0)
		return -1;
	c.p = body + 4; /* CIE id */
	c.end = end;
	c.bad = 0;
	memset(cie, 0, sizeof(*cie));
	cie->fde_enc = PE_ABSPTR;
	version = rd_u8(&c);
	aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	c.p++;
	if (version != 1 && version != 3)
		return -1;
	if (aug[0] && aug[0] != 'z')
		return -1; /* pre-'z' augmentations ("eh") are not emitted on x86-64 */
	cie->has_z = aug[0] == 'z';
	cie->code_align = rd_uleb(&c);
	cie->data_align = rd_sleb(&c);
	cie->ra_reg = version == 1 ? rd_u8(&c) : (uint32_t)rd_uleb(&c);
	if (cie->has_z)
		cie_aug_data(&c, aug, cie);
	if (c.bad || cie->ra_reg != CP_DW_RIP)
		return -1;
	cie->insns = c.p;
	cie->insns_end = end;
	return 0;
}

/* DW_OP codes used by the expression shapes we recognise. */
enum {
	OP_DEREF = 0x06,
	OP_AND = 0x1a,
	OP_PLUS = 0x22,
	OP_SHL = 0x24,
	OP_GE = 0x2a,
	OP_LIT0 = 0x30,
	OP_LIT31 = 0x4f,
	OP_BREG0 = 0x70,
	OP_BREG31 = 0x8f,
};

/* "bregN off" at c; returns 1 and fills reg/off when it is one. */
static int expr_breg(struct cursor *c, uint8_t *reg, int32_t *off)
{
	if (c->p >= c->end || *c->p < OP_BREG0 || *c->p > OP_BREG31)
		return 0;
	*reg = (uint8_t)(*c->p++ - OP_BREG0);
	*off = (int32_t)rd_sleb(c);
	return !c->bad;
}

/* CFA expressions: "bregN off; deref" (realigned stack) and the binutils PLT shape
 * "breg7 off; breg16 0; lit15; and; litT; ge; lit3; shl; plus". */
static void cfa_expression(const uint8_t *p, uint64_t len, struct cfa_rule *cfa)
{
	static const uint8_t plt_mid[] = {OP_LIT0 + 15, OP_AND};
	static const uint8_t plt_tail[] = {OP_GE, OP_LIT0 + 3, OP_SHL, OP_PLUS};
	struct cursor c = {p, p + len, 0};
	uint8_t reg, reg2;
	int32_t off, off2;

	cfa->how = 0xff;
	if (!expr_breg(&c, &reg, &off))
		return;
	if (c.end - c.p == 1 && *c.p == OP_DEREF) {
		cfa->how = CP_CFA_DEREF;
		cfa->reg = reg;
		cfa->off = off;
		return;
	}
	if (reg != CP_DW_RSP || !expr_breg(&c, &reg2, &off2) || reg2 != CP_DW_RIP || off2 != 0)
		return;
	if (c.end - c.p != 7 || memcmp(c.p, plt_mid, 2) || c.p[2] < OP_LIT0 || c.p[2] > OP_LIT31 ||
	    memcmp(c.p + 3, plt_tail, 4))
		return;
	cfa->how = CP_CFA_PLT;
	cfa->reg = CP_DW_RSP;
	cfa->off = off;
	cfa->plt_thr = (uint8_t)(c.p[2] - OP_LIT0);
}

/* DW_CFA_expression for a register: only "bregN off" (the address is reg + off). */
static void reg_expression(const uint8_t *p, uint64_t len, struct reg_rule *r)
{
	struct cursor c = {p, p + len, 0};
	uint8_t reg;
	int32_t off;

	r->how = CP_REG_OTHER;
	if (expr_breg(&c, &reg, &off) && c.p == c.end) {
		r->how = CP_REG_AT_REG;
		r->reg = reg;
		r->off = off;
	}
}

static void set_reg(struct interp *st, uint64_t reg, uint8_t how, int64_t off)
{
	if (reg < NREGS) {
		st->cur.regs[reg].how = how;
		st->cur.regs[reg].off = (int32_t)off;
	}
}

/* Advances the location; returns 1 when the row containing pc is complete. */
static int advance(struct interp *st, uint64_t delta)
{
	uintptr_t next = st->loc + delta;

	if (next > st->pc) {
		st->row_hi = next;
		return 1;
	}
	st->loc = next;
	st->row_lo = next;
	return 0;
}

static void op_state(struct interp *st, uint8_t op)
{
	if (op == 0x0a) { /* remember_state */
		if (st->depth < STATE_STACK)
			st->stack[st->depth] = st->cur;
		st->depth++;
	} else if (st->depth > 0) { /* restore_state */
		st->depth--;
		if (st->depth < STATE_STACK)
			st->cur = st->stack[st->depth];
		else
			st->bad = 1;
	} else {
		st->bad = 1;
	}
}

/* A register number; anything we do not track reads as NREGS (never a valid base). */
static uint8_t rd_reg(struct cursor *c)
{
	uint64_t r = rd_uleb(c);
	return r < NREGS ? (uint8_t)r : NREGS;
}

static void op_def_cfa(struct interp *st, struct cursor *c, uint8_t op)
{
	int64_t da = st->cie->data_align;

	switch (op) {
	case 0x0c: /* def_cfa */
		st->cur.cfa.how = CP_CFA_REG;
		st->cur.cfa.reg = rd_reg(c);
		st->cur.cfa.off = (int32_t)rd_uleb(c);
		break;
	case 0x0d: /* def_cfa_register */
		st->cur.cfa.reg = rd_reg(c);
		if (st->cur.cfa.how != CP_CFA_REG)
			st->cur.cfa.how = 0xff; /* register on top of an expression: undefined */
		break;
	case 0x0e: /* def_cfa_offset */
		st->cur.cfa.off = (int32_t)rd_uleb(c);
		break;
	case 0x12: /* def_cfa_sf */
		st->cur.cfa.how = CP_CFA_REG;
		st->cur.cfa.reg = rd_reg(c);
		st->cur.cfa.off = (int32_t)(rd_sleb(c) * da);
		break;
	case 0x13: /* def_cfa_offset_sf */
		st->cur.cfa.off = (int32_t)(rd_sleb(c) * da);
		break;
	default: { /* 0x0f def_cfa_expression */
		uint64_t len = rd_uleb(c);
		if (len > (uint64_t)(c->end - c->p)) {
			c->bad = 1;
			return;
		}
		cfa_expression(c->p, len, &st->cur.cfa);
		c->p += len;
	}
	}
}

static void op_register_rule(struct interp *st, struct cursor *c, uint8_t op)
{
	int64_t da = st->cie->data_align;
	uint64_t reg = rd_uleb(c), len;

	switch (op) {
	case 0x05:
		set_reg(st, reg, CP_REG_CFA, (int64_t)rd_uleb(c) * da);
		break;
	case 0x11:
		set_reg(st, reg, CP_REG_CFA, rd_sleb(c) * da);
		break;
	case 0x2f:
		set_reg(st, reg, CP_REG_CFA, -(int64_t)rd_uleb(c) * da);
		break;
	case 0x06: /* restore_extended */
		if (reg < NREGS)
			st->cur.regs[reg] = st->init.regs[reg];
		break;
	case 0x07:
		set_reg(st, reg, CP_REG_UNDEF, 0);
		break;
	case 0x08:
		set_reg(st, reg, CP_REG_SAME, 0);
		break;
	case 0x09:
		rd_uleb(c);
		set_reg(st, reg, CP_REG_OTHER, 0);
		break;
	case 0x14:
		rd_uleb(c);
		set_reg(st, reg, CP_REG_OTHER, 0);
		break;
	case 0x15:
		rd_sleb(c);
		set_reg(st, reg, CP_REG_OTHER, 0);
		break;
	default: /* 0x10 expression, 0x16 val_expression */
		len = rd_uleb(c);
		if (len > (uint64_t)(c->end - c->p)) {
			c->bad = 1;
			return;
		}
		if (op == 0x10 && reg < NREGS)
			reg_expression(c->p, len, &st->cur.regs[reg]);
		else
			set_reg(st, reg, CP_REG_OTHER, 0);
		c->p += len;
	}
}

/* Runs one instruction; returns 1 when the row for pc is complete. */
static int run_one(struct interp *st, struct cursor *c)
{
	uint8_t op = rd_u8(c), lo6 = op & 0x3f;
	uint64_t ca = st->cie->code_align;

	switch (op >> 6) {
	case 1:
		return advance(st, lo6 * ca);
	case 2:
		set_reg(st, lo6, CP_REG_CFA, (int64_t)rd_uleb(c) * st->cie->data_align);
		return 0;
	case 3:
		if (lo6 < NREGS)
			st->cur.regs[lo6] = st->init.regs[lo6];
		return 0;
	}
	switch (op) {
	case 0x00:
		return 0;
	case 0x01: { /* set_loc */
		uintptr_t to = rd_encoded(c, st->cie->fde_enc, 0);
		return to > st->loc ? advance(st, to - st->loc) : 0;
	}
	case 0x02:
		return advance(st, rd_fixed(c, 1) * ca);
	case 0x03:
		return advance(st, rd_fixed(c, 2) * ca);
	case 0x04:
		return advance(st, rd_fixed(c, 4) * ca);
	case 0x0a:
	case 0x0b:
		op_state(st, op);
		return 0;
	case 0x0c:
	case 0x0d:
	case 0x0e:
	case 0x0f:
	case 0x12:
	case 0x13:
		op_def_cfa(st, c, op);
		return 0;
	case 0x05:
	case 0x06:
	case 0x07:
	case 0x08:
	case 0x09:
	case 0x10:
	case 0x11:
	case 0x14:
	case 0x15:
	case 0x16:
	case 0x2f:
		op_register_rule(st, c, op);
		return 0;
	case 0x2e:
		rd_uleb(c);
		return 0; /* GNU_args_size: only matters for landing pads */
	default:
		st->bad = 1;
		return 1;
	}
}

static void run(struct interp *st, const uint8_t *p, const uint8_t *end)
{
	struct cursor c = {p, end, 0};

	while (c.p < c.end && !c.bad && !st->bad)
		if (run_one(st, &c))
			return;
	if (c.bad)
		st->bad = 1;
}

static void row_reduce(const struct interp *st, struct cp_cfi_row *row)
{
	const struct reg_rule *ra = &st->cur.regs[CP_DW_RIP];

	row->cfa_how = st->cur.cfa.how;
	row->cfa_reg = st->cur.cfa.reg;
	row->cfa_off = st->cur.cfa.off;
	row->plt_thr = st->cur.cfa.plt_thr;
	row->ra_how = ra->how;
	row->ra_off = ra->off;
	for (int i = 0; i < CP_NSAVED; i++) {
		const struct reg_rule *r = &st->cur.regs[cp_saved_regs[i]];
		row->saved_how[i] = r->how;
		row->saved_reg[i] = r->reg;
		row->saved_off[i] = r->off;
	}
	row->lo = st->row_lo;
	row->hi = st->row_hi;
	if (st->cie->signal)
		row->kind = CP_ROW_SIGNAL;
	else if (ra->how == CP_REG_UNDEF)
		row->kind = CP_ROW_OUTERMOST;
	else if (ra->how != CP_REG_CFA || st->cur.cfa.how == 0xff || st->cur.cfa.reg >= NREGS)
		row->kind = CP_ROW_UNSUPPORTED;
	else
		row->kind = CP_ROW_NORMAL;
}

/* Parses the FDE header at fde; fills the CIE, the pc range and the instruction span. */
static int fde_parse(const uint8_t *fde, struct cie *cie, uintptr_t *begin, uintptr_t *end,
		     const uint8_t **insns, const uint8_t **insns_end)
{
	const uint8_t *body, *rec_end;
	struct cursor c;
	uint32_t cie_off;

	if (record_bounds(fde, &body, &rec_end) < 0)
		return -1;
	memcpy(&cie_off, body, 4);
	if (cie_off == 0 || cie_parse(body - cie_off, cie) < 0)
		return -1;
	c.p = body + 4;
	c.end = rec_end;
	c.bad = 0;
	*begin = rd_encoded(&c, cie->fde_enc, 0);
	*end = *begin + rd_encoded(&c, cie->fde_enc & 0x0f, 0);
	if (cie->has_z) {
		uint64_t len = rd_uleb(&c);
		c.p += len;
	}
	if (c.bad || c.p > rec_end)
		return -1;
	*insns = c.p;
	*insns_end = rec_end;
	return 0;
}

int cp_cfi_find_row(const struct cp_module *m, uintptr_t pc, struct cp_cfi_row *row)
{
	const struct cp_ehinfo *info = m->unwind_private;
	const uint8_t *fde, *insns, *insns_end;
	struct interp st;
	struct cie cie;
	uintptr_t begin, end;

	pc += (uintptr_t)m->image_delta; /* the tables are read where they are mapped here */
	memset(row, 0, sizeof(*row));
	row->kind = CP_ROW_NONE;
	if (!info || !(fde = fde_search(info, pc)))
		return 0;
	if (fde_parse(fde, &cie, &begin, &end, &insns, &insns_end) < 0)
		return -1;
	if (pc < begin || pc >= end)
		return 0;
	memset(&st.cur, 0, sizeof(st.cur));
	st.cur.cfa.how = 0xff;
	st.depth = 0;
	st.bad = 0;
	st.cie = &cie;
	st.pc = pc;
	st.loc = st.row_lo = begin;
	st.row_hi = end;
	run(&st, cie.insns, cie.insns_end);
	st.init = st.cur;
	st.loc = st.row_lo = begin;
	st.row_hi = end;
	run(&st, insns, insns_end);
	if (st.bad)
		return -1;
	row_reduce(&st, row);
	row->lo -= (uintptr_t)m->image_delta;
	row->hi -= (uintptr_t)m->image_delta;
	return 0;
}

int cp_cfi_fde_range(const struct cp_module *m, uintptr_t pc, uintptr_t *begin, uintptr_t *end)
{
	const struct cp_ehinfo *info = m->unwind_private;
	const uint8_t *fde, *insns, *insns_end;
	struct cie cie;

	pc += (uintptr_t)m->image_delta;
	if (!info || !(fde = fde_search(info, pc)) ||
	    fde_parse(fde, &cie, begin, end, &insns, &insns_end) < 0 || pc < *begin || pc >= *end)
		return -1;
	*begin -= (uintptr_t)m->image_delta;
	*end -= (uintptr_t)m->image_delta;
	return 0;
}

int cp_cfi_is_sigreturn(const struct cp_module *m, uintptr_t pc)
{
	static const uint8_t code[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

	if (!m || pc < m->text_lo || pc + sizeof(code) > m->text_hi)
		return 0;
	return !memcmp((const void *)(pc + (uintptr_t)m->image_delta), code, sizeof(code));
}

size_t cp_cfi_fde_list(const uint8_t *eh_frame, size_t size, struct cp_cfi_fde *out, size_t cap)
{
	const uint8_t *p = eh_frame, *end = eh_frame + size, *body, *rec_end;
	size_t n = 0;

	while (p + 8 <= end && n < cap) {
		uint32_t len, id;
		const uint8_t *insns, *insns_end;
		uintptr_t begin, hi;
		struct cie cie;

		memcpy(&len, p, 4);
		if (len == 0 || record_bounds(p, &body, &rec_end) < 0 || rec_end > end)
			break;
		memcpy(&id, body, 4);
		if (id != 0 && fde_parse(p, &cie, &begin, &hi, &insns, &insns_end) == 0 &&
		    hi > begin) {
			out[n].begin = begin;
			out[n].fde = p;
			n++;
		}
		p = rec_end;
	}
	return n;
}

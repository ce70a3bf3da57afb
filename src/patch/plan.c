/* Deciding whether a function can be patched, and relocating its prologue (pure). */
#include "patch/patch.h"

#include "arch/x86_64/relocate.h"

#include <elf.h>
#include <string.h>

static const char *const status_text[CP_PATCH_NSTATUS] = {
    [CP_PATCH_OK] = "ok",
    [CP_PATCH_TOO_SHORT] = "too short (fewer than 5 bytes of instructions)",
    [CP_PATCH_JUMP_INTO] = "a branch in the function jumps into the first 5 bytes",
    [CP_PATCH_IFUNC] = "IFUNC symbol (resolver, not the function)",
    [CP_PATCH_PLT] = "PLT stub",
    [CP_PATCH_NOT_EXEC] = "not executable",
    [CP_PATCH_UNSUPPORTED] = "prologue instruction cannot be relocated",
    [CP_PATCH_UNDECODABLE] = "instructions do not decode",
    [CP_PATCH_NO_NEAR_MEMORY] = "no memory within +-2 GiB for the stub",
    [CP_PATCH_STRADDLE] = "entry crosses a 16-byte boundary while threads run",
    [CP_PATCH_BUSY] = "a thread stays stopped inside the entry bytes (try again)",
    [CP_PATCH_ALREADY] = "already patched",
    [CP_PATCH_PROTECT] = "code cannot be made writable (mprotect)",
    [CP_PATCH_NOT_FUNC] = "not a function of known size",
    [CP_PATCH_RETURNS_TWICE] = "returns twice or keeps its return address (setjmp, vfork...)",
    [CP_PATCH_NO_CALLER] = "program entry point (entered without a call)",
    [CP_PATCH_NO_FDE] = "no function starts there (no .eh_frame FDE begins at that address)",
};

const char *cp_patch_status_str(int status)
{
	if (status < 0 || status >= CP_PATCH_NSTATUS)
		return "unknown";
	return status_text[status];
}

int cp_patch_check_symbol(unsigned st_type, uint64_t size, const char *section, int exec)
{
	if (st_type == STT_GNU_IFUNC)
		return CP_PATCH_IFUNC;
	if (section && (!strcmp(section, ".plt") || !strncmp(section, ".plt.", 5) ||
			!strcmp(section, ".iplt")))
		return CP_PATCH_PLT;
	if (st_type != STT_FUNC)
		return CP_PATCH_NOT_FUNC;
	if (!exec)
		return CP_PATCH_NOT_EXEC;
	if (size == 0)
		return CP_PATCH_NOT_FUNC;
	if (size < CP_PATCH_JMP_LEN)
		return CP_PATCH_TOO_SHORT;
	return CP_PATCH_OK;
}

int cp_patch_check_name(const char *name)
{
	static const char *const names[] = {
	    "setjmp",	     "_setjmp",	   "__sigsetjmp",  "sigsetjmp",
	    "__setjmp",	     "getcontext", "__getcontext", "swapcontext",
	    "__swapcontext", "vfork",	   "__vfork",	   "clone",
	    "__clone",	     "__clone3",   "__restore_rt", "__clone_internal",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(name, names[i]))
			return CP_PATCH_RETURNS_TWICE;
	return strcmp(name, "_start") ? CP_PATCH_OK : CP_PATCH_NO_CALLER;
}

/* Index of the moved instruction starting at offset o, or -1. */
static int insn_at(const struct cp_patch_plan *plan, uint64_t o)
{
	for (int i = 0; i < plan->ninsn; i++)
		if (plan->off[i] == o)
			return i;
	return -1;
}

/* Decodes whole instructions until at least 5 bytes are covered. */
static int plan_prologue(const uint8_t *code, size_t size, uint64_t addr,
			 struct cp_patch_plan *plan)
{
	unsigned off = 0, roff = 0;
	while (off < CP_PATCH_JMP_LEN) {
		struct cp_x86_insn in;
		if (plan->ninsn == CP_PATCH_MAX_INSNS)
			return CP_PATCH_UNSUPPORTED;
		unsigned len = cp_x86_decode_flow(code + off, size - off, addr + off, &in);
		if (!len) {
			plan->bad_insn = plan->ninsn;
			plan->bad_addr = addr + off;
			/* Probably truncated by the function's end (reading past it could fault).
			 */
			return size - off < CP_X86_MAX_INSN ? CP_PATCH_TOO_SHORT
							    : CP_PATCH_UNDECODABLE;
		}
		unsigned rsize = cp_x86_reloc_size(code + off, &in);
		/* A moved call returns into the original function (cp_x86_encode_call_returning)
		 * when its return address lies past the 5 overwritten bytes: unwinders (C++
		 * exceptions, our own) then see the real caller, not the trampoline. */
		if (rsize && in.flow == CP_X86_FLOW_CALL && off + len >= CP_PATCH_JMP_LEN)
			rsize = CP_X86_CALL_RET_LEN;
		if (!rsize) {
			plan->bad_insn = plan->ninsn;
			plan->bad_addr = addr + off;
			return CP_PATCH_UNSUPPORTED;
		}
		plan->off[plan->ninsn] = (uint8_t)off;
		plan->roff[plan->ninsn] = (uint8_t)roff;
		plan->ninsn++;
		off += len;
		roff += rsize;
		/* A function that ends (ret, jmp, trap) before 5 bytes and has nothing after. */
		if (off < CP_PATCH_JMP_LEN && off >= size)
			return CP_PATCH_TOO_SHORT;
	}
	plan->n = (uint8_t)off;
	plan->off[plan->ninsn] = (uint8_t)off;
	plan->roff[plan->ninsn] = (uint8_t)roff;
	return CP_PATCH_OK;
}

int cp_patch_plan(const uint8_t *code, size_t size, uint64_t addr, struct cp_patch_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->addr = addr;
	if (size < CP_PATCH_JMP_LEN)
		return CP_PATCH_TOO_SHORT;
	int rc = plan_prologue(code, size, addr, plan);
	if (rc)
		return rc;
	/* Branches anywhere in the function (including the prologue itself) that land inside
	 * the moved bytes: after patching those bytes hold the jump, not the instruction. A
	 * branch inside the prologue to one of its own instruction starts is remapped into the
	 * trampoline instead; one into the middle of an instruction is refused. */
	for (size_t off = 0; off < size;) {
		struct cp_x86_insn in;
		unsigned len = cp_x86_decode_flow(code + off, size - off, addr + off, &in);
		if (!len) {
			plan->bad_addr = addr + off;
			return CP_PATCH_UNDECODABLE;
		}
		int direct = in.flow == CP_X86_FLOW_CALL || in.flow == CP_X86_FLOW_JMP ||
			     in.flow == CP_X86_FLOW_JCC;
		if (direct && in.target > addr && in.target < addr + plan->n) {
			if (off >= plan->n || insn_at(plan, in.target - addr) < 0) {
				plan->bad_addr = addr + off;
				return CP_PATCH_JUMP_INTO;
			}
		}
		off += len;
	}
	return CP_PATCH_OK;
}

unsigned cp_patch_build_trampoline(const struct cp_patch_plan *plan, const uint8_t *code,
				   uint64_t tramp_addr, uint8_t *out)
{
	for (int i = 0; i < plan->ninsn; i++) {
		struct cp_x86_insn in;
		uint64_t at = plan->addr + plan->off[i];
		const uint8_t *b = code + plan->off[i];
		if (!cp_x86_decode_flow(b, (size_t)(plan->n - plan->off[i]), at, &in))
			return 0;
		uint64_t target = in.target;
		if (target >= plan->addr && target < plan->addr + plan->n && in.rel_size) {
			int j = insn_at(plan, target - plan->addr);
			if (j < 0)
				return 0;
			target = tramp_addr + plan->roff[j];
		}
		uint64_t to = tramp_addr + plan->roff[i];
		unsigned end = plan->off[i + 1];
		if (in.flow == CP_X86_FLOW_CALL && end >= CP_PATCH_JMP_LEN) {
			if (!cp_x86_encode_call_returning(out + plan->roff[i], to, plan->addr + end,
							  target))
				return 0;
			continue;
		}
		if (!cp_x86_relocate(b, &in, to, target, out + plan->roff[i]))
			return 0;
	}
	unsigned len = plan->roff[plan->ninsn];
	if (!cp_x86_encode_jmp32(out + len, tramp_addr + len, plan->addr + plan->n))
		return 0;
	return len + CP_PATCH_JMP_LEN;
}

/* Load-module registry, the reader side: cp_modules_find, async-signal-safe and
 * lock-free. Slots are immutable once published (except `unloaded`), and the sorted index
 * is read under a sequence counter; a reader that races with a writer falls back to a
 * linear scan of the published slots, which is always consistent. */
#include "runtime/unwind/modules-internal.h"
#include "runtime/unwind/modules.h"

#include "base/sigsafe/banned.h"

uint32_t cp_modules_count(void)
{
	return __atomic_load_n(&cp_mod_n_slots, __ATOMIC_ACQUIRE);
}

const struct cp_module *cp_modules_slot(uint32_t i)
{
	return &cp_mod_slots[i];
}

static const struct cp_module *find_linear(uintptr_t pc)
{
	uint32_t n = __atomic_load_n(&cp_mod_n_slots, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++) {
		const struct cp_module *m = &cp_mod_slots[i];
		if (pc >= m->text_lo && pc < m->text_hi &&
		    !__atomic_load_n(&m->unloaded, __ATOMIC_ACQUIRE))
			return m;
	}
	return NULL;
}

const struct cp_module *cp_modules_find(uintptr_t pc)
{
	uint32_t s1 = __atomic_load_n(&cp_mod_index_seq, __ATOMIC_ACQUIRE);
	uint32_t lo = 0, hi, slot = UINT32_MAX;

	if (s1 & 1)
		return find_linear(pc);
	hi = __atomic_load_n(&cp_mod_index_n, __ATOMIC_RELAXED);
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		uint64_t mlo = __atomic_load_n(&cp_mod_index[mid].lo, __ATOMIC_RELAXED);
		if (pc < mlo) {
			hi = mid;
		} else if (pc >= __atomic_load_n(&cp_mod_index[mid].hi, __ATOMIC_RELAXED)) {
			lo = mid + 1;
		} else {
			slot = __atomic_load_n(&cp_mod_index[mid].slot, __ATOMIC_RELAXED);
			break;
		}
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&cp_mod_index_seq, __ATOMIC_RELAXED) != s1)
		return find_linear(pc);
	if (slot == UINT32_MAX || slot >= CP_MODULES_MAX)
		return NULL;
	if (__atomic_load_n(&cp_mod_slots[slot].unloaded, __ATOMIC_ACQUIRE))
		return NULL;
	return &cp_mod_slots[slot];
}

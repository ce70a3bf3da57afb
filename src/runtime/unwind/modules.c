/* Load-module registry: append-only slots, a seqlock-protected sorted index for lookups.
 *
 * Writers (cp_modules_sync/replay) run outside signal context under `lock`. Readers
 * (cp_modules_find, possibly in a signal handler) take no lock: slots are immutable once
 * published (except `unloaded`), and the sorted index is read under a sequence counter; a
 * reader that races with a writer falls back to a linear scan of the published slots,
 * which is always consistent. */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "base/error.h"
#include "runtime/unwind/cfi.h"
#include "runtime/unwind/modules.h"

struct mod_range {
	uint64_t lo, hi;
	uint32_t slot;
};

static struct cp_module slots[CP_MODULES_MAX];
static struct cp_ehinfo ehinfo[CP_MODULES_MAX];
static uint32_t n_slots;       /* published slots (release/acquire) */
static uint32_t seen[CP_MODULES_MAX]; /* sync pass marker, writer only */
static struct mod_range index_buf[CP_MODULES_MAX];
static uint32_t index_n;
static uint32_t index_seq; /* odd while the index is rewritten */
static uint64_t sync_pass;
static unsigned long last_adds, last_subs;
static struct cp_modules_listener listener;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct sync_ctx {
	uint32_t first_new; /* slots [first_new, n) were added in this pass */
	uint32_t n;         /* slots filled so far (published or not) */
	int overflow;
	int calls;     /* callbacks so far in this pass */
	int unchanged; /* nothing loaded or unloaded since the last pass */
};

static void module_read_build_id(struct cp_module *m, const ElfW(Phdr) *ph)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)(m->bias + ph->p_vaddr);
	const uint8_t *end = p + ph->p_memsz;

	while (p + sizeof(ElfW(Nhdr)) <= end) {
		const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
		size_t name_sz = (n->n_namesz + 3u) & ~3u;
		size_t desc_sz = (n->n_descsz + 3u) & ~3u;
		const uint8_t *name = p + sizeof(*n);
		const uint8_t *desc = name + name_sz;

		if (desc + desc_sz > end)
			return;
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
		    n->n_descsz <= sizeof(m->build_id)) {
			memcpy(m->build_id, desc, n->n_descsz);
			m->build_id_len = n->n_descsz;
			return;
		}
		p = desc + desc_sz;
	}
}

static void module_set_path(struct cp_module *m, const struct dl_phdr_info *info)
{
	uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	const char *name = info->dlpi_name;

	if (vdso && (uintptr_t)info->dlpi_phdr >= vdso && (uintptr_t)info->dlpi_phdr < vdso + 4096) {
		strcpy(m->path, "[vdso]");
	} else if (!name || !name[0]) {
		ssize_t n = readlink("/proc/self/exe", m->path, sizeof(m->path) - 1);
		m->path[n > 0 ? n : 0] = '\0';
	} else {
		strncpy(m->path, name, sizeof(m->path) - 1);
		m->path[sizeof(m->path) - 1] = '\0';
	}
}

/* Fills slot m from info; returns 0 if the object has no executable segment. */
static int module_fill(struct cp_module *m, const struct dl_phdr_info *info)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	memset(m, 0, sizeof(*m));
	m->bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uint64_t a = m->bias + ph->p_vaddr;
			lo = a < lo ? a : lo;
			hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
		} else if (ph->p_type == PT_GNU_EH_FRAME) {
			m->eh_frame_hdr = (const uint8_t *)(uintptr_t)(m->bias + ph->p_vaddr);
			m->eh_frame_hdr_size = ph->p_memsz;
		} else if (ph->p_type == PT_NOTE && !m->build_id_len) {
			module_read_build_id(m, ph);
		}
	}
	if (hi == 0)
		return 0;
	m->text_lo = lo;
	m->text_hi = hi;
	module_set_path(m, info);
	return 1;
}

static int module_same(const struct cp_module *a, const struct cp_module *b)
{
	return a->bias == b->bias && a->text_lo == b->text_lo && a->text_hi == b->text_hi &&
	       !strcmp(a->path, b->path);
}

static int sync_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct sync_ctx *ctx = arg;
	struct cp_module tmp;

	if (ctx->calls++ == 0 && size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		if (sync_pass > 1 && info->dlpi_adds == last_adds && info->dlpi_subs == last_subs) {
			ctx->unchanged = 1;
			return 1;
		}
		last_adds = info->dlpi_adds;
		last_subs = info->dlpi_subs;
	}
	if (!module_fill(&tmp, info))
		return 0;
	for (uint32_t i = 0; i < ctx->n; i++) {
		if (!slots[i].unloaded && module_same(&slots[i], &tmp)) {
			seen[i] = 1;
			return 0;
		}
	}
	if (ctx->n >= CP_MODULES_MAX) {
		ctx->overflow = 1;
		return 0;
	}
	tmp.id = ctx->n;
	tmp.load_seq = sync_pass;
	slots[ctx->n] = tmp;
	seen[ctx->n] = 1;
	ctx->n++;
	return 0;
}

static int range_cmp(const struct mod_range *a, const struct mod_range *b)
{
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Insertion sort into index_buf under the seqlock (n is small; runs outside signals). */
static void index_rebuild(uint32_t n)
{
	uint32_t k = 0;

	__atomic_store_n(&index_seq, index_seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (uint32_t i = 0; i < n; i++) {
		struct mod_range r = {slots[i].text_lo, slots[i].text_hi, i};
		uint32_t j = k;
		if (__atomic_load_n(&slots[i].unloaded, __ATOMIC_RELAXED))
			continue;
		while (j > 0 && range_cmp(&index_buf[j - 1], &r) > 0) {
			index_buf[j] = index_buf[j - 1];
			j--;
		}
		index_buf[j] = r;
		k++;
	}
	__atomic_store_n(&index_n, k, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&index_seq, index_seq + 1, __ATOMIC_RELEASE);
}

int cp_modules_init(const struct cp_modules_listener *l)
{
	pthread_mutex_lock(&lock);
	if (l)
		listener = *l;
	else
		memset(&listener, 0, sizeof(listener));
	pthread_mutex_unlock(&lock);
	return cp_modules_sync();
}

static void sync_publish(struct sync_ctx *ctx, int *unloaded_any)
{
	uint32_t old_n = ctx->first_new;

	for (uint32_t i = old_n; i < ctx->n; i++) {
		cp_cfi_prepare(&slots[i], &ehinfo[i]);
		slots[i].unwind_private = &ehinfo[i];
	}
	__atomic_store_n(&n_slots, ctx->n, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < old_n; i++) {
		if (!seen[i] && !slots[i].unloaded) {
			__atomic_store_n(&slots[i].unloaded, 1, __ATOMIC_RELEASE);
			*unloaded_any = 1;
		}
	}
	index_rebuild(ctx->n);
}

int cp_modules_sync(void)
{
	struct sync_ctx ctx;
	int unloaded_any = 0;

	pthread_mutex_lock(&lock);
	ctx.first_new = ctx.n = n_slots;
	ctx.overflow = ctx.calls = ctx.unchanged = 0;
	sync_pass++;
	memset(seen, 0, sizeof(seen[0]) * ctx.n);
	dl_iterate_phdr(sync_one, &ctx);
	if (ctx.unchanged) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	sync_publish(&ctx, &unloaded_any);
	if (unloaded_any)
		cp_unwind_cache_flush();
	for (uint32_t i = 0; i < ctx.first_new; i++)
		if (!seen[i] && slots[i].unloaded == 1 && listener.unloaded) {
			slots[i].unloaded = 2; /* announced */
			listener.unloaded(&slots[i], listener.arg);
		}
	for (uint32_t i = ctx.first_new; i < ctx.n; i++)
		if (listener.loaded)
			listener.loaded(&slots[i], listener.arg);
	pthread_mutex_unlock(&lock);
	if (ctx.overflow)
		return cp_error(CP_ENOMEM, "module registry: more than %d load modules; "
					   "samples in the rest are unattributed", CP_MODULES_MAX);
	return 0;
}

void cp_modules_replay(void)
{
	pthread_mutex_lock(&lock);
	for (uint32_t i = 0; i < n_slots; i++)
		if (!slots[i].unloaded && listener.loaded)
			listener.loaded(&slots[i], listener.arg);
	pthread_mutex_unlock(&lock);
}

static const struct cp_module *find_linear(uintptr_t pc)
{
	uint32_t n = __atomic_load_n(&n_slots, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++) {
		const struct cp_module *m = &slots[i];
		if (pc >= m->text_lo && pc < m->text_hi &&
		    !__atomic_load_n(&m->unloaded, __ATOMIC_ACQUIRE))
			return m;
	}
	return NULL;
}

const struct cp_module *cp_modules_find(uintptr_t pc)
{
	uint32_t s1 = __atomic_load_n(&index_seq, __ATOMIC_ACQUIRE);
	uint32_t lo = 0, hi, slot = UINT32_MAX;

	if (s1 & 1)
		return find_linear(pc);
	hi = __atomic_load_n(&index_n, __ATOMIC_RELAXED);
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		uint64_t mlo = __atomic_load_n(&index_buf[mid].lo, __ATOMIC_RELAXED);
		if (pc < mlo) {
			hi = mid;
		} else if (pc >= __atomic_load_n(&index_buf[mid].hi, __ATOMIC_RELAXED)) {
			lo = mid + 1;
		} else {
			slot = __atomic_load_n(&index_buf[mid].slot, __ATOMIC_RELAXED);
			break;
		}
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&index_seq, __ATOMIC_RELAXED) != s1)
		return find_linear(pc);
	if (slot == UINT32_MAX || slot >= CP_MODULES_MAX)
		return NULL;
	if (__atomic_load_n(&slots[slot].unloaded, __ATOMIC_ACQUIRE))
		return NULL;
	return &slots[slot];
}

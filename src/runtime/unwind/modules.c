/* Load-module registry, the writer side: append-only slots and a seqlock-protected sorted
 * index, updated by cp_modules_sync/replay outside signal context under `lock`. The
 * lock-free, async-signal-safe reader (cp_modules_find) is in modules-find.c. */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "base/error.h"
#include "runtime/unwind/cfi.h"
#include "runtime/unwind/modules-internal.h"
#include "runtime/unwind/modules.h"

struct cp_module cp_mod_slots[CP_MODULES_MAX];
uint32_t cp_mod_n_slots;
struct cp_mod_range cp_mod_index[CP_MODULES_MAX];
uint32_t cp_mod_index_n;
uint32_t cp_mod_index_seq;

static struct cp_ehinfo ehinfo[CP_MODULES_MAX];
static uint32_t seen[CP_MODULES_MAX]; /* sync pass marker, writer only */
static uint64_t sync_pass;
static uint64_t event_seq; /* load/unload events numbered so far (under lock) */
static unsigned long last_adds, last_subs;
static struct cp_modules_listener listener;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct sync_ctx {
	uint32_t first_new; /* slots [first_new, n) were added in this pass */
	uint32_t n;	    /* slots filled so far (published or not) */
	int overflow;
	int calls;     /* callbacks so far in this pass */
	int unchanged; /* nothing loaded or unloaded since the last pass */
};

void cp_module_read_build_id(struct cp_module *m, const uint8_t *p, size_t size)
{
	const uint8_t *end = p + size;

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

	if (vdso && (uintptr_t)info->dlpi_phdr >= vdso &&
	    (uintptr_t)info->dlpi_phdr < vdso + 4096) {
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
			cp_module_read_build_id(
			    m, (const uint8_t *)(uintptr_t)(m->bias + ph->p_vaddr), ph->p_memsz);
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

	if (ctx->calls++ == 0 &&
	    size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
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
		if (!cp_mod_slots[i].unloaded && module_same(&cp_mod_slots[i], &tmp)) {
			seen[i] = 1;
			return 0;
		}
	}
	if (ctx->n >= CP_MODULES_MAX) {
		ctx->overflow = 1;
		return 0;
	}
	tmp.id = ctx->n;
	tmp.load_seq = tmp.unload_seq = 0; /* numbered when published */
	cp_mod_slots[ctx->n] = tmp;
	seen[ctx->n] = 1;
	ctx->n++;
	return 0;
}

static int range_cmp(const struct cp_mod_range *a, const struct cp_mod_range *b)
{
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Insertion sort into cp_mod_index under the seqlock (n is small; runs outside signals). */
static void index_rebuild(uint32_t n)
{
	uint32_t k = 0;

	__atomic_store_n(&cp_mod_index_seq, cp_mod_index_seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (uint32_t i = 0; i < n; i++) {
		struct cp_mod_range r = {cp_mod_slots[i].text_lo, cp_mod_slots[i].text_hi, i};
		uint32_t j = k;
		if (__atomic_load_n(&cp_mod_slots[i].unloaded, __ATOMIC_RELAXED))
			continue;
		while (j > 0 && range_cmp(&cp_mod_index[j - 1], &r) > 0) {
			cp_mod_index[j] = cp_mod_index[j - 1];
			j--;
		}
		cp_mod_index[j] = r;
		k++;
	}
	__atomic_store_n(&cp_mod_index_n, k, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&cp_mod_index_seq, cp_mod_index_seq + 1, __ATOMIC_RELEASE);
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

	for (uint32_t i = 0; i < old_n; i++) {
		if (!seen[i] && !cp_mod_slots[i].unloaded) {
			cp_mod_slots[i].unload_seq = ++event_seq;
			__atomic_store_n(&cp_mod_slots[i].unloaded, 1, __ATOMIC_RELEASE);
			*unloaded_any = 1;
		}
	}
	for (uint32_t i = old_n; i < ctx->n; i++) {
		cp_mod_slots[i].load_seq = ++event_seq;
		cp_cfi_prepare(&cp_mod_slots[i], &ehinfo[i]);
		cp_mod_slots[i].unwind_private = &ehinfo[i];
	}
	__atomic_store_n(&cp_mod_n_slots, ctx->n, __ATOMIC_RELEASE);
	index_rebuild(ctx->n);
}

int cp_modules_sync(void)
{
	struct sync_ctx ctx;
	int unloaded_any = 0;

	pthread_mutex_lock(&lock);
	ctx.first_new = ctx.n = cp_mod_n_slots;
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
		if (!seen[i] && cp_mod_slots[i].unloaded == 1 && listener.unloaded) {
			cp_mod_slots[i].unloaded = 2; /* announced */
			listener.unloaded(&cp_mod_slots[i], listener.arg);
		}
	for (uint32_t i = ctx.first_new; i < ctx.n; i++)
		if (listener.loaded)
			listener.loaded(&cp_mod_slots[i], listener.arg);
	pthread_mutex_unlock(&lock);
	if (ctx.overflow)
		return cp_error(CP_ENOMEM,
				"module registry: more than %d load modules; "
				"samples in the rest are unattributed",
				CP_MODULES_MAX);
	return 0;
}

void cp_modules_replay(void)
{
	pthread_mutex_lock(&lock);
	for (uint32_t i = 0; i < cp_mod_n_slots; i++)
		if (!cp_mod_slots[i].unloaded && listener.loaded)
			listener.loaded(&cp_mod_slots[i], listener.arg);
	pthread_mutex_unlock(&lock);
}

int cp_modules_add(const struct cp_module *m)
{
	uint32_t n;

	pthread_mutex_lock(&lock);
	n = cp_mod_n_slots;
	if (n >= CP_MODULES_MAX) {
		pthread_mutex_unlock(&lock);
		return cp_error(CP_ENOMEM, "module registry: more than %d load modules",
				CP_MODULES_MAX);
	}
	cp_mod_slots[n] = *m;
	cp_mod_slots[n].id = n;
	cp_mod_slots[n].unloaded = 0;
	cp_mod_slots[n].unload_seq = 0;
	cp_mod_slots[n].load_seq = ++event_seq;
	cp_cfi_prepare(&cp_mod_slots[n], &ehinfo[n]);
	cp_mod_slots[n].unwind_private = &ehinfo[n];
	__atomic_store_n(&cp_mod_n_slots, n + 1, __ATOMIC_RELEASE);
	index_rebuild(n + 1);
	if (listener.loaded)
		listener.loaded(&cp_mod_slots[n], listener.arg);
	pthread_mutex_unlock(&lock);
	return (int)n;
}

void cp_modules_unload_all(void)
{
	pthread_mutex_lock(&lock);
	for (uint32_t i = 0; i < cp_mod_n_slots; i++) {
		if (cp_mod_slots[i].unloaded)
			continue;
		cp_mod_slots[i].unload_seq = ++event_seq;
		__atomic_store_n(&cp_mod_slots[i].unloaded, 2, __ATOMIC_RELEASE);
		if (listener.unloaded)
			listener.unloaded(&cp_mod_slots[i], listener.arg);
	}
	index_rebuild(cp_mod_n_slots);
	pthread_mutex_unlock(&lock);
	cp_unwind_cache_flush();
}

/* The table of task contexts (omp.h: cp_omp_intern). A task may run after the function
 * that created it has returned, so its context cannot live in its creator's frame; one
 * copy of each distinct (task function, creating context) is kept for the life of the
 * process, so memory grows with the distinct contexts, not with the tasks. Outside
 * signal context: a mutex guards the table. */
#include "runtime/omp/omp.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define CTX_SLOTS 8192 /* power of two; at most 3/4 of them used */
#define CHUNK (1u << 20)

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct cp_omp_ctx *ctx_table[CTX_SLOTS];
static uint32_t ctx_count;
static char *chunk;
static size_t chunk_left;

static uint64_t ctx_hash(void (*fn)(void *), const struct cp_frame *frames, int n)
{
	uint64_t h = (uintptr_t)fn * 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < n; i++) {
		h ^= frames[i].pc + frames[i].kind;
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

static int ctx_equal(const struct cp_omp_ctx *c, void (*fn)(void *), const struct cp_frame *frames,
		     int n, enum cp_unwind_status status, enum cp_omp_via via)
{
	if (c->fn != fn || c->nframes != n || c->status != (uint32_t)status ||
	    c->via != (uint32_t)via)
		return 0;
	for (int i = 0; i < n; i++)
		if (c->frames[i].pc != frames[i].pc || c->frames[i].kind != frames[i].kind)
			return 0;
	return 1;
}

/* size bytes, 16-aligned, from the current chunk (a new one when it is used up). */
static void *ctx_alloc(size_t size)
{
	size = (size + 15) & ~(size_t)15;
	if (size > chunk_left) {
		size_t len = size > CHUNK ? size : CHUNK;
		void *p =
		    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		chunk = p;
		chunk_left = len;
	}
	void *p = chunk;
	chunk += size;
	chunk_left -= size;
	return p;
}

static const struct cp_omp_ctx *ctx_new(void (*fn)(void *), const struct cp_frame *frames, int n,
					enum cp_unwind_status status, enum cp_omp_via via)
{
	struct cp_omp_ctx *c = ctx_alloc(sizeof(*c) + (size_t)n * sizeof(frames[0]));
	if (!c)
		return NULL;
	struct cp_frame *copy = (struct cp_frame *)(c + 1);
	memcpy(copy, frames, (size_t)n * sizeof(frames[0]));
	c->fn = fn;
	c->data = NULL;
	c->frames = copy;
	c->nframes = n;
	c->status = (uint32_t)status;
	c->kind = CP_FRAME_TASK;
	c->via = (uint32_t)via;
	return c;
}

const struct cp_omp_ctx *cp_omp_intern(void (*fn)(void *), const struct cp_frame *frames, int n,
				       enum cp_unwind_status status, enum cp_omp_via via)
{
	uint64_t h = ctx_hash(fn, frames, n);
	const struct cp_omp_ctx *found = NULL;
	pthread_mutex_lock(&ctx_lock);
	uint32_t i = (uint32_t)h & (CTX_SLOTS - 1);
	for (; ctx_table[i]; i = (i + 1) & (CTX_SLOTS - 1)) {
		if (ctx_equal(ctx_table[i], fn, frames, n, status, via)) {
			found = ctx_table[i];
			break;
		}
	}
	if (!found && ctx_count < CTX_SLOTS / 4 * 3) {
		found = ctx_new(fn, frames, n, status, via);
		if (found) {
			ctx_table[i] = found;
			ctx_count++;
		}
	}
	pthread_mutex_unlock(&ctx_lock);
	return found;
}

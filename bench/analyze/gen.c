/* Synthetic measurement directory for the `callpath analyze` benchmark, written with the
 * format structs of src/format/measure.h exactly as the runtime lays them out.
 *
 *   gen DIR MODULE BUILD_ID_HEX TEXT_LO TEXT_HI threads THREADS SAMPLES CONTEXTS DEPTH [SKEW]
 *   gen DIR MODULE BUILD_ID_HEX TEXT_LO TEXT_HI procs PROCS SAMPLES_PER_PROC
 *   gen DIR MODULE BUILD_ID_HEX TEXT_LO TEXT_HI ranks RANKS THREADS SAMPLES_PER_THREAD CONTEXTS DEPTH
 *
 * "threads": one process, THREADS thread files sharing SAMPLES samples (about equally),
 * drawn from CONTEXTS distinct calling contexts of about DEPTH frames (a random trie with
 * shared prefixes; context = CONTEXTS * u^SKEW for u uniform in [0, 1), so SKEW 1 spreads
 * samples evenly and larger SKEWs concentrate them on hot contexts as profiles do; default
 * 1), every frame an address in [TEXT_LO, TEXT_HI) of
 * MODULE (ELF virtual addresses), so that correlation does real structure lookups.
 * "procs": PROCS process images (forked children) of one thread each, SAMPLES_PER_PROC
 * samples each over 200 contexts: the many-files case. "ranks": an MPI job, RANKS process
 * images (rank in the file headers, and in the ENV record as older runtimes wrote it) of THREADS
 * threads each, every thread SAMPLES_PER_THREAD samples over the same CONTEXTS contexts of
 * about DEPTH frames (the ranks run one program). Deterministic (fixed seed). */
#include "format/measure.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const char *g_module;
static uint8_t g_bid[32];
static uint32_t g_bidlen;
static uint64_t g_lo, g_hi;
static double g_skew = 1;
static int32_t g_rank = CP_MF_NO_RANK; /* header rank of the files being written */
static uint32_t g_nranks;

static void die(const char *m)
{
	fprintf(stderr, "gen: %s: %s\n", m, strerror(errno));
	exit(1);
}

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f))
		die(path);
}

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			die("realloc");
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void pad8(struct buf *b)
{
	static const uint8_t z[8];
	if (b->len % 8)
		put(b, z, 8 - b->len % 8);
}

static void record(struct buf *b, uint32_t type, const void *pay, size_t n)
{
	struct cp_mf_record r = {type, (uint32_t)(sizeof r + n)};
	put(b, &r, sizeof r);
	put(b, pay, n);
	pad8(b);
}

static void write_proc(const char *dir, int pid, int ppid, uint32_t flags, uint32_t nthreads,
		       int rank)
{
	struct buf b = {0};
	struct cp_mf_process p;
	memset(&p, 0, sizeof p);
	memcpy(p.h.magic, CP_MF_MAGIC, 8);
	p.h.version = CP_MF_VERSION;
	p.h.version_minor = CP_MF_VERSION_MINOR;
	p.h.rank = g_rank;
	p.h.nranks = g_nranks;
	p.h.kind = CP_MF_KIND_PROCESS;
	p.h.header_size = sizeof p;
	p.h.flags = CP_MF_FINISHED | flags;
	p.pid = pid;
	p.ppid = ppid;
	p.nmetrics = 1;
	p.start_ns = 1700000000000000000ull + (uint64_t)pid * 1000;
	p.end_ns = p.start_ns + 10000000000ull;
	p.nthreads = nthreads;
	strcpy(p.hostname, "benchhost");
	strcpy(p.metrics[0].name, "cputime");
	strcpy(p.metrics[0].unit, "ns");
	p.metrics[0].source = CP_MF_SRC_CPUTIME;
	p.metrics[0].mechanism = CP_MF_MECH_PERF_TASK_CLOCK;
	p.metrics[0].period = 1000000;
	put(&b, &p, sizeof p);
	static const char cmd[] = "bench-app\0--synthetic";
	record(&b, CP_MF_REC_CMDLINE, cmd, sizeof cmd);
	if (rank >= 0) { /* as older runtimes wrote it for an MPI rank */
		char env[64];
		int n = snprintf(env, sizeof env, "CALLPATH_RANK=%d", rank);
		record(&b, CP_MF_REC_ENV, env, (size_t)n + 1);
	}
	struct cp_mf_module m;
	memset(&m, 0, sizeof m);
	m.id = 0;
	m.build_id_len = g_bidlen;
	memcpy(m.build_id, g_bid, g_bidlen);
	m.bias = 0x7f0000000000ull;
	m.text_lo = m.bias + g_lo;
	m.text_hi = m.bias + g_hi;
	size_t n = strlen(g_module) + 1;
	uint8_t *pay = calloc(1, sizeof m + n);
	memcpy(pay, &m, sizeof m);
	memcpy(pay + sizeof m, g_module, n);
	record(&b, CP_MF_REC_MODULE, pay, sizeof m + n);
	free(pay);
	((struct cp_mf_header *)b.p)->used = b.len;
	char path[4096];
	snprintf(path, sizeof path, "%s/%d.0.proc", dir, pid);
	write_file(path, b.p, b.len);
	free(b.p);
}

/* Contexts: ctx[i] = frames[ctx_off[i] .. ctx_off[i] + ctx_len[i]) (return addresses, the
 * last one the sampled PC). */
static uint64_t *frames;
static size_t *ctx_off, *ctx_len;

static uint64_t addr(void)
{
	return g_lo + rnd() % (g_hi - g_lo);
}

static void make_contexts(size_t n, size_t depth)
{
	size_t alloc = n * (depth + 8) + 64;
	frames = malloc(alloc * sizeof(*frames));
	ctx_off = malloc(n * sizeof(*ctx_off));
	ctx_len = malloc(n * sizeof(*ctx_len));
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = depth / 2 + rnd() % (depth + 1); /* depth/2 .. 3*depth/2 */
		if (len < 2)
			len = 2;
		if (used + len > alloc) {
			alloc = (used + len) * 2;
			frames = realloc(frames, alloc * sizeof(*frames));
		}
		size_t keep = 0;
		if (i) {
			/* share a prefix of an earlier context: as in programs, contexts mostly
			 * differ in their last few frames (2 + a geometric number, mean 4) */
			size_t j = rnd() % i, m = ctx_len[j] < len ? ctx_len[j] : len, d = 2;
			while (d < m && rnd() % 4)
				d++;
			keep = m > d ? m - d : 0;
			memcpy(frames + used, frames + ctx_off[j], keep * sizeof(*frames));
		}
		for (size_t k = keep; k < len; k++)
			frames[used + k] = addr();
		ctx_off[i] = used;
		ctx_len[i] = len;
		used += len;
	}
}

/* A thread's calling context tree, built as the runtime does: a child table per node. */
struct tnode {
	uint32_t parent;
	uint16_t kind;
	uint64_t offset;
	uint64_t value;
	uint32_t first_child, next;
};

struct tree {
	struct tnode *n;
	size_t len, cap;
};

static uint32_t tree_child(struct tree *t, uint32_t parent, uint16_t kind, uint64_t off)
{
	for (uint32_t c = t->n[parent].first_child; c; c = t->n[c].next)
		if (t->n[c].kind == kind && t->n[c].offset == off)
			return c;
	if (t->len == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->n = realloc(t->n, t->cap * sizeof(*t->n));
	}
	uint32_t i = (uint32_t)t->len++;
	t->n[i] = (struct tnode){parent, kind, off, 0, 0, t->n[parent].first_child};
	t->n[parent].first_child = i;
	return i;
}

static void write_thread(const char *dir, int pid, uint32_t tidx, size_t samples, size_t nctx)
{
	struct tree t = {0};
	t.cap = 1024;
	t.n = calloc(t.cap, sizeof(*t.n));
	t.len = 1;
	t.n[0].parent = UINT32_MAX;
	uint64_t frames_total = 0;
	for (size_t s = 0; s < samples; s++) {
		double u = (double)(rnd() >> 11) / 9007199254740992.0;
		size_t c = (size_t)((double)nctx * pow(u, g_skew));
		if (c >= nctx)
			c = nctx - 1;
		const uint64_t *f = frames + ctx_off[c];
		size_t len = ctx_len[c];
		uint32_t at = 0;
		for (size_t k = 0; k + 1 < len; k++)
			at = tree_child(&t, at, CP_MF_NODE_CALL, f[k]);
		at = tree_child(&t, at, CP_MF_NODE_PC, f[len - 1]);
		t.n[at].value += 1000000;
		frames_total += len;
	}
	struct buf b = {0};
	struct cp_mf_thread h;
	memset(&h, 0, sizeof h);
	memcpy(h.h.magic, CP_MF_MAGIC, 8);
	h.h.version = CP_MF_VERSION;
	h.h.version_minor = CP_MF_VERSION_MINOR;
	h.h.rank = g_rank;
	h.h.nranks = g_nranks;
	h.h.kind = CP_MF_KIND_THREAD;
	h.h.header_size = sizeof h;
	h.h.flags = CP_MF_FINISHED;
	h.pid = pid;
	h.tid = pid + (int)tidx;
	h.tidx = tidx;
	h.nmetrics = 1;
	h.node_size = sizeof(struct cp_mf_node) + 8;
	h.start_ns = 1700000000000000000ull;
	h.end_ns = h.start_ns + 10000000000ull;
	h.cpu_ns = samples * 1000000ull;
	h.samples[0] = samples;
	h.unwind_complete = samples;
	h.frames = frames_total;
	snprintf(h.name, sizeof h.name, "worker-%u", tidx % 10000u);
	put(&b, &h, sizeof h);
	for (size_t i = 0; i < t.len; i++) {
		struct cp_mf_node n;
		memset(&n, 0, sizeof n);
		n.parent = t.n[i].parent;
		n.kind = t.n[i].kind;
		n.module = i ? 0 : CP_MF_MODULE_NONE;
		n.offset = t.n[i].offset;
		put(&b, &n, sizeof n);
		put(&b, &t.n[i].value, 8);
	}
	((struct cp_mf_header *)b.p)->used = b.len;
	char path[4096];
	snprintf(path, sizeof path, "%s/%d.0.%u.thr", dir, pid, tidx);
	write_file(path, b.p, b.len);
	free(b.p);
	free(t.n);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 9) {
		fprintf(stderr, "usage: gen DIR MODULE BUILD_ID_HEX TEXT_LO TEXT_HI threads THREADS SAMPLES CONTEXTS DEPTH\n"
				"       gen DIR MODULE BUILD_ID_HEX TEXT_LO TEXT_HI procs PROCS SAMPLES_PER_PROC\n"
				"       gen DIR MODULE BUILD_ID_HEX TEXT_LO TEXT_HI ranks RANKS THREADS SAMPLES_PER_THREAD CONTEXTS DEPTH\n");
		return 2;
	}
	const char *dir = argv[1];
	g_module = argv[2];
	for (const char *h = argv[3]; h[0] && h[1] && g_bidlen < 32; h += 2)
		g_bid[g_bidlen++] = (uint8_t)(hexval(h[0]) * 16 + hexval(h[1]));
	g_lo = strtoull(argv[4], NULL, 0);
	g_hi = strtoull(argv[5], NULL, 0);
	if (g_hi <= g_lo)
		return fprintf(stderr, "gen: empty text range\n"), 2;
	if (mkdir(dir, 0755) && errno != EEXIST)
		die(dir);
	if (!strcmp(argv[6], "threads") && argc >= 11) {
		int nthr = atoi(argv[7]);
		size_t samples = strtoull(argv[8], NULL, 0), nctx = strtoull(argv[9], NULL, 0);
		size_t depth = strtoull(argv[10], NULL, 0);
		if (argc > 11)
			g_skew = strtod(argv[11], NULL);
		make_contexts(nctx, depth);
		write_proc(dir, 1000, 1, 0, (uint32_t)nthr, -1);
		for (int i = 0; i < nthr; i++)
			write_thread(dir, 1000, (uint32_t)i, samples / (size_t)nthr, nctx);
	} else if (!strcmp(argv[6], "procs")) {
		int nproc = atoi(argv[7]);
		size_t samples = strtoull(argv[8], NULL, 0);
		make_contexts(200, 20);
		for (int i = 0; i < nproc; i++) {
			write_proc(dir, 10000 + i, i ? 10000 : 1, i ? CP_MF_FORK_CHILD : 0, 1, -1);
			write_thread(dir, 10000 + i, 0, samples, 200);
		}
	} else if (!strcmp(argv[6], "ranks") && argc >= 12) {
		int nrank = atoi(argv[7]), nthr = atoi(argv[8]);
		size_t samples = strtoull(argv[9], NULL, 0), nctx = strtoull(argv[10], NULL, 0);
		make_contexts(nctx, strtoull(argv[11], NULL, 0));
		g_nranks = (uint32_t)nrank;
		for (int r = 0; r < nrank; r++) {
			g_rank = r;
			write_proc(dir, 20000 + r, 1, 0, (uint32_t)nthr, r);
			for (int i = 0; i < nthr; i++)
				write_thread(dir, 20000 + r, (uint32_t)i, samples, nctx);
		}
	} else {
		fprintf(stderr, "gen: unknown mode %s\n", argv[6]);
		return 2;
	}
	return 0;
}

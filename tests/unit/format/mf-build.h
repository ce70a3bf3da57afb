/* Test helper: lays out measurement files (measure.h) in memory, the way the runtime
 * writes them, so that reader and report tests run on hand-built inputs. */
#ifndef CP_TEST_MF_BUILD_H
#define CP_TEST_MF_BUILD_H

#include "format/measure.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mfb {
	uint8_t *buf;
	size_t len, cap;
	uint32_t nmetrics;
};

static inline void mfb_put(struct mfb *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 256;
		b->buf = realloc(b->buf, b->cap);
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static inline void mfb_pad8(struct mfb *b)
{
	static const uint8_t zero[8];
	if (b->len % 8)
		mfb_put(b, zero, 8 - b->len % 8);
}

static inline void mfb_header(struct cp_mf_header *h, uint32_t kind, uint32_t size)
{
	memcpy(h->magic, CP_MF_MAGIC, 8);
	h->version = CP_MF_VERSION;
	h->kind = kind;
	h->header_size = size;
	h->flags = CP_MF_FINISHED;
}

/* Starts a process file with nmetrics metrics named names[i] ("ns" unit, cputime). */
static inline void mfb_proc(struct mfb *b, int pid, unsigned gen, uint32_t nmetrics,
			    const char *const *names)
{
	struct cp_mf_process p;
	memset(&p, 0, sizeof p);
	memset(b, 0, sizeof *b);
	mfb_header(&p.h, CP_MF_KIND_PROCESS, sizeof p);
	p.pid = pid;
	p.gen = gen;
	p.nmetrics = nmetrics;
	p.start_ns = 1000000000ull;
	p.end_ns = 3000000000ull;
	strcpy(p.hostname, "testhost");
	for (uint32_t i = 0; i < nmetrics; i++) {
		snprintf(p.metrics[i].name, sizeof p.metrics[i].name, "%s", names[i]);
		strcpy(p.metrics[i].unit, "ns");
		p.metrics[i].source = CP_MF_SRC_CPUTIME;
		p.metrics[i].mechanism = CP_MF_MECH_PERF_TASK_CLOCK;
		p.metrics[i].period = 1000000;
	}
	b->nmetrics = nmetrics;
	mfb_put(b, &p, sizeof p);
}

static inline void mfb_record(struct mfb *b, uint32_t type, const void *payload, size_t len)
{
	struct cp_mf_record r = {type, (uint32_t)(sizeof r + len)};
	mfb_put(b, &r, sizeof r);
	mfb_put(b, payload, len);
	mfb_pad8(b);
}

static inline void mfb_module(struct mfb *b, uint32_t id, const char *path, uint64_t bias)
{
	struct cp_mf_module m;
	memset(&m, 0, sizeof m);
	m.id = id;
	m.bias = bias;
	m.text_lo = bias + 0x1000;
	m.text_hi = bias + 0x9000;
	m.build_id_len = 4;
	memcpy(m.build_id, "\xde\xad\xbe\xef", 4);
	size_t n = strlen(path) + 1;
	uint8_t *pay = calloc(1, sizeof m + n);
	memcpy(pay, &m, sizeof m);
	memcpy(pay + sizeof m, path, n);
	mfb_record(b, CP_MF_REC_MODULE, pay, sizeof m + n);
	free(pay);
}

static inline void mfb_string(struct mfb *b, uint32_t type, const char *s, size_t len)
{
	mfb_record(b, type, s, len);
}

/* Starts a thread file and writes its root node. */
static inline void mfb_thread(struct mfb *b, int pid, unsigned gen, uint32_t tidx,
			      uint32_t nmetrics)
{
	struct cp_mf_thread t;
	memset(&t, 0, sizeof t);
	memset(b, 0, sizeof *b);
	mfb_header(&t.h, CP_MF_KIND_THREAD, sizeof t);
	t.pid = pid;
	t.tid = pid + (int)tidx;
	t.gen = gen;
	t.tidx = tidx;
	t.nmetrics = nmetrics;
	t.node_size = (uint32_t)(sizeof(struct cp_mf_node) + 8 * nmetrics);
	t.cpu_ns = 2000000000ull;
	t.samples[0] = 2000;
	t.unwind_complete = 1990;
	t.unwind_partial = 10;
	t.frames = 10000;
	strcpy(t.name, "worker");
	b->nmetrics = nmetrics;
	mfb_put(b, &t, sizeof t);
	struct cp_mf_node root = {UINT32_MAX, CP_MF_NODE_ROOT, 0, CP_MF_MODULE_NONE, 0, 0};
	mfb_put(b, &root, sizeof root);
	uint64_t zero[CP_MF_MAX_METRICS] = {0};
	mfb_put(b, zero, 8 * nmetrics);
}

/* Appends a node; returns its index. vals may be NULL (zeros). */
static inline uint32_t mfb_node(struct mfb *b, uint32_t parent, uint16_t kind, uint32_t module,
				uint64_t offset, const uint64_t *vals)
{
	struct cp_mf_node n = {parent, kind, 0, module, 0, offset};
	size_t node_size = sizeof n + 8 * b->nmetrics;
	uint32_t idx = (uint32_t)((b->len - sizeof(struct cp_mf_thread)) / node_size);
	mfb_put(b, &n, sizeof n);
	uint64_t zero[CP_MF_MAX_METRICS] = {0};
	mfb_put(b, vals ? vals : zero, 8 * b->nmetrics);
	return idx;
}

/* Publishes everything written so far (the header's used field). */
static inline void mfb_finish(struct mfb *b)
{
	uint64_t used = b->len;
	memcpy(b->buf + offsetof(struct cp_mf_header, used), &used, sizeof used);
}

static inline int mfb_write(const struct mfb *b, const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t n = fwrite(b->buf, 1, b->len, f);
	return fclose(f) || n != b->len ? -1 : 0;
}

/* A fresh directory $TMPDIR/NAME.XXXXXX for a test's files (dir: 256 bytes); 0 or -1. */
static inline int mfb_tmpdir(char *dir, const char *name)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, 256, "%s/%s.XXXXXX", tmp ? tmp : "/tmp", name);
	return mkdtemp(dir) ? 0 : -1;
}

/* Removes such a directory and everything in it; 0 or -1. */
static inline int mfb_rmdir(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif

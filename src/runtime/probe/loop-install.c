/* Loop probes' installation (control request `loops`, format/control.h): the CLI, which
 * has the analyzer, sends a function's loops and instrumented edges; the function is
 * relocated whole with a snippet on each edge (patch/relocate-fn.h) and its entry probe
 * continues into the copy instead of its original trampoline. The function must be
 * probed already (the CLI adds it first). Outside signal context, under probe_lock.
 *
 * Request argument (space-separated):
 *   MODULE-PATH FUNC-VADDR SIZE h=HDR[,HDR...] EDGE...
 * with addresses in hex (ELF virtual addresses of the module), loops numbered by their
 * position in h=, and EDGE = SRC:t|f:EVENTS, t the taken edge of the instruction at SRC
 * (or its jmp/ret), f its fall-through edge, EVENTS like x1.e0.b2 (exit of loop 1,
 * entry of loop 0, back edge of loop 2), in the order they are to be counted. */
#include "runtime/probe/probe-internal.h"

#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

#include "base/hash.h"
#include "patch/relocate-fn.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void cp_loop_entry(void); /* entry.S */

/* The module mapped from path (as given, or after resolving symbolic links). */
static const struct cp_module *module_by_path(const char *path)
{
	static char real[PATH_MAX];
	for (uint32_t i = 0, n = cp_modules_count(); i < n; i++) {
		const struct cp_module *m = cp_modules_slot(i);
		if (__atomic_load_n(&m->unloaded, __ATOMIC_ACQUIRE))
			continue;
		if (!strcmp(m->path, path) || (realpath(m->path, real) && !strcmp(real, path)))
			return m;
	}
	return NULL;
}

static struct cp_probe *probe_at(uint64_t addr)
{
	for (uint32_t i = 0; i < cp_probe_g.nprobes; i++)
		if (cp_probe_g.probes[i].addr == addr && cp_probe_g.probes[i].patch.committed)
			return &cp_probe_g.probes[i];
	return NULL;
}

/* h=HDR,HDR...: the loops, appended to cp_probe_g.loops; *first gets the first index. */
static int parse_headers(char *tok, const struct cp_module *m, const struct cp_probe *p,
			 uint32_t *first, uint32_t *n)
{
	if (strncmp(tok, "h=", 2))
		return -1;
	*first = cp_probe_g.nloops;
	*n = 0;
	for (char *s = tok + 2, *save = NULL, *h; (h = strtok_r(s, ",", &save)); s = NULL) {
		if (cp_probe_g.nloops == CP_LOOP_MAX)
			return -1;
		struct cp_loop_rt *L = &cp_probe_g.loops[cp_probe_g.nloops++];
		L->probe = p->index;
		L->module = m->id;
		L->header = strtoull(h, NULL, 16);
		(*n)++;
	}
	return *n ? 0 : -1;
}

/* SRC:t|f:EVENTS into a point and its edge record. */
static int parse_edge(char *tok, const struct cp_module *m, uint32_t first, uint32_t nloops,
		      struct cp_reloc_point *pt)
{
	char *end;
	uint64_t src = strtoull(tok, &end, 16);
	if (*end != ':' || (end[1] != 't' && end[1] != 'f') || end[2] != ':' ||
	    cp_probe_g.nedges == CP_LOOP_EDGES)
		return -1;
	struct cp_loop_edge_rt *e = &cp_probe_g.edges[cp_probe_g.nedges];
	int taken = end[1] == 't';
	e->n = 0;
	for (char *ev = end + 3; *ev;) {
		unsigned long k = strtoul(ev + 1, &end, 10);
		if (!strchr("ebx", *ev) || end == ev + 1 || k >= nloops ||
		    e->n == CP_LOOP_EDGE_EVENTS)
			return -1;
		e->kind[e->n] = (uint8_t)*ev;
		e->loop[e->n++] = first + (uint32_t)k;
		ev = *end == '.' ? end + 1 : end;
		if (*end && *end != '.')
			return -1;
	}
	cp_probe_g.nedges++;
	pt->src = m->bias + src;
	pt->edge = taken ? CP_RELOC_TAKEN : CP_RELOC_FALLTHROUGH;
	pt->cookie = (uint64_t)e;
	return 0;
}

static struct cp_reloc_point points[CP_RELOC_MAX_POINTS];
static uint8_t original[64 * 1024];

/* The same request for the same function again (a search re-adding the loops it had
 * removed): its copy, still valid with its loops and edges, is entered again rather than
 * relocating anew (copies are never unmapped; their number is bounded). */
static int reuse_copy(struct cp_probe *p, uint64_t request, char *why, size_t cap)
{
	for (uint32_t k = 0; k < cp_probe_g.nrelocs; k++) {
		const struct cp_loop_reloc *r = &cp_probe_g.relocs[k];
		if (r->orig == p->addr && r->request == request) {
			__atomic_store_n(&p->tramp, r->copy, __ATOMIC_RELEASE);
			snprintf(why, cap, "%u\t%u", r->nloops, r->npoints);
			return (int)r->nloops;
		}
	}
	return -1;
}

static int loops_install(char *arg, char *why, size_t cap)
{
	uint64_t request = cp_fnv1a(CP_FNV1A_INIT, arg, strlen(arg));
	char *save = NULL, *path = strtok_r(arg, " ", &save), *fn = strtok_r(NULL, " ", &save);
	char *size = strtok_r(NULL, " ", &save), *hdr = strtok_r(NULL, " ", &save);
	if (!hdr)
		return snprintf(why, cap, "bad loops request"), -1;
	const struct cp_module *m = module_by_path(path);
	if (!m)
		return snprintf(why, cap, "no module %s in the process", path), -1;
	uint64_t addr = m->bias + strtoull(fn, NULL, 16);
	struct cp_probe *p = probe_at(addr);
	if (!p)
		return snprintf(why, cap, "the function at 0x%s is not probed", fn), -1;
	int reused = reuse_copy(p, request, why, cap);
	if (reused >= 0)
		return reused;
	uint32_t nloops0 = cp_probe_g.nloops, nedges0 = cp_probe_g.nedges, first = 0, nloops = 0,
		 n = 0;
	int rc = parse_headers(hdr, m, p, &first, &nloops);
	for (char *tok; !rc && (tok = strtok_r(NULL, " ", &save));)
		rc =
		    n == CP_RELOC_MAX_POINTS ? -1 : parse_edge(tok, m, first, nloops, &points[n++]);
	struct cp_reloc_result res;
	uint32_t room = CP_LOOP_MAP - cp_probe_g.nmap;
	res.map = (struct cp_reloc_map){cp_probe_g.map_at + cp_probe_g.nmap,
					cp_probe_g.map_orig + cp_probe_g.nmap,
					cp_probe_g.map_info + cp_probe_g.nmap, room, 0};
	size_t len = strtoull(size, NULL, 10);
	if (rc || len > sizeof original)
		snprintf(why, cap, "bad loops request (or too many loops/edges, or too large)");
	else {
		/* The original bytes: the entry probe's jump is over the first ones. */
		memcpy(original, (const void *)addr, len);
		memcpy(original, p->patch.saved, len < CP_PATCH_JMP_LEN ? len : CP_PATCH_JMP_LEN);
	}
	if (rc || len > sizeof original)
		rc = -1;
	else if (cp_reloc_function(original, addr, len, points, n, (uint64_t)cp_loop_entry, &res)) {
		snprintf(why, cap, "cannot relocate the function: %s at 0x%llx", res.why,
			 (unsigned long long)(res.bad - m->bias));
		rc = -1;
	}
	/* A copy the unwinder could not map back would cut every call path through it. */
	if (!rc && (!res.map.n || cp_probe_g.nrelocs == CP_LOOP_RELOCS)) {
		snprintf(why, cap, "too many relocated functions in this process");
		rc = -1;
	}
	if (rc) {
		cp_probe_g.nloops = nloops0;
		cp_probe_g.nedges = nedges0;
		return -1;
	}
	{
		cp_probe_g.relocs[cp_probe_g.nrelocs] = (struct cp_loop_reloc){
		    res.copy, res.len, addr, cp_probe_g.nmap, (uint32_t)res.map.n,
		    request,  nloops,  n};
		cp_probe_g.nmap += (uint32_t)res.map.n;
		__atomic_store_n(&cp_probe_g.nrelocs, cp_probe_g.nrelocs + 1, __ATOMIC_RELEASE);
		cp_unwind_set_pc_map(cp_loop_map_pc);
	}
	/* New calls continue into the copy; threads inside the original finish there. */
	__atomic_store_n(&p->tramp, res.copy, __ATOMIC_RELEASE);
	snprintf(why, cap, "%u\t%u", nloops, n);
	return (int)nloops;
}

int cp_probe_loops(char *arg, char *why, size_t cap)
{
	if (!cp_probe_g.enabled || !cp_probe_g.loops_enabled) {
		snprintf(why, cap,
			 "loop probes are off in this process (start it with "
			 "callpath probe --loops)");
		return -1;
	}
	cp_probe_lock();
	int rc = loops_install(arg, why, cap);
	cp_probe_unlock();
	return rc;
}

int cp_probe_loops_config(void)
{
	size_t lsize = sizeof(struct cp_loop_rt) * CP_LOOP_MAX;
	size_t esize = sizeof(struct cp_loop_edge_rt) * CP_LOOP_EDGES;
	void *l = mmap(NULL, lsize, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *e = mmap(NULL, esize, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	size_t msize = sizeof(uint32_t) * CP_LOOP_MAP;
	void *a = mmap(NULL, 3 * msize, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (l == MAP_FAILED || e == MAP_FAILED || a == MAP_FAILED)
		return -1;
	cp_probe_g.map_at = a;
	cp_probe_g.map_orig = (uint32_t *)((char *)a + msize);
	cp_probe_g.map_info = (uint32_t *)((char *)a + 2 * msize);
	cp_probe_g.loops = l;
	cp_probe_g.edges = e;
	cp_probe_g.loops_enabled = 1;
	return 0;
}

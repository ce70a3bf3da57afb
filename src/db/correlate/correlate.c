/* Correlation of calling context trees with program structure (correlate.h). */
#include "db/correlate/correlate.h"

#include "base/hash.h"
#include "base/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CHAIN_MAX 256

/* ---- modules ---- */

struct gmod {
	uint32_t dbmod;
	int has_st;
	struct cp_structure st;
	uint32_t *proc_of;   /* [st nscopes]: database procedure of a PROC/INLINE scope */
	uint32_t unknown_sf; /* the module's "[name]" frame, UINT32_MAX until used */
	int used;	     /* a node named it (the first-use hook ran) */
	const char *name;    /* base name (database string) */
	int omp_class;	     /* enum omp_class */
	uint8_t build_id[32];
	uint32_t build_id_len;
	const char *path;
};

/* A static frame: what the chain of one (module, address) instantiates. */
struct sframe {
	uint32_t gm;
	uint32_t pad;
	uint64_t addr;		  /* the address looked up */
	uint32_t proc;		  /* database procedure of the frame */
	uint32_t mid_first, nmid; /* INLINE/LOOP templates in c->mids */
	uint32_t stmt_file, stmt_line;
	int unknown; /* no structure: collapses with a parent frame of the same procedure */
	uint64_t entry;
	uint64_t stmt_addr;
};

/* A frame instantiated under a parent scope and call site. */
struct dframe {
	uint32_t anchor;   /* innermost INLINE/LOOP/PROC: where callees hang */
	uint32_t csf, csl; /* call site of the callees (the sframe's statement) */
	uint32_t stmt;	   /* where costs land: STMT scope, UINT32_MAX until costs arrive */
	uint32_t sf;	   /* sframe; UINT32_MAX for the root and partial pseudo-frames */
};

struct sfkey {
	uint32_t gm, sf;
	uint64_t addr;
};

struct cp_corr {
	struct cp_db *db;
	struct sfkey *sfkeys; /* entries of sftab */
	size_t nsfkeys, asfkeys;
	struct gmod *mods;
	size_t nmods, amods;
	struct cp_hashtab modtab;
	struct sframe *sfs;
	size_t nsfs, asfs;
	struct cp_hashtab sftab;
	uint32_t *mids; /* structure scopes (INLINE, LOOP) of the sframes, outermost first */
	size_t nmids, amids;
	struct dframe *dfs;
	size_t ndfs, adfs;
	struct nslot *ntab;
	size_t ncap, nn;
	uint32_t partial_df; /* the PARTIAL pseudo-frame, UINT32_MAX until used (dfs[0]: root) */
	size_t nodes;
	/* OpenMP outlined functions renamed as regions and tasks ("parallel region in f"):
	 * (procedure, kind) -> its renamed procedure and the source function's procedure */
	struct omp_name *omp_names;
	size_t nomp_names, aomp_names;
	int omp_used;			       /* a module of the OpenMP runtime was registered */
	uint32_t omp_from, omp_wait, omp_work; /* cp_corr_omp_wait, CP_DB_NONE until then */
	cp_corr_first_use_fn first_use;
	void *first_use_ctx;
	uint32_t omp_idle; /* cp_corr_omp_idle */
};

/* What a module is for omp-wait: the OpenMP runtime, libc (waits it calls), other. */
enum omp_class { OMP_OTHER = 0, OMP_RUNTIME = 1, OMP_LIBC = 2 };

static int omp_class_of(const char *name)
{
	static const char *const runtimes[] = {"libgomp.so", "libomp.so", "libiomp5.so"};
	for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++)
		if (!strncmp(name, runtimes[i], strlen(runtimes[i])))
			return OMP_RUNTIME;
	return strncmp(name, "libc.so", 7) ? OMP_OTHER : OMP_LIBC;
}

struct omp_name {
	uint32_t proc, kind, named, source;
};

void cp_corr_on_first_use(struct cp_corr *c, cp_corr_first_use_fn fn, void *ctx)
{
	c->first_use = fn;
	c->first_use_ctx = ctx;
}

static void ntab_release(struct cp_corr *c);

struct cp_corr *cp_corr_new(struct cp_db *db)
{
	struct cp_corr *c = xcalloc(1, sizeof(*c));
	c->db = db;
	c->partial_df = UINT32_MAX;
	c->omp_from = c->omp_wait = c->omp_work = c->omp_idle = CP_DB_NONE;
	XGROW(c->dfs, 1, c->adfs);
	c->dfs[0] = (struct dframe){0, CP_DB_NONE, 0, 0, UINT32_MAX};
	c->ndfs = 1;
	return c;
}

void cp_corr_free(struct cp_corr *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nmods; i++) {
		if (c->mods[i].has_st)
			cp_structure_release(&c->mods[i].st);
		free(c->mods[i].proc_of);
	}
	free(c->mods);
	cp_hashtab_release(&c->modtab);
	free(c->sfs);
	free(c->sfkeys);
	cp_hashtab_release(&c->sftab);
	free(c->mids);
	free(c->dfs);
	free(c->omp_names);
	ntab_release(c);
	free(c);
}

struct modkey {
	const char *path;
	const uint8_t *build_id;
	size_t len;
};

static int mod_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct gmod *g = &((const struct cp_corr *)ctx)->mods[idx];
	const struct modkey *k = key;
	return g->build_id_len == k->len && !memcmp(g->build_id, k->build_id, k->len) &&
	       !strcmp(g->path, k->path);
}

uint32_t cp_corr_module(struct cp_corr *c, const char *path, const uint8_t *build_id,
			size_t build_id_len, uint32_t flags)
{
	if (build_id_len > 32)
		build_id_len = 32;
	struct modkey k = {path, build_id, build_id_len};
	uint64_t h = cp_hash_str(path);
	for (size_t i = 0; i < build_id_len; i++)
		h = cp_hash_mix(h, build_id[i]);
	uint32_t found = cp_hashtab_find(&c->modtab, h, mod_eq, c, &k);
	if (found != CP_HASH_NONE)
		return found;
	XGROW(c->mods, c->nmods + 1, c->amods);
	uint32_t gm = (uint32_t)c->nmods++;
	struct gmod *g = &c->mods[gm];
	memset(g, 0, sizeof *g);
	g->dbmod = cp_db_module(c->db, path, build_id, build_id_len, flags);
	g->path = c->db->modules[g->dbmod].path;
	g->name = c->db->modules[g->dbmod].name;
	if (!g->name) {
		const char *slash = strrchr(g->path, '/');
		g->name = slash ? slash + 1 : g->path;
	}
	memcpy(g->build_id, build_id, build_id_len);
	g->build_id_len = (uint32_t)build_id_len;
	g->omp_class = omp_class_of(g->name);
	c->omp_used |= g->omp_class == OMP_RUNTIME;
	g->unknown_sf = UINT32_MAX;
	cp_hashtab_insert(&c->modtab, h, gm);
	return gm;
}

uint32_t cp_corr_module_db(const struct cp_corr *c, uint32_t gm)
{
	return c->mods[gm].dbmod;
}

size_t cp_corr_nmodules(const struct cp_corr *c)
{
	return c->nmods;
}

void cp_corr_module_structure(struct cp_corr *c, uint32_t gm, struct cp_structure *st)
{
	struct gmod *g = &c->mods[gm];
	if (g->has_st) {
		cp_structure_release(&g->st);
		free(g->proc_of);
		g->proc_of = NULL;
		g->has_st = 0;
	}
	if (!st)
		return;
	g->st = *st;
	memset(st, 0, sizeof *st);
	g->has_st = 1;
	size_t n = g->st.hdr->nscopes;
	g->proc_of = xmalloc((n ? n : 1) * sizeof(*g->proc_of));
	for (size_t i = 0; i < n; i++)
		g->proc_of[i] = CP_DB_NONE;
}

/* ---- static frames ---- */

static uint32_t st_file(struct cp_corr *c, const struct gmod *g, uint32_t stroff)
{
	const char *s = stroff ? cp_structure_string(&g->st, stroff) : NULL;
	return s && *s ? cp_db_file(c->db, s) : CP_DB_NONE;
}

/* The database procedure of structure scope s (PROC or INLINE) of module gm. */
static uint32_t st_proc(struct cp_corr *c, uint32_t gm, uint32_t s)
{
	struct gmod *g = &c->mods[gm];
	if (g->proc_of[s] != CP_DB_NONE)
		return g->proc_of[s];
	const struct cp_st_scope *sc = &g->st.scopes[s];
	struct cp_db_proc p;
	memset(&p, 0, sizeof p);
	char buf[600];
	const char *name = cp_structure_string(&g->st, sc->name);
	p.module = g->dbmod;
	p.file = st_file(c, g, sc->file);
	p.line = sc->line;
	if (sc->kind == CP_ST_PROC) {
		p.entry = sc->addr;
		const char *link = sc->aux ? cp_structure_string(&g->st, sc->aux) : NULL;
		p.linkage = link && *link && (!name || strcmp(link, name)) ? link : NULL;
		if (sc->flags & CP_ST_F_PLT)
			p.flags |= CP_DB_PROC_PLT;
		if (!name || !*name) {
			snprintf(buf, sizeof buf, "[%s+0x%" PRIx64 "]", g->name, sc->addr);
			name = buf;
			p.flags |= CP_DB_PROC_UNKNOWN;
		}
	} else if (!name || !*name) {
		name = "[inlined]";
	}
	p.name = name;
	uint32_t id = cp_db_proc(c->db, &p);
	c->mods[gm].proc_of[s] = id;
	return id;
}

static uint32_t sframe_new(struct cp_corr *c, uint32_t gm, uint64_t addr)
{
	XGROW(c->sfs, c->nsfs + 1, c->asfs);
	uint32_t i = (uint32_t)c->nsfs++;
	struct sframe *f = &c->sfs[i];
	memset(f, 0, sizeof *f);
	f->gm = gm;
	f->addr = addr;
	f->stmt_file = CP_DB_NONE;
	f->mid_first = (uint32_t)c->nmids;
	return i;
}

/* The "[name]" frame of a module whose code is unknown. */
static uint32_t sframe_unknown(struct cp_corr *c, uint32_t gm)
{
	struct gmod *g = &c->mods[gm];
	if (g->unknown_sf != UINT32_MAX)
		return g->unknown_sf;
	char buf[600];
	snprintf(buf, sizeof buf, "[%s]", g->name);
	struct cp_db_proc p;
	memset(&p, 0, sizeof p);
	p.name = buf;
	p.module = g->dbmod;
	p.file = CP_DB_NONE;
	p.flags = CP_DB_PROC_UNKNOWN;
	uint32_t proc = cp_db_proc(c->db, &p);
	uint32_t i = sframe_new(c, gm, UINT64_MAX);
	c->sfs[i].proc = proc;
	c->sfs[i].unknown = 1;
	c->mods[gm].unknown_sf = i;
	return i;
}

static uint32_t sframe_build(struct cp_corr *c, uint32_t gm, uint64_t addr)
{
	struct gmod *g = &c->mods[gm];
	uint32_t chain[CHAIN_MAX];
	int n = cp_structure_chain(&g->st, addr, chain, CHAIN_MAX);
	if (n <= 0 || g->st.scopes[chain[0]].kind != CP_ST_PROC)
		return sframe_unknown(c, gm);
	uint32_t i = sframe_new(c, gm, addr);
	uint32_t proc = st_proc(c, gm, chain[0]);
	uint64_t entry = g->st.scopes[chain[0]].addr;
	uint32_t stmt_file = CP_DB_NONE, stmt_line = 0;
	uint64_t stmt_addr = 0;
	for (int k = 1; k < n; k++) {
		const struct cp_st_scope *sc = &g->st.scopes[chain[k]];
		if (sc->kind == CP_ST_STMT) {
			stmt_file = st_file(c, g, sc->file);
			stmt_line = sc->line;
			stmt_addr = sc->addr;
		} else if (sc->kind == CP_ST_INLINE || sc->kind == CP_ST_LOOP) {
			XGROW(c->mids, c->nmids + 1, c->amids);
			c->mids[c->nmids++] = chain[k];
		}
	}
	struct sframe *f = &c->sfs[i];
	f->proc = proc;
	f->entry = entry;
	f->nmid = (uint32_t)c->nmids - f->mid_first;
	f->stmt_file = stmt_file;
	f->stmt_line = stmt_line;
	f->stmt_addr = stmt_addr;
	return i;
}

static int sf_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sfkey *e = &((const struct cp_corr *)ctx)->sfkeys[idx];
	const struct sfkey *k = key;
	return e->gm == k->gm && e->addr == k->addr;
}

static uint32_t sframe_get(struct cp_corr *c, uint32_t gm, uint64_t addr)
{
	if (!c->mods[gm].has_st)
		return sframe_unknown(c, gm);
	struct sfkey k = {gm, 0, addr};
	uint64_t h = cp_hash_mix(cp_hash_mix(0, gm), addr);
	uint32_t found = cp_hashtab_find(&c->sftab, h, sf_eq, c, &k);
	if (found != CP_HASH_NONE)
		return c->sfkeys[found].sf;
	k.sf = sframe_build(c, gm, addr);
	XGROW(c->sfkeys, c->nsfkeys + 1, c->asfkeys);
	c->sfkeys[c->nsfkeys] = k;
	cp_hashtab_insert(&c->sftab, h, (uint32_t)c->nsfkeys++);
	return k.sf;
}

/* ---- instantiated frames ---- */

/* The table of instantiated frames, keys inline (one cache line per probe): a node's
 * (parent dframe, module, address) -> its dframe, or NODE_COLLAPSE (it stays in its
 * parent's frame). The parent's dframe determines where the node's frame hangs and its
 * call site, so a node costs one probe and a thread's state is one id per node. Not
 * base/hash.h's table, which keeps keys outside (a second cache miss per node on the
 * analyzer's hottest path). */
#define NODE_COLLAPSE (UINT32_MAX - 1)

struct nslot {
	uint32_t pdf, gm;
	uint64_t addr;
	uint32_t df; /* dframe + 1, 0 = empty */
	uint32_t pad;
};

static uint64_t nslot_hash(uint32_t pdf, uint32_t gm, uint64_t addr)
{
	uint64_t h = ((uint64_t)pdf << 32 | gm) * 0x9e3779b97f4a7c15ull;
	h ^= addr * 0xff51afd7ed558ccdull;
	h ^= h >> 29;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 32);
}

/* The node table is probed at random, once per node: on huge pages where the kernel allows
 * them (transparent_hugepage=madvise), a probe costs a cache miss without a TLB miss. */
static void *table_alloc(size_t bytes)
{
	if (bytes < (2u << 20))
		return xcalloc(1, bytes);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return xcalloc(1, bytes);
	madvise(p, bytes, MADV_HUGEPAGE);
	return p;
}

static void table_free(void *p, size_t bytes)
{
	if (!p)
		return;
	if (bytes < (2u << 20))
		free(p);
	else
		munmap(p, bytes);
}

static void ntab_release(struct cp_corr *c)
{
	table_free(c->ntab, c->ncap * sizeof(*c->ntab));
}

static void ntab_grow(struct cp_corr *c)
{
	size_t cap = c->ncap ? c->ncap * 2 : 4096;
	struct nslot *n = table_alloc(cap * sizeof(*n));
	for (size_t i = 0; i < c->ncap; i++) {
		const struct nslot *o = &c->ntab[i];
		if (!o->df)
			continue;
		size_t j = nslot_hash(o->pdf, o->gm, o->addr) & (cap - 1);
		while (n[j].df)
			j = (j + 1) & (cap - 1);
		n[j] = *o;
	}
	table_free(c->ntab, c->ncap * sizeof(*c->ntab));
	c->ntab = n;
	c->ncap = cap;
}

static struct nslot *ntab_find(struct cp_corr *c, uint32_t pdf, uint32_t gm, uint64_t addr)
{
	if ((c->nn + 1) * 4 > c->ncap * 3)
		ntab_grow(c);
	size_t j = nslot_hash(pdf, gm, addr) & (c->ncap - 1);
	for (;;) {
		struct nslot *e = &c->ntab[j];
		if (!e->df || (e->addr == addr && e->pdf == pdf && e->gm == gm))
			return e;
		j = (j + 1) & (c->ncap - 1);
	}
}

static uint32_t dframe_add(struct cp_corr *c, struct dframe d)
{
	XGROW(c->dfs, c->ndfs + 1, c->adfs);
	c->dfs[c->ndfs] = d;
	return (uint32_t)c->ndfs++;
}

static uint32_t dframe_new(struct cp_corr *c, uint32_t pdf, uint32_t sfi)
{
	const struct sframe *f = &c->sfs[sfi];
	const struct dframe *p = &c->dfs[pdf];
	struct cp_db_scope s;
	memset(&s, 0, sizeof s);
	s.kind = CP_DBK_PROC;
	s.proc = f->proc;
	s.module = c->mods[f->gm].dbmod;
	s.file = p->csf;
	s.line = p->csl;
	s.addr = f->entry;
	uint32_t at = cp_db_scope_child(c->db, p->anchor, &s);
	uint32_t frame_proc = f->proc; /* procedure of the innermost frame so far */
	const struct gmod *g = &c->mods[f->gm];
	for (uint32_t m = 0; m < f->nmid; m++) {
		uint32_t si = c->mids[f->mid_first + m];
		const struct cp_st_scope *sc = &g->st.scopes[si];
		struct cp_db_scope t;
		memset(&t, 0, sizeof t);
		t.module = g->dbmod;
		t.addr = sc->addr;
		if (sc->kind == CP_ST_INLINE) {
			frame_proc = st_proc(c, f->gm, si);
			t.kind = CP_DBK_INLINE;
			t.file = st_file(c, g, sc->aux);
			t.line = sc->aux_line;
		} else {
			t.kind = CP_DBK_LOOP;
			t.file = st_file(c, g, sc->file);
			t.line = sc->line;
			t.line_lo = sc->line_lo;
			t.line_hi = sc->line_hi;
		}
		t.proc = frame_proc;
		at = cp_db_scope_child(c->db, at, &t);
	}
	return dframe_add(c, (struct dframe){at, f->stmt_file, f->stmt_line, UINT32_MAX, sfi});
}

/* The frame of a node at (module gm, address) under the frame pdf. */
static uint32_t node_frame(struct cp_corr *c, uint32_t pdf, uint32_t gm, uint64_t addr)
{
	if (!c->mods[gm].has_st)
		addr = UINT64_MAX; /* every address of the module is the same frame */
	struct nslot *e = ntab_find(c, pdf, gm, addr);
	if (e->df)
		return e->df - 1;
	uint32_t sfi = sframe_get(c, gm, addr);
	const struct sframe *f = &c->sfs[sfi];
	uint32_t r;
	if (f->unknown && c->dfs[pdf].sf != UINT32_MAX && c->sfs[c->dfs[pdf].sf].proc == f->proc)
		r = NODE_COLLAPSE;
	else
		r = dframe_new(c, pdf, sfi);
	/* sframe_get and dframe_new never touch ntab: e is still the slot */
	*e = (struct nslot){pdf, gm, addr, r + 1, 0};
	c->nn++;
	return r;
}

/* ---- OpenMP regions and tasks ---- */

/* The procedure named "parallel region in F" / "task in F" for the outlined function proc
 * started from a frame of procedure parent (F: parent's source function, through regions
 * and tasks); its linkage keeps the symbol (compute._omp_fn.0). */
static uint32_t omp_named_proc(struct cp_corr *c, uint32_t proc, uint16_t kind, uint32_t parent)
{
	for (size_t i = 0; i < c->nomp_names; i++)
		if (c->omp_names[i].proc == proc && c->omp_names[i].kind == kind)
			return c->omp_names[i].named;
	uint32_t source = parent;
	for (size_t i = 0; i < c->nomp_names && source != CP_DB_NONE; i++)
		if (c->omp_names[i].named == source)
			source = c->omp_names[i].source;
	struct cp_db_proc p = c->db->procs[proc];
	char name[600];
	snprintf(name, sizeof name, "%s%s%s", kind == CP_MF_NODE_TASK ? "task" : "parallel region",
		 source != CP_DB_NONE ? " in " : "",
		 source != CP_DB_NONE ? c->db->procs[source].name : "");
	if (!p.linkage)
		p.linkage = p.name;
	p.name = name;
	uint32_t named = cp_db_proc(c->db, &p);
	XGROW(c->omp_names, c->nomp_names + 1, c->aomp_names);
	c->omp_names[c->nomp_names++] = (struct omp_name){proc, kind, named, source};
	return named;
}

/* A node directly under a REGION/TASK node (module gm, address addr): if its frame is the
 * outlined function itself, the frame takes the region's name. The region node's offset
 * is the outlined function's entry (libgomp; a frame of another function is one the
 * outlined function tail-called) or the program's call site of the region (libomp, whose
 * tools interface does not name the outlined function; the frame under the node is then
 * always the outlined function). The static frame is shared by every use of the address,
 * all of them under such nodes, so renaming it once is enough. */
static void omp_name_frame(struct cp_corr *c, const struct cp_mf_rnode *region,
			   const struct cp_mf_rnode *n, uint32_t pdf, uint32_t gm, uint64_t addr)
{
	if (!c->mods[gm].has_st || n->module != region->module)
		return;
	/* (indices first: sframe_get may move c->sfs) */
	uint32_t fi = sframe_get(c, gm, addr);
	if (c->sfs[fi].unknown)
		return;
	if (c->sfs[fi].entry != region->offset) {
		uint32_t ri = sframe_get(c, gm, region->offset);
		if (c->sfs[ri].unknown || c->sfs[ri].entry == region->offset)
			return;
	}
	struct sframe *f = &c->sfs[fi];
	for (size_t i = 0; i < c->nomp_names; i++)
		if (c->omp_names[i].named == f->proc)
			return; /* renamed already */
	/* The starting frame's innermost procedure, unless the frame is a region or task
	 * itself (then what the compiler inlined into it is an artefact: clang's
	 * .omp_outlined._debug__) */
	uint32_t parent = CP_DB_NONE;
	if (c->dfs[pdf].sf != UINT32_MAX) {
		parent = c->db->scopes[c->dfs[pdf].anchor].proc;
		uint32_t frame = c->sfs[c->dfs[pdf].sf].proc;
		for (size_t i = 0; i < c->nomp_names; i++)
			if (c->omp_names[i].named == frame)
				parent = frame;
	}
	f->proc = omp_named_proc(c, f->proc, region->kind, parent);
}

/* Where the costs of a node in frame di land: its statement, or the frame itself. */
static uint32_t dframe_stmt(struct cp_corr *c, uint32_t di)
{
	struct dframe *d = &c->dfs[di];
	if (d->stmt != UINT32_MAX)
		return d->stmt;
	const struct sframe *f = &c->sfs[d->sf];
	uint32_t at = d->anchor;
	if (f->stmt_file != CP_DB_NONE || f->stmt_line) {
		struct cp_db_scope s;
		memset(&s, 0, sizeof s);
		s.kind = CP_DBK_STMT;
		s.proc = c->db->scopes[d->anchor].proc;
		s.module = c->mods[f->gm].dbmod;
		s.file = f->stmt_file;
		s.line = f->stmt_line;
		s.addr = f->stmt_addr;
		at = cp_db_scope_child(c->db, d->anchor, &s);
	}
	c->dfs[di].stmt = at;
	return at;
}

/* ---- threads ---- */

static uint32_t module_of(struct cp_corr *c, const struct cp_mf_proc *proc, const uint32_t *modmap,
			  uint32_t id)
{
	long mi = id == CP_MF_MODULE_NONE ? -1 : cp_mf_proc_module(proc, id);
	uint32_t gm;
	if (mi >= 0) {
		gm = modmap[mi];
	} else {
		static const uint8_t none[1];
		gm = cp_corr_module(c, "[unknown]", none, 0, CP_DB_MOD_NO_STRUCT);
	}
	if (!c->mods[gm].used) {
		c->mods[gm].used = 1;
		if (c->first_use)
			c->first_use(c->first_use_ctx, c, gm);
	}
	return gm;
}

static uint32_t partial_frame(struct cp_corr *c)
{
	if (c->partial_df == UINT32_MAX) {
		struct cp_db_scope p;
		memset(&p, 0, sizeof p);
		p.kind = CP_DBK_PARTIAL;
		p.proc = CP_DB_NONE;
		p.module = CP_DB_NONE;
		p.file = CP_DB_NONE;
		uint32_t s = cp_db_scope_child(c->db, 0, &p);
		c->partial_df = dframe_add(c, (struct dframe){s, CP_DB_NONE, 0, s, UINT32_MAX});
	}
	return c->partial_df;
}

/* The node-table probes are cache misses in a table far larger than the cache: node k's
 * slot is prefetched a few nodes ahead, once its parent's frame is known (parents come
 * first) and when it is in the module of the node at hand (the common case). */
#define PREFETCH_AHEAD 10

static inline void prefetch_node(const struct cp_corr *c, const struct cp_mf_thr *t,
				 const uint32_t *st, size_t i, size_t k, uint32_t mod, uint32_t gm)
{
	const struct cp_mf_rnode *n = &t->nodes[k];
	if (n->parent >= i || n->module != mod || n->kind == CP_MF_NODE_PARTIAL || !c->ncap)
		return;
	uint64_t addr = n->offset;
	if (!c->mods[gm].has_st)
		addr = UINT64_MAX;
	else if (n->kind == CP_MF_NODE_CALL && addr)
		addr--;
	__builtin_prefetch(&c->ntab[nslot_hash(st[n->parent], gm, addr) & (c->ncap - 1)]);
}

/* The OpenMP flags of a node: in the OpenMP runtime or in libc under it (a wait); inside
 * a region or task. */
#define OMP_F_WAIT 1
#define OMP_F_REGION 2
#define OMP_F_IDLE 4 /* an idle worker's samples (kind IDLE) */

/* A node's exclusive values into the profile, at its frame's statement; for the OpenMP
 * metrics, omp_from's value into omp_wait (a wait) or omp_work (other code in a region). */
static void node_values(struct cp_corr *c, uint32_t profile, uint32_t df, const uint64_t *v,
			size_t nm, const uint32_t *metric_map, int flags)
{
	uint32_t target = UINT32_MAX;
	for (size_t m = 0; m < nm; m++) {
		if (!v[m])
			continue;
		if (target == UINT32_MAX)
			target = dframe_stmt(c, df);
		cp_db_add(c->db, profile, target, metric_map[m], (double)v[m]);
		if (metric_map[m] != c->omp_from || !flags)
			continue;
		if (flags & OMP_F_IDLE) {
			if (c->omp_idle != CP_DB_NONE)
				cp_db_add(c->db, profile, target, c->omp_idle, (double)v[m]);
		} else if (flags & OMP_F_WAIT)
			cp_db_add(c->db, profile, target, c->omp_wait, (double)v[m]);
		else
			cp_db_add(c->db, profile, target, c->omp_work, (double)v[m]);
	}
}

static uint8_t omp_flags(int omp_class, uint8_t parent)
{
	uint8_t f = parent & OMP_F_REGION;
	if (omp_class == OMP_RUNTIME || (omp_class == OMP_LIBC && (parent & OMP_F_WAIT)))
		f |= OMP_F_WAIT;
	return f;
}

void cp_corr_thread(struct cp_corr *c, const struct cp_mf_proc *proc, const uint32_t *modmap,
		    const struct cp_mf_thr *t, const uint32_t *metric_map, uint32_t profile)
{
	size_t nm = t->hdr.nmetrics;
	uint32_t *st = xmalloc((t->nnodes ? t->nnodes : 1) * sizeof(*st)); /* node -> dframe */
	/* OMP_F_* of each node, for omp-wait and omp-work */
	uint8_t *wf = c->omp_wait != CP_DB_NONE ? xcalloc(t->nnodes ? t->nnodes : 1, 1) : NULL;
	st[0] = 0;
	uint32_t last_mod = UINT32_MAX, last_gm = 0;
	for (size_t i = 1; i < t->nnodes; i++) {
		const struct cp_mf_rnode *n = &t->nodes[i];
		uint32_t pdf = st[n->parent], df;
		if (n->kind == CP_MF_NODE_PARTIAL) {
			df = partial_frame(c);
		} else if (n->kind == CP_MF_NODE_REGION || n->kind == CP_MF_NODE_TASK) {
			/* An OpenMP region: its outlined function's frames follow as callees of
			 * the call site that started it, the same for every thread. */
			df = pdf;
			if (wf)
				wf[i] = OMP_F_REGION;
		} else if (n->kind == CP_MF_NODE_IDLE) {
			/* An idle worker's samples: on the master's serial context */
			df = pdf;
			if (wf)
				wf[i] = OMP_F_IDLE;
		} else {
			if (n->module != last_mod) {
				last_mod = n->module;
				last_gm = module_of(c, proc, modmap, n->module);
			}
			uint32_t gm = last_gm;
			if (i + PREFETCH_AHEAD < t->nnodes)
				prefetch_node(c, t, st, i, i + PREFETCH_AHEAD, last_mod, gm);
			/* The runtime's own frames are not in the files unless recorded with
			 * --show-runtime (src/runtime/core/runtime.h): no filter here. */
			uint64_t addr = n->offset;
			if (n->kind == CP_MF_NODE_CALL && addr)
				addr--;
			uint16_t pk = t->nodes[n->parent].kind;
			if (pk == CP_MF_NODE_REGION || pk == CP_MF_NODE_TASK)
				omp_name_frame(c, &t->nodes[n->parent], n, pdf, gm, addr);
			df = node_frame(c, pdf, gm, addr);
			if (df == NODE_COLLAPSE)
				df = pdf; /* more code of the same unknown module */
			if (wf)
				wf[i] = omp_flags(c->mods[gm].omp_class, wf[n->parent]);
		}
		st[i] = df;
		node_values(c, profile, df, t->values + i * nm, nm, metric_map, wf ? wf[i] : 0);
	}
	c->nodes += t->nnodes ? t->nnodes - 1 : 0;
	free(st);
	free(wf);
}

int cp_corr_omp_used(const struct cp_corr *c)
{
	return c->omp_used;
}

void cp_corr_omp_wait(struct cp_corr *c, uint32_t from, uint32_t wait, uint32_t work)
{
	c->omp_from = from;
	c->omp_wait = wait;
	c->omp_work = work;
}

void cp_corr_omp_idle(struct cp_corr *c, uint32_t idle)
{
	c->omp_idle = idle;
}

void cp_corr_stats(const struct cp_corr *c, struct cp_corr_stats *out)
{
	out->lookups = c->nsfkeys;
	out->instances = c->ndfs;
	out->nodes = c->nodes;
	out->node_keys = c->nn;
	out->bytes = c->asfs * sizeof(*c->sfs) + c->asfkeys * sizeof(*c->sfkeys) +
		     c->sftab.cap * 12 + c->amids * sizeof(*c->mids) + c->adfs * sizeof(*c->dfs) +
		     c->ncap * sizeof(*c->ntab);
}

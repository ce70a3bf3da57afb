/* The experiment loop of `callpath search` (search.h). */
#include "search/search.h"

#include "analyze/structure/cache.h"
#include "analyze/symbolize.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "search/loops.h"
#include "search/syncobj.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

const char *const cp_hyp_names[CP_HYP_N] = {"CPUBound", "ExcessiveSyncWaiting",
					    "ExcessiveIOBlocking", "MemoryBound"};
static const char *const hyp_event[CP_HYP_N] = {NULL, "wait", "io", "page-faults"};

int cp_hyp_find(const char *name)
{
	for (int h = 0; h < CP_HYP_N; h++)
		if (!strcasecmp(name, cp_hyp_names[h]))
			return h;
	return -1;
}

const char *cp_hyp_event(int h)
{
	return hyp_event[h];
}

void cp_search_opts_init(struct cp_search_opts *o)
{
	memset(o, 0, sizeof *o);
	o->threshold = 0.2;
	o->cost_limit = 0.05;
	o->hyps = 1u << CP_HYP_CPU;
	o->after = 0.5;
	o->interval = 0.5;
	o->deep_start = 1;
	o->libraries = CP_LIBS_USER;
}

int cp_search_module_wanted(const char *path, int libs)
{
	static const char *const system_dirs[] = {"/lib/",	  "/lib32/",	 "/lib64/",
						  "/usr/lib/",	  "/usr/lib32/", "/usr/lib64/",
						  "/usr/libexec/"};
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (libs == CP_LIBS_NONE || path[0] != '/' || strstr(base, "libcallpath") ||
	    !strncmp(base, "ld-linux", 8) || !strncmp(base, "linux-vdso", 10))
		return 0;
	for (size_t i = 0; libs == CP_LIBS_USER && i < sizeof system_dirs / sizeof *system_dirs;
	     i++)
		if (!strncmp(path, system_dirs[i], strlen(system_dirs[i])))
			return 0;
	return 1;
}

void cp_search_note(struct cp_search *s, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < s->nnotes; i++)
		if (!strcmp(s->notes[i], buf))
			return; /* said already (another loop node of the same function) */
	s->notes = xrealloc(s->notes, (s->nnotes + 1) * sizeof *s->notes);
	s->notes[s->nnotes++] = xstrdup(buf);
	if (s->o.progress)
		fprintf(s->o.progress, "callpath search: %s\n", buf);
}

/* Source position of an address of the module at path. */
static void locate(struct cp_search *s, const char *path, uint64_t addr, char **file, int *line)
{
	struct cp_sym_info si;
	*file = NULL;
	*line = 0;
	if (!addr || cp_symbolizer_lookup(s->sym, path, NULL, 0, addr, 0, &si)) {
		cp_error_clear();
		return;
	}
	/* in inlined code: the position of the outermost inlined call, in the procedure */
	const char *f = si.ninline ? si.inline_frames[0].file : si.file;
	int l = si.ninline ? si.inline_frames[0].line : si.line;
	if (f) {
		*file = xstrdup(f);
		*line = l;
	}
	cp_error_clear();
}

/* The structure (`callpath struct`, cached by build-id) of module mod, or NULL. */
static const struct cp_structure *module_struct(struct cp_search *s, uint32_t mod)
{
	if (mod >= s->nstructs) {
		size_t n = s->model.nmodules;
		s->structs = xrealloc(s->structs, n * sizeof *s->structs);
		s->struct_state = xrealloc(s->struct_state, n);
		memset(s->structs + s->nstructs, 0, (n - s->nstructs) * sizeof *s->structs);
		memset(s->struct_state + s->nstructs, 0, n - s->nstructs);
		s->nstructs = n;
	}
	if (!s->struct_state[mod]) {
		struct cp_struct_options opt;
		struct cp_struct_result res;
		memset(&opt, 0, sizeof opt);
		memset(&res, 0, sizeof res);
		int rc = cp_struct_get(s->model.modules[mod].path, 0, &opt, &s->structs[mod], &res);
		cp_struct_result_release(&res);
		s->struct_state[mod] = rc ? 2 : 1;
		cp_error_clear();
	}
	return s->struct_state[mod] == 1 ? &s->structs[mod] : NULL;
}

/* A loop's source position as `callpath struct` names it (the loop scope of its header:
 * in the inlined frame that holds it, so an inlined function's loop has that function's
 * lines). 0 when found. */
static int locate_loop(struct cp_search *s, uint32_t mod, uint64_t header,
		       struct cp_search_info *in)
{
	const struct cp_structure *st = module_struct(s, mod);
	uint32_t chain[64];
	int n = st ? cp_structure_chain(st, header, chain, 64) : 0;
	for (int k = n; k-- > 0;) {
		const struct cp_st_scope *sc = &st->scopes[chain[k]];
		if (sc->kind != CP_ST_LOOP || sc->addr != header || !sc->file)
			continue;
		in->file = xstrdup(cp_structure_string(st, sc->file));
		in->line = (int)sc->line;
		in->line_end = (int)(sc->line_hi > sc->line ? sc->line_hi : sc->line);
		return 0;
	}
	return -1;
}

/* Keeps info[] as long as the graph. */
void cp_search_sync_info(struct cp_search *s)
{
	size_t old = s->info_alloc;
	if (s->ninfo >= s->graph.n)
		return;
	XGROW(s->info, s->graph.n, s->info_alloc);
	memset(s->info + old, 0, (s->info_alloc - old) * sizeof *s->info);
	for (size_t i = s->ninfo; i < s->graph.n; i++) {
		const struct cp_search_node *n = &s->graph.nodes[i];
		uint64_t a = n->kind == CP_FOCUS_LOOP ? s->model.loops[n->target].header
						      : s->model.funcs[n->target].lo;
		uint32_t f = n->kind == CP_FOCUS_LOOP ? s->model.loops[n->target].func : n->target;
		uint32_t mod = s->model.funcs[f].module;
		if (n->kind != CP_FOCUS_LOOP || locate_loop(s, mod, a, &s->info[i]))
			locate(s, s->model.modules[mod].path, a, &s->info[i].file,
			       &s->info[i].line);
	}
	s->ninfo = s->graph.n;
}

int32_t cp_search_thread_index(struct cp_search *s, int tid)
{
	for (size_t i = 0; i < s->ntids; i++)
		if (s->tids[i] == tid)
			return (int32_t)i;
	s->tids = xrealloc(s->tids, (s->ntids + 1) * sizeof *s->tids);
	s->tids[s->ntids] = tid;
	return (int32_t)s->ntids++;
}

int cp_search_init(struct cp_search *s, const struct cp_search_opts *o, int pid, const char *dir,
		   const char *exe)
{
	memset(s, 0, sizeof *s);
	s->o = *o;
	s->pid = pid;
	s->gen = -1;
	snprintf(s->dir, sizeof s->dir, "%s", dir);
	snprintf(s->exe, sizeof s->exe, "%s", exe);
	cp_code_model_init(&s->model);
	cp_search_graph_init(&s->graph);
	s->sym = cp_symbolizer_new();
	if (gethostname(s->host, sizeof s->host - 1))
		snprintf(s->host, sizeof s->host, "localhost");
	return cp_code_model_from_module(&s->model, exe);
}

void cp_search_release(struct cp_search *s)
{
	for (size_t i = 0; i < s->info_alloc; i++) {
		free(s->info[i].note);
		free(s->info[i].file);
	}
	free(s->info);
	for (size_t i = 0; i < s->nnotes; i++)
		free(s->notes[i]);
	free(s->notes);
	free(s->tids);
	cp_search_sync_release(s);
	cp_search_graph_release(&s->graph);
	cp_code_model_release(&s->model);
	if (s->sym)
		cp_symbolizer_free(s->sym);
	for (size_t i = 0; i < s->nstructs; i++)
		if (s->struct_state[i] == 1)
			cp_structure_release(&s->structs[i]);
	free(s->structs);
	free(s->struct_state);
	memset(s, 0, sizeof *s);
}

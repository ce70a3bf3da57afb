/* libFuzzer target for the measurement reader and the report model built on it.
 * Input: byte 0 selects a process file (even) or a thread file (odd), the rest is the file.
 * A thread file is checked against a fixed valid process file, and when it parses, its
 * tree goes through the report (all three views, every format) with a fake symbolizer.
 * Build and run: tests/fuzz/run.sh [SECONDS] */
#include "base/error.h"
#include "format/measure-read.h"
#include "report/profile.h"
#include "report/render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The report links the analyzer's symbolizer for its default ops; the fuzzer never uses it. */
struct cp_symbolizer *cp_symbolizer_new(void)
{
	return NULL;
}
void cp_symbolizer_free(struct cp_symbolizer *s)
{
}
int cp_symbolizer_lookup(struct cp_symbolizer *s, const char *path, const uint8_t *build_id,
			 size_t build_id_len, uint64_t offset, int is_return,
			 struct cp_sym_info *out)
{
	return cp_error(CP_ENOTSUP, "no symbolizer in the fuzzer");
}

static int fake_lookup(void *ctx, const char *path, const uint8_t *bid, size_t len, uint64_t off,
		       int is_return, struct cp_sym_info *out)
{
	static const char *const names[] = {"a", "b", "c", "d"};
	memset(out, 0, sizeof *out);
	if (off % 7 == 0)
		return off % 2 ? cp_error(CP_ENOENT, "missing") : 0;
	out->found = 1;
	out->procedure = names[(off >> 4) % 4];
	out->file = "f.c";
	out->line = (int)(off % 13);
	out->ninline = (int)(off % 3);
	for (int i = 0; i < out->ninline; i++) {
		out->inline_frames[i].name = names[i];
		out->inline_frames[i].file = "g.h";
		out->inline_frames[i].line = i;
	}
	return 0;
}

static struct cp_mf_proc proc;
static int proc_ready;

static void proc_init(void)
{
	struct {
		struct cp_mf_process p;
		struct cp_mf_record r;
		struct cp_mf_module m;
		char path[8];
	} f;
	memset(&f, 0, sizeof f);
	memcpy(f.p.h.magic, CP_MF_MAGIC, 8);
	f.p.h.version = CP_MF_VERSION;
	f.p.h.kind = CP_MF_KIND_PROCESS;
	f.p.h.header_size = sizeof f.p;
	f.p.h.used = sizeof f;
	f.p.nmetrics = 2;
	strcpy(f.p.metrics[0].name, "cputime");
	strcpy(f.p.metrics[0].unit, "ns");
	strcpy(f.p.metrics[1].name, "events");
	strcpy(f.p.metrics[1].unit, "events");
	f.r.type = CP_MF_REC_MODULE;
	f.r.size = sizeof f.r + sizeof f.m + sizeof f.path;
	strcpy(f.path, "/bin/x");
	if (cp_mf_proc_parse(&proc, &f, sizeof f, "fuzz.proc"))
		abort();
	proc_ready = 1;
}

static void report_all(const struct cp_mf_thr *t)
{
	struct cp_mf_image im = {proc, (struct cp_mf_thr *)t, 1};
	struct cp_mf_dir d = {"fuzz", &im, 1};
	struct cp_symops ops = {fake_lookup, NULL};
	struct cp_profile p;
	if (cp_profile_build(&p, &d, &ops, CP_PROFILE_ALL_THREADS, 0))
		return;
	FILE *null = fopen("/dev/null", "w");
	struct cp_report_options o;
	cp_report_options_init(&o);
	for (int v = 0; v < 3; v++)
		for (int f = 0; f < 3; f++) {
			o.view = v;
			o.format = f;
			o.focus = v == 2 ? "b" : NULL;
			cp_report_profile(&p, &o, null);
		}
	fclose(null);
	cp_profile_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!proc_ready)
		proc_init();
	if (size < 1)
		return 0;
	/* An exact-size heap copy, so that any read past the end is caught by ASan. */
	uint8_t *buf = malloc(size - 1 ? size - 1 : 1);
	memcpy(buf, data + 1, size - 1);
	if (data[0] % 2 == 0) {
		struct cp_mf_proc p;
		if (!cp_mf_proc_parse(&p, buf, size - 1, "fuzz.proc"))
			cp_mf_proc_release(&p);
		else
			free(p.file);
	} else {
		struct cp_mf_thr t;
		if (!cp_mf_thr_parse(&t, buf, size - 1, "fuzz.thr", &proc)) {
			report_all(&t);
			cp_mf_thr_release(&t);
		} else {
			free(t.file);
		}
	}
	free(buf);
	return 0;
}

/* libFuzzer target for the measurement reader and the report model built on it.
 * Input: byte 0 selects a process file (even) or a thread file (odd), the rest is the file.
 * A thread file is checked against a fixed valid process file. (The report reads profile
 * databases now, not measurement trees: its views are fuzzed through tests/fuzz/fuzz-db.c's
 * databases and tests/unit/report.)
 * Build and run: tests/fuzz/run.sh [SECONDS] */
#include "base/error.h"
#include "format/measure-read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
			cp_mf_thr_release(&t);
		} else {
			free(t.file);
		}
	}
	free(buf);
	return 0;
}

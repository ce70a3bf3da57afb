/* Start-up that no sample can see: the CPU time an image used before the runtime's
 * constructor ran (exec, the dynamic loader mapping and relocating every library, the
 * constructors that ran before ours). The process CPU clock tells how much it was exactly;
 * it is charged, for CPU-time metrics, as samples at the dynamic loader's entry point in
 * the first thread's tree (whole periods, the remainder as one sample with that
 * probability), so that start-up shows in the profile where perf shows it (the loader and
 * the kernel's exec) instead of vanishing. The process header keeps the amount
 * (startup_ns) for the summary. Not signal-time code. */
#include "runtime/core/runtime.h"
#include "runtime/sample/timer.h"
#include "runtime/unwind/modules.h"

#include <elf.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <unistd.h>

/* Process CPU clock when the previous image of this process (the one that exec'd us, if
 * the runtime measured it) ended; 0 if there is none. */
static uint64_t previous_image_end(void)
{
	char path[PATH_MAX + 64];
	struct cp_mf_process prev;
	if (cp_rt.gen == 0)
		return 0;
	snprintf(path, sizeof path, "%s/%d.%u%s", cp_rt.outdir, (int)cp_rt.pid, cp_rt.gen - 1,
		 CP_MF_PROC_SUFFIX);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = pread(fd, &prev, sizeof prev, 0);
	close(fd);
	/* Only the image that exec'd us (not an earlier process that had our pid). */
	if (n != (ssize_t)sizeof prev || prev.pid != cp_rt.pid ||
	    !(prev.h.flags & CP_MF_EXEC_ENDED) || prev.cpu_end_ns > cp_rt.cpu_start_ns)
		return 0;
	return prev.cpu_end_ns;
}

/* The node of the dynamic loader's entry point, or CP_CCT_NONE (static program). */
static uint32_t loader_node(struct cp_thread *t)
{
	uintptr_t base = getauxval(AT_BASE);
	if (!base)
		return CP_CCT_NONE;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	uintptr_t entry = base + eh->e_entry;
	const struct cp_module *m = cp_modules_find(entry);
	if (!m)
		return CP_CCT_NONE;
	return cp_cct_child(&t->cct, 0, CP_MF_NODE_PC, m->id, entry - m->bias);
}

/* Whole periods of start-up, and one more with probability remainder / period: the
 * expected charge is exactly the start-up, and the tree stays samples x period. */
static uint64_t startup_samples(uint64_t startup, uint64_t period)
{
	if (!period)
		return 0;
	uint64_t n = startup / period;
	return n + (cp_first_period(period, cp_rt.pid) <= startup % period);
}

void cp_startup_charge(struct cp_thread *t)
{
	if (!t || !cp_rt.phdr)
		return;
	uint64_t startup = cp_rt.cpu_start_ns - previous_image_end();
	cp_rt.phdr->startup_ns = startup;
	if (!startup)
		return;
	t->busy = 1; /* a sample now would append to the tree too */
	uint32_t node = loader_node(t);
	struct cp_mf_thread *h = t->cct.hdr;
	for (uint32_t i = 0; i < cp_rt.nmetrics && node != CP_CCT_NONE; i++) {
		const struct cp_metric *m = &cp_rt.metrics[i];
		if (m->src->source != CP_MF_SRC_CPUTIME || m->disabled)
			continue;
		uint64_t n = startup_samples(startup, m->period);
		cp_cct_node(&t->cct, node)->metrics[i] += n * m->period;
		h->samples[i] += n;
		h->unwind_complete += n; /* one frame, the outermost: the loader's entry */
		h->frames += n;
	}
	t->busy = 0;
}

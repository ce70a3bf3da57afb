/* The perf-event source's init-time half (perf-event.c is the signal-time one): the
 * configuration of one metric per -e event, the check at process start that the kernel
 * opens it, and the notes at exit (multiplexing ratios). Never runs in a signal handler. */
#include "runtime/core/fds.h"
#include "runtime/sample/perf-event-internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int cp_perf_process_init(struct cp_metric *m)
{
	struct perf_metric *p = pm(m);
	m->mechanism = CP_MF_MECH_PERF_EVENT;
	if (cp_rt.no_perf) {
		cp_rt_note("%s: CALLPATH_NO_PERF=1: perf_event events are not measured", p->name);
		return -1;
	}
	int fd = cp_perf_open(p, 0, -1);
	if ((fd == -EACCES || fd == -EPERM) && !cp_perf_exclude_kernel) {
		cp_perf_exclude_kernel = 1;
		fd = cp_perf_open(p, 0, -1);
		if (fd >= 0)
			cp_rt_note("perf events: the kernel refuses to count kernel mode for this "
				   "user (perf_event_paranoid); counting user mode only");
	}
	if (fd < 0) {
		cp_rt_note("%s: perf_event_open failed (%s); this metric is not measured", p->name,
			   strerror(-fd));
		return -1;
	}
	cp_fd_close(fd);
	if (p->ev.freq)
		cp_rt_note("%s: frequency mode, about %llu samples per second of each thread's "
			   "run time; weights are the counts read at each sample",
			   p->name, (unsigned long long)p->ev.period);
	return 0;
}

int cp_perf_config(const char *spec, size_t len, struct cp_metric *m, int split)
{
	struct perf_metric *p = pm(m);
	int rc = cp_ev_parse(spec, len, &p->ev, NULL, 0);
	if (rc == CP_EV_UNKNOWN || cp_ev_kind_is_runtime(p->ev.kind)) /* not perf's */
		return 0;
	if (rc)
		return -1;
	p->src = cp_source_perf;
	memcpy(p->name, p->ev.name, sizeof p->name - 1);
	p->name[sizeof p->name - 1] = 0;
	p->src.name = p->name;
	p->src.unit = p->ev.time_based ? "ns" : "events";
	m->src = &p->src;
	m->period = p->ev.freq ? 0 : p->ev.period;
	/* Group: with the first perf metric configured so far, unless split. */
	p->leader = m->index;
	p->last_member = m->index;
	for (uint32_t i = 0; i < m->index && !split; i++) {
		if (cp_rt.metrics[i].src != &cp_perf_metrics[i].src)
			continue;
		p->leader = i;
		cp_perf_metrics[i].last_member = m->index;
		break;
	}
	return 1;
}

void cp_perf_notes(void)
{
	for (uint32_t i = 0; i < cp_rt.nmetrics; i++) {
		struct perf_metric *p = &cp_perf_metrics[i];
		if (cp_rt.metrics[i].src != &p->src || p->leader != i || !p->enabled_ns)
			continue;
		if (p->running_ns >= p->enabled_ns)
			continue;
		char names[256];
		size_t len = 0;
		names[0] = 0;
		for (uint32_t j = i; j <= p->last_member && len < sizeof names - 40; j++)
			if (cp_perf_metrics[j].leader == i &&
			    cp_rt.metrics[j].src == &cp_perf_metrics[j].src)
				len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
							len ? ", " : "", cp_perf_metrics[j].name);
		if (!p->running_ns)
			cp_rt_note("perf events %s were never counted: the PMU could not schedule "
				   "them (too many hardware events at once, or counters taken by "
				   "another user); their values are 0",
				   names);
		else
			cp_rt_note(
			    "perf events %s were multiplexed: counted %.1f%% of the time "
			    "they were enabled (ratio running/enabled %.3f); their values are "
			    "scaled by enabled/running, so they are estimates",
			    names, 100.0 * (double)p->running_ns / (double)p->enabled_ns,
			    (double)p->running_ns / (double)p->enabled_ns);
	}
}

/* perf: perf_event counters by name (cycles, page-faults, rNNNN, PMU names the CLI resolved
 * through libpfm4; src/events/events.h) as overflow-sampled metrics.
 *
 * Per thread, each event is opened on the thread's tid with its sample period (or
 * frequency); its overflow signal is routed to that thread (F_SETOWN_EX + F_SETSIG +
 * O_ASYNC), and the handler tells the event by siginfo's si_fd. All perf events of a run
 * form one group per thread (leader: the first one), read together with PERF_FORMAT_GROUP:
 * the hardware PMU schedules a group all or nothing, so values at a sample are
 * consistent. A sample's weight is the event's count since the previous sample of that
 * event on the thread (read from the group in the handler: exact in frequency mode and
 * despite skid), scaled by time_enabled / time_running when the kernel multiplexed the
 * group; software events in period mode weigh exactly their period (no read needed). When the CLI
 * found that the events do not fit in one group (more hardware events than counters) it sets
 * CALLPATH_PERF_SPLIT=1: one group per event, which the kernel multiplexes; the ratio each was
 * counted is written as a NOTE at exit. Software events take exactly the same path (they are what
 * the tests can run on a VM without a PMU).
 *
 * Signal-time code (thread start and stop, the handler's claims); the configuration, the
 * process-start check and the exit notes are in perf-event-init.c. */
#include "runtime/core/fds.h"
#include "runtime/sample/perf-event-internal.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/sigsafe/banned.h"

struct perf_metric cp_perf_metrics[CP_MF_MAX_METRICS];
int cp_perf_exclude_kernel;

/* Opens ev on tid in group (-1: as a leader). AS-safe. fd or -errno. */
int cp_perf_open(const struct perf_metric *p, pid_t tid, int group)
{
	struct perf_event_attr attr;
	cp_ev_attr(&p->ev, cp_perf_exclude_kernel, &attr);
	attr.disabled = group < 0; /* members follow their leader's enable */
	int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, group, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : cp_perf_fd_raise(fd);
}

/* The leader of m's group on this thread, if it is open (st points into the thread's
 * src[] array, indexed by metric). */
static struct cp_source_thread *leader_state(struct cp_metric *m, struct cp_source_thread *st)
{
	struct perf_metric *p = pm(m);
	if (p->leader == m->index)
		return st;
	struct cp_source_thread *ls = st - m->index + p->leader;
	return ls->fd >= 0 && !cp_rt.metrics[p->leader].disabled ? ls : NULL;
}

/* The last metric of leader's group that is measured (the leader if none is). */
static uint32_t group_last(uint32_t leader)
{
	uint32_t last = leader;
	for (uint32_t i = leader + 1; i <= cp_perf_metrics[leader].last_member; i++)
		if (cp_perf_metrics[i].leader == leader && !cp_rt.metrics[i].disabled &&
		    cp_rt.metrics[i].src == &cp_perf_metrics[i].src)
			last = i;
	return last;
}

/* Where a member joining ls's group now sits in the group read: after the leader and the
 * members that joined before it on this thread (one that failed to join, or whose metric
 * is disabled, is not in the group). */
static uint32_t group_position(struct cp_metric *m, struct cp_source_thread *st,
			       const struct cp_source_thread *ls)
{
	struct cp_source_thread *base = st - m->index;
	uint32_t pos = 1;
	for (uint32_t i = pm(m)->leader + 1; i < m->index; i++)
		if (cp_perf_metrics[i].leader == pm(m)->leader && base[i].fd >= 0 &&
		    base[i].group_fd == ls->fd && base[i].fd != ls->fd)
			pos++;
	return pos;
}

static int perf_thread_start(struct cp_metric *m, struct cp_source_thread *st, pid_t tid)
{
	struct perf_metric *p = pm(m);
	struct cp_source_thread *ls = leader_state(m, st);
	int member = ls && ls != st;
	int fd = cp_perf_open(p, tid, member ? ls->fd : -1);
	if (fd < 0 && member) { /* alone, then (its own group) */
		member = 0;
		fd = cp_perf_open(p, tid, -1);
	}
	int rc = fd;
	if (fd >= 0 && !(rc = cp_perf_route(fd, tid)) && ioctl(fd, PERF_EVENT_IOC_ID, &st->perf_id))
		rc = -errno;
	if (fd >= 0 && rc) {
		cp_fd_close(fd);
		fd = -1;
	}
	if (fd >= 0) {
		st->group_fd = member ? ls->fd : fd;
		st->group_pos = member ? group_position(m, st, ls) : 0;
		st->last = 0;
		st->fd = fd;
	}
	/* The group counts once complete: its last member enables it (members follow their
	 * leader); a lone leader, or a member that had to go alone, enables itself. */
	uint32_t last = group_last(p->leader);
	if (ls && ls != st && last == m->index)
		ioctl(ls->fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	if (fd >= 0 && !member && (p->leader != m->index || last == m->index))
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	return fd < 0 ? rc : 0;
}

/* Reads st's group through st's own descriptor (with PERF_FORMAT_GROUP the kernel reads
 * the whole group of any member): its value (raw), enabled and running times. One system
 * call, AS-safe. The descriptor is the one the delivery came from (si_fd == st->fd), so it
 * is our event unless the program dup2'd over it after the signal was queued. */
static int group_read(const struct cp_source_thread *st, uint64_t *value, uint64_t *enabled,
		      uint64_t *running)
{
	uint64_t buf[3 + CP_MF_MAX_METRICS];
	int fd = st->fd;
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf);
	if (n < (ssize_t)(3 + st->group_pos + 1) * 8 || buf[0] <= st->group_pos)
		return -1;
	*enabled = buf[1];
	*running = buf[2];
	*value = buf[3 + st->group_pos];
	return 0;
}

static void perf_thread_stop(struct cp_metric *m, struct cp_source_thread *st)
{
	struct perf_metric *p = pm(m);
	uint64_t id = 0;
	if (st->fd >= 0 && p->leader == m->index && st->group_fd == st->fd &&
	    !ioctl(st->fd, PERF_EVENT_IOC_ID, &id) && id == st->perf_id) {
		uint64_t v, en, run;
		if (!group_read(st, &v, &en, &run)) {
			__atomic_add_fetch(&p->enabled_ns, en, __ATOMIC_RELAXED);
			__atomic_add_fetch(&p->running_ns, run, __ATOMIC_RELAXED);
		}
		/* Members first: none may read a closed (or reused) leader descriptor. */
		for (uint32_t i = m->index + 1; i <= p->last_member; i++)
			if (cp_perf_metrics[i].leader == m->index)
				cp_perf_fd_close(st - m->index + i, 1);
	}
	cp_perf_fd_close(st, 1);
}

static int perf_claims(struct cp_metric *m, struct cp_source_thread *st, const siginfo_t *si,
		       uint64_t *weight)
{
	if (st->fd < 0 || si->si_fd != st->fd ||
	    (si->si_code != POLL_IN && si->si_code != POLL_HUP))
		return 0;
	struct perf_metric *p = pm(m);
	uint64_t value, enabled, running;
	*weight = p->ev.freq ? 0 : p->ev.period; /* if the group cannot be read */
	/* A software event in period mode overflows after exactly `period` events and is
	 * never multiplexed: the period is its weight, and the read (a system call, 2-4 us
	 * on our VMs) is saved. Hardware events (skid, multiplexing) and frequency mode read. */
	if (cp_ev_is_software(&p->ev) && !p->ev.freq)
		return 1;
	if (!group_read(st, &value, &enabled, &running)) {
		uint64_t delta = value - st->last;
		st->last = value;
		if (running && running < enabled)
			delta = (uint64_t)((unsigned __int128)delta * enabled / running);
		*weight = delta;
	}
	return 1;
}

const struct cp_sample_source cp_source_perf = {
    .name = "perf",
    .unit = "events",
    .source = CP_MF_SRC_PERF,
    .process_init = cp_perf_process_init,
    .thread_start = perf_thread_start,
    .thread_stop = perf_thread_stop,
    .claims = perf_claims,
};

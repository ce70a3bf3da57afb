/* One sampling event per thread of the target and its ring buffer, read by callpath itself
 * (no libperf): the kernel advances data_head, we consume up to it and store data_tail. */
#include "kcopy/kcopy-internal.h"

#include "base/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* perf's x86 register numbering (arch/x86/include/uapi/asm/perf_regs.h): ax bx cx dx si di
 * bp sp ip flags cs ss ds es fs gs, then r8-r15 from 16. */
#define KC_REGS_MASK (((1ull << 9) - 1) | (0xffull << 16))

void kc_attr(const struct cp_ev *ev, uint32_t stack_bytes, int enable_on_exec,
	     struct perf_event_attr *attr)
{
	cp_ev_attr(ev, 1, attr);
	if (ev->kind == CP_EV_TIMER) { /* cputime: the thread's CPU clock, period in ns */
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = PERF_COUNT_SW_TASK_CLOCK;
		attr->freq = 0;
		attr->sample_period = ev->period;
	}
	attr->read_format = 0;
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	attr->sample_regs_user = KC_REGS_MASK;
	attr->sample_stack_user = stack_bytes;
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->comm = 1;
	attr->comm_exec = 1;
	attr->task = 1;
	attr->inherit = 1;
	attr->exclude_callchain_kernel = 1;
	/* Wake the reader when a quarter of the ring is full, not at every sample. */
	attr->watermark = 1;
	attr->wakeup_watermark = KC_RING_PAGES * 4096 / 4;
	attr->enable_on_exec = enable_on_exec ? 1 : 0;
	attr->disabled = 1;
}

static int open_error(int err, pid_t tid)
{
	int paranoid = -1;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");

	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = -1;
		fclose(f);
	}
	if (err == ESRCH)
		return cp_error(CP_ENOENT, "no thread %d (it ended)", (int)tid);
	if (err == EACCES || err == EPERM)
		return cp_error(CP_EPERM,
				"not permitted to sample thread %d (perf_event_paranoid is "
				"%d): only your own processes can be sampled unless "
				"/proc/sys/kernel/perf_event_paranoid is at most 1 or callpath has "
				"CAP_PERFMON",
				(int)tid, paranoid);
	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
		return cp_error(CP_ENOTSUP, "this event cannot sample here (%s); try -e cputime",
				strerror(err));
	return cp_error(CP_EIO, "perf_event_open on thread %d failed: %s", (int)tid, strerror(err));
}

int kc_event_open(struct perf_event_attr *attr, pid_t tid, int cpu)
{
	int fd = (int)syscall(SYS_perf_event_open, attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd >= 0 ? fd : open_error(errno, tid);
}

int kc_ring_map(struct kc_ring *r, int fd, size_t data_pages)
{
	long page = sysconf(_SC_PAGESIZE);
	void *m;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->map_size = (data_pages + 1) * (size_t)page;
	m = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		int err = errno;
		r->fd = -1;
		return cp_error(err == EPERM ? CP_EPERM : CP_EIO, "cannot map a ring buffer: %s%s",
				strerror(err),
				err == EPERM ? " (perf_event_mlock_kb and ulimit -l limit it)"
					     : "");
	}
	r->meta = m;
	r->data = (char *)m + page;
	r->data_size = data_pages * (size_t)page;
	return 0;
}

void kc_ring_close(struct kc_ring *r)
{
	if (r->meta)
		munmap(r->meta, r->map_size);
	r->meta = NULL;
	r->fd = -1;
}

void kc_ring_drain(struct kc_ring *r, char *scratch,
		   void (*fn)(void *arg, const struct perf_event_header *h), void *arg)
{
	uint64_t head, tail;

	if (!r->meta)
		return;
	head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	tail = r->meta->data_tail;
	while (tail < head) {
		size_t at = (size_t)(tail & (r->data_size - 1));
		const struct perf_event_header *h = (const void *)(r->data + at);
		struct perf_event_header hh;
		size_t first = r->data_size - at;

		if (first < sizeof hh) { /* the header itself wraps */
			memcpy(&hh, r->data + at, first);
			memcpy((char *)&hh + first, r->data, sizeof hh - first);
		} else {
			hh = *h;
		}
		if (hh.size < sizeof hh || tail + hh.size > head)
			break;
		if (first < hh.size) { /* the record wraps: make it contiguous */
			memcpy(scratch, r->data + at, first);
			memcpy(scratch + first, r->data, hh.size - first);
			h = (const void *)scratch;
		}
		fn(arg, h);
		tail += hh.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

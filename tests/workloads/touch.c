/* Page faults from one function: main -> toucher -> touch_pages() maps N MB (argument 1,
 * default 64) and writes one byte per page, twice over fresh mappings (2 * N * 256 faults); other()
 * does CPU work without faulting. touch_pages' context should hold nearly all the page faults. */
#include "common.h"
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

volatile uint64_t workload_sink;

NOINLINE uint64_t touch_pages(size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	madvise(p, bytes, MADV_NOHUGEPAGE); /* one fault per 4 KiB page, whatever THP says */
	uint64_t sum = 0;
	for (size_t off = 0; off < bytes; off += (size_t)page) {
		p[off] = (char)off;
		sum += (uint64_t)p[off];
	}
	munmap(p, bytes);
	return sum;
}

NOINLINE void toucher(long mb)
{
	for (int round = 0; round < 2; round++)
		workload_sink += touch_pages((size_t)mb << 20);
}

NOINLINE void other(void)
{
	workload_sink += spin(20000000, 7);
}

int main(int argc, char **argv)
{
	long mb = arg_or(argc, argv, 1, 64);
	toucher(mb);
	other();
	printf("touch done %ld MB\n", mb);
	return 0;
}

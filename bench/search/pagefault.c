/* Planted: a page-fault storm in one phase. Each round: parse_phase() and solve_phase()
 * compute; load_phase() maps 16 MiB of fresh anonymous memory, writes one byte per page
 * (4,096 page faults, all in the loop between the markers) and unmaps it: about half the
 * CPU time, nearly all in the kernel's fault handler (with 4 MiB it was 21-24 % on the
 * 2-vCPU VM, too close to the search's 20 % threshold; bench/RESULTS.md). */
#include "planted.h"
#include <sys/mman.h>

#define MAP_BYTES (16u << 20)

static volatile uint64_t sink;

NOINLINE static uint64_t parse_phase(uint64_t x)
{
	return spin(3000000, x);
}

NOINLINE static uint64_t load_phase(uint64_t x)
{
	char *p = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return x;
	/* planted: begin */
	for (size_t off = 0; off < MAP_BYTES; off += 4096) {
		p[off] = (char)x;
		x += (uint64_t)p[off / 2];
	}
	/* planted: end */
	munmap(p, MAP_BYTES);
	return x;
}

NOINLINE static uint64_t solve_phase(uint64_t x)
{
	return spin(2000000, x);
}

int main(int argc, char **argv)
{
	double secs = planted_seconds(argc, argv), start = planted_now();
	long rounds = 0;
	uint64_t x = 5;
	while (planted_now() - start < secs) {
		x = parse_phase(x);
		x = load_phase(x);
		x = solve_phase(x);
		rounds++;
	}
	sink = x;
	planted_done("pagefault", rounds, start);
	return 0;
}

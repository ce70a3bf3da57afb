/* Workload for loop probes (tests/e2e/probe-loops.sh): loops of every shape, each with
 * counters the program keeps itself (its body runs and its entries), to compare with
 * the loop-iterations and loop-entries the probes count.
 *   loops PIDFILE GOFILE
 * Writes its pid, waits for GOFILE (the test inserts the loop probes meanwhile), runs
 * every function on a fixed set of inputs and prints "NAME BODY ENTRIES" per loop: how
 * often its body ran and how often the loop statement was reached (source level: the
 * compiler may skip a loop with a guard, or peel an iteration). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Aligned: at -O0 GCC does not align functions, and an entry probe is not written across
 * a 16-byte line while other threads may run (docs/internals/patch.md). */
#define NOINLINE __attribute__((noinline, aligned(16)))

static volatile long b_for, b_while, b_do, b_outer, b_inner, b_exits, b_cont;
static volatile long e_for, e_while, e_do, e_outer, e_inner, e_exits, e_cont;
static volatile long b_n3[3], e_n3[3];
static long b_tiny, e_tiny;
static volatile int data[64];

NOINLINE long for_loop(long n)
{
	long s = 0;
	e_for++;
	for (long i = 0; i < n; i++) {
		b_for++;
		s += i * i;
	}
	return s;
}

NOINLINE long while_loop(long n)
{
	long s = 0, i = 0;
	e_while++;
	while (i < n) {
		b_while++;
		s += i;
		i += 2;
	}
	return s;
}

NOINLINE long do_loop(long n)
{
	long s = 0, i = 0;
	e_do++;
	do {
		b_do++;
		s += i;
		i++;
	} while (i < n);
	return s;
}

NOINLINE long nested(long n)
{
	long s = 0;
	e_outer++;
	for (long i = 0; i < n; i++) {
		b_outer++;
		e_inner++;
		for (long j = 0; j <= i; j++) {
			b_inner++;
			s += i ^ j;
		}
	}
	return s;
}

/* Three deep; the innermost do loop's exit falls into the middle loop's latch (j++). */
NOINLINE long nested3(long n)
{
	long s = 0;
	e_n3[0]++;
	for (long i = 0; i < n; i++) {
		b_n3[0]++;
		e_n3[1]++;
		for (long j = 0; j < n; j++) {
			b_n3[1]++;
			e_n3[2]++;
			long k = 0;
			do {
				b_n3[2]++;
				s += i ^ j ^ k;
			} while (++k < n);
		}
	}
	return s;
}

/* Three ways out: the condition, a break on data, a return from inside. */
NOINLINE long exits(long n, long stop)
{
	long s = 0;
	e_exits++;
	for (long i = 0;; i++) {
		b_exits++;
		if (i == stop)
			return -s;
		if (i >= n)
			break;
		if (data[i & 63] == 7)
			break;
		s += i;
	}
	return s;
}

NOINLINE long cont(long n)
{
	long s = 0;
	e_cont++;
	for (long i = 0; i < n; i++) {
		b_cont++;
		if (i % 3 == 0)
			continue;
		s += i;
	}
	return s;
}

/* Three instructions: no block of it can hold a jump of its own. */
NOINLINE long tiny(long n)
{
	long c = 0;
	do {
		c++;
		__asm__ volatile("" : "+r"(c));
	} while (c < n);
	return c;
}

/* A probed callee inside a relocated loop: its calling context must pass through the
 * copy (the unwinder maps the copy's return addresses back to the original). */
NOINLINE long callee(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 5 + 1;
}

/* 150 loops one after another: a loop plan of ~6 KB, longer than a control request line
 * (4,000 bytes; 100 loops made 3,856 at -O2), sent as a file (format/control.h,
 * `loops-file`). */
#define MANY 150
static volatile long b_many[MANY], e_many[MANY], many_sink;
#define MANY_LOOP(k)                                                                       \
	e_many[k]++;                                                                       \
	for (long i = 0; i < n + (k); i++) {                                               \
		many_sink += i;                                                            \
		b_many[k]++;                                                               \
	}
#define MANY_10(k)                                                                         \
	MANY_LOOP(k) MANY_LOOP(k + 1) MANY_LOOP(k + 2) MANY_LOOP(k + 3) MANY_LOOP(k + 4)      \
	    MANY_LOOP(k + 5) MANY_LOOP(k + 6) MANY_LOOP(k + 7) MANY_LOOP(k + 8)              \
		MANY_LOOP(k + 9)

NOINLINE void many_loops(long n)
{
	MANY_10(0) MANY_10(10) MANY_10(20) MANY_10(30) MANY_10(40) MANY_10(50) MANY_10(60)
	    MANY_10(70) MANY_10(80) MANY_10(90) MANY_10(100) MANY_10(110) MANY_10(120)
		MANY_10(130) MANY_10(140)
}

NOINLINE long calls_in_loop(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += callee(i);
	return s;
}

int main(int argc, char **argv)
{
	struct stat st;
	if (argc != 3)
		return 2;
	FILE *f = fopen(argv[1], "w");
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (int waited = 0; stat(argv[2], &st) && waited < 60000; waited += 5)
		usleep(5000);
	data[40] = 7;
	long s = 0;
	static const long ns[] = {0, 1, 2, 7, 50, 100, 3};
	for (unsigned k = 0; k < sizeof ns / sizeof ns[0]; k++) {
		long n = ns[k];
		s += for_loop(n) + while_loop(n) + do_loop(n) + nested(n % 20) + cont(n);
		s += exits(n, 5) + exits(n, 1000) + nested3(n % 9);
		s += calls_in_loop(n);
		many_loops(n % 5);
		long c = tiny(n);
		b_tiny += c;
		e_tiny++;
	}
	printf("for_loop %ld %ld\nwhile_loop %ld %ld\ndo_loop %ld %ld\n", b_for, e_for, b_while,
	       e_while, b_do, e_do);
	printf("nested %ld %ld\nnested %ld %ld\n", b_outer, e_outer, b_inner, e_inner);
	for (int d = 0; d < 3; d++)
		printf("nested3 %ld %ld\n", b_n3[d], e_n3[d]);
	printf("exits %ld %ld\ncont %ld %ld\ntiny %ld %ld\n", b_exits, e_exits, b_cont, e_cont,
	       b_tiny, e_tiny);
	for (int k = 0; k < MANY; k++)
		printf("many_loops %ld %ld\n", b_many[k], e_many[k]);
	return s == 42; /* never: keeps s alive */
}

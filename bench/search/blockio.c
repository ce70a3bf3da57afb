/* Planted: blocking I/O in one thread. The reader thread reads 4 KiB records from a pipe
 * in fetch_records(); the producer computes each record (about 2 ms) before writing it,
 * so the reader spends nearly all of its time blocked in read() (the call between the
 * markers). The main thread computes in crunch(), independent of both. */
#include "planted.h"
#include <pthread.h>
#include <unistd.h>

#define RECORD 4096

static int fds[2];
static double secs, start;
static volatile uint64_t sink;

NOINLINE static long fetch_records(void)
{
	char buf[RECORD];
	long records = 0;
	for (;;) {
		size_t got = 0;
		while (got < RECORD) {
			/* planted: begin */
			ssize_t n = read(fds[0], buf + got, RECORD - got);
			/* planted: end */
			if (n <= 0)
				return records;
			got += (size_t)n;
		}
		sink += (uint64_t)buf[records % RECORD];
		records++;
	}
}

static void *reader(void *arg)
{
	(void)arg;
	sink += (uint64_t)fetch_records();
	return NULL;
}

NOINLINE static void produce(char *buf, uint64_t seed)
{
	uint64_t x = spin(2000000, seed);
	for (int i = 0; i < RECORD; i++)
		buf[i] = (char)(x >> (i & 31));
}

static void *producer(void *arg)
{
	char buf[RECORD];
	uint64_t x = (uint64_t)(uintptr_t)arg;
	while (planted_now() - start < secs) {
		produce(buf, x++);
		if (write(fds[1], buf, RECORD) != RECORD)
			break;
	}
	close(fds[1]);
	return NULL;
}

NOINLINE static uint64_t crunch(uint64_t x)
{
	return spin(500000, x);
}

int main(int argc, char **argv)
{
	secs = planted_seconds(argc, argv);
	start = planted_now();
	if (pipe(fds) != 0)
		return 1;
	pthread_t r, p;
	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&p, NULL, producer, (void *)1);
	long rounds = 0;
	uint64_t x = 7;
	while (planted_now() - start < secs) {
		x = crunch(x);
		rounds++;
	}
	pthread_join(p, NULL);
	pthread_join(r, NULL);
	sink += x;
	planted_done("blockio", rounds, start);
	return 0;
}

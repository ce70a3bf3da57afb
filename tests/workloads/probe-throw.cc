// Workload for tests/e2e/probe-throw.sh: a probed C++ function throws through another
// probed function 100 times out of 300; the exceptions are caught in main.
//   thrower: 300 calls (under middle), middle: 300 calls, after: 50 calls (under main)
#include <cstdio>
#include <stdexcept>

#define NOINLINE __attribute__((noinline))

static volatile int sink;

NOINLINE int thrower(int i)
{
	if (i % 3 == 0)
		throw std::runtime_error("three");
	sink += i;
	return i;
}

NOINLINE int middle(int i)
{
	int r = thrower(i);
	sink += r;
	return r + 1;
}

NOINLINE int after(int i)
{
	sink += i;
	return i * 2;
}

int main()
{
	long s = 0;
	for (int i = 0; i < 300; i++) {
		try {
			s += middle(i);
		} catch (const std::exception &e) {
			s += 1000;
		}
	}
	for (int i = 0; i < 50; i++)
		s += after(i);
	std::printf("probe-throw %ld\n", s);
	return 0;
}

/* Linked into probe.*: a probed function in a shared library, and a static function with
 * the same name as one in the executable (the two must stay distinct probes). */
#define NOINLINE __attribute__((noinline))

static volatile int lib_sink;

static NOINLINE int helper(int x)
{
	__asm__ volatile("" : "+r"(x));
	lib_sink += x;
	return x + 2;
}

__attribute__((visibility("default"))) NOINLINE int lib_work(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 5 + 3;
}

__attribute__((visibility("default"))) NOINLINE int lib_helpers(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += helper(i);
	return s;
}

/* dlopen'd by probe.* (after the runtime started): probes land in it when it loads. */
#define NOINLINE __attribute__((noinline))

__attribute__((visibility("default"))) NOINLINE int dl_work(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 7 + 1;
}

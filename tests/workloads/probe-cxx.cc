// Workload for tests/e2e/probe-cxx.sh: C++ functions named by demangled patterns.
//   ns::Klass::method(int): 300 calls, ns::Klass::method(double): 200,
//   ns::Klass::get() const: 100 (60 from main, 40 from the lambda), ns::twice<int>: 50,
//   ns::twice<double>: 70, main's lambda(int): 40, plain_c: 10 (all from main)
#include <cstdio>
#include <cstdlib>

#define NOINLINE __attribute__((noinline))

static volatile long sink;

namespace ns
{
class Klass
{
      public:
	explicit Klass(long v) : v_(v)
	{
	}
	NOINLINE long method(int x);
	NOINLINE long method(double x);
	NOINLINE long get() const;

      private:
	long v_;
};

long Klass::method(int x)
{
	v_ += x;
	sink += v_;
	return v_;
}

long Klass::method(double x)
{
	v_ += (long)(x * 2);
	sink += v_;
	return v_;
}

long Klass::get() const
{
	sink += v_;
	return v_;
}

template <class T> NOINLINE T twice(T x)
{
	sink += (long)x;
	return x + x;
}
} // namespace ns

extern "C" NOINLINE long plain_c(long x)
{
	sink += x;
	return x * 3;
}

int main(int argc, char **argv)
{
	ns::Klass k(argc);
	long total = 0;
	auto lambda = [&total, &k](int i) NOINLINE {
		total += i + k.get();
		sink += total;
	};
	for (int i = 0; i < 300; i++)
		total += k.method(i + argc);
	for (int i = 0; i < 200; i++)
		total += k.method(i * 0.5 + argc);
	for (int i = 0; i < 60; i++)
		total += k.get();
	for (int i = 0; i < 50; i++)
		total += ns::twice(i + argc);
	for (int i = 0; i < 70; i++)
		total += (long)ns::twice(i * 0.25 + argc);
	for (int i = 0; i < 40; i++)
		lambda(i + argc);
	for (int i = 0; i < 10; i++)
		total += plain_c(i + argc);
	printf("probe-cxx %ld\n", total % 1000);
	return 0;
}

#!/bin/bash
# An inlined lambda is named with its enclosing function, as the demangler names it
# (`ns::run(int)::{lambda(int)#1}::operator()(int) const`), not just `operator()`: GCC
# gives a lambda's operator() no linkage name in DWARF; the reference is the same source
# built with the lambdas out of line, whose symbols `nm -C` demangles.
source "$(dirname "$0")/lib.sh"
require_tool g++
require_tool nm
export XDG_CACHE_HOME=$WORK/cache
cat >"$WORK/l.cc" <<'EOF'
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
char text[] = "xyz";
namespace ns {
struct Acc {
	long total = 0;
	template <class F> FATTR void each(const std::vector<int> &v, F f)
	{
		for (int x : v)
			total += f(x);
	}
};
FATTR long run(int k)
{
	auto a = [&](int i) LATTR { return i + k; };
	auto b = [&](double d) LATTR { return d * k; };
	auto c = [=](int i) mutable LATTR { k++; return i - k; };
	auto d = [](const std::string &s, char *p) LATTR { return (int)s.find(*p) + (int)s.size(); };
	long s = a(1) + (long)b(2.0) + c(3) + d(std::string(k, 'x'), text);
	if (k > 1) {
		auto e = [k](unsigned long n, const int *p) LATTR { return (long)n * k + (p ? *p : 0); };
		s += e(4, &k);
	}
	return s;
}
} // namespace ns
int main(int argc, char **argv)
{
	std::vector<int> v(1000, argc);
	ns::Acc acc;
	acc.each(v, [](int x) LATTR { return x * 3; });
	auto sq = [&acc](long y) LATTR { return y * y + acc.total; };
	printf("%ld %ld\n", ns::run(argc + 2), sq(acc.total));
	return 0;
}
EOF
noinline='__attribute__((noinline))'
g++ -O2 -g -DFATTR="$noinline" -DLATTR="$noinline" -o "$WORK/ref" "$WORK/l.cc" || fail "cannot build"
g++ -O2 -g -DFATTR="$noinline" -DLATTR='__attribute__((always_inline))' -o "$WORK/inl" "$WORK/l.cc" ||
	fail "cannot build"
nm -C "$WORK/ref" | grep -o ' [^ ]*{lambda.*::operator().*' | sed 's/^ //; s/ \[clone [^]]*\]//g' |
	sort -u >"$WORK/want"
[ "$(wc -l <"$WORK/want")" -ge 6 ] || fail "reference has too few lambdas: $(cat "$WORK/want")"
"$CALLPATH" struct --no-cache --dump --format json "$WORK/inl" >"$WORK/s.json" || fail "struct failed"
python3 - "$WORK/s.json" >"$WORK/got" <<'PY'
import json, sys
def walk(s):
    if s.get("kind") == "inline" and "operator()" in s["name"]:
        print(s["name"])
    for c in s.get("children", []):
        walk(c)
for p in json.load(open(sys.argv[1]))["procedures"]:
    walk(p)
PY
sort -u -o "$WORK/got" "$WORK/got"
# Every inlined lambda has its reference name (a lambda the compiler folded away has no code).
comm -13 "$WORK/want" "$WORK/got" >"$WORK/diff"
[ -s "$WORK/diff" ] && fail "inlined lambdas named differently from nm -C:
$(cat "$WORK/diff")
reference:
$(cat "$WORK/want")"
[ "$(wc -l <"$WORK/got")" -ge 7 ] || fail "too few inlined lambdas found: $(cat "$WORK/got")"
note "ok: $(wc -l <"$WORK/got") inlined lambdas named as the demangler names them"

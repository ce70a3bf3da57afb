#!/bin/bash
# callpath search on a C++ program whose time is in throwing exceptions: g++ -O2 puts the
# throw into main's split-off part (main.cold), and a sampled path through it is main's.
# main, under which all the time is, is decided CPUBound with most of it (before: about a
# third to a half, the throws' samples were nobody's).
. "$(dirname "$0")/lib.sh"
require_tool g++
require_built "$CALLPATH"
cat >"$WORK/exc.cpp" <<'CPP'
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
static int depth_throw(int d, int x) {
  if (d == 0) {
    if (x % 3 == 0) throw std::runtime_error("bad " + std::to_string(x));
    return x;
  }
  return depth_throw(d - 1, x) + 1;
}
static double crunch(int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += (i % 7) * 0.5;
  return s;
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 300000;
  long caught = 0, sum = 0;
  double c = 0;
  for (int i = 0; i < n; i++) {
    try {
      sum += depth_throw(8, i);
    } catch (const std::exception &e) {
      caught++;
    }
    c += crunch(200);
  }
  printf("%ld %ld %g\n", caught, sum, c);
  return 0;
}
CPP
g++ -O2 -o "$WORK/exc" "$WORK/exc.cpp" || fail "g++ failed"
nm "$WORK/exc" | grep -q ' main\.cold' || fail "g++ -O2 made no main.cold: the test tests nothing"
"$CALLPATH" search -q --libraries none --hypotheses CPUBound --after 0.3 --for 4 --kill \
	-o "$WORK/m" -- "$WORK/exc" 100000000 >"$WORK/out" 2>"$WORK/err" ||
	fail "search failed: $(tail -5 "$WORK/err")"
json_assert "$WORK/m/search.json" "[n for n in d['nodes'] if n['function'] == 'main' and
    n['kind'] == 'function' and n['thread'] is None and n['value'] >= 0.7]" \
	"main is not decided with most of the time: $(grep -A4 Bottlenecks "$WORK/out")"
note "$(grep -m1 '/Code/exc/main ' "$WORK/out")"

#!/bin/bash
# callpath probe -f with demangled C++ names: a namespace's class method (both overloads,
# or one by its parameter list), a const method, one instantiation of a template, a
# lambda in main, and a module-qualified pattern; --list shows each match's demangled
# form, which must be what c++filt prints for its symbol. Counts are checked against the
# workload's known call counts, by mangled name (nm), independently of our demangling.
. "$(dirname "$0")/lib.sh"
require_tool c++filt
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/probe-cxx.O2
want=$("$wl")

# --list: both overloads of ns::Klass::method, each with its demangled form.
"$CALLPATH" probe --list -f 'ns::Klass::method' -f 'ns::twice<int>' \
	-f 'main::{lambda(int)#1}::operator()' -- "$wl" >"$WORK/list" 2>"$WORK/err" ||
	fail "--list failed: $(cat "$WORK/err")"
expect() { grep -qP "$1" "$WORK/list" || { cat "$WORK/list" >&2; fail "missing: $1"; }; }
expect '^probe-cxx\.O2\t_ZN2ns5Klass6methodEi\t0x[0-9a-f]+\t\d+\tprobe\tns::Klass::method\(int\)$'
expect '^probe-cxx\.O2\t_ZN2ns5Klass6methodEd\t.*\tprobe\tns::Klass::method\(double\)$'
expect '^probe-cxx\.O2\t_ZN2ns5twiceIiEET_S1_\t.*\tint ns::twice<int>\(int\)$'
expect '^probe-cxx\.O2\t_ZZ4mainENKUliE_clEi\t'
grep -q "twiceIdE" "$WORK/list" && fail "ns::twice<int> matched twice<double>: $(cat "$WORK/list")"
[ "$(tail -n +2 "$WORK/list" | wc -l)" = 4 ] || fail "expected 4 matches: $(cat "$WORK/list")"
tail -n +2 "$WORK/list" | while IFS=$'\t' read -r _ sym _ _ _ dem; do
	[ "$(c++filt "$sym")" = "$dem" ] || fail "demangled form of $sym: '$dem', c++filt: '$(c++filt "$sym")'"
done || exit 1

# A run: the patterns as a user writes them, counted per calling context.
run "$CALLPATH" probe -q -o "$WORK/m" -f 'ns::Klass::method(int)' -f 'ns::Klass::get() const' \
	-f 'probe-cxx.O2:ns::twice<int>' -f 'main::{lambda(int)#1}::operator()' -- "$wl"
grep -qx "$want" "$WORK/run.out" || fail "output changed: $(cat "$WORK/run.out")"
python3 "$TREE" "$WORK/m" 'main > _ZN2ns5Klass6methodEi=300' 'main > _ZNK2ns5Klass3getEv=60' \
	'main > _ZZ4mainENKUliE_clEi > _ZNK2ns5Klass3getEv=40' 'main > _ZZ4mainENKUliE_clEi=40' \
	'main > _ZN2ns5twiceIiEET_S1_=50' || fail "counts"
python3 "$TREE" "$WORK/m" >"$WORK/tree"
grep -q "_ZN2ns5Klass6methodEd\|_ZN2ns5twiceIdE" "$WORK/tree" &&
	fail "functions not named were probed: $(cat "$WORK/tree")"
note "ok"

#!/bin/bash
# callpath diff refuses bad input clearly, with exit status 2: a missing or corrupt A or B
# (the message names which), a wrong number of profiles, bad option values.
. "$(dirname "$0")/lib.sh"

require_built "$CALLPATH" "$CP_WORKLOADS/diffpair.O2"
run "$CALLPATH" record -q -o "$WORK/m" "$CP_WORKLOADS/diffpair.O2" 3000000
echo "not a database" >"$WORK/corrupt.db"
mkdir -p "$WORK/empty"

expect_error() { # expect_error PATTERN ARGS...: exit 2 and PATTERN in the message
	local pattern=$1 rc=0
	shift
	"$CALLPATH" diff "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ $rc = 2 ] || fail "diff $* exited $rc, not 2: $(cat "$WORK/err")"
	grep -q -- "$pattern" "$WORK/err" || fail "diff $*: no '$pattern' in: $(cat "$WORK/err")"
	[ -s "$WORK/out" ] && fail "diff $* wrote output: $(head -3 "$WORK/out")"
	note "diff $*: $(head -1 "$WORK/err")"
}
expect_error "A ($WORK/missing)" "$WORK/missing" "$WORK/m"
expect_error "B ($WORK/missing)" "$WORK/m" "$WORK/missing"
expect_error "B ($WORK/corrupt.db)" "$WORK/m" "$WORK/corrupt.db"
expect_error "A ($WORK/empty)" "$WORK/empty" "$WORK/m"
expect_error "two profiles" "$WORK/m"
expect_error "two profiles" "$WORK/m" "$WORK/m" "$WORK/m"
expect_error "invalid value 'shares' for --normalize" "$WORK/m" "$WORK/m" --normalize shares
expect_error "--metric nosuch" "$WORK/m" "$WORK/m" --metric nosuch
# and a good pair works
run "$CALLPATH" diff "$WORK/m" "$WORK/m" --format csv
grep -q '^id,parent' "$WORK/run.out" || fail "no CSV"
note "ok"

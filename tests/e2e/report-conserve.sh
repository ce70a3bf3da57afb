#!/bin/bash
# Property test: every view of `callpath report` conserves cost (report-conserve.py), on
# every workload of tests/workloads in every variant (-O0, -O2, -O2 with frame pointers;
# the C++ ones at -O2) and on stripped copies of some, with every option that chooses or combines values (--flatten,
# --focus, --thread, --stat).
. "$(dirname "$0")/lib.sh"

CHECK=$(dirname "$0")/report-conserve.py
[ -x "$CALLPATH" ] || fail "no callpath executable at $CALLPATH"

# Shorter runs than the workloads' defaults where they take an argument: the property
# holds for any run, a few hundred samples are enough.
args_of() {
	case $1 in
	atfork) echo 20 ;;
	callers) echo 30000 ;;
	diffpair) echo 3000000 ;;
	chain | loopinline) echo 500 ;;
	dlopen) echo "$CP_WORKLOADS/libdlwork.so 60000000" ;;
	forkmany) echo "20 32" ;;
	recurse) echo "100 200" ;;
	rawclone) echo 50 ;;
	sigjump) echo 500 ;;
	steady | mallocbusy) echo "1 2" ;;
	threads) echo 3 ;;
	omp-regions) echo "imbalance 60" ;;
	search-loops) echo 1 ;;
	shortthreads) echo 100 ;; # 1000 threads: 3,000 --thread reports, 60 s
	untilsig) echo "$WORK/untilsig.ready burn 1" ;; # else it burns 60 s waiting for a signal
	esac
}

# check_one [--light] NAME PROGRAM [ARGS...]: records and checks one run (--light: the
# views and --flatten only, see report-conserve.py).
check_one() {
	local light=
	[ "$1" = --light ] && light=--light && shift
	local name=$1 dir=$WORK/m-$1
	shift
	"$CALLPATH" record -q -o "$dir" -- "$@" >"$WORK/record.out" 2>"$WORK/record.err"
	ls "$dir"/*.proc >/dev/null 2>&1 || {
		cat "$WORK/record.err" >&2
		fail "record of $name wrote no measurement files"
	}
	out=$(python3 "$CHECK" "$CALLPATH" "$dir" $light 2>&1) || {
		echo "$out" >&2
		fail "$name: a view does not conserve cost"
	}
	note "$name: $out"
	rm -rf "$dir"
}

cd "$WORK" || fail "no work directory"
# Two ctest tests share this script, so that they run side by side and each has its own time
# limit: report-conserve (stripped copies, every workload at -O2 with every check) and
# report-conserve-variants (which sources it: every workload at -O0 and -O2fp, --light).
part=main
[ "$(basename "$0")" = report-conserve-variants.sh ] && part=variants
if [ $part = main ]; then
# Code without line information: stripped copies (a private structure cache, else the
# cached structure of the unstripped file, same build-id, would bring the lines back).
require_tool strip
export XDG_CACHE_HOME=$WORK/cache
for name in chain loopinline recurse; do
	cp "$CP_WORKLOADS/$name.O2" "$WORK/$name.stripped" && strip "$WORK/$name.stripped" ||
		fail "cannot strip $name.O2"
	# shellcheck disable=SC2046 # the arguments are words
	check_one "$name.stripped" "$WORK/$name.stripped" $(args_of "$name")
done
unset XDG_CACHE_HOME
fi
n=0
for src in "$CP_SOURCE_DIR"/tests/workloads/*.c "$CP_SOURCE_DIR"/tests/workloads/*.cc; do
	name=$(basename "${src%.*}")
	case $name in lib*) continue ;; esac
	variants=O2
	[ $part = variants ] && variants="O0 O2fp"
	[ "${src##*.}" = cc ] && [ $part = variants ] && continue
	for v in $variants; do
		prog=$CP_WORKLOADS/$name.$v
		[ -x "$prog" ] || fail "workload $prog is not built"
		# The threads, statistics and focus checks on -O2; the other variants change the
		# trees (inlining, unwinding), not how threads combine: views and --flatten there.
		light=--light
		[ "$v" = O2 ] && light=
		# shellcheck disable=SC2046,SC2086 # the arguments are words
		check_one $light "$name.$v" "$prog" $(args_of "$name")
		n=$((n + 1))
	done
done
min=30
[ $part = variants ] && min=50
[ "$n" -ge $min ] || fail "only $n workload variants checked"
note "ok: $n workload variants"

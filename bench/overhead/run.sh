#!/bin/bash
# Sampling-overhead benchmark (issue 2): each workload with no profiler, gperftools,
# perf record (dwarf and frame-pointer call graphs) and callpath record, timed by hyperfine;
# then the samples each run actually delivered are counted, and summarize.py prints the
# table for bench/RESULTS.md.
#
# usage: bench/overhead/run.sh [-r RUNS] [-o OUTDIR] [-t "TOOLS"] [-w "WORKLOADS"]
#   WORKLOADS  calls, loops, threads (defaults of each program), and startup (calls 1: the
#              fixed start/stop cost of each tool, subtracted in the "net" column)
#   TOOLS      default: base gperf perf_dw perf_fp, plus cp_1k cp_250 cp_1k_report when
#              `$CALLPATH record` works (see wrap.sh)
#   CALLPATH   the callpath executable to measure (default <repo>/build/callpath)
#   CALLPATH_RT  its runtime, for the handler timing (default: libcallpath-rt.so beside it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
runs=5 out=/tmp/cp-bench-overhead tools="" workloads="startup calls loops threads"
while getopts r:o:t:w: opt; do
	case $opt in
	r) runs=$OPTARG ;;
	o) out=$OPTARG ;;
	t) tools=$OPTARG ;;
	w) workloads=$OPTARG ;;
	*) exit 2 ;;
	esac
done
export CALLPATH=${CALLPATH:-$repo/build/callpath}
export CALLPATH_RT=${CALLPATH_RT:-$(dirname "$CALLPATH")/libcallpath-rt.so}
bin=$out/bin
"$here/build.sh" "$bin" >/dev/null

callpath_works() {
	local d rc=0
	d=$(mktemp -d)
	sh "$here/wrap.sh" cp_1k "$d" "$bin/calls" 25 >/dev/null 2>&1 &&
		compgen -G "$d/cp_1k.*.cp/*.thr" >/dev/null || rc=1
	rm -rf "$d"
	return $rc
}

if [ -z "$tools" ]; then
	tools="base gperf perf_dw perf_fp"
	if [ -x "$CALLPATH" ] && callpath_works; then
		tools="$tools cp_1k cp_250 cp_1k_report"
	else
		echo "run.sh: $CALLPATH record does not work; measuring the peers only" >&2
	fi
fi

count_samples() { # $1 workload, $2 tool, $3 dir of that tool's outputs
	local kind f
	case $2 in
	base) return ;;
	gperf) kind=gperf ;;
	perf_*) kind=perf ;;
	cp_*) kind=callpath ;;
	esac
	for f in "$3"/"$2".*; do
		echo "$1 $2 $(basename "$f") $("$here/samples.py" "$kind" "$f")"
	done
}

rm -rf "$out/res" # results of an earlier run would mix with this one's
mkdir -p "$out/res"
: >"$out/res/samples.txt"
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "host: $(nproc) vCPUs, $(uname -r), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "tools: $tools"
	echo "callpath: $CALLPATH, $CALLPATH_RT (tree at $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo ?))"
	echo "rounds: $runs (+1 warm-up), each tool once per round, interleaved"
} >"$out/res/meta.txt"

# Runs are interleaved: each round times every tool once (one hyperfine call, --runs 1, the
# order rotated from round to round), so that the load other users put on the shared VM
# drifts over all tools alike; summarize.py pairs each tool's run with the base run of the
# same round. Round 0 is the warm-up and is not kept.
for w in $workloads; do
	raw=$out/raw/$w
	rm -rf "$raw" "$out/res/$w".r*.json
	mkdir -p "$raw"
	cmd=$bin/$w
	[ "$w" = startup ] && cmd="$bin/calls 1"
	read -ra tl <<<"$tools"
	for ((r = 0; r <= runs; r++)); do
		args=()
		for ((i = 0; i < ${#tl[@]}; i++)); do
			t=${tl[(i + r) % ${#tl[@]}]}
			args+=(-n "$t" "sh $here/wrap.sh $t $raw $cmd")
		done
		json=$out/res/$w.r$r.json
		[ "$r" = 0 ] && json=$out/raw/warmup.json
		hyperfine -N --style none --runs 1 --export-json "$json" "${args[@]}"
		[ "$r" = 0 ] && rm -rf "$raw"/* # warm-up profiles are not counted
	done
	for t in $tools; do
		count_samples "$w" "$t" "$raw" >>"$out/res/samples.txt"
	done
	rm -rf "$raw" # perf dwarf files are ~10 MB each
done
# Signal-handler time per sample (handler-time.so), 3 runs per workload and tool; these
# runs are not timed as a whole.
export HT_SO=$bin/handler-time.so CP_SIGNAL=${CP_SIGNAL:-40}
ht_tools=gperf_ht
[[ " $tools " == *" cp_1k "* ]] && ht_tools="$ht_tools cp_rt_1k_ht"
: >"$out/res/handler.txt"
for w in $workloads; do
	[ "$w" = startup ] && continue
	mkdir -p "$out/raw/ht"
	for t in $ht_tools; do
		for i in 1 2 3; do
			sh "$here/wrap.sh" "$t" "$out/raw/ht" "$bin/$w" >/dev/null 2>&1 || true
		done
		cat "$out/raw/ht/$t".*.ht 2>/dev/null | sed "s/^/$w $t /" >>"$out/res/handler.txt"
		rm -rf "$out/raw/ht"/*
	done
done
# Interruption cost per sample, kernel included (gaps.c): each tool spins 1 s at stack
# depths 5 and 40, 3 runs each; one output directory per run so its samples can be counted.
: >"$out/res/gaps.txt"
for t in base gperf perf_dw cp_1k; do
	[[ " $tools " == *" $t "* ]] || continue
	for depth in 5 40; do
		for i in 1 2 3; do
			g=$out/raw/gaps
			rm -rf "$g"
			mkdir -p "$g"
			line=$(sh "$here/wrap.sh" "$t" "$g" "$bin/gaps" "$depth" 1 2>/dev/null | grep '^gaps ')
			n=$(count_samples gaps "$t" "$g" | awk '{print $4}')
			echo "$t ${n:-0} $line" >>"$out/res/gaps.txt"
		done
	done
done
rm -rf "$out/raw/gaps"

# Correctness side by side: top procedures by inclusive share per tool.
for w in calls threads; do
	[[ " $workloads " == *" $w "* ]] || continue
	cp_args=()
	[[ " $tools " == *" cp_1k "* ]] && cp_args=(--callpath "$CALLPATH")
	python3 "$here/compare.py" --bin "$bin" "${cp_args[@]}" "$w" >"$out/res/compare-$w.md" ||
		echo "run.sh: compare.py $w failed" >&2
done

echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/res/meta.txt"
python3 "$here/summarize.py" "$out/res"

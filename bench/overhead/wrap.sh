#!/bin/sh
# wrap.sh TOOL OUTDIR PROGRAM [ARGS...]: run PROGRAM under one profiler configuration,
# writing that run's profile to a new name in OUTDIR (so every timed run's samples can be
# counted afterwards). Every configuration, "base" included, goes through this script so
# that all of them pay the same sh start-up. CALLPATH names the callpath executable:
# cp_1k and cp_250 run `callpath record -q` (no end-of-run summary: the run-time overhead),
# cp_1k_report `callpath record` as a user runs it, summary of the hottest contexts included.
# *_ht: with handler-time.so ($HT_SO) timing the sampling signal handler; for callpath the
# runtime ($CALLPATH_RT) is preloaded directly, as record does, because the shim must follow
# it in LD_PRELOAD (its RTLD_NEXT sigaction is then the shim's); its signal is $CP_SIGNAL
# (SIGRTMIN+6 = 40 by default). The *_ht runs are not timed by hyperfine.
set -eu
tool=$1 out=$2
shift 2
f="$out/$tool.$$"
case $tool in
base) exec "$@" ;;
gperf) LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libprofiler.so CPUPROFILE="$f.prof" \
	CPUPROFILE_FREQUENCY=1000 exec "$@" ;;
perf_dw) exec perf record -q --no-bpf-event -e cpu-clock -F 1000 --call-graph dwarf \
	-o "$f.data" "$@" ;;
perf_fp) prog=$1; shift # the -fno-omit-frame-pointer build of the same workload
	exec perf record -q --no-bpf-event -e cpu-clock -F 1000 --call-graph fp \
	-o "$f.data" "$prog.fp" "$@" ;;
cp_1k) exec "$CALLPATH" record -q -o "$f.cp" -e cputime@1000000 -- "$@" ;;
cp_250) exec "$CALLPATH" record -q -o "$f.cp" -e cputime@4000000 -- "$@" ;;
cp_1k_report) exec "$CALLPATH" record -o "$f.cp" -e cputime@1000000 -- "$@" ;;
gperf_ht) LD_PRELOAD="$HT_SO /usr/lib/x86_64-linux-gnu/libprofiler.so" HT_OUT="$f.ht" \
	CPUPROFILE="$f.prof" CPUPROFILE_FREQUENCY=1000 exec "$@" ;;
cp_rt_1k_ht) LD_PRELOAD="$CALLPATH_RT $HT_SO" HT_OUT="$f.ht" HT_SIGNAL=$CP_SIGNAL \
	CALLPATH_OUTPUT="$f.cp" CALLPATH_EVENTS=cputime@1000000 exec "$@" ;;
*) echo "wrap.sh: unknown tool '$tool'" >&2; exit 2 ;;
esac

#!/bin/bash
# Measurement directories stay small on fork/exec-heavy runs and with many short threads:
# ended threads are packed into their process file (one file per process image), files are
# trimmed to their contents; a SIGKILL still leaves every sample readable. And the CPU the
# processes used is accounted for: samples (start-up before the runtime charged to the
# loader) plus the runtime's own start and end add up to the CPU time the kernel reports.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
prog=$CP_WORKLOADS/shortthreads.O2
[ -x "$prog" ] || fail "workload shortthreads.O2 not built"

# 300 runs of /bin/true under bash: 602 process images. The CPU time of everything run
# (rusage of the reaped children, from the kernel) is the reference.
python3 - "$CALLPATH" "$WORK/b" >"$WORK/rusage" <<'PY' || fail "bash loop failed"
import resource, subprocess, sys
rc = subprocess.run([sys.argv[1], "record", "-q", "--no-analyze", "-o", sys.argv[2], "--",
                     "bash", "-c", "for i in $(seq 300); do /bin/true; done"]).returncode
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime)
sys.exit(rc)
PY
bytes=$(du -sb "$WORK/b" | cut -f1)
kib=$(du -sk "$WORK/b" | cut -f1)
note "300 /bin/true: $bytes bytes, $kib KiB on disk, $(ls "$WORK/b" | wc -l) files"
[ "$bytes" -lt 5000000 ] && [ "$kib" -lt 5000 ] || fail "bash loop measurement too large: $bytes bytes, $kib KiB"
[ "$(ls "$WORK/b" | grep -c '\.thr$')" = 0 ] || fail "thread files left: $(ls "$WORK/b" | grep '\.thr$' | head -3)"
$CHECK "$WORK/b" >"$WORK/b.json" || fail "bash loop measurement invalid"
json_assert "$WORK/b.json" 'len(d["procs"]) >= 600 and len(d["threads"]) == len(d["procs"])' \
	"one process file per image, each with its thread"
python3 - "$WORK/b.json" "$(cat "$WORK/rusage")" <<'PY' || fail "CPU of the bash loop not accounted for"
import json, sys
d, real = json.load(open(sys.argv[1])), float(sys.argv[2])
period = d["procs"][0]["metrics"][0]["period"]
sampled = sum(t["samples"][0] for t in d["threads"]) * period / 1e9
startup = sum(p["startup_ns"] for p in d["procs"]) / 1e9
runtime = sum(p["runtime_ns"] for p in d["procs"]) / 1e9
print(f"CPU {real:.3f} s (rusage): sampled {sampled:.3f} s (start-up {startup:.3f} s), "
      f"the runtime's own {runtime:.3f} s")
# Start-up before the runtime (exec, ld.so) is charged to every exec'd image...
assert sum(1 for p in d["procs"] if p["startup_ns"] > 0) >= 300, "start-up not measured"
# ... and samples plus what the runtime reports of itself make up the CPU time ...
# (a sample taken while the runtime starts or ends is in both; 600 images each shorter than a
# sampling period make this a statistical bound, wide for a loaded machine)
assert 0.6 < (sampled + runtime) / real < 2.0, (sampled, runtime, real)
# ... and the program's own share (without the runtime's) is mostly sampled, though every
# image lives far less than a sampling period.
assert sampled / (real - runtime) > 0.35, (sampled, runtime, real)
PY

# 1000 short threads: one process file, all threads and all samples readable.
run "$CALLPATH" record -q -o "$WORK/t" -- "$prog" 1000
n=$(ls "$WORK/t" | grep -c -E '\.(thr|proc)$')
[ "$n" = 1 ] || fail "1000 short threads left $n measurement files"
$CHECK "$WORK/t" >"$WORK/t.json" || fail "short-thread measurement invalid"
json_assert "$WORK/t.json" 'len(d["threads"]) == 1001 and d["procs"][0]["packed"] == 1001' "1001 packed threads"
json_assert "$WORK/t.json" 'all(t["totals"][0] == t["samples"][0] * d["procs"][0]["metrics"][0]["period"] for t in d["threads"])' \
	"every sample's value is in its tree"
# Each thread lives about half a sampling period: sampled in proportion to its CPU time.
json_assert "$WORK/t.json" '0.5 < sum(t["samples"][0] for t in d["threads"]) * 1e6 / sum(t["cpu_ns"] for t in d["threads"]) < 1.5' \
	"short threads sampled in proportion to their CPU time"
run "$CALLPATH" report "$WORK/t" --format json
python3 - "$WORK/run.out" "$WORK/t.json" <<'PY' || fail "report of the packed threads wrong"
import json, sys
r, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
s = r["summary"]
assert s["threads"] == 1001, s
assert r["metrics"][0]["samples"] == sum(t["samples"][0] for t in d["threads"]), r["metrics"][0]
assert s["process_cpu_s"] > 0.5 * sum(t["cpu_ns"] for t in d["threads"]) / 1e9, s
PY

# SIGKILL after the threads ended, while the main thread runs: packed threads and the live
# thread's file are all readable, the process file not FINISHED.
(cd "$WORK" && exec "$CALLPATH" record -q -o "$WORK/k" -- "$prog" 200 hold) >"$WORK/k.out" 2>&1 &
cpid=$!
wait_for_output "$WORK/k.out" "threads done" || fail "short threads did not finish"
sleep 1
kill_recorded_program $cpid
[ $? = 137 ] || fail "exit status after SIGKILL, want 137"
$CHECK "$WORK/k" >"$WORK/k.json" || fail "files of a killed run are not readable"
json_assert "$WORK/k.json" 'not d["procs"][0]["flags"] & 1 and d["procs"][0]["packed"] == 200' \
	"killed run: not FINISHED, 200 threads packed"
json_assert "$WORK/k.json" 'len(d["threads"]) == 201 and not d["threads"][0]["packed"] and d["threads"][0]["samples"][0] > 20' \
	"killed run: the live thread's file with its samples"
json_assert "$WORK/k.json" 'all(t["totals"][0] == t["samples"][0] * 1000000 for t in d["threads"][1:])' \
	"killed run: packed values consistent with counters"
run "$CALLPATH" report "$WORK/k" --format json
json_assert "$WORK/run.out" 'd["summary"]["threads"] == 201' "report reads the killed run"
exit 0

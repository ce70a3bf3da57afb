#!/bin/bash
# A failed exec after packing: the image's files were packed and the thread file removed
# when exec began; when exec fails the thread goes on in its file created again (an UNPACK
# record says so), so the samples after the failed exec are kept, at exit and when killed.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
require_tool cc
cat >"$WORK/ef.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <unistd.h>
volatile unsigned long sink;
__attribute__((noinline)) void before(void) { for (unsigned long i = 0; i < 200000000ul; i++) sink += i; }
__attribute__((noinline)) void after(void) { for (unsigned long i = 0; i < 200000000ul; i++) sink += i; }
int main(int argc, char **argv)
{
	before();
	char *args[] = {"/nonexistent/prog", NULL};
	execv(args[0], args);
	printf("exec failed\n");
	fflush(stdout);
	after();
	if (argc > 1 && !strcmp(argv[1], "hold"))
		for (;;)
			after();
	return 0;
}
C
cc -O1 -g -o "$WORK/ef" "$WORK/ef.c" || fail "cannot compile helper"
# Samples in after() (following the failed exec) reach the final data.
after_share() { # DIR: the thread's samples in after(), from its PC nodes and the symbol table
	CP_SOURCE_DIR=$CP_SOURCE_DIR python3 - "$1" "$WORK/ef" <<'PY'
import importlib.util, os, struct, subprocess, sys
spec = importlib.util.spec_from_file_location("rc", os.environ["CP_SOURCE_DIR"] + "/tests/e2e/record-check.py")
rc = importlib.util.module_from_spec(spec); spec.loader.exec_module(rc)
d, exe = sys.argv[1], sys.argv[2]
procs, threads = rc.read_dir(d)
assert len(procs) == 1 and len(threads) == 1, (len(procs), len(threads))
syms = {}
for line in subprocess.run(["nm", "-S", exe], capture_output=True, text=True).stdout.split("\n"):
    f = line.split()
    if len(f) == 4 and f[3] in ("before", "after"):
        syms[f[3]] = (int(f[0], 16), int(f[0], 16) + int(f[1], 16))
exe_ids = [m["id"] for m in procs[0]["modules"] if os.path.realpath(m["path"]) == os.path.realpath(exe)]
t = threads[0]
data = rc.thread_data(d, t)
hsize, used = struct.unpack_from("<I", data, 16)[0], struct.unpack_from("<Q", data, 24)[0]
ns = 24 + 8 * t["nmetrics"]
got = {"before": 0, "after": 0}
for off in range(hsize, used, ns):
    _, kind, _, module, _, offset = struct.unpack_from("<IHHIIQ", data, off)
    v = struct.unpack_from("<Q", data, off + 24)[0]
    for name, (lo, hi) in syms.items():
        if kind == 2 and module in exe_ids and lo <= offset < hi:
            got[name] += v
print(got["before"], got["after"], t["packed"])
PY
}
run "$CALLPATH" record -q -o "$WORK/m" -- "$WORK/ef"
grep -q "exec failed" "$WORK/run.out" || fail "exec did not fail"
[ "$(ls "$WORK/m" | grep -c -E '\.(thr|proc)$')" = 1 ] || fail "files left: $(ls "$WORK/m")"
read -r b a packed < <(after_share "$WORK/m") || fail "measurement unreadable"
note "before exec $b ns, after $a ns, packed $packed"
[ "$packed" = True ] || fail "thread not packed at exit"
[ "$a" -gt $((b / 3)) ] || fail "samples after the failed exec lost ($a ns, before $b ns)"

# Killed after the failed exec: the re-created file holds everything.
(cd "$WORK" && exec "$CALLPATH" record -q -o "$WORK/k" -- "$WORK/ef" hold) >"$WORK/k.out" 2>&1 &
cpid=$!
wait_for_output "$WORK/k.out" "exec failed" || fail "exec did not fail (killed run)"
sleep 1
kill_recorded_program $cpid
read -r b a packed < <(after_share "$WORK/k") || fail "killed measurement unreadable"
note "killed: before exec $b ns, after $a ns, packed $packed"
[ "$packed" = False ] || fail "killed run: the thread should be read from its file"
[ "$b" -gt 0 ] && [ "$a" -gt 0 ] || fail "killed run: samples before ($b) or after ($a) the failed exec lost"
exit 0

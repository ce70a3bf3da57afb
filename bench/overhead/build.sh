#!/bin/sh
# Builds the overhead-benchmark workloads into $1 (default /tmp/cp-bench-overhead/bin):
#   W      -O2 -g, no frame pointers (what callpath, gperftools and perf dwarf run)
#   W.fp   the same with -fno-omit-frame-pointer (for perf --call-graph fp, optional)
#   gaps (+ .fp)      the interruption-cost probe (see gaps.c)
#   handler-time.so  the signal-handler timer (see handler-time.c)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/cp-bench-overhead/bin}
CC=${CC:-gcc}
mkdir -p "$out"
for w in calls loops threads; do
	"$CC" -O2 -g -fomit-frame-pointer -pthread -o "$out/$w" "$here/$w.c"
	"$CC" -O2 -g -fno-omit-frame-pointer -pthread -o "$out/$w.fp" "$here/$w.c"
done
"$CC" -O2 -g -o "$out/gaps" "$here/gaps.c"
"$CC" -O2 -g -fno-omit-frame-pointer -o "$out/gaps.fp" "$here/gaps.c"
"$CC" -O2 -Wall -Wextra -shared -fPIC -o "$out/handler-time.so" "$here/handler-time.c" -ldl
echo "built calls loops threads (+ .fp) gaps and handler-time.so in $out"

#!/bin/bash
# `callpath view` on a big profile database: a synthetic database of SCOPES scopes (default
# 1,000,000; bench/view/gen-db.c, written through the database API), served by
# `callpath view DB`; times with curl (time_total, client to server on 127.0.0.1):
#   - start: from the command to the URL printed (the server ready);
#   - first view: what the page asks first (/api/info, /api/metrics, /api/children of the
#     root), one after another, on a fresh server;
#   - expansions: /api/children down the hot path (the largest child each time, 30 levels),
#     and of the widest node (20,000 children; the largest 500 returned, all sorted);
#   - the server's peak RSS (VmHWM) after those;
#   - the bottom-up view (read from the database's bottom-up tables): the procedures at the
#     top, then expansions down its hot path (30 levels), and the peak RSS after;
#   - the flat view (read from the database's flat tables): the modules, then expansions
#     down its hot path (module, file, procedure, loops), and the peak RSS after;
#   - /api/threads of rows of the three views (the first request, then per row), and the
#     peak RSS after;
#   - the flat and bottom-up views of one thread and of stat=max (the root, then down the
#     hot path), and the peak RSS after;
#   - the first flat request with stat=max (a server that loads the whole profile for it
#     answers 202 at once, on a thread of its own; a top-down request is timed during the
#     load), and the peak RSS after.
#   bench/view/run.sh [-B BUILD_DIR] [-w WORKDIR] [-n SCOPES]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${CP_BUILD_DIR:-$here/../../build}
work=${TMPDIR:-/tmp}/cp-bench-view
scopes=1000000
while getopts "B:w:n:" o; do
	case $o in
	B) build=$OPTARG ;;
	w) work=$OPTARG ;;
	n) scopes=$OPTARG ;;
	*) exit 2 ;;
	esac
done
mkdir -p "$work"
cc -O2 -D_GNU_SOURCE -I"$here/../../src" "$here/gen-db.c" "$build"/src/db/libcp_db.a \
	"$build"/src/analyze/libcp_analyze.a "$build"/src/format/libcp_format.a \
	"$build"/src/base/libcp_base.a -lsqlite3 -lzstd -lm -o "$work/gen-db"
db=$work/view-$scopes.db
[ -f "$db" ] || "$work/gen-db" "$db" "$scopes" 4
echo "database: $db ($(du -h "$db" | cut -f1)); load: $(cut -d' ' -f1-3 /proc/loadavg)"

rm -f "$work/url"
t0=$(date +%s.%N)
"$build/callpath" view --no-open "$db" >"$work/url" 2>"$work/err" &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
until [ -s "$work/url" ]; do sleep 0.01; done
t1=$(date +%s.%N)
url=$(head -1 "$work/url")
base=${url%%/\?token=*}
token=${url##*token=}
get() { curl -s -o "$work/body" -w '%{time_total}' -H "X-Callpath-Token: $token" "$base$1"; }
echo "start: $(echo "$t1 - $t0" | bc) s"
a=$(get /api/info) b=$(get /api/metrics) c=$(get '/api/children?node=0')
echo "first view: info $a s + metrics $b s + children of the root $c s = $(echo "$a + $b + $c" | bc) s"
node=0 times=()
for _ in $(seq 30); do
	times+=("$(get "/api/children?node=$node")")
	node=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["children"]; print(c[0]["id"] if c else "")' "$work/body")
	[ -n "$node" ] || break
done
printf '%s\n' "${times[@]}" | sort -n | awk '{t[NR]=$1} END {printf "expansions down the hot path: %d, median %.4f s, max %.4f s\n", NR, t[int((NR+1)/2)], t[NR]}'
wide=$(python3 - "$base" "$token" <<'PY'
import json, sys, urllib.request
base, token = sys.argv[1:3]
def get(p):
    return json.load(urllib.request.urlopen(urllib.request.Request(base + p, headers={"X-Callpath-Token": token})))
main = get("/api/children?node=0")["children"][0]["id"]
print([c["id"] for c in get("/api/children?node=" + main)["children"] if c["name"] == "proc_0001"][0])
PY
)
w=$(get "/api/children?node=$wide")
echo "expansion of the widest node ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total_children"])' "$work/body") children): $w s"
echo "server peak RSS after the top-down requests: $(awk '/VmHWM/ {print $2/1024 " MB"}' /proc/$pid/status)"
# the bottom-up view summed over threads, read from the database's bottom-up tables: the
# procedures (all 5000, sorted), then from the smallest procedure with callers up its chain
# of callers (the largest row with callers each time; at most 40 levels: the large
# procedures are called by main at once, the small ones deep in the tree)
c=$(get '/api/children?view=bu')
echo "bottom-up, first view (children of the root: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total_children"])' "$work/body") procedures): $c s"
node=0 times=()
for _ in $(seq 40); do
	node=$(python3 -c 'import json,sys; c=[x for x in json.load(open(sys.argv[1]))["children"] if x["has_children"]]; print(c[-1 if sys.argv[2] == "0" else 0]["id"] if c else "")' "$work/body" "$node")
	[ -n "$node" ] || break
	times+=("$(get "/api/children?view=bu&node=$node")")
done
printf '%s\n' "${times[@]}" | sort -n | awk '{t[NR]=$1} END {printf "bottom-up expansions up a chain of callers: %d, median %.4f s, max %.4f s\n", NR, t[int((NR+1)/2)], t[NR]}'
echo "server peak RSS after the bottom-up requests: $(awk '/VmHWM/ {print $2/1024 " MB"}' /proc/$pid/status)"
# the flat view summed over threads, read from the database's flat tables and the bodies of
# a procedure's frames: the modules, then down the largest row with children each time
c=$(get '/api/children?view=flat')
echo "flat, first view (children of the root): $c s"
node=0 times=() names=()
for _ in $(seq 10); do
	node=$(python3 -c 'import json,sys; c=[x for x in json.load(open(sys.argv[1]))["children"] if x["has_children"]]; print(c[0]["id"] + " " + c[0]["kind"] if c else "")' "$work/body")
	[ -n "$node" ] || break
	names+=("${node#* }")
	node=${node% *}
	times+=("$(get "/api/children?view=flat&node=$node")")
done
echo "flat expansions down the hot path (${names[*]}): ${times[*]} s"
echo "server peak RSS after the flat requests: $(awk '/VmHWM/ {print $2/1024 " MB"}' /proc/$pid/status)"
# per-thread values (/api/threads) of rows of the three views: the first request, then per
# row (top-down down the hot path, bottom-up procedures and callers, flat modules, files and
# procedures); then the flat and bottom-up views of thread=1 and stat=max. A request that
# needs the whole profile (a database without the per-thread tables, or a server that loads
# it for a view) is answered 202 until it is loaded: asked again every 0.1 s, its time
# includes that.
python3 - "$base" "$token" "$pid" <<'PY'
import json, statistics, sys, time, urllib.request
base, token, pid = sys.argv[1:4]
def get(p):
    t0 = time.perf_counter()
    while True:
        r = urllib.request.urlopen(urllib.request.Request(base + p, headers={"X-Callpath-Token": token}))
        if r.status != 202:
            return json.load(r), time.perf_counter() - t0
        time.sleep(0.1)
def hot(view, n):
    ids, node = [], "0"
    for _ in range(n):
        c = [x for x in get("/api/children?view=%s&node=%s&limit=20" % (view, node))[0]["children"] if x["has_children"]]
        if not c:
            break
        node = c[0]["id"]
        ids.append(node)
    return ids
rows = {"td": hot("td", 30), "bu": hot("bu", 40), "flat": hot("flat", 3)}
rows["bu"] += [x["id"] for x in get("/api/children?view=bu&limit=10")[0]["children"]]
first = None
for view, ids in rows.items():
    times = []
    for i in ids:
        d, t = get("/api/threads?view=%s&node=%s" % (view, i))
        assert len(d["values"]) > 0, d
        if first is None:
            first = t
            print("threads, first request (%s %s): %.3f s" % (view, i, t))
            continue
        times.append(t)
    print("threads, %s rows: %d, median %.4f s, max %.4f s" % (view, len(times), statistics.median(times), max(times)))
def rss(what):
    hwm = [l for l in open("/proc/%s/status" % pid) if l.startswith("VmHWM")][0].split()[1]
    print("server peak RSS after %s: %s MB" % (what, int(hwm) / 1024))
rss("the /api/threads requests")
# the flat and bottom-up views of one thread (thread=1) and of a statistic (stat=max): the
# children of the root, then expansions down the hot path (flat: module, file, procedure,
# loops; bottom-up: the smallest procedure with callers, then its callers)
for sel in ("thread=1", "stat=max"):
    for view, n in (("flat", 8), ("bu", 40)):
        d, first = get("/api/children?view=%s&node=0&%s" % (view, sel))
        times = []
        for i in range(n):
            c = [x for x in d["children"] if x["has_children"]]
            if not c:
                break
            pick = c[-1] if view == "bu" and i == 0 else c[0]
            d, t = get("/api/children?view=%s&node=%s&%s" % (view, pick["id"], sel))
            times.append(t)
        print("%s %s: children of the root %.4f s; expansions %d, median %.4f s, max %.4f s" %
              (view, sel, first, len(times), statistics.median(times), max(times)))
rss("the flat and bottom-up views of thread=1 and stat=max")
PY
# the whole profile loads on a thread of its own: the first request is answered 202 at once,
# the top-down view meanwhile as usual; then polled until loaded
fl=$(curl -s -o "$work/body" -w '%{http_code} %{time_total}' -H "X-Callpath-Token: $token" "$base/api/children?view=flat&stat=max")
t0=$(date +%s.%N)
td=$(get '/api/children?node=0')
until [ "$(curl -s -o "$work/body" -w '%{http_code}' -H "X-Callpath-Token: $token" "$base/api/children?view=flat&stat=max")" = 200 ]; do
	sleep 0.2
done
t1=$(date +%s.%N)
fl2=$(get '/api/children?view=flat&stat=max')
echo "flat with stat=max, first request: HTTP ${fl% *} in ${fl#* } s; top-down children of the root during the load: $td s"
echo "flat with stat=max loaded (the whole profile) after $(echo "$t1 - $t0" | bc) s; the next request: $fl2 s"
echo "server peak RSS after flat with stat=max: $(awk '/VmHWM/ {print $2/1024 " MB"}' /proc/$pid/status)"

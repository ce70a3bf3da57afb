#!/usr/bin/env python3
"""Scores `callpath search` on the planted-bottleneck programs (bench/search/README.md).

For each program of planted.json:
  1. the markers in its source agree with the manifest's line range;
  2. uninstrumented runs (median of --base-runs) give its speed in rounds per second;
  3. `callpath record` + `report --format json` check the ground truth: the planted
     function (and loop) hold the share of the manifest's metric that the manifest says;
  4. `callpath search` runs --search-runs times: is the planted cause in the top 3 at the
     manifest's precision, when was it found, how many experiments, the program's
     slowdown (its speed under the search against the uninstrumented median).
Prints a table and writes results.json (--out).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))

# The names a search may print for each hypothesis of the manifest (issue 14's names first).
HYPOTHESIS_ALIASES = {
    "CPUBound": ("cpubound", "cpu", "cputime"),
    "ExcessiveSyncWaiting": ("excessivesyncwaiting", "excessivesyncwaitingtime", "sync",
                             "syncwait", "sync-wait", "wait"),
    "ExcessiveIOBlocking": ("excessiveioblocking", "excessiveioblockingtime", "io",
                            "ioblocking", "io-wait"),
    "MemoryBound": ("memorybound", "memory", "page-faults", "pagefaults"),
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def marker_lines(path):
    lines = open(path).read().split("\n")
    begin = [i + 1 for i, l in enumerate(lines) if "planted: begin" in l]
    end = [i + 1 for i, l in enumerate(lines) if "planted: end" in l]
    if len(begin) != 1 or len(end) != 1:
        return None
    return [begin[0] + 1, end[0] - 1]


def rate_of(text):
    """rounds per second from the program's 'planted: NAME rounds=N seconds=S' line."""
    m = re.findall(r"planted: \S+ rounds=(\d+) seconds=([0-9.]+)", text)
    if not m:
        return None
    rounds, secs = m[-1]
    return int(rounds) / float(secs) if float(secs) > 0 else None


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.bin_dir = os.path.join(self.build, "bench", "search")
        self.callpath = os.path.join(self.build, "callpath")
        self.work = tempfile.mkdtemp(prefix="cp-planted-")

    def env(self, prog):
        env = dict(os.environ)
        env.update(prog.get("env", {}))
        if prog.get("launcher") == "mpi":
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        return env

    def launch(self, prog, tool):
        """argv running the program for --seconds under tool (a list, may be empty)."""
        exe = [os.path.join(self.bin_dir, prog["binary"]), str(self.args.seconds)]
        if prog.get("launcher") == "mpi":
            return ["mpirun", "--oversubscribe", "-np", str(prog.get("ranks", 2))] + tool + exe
        return tool + exe

    def run(self, argv, prog, timeout):
        t0 = time.monotonic()
        try:
            p = subprocess.run(argv, env=self.env(prog), capture_output=True, text=True,
                               timeout=timeout)
            return p.returncode, p.stdout, p.stderr, time.monotonic() - t0
        except subprocess.TimeoutExpired as e:
            return -1, e.stdout or "", (e.stderr or "") + "\n(timed out)", time.monotonic() - t0

    def base_rate(self, prog):
        rates = []
        for _ in range(self.args.base_runs):
            rc, out, err, _ = self.run(self.launch(prog, []), prog, self.args.seconds * 4 + 30)
            r = rate_of(err)
            if rc == 0 and r:
                rates.append(r)
        return statistics.median(rates) if rates else None

    def record(self, prog, events=None):
        d = os.path.join(self.work, prog["name"] + ".rec")
        shutil.rmtree(d, ignore_errors=True)
        tool = [self.callpath, "record", "-q", "-o", d]
        for e in events or prog["record_events"]:
            tool += ["-e", e]
        rc, out, err, _ = self.run(self.launch(prog, tool + ["--"]), prog,
                                   self.args.seconds * 6 + 60)
        if rc != 0:
            return None, None, "record failed (%d): %s" % (rc, err.strip()[-300:])
        return d, rate_of(err), None

    def report(self, d, prog, *extra):
        argv = [self.callpath, "report", d, "--format", "json", "--metric", prog["metric"]]
        argv += prog.get("report_args", [])
        p = subprocess.run(argv + list(extra), capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            return None, "report failed: " + p.stderr.strip()[-300:]
        return json.loads(p.stdout), None


def name_matches(node_name, function):
    """The planted function, also as an OpenMP outlined body (relax._omp_fn.0, or
    'parallel region in relax' where callpath names regions)."""
    return (node_name == function or node_name.startswith(function + "._omp_fn")
            or node_name == "parallel region in " + function)


def outermost(nodes, pred):
    """Nodes satisfying pred with no ancestor satisfying it (recursion counted once)."""
    by_id = {n["id"]: n for n in nodes}
    out = []
    for n in nodes:
        if not pred(n):
            continue
        p, inner = n["parent"], False
        while p is not None:
            if pred(by_id[p]):
                inner = True
                break
            p = by_id[p]["parent"]
        if not inner:
            out.append(n)
    return out


def ancestors(nodes_by_id, n):
    p = n["parent"]
    while p is not None:
        yield nodes_by_id[p]
        p = nodes_by_id[p]["parent"]


def in_lines(node, prog, slack=2):
    """A loop or statement of the planted file whose lines lie within the planted lines."""
    if not node.get("file") or os.path.basename(node["file"]) != prog["file"]:
        return False
    first, last = node.get("line") or 0, node.get("line_end") or node.get("line") or 0
    lo, hi = prog["lines"]
    return first >= lo - slack and last <= hi + slack and first > 0


def share(nodes, total, pred, k=0):
    return sum(n["inclusive"][k] or 0 for n in outermost(nodes, pred)) / total if total else 0


def check_truth(doc, prog, stat_docs):
    """Ground-truth checks on a top-down report: a list of (what, ok, value)."""
    nodes = doc["nodes"]
    total = nodes[0]["inclusive"][0] or 0
    by_id = {n["id"]: n for n in nodes}
    checks = []
    fshare = share(nodes, total, lambda n: n["kind"] in ("procedure", "inlined")
                   and name_matches(n["name"], prog["function"]))
    checks.append(("function %s holds >= %.0f%% of %s" % (prog["function"],
                   prog["min_share"] * 100, prog["metric"]), fshare >= prog["min_share"], fshare))
    if prog["precision"] == "loop":
        def planted_loop(n):
            return n["kind"] == "loop" and in_lines(n, prog)
        planted = share(nodes, total, planted_loop)
        enclosing = {a["id"] for n in nodes if planted_loop(n) for a in ancestors(by_id, n)}
        others = [n["inclusive"][0] or 0 for n in nodes if n["kind"] == "loop"
                  and n.get("file") and not planted_loop(n) and n["id"] not in enclosing
                  and not any(planted_loop(a) for a in ancestors(by_id, n))]
        hottest_other = max(others) / total if others and total else 0  # of the sources
        checks.append(("planted loop %d-%d is the hottest loop (enclosing loops aside)"
                       % tuple(prog["lines"]), planted > hottest_other and planted > 0.2,
                       planted))
    if prog.get("caller"):
        def via(caller):
            return share(nodes, total, lambda n: n["kind"] == "procedure"
                         and n["name"] == prog["function"]
                         and any(a["name"] == caller for a in ancestors(by_id, n)))
        hot, cold = via(prog["caller"]), via(prog["cold_caller"])
        checks.append(("%s via %s >= 3x via %s" % (prog["function"], prog["caller"],
                       prog["cold_caller"]), hot >= 3 * cold and hot > 0, hot))
    if prog.get("imbalance_min") and stat_docs:
        def excl(d):  # the parallel loop (flat view: one node over every context)
            return sum(n["exclusive"][0] or 0 for n in d["nodes"]
                       if n["kind"] == "loop" and in_lines(n, prog))
        hi, lo = excl(stat_docs["max"]), excl(stat_docs["min"])
        ratio = hi / lo if lo else float("inf") if hi else 0
        checks.append(("threads' CPU time in %s's parallel loop: max/min >= %.1f"
                       % (prog["function"], prog["imbalance_min"]),
                       ratio >= prog["imbalance_min"], ratio))
    return checks


def check_time_share(doc, prog):
    """The planted lines' share of time_metric (pagefault: CPU time, nearly all of it in
    the kernel's fault handler, charged to the faulting store): at least time_share_min,
    clear of the search's 20 % threshold."""
    nodes = doc["nodes"]
    k = [m["name"] for m in doc["metrics"]].index(prog["time_metric"])
    total = nodes[0]["inclusive"][k] or 0
    v = share(nodes, total, lambda n: n["kind"] in ("loop", "line", "statement")
              and in_lines(n, prog), k)
    return ("planted lines %d-%d hold >= %.0f%% of %s" % (
        *prog["lines"], prog["time_share_min"] * 100, prog["time_metric"]),
        v >= prog["time_share_min"], v)


def hypothesis_matches(name, planted):
    n = re.sub(r"[^a-z-]", "", str(name).lower())
    return n in HYPOTHESIS_ALIASES.get(planted, (planted.lower(),))


def focus_fields(focus):
    """(function names, file, first line, last line, text) of a bottleneck's focus."""
    if isinstance(focus, dict):
        text = json.dumps(focus)
        funcs = [focus.get(k) for k in ("function", "procedure", "name") if focus.get(k)]
        funcs += [p if isinstance(p, str) else p.get("name", "") for p in
                  focus.get("path", focus.get("call_path", [])) or []]
        first, last = focus.get("line") or 0, focus.get("line_end") or focus.get("line") or 0
        return funcs, focus.get("file") or "", first, last, text
    text = str(focus)
    m = re.search(r"([\w.+-]+\.c):(\d+)(?:-(\d+))?", text)
    funcs = re.split(r"[/ >,]+", text)
    if m:
        return funcs, m.group(1), int(m.group(2)), int(m.group(3) or m.group(2)), text
    return funcs, "", 0, 0, text


def score_bottleneck(b, prog):
    """'loop', 'function' or None: the precision at which bottleneck b names the cause."""
    if not hypothesis_matches(b.get("hypothesis", ""), prog["hypothesis"]):
        return None
    funcs, file, first, last, text = focus_fields(b.get("focus", b.get("where", "")))
    if prog.get("cold_caller") and prog["cold_caller"] in funcs and prog["caller"] not in funcs:
        return None  # the cold call site named instead of the hot one
    lo, hi = prog["lines"]
    if (os.path.basename(file) == prog["file"] and first >= lo - 2 and last <= hi + 2
            and first > 0 and "loop" in text.lower()):
        return "loop"
    if any(f and name_matches(f, prog["function"]) for f in funcs):
        return "function"
    if os.path.basename(file) == prog["file"] and first >= lo - 2 and last <= hi + 2 and first:
        return "function"  # a statement (the blocking call) inside the planted function
    return None


def score_search(doc, prog):
    ranked = doc.get("bottlenecks", doc.get("results", []))
    hit, rank, found = None, None, None
    for i, b in enumerate(ranked[:3]):
        p = score_bottleneck(b, prog)
        if p and (hit is None or (hit == "function" and p == "loop")):
            hit, rank = p, i + 1
            found = b.get("found_s", b.get("time_s", b.get("decided_s")))
    exp = doc.get("experiments")
    if isinstance(exp, list):
        exp = len(exp)
    ok = hit == "loop" if prog["precision"] == "loop" else hit is not None
    return {"hit": hit, "ok": ok, "rank": rank, "found_s": found, "experiments": exp,
            "top3": [{"hypothesis": b.get("hypothesis"), "focus": b.get("focus", b.get("where"))}
                     for b in ranked[:3]]}


def search_once(bench, prog, i):
    d = os.path.join(bench.work, "%s.search%d" % (prog["name"], i))
    tool = [bench.callpath, "search", "-o", d] + bench.args.search_opts.split() + ["--"]
    rc, out, err, wall = bench.run(bench.launch(prog, tool), prog, bench.args.seconds * 6 + 120)
    res = {"rc": rc, "wall_s": round(wall, 2), "rate": rate_of(err)}
    doc = None
    # under mpirun every rank searches its own program; rank N > 0 writes search-rankN.json
    rank = prog.get("search_rank", 0)
    name = "search-rank%d.json" % rank if rank else "search.json"
    for path in (os.path.join(d, name),):
        if os.path.exists(path):
            doc = json.load(open(path))
    if doc is None:
        try:
            doc = json.loads(out)
        except ValueError:
            res["error"] = "no search.json in %s and no JSON on stdout (rc %d): %s" % (
                d, rc, err.strip()[-400:])
            return res
    res.update(score_search(doc, prog))
    return res


def truth(bench, prog):
    d, rate, err = bench.record(prog)
    if err:
        return {"error": err}, None
    doc, err = bench.report(d, prog)
    if err:
        return {"error": err}, rate
    stats = {}
    if prog.get("imbalance_min"):
        for s in ("max", "min"):
            stats[s], err = bench.report(d, prog, "--view", "flat", "--stat", s)
            if err:
                return {"error": err}, rate
    if "realtime" in prog["record_events"]:
        # the sampler's speed under cputime, the search's sampler: realtime's signals to
        # every thread, the blocked ones included, make an MPI job's ranks get a CPU again
        # sooner on a loaded machine (mpi-late-sender at load 16-19: 104 rounds/s under
        # realtime, 4-9 plain, under cputime and under the search; README.md)
        _, rate, err = bench.record(prog, ["cputime"])
        if err:
            return {"error": err}, None
    checks = check_truth(doc, prog, stats)
    if prog.get("time_share_min"):
        checks.append(check_time_share(doc, prog))
    return {"ok": all(c[1] for c in checks),
            "checks": [{"what": c[0], "ok": c[1], "value": round(c[2], 3)} for c in checks]}, rate


def loadavg():
    """The 1-minute load average now (the slowdowns on a shared machine depend on it)."""
    try:
        return float(open("/proc/loadavg").read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def fmt(v, spec="%.2f"):
    return "-" if v is None else spec % v


def table(results):
    head = ("| program | planted cause (hypothesis: focus) | truth | record slowdown | "
            "search: top-3 hit (rank) | time to it (s) | experiments | search slowdown | "
            "load |")
    rows = [head, "|" + "---|" * 9]
    for r in results:
        runs = r.get("search", [])
        def col(key, spec="%s"):
            vals = [fmt(s.get(key), spec) if "error" not in s else "n/a" for s in runs]
            return " / ".join(vals) if vals else "-"
        hits = " / ".join("n/a" if "error" in s else "%s%s" % (
            s["hit"] or "miss", " (%d)" % s["rank"] if s.get("rank") else "") for s in runs)
        sl = " / ".join("n/a" if "error" in s or not s.get("slowdown") else
                        "%.2fx" % s["slowdown"] for s in runs)
        p = r["prog"]
        where = "%s %s:%d-%d" % (p["function"], p["file"], *p["lines"])
        tr = ("error" if "error" in r["truth"] else "-" if r["truth"].get("skipped") else
              "ok" if r["truth"]["ok"] else "WRONG")
        load = "-".join(fmt(v, "%.1f") for v in r.get("load", []) if v is not None)
        rows.append("| %s | %s: %s (%s) | %s | %s | %s | %s | %s | %s | %s |" % (
            p["name"], p["hypothesis"], where, p["precision"], tr,
            fmt(r.get("record_slowdown"), "%.2fx"), hits or "-", col("found_s", "%.1f"),
            col("experiments"), sl or "-", load or "-"))
    return "\n".join(rows)


def self_test():
    """The scoring on made-up search outputs (the search's JSON may vary in shape)."""
    progs = {p["name"]: p for p in json.load(open(os.path.join(HERE, "planted.json")))["programs"]}
    loop, cs = progs["loop3of5"], progs["callsites"]
    lo, hi = loop["lines"]
    def b(h, focus):
        return {"hypothesis": h, "focus": focus, "found_s": 1.5}
    cases = [
        (loop, [b("CPUBound", {"kind": "function", "function": "simulate_step"}),
                b("CPUBound", {"kind": "loop", "function": "simulate_step",
                               "file": "/x/loop3of5.c", "line": lo, "line_end": hi - 1})],
         "loop", 2),
        (loop, [b("CPUBound", "/Code/loop3of5/simulate_step/loop at loop3of5.c:%d-%d"
                  % (lo, hi))], "loop", 1),
        (loop, [b("CPUBound", {"kind": "function", "function": "simulate_step"})],
         "function", 1),  # function precision only: not a hit for a loop cause
        (loop, [b("ExcessiveSyncWaiting", {"kind": "loop", "file": "loop3of5.c",
                                           "line": lo, "line_end": hi})], None, None),
        (loop, [b("CPUBound", {"kind": "loop", "file": "loop3of5.c", "line": 36,
                               "line_end": 55})], None, None),  # the 1st loop
        (loop, [b("cpu", {"function": "main"})] * 3 + [b("cpu", {"function": "simulate_step"})],
         None, None),  # 4th: not in the top 3
        (cs, [b("CPUBound", {"function": "blend", "path": ["main", "prepare_input", "blend"]})],
         None, None),  # the cold call site
        (cs, [b("CPUBound", {"function": "blend", "path": ["main", "integrate", "blend"]})],
         "function", 1),
    ]
    bad = 0
    for prog, ranked, hit, rank in cases:
        got = score_search({"bottlenecks": ranked, "experiments": 3}, prog)
        if (got["hit"], got["rank"]) != (hit, rank):
            print("self-test: %s %s: got %s/%s, want %s/%s" % (
                prog["name"], json.dumps(ranked)[:120], got["hit"], got["rank"], hit, rank))
            bad += 1
    print("self-test: %d of %d cases right" % (len(cases) - bad, len(cases)))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--seconds", type=float, default=8, help="each program run (default 8)")
    ap.add_argument("--base-runs", type=int, default=3)
    ap.add_argument("--search-runs", type=int, default=2)
    ap.add_argument("--search-opts", default="--format json",
                    help="options of callpath search before -- (default '--format json')")
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--no-search", action="store_true", help="ground truth and slowdown only")
    ap.add_argument("--no-record", action="store_true", help="skip the ground-truth check")
    ap.add_argument("--require-hits", action="store_true",
                    help="exit 1 unless callpath search exists and every search run has the "
                         "planted cause in its top 3 at the manifest's precision (the CI test)")
    ap.add_argument("--out", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--self-test", action="store_true", help="check the scoring and exit")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    bench = Bench(args)
    manifest = json.load(open(os.path.join(HERE, "planted.json")))
    have_search = subprocess.run([bench.callpath, "search", "--help"], capture_output=True
                                 ).returncode == 0 and not args.no_search
    if not have_search and not args.no_search:
        log("callpath search is not available in %s: ground truth and record slowdown only"
            % bench.callpath)
        if args.require_hits:
            log("--require-hits: no callpath search to score")
            return 1
    results, failed = [], 0
    for prog in manifest["programs"]:
        if args.only and prog["name"] not in args.only.split(","):
            continue
        r = {"prog": prog}
        results.append(r)
        src = os.path.join(HERE, prog["file"])
        if marker_lines(src) != prog["lines"]:
            r["truth"] = {"error": "markers of %s say %s, manifest %s" % (
                prog["file"], marker_lines(src), prog["lines"])}
            failed += 1
            continue
        if not os.path.exists(os.path.join(bench.bin_dir, prog["binary"])):
            r["truth"] = {"error": "not built (no OpenMP/MPI compiler?)"}
            continue
        r["load"] = [loadavg()]
        log("%s: uninstrumented runs" % prog["name"])
        base = bench.base_rate(prog) if args.base_runs > 0 else None
        r["base_rate"] = base
        if args.no_record:
            r["truth"] = {"skipped": True}
        else:
            log("%s: record" % prog["name"])
            r["truth"], rate = truth(bench, prog)
            r["record_slowdown"] = base / rate if base and rate else None
            failed += not r["truth"].get("ok")
        if have_search:
            r["search"] = []
            for i in range(args.search_runs):
                log("%s: search run %d" % (prog["name"], i + 1))
                s = search_once(bench, prog, i)
                s["slowdown"] = base / s["rate"] if base and s.get("rate") else None
                r["search"].append(s)
                if args.require_hits and not s.get("ok"):
                    failed += 1
        r["load"].append(loadavg())
    commit = subprocess.run(["git", "-C", SRC, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    doc = {"commit": commit, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "seconds": args.seconds, "base_runs": args.base_runs,
           "search_available": have_search, "command": " ".join(sys.argv),
           "results": results}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(table(results))
    for r in results:
        t = r["truth"]
        for c in t.get("checks", []):
            if not c["ok"]:
                print("%s: ground truth check failed: %s (%.3f)" % (r["prog"]["name"],
                      c["what"], c["value"]))
        if "error" in t:
            print("%s: %s" % (r["prog"]["name"], t["error"]))
        for i, s in enumerate(r.get("search", [])):
            if "error" in s:
                print("%s: search run %d: %s" % (r["prog"]["name"], i + 1, s["error"]))
    shutil.rmtree(bench.work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

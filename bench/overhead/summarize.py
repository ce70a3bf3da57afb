#!/usr/bin/env python3
"""Turn run.sh's results into the markdown tables of bench/RESULTS.md.

usage: summarize.py RESDIR
RESDIR holds WORKLOAD.rK.json (one hyperfine --runs 1 export per round K, every tool once),
samples.txt ("workload tool file samples cpu" per profiled run) and meta.txt.

Per workload and tool, over the rounds (each tool's run paired with the base run of the
same round, which cancels most of the load drift of a shared machine):
  wall        median wall seconds (min-max)
  overhead    median of the paired ratios T_tool/T_base - 1, in wall and in CPU time
              (CPU = user+sys of the tool and its children, e.g. perf's own process)
  samples     median samples per run; delivered rate = samples / median base CPU seconds
  µs/sample   median paired difference / samples, in wall and CPU time; "net" also
              subtracts the tool's fixed start/stop cost measured on the startup workload
"""
import glob
import json
import os
import re
import statistics as st
import sys

WORKLOADS = ["calls", "loops", "threads"]
LABELS = {
    "base": "no profiler",
    "gperf": "gperftools 2.10, `CPUPROFILE_FREQUENCY=1000`",
    "perf_dw": "`perf record -q --no-bpf-event -e cpu-clock -F 1000 --call-graph dwarf`",
    "perf_fp": "the same with `--call-graph fp`, on the -fno-omit-frame-pointer build",
    "cp_1k": "`callpath record -q -e cputime@1000000` (1 ms of CPU time; -q: no end summary)",
    "cp_250": "`callpath record -q -e cputime@4000000` (4 ms ≈ gperftools' delivered rate)",
    "cp_1k_report": "`callpath record -e cputime@1000000`, end-of-run summary included",
}


def load_rounds(resdir, w):
    """{tool: [(wall, cpu), ...]} in round order."""
    files = glob.glob(os.path.join(resdir, f"{w}.r*.json"))
    files.sort(key=lambda f: int(re.search(r"\.r(\d+)\.json$", f).group(1)))
    runs = {}
    for f in files:
        for r in json.load(open(f))["results"]:
            runs.setdefault(r["command"], []).append((r["times"][0], r["user"] + r["system"]))
    return runs


def load_samples(resdir):
    counts = {}
    path = os.path.join(resdir, "samples.txt")
    if os.path.exists(path):
        for line in open(path):
            w, tool, _f, n, _cpu = line.split()
            counts.setdefault((w, tool), []).append(int(n))
    return counts


def paired(runs, tool, idx, op):
    return st.median(op(a[idx], b[idx]) for a, b in zip(runs[tool], runs["base"]))


def stats(runs, tool, n, fixed):
    walls = [x[0] for x in runs[tool]]
    dwall = paired(runs, tool, 0, lambda a, b: a - b)
    dcpu = paired(runs, tool, 1, lambda a, b: a - b)
    cpu0 = st.median(x[1] for x in runs["base"])
    per = (lambda d: d / n * 1e6) if n else (lambda d: None)
    return {
        "tool": tool, "t": st.median(walls), "lo": min(walls), "hi": max(walls),
        "ovh": paired(runs, tool, 0, lambda a, b: (a / b - 1) * 100),
        "ovh_cpu": paired(runs, tool, 1, lambda a, b: (a / b - 1) * 100),
        "n": n, "rate": n / cpu0 if n is not None else None,
        "us": per(dwall), "cpu_us": per(dcpu),
        "net_us": per(dwall - fixed[tool]) if tool in fixed else None,
    }


def fmt(v, spec, none="–"):
    return none if v is None else format(v, spec)


def startup_table(resdir):
    runs = load_rounds(resdir, "startup")
    if not runs:
        return None, {}
    fixed = {t: paired(runs, t, 0, lambda a, b: a - b) for t in runs}
    lines = ["**startup** (`calls 1`, a near-empty run: each tool's fixed start/stop cost)", "",
             "| tool | median ms (min–max) | fixed cost ms (paired) |", "|---|---|---|"]
    for t, xs in sorted(runs.items(), key=lambda kv: list(LABELS).index(kv[0])):
        ts = [x[0] * 1e3 for x in xs]
        lines.append(f"| {t} | {st.median(ts):.1f} ({min(ts):.1f}–{max(ts):.1f}) "
                     f"| {fixed[t] * 1e3:.1f} |")
    return "\n".join(lines), fixed


def workload_table(w, runs, counts, fixed):
    base = runs["base"]
    head = (f"**{w}** (base: median {st.median(x[0] for x in base):.3f} s wall, "
            f"{st.median(x[1] for x in base):.3f} s CPU; {len(base)} rounds)")
    lines = [head, "",
             "| tool | wall s, median (min–max) | overhead wall | overhead CPU | samples/run"
             " | delivered /s CPU | µs/sample wall | wall net of start-up | µs/sample CPU |",
             "|---|---|---|---|---|---|---|---|---|"]
    rows = []
    for tool in sorted(runs, key=lambda t: list(LABELS).index(t) if t in LABELS else 99):
        c = counts.get((w, tool))
        r = stats(runs, tool, st.median(c) if c else None, fixed)
        rows.append(r)
        lines.append(
            f"| {tool} | {r['t']:.3f} ({r['lo']:.3f}–{r['hi']:.3f}) | {r['ovh']:+.1f} % "
            f"| {r['ovh_cpu']:+.1f} % | {fmt(r['n'], '.0f')} | {fmt(r['rate'], '.0f')} "
            f"| {fmt(r['us'], '.0f')} | {fmt(r['net_us'], '.0f')} | {fmt(r['cpu_us'], '.0f')} |")
    return "\n".join(lines), rows


def handler_table(resdir):
    """Signal-handler time per sample from handler-time.so lines, median over runs."""
    path = os.path.join(resdir, "handler.txt")
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None, {}
    vals = {}
    for line in open(path):
        f = line.split()
        kv = dict(x.split("=", 1) for x in f[3:])
        vals.setdefault((f[0], f[1]), []).append(
            (int(kv["samples"]), float(kv["trimmed_mean_ns"]), float(kv["median_ns"]),
             float(kv["p99_ns"]), int(kv["long"]), float(kv["first100_ns"])))
    lines = ["**Signal-handler time per sample** (handler-time.so: TSC read before and after "
             "the profiler's signal handler; median over the runs, 3 per run.sh. Mean "
             "excludes handler runs "
             "> 500 µs — the thread descheduled inside the handler — counted in 'long'; "
             "'first 100' = ms spent in the first 100 samples, the cold-cache start)", "",
             "| workload | tool | samples/run | mean µs | median µs | p99 µs | long | "
             "first 100 ms |", "|---|---|---|---|---|---|---|---|"]
    means = {}
    for (w, t), xs in vals.items():
        means[(w, t)] = st.median(x[1] for x in xs) / 1e3
        lines.append(f"| {w} | {t} | {st.median(x[0] for x in xs):.0f} "
                     f"| {means[(w, t)]:.2f} | {st.median(x[2] for x in xs) / 1e3:.2f} "
                     f"| {st.median(x[3] for x in xs) / 1e3:.1f} "
                     f"| {st.median(x[4] for x in xs):.0f} "
                     f"| {st.median(x[5] for x in xs) / 1e6:.2f} |")
    return "\n".join(lines), means


def gaps_table(resdir):
    """Interruption cost per sample from gaps.txt: (gap time with the tool - without) /
    samples, medians over the runs of each depth."""
    path = os.path.join(resdir, "gaps.txt")
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None, {}
    vals = {}
    for line in open(path):
        f = line.split()
        kv = dict(x.split("=", 1) for x in f[3:])
        vals.setdefault((int(kv["depth"]), f[0]), []).append(
            (int(f[1]), float(kv["sum_ns"]), float(kv["big_ns"]), float(kv["spin_s"])))
    lines = ["**Interruption cost per sample, kernel included** (gaps.c: the sampled thread "
             "spins 1 s reading the TSC at stack depth D; gaps of 0.12 µs–1 ms between reads "
             "are summed; cost = (gap time with the tool − without) / samples; median over "
             "the runs, 3 per run.sh; 'descheduled' = time in gaps > 1 ms, i.e. the VM's other load)", "",
             "| depth | tool | samples/s | gap ms/s | descheduled ms/s | µs/sample |",
             "|---|---|---|---|---|---|"]
    cost = {}
    for (d, t) in sorted(vals, key=lambda k: (k[0], list(LABELS).index(k[1]))):
        xs = vals[(d, t)]
        n = st.median(x[0] / x[3] for x in xs)
        g = st.median(x[1] / x[3] for x in xs) / 1e6
        base = vals.get((d, "base"))
        c = None
        if base and t != "base" and n:
            c = (g - st.median(x[1] / x[3] for x in base) / 1e6) / n * 1e3
            cost[(d, t)] = c
        lines.append(f"| {d} | {t} | {n:.0f} | {g:.1f} "
                     f"| {st.median(x[2] / x[3] for x in xs) / 1e6:.1f} | {fmt(c, '.1f')} |")
    return "\n".join(lines), cost


def verdict(all_rows, ht):
    lines = []
    for w, rows in all_rows.items():
        by = {r["tool"]: r for r in rows}
        cp, gp = by.get("cp_1k"), by.get("gperf")
        if not cp or not gp:
            continue
        def ratio_of(a, b):  # a negative difference is noise: no ratio then
            return a / b if a is not None and b and a > 0 and b > 0 else None

        def judge(r):
            return "inconclusive (noise)" if r is None else ("met" if r <= 0.5 else "NOT met")

        ratio = ratio_of(cp["us"], gp["us"])
        ratio_cpu = ratio_of(cp["cpu_us"], gp["cpu_us"])
        lines.append(
            f"- {w}: callpath @1 ms delivered {fmt(cp['rate'], '.0f')} samples/s; overhead "
            f"{cp['ovh']:+.1f} % wall, {cp['ovh_cpu']:+.1f} % CPU "
            f"(< 2 %: {'met' if cp['ovh'] < 2 else 'NOT met'} in wall, "
            f"{'met' if cp['ovh_cpu'] < 2 else 'NOT met'} in CPU); per sample "
            f"{fmt(cp['us'], '.0f')} µs wall / {fmt(cp['cpu_us'], '.0f')} µs CPU vs gperftools "
            f"{fmt(gp['us'], '.0f')} / {fmt(gp['cpu_us'], '.0f')} µs (ratio "
            f"{fmt(ratio, '.2f', 'n/a')} wall: {judge(ratio)}; {fmt(ratio_cpu, '.2f', 'n/a')}"
            f" CPU: {judge(ratio_cpu)})")
        h_cp, h_gp = ht.get((w, "cp_rt_1k_ht")), ht.get((w, "gperf_ht"))
        if h_cp and h_gp:
            lines.append(f"  - signal handler alone: callpath {h_cp:.2f} µs vs gperftools "
                         f"{h_gp:.2f} µs per sample (ratio {h_cp / h_gp:.2f}; ≤ 0.5: "
                         f"{'met' if h_cp / h_gp <= 0.5 else 'NOT met'})")
        rep = by.get("cp_1k_report")
        if rep:
            lines.append(f"  - end-of-run summary of `callpath record` (cp_1k_report − cp_1k, "
                         f"medians): {(rep['t'] - cp['t']) * 1e3:+.0f} ms")
    return lines


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    resdir = sys.argv[1]
    meta = os.path.join(resdir, "meta.txt")
    if os.path.exists(meta):
        print("```\n" + open(meta).read().rstrip() + "\n```\n")
    text, fixed = startup_table(resdir)
    if text:
        print(text + "\n")
    counts = load_samples(resdir)
    all_rows, used = {}, set()
    for w in WORKLOADS:
        runs = load_rounds(resdir, w)
        if runs:
            text, all_rows[w] = workload_table(w, runs, counts, fixed)
            used |= set(runs)
            print(text + "\n")
    print("Tools: " + "; ".join(f"`{t}` = {LABELS[t]}" for t in LABELS if t in used) + ".\n")
    text, ht = handler_table(resdir)
    if text:
        print(text + "\n")
    text, gap_cost = gaps_table(resdir)
    if text:
        print(text + "\n")
    for w in WORKLOADS:
        path = os.path.join(resdir, f"compare-{w}.md")
        if os.path.exists(path):
            print(f"**Top procedures of `{w}` by inclusive share** (compare.py: one run per tool,"
                  f" 1 kHz; gperftools delivers ~250/s)\n\n" + open(path).read())
    v = verdict(all_rows, ht)
    for d in (5, 40):
        c, g = gap_cost.get((d, "cp_1k")), gap_cost.get((d, "gperf"))
        if c is not None and g is not None:
            r = c / g if c > 0 and g > 0 else None
            v.append(f"- interruption cost at depth {d} (gaps.c): callpath {c:.1f} µs vs "
                     f"gperftools {g:.1f} µs per sample (ratio {fmt(r, '.2f', 'n/a')}; ≤ 0.5: "
                     f"{'inconclusive (noise)' if r is None else 'met' if r <= 0.5 else 'NOT met'})")
    if v:
        print("Targets of issue 2 (< 2 % median overhead at 1000 delivered samples/s; at most"
              " half of gperftools' overhead per sample):\n" + "\n".join(v))


if __name__ == "__main__":
    main()

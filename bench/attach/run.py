#!/usr/bin/env python3
"""The kernel-copy driver's cost against callpath's signal path and perf --call-graph dwarf.

Three measurements, each tool run interleaved with the others round after round (load drift
on a shared VM hits all alike):

1. cost to the sampled thread, kernel included: bench/overhead/gaps.c spins at stack depth
   40 reading the TSC; every interruption of the spin (timer, stack copy, signal delivery,
   handler, sigreturn) is a gap; (gap ns with tool - without) / samples;
2. total CPU per sample: bench/overhead/calls.c run to its end under each tool, user + sys
   of every process (the profiler's own included), (CPU with tool - without) / samples;
3. unwind throughput: samples per CPU second of unwinding. callpath's kernel path unwinds
   while it records (its note gives the CPU); perf unwinds when the data is read:
   `perf script` over the perf.data of run 2, timed (CPU of perf script).

Usage: bench/attach/run.py [-r ROUNDS] [-o OUTDIR]  (CALLPATH: the callpath executable)
Prints the tables of bench/RESULTS.md "Sampling from outside".
"""
import argparse, json, os, re, resource, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
CALLPATH = os.environ.get("CALLPATH", os.path.join(HERE, "../../build/callpath"))
TOOLS = ["base", "cp_signal", "cp_kernel", "perf_dw"]


def command(tool, out, prog):
    if tool == "base":
        return prog
    if tool == "cp_signal":
        return [CALLPATH, "record", "-q", "--no-analyze", "--mechanism", "signal",
                "-e", "cputime@1000000", "-o", out] + prog
    if tool == "cp_kernel":
        return [CALLPATH, "record", "-q", "--no-analyze", "--mechanism", "kernel",
                "-e", "cputime@1000000", "-o", out] + prog
    # perf: the same event, period and stack copy size as callpath's kernel path
    return ["perf", "record", "-q", "--no-bpf-event", "-e", "task-clock", "-c", "1000000",
            "--call-graph", "dwarf,16384", "-o", out] + prog


def run(cmd):
    """Runs cmd; returns (stdout, cpu seconds of it and its reaped descendants, wall)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}")
    return p.stdout, cpu, wall


def samples(tool, out):
    """(samples, unwind CPU seconds or None) of one run's output."""
    if tool == "base":
        return 0, None
    if tool.startswith("cp_"):
        subprocess.run([CALLPATH, "analyze", out], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        j = subprocess.run([CALLPATH, "report", out, "--format", "json", "--depth", "1"],
                           stdout=subprocess.PIPE, text=True, check=True).stdout
        s = json.loads(j)["summary"]
        n = s["unwind"]["complete"] + s["unwind"]["partial"] + s["unwind"]["failed"]
        unwind = None
        for note in s["notes"]:
            m = re.search(r"unwound in ([\d.]+) s of CPU", str(note))
            if m:
                unwind = float(m.group(1))
        return n, unwind
    d = subprocess.run(["perf", "report", "-D", "-i", out], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True).stdout
    return d.count("PERF_RECORD_SAMPLE"), None


def perf_unwind_cpu(out):
    _, cpu, _ = run(["perf", "script", "-i", out, "-F", "ip,sym"])
    return cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-r", "--rounds", type=int, default=3)
    ap.add_argument("-o", "--out", default=tempfile.mkdtemp(prefix="cp-bench-attach."))
    a = ap.parse_args()
    bindir = os.path.join(a.out, "bin")
    subprocess.run(["sh", os.path.join(HERE, "../overhead/build.sh"), bindir], check=True,
                   stdout=subprocess.DEVNULL)
    gaps = [os.path.join(bindir, "gaps"), "40", "2"]
    calls = [os.path.join(bindir, "calls")]
    res = {t: {"gap_ns": [], "gap_n": [], "cpu": [], "wall": [], "n": [], "unwind": []}
           for t in TOOLS}
    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load "
          f"{os.getloadavg()[0]:.2f}, callpath {CALLPATH}, rounds {a.rounds}")
    for r in range(a.rounds):
        order = TOOLS[r % len(TOOLS):] + TOOLS[:r % len(TOOLS)]
        for t in order:
            out = os.path.join(a.out, f"{t}.gaps.{r}")
            text, _, _ = run(command(t, out, gaps))
            m = re.search(r"sum_ns=(\d+)", text)
            n, _ = samples(t, out)
            res[t]["gap_ns"].append(float(m.group(1)))
            res[t]["gap_n"].append(n)
            out = os.path.join(a.out, f"{t}.calls.{r}")
            _, cpu, wall = run(command(t, out, calls))
            n, unwind = samples(t, out)
            if t == "perf_dw":
                unwind = perf_unwind_cpu(out)
            res[t]["cpu"].append(cpu)
            res[t]["wall"].append(wall)
            res[t]["n"].append(n)
            res[t]["unwind"].append(unwind)
    json.dump(res, open(os.path.join(a.out, "results.json"), "w"), indent=1)
    report(res)


def report(res):
    med = statistics.median
    base_gap = med(res["base"]["gap_ns"])
    base_cpu = med(res["base"]["cpu"])
    print("\n1. cost to the sampled thread (gaps, depth 40, 2 s spin), per sample")
    print(f"{'tool':10} {'samples':>8} {'gap ms':>8} {'us/sample':>10}")
    for t in TOOLS:
        n = med(res[t]["gap_n"]) if t != "base" else 0
        g = med(res[t]["gap_ns"])
        per = (g - base_gap) / n / 1e3 if n else 0
        print(f"{t:10} {n:8.0f} {g / 1e6:8.1f} {per:10.1f}")
    print("\n2. total CPU (calls.c, every process), per sample; wall overhead")
    print(f"{'tool':10} {'samples':>8} {'cpu s':>7} {'us/sample':>10} {'wall s':>7} {'wall +%':>8}")
    base_wall = med(res["base"]["wall"])
    for t in TOOLS:
        n = med(res[t]["n"]) if t != "base" else 0
        c, w = med(res[t]["cpu"]), med(res[t]["wall"])
        per = (c - base_cpu) / n * 1e6 if n else 0
        print(f"{t:10} {n:8.0f} {c:7.2f} {per:10.1f} {w:7.2f} {100 * (w / base_wall - 1):8.1f}")
    print("\n3. unwind throughput (samples per CPU second of unwinding)")
    for t in ["cp_kernel", "perf_dw"]:
        rates = [n / u for n, u in zip(res[t]["n"], res[t]["unwind"]) if u]
        print(f"{t:10} {med(rates):12.0f} samples/s" if rates else f"{t:10} n/a")


if __name__ == "__main__":
    main()

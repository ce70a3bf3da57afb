#!/usr/bin/env python3
"""Count the samples a profiler actually delivered in one output file or directory.

usage: samples.py gperf FILE | perf FILE | callpath DIR
prints: "<samples> <cpu_seconds or ->"

gperftools: the legacy binary CPU profile (64-bit words): a 5-word header
  (0, 3, 0, period_us, 0), then records (count, depth, pc[depth]) until the
  trailer (0, 1, 0). Samples = sum of counts (identical stacks are merged).
perf: `perf report --stats` and its "SAMPLE events" line.
callpath: the thread files of the measurement directory (layout of
  src/format/measure.h, version 1): samples[] of the first metric summed over
  threads, and their cpu_ns.
"""
import glob
import os
import re
import struct
import subprocess
import sys


def gperf_samples(path):
    data = open(path, "rb").read()
    words = len(data) // 8
    head = struct.unpack_from("<5Q", data, 0)
    if head[:3] != (0, 3, 0):
        raise SystemExit(f"{path}: not a gperftools CPU profile (header {head})")
    pos, total = 5, 0
    while pos + 2 <= words:
        count, depth = struct.unpack_from("<2Q", data, pos * 8)
        if count == 0 and depth == 1:  # trailer: 0, 1, 0
            return total, None
        total += count
        pos += 2 + depth
    raise SystemExit(f"{path}: no trailer at word {pos}: truncated profile")


def perf_samples(path):
    out = subprocess.run(["perf", "report", "--stats", "-i", path],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"^\s*SAMPLE events:\s*(\d+)", out, re.M)
    if m:
        return int(m.group(1)), None
    if re.search(r"^\s*TOTAL events:", out, re.M):
        return 0, None  # a run too short to be sampled has no SAMPLE line
    raise SystemExit(f"{path}: no event statistics from perf report --stats")


MF_HEADER = struct.Struct("<8sIIIIQ32x")  # struct cp_mf_header, 64 bytes
THREAD_FIXED = struct.Struct("<iiIIIIQQQ16QQQQQQ16s64x")  # after the header


def callpath_samples(path):
    files = glob.glob(os.path.join(path, "*.thr"))
    if not files:
        raise SystemExit(f"{path}: no thread files (*.thr)")
    samples, cpu_ns = 0, 0
    for f in files:
        data = open(f, "rb").read(MF_HEADER.size + THREAD_FIXED.size)
        magic, version, kind, _hsize, _flags, _used = MF_HEADER.unpack_from(data, 0)
        if magic != b"CPATHMF\0" or version != 1 or kind != 2:
            raise SystemExit(f"{f}: not a version-1 callpath thread file")
        fields = THREAD_FIXED.unpack_from(data, MF_HEADER.size)
        samples += fields[9]  # samples[0]
        cpu_ns += fields[8]
    return samples, cpu_ns / 1e9


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    kind, path = sys.argv[1:]
    fn = {"gperf": gperf_samples, "perf": perf_samples, "callpath": callpath_samples}[kind]
    n, cpu = fn(path)
    print(n, "-" if cpu is None else f"{cpu:.6f}")


if __name__ == "__main__":
    main()

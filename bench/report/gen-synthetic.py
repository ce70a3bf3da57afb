#!/usr/bin/env python3
"""Writes a synthetic measurement directory (docs/format.md, version 1) for timing
`callpath report` on large calling context trees.

usage: gen-synthetic.py OUTDIR THREADS NODES_PER_THREAD MODULE

Every thread's tree is a random call graph over FUNCS procedures of MODULE: each node is a
return address (or, with probability 0.3, a sampled PC leaf) at one of 8 call sites of one
procedure, children drawn near their parent so depths stay realistic (tens of frames).
Offsets are taken from MODULE's symbol table so that the report symbolizes real functions.
"""
import random
import struct
import subprocess
import sys

out, nthreads, nnodes, module = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
syms = []
for line in subprocess.run(["nm", "--defined-only", module], capture_output=True,
                           text=True).stdout.splitlines():
    parts = line.split()
    if len(parts) == 3 and parts[1] in "tT":
        syms.append(int(parts[0], 16))
syms = sorted(set(syms))[:200] or [0x1000]
HDR = 64
THREAD_FIXED = HDR + 4 * 6 + 8 * 3 + 8 * 16 + 8 * 5 + 16 + 8 * 8
PROC_FIXED = HDR + 4 * 4 + 8 * 2 + 4 * 2 + 8 + 64 + 16 * 80 + 64


def header(kind, size, used):
    return b"CPATHMF\0" + struct.pack("<IIIIQ", 1, kind, size, 1, used) + b"\0" * 32


metric = b"cputime".ljust(32, b"\0") + b"ns".ljust(16, b"\0") + struct.pack("<IIQ", 1, 1, 10**6)
metric += b"\0" * 16
body = struct.pack("<iiIIQQiIQ", 1, 0, 0, 1, 1, 2, 0, nthreads, 0) + b"bench".ljust(64, b"\0")
body += metric + b"\0" * (16 * 80 - len(metric)) + b"\0" * 64
path = module.encode() + b"\0"
mod = struct.pack("<IIQQQQ", 0, 0, 0x400000, 0, 0, 0) + b"\0" * 32 + path
rec = struct.pack("<II", 3, 8 + len(mod)) + mod
rec += b"\0" * (-len(rec) % 8)
with open(f"{out}/1.0.proc", "wb") as f:
    f.write(header(1, PROC_FIXED, PROC_FIXED + len(rec)) + body + rec)
rnd = random.Random(42)
for t in range(nthreads):
    nodes = [struct.pack("<IHHIIQQ", 0xFFFFFFFF, 0, 0, 0xFFFFFFFF, 0, 0, 0)]
    for i in range(1, nnodes):
        parent = rnd.randrange(max(0, i - 40), i) if rnd.random() < 0.9 else rnd.randrange(0, i)
        leaf = rnd.random() < 0.3
        off = syms[rnd.randrange(len(syms))] + 1 + 4 * rnd.randrange(8)
        cost = rnd.randrange(1, 5) * 10**6 if leaf else 0
        nodes.append(struct.pack("<IHHIIQQ", parent, 2 if leaf else 1, 0, 0, 0, off, cost))
    data = b"".join(nodes)
    fixed = struct.pack("<iiIIIIQQQ", 1, 1 + t, 0, t, 1, 32, 0, 0, 10**9)
    fixed += b"\0" * (THREAD_FIXED - HDR - len(fixed))
    with open(f"{out}/1.0.{t}.thr", "wb") as f:
        f.write(header(2, THREAD_FIXED, THREAD_FIXED + len(data)) + fixed + data)

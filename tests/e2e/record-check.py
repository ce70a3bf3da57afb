#!/usr/bin/env python3
"""Independent reader of callpath measurement directories for the e2e tests (the only
one: probe-tree.py imports it).

Parses the fixed headers and records with `struct` straight from docs/format.md (not with
callpath's own reader), validates them, and prints a JSON summary:
  record-check.py DIR  ->  {"procs": [...], "threads": [...]}
Exit status 1 (with a message) if any file is malformed. read_proc() and read_thread()
return the same dicts; a thread's also holds "nodes" (parent, kind, module, offset,
values), which the JSON summary leaves out.
"""
import json, os, struct, sys

HDR = struct.Struct("<8sIIIIQ32x")  # magic version kind header_size flags used reserved
PROC = struct.Struct("<iiIIQQiIQ64s")
METRIC = struct.Struct("<32s16sIIQ16x")
THR = struct.Struct("<iiIIIIQQQ")
FINISHED, CRASHED, DISABLED = 1, 2, 4


def cstr(b):
    return b.split(b"\0", 1)[0].decode(errors="replace")


def bad(path, off, msg):
    print(f"record-check: {path}: offset {off}: {msg}", file=sys.stderr)
    sys.exit(1)


def header(path, data, kind):
    if len(data) < 64:
        bad(path, 0, "shorter than the 64-byte header")
    magic, ver, k, hsize, flags, used = HDR.unpack_from(data, 0)
    if magic != b"CPATHMF\0" or ver != 1 or k != kind:
        bad(path, 0, f"bad magic/version/kind {magic!r} {ver} {k}")
    if used < hsize or used > len(data):
        bad(path, 40, f"used {used} outside [{hsize}, {len(data)}]")
    return hsize, flags, used


def read_proc(path):
    data = open(path, "rb").read()
    hsize, flags, used = header(path, data, 1)
    pid, ppid, gen, nm, start, end, status, nthr, tsc, host = PROC.unpack_from(data, 64)
    metrics = []
    for i in range(nm):
        name, unit, src, mech, period = METRIC.unpack_from(data, 64 + PROC.size + i * METRIC.size)
        metrics.append({"name": cstr(name), "unit": cstr(unit), "source": src,
                        "mechanism": mech, "period": period})
    recs = {"cmdline": [], "exe": None, "modules": [], "unloads": [], "unload_seq": {}, "notes": [], "env": []}
    off = hsize
    while off < used:
        if off + 8 > used:
            bad(path, off, "truncated record head")
        typ, size = struct.unpack_from("<II", data, off)
        if size < 8 or off + size > used:
            bad(path, off, f"record size {size} runs past used {used}")
        payload = data[off + 8: off + size]
        if typ == 1:
            recs["cmdline"] = [cstr(x.encode()) for x in payload.decode(errors="replace").split("\0") if x]
        elif typ == 2:
            recs["exe"] = cstr(payload)
        elif typ == 3:
            mid, bl, bias, lo, hi, seq = struct.unpack_from("<IIQQQQ", payload, 0)
            recs["modules"].append({"id": mid, "bias": bias, "lo": lo, "hi": hi, "seq": seq,
                                    "path": cstr(payload[72:])})
        elif typ == 4:
            uid, _, useq = struct.unpack_from("<IIQ", payload, 0)
            recs["unloads"].append(uid)
            recs["unload_seq"][str(uid)] = useq
        elif typ == 5:
            recs["notes"].append(cstr(payload))
        off += (size + 7) & ~7
    return dict(file=os.path.basename(path), pid=pid, ppid=ppid, gen=gen, flags=flags,
                exit_status=status, nthreads=nthr, start_ns=start, end_ns=end,
                metrics=metrics, **recs)


def read_thread(path):
    data = open(path, "rb").read()
    hsize, flags, used = header(path, data, 2)
    pid, tid, gen, tidx, nm, node_size, start, end, cpu = THR.unpack_from(data, 64)
    o = 64 + THR.size
    samples = list(struct.unpack_from("<16Q", data, o))[:nm]
    complete, partial, failed, dropped, frames = struct.unpack_from("<5Q", data, o + 128)
    name = cstr(data[o + 168: o + 184])
    if node_size != 24 + 8 * nm or (used - hsize) % node_size:
        bad(path, 64, f"node_size {node_size} inconsistent with {nm} metrics / used {used}")
    n = (used - hsize) // node_size
    nodes = []
    for i in range(n):
        off = hsize + i * node_size
        parent, kind, _, module, _, offset = struct.unpack_from("<IHHIIQ", data, off)
        vals = struct.unpack_from(f"<{nm}Q", data, off + 24)
        if i == 0 and (parent != 0xFFFFFFFF or kind != 0):
            bad(path, off, "node 0 is not the root")
        if i > 0 and parent >= i:
            bad(path, off, f"node {i} has parent {parent} not before it")
        nodes.append((parent, kind, module, offset, vals))
    totals = [sum(nd[4][m] for nd in nodes) for m in range(nm)]
    return dict(file=os.path.basename(path), pid=pid, tid=tid, gen=gen, tidx=tidx, flags=flags,
                nmetrics=nm, start_ns=start, end_ns=end, cpu_ns=cpu, samples=samples,
                complete=complete, partial=partial, failed=failed, dropped=dropped,
                frames=frames, name=name, nnodes=n, totals=totals,
                kinds=sorted({nd[1] for nd in nodes}), nodes=nodes)


def main():
    d = sys.argv[1]
    procs, threads = [], []
    for f in sorted(os.listdir(d)):
        p = os.path.join(d, f)
        if f.endswith(".proc"):
            procs.append(read_proc(p))
        elif f.endswith(".thr"):
            threads.append(read_thread(p))
            del threads[-1]["nodes"]
    json.dump({"procs": procs, "threads": threads}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()

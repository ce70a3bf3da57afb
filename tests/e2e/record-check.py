#!/usr/bin/env python3
"""Independent reader of callpath measurement directories for the e2e tests (the only
one: probe-tree.py imports it).

Parses the fixed headers and records with `struct` straight from docs/format.md (not with
callpath's own reader), validates them, and prints a JSON summary (threads packed into a
process file by THREAD records count as threads, with "packed": true; a thread file whose
tidx is packed is a leftover and skipped):
  record-check.py DIR  ->  {"procs": [...], "threads": [...]}
Exit status 1 (with a message) if any file is malformed. read_proc(), read_thread() and
read_dir() return the same dicts; a thread's also holds "nodes" (parent, kind, module,
offset, values), which the JSON summary leaves out.
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
    if magic != b"CPATHMF\0" or ver not in (1, 2) or k != kind:
        bad(path, 0, f"bad magic/version/kind {magic!r} {ver} {k}")
    if used < hsize or used > len(data):
        bad(path, 40, f"used {used} outside [{hsize}, {len(data)}]")
    return hsize, flags, used


def read_proc(path):
    data = open(path, "rb").read()
    hsize, flags, used = header(path, data, 1)
    pid, ppid, gen, nm, start, end, status, nthr, tsc, host = PROC.unpack_from(data, 64)
    cpu_start, cpu_end, startup, runtime = struct.unpack_from("<4Q", data, 64 + PROC.size + 16 * METRIC.size)
    metrics = []
    for i in range(nm):
        name, unit, src, mech, period = METRIC.unpack_from(data, 64 + PROC.size + i * METRIC.size)
        metrics.append({"name": cstr(name), "unit": cstr(unit), "source": src,
                        "mechanism": mech, "period": period})
    recs = {"cmdline": [], "exe": None, "modules": [], "unloads": [], "unload_seq": {}, "notes": [], "env": []}
    decide = {}  # tidx -> the last THREAD (its thread dict) or UNPACK (None) record
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
        elif typ == 7:
            t = read_thread(path, payload)
            t["data_offset"] = off + 8
            if t["used"] != len(payload) or (t["pid"], t["gen"]) != (pid, gen):
                bad(path, off, "packed thread's used/pid/gen do not match its record")
            t["packed"] = True
            decide[t["tidx"]] = t
        elif typ == 8:
            decide[struct.unpack_from("<I", payload, 0)[0]] = None
        off += (size + 7) & ~7
    return dict(file=os.path.basename(path), pid=pid, ppid=ppid, gen=gen, flags=flags,
                exit_status=status, nthreads=nthr, start_ns=start, end_ns=end,
                cpu_start_ns=cpu_start, cpu_end_ns=cpu_end, startup_ns=startup,
                runtime_ns=runtime, metrics=metrics, size=len(data),
                packed=[t for t in decide.values() if t], **recs)


def read_thread(path, data=None):
    if data is None:
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
                frames=frames, name=name, nnodes=n, totals=totals, used=used, packed=False,
                data_offset=0,
                kinds=sorted({nd[1] for nd in nodes}), nodes=nodes)


def thread_data(d, t):
    """The bytes of thread t (a thread file, or its THREAD record in its process file)."""
    data = open(os.path.join(d, t["file"]), "rb").read()
    return data[t["data_offset"]: t["data_offset"] + t["used"]]


def read_dir(d):
    procs, threads = [], []
    names = sorted(os.listdir(d))
    for f in names:
        if f.endswith(".proc"):
            procs.append(read_proc(os.path.join(d, f)))
    packed = set()
    for p in procs:
        threads += p["packed"]
        packed |= {(p["pid"], p["gen"], t["tidx"]) for t in p["packed"]}
        p["packed"] = len(p["packed"])
    for f in names:
        if f.endswith(".thr"):
            t = read_thread(os.path.join(d, f))
            if (t["pid"], t["gen"], t["tidx"]) not in packed:
                threads.append(t)
    threads.sort(key=lambda t: (t["pid"], t["gen"], t["tidx"]))
    return procs, threads


def main():
    procs, threads = read_dir(sys.argv[1])
    for t in threads:
        del t["nodes"]
    json.dump({"procs": procs, "threads": threads}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()

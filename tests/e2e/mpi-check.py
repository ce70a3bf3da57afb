"""Helpers for the MPI tests: a report's JSON (callpath report --format json) as a tree.

    python3 mpi-check.py REPORT.json 'EXPR'...

evaluates each EXPR with `r` the Report; prints the failing ones and exits 1."""
import json
import sys


class Report:
    def __init__(self, path):
        d = json.load(open(path))
        self.metrics = [m["name"] for m in d["metrics"]]
        self.nodes = {n["id"]: n for n in d["nodes"]}
        self.total = {m: d["nodes"][0]["inclusive"][i] for i, m in enumerate(self.metrics)}

    def path(self, n):
        names = []
        while n is not None:
            names.append(n["name"])
            n = self.nodes.get(n["parent"])
        return names[::-1]

    def incl(self, name, metric, under=None):
        """Inclusive metric of the procedure nodes called name (below a node called
        `under` when given), outermost ones only (a recursion is not counted twice)."""
        i = self.metrics.index(metric)
        total = 0
        for n in self.nodes.values():
            if n["name"] != name or n["kind"] != "procedure":
                continue
            p = self.path(n)
            if name in p[:-1] or (under and under not in p[:-1]):
                continue
            total += n["inclusive"][i]
        return total


if __name__ == "__main__":
    r = Report(sys.argv[1])
    bad = [e for e in sys.argv[2:] if not eval(e, {"r": r})]
    for e in bad:
        print("failed: " + e, file=sys.stderr)
    sys.exit(1 if bad else 0)

#!/usr/bin/env python3
"""struct-loop-lines.py DUMP.json SOURCE... [--verbose]

Scores the lines `callpath struct --dump --format json` gives the loops of a fixture
against the loop statements marked "LOOP" in its SOURCE files (a do-while may carry the
marker on its `do` and its `while` lines: either names the loop).

Which source loop a machine loop is, is found without looking at the line under test:
each marker's loop spans its line and the following lines indented deeper (plus a closing
`}`/`end do` line at its own indentation); a machine loop belongs to the innermost marked
loop that contains the most of the statement lines directly at its level (its statement
children and the call sites of its inlined children). Loops whose code has no line in a
SOURCE file (libc, start files) are not scored.

Prints "NAME: G/T loops named by their statement line, M markers without a loop" and one
line per wrong loop; exits 0. With --verbose, one line per scored loop."""
import json, os, re, sys


MARK = re.compile(r"(/\*|//|!)\s*LOOP\b")


def indent(text):
    return len(text.expandtabs(8)) - len(text.expandtabs(8).lstrip())


def markers(path):
    """[(first, last, {statement lines})] of the marked loops of one file."""
    lines = open(path).read().split("\n")
    loops = []
    for i, text in enumerate(lines):
        if not MARK.search(text) or any(i + 1 == last for _, last, _ in loops):
            continue  # the `while` line of a do-while: already in its loop
        level, end = indent(text), i + 1
        for j in range(i + 1, len(lines)):
            t = lines[j]
            if not t.strip():
                continue
            if indent(t) > level:
                end = j + 1
                continue
            if re.match(r"\s*(\}|end\s*do|enddo)", t, re.I):
                end = j + 1
            break
        stmt = {i + 1} | ({end} if MARK.search(lines[end - 1]) else set())
        loops.append((i + 1, end, frozenset(stmt)))
    return loops


def main():
    args = [a for a in sys.argv[1:] if a != "--verbose"]
    verbose = "--verbose" in sys.argv
    doc = json.load(open(args[0]))
    marks = {os.path.basename(p): markers(p) for p in args[1:]}
    found, good, wrong = set(), 0, []

    def score(loop):
        nonlocal good
        here = [(c["file"], c["line"]) for c in loop["children"] if c["kind"] == "statement"]
        here += [(c["call_file"], c["call_line"]) for c in loop["children"] if c["kind"] == "inline"]
        votes = {}
        for f, line in here:
            for m in marks.get(os.path.basename(f), []):
                if m[0] <= line <= m[1]:
                    key = (os.path.basename(f), m)
                    votes[key] = votes.get(key, 0) + 1
        if not votes:
            return
        # most votes, then the innermost (shortest) loop
        (base, (first, last, stmt)), _ = max(votes.items(), key=lambda kv: (kv[1], -(kv[0][1][1] - kv[0][1][0])))
        found.add((base, first))
        ok = os.path.basename(loop["file"]) == base and loop["line"] in stmt
        good += ok
        text = "loop 0x%x at %s:%d [lines %d-%d], statement at %s:%d" % (
            loop["addr"], os.path.basename(loop["file"]), loop["line"], loop["line_lo"],
            loop["line_hi"], base, first)
        if not ok:
            wrong.append(text)
        elif verbose:
            print("  ok: " + text)

    count = [0]

    def walk(s):
        if s["kind"] == "loop":
            before = len(wrong) + good
            score(s)
            count[0] += len(wrong) + good - before
        for c in s["children"]:
            walk(c)

    for p in doc["procedures"]:
        walk(p)
    missing = [(b, m[0]) for b, ms in marks.items() for m in ms if (b, m[0]) not in found]
    name = os.path.basename(doc["module"])
    print("%s: %d/%d loops named by their statement line, %d markers without a loop" %
          (name, good, count[0], len(missing)))
    for w in wrong:
        print("  wrong: " + w)
    for b, line in missing:
        print("  no loop for the marker at %s:%d" % (b, line))


if __name__ == "__main__":
    main()

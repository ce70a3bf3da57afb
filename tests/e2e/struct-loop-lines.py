#!/usr/bin/env python3
"""struct-loop-lines.py [--min PERCENT] [--verbose] DUMP.json:SOURCE[,SOURCE...]...

Scores the lines `callpath struct --dump --format json` gives the loops of a fixture
against the loop statements marked "LOOP" in its SOURCE files (a do-while may carry the
marker on its `do` and its `while` lines: either names the loop).

Which source loop a machine loop is, is found without looking at the line under test:
each marker's loop spans its line and the following lines indented deeper (plus a closing
`}`/`end do` line at its own indentation); a machine loop belongs to the innermost marked
loop that contains the most of the statement lines directly at its level (its statement
children and the call sites of its inlined children). Loops whose code has no line in a
SOURCE file (libc, start files) are not scored.

Prints per build "NAME: G/T loops named by their statement line (P %), M markers without
a loop" and one line per wrong loop, then the total over all builds. Exits 1 when a marker
has no loop in some build or when the total share is below PERCENT (default 0). With
--verbose, one line per scored loop."""
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


def score_build(dump, sources, verbose):
    """(good, scored, missing markers) of one build, printing its lines."""
    doc = json.load(open(dump))
    marks = {os.path.basename(p): markers(p) for p in sources}
    found, good, scored, wrong = set(), 0, 0, []

    def score(loop):
        nonlocal good, scored
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
        (base, (first, last, stmt)), _ = max(
            votes.items(), key=lambda kv: (kv[1], -(kv[0][1][1] - kv[0][1][0])))
        found.add((base, first))
        ok = os.path.basename(loop["file"]) == base and loop["line"] in stmt
        good += ok
        scored += 1
        text = "loop 0x%x at %s:%d [lines %d-%d], statement at %s:%d" % (
            loop["addr"], os.path.basename(loop["file"]), loop["line"], loop["line_lo"],
            loop["line_hi"], base, first)
        if not ok:
            wrong.append(text)
        elif verbose:
            print("  ok: " + text)

    def walk(s):
        if s["kind"] == "loop":
            score(s)
        for c in s["children"]:
            walk(c)

    for p in doc["procedures"]:
        walk(p)
    missing = [(b, m[0]) for b, ms in marks.items() for m in ms if (b, m[0]) not in found]
    print("%s: %d/%d loops named by their statement line (%.1f %%), %d markers without a loop" %
          (os.path.basename(doc["module"]), good, scored, 100.0 * good / max(scored, 1),
           len(missing)))
    for w in wrong:
        print("  wrong: " + w)
    for b, line in missing:
        print("  no loop for the marker at %s:%d" % (b, line))
    return good, scored, len(missing)


def main():
    args, verbose, minimum = sys.argv[1:], False, 0.0
    builds = []
    while args:
        a = args.pop(0)
        if a == "--verbose":
            verbose = True
        elif a == "--min":
            minimum = float(args.pop(0))
        else:
            dump, _, sources = a.partition(":")
            builds.append((dump, sources.split(",")))
    good = scored = missing = 0
    for dump, sources in builds:
        g, s, m = score_build(dump, sources, verbose)
        good, scored, missing = good + g, scored + s, missing + m
    share = 100.0 * good / max(scored, 1)
    print("all %d builds: %d/%d loops named by their statement line (%.1f %%), "
          "%d markers without a loop" % (len(builds), good, scored, share, missing))
    if missing or not scored or share < minimum:
        sys.exit(1)


if __name__ == "__main__":
    main()

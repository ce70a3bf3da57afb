#!/usr/bin/env python3
"""Checks the documentation's references to files of the tree.

Usage: scripts/check-doc-links.py [ROOT]   (ROOT: the source tree, default: this script's)

For every Markdown file under ROOT/docs (and ROOT/README.md when present):
  - every relative link [text](target) must name an existing file or directory (relative
    to the linking file); a #fragment into a Markdown file must name one of its headings
    (GitHub's anchors: lower case, punctuation dropped, spaces to hyphens);
  - every code span that names a path from the top of the tree (`src/...`, `tests/...`,
    `scripts/...`, `docs/...`, `bench/...`, `cmake/...`) must exist; spans with
    wildcards or placeholders (* ? < > { } [ ] ..., or an upper-case word as in
    src/cli/cmd-NAME.c) are patterns, not paths, and are skipped;
  - every code span that is one of the project's own names (cp_*, callpath_*, CP_*,
    CALLPATH_*: a function, type, macro or environment variable, optionally written
    `name()`) must occur in the tree's sources (src/, tests/, scripts/, cmake/, the
    CMakeLists.txt files); a name with an upper-case placeholder word (cp_source_NAME,
    CP_EXPORT_NAME) is skipped.
Links to other sites (http:, https:, mailto:) are not checked. Code blocks (```) are
skipped. Prints one line per broken reference (FILE:LINE: ...) and exits 1 if there is
any, else 0.
"""
import os
import re
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
# An upper-case word in a path stands for a name (src/cli/cmd-NAME.c).
PLACEHOLDER = re.compile(r"(^|[-/_.])[A-Z][A-Z0-9_]+([-/_.]|$)")
PROJECT_NAME = re.compile(r"^(cp_[a-z0-9_]+|callpath_[a-z0-9_]+|CP_[A-Z0-9_]+|CALLPATH_[A-Z0-9_]+)(\(\))?$")
NAME_PLACEHOLDERS = {"NAME", "FAMILY", "FORMAT", "KIND", "X"}
SOURCE_EXT = (".c", ".h", ".S", ".sh", ".py", ".txt", ".cmake", ".proto", ".in")
TREE_DIRS = ("src/", "tests/", "scripts/", "docs/", "bench/", "cmake/")


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def headings(path, cache):
    if path not in cache:
        anchors = set()
        fence = False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.lstrip().startswith("```"):
                    fence = not fence
                    continue
                m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m and not fence:
                    base = slug(m.group(1))
                    anchor, n = base, 0
                    while anchor in anchors:
                        n += 1
                        anchor = "%s-%d" % (base, n)
                    anchors.add(anchor)
        cache[path] = anchors
    return cache[path]


def is_pattern(span):
    return any(c in span for c in "*?<>{}[]$ ") or "..." in span


def check_link(root, md, target, cache):
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):
        return None  # another site (http:, https:, mailto:)
    path, _, frag = target.partition("#")
    dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
    if not os.path.exists(dest):
        return "broken link %s (no %s)" % (target, os.path.relpath(dest, root))
    if frag and dest.endswith(".md") and frag not in headings(dest, cache):
        return "broken link %s (no heading #%s in %s)" % (target, frag,
                                                         os.path.relpath(dest, root))
    return None


def check_span(root, span):
    span = span.strip()
    if not span.startswith(TREE_DIRS) or is_pattern(span):
        return None
    path = span.split(":")[0]  # file:line, file:function
    path = re.sub(r"\s*\(.*$", "", path)
    if not os.path.exists(os.path.join(root, path)) and not PLACEHOLDER.search(path):
        return "no such path `%s`" % span
    return None


def source_words(root):
    words = set()
    for top in ("src", "tests", "scripts", "cmake", "bench"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith(SOURCE_EXT) or n == "CMakeLists.txt":
                    with open(os.path.join(d, n), encoding="utf-8", errors="replace") as f:
                        words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f.read()))
    top_cmake = os.path.join(root, "CMakeLists.txt")
    if os.path.exists(top_cmake):
        with open(top_cmake, encoding="utf-8") as f:
            words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f.read()))
    return words


def check_name(span, words):
    m = PROJECT_NAME.match(span.strip())
    if not m:
        return None
    name = m.group(1)
    if set(name.split("_")) & NAME_PLACEHOLDERS or name in words:
        return None
    return "`%s` names nothing in the sources" % span.strip()


def check_file(root, md, cache):
    problems = []
    fence = False
    with open(md, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            if fence:
                continue
            text = CODE_SPAN.sub("", line)
            for m in list(LINK.finditer(text)) + list(IMAGE.finditer(text)):
                err = check_link(root, md, m.group(1), cache)
                if err:
                    problems.append("%s:%d: %s" % (os.path.relpath(md, root), lineno, err))
            for m in CODE_SPAN.finditer(line):
                for err in (check_span(root, m.group(1)), check_name(m.group(1), cache["words"])):
                    if err:
                        problems.append("%s:%d: %s" % (os.path.relpath(md, root), lineno, err))
    return problems


def markdown_files(root):
    files = []
    for d, _, names in os.walk(os.path.join(root, "docs")):
        files += [os.path.join(d, n) for n in names if n.endswith(".md")]
    readme = os.path.join(root, "README.md")
    if os.path.exists(readme):
        files.append(readme)
    return sorted(files)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, ".."))
    files = markdown_files(root)
    if not files:
        print("check-doc-links: no Markdown files under %s/docs" % root, file=sys.stderr)
        return 1
    cache = {"words": source_words(root)}
    problems = []
    for md in files:
        problems += check_file(root, md, cache)
    for p in problems:
        print(p)
    print("check-doc-links: %d files, %d broken references" % (len(files), len(problems)),
          file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

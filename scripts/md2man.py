#!/usr/bin/env python3
"""Converts one of callpath's docs/*.md pages into a man page (roff, man macros).

Used by the build (cmake/install.cmake): the man pages are generated from docs/, never kept
as a second copy. It handles the Markdown the docs use: '#' title, '##'/'###' sections,
fenced code, pipe tables (as tagged paragraphs), '-' and '1.' lists, '>' quotes, and inline
code, bold, italics and links. A code block right after the title becomes the SYNOPSIS.

usage: md2man.py --name callpath-record --version 0.1.0 --help-text FILE
                 [--see-also callpath-report ...] IN.md OUT.1
The one-line NAME description comes from `callpath --help` (FILE holds its output): the
summary of the command, or the line under "usage:" for the callpath page itself.
"""
import argparse
import re
import sys


def escape(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "".join(c if ord(c) < 128 else "\\[u%04X]" % ord(c) for c in text)


def upper(text):
    """A section title in capitals, except its code spans (`-e` is not `-E`)."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(p if p.startswith("`") else p.upper() for p in parts)


def inline(text):
    """Markdown inline markup of one paragraph to roff."""
    text = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", link, text)
    out, pos = [], 0
    for m in re.finditer(r"`([^`]+)`", text):
        out.append(spans(text[pos:m.start()]))
        out.append("\\fB" + escape(m.group(1)) + "\\fR")
        pos = m.end()
    out.append(spans(text[pos:]))
    return "".join(out)


def link(m):
    label, url = m.group(1), m.group(2)
    page = re.fullmatch(r"(?:\.\./)?(?:docs/)?(callpath|cmd-[a-z]+)\.md", url)
    if page:
        ref = page.group(1).replace("cmd-", "callpath-") + "(1)"
        return ref if label.strip("`") == url else "%s (%s)" % (label, ref)
    if url.startswith("http"):
        return "%s <%s>" % (label, url)
    return label


def spans(text):
    """Inline markup outside code spans: bold, italics."""
    text = escape(text.replace("\\|", "|"))
    text = re.sub(r"\*\*(.+?)\*\*", r"\\fB\1\\fR", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\\fI\1\\fR", text)
    return re.sub(r"(?<!\w)_(?!\s)(.+?)(?<!\s)_(?!\w)", r"\\fI\1\\fR", text)


def line(text):
    """One output text line: roff would read a leading '.' or quote as a request."""
    text = text.strip()
    return "\\&" + text if text[:1] in (".", "'") else text


def cells(row):
    parts = re.split(r"(?<!\\)\|", row.strip())
    return [c.strip() for c in parts[1:-1]]


def table(rows, out):
    """Pipe table as tagged paragraphs: first column the tag, the others below it."""
    head = cells(rows[0])
    for row in rows[2:]:
        c = cells(row)
        out.append(".TP")
        out.append(line(inline(c[0])))
        if len(c) == 2:
            out.append(line(inline(c[1])))
            continue
        for i, value in enumerate(c[1:], 1):
            label = head[i] + ": " if i < len(head) and head[i] else ""
            out.append(line(inline(label + value)))
            out.append(".br")
        out.pop()


def blocks(lines):
    """Splits Markdown lines into (kind, lines) blocks."""
    i = 0
    while i < len(lines):
        s = lines[i]
        if not s.strip():
            i += 1
        elif s.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            yield "code", lines[i + 1:j]
            i = j + 1
        elif s.startswith("#"):
            yield "heading", [s]
            i += 1
        else:
            kind = "table" if s.startswith("|") else "quote" if s.startswith(">") else "para"
            j = i + 1
            while j < len(lines) and lines[j].strip() and not lines[j].startswith(("```", "#")):
                if kind == "table" and not lines[j].startswith("|"):
                    break
                j += 1
            yield kind, lines[i:j]
            i = j


ITEM = re.compile(r"^(\s*)([-*]|\d+\.)\s+")


def paragraph(para, out):
    """A paragraph, or a list when its lines start with '- ' or '1. '."""
    items, cur = [], None
    for s in para:
        m = ITEM.match(s)
        if m and not m.group(1):
            cur = [m.group(2), s[m.end():]]
            items.append(cur)
        elif cur is not None:
            cur[1] += " " + s.strip()
        else:
            items.append([None, s.strip()])
            cur = None
    text = []
    for mark, body in items:
        if mark is None:
            text.append(body)
            continue
        if text:
            out += [".PP", line(inline(" ".join(text)))]
            text = []
        bullet = "\\(bu" if mark in "-*" else mark
        out += [".IP %s 4" % bullet, line(inline(body))]
    if text:
        out += [".PP", line(inline(" ".join(text)))]


def code(body, out, indent=True):
    out += [".PP", ".RS 4", ".nf"] if indent else [".nf"]
    out += [("\\&" if s[:1] in ".'" else "") + escape(s) for s in body]
    out += [".fi", ".RE"] if indent else [".fi"]


def convert(md, name, version, summary, see_also):
    out = ['.TH "%s" 1 "" "callpath %s" "callpath manual"' % (name.upper(), version)]
    out += [".nh", ".ad l"]  # never hyphenate or stretch option and file names
    out += [".SH NAME", "%s \\- %s" % (escape(name), escape(summary))]
    lines = md.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    state = "start"
    for kind, body in blocks(lines):
        if state == "start":
            if kind == "code":
                out.append(".SH SYNOPSIS")
                code(body, out, indent=False)
                state = "synopsis"
                continue
        if state != "body" and kind != "heading":
            out.append(".SH DESCRIPTION")
        state = "body"
        if kind == "heading":
            level, title = re.match(r"(#+)\s*(.*)", body[0]).groups()
            if len(level) <= 2:
                out.append('.SH "%s"' % inline(upper(title)))
            else:
                out.append('.SS "%s"' % inline(title))
        elif kind == "code":
            code(body, out)
        elif kind == "table":
            table(body, out)
        elif kind == "quote":
            out += [".RS 4"]
            paragraph([re.sub(r"^>\s?", "", s) for s in body], out)
            out += [".RE"]
        else:
            paragraph(body, out)
    if see_also:
        out += [".SH \"SEE ALSO\"", ", ".join("\\fB%s\\fR(1)" % escape(p) for p in see_also)]
    return "\n".join(out) + "\n"


def summary_of(name, help_text):
    """The command's one-line summary from `callpath --help`."""
    lines = help_text.splitlines()
    if name == "callpath":
        rest = [s for s in lines[1:] if s.strip()]
        line = rest[0].strip().rstrip(".") if rest else "call-path profiler"
        return line[:1].lower() + line[1:]
    cmd = name.split("-", 1)[1]
    for s in lines:
        m = re.match(r"\s+(\S+)\s+(.*)", s)
        if m and m.group(1) == cmd:
            return m.group(2).strip()
    sys.exit("md2man: '%s' is not in the output of callpath --help" % cmd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--help-text", required=True)
    ap.add_argument("--see-also", nargs="*", default=[])
    ap.add_argument("input")
    ap.add_argument("output")
    a = ap.parse_args()
    with open(a.help_text) as f:
        summary = summary_of(a.name, f.read())
    with open(a.input) as f:
        page = convert(f.read(), a.name, a.version, summary, [p for p in a.see_also if p != a.name])
    with open(a.output, "w") as f:
        f.write(page)


if __name__ == "__main__":
    main()

#!/bin/bash
# Every relative link in docs/ (and README.md) names an existing file (and heading), and
# every path from the top of the tree and every project name (cp_*, CP_*, ...) named in a
# code span exists: scripts/check-doc-links.py. The checker is first shown to catch a
# broken link, a missing heading, a missing path and a missing name on a small tree.
. "$(dirname "$0")/lib.sh"

CHECK=$CP_SOURCE_DIR/scripts/check-doc-links.py

# The checker fails on each kind of broken reference.
mkdir -p "$WORK/tree/docs/internals" "$WORK/tree/src/base"
echo 'int cp_error(int code);' >"$WORK/tree/src/base/error.h"
printf '# Top\n\n## A section\n\nSee [b](internals/b.md#a-section), `src/base/error.h`, `cp_error()`.\n' \
	>"$WORK/tree/docs/a.md"
printf '# B\n\n## A section\n\nBack to [a](../a.md#top).\n' >"$WORK/tree/docs/internals/b.md"
python3 "$CHECK" "$WORK/tree" >"$WORK/ok.out" 2>&1 || {
	cat "$WORK/ok.out" >&2
	fail "the checker rejects a tree whose references all resolve"
}
expect_broken() { # NAME SED-EXPRESSION PATTERN: break a.md, the checker must say so
	sed "$2" "$WORK/tree/docs/a.md" >"$WORK/a.md.new"
	cp "$WORK/tree/docs/a.md" "$WORK/a.md.orig"
	mv "$WORK/a.md.new" "$WORK/tree/docs/a.md"
	if python3 "$CHECK" "$WORK/tree" >"$WORK/bad.out" 2>&1; then
		fail "the checker accepts a $1"
	fi
	grep -q "$3" "$WORK/bad.out" || { cat "$WORK/bad.out" >&2; fail "no message for a $1"; }
	mv "$WORK/a.md.orig" "$WORK/tree/docs/a.md"
}
expect_broken "link to a missing file" 's|internals/b.md|internals/c.md|' 'a.md:5: broken link'
expect_broken "link to a missing heading" 's|#a-section|#no-section|' 'no heading #no-section'
expect_broken "missing path in a code span" 's|src/base/error.h|src/base/errors.h|' \
	'no such path `src/base/errors.h`'
expect_broken "function name that is not in the sources" 's|cp_error()|cp_die()|' \
	'`cp_die()` names nothing in the sources'

# The project's own docs.
python3 "$CHECK" "$CP_SOURCE_DIR" >"$WORK/docs.out" 2>&1 || {
	cat "$WORK/docs.out" >&2
	fail "broken references in docs/ (above)"
}
note "$(tail -1 "$WORK/docs.out")"

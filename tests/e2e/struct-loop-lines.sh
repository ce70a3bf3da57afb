#!/bin/bash
# callpath struct names each loop by the line of its for/while/do statement (docs/cmd-struct.md,
# "Loop lines"), for gcc and clang at -O2 and -O3 and gfortran: the loop-shape fixture
# loopline.c (nests, while, do-while, a loop tested at the top, loops without a condition,
# a loop of an inlined function from another file, a jump table, vectorised loops) and
# the structure fixtures loops.c and nest.f90. The expected lines come from the "LOOP"
# markers of the sources (struct-loop-lines.py); at least 95 % of the loops of all builds
# must be named by their statement's line, and every marker must have a loop.
source "$(dirname "$0")/lib.sh"
FX=$CP_BUILD_DIR/tests/fixtures/src
SRC=$CP_SOURCE_DIR/tests/fixtures/src
for f in loopline.gcc.O2 loopline.gcc.O3 loops.gcc.O2; do
	[ -x "$FX/$f" ] || fail "fixture $FX/$f is not built"
done
command -v clang >/dev/null || note "clang is missing: clang builds skipped"
command -v gfortran >/dev/null || note "gfortran is missing: Fortran builds skipped"

builds=()
add() { # add BINARY SOURCE[,SOURCE...]
	[ -e "$FX/$1" ] || return 0
	"$CALLPATH" struct --no-cache --dump --format json "$FX/$1" >"$WORK/$1.json" ||
		fail "struct failed on $1"
	builds+=("$WORK/$1.json:$2")
}
for opt in O2 O3; do
	for cc in gcc clang; do
		add "loopline.$cc.$opt" "$SRC/loopline.c,$SRC/loopline-inl.h"
		add "loops.$cc.$opt" "$SRC/loops.c"
	done
	add "loopline.gfortran.$opt" "$SRC/loopline.f90"
	add "nest.gfortran.$opt" "$SRC/nest.f90"
done
python3 "$CP_SOURCE_DIR/tests/e2e/struct-loop-lines.py" --min 95 "${builds[@]}" ||
	fail "loops are not named by their statement lines"

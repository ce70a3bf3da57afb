#!/bin/bash
# Runs the ELF/DWARF front-end fuzzer (tests/fuzz/fuzz-elf.c) for a bounded time
# (CP_FUZZ_SECONDS, default 30) from the fixtures and a structure file as seeds
# (built by clang at build time, tests/fuzz/CMakeLists.txt; skipped when clang or libFuzzer
# is missing).
# Any crash, leak or sanitizer report fails the test (the reproducer is kept).
source "$(dirname "$0")/lib.sh"
source "$CP_SOURCE_DIR/tests/fuzz/fuzz-lib.sh"
FX=$CP_BUILD_DIR/tests/fixtures/src
require_built "$FX/loops.gcc.O2"
fuzz_require fuzz-elf
mkdir "$WORK/corpus"
for f in loops.gcc.O2 loops.clang.O2 nest.gfortran.O2 libloops.gcc.O2.so loops.gcc.O2.stripped; do
	[ -e "$FX/$f" ] && cp "$FX/$f" "$WORK/corpus/"
done
XDG_CACHE_HOME=$WORK/cache "$CALLPATH" struct "$FX/loops.gcc.O2" -o "$WORK/corpus/loops.cpst" >/dev/null ||
	fail "cannot write the structure-file seed"
fuzz_run fuzz-elf "${CP_FUZZ_SECONDS:-30}" 65536 corpus

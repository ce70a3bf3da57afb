#!/usr/bin/env bash
# Checks that the C sources follow .clang-format (src/, tests/unit/, tests/fuzz/); with --fix,
# reformats them. Test workloads, fixtures and examples are left as written: tests name
# their line numbers. Exit status 1 lists the files that drift.
set -uo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || {
	echo "check-format: clang-format is not installed (scripts/install-deps.sh --test)" >&2
	exit 1
}
mapfile -t files < <(git ls-files 'src/*.c' 'src/*.h' 'tests/unit/*.c' 'tests/unit/*.h' \
	'tests/fuzz/*.c')
if [ "${1:-}" = --fix ]; then
	clang-format -i "${files[@]}"
	exit 0
fi
drift=()
for f in "${files[@]}"; do
	clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || drift+=("$f")
done
if [ ${#drift[@]} -gt 0 ]; then
	echo "check-format: ${#drift[@]} of ${#files[@]} files differ from .clang-format" \
		"(scripts/check-format.sh --fix):" >&2
	printf '  %s\n' "${drift[@]}" >&2
	exit 1
fi
echo "check-format: ${#files[@]} files follow .clang-format"

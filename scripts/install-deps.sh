#!/usr/bin/env bash
# Installs every Debian 12 package callpath needs to build, test and benchmark.
# Idempotent: packages already present are skipped; `apt-get update` runs only
# when something is missing and the package lists are older than a day (or absent).
set -euo pipefail

# Build and runtime libraries (each used by exactly one module, see design.md).
BUILD_PKGS=(
  build-essential cmake pkg-config
  libelf-dev libdw-dev          # analyze/: ELF, DWARF, line tables, inline trees
  libzydis-dev                  # arch/x86_64/: decode and encode
  libsqlite3-dev libzstd-dev zlib1g-dev
  libcmocka-dev                 # tests/unit
)
# Tools the tests use as independent references, and the peers the benchmarks run beside.
TEST_PKGS=(
  valgrind elfutils binutils gfortran clang libclang-rt-14-dev
  linux-perf google-perftools libgoogle-perftools-dev libunwind-dev
  hyperfine xz-utils sqlite3 python3
)

missing=()
for p in "${BUILD_PKGS[@]}" "${TEST_PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#BUILD_PKGS[@]}+${#TEST_PKGS[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

lists=/var/lib/apt/lists
if [ -z "$(find "$lists" -maxdepth 1 -name '*_Packages' -mmin -1440 2>/dev/null | head -n1)" ]; then
  echo "install-deps: apt-get update"
  $SUDO apt-get update -qq
fi
echo "install-deps: installing ${missing[*]}"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"

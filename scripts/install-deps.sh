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
  libiberty-dev                 # patch/: allocation-free C++ demangler for probe patterns
  libsqlite3-dev                # db/: the profile database
  libzstd-dev                   # db/: per-thread value blobs
  zlib1g-dev libprotobuf-c-dev protobuf-c-compiler   # export/: pprof profile.proto, gzip
  libpfm4-dev                   # runtime/sample/: counter events by name
  libcmocka-dev                 # tests/unit
  python3 file                  # man pages from docs/ (scripts/md2man.py); cpack -G DEB
)
# Tools the tests use as independent references, and the peers the benchmarks run beside.
TEST_PKGS=(
  valgrind elfutils binutils gfortran clang libclang-rt-14-dev
  linux-perf google-perftools libgoogle-perftools-dev libunwind-dev
  hyperfine xz-utils sqlite3 python3
  golang-go                     # `go tool pprof` reads our pprof export
  python3-jsonschema            # validates the speedscope export against its schema
  uftrace                       # peer of `callpath probe` in bench/probe
)

# speedscope (npm) reads our folded/speedscope exports: Debian's nodejs+npm unless a Node.js
# with npm is already installed (a vendor nodejs package conflicts with Debian's npm).
if ! command -v npm >/dev/null 2>&1; then
  TEST_PKGS+=(nodejs npm)
fi

missing=()
for p in "${BUILD_PKGS[@]}" "${TEST_PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# npm packages the export tests use (pinned; into tools/node/node_modules), after apt.
trap '"$(dirname "$0")/install-node-tools.sh"' EXIT

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

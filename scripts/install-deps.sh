#!/usr/bin/env bash
# Installs the Debian 12 packages callpath needs.
#   scripts/install-deps.sh          what building and running callpath need (demo.sh)
#   scripts/install-deps.sh --test   also the tools the test suite checks against (test.sh)
#   scripts/install-deps.sh --bench  also the peers the benchmarks run beside (implies --test)
# Idempotent: packages already present are skipped; `apt-get update` runs only when something
# is missing and the package lists are older than a day (or absent). Required packages that
# cannot be installed are an error; optional tools (the npm packages) only warn.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

want_test=0 want_bench=0
for arg in "$@"; do
  case $arg in
  --test) want_test=1 ;;
  --bench) want_test=1 want_bench=1 ;;
  -h | --help)
    sed -n '2,8s/^# \{0,1\}//p' "$0"
    exit 0
    ;;
  *)
    echo "install-deps: unknown option '$arg' (try --help)" >&2
    exit 2
    ;;
  esac
done

# Building and running: compiler, CMake and each module's library (see design.md).
BUILD_PKGS=(
  build-essential cmake pkg-config
  libelf-dev libdw-dev          # analyze/: ELF, DWARF, line tables, inline trees
  libzydis-dev                  # arch/x86_64/: decode and encode
  libiberty-dev                 # patch/: allocation-free C++ demangler for probe patterns
  libsqlite3-dev                # db/: the profile database
  libzstd-dev                   # db/: per-thread value blobs
  zlib1g-dev libprotobuf-c-dev protobuf-c-compiler   # export/: pprof profile.proto, gzip
  libpfm4-dev                   # events/: counter events by name
  libncurses-dev                # top/: the interactive terminal view
  libmicrohttpd-dev libgraphviz-dev   # view/: the HTTP server, the call graph's layout
  libcmocka-dev                 # tests/unit: the default build includes the unit tests
  libopenmpi-dev                # mpi-analyze/: `analyze --mpi` (built only when MPI is found)
  python3 file                  # man pages from docs/ (scripts/md2man.py); cpack -G DEB
  libopenmpi-dev                # mpi/: libcallpath-mpi.so, the PMPI wrappers
)
# The test suite: independent references the tests compare against, and the compilers of
# the fixtures and fuzzers.
TEST_PKGS=(
  valgrind elfutils binutils gfortran clang libclang-rt-14-dev
  llvm                          # llvm-symbolizer: struct-addr2line's second opinion
  linux-perf xz-utils sqlite3 python3
  golang-go                     # `go tool pprof` reads our pprof export
  python3-jsonschema            # validates the speedscope export against its schema
  clang-format                  # scripts/check-format.sh
  libomp-dev                    # clang -fopenmp: the omp-*.clang workloads (omp-libomp)
  libc6-dbg                     # names of libc's internal functions (record-runtime-frames)
  openmpi-bin                   # mpirun: record-mpi, mpi-* (ranks, MPI metrics)
  tmux                          # top-*: drives callpath top, captures its screen
  chromium                      # view-browser: callpath view in a headless browser
  curl                          # view-*: the viewer's HTTP API (minbase Debian lacks it)
)
# Benchmarks only: the peers in bench/.
BENCH_PKGS=(
  hyperfine uftrace google-perftools libgoogle-perftools-dev libunwind-dev
)

pkgs=("${BUILD_PKGS[@]}")
if [ $want_test = 1 ]; then
  pkgs+=("${TEST_PKGS[@]}")
  # speedscope (npm) reads our speedscope export: Debian's nodejs+npm unless a Node.js with
  # npm is already installed (a vendor nodejs package conflicts with Debian's npm).
  command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)
fi
[ $want_bench = 1 ] && pkgs+=("${BENCH_PKGS[@]}")

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  lists=/var/lib/apt/lists
  if [ -z "$(find "$lists" -maxdepth 1 -name '*_Packages' -mmin -1440 2>/dev/null | head -n1)" ]; then
    echo "install-deps: apt-get update"
    $SUDO apt-get update -qq
  fi
  echo "install-deps: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
  echo "install-deps: done"
fi

# Optional: npm packages the export tests read our files with. A failure (offline, a proxy,
# the registry down) only warns: the check that needs them says it did not run.
if [ $want_test = 1 ] && ! "$here/install-node-tools.sh"; then
  echo "install-deps: warning: the npm tools could not be installed; the speedscope" \
    "schema check and the browser test (playwright-core) will not run" >&2
fi
exit 0

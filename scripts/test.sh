#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every unit and end-to-end test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 600

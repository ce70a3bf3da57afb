#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: install what building and running need (not
# the test tools), build, and profile the bundled demo program, printing its profile.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
rm -rf build/demo-profile
build/callpath record -o build/demo-profile -- build/examples/demo

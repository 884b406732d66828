#!/usr/bin/env bash
# The whole test suite: installs, builds, runs every test through ctest (each has a timeout).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --test
cd build
ctest --output-on-failure "$@"

#!/usr/bin/env bash
# Installs missing Debian packages, then configures and builds everything into build/.
#   build.sh          the library, motor, samples and benchmarks (what the main job needs)
#   build.sh --bench  also installs what the benchmark driver's plots need
#   build.sh --test   also installs and builds what the test suite needs (the libFuzzer target)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh "$@"
fuzz=OFF
if [ "${1:-}" = "--test" ]; then fuzz=ON; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMOTOR_FUZZ=$fuzz >/dev/null
cmake --build build -j"$(nproc)"

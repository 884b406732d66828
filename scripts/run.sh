#!/usr/bin/env bash
# The main job: installs, builds, and runs the demo on 3 ranks (RANKS=N to change).
# (The shallow-water case study replaces the demo once it exists.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
exec mpiexec.mpich -n "${RANKS:-3}" build/motor build/Demo.exe "$@"

#!/usr/bin/env bash
# The main job: installs, builds, and runs the shallow-water case study in C# on System.MP:
# 3 ranks (a master and 2 workers; RANKS=N to change), 256x256 grid, 100 steps, or the grid
# and steps you give: bash scripts/run.sh 512 512 200
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
[ $# -gt 0 ] || set -- 256 256 100
exec mpiexec.mpich -n "${RANKS:-3}" build/motor build/ShallowWater.exe "$@"

#!/usr/bin/env bash
# bench_transports.sh BUILD_DIR — the benchmark transports measured by default, as the benchmark
# programs list them (--list): one "NAME CAPS PROGRAM" line each (PROGRAM: native, csharp or
# mpi4py; CAPS: blocking or blocking+nonblocking). mpi4py joins when Debian's python3-mpi4py and
# Open MPI's launcher are installed. Sourced knowledge lives in the programs, not here.
set -euo pipefail
b=$1
src=$(cd "$(dirname "$0")/.." && pwd)
list() { # list PROGRAM COMMAND...
    local program=$1
    shift
    "$@" | awk -F, -v p="$program" '$1 == "transport" && $4 == "default" { print $2, $3, p }'
}
list native mpiexec.mpich -n 1 "$b/bench/bench_native" --list
list csharp mpiexec.mpich -n 1 "$b/motor" "$b/bench/Bench.exe" --list
if /usr/bin/python3 -c "import mpi4py" 2>/dev/null && command -v mpiexec.openmpi >/dev/null; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        list mpi4py mpiexec.openmpi -n 1 /usr/bin/python3 "$src/bench/mpi4py/bench_mpi4py.py" --list
fi

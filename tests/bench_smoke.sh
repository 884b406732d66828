#!/usr/bin/env bash
# bench_smoke.sh BUILD_DIR — the collective and serializer benchmark programs run a tiny
# configuration over each of their transports and print result rows (timings are never checked;
# the point-to-point patterns have their own data-checking tests, bench_check.sh).
set -u
b=$1
passed=0
failed=0
rows() { # rows LABEL EXPECTED_PREFIX COMMAND...
    local label=$1 prefix=$2
    shift 2
    local out
    out=$(timeout $((120 * ${MOTOR_TIMEOUT_SCALE:-1})) "$@" 2>&1)
    if [ $? -eq 0 ] && grep -q "^$prefix," <<<"$out"; then passed=$((passed + 1)); else
        failed=$((failed + 1)); echo "FAIL: $label"; echo "$out" | tail -60; fi
}
mpi="mpiexec.mpich -n 2"
for t in system-mp pinvoke; do
    rows "bcast $t" $t $mpi "$b/motor" "$b/bench/Collectives.exe" $t bcast 8 32 1
    rows "allreduce $t" $t $mpi "$b/motor" "$b/bench/Collectives.exe" $t allreduce 8 32 1
done
rows "collectives native" native-c $mpi "$b/bench/collectives_native" allreduce 8 32 1
# the v-collectives
for t in system-mp pinvoke; do
    rows "gatherv $t" $t $mpi "$b/motor" "$b/bench/Collectives.exe" $t gatherv 8 32 1
    rows "alltoallv $t" $t $mpi "$b/motor" "$b/bench/Collectives.exe" $t alltoallv 8 32 1
done
rows "gatherv native" native-c $mpi "$b/bench/collectives_native" gatherv 8 32 1
rows "alltoallv native" native-c $mpi "$b/bench/collectives_native" alltoallv 8 32 1
# Iallreduce + Wait, System.MP and native C
rows "iallreduce system-mp" system-mp $mpi "$b/motor" "$b/bench/Collectives.exe" system-mp iallreduce 8 32 1
rows "iallreduce native" native-c $mpi "$b/bench/collectives_native" iallreduce 8 32 1
# regions, persistent requests, neighbourhood halos (bench/regions.py): every size's data checked
for op in column block3d persistent neighbor neighbor-packed column-nb; do
    t=system-mp; [ $op = neighbor-packed ] && t=system-mp-packed
    if [ $op = column-nb ]; then # native C only: the MPI path System.MP's blocking calls take
        rows "regions $op native" native-c-nb $mpi "$b/bench/regions_native" $op 8 512 1
        continue
    fi
    rows "regions $op system-mp" $t $mpi "$b/motor" "$b/bench/Regions.exe" $op 8 512 1
    rows "regions $op native" "${t/system-mp/native-c}" $mpi "$b/bench/regions_native" $op 8 512 1
done
# parallel files (bench/io.py): a collective write and read of a 64 KiB double[90,90], data checked
io_dir=$(mktemp -d "${TMPDIR:-/tmp}/motor-bench-io.XXXXXX")
for op in write read; do
    rows "io $op system-mp" system-mp $mpi "$b/motor" "$b/bench/Io.exe" $op 65536 65536 1 "$io_dir"
    rows "io $op native" native-c $mpi "$b/bench/io_native" $op 65536 65536 1 "$io_dir"
done
rm -rf "$io_dir"
# one-sided communication (bench/rma.py): Put/Get in lock, flush and fence epochs, FetchAndOp
for op in put-lock put-flush get-flush put-fence fetch-op; do
    rows "rma $op system-mp" system-mp $mpi "$b/motor" "$b/bench/Rma.exe" $op 8 512 1
    rows "rma $op native" native-c $mpi "$b/bench/rma_native" $op 8 512 1
done
for t in sdto binaryformatter datacontract; do
    rows "sdto pingpong $t" $t $mpi "$b/motor" "$b/bench/Sdto.exe" pingpong $t 1 16 1
    last=$t-serialize; [ $t = sdto ] && last=sdto-shared-roundtrip   # sdto's reused-buffer and identity rows come last
    rows "sdto perobject $t" "$last" mpiexec.mpich -n 1 "$b/motor" "$b/bench/Sdto.exe" perobject $t 100 1
done
rows "sdto pingpong native" native-c $mpi "$b/bench/sdto_native" pingpong native-c 1 16 1
# a user's plain loop (issue 35): one list size a run, warm-up then timed round trips, data checked
for t in sdto sdto-into; do
    rows "sdto userloop $t" $t $mpi "$b/motor" "$b/bench/Sdto.exe" userloop $t 16 5 20
done
rows "sdto userloop native" native-c $mpi "$b/bench/sdto_native" userloop native-c 16 5 20
# mpi4py's pickle, when Debian's python3-mpi4py (Open MPI) is installed
if /usr/bin/python3 -c "import mpi4py" 2>/dev/null && command -v mpiexec.openmpi >/dev/null; then
    src=$(cd "$(dirname "$0")/.." && pwd)
    rows "sdto pingpong mpi4py" mpi4py-pickle env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        mpiexec.openmpi --oversubscribe -n 2 /usr/bin/python3 "$src/bench/mpi4py/sdto_mpi4py.py" 1 16 1
fi
# the object-array sample through its driver (bench/arrays.py, part sample): table, CSV and gains
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
log=$(cd "$src" && timeout $((120 * ${MOTOR_TIMEOUT_SCALE:-1})) /usr/bin/python3 bench/arrays.py --build "$b" --parts sample \
      --rounds 1 --sample-ranks 2 --sample-args "--blocks 4 --block-size 64 --steps 3 --phases 2" --out "$out" 2>&1)
if [ $? -eq 0 ] && grep -q "^balanced,2," "$out/arrays_sample.csv" && grep -q "^1," "$out/arrays_sample_gain.csv" \
   && grep -q "after the first phase" <<<"$log"; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL: arrays sample driver"; echo "$log" | tail -60; fi
rm -rf "$out"
echo "bench_smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

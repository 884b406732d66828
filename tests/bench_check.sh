#!/usr/bin/env bash
# bench_check.sh BUILD_DIR PATTERN RANKS — a benchmark pattern runs a tiny configuration over
# every transport the benchmark programs list (bench_transports.sh) in check mode: every payload
# byte is stamped by its sender and verified by its receiver (the program aborts on the first
# wrong byte). Asserted for each transport: the run succeeds, rank 0 reports every size 0..64 KiB
# with the pattern's metrics, and every rank that takes part verified messages. A transport with
# blocking calls only skips the patterns that need non-blocking ones. Timings are never looked at.
set -u
b=$1 pattern=$2 ranks=$3
src=$(cd "$(dirname "$0")/.." && pwd)
scale=${MOTOR_TIMEOUT_SCALE:-1}
case "$pattern" in
  onetomany|manytoone) metrics="time MBps"; takers=$ranks ;;
  loggp) metrics="prtt1 os T or"; takers=2 ;;
  halo) metrics="time first"; takers=1 ;;   # rank 0 is its own neighbour
  *) metrics="time"; takers=2 ;;
esac
case "$pattern" in pingping|window|onetomany|manytoone) needs=nonblocking ;; *) needs=blocking ;; esac
registry=$(bash "$src/tests/bench_transports.sh" "$b") || { echo "FAIL: cannot list the transports"; exit 1; }
passed=0 failed=0
mapfile -t entries <<<"$registry"
for entry in "${entries[@]}"; do
    read -r transport caps program <<<"$entry"
    [[ "$caps" == *"$needs"* ]] || { echo "$pattern over $transport: skipped (blocking calls only)"; continue; }
    case "$program" in
      native) cmd=(mpiexec.mpich -n "$ranks" "$b/bench/bench_native") ;;
      mpi4py) cmd=(mpiexec.openmpi --oversubscribe -n "$ranks" /usr/bin/python3 "$src/bench/mpi4py/bench_mpi4py.py")
              export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ;;
      *) cmd=(mpiexec.mpich -n "$ranks" "$b/motor" "$b/bench/Bench.exe") ;;
    esac
    out=$(timeout $((120 * scale)) "${cmd[@]}" "$pattern" "$transport" 0 65536 1 0 0 check 2>&1 </dev/null)
    rc=$? why=""
    [ $rc -eq 0 ] || why="exit code $rc"
    for size in 0 1 2 4 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536; do
        for m in $metrics; do
            [ -n "$why" ] || grep -q "^$transport,$size,0,[0-9]*,[0-9.e+-]*,$m\$" <<<"$out" || why="no $m row for $size bytes"
        done
    done
    for ((r = 0; r < takers; r++)); do
        n=$(grep "^checked,$transport,$pattern,$r," <<<"$out" | cut -d, -f5)
        [ -n "$why" ] || { [ -n "$n" ] && [ "$n" -gt 0 ]; } || why="rank $r verified no message (got '${n}')"
    done
    if [ -z "$why" ]; then
        passed=$((passed + 1))
        echo "$pattern over $transport, $ranks ranks: data verified on $takers ranks"
    else
        failed=$((failed + 1))
        echo "FAIL: $pattern over $transport: $why"
        echo "$out" | head -20
    fi
done
echo "bench_check $pattern: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

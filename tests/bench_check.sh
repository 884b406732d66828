#!/usr/bin/env bash
# bench_check.sh BUILD_DIR PATTERN TRANSPORT RANKS — a benchmark pattern runs a tiny
# configuration over one transport in check mode: every payload byte is stamped by its sender
# and verified by its receiver (the program aborts on the first wrong byte). Asserted here: the
# run succeeds, rank 0 reports every size 0..64 KiB with the pattern's metrics, and every rank
# that takes part verified messages. Timings are never looked at.
set -u
b=$1 pattern=$2 transport=$3 ranks=$4
src=$(cd "$(dirname "$0")/.." && pwd)
case "$transport" in
  native-c*) cmd=(mpiexec.mpich -n "$ranks" "$b/bench/bench_native") ;;
  mpi4py) cmd=(mpiexec.openmpi --oversubscribe -n "$ranks" /usr/bin/python3 "$src/bench/mpi4py/bench_mpi4py.py")
          export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ;;
  *) cmd=(mpiexec.mpich -n "$ranks" "$b/motor" "$b/bench/Bench.exe") ;;
esac
case "$pattern" in
  onetomany|manytoone) metrics="time MBps"; takers=$ranks ;;
  loggp) metrics="prtt1 os T or"; takers=2 ;;
  halo) metrics="time first"; takers=1 ;;   # rank 0 is its own neighbour
  *) metrics="time"; takers=2 ;;
esac
out=$(timeout 120 "${cmd[@]}" "$pattern" "$transport" 0 65536 1 0 0 check 2>&1)
rc=$?
fail() { echo "FAIL: $pattern over $transport: $1"; echo "$out" | head -20; exit 1; }
[ $rc -eq 0 ] || fail "exit code $rc"
for size in 0 1 2 4 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536; do
  for m in $metrics; do
    grep -q "^$transport,$size,0,[0-9]*,[0-9.e+-]*,$m\$" <<<"$out" || fail "no $m row for $size bytes"
  done
done
for ((r = 0; r < takers; r++)); do
  n=$(grep "^checked,$transport,$pattern,$r," <<<"$out" | cut -d, -f5)
  [ -n "$n" ] && [ "$n" -gt 0 ] || fail "rank $r verified no message (got '${n}')"
done
echo "$pattern over $transport, $ranks ranks: data verified on $takers ranks ($(grep -c "^checked" <<<"$out") reports)"

#!/usr/bin/env bash
# shallow_water_checkpoint.sh BUILD_DIR — the shallow-water checkpoint (--checkpoint FILE: every
# rank writes its rows of u, v and p through an MPFile view) is the same file, byte for byte, at
# 1, 2, 3 and 4 ranks (and with --neighbour halos), and equals what one serial write of the 1-rank
# run's fields gives (--dump FILE: a FileStream write of each double[M, N] in turn): the fields in
# native byte order, row-major, no header. On an odd grid, so that the workers' row counts differ.
set -u
build=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/motor-checkpoint.XXXXXX")
trap 'rm -rf "$work"' EXIT
args="33 17 25"
passed=0
failed=0
run() { # ranks, checkpoint file, extra arguments
  local np=$1 file=$2
  shift 2
  timeout $((120 * ${MOTOR_TIMEOUT_SCALE:-1})) mpiexec.mpich -n "$np" "$build/motor" \
    "$build/ShallowWater.exe" $args --checkpoint "$file" "$@" > "$work/out.txt" 2>&1 ||
    { echo "FAIL: $np rank(s) $*: exit $?"; cat "$work/out.txt"; return 1; }
}
check() { # what, file
  if cmp -s "$work/serial.bin" "$2"; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL: $1: the checkpoint differs from the serial write"; fi
}
run 1 "$work/c1.bin" --dump "$work/serial.bin" || exit 1
expected=$((33 * 17 * 8 * 3))
size=$(stat -c %s "$work/serial.bin")
if [ "$size" -eq "$expected" ]; then passed=$((passed + 1)); else
  failed=$((failed + 1)); echo "FAIL: the serial write has $size bytes, not $expected"; fi
check "1 rank" "$work/c1.bin"
for np in 2 3 4; do
  run "$np" "$work/c$np.bin" && check "$np ranks" "$work/c$np.bin" || failed=$((failed + 1))
done
run 3 "$work/n3.bin" --neighbour && check "3 ranks, --neighbour" "$work/n3.bin" ||
  failed=$((failed + 1))
echo "shallow_water_checkpoint: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

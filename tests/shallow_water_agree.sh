#!/usr/bin/env bash
# shallow_water_agree.sh BUILD_DIR — the three shallow-water implementations (C# on System.MP,
# C# on the P/Invoke + BinaryFormatter baseline, native C on MPICH) produce the same fields bit
# for bit (same checksum) at several worker counts, on an even grid and on an odd one (whose rows
# leave a single column after the kernels' two-at-a-time loops); so does System.MP's --neighbour
# mode, whose halos travel by one NeighborAlltoall of regions per exchange phase.
set -u
build=$1
passed=0
failed=0
for grid in "40 24" "33 25"; do
  for np in 1 2 3; do
    cs=$(timeout $((120 * ${MOTOR_TIMEOUT_SCALE:-1})) mpiexec.mpich -n $np "$build/motor" "$build/ShallowWater.exe" $grid 20 --checksum | grep '^checksum')
    pi=$(timeout $((120 * ${MOTOR_TIMEOUT_SCALE:-1})) mpiexec.mpich -n $np "$build/motor" "$build/ShallowWater.exe" $grid 20 --checksum --pinvoke | grep '^checksum')
    nb=$(timeout $((120 * ${MOTOR_TIMEOUT_SCALE:-1})) mpiexec.mpich -n $np "$build/motor" "$build/ShallowWater.exe" $grid 20 --checksum --neighbour | grep '^checksum')
    c=$(timeout $((120 * ${MOTOR_TIMEOUT_SCALE:-1})) mpiexec.mpich -n $np "$build/shallow_water_c" $grid 20 --checksum | grep '^checksum')
    if [ -n "$cs" ] && [ "$cs" = "$c" ] && [ "$pi" = "$c" ] && [ "$nb" = "$c" ]; then passed=$((passed + 1)); else
        failed=$((failed + 1)); echo "FAIL: $grid grid, $np rank(s): System.MP '$cs' vs P/Invoke '$pi' vs --neighbour '$nb' vs C '$c'"; fi
  done
done
echo "shallow_water_agree: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

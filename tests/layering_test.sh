#!/usr/bin/env bash
# layering_test.sh BUILD_DIR — the layers include each other's headers by name only, so the build's
# per-layer include directories decide what a layer may see (CMakeLists.txt): a relative include
# ("../x/y.h") would step around them. Also: only mpc/ calls MPI, and the core exports only its
# public headers' API.
set -u
b=$1
src=$(cd "$(dirname "$0")/.." && pwd)
failed=0
relative=$(cd "$src" && grep -n '#include "\.\./' mpc/*.[ch] runtime/*.[ch] gc_hooks/*.[ch] serializer/*.[ch] opi/*.[ch] host/*.c)
if [ -n "$relative" ]; then
    echo "FAIL: relative includes step around the layers' include directories:"
    echo "$relative"
    failed=$((failed + 1))
fi
# mpc/ is the one door to MPI: no other layer calls an MPI function
calls=$(cd "$src" && grep -nE '\bP?MPI_[A-Z][A-Za-z_]*[[:space:]]*\(' runtime/*.[ch] gc_hooks/*.[ch] serializer/*.[ch] opi/*.[ch] host/*.c |
        grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)')
if [ -n "$calls" ]; then
    echo "FAIL: MPI called outside mpc/:"
    echo "$calls"
    failed=$((failed + 1))
fi
# every exported symbol is declared by a public header (mpc.h with MPC_API, motor_core.h)
exported=$(nm -D --defined-only "$b/libmotorcore.so" | awk '{ print $3 }')
for sym in $exported; do
    if ! grep -q "MPC_API.*\b$sym(" "$src/mpc/mpc.h" && ! grep -q "MOTOR_CORE_API.*\b$sym(" "$src/opi/motor_core.h"; then
        echo "FAIL: libmotorcore.so exports $sym, which no public header declares"
        failed=$((failed + 1))
    fi
done
echo "layering: $(wc -w <<<"$exported") exported symbols, $failed failure(s)"
[ "$failed" -eq 0 ]

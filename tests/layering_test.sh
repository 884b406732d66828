#!/usr/bin/env bash
# layering_test.sh BUILD_DIR — the layers include each other's headers by name only, so the build's
# per-layer include directories decide what a layer may see (CMakeLists.txt): a relative include
# ("../x/y.h") would step around them. Also: only mpc/ calls MPI, only transfer/ pins objects
# or holds them for MPI, the serializer and gc_hooks/ include nothing of MPI, and the core exports
# only its public headers' API.
set -u
b=$1
src=$(cd "$(dirname "$0")/.." && pwd)
failed=0
layers="mpc/*.[ch] object_model/*.[ch] gc_hooks/*.[ch] transfer/*.[ch] serializer/*.[ch] opi/*.[ch] host/*.c"
relative=$(cd "$src" && grep -n '#include "\.\./' $layers)
if [ -n "$relative" ]; then
    echo "FAIL: relative includes step around the layers' include directories:"
    echo "$relative"
    failed=$((failed + 1))
fi
# mpc/ is the one door to MPI: no other layer calls an MPI function
calls=$(cd "$src" && grep -nE '\bP?MPI_[A-Z][A-Za-z_]*[[:space:]]*\(' object_model/*.[ch] gc_hooks/*.[ch] transfer/*.[ch] serializer/*.[ch] opi/*.[ch] host/*.c |
        grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)')
if [ -n "$calls" ]; then
    echo "FAIL: MPI called outside mpc/:"
    echo "$calls"
    failed=$((failed + 1))
fi
# transfer/ is the one place that holds objects for MPI: GC roots, GC-safe regions whose stack
# mark holds objects, pinned handles on transfers' buffers. (gc_hooks/ enters GC-safe regions
# holding nothing; the serializer pins what its own walk allocates around, and opi_ops.c the C#
# operator its closure calls: neither for MPI.)
comments='^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)'
held=$(cd "$src" && { grep -nE 'mono_gc_register_root|enter_gc_safe_region' mpc/*.[ch] object_model/*.c serializer/*.[ch] opi/*.[ch] host/*.c
                      grep -nE 'mono_gchandle_new[[:space:]]*\([^,]*,[[:space:]]*(1|TRUE|true)\)' mpc/*.[ch] object_model/*.c gc_hooks/*.[ch] opi/*.[ch] host/*.c |
                          grep -v 'u->combiner = '; } | grep -vE "$comments")
if [ -n "$held" ]; then
    echo "FAIL: objects held for MPI outside transfer/ (use its brackets):"
    echo "$held"
    failed=$((failed + 1))
fi
# the serializer and gc_hooks/ see nothing of MPI: no header of it, no mpc.h
mpi_seen=$(cd "$src" && grep -nE '#include[[:space:]]*[<"](mpi\.h|mpc\.h|transfer\.h)' serializer/*.[ch] gc_hooks/*.[ch])
if [ -n "$mpi_seen" ]; then
    echo "FAIL: the serializer or gc_hooks/ includes MPI or a layer above it:"
    echo "$mpi_seen"
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

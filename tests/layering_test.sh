#!/usr/bin/env bash
# layering_test.sh BUILD_DIR — the layers include each other's headers by name only, so the
# build's per-layer include directories decide what a layer may see (CMakeLists.txt): a relative
# include ("../x/y.h") would step around them. Also: only mpc/ calls MPI, only transfer/ holds
# objects for MPI, the serializer and gc_hooks/ include nothing of MPI, mpc's private headers are
# mpc's, and the core exports exactly the API of its installed headers, at most 60 symbols.
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
# mpc's private headers (what its own files share) are included by mpc/ alone; the other layers
# see mpc.h and mpc_internal.h
private=$(cd "$src" && grep -nE '#include "(mpc_impl|liveness|owned_handles|finalize_watch)\.h"' \
          object_model/*.[ch] gc_hooks/*.[ch] transfer/*.[ch] serializer/*.[ch] opi/*.[ch] host/*.c)
if [ -n "$private" ]; then
    echo "FAIL: mpc's private headers included outside mpc/:"
    echo "$private"
    failed=$((failed + 1))
fi

# The public surface is what users call: the installed headers (as `cmake --install` lays them
# out) declare exactly what libmotorcore.so exports, marked MPC_API or MOTOR_CORE_API, and the
# export list stays small. Headers that are not installed mark nothing for export.
max_exports=60
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! cmake --install "$b" --prefix "$work/prefix" >"$work/install.txt" 2>&1; then
    echo "FAIL: cmake --install"; cat "$work/install.txt"; exit 1
fi
installed=$(ls "$work"/prefix/include/motor/*.h 2>/dev/null)
[ -n "$installed" ] || { echo "FAIL: no header installed in include/motor"; exit 1; }
# the API the installed headers declare: the name before the first '(' of each marked line
declared=$(grep -hE '^[[:space:]]*(MPC_API|MOTOR_CORE_API)[[:space:]]' $installed |
           sed -E 's/\(.*//; s/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*$/\1/' | sort -u)
exported=$(nm -D --defined-only "$b/libmotorcore.so" | awk '{ print $3 }' | sort -u)
for sym in $(comm -23 <(echo "$exported") <(echo "$declared")); do
    echo "FAIL: libmotorcore.so exports $sym, which no installed header declares"
    failed=$((failed + 1))
done
for sym in $(comm -13 <(echo "$exported") <(echo "$declared")); do
    echo "FAIL: an installed header declares $sym (marked for export), which libmotorcore.so" \
         "does not export"
    failed=$((failed + 1))
done
count=$(wc -w <<<"$exported")
if [ "$count" -gt "$max_exports" ]; then
    echo "FAIL: libmotorcore.so exports $count symbols, more than $max_exports: what is not for"
    echo "      users belongs in an internal header (mpc_internal.h and the like), not marked"
    failed=$((failed + 1))
fi
# an installed header includes only installed headers and the system's (<mpi.h>, <stddef.h>, ...)
for h in $installed; do
    for inc in $(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/p' "$h"); do
        if [ ! -f "$work/prefix/include/motor/$inc" ]; then
            echo "FAIL: installed $(basename "$h") includes \"$inc\", which is not installed"
            failed=$((failed + 1))
        fi
    done
done
# headers that are not installed mark nothing for export (their declarations stay hidden)
names=$(for h in $installed; do basename "$h"; done)
marked=$(cd "$src" && grep -lE '^[[:space:]]*(MPC_API|MOTOR_CORE_API)[[:space:]]' \
         mpc/*.h object_model/*.h gc_hooks/*.h transfer/*.h serializer/*.h opi/*.h 2>/dev/null |
         while read -r f; do grep -qx "$(basename "$f")" <<<"$names" || echo "$f"; done)
if [ -n "$marked" ]; then
    echo "FAIL: headers that are not installed mark declarations for export:"
    echo "$marked"
    failed=$((failed + 1))
fi
echo "layering: $count exported symbols (at most $max_exports)," \
     "$(wc -w <<<"$installed") installed headers, $failed failure(s)"
[ "$failed" -eq 0 ]

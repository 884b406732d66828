#!/usr/bin/env bash
# release_build_test.sh BUILD_DIR — the C core and the host also build optimised for release
# (-O3 -DNDEBUG), where gcc's flow analysis differs from the suite's -O2 build and -Werror turns
# its maybe-uninitialized false positives into a failed build: a user's Release build must not
# break. Builds only the C targets (a few seconds), in a directory of its own under BUILD_DIR.
set -eu
b=$1
src=$(cd "$(dirname "$0")/.." && pwd)
out="$b/release-build-check"
rm -rf "$out"
if ! cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=Release > "$out.log" 2>&1 ||
   ! cmake --build "$out" -j2 --target motorcore motor >> "$out.log" 2>&1; then
    echo "FAIL: the Release build of the C core does not build:"
    grep -E "error|warning" "$out.log" | head -30
    exit 1
fi
rm -rf "$out" "$out.log"
echo "release_build_test: motorcore and motor build with CMAKE_BUILD_TYPE=Release (-O3, -Werror)"

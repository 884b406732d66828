#!/usr/bin/env bash
# c_api_test.sh BUILD_DIR — the examples of docs/c-api.md, taken from the page itself (each
# block follows a `<!-- c_api_test: FILE -->` line), so the page cannot drift: installed into a
# temporary prefix with `cmake --install`, built with `cc $(pkg-config --cflags --libs motor)`
# against that prefix only, and run under mpiexec.mpich from another directory.
#   ring.c  (mpc.h): at 2 ranks it must print exactly the lines of ring.out, in any order, exit 0,
#           and leave stderr empty; at 1 and 3 ranks exit 0 with stderr empty.
#   host.c  (motor_core.h) running Ranks.cs: at 2 ranks exactly the lines of Ranks.out, exit 0,
#           stderr empty; with --throw the whole job ends with status 1 (rank 0 does not hang).
# Every job runs under `timeout`: a hang is a failure.
set -u
build=$1
src=$(cd "$(dirname "$0")/.." && pwd)
page=$src/docs/c-api.md
scale=${MOTOR_TIMEOUT_SCALE:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# The fenced block after the marker line for FILE.
block() { # block FILE
    awk -v want="<!-- c_api_test: $1 -->" '
        $0 == want { armed = 1; next }
        armed && !code && /^```/ { code = 1; next }
        code && /^```/ { exit }
        code { print }' "$page"
}
mkdir -p "$work/app"
for f in ring.c ring.out host.c Ranks.cs Ranks.out; do
    block "$f" >"$work/app/$f"
    [ -s "$work/app/$f" ] || { echo "FAIL: no block marked '<!-- c_api_test: $f -->' in $page"; exit 1; }
done

prefix=$work/prefix
if ! cmake --install "$build" --prefix "$prefix" >"$work/install.txt" 2>&1; then
    echo "FAIL: cmake --install"; cat "$work/install.txt"; exit 1
fi
libdir=$(cd "$prefix" && ls -d lib*/pkgconfig | head -1 | xargs dirname)
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig

# The page covers the whole API and only it: every function the installed headers declare for
# export is named on the page, and every mpc_/motor_core_ name the page gives is in one of them
# (what the library exports is exactly what they declare: layering_test.sh).
headers=$(ls "$prefix"/include/motor/*.h)
for f in $(grep -hE '^[[:space:]]*(MPC_API|MOTOR_CORE_API)[[:space:]]' $headers |
           sed -E 's/\(.*//; s/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*$/\1/'); do
    grep -qw "$f" "$page" ||
        fail "docs/c-api.md does not name $f, which the installed headers export"
done
for n in $(grep -ohE '\b(mpc|motor_core)_[a-z0-9_]+' "$page" | sort -u); do
    grep -qw "$n" $headers || fail "docs/c-api.md names $n, which no installed header declares"
done

cd "$work/app"
for prog in ring host; do
    if ! sh -c "cc -std=c11 -Wall -Wextra -Werror $prog.c \$(pkg-config --cflags --libs motor) -o $prog" \
        >"$work/cc.txt" 2>&1; then
        echo "FAIL: $prog.c from docs/c-api.md does not compile:"; cat "$work/cc.txt"; exit 1
    fi
done
if ! mcs -nologo -r:"$prefix/$libdir/motor/System.MP.dll" Ranks.cs >"$work/mcs.txt" 2>&1; then
    echo "FAIL: Ranks.cs from docs/c-api.md does not compile:"; cat "$work/mcs.txt"; exit 1
fi

run() { # run RANKS COMMAND...: from / (nothing found through the current directory)
    local n=$1
    shift
    (cd / && timeout $((60 * scale)) mpiexec.mpich -n "$n" "$@" </dev/null >"$work/out" 2>"$work/err")
}
clean() { # clean WHAT RC: exit 0, empty stderr
    [ "$2" -eq 0 ] || fail "$1: exit status $2"
    if [ -s "$work/err" ]; then fail "$1: stderr is not empty:"; head -c 1500 "$work/err"; fi
}
same() { # same WHAT EXPECTED: the printed lines are the page's, in any order
    if ! diff <(sort "$2") <(sort "$work/out") >"$work/diff"; then
        fail "$1: the output is not the page's (< docs/c-api.md, > printed):"
        cat "$work/diff"
    fi
}

run 2 "$work/app/ring"; rc=$?
clean "ring, 2 ranks" $rc
same "ring, 2 ranks" "$work/app/ring.out"
for n in 1 3; do
    run $n "$work/app/ring"; rc=$?
    clean "ring, $n rank(s)" $rc
    [ "$(grep -c "^rank .* double(s) from rank" "$work/out")" -eq $n ] || { fail "ring, $n rank(s): output"; cat "$work/out"; }
done

run 2 env MONO_PATH="$prefix/$libdir/motor" "$work/app/host" "$work/app/Ranks.exe"; rc=$?
clean "host, 2 ranks" $rc
same "host, 2 ranks" "$work/app/Ranks.out"

# (the report on stderr is not checked: mpiexec may end the ranks before it forwards the line)
run 2 env MONO_PATH="$prefix/$libdir/motor" "$work/app/host" "$work/app/Ranks.exe" --throw; rc=$?
[ $rc -eq 1 ] || { fail "host --throw: exit status $rc (expected the job to end with 1; 124 is the timeout)"; head -c 1500 "$work/err"; }

[ $failed -eq 0 ] && echo "c_api_test: the examples of docs/c-api.md build through pkg-config motor and print what the page says"
exit $failed

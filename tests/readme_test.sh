#!/usr/bin/env bash
# readme_test.sh BUILD_DIR — the README's first C# example (the Hello program under
# "Using it") is taken from README.md itself, so the README cannot drift: compiled against
# System.MP.dll, run at 1, 2 and 3 ranks under motor and stock mono; each run must exit 0, print
# exactly the lines the example promises, and leave stderr empty (no exception, no UCX warning
# about unmatched messages). The sample output printed in the README must be the 3-rank output.
# Every job runs under `timeout`: a hang is a failure.
set -u
build=$1
src=$(cd "$(dirname "$0")/.." && pwd)
readme=$src/README.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# The first ```csharp block after the "## Using it" heading, and the first ```text block after it.
block() { # block LANGUAGE
    awk -v lang="$1" '
        /^## Using it/ { inside = 1; next }
        inside && !code && !done && $0 == "```" lang { code = 1; next }
        code && /^```/ { code = 0; done = 1; next }
        code { print }' "$readme"
}
block csharp >"$work/Hello.cs"
block text >"$work/sample.txt"
grep -q "class Hello" "$work/Hello.cs" || { echo "FAIL: no Hello example under '## Using it' in $readme"; exit 1; }

if ! mcs -nologo -r:"$build/System.MP.dll" -out:"$work/Hello.exe" "$work/Hello.cs" >"$work/mcs.txt" 2>&1; then
    echo "FAIL: the README example does not compile:"
    cat "$work/mcs.txt"
    exit 1
fi

expected() { # expected RANKS: the lines the example promises, sorted
    local n=$1 r
    {
        [ "$n" -gt 1 ] && echo "rank 1: received 1000 doubles from rank 0, the last is 999"
        for ((r = 0; r < n; r++)); do
            echo "rank $r of $n: received 50 doubles from rank $(((r + n - 1) % n)) into [100, 150), each $(((r + n - 1) % n))"
        done
    } | sort
}

for n in 1 2 3; do
    for host in motor mono; do
        if [ $host = motor ]; then
            cmd=("$build/motor" "$work/Hello.exe")
        else
            cmd=(env MONO_PATH="$build" mono "$work/Hello.exe")   # as the README says
        fi
        timeout $((60 * ${MOTOR_TIMEOUT_SCALE:-1})) mpiexec.mpich -n $n "${cmd[@]}" >"$work/out" 2>"$work/err"
        rc=$?
        what="$host, $n rank(s)"
        [ $rc -eq 0 ] || fail "$what: exit status $rc"
        if ! diff <(expected $n) <(sort "$work/out") >"$work/diff"; then
            fail "$what: output differs from the expected lines (< expected, > printed):"
            cat "$work/diff"
        fi
        if [ -s "$work/err" ]; then
            fail "$what: stderr is not empty:"
            head -c 1500 "$work/err"
        fi
        [ $n -eq 3 ] && [ $host = motor ] && cp "$work/out" "$work/out3"
    done
done

if ! diff <(sort "$work/sample.txt") <(sort "$work/out3") >"$work/diff"; then
    fail "the sample output in README.md is not what the example prints at 3 ranks (< README, > printed):"
    cat "$work/diff"
fi

[ $failed -eq 0 ] && echo "readme_test: the README example runs clean at 1, 2 and 3 ranks under motor and mono"
exit $failed

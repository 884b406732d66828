#!/usr/bin/env bash
# arrays_doc_test.sh BUILD_DIR — the first C# example of docs/arrays.md is taken from the page
# itself, so the page cannot drift: compiled against System.MP.dll as the page says, run at 1, 2
# and 3 ranks under motor and stock mono; each run must exit 0, print on every rank the one
# reduction result the example computes ("0: 0.5": 64 blocks each contribute 0.5 to an Op.Max),
# and leave stderr empty. Every job runs under `timeout`: a hang is a failure.
set -u
build=$1
src=$(cd "$(dirname "$0")/.." && pwd)
page=$src/docs/arrays.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }
export LC_ALL=C LANG=C   # the example prints a double with the culture's separator

# the first ```csharp block of the page
awk '!code && !done && $0 == "```csharp" { code = 1; next }
     code && /^```/ { code = 0; done = 1; next }
     code { print }' "$page" >"$work/App.cs"
grep -q "ObjectArray<int, Block>.Create" "$work/App.cs" || { echo "FAIL: no object-array example first in $page"; exit 1; }

if ! mcs -nologo -warnaserror -r:"$build/System.MP.dll" -out:"$work/App.exe" "$work/App.cs" >"$work/mcs.txt" 2>&1; then
    echo "FAIL: the example of docs/arrays.md does not compile:"
    cat "$work/mcs.txt"
    exit 1
fi

for n in 1 2 3; do
    for host in motor mono; do
        if [ $host = motor ]; then
            cmd=("$build/motor" "$work/App.exe")
        else
            cmd=(env MONO_PATH="$build" mono "$work/App.exe")
        fi
        timeout $((60 * ${MOTOR_TIMEOUT_SCALE:-1})) mpiexec.mpich -n $n "${cmd[@]}" >"$work/out" 2>"$work/err"
        rc=$?
        what="$host, $n rank(s)"
        [ $rc -eq 0 ] || fail "$what: exit status $rc"
        if ! diff <(for ((r = 0; r < n; r++)); do echo "0: 0.5"; done) "$work/out" >"$work/diff"; then
            fail "$what: output differs from one '0: 0.5' per rank (< expected, > printed):"
            cat "$work/diff"
        fi
        if [ -s "$work/err" ]; then
            fail "$what: stderr is not empty:"
            head -c 1500 "$work/err"
        fi
    done
done

[ $failed -eq 0 ] && echo "arrays_doc_test: the docs/arrays.md example runs clean at 1, 2 and 3 ranks under motor and mono"
exit $failed

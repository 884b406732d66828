#!/usr/bin/env bash
# file_exit_close.sh BUILD_DIR [RANKS] [mono] — MPFiles a program never disposes (two, one with a view
# and a request left) are closed when MPI ends: a warning per file on stderr, the job exits
# normally, and a second job finds every rank's data in the file. With mono: under stock mono
# (System.MP's exit handler ends MPI) instead of the motor host.
set -u
build=$1
np=${2:-3}
run=("$build/motor")
[ "${3:-}" = mono ] && run=(-genv MONO_PATH "$build" /usr/bin/mono)
work=$(mktemp -d "${TMPDIR:-/tmp}/motor-exitclose.XXXXXX")
trap 'rm -rf "$work"' EXIT
t=$((120 * ${MOTOR_TIMEOUT_SCALE:-1}))
failed=0
if ! timeout $t mpiexec.mpich -n "$np" "${run[@]}" "$build/tests/FileTest.exe" leak "$work" \
    > "$work/out.txt" 2> "$work/err.txt"; then
  failed=1; echo "FAIL: the job with undisposed files did not end normally"; cat "$work/err.txt"
fi
warnings=$(grep -c 'MPFile ".*leaked.bin" was not disposed' "$work/err.txt")
if [ "$warnings" -ne $((2 * np)) ]; then
  failed=1; echo "FAIL: $warnings warnings, not $((2 * np)) (two files on $np ranks)"; cat "$work/err.txt"
fi
if ! timeout $t mpiexec.mpich -n "$np" "${run[@]}" "$build/tests/FileTest.exe" leaked "$work"; then
  failed=1; echo "FAIL: the data of the files closed at exit"
fi
[ "$failed" -eq 0 ] && echo "file_exit_close: passed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# busy_end_test.sh BUILD_DIR — the end of MPI on a busy machine: jobs of 3 ranks whose ranks all
# finish must end with status 0 and no BAD TERMINATION beside a CPU hog (tests/busy.sh), under
# motor and stock mono: as they are (MPI_Finalize bounded by the default MOTOR_FINALIZE_TIMEOUT),
# and with a bound so short that it passes inside MPI_Finalize on every rank (the watch must tell
# Hydra what MPI_Finalize would before it ends the process; it once ended the process without a
# word, and Hydra killed the job: status 9, BAD TERMINATION).
set -u
build=$1
rounds=${2:-4}
here=$(cd "$(dirname "$0")" && pwd)
probe=$build/tests/HostProbe.exe
scale=${MOTOR_TIMEOUT_SCALE:-1}
out=$(mktemp)
source "$here/busy.sh"
trap 'busy_stop; rm -f "$out"' EXIT
busy_start $((240 * scale))

passed=0 failed=0
job() { # job LABEL EXPECT_TOLD PASSED_PATTERN COMMAND...: the pattern on stdout 3 times or once
    local label=$1 told=$2 pattern=$3 rc
    shift 3
    timeout -k 5 $((60 * scale)) "$@" >"$out" 2>&1
    rc=$?
    local bad=0
    [ $rc -eq 0 ] || bad=1
    grep -q -- "$pattern" "$out" || bad=1
    grep -q 'BAD TERMINATION' "$out" && bad=1
    # the bound passed: every rank that said so had the process manager told
    grep 'MPI_Finalize still running' "$out" | grep -vq 'process manager was told' && bad=1
    if [ "$told" = yes ]; then
        [ "$(grep -c 'MPI_Finalize still running' "$out")" -ge 1 ] || bad=1
    else
        grep -q 'MPI_Finalize still running' "$out" && bad=1
    fi
    if [ $bad -eq 0 ]; then passed=$((passed + 1)); else
        failed=$((failed + 1))
        echo "FAIL: $label: status $rc"
        sed 's/^/  /' "$out" | head -20
    fi
}

export MONO_PATH=$build
ring='ring ok on rank 2'
# the suite whose end failed on a busy machine (issue 32)
suite=$build/tests/SdtoNonBlockingTest.exe
job "SdtoNonBlockingTest, stock mono" no ' 0 failed' mpiexec.mpich -n 3 mono "$suite"
job "SdtoNonBlockingTest, motor" no ' 0 failed' mpiexec.mpich -n 3 "$build/motor" "$suite"
for ((i = 0; i < rounds; i++)); do
    job "motor, default bound" no "$ring" mpiexec.mpich -n 3 "$build/motor" "$probe" ring
    job "stock mono, default bound" no "$ring" mpiexec.mpich -n 3 mono "$probe" ring
    job "motor, bound passed" yes "$ring" mpiexec.mpich -n 3 -genv MOTOR_FINALIZE_TIMEOUT 0.001 "$build/motor" "$probe" ring
    job "stock mono, bound passed" yes "$ring" mpiexec.mpich -n 3 -genv MOTOR_FINALIZE_TIMEOUT 0.001 mono "$probe" ring
done
echo "busy_end_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# wait_policy_test.sh BUILD_DIR — the wait policy on an oversubscribed host, made so on any
# machine: `taskset -c 0` gives every rank the same single core, so 3 ranks outnumber it. Auto
# must choose yield (MP.WaitPolicy, with the ranks and cores the core measured), MOTOR_WAIT=spin
# must override it, a bad value is named on stderr and auto used; under motor and stock mono.
# WaitPolicyTest.exe checks what the core measured against /proc and runs every kind of wait.
# Behaviour only, never timings. Every job runs under `timeout`: a hang is a failure.
set -u
build=$1
motor=$build/motor
program=$build/tests/WaitPolicyTest.exe
. "$(dirname "$0")/check_kit.sh"

if ! command -v taskset >/dev/null; then
    echo "wait_policy_test: taskset (util-linux) is missing"
    exit 77
fi
passed_line() { [ $rc -eq 0 ] && grep -q "WaitPolicyTest $1 (3 rank(s)): [0-9]* passed, 0 failed" "$out"; }

one_core="taskset -c 0 mpiexec.mpich -n 3"
run 120 $one_core "$motor" "$program" auto oversubscribed
check "motor, 3 ranks on one core: auto yields" passed_line "auto oversubscribed"
run 120 $one_core -genv MOTOR_WAIT spin "$motor" "$program" spin oversubscribed
check "motor, 3 ranks on one core: MOTOR_WAIT=spin spins" passed_line "spin oversubscribed"
run 120 $one_core -genv MOTOR_WAIT auto "$motor" "$program" auto oversubscribed
check "motor, MOTOR_WAIT=auto is the default" passed_line "auto oversubscribed"
run 120 $one_core -genv MOTOR_WAIT sometimes "$motor" "$program" auto oversubscribed
check "a bad MOTOR_WAIT: auto" passed_line "auto oversubscribed"
check "a bad MOTOR_WAIT is named on stderr" grep -q "MOTOR_WAIT='sometimes' is not auto, spin or yield; using auto" "$err"
run 120 $one_core -genv MONO_PATH "$build" mono "$program" auto oversubscribed
check "stock mono, 3 ranks on one core: auto yields" passed_line "auto oversubscribed"
run 120 $one_core -genv MONO_PATH "$build" -genv MOTOR_WAIT spin mono "$program" spin oversubscribed
check "stock mono: MOTOR_WAIT=spin spins" passed_line "spin oversubscribed"

echo "wait_policy_test: $passed passed, $failed failed"
[ $failed -eq 0 ]

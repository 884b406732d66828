#!/usr/bin/env bash
# hang_report_test.sh BUILD_DIR motor|mono|hosts — the hang report (MOTOR_HANG_REPORT): jobs of 3
# ranks that hang on purpose (tests/csharp/HangProbe.cs) must say, within the bound, which call
# each rank is stuck in and which ranks have not entered a collective, then end with status 70 at
# MOTOR_HANG_EXIT; a healthy job with a short bound prints nothing. Under motor, the same program
# under stock mono, or under motor across 3 hosts (scripts/hosts.sh; exits 77, skipped, where
# hosts cannot be made): the ranks ask each other over MPI, not shared memory.
set -u
build=$1
runner=${2:-motor}
probe=$build/tests/HangProbe.exe
scale=${MOTOR_TIMEOUT_SCALE:-1}
hosts_sh=$(dirname "$0")/../scripts/hosts.sh
. "$(dirname "$0")/check_kit.sh"

export MONO_PATH=$build
launch=(mpiexec.mpich -n 3)
host=("$build/motor")
case $runner in
    mono) host=(mono) ;;
    hosts)
        bash "$hosts_sh" check || exit 77
        trap 'bash "$hosts_sh" down; rm -f "$out" "$err"' EXIT
        bash "$hosts_sh" up 3 || { echo "FAIL: could not make 3 hosts"; exit 1; }
        launch=(bash "$hosts_sh" run --ppn 1 -n 3 --) ;;
esac
# the bounds are generous timeouts, never speed claims: a report must come before the job ends
hang=("${launch[@]}" -genv MOTOR_HANG_REPORT $((2 * scale)) -genv MOTOR_HANG_EXIT $((6 * scale))
      "${host[@]}" "$probe")
has() { grep -q -- "$1" "$err"; }
lacks() { ! grep -q -- "$1" "$err"; }
hang_ended() { [ "$rc" -eq 70 ]; }   # MOTOR_HANG_EXIT's status, not the outer timeout's 124

run 60 "${hang[@]}" skip-barrier
check "$runner: skipped Barrier: the job ends with status 70" hang_ended
check "$runner: skipped Barrier: rank 0 names rank 2 as not entered" \
    has "motor: hang: rank 0 blocked [0-9]* s in Barrier on World (3 ranks); not entered by rank 2 (in Recv(source 0, tag 7) on World, [0-9]* s)"
check "$runner: skipped Barrier: rank 1 too" has "motor: hang: rank 1 blocked [0-9]* s in Barrier on World (3 ranks); not entered by rank 2 ("
check "$runner: skipped Barrier: rank 2 says where it is, and what its source does" \
    has "motor: hang: rank 2 blocked [0-9]* s in Recv(source 0, tag 7) on World (3 ranks); rank 0 is in Barrier on World"
check "$runner: skipped Barrier: rank 0 and 1 name only rank 2" lacks "not entered by rank [01]"
# (the line that says the job ends is not checked: the abort may end Hydra's forwarding first)

if [ "$runner" != mono ]; then
    run 60 "${hang[@]}" recv
    check "$runner: message never sent: the job ends with status 70" hang_ended
    check "$runner: message never sent: the receive, its source and tag" \
        has "motor: hang: rank 0 blocked [0-9]* s in Recv(source 1, tag 7) on World (3 ranks); rank 1 is in Barrier on World"
    check "$runner: message never sent: the Barrier's ranks name rank 0" \
        has "motor: hang: rank [12] blocked [0-9]* s in Barrier on World (3 ranks); not entered by rank 0 (in Recv(source 1, tag 7)"
else
    run 60 "${hang[@]}" orecv
    check "mono: graph never sent: the job ends with status 70" hang_ended
    check "mono: graph never sent: ORecv is a receive, with its source and tag" \
        has "motor: hang: rank 0 blocked [0-9]* s in Recv(source 1, tag 7) on World (3 ranks); rank 1 is in Wait, "
    check "mono: graph never sent: a request's wait" has "motor: hang: rank 1 blocked [0-9]* s in Wait$"
    check "mono: graph never sent: the Barrier's rank names both" \
        has "motor: hang: rank 2 blocked [0-9]* s in Barrier on World (3 ranks); not entered by rank 0 (in Recv(source 1, tag 7) on World, [0-9]* s), rank 1 (in Wait, "
fi

if [ "$runner" = mono ]; then
    run 60 "${hang[@]}" mismatch
    check "mono: Bcast against Barrier: the job ends with status 70" hang_ended
    check "mono: Bcast against Barrier: the calls that do not match" \
        has "motor: hang: rank [01] blocked [0-9]* s in Barrier on World (3 ranks); every rank is at this collective, but not in the same call: rank 2 (in Bcast on World, [0-9]* s)"
fi

if [ "$runner" = motor ]; then
    run 60 "${hang[@]}" skip-barrier-exit
    check "motor: a rank ends early: the job ends with status 70" hang_ended
    check "motor: a rank ends early: it is named as finishing" \
        has "motor: hang: rank [01] blocked [0-9]* s in Barrier on World (3 ranks); not entered by rank 2 (finishing: at MPI_Finalize)"
    check "motor: a rank ends early: it names the ranks that have not finished" \
        has "motor: hang: rank 2 blocked [0-9]* s in MPI_Finalize .*; not finished: rank 0 (in Barrier on World, [0-9]* s), rank 1 (in Barrier"
fi

if [ "$runner" != mono ]; then
    run 60 "${hang[@]}" split
    check "$runner: a communicator of Split: the job ends with status 70" hang_ended
    check "$runner: a communicator of Split: named, its ranks translated" \
        has "motor: hang: rank 0 blocked [0-9]* s in Allreduce on communicator \"reversed\" (3 ranks, rank 2 here); not entered by rank 0 = World rank 2 (in Recv(source 0, tag 7) on World"
fi

# a healthy job: many short calls of every kind for longer than the bound (a slot left marked
# blocked would be reported), the bound above any start-up skew of a busy machine
run 60 "${launch[@]}" -genv MOTOR_HANG_REPORT $((5 * scale)) "${host[@]}" "$probe" healthy \
    $((7 * scale))
check "$runner: healthy job: status 0" [ "$rc" -eq 0 ]
check "$runner: healthy job: every rank done" [ "$(grep -c 'healthy: rank . done' "$out")" -eq 3 ]
check "$runner: healthy job: no report" lacks "motor: hang"

echo "hang_report_test ($runner): $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Hydra's launcher for the hosts of hosts.sh, in place of ssh: "hosts-launch.sh [-x] ADDRESS
# COMMAND..." runs COMMAND (joined and given to a shell, as ssh does) on the host with that
# address: in its network, IPC, mount and UTS namespaces. Like ssh, it stays on this side and
# says so when the host's side ends by a signal (its processes were killed).
set -uo pipefail
STATE=${MOTOR_HOSTS_STATE:-/run/motor-hosts}
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done   # ssh's options (-x, -n)
address=${1:?hosts-launch.sh: no host}; shift
host=h${address##*.}
[ -e "/run/netns/motor-$host" ] || { echo "hosts-launch.sh: no host at $address" >&2; exit 255; }
nsenter --net="/run/netns/motor-$host" --ipc="$STATE/$host.ipc" --mount="$STATE/$host.mnt" \
    --uts="$STATE/$host.uts" -- sh -c "$*" &
child=$!
stopping=0
trap 'stopping=1; kill -TERM $child 2>/dev/null' TERM INT HUP
wait $child
status=$?
# a wait cut short by the trap returns the signal's status, not the child's: wait again. The
# child may have ended and been reaped meanwhile (kill -0 then fails): bash still gives its
# status to a wait for its pid (127 only when it has none)
if [ $stopping -eq 1 ]; then
    wait $child
    again=$?
    [ $again -ne 127 ] && status=$again
    while kill -0 $child 2>/dev/null; do wait $child; status=$?; done
fi
# SIGKILL comes from nothing on this side (mpiexec stopping the job sends TERM): the host's
# processes were killed even when mpiexec's TERM came in while this waited
# (also in $STATE/launcher.log: mpiexec, which reads our stderr, may have ended the job and exited
# on the proxy's lost connection before this line reaches it)
if [ $status -eq 137 ] || { [ $stopping -eq 0 ] && [ $status -gt 128 ] && [ $status -lt 160 ]; }; then
    line="hosts-launch.sh: the connection to host $host ($address) ended: its processes were"
    line="$line killed (signal $((status - 128)))"
    echo "$line" >&2
    echo "$line" >>"$STATE/launcher.log" 2>/dev/null
fi
exit $status

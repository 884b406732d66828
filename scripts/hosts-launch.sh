#!/usr/bin/env bash
# Hydra's launcher for the hosts of hosts.sh, in place of ssh: "hosts-launch.sh [-x] ADDRESS
# COMMAND..." runs COMMAND (joined and given to a shell, as ssh does) on the host with that
# address: in its network, IPC, mount and UTS namespaces.
set -euo pipefail
STATE=${MOTOR_HOSTS_STATE:-/run/motor-hosts}
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done   # ssh's options (-x, -n)
address=${1:?hosts-launch.sh: no host}; shift
host=h${address##*.}
[ -e "/run/netns/motor-$host" ] || { echo "hosts-launch.sh: no host at $address" >&2; exit 255; }
exec nsenter --net="/run/netns/motor-$host" --ipc="$STATE/$host.ipc" --mount="$STATE/$host.mnt" \
    --uts="$STATE/$host.uts" -- sh -c "$*"

#!/usr/bin/env bash
# Separate hosts on one machine, for jobs across hosts: each host is a Linux network namespace
# (its own TCP/IP stack and address on a private bridge), with its own IPC namespace, /dev/shm
# and host name, so nothing but the network joins two hosts. mpiexec.mpich (Hydra) runs in a
# launcher namespace of its own on the same bridge and starts its proxies through launch-exec,
# which enters the chosen host (as ssh would log into it). Needs root.
#
#   hosts.sh up N [--delay US] [--loss PCT]   make hosts h1..hN (addresses 10.231.77.1..N)
#   hosts.sh run [--ppn K] [--hosts N] [-n P] [--timeout S] -- PROGRAM ARGS...
#                                             a job across the hosts (K ranks a host, block order)
#   hosts.sh bytes                            bytes each host sent and received on its link
#   hosts.sh pids hK                          the processes running on host K
#   hosts.sh cut hK | heal hK                 take host K's link down (a partition) or up again
#   hosts.sh kill hK                          kill every process on host K (SIGKILL)
#   hosts.sh down                             remove everything (idempotent; after failures too)
#   hosts.sh check                            exits 0 when this machine can make hosts, else
#                                             prints why and exits 77
#
# Addresses exist only inside these namespaces; the bridge has none, so nothing is routed to or
# from the rest of the machine. This kernel has no netem: a delay or loss is made by netdelay
# (tests/c/netdelay.c, built as build/tests/netdelay when libnetfilter-queue-dev is installed),
# given as MOTOR_NETDELAY, which holds the packets iptables queues to it (NFQUEUE).
set -euo pipefail

STATE=/run/motor-hosts
BRIDGE=motorbr0
NET=10.231.77
LAUNCHER_NS=motor-l
LAUNCHER_ADDR=$NET.254
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() { echo "hosts.sh: $*" >&2; exit 2; }
host_ns() { echo "motor-$1"; }
host_index() { [[ $1 =~ ^h([0-9]+)$ ]] || die "'$1' is not a host name (h1, h2, ...)"; echo "${BASH_REMATCH[1]}"; }
host_count() { cat "$STATE/count" 2>/dev/null || echo 0; }

# Why this machine cannot make hosts, or nothing.
why_not() {
    [ "$(id -u)" -eq 0 ] || { echo "not root (network namespaces need CAP_NET_ADMIN)"; return; }
    command -v ip >/dev/null || { echo "iproute2's ip is missing"; return; }
    command -v nsenter >/dev/null && command -v unshare >/dev/null || { echo "util-linux's nsenter/unshare are missing"; return; }
    local probe=motor-probe-$$
    if ! ip netns add "$probe" 2>/dev/null; then echo "cannot create a network namespace"; return; fi
    ip netns del "$probe"
    if ! ip link add "mpb$$" type bridge 2>/dev/null; then echo "cannot create a bridge device"; return; fi
    ip link del "mpb$$"
}

cmd_check() {
    local why; why=$(why_not)
    if [ -n "$why" ]; then echo "hosts.sh: cannot make hosts here: $why"; exit 77; fi
}

# A persistent namespace handle is a bind mount on a file; the directory holding them must be a
# private mount, or the handles would propagate (and unshare refuses).
make_state_dir() {
    mkdir -p "$STATE"
    if ! mountpoint -q "$STATE"; then
        mount --bind "$STATE" "$STATE"
        mount --make-private "$STATE"
    fi
}

cmd_up() {
    local n=${1:-}; shift || true
    [[ $n =~ ^[1-9][0-9]?$ ]] || die "up: give the number of hosts (1-99)"
    local delay=0 loss=0
    while [ $# -gt 0 ]; do
        case $1 in
            --delay) delay=$2; shift 2 ;;
            --loss) loss=$2; shift 2 ;;
            *) die "up: unknown option '$1'" ;;
        esac
    done
    cmd_check >/dev/null || { cmd_check; }
    cmd_down
    make_state_dir
    ip link add "$BRIDGE" type bridge
    ip link set "$BRIDGE" up
    # the launcher: where mpiexec runs, reached by every host's proxy
    add_node "$LAUNCHER_NS" "$LAUNCHER_ADDR" ml
    local i
    for ((i = 1; i <= n; i++)); do
        local ns; ns=$(host_ns "h$i")
        add_node "$ns" "$NET.$i" "mh$i"
        for what in ipc mnt uts; do touch "$STATE/h$i.$what"; done
        # its own System V IPC, its own /dev/shm, its own host name: MPICH and UCX must not
        # find a shared-memory path to another host
        unshare --ipc="$STATE/h$i.ipc" --mount="$STATE/h$i.mnt" --uts="$STATE/h$i.uts" \
            --propagation private sh -c "mount -t tmpfs -o mode=1777 tmpfs /dev/shm && hostname h$i"
        if [ "$delay" != 0 ] || [ "$loss" != 0 ]; then
            impair "h$i" "$delay" "$loss"
        fi
    done
    echo "$n" >"$STATE/count"
    echo "$delay $loss" >"$STATE/impairment"
}

# A namespace with a veth pair: eth0 inside (address $2), $3 on the bridge.
add_node() {
    local ns=$1 addr=$2 dev=$3
    ip netns add "$ns"
    ip link add "$dev" type veth peer name "$dev-in"
    ip link set "$dev-in" netns "$ns"
    ip -n "$ns" link set "$dev-in" name eth0
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    ip link set "$dev" master "$BRIDGE"
    ip link set "$dev" up
}

# A delay (µs, each packet a host sends) and a loss (percent) on host $1's link, by netdelay in
# the host's namespace: iptables queues every outgoing packet to it (NFQUEUE).
impair() {
    local h=$1 delay=$2 loss=$3 ns; ns=$(host_ns "$1")
    local tool=${MOTOR_NETDELAY:-}
    [ -n "$tool" ] && [ -x "$tool" ] || die "a delay or loss needs netdelay: set MOTOR_NETDELAY to build/tests/netdelay"
    command -v iptables >/dev/null || die "a delay or loss needs iptables"
    ip netns exec "$ns" iptables -A OUTPUT -o eth0 -j NFQUEUE --queue-num 0
    ip netns exec "$ns" "$tool" --queue 0 --delay-us "$delay" --loss-percent "$loss" \
        --pidfile "$STATE/$h.netdelay" &
    local tries=0
    until [ -s "$STATE/$h.netdelay" ]; do
        tries=$((tries + 1)); [ $tries -lt 500 ] || die "netdelay did not start on $h"
        sleep 0.01
    done
}

cmd_down() {
    local ns
    for f in "$STATE"/*.netdelay; do
        [ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
    done
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^motor-(l|h[0-9]+)$' || true); do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
        ip netns del "$ns" 2>/dev/null || true
    done
    if [ -d "$STATE" ]; then
        for f in "$STATE"/*.ipc "$STATE"/*.mnt "$STATE"/*.uts; do
            [ -e "$f" ] || continue
            # the processes of a host's mount namespace (they need not be in its network one)
            umount "$f" 2>/dev/null || true
        done
        rm -f "$STATE"/*
        umount "$STATE" 2>/dev/null || true
        rmdir "$STATE" 2>/dev/null || true
    fi
    # A namespace outlives its name while sockets still hold it (TCP retransmitting to a host that
    # was cut off, for minutes): its veth would too, and block the next "up". Deleting our end of
    # each pair deletes both.
    for dev in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^m(l|h[0-9]+)$' || true); do
        ip link del "$dev" 2>/dev/null || true
    done
    ip link del "$BRIDGE" 2>/dev/null || true
}

# Prints "HOST TX RX" for every host: the bytes its link carried (from the bridge side, so a
# host cannot hide traffic).
cmd_bytes() {
    local n i; n=$(host_count)
    for ((i = 1; i <= n; i++)); do
        echo "h$i $(cat /sys/class/net/mh$i/statistics/rx_bytes) $(cat /sys/class/net/mh$i/statistics/tx_bytes)"
    done
}

cmd_pids() {
    local ns; ns=$(host_ns "$1"); host_index "$1" >/dev/null
    ip netns pids "$ns" 2>/dev/null || true
}

cmd_cut() { host_index "$1" >/dev/null; ip link set "m$1" down; }
cmd_heal() { host_index "$1" >/dev/null; ip link set "m$1" up; }
cmd_kill() { cmd_pids "$1" | xargs -r kill -9; }

# The job: mpiexec.mpich in the launcher namespace, its proxies started on the hosts by
# launch-exec (Hydra's ssh launcher with our program in place of ssh). Prints mpiexec's output
# and exits with its status.
cmd_run() {
    local n; n=$(host_count)
    [ "$n" -gt 0 ] || die "run: no hosts (hosts.sh up N first)"
    local ppn=1 used=$n np="" timeout=0
    while [ $# -gt 0 ]; do
        case $1 in
            --ppn) ppn=$2; shift 2 ;;
            --hosts) used=$2; shift 2 ;;
            -n) np=$2; shift 2 ;;
            --timeout) timeout=$2; shift 2 ;;
            --) shift; break ;;
            *) die "run: unknown option '$1'" ;;
        esac
    done
    [ $# -gt 0 ] || die "run: no program"
    [ "$used" -le "$n" ] || die "run: $used hosts asked for, $n made"
    np=${np:-$((ppn * used))}
    local list="" i
    for ((i = 1; i <= used; i++)); do list+="${list:+,}$NET.$i:$ppn"; done
    # TCP between hosts through UCX (eth0 only), shared memory within a host
    local env=(UCX_NET_DEVICES=eth0 MOTOR_HOSTS_STATE="$STATE")
    local job=(env "${env[@]}" mpiexec.mpich -launcher ssh -launcher-exec "$HERE/hosts-launch.sh"
               -iface eth0 -hosts "$list" -n "$np" "$@")
    if [ "$timeout" != 0 ]; then job=(timeout -k 5 "$timeout" "${job[@]}"); fi
    # nsenter, not "ip netns exec": that makes a mount namespace of its own, and a mount
    # namespace does not carry the handles of the hosts' mount namespaces into it
    nsenter --net="/run/netns/$LAUNCHER_NS" -- "${job[@]}"
}

sub=${1:-}; shift || true
case $sub in
    up) cmd_up "$@" ;;
    down) cmd_down ;;
    run) cmd_run "$@" ;;
    bytes) cmd_bytes ;;
    pids) [ $# -eq 1 ] || die "pids hK"; cmd_pids "$1" ;;
    cut) [ $# -eq 1 ] || die "cut hK"; cmd_cut "$1" ;;
    heal) [ $# -eq 1 ] || die "heal hK"; cmd_heal "$1" ;;
    kill) [ $# -eq 1 ] || die "kill hK"; cmd_kill "$1" ;;
    check) cmd_check ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; [ -z "$sub" ] || exit 2 ;;
esac

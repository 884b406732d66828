#!/usr/bin/env bash
# multihost_test.sh BUILD_DIR [--busy] HOSTS RANKS PROGRAM [ARGS...] — one job across HOSTS
# separate hosts (network namespaces made by scripts/hosts.sh; ranks in block order, as few hosts a
# rank as fit), under motor; --busy: beside a CPU hog of more busy processes than cores
# (tests/busy.sh), which must not make a job of live processes end as if a host were lost.
# Passes when the job ends by itself with status 0 and every host's link carried the job's
# traffic (so no shared memory joined two hosts). Exits 77 (skipped, with the reason) where
# hosts cannot be made: not root, or no network namespaces.
set -u
build=$1
shift
busy=0
[ "${1:-}" = --busy ] && { busy=1; shift; }
hosts=$1 ranks=$2 program=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/busy.sh"
hosts_sh=$here/../scripts/hosts.sh
scale=${MOTOR_TIMEOUT_SCALE:-1}

bash "$hosts_sh" check || exit 77
trap 'busy_stop; bash "$hosts_sh" down' EXIT
bash "$hosts_sh" up "$hosts" || { echo "FAIL: could not make $hosts hosts"; exit 1; }
declare -A before
while read -r host rx tx; do before[$host]=$((rx + tx)); done < <(bash "$hosts_sh" bytes)

ppn=$(((ranks + hosts - 1) / hosts))
[ $busy -eq 1 ] && busy_start $((110 * scale))
start=$(date +%s%N)
bash "$hosts_sh" run --ppn "$ppn" -n "$ranks" --timeout $((100 * scale)) -- \
    "$build/motor" "$build/$program" "$@"
rc=$?
busy_stop
millis=$((($(date +%s%N) - start) / 1000000))
echo "job across $hosts hosts, $ranks ranks: status $rc in $millis ms"
[ "$rc" -eq 0 ] || { echo "FAIL: the job ended with status $rc (124: it did not end within the timeout)"; exit 1; }

# Each host that ran a rank must have sent and received the job's messages over its link (MPI's
# start-up alone moves a few KiB; every suite here exchanges far more).
failed=0
used=$(((ranks + ppn - 1) / ppn))
while read -r host rx tx; do
    index=${host#h}
    [ "$index" -le "$used" ] || continue
    moved=$((rx + tx - before[$host]))
    echo "$host: $moved bytes over its link"
    if [ "$moved" -lt 65536 ]; then
        echo "FAIL: $host's link carried only $moved bytes: the ranks did not talk over the network"
        failed=1
    fi
done < <(bash "$hosts_sh" bytes)
exit $failed

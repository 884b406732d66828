#!/usr/bin/env bash
# bench_driver.sh BUILD_DIR — the one benchmark command (bench/netgauge.py, behind bench/run.sh)
# runs every pattern over every available transport in a tiny configuration and writes its
# table, CSV and plot: the CSV must hold a row per transport and size (LogGP: its parameters per
# transport). Timings are never checked.
set -u
b=$1
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=0
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }
registry=$(bash "$src/tests/bench_transports.sh" "$b") || { echo "FAIL: cannot list the transports"; exit 1; }
transports=$(awk '{ print $1 }' <<<"$registry" | tr '\n' ' ')
blocking_only=$(awk '$2 == "blocking" { print $1 }' <<<"$registry" | tr '\n' ' ')
for pattern in pingpong pingping window 1:n n:1 loggp halo; do
    log=$(cd "$src" && timeout $((300 * ${MOTOR_TIMEOUT_SCALE:-1})) /usr/bin/python3 bench/netgauge.py "$pattern" --build "$b" --min 8 --max 16 \
          --reps 1 --warmup 0 --rounds 1 --max-iterations 5 --out "$out" 2>&1)
    [ $? -eq 0 ] || { fail "$pattern: the driver failed"; echo "$log" | tail -5; continue; }
    grep -q "xR\|LogGP parameters" <<<"$log" || fail "$pattern: no table printed"
    case "$pattern" in 1:n) stem=onetomany ;; n:1) stem=manytoone ;; *) stem=$pattern ;; esac
    for t in $transports; do
        if [[ " $blocking_only " == *" $t "* ]]; then
            case "$pattern" in
                pingping|window|1:n|n:1) grep -q "$t.*skipped" <<<"$log" || fail "$pattern: $t not said to be skipped"
                                continue ;;
            esac
        fi
        if [ "$pattern" = loggp ]; then
            grep -q "^$t,[0-9.-]*,[0-9.-]*,[0-9.-]*,[0-9.-]*,[0-9.-]*$" "$out/loggp_params.csv" || fail "loggp: no parameters for $t"
            for s in 8 16; do grep -q "^$t,$s," "$out/loggp.csv" || fail "loggp: no row for $t at $s bytes"; done
        else
            for s in 8 16; do grep -q "^$t,$s," "$out/$stem.csv" || fail "$pattern: no CSV row for $t at $s bytes"; done
        fi
    done
    [ -s "$out/$stem.png" ] || fail "$pattern: no plot"
    if [ "$pattern" = halo ]; then   # the first Sendrecv after the sweep: a table of its own
        for t in $transports; do grep -q "^$t,8," "$out/halo_first.csv" || fail "halo: no first-call row for $t"; done
    fi
done
echo "bench_driver: $failed failure(s) over transports: $transports"
[ "$failed" -eq 0 ]

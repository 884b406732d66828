# busy.sh — sourced by tests: a CPU hog of more busy processes than cores (2 a core, plus 2),
# bounded in time and always ended with the test (an EXIT trap calls busy_stop).
busy_pids=()
busy_start() { # busy_start SECONDS: the hog lives at most SECONDS
    local n=$(($(nproc) * 2 + 2)) i
    for ((i = 0; i < n; i++)); do
        timeout "$1" bash -c 'while :; do :; done' &
        busy_pids+=($!)
    done
    echo "busy: $n busy processes on $(nproc) cores for at most $1 s"
}
busy_stop() {
    [ ${#busy_pids[@]} -eq 0 ] && return 0
    kill "${busy_pids[@]}" 2>/dev/null
    wait "${busy_pids[@]}" 2>/dev/null
    busy_pids=()
}

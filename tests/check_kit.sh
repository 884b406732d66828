# check_kit.sh — sourced by the test scripts that run jobs and check what they printed: each job's
# stdout and stderr go to two temporary files ($out, $err), `run` runs it under `timeout` (scaled
# by MOTOR_TIMEOUT_SCALE: a hang is a failure) and sets $rc, and `check` counts the result in
# $passed / $failed, printing a failure with the start of what the job printed.
passed=0
failed=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

check() { # check DESCRIPTION CONDITION...
    local what=$1
    shift
    if "$@"; then passed=$((passed + 1)); else
        failed=$((failed + 1))
        echo "FAIL: $what"
        echo "  stdout: $(head -c 800 "$out")"
        echo "  stderr: $(head -c 800 "$err")"
    fi
}
run() { # run SECONDS COMMAND... ; sets rc
    timeout $(($1 * ${MOTOR_TIMEOUT_SCALE:-1})) "${@:2}" >"$out" 2>"$err"
    rc=$?
}

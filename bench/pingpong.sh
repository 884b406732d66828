#!/usr/bin/env bash
# One command for the ping-pong benchmark: builds, then runs bench/pingpong.py with your flags
# (--min, --max, --reps, --rounds, --transports, --out; see --help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >&2
exec /usr/bin/python3 bench/pingpong.py "$@"

#!/usr/bin/env bash
# One command for the benchmarks: builds, then runs a pattern's driver with your flags.
#   bash bench/run.sh pingpong [--min N --max N --reps N --rounds N --transports a,b --out DIR]
#   bash bench/run.sh window   [same flags]
#   bash bench/run.sh collectives [--ranks N and the same flags]
#   bash bench/run.sh sdto     [--min N --max N --objects N --reps N --rounds N]
#   bash bench/run.sh swm      [--ranks N --sizes 64,128,256,512 --steps N --runs N]
set -euo pipefail
cd "$(dirname "$0")/.."
pattern=${1:?usage: bench/run.sh pingpong|window|collectives|sdto|swm [flags]}
shift
case "$pattern" in
  pingpong|window|collectives|sdto|swm) ;;
  *) echo "bench/run.sh: unknown pattern '$pattern' (pingpong, window, collectives, sdto, swm)" >&2; exit 2 ;;
esac
bash scripts/build.sh >&2
exec /usr/bin/python3 "bench/$pattern.py" "$@"

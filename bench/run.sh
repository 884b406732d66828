#!/usr/bin/env bash
# One command for the benchmarks: builds, then runs a pattern over the chosen transports.
#   bash bench/run.sh pingpong|pingping|window|onetomany|1:n|manytoone|n:1|loggp|halo
#        [--transports native-c,native-c-nb,system-mp,pinvoke,pinvoke-fixed,sdto,mpi4py] [--min N --max N]
#        [--reps N --warmup N --rounds N --ranks N --max-iterations N --out DIR]
#   bash bench/run.sh collectives [--ranks N --min N --max N --reps N --rounds N]
#   bash bench/run.sh sdto     [--min N --max N --objects N --reps N --rounds N --loop-warmup N --loop-iterations N]
#   bash bench/run.sh flooding [KEYS [REPS]]   (a HashSet/Dictionary of colliding keys, one rank)
#   bash bench/run.sh swm      [--ranks N --sizes 64,128,256,512 --steps N --runs N]
#   bash bench/run.sh arrays   [--sizes 8,1024,65536 --ranks 2,3,4,5 --parts pingpong,stream,forward,collectives,migrate
#                               --reps N --rounds N --target-ms MS]
#   bash bench/run.sh regions  [--ops column,block3d,persistent,neighbor --ranks N --min N --max N --reps N --rounds N]
#   bash bench/run.sh io       [--ops write,read --ranks N --min N --max N --reps N --rounds N --dir DIR]
#   bash bench/run.sh rma      [--ops put-lock,put-flush,get-flush,put-fence,fetch-op --ranks N --min N --max N
#                               --reps N --rounds N]
#   bash bench/run.sh builds   --builds DIR[=LABEL],... [--pattern pingpong --min N --max N --reps N --rounds N]
#   bash bench/run.sh jacobi   [--ranks 1,2,4 --grid N --steps N --reps N --rounds N --before BUILD --pingpong-max BYTES
#                               --parts jacobi,pingpong]
set -euo pipefail
cd "$(dirname "$0")/.."
pattern=${1:?usage: bench/run.sh PATTERN [flags] (bench/README.md)}
shift
bash scripts/build.sh --bench >&2
case "$pattern" in
  pingpong|pingping|window|onetomany|1:n|manytoone|n:1|loggp|halo)
    exec /usr/bin/python3 bench/netgauge.py "$pattern" "$@" ;;
  collectives|sdto|swm|arrays|jacobi|regions|io|rma|builds)
    exec /usr/bin/python3 "bench/$pattern.py" "$@" ;;
  flooding)
    exec mpiexec.mpich -n 1 build/motor build/bench/Flooding.exe "$@" ;;
  *) echo "bench/run.sh: unknown pattern '$pattern' (bench/README.md)" >&2; exit 2 ;;
esac

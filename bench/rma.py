#!/usr/bin/python3
"""One-sided communication (issue 37, part W): System.MP.Window against native C making the same
MPI calls over a window of memory it owns (rma_native.c), interleaved round after round; rank 0
is the origin, rank 1 the target.
  put-lock   Lock(1, shared) + Put + Unlock(1) per iteration: a whole passive epoch
  put-flush  Put + Flush(1) inside one LockAll: a completed Put
  get-flush  Get + Flush(1) inside one LockAll: a completed Get
  put-fence  rank 0's Put between two Fences of every rank: an active-target epoch
  fetch-op   FetchAndOp(Sum) of one long inside one LockAll (its inverse: operations per second)
Run through `bash bench/run.sh rma [--ops put-lock,put-flush,get-flush,put-fence,fetch-op]
[--ranks N --min B --max B --reps N --rounds N]`."""
import argparse

import benchlib

LABELS = {"native-c": "native C (MPICH), MPI_Win_create over malloc'ed memory",
          "system-mp": "C# System.MP.Window over a byte[] (long[] for fetch-op)"}
TITLES = {"put-lock": "Put in its own passive epoch (Lock + Put + Unlock)",
          "put-flush": "Put + Flush inside LockAll",
          "get-flush": "Get + Flush inside LockAll",
          "put-fence": "Put between two Fences (active target)",
          "fetch-op": "FetchAndOp(Sum) of one long inside LockAll (µs per operation)"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    benchlib.standard_args(p, 8, 1 << 20, "x4")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--ops", default="put-lock,put-flush,get-flush,put-fence,fetch-op")
    a = p.parse_args()
    # each rank bound to a core of its own, as regions.py does
    b = a.build
    mpi = benchlib.launcher(argparse.Namespace(hosts=0), a.ranks)[:1] + ["-bind-to", "core"] + \
        benchlib.launcher(argparse.Namespace(hosts=0), a.ranks)[1:]
    for op in a.ops.split(","):
        top = a.min if op == "fetch-op" else a.max
        sizes = [str(a.min), str(top), str(a.reps)]
        runs = {"native-c": (mpi + [f"{b}/bench/rma_native", op] + sizes, {}),
                "system-mp": (mpi + [f"{b}/motor", f"{b}/bench/Rma.exe", op] + sizes, {})}
        res = benchlib.collect(runs, a.rounds)
        benchlib.report(res, list(runs), LABELS, f"{TITLES[op]}, {a.ranks} ranks", "µs", a.out,
                        "rma_" + op)


if __name__ == "__main__":
    main()

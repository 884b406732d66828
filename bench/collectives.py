#!/usr/bin/python3
"""Collectives: Bcast (bytes from rank 0) and Allreduce (doubles, Sum) latency per call, for
native C MPICH (reference), C# on System.MP and the C# P/Invoke baseline; Gatherv and Alltoallv
(blocks of the given size from every rank), and Iallreduce + Wait (doubles, Sum) for native C and
System.MP, too.
Run through `bash bench/run.sh collectives [--ranks N] [--ops gatherv,alltoallv,iallreduce] [flags]`;
`--hosts H` runs the same across H hosts (network namespaces), without and with a link delay."""
import argparse

import benchlib

LABELS = {"native-c": "native C (MPICH)", "system-mp": "C# System.MP (OPI)",
          "pinvoke": "C# P/Invoke + GCHandle (baseline)"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    benchlib.standard_args(p, 8, 1 << 20, "x4")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--transports", default=",".join(LABELS))
    p.add_argument("--ops", help="comma-separated subset of the collectives (default: all)")
    benchlib.host_args(p)
    a = p.parse_args()
    for where, out in benchlib.settings(a):
        measure(a, where, out)


def measure(a, where, out):
    b, sizes = a.build, [str(a.min), str(a.max), str(a.reps)]
    mpi = benchlib.launcher(a, a.ranks)
    names = ["native-c"] + [t for t in a.transports.split(",") if t != "native-c"]
    ops = ["bcast", "allreduce"]
    titles = {"bcast": "Bcast from rank 0", "allreduce": "Allreduce of doubles, Sum"}
    # Gatherv and Alltoallv (sizes: one rank's block, to the root / to each rank); Iallreduce +
    # Wait (MPI_Iallreduce + MPI_Wait in C; no P/Invoke baseline)
    ops += ["gatherv", "alltoallv", "iallreduce"]
    titles.update({"gatherv": "Gatherv of doubles to rank 0 (size: each rank's block)",
                   "alltoallv": "Alltoallv of doubles (size: each block, to each rank)",
                   "iallreduce": "Iallreduce of doubles, Sum, then Wait"})
    without_pinvoke = {"iallreduce"}
    if a.ops:
        ops = [op for op in ops if op in a.ops.split(",")]
    for op in ops:
        commands = {
            "native-c": (mpi + [f"{b}/bench/collectives_native", op] + sizes, {}),
            "system-mp": (mpi + [f"{b}/motor", f"{b}/bench/Collectives.exe", "system-mp", op] + sizes, {}),
            "pinvoke": (mpi + [f"{b}/motor", f"{b}/bench/Collectives.exe", "pinvoke", op] + sizes, {}),
        }
        run = [t for t in names if not (op in without_pinvoke and t == "pinvoke")]
        res = benchlib.collect({t: commands[t] for t in run}, a.rounds)
        benchlib.report(res, run, LABELS, f"{titles[op]}, {a.ranks} ranks{where}, per call", "µs", out, op)


if __name__ == "__main__":
    main()

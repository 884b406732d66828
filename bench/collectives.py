#!/usr/bin/python3
"""Collectives: Bcast (bytes from rank 0) and Allreduce (doubles, Sum) latency per call, for
native C MPICH (reference), C# on System.MP and the C# P/Invoke baseline; Iallreduce + Wait
(doubles, Sum) for native C and System.MP.
Run through `bash bench/run.sh collectives [--ranks N] [flags]`."""
import argparse

import benchlib

LABELS = {"native-c": "native C (MPICH)", "system-mp": "C# System.MP (OPI)",
          "pinvoke": "C# P/Invoke + GCHandle (baseline)"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    benchlib.standard_args(p, 8, 1 << 20, "x4")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--transports", default=",".join(LABELS))
    a = p.parse_args()
    b, sizes = a.build, [str(a.min), str(a.max), str(a.reps)]
    mpi = ["mpiexec.mpich", "-n", str(a.ranks)]
    names = ["native-c"] + [t for t in a.transports.split(",") if t != "native-c"]
    for op in ("bcast", "allreduce"):
        commands = {
            "native-c": (mpi + [f"{b}/bench/collectives_native", op] + sizes, {}),
            "system-mp": (mpi + [f"{b}/motor", f"{b}/bench/Collectives.exe", "system-mp", op] + sizes, {}),
            "pinvoke": (mpi + [f"{b}/motor", f"{b}/bench/Collectives.exe", "pinvoke", op] + sizes, {}),
        }
        res = benchlib.collect({t: commands[t] for t in names}, a.rounds)
        title = {"bcast": "Bcast from rank 0", "allreduce": "Allreduce of doubles, Sum"}[op]
        benchlib.report(res, names, LABELS, f"{title}, {a.ranks} ranks, per call", "µs", a.out, op)

    # ---- nbc: Iallreduce + Wait (MPI_Iallreduce + MPI_Wait in C; no P/Invoke baseline) ----
    nbc_names = [t for t in names if t in ("native-c", "system-mp")]
    nbc_commands = {
        "native-c": (mpi + [f"{b}/bench/collectives_native", "iallreduce"] + sizes, {}),
        "system-mp": (mpi + [f"{b}/motor", f"{b}/bench/Collectives.exe", "system-mp", "iallreduce"] + sizes, {}),
    }
    res = benchlib.collect({t: nbc_commands[t] for t in nbc_names}, a.rounds)
    benchlib.report(res, nbc_names, LABELS, f"Iallreduce of doubles, Sum, then Wait, {a.ranks} ranks, per call",
                    "µs", a.out, "iallreduce")


if __name__ == "__main__":
    main()

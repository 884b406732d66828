#!/usr/bin/python3
"""Collectives: Bcast (bytes from rank 0) and Allreduce (doubles, Sum) latency per call, for
native C MPICH (reference), C# on System.MP and the C# P/Invoke baseline.
Run through `bash bench/run.sh collectives [--ranks N] [flags]`."""
import argparse

import benchlib

LABELS = {"native-c": "native C (MPICH)", "system-mp": "C# System.MP (OPI)",
          "pinvoke": "C# P/Invoke + GCHandle (baseline)"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--min", type=int, default=8, help="smallest message in bytes")
    p.add_argument("--max", type=int, default=1 << 20, help="largest message in bytes (x4 steps)")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions per size and run")
    p.add_argument("--rounds", type=int, default=3, help="interleaved runs of every transport")
    p.add_argument("--transports", default=",".join(LABELS))
    p.add_argument("--out", default="bench/results")
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


if __name__ == "__main__":
    main()

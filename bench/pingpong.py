#!/usr/bin/python3
"""Ping-pong: half round-trip latency and bandwidth between two ranks, for native C MPICH
(MPI_Send/MPI_Recv, the reference; and Isend/Irecv+Wait), C# on System.MP, and the C#
P/Invoke baseline (MPI.NET style). Run through `bash bench/run.sh pingpong [flags]`."""
import argparse

import benchlib

LABELS = {"native-c": "native C (MPICH)", "native-c-nb": "native C, Isend/Irecv+Wait",
          "system-mp": "C# System.MP (OPI)", "pinvoke": "C# P/Invoke + GCHandle (baseline)"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    benchlib.standard_args(p, 4, 4 << 20, "x2")
    p.add_argument("--transports", default=",".join(LABELS))
    a = p.parse_args()
    b, sizes = a.build, [str(a.min), str(a.max), str(a.reps)]
    mpi = ["mpiexec.mpich", "-n", "2"]
    commands = {
        "native-c": (mpi + [f"{b}/bench/pingpong_native"] + sizes, {}),
        "native-c-nb": (mpi + [f"{b}/bench/pingpong_native"] + sizes + ["nonblocking"], {}),
        "system-mp": (mpi + [f"{b}/motor", f"{b}/bench/PingPong.exe", "system-mp"] + sizes, {}),
        "pinvoke": (mpi + [f"{b}/motor", f"{b}/bench/PingPong.exe", "pinvoke"] + sizes, {}),
    }
    names = ["native-c"] + [t for t in a.transports.split(",") if t != "native-c"]
    res = benchlib.collect({t: commands[t] for t in names}, a.rounds)
    benchlib.report(res, names, LABELS, "Ping-pong, 2 ranks, half round trip", "µs", a.out, "pingpong")


if __name__ == "__main__":
    main()

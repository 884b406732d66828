#!/usr/bin/python3
"""Regions, persistent requests and neighbourhood halos (issue 34): System.MP against native C
making the same MPI calls with the same datatypes (regions_native.c), interleaved round after
round.
  column      ping-pong of one column of a double[E, 64] (E = bytes / 8), half a round trip;
              native C also as Isend/Irecv + Wait (native-c-nb), the MPI path System.MP takes
  block3d     ping-pong of the interior block of a 3-D double array, half a round trip
  persistent  a ring halo of contiguous doubles: persistent requests, StartAll + WaitAll
  neighbor    the halo of a periodic 2-D grid of ranks (one edge: bytes), one neighbourhood
              alltoallw with regions, against Isend/Irecv of packed edges (System.MP and C)
Run through `bash bench/run.sh regions [--ops column,block3d,persistent,neighbor] [--ranks N]
[--min B --max B --reps N --rounds N]`."""
import argparse

import benchlib

LABELS = {"native-c": "native C (MPICH), same datatypes", "system-mp": "C# System.MP, regions",
          "native-c-nb": "native C, Isend/Irecv + Wait (System.MP's MPI path)",
          "native-c-packed": "native C, Isend/Irecv of packed edges",
          "system-mp-packed": "C# System.MP, Isend/Irecv of packed edges"}
TITLES = {"column": "Ping-pong of one column of a double[E,64] (size: the column), half round trip",
          "block3d": "Ping-pong of a 3-D block of a double[,,] (size: the block), half round trip",
          "persistent": "Ring halo with persistent requests, StartAll + WaitAll (size: each message)",
          "neighbor": "Halo of a 2-D double[n+2,n+2] field, periodic grid (size: one edge)"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    benchlib.standard_args(p, 8, 4 << 20, "x4")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--ops", default="column,block3d,persistent,neighbor")
    p.add_argument("--neighbor-max", type=int, default=32 << 10,
                   help="largest edge of the neighbour halo (its field is (edge/8)^2 doubles)")
    a = p.parse_args()
    # each rank bound to a core of its own: two ranks sharing one core make every ping-pong
    # bimodal (seen here: the same 128 KiB block at 30 and at 110 µs, native C and C# alike)
    b = a.build
    mpi = benchlib.launcher(argparse.Namespace(hosts=0), a.ranks)[:1] + ["-bind-to", "core"] + \
        benchlib.launcher(argparse.Namespace(hosts=0), a.ranks)[1:]
    for op in a.ops.split(","):
        top = min(a.max, a.neighbor_max) if op == "neighbor" else a.max
        sizes = [str(a.min), str(top), str(a.reps)]
        native = lambda o: (mpi + [f"{b}/bench/regions_native", o] + sizes, {})
        csharp = lambda o: (mpi + [f"{b}/motor", f"{b}/bench/Regions.exe", o] + sizes, {})
        runs = {"native-c": native(op), "system-mp": csharp(op)}
        if op in ("column", "block3d"):
            runs["native-c-nb"] = native(op + "-nb")
        if op == "neighbor":
            runs.update({"native-c-packed": native("neighbor-packed"),
                         "system-mp-packed": csharp("neighbor-packed")})
        res = benchlib.collect(runs, a.rounds)
        benchlib.report(res, list(runs), LABELS, f"{TITLES[op]}, {a.ranks} ranks", "µs", a.out,
                        "regions_" + op, volume=4 if op == "neighbor" else 1)


if __name__ == "__main__":
    main()

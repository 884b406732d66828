#!/usr/bin/python3
"""Parallel files (issue 37, MPFile): a collective checkpoint of a distributed double[N,N]
through a view, System.MP against native C making the same MPI-IO calls (io_native.c),
interleaved round after round.
  write  MPFile.WriteAll of each rank's block of rows (MPI_File_write_at_all through a subarray
         view), µs per collective write of the whole array
  read   MPFile.ReadAll of the same (MPI_File_read_at_all)
Sizes are the whole array's bytes, N = floor(sqrt(bytes / 8)): 1 MiB to 1 GiB by default. The
files go to --dir (default: BUILD/bench/io-files, removed at the end); on this machine that is the
page cache of a local file system, so the figures are the MPI-IO path's cost, not a disk's.
Run through `bash bench/run.sh io [--ops write,read] [--ranks N] [--min B --max B --reps N
--rounds N --dir DIR]`."""
import argparse
import os
import shutil

import benchlib

LABELS = {"native-c": "native C (MPICH MPI-IO), same calls",
          "system-mp": "C# System.MP MPFile, WriteAll/ReadAll"}
TITLES = {"write": "Collective write of a double[N,N] through a row-block view (size: the array)",
          "read": "Collective read of a double[N,N] through a row-block view (size: the array)"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    benchlib.standard_args(p, 1 << 20, 1 << 30, "x4")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--ops", default="write,read")
    p.add_argument("--dir", default=None, help="where the files go (default BUILD/bench/io-files)")
    a = p.parse_args()
    b = a.build
    work = a.dir or os.path.join(b, "bench", "io-files")
    os.makedirs(work, exist_ok=True)
    mpi = benchlib.launcher(argparse.Namespace(hosts=0), a.ranks)[:1] + ["-bind-to", "core"] + \
        benchlib.launcher(argparse.Namespace(hosts=0), a.ranks)[1:]
    try:
        for op in a.ops.split(","):
            sizes = [str(a.min), str(a.max), str(a.reps), work]
            runs = {"native-c": (mpi + [f"{b}/bench/io_native", op] + sizes, {}),
                    "system-mp": (mpi + [f"{b}/motor", f"{b}/bench/Io.exe", op] + sizes, {})}
            res = benchlib.collect(runs, a.rounds)
            benchlib.report(res, list(runs), LABELS, f"{TITLES[op]}, {a.ranks} ranks", "µs", a.out,
                            "io_" + op, xlabel="array size (bytes)")
    finally:
        if not a.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Ping-pong of several builds of System.MP side by side, interleaved round after round with
native C: for bisecting a change in speed across commits. Each build is a build directory of
some commit of this repository (with bench/Bench.exe, built by `cmake --build`); native C runs
from --build. Run through `bash bench/run.sh builds --builds DIR[=LABEL],DIR[=LABEL],...
[--pattern pingpong] [--min N --max N --reps N --warmup N --rounds N]`."""
import argparse
import csv
import os
import subprocess
import sys

import benchlib


def run(argv, label, res):
    """Runs one benchmark process and files its rows under label."""
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"benchmark failed ({out.returncode}): {' '.join(argv)}\n{out.stderr[-2000:]}")
    for row in csv.reader(out.stdout.splitlines()):
        if len(row) >= 5 and row[0] == "peak":
            res.peaks[label].append(int(row[3]))
        elif len(row) >= 5 and row[0] not in ("pins", "checked"):
            res.values["time"][label][int(row[1])].append(float(row[4]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    benchlib.standard_args(p, 65536, 1 << 20)
    p.add_argument("--builds", required=True,
                   help="comma-separated build directories, each DIR or DIR=LABEL")
    p.add_argument("--pattern", default="pingpong", help="a Bench.exe pattern (default pingpong)")
    p.add_argument("--warmup", type=int, default=1, help="untimed repetitions before the timed ones")
    p.add_argument("--ranks", type=int, default=2)
    a = p.parse_args()
    builds = []
    for item in a.builds.split(","):
        path, _, label = item.partition("=")
        if not os.path.exists(os.path.join(path, "bench", "Bench.exe")):
            raise SystemExit(f"{path}/bench/Bench.exe is missing: build that tree first")
        builds.append((path, label or os.path.basename(os.path.dirname(os.path.abspath(path)))))
    tail = [a.pattern, "TRANSPORT", str(a.min), str(a.max), str(a.reps), str(a.warmup), "0"]
    launch = ["mpiexec.mpich", "-n", str(a.ranks), "-bind-to", "core"]
    variants = [("native-c", launch + [f"{a.build}/bench/bench_native"], "native-c")]
    variants += [(label, launch + [f"{path}/motor", f"{path}/bench/Bench.exe"], "system-mp")
                 for path, label in builds]
    print(f"load average before: {open('/proc/loadavg').read().split()[:3]}, {os.cpu_count()} CPUs")
    res = benchlib.Results()
    for r in range(a.rounds):
        # rotate the order each round, so no variant always runs first or last
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for label, argv, transport in order:
            print(f"[round {r + 1}/{a.rounds}] {label} ...", file=sys.stderr, flush=True)
            run(argv + [t if t != "TRANSPORT" else transport for t in tail], label, res)
    names = [v[0] for v in variants]
    benchlib.report(res, names, {n: n for n in names},
                    f"{a.pattern}, {a.ranks} ranks: builds of System.MP against native C",
                    "µs", a.out, f"builds_{a.pattern}")


if __name__ == "__main__":
    main()

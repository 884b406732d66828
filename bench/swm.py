#!/usr/bin/python3
"""The shallow-water case study over grid sizes, the Motor paper's figures 14-17: total time, and
each slave's processing / MPI communication / structured transport time, for C# on System.MP,
C# on the P/Invoke + BinaryFormatter baseline, and native C on MPICH (the reference).
Run through `bash bench/run.sh swm [--ranks N --sizes 64,128,256,512 --steps N --runs N]`."""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys

import benchlib

IMPLS = {
    "native-c": lambda b: [f"{b}/shallow_water_c"],
    "system-mp": lambda b: [f"{b}/motor", f"{b}/ShallowWater.exe"],
    "pinvoke-bf": lambda b: [f"{b}/motor", f"{b}/ShallowWater.exe", "--pinvoke"],
}
LABELS = {"native-c": "native C (MPICH)", "system-mp": "C# System.MP",
          "pinvoke-bf": "C# P/Invoke + BinaryFormatter (baseline)"}
PARTS = ("total", "processing", "mpi", "sdto")


def run(build, impl, ranks, size, steps):
    cmd = ["mpiexec.mpich", "-n", str(ranks)] + IMPLS[impl](build) + [str(size), str(size), str(steps)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=3600).stdout
    total = float(re.search(r"\): ([\d.]+) s", out).group(1))
    slaves = [tuple(map(float, m.groups())) for m in
              re.finditer(r"^\s+\d+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", out, re.M)]
    # per-slave means of the three parts (the paper plots one slave's split; the mean is steadier)
    return {"total": total, "processing": statistics.mean(s[0] for s in slaves),
            "mpi": statistics.mean(s[1] for s in slaves), "sdto": statistics.mean(s[2] for s in slaves)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--ranks", type=int, default=3, help="a master and ranks-1 workers")
    p.add_argument("--sizes", default="64,128,256,512", help="grid sizes (N x N), comma-separated")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--runs", type=int, default=3, help="runs per size and implementation (the paper: 20)")
    p.add_argument("--out", default="bench/results")
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    data = {i: {s: {k: [] for k in PARTS} for s in sizes} for i in IMPLS}
    for r in range(a.runs):
        for s in sizes:
            for impl in IMPLS:
                print(f"[run {r + 1}/{a.runs}] {impl} {s}x{s} ...", file=sys.stderr, flush=True)
                for k, v in run(a.build, impl, a.ranks, s, a.steps).items():
                    data[impl][s][k].append(v)
    med = {i: {s: {k: statistics.median(data[i][s][k]) for k in PARTS} for s in sizes} for i in IMPLS}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "swm.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["implementation", "grid", "steps", "ranks", "runs"] + [f"{k}_s" for k in PARTS] + ["total_ratio_to_native"])
        for i in IMPLS:
            for s in sizes:
                w.writerow([i, s, a.steps, a.ranks, a.runs] + [f"{med[i][s][k]:.6f}" for k in PARTS]
                           + [f"{med[i][s]['total'] / med['native-c'][s]['total']:.3f}"])
    print(f"\nShallow water, {a.steps} steps, {a.ranks} ranks ({a.ranks - 1} workers), median of {a.runs} runs; "
          "milliseconds, xR = ratio to native C\n")
    for k, title in (("total", "total"), ("processing", "per-slave processing"), ("mpi", "per-slave MPI communication"),
                     ("sdto", "per-slave structured transport (Res)")):
        print(f"{title}:")
        for s in sizes:
            cells = [f"{i} {med[i][s][k] * 1e3:.3f}" + ("" if i == "native-c" else f" x{med[i][s][k] / max(med['native-c'][s][k], 1e-9):.2f}")
                     for i in IMPLS]
            print(f"  {s:>5}x{s:<5} " + " | ".join(cells))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 4, figsize=(18, 4.2))
        for ax, k, title in zip(axes, PARTS, ("Total time", "Processing (per slave)", "MPI communication (per slave)",
                                              "Structured transport (per slave)")):
            for i in IMPLS:
                ax.plot(sizes, [med[i][s][k] for s in sizes], marker="o", label=LABELS[i])
            benchlib.log_axes(ax, title, "grid size (N x N)", "seconds")
        axes[0].legend(fontsize=8)
        fig.suptitle(f"Shallow water, {a.steps} steps, {a.ranks - 1} workers (median of {a.runs} runs)")
        fig.tight_layout()
        fig.savefig(os.path.join(a.out, "swm.png"), dpi=100)
    except ImportError:
        pass
    print(f"\nwrote {a.out}/swm.csv and {a.out}/swm.png")


if __name__ == "__main__":
    main()

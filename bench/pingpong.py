#!/usr/bin/python3
"""Ping-pong benchmark driver: half round-trip latency and bandwidth between two ranks for
native C MPICH (the reference), C# on System.MP, and the C# P/Invoke baseline (MPI.NET style).

Transports run interleaved, round after round, so machine noise hits them alike; each run
does a warm-up and REPS timed repetitions per size. Reports the median and min-max of all
repetitions, ratios to native C, peak memory per rank; writes CSV and a PNG plot.
Run through bench/pingpong.sh, which builds first."""
import argparse
import collections
import csv
import os
import statistics
import subprocess
import sys

TRANSPORTS = {
    "native-c": lambda b: [f"{b}/bench/pingpong_native"],
    "native-c-nb": lambda b: [f"{b}/bench/pingpong_native"],
    "system-mp": lambda b: [f"{b}/motor", f"{b}/bench/PingPong.exe", "system-mp"],
    "pinvoke": lambda b: [f"{b}/motor", f"{b}/bench/PingPong.exe", "pinvoke"],
}
LABELS = {"native-c": "native C (MPICH)", "native-c-nb": "native C, Isend/Irecv+Wait", "system-mp": "C# System.MP (OPI)",
          "pinvoke": "C# P/Invoke + GCHandle (baseline)"}


def run_once(build, transport, args):
    cmd = ["mpiexec.mpich", "-n", "2"] + TRANSPORTS[transport](build) + [
        str(args.min), str(args.max), str(args.reps)] + (["nonblocking"] if transport == "native-c-nb" else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=1800).stdout
    times, peaks = collections.defaultdict(list), []
    for row in csv.reader(out.splitlines()):
        if row and row[0] == "peak":
            peaks.append(int(row[3]))
        elif row and row[0] == transport:
            times[int(row[1])].append(float(row[4]))
    return times, peaks


def human(n):
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n} {unit}"
        n //= 1024
    return f"{n} GiB"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--min", type=int, default=4, help="smallest message in bytes")
    p.add_argument("--max", type=int, default=4 << 20, help="largest message in bytes")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions per size and run")
    p.add_argument("--rounds", type=int, default=3, help="interleaved runs of every transport")
    p.add_argument("--transports", default=",".join(TRANSPORTS))
    p.add_argument("--out", default="bench/results")
    args = p.parse_args()
    transports = args.transports.split(",")
    if "native-c" not in transports:
        transports.insert(0, "native-c")

    times = {t: collections.defaultdict(list) for t in transports}
    peaks = {t: [] for t in transports}
    for r in range(args.rounds):
        for t in transports:
            print(f"[round {r + 1}/{args.rounds}] {t} ...", file=sys.stderr, flush=True)
            got, pk = run_once(args.build, t, args)
            for size, v in got.items():
                times[t][size].extend(v)
            peaks[t].extend(pk)

    sizes = sorted(times["native-c"])
    med = {t: {s: statistics.median(times[t][s]) for s in sizes} for t in transports}
    os.makedirs(args.out, exist_ok=True)
    csv_path = os.path.join(args.out, "pingpong.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["transport", "bytes", "median_us", "min_us", "max_us", "samples",
                    "bandwidth_MBps", "ratio_to_native", "peak_rss_kib"])
        for t in transports:
            for s in sizes:
                v = times[t][s]
                w.writerow([t, s, f"{med[t][s]:.4f}", f"{min(v):.4f}", f"{max(v):.4f}", len(v),
                            f"{s / med[t][s]:.1f}", f"{med[t][s] / med['native-c'][s]:.3f}",
                            max(peaks[t]) if peaks[t] else ""])

    print(f"\nPing-pong, 2 ranks, half round trip in µs: median [min-max] of "
          f"{args.rounds} runs x {args.reps} repetitions; ratio = median / native C median\n")
    head = f"{'size':>8} | " + " | ".join(f"{t:^30}" for t in transports)
    print(head)
    print("-" * len(head))
    for s in sizes:
        cells = []
        for t in transports:
            v = times[t][s]
            cell = f"{med[t][s]:8.3f} [{min(v):.3f}-{max(v):.3f}]"
            if t != "native-c":
                cell += f" x{med[t][s] / med['native-c'][s]:.2f}"
            cells.append(f"{cell:<30}")
        print(f"{human(s):>8} | " + " | ".join(cells))
    print("\nbandwidth at the largest size (MB/s): " + ", ".join(
        f"{t} {sizes[-1] / med[t][sizes[-1]]:.0f}" for t in transports))
    print("peak memory per rank (VmHWM, KiB): " + ", ".join(
        f"{t} {max(peaks[t]) if peaks[t] else '?'}" for t in transports))

    png_path = os.path.join(args.out, "pingpong.png")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
        for t in transports:
            a1.plot(sizes, [med[t][s] for s in sizes], marker="o", ms=3, label=LABELS.get(t, t))
            a2.plot(sizes, [s / med[t][s] for s in sizes], marker="o", ms=3, label=LABELS.get(t, t))
        for a, title, unit in ((a1, "Half round-trip latency", "µs"), (a2, "Bandwidth", "MB/s")):
            a.set_xscale("log", base=2)
            a.set_yscale("log")
            a.set_xlabel("message size (bytes)")
            a.set_ylabel(unit)
            a.set_title(title)
            a.grid(True, which="both", alpha=0.3)
        a1.legend()
        fig.suptitle("Ping-pong, 2 ranks, one node (median)")
        fig.tight_layout()
        fig.savefig(png_path, dpi=110)
    except ImportError:
        png_path = "(no plot: python3-matplotlib missing)"
    print(f"\nwrote {csv_path} and {png_path}")


if __name__ == "__main__":
    main()

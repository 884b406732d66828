#!/usr/bin/env python3
"""Side by side: the same benchmark CSV (bench/results/<stem>.csv) from two builds, e.g. before
and after a change. Each side may be several result directories from interleaved runs
(A B A B ...); per transport and size the table shows the median of their medians, with the
min–max over the runs, and after/before.

  python3 bench/compare.py --before DIR[,DIR...] --after DIR[,DIR...] STEM [STEM ...]
  (STEM: pingpong, sdto, sdto_per_object, ...)"""
import argparse
import csv
import os
import statistics


def load(dirs, stem):
    """{(transport, bytes): [median_us of each dir]}, in the order rows first appear."""
    rows = {}
    for d in dirs:
        with open(os.path.join(d, stem + ".csv")) as f:
            for r in csv.DictReader(f):
                rows.setdefault((r["transport"], int(r["bytes"])), []).append(float(r["median_us"]))
    return rows


def cell(values):
    return f"{statistics.median(values):10.3f} [{min(values):.3f}–{max(values):.3f}]"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", required=True)
    p.add_argument("--after", required=True)
    p.add_argument("stems", nargs="+")
    a = p.parse_args()
    for stem in a.stems:
        before, after = load(a.before.split(","), stem), load(a.after.split(","), stem)
        print(f"\n{stem}: median µs [min–max over runs]; before {a.before}, after {a.after}")
        print(f"{'transport':<26} {'size':>9} {'before':>30} {'after':>30} {'after/before':>12}")
        for key in before:
            if key not in after:
                continue
            b, n = statistics.median(before[key]), statistics.median(after[key])
            print(f"{key[0]:<26} {key[1]:>9} {cell(before[key]):>30} {cell(after[key]):>30} {n / b:>12.3f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Side by side: the same benchmark CSV (bench/results/<stem>.csv) from two builds, e.g. before
and after a change. Each side may be several result directories from interleaved runs
(A B A B ...); per transport and size the table shows the median of their medians, with the
min–max over the runs, after/before, and each side's ratio to its own runs' reference
transport (the CSV's ratio_to_native: native C for point-to-point). The ratios are what to
compare when the machine's speed drifts between runs (native C itself moves).

  python3 bench/compare.py --before DIR[,DIR...] --after DIR[,DIR...] STEM [STEM ...]
  (STEM: pingpong, sdto, sdto_per_object, ...)"""
import argparse
import csv
import os
import statistics


def load(dirs, stem):
    """{(transport, bytes): ([median of each dir], [ratio to the reference of each dir])}, in
    the order rows first appear. (median_us holds the CSV's unit: µs, or ns per object.)"""
    rows = {}
    for d in dirs:
        with open(os.path.join(d, stem + ".csv")) as f:
            for r in csv.DictReader(f):
                medians, ratios = rows.setdefault((r["transport"], int(r["bytes"])), ([], []))
                medians.append(float(r["median_us"]))
                ratios.append(float(r["ratio_to_native"]))
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
        print(f"\n{stem}: median [min–max over runs] in the CSV's unit; xR: ratio to the run's reference")
        print(f"  before {a.before}\n  after  {a.after}")
        print(f"{'transport':<16} {'size':>8} {'before':>30} {'after':>30} {'after/before':>12} "
              f"{'before xR':>9} {'after xR':>9}")
        for key in before:
            if key not in after:
                continue
            (bm, br), (am, ar) = before[key], after[key]
            b, n = statistics.median(bm), statistics.median(am)
            print(f"{key[0]:<16} {key[1]:>8} {cell(bm):>30} {cell(am):>30} {n / b:>12.3f} "
                  f"{statistics.median(br):>9.2f} {statistics.median(ar):>9.2f}")


if __name__ == "__main__":
    main()

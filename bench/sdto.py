#!/usr/bin/python3
"""Structured data: the Motor paper's LinkedArray ping-pong (N elements, 4096 ints in total)
for System.MP's SDTO (OSend/ORecv) against the same list packed by hand in C on MPICH (the
floor: bench/native/sdto_native.c), BinaryFormatter and DataContractSerializer (binary XML), both
moved with OPI Send/Probe/Recv; then serialization cost per object of a list of small nodes.
Ratios are to native C (ping-pong) and to SDTO (per object). Run through
`bash bench/run.sh sdto [flags]`."""
import argparse

import benchlib

LABELS = {"native-c": "hand-packed C on MPICH", "sdto": "System.MP SDTO (OSend/ORecv)",
          "sdto-into": "System.MP SDTO (OSend/ORecvInto)", "binaryformatter": "BinaryFormatter + OPI",
          "datacontract": "DataContractSerializer (binary XML) + OPI"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--min", type=int, default=1, help="fewest list elements")
    p.add_argument("--max", type=int, default=4096, help="most list elements (x4 steps)")
    p.add_argument("--objects", type=int, default=5000, help="list length for the per-object cost")
    p.add_argument("--elements", type=int, default=1000000, help="doubles in the List<double> comparison")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default="bench/results")
    a = p.parse_args()
    b = a.build
    exe = [f"{b}/motor", f"{b}/bench/Sdto.exe"]
    names = list(LABELS)
    args = ["pingpong", "{t}", str(a.min), str(a.max), str(a.reps)]
    commands = {t: (["mpiexec.mpich", "-n", "2"] + ([f"{b}/bench/sdto_native"] if t == "native-c" else exe)
                    + [x.format(t=t) for x in args], {}) for t in names}
    res = benchlib.collect(commands, a.rounds)
    benchlib.report(res, names, LABELS, "LinkedArray ping-pong (4096 ints in N elements), half round trip",
                    "µs", a.out, "sdto", ref="native-c", size_fmt=lambda n: f"N={n}")
    # a List<double> of 10^6 elements against a double[] of the same size
    kinds = {"opi": "double[], OPI Send/Recv", "array": "double[], OSend/ORecv", "list": "List<double>, OSend/ORecv"}
    bw = {k: (["mpiexec.mpich", "-n", "2"] + exe + ["bandwidth", k, str(a.elements), str(a.reps)], {}) for k in kinds}
    res = benchlib.collect(bw, a.rounds)
    benchlib.report(res, list(kinds), kinds, f"{a.elements} doubles, ping-pong half round trip", "µs", a.out,
                    "sdto_list", ref="opi", size_fmt=lambda n: f"{n // 1048576} MiB" if n >= 1048576 else f"{n} B")
    names = [t for t in names if t not in ("native-c", "sdto-into")]
    per = {t: (["mpiexec.mpich", "-n", "1"] + exe + ["perobject", t, str(a.objects), str(a.reps)], {}) for t in names}
    res = benchlib.collect(per, a.rounds)
    rows = [f"{t}-{k}" for k in ("serialize", "roundtrip") for t in names]
    labels = {f"{t}-{k}": f"{LABELS[t]}, {k}" for t in names for k in ("serialize", "roundtrip")}
    benchlib.report(res, rows, labels, f"Serialization cost per object ({a.objects}-node list)", "ns",
                    a.out, "sdto_per_object", ref="sdto-serialize", size_fmt=lambda n: f"{n} obj")


if __name__ == "__main__":
    main()

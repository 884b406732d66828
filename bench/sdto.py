#!/usr/bin/python3
"""Structured data: the Motor paper's LinkedArray ping-pong (N elements, 4096 ints in total)
for System.MP's SDTO (OSend/ORecv) against the same list packed by hand in C on MPICH (the
floor: bench/native/sdto_native.c), BinaryFormatter and DataContractSerializer (binary XML), both
moved with OPI Send/Probe/Recv, and, when Debian's python3-mpi4py is installed, mpi4py's pickle
(over Open MPI: bench/mpi4py/sdto_mpi4py.py); then serialization cost per object of a list of
small nodes. Then a user's plain loop (issue 35): one program per list size, 2 ranks, rank 0 sends
the list and receives it back, --loop-warmup untimed round trips then --loop-iterations timed by
one clock (Sdto.exe and sdto_native's userloop mode), for native C, SDTO ORecv and ORecvInto.
Ratios are to native C (ping-pong, user loop) and to SDTO (per object). Run through
`bash bench/run.sh sdto [flags]`."""
import argparse
import os
import sys

import benchlib

LABELS = {"native-c": "hand-packed C on MPICH", "sdto": "System.MP SDTO (OSend/ORecv)",
          "sdto-into": "System.MP SDTO (OSend/ORecvInto)", "binaryformatter": "BinaryFormatter + OPI",
          "datacontract": "DataContractSerializer (binary XML) + OPI",
          "mpi4py-pickle": "mpi4py pickle (send/recv, Open MPI)",
          "alloc-floor": "C#: only allocating and linking the list (any receiver's floor)",
          "sdto-buffer": "System.MP Serializer into a reused byte[]",
          "sdto-unshared": "the same, a list with a reference field more (null): seen bits only",
          "sdto-shared": "the same list, every node's extra reference to the head: identity map"}


def user_loop(a, exe):
    """The plain program of issue 35, each list size its own 2-rank run (no barrier, no repetitions,
    one clock around the timed loop), every transport and size once per round."""
    names = ["native-c", "sdto", "sdto-into"]
    sizes = []
    n = a.min
    while n <= a.max:
        sizes.append(n)
        n *= 4
    res = benchlib.Results()
    for r in range(a.rounds):
        print(f"user's loop, round {r + 1}/{a.rounds}", file=sys.stderr, flush=True)
        for n in sizes:
            for t in names:
                prog = [f"{a.build}/bench/sdto_native"] if t == "native-c" else exe
                argv = (["mpiexec.mpich", "-n", "2"] + prog
                        + ["userloop", t, str(n), str(a.loop_warmup), str(a.loop_iterations)])
                benchlib.merge(res, benchlib.collect({t: (argv, {})}, 1))
    benchlib.report(res, names, LABELS,
                    f"user's plain loop ({a.loop_warmup} warm-up, {a.loop_iterations} timed round trips), "
                    "µs per round trip", "µs", a.out, "sdto_userloop", ref="native-c",
                    size_fmt=lambda n: f"N={n}", xlabel="list elements N (4096 ints in all)", bandwidth=False)
    print("collections per timed round trip on rank 0, minor/major (median): " + "; ".join(
        f"{t}: " + ", ".join(f"N={n} {res.median(t, n, 'gc0'):.3f}/{res.median(t, n, 'gc1'):.3f}" for n in sizes)
        for t in names[1:]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--min", type=int, default=1, help="fewest list elements")
    p.add_argument("--max", type=int, default=4096, help="most list elements (x4 steps)")
    p.add_argument("--objects", type=int, default=5000, help="list length for the per-object cost")
    p.add_argument("--elements", type=int, default=1000000, help="doubles in the List<double> comparison")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--loop-iterations", type=int, default=5000, help="timed round trips of the user's loop")
    p.add_argument("--loop-warmup", type=int, default=500, help="untimed round trips before them")
    p.add_argument("--out", default="bench/results")
    a = p.parse_args()
    b = a.build
    exe = [f"{b}/motor", f"{b}/bench/Sdto.exe"]
    names = [t for t in LABELS if t not in ("mpi4py-pickle", "alloc-floor", "sdto-buffer", "sdto-unshared", "sdto-shared")]
    args = ["pingpong", "{t}", str(a.min), str(a.max), str(a.reps)]
    commands = {t: (["mpiexec.mpich", "-n", "2"] + ([f"{b}/bench/sdto_native"] if t == "native-c" else exe)
                    + [x.format(t=t) for x in args], {}) for t in names}
    commands["alloc-floor"] = (["mpiexec.mpich", "-n", "1"] + exe + ["allocfloor", "alloc-floor", str(a.min),
                                                                     str(a.max), str(a.reps)], {})
    names.append("alloc-floor")
    python = benchlib.mpi4py_launcher()
    if python:
        launch, env = python
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpi4py", "sdto_mpi4py.py")
        commands["mpi4py-pickle"] = (launch(2) + [script, str(a.min), str(a.max), str(a.reps)], env)
        names.append("mpi4py-pickle")
        print("note: mpi4py is Debian's python3-mpi4py, built against Open MPI: its ratios compare Python's "
              "pickle *and* another MPI library with C on MPICH", flush=True)
    else:
        print("note: mpi4py pickle not measured (install python3-mpi4py to add it)", flush=True)
    res = benchlib.collect(commands, a.rounds)
    benchlib.report(res, names, LABELS, "LinkedArray ping-pong (4096 ints in N elements), half round trip",
                    "µs", a.out, "sdto", ref="native-c", size_fmt=lambda n: f"N={n}",
                    xlabel="list elements N (4096 ints in all)", bandwidth=False)
    user_loop(a, exe)
    # a List<double> of 10^6 elements against a double[] of the same size
    kinds = {"opi": "double[], OPI Send/Recv", "array": "double[], OSend/ORecv", "list": "List<double>, OSend/ORecv"}
    bw = {k: (["mpiexec.mpich", "-n", "2"] + exe + ["bandwidth", k, str(a.elements), str(a.reps)], {}) for k in kinds}
    res = benchlib.collect(bw, a.rounds)
    benchlib.report(res, list(kinds), kinds, f"{a.elements} doubles, ping-pong half round trip", "µs", a.out,
                    "sdto_list", ref="opi", size_fmt=lambda n: f"{n // 1048576} MiB" if n >= 1048576 else f"{n} B")
    names = [t for t in names if t not in ("native-c", "sdto-into", "mpi4py-pickle", "alloc-floor")]
    per = {t: (["mpiexec.mpich", "-n", "1"] + exe + ["perobject", t, str(a.objects), str(a.reps)], {}) for t in names}
    res = benchlib.collect(per, a.rounds)
    # sdto's run also prints sdto-buffer: Serialize(graph, buffer, 0) into one reused byte[], and
    # the writer's seen bits against its identity map (sdto-unshared, sdto-shared)
    kinds = [k for t in names
             for k in ([t, "sdto-buffer", "sdto-unshared", "sdto-shared"] if t == "sdto" else [t])]
    rows = [f"{t}-{k}" for k in ("serialize", "roundtrip") for t in kinds]
    labels = {f"{t}-{k}": f"{LABELS[t]}, {k}" for t in kinds for k in ("serialize", "roundtrip")}
    benchlib.report(res, rows, labels, f"Serialization cost per object ({a.objects}-node list)", "ns",
                    a.out, "sdto_per_object", ref="sdto-serialize", size_fmt=lambda n: f"{n} obj",
                    xlabel="list length (objects)", bandwidth=False)


if __name__ == "__main__":
    main()

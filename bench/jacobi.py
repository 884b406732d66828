#!/usr/bin/python3
"""Oversubscription: a 2-D Jacobi solve (Isend/Irecv halo rows + Allreduce of the residual each
step; Jacobi.cs, jacobi_native.c) at 1, 2 and 4 ranks on this machine, under each wait policy —
MOTOR_WAIT=spin (the old policy: every wait busy-polls, as MPI does) and auto (the default: waits
yield where the host's ranks outnumber its cores) — with native C on MPICH as the reference (it
busy-polls); then a 2-rank ping-pong, where auto must change nothing (every rank has a core).
With --before BUILD (a build of the tree before the wait policy), its System.MP runs beside
this one's in both parts.
Run through `bash bench/run.sh jacobi [--ranks 1,2,4 --grid 1024 --steps 100 --reps 3 --rounds 3
--before BUILD --pingpong-max BYTES --parts jacobi,pingpong]`."""
import argparse
import os
import statistics
import subprocess

import benchlib

LABELS = {"native-c": "native C (MPICH, busy-polls)",
          "system-mp-spin": "C# System.MP, MOTOR_WAIT=spin (old policy)",
          "system-mp": "C# System.MP, MOTOR_WAIT=auto",
          "system-mp-yield": "C# System.MP, MOTOR_WAIT=yield",
          "system-mp-before": "C# System.MP, build before the policy"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--ranks", default="1,2,4")
    p.add_argument("--grid", type=int, default=1024, help="N of the N x N grid")
    p.add_argument("--steps", type=int, default=100, help="Jacobi steps per timed repetition")
    p.add_argument("--reps", type=int, default=3, help="timed repetitions per run (after one untimed)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved runs of every variant")
    p.add_argument("--before", help="a build directory of the tree before the change")
    p.add_argument("--pingpong-max", type=int, default=64 << 10, help="largest ping-pong message (0: no ping-pong)")
    p.add_argument("--parts", default="jacobi,pingpong", help="which parts to run")
    p.add_argument("--out", default="bench/results")
    a = p.parse_args()
    print(f"load average before: {open('/proc/loadavg').read().split()[:3]}, {os.cpu_count()} CPUs")
    parts = a.parts.split(",")
    if "jacobi" in parts:
        jacobi(a)
    if "pingpong" in parts and a.pingpong_max:
        pingpong(a)
    print(f"load average after: {open('/proc/loadavg').read().split()[:3]}")


def jacobi(a):
    b = a.build
    tail = [str(a.grid), str(a.steps), str(a.reps)]
    variants = {
        "native-c": (lambda n: [f"{b}/bench/jacobi_native"] + tail + ["native-c"], {}),
        "system-mp-spin": (lambda n: [f"{b}/motor", f"{b}/bench/Jacobi.exe"] + tail + ["system-mp-spin"],
                           {"MOTOR_WAIT": "spin"}),
        "system-mp": (lambda n: [f"{b}/motor", f"{b}/bench/Jacobi.exe"] + tail + ["system-mp"],
                      {"MOTOR_WAIT": "auto"}),
    }
    if a.before:
        variants["system-mp-before"] = (lambda n: [f"{a.before}/motor", f"{a.before}/bench/Jacobi.exe"] + tail
                                        + ["system-mp-before"], {})
    ranks = [int(r) for r in a.ranks.split(",")]
    res = benchlib.Results()
    for r in range(a.rounds):   # every rank count and variant once per round: the noise hits all alike
        for n in ranks:
            part = benchlib.collect({name: (["mpiexec.mpich", "-n", str(n)] + argv(n), env)
                                     for name, (argv, env) in variants.items()}, 1)
            benchlib.merge(res, part)
    names = list(variants)
    benchlib.report(res, names, LABELS,
                    f"Jacobi {a.grid}x{a.grid}, halos + Allreduce, {os.cpu_count()} CPUs",
                    "ms per step", a.out, "jacobi",
                    size_fmt=lambda n: f"{n} rank" + ("s" if n > 1 else ""),
                    xlabel=f"ranks (on {os.cpu_count()} CPUs)", bandwidth=False, log=False)
    print(f"\nauto against the old policy (MOTOR_WAIT=spin), whole solve of {a.steps} steps, median [min-max]:")
    for n in ranks:
        spin, auto = res.times["system-mp-spin"][n], res.times["system-mp"][n]
        s, t = statistics.median(spin), statistics.median(auto)
        print(f"  {n} ranks: spin {s * a.steps / 1e3:.3f} s [{min(spin) * a.steps / 1e3:.3f}-{max(spin) * a.steps / 1e3:.3f}]"
              f", auto {t * a.steps / 1e3:.3f} s [{min(auto) * a.steps / 1e3:.3f}-{max(auto) * a.steps / 1e3:.3f}]"
              f", auto/spin x{t / s:.2f}")


def pingpong(a):
    """Half round trips at 2 ranks, 1 B .. pingpong_max, through bench/Bench.exe's pingpong pattern:
    native C, this build's System.MP under auto (which spins here), spin and yield, the before
    build's."""
    tail = ["pingpong", None, "1", str(a.pingpong_max), "5", "2", "10000"]
    def cmd(build, prog, transport, env):
        t = list(tail)
        t[1] = transport
        return (["mpiexec.mpich", "-n", "2"] + prog(build) + t, env)
    native = lambda b: [f"{b}/bench/bench_native"]
    motor = lambda b: [f"{b}/motor", f"{b}/bench/Bench.exe"]
    runs = {"native-c": cmd(a.build, native, "native-c", {}),
            "system-mp-spin": cmd(a.build, motor, "system-mp", {"MOTOR_WAIT": "spin"}),
            "system-mp": cmd(a.build, motor, "system-mp", {"MOTOR_WAIT": "auto"}),
            "system-mp-yield": cmd(a.build, motor, "system-mp", {"MOTOR_WAIT": "yield"})}
    if a.before:
        runs["system-mp-before"] = cmd(a.before, motor, "system-mp", {})
    res = benchlib.Results()
    for r in range(a.rounds):
        for name, (argv, env) in runs.items():
            # Bench.exe names its rows after the transport; file them under this variant's name
            part = benchlib.collect({argv[argv.index("pingpong") + 1]: (argv, env)}, 1)
            benchlib.merge(res, part, rename=name)
    names = list(runs)
    benchlib.report(res, names, LABELS, "Ping-pong, 2 ranks (every rank has a core), half round trip",
                    "µs", a.out, "jacobi_pingpong")
    base = "system-mp-before" if a.before else "system-mp-spin"
    sizes = sorted(res.times["system-mp"])
    med = [res.median("system-mp", s) / res.median(base, s) for s in sizes]
    low = [min(res.times["system-mp"][s]) / min(res.times[base][s]) for s in sizes]
    print(f"\nsystem-mp (auto) / {base} per size, of the medians and of the minima (the quiet-machine"
          " latency; the medians carry the noise of a shared machine):")
    for s, m, l in zip(sizes, med, low):
        print(f"  {benchlib.human(s):>8}: medians x{m:.3f}, minima x{l:.3f}")
    geo = lambda xs: statistics.geometric_mean(xs)
    print(f"  geometric mean over the sizes: medians x{geo(med):.3f}, minima x{geo(low):.3f}")


if __name__ == "__main__":
    main()

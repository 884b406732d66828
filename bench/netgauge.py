#!/usr/bin/python3
"""The point-to-point benchmark framework (Netgauge-style): runs one pattern over the chosen
transports, interleaved round after round, and reports a table with ratios to native C, a CSV
file and PNG plots. Run through `bash bench/run.sh PATTERN [flags]`.

Patterns: pingpong, pingping, window, onetomany (1:n), manytoone (n:1), loggp, halo.
Transports: whatever the benchmark programs list (`bench_native --list`, `Bench.exe --list`,
`bench_mpi4py.py --list` when Debian's python3-mpi4py is installed): names, capabilities and
labels live with each transport's code, so a new transport is one file and one registry line."""
import argparse
import os
import statistics
import subprocess

import benchlib

ALIASES = {"1:n": "onetomany", "n:1": "manytoone"}
# pattern: (default min, default max, what is timed)
PATTERNS = {"pingpong": (1, 4 << 20, "half round trip"),
            "pingping": (1, 4 << 20, "time per iteration, both ranks sending at once"),
            "window": (8, 1 << 20, "time per message, windows of 64 non-blocking messages"),
            "onetomany": (1, 1 << 20, "time per round: the server sends to n clients, each acknowledges"),
            "manytoone": (1, 1 << 20, "time per round: n clients send to the server, it acknowledges"),
            "loggp": (1, 256 << 10, "LogGP parameters from PRTT(n, d, s), n = 16"),
            "halo": (64, 64 << 10, "µs per Sendrecv of a halo exchange (7 fields, both directions, "
                     "rank 0 its own neighbour) after a 32 MiB cache sweep")}
NONBLOCKING_PATTERNS = {"pingping", "window", "onetomany", "manytoone"}   # a transport without Isend/Irecv skips them


def registry(build):
    """Every transport the benchmark programs offer, asked of the programs themselves (--list):
    {name: (caps, default, label, command prefix)}. mpi4py joins when Debian's python3-mpi4py and
    Open MPI's launcher are installed."""
    programs = [(["mpiexec.mpich", "-n", "1", f"{build}/bench/bench_native", "--list"],
                 lambda n: ["mpiexec.mpich", "-n", str(n), f"{build}/bench/bench_native"], {}),
                (["mpiexec.mpich", "-n", "1", f"{build}/motor", f"{build}/bench/Bench.exe", "--list"],
                 lambda n: ["mpiexec.mpich", "-n", str(n), f"{build}/motor", f"{build}/bench/Bench.exe"], {})]
    python = benchlib.mpi4py_launcher()
    if python:
        launch, env = python
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpi4py", "bench_mpi4py.py")
        programs.append((launch(1) + [script, "--list"], lambda n: launch(n) + [script], env))
    found = {}
    for listing, prefix, env in programs:
        out = subprocess.run(listing, capture_output=True, text=True, env={**os.environ, **env})
        if out.returncode != 0:
            raise SystemExit(f"cannot list transports: {' '.join(listing)}: {out.stderr.strip()[:300]}")
        for line in out.stdout.splitlines():
            f = line.split(",", 4)
            if len(f) == 5 and f[0] == "transport":
                found[f[1]] = (set(f[2].split("+")), f[3] == "default", f[4], prefix, env)
    return found


def commands(pattern, a, names, transports):
    tail = [str(a.min), str(a.max), str(a.reps), str(a.warmup), str(a.max_iterations)]
    out = {}
    for t in names:
        if t not in transports:
            raise SystemExit(f"unknown transport '{t}' ({', '.join(transports)})")
        caps, default, label, prefix, env = transports[t]
        argv = prefix(a.ranks)
        if a.hosts:   # the same program, started across the hosts instead
            if argv[0] != "mpiexec.mpich":
                raise SystemExit(f"{t} cannot run across hosts (it is not an MPICH program)")
            argv = benchlib.launcher(a, a.ranks) + argv[3:]
        out[t] = (argv + [pattern, t] + tail, env)
    return out


def fit_line(xs, ys):
    """Least squares y = a + b·x: (a, b)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return my - b * mx, b


def loggp_report(res, names, a, labels):
    """Per size: o_s, o_r, T; per transport: o_s, o_r (smallest size), g = T(smallest size),
    G = slope of T(s) (least squares over all sizes), L = PRTT(1,0,s)/2 - o_s - o_r - (s-1)·G."""
    sizes = sorted(res.values["T"]["native-c"])
    med = lambda m, t, s: res.median(t, s, m)
    os.makedirs(a.out, exist_ok=True)
    params = {}
    for t in names:
        s0 = sizes[0]
        _, slope = fit_line(sizes, [med("T", t, s) for s in sizes]) if len(sizes) > 1 else (0, 0)
        o_s, o_r, g = med("os", t, s0), med("or", t, s0), med("T", t, s0)
        latency = med("prtt1", t, s0) / 2 - o_s - o_r - (s0 - 1) * slope
        params[t] = {"o_s": o_s, "o_r": o_r, "g": g, "G": slope, "L": latency}
    with open(os.path.join(a.out, "loggp.csv"), "w") as f:
        f.write("transport,bytes,prtt1_us,os_us,or_us,T_us\n")
        for t in names:
            for s in sizes:
                f.write(f"{t},{s},{med('prtt1', t, s):.4f},{med('os', t, s):.4f},"
                        f"{med('or', t, s):.4f},{med('T', t, s):.4f}\n")
    with open(os.path.join(a.out, "loggp_params.csv"), "w") as f:
        f.write("transport,o_s_us,o_r_us,g_us,G_ns_per_byte,L_us\n")
        for t in names:
            p = params[t]
            f.write(f"{t},{p['o_s']:.4f},{p['o_r']:.4f},{p['g']:.4f},{p['G'] * 1e3:.5f},{p['L']:.4f}\n")

    print(f"\nLogGP, 2 ranks (medians over all runs and repetitions; µs unless stated)\n")
    print(f"{'size':>8} | " + " | ".join(f"{t:^33}" for t in names))
    print(f"{'':>8} | " + " | ".join(f"{'o_s':>10} {'o_r':>10} {'T':>11}" for _ in names))
    for s in sizes:
        print(f"{benchlib.human(s):>8} | " + " | ".join(
            f"{med('os', t, s):10.3f} {med('or', t, s):10.3f} {med('T', t, s):11.3f}" for t in names))
    ref = params["native-c"]
    print(f"\nLogGP parameters (o_s, o_r at {benchlib.human(sizes[0])}; g = T({benchlib.human(sizes[0])}); "
          f"G = slope of T(s) over {benchlib.human(sizes[0])}..{benchlib.human(sizes[-1])}; "
          f"L = PRTT(1,0,s)/2 - o_s - o_r - (s-1)G); xR = ratio to native-c\n")
    print(f"{'transport':<12} | {'o_s (µs)':>14} | {'o_r (µs)':>14} | {'g (µs)':>14} | "
          f"{'G (ns/byte)':>16} | {'L (µs)':>8}")
    for t in names:
        p = params[t]
        cell = lambda k, scale=1.0, w=8: (f"{p[k] * scale:{w}.3f} x{p[k] / ref[k]:.2f}"
                                          if t != "native-c" and ref[k] else f"{p[k] * scale:{w}.3f}      ")
        print(f"{t:<12} | {cell('o_s')} | {cell('o_r')} | {cell('g')} | {cell('G', 1e3, 10)} | "
              f"{p['L']:8.3f}")
    print("\npeak memory per rank (VmHWM, KiB): " + ", ".join(
        f"{t} {max(res.peaks[t]) if res.peaks[t] else '?'}" for t in names))
    png = os.path.join(a.out, "loggp.png")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
        for i, t in enumerate(names):
            color = f"C{i}"
            a1.plot(sizes, [med("os", t, s) for s in sizes], marker="o", ms=3, color=color,
                    label=f"{labels.get(t, t)} o_s")
            a1.plot(sizes, [med("or", t, s) for s in sizes], marker="x", ms=3, ls="--", color=color,
                    label=f"{labels.get(t, t)} o_r")
            a2.plot(sizes, [med("T", t, s) for s in sizes], marker="o", ms=3, color=color,
                    label=f"{labels.get(t, t)}: g={params[t]['g']:.2f} µs, G={params[t]['G'] * 1e3:.3f} ns/B")
        for ax, title in ((a1, "Overhead o(s): send (solid), receive (dashed)"),
                          (a2, "Network transmission T(s) = g + (s-1)G")):
            benchlib.log_axes(ax, title)
            ax.legend(fontsize=6)
        fig.suptitle("LogGP parameters, 2 ranks (median) — Netgauge Fig. 7 style")
        fig.tight_layout()
        fig.savefig(png, dpi=110)
    except ImportError:
        png = "(no plot: python3-matplotlib missing)"
    print(f"\nwrote {a.out}/loggp.csv, {a.out}/loggp_params.csv and {png}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("pattern", help=", ".join(list(PATTERNS) + list(ALIASES)))
    p.add_argument("--build", default="build")
    p.add_argument("--transports", default=None,
                   help="comma-separated (default: all; mpi4py when python3-mpi4py is installed)")
    p.add_argument("--min", type=int, help="smallest message in bytes")
    p.add_argument("--max", type=int, help="largest message in bytes (x2 steps)")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions per size and run")
    p.add_argument("--warmup", type=int, default=1, help="untimed repetitions before them")
    p.add_argument("--rounds", type=int, default=3, help="interleaved runs of every transport")
    p.add_argument("--ranks", type=int, help="processes (default 2; 1:n and n:1: 3 where 3 cores exist)")
    p.add_argument("--max-iterations", type=int, default=0,
                   help="cap on iterations per repetition (default none; 50 when oversubscribed)")
    p.add_argument("--out", default="bench/results")
    benchlib.host_args(p)
    a = p.parse_args()
    pattern = ALIASES.get(a.pattern, a.pattern)
    if pattern not in PATTERNS:
        raise SystemExit(f"unknown pattern '{a.pattern}' ({', '.join(list(PATTERNS) + list(ALIASES))})")
    lo, hi, what = PATTERNS[pattern]
    a.min = lo if a.min is None else a.min
    a.max = hi if a.max is None else a.max
    cores = os.cpu_count() or 1
    if a.ranks is None:
        a.ranks = 3 if pattern in ("onetomany", "manytoone") and cores >= 3 else 2
    if a.ranks > cores:
        print(f"note: {a.ranks} ranks on {cores} cores — MPI busy-polls, so timings measure the "
              f"scheduler as much as the transports", flush=True)
        if a.max_iterations == 0:
            a.max_iterations = 50
    if a.hosts:
        a.build = os.path.abspath(a.build)   # the hosts' processes start from the launcher's view
    transports = registry(a.build)
    labels = {t: v[2] for t, v in transports.items()}
    available = [t for t, v in transports.items() if v[1]]
    names = a.transports.split(",") if a.transports else available
    names = ["native-c"] + [t for t in names if t != "native-c"]
    if pattern in NONBLOCKING_PATTERNS:
        skipped = [t for t in names if t in transports and "nonblocking" not in transports[t][0]]
        if skipped:
            print(f"note: {', '.join(skipped)} skipped: {pattern} needs non-blocking calls", flush=True)
        names = [t for t in names if t not in skipped]
    if "mpi4py" in names and "mpi4py" not in transports:
        raise SystemExit("mpi4py asked for, but /usr/bin/python3 cannot import mpi4py or mpiexec.openmpi "
                         "is missing (Debian: apt-get install python3-mpi4py)")
    if "mpi4py" in names:
        print("note: mpi4py is Debian's python3-mpi4py, built against Open MPI: its ratios compare "
              "Python and another MPI library with native C on MPICH", flush=True)
    elif not a.transports:
        print("note: mpi4py not measured (install python3-mpi4py to add it)", flush=True)
    for where, out in benchlib.settings(a):
        a.out = out
        res = benchlib.collect(commands(pattern, a, names, transports), a.rounds)
        if pattern == "loggp":
            loggp_report(res, names, a, labels)
            continue
        n = a.ranks - 1 if pattern in ("onetomany", "manytoone") else 1
        title = {"pingpong": "Ping-pong", "pingping": "Ping-ping", "window": "Window",
                 "onetomany": f"1:n, n = {n}", "manytoone": f"n:1, n = {n}", "halo": "Halo exchange"}[pattern]
        benchlib.report(res, names, labels, f"{title}, {a.ranks} ranks{where}: {what}", "µs", out,
                        pattern, volume=n)
        if pattern == "halo":
            benchlib.report(res, names, labels, "Halo exchange: µs of the first Sendrecv after the sweep "
                            f"(every code path cold){where}", "µs", out, "halo_first", metric="first")


if __name__ == "__main__":
    main()

"""Shared by the benchmark drivers: run transports interleaved round after round, collect the
CSV rows the benchmark programs print, and report a table with ratios to native C, a CSV file
and a PNG plot.

Programs print rows "TRANSPORT,bytes,rep,iterations,value[,METRIC]" (one per timed repetition and
metric; METRIC defaults to "time", in µs),
"peak,TRANSPORT,rank,kib" (VmHWM), and optionally "pins,TRANSPORT,taken,avoided,operations"."""
import collections
import csv
import os
import statistics
import subprocess
import sys
import time


HOSTS_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "hosts.sh")


def mpi4py_launcher():
    """(argv prefix for n ranks, extra env) to run a Python script under mpi4py, or None when
    Debian's python3-mpi4py (built against Open MPI) or Open MPI's launcher is missing."""
    import shutil
    probe = subprocess.run(["/usr/bin/python3", "-c", "import mpi4py"], capture_output=True)
    if probe.returncode != 0 or not shutil.which("mpiexec.openmpi"):
        return None
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"} if os.geteuid() == 0 else {}
    return (lambda n: ["mpiexec.openmpi", "--oversubscribe", "-n", str(n), "/usr/bin/python3"]), env


def host_args(parser):
    """--hosts and --delay-us: the same runs across separate hosts (scripts/hosts.sh, root)."""
    parser.add_argument("--hosts", type=int, default=0,
                        help="run across this many hosts made as network namespaces (needs root)")
    parser.add_argument("--delay-us", type=float, default=50,
                        help="with --hosts, measure again with this one-way link delay (0: not)")


def launcher(a, ranks):
    """The command that starts `ranks` processes: mpiexec.mpich here, or across a.hosts hosts
    (block order, as few hosts a rank as fit)."""
    if not a.hosts:
        return ["mpiexec.mpich", "-n", str(ranks)]
    return ["bash", HOSTS_SH, "run", "--ppn", str(-(-ranks // a.hosts)), "-n", str(ranks), "--"]


def settings(a):
    """Yields (title suffix, output directory) for each setting to measure: this machine; or
    a.hosts hosts without, then with a.delay_us of delay, each brought up and torn down here."""
    base = a.out   # callers may point a.out at each setting's directory in turn
    if not a.hosts:
        yield "", base
        return
    a.build = os.path.abspath(a.build)   # the hosts' processes start from the launcher's view
    netdelay = os.path.join(a.build, "tests", "netdelay")
    for delay in [0] + ([a.delay_us] if a.delay_us else []):
        up = ["bash", HOSTS_SH, "up", str(a.hosts)]
        if delay:
            if not os.access(netdelay, os.X_OK):
                raise SystemExit(f"a delay needs {netdelay} (built when libnetfilter-queue-dev is "
                                 "installed: bash scripts/install-deps.sh --bench)")
            up += ["--delay", str(delay)]
        subprocess.run(up, check=True, env=dict(os.environ, MOTOR_NETDELAY=netdelay))
        try:
            label = f", across {a.hosts} hosts" + (f", link delay {delay:g} µs" if delay else "")
            yield label, os.path.join(base, f"hosts{a.hosts}" + (f"_delay{delay:g}us" if delay else ""))
        finally:
            subprocess.run(["bash", HOSTS_SH, "down"], check=False)


def standard_args(parser, minimum, maximum, step="x2"):
    """The flags every driver takes (in the style of mpi4py.bench)."""
    parser.add_argument("--build", default="build")
    parser.add_argument("--min", type=int, default=minimum, help="smallest message in bytes")
    parser.add_argument("--max", type=int, default=maximum, help=f"largest message in bytes ({step} steps)")
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions per size and run")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved runs of every transport")
    parser.add_argument("--out", default="bench/results")


class Results:
    """values[metric][transport][bytes] -> samples; `times` is the "time" metric."""

    def __init__(self):
        self.values = collections.defaultdict(
            lambda: collections.defaultdict(lambda: collections.defaultdict(list)))
        self.peaks = collections.defaultdict(list)
        self.pins = collections.defaultdict(lambda: [0, 0, 0])

    @property
    def times(self):
        return self.values["time"]

    def median(self, t, size, metric="time"):
        return statistics.median(self.values[metric][t][size])


def collect(transports, rounds):
    """transports: {name: (argv, extra_env)}; every round runs each once, in order. Rows are
    "TRANSPORT,bytes,rep,iterations,value[,METRIC]" (METRIC defaults to time). A run that lasts
    says which size it has reached."""
    res = Results()
    for r in range(rounds):
        for name, (argv, env) in transports.items():
            print(f"[round {r + 1}/{rounds}] {name} ...", file=sys.stderr, flush=True)
            started, last_size, lines = time.monotonic(), None, []
            with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True,
                                  env=dict(os.environ, **env)) as proc:
                for line in proc.stdout:
                    lines.append(line)
                    row = line.strip().split(",")
                    if len(row) >= 5 and row[0] not in ("peak", "pins", "checked") and row[1] != last_size:
                        last_size = row[1]
                        if time.monotonic() - started > 2:
                            print(f"    {name}: {human(int(row[1]))} ({time.monotonic() - started:.0f} s)",
                                  file=sys.stderr, flush=True)
            if proc.returncode != 0:
                raise SystemExit(f"benchmark failed ({proc.returncode}): {' '.join(argv)}")
            for row in csv.reader(lines):
                if not row:
                    continue
                if row[0] == "peak":
                    res.peaks[name].append(int(row[3]))
                elif row[0] == "pins":
                    for i in range(3):
                        res.pins[name][i] += int(row[2 + i])
                elif row[0] == name or row[0].startswith(name + "-"):
                    metric = row[5] if len(row) > 5 else "time"
                    res.values[metric][row[0]][int(row[1])].append(float(row[4]))
    return res


def merge(into, part, rename=None):
    """Adds part's samples and peaks (a Results) to into's, under rename when given: for drivers
    that call collect once per setting inside their own loop of rounds."""
    for metric, by_transport in part.values.items():
        for t, by_size in by_transport.items():
            for s, v in by_size.items():
                into.values[metric][rename or t][s].extend(v)
    for t, v in part.peaks.items():
        into.peaks[rename or t].extend(v)


def log_axes(ax, title, xlabel="message size (bytes)", ylabel="µs"):
    """The axes every plot here uses: log2 sizes, log values, a light grid."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)


def human(n):
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n} {unit}"
        n //= 1024
    return f"{n} GiB"


def report(res, names, labels, title, unit, out_dir, stem, ref="native-c", size_fmt=None, volume=1, metric="time",
           xlabel="message size (bytes)", bandwidth=True, log=True):
    """volume: payload bytes moved per timed unit, in messages of the row's size (bandwidth);
    metric: which of the rows' metrics the table, CSV and plot show; xlabel: what the sizes are;
    bandwidth: whether a bandwidth panel means anything (sizes in bytes); log: log axes (else
    linear, from 0, for a few small counts such as phases)."""
    times = res.values[metric]
    median = lambda t, s: res.median(t, s, metric)
    size_fmt = size_fmt or human
    sizes = sorted(times[ref])
    os.makedirs(out_dir, exist_ok=True)
    csv_path = os.path.join(out_dir, stem + ".csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["transport", "bytes", "median_us", "min_us", "max_us", "samples",
                    "bandwidth_MBps", "ratio_to_native", "peak_rss_kib"])
        for t in names:
            for s in sizes:
                v = times[t][s]
                m, r = median(t, s), median(ref, s)
                w.writerow([t, s, f"{m:.4f}", f"{min(v):.4f}", f"{max(v):.4f}",
                            len(v), f"{volume * s / m:.1f}" if m > 0 else "",
                            f"{m / r:.3f}" if r > 0 else "",
                            max(res.peaks[t]) if res.peaks[t] else ""])

    print(f"\n{title}\n{unit}: median [min-max] over all runs and repetitions; "
          f"xR = median / {ref} median\n")
    head = f"{'size':>8} | " + " | ".join(f"{t:^30}" for t in names)
    print(head)
    print("-" * len(head))
    for s in sizes:
        cells = []
        for t in names:
            v = times[t][s]
            cell = f"{median(t, s):8.3f} [{min(v):.3f}-{max(v):.3f}]"
            if t != ref and median(ref, s) > 0:
                cell += f" x{median(t, s) / median(ref, s):.2f}"
            cells.append(f"{cell:<30}")
        print(f"{size_fmt(s):>8} | " + " | ".join(cells))
    print("\npeak memory per rank (VmHWM, KiB): " + ", ".join(
        f"{t} {max(res.peaks[t]) if res.peaks[t] else '?'}" for t in names))
    for t in names:
        taken, avoided, ops = res.pins.get(t, (0, 0, 0))
        if ops:
            print(f"pins, {t} (both ranks): {taken} taken, {avoided} avoided, {ops} operations "
                  f"= {taken / ops:.4f} pins per operation")

    png_path = os.path.join(out_dir, stem + ".png")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 2 if bandwidth else 1, figsize=(12, 4.5) if bandwidth else (7, 4.5))
        a1, a2 = (axes[0], axes[1]) if bandwidth else (axes, None)
        for t in names:   # error bars: min-max over every run and repetition
            med = [median(t, s) for s in sizes]
            lo, hi = [min(times[t][s]) for s in sizes], [max(times[t][s]) for s in sizes]
            a1.errorbar(sizes, med, yerr=[[m - l for m, l in zip(med, lo)], [h - m for m, h in zip(med, hi)]],
                        marker="o", ms=3, capsize=2, label=labels.get(t, t))
            if not bandwidth:
                continue
            bw = [volume * s / m for s, m in zip(sizes, med)]
            a2.errorbar(sizes, bw, yerr=[[b - volume * s / h for s, b, h in zip(sizes, bw, hi)],
                                         [volume * s / l - b for s, b, l in zip(sizes, bw, lo)]],
                        marker="o", ms=3, capsize=2, label=labels.get(t, t))
        if log:
            log_axes(a1, "Time", xlabel=xlabel, ylabel=unit)
        else:
            a1.set_xlabel(xlabel)
            a1.set_ylabel(unit)
            a1.set_title("Time")
            a1.set_xticks(sizes, [size_fmt(s) for s in sizes])
            a1.set_ylim(bottom=0)
            a1.grid(True, alpha=0.3)
        if bandwidth:
            log_axes(a2, "Bandwidth", xlabel=xlabel, ylabel="MB/s")
        a1.legend(fontsize=8)
        fig.suptitle(title + " (median)")
        fig.tight_layout()
        fig.savefig(png_path, dpi=110)
    except ImportError:
        png_path = "(no plot: python3-matplotlib missing)"
    print(f"\nwrote {csv_path} and {png_path}")

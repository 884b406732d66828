#!/usr/bin/python3
"""System.MP.Arrays (migratable object arrays) against plain System.MP on the same payload, a graph
Payload { int; double[] } of SIZE bytes of doubles: a message to an element on another rank (ping-pong,
half round trip) against OSend/ORecv; streams to a remote and a local element (per message, windows of
64) against OSends and the serializer copy a local delivery makes; the first message after a migration,
forwarded by the old rank because the sender's cache is stale, against the next one (direct) and an OSend
round trip (3 ranks); a broadcast to every element (+ every element's acknowledgement) against OBcast
(+ an OSend from every rank), a reduction of doubles (Sum, the result to every element, or to every
rank's Completed handler) against Allreduce<double>, at 2..5 ranks; migration of an element with 1 KiB..1 MiB of state against an OSend of
the same double[] (per migration and per KiB).
Every array figure is timed inside one Scheduler.Run, from the first send to the receipt that ends a
chain of many operations (bench/Arrays.cs says why). Run through `bash bench/run.sh arrays [flags]`."""
import argparse
import os
import re
import statistics
import subprocess
import sys

import benchlib

PARTS = ("pingpong", "stream", "forward", "collectives", "migrate", "sample")
LABELS = {
    "osend": "OSend/ORecv ping-pong (plain System.MP)",
    "element": "element 0 (rank 0) <-> element 1 (rank 1)",
    "osend-stream": "64 OSends + ack (plain System.MP)",
    "remote-stream": "64 messages to an element on the other rank + ack",
    "local-stream": "64 messages to an element on the same rank + ack",
    "copy": "Serializer.Serialize + Deserialize (a local delivery's copy)",
    "fwd-osend": "OSend/ORecv round trip 0 <-> 2",
    "fwd-direct": "round trip, sender's cache fresh",
    "fwd-stale": "round trip, first message after a migration (forwarded)",
    "obcast": "OBcast + OSend ack from every rank",
    "array-bcast": "array Broadcast + Send ack from every element",
    "allreduce": "Allreduce<double> (Sum)",
    "array-reduce": "array reduction (Sum), result broadcast to every element",
    "array-reduce-event": "array reduction (Sum), next from Reduction.Completed (no result broadcast)",
    "state-osend": "OSend/ORecv of the state (half round trip)",
    "migrate": "element migration (MigrateTo)",
    "unbalanced": "ObjectArrays, Block placement only",
    "balanced": "ObjectArrays, greedy Balance between phases",
}
TARGET = 1.3   # the target: a message to a remote element <= 1.3x a plain OSend of the same graph
SAMPLE_TARGET = 1.5   # and the sample's balanced run >= 1.5x faster than the unbalanced one at 4 ranks


def messages(res, names, fmt):
    """The scheduler's messages per operation, all ranks together (Scheduler.MessagesSent)."""
    m = res.values["messages"]
    rows = [f"{t}: " + ", ".join(f"{fmt(s)} {statistics.median(v):.2f}" for s, v in sorted(m[t].items()))
            for t in names if m.get(t)]
    if rows:
        print("array messages per operation (all ranks, median): " + "; ".join(rows))


def sample(a, cores):
    """The object-array sample (samples/object_arrays), once per round: its time per phase without
    and with balancing, and the gain after the first phase (which both runs spend unbalanced while
    the loads are measured; the balancing's own time is counted)."""
    ranks = a.sample_ranks
    if ranks > cores:
        print(f"note: {ranks} ranks on {cores} cores (oversubscribed): the balanced run can gain at most "
              "what an even split over the cores gives; the sample prints the measured loads", flush=True)
    argv = ["mpiexec.mpich", "-n", str(ranks), f"{a.build}/motor", f"{a.build}/ObjectArrays.exe"] + a.sample_args.split()
    res, gains, wholes, contrasts = benchlib.Results(), [], [], []
    for r in range(a.rounds):
        print(f"[round {r + 1}/{a.rounds}] sample ...", file=sys.stderr, flush=True)
        job = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out = job.stdout
        sys.stderr.write(job.stderr)
        if job.returncode != 0:   # the job's own words (a crash report, an exception) say why
            raise SystemExit(f"arrays.py: {' '.join(argv)} ended with status {job.returncode}; "
                             f"its output:\n{out}\nits errors:\n{job.stderr}")
        run, phases = None, {"unbalanced": [], "balanced": []}
        for line in out.splitlines():
            if line.startswith("without balancing"):
                run = "unbalanced"
            elif line.startswith("with balancing"):
                run = "balanced"
            m = re.match(r"\s+phase (\d+): ([\d.]+) s", line)
            if m and run:
                phases[run].append(float(m.group(2)))
                res.times[run][int(m.group(1)) + 1].append(float(m.group(2)))
                c = re.search(r"contrast ([\d.]+)x", line)
                if c and run == "unbalanced":
                    contrasts.append(float(c.group(1)))
            m = re.search(r"after the first phase \(balance included\) ([\d.]+) s unbalanced, ([\d.]+) s balanced: "
                          r"[\d.]+x; whole run ([\d.]+)x", line)
            if m:   # (a run too short for the sample's millisecond figures has no gain to report)
                gains.append(float(m.group(1)) / float(m.group(2)) if float(m.group(2)) > 0 else float("nan"))
                wholes.append(float(m.group(3)))
            m = re.match(r"peak memory per rank \(VmHWM, MiB\): (.*)", line)
            if m:
                for t in phases:
                    res.peaks[t].extend(int(float(x) * 1024) for x in m.group(1).split())
        if not gains or len(gains) != r + 1:
            raise SystemExit("arrays.py: the sample printed no comparison:\n" + out)
    benchlib.report(res, ["unbalanced", "balanced"], LABELS,
                    f"ObjectArrays sample at {ranks} ranks ({' '.join(a.sample_args.split()) or 'defaults'}): time per phase",
                    "s per phase", a.out, "arrays_sample", ref="unbalanced", size_fmt=lambda p: f"phase {p - 1}",
                    xlabel="phase", bandwidth=False, log=False)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "arrays_sample_gain.csv"), "w") as f:
        f.write("round,gain_after_first_phase,gain_whole_run\n")
        for i, (g, w) in enumerate(zip(gains, wholes)):
            f.write(f"{i + 1},{g:.4f},{w:.4f}\n")
    spread = lambda v: f"{statistics.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]"
    if contrasts:
        print(f"heavy block against light block, measured (unbalanced phases): {spread(contrasts)}x")
    g = statistics.median(gains)
    print(f"balanced run faster than unbalanced, after the first phase: {spread(gains)}x over {len(gains)} runs; "
          f"whole run {spread(wholes)}x")
    print(f"target: the balanced run >= {SAMPLE_TARGET}x faster at 4 ranks: median {g:.2f}x "
          f"{'met' if g >= SAMPLE_TARGET else 'NOT met'}" + ("" if ranks == 4 else f" (this run: {ranks} ranks)"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--sizes", default="8,1024,65536",
                   help="payload sizes in bytes of doubles (1, 128, 8192 doubles)")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions per size and run")
    p.add_argument("--rounds", type=int, default=3, help="interleaved runs of every transport")
    p.add_argument("--target-ms", type=float, default=100,
                   help="length of one timed repetition: operations per repetition are calibrated to it")
    p.add_argument("--ranks", default="2,3,4,5", help="rank counts for broadcast and reduction")
    p.add_argument("--per-rank", type=int, default=1, help="elements per rank in broadcast and reduction")
    p.add_argument("--bcast-bytes", type=int, default=8, help="broadcast payload in bytes of doubles")
    p.add_argument("--migrate-min", type=int, default=1024, help="smallest element state in bytes")
    p.add_argument("--migrate-max", type=int, default=1 << 20, help="largest element state in bytes (x4 steps)")
    p.add_argument("--sample-ranks", type=int, default=4, help="ranks of the sample part")
    p.add_argument("--sample-args", default="", help="arguments for ObjectArrays.exe in the sample part")
    p.add_argument("--parts", default=",".join(PARTS), help="comma-separated subset of " + ",".join(PARTS))
    p.add_argument("--out", default="bench/results")
    a = p.parse_args()
    b = a.build
    parts = a.parts.split(",")
    for part in parts:
        if part not in PARTS:
            raise SystemExit(f"arrays.py: unknown part {part} (one of {','.join(PARTS)})")
    exe = [f"{b}/motor", f"{b}/bench/Arrays.exe"]
    common = [str(a.reps), str(a.target_ms)]
    cores = os.cpu_count() or 1

    def run(n, mode, t, sizes, extra=()):
        return (["mpiexec.mpich", "-n", str(n)] + exe + [mode, t, sizes] + common + list(extra), {})

    human = lambda n: benchlib.human(n)
    if "pingpong" in parts:
        names = ["osend", "element"]
        res = benchlib.collect({t: run(2, "pingpong", t, a.sizes) for t in names}, a.rounds)
        benchlib.report(res, names, LABELS, "Message to an element on another rank: ping-pong, half round trip",
                        "µs", a.out, "arrays_pingpong", ref="osend", size_fmt=human,
                        xlabel="payload (bytes of doubles in the graph)", bandwidth=False)
        verdicts = []
        for s in sorted(res.times["osend"]):
            ratio = res.median("element", s) / res.median("osend", s)
            verdicts.append(f"{human(s)} x{ratio:.2f} {'met' if ratio <= TARGET else 'NOT met'}")
        messages(res, names, human)
        print(f"target: a message to a remote element <= {TARGET}x a plain OSend of the same graph: " + ", ".join(verdicts))

    if "stream" in parts:
        names = ["osend-stream", "remote-stream", "local-stream", "copy"]
        cmds = {t: run(2, "stream", t, a.sizes) for t in names[:3]}
        cmds["copy"] = run(1, "stream", "copy", a.sizes)
        res = benchlib.collect(cmds, a.rounds)
        benchlib.report(res, names, LABELS, "Streams to an element (windows of 64, acknowledged), per message",
                        "µs", a.out, "arrays_stream", ref="osend-stream", size_fmt=human,
                        xlabel="payload (bytes of doubles in the graph)", bandwidth=False)
        messages(res, names, human)

    if "forward" in parts:
        if cores < 3:
            print(f"note: the forwarding case needs 3 ranks; this machine has {cores} cores, so a third "
                  "rank shares a core (the array's scheduler yields its core while it waits)", flush=True)
        names = ["fwd-osend", "fwd-direct", "fwd-stale"]
        res = benchlib.collect({"fwd": run(3, "forward", "fwd", a.sizes)}, a.rounds)
        res.peaks = {t: res.peaks.get("fwd", []) for t in names}
        benchlib.report(res, names, LABELS, "First message after a migration (3 ranks), round trip",
                        "µs", a.out, "arrays_forward", ref="fwd-osend", size_fmt=human,
                        xlabel="payload (bytes of doubles in the graph)", bandwidth=False)
        print("the forward's cost (stale - direct, medians): " + ", ".join(
            f"{human(s)} {res.median('fwd-stale', s) - res.median('fwd-direct', s):+.2f} µs "
            f"(x{res.median('fwd-stale', s) / res.median('fwd-direct', s):.2f})" for s in sorted(res.times["fwd-direct"])))

    if "collectives" in parts:
        ranks = [int(r) for r in a.ranks.split(",")]
        if max(ranks) > cores:
            print(f"note: this machine has {cores} cores: from {cores + 1} ranks on, MPI's busy-polling ranks "
                  "share cores, so those rows measure the OS scheduler as much as the operations "
                  "(the array's scheduler yields its core while it waits, plain MPI spins)", flush=True)
        names = ["obcast", "array-bcast", "allreduce", "array-reduce", "array-reduce-event"]
        res = benchlib.Results()
        for n in ranks:
            print(f"--- {n} ranks", flush=True)
            benchlib.merge(res, benchlib.collect({t: run(n, "collective", t, str(a.bcast_bytes), [str(a.per_rank)])
                                                  for t in names}, a.rounds))
        per = f" ({a.per_rank} per rank)"
        ranks_fmt = lambda n: f"{n} ranks"
        benchlib.report(res, names[:2], LABELS, f"Broadcast of {human(a.bcast_bytes)} to every element + acks{per}",
                        "µs per broadcast", a.out, "arrays_bcast",
                        ref="obcast", size_fmt=ranks_fmt, xlabel="ranks", bandwidth=False)
        messages(res, names[:2], ranks_fmt)
        benchlib.report(res, names[2:], LABELS, f"Reduction of a double per element, Sum{per}",
                        "µs per reduction", a.out, "arrays_reduce", ref="allreduce",
                        size_fmt=ranks_fmt, xlabel="ranks", bandwidth=False)
        messages(res, names[2:], ranks_fmt)

    if "migrate" in parts:
        sizes, s = [], a.migrate_min
        while s <= a.migrate_max:
            sizes.append(s)
            s *= 4
        names = ["state-osend", "migrate"]
        res = benchlib.collect({t: run(2, "migrate", t, ",".join(map(str, sizes))) for t in names}, a.rounds)
        benchlib.report(res, names, LABELS, "Migration of an element with a double[] of state, per migration",
                        "µs", a.out, "arrays_migrate", ref="state-osend", size_fmt=human,
                        xlabel="element state (bytes)", bandwidth=False)
        messages(res, names, human)
        benchlib.report(res, names, LABELS, "Migration cost per KiB of element state", "µs/KiB", a.out,
                        "arrays_migrate_perkib", ref="state-osend", size_fmt=human, metric="perkib",
                        xlabel="element state (bytes)", bandwidth=False)

    if "sample" in parts:
        sample(a, cores)


if __name__ == "__main__":
    main()

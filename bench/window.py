#!/usr/bin/python3
"""Window: non-blocking throughput. Rank 0 posts 64 Isends, rank 1 64 Irecvs, both wait for
all, then one acknowledgement; time per message. Native C MPICH (reference), C# System.MP with
its generation-aware pin policy, System.MP pinning every transfer (MOTOR_PIN_POLICY=every: the
cost the policy saves), and the C# P/Invoke baseline (a GCHandle per request, MPI.NET style).
Run through `bash bench/run.sh window [flags]`."""
import argparse

import benchlib

LABELS = {"native-c": "native C (MPICH)", "system-mp": "C# System.MP (generational pins)",
          "system-mp-every": "C# System.MP, pin every transfer",
          "pinvoke": "C# P/Invoke + GCHandle (baseline)"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    benchlib.standard_args(p, 8, 1 << 20, "x4")
    p.add_argument("--transports", default=",".join(LABELS))
    a = p.parse_args()
    b, sizes = a.build, [str(a.min), str(a.max), str(a.reps)]
    mpi = ["mpiexec.mpich", "-n", "2"]
    cs = mpi + [f"{b}/motor", f"{b}/bench/Window.exe"]
    commands = {
        "native-c": (mpi + [f"{b}/bench/window_native"] + sizes, {}),
        "system-mp": (cs + ["system-mp"] + sizes, {}),
        "system-mp-every": (cs + ["system-mp-every"] + sizes, {"MOTOR_PIN_POLICY": "every"}),
        "pinvoke": (cs + ["pinvoke"] + sizes, {}),
    }
    names = ["native-c"] + [t for t in a.transports.split(",") if t != "native-c"]
    res = benchlib.collect({t: commands[t] for t in names}, a.rounds)
    benchlib.report(res, names, LABELS, "Window of 64 non-blocking messages, 2 ranks, per message",
                    "µs", a.out, "window")


if __name__ == "__main__":
    main()

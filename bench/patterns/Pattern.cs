// Pattern — a communication pattern of the benchmark framework (Netgauge's split): what is sent
// to whom and what is timed. Written once, run over every Transport (bench/transports/).
// Rank 0 reports; each Repetition emits one or more metrics (µs unless the name says otherwise).
using System;
using System.Collections.Generic;
using System.Diagnostics;

abstract class Pattern
{
    public abstract string Name { get; }
    public virtual int MinRanks => 2;
    public virtual TransportCaps Requires => TransportCaps.Blocking;
    /// <summary>Iterations per timed repetition (bench_iterations() in C, the same rule).</summary>
    public virtual int Iterations(long bytes) => BenchCommon.Iterations(bytes);
    /// <summary>Allocates this size's messages (outside the timed region).</summary>
    public abstract void Prepare(Context c, long bytes);
    public abstract void Repetition(Context c, long bytes, int iterations);

    public static Pattern Create(string name)
    {
        switch (name) {
        case "pingpong": return new PingPong();
        case "pingping": return new PingPing();
        case "onetomany": return new OneToMany();
        case "manytoone": return new ManyToOne();
        case "window": return new Window();
        case "loggp": return new LogGP();
        case "halo": return new Halo();
        default:
            throw new ArgumentException(
                "unknown pattern '" + name +
                "' (pingpong, pingping, onetomany, manytoone, window, loggp, halo)");
        }
    }
}

/// <summary>1:n and n:1: rank 0 serves ranks 1..n with messages and 1-byte acknowledgements,
/// non-blocking at the server; metrics are time per round and aggregate MB/s (n·s
/// / time).</summary>
abstract class ServerPattern : Pattern
{
    protected object[] messages, acks;
    public override TransportCaps Requires => TransportCaps.Blocking | TransportCaps.NonBlocking;
    public override int Iterations(long bytes) => BenchCommon.Iterations(bytes * 2) / 2 + 5;

    public override void Prepare(Context c, long bytes)
    {
        int n = c.Rank == 0 ? c.Size - 1 : 1;   // the server keeps one of each per client
        messages = new object[n];
        acks = new object[n];
        for (int k = 0; k < n; k++) {
            messages[k] = c.T.NewMessage(bytes);
            acks[k] = c.T.NewMessage(1);
        }
        c.T.ReserveSlots(2 * n);
    }

    public override void Repetition(Context c, long bytes, int iterations)
    {
        long t0 = Context.Now();
        for (int i = 0; i < iterations; i++) {
            if (c.Rank == 0)
                Serve(c, bytes, i);
            else
                Client(c, bytes, i);
        }
        double us = Context.Microseconds(t0, Context.Now()) / iterations;
        c.Emit("time", us);
        c.Emit("MBps", (c.Size - 1) * bytes / us);
    }

    protected abstract void Serve(Context c, long bytes, int iteration);
    protected abstract void Client(Context c, long bytes, int iteration);
}

/// <summary>What a pattern sees of the run: the transport, who it is, the metrics it reports
/// and, in --check mode, the data checks (seeded stamps, verified on receipt).</summary>
sealed class Context
{
    public readonly Transport T;
    public readonly int Rank, Size;
    public readonly bool Check;
    public long Verified;   // messages whose every payload byte was checked
    public readonly List<KeyValuePair<string, double>> Metrics =
        new List<KeyValuePair<string, double>>();

    public Context(Transport t, int rank, int size, bool check)
    {
        T = t;
        Rank = rank;
        Size = size;
        Check = check;
    }

    public void Emit(string metric,
                     double value) => Metrics.Add(new KeyValuePair<string, double>(metric, value));

    /// <summary>The seed of the message <paramref name="sender"/> sends in
    /// this iteration/slot.</summary>
    public static int Seed(int sender, int iteration,
                           int slot = 0) => sender * 7919 + iteration * 67 + slot;

    public void Stamp(object m, int seed)
    {
        if (Check)
            T.Stamp(m, seed);
    }

    public void Verify(object m, long bytes, int seed)
    {
        if (!Check)
            return;
        long intact = T.Verify(m, seed);
        if (intact != bytes)
            throw new InvalidOperationException(
                $"rank {Rank}: message (seed {seed}) of {bytes} bytes arrived wrong ({T.Name})");
        Verified++;
    }

    static readonly double TicksPerMicrosecond = Stopwatch.Frequency / 1e6;
    public static long Now() => Stopwatch.GetTimestamp();
    public static double Microseconds(long from, long to) => (to - from) / TicksPerMicrosecond;

    /// <summary>Busy-waits <paramref name="us"/> µs: LogGP's inter-message delay is CPU time on
    /// purpose (a sleep would let the scheduler in).</summary>
    public static void Delay(double us)
    {
        long until = Stopwatch.GetTimestamp() + (long)(us * TicksPerMicrosecond);
        while (Stopwatch.GetTimestamp() < until) { }
    }
}

// Arrays — System.MP.Arrays (migratable object arrays, issue 15) against plain System.MP on the
// same payload: an object graph Payload { int Serial; double[] Data } of SIZE bytes of doubles.
//   mpiexec.mpich -n 2 motor Arrays.exe pingpong osend|element SIZES REPS TARGET_MS
//     half round trip: element 0 (rank 0) <-> element 1 (rank 1), against OSend/ORecv
//   mpiexec.mpich -n 2 motor Arrays.exe stream osend-stream|remote-stream|local-stream SIZES REPS
//   TARGET_MS mpiexec.mpich -n 1 motor Arrays.exe stream copy SIZES REPS TARGET_MS
//     per message of a stream in windows of 64 (the receiver acknowledges each window): element 0
//     -> element 1 on rank 1 (remote) or element 2 on rank 0 (local), against 64 OSends rank 0 ->
//     1 and an OSend back; "copy" is what a local delivery must do at least (Serializer.Serialize
//     + Deserialize of the message: its own copy)
//   mpiexec.mpich -n 3 motor Arrays.exe forward fwd SIZES REPS TARGET_MS
//     rows fwd-stale, fwd-direct, fwd-osend: round trip (message + reply) of the first message to
//     an element that just migrated 1 <-> 2, sent from rank 0 whose cache is stale (forwarded by
//     the old rank), then of the next (direct), and a plain OSend round trip 0 <-> 2
//   mpiexec.mpich -n P motor Arrays.exe collective
//   array-bcast|obcast|array-reduce|array-reduce-event|allreduce BYTES REPS TARGET_MS [PER_RANK]
//     per operation, rows keyed by P (the rank count): a broadcast to every element followed by
//     every element's acknowledgement to element 0 (OBcast + an OSend from every rank to 0), and a
//     reduction (every element contributes 1.0, Sum, the result broadcast to every element, which
//     contributes to the next) against Allreduce<double>; array-reduce-event: the same, the next
//     contribution made from each rank's Reduction.Completed handler (no result broadcast)
//   mpiexec.mpich -n 2 motor Arrays.exe migrate migrate|state-osend SIZES REPS TARGET_MS
//     an element with a double[] of SIZE bytes migrating 0 -> 1 -> 0 ..., time per migration
//     (metric "time") and per KiB of state ("perkib"), against a half round trip of OSend/ORecv of
//     the same double[] in an object
// Rows: "TRANSPORT,size,rep,iterations,value[,METRIC]" (bench/benchlib.py),
// "peak,TRANSPORT,rank,kib"; array transports add METRIC "messages": their schedulers' messages per
// operation, all ranks together.
//
// Termination and timing. Scheduler.Run returns at global quiescence, found by waves of
// Iallreduce after the last message: tens of µs at 2 ranks, milliseconds when ranks are
// oversubscribed — longer than what is measured. So every array measurement is a chain of many
// operations inside ONE Run, timed with Stopwatch inside the entry methods on rank 0, from just
// before the first send to the receipt that ends the chain; the Run's final quiescence detection
// is outside the timed span (the waves that run *during* the chain, whenever a rank is idle, are
// inside it: that is the scheduler's real cost). The number of operations per repetition is
// calibrated so that one repetition lasts about TARGET_MS (the same for every transport, agreed
// from rank 0's clock), after a warm-up repetition.
using System;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.MP;
using System.MP.Arrays;
using System.Threading;

public class Payload
{
    public int Serial;
    [Transportable]
    public double[] Data;

    public static Payload Of(int bytes)
    {
        var p = new Payload { Serial = 7, Data = new double[Math.Max(1, bytes / 8)] };
        for (int i = 0; i < p.Data.Length; i++)
            p.Data[i] = i * 0.5;
        return p;
    }

    public void Check(int bytes)
    {
        int n = Math.Max(1, bytes / 8);
        if (Serial != 7 || Data == null || Data.Length != n || Data[n - 1] != (n - 1) * 0.5)
            throw new Exception($"payload of {bytes} bytes arrived wrong");
    }
}

public class AckMsg
{
    public int From;
}

public class StateMsg
{
    [Transportable]
    public double[] State;
}

/// <summary>Ping-pong: element 0 on rank 0 serves, element 1 on rank 1 returns the ball.</summary>
public class Pinger : Element<int>
{
    public static int Iters, Bytes, Count;
    public static long End;

    public void Serve(Payload p)
    {
        Count = 0;
        Send(1, nameof(Ball), p);
    }

    [EntryMethod]
    public void Ball(Payload p)
    {
        if (Index == 1) {
            Send(0, nameof(Ball), p);
            return;
        }
        if (++Count < Iters) {
            Send(1, nameof(Ball), p);
            return;
        }
        End = Stopwatch.GetTimestamp();
        p.Check(Bytes);
    }
}

/// <summary>Streams: element 0 pours windows of W messages into element 1 (rank 1) or 2 (rank
/// 0); the receiver acknowledges each window, element 0 then sends the next.</summary>
public class Streamer : Element<int>
{
    public const int W = 64;
    public static int Windows, Bytes, Sent;
    public static long End;
    public static Payload P;
    public int Got;

    public void Pour(int to)
    {
        Sent = 0;
        Window(to);
    }

    void Window(int to)
    {
        for (int i = 0; i < W; i++)
            Send(to, nameof(Take), P);
    }

    [EntryMethod]
    public void Take(Payload p)
    {
        if (++Got < W)
            return;
        Got = 0;
        p.Check(Bytes);
        Send(0, nameof(Ack), Index);
    }

    [EntryMethod]
    public void Ack(int from)
    {
        if (++Sent < Windows)
            Window(from);
        else
            End = Stopwatch.GetTimestamp();
    }
}

/// <summary>Forwarding: element 0 (rank 0) moves element Target between ranks 1 and 2, then
/// pings it twice — first with rank 0's cache stale (the old rank forwards),
/// then direct.</summary>
public class Fwd : Element<int>
{
    public static int Target, Iters, Done, Bytes;
    public static long T0, Stale, Direct;
    public static Payload P;
    static bool stalePhase;

    public void Go() { Send(Target, nameof(Move)); }

    [EntryMethod]
    public void Move() { MigrateTo(Rank == 1 ? 2 : 1); }

    protected override void OnMigrated() { Send(0, nameof(Arrived)); }

    [EntryMethod]
    public void Arrived()
    {
        stalePhase = true;
        T0 = Stopwatch.GetTimestamp();
        Send(Target, nameof(Ping), P);
    }

    [EntryMethod]
    public void Ping(Payload p) { Send(0, nameof(Pong), p); }

    [EntryMethod]
    public void Pong(Payload p)
    {
        long t = Stopwatch.GetTimestamp();
        if (stalePhase) {
            Stale += t - T0;
            stalePhase = false;
            T0 = Stopwatch.GetTimestamp();
            Send(Target, nameof(Ping), p);
            return;
        }
        Direct += t - T0;
        p.Check(Bytes);
        if (++Done < Iters)
            Go();
    }
}

/// <summary>Collectives: K elements per rank; broadcast + acknowledgements, or
/// chained reductions.</summary>
public class Coll : Element<int>
{
    public static int Total, Iters, Bytes;
    public static long End;
    public static Payload P;
    public static Reduction<double> Sum;
    int acks, round;

    public void Kick()
    {
        round = 0;
        acks = 0;
        Broadcast(nameof(Tick), P);
    }

    [EntryMethod]
    public void Tick(Payload p)
    {
        if (Index == 0)
            p.Check(Bytes);
        Send(0, nameof(Ack));
    }

    [EntryMethod]
    public void Ack()
    {
        if (++acks < Total)
            return;
        acks = 0;
        if (++round < Iters)
            Broadcast(nameof(Tick), P);
        else
            End = Stopwatch.GetTimestamp();
    }

    public void Begin()
    {
        round = 0;
        Contribute(Sum, 1.0);
    }

    /// <summary>array-reduce-event: the next contribution from the rank's Completed handler
    /// (no result broadcast to the elements).</summary>
    public void Completed(double sum)
    {
        if (sum != Total)
            throw new Exception($"reduction gave {sum}, not {Total}");
        if (++round < Iters)
            Contribute(Sum, 1.0);
        else if (Index == 0)
            End = Stopwatch.GetTimestamp();
    }

    [EntryMethod]
    public void Next(double sum)
    {
        if (sum != Total)
            throw new Exception($"reduction gave {sum}, not {Total}");
        if (++round < Iters)
            Contribute(Sum, 1.0);
        else if (Index == 0)
            End = Stopwatch.GetTimestamp();
    }
}

/// <summary>Migration: an element with State bytes of doubles hopping between ranks 0
/// and 1.</summary>
public class Mover : Element<int>
{
    public static int Target;
    public static long End;
    [Transportable]
    public double[] State;
    public int Hops;

    [EntryMethod]
    public void Hop() { MigrateTo(1 - Rank); }

    protected override void OnMigrated()
    {
        if (++Hops < Target)
            Send(Index, nameof(Hop));
        else
            End = Stopwatch.GetTimestamp();
    }
}

static class ArraysBench
{
    static readonly Intracomm world = MP.World;
    static readonly int rank = world.Rank;
    static readonly double tick = 1.0 / Stopwatch.Frequency;

    static double Seconds(long t0, long t1) => (t1 - t0) * tick;

    /// <summary>Messages all ranks' schedulers sent during the last array measurement
    /// (−1: none).</summary>
    static long lastMessages = -1;

    static void Counted(Scheduler s, long before) => lastMessages =
        world.Allreduce(s.MessagesSent - before, Op.Sum);

    /// <summary>The plain System.MP reference: n round trips of graph between ranks 0 and 1
    /// by OSend/ORecv; agreed seconds, and the graph as it last arrived.</summary>
    static double OSendPingPong<T>(T graph, int n, out T last)
    {
        world.Barrier();
        long t0 = Stopwatch.GetTimestamp();
        T q = graph;
        for (int i = 0; i < n; i++) {
            if (rank == 0) {
                world.OSend(q, 1, 0);
                q = world.ORecv<T>(1, 0);
            } else {
                q = world.ORecv<T>(0, 0);
                world.OSend(q, 0, 0);
            }
        }
        long t1 = Stopwatch.GetTimestamp();
        last = q;
        return Agree(world, Seconds(t0, t1));
    }

    /// <summary>Rank 0's value on every rank of c (so every rank takes the
    /// same decisions).</summary>
    static double Agree(Intracomm c,
                        double seconds) => c.Allreduce(c.Rank == 0 ? seconds : 0.0, Op.Max);

    /// <summary>Iterations so that measure(n) (collective over the ranks that call it, agreed
    /// seconds) lasts about target seconds; after a warm-up.</summary>
    static int Calibrate(Func<int, double> measure, double target, int max)
    {
        int n = 2;
        measure(n);
        while (true) {
            double t = measure(n);
            if (t >= target / 8 || n >= max)
                return (int)Math.Max(3, Math.Min(max, t > 0 ? n * target / t : max));
            n = Math.Min(max, n * 4);
        }
    }

    /// <summary>Calibrates, then prints reps rows of unit-per-operation (divisor operations
    /// per iteration).</summary>
    static void Measure(string name, long size, Func<int, double> measure, double target, int max,
                        int reps, double perIteration, double kib = 0)
    {
        int n = Calibrate(measure, target, max);
        for (int rep = 0; rep < reps; rep++) {
            lastMessages = -1;
            double us = measure(n) * 1e6 / (n * perIteration);
            if (rank != 0)
                continue;
            Console.WriteLine($"{name},{size},{rep},{n},{us:F4}");
            if (kib > 0)
                Console.WriteLine($"{name},{size},{rep},{n},{us / kib:F5},perkib");
            if (lastMessages >= 0)
                Console.WriteLine(
                    $"{name},{size},{rep},{n},{lastMessages / (n * perIteration):F3},messages");
        }
    }

    static int[] Sizes(string list) => list.Split(',').Select(int.Parse).ToArray();

    static int Main(string[] args)
    {
        Thread.CurrentThread.CurrentCulture = CultureInfo.InvariantCulture;
        string mode = args[0], name = args[1];
        int reps = int.Parse(args[3]);
        double target = double.Parse(args[4]) / 1000;
        switch (mode) {
        case "pingpong": PingPong(name, Sizes(args[2]), reps, target); break;
        case "stream": Stream(name, Sizes(args[2]), reps, target); break;
        case "forward": Forward(Sizes(args[2]), reps, target); break;
        case "collective":
            Collective(name, int.Parse(args[2]), reps, target,
                       args.Length > 5 ? int.Parse(args[5]) : 1);
            break;
        case "migrate": Migrate(name, Sizes(args[2]), reps, target); break;
        default: throw new ArgumentException("unknown mode " + mode);
        }
        Console.WriteLine($"peak,{name},{rank},{BenchCommon.PeakRssKib()}");
        return 0;
    }

    // ---------------------------------------------------------------- ping-pong

    static void PingPong(string name, int[] sizes, int reps, double target)
    {
        if (world.Size != 2)
            throw new ArgumentException("pingpong: 2 ranks");
        Scheduler s = name == "element" ? new Scheduler(world) : null;
        ObjectArray<int, Pinger> a =
            s == null
                ? null
                : ObjectArray<int, Pinger>.Create(s, new[] { 0, 1 }, i => new Pinger(), i => i);
        foreach (int bytes in sizes) {
            Payload p = Payload.Of(bytes);
            Pinger.Bytes = bytes;
            Func<int, double> measure;
            if (s == null) {
                measure = n =>
                {
                    Payload q;
                    double seconds = OSendPingPong(p, n, out q);
                    q.Check(bytes);
                    return seconds;
                };
            } else {
                measure = n =>
                {
                    Pinger.Iters = n;
                    world.Barrier();
                    long t0 = Stopwatch.GetTimestamp();
                    long before = s.MessagesSent;
                    Pinger first;
                    if (rank == 0 && a.TryGetLocal(0, out first))
                        first.Serve(p);
                    s.Run();
                    Counted(s, before);
                    if (rank == 0 && Pinger.Count != n)
                        throw new Exception("the ping-pong lost the ball");
                    return Agree(world, Seconds(t0, Pinger.End));
                };
            }
            Measure(name, bytes, measure, target, 100000, reps, 2);
        }
        if (s != null)
            s.Dispose();
    }

    // ---------------------------------------------------------------- streams

    static void Stream(string name, int[] sizes, int reps, double target)
    {
        bool array = name == "remote-stream" || name == "local-stream";
        if (name == "copy" ? world.Size != 1 : world.Size != 2)
            throw new ArgumentException("stream: 2 ranks (copy: 1)");
        Scheduler s = array ? new Scheduler(world) : null;
        ObjectArray<int, Streamer> a =
            s == null ? null
                      : ObjectArray<int, Streamer>.Create(s, new[] { 0, 1, 2 }, i => new Streamer(),
                                                          i => i == 1 ? 1 : 0);
        var ack = new AckMsg();
        const int w = Streamer.W;
        foreach (int bytes in sizes) {
            Payload p = Payload.Of(bytes);
            Streamer.Bytes = bytes;
            Streamer.P = p;
            Func<int, double> measure;
            if (name == "copy") {
                measure = n =>
                {
                    long t0 = Stopwatch.GetTimestamp();
                    Payload q = null;
                    for (int i = 0; i < n * w; i++) {
                        byte[] b = Serializer.Serialize(p);
                        q = Serializer.Deserialize<Payload>(b, 0, b.Length);
                    }
                    long t1 = Stopwatch.GetTimestamp();
                    q.Check(bytes);
                    return Seconds(t0, t1);
                };
            } else if (!array) {
                measure = n =>
                {
                    world.Barrier();
                    long t0 = Stopwatch.GetTimestamp();
                    for (int k = 0; k < n; k++) {
                        if (rank == 0) {
                            for (int i = 0; i < w; i++)
                                world.OSend(p, 1, 0);
                            world.ORecv<AckMsg>(1, 1);
                        } else {
                            Payload q = null;
                            for (int i = 0; i < w; i++)
                                q = world.ORecv<Payload>(0, 0);
                            q.Check(bytes);
                            world.OSend(ack, 0, 1);
                        }
                    }
                    return Agree(world, Seconds(t0, Stopwatch.GetTimestamp()));
                };
            } else {
                int to = name == "remote-stream" ? 1 : 2;
                measure = n =>
                {
                    Streamer.Windows = n;
                    Streamer.End = 0;
                    world.Barrier();
                    long t0 = Stopwatch.GetTimestamp();
                    long before = s.MessagesSent;
                    Streamer first;
                    if (rank == 0 && a.TryGetLocal(0, out first))
                        first.Pour(to);
                    s.Run();
                    Counted(s, before);
                    if (rank == 0 && Streamer.End == 0)
                        throw new Exception("the stream did not arrive");
                    return Agree(world, Seconds(t0, Streamer.End));
                };
            }
            Measure(name, bytes, measure, target, 20000, reps, w);
        }
        if (s != null)
            s.Dispose();
    }

    // ---------------------------------------------------------------- forwarding (3 ranks)

    static void Forward(int[] sizes, int reps, double target)
    {
        if (world.Size != 3)
            throw new ArgumentException("forward: 3 ranks");
        var s = new Scheduler(world);
        // the moving element's home must not be rank 0, or rank 0 would hear of every move
        var probe = ObjectArray<int, Fwd>.Create(s, new int[0], i => new Fwd());
        int t = 1;
        while (probe.HomeOf(t) == 0)
            t++;
        Fwd.Target = t;
        var a =
            ObjectArray<int, Fwd>.Create(s, new[] { 0, t }, i => new Fwd(), i => i == 0 ? 0 : 1);
        long stalePings = 0;
        foreach (int bytes in sizes) {
            Fwd.P = Payload.Of(bytes);
            Fwd.Bytes = bytes;
            // an array repetition gives two numbers: measure the stale pings, keep the direct ones
            // of the same runs
            double lastDirect = 0;
            Func<int, double> measure = n =>
            {
                Fwd.Iters = n;
                Fwd.Done = 0;
                Fwd.Stale = Fwd.Direct = 0;
                world.Barrier();
                Fwd first;
                if (rank == 0 && a.TryGetLocal(0, out first))
                    first.Go();
                s.Run();
                stalePings += n;
                if (rank == 0 && Fwd.Done != n)
                    throw new Exception("the forwarding chain stopped");
                lastDirect = Agree(world, Fwd.Direct * tick);
                return Agree(world, Fwd.Stale * tick);
            };
            int iters = Calibrate(measure, target / 2, 20000);
            for (int rep = 0; rep < reps; rep++) {
                double stale = measure(iters) * 1e6 / iters, direct = lastDirect * 1e6 / iters;
                if (rank != 0)
                    continue;
                Console.WriteLine($"fwd-stale,{bytes},{rep},{iters},{stale:F4}");
                Console.WriteLine($"fwd-direct,{bytes},{rep},{iters},{direct:F4}");
            }
        }
        long forwarded = world.Allreduce(a.ForwardedMessages, Op.Sum),
             sentStale = world.Allreduce(rank == 0 ? stalePings : 0, Op.Max);
        if (forwarded != sentStale)
            throw new Exception(
                $"{forwarded} messages forwarded for {sentStale} sent with a stale cache");
        s.Dispose();

        // the plain reference: OSend ping-pong 0 <-> 2 while rank 1 sleeps (a spinning third rank
        // on two cores would measure the OS scheduler)
        Intracomm pair = world.Split(rank == 1 ? 1 : 0, rank);
        if (rank != 1) {
            int peer = 1 - pair.Rank;
            foreach (int bytes in sizes) {
                Payload p = Payload.Of(bytes);
                Func<int, double> measure = n =>
                {
                    pair.Barrier();
                    long t0 = Stopwatch.GetTimestamp();
                    Payload q = p;
                    for (int i = 0; i < n; i++) {
                        if (pair.Rank == 0) {
                            pair.OSend(q, peer, 0);
                            q = pair.ORecv<Payload>(peer, 0);
                        } else {
                            q = pair.ORecv<Payload>(peer, 0);
                            pair.OSend(q, peer, 0);
                        }
                    }
                    long t1 = Stopwatch.GetTimestamp();
                    q.Check(bytes);
                    return Agree(pair, Seconds(t0, t1));
                };
                int iters = Calibrate(measure, target, 100000);
                for (int rep = 0; rep < reps; rep++) {
                    double us = measure(iters) * 1e6 / iters;
                    if (rank == 0)
                        Console.WriteLine($"fwd-osend,{bytes},{rep},{iters},{us:F4}");
                }
            }
        }
        Request done = world.Ibarrier();
        Status st;
        while (!done.Test(out st))
            Thread.Sleep(1);
        pair.Dispose();
    }

    // ---------------------------------------------------------------- broadcast and reduction

    static void Collective(string name, int bytes, int reps, double target, int perRank)
    {
        int p = world.Size;
        Payload payload = Payload.Of(bytes);
        Coll.P = payload;
        Coll.Bytes = bytes;
        Coll.Total = perRank * p;
        Scheduler s = name.StartsWith("array-") ? new Scheduler(world) : null;
        ObjectArray<int, Coll> a =
            s == null ? null
                      : ObjectArray<int, Coll>.Create(s, Enumerable.Range(0, perRank * p),
                                                      i => new Coll(), i => i / perRank);
        if (a != null && name == "array-reduce-event") {
            Coll.Sum = a.DefineReduction<double>(Op.Sum);
            Coll[] mine = a.LocalElements.ToArray();
            Coll.Sum.Completed += (k, v) =>
            {
                foreach (Coll c in mine)
                    c.Completed(v);
            };
        } else if (a != null) {
            Coll.Sum = a.DefineReduction<double>(Op.Sum, nameof(Coll.Next));
        }
        var ack = new AckMsg { From = rank };
        Func<int, double> measure;
        switch (name) {
        case "obcast":
            measure = n =>
            {
                world.Barrier();
                long t0 = Stopwatch.GetTimestamp();
                for (int i = 0; i < n; i++) {
                    Payload q = world.OBcast(rank == 0 ? payload : null, 0);
                    if (rank == 0) {
                        for (int r = 1; r < p; r++)
                            world.ORecv<AckMsg>(MP.AnySource, 1);
                    } else {
                        if (i == 0)
                            q.Check(bytes);
                        world.OSend(ack, 0, 1);
                    }
                }
                return Agree(world, Seconds(t0, Stopwatch.GetTimestamp()));
            };
            break;
        case "allreduce":
            measure = n =>
            {
                world.Barrier();
                long t0 = Stopwatch.GetTimestamp();
                for (int i = 0; i < n; i++)
                    if (world.Allreduce(1.0, Op.Sum) != p)
                        throw new Exception("Allreduce gave a wrong sum");
                return Agree(world, Seconds(t0, Stopwatch.GetTimestamp()));
            };
            break;
        case "array-bcast":
        case "array-reduce":
        case "array-reduce-event":
            bool bcast = name == "array-bcast";
            measure = n =>
            {
                Coll.Iters = n;
                Coll.End = 0;
                world.Barrier();
                long t0 = Stopwatch.GetTimestamp();
                long before = s.MessagesSent;
                Coll zero;
                if (bcast) {
                    if (rank == 0 && a.TryGetLocal(0, out zero))
                        zero.Kick();
                } else {
                    foreach (Coll c in a.LocalElements)
                        c.Begin();
                }
                s.Run();
                Counted(s, before);
                if (rank == 0 && Coll.End == 0)
                    throw new Exception(name + ": the chain did not finish");
                return Agree(world, Seconds(t0, Coll.End));
            };
            break;
        default: throw new ArgumentException("unknown collective " + name);
        }
        Measure(name, p, measure, target, 100000, reps, 1);
        if (s != null)
            s.Dispose();
    }

    // ---------------------------------------------------------------- migration

    static void Migrate(string name, int[] sizes, int reps, double target)
    {
        if (world.Size != 2)
            throw new ArgumentException("migrate: 2 ranks");
        bool array = name == "migrate";
        Scheduler s = array ? new Scheduler(world) : null;
        foreach (int bytes in sizes) {
            int doubles = Math.Max(1, bytes / 8);
            ObjectArray<int, Mover> a = null;
            if (array) {   // an array per size: its one element carries the state
                a = ObjectArray<int, Mover>.Create(
                    s, new[] { 0 }, i => new Mover { State = new double[doubles] }, i => 0);
                Mover m;
                if (a.TryGetLocal(0, out m))
                    for (int i = 0; i < doubles; i++)
                        m.State[i] = i;
            }
            var state = new StateMsg { State = new double[doubles] };
            Func<int, double> measure;
            if (array) {
                measure = n =>
                {
                    Mover.Target = 2 * n;
                    Mover.End = 0;
                    Mover m;
                    if (a.TryGetLocal(0, out m))
                        m.Hops = 0;
                    world.Barrier();
                    long t0 = Stopwatch.GetTimestamp();
                    long before = s.MessagesSent;
                    if (rank == 0)
                        a.Migrate(0, 1);
                    s.Run();
                    Counted(s, before);
                    if (rank == 0 &&
                        (!a.TryGetLocal(0, out m) || m.Hops != 2 * n || m.State.Length != doubles ||
                         m.State[doubles - 1] != doubles - 1))
                        throw new Exception("the element did not come back whole");
                    return Agree(world, Seconds(t0, Mover.End));
                };
            } else {
                measure = n =>
                {
                    StateMsg q;
                    double seconds = OSendPingPong(state, n, out q);
                    if (q.State.Length != doubles)
                        throw new Exception("the state arrived wrong");
                    return seconds;
                };
            }
            Measure(name, 8L * doubles, measure, target, 20000, reps, 2, 8.0 * doubles / 1024);
        }
        if (s != null)
            s.Dispose();
    }
}

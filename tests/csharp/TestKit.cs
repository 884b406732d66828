// TestKit — assertions for SPMD tests. Every rank checks; Finish() collects the counts at rank 0,
// which prints "N passed, N failed" for the whole job; the exit code is non-zero on any failure.
using System;
using System.Collections.Generic;
using System.MP;
using System.Threading;

static class Check
{
    static int passed, failed;

    public static int Rank => MP.World.Rank;

    public static void True(bool condition, string what)
    {
        if (condition) {
            passed++;
            return;
        }
        failed++;
        Console.Error.WriteLine($"FAIL rank {Rank}: {what}");
    }

    public static void Equal<T>(T expected, T actual, string what)
    {
        bool ok = Equals(expected, actual);
        True(ok, ok ? what : $"{what}: expected {expected}, got {actual}");
    }

    /// <summary>action must throw exactly TException (or a subclass); returns it.</summary>
    public static TException Throws<TException>(Action action, string what)
        where TException : Exception
    {
        try {
            action();
        } catch (TException e) {
            passed++;
            return e;
        } catch (Exception e) {
            True(
                false,
                $"{what}: expected {typeof(TException).Name}, got {e.GetType().Name}: {e.Message}");
            return null;
        }
        True(false, $"{what}: expected {typeof(TException).Name}, nothing thrown");
        return null;
    }

    /// <summary>A refused call: throws TException, and an ArgumentException names
    /// parameter (null: not checked).</summary>
    public static void Refused<TException>(Action call, string parameter, string what)
        where TException : Exception
    {
        TException e = Throws<TException>(call, what);
        if (e is ArgumentException a && parameter != null)
            Equal(parameter, a.ParamName, what + ": names the parameter");
    }

    static int usableRound;

    /// <summary>A real exchange on comm (a ring over its ranks) after a refused call.</summary>
    public static void StillUsable(Intracomm comm, string after)
    {
        int n = comm.Size, r = comm.Rank;
        var s = new int[] { r, ++usableRound };
        var got = new int[2];
        comm.Sendrecv(s, (r + 1) % n, 71, got, (r + n - 1) % n, 71);
        True(got[0] == (r + n - 1) % n && got[1] == usableRound,
             "communicator usable after " + after);
    }

    /// <summary>Finish, once every rank has checked that no pin outlived its transfer.</summary>
    public static int FinishWithNoPinLeft(string name)
    {
        MP.World.Barrier();
        MPStats s = MP.Stats;
        Equal(0L, s.PinsLive, "no live pins at the end");
        Equal(s.PinsTaken, s.PinsReleasedByWait + s.PinsReleasedByGC, "every pin released");
        return Finish(name);
    }

    public static int Finish(string name)
    {
        Intracomm world = MP.World;
        var counts = new int[] { passed, failed };
        if (world.Rank == 0) {
            int totalPassed = passed, totalFailed = failed;
            for (int r = 1; r < world.Size; r++) {
                world.Recv(counts, r, 30999);
                totalPassed += counts[0];
                totalFailed += counts[1];
            }
            Console.WriteLine(
                $"{name} ({world.Size} rank(s)): {totalPassed} passed, {totalFailed} failed");
            return totalFailed == 0 && totalPassed > 0 ? 0 : 1;
        }
        world.Send(counts, 0, 30999);
        return failed == 0 ? 0 : 1;
    }
}

/// <summary>Neighbours in a ring over World, and an exchange that works for any ring, a rank
/// talking to itself included: the send runs on a second thread (MPI_THREAD_MULTIPLE).</summary>
static class Ring
{
    public static readonly Intracomm World = MP.World;
    public static readonly int Rank = World.Rank, Size = World.Size;
    public static readonly int Next = (Rank + 1) % Size, Prev = (Rank + Size - 1) % Size;

    public static Status Exchange(Action send, Func<Status> recv)
    {
        Exception failure = null;
        ThreadStart sendOnce = () =>
        {
            try {
                send();
            } catch (Exception e) {
                failure = e;
            }
        };
        var t = new Thread(sendOnce);
        t.Start();
        Status st = recv();
        t.Join();
        if (failure != null)
            throw new Exception("send thread failed", failure);
        return st;
    }
}

/// <summary>Heap churn for the stress tests, run on a thread of its own: rounds of garbage
/// (byte arrays of minBytes..maxBytes-1, and with doublesOneIn > 0 one object in that many a
/// double[] of 1..maxDoubles-1 elements), one object in keepOneIn kept as a survivor; past
/// maxSurvivors every other survivor dies (a fragmented old generation); a full collection
/// every fullEvery rounds, otherwise a minor one every minorEvery rounds.</summary>
sealed class HeapChurn
{
    readonly int seed, objectsPerRound, minBytes, maxBytes, keepOneIn, maxSurvivors, fullEvery,
        minorEvery, doublesOneIn, maxDoubles;
    volatile bool stop;
    Thread thread;

    public HeapChurn(int seed, int objectsPerRound, int minBytes, int maxBytes, int keepOneIn,
                     int maxSurvivors, int fullEvery, int minorEvery, int doublesOneIn = 0,
                     int maxDoubles = 0)
    {
        this.seed = seed;
        this.objectsPerRound = objectsPerRound;
        this.minBytes = minBytes;
        this.maxBytes = maxBytes;
        this.keepOneIn = keepOneIn;
        this.maxSurvivors = maxSurvivors;
        this.fullEvery = fullEvery;
        this.minorEvery = minorEvery;
        this.doublesOneIn = doublesOneIn;
        this.maxDoubles = maxDoubles;
    }

    /// <summary>Rounds completed so far.</summary>
    public int Rounds { get; private set; }

    /// <summary>Churns until Stop (call it on a thread of your own, or use Start).</summary>
    public void Run()
    {
        var survivors = new System.Collections.Generic.List<object>();
        var random = new Random(seed);
        for (int round = 1; !stop; round++) {
            for (int i = 0; i < objectsPerRound; i++) {
                object o = doublesOneIn > 0 && random.Next(doublesOneIn) == 0
                               ? (object) new double[random.Next(1, maxDoubles)]
                               : new byte[random.Next(minBytes, maxBytes)];
                if (random.Next(keepOneIn) == 0)
                    survivors.Add(o);
            }
            if (survivors.Count > maxSurvivors)
                for (int i = survivors.Count - 1; i >= 0; i -= 2)
                    survivors.RemoveAt(i);
            if (round % fullEvery == 0)
                GC.Collect();
            else if (round % minorEvery == 0)
                GC.Collect(0);
            Rounds = round;
        }
    }

    /// <summary>Runs the churn on a new thread.</summary>
    public HeapChurn Start()
    {
        thread = new Thread(Run) { Name = "heap churn" };
        thread.Start();
        return this;
    }

    /// <summary>Ends the churn (and joins the thread Start made).</summary>
    public void Stop()
    {
        stop = true;
        if (thread != null)
            thread.Join();
    }
}

/// <summary>Another thread that allocates and forces minor and major collections, one after the
/// other, until disposed: `using (new Collector()) { ... }` runs the block
/// while collecting.</summary>
sealed class Collector : IDisposable
{
    bool stop;
    readonly Thread thread;

    public Collector(int objectBytes = 200, int kept = 2000)
    {
        ThreadStart collect = () =>
        {
            var keep = new List<byte[]>();
            while (!Volatile.Read(ref stop)) {
                keep.Add(new byte[objectBytes]);
                if (keep.Count > kept)
                    keep.Clear();
                GC.Collect(keep.Count % 2);
            }
        };
        thread = new Thread(collect);
        thread.Start();
    }

    public void Dispose()
    {
        Volatile.Write(ref stop, true);
        thread.Join();
    }
}

/// <summary>Another thread that allocates and collects (minor, minor, major, ...) about once a
/// millisecond until disposed: collections paced so that the operations under test still run
/// between them.</summary>
sealed class PacedCollector : IDisposable
{
    volatile bool stop;
    readonly Thread thread;

    public PacedCollector()
    {
        ThreadStart collect = () =>
        {
            var keep = new List<byte[]>();
            for (int k = 0; !stop; k++) {
                for (int i = 0; i < 50; i++)
                    keep.Add(new byte[100 + 37 * (i % 20)]);
                if (keep.Count > 3000)
                    keep.RemoveRange(0, 1500);
                GC.Collect(k % 3 == 2 ? 2 : 0);
                Thread.Sleep(1);   // pacing, not synchronisation
            }
        };
        thread = new Thread(collect) { Name = "collector" };
        thread.Start();
    }

    public void Dispose()
    {
        stop = true;
        thread.Join();
    }
}

static class Graphs
{
    /// <summary>Through Serializer and back: Serialize must give Measure bytes, and the same
    /// bytes at an offset of a larger buffer, which Deserialize reads there.</summary>
    public static T RoundTrip<T>(T graph)
    {
        byte[] bytes = Serializer.Serialize(graph);
        Check.Equal(bytes.Length, Serializer.Measure(graph), "Serialize returns Measure bytes");
        var padded = new byte[bytes.Length + 7];
        Check.Equal(bytes.Length, Serializer.Serialize(graph, padded, 3),
                    "Serialize into a buffer");
        return Serializer.Deserialize<T>(padded, 3, bytes.Length);
    }
}

/// <summary>What the kernel says of this process's memory.</summary>
static class Pages
{
    /// <summary>The AnonHugePages (kB) of the mapping of this process that holds address, from
    /// /proc/self/smaps; -1 when no mapping holds it.</summary>
    public static long AnonHugeKiB(long address)
    {
        bool inside = false;
        foreach (string line in System.IO.File.ReadLines("/proc/self/smaps")) {
            // a mapping's first line is "lo-hi perms offset dev inode path" (its first ':' in dev);
            // the lines after it are "Name: value" (the ':' before any space)
            int dash = line.IndexOf('-'), space = line.IndexOf(' '), colon = line.IndexOf(':');
            if (dash > 0 && space > dash && colon > space) {
                long lo = Convert.ToInt64(line.Substring(0, dash), 16),
                     hi = Convert.ToInt64(line.Substring(dash + 1, space - dash - 1), 16);
                inside = lo <= address && address < hi;
            } else if (inside && line.StartsWith("AnonHugePages:")) {
                return long.Parse(line.Substring(14).Trim().Split(' ')[0]);
            }
        }
        return -1;
    }
}

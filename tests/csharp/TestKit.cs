// TestKit — assertions for SPMD tests. Every rank checks; Finish() collects the counts at rank 0,
// which prints "N passed, N failed" for the whole job; the exit code is non-zero on any failure.
using System;
using System.MP;
using System.Threading;

static class Check
{
    static int passed, failed;

    public static int Rank => MP.World.Rank;

    public static void True(bool condition, string what)
    {
        if (condition) { passed++; return; }
        failed++;
        Console.Error.WriteLine($"FAIL rank {Rank}: {what}");
    }

    public static void Equal<T>(T expected, T actual, string what)
    {
        bool ok = Equals(expected, actual);
        True(ok, ok ? what : $"{what}: expected {expected}, got {actual}");
    }

    /// <summary>action must throw exactly TException (or a subclass); returns it.</summary>
    public static TException Throws<TException>(Action action, string what) where TException : Exception
    {
        try {
            action();
        } catch (TException e) {
            passed++;
            return e;
        } catch (Exception e) {
            True(false, $"{what}: expected {typeof(TException).Name}, got {e.GetType().Name}: {e.Message}");
            return null;
        }
        True(false, $"{what}: expected {typeof(TException).Name}, nothing thrown");
        return null;
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
            Console.WriteLine($"{name} ({world.Size} rank(s)): {totalPassed} passed, {totalFailed} failed");
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
        var t = new Thread(() => { try { send(); } catch (Exception e) { failure = e; } });
        t.Start();
        Status st = recv();
        t.Join();
        if (failure != null) throw new Exception("send thread failed", failure);
        return st;
    }
}

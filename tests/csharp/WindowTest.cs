// WindowTest: one-sided communication (API.md version 3, "One-sided communication"): Window.Create
// over arrays whose data is 16-byte aligned and 8 bytes off (MPICH 4.0.2 rounds a window's base
// down to 16 bytes: a window over the data itself would write into the array header), in the
// nursery and the large-object space, multi-dimensional, and null on some ranks; TargetCount;
// Put, Get and Accumulate in fence and lock epochs; FetchAndOp and CompareAndSwap (a shared
// counter, a spin lock); every refusal with the rank usable after it; Dispose (idempotent,
// closing open epochs, then ObjectDisposedException) and no pin left.
//   `WindowTest.exe leak`: two windows never disposed (one with a LockAll epoch open): freed at
// exit with a warning, the process ends normally.
//   `WindowTest.exe stress-user-op [rounds]`: the same with an Op.Create operator alive, so that
// every window call runs GC-safe; without UCX_MEM_EVENTS=no it reproduces the UCX munmap-hook
// deadlock of docs/design.md, "Windows" (the testlist runs it with the variable set).
//   `WindowTest.exe stress [rounds]`: young exposed arrays and young origin arrays while another
// thread forces minor and major collections, during fence and lock epochs, every element checked.
using System;
using System.Collections.Generic;
using System.MP;
using System.Runtime.InteropServices;

static class WindowTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, size = Ring.Size, next = Ring.Next, prev = Ring.Prev;
    static readonly List<object> spacers = new List<object>();

    static long Address(Array a)
    {
        GCHandle h = GCHandle.Alloc(a, GCHandleType.Pinned);
        long at = h.AddrOfPinnedObject().ToInt64();
        h.Free();
        return at;
    }

    /// <summary>A young double[n] whose data lies at alignment (0 or 8) modulo 16.</summary>
    static double[] Aligned(int n, int alignment)
    {
        for (int attempt = 0; attempt < 1000; attempt++) {
            var a = new double[n];
            if (Address(a) % 16 == alignment)
                return a;
            spacers.Add(new byte[1 + attempt % 8]);   // shifts the next allocation by 8 bytes
        }
        throw new Exception("no array at alignment " + alignment);
    }

    static bool AllRanks(bool mine) => world.Allreduce(mine ? 1 : 0, Op.Min) == 1;

    /// <summary>Put, Get and Accumulate between fences over a double[n] at alignment on every
    /// rank; the array's length (in its header) and the elements around the targets
    /// checked.</summary>
    static void FenceRound(int n, int alignment, bool young)
    {
        double[] exposed = null;
        Window win = null;
        int got = -1;
        for (int attempt = 0; attempt < 5; attempt++) {
            exposed = young ? Aligned(n, alignment) : new double[n];
            for (int i = 0; i < n; i++)
                exposed[i] = -1;
            win = Window.Create(world, exposed);
            got = (int)(Address(exposed) % 16);   // pinned by the window: it stays there
            if (!young || AllRanks(got == alignment))
                break;
            win.Dispose();
        }
        string what = $"n {n}, data at {got} mod 16";
        Check.Equal(n, win.TargetCount(next), "TargetCount of next, " + what);
        win.Fence();
        var origin = new double[] { rank * 1000 + 1, rank * 1000 + 2, rank * 1000 + 3 };
        win.Put(origin, 0, 1, next, 0);       // first element
        win.Put(origin, 1, 2, next, n - 2);   // last two
        win.Fence();
        bool ok = exposed.Length == n && exposed[0] == prev * 1000 + 1 &&
                  exposed[n - 2] == prev * 1000 + 2 && exposed[n - 1] == prev * 1000 + 3;
        for (int i = 1; i < n - 2; i++)
            ok &= exposed[i] == -1;
        Check.True(ok, "Put between fences lands exactly, header intact, " + what);

        for (int i = 0; i < n; i++)
            exposed[i] = rank * 10000 + i;
        world.Barrier();
        var copy = new double[n];
        win.Fence();
        win.Get(copy, 0, n, next, 0);
        win.Fence();
        ok = true;
        for (int i = 0; i < n; i++)
            ok &= copy[i] == next * 10000 + i;
        Check.True(ok, "Get of a whole array between fences, " + what);

        var ones = new double[n];
        for (int i = 0; i < n; i++)
            ones[i] = 1;
        win.Fence();
        win.Accumulate(ones, 0, n, 0, 0, Op.Sum);   // every rank adds 1 to every element of 0's
        win.Fence();
        if (rank == 0) {
            ok = true;
            for (int i = 0; i < n; i++)
                ok &= exposed[i] == i + size;
            Check.True(ok, "Accumulate Sum of every rank into rank 0, " + what);
        }
        win.Fence();
        win.Accumulate(new double[] { 5e9 }, 0, 1, next, n - 1, Op.Replace);
        win.Accumulate(new double[] { -1, rank }, 0, 2, next, 0, Op.Max);
        win.Fence();
        double old1 = rank * 10000 + 1 + (rank == 0 ? size : 0);
        Check.True(exposed[n - 1] == 5e9 && exposed[1] == Math.Max(old1, prev),
                   "Accumulate Replace and Max, " + what);
        win.Dispose();
        GC.Collect();
        Check.True(exposed.Length == n, "the array is whole after Dispose and a collection");
    }

    static void Alignments()
    {
        foreach (int alignment in new[] { 0, 8 }) {
            FenceRound(5, alignment, true);
            FenceRound(64, alignment, true);
        }
        FenceRound(4000, 0, false);   // the large-object space
        spacers.Clear();
    }

    static void Others()
    {
        // multi-dimensional, element type int, null on odd ranks
        int[,] grid = rank % 2 == 0 ? new int[3, 4] : null;
        using (Window win = Window.Create(world, grid))
        {
            for (int r = 0; r < size; r++)
                Check.Equal(r % 2 == 0 ? 12 : 0, win.TargetCount(r), "TargetCount of rank " + r);
            Check.Equal(size, win.Size, "Size");
            win.Fence();
            var v = new int[] { 100 + rank };
            int target = (rank / 2) * 2;                          // an even rank
            win.Accumulate(v, 0, 1, target, 1 * 4 + 2, Op.Sum);   // grid[1, 2]
            if (size > 1 && target + 1 < size)
                Check.Throws<ArgumentOutOfRangeException>(() => win.Put(v, 0, 1, target + 1, 0),
                                                          "Put to a rank that exposes nothing");
            win.Put(v, 0, 1, MP.ProcNull, 123456);   // ProcNull: nothing happens
            win.Fence();
            if (grid != null) {
                int expect = 0;
                for (int r = 0; r < size; r++)
                    if ((r / 2) * 2 == rank)
                        expect += 100 + r;
                Check.Equal(expect, grid[1, 2], "Accumulate into a 2-D array at a linear index");
            }
        }

        // lock epochs: exclusive Put and Get, then Flush
        var mine = new long[8];
        using (Window win = Window.Create(world, mine))
        {
            world.Barrier();
            win.Lock(next, true);
            win.Put(new long[] { rank + 7, rank + 8 }, 0, 2, next, 3);
            win.Unlock(next);
            world.Barrier();
            Check.True(mine[3] == prev + 7 && mine[4] == prev + 8, "Put in an exclusive lock");
            var back = new long[2];
            win.Lock(next, false);
            win.Get(back, 0, 2, next, 3);
            win.Flush(next);
            Check.True(back[0] == rank + 7 && back[1] == rank + 8, "Get then Flush, shared lock");
            win.Put(new long[] { 1 }, 0, 1, next, 0);
            win.FlushAll();
            win.Unlock(next);
            world.Barrier();
            Check.Equal(1L, mine[0], "Put then FlushAll");
        }

        // a counter on rank 0: FetchAndOp hands out distinct tickets
        const int Tickets = 50;
        long[] counter = rank == 0 ? new long[3] : null;
        using (Window win = Window.Create(world, counter))
        {
            var got = new long[Tickets];
            win.LockAll();
            for (int i = 0; i < Tickets; i++)
                got[i] = win.FetchAndOp(1L, 0, 0, Op.Sum);
            Check.Equal(0L, win.FetchAndOp(7L, MP.ProcNull, 0, Op.Sum),
                        "FetchAndOp with ProcNull returns default");
            win.UnlockAll();
            var all = new long[Tickets * size];
            world.Allgather(got, all);
            Array.Sort(all);
            bool distinct = true;
            for (int i = 0; i < all.Length; i++)
                distinct &= all[i] == i;
            Check.True(distinct, "FetchAndOp Sum: every ticket handed out once");
            world.Barrier();
            win.Lock(0, false);
            Check.Equal((long)Tickets * size, win.FetchAndOp(0L, 0, 0, Op.NoOp),
                        "FetchAndOp NoOp: an atomic read");
            win.Unlock(0);
            world.Barrier();
            // a spin lock (CompareAndSwap on element 2) around a read-modify-write of element 1
            for (int i = 0; i < 5; i++) {
                win.Lock(0, false);
                while (win.CompareAndSwap(1L + rank, 0L, 0, 2) != 0) { }
                var cell = new long[1];
                win.Get(cell, 0, 1, 0, 1);
                win.Flush(0);
                cell[0] += 1;
                win.Put(cell, 0, 1, 0, 1);
                win.Flush(0);
                Check.Equal(1L + rank, win.FetchAndOp(0L, 0, 2, Op.Replace),
                            "the lock was held by this rank");
                win.Unlock(0);
            }
            world.Barrier();
            if (rank == 0)
                Check.Equal(5L * size, counter[1], "CompareAndSwap spin lock: no update lost");
        }

        // several threads of each rank on one window: FetchAndOp and Put inside one LockAll
        long[] shared = rank == 0 ? new long[1 + 4 * size] : null;
        using (Window win = Window.Create(world, shared))
        {
            win.LockAll();
            var threads = new System.Threading.Thread[4];
            var failures = new Exception[4];
            for (int t = 0; t < 4; t++) {
                int me = t;
                threads[t] = new System.Threading.Thread(() => Worker(win, me, failures));
                threads[t].Start();
            }
            foreach (var t in threads)
                t.Join();
            win.UnlockAll();
            Check.True(Array.TrueForAll(failures, e => e == null),
                       "four threads operate on one window");
            world.Barrier();
            if (rank == 0) {
                bool all = shared[0] == 100L * size;
                for (int r = 0; r < size; r++)
                    for (int t = 0; t < 4; t++)
                        all &= shared[1 + r * 4 + t] == 1000 + t;
                Check.True(all, "every thread's FetchAndOp and Put arrived");
            }
        }

        // FetchAndOp and CompareAndSwap on other types
        var flags = new int[4];
        var doubles = new double[2];
        using (Window wi =
                   Window.Create(world, flags)) using (Window wd = Window.Create(world, doubles))
        {
            world.Barrier();
            wi.Lock(next, false);
            Check.Equal(0, wi.CompareAndSwap(rank + 1, 0, next, 2), "CAS int: swapped");
            Check.Equal(rank + 1, wi.CompareAndSwap(99, 0, next, 2), "CAS int: not swapped");
            wi.Unlock(next);
            wd.LockAll();
            wd.FetchAndOp(0.5, next, 1, Op.Sum);
            wd.UnlockAll();
            world.Barrier();
            Check.True(flags[2] == prev + 1 && doubles[1] == 0.5, "CAS int, FetchAndOp double");
        }
        using (Window wb = Window.Create(world, new bool[2]))
        {
            wb.Lock(rank, false);
            Check.Equal(false, wb.CompareAndSwap(true, false, rank, 0), "CAS bool");
            Check.Equal(true, wb.FetchAndOp(false, rank, 0, Op.LOr), "FetchAndOp LOr bool");
            wb.Unlock(rank);
        }
    }

    /// <summary>One of four threads on a window: 25 FetchAndOps on rank 0's counter and a Put
    /// of its number into its own slot.</summary>
    static void Worker(Window win, int me, Exception[] failures)
    {
        try {
            for (int i = 0; i < 25; i++)
                win.FetchAndOp(1L, 0, 0, Op.Sum);
            win.Put(new long[] { 1000 + me }, 0, 1, 0, 1 + rank * 4 + me);
        } catch (Exception e) {
            failures[me] = e;
        }
    }

    static void Refusals()
    {
        var exposed = new double[10];
        long pinsBefore = MP.Stats.PinsLive;
        Window win = Window.Create(world, exposed);
        Check.Equal(pinsBefore + 1, MP.Stats.PinsLive,
                    "the exposed array is pinned while the " + "window lives");
        var d = new double[4];
        // outside any epoch (no Fence yet)
        MPException outside =
            Check.Throws<MPException>(() => win.Put(d, 0, 1, next, 0), "Put outside an epoch");
        Check.True(outside != null && outside.ErrorClass > 0,
                   "its ErrorClass is MPI's (MPI_ERR_RMA_SYNC), as MPI's own refusal's");
        Check.Throws<MPException>(() => win.Get(d, 0, 1, next, 0), "Get outside an epoch");
        Check.Throws<MPException>(() => win.Accumulate(d, 0, 1, next, 0, Op.Sum),
                                  "Accumulate outside an epoch");
        Check.Throws<MPException>(() => win.Unlock(next), "Unlock without Lock");
        Check.Throws<MPException>(() => win.UnlockAll(), "UnlockAll without LockAll");
        Check.Throws<MPException>(() => win.Flush(next), "Flush outside a lock");
        Check.Throws<MPException>(() => win.FlushAll(), "FlushAll outside a lock");
        Check.Throws<MPException>(() => win.FetchAndOp(1.0, next, 0, Op.Sum),
                                  "FetchAndOp outside a lock");
        win.Fence();
        Check.Throws<MPException>(() => win.FetchAndOp(1.0, next, 0, Op.Sum),
                                  "FetchAndOp in a fence epoch");
        // arguments
        Check.Throws<ArgumentNullException>(() => win.Put(null, 0, 1, next, 0), "null origin");
        Check.Throws<ArgumentException>(() => win.Put(new long[4], 0, 1, next, 0),
                                        "origin of another element type (long vs double)");
        Check.Throws<ArgumentException>(() => win.Put(new string[2], 0, 1, next, 0),
                                        "origin not transportable");
        Check.Throws<ArgumentOutOfRangeException>(() => win.Put(d, -1, 1, next, 0), "offset -1");
        Check.Throws<ArgumentOutOfRangeException>(() => win.Put(d, 0, 5, next, 0),
                                                  "count past origin's end");
        Check.Throws<ArgumentOutOfRangeException>(() => win.Put(d, 0, -1, next, 0), "count -1");
        Check.Throws<ArgumentOutOfRangeException>(() => win.Get(d, 0, 4, next, 7),
                                                  "targetIndex + count past the target's array");
        Check.Throws<ArgumentOutOfRangeException>(() => win.Get(d, 0, 1, next, -1),
                                                  "targetIndex -1");
        Check.Throws<ArgumentOutOfRangeException>(() => win.Put(d, 0, 1, size, 0),
                                                  "targetRank = Size");
        Check.Throws<ArgumentOutOfRangeException>(() => win.TargetCount(-1), "TargetCount(-1)");
        Check.Throws<ArgumentException>(() => win.Accumulate(d, 0, 1, next, 0, Op.NoOp),
                                        "Accumulate with Op.NoOp");
        Check.Throws<ArgumentNullException>(() => win.Accumulate(d, 0, 1, next, 0, null),
                                            "Accumulate with a null op");
        Check.Throws<ArgumentException>(() => win.Accumulate(d, 0, 1, next, 0, Op.BAnd),
                                        "BAnd on double");
        using (Op mine = Op.Create<double>((a, b) => a + b))
            Check.Throws<NotSupportedException>(() => win.Accumulate(d, 0, 1, next, 0, mine),
                                                "a user operator");
        d[0] = 42;
        win.Put(d, 0, 1, next, 9);   // the rank is usable after every refusal
        win.Fence();
        Check.Equal(42.0, exposed[9], "a Put after the refusals");

        // passive epochs
        win.Lock(next, false);
        Check.Throws<MPException>(() => win.Lock(next, true), "Lock of a locked target");
        Check.Throws<MPException>(() => win.LockAll(), "LockAll inside Lock");
        Check.Throws<MPException>(() => win.Fence(), "Fence inside a lock epoch");
        Check.Throws<ArgumentOutOfRangeException>(() => win.Lock(size, false), "Lock(Size)");
        Check.Throws<ArgumentException>(() => win.FetchAndOp(1L, next, 0, Op.Sum),
                                        "FetchAndOp<long> on a double window");
        Check.Throws<ArgumentException>(() => win.CompareAndSwap(1.0, 0.0, next, 0),
                                        "CompareAndSwap on double");
        Check.Throws<ArgumentException>(() => win.FetchAndOp(new Pair(), next, 0, Op.Replace),
                                        "FetchAndOp of a struct");
        Check.Throws<ArgumentOutOfRangeException>(() => win.FetchAndOp(1.0, next, 10, Op.Sum),
                                                  "FetchAndOp past the target's array");
        Check.Throws<NotSupportedException>(
            () => win.FetchAndOp(1.0, next, 0, Op.Create<double>((a, b) => a)),
            "FetchAndOp with a user operator");
        Check.Equal(0.0, win.FetchAndOp(1.0, next, 0, Op.Sum), "FetchAndOp after the refusals");
        win.Unlock(next);
        win.LockAll();
        Check.Throws<MPException>(() => win.Lock(next, false), "Lock inside LockAll");
        Check.Throws<MPException>(() => win.LockAll(), "LockAll twice");
        win.Put(d, 0, 1, next, 8);
        win.UnlockAll();

        // Dispose with an epoch open closes it; then everything is refused
        win.Lock(next, false);
        win.Put(d, 0, 2, next, 2);
        win.Dispose();
        Check.Equal(pinsBefore, MP.Stats.PinsLive, "Dispose unpins the exposed array");
        win.Dispose();
        Check.True(exposed[2] == 42 && exposed[8] == 42 && exposed[0] == 1,
                   "Dispose completes the open epoch");
        Check.Throws<ObjectDisposedException>(() => win.Fence(), "Fence after Dispose");
        Check.Throws<ObjectDisposedException>(() => win.Put(d, 0, 1, next, 0), "Put after");
        Check.Throws<ObjectDisposedException>(() => win.Get(d, 0, 1, next, 0), "Get after");
        Check.Throws<ObjectDisposedException>(() => win.Accumulate(d, 0, 1, next, 0, Op.Sum),
                                              "Accumulate after");
        Check.Throws<ObjectDisposedException>(() => win.FetchAndOp(1.0, next, 0, Op.Sum),
                                              "FetchAndOp after");
        Check.Throws<ObjectDisposedException>(() => win.CompareAndSwap(1, 0, next, 0),
                                              "CompareAndSwap after");
        Check.Throws<ObjectDisposedException>(() => win.Lock(next, true), "Lock after");
        Check.Throws<ObjectDisposedException>(() => win.Unlock(next), "Unlock after");
        Check.Throws<ObjectDisposedException>(() => win.LockAll(), "LockAll after");
        Check.Throws<ObjectDisposedException>(() => win.UnlockAll(), "UnlockAll after");
        Check.Throws<ObjectDisposedException>(() => win.Flush(next), "Flush after");
        Check.Throws<ObjectDisposedException>(() => win.FlushAll(), "FlushAll after");
        Check.Throws<ObjectDisposedException>(() => win.TargetCount(0), "TargetCount after");

        // Create refusals, raised on every rank
        Check.Throws<ArgumentNullException>(() => Window.Create(null, exposed), "null comm");
        Check.Throws<ArgumentException>(
            () => Window.Create(world, rank == 0 ? (Array) new string[1] : new double[1]),
            "memory not transportable on rank 0: every rank raises");
        if (size > 1)
            Check.Throws<ArgumentException>(
                () => Window.Create(world, rank == 0 ? (Array) new long[2] : new double[2]),
                "two element types exposed: every rank raises");
        using (Intracomm dup = world.Dup())
        {
            dup.Dispose();
            Check.Throws<ObjectDisposedException>(() => Window.Create(dup, exposed),
                                                  "a disposed communicator");
        }
        using (Window again = Window.Create(world, exposed))
        {
            again.Fence();
            again.Put(new double[] { 7 }, 0, 1, next, 0);
            again.Fence();
            Check.Equal(7.0, exposed[0], "a window after the refused creations");
        }
    }

    struct Pair
    {
        public int A, B;
    }

    static Window Create(Array a) => Window.Create(world, a);

    /// <summary>Young exposed and origin arrays while another thread collects: every epoch kind,
    /// collections between issuing operations and closing the epoch.</summary>
    static void Stress(int rounds)
    {
        bool ok = true;
        using (new Collector())
        {
            for (int round = 0; round < rounds; round++) {
                int n = 16 + round % 50;
                var exposed = new long[n];   // young: in the nursery
                Window win = Create(exposed);
                win.Fence();
                var origin = new long[n];
                for (int i = 0; i < n; i++)
                    origin[i] = rank * 1000000 + round * 1000 + i;
                win.Put(origin, 0, n, next, 0);
                origin = null;   // only the window holds it now
                GC.Collect(0);
                var junk = new byte[round * 10];
                win.Fence();
                for (int i = 0; i < n; i++)
                    ok &= exposed[i] == prev * 1000000 + round * 1000 + i;
                world.Barrier();

                var got = new long[n];
                win.LockAll();
                win.Get(got, 0, n, next, 0);
                GC.Collect();
                win.Flush(next);   // the Get is done before the update
                win.Accumulate(new long[] { 1, 1 }, 0, 2, next, 0, Op.Sum);
                GC.Collect(0);
                win.Flush(next);
                long was = win.FetchAndOp(10L, next, n - 1, Op.Sum);
                win.UnlockAll();
                for (int i = 0; i < n; i++)
                    ok &= got[i] == rank * 1000000 + round * 1000 + i;
                ok &= was == rank * 1000000 + round * 1000 + n - 1;
                world.Barrier();
                ok &= exposed[0] == prev * 1000000 + round * 1000 + 1 &&
                      exposed[n - 1] == prev * 1000000 + round * 1000 + n - 1 + 10;
                win.Dispose();
                GC.KeepAlive(junk);
            }
        }
        Check.True(ok, $"stress: {rounds} rounds of young windows under collections");
    }

    static int Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "leak") {
            // windows never disposed: freed at exit, before MPI ends, with a warning each
            var kept = new double[4];
            Window first = Window.Create(world, kept), second = Window.Create(world, new int[3]);
            first.Fence();
            first.Put(new double[] { 1 + rank }, 0, 1, next, 0);
            first.Fence();
            second.LockAll();   // left open: closed at exit
            Check.Equal(1.0 + prev, kept[0], "leak: a window that is never disposed works");
            GC.Collect();
            return Check.Finish("WindowTest leak");
        }
        if (args.Length > 0 && args[0] == "stress") {
            Stress(args.Length > 1 ? int.Parse(args[1]) : 30);
            return Check.FinishWithNoPinLeft("WindowTest stress");
        }
        if (args.Length > 0 && args[0] == "stress-user-op") {
            // a C# operator exists: every MPI call of the window goes GC-safe (the rule of
            // transfer.h), MPI_Win_create and MPI_Win_free too
            using (Op.Create<long>((a, b) => a + b))
                Stress(args.Length > 1 ? int.Parse(args[1]) : 30);
            return Check.FinishWithNoPinLeft("WindowTest stress-user-op");
        }
        Alignments();
        Others();
        Refusals();
        return Check.FinishWithNoPinLeft("WindowTest");
    }
}

// PersistentTest: persistent requests (API.md version 3): Comm.SendInit/RecvInit, Prequest.Start,
// StartAll and Dispose, every use completed through Request's calls; the refusals (active,
// disposed, bad arguments) with the rank usable after each; ProcNull; Cancel and Dispose of
// active uses, which never wait for a peer; dropped requests freed by the core; and a halo loop.
//   `PersistentTest.exe stress [rounds]`: the GC stress mode. Young arrays of three sizes
// (nursery, small old, large-object space) in halo exchanges with both neighbours while another
// thread forces minor and major collections, between uses and during them (receives posted, then
// collections, then the sends); every element checked at every use; arrays moved between uses;
// the second half with a C# operator in existence (every MPI call made GC-safe). Each halo has a
// 2-D field beside it whose ghost columns travel as regions (derived datatypes).
using System;
using System.Collections.Generic;
using System.MP;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

static class PersistentTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, size = Ring.Size, next = Ring.Next, prev = Ring.Prev;
    const int Bound = 100000;   // polls before a condition that must come true is declared lost

    static void Basics()
    {
        var into = new int[64];
        var from = new int[64];
        MPStats before = MP.Stats;
        Prequest recv = world.RecvInit(into, 0, 64, prev, 1);
        Prequest send = world.SendInit(from, 0, 64, next, 1);
        Check.Equal(before.PendingRequests + 2, MP.Stats.PendingRequests,
                    "two persistent requests count as pending for their life");
        Check.Equal(before.Operations, MP.Stats.Operations, "Init starts nothing");

        // before the first Start: inactive, the empty status
        Status st = recv.Wait();
        Check.True(st.Source == MP.AnySource && st.Tag == MP.AnyTag && st.Count == 0 &&
                       st.Bytes == 0 && !st.Cancelled,
                   "Wait before any Start: the empty status");
        Check.True(send.Test(out st) && st.Count == 0, "Test before any Start: true, empty");
        Check.True(recv.IsCompleted, "IsCompleted before any Start");
        Check.Equal(MP.Undefined, Request.WaitAny(recv, send),
                    "WaitAny skips never-started requests");
        Status[] empties = Request.WaitAll(recv, send);
        Check.True(empties[0].Count == 0 && empties[1].Tag == MP.AnyTag,
                   "WaitAll gives them the empty status");
        Check.Equal(0, Request.WaitSome(recv, send).Length, "WaitSome skips them too");
        Check.True(Request.TestAll(recv, send), "TestAll of inactive requests");

        bool allRight = true;
        for (int use = 0; use < 50; use++) {
            for (int i = 0; i < 64; i++)
                from[i] = rank * 100000 + use * 100 + i;
            recv.Start();
            send.Start();
            Status rs = recv.Wait(), ss = send.Wait();
            for (int i = 0; i < 64; i++)
                allRight &= into[i] == prev * 100000 + use * 100 + i;
            allRight &= rs.Source == prev && rs.Tag == 1 && rs.Count == 64 && rs.Bytes == 256;
            allRight &= ss.Source == -1 && ss.Tag == 1 && ss.Count == 64;
        }
        Check.True(allRight, "50 uses of one send and one receive: data and statuses");
        Check.Equal(before.Operations + 100, MP.Stats.Operations, "each Start is one operation");
        Check.Equal(0L, MP.Stats.PinsLive, "no pin between uses");

        // the last status again; Test and IsCompleted of a completed use
        Check.True(recv.Test(out st) && st.Source == prev && st.Count == 64,
                   "Test after the use: its status");
        recv.Dispose();
        send.Dispose();
        Check.Equal(before.PendingRequests, MP.Stats.PendingRequests, "Dispose frees both");
    }

    static void StartWhileActive()
    {
        var into = new int[4];
        Prequest recv = world.RecvInit(into, 0, 4, prev, 2);
        recv.Start();
        Check.Throws<InvalidOperationException>(() => recv.Start(), "Start while active");
        Check.Throws<InvalidOperationException>(() => Prequest.StartAll(recv),
                                                "StartAll with an active request");
        world.Barrier();   // every receive is posted (and refused a second start)
        world.Send(new[] { 7, 8, 9, rank }, next, 2);
        Status st = recv.Wait();
        Check.True(st.Count == 4 && into[3] == prev, "the running use was unaffected");

        // finished at once, but not yet reported: still active
        Prequest nothing = world.SendInit(new int[1], 0, 1, MP.ProcNull, 3);
        nothing.Start();
        Check.Throws<InvalidOperationException>(() => nothing.Start(),
                                                "Start before the completion was reported");
        nothing.Wait();
        nothing.Start();   // now inactive again
        Check.True(nothing.IsCompleted, "IsCompleted reports it");
        nothing.Start();
        Status unused;
        Check.True(nothing.Test(out unused), "Test reports it");
        nothing.Start();
        Check.Equal(0, Request.WaitAny(nothing), "WaitAny reports it");
        nothing.Start();
        Check.True(Request.TestAll(nothing), "TestAll reports it");
        nothing.Start();
        Check.Equal(1, Request.WaitSome(nothing).Length, "WaitSome reports it");
        nothing.Start();
        int index;
        Check.True(Request.TestAny(out index, nothing) && index == 0, "TestAny reports it");
        nothing.Start();
        Check.Equal(1, Request.TestSome(nothing).Length, "TestSome reports it");
        nothing.Start();
        Status[] all = Request.WaitAll(nothing);
        Check.True(all[0].Source == MP.ProcNull, "WaitAll reports it, with its status");
        nothing.Start();   // each report above made it inactive
        nothing.Wait();
        nothing.Dispose();

        // usable after the refusals
        recv.Start();
        world.Send(new[] { 1, 2, 3, rank + 10 }, next, 2);
        recv.Wait();
        Check.Equal(prev + 10, into[3], "the request works after refused starts");
        recv.Dispose();
    }

    static void StartAllRefusals()
    {
        var a = new int[2];
        var b = new int[2];
        Prequest ra = world.RecvInit(a, 0, 2, prev, 4), rb = world.RecvInit(b, 0, 2, prev, 5);
        Check.Throws<ArgumentNullException>(() => Prequest.StartAll(null), "StartAll(null)");
        Check.Throws<ArgumentNullException>(() => Prequest.StartAll(ra, null),
                                            "StartAll with a null entry");
        Check.Throws<InvalidOperationException>(() => Prequest.StartAll(ra, rb, ra),
                                                "StartAll with a request twice");
        Prequest.StartAll();   // nothing
        Prequest disposed = world.SendInit(new int[1], 0, 1, next, 6);
        disposed.Dispose();
        Check.Throws<ObjectDisposedException>(() => Prequest.StartAll(ra, disposed),
                                              "StartAll with a disposed request");
        rb.Start();
        Check.Throws<InvalidOperationException>(() => Prequest.StartAll(ra, rb),
                                                "StartAll with an active request");
        // none of the refused calls started ra: it starts now
        ra.Start();
        world.Barrier();
        world.Send(new[] { rank, 1 }, next, 4);
        world.Send(new[] { rank, 2 }, next, 5);
        Request.WaitAll(ra, rb);
        Check.True(a[0] == prev && a[1] == 1 && b[0] == prev && b[1] == 2,
                   "usable after refused StartAll calls");
        Prequest.StartAll(ra, rb);
        world.Send(new[] { rank, 3 }, next, 5);
        world.Send(new[] { rank, 4 }, next, 4);
        int first = Request.WaitAny(ra, rb), second = Request.WaitAny(ra, rb);
        Check.True(first != second && (first | second) == 1, "WaitAny over Prequests");
        Check.True(a[1] == 4 && b[1] == 3, "StartAll then WaitAny: data");
        ra.Dispose();
        rb.Dispose();
    }

    static void Disposal()
    {
        var into = new int[8];
        MPStats before = MP.Stats;
        Prequest recv = world.RecvInit(into, 0, 8, prev, 7);
        recv.Dispose();
        recv.Dispose();   // idempotent
        Check.Throws<ObjectDisposedException>(() => recv.Start(), "Start after Dispose");
        Check.Throws<ObjectDisposedException>(() => recv.Wait(), "Wait after Dispose");
        Status st;
        Check.Throws<ObjectDisposedException>(() => recv.Test(out st), "Test after Dispose");
        Check.True(recv.IsCompleted, "IsCompleted after Dispose");
        recv.Cancel();   // nothing to cancel
        Check.Equal(MP.Undefined, Request.WaitAny(recv), "WaitAny skips a disposed request");
        int index;
        Check.True(Request.TestAny(out index, recv) && index == MP.Undefined, "TestAny skips it");
        Check.Equal(0, Request.TestSome(recv).Length, "TestSome skips it");
        Status[] entries = Request.WaitAll(recv);
        Check.True(entries[0].Source == MP.AnySource && entries[0].Count == 0,
                   "WaitAll gives it the empty status");
        Check.Throws<ObjectDisposedException>(() => Request.TestAll(recv),
                                              "TestAll completes it as Wait: disposed");
        if (MP.ThreadLevel >= 3) {
            var e =
                Check.Throws<AggregateException>(() => recv.AsTask().Wait(), "await after Dispose");
            Check.True(e != null && e.InnerException is ObjectDisposedException,
                       "... faults with ObjectDisposedException");
        }
        Check.Equal(before.PendingRequests, MP.Stats.PendingRequests, "disposed: not pending");

        // Dispose of an active receive: cancelled, never waits; the tag's next message is not
        // taken by it
        Prequest waiting = world.RecvInit(into, 0, 8, prev, 8);
        waiting.Start();
        Check.Equal(before.PendingRequests + 1, MP.Stats.PendingRequests, "a running receive");
        waiting.Dispose();
        Check.Equal(before.PendingRequests, MP.Stats.PendingRequests,
                    "Dispose of an active receive frees it at once (cancelled)");
        Check.Equal(0L, MP.Stats.PinsLive, "... with its pin");
        Check.Throws<ObjectDisposedException>(() => waiting.Wait(), "Wait after that Dispose");
        world.Barrier();
        Request sent = world.Isend(new[] { rank, 5 }, next, 8);   // (a rank may send to itself)
        var got = new int[2];
        world.Recv(got, prev, 8);
        sent.Wait();
        Check.True(got[0] == prev && got[1] == 5, "the next message goes to the next receive");

        // Dispose of an active send that waits for its receiver (rendezvous): returns at once;
        // the send finishes later and the data arrives intact
        const int n = 1 << 18;   // 2 MiB: not eager
        var big = new double[n];
        for (int i = 0; i < n; i++)
            big[i] = rank * 1e7 + i;
        Prequest send = world.SendInit(big, 0, n, next, 9);
        send.Start();
        send.Dispose();   // the receiver has not posted yet: must not wait
        Check.Throws<ObjectDisposedException>(() => send.Start(), "Start after that Dispose");
        world.Barrier();   // every rank returned from Dispose before any receive is posted
        var bigIn = new double[n];
        world.Recv(bigIn, prev, 9);
        bool intact = true;
        for (int i = 0; i < n; i++)
            intact &= bigIn[i] == prev * 1e7 + i;
        Check.True(intact, "a send disposed while active still delivers its data");
        int polls = 0;
        while (MP.Stats.PendingRequests > before.PendingRequests && ++polls < Bound) {
            GC.Collect();
            world.Iprobe(prev, 30001);
        }
        Check.Equal(before.PendingRequests, MP.Stats.PendingRequests,
                    $"the abandoned send was finished by the core (after {polls} polls)");
        GC.KeepAlive(big);
    }

    static void Cancelled()
    {
        var into = new int[4];
        Prequest recv = world.RecvInit(into, 0, 4, prev, 10);
        recv.Start();
        recv.Cancel();
        Status st = recv.Wait();
        Check.True(st.Cancelled && st.Count == 0, "Cancel of a running persistent receive");
        recv.Cancel();   // inactive: nothing
        recv.Start();    // usable after the cancel
        world.Barrier();
        world.Send(new[] { 4, 3, 2, rank }, next, 10);
        st = recv.Wait();
        Check.True(!st.Cancelled && into[3] == prev, "the next use receives");
        recv.Dispose();
    }

    static void ProcNull()
    {
        var into = new int[] { 42, 43 };
        Prequest recv = world.RecvInit(into, 0, 2, MP.ProcNull, 11);
        Prequest send = world.SendInit(new int[2], 0, 2, MP.ProcNull, 11);
        MPStats before = MP.Stats;
        bool right = true;
        for (int use = 0; use < 3; use++) {
            Prequest.StartAll(recv, send);
            Status rs = recv.Wait(), ss = send.Wait();
            right &=
                rs.Source == MP.ProcNull && rs.Tag == MP.AnyTag && rs.Count == 0 && rs.Bytes == 0;
            right &= ss.Source == MP.ProcNull && ss.Count == 0;
        }
        Check.True(right, "ProcNull uses complete at once with the ProcNull status");
        Check.True(into[0] == 42 && into[1] == 43, "a ProcNull receive writes nothing");
        Check.Equal(before.PinsTaken, MP.Stats.PinsTaken, "ProcNull takes no pin");
        recv.Dispose();
        send.Dispose();
    }

    static void BadArguments()
    {
        MPStats before = MP.Stats;
        var ok = new int[4];
        Check.Throws<ArgumentNullException>(() => world.SendInit(null, 0, 1, next, 1),
                                            "SendInit(null)");
        Check.Throws<ArgumentNullException>(() => world.RecvInit(null, 0, 1, prev, 1),
                                            "RecvInit(null)");
        Check.Throws<ArgumentException>(() => world.SendInit(new int[2, 2], 0, 1, next, 1),
                                        "SendInit range of a 2-D array");
        Check.Throws<ArgumentException>(() => world.RecvInit(new string[2], 0, 1, prev, 1),
                                        "RecvInit into string[]");
        Check.Throws<ArgumentOutOfRangeException>(() => world.SendInit(ok, 3, 2, next, 1),
                                                  "SendInit count past the end");
        Check.Throws<ArgumentOutOfRangeException>(() => world.RecvInit(ok, -1, 1, prev, 1),
                                                  "RecvInit negative offset");
        Check.Throws<ArgumentOutOfRangeException>(() => world.SendInit(ok, 0, 1, size, 1),
                                                  "SendInit dest");
        Check.Throws<ArgumentOutOfRangeException>(() => world.SendInit(ok, 0, 1, MP.AnySource, 1),
                                                  "SendInit dest AnySource");
        Check.Throws<ArgumentOutOfRangeException>(() => world.RecvInit(ok, 0, 1, -7, 1),
                                                  "RecvInit source");
        Check.Throws<ArgumentOutOfRangeException>(() => world.SendInit(ok, 0, 1, next, -1),
                                                  "SendInit tag");
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.RecvInit(ok, 0, 1, prev,
                                 MP.TagUpperBound + 1L > int.MaxValue ? -2 : MP.TagUpperBound + 1),
            "RecvInit tag");
        Check.Throws<ArgumentException>(() => world.SendInit(ok, default(Region), next, 1),
                                        "SendInit of default(Region)");
        Check.Throws<ArgumentException>(() => world.RecvInit(ok, default(Region), prev, 1),
                                        "RecvInit of default(Region)");
        Intracomm dup = world.Dup();
        Prequest onDup = dup.SendInit(ok, 0, 1, MP.ProcNull, 1);
        dup.Dispose();
        Check.Throws<ObjectDisposedException>(() => dup.SendInit(ok, 0, 1, next, 1),
                                              "SendInit on a disposed communicator");
        Check.Throws<ObjectDisposedException>(() => onDup.Start(),
                                              "Start after the communicator's Dispose");
        onDup.Dispose();
        MPStats after = MP.Stats;
        Check.Equal(before.Operations, after.Operations, "no transfer started by bad arguments");
        Check.Equal(before.PendingRequests, after.PendingRequests, "no request left by them");

        // a truncated use raises at its Wait; the request is inactive after it and usable
        var small = new int[2];
        Prequest recv = world.RecvInit(small, 0, 2, prev, 12);
        recv.Start();
        world.Isend(new int[10], next, 12).Wait();
        var e = Check.Throws<MPException>(() => recv.Wait(), "truncated use raises at Wait");
        Check.True(e != null && e.ErrorClass == 14, "truncation error class");
        Check.Throws<MPException>(() => recv.Wait(), "... and at every Wait of that use");
        recv.Start();
        world.Send(new[] { rank, 77 }, next, 12);
        recv.Wait();
        Check.True(small[0] == prev && small[1] == 77, "usable after a truncated use");
        recv.Dispose();
    }

    static void Wildcards()
    {
        var into = new int[3];
        Prequest recv = world.RecvInit(into, 0, 3, MP.AnySource, MP.AnyTag);
        bool right = true;
        for (int use = 0; use < 3; use++) {
            recv.Start();
            world.Send(new[] { rank, use, 0 }, next, 20 + use);
            Status st = recv.Wait();
            right &= st.Source == prev && st.Tag == 20 + use && into[0] == prev && into[1] == use;
            world.Barrier();   // one message in flight per rank at a time
        }
        Check.True(right, "AnySource/AnyTag receive: each use's status");
        recv.Dispose();
    }

    static void Awaited()
    {
        if (MP.ThreadLevel < 3)
            return;
        var into = new long[2];
        var from = new long[2];
        Prequest recv = world.RecvInit(into, 0, 2, prev, 13);
        Prequest send = world.SendInit(from, 0, 2, next, 13);
        bool right = true;
        for (int use = 0; use < 20; use++) {
            from[0] = rank;
            from[1] = use;
            Prequest.StartAll(recv, send);
            Status rs = recv.AsTask().Result;
            send.AsTask().Wait();
            right &= rs.Source == prev && into[0] == prev && into[1] == use;
            right &= ReferenceEquals(rs, recv.Wait());   // Wait after await: the task's status
        }
        Check.True(right, "awaited uses, each started again after its task completed");
        recv.Dispose();
        send.Dispose();

        // Dispose of an awaited running receive: the task faults, nothing waits
        Prequest pending = world.RecvInit(into, 0, 2, prev, 18);   // nobody sends tag 18
        pending.Start();
        var task = pending.AsTask();
        pending.Dispose();
        var e = Check.Throws<AggregateException>(() => task.Wait(),
                                                 "the task of an awaited use disposed");
        Check.True(e != null && e.InnerException is ObjectDisposedException,
                   "... faults with ObjectDisposedException");
    }

    static byte[][] holder = new byte[1][];
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void AllocateIntoHolder(int n) { holder[0] = new byte[n]; }
    static byte[] Promoted(int n)
    {
        AllocateIntoHolder(n);
        GC.Collect();
        GC.Collect();
        return holder[0];
    }

    /// <summary>Pins counted for one use of a receive into buffer, posted before the message is
    /// sent (so that it cannot finish at once).</summary>
    static long PinsOfUse(Prequest recv, byte[] buffer, int tag)
    {
        MPStats before = MP.Stats;
        recv.Start();
        long taken = MP.Stats.PinsTaken - before.PinsTaken;
        world.Barrier();
        world.Send(new byte[buffer.Length], next, tag);
        recv.Wait();
        return taken;
    }

    // As Irecv's: a running use counts a pin where the GC could move the array; none between
    // uses; a young array moves between uses (it is promoted) and the next use follows it.
    static void Pins()
    {
        bool oldMoves = MP.OldGenerationMoves;
        var young = new byte[1000];
        Prequest r1 = world.RecvInit(young, 0, young.Length, prev, 14);
        Check.Equal(1L, PinsOfUse(r1, young, 14), "running use into a nursery array: pinned");
        Check.Equal(0L, MP.Stats.PinsLive, "no pin between uses");
        byte[] old = Promoted(1000);
        Prequest r2 = world.RecvInit(old, 0, old.Length, prev, 15);
        Check.Equal(oldMoves ? 1L : 0L, PinsOfUse(r2, old, 15),
                    "running use into an old array: pinned only if old objects move");
        var large = new byte[100000];
        Prequest r3 = world.RecvInit(large, 0, large.Length, prev, 16);
        Check.Equal(0L, PinsOfUse(r3, large, 16), "running use into a large array: no pin");
        foreach (Prequest r in new[] { r1, r2, r3 })
            r.Dispose();

        // the arrays move between uses (only the requests hold them: no stack reference pins
        // them at the collections); every use lands in the receive array and sends from the other
        var pair = new Pair(100, 17);
        int genBefore = Generation(pair);
        bool right = true;
        for (int use = 0; use < 6; use++) {
            right &= pair.Use(use);
            Garbage(2000);
            GC.Collect(use % 2 == 0 ? 0 : 2);
        }
        int genAfter = Generation(pair);
        Check.True(genBefore == 0 && genAfter > 0,
                   "the receive array was young and has been promoted (moved): generation " +
                       genBefore + ", then " + genAfter);
        Check.True(right, "uses follow the arrays they moved between uses");
        pair.Dispose();
    }

    /// <summary>A persistent receive from prev and send to next of n doubles, whose arrays only
    /// this object and its requests reference (its methods are not inlined: no caller's frame
    /// holds them).</summary>
    sealed class Pair
    {
        double[] into, from;
        Prequest recv, send;

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal Pair(int n, int tag)
        {
            into = new double[n];
            from = new double[n];
            recv = world.RecvInit(into, 0, n, prev, tag);
            send = world.SendInit(from, 0, n, next, tag);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal bool Use(int use)
        {
            for (int i = 0; i < from.Length; i++)
                from[i] = Value(rank, use, i);
            Prequest.StartAll(recv, send);
            Request.WaitAll(recv, send);
            bool right = true;
            for (int i = 0; i < into.Length; i++)
                right &= into[i] == Value(prev, use, i);
            return right;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal int IntoGeneration() => GC.GetGeneration(into);

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal void Dispose()
        {
            recv.Dispose();
            send.Dispose();
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static int Generation(Pair p) => p.IntoGeneration();

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Garbage(int objects)
    {
        for (int g = 0; g < objects; g++)
            GC.KeepAlive(new byte[100]);
    }

    // ---- regions ----

    static double Cell(int r, int i, int j, long use) => ((r * 64.0 + use) * 64.0 + i) * 64.0 + j;
    const double Sentinel = -1.5;

    /// <summary>A field of rows x cols whose ghost columns 0 and cols-1 come from the
    /// neighbours' first and last interior columns: a 2-D halo of four persistent requests
    /// on regions of one array, no packing.</summary>
    sealed class Field
    {
        double[,] f;
        internal Prequest[] requests;
        int rows, cols;

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal Field(int rows, int cols, int tag)
        {
            this.rows = rows;
            this.cols = cols;
            f = new double[rows, cols];
            requests = new[] { world.RecvInit(f, Region.Columns(0, 1), prev, tag),
                               world.RecvInit(f, Region.Columns(cols - 1, 1), next, tag + 1),
                               world.SendInit(f, Region.Columns(cols - 2, 1), next, tag),
                               world.SendInit(f, Region.Columns(1, 1), prev, tag + 1) };
        }

        /// <summary>One use: the interior stamped with use, the ghosts set to Sentinel, the
        /// exchange, then the number of wrong cells.</summary>
        internal int Use(long use)
        {
            Fill(use);
            Start();
            Complete();
            return Verify(use);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal void Fill(long use)
        {
            for (int i = 0; i < rows; i++)
                for (int j = 0; j < cols; j++)
                    f[i, j] = j == 0 || j == cols - 1 ? Sentinel : Cell(rank, i, j, use);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal void Start() => Prequest.StartAll(requests);

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal void Complete() => Request.WaitAll(requests);

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal int Verify(long use)
        {
            int wrong = 0;
            for (int i = 0; i < rows; i++)
                for (int j = 0; j < cols; j++) {
                    double want = j == 0          ? Cell(prev, i, cols - 2, use)
                                  : j == cols - 1 ? Cell(next, i, 1, use)
                                                  : Cell(rank, i, j, use);
                    if (f[i, j] != want)
                        wrong++;
                }
            return wrong;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal int Generation() => GC.GetGeneration(f);

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal void Dispose()
        {
            foreach (Prequest r in requests)
                r.Dispose();
        }
    }

    static void Regions()
    {
        // a 2-D halo on columns of one young field, collections between uses: the field moves
        var field = new Field(10, 8, 70);
        int genBefore = field.Generation(), wrong = 0;
        for (int use = 0; use < 12; use++) {
            wrong += field.Use(use);
            Garbage(1000);
            GC.Collect(use % 3 == 2 ? 2 : 0);
        }
        int genAfter = field.Generation();
        Check.Equal(0, wrong, "column halo of a double[10, 8], 12 uses: cells wrong");
        Check.True(genBefore == 0 && genAfter > 0,
                   "the field was young and moved between uses: generation " + genBefore +
                       ", then " + genAfter);
        field.Dispose();

        // rows into a strided vector; a 3-D box into a box of another shape; ProcNull
        var grid = new int[6, 5];
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 5; j++)
                grid[i, j] = rank * 100 + i * 10 + j;
        var vec = new int[31];
        for (int k = 0; k < vec.Length; k++)
            vec[k] = -1;
        Prequest recvStrided = world.RecvInit(vec, Region.Strided(1, 10, 3), prev, 72);
        Prequest sendRows = world.SendInit(grid, Region.Rows(2, 2), next, 72);
        var cube = new long[4, 4, 4];
        var box = new long[3, 2, 4];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                for (int k = 0; k < 4; k++)
                    cube[i, j, k] = rank * 1000 + i * 100 + j * 10 + k;
        Prequest sendBox =
            world.SendInit(cube, new Region(new[] { 1, 1, 0 }, new[] { 2, 3, 4 }), next, 73);
        Prequest recvBox =
            world.RecvInit(box, new Region(new[] { 0, 0, 0 }, new[] { 3, 2, 4 }), prev, 73);
        Prequest nowhere = world.SendInit(grid, Region.Columns(0, 2), MP.ProcNull, 74);
        bool right = true;
        for (int use = 0; use < 3; use++) {
            Prequest.StartAll(recvStrided, recvBox, sendRows, sendBox, nowhere);
            Status[] st = Request.WaitAll(recvStrided, recvBox, sendRows, sendBox, nowhere);
            for (int k = 0; k < vec.Length; k++) {
                bool picked = k >= 1 && (k - 1) % 3 == 0;
                int n = (k - 1) / 3;   // the n-th element of rows 2..3, row-major
                right &= vec[k] == (picked ? prev * 100 + (2 + n / 5) * 10 + n % 5 : -1);
            }
            for (int n = 0; n < 24; n++) {
                // the n-th element of the sent box [1..2] x [1..3] x [0..3], row-major
                long want = prev * 1000 + (1 + n / 12) * 100 + (1 + n / 4 % 3) * 10 + n % 4;
                right &= box[n / 8, n / 4 % 2, n % 4] == want;
            }
            right &= st[0].Count == 10 && st[0].Source == prev && st[1].Count == 24;
            right &= st[4].Source == MP.ProcNull && st[4].Count == 0;
        }
        Check.True(right, "rows into a strided vector, a 3-D box into another box, ProcNull");
        foreach (Prequest r in new[] { recvStrided, sendRows, sendBox, recvBox, nowhere })
            r.Dispose();

        // refusals, before anything is registered; the rank usable after them
        MPStats before = MP.Stats;
        var flat = new double[10];
        var square = new double[4, 4];
        Check.Throws<ArgumentException>(() => world.SendInit(flat, Region.Columns(0, 1), next, 1),
                                        "SendInit of a 2-D region of a 1-D array");
        Check.Throws<ArgumentException>(() => world.RecvInit(square, Region.Strided(0, 2, 2), prev,
                                                             1),
                                        "RecvInit of a strided region of a 2-D array");
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.SendInit(square, Region.Columns(3, 2), next, 1),
            "SendInit of columns past the end");
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.RecvInit(flat, Region.Strided(0, 4, 4), prev, 1),   // 0, 4, 8, 12
            "RecvInit of a strided region past the end");
        Check.Throws<ArgumentNullException>(() => world.SendInit(null, Region.Rows(0, 1), next, 1),
                                            "SendInit of a region of null");
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.RecvInit(square, Region.Rows(0, 1), size, 1), "RecvInit region source");
        MPStats after = MP.Stats;
        Check.Equal(before.PendingRequests, after.PendingRequests, "refused: nothing registered");
        Check.Equal(before.Operations, after.Operations, "refused: nothing started");
        var again = new Field(4, 4, 76);
        Check.Equal(0, again.Use(1), "a region halo after the refusals");
        again.Dispose();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void UseAndDrop(int tag)
    {
        var into = new int[16];
        Prequest recv = world.RecvInit(into, 0, 16, rank, tag);
        Prequest send = world.SendInit(new int[16], 0, 16, rank, tag);
        Prequest.StartAll(recv, send);
        Request.WaitAll(recv, send);
        world.SendInit(new int[4], 0, 4, next, tag);   // never started
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void StartAndDrop(int tag)
    {
        world.RecvInit(new int[16], 0, 16, prev, tag).Start();   // running when dropped
    }

    // Dropped without Dispose: the core frees them once collected (a running use first
    // finishes), and nothing is left pinned.
    static void Dropped()
    {
        MPStats before = MP.Stats;
        for (int i = 0; i < 5; i++)
            UseAndDrop(40 + i);
        for (int i = 0; i < 5; i++)
            StartAndDrop(50 + i);
        Check.Equal(before.PendingRequests + 20, MP.Stats.PendingRequests,
                    "twenty dropped persistent requests pending until collected");
        world.Barrier();
        for (int i = 0; i < 5; i++)
            world.Send(new int[16], next, 50 + i);
        int polls = 0;
        while ((MP.Stats.PendingRequests > before.PendingRequests || MP.Stats.PinsLive > 0) &&
               ++polls < Bound) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            world.Iprobe(prev, 30001);
        }
        MPStats after = MP.Stats;
        Check.Equal(before.PendingRequests, after.PendingRequests,
                    $"dropped persistent requests freed by the core (after {polls} polls)");
        Check.Equal(0L, after.PinsLive, "no pin left by them");
    }

    // A halo exchange: requests to and from both neighbours made once, then StartAll + WaitAll
    // many times, every value checked.
    static void Halo(int steps)
    {
        const int n = 500;
        double[] toLeft = new double[n], toRight = new double[n], fromLeft = new double[n],
                 fromRight = new double[n];
        var requests = new[] { world.RecvInit(fromLeft, 0, n, prev, 60),
                               world.RecvInit(fromRight, 0, n, next, 61),
                               world.SendInit(toRight, 0, n, next, 60),
                               world.SendInit(toLeft, 0, n, prev, 61) };
        int wrong = 0;
        for (int step = 0; step < steps; step++) {
            for (int i = 0; i < n; i++) {
                toRight[i] = Value(rank, step, i);
                toLeft[i] = -Value(rank, step, i);
            }
            Prequest.StartAll(requests);
            Request.WaitAll(requests);
            for (int i = 0; i < n; i++) {
                if (fromLeft[i] != Value(prev, step, i))
                    wrong++;
                if (fromRight[i] != -Value(next, step, i))
                    wrong++;
            }
        }
        Check.Equal(0, wrong, $"halo loop of {steps} steps: values wrong");
        foreach (Prequest r in requests)
            r.Dispose();
    }

    // distinct for every sender (< 2^6), use (< 2^20) and element (< 2^13): exact in a double
    static double Value(int sender, long use, int i) => (sender * 1048576.0 + use) * 8192.0 + i;

    // ---- the GC stress mode ----

    /// <summary>A halo with both neighbours: receives from prev (tag) and next (tag + 1), sends
    /// the other way, n doubles each. Only this object and its requests reference the arrays,
    /// and every method touching them is not inlined, so that between the steps of a use (and
    /// between uses) no stack frame pins them: during a use only the core holds them in
    /// place.</summary>
    sealed class Halo4
    {
        double[] toLeft, toRight, fromLeft, fromRight;
        internal Prequest[] requests;
        internal long stamp;
        IntPtr lastAddress;   // fromLeft's data when last seen (read, never pinned)

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal Halo4(int n, int tag)
        {
            toLeft = new double[n];
            toRight = new double[n];
            fromLeft = new double[n];
            fromRight = new double[n];
            requests = new[] { world.RecvInit(fromLeft, 0, n, prev, tag),
                               world.RecvInit(fromRight, 0, n, next, tag + 1),
                               world.SendInit(toRight, 0, n, next, tag),
                               world.SendInit(toLeft, 0, n, prev, tag + 1) };
            lastAddress = Marshal.UnsafeAddrOfPinnedArrayElement(fromLeft, 0);
        }

        /// <summary>Whether the receive array moved since the last call (or since the requests
        /// were made): its next use must give MPI the new address.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal bool Moved()
        {
            IntPtr now = Marshal.UnsafeAddrOfPinnedArrayElement(fromLeft, 0);
            bool moved = now != lastAddress;
            lastAddress = now;
            return moved;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal void Fill()
        {
            for (int i = 0; i < toLeft.Length; i++) {
                toRight[i] = Value(rank, stamp, i);
                toLeft[i] = -Value(rank, stamp, i);
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal void StartReceives() => Prequest.StartAll(requests[0], requests[1]);

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal void StartSends(bool together)
        {
            if (together) {
                Prequest.StartAll(requests[2], requests[3]);
            } else {
                requests[2].Start();
                requests[3].Start();
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal void Complete(int how)
        {
            if (how == 0) {
                Request.WaitAll(requests);
            } else if (how == 1) {
                Request.WaitSome(requests);
                Status unused;
                foreach (Prequest r in requests)
                    while (!r.Test(out unused)) { }
            } else {
                while (Request.WaitAny(requests) >= 0) { }
            }
        }

        /// <summary>Elements wrong in the arrays after the use of stamp.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal int Verify()
        {
            int wrong = 0;
            for (int i = 0; i < toLeft.Length; i++) {
                if (fromLeft[i] != Value(prev, stamp, i))
                    wrong++;
                if (fromRight[i] != -Value(next, stamp, i))
                    wrong++;
                if (toRight[i] != Value(rank, stamp, i) || toLeft[i] != -Value(rank, stamp, i))
                    wrong++;   // a send does not change its array
            }
            return wrong;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal void Dispose()
        {
            foreach (Prequest r in requests)
                r.Dispose();
        }
    }

    /// <summary>Another thread that forces minor and major collections in turn, a millisecond
    /// apart (at any moment of this thread's uses), until disposed.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Churn(Random random)
    {
        int objects = random.Next(50, 500);
        for (int g = 0; g < objects; g++)
            GC.KeepAlive(new byte[random.Next(16, 256)]);
    }

    /// <summary>Retires the oldest halo: disposed, or dropped (not inlined: no frame of the
    /// caller keeps it, so the collector can take it).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Retire(List<Halo4> live, List<Field> fields, bool dispose)
    {
        if (dispose) {
            live[0].Dispose();
            fields[0].Dispose();
        }
        live.RemoveAt(0);
        fields.RemoveAt(0);
    }

    static int Stress(int rounds)
    {
        // 480 B and 5.6 KiB (nursery), 7.6 KiB (the largest below the large-object space),
        // 24 KiB (large-object space: never moves)
        int[] sizes = { 60, 700, 950, 3000 };
        const int uses = 10;
        MPStats before = MP.Stats;
        long wrong = 0, moved = 0, checkedUses = 0, stamps = 0;
        var live = new List<Halo4>();
        var fields = new List<Field>();
        var random = new Random(rank * 7919 + 1);
        Op userOp = null;
        using (new PacedCollector())
        {
            for (int round = 0; round < rounds; round++) {
                // the second half with a C# operator in existence: every MPI call of an internal
                // call then runs GC-safe, a collection possible at any moment of it
                if (round == rounds / 2)
                    userOp = Op.Create<double>((a, b) => a + b);
                // young arrays each round; up to four halos live on across rounds
                live.Add(new Halo4(sizes[round % sizes.Length], 100 + 2 * (round % 50)));
                // and a 2-D field whose ghost columns are regions: 640 B or 7.2 KiB, young
                fields.Add(round % 2 == 0 ? new Field(10, 8, 200 + 2 * (round % 50))
                                          : new Field(30, 30, 200 + 2 * (round % 50)));
                for (int k = 0; k < live.Count; k++) {
                    Halo4 h = live[k];
                    Field field = fields[k];
                    for (int use = 0; use < uses; use++) {
                        h.stamp = stamps++;
                        h.Fill();
                        field.Fill(h.stamp);
                        if (h.Moved())
                            moved++;
                        // receives running while this thread and the collector collect
                        field.Start();
                        h.StartReceives();
                        Churn(random);
                        if (use % 4 == 0)
                            GC.Collect(0);
                        else if (use % 6 == 1)
                            GC.Collect();
                        h.StartSends(use % 2 == 0);
                        Churn(random);
                        h.Complete(use % 3);
                        field.Complete();
                        wrong += h.Verify() + field.Verify(h.stamp);
                        checkedUses++;
                        // between uses: garbage and collections move the young arrays
                        Churn(random);
                        if (use % 4 == 3)
                            GC.Collect(0);
                        if (use % 6 == 5)
                            GC.Collect();
                    }
                }
                if (live.Count > 3)
                    Retire(live, fields, round % 2 == 0);
                world.Barrier();   // a retired halo's tags are used again only after every rank
            }
            foreach (Halo4 h in live)
                h.Dispose();
            foreach (Field f in fields)
                f.Dispose();
            live.Clear();
            fields.Clear();
        }
        if (userOp != null)
            userOp.Dispose();
        if (rank == 0)
            Console.WriteLine(
                $"rank 0: {checkedUses} uses checked, receive arrays moved {moved} " +
                $"times while their requests existed, {MP.Stats.Collections} " + "collections");
        Check.Equal(0L, wrong, $"elements wrong in {checkedUses} checked uses under collections");
        Check.True(moved > 0, $"receive arrays moved while their requests existed ({moved} times)");
        int polls = 0;
        while ((MP.Stats.PendingRequests > before.PendingRequests || MP.Stats.PinsLive > 0) &&
               ++polls < 1000) {
            GC.Collect();
            world.Iprobe(prev, 30001);
        }
        Check.Equal(before.PendingRequests, MP.Stats.PendingRequests,
                    $"every persistent request freed, disposed or collected (after {polls} polls)");
        world.Barrier();
        return Check.FinishWithNoPinLeft("PersistentTest stress");
    }

    static int Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "stress")
            return Stress(args.Length > 1 ? int.Parse(args[1]) : 16);
        Basics();
        StartWhileActive();
        StartAllRefusals();
        Disposal();
        Cancelled();
        ProcNull();
        BadArguments();
        Wildcards();
        Awaited();
        Pins();
        Regions();
        Dropped();
        Halo(300);
        world.Barrier();
        Check.Equal(0L, MP.Stats.PendingRequests, "no pending requests at the end");
        return Check.FinishWithNoPinLeft("PersistentTest");
    }
}

// NonBlockingTest — Isend/Irecv/Issend and Request (Wait, Test, IsCompleted, Cancel, WaitAll,
// WaitAny) as API.md states them; the pin policy's decisions per object kind, seen through
// MP.Stats; release of pins by the GC hook for completed-but-unwaited and abandoned requests.
using System;
using System.Linq;
using System.MP;
using System.Runtime.CompilerServices;

static class NonBlockingTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, next = Ring.Next, prev = Ring.Prev;
    const int Bound = 100000;   // polls before a condition that must come true is declared lost

    static void Rings()
    {
        var s = Enumerable.Range(rank * 100, 100).ToArray();
        var r = new int[100];
        Request rr = world.Irecv(r, prev, 1);
        Request sr = world.Isend(s, next, 1);
        Status ss = sr.Wait(), rs = rr.Wait();
        Check.True(r[0] == prev * 100 && r[99] == prev * 100 + 99, "Isend/Irecv ring data");
        Check.True(rs.Source == prev && rs.Tag == 1 && rs.Count == 100 && rs.Bytes == 400,
                   "Irecv status");
        Check.True(ss.Source == -1 && ss.Tag == 1 && ss.Count == 100 && ss.Bytes == 400,
                   "Isend status tells what was sent");
        Check.True(ReferenceEquals(rs, rr.Wait()), "Wait again returns the same status");
        Check.True(rr.IsCompleted && sr.IsCompleted, "IsCompleted after Wait");

        // ranges, a 2-D array, an object, and Issend
        var big = new double[50000];
        for (int i = 0; i < big.Length; i++)
            big[i] = rank + i;
        var into = Enumerable.Repeat(-1.0, 30000).ToArray();
        var grid = new double[20, 30];
        grid[19, 29] = rank + 0.5;
        var gridIn = new double[20, 30];
        var reqs = new[] {
            world.Irecv(into, 10, 20000, prev, 2),
            world.Irecv(gridIn, prev, 3),
            world.Isend(big, 25000, 20000, next, 2),
            world.Issend(grid, next, 3),
        };
        Request.WaitAll(reqs);
        Check.True(into[10] == prev + 25000 && into[20009] == prev + 44999 && into[9] == -1 &&
                       into[20010] == -1,
                   "Irecv range lands in its window only");
        Check.Equal(prev + 0.5, gridIn[19, 29], "Issend of a double[,]");
        Status st;
        Check.True(reqs.All(q => q.Test(out st) && st != null), "Test after WaitAll");
    }

    static void TestAndWaitAny()
    {
        var r = new long[4];
        Request rr = world.Irecv(r, prev, 4);
        Status st;
        Check.True(!rr.Test(out st) && st == null, "Test is false before anything was sent");
        Check.True(!rr.IsCompleted, "IsCompleted is false before anything was sent");
        world.Barrier();   // every rank has tested
        Request sr = world.Isend(new long[] { rank, 1, 2, 3 }, next, 4);
        int polls = 0;
        while (!rr.Test(out st) && ++polls < Bound * 10) { }
        Check.True(st != null && r[0] == prev && st.Source == prev,
                   "Test polls the receive to completion");
        sr.Wait();

        var a = new int[1];
        var b = new int[1];
        var reqs = new[] { world.Irecv(a, prev, 5), world.Irecv(b, prev, 6) };
        var sends =
            new[] { world.Isend(new[] { 66 }, next, 6), world.Isend(new[] { 55 }, next, 5) };
        int first = Request.WaitAny(reqs), second = Request.WaitAny(reqs),
            none = Request.WaitAny(reqs);
        Check.True(first != second && (first | second) == 1, "WaitAny returns each index once");
        Check.Equal(MP.Undefined, none, "WaitAny with nothing running returns MP.Undefined");
        Check.True(a[0] == 55 && b[0] == 66, "WaitAny data");
        Request.WaitAll(sends);
        Check.Throws<ArgumentNullException>(() => Request.WaitAll(reqs[0], null),
                                            "WaitAll with a null entry");
        Check.Throws<ArgumentNullException>(() => Request.WaitAny(null), "WaitAny(null)");
    }

    static void Cancel()
    {
        var r = new byte[64];
        MPStats before = MP.Stats;
        Request rr = world.Irecv(r, prev, 30000);   // nobody sends this tag
        rr.Cancel();
        Status st = rr.Wait();
        Check.True(st.Cancelled, "a cancelled receive reports Cancelled");
        MPStats after = MP.Stats;
        Check.Equal(0L, after.PinsLive, "cancelled receive leaves no pin");
        Check.Equal(before.PendingRequests, after.PendingRequests,
                    "cancelled receive leaves no request");
    }

    static void BadArguments()
    {
        long ops = MP.Stats.Operations;
        Check.Throws<ArgumentNullException>(() => world.Isend(null, next, 1), "Isend(null)");
        Check.Throws<ArgumentNullException>(() => world.Irecv(null, prev, 1), "Irecv(null)");
        Check.Throws<ArgumentException>(() => world.Isend("text", next, 1), "Isend(string)");
        Check.Throws<ArgumentException>(() => world.Irecv(new object[2], prev, 1),
                                        "Irecv(object[])");
        Check.Throws<ArgumentOutOfRangeException>(() => world.Isend(new int[2], world.Size, 1),
                                                  "Isend dest");
        Check.Throws<ArgumentOutOfRangeException>(() => world.Irecv(new int[2], -4, 1),
                                                  "Irecv source");
        Check.Throws<ArgumentOutOfRangeException>(() => world.Isend(new int[2], next, -1),
                                                  "Isend tag");
        Check.Throws<ArgumentOutOfRangeException>(() => world.Isend(new int[2], 1, 2, next, 1),
                                                  "Isend range count");
        Check.Throws<ArgumentOutOfRangeException>(() => world.Irecv(new int[2], 3, 0, prev, 1),
                                                  "Irecv range offset");
        Check.Throws<ArgumentException>(() => world.Irecv(new int[2, 2], 0, 1, prev, 1),
                                        "Irecv range of 2-D");
        Check.Equal(ops, MP.Stats.Operations, "no transfer started by bad arguments");
        // a truncated non-blocking receive: the error comes at Wait, the communicator stays usable
        var small = new int[2];
        Request rr = world.Irecv(small, prev, 7);
        world.Isend(new int[10], next, 7).Wait();
        var e = Check.Throws<MPException>(() => rr.Wait(), "truncated Irecv raises at Wait");
        Check.True(e != null && e.ErrorClass == 14, "truncation error class");
        Check.True(rr.IsCompleted, "a failed request is completed");
        var x = new int[1];
        Ring.Exchange(() => world.Send(new[] { 9 }, next, 8), () => world.Irecv(x, prev, 8).Wait());
        Check.Equal(9, x[0], "usable after a failed request");
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

    /// <summary>Posts a receive into buffer before anything is sent (so it cannot finish at
    /// once), then sends to it and waits. Returns pins taken by the receive.</summary>
    static long PinsOfPostedReceive(byte[] buffer, int tag)
    {
        MPStats before = MP.Stats;
        Request rr = world.Irecv(buffer, prev, tag);
        long taken = MP.Stats.PinsTaken - before.PinsTaken;
        world.Barrier();                                  // every receive is posted
        world.Send(new byte[buffer.Length], next, tag);   // one eager or rendezvous send
        rr.Wait();
        return taken;
    }

    static void PinPolicy()
    {
        bool oldMoves = MP.OldGenerationMoves;
        MPStats before = MP.Stats;
        // a send that completes inside Isend (it meets a posted receive) takes no pin at all
        Request posted = world.Irecv(new byte[16], prev, 20);
        world.Barrier();
        long taken = MP.Stats.PinsTaken;
        var req = world.Isend(new byte[16], next, 20);
        Check.Equal(taken, MP.Stats.PinsTaken, "a send finished inside Isend takes no pin");
        Check.True(req.IsCompleted, "... and is complete at once");
        posted.Wait();

        Check.Equal(1L, PinsOfPostedReceive(new byte[1000], 21),
                    "running receive into a nursery array: pinned");
        Check.Equal(oldMoves ? 1L : 0L, PinsOfPostedReceive(Promoted(1000), 22),
                    "running receive into an old array: pinned only if old objects move");
        Check.Equal(0L, PinsOfPostedReceive(new byte[100000], 23),
                    "running receive into a large array: never pinned");
        Check.Equal(0L, MP.Stats.PinsLive, "policy checks leave no pin");
    }

    static void ReleasedByCollection()
    {
        // a finished transfer whose Request was never waited: the next collection releases its pin
        var buffer = new byte[1000];
        MPStats before = MP.Stats;
        Request rr = world.Irecv(buffer, prev, 40);
        Check.Equal(before.PinsTaken + 1, MP.Stats.PinsTaken, "posted nursery receive is pinned");
        world.Barrier();
        var payload = new byte[1000];
        for (int i = 0; i < payload.Length; i++)
            payload[i] = (byte)(i * 3 + rank);
        world.Send(payload, next, 40);   // matches a posted receive: completes
        int polls = 0;
        while (MP.Stats.PinsReleasedByGC == before.PinsReleasedByGC && ++polls < Bound) {
            world.Iprobe(prev, 30001);   // drives MPI progress, completes nothing of ours
            GC.Collect(0);
        }
        MPStats mid = MP.Stats;
        Check.Equal(before.PinsReleasedByGC + 1, mid.PinsReleasedByGC,
                    $"a collection released the finished transfer's pin (after {polls} polls)");
        Check.Equal(before.PinsLive, mid.PinsLive, "PinsLive dropped back");
        Check.Equal(before.PendingRequests + 1, mid.PendingRequests,
                    "the request itself waits for Wait");
        Status st = rr.Wait();
        bool intact = st.Count == 1000;
        for (int i = 0; i < 1000 && intact; i++)
            intact = buffer[i] == (byte)(i * 3 + prev);
        Check.True(intact, "data intact although the buffer could move once unpinned");
        MPStats after = MP.Stats;
        Check.Equal(mid.PinsReleasedByWait, after.PinsReleasedByWait,
                    "Wait had no pin left to release");
        Check.Equal(before.PendingRequests, after.PendingRequests, "Wait completed the request");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void PostAndForget(int tag) { world.Irecv(new byte[700], prev, tag); }

    static void Abandoned()
    {
        MPStats before = MP.Stats;
        for (int i = 0; i < 10; i++)
            PostAndForget(50 + i);
        Check.Equal(before.PendingRequests + 10, MP.Stats.PendingRequests,
                    "ten abandoned receives pending");
        world.Barrier();
        for (int i = 0; i < 10; i++)
            world.Send(new byte[700], next, 50 + i);
        int polls = 0;
        while ((MP.Stats.PendingRequests > before.PendingRequests || MP.Stats.PinsLive > 0) &&
               ++polls < Bound) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            world.Iprobe(prev, 30001);
        }
        MPStats after = MP.Stats;
        Check.Equal(before.PendingRequests, after.PendingRequests,
                    $"abandoned requests finish (after {polls} polls)");
        Check.Equal(0L, after.PinsLive, "abandoned requests leave no pin");
        Check.True(after.PinsReleasedByGC >= before.PinsReleasedByGC + 10,
                   "their pins were released by the GC side");
    }

    // More receives in flight than one chunk of the registry's pinning root holds (256): young
    // arrays, collections of both kinds while they wait, then every byte must land in its array.
    static void ManyInFlight()
    {
        const int count = 1000, size = 64;
        MPStats before = MP.Stats;
        var buffers = new byte[count][];
        var requests = new Request[count];
        for (int i = 0; i < count; i++) {
            buffers[i] = new byte[size];
            requests[i] = world.Irecv(buffers[i], prev, 70);
        }
        Check.Equal(before.PendingRequests + count, MP.Stats.PendingRequests,
                    "all receives in flight");
        // garbage to move the survivors, then minor and major collections
        for (int k = 0; k < 4; k++) {
            for (int g = 0; g < 2000; g++)
                GC.KeepAlive(new byte[100]);
            GC.Collect(0);
            GC.Collect();
        }
        world.Barrier();
        var payload = new byte[size];
        for (int i = 0; i < count; i++) {
            for (int b = 0; b < size; b++)
                payload[b] = (byte)(i * 7 + b + rank);
            world.Send(payload, next, 70);
        }
        Request.WaitAll(requests);
        int wrong = 0;
        for (int i = 0; i < count; i++)
            for (int b = 0; b < size; b++)
                if (buffers[i][b] != (byte)(i * 7 + b + prev))
                    wrong++;
        Check.Equal(0, wrong, "bytes wrong in 1000 young receive arrays kept across collections");
        MPStats after = MP.Stats;
        Check.Equal(before.PendingRequests, after.PendingRequests, "every receive completed");
        Check.Equal(before.PinsLive, after.PinsLive, "every pin released");
    }

    // A request record is reused for every transfer a loop completes one at a time, and its id
    // carries how often: ids must stay valid past 2^31 uses (the registry starts each record's
    // count 512 uses before that point, so this loop crosses it).
    static void RecordsReusedPastTheirCount()
    {
        var into = new byte[16];
        var payload = new byte[16];
        int wrong = 0;
        for (int i = 0; i < 2000; i++) {
            payload[0] = (byte)i;
            Request r = world.Irecv(into, rank, 80);   // from itself: registered, then matched
            world.Send(payload, rank, 80);
            Status st = r.Wait();
            if (st.Count != 16 || into[0] != (byte)i)
                wrong++;
        }
        Check.Equal(0, wrong, "2000 requests through one record, each completed by Wait");
    }

    static int Main()
    {
        Rings();
        TestAndWaitAny();
        Cancel();
        BadArguments();
        PinPolicy();
        ReleasedByCollection();
        Abandoned();
        ManyInFlight();
        RecordsReusedPastTheirCount();
        world.Barrier();
        Check.Equal(0L, MP.Stats.PendingRequests, "no pending requests at the end");
        return Check.FinishWithNoPinLeft("NonBlockingTest");
    }
}

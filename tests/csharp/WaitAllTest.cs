// WaitAllTest — Request.WaitAll waits for every running request in one call into the core: mixed
// sets (point-to-point, persistent, collective, v-collective requests), requests finished at once
// or reported before (inactive: the empty status), Prequests not started or disposed, failures
// (every request completed, the first failure raised, each failed one raising its own exception
// again), awaited requests, a request another thread holds, an entry given twice, and sets larger
// than the core keeps on its stack — each request afterwards exactly as its own Wait leaves it.
// "stress": more rounds of the halo loop, with a heap churning on another thread.
using System;
using System.Linq;
using System.MP;
using System.Threading;

static class WaitAllTest
{
    static readonly Intracomm world = Ring.World;
    static readonly int rank = Ring.Rank, size = Ring.Size, next = Ring.Next, prev = Ring.Prev;

    // clang-format off
    static bool IsEmpty(Status s) =>
        s != null && s.Source == MP.AnySource && s.Tag == MP.AnyTag && s.Count == 0 &&
        s.Bytes == 0;
    // clang-format on

    /// <summary>One of each kind in one WaitAll: statuses in order, the data, and every request
    /// reported as by its own Wait (Wait again returns the same status; a Prequest is inactive,
    /// ready to start again).</summary>
    static void MixedSet()
    {
        for (int round = 0; round < 3; round++) {
            var inbox = new int[3];
            var pin = new long[2];
            var sum = new int[1];
            var gathered = new int[size * (size + 1) / 2];
            int[] counts = Enumerable.Range(1, size).ToArray();
            int[] displs = counts.Select((c, r) => r * (r + 1) / 2).ToArray();
            Prequest precv = world.RecvInit(pin, 0, 2, prev, 11);
            Prequest psend = world.SendInit(new long[] { round, 7 }, 0, 2, next, 11);
            Prequest idle = world.RecvInit(new int[1], 0, 1, prev, 12);   // never started
            Prequest gone = world.SendInit(new int[1], 0, 1, next, 13);
            gone.Dispose();
            Request nowhere = world.Isend(new[] { 1 }, 0, 1, MP.ProcNull, 14);   // done at once
            Request reported = world.Isend(new[] { 5 }, 0, 1, MP.ProcNull, 15);
            reported.Wait();   // inactive: the empty status
            Request recv = world.Irecv(inbox, 0, 3, prev, 10);
            Prequest.StartAll(precv, psend);
            Request send = world.Isend(new[] { rank, round, 9 }, 0, 3, next, 10);
            Request all = world.Iallreduce(new[] { rank + 1 }, sum, Op.Sum);
            Request gather = world.Iallgatherv(Enumerable.Repeat(rank, rank + 1).ToArray(),
                                               gathered, counts, displs);
            Request barrier = world.Ibarrier();
            Request[] set = { recv, precv,    idle,  send,   all,    nowhere,
                              gone, reported, psend, gather, barrier };
            Status[] st = Request.WaitAll(set);
            string w = $"round {round}: ";
            Check.Equal(set.Length, st.Length, w + "a status per request");
            Check.True(st[0].Source == prev && st[0].Tag == 10 && st[0].Count == 3,
                       w + "the receive's status, in place: " + st[0]);
            Check.True(inbox[0] == prev && inbox[1] == round && inbox[2] == 9,
                       w + "the receive's data");
            Check.True(st[1].Source == prev && st[1].Tag == 11 && st[1].Count == 2,
                       w + "the persistent receive's status: " + st[1]);
            Check.True(pin[0] == round && pin[1] == 7, w + "the persistent receive's data");
            Check.True(IsEmpty(st[2]), w + "a Prequest never started: the empty status");
            Check.True(st[3].Tag == 10 && st[3].Count == 3, w + "the send's status: " + st[3]);
            Check.Equal(size * (size + 1) / 2, sum[0], w + "Iallreduce's result");
            Check.True(st[5].Source == MP.ProcNull, w + "a send to ProcNull, done at once");
            Check.True(IsEmpty(st[6]), w + "a disposed Prequest: the empty status");
            Check.True(IsEmpty(st[7]), w + "a request reported before: the empty status");
            Check.True(st[8].Tag == 11 && st[8].Count == 2, w + "the persistent send's status");
            bool gatheredOk = true;
            for (int r = 0; r < size; r++)
                for (int k = 0; k < r + 1; k++)
                    gatheredOk &= gathered[displs[r] + k] == r;
            Check.True(gatheredOk, w + "Iallgatherv's blocks");
            // each as its own Wait left it
            Check.True(recv.Wait() == st[0] && send.Wait() == st[3] && precv.Wait() == st[1],
                       w + "Wait afterwards returns the same status");
            Check.True(recv.IsCompleted && all.IsCompleted && barrier.IsCompleted,
                       w + "IsCompleted afterwards");
            Check.Throws<ObjectDisposedException>(() => gone.Wait(), w + "the disposed one");
            Status[] again = Request.WaitAll(set);
            Check.True(again.All(IsEmpty), w + "WaitAll again: every entry the empty status");
            // the Prequests are inactive: they start again, and their next use is reported
            pin[0] = -1;
            Prequest.StartAll(precv, psend);
            Status[] next2 = Request.WaitAll(psend, precv);
            Check.True(next2[1].Count == 2 && pin[0] == round,
                       w + "the Prequests' next use, after WaitAll made them inactive");
            foreach (Prequest p in new[] { precv, psend, idle })
                p.Dispose();
        }
        world.Barrier();
    }

    /// <summary>Two failures of different kinds among good requests: WaitAll completes every
    /// request, raises the first failure in array order, and each failed request's own Wait
    /// raises its own failure (not the other's text); a failed Prequest is inactive.</summary>
    static void Failures()
    {
        var small = new int[1];      // 4 bytes for a message of 12
        var smaller = new byte[2];   // 2 bytes for a message of 12
        var good = new int[3];
        var pbuf = new int[2];
        Request bad1 = world.Irecv(small, 0, 1, prev, 20);
        Request fine = world.Irecv(good, 0, 3, prev, 21);
        Request bad2 = world.Irecv(smaller, 0, 2, prev, 22);
        Prequest pbad = world.RecvInit(pbuf, 0, 2, prev, 23);
        pbad.Start();
        Request[] sends = { world.Isend(new[] { 1, 2, 3 }, 0, 3, next, 20),
                            world.Isend(new[] { 4, 5, 6 }, 0, 3, next, 21),
                            world.Isend(new[] { 7, 8, 9 }, 0, 3, next, 22),
                            world.Isend(new[] { 1, 2, 3 }, 0, 3, next, 23) };
        MPException e = Check.Throws<MPException>(
            () => Request.WaitAll(bad1, fine, sends[0], bad2, pbad, sends[1], sends[2], sends[3]),
            "WaitAll raises a failure");
        Check.True(e != null && e.Message.Contains("4 bytes") && e.Message.Contains("tag 20"),
                   "the first failure in array order: " + e?.Message);
        Check.True(good[0] == 4 && good[2] == 6, "the good receive among them completed");
        Status st;
        Check.True(fine.Test(out st) && st.Count == 3, "its status is there");
        MPException e1 = Check.Throws<MPException>(() => bad1.Wait(), "the first raises again");
        Check.True(e1 != null && e1.Message == e.Message, "with its own text: " + e1?.Message);
        MPException e2 = Check.Throws<MPException>(() => bad2.Wait(), "the second raises");
        Check.True(e2 != null && e2.Message.Contains("2 bytes") && e2.Message.Contains("tag 22"),
                   "with its own text, not the first's: " + e2?.Message);
        MPException ep = Check.Throws<MPException>(() => pbad.Wait(), "the Prequest raises");
        Check.True(ep != null && ep.Message.Contains("8 bytes") && ep.Message.Contains("tag 23"),
                   "with its own text: " + ep?.Message);
        // the failed Prequest is inactive: it starts again
        pbad.Start();
        Request s = world.Isend(new[] { 5, 6 }, 0, 2, next, 23);
        Status[] ok = Request.WaitAll(pbad, s);
        Check.True(ok[0].Count == 2 && pbuf[0] == 5 && pbuf[1] == 6,
                   "the Prequest's next use after its failure");
        pbad.Dispose();
        // a v-collective's check (the core's verify hook) fails inside WaitAll too
        if (size > 1) {
            int[] twos = Enumerable.Repeat(2, size).ToArray();
            int[] displs = Enumerable.Range(0, size).Select(b => 2 * b).ToArray();
            var all = rank == 0 ? new int[2 * size] : null;
            var inbox = new int[1];
            Request r = world.Irecv(inbox, 0, 1, prev, 24);
            Request g = world.Igatherv(new int[rank == 1 ? 3 : 2], all, twos, displs, 0);
            Request t = world.Isend(new[] { 42 }, 0, 1, next, 24);
            Exception ge = null;
            try {
                Request.WaitAll(r, g, t);
            } catch (Exception x) {
                ge = x;
            }
            if (rank == 0)
                Check.True(ge is MPException && ge.Message.Contains("counts[1] at the root"),
                           "the v-collective's disagreement, raised by WaitAll: " + ge?.Message);
            else
                Check.True(ge == null, "no failure off the root: " + ge?.Message);
            Check.True(inbox[0] == 42 && r.IsCompleted && t.IsCompleted,
                       "the requests beside it completed");
        }
        world.Barrier();
    }

    /// <summary>An awaited request among running ones: WaitAll reports it through its task, as
    /// its own Wait does.</summary>
    static void Awaited()
    {
        if (MP.ThreadLevel < 3)
            return;
        var a = new int[2];
        var b = new int[2];
        Request ra = world.Irecv(a, 0, 2, prev, 30), rb = world.Irecv(b, 0, 2, prev, 31);
        var task = ra.AsTask();
        Request sa = world.Isend(new[] { 1, 2 }, 0, 2, next, 30);
        Request sb = world.Isend(new[] { 3, 4 }, 0, 2, next, 31);
        Status[] st = Request.WaitAll(rb, ra, sa, sb);
        Check.True(st[1].Source == prev && st[1].Count == 2 && a[1] == 2,
                   "the awaited request's status: " + st[1]);
        Check.True(task.IsCompleted && task.Result.Count == 2, "its task completed");
        Check.True(st[0].Count == 2 && b[1] == 4, "the other receive");
        // awaited after it completed elsewhere: the task gets what WaitAll reported
        Request rc = world.Irecv(new int[1], 0, 1, prev, 32);
        Request sc = world.Isend(new[] { 8 }, 0, 1, next, 32);
        Status[] st2 = Request.WaitAll(rc, sc);
        Check.True(rc.AsTask().Result == st2[0], "a task made afterwards: WaitAll's status");
        world.Barrier();
    }

    /// <summary>A request another thread is waiting on: WaitAll completes every other request,
    /// and for that one does what its own Wait does (the other thread's completion, or the
    /// refusal: InvalidOperationException after all the others are complete).</summary>
    static void HeldByAnotherThread()
    {
        int rounds = 100, spoiled = 0, refused = 0;
        for (int k = 0; k < rounds; k++) {
            var buf = new int[1];
            var other = new int[1];
            Request r = world.Irecv(buf, 0, 1, prev, 40);
            Request q = world.Irecv(other, 0, 1, prev, 41);
            Status held = null;
            var waiter = new Thread(() =>
            {
                try {
                    held = r.Wait();
        }
        catch (InvalidOperationException) { }
    });
    waiter.Start();
    Request s1 = world.Isend(new[] { k }, 0, 1, next, 40);
    Request s2 = world.Isend(new[] { -k }, 0, 1, next, 41);
    Status[] st = null;
    try {
        st = Request.WaitAll(q, r, s1, s2);
    } catch (InvalidOperationException) {
        refused++;
    }
    waiter.Join();
    Status sq;
    if (!q.Test(out sq) || sq.Count != 1 || other[0] != -k || !s1.IsCompleted || !s2.IsCompleted)
        spoiled++;   // the others must be complete whatever became of r
    try {
        Status sr = r.Wait();
        if (sr.Source != prev || sr.Count != 1 || buf[0] != k)
            spoiled++;
        // every report of r is its one status; WaitAll's entry is the empty status when
        // the other thread reported it first (then it was inactive)
        if ((st != null && st[1] != sr && !(held != null && IsEmpty(st[1]))) ||
            (held != null && held != sr))
            spoiled++;
    } catch (Exception) {
        spoiled++;
    }
}
Check.Equal(0, spoiled,
            $"rounds of {rounds} where a request beside a held one, or the held one, " +
                $"was left wrong ({refused} refused)");
world.Barrier();
}

/// <summary>An entry given twice: the first reports, the second is then inactive (the empty
/// status), as with one Wait after the other.</summary>
static void SameRequestTwice()
{
    var a = new int[1];
    Request r = world.Irecv(a, 0, 1, prev, 50);
    Request s = world.Isend(new[] { 3 }, 0, 1, next, 50);
    Status[] st = Request.WaitAll(r, s, r);
    Check.True(st[0].Count == 1 && a[0] == 3, "the first entry reports");
    Check.True(IsEmpty(st[2]), "the second entry of the same request: the empty status");
    world.Barrier();
}

/// <summary>The halo loop of persistent requests (StartAll + WaitAll) with more requests
/// than the core keeps on its stack, the arrays moved by collections between uses.</summary>
static void HaloLoop(int rounds, bool churn)
{
    const int n = 6;   // 12 requests: the core allocates for them
    var inbox = new int [n][];
    var outbox = new int [n][];
    var reqs = new Prequest[2 * n];
    for (int i = 0; i < n; i++) {
        inbox[i] = new int[4];
        outbox[i] = new int[4];
        reqs[i] = world.RecvInit(inbox[i], 0, 4, prev, 60 + i);
        reqs[n + i] = world.SendInit(outbox[i], 0, 4, next, 60 + i);
    }
    HeapChurn heap = churn ? new HeapChurn(rank, 50, 16, 400, 20, 2000, 50, 3).Start() : null;
    int wrong = 0;
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < n; i++)
            outbox[i][0] = outbox[i][3] = round * 100 + i;
        Prequest.StartAll(reqs);
        Status[] st = Request.WaitAll(reqs);
        for (int i = 0; i < n; i++)
            if (inbox[i][0] != round * 100 + i || inbox[i][3] != round * 100 + i ||
                st[i].Count != 4 || st[i].Tag != 60 + i || st[n + i].Count != 4)
                wrong++;
        if (round % 64 == 0)
            new int [1000].ToString();   // garbage between uses: the arrays may move
    }
    if (heap != null)
        heap.Stop();
    Check.Equal(0, wrong, $"halo rounds of {rounds} with wrong data or statuses");
    foreach (Prequest p in reqs)
        p.Dispose();
    world.Barrier();
}

static int Main(string[] args)
{
    bool stress = args.Length > 0 && args[0] == "stress";
    MixedSet();
    Failures();
    Awaited();
    HeldByAnotherThread();
    SameRequestTwice();
    HaloLoop(stress ? 3000 : 300, stress);
    // a refused argument leaves the rank usable
    Check.Throws<ArgumentNullException>(() => Request.WaitAll(null), "WaitAll(null)");
    var x = new int[1];
    Request.WaitAll(world.Irecv(x, 0, 1, prev, 70), world.Isend(new[] { 1 }, 0, 1, next, 70));
    Check.Equal(1, x[0], "a transfer after the refusal");
    return Check.FinishWithNoPinLeft("WaitAllTest");
}
}

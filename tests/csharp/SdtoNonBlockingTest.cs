// SdtoNonBlockingTest — non-blocking graphs (API.md, version 2): OIsend serializes during the
// call (later changes do not travel); OIrecv needs no size guess from 10 B to 50 MB, posted before
// or after the message arrives, completed by Wait, Test or IsCompleted; two receives with one
// envelope get their messages in posting order, whichever is tested first; Cancel before a match
// gives default(T) with Status.Cancelled; MP.ProcNull completes at once; bad arguments throw
// before anything is received; hostile bytes are MPSerializationException and the communicator
// stays usable; dropped requests are finished by the core; everything while another thread
// collects, with no registry record or pin left at the end.
#pragma warning disable 649
using System;
using System.Threading.Tasks;
using System.Collections.Generic;
using System.Linq;
using System.MP;
using System.Runtime.CompilerServices;
using System.Threading;

class Parcel
{
    public int From, Serial;
    [Transportable]
    public string Label;
    [Transportable]
    public double[] Payload;
    [Transportable]
    public List<int> Items;
    [Transportable]
    public Parcel Self;
}

static class SdtoNonBlockingTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, next = Ring.Next, prev = Ring.Prev, size = Ring.Size;

    static Parcel Make(int from, int serial, int doubles)
    {
        var p = new Parcel { From = from, Serial = serial, Label = "parcel " + serial,
                             Payload = new double[doubles],
                             Items = Enumerable.Range(serial, 5).ToList() };
        for (int i = 0; i < doubles; i++)
            p.Payload[i] = from * 1e6 + serial + i * 0.5;
        p.Self = p;
        return p;
    }

    static bool Intact(Parcel p, int from, int serial, int doubles)
    {
        if (p == null || p.From != from || p.Serial != serial || p.Label != "parcel " + serial ||
            !ReferenceEquals(p.Self, p) || p.Payload.Length != doubles ||
            !p.Items.SequenceEqual(Enumerable.Range(serial, 5)))
            return false;
        for (int i = 0; i < doubles; i++)
            if (p.Payload[i] != from * 1e6 + serial + i * 0.5)
                return false;
        return true;
    }

    /// <summary>Graphs from 10 bytes to 50 MB, the receive posted before the send (a barrier
    /// between) and after it, completed by Wait or by polling Test.</summary>
    static void Sizes()
    {
        int serial = 0;
        // 50 << 17 doubles: 50 MiB
        foreach (int doubles in new[] { 0, 1, 100, 10000, 1 << 20, 50 << 17 }) {
            foreach (bool postFirst in new[] { true, false }) {
                serial++;
                ORequest<Parcel> r = null;
                if (postFirst)
                    r = world.OIrecv<Parcel>(prev, 1);
                world.Barrier();
                Request s = world.OIsend(Make(rank, serial, doubles), next, 1);
                if (!postFirst) {
                    world.Barrier();
                    r = world.OIrecv<Parcel>(prev, 1);
                }
                Parcel got;
                Status st = null;
                if (serial % 2 == 0) {
                    while (!r.Test(out got)) { }
                    Check.True(r.IsCompleted, "IsCompleted after Test");
                    Check.True(r.Wait(out st) == got, "Wait after Test returns the same graph");
                } else {
                    got = r.Wait(out st);
                }
                Status sent = s.Wait();
                Check.True(
                    Intact(got, prev, serial, doubles),
                    $"{doubles} doubles, receive posted {(postFirst ? "before" : "after")}: " +
                        "intact");
                Check.True(st != null && st.Source == prev && st.Tag == 1 &&
                               st.Bytes > 8L * doubles && st.Bytes == sent.Bytes && !st.Cancelled,
                           $"{doubles} doubles: status {st?.Source} {st?.Tag} {st?.Bytes}, sent " +
                               $"{sent.Bytes}");
            }
        }
    }

    /// <summary>The graph is serialized during OIsend: changes after the call do
    /// not travel.</summary>
    static void SerializedDuringTheCall()
    {
        var p = Make(rank, 77, 1000);
        Request s = world.OIsend(p, next, 2);
        p.Label = "changed";
        p.Payload[0] = -1;
        p.Items.Clear();
        p.Self = null;
        Parcel got = world.OIrecv<Parcel>(prev, 2).Wait();
        s.Wait();
        Check.True(Intact(got, prev, 77, 1000), "changes after OIsend do not travel");
    }

    /// <summary>Two receives with one envelope: the first posted gets the first message, even
    /// when the second is tested or waited for first.</summary>
    static void PostingOrder()
    {
        ORequest<Parcel> first = world.OIrecv<Parcel>(prev, 3),
                         second = world.OIrecv<Parcel>(prev, 3);
        world.OSend(Make(rank, 1, 3), next, 3);
        world.OSend(Make(rank, 2, 3), next, 3);
        Parcel b = second.Wait(), a = first.Wait();
        Check.True(Intact(a, prev, 1, 3) && Intact(b, prev, 2, 3),
                   $"posting order kept: first got {a?.Serial}, second {b?.Serial}");
        // AnySource and AnyTag receives take part in the same order
        ORequest<Parcel> any = world.OIrecv<Parcel>(MP.AnySource, MP.AnyTag),
                         exact = world.OIrecv<Parcel>(prev, 4);
        world.OSend(Make(rank, 3, 3), next, 4);
        world.OSend(Make(rank, 4, 3), next, 4);
        Parcel e = exact.Wait(), y = any.Wait();
        Check.True(Intact(y, prev, 3, 3) && Intact(e, prev, 4, 3),
                   "a wildcard receive posted first gets the first message");
        // a blocking ORecv issued while an OIrecv with the same envelope waits comes after it
        ORequest<Parcel> earlier = world.OIrecv<Parcel>(prev, 13);
        world.Barrier();   // no message on tag 13 can have been matched yet
        world.OSend(Make(rank, 5, 3), next, 13);
        world.OSend(Make(rank, 6, 3), next, 13);
        Parcel later = world.ORecv<Parcel>(prev, 13);
        Check.True(Intact(later, prev, 6, 3) && Intact(earlier.Wait(), prev, 5, 3),
                   "a blocking ORecv does not take the message of an earlier OIrecv (it got " +
                       $"{later?.Serial})");
    }

    /// <summary>The exchange MPI programs write: post the receive, send (blocking), wait. Both
    /// neighbours send at once, graphs too large to go eagerly: OSend must not wait for a
    /// receive that is matched only when it is waited for.</summary>
    static void ExchangeWithBlockingSends()
    {
        for (int round = 0; round < 3; round++) {
            ORequest<Parcel> fromPrev = world.OIrecv<Parcel>(prev, 11),
                             fromNext = world.OIrecv<Parcel>(next, 12);
            world.OSend(Make(rank, round, 200000), next, 11);   // 1.6 MB each way
            world.OSend(Make(rank, round + 100, 200000), prev, 12);
            Check.True(Intact(fromPrev.Wait(), prev, round, 200000) &&
                           Intact(fromNext.Wait(), next, round + 100, 200000),
                       "OIrecv, OSend, Wait with both neighbours at once: no deadlock, intact");
        }
    }

    static void CancelAndProcNull()
    {
        ORequest<Parcel> c = world.OIrecv<Parcel>(prev, 5);
        c.Cancel();
        world.Barrier();   // the message below is sent after every rank cancelled
        Parcel none = c.Wait(out Status st);
        Check.True(none == null && st.Cancelled,
                   "a cancelled receive: default(T), Status.Cancelled");
        Check.True(c.Test(out none) && none == null,
                   "Test of a cancelled receive: true, default(T)");
        // the message sent afterwards goes to the next receive, not to the cancelled one
        world.OSend(Make(rank, 9, 2), next, 5);
        Check.True(Intact(world.OIrecv<Parcel>(prev, 5).Wait(), prev, 9, 2),
                   "a cancelled receive matched nothing");

        ORequest<Parcel> n = world.OIrecv<Parcel>(MP.ProcNull, 6);
        Check.True(n.Test(out Parcel p) && p == null, "OIrecv from ProcNull completes at once");
        Status ns;
        n.Wait(out ns);
        Check.True(ns.Source == MP.ProcNull && ns.Bytes == 0, "ProcNull status");
        Status ss = world.OIsend(Make(rank, 1, 1), MP.ProcNull, 6).Wait();
        Check.True(ss.Source == MP.ProcNull, "OIsend to ProcNull completes at once");
    }

    static void BadInput()
    {
        Check.Throws<ArgumentOutOfRangeException>(() => world.OIrecv<Parcel>(size, 1),
                                                  "OIrecv from a rank out of range");
        Check.Throws<ArgumentOutOfRangeException>(() => world.OIrecv<Parcel>(0, -5),
                                                  "OIrecv with a negative tag");
        Check.Throws<ArgumentOutOfRangeException>(() => world.OIsend(Make(rank, 1, 1), size, 1),
                                                  "OIsend to a rank out of range");
        var refused = Check.Throws<ArgumentException>(
            () => world.OIsend(new Dictionary<string, int>(StringComparer.Ordinal), next, 7),
            "OIsend of a graph that cannot travel");
        Check.True(refused != null && refused.Message.Contains("comparer"),
                   "the refusal says why: " + refused?.Message);
        // hostile bytes: a byte[] that is no graph, received as a graph
        Request s = world.Isend(new byte[] { 1, 2, 3, 4, 5 }, next, 8);
        ORequest<Parcel> r = world.OIrecv<Parcel>(prev, 8);
        var first = Check.Throws<MPSerializationException>(() => r.Wait(),
                                                           "OIrecv of bytes that are no graph");
        s.Wait();
        var again =
            Check.Throws<MPSerializationException>(() => r.Wait(),
                                                   "a failed receive stays failed: Wait again");
        Check.True(first != null && ReferenceEquals(first, again),
                   "the same failure, raised again");
        Parcel none;
        Check.Throws<MPSerializationException>(() => r.Test(out none), "and Test raises it too");
        Request s2 = world.OIsend(Make(rank, 1, 1), next, 8);
        Check.Throws<MPSerializationException>(() => world.OIrecv<List<string>>(prev, 8).Wait(),
                                               "OIrecv of a graph of another type");
        s2.Wait();
        world.OSend(Make(rank, 12, 4), next, 8);
        Check.True(Intact(world.OIrecv<Parcel>(prev, 8).Wait(), prev, 12, 4),
                   "usable after the failures");
    }

    /// <summary>Requests dropped without Wait: the core finishes them (their buffers back in
    /// the pool, their records gone) at the following collections.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void SendAndForget(int serial) => world.OIsend(Make(rank, serial, 20000), next, 9);

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void ReceiveAndForget() => world.OIrecv<Parcel>(prev, 9);

    static void Dropped()
    {
        for (int i = 0; i < 50; i++)
            SendAndForget(i);   // 160 kB each: most are still running when dropped
        world.Barrier();
        for (int i = 0; i < 50; i++) {
            if (i % 2 == 0)
                Check.True(Intact(world.OIrecv<Parcel>(prev, 9).Wait(), prev, i, 20000),
                           "every other one waited for");
            else
                ReceiveAndForget();   // matched at once (the message is here), never waited for
        }
        world.Barrier();
        long live = -1;
        for (int round = 0; round < 2000 && live != 0; round++) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            world.Iprobe(prev, 30001);   // MPI progress for the abandoned transfers
            live = MP.Stats.PendingRequests;
        }
        Check.Equal(0L, live, "dropped OIsend and OIrecv requests are finished by the core");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void PostAndForget(Comm comm, int count, int tag)
    {
        for (int i = 0; i < count; i++)
            comm.OIrecv<Parcel>(prev, tag);
    }

    /// <summary>Collects until this rank's sends completed and the previous rank says the same
    /// of its own (on World: the communicator of the sends may be gone).</summary>
    static void CollectUntilAllSent(Request[] sends, int tag, Action meanwhile = null)
    {
        Request told = null;
        while (true) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            meanwhile?.Invoke();
            if (told == null && Request.TestAll(sends))
                told = world.Isend(new int[1], next, tag);
            if (told != null && world.Iprobe(prev, tag) != null)
                break;
        }
        world.Recv(new int[1], prev, tag);
        told.Wait();
    }

    /// <summary>OIrecvs on a communicator disposed while their graphs are in flight: a dropped
    /// one still takes its message (and a large graph's rest), a kept one
    /// still completes.</summary>
    static void DisposedWhileReceiving()
    {
        Intracomm d = world.Dup();
        ORequest<Parcel> kept = d.OIrecv<Parcel>(prev, 41);
        PostAndForget(d, 6, 41);
        d.Barrier();
        var sends = new Request[7];
        for (int i = 0; i < sends.Length; i++)
            sends[i] = d.OIsend(Make(rank, i, i % 2 == 0 ? 20000 : 10), next, 41);
        d.Dispose();
        // a large graph's sender completes once its receiver has taken the rest: kept is tested
        bool done = false;
        CollectUntilAllSent(sends, 42, () => done = done || kept.IsCompleted);
        Check.True(Intact(kept.Wait(), prev, 0, 20000),
                   "an OIrecv whose communicator was disposed still gets its graph");
    }

    /// <summary>OIrecvs dropped before any message came (the issue's pendingRequests=50): each
    /// still takes its message, small or large, and every sender's request completes.</summary>
    static void DroppedBeforeTheMessage()
    {
        PostAndForget(world, 40, 33);
        world.Barrier();   // every rank's receives are posted before any graph leaves
        var sends = new Request[40];
        // every other one past 64 KiB: announced, its tail after
        for (int i = 0; i < sends.Length; i++)
            sends[i] = world.OIsend(Make(rank, i, i % 2 == 0 ? 10 : 20000), next, 33);
        // collections let the core see the requests were dropped
        CollectUntilAllSent(sends, 34);
        world.Barrier();
        Check.True(Request.TestAll(sends), "graphs sent to dropped OIrecvs all completed");
    }

    /// <summary>The O-calls' messages are Serializer's bytes, whatever their size: a graph
    /// written by Serializer and sent with Send is taken by an OIrecv posted before it came, and
    /// an OSend is taken by a plain Irecv of its size and read with Deserialize.</summary>
    static void WireBytesBothWays()
    {
        foreach (int doubles in new[] { 3, 200000 }) {   // 1.6 MB: past any eager limit
            ORequest<Parcel> o = world.OIrecv<Parcel>(prev, 37);
            world.Barrier();   // posted before the bytes leave
            byte[] wire = Serializer.Serialize(Make(rank, 9, doubles));
            Request sent = world.Isend(wire, next, 37);
            Check.True(Intact(o.Wait(), prev, 9, doubles),
                       $"{doubles} doubles: Serializer's bytes sent with Isend, taken by OIrecv");
            sent.Wait();
            var into = new byte[wire.Length];
            Request r = world.Irecv(into, prev, 38);
            world.OSend(Make(rank, 9, doubles), next, 38);   // the same size as wire
            Status st = r.Wait();
            Check.True(st.Count == wire.Length &&
                           Intact(Serializer.Deserialize<Parcel>(into, 0, st.Count), prev, 9,
                                  doubles),
                       $"{doubles} doubles: an OSend taken by Irecv and read with Deserialize");
        }
    }

    /// <summary>A plain receive posted after an OIrecv with the same envelope never takes the
    /// OIrecv's message, whichever receive the message would suit (the issue's "Irecv gets the
    /// graph, OIrecv the ints"), for a graph sent whole and one announced.</summary>
    static void PlainReceivesKeepTheirPlace()
    {
        foreach (int doubles in new[] { 3, 20000 }) {
            world.OSend(Make(rank, 7, doubles), next, 35);
            Request ints = world.Isend(new[] { 1, 2, 3, 4 }, next, 35);
            world.Barrier();   // both messages are on their way before the receives are posted
            ORequest<Parcel> o = world.OIrecv<Parcel>(prev, 35);
            var got = new int[4];
            Request r = world.Irecv(got, prev, 35);
            Exception failed = null;
            Parcel p = null;
            Status st = null;
            try {
                p = o.Wait();
                st = r.Wait();
            } catch (Exception e) {
                failed = e;
            }
            ints.Wait();
            Check.True(
                failed == null && Intact(p, prev, 7, doubles) && st.Count == 4 && got[3] == 4,
                $"{doubles} doubles: the OIrecv posted first gets the graph, the Irecv the ints " +
                    $"({failed?.Message})");
            // a blocking Recv after an OIrecv posted before the messages came
            ORequest<Parcel> early = world.OIrecv<Parcel>(prev, 36);
            world.Barrier();
            world.OSend(Make(rank, 8, doubles), next, 36);
            Request more = world.Isend(new[] { 5, 6, 7, 8 }, next, 36);
            failed = null;
            try {
                st = world.Recv(got, prev, 36);
                p = early.Wait();
            } catch (Exception e) {
                failed = e;
            }
            more.Wait();
            Check.True(failed == null && Intact(p, prev, 8, doubles) && st.Count == 4 &&
                           got[3] == 8,
                       $"{doubles} doubles: a blocking Recv after the OIrecv gets the ints " +
                           $"({failed?.Message})");
        }
    }

    /// <summary>Young graphs sent and received without blocking while another thread forces
    /// minor and major collections.</summary>
    static void WhileCollecting()
    {
        var collector = new Collector(300, 1000);
        int bad = 0;
        for (int round = 0; round < 200; round++) {
            ORequest<Parcel> r = world.OIrecv<Parcel>(prev, 10);
            Request s = world.OIsend(Make(rank, round, 50 + round), next, 10);
            Parcel got;
            while (!r.Test(out got)) { }
            s.Wait();
            if (!Intact(got, prev, round, 50 + round))
                bad++;
        }
        collector.Dispose();
        Check.Equal(0, bad, "200 graphs exchanged without blocking while collecting arrive intact");
    }

    /// <summary>await on OIrecv: the progress engine matches and completes the receive; Wait
    /// and Test then report the task's outcome; a receive cancelled while awaited completes its
    /// task with no graph.</summary>
    static void Awaited()
    {
        TimeSpan bound = TimeSpan.FromSeconds(120);
        ORequest<Parcel> r = world.OIrecv<Parcel>(prev, 30);
        Task<Parcel> t = r.AsTask();
        Check.True(ReferenceEquals(t, r.AsTask()), "AsTask returns the same task every time");
        world.OSend(Make(rank, 30, 500), next, 30);
        Check.True(t.Wait(bound), "the awaited receive completes");
        Check.True(Intact(t.Result, prev, 30, 500), "the awaited graph is intact");
        Status st;
        Parcel again = r.Wait(out st);
        Parcel tested;
        Check.True(ReferenceEquals(again, t.Result) && st.Source == prev && st.Tag == 30,
                   "Wait after the await reports the task's graph and the status");
        Check.True(r.Test(out tested) && ReferenceEquals(tested, t.Result) && r.IsCompleted,
                   "so does Test");

        ORequest<Parcel> viaAwait = world.OIrecv<Parcel>(prev, 31);
        Task<Parcel> awaiting = AwaitGraph(viaAwait);
        world.OSend(Make(rank, 31, 50000), next, 31);
        Check.True(awaiting.Wait(bound) && Intact(awaiting.Result, prev, 31, 50000),
                   "`await world.OIrecv` gets the graph");

        ORequest<Parcel> cancelled = world.OIrecv<Parcel>(prev, 32);
        Task<Parcel> none = cancelled.AsTask();
        cancelled.Cancel();
        Check.True(none.Wait(bound) && none.Result == null,
                   "a receive cancelled while awaited completes with no graph");
        cancelled.Wait(out st);
        Check.True(st.Cancelled, "its status says it was cancelled");
        world.Barrier();
    }

    static async Task<Parcel> AwaitGraph(ORequest<Parcel> r) => await r;

    static int Main()
    {
        Sizes();
        SerializedDuringTheCall();
        PostingOrder();
        ExchangeWithBlockingSends();
        CancelAndProcNull();
        Awaited();
        BadInput();
        WhileCollecting();
        Dropped();
        DroppedBeforeTheMessage();
        DisposedWhileReceiving();
        PlainReceivesKeepTheirPlace();
        WireBytesBothWays();
        return Check.FinishWithNoPinLeft("SdtoNonBlockingTest");
    }
}

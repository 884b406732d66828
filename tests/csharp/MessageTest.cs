// MessageTest — matched probes (Comm.Mprobe, Improbe) and their Message (Recv of a range, a
// region and one value, ORecv, Irecv; received once; argument errors leave it usable; MP.ProcNull;
// two threads on one Message; a Message dropped unreceived is received and discarded by the core),
// threads that probe and receive on one source and tag, Status.GetCount<T>, and the request sets
// (WaitAll's statuses, WaitAny, TestAny, TestSome) as API.md version 3 states them. Any rank
// count; arguments: [messages per rank for the threads] [rounds of the threads, with a thread
// collecting meanwhile when > 1].
using System;
using System.Linq;
using System.MP;
using System.Runtime.CompilerServices;
using System.Threading;

static class MessageTest
{
    static readonly Intracomm world = MP.World;
    static readonly int rank = world.Rank, size = world.Size;
    static readonly int next = Ring.Next, prev = Ring.Prev;

    struct Pair   // 16 bytes: an int, padding, a double
    {
        public int Key;
        public double Value;
    }

    struct Three   // 3 bytes
    {
        public byte A, B, C;
    }

    struct WithReference
    {
        public string Text;
    }

    [Transportable]
    class Node
    {
        public int Value;
        [Transportable]
        public Node Next;
        [Transportable]
        public int[] Data;
    }

    static int Main(string[] args)
    {
        int perRank = args.Length > 0 ? int.Parse(args[0]) : 200;
        int rounds = args.Length > 1 ? int.Parse(args[1]) : 1;
        Check.Equal(3, MP.ThreadLevel, "MPI_THREAD_MULTIPLE granted");
        Basics();
        Improbe();
        Values();
        Graphs();
        NonBlocking();
        ArgumentErrors();
        RegionForm();
        ProcNull();
        ProbeErrors();
        GetCount();
        WaitAllStatuses();
        WaitAnyAndTestAny();
        TestSome();
        SetFailures();
        RacingReceivers();
        for (int round = 0; round < rounds; round++) {
            if (rounds > 1) {
                using (new Collector()) ThreadsShareSourceAndTag(perRank, 80 + round % 10);
            } else {
                ThreadsShareSourceAndTag(perRank, 80);
            }
        }
        DroppedSmall();
        DroppedLarge();
        DroppedAtTheEnd();
        return Check.FinishWithNoPinLeft("MessageTest");
    }

    static Request SendNext(Array data, int tag) => world.Isend(data, 0, data.Length, next, tag);

    /// <summary>Mprobe's status, a range receive of the message, received once.</summary>
    static void Basics()
    {
        var sent = new double[] { rank, 1.5, 2.5, 3.5, 4.5 };
        Request s = SendNext(sent, 1);
        Status probed;
        Message m = world.Mprobe(prev, 1, out probed);
        Check.True(m != null, "Mprobe returns a Message");
        Check.Equal(prev, probed.Source, "Mprobe: Source");
        Check.Equal(1, probed.Tag, "Mprobe: Tag");
        Check.Equal(40L, probed.Bytes, "Mprobe: Bytes");
        Check.Equal(40, probed.Count, "Mprobe: Count is bytes");
        Check.Equal(5, probed.GetCount<double>(), "GetCount<double> of the probe");
        var got = new double[7];
        got[0] = got[6] = -9;
        Status st = m.Recv(got, 1, 5);
        Check.True(got[0] == -9 && got[6] == -9, "Recv of a range writes nothing outside it");
        Check.True(got[1] == prev && got[2] == 1.5 && got[5] == 4.5, "Recv: the data");
        Check.Equal(5, st.Count, "Recv: Count in elements");
        Check.Equal(prev, st.Source, "Recv: Source");
        Check.Equal(1, st.Tag, "Recv: Tag");
        s.Wait();

        // received once: every receive of it is refused afterwards
        Check.Throws<InvalidOperationException>(() => m.Recv(got, 0, 5), "Recv again");
        Check.Throws<InvalidOperationException>(() => m.Recv<double>(), "Recv<T> again");
        Check.Throws<InvalidOperationException>(() => m.ORecv<Node>(), "ORecv again");
        Check.Throws<InvalidOperationException>(() => m.Irecv(got, 0, 5), "Irecv again");
        Check.Throws<InvalidOperationException>(() => m.Recv(new int[2, 2], Region.Rows(0, 1)),
                                                "Recv of a region again");

        // a shorter message fills the front of the range
        s = SendNext(new[] { 7, 8 }, 2);
        m = world.Mprobe(MP.AnySource, MP.AnyTag, out probed);
        Check.True(probed.Source == prev && probed.Tag == 2, "Mprobe with both wildcards");
        var four = new[] { -1, -1, -1, -1 };
        st = m.Recv(four, 0, 4);
        Check.True(four.SequenceEqual(new[] { 7, 8, -1, -1 }), "a shorter message fills the front");
        Check.Equal(2, st.Count, "Count of the shorter message");
        s.Wait();

        // a plain receive cannot take a matched message: it gets the next one
        Request first = SendNext(new[] { 1 }, 3);
        m = world.Mprobe(prev, 3, out probed);
        Request second = SendNext(new[] { 2 }, 3);
        var one = new int[1];
        world.Recv(one, prev, 3);
        Check.Equal(2, one[0], "a plain Recv takes the message after the matched one");
        Check.Equal(1, m.Recv<int>(), "the matched message is the Message's");
        Request.WaitAll(first, second);
    }

    static void Improbe()
    {
        Status st;
        Check.True(world.Improbe(prev, 9, out st) == null && st == null,
                   "Improbe with nothing waiting: null, status null");
        world.Barrier();   // every rank has looked before anything is sent on tag 9
        Request s = SendNext(new long[] { 100 + rank }, 9);
        Message m;
        while ((m = world.Improbe(prev, 9, out st)) == null) { }
        Check.True(st.Source == prev && st.Bytes == 8, "Improbe: the status");
        Check.Equal(100L + prev, m.Recv<long>(), "Improbe's Message received");
        s.Wait();
    }

    /// <summary>Recv&lt;T&gt; of a primitive and a struct; a longer and an empty message are
    /// MPException and use the Message.</summary>
    static void Values()
    {
        Request s = SendNext(new[] { new Pair { Key = rank, Value = rank + 0.25 } }, 10);
        Status probed, st;
        Message m = world.Mprobe(prev, 10, out probed);
        Check.Equal(1, probed.GetCount<Pair>(), "GetCount<Pair> of one Pair");
        Pair p = m.Recv<Pair>(out st);
        Check.True(p.Key == prev && p.Value == prev + 0.25, "Recv<Pair>");
        Check.Equal(1, st.Count, "Recv<T>: Count 1");
        s.Wait();

        s = SendNext(new long[] { 1, 2 }, 11);
        m = world.Mprobe(prev, 11, out probed);
        Check.Throws<MPException>(() => m.Recv<long>(), "Recv<long> of two longs: truncation");
        Check.Throws<InvalidOperationException>(() => m.Recv<long>(), "truncation used it");
        s.Wait();

        s = SendNext(new long[0], 12);
        m = world.Mprobe(prev, 12, out probed);
        Check.Throws<MPException>(() => m.Recv<long>(), "Recv<long> of nothing");
        Check.Throws<InvalidOperationException>(() => m.Recv(new long[1], 0, 1),
                                                "the empty message used it");
        s.Wait();

        // not a whole number of elements: MPException, and the Message is used
        s = SendNext(new byte[6], 13);
        m = world.Mprobe(prev, 13, out probed);
        Check.Equal(MP.Undefined, probed.GetCount<int>(), "GetCount<int> of 6 bytes");
        Check.Throws<MPException>(() => m.Recv(new int[4], 0, 4), "6 bytes into ints");
        Check.Throws<InvalidOperationException>(() => m.Recv(new byte[6], 0, 6),
                                                "the partial element used it");
        s.Wait();
    }

    static void Graphs()
    {
        var graph = new Node { Value = rank, Data = new[] { 1, 2, 3 } };
        graph.Next = new Node { Value = -rank, Next = graph };
        world.OSend(graph, next, 20);
        Status probed, st;
        Message m = world.Mprobe(prev, 20, out probed);
        Node got = m.ORecv<Node>(out st);
        Check.True(got != null && got.Value == prev && got.Next.Value == -prev &&
                       got.Next.Next == got && got.Data.SequenceEqual(new[] { 1, 2, 3 }),
                   "ORecv: the graph, its cycle kept");
        Check.Equal(probed.Bytes, st.Bytes, "ORecv: Bytes are the probed size");

        // a graph whose root is not a T: MPSerializationException, and the Message is used
        world.OSend(new Node { Value = 1 }, next, 21);
        m = world.Mprobe(prev, 21, out probed);
        Check.Throws<MPSerializationException>(() => m.ORecv<string>(), "ORecv<string> of a Node");
        Check.Throws<InvalidOperationException>(() => m.ORecv<Node>(), "the failed ORecv used it");

        // OPI bytes are no graph
        Request s = SendNext(new byte[] { 1, 2, 3, 4, 5 }, 22);
        m = world.Mprobe(prev, 22, out probed);
        Check.Throws<MPSerializationException>(() => m.ORecv<Node>(), "ORecv of OPI bytes");
        s.Wait();
        world.Barrier();   // the graphs sent with OSend have been received everywhere
    }

    static void NonBlocking()
    {
        Request s = SendNext(new[] { 5, 6, 7 }, 30);
        Status probed;
        Message m = world.Mprobe(prev, 30, out probed);
        var got = new int[5];
        Request r = m.Irecv(got, 1, 3);
        Check.Throws<InvalidOperationException>(() => m.Irecv(got, 0, 3), "Irecv again");
        Status st = r.Wait();
        Check.True(got.SequenceEqual(new[] { 0, 5, 6, 7, 0 }), "Irecv: the data in the range");
        Check.True(st.Count == 3 && st.Source == prev && st.Tag == 30, "Irecv: the status");
        s.Wait();

        // a truncation is the request's: raised by its Wait
        s = SendNext(new[] { 1, 2, 3 }, 31);
        m = world.Mprobe(prev, 31, out probed);
        r = m.Irecv(new int[2], 0, 2);
        Check.Throws<MPException>(() => r.Wait(), "Irecv's truncation raised by Wait");
        Check.Throws<InvalidOperationException>(() => m.Recv(new int[3], 0, 3),
                                                "the truncated Irecv used it");
        s.Wait();

        // a large message: the request runs while the data moves
        var big = new double[1 << 17];
        for (int i = 0; i < big.Length; i++)
            big[i] = rank + i;
        s = SendNext(big, 32);
        m = world.Mprobe(prev, 32, out probed);
        var into = new double[probed.GetCount<double>()];
        r = m.Irecv(into, 0, into.Length);
        Request.WaitAll(r, s);
        Check.True(into[0] == prev && into[into.Length - 1] == prev + into.Length - 1,
                   "Irecv of 1 MiB");
    }

    /// <summary>Refused arguments leave the Message to be received, and the rank usable.</summary>
    static void ArgumentErrors()
    {
        Request s = SendNext(new[] { 41, 42 }, 40);
        Status probed;
        Message m = world.Mprobe(prev, 40, out probed);
        var two = new int[2];
        Check.Throws<ArgumentNullException>(() => m.Recv(null, 0, 2), "Recv(null)");
        Check.Throws<ArgumentOutOfRangeException>(() => m.Recv(two, -1, 1), "Recv offset -1");
        Check.Throws<ArgumentOutOfRangeException>(() => m.Recv(two, 3, 0), "Recv offset 3");
        Check.Throws<ArgumentOutOfRangeException>(() => m.Recv(two, 0, 3), "Recv count 3");
        Check.Throws<ArgumentOutOfRangeException>(() => m.Recv(two, 0, -1), "Recv count -1");
        Check.Throws<ArgumentException>(() => m.Recv(new string[2], 0, 2), "Recv into string[]");
        Check.Throws<ArgumentException>(() => m.Recv(new int[2, 1], 0, 2), "range of a 2-D array");
        Check.Throws<ArgumentException>(() => m.Recv(new WithReference[2], 0, 2),
                                        "Recv into a struct with a reference");
        Check.Throws<ArgumentException>(() => m.Recv<WithReference>(),
                                        "Recv<T> of a struct with a reference");
        Check.Throws<ArgumentException>(() => m.Recv(new int[2, 1], default(Region)),
                                        "Recv with default(Region)");
        Check.Throws<ArgumentNullException>(() => m.Irecv(null, 0, 2), "Irecv(null)");
        Check.Throws<ArgumentOutOfRangeException>(() => m.Irecv(two, 1, 2), "Irecv count 2 at 1");
        Check.Throws<ArgumentException>(() => m.Irecv(new object[2], 0, 2), "Irecv into object[]");
        Status st = m.Recv(two, 0, 2);
        Check.True(two[0] == 41 && two[1] == 42 && st.Count == 2,
                   "the Message is received after every refusal");
        s.Wait();
        // and the rank goes on
        var back = new int[1];
        Ring.Exchange(() => world.Send(new[] { rank }, next, 41), () => world.Recv(back, prev, 41));
        Check.Equal(prev, back[0], "a transfer after the refusals");
    }

    /// <summary>Recv(Array, Region): a row (contiguous) and a column (a derived datatype) of a
    /// 2-D array, nothing else written.</summary>
    static void RegionForm()
    {
        Request s = SendNext(new[] { 1, 2, 3, 4 }, 45);
        Status probed;
        Message m = world.Mprobe(prev, 45, out probed);
        var field = new int[3, 4];
        Status st = m.Recv(field, Region.Rows(1, 1));
        Check.True(field[1, 0] == 1 && field[1, 3] == 4 && field[0, 0] == 0 && field[2, 3] == 0,
                   "Recv of a region: the row, nothing else");
        Check.Equal(4, st.Count, "Recv of a region: Count");
        s.Wait();
        s = SendNext(new[] { 5, 6, 7 }, 46);
        m = world.Mprobe(prev, 46, out probed);
        st = m.Recv(field, Region.Columns(2, 1));
        Check.True(field[0, 2] == 5 && field[1, 2] == 6 && field[2, 2] == 7 && field[1, 1] == 2 &&
                       field[1, 3] == 4 && field[0, 3] == 0,
                   "Recv of a column: the column, nothing else");
        Check.Equal(3, st.Count, "Recv of a column: Count");
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.Mprobe(MP.ProcNull, 0, out probed).Recv(field, Region.Rows(3, 1)),
            "a region out of bounds");
        Check.Throws<ArgumentNullException>(
            () => world.Mprobe(MP.ProcNull, 0, out probed).Recv(null, Region.Rows(0, 1)),
            "Recv(null, region)");
        s.Wait();
    }

    static void ExpectProcNull(Status st, string what)
    {
        Check.True(st != null && st.Source == MP.ProcNull && st.Tag == MP.AnyTag && st.Count == 0 &&
                       st.Bytes == 0 && !st.Cancelled,
                   what + ": ProcNull's status");
    }

    static void ProcNull()
    {
        Status st;
        Message m = world.Mprobe(MP.ProcNull, 5, out st);
        ExpectProcNull(st, "Mprobe(ProcNull)");
        Check.Equal(0, st.GetCount<double>(), "GetCount of ProcNull's status");
        var data = new[] { 9, 9 };
        Check.Throws<ArgumentNullException>(() => m.Recv(null, 0, 1),
                                            "ProcNull's Message checks arguments too");
        ExpectProcNull(m.Recv(data, 0, 2), "Recv of ProcNull's Message");
        Check.True(data[0] == 9 && data[1] == 9, "ProcNull's receive writes nothing");
        Check.Throws<InvalidOperationException>(() => m.Recv(data, 0, 2), "ProcNull's, again");

        m = world.Improbe(MP.ProcNull, MP.AnyTag, out st);
        Check.True(m != null, "Improbe(ProcNull) finds a Message");
        ExpectProcNull(st, "Improbe(ProcNull)");
        Check.Equal(0, m.Recv<int>(out st), "Recv<int> of ProcNull's Message: default");
        ExpectProcNull(st, "Recv<int> of ProcNull's Message");

        m = world.Mprobe(MP.ProcNull, 0, out st);
        Check.True(m.ORecv<Node>(out st) == null, "ORecv of ProcNull's Message: null");
        ExpectProcNull(st, "ORecv of ProcNull's Message");

        m = world.Mprobe(MP.ProcNull, 0, out st);
        Request r = m.Irecv(data, 0, 2);
        Check.True(r.Test(out st), "Irecv of ProcNull's Message completes at once");
        ExpectProcNull(st, "Irecv of ProcNull's Message");

        // dropped: nothing to discard
        world.Mprobe(MP.ProcNull, 0, out st);
    }

    static void ProbeErrors()
    {
        Status st = null;
        Check.Throws<ArgumentOutOfRangeException>(() => world.Mprobe(size, 0, out st),
                                                  "Mprobe source = Size");
        Check.Throws<ArgumentOutOfRangeException>(() => world.Mprobe(-2, 0, out st),
                                                  "Mprobe source -2");
        Check.Throws<ArgumentOutOfRangeException>(() => world.Mprobe(0, -5, out st),
                                                  "Mprobe tag -5");
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.Mprobe(0, MP.TagUpperBound + 1, out st), "Mprobe tag past the bound");
        Check.Throws<ArgumentOutOfRangeException>(() => world.Improbe(size + 3, 0, out st),
                                                  "Improbe source past Size");
        Check.Throws<ArgumentOutOfRangeException>(() => world.Improbe(0, -7, out st),
                                                  "Improbe tag -7");
        Intracomm dup = world.Dup();
        dup.Dispose();
        Check.Throws<ObjectDisposedException>(() => dup.Mprobe(0, 0, out st),
                                              "Mprobe on a disposed communicator");
        Check.Throws<ObjectDisposedException>(() => dup.Improbe(0, 0, out st),
                                              "Improbe on a disposed communicator");
        // the rank goes on
        Request s = SendNext(new[] { 3 }, 46);
        Check.Equal(3, world.Mprobe(prev, 46, out st).Recv<int>(), "Mprobe after the refusals");
        s.Wait();
    }

    static void GetCount()
    {
        Request s = SendNext(new double[6], 50);   // 48 bytes
        var got = new double[6];
        Status st = world.Recv(got, prev, 50);
        s.Wait();
        Check.Equal(6, st.GetCount<double>(), "GetCount<double>");
        Check.Equal(6, st.GetCount<long>(), "GetCount<long>");
        Check.Equal(12, st.GetCount<int>(), "GetCount<int>");
        Check.Equal(12, st.GetCount<float>(), "GetCount<float>");
        Check.Equal(24, st.GetCount<short>(), "GetCount<short>");
        Check.Equal(24, st.GetCount<char>(), "GetCount<char>: 2 bytes");
        Check.Equal(48, st.GetCount<bool>(), "GetCount<bool>: 1 byte");
        Check.Equal(48, st.GetCount<byte>(), "GetCount<byte>");
        Check.Equal(3, st.GetCount<Pair>(), "GetCount<Pair>: 16 bytes");
        Check.Equal(3, st.GetCount<decimal>(), "GetCount<decimal>: 16 bytes");
        Check.Equal(16, st.GetCount<Three>(), "GetCount<Three>: 3 bytes");
        Check.Equal(12, st.GetCount<DayOfWeek>(), "GetCount of an int enum");
        Check.Throws<ArgumentException>(() => st.GetCount<WithReference>(),
                                        "GetCount of a struct with a reference");

        s = SendNext(new byte[40], 51);
        st = world.Recv(new byte[40], prev, 51);
        s.Wait();
        Check.Equal(MP.Undefined, st.GetCount<Three>(), "40 bytes are no whole Three");
        Check.Equal(MP.Undefined, st.GetCount<Pair>(), "40 bytes are no whole Pair");
        Check.Equal(5, st.GetCount<double>(), "40 bytes are 5 doubles");

        s = SendNext(new int[0], 52);
        st = world.Recv(new int[1], prev, 52);
        s.Wait();
        Check.Equal(0, st.GetCount<Pair>(), "GetCount of an empty message");

        // a cancelled receive moved nothing
        Request r = world.Irecv(new int[1], prev, 53);
        r.Cancel();
        st = r.Wait();
        Check.True(st.Cancelled && st.GetCount<int>() == 0, "GetCount of a cancelled receive");
    }

    static void ExpectEmpty(Status st, string what)
    {
        Check.True(st != null && st.Source == MP.AnySource && st.Tag == MP.AnyTag &&
                       st.Count == 0 && st.Bytes == 0 && !st.Cancelled,
                   what + ": the empty status");
    }

    static void WaitAllStatuses()
    {
        var a = new int[3];
        var b = new long[2];
        Request ra = world.Irecv(a, prev, 60), rb = world.Irecv(b, prev, 61);
        Request sb = SendNext(new long[] { 7, 8 }, 61), sa = SendNext(new[] { 1, 2 }, 60);
        Status[] st = Request.WaitAll(ra, sb, rb, sa);
        Check.Equal(4, st.Length, "WaitAll: a status per request");
        Check.True(st[0].Source == prev && st[0].Tag == 60 && st[0].Count == 2 && st[0].Bytes == 8,
                   "WaitAll: the first receive's status, in place");
        Check.True(st[1].Source == -1 && st[1].Tag == 61 && st[1].Count == 2 && st[1].Bytes == 16,
                   "WaitAll: a send's status");
        Check.True(st[2].Source == prev && st[2].Tag == 61 && st[2].Count == 2,
                   "WaitAll: the second receive's status, in place");
        Check.True(st[3].Tag == 60 && st[3].Count == 2, "WaitAll: the other send's status");
        Check.True(a[0] == 1 && a[1] == 2 && b[1] == 8, "WaitAll: the data");

        // inactive requests (completion reported): the empty status
        Status[] again = Request.WaitAll(ra, sb, rb, sa);
        for (int i = 0; i < again.Length; i++)
            ExpectEmpty(again[i], "WaitAll again, entry " + i);
        Check.True(ra.Wait() == st[0], "Wait after WaitAll returns the status again");

        Request rc = world.Irecv(a, prev, 62), sc = SendNext(new[] { 5 }, 62);
        rc.Wait();
        st = Request.WaitAll(rc, sc);
        ExpectEmpty(st[0], "WaitAll of a request a Wait reported");
        Check.True(st[1].Tag == 62 && st[1].Count == 1, "WaitAll of the active one");
        Check.Equal(0, Request.WaitAll().Length, "WaitAll of none");

        Check.Throws<ArgumentNullException>(() => Request.WaitAll(null), "WaitAll(null)");
        Check.Throws<ArgumentNullException>(() => Request.WaitAll(ra, null),
                                            "WaitAll with a null entry");
    }

    static void WaitAnyAndTestAny()
    {
        var a = new int[1];
        var b = new int[1];
        var reqs = new[] { world.Irecv(a, prev, 63), world.Irecv(b, prev, 64) };
        int index;
        Check.True(!Request.TestAny(out index, reqs) && index == MP.Undefined,
                   "TestAny with nothing finished: false, MP.Undefined");
        world.Barrier();   // every rank has tested before anything is sent
        var sends = new[] { SendNext(new[] { 64 }, 64), SendNext(new[] { 63 }, 63) };
        int first = Request.WaitAny(reqs);
        Check.True(first == 0 || first == 1, "WaitAny: an index");
        while (!Request.TestAny(out index, reqs)) { }
        Check.True(index == 1 - first, "TestAny: the other index");
        Check.True(a[0] == 63 && b[0] == 64, "WaitAny and TestAny: the data");
        Check.Equal(MP.Undefined, Request.WaitAny(reqs), "WaitAny with none active");
        Check.True(Request.TestAny(out index, reqs) && index == MP.Undefined,
                   "TestAny with none active: true, MP.Undefined");
        Check.True(Request.TestAny(out index) && index == MP.Undefined, "TestAny of none");
        Check.Equal(MP.Undefined, Request.WaitAny(), "WaitAny of none");
        Request.WaitAll(sends);

        Check.Throws<ArgumentNullException>(() => Request.WaitAny(null), "WaitAny(null)");
        Check.Throws<ArgumentNullException>(() => Request.WaitAny(reqs[0], null),
                                            "WaitAny with a null entry");
        Check.Throws<ArgumentNullException>(() => Request.TestAny(out index, null),
                                            "TestAny(null)");
        Check.Throws<ArgumentNullException>(() => Request.TestAny(out index, reqs[0], null),
                                            "TestAny with a null entry");
    }

    static void TestSome()
    {
        const int n = 5;
        var inbox = new int [n][];
        var reqs = new Request[n];
        for (int i = 0; i < n; i++) {
            inbox[i] = new int[1];
            reqs[i] = world.Irecv(inbox[i], prev, 65 + i);
        }
        Check.Equal(0, Request.TestSome(reqs).Length, "TestSome with nothing finished: empty");
        world.Barrier();
        var sends = new Request[n];
        for (int i = 0; i < n; i++)
            sends[i] = SendNext(new[] { 100 + i }, 65 + i);
        var seen = new int[n];
        int reported = 0, calls = 0;
        while (reported < n) {
            int[] done = Request.TestSome(reqs);
            calls++;
            Check.True(done.SequenceEqual(done.OrderBy(i => i)), "TestSome: increasing order");
            foreach (int i in done) {
                seen[i]++;
                reported++;
                Check.Equal(100 + i, inbox[i][0], "TestSome: the data of " + i);
            }
        }
        Check.True(seen.All(c => c == 1), "TestSome reports every request exactly once");
        Check.Equal(0, Request.TestSome(reqs).Length, "TestSome with none active: empty");
        Check.Equal(0, Request.TestSome().Length, "TestSome of none");
        Request.WaitAll(sends);
        Check.Throws<ArgumentNullException>(() => Request.TestSome(null), "TestSome(null)");
        Check.Throws<ArgumentNullException>(() => Request.TestSome(reqs[0], null),
                                            "TestSome with a null entry");
    }

    /// <summary>A truncated receive in each set call: reported once, as the documentation
    /// says.</summary>
    static void SetFailures()
    {
        // WaitAll completes everything, then raises the first failure
        var small = new int[1];
        var good = new int[2];
        Request bad = world.Irecv(small, prev, 70), fine = world.Irecv(good, prev, 71);
        Request s1 = SendNext(new[] { 1, 2 }, 70), s2 = SendNext(new[] { 3, 4 }, 71);
        Check.Throws<MPException>(() => Request.WaitAll(bad, fine), "WaitAll raises the failure");
        Check.True(good[0] == 3 && good[1] == 4, "WaitAll completed the request after it");
        Status st;
        Check.True(fine.Test(out st) && st.Count == 2, "its status is there");
        Check.Throws<MPException>(() => bad.Wait(), "the failed request raises again");
        Request.WaitAll(s1, s2);

        // WaitAny and TestAny: the failure is the completion they find
        bad = world.Irecv(small, prev, 72);
        s1 = SendNext(new[] { 1, 2 }, 72);
        Check.Throws<MPException>(() => Request.WaitAny(bad), "WaitAny raises the failure");
        Check.Equal(MP.Undefined, Request.WaitAny(bad), "the failed request is inactive");
        bad = world.Irecv(small, prev, 73);
        s2 = SendNext(new[] { 1, 2 }, 73);
        int index = 0;
        bool raised = false;
        while (!raised) {
            try {
                Check.True(!Request.TestAny(out index, bad), "TestAny before the failure");
            } catch (MPException) {
                raised = true;
            }
        }
        Check.True(Request.TestAny(out index, bad) && index == MP.Undefined,
                   "TestAny: the failed request is inactive");
        Request.WaitAll(s1, s2);

        // TestSome: each index once, the failure raised once (when both finished in one call,
        // the good one is returned and the failure raised by the next call)
        fine = world.Irecv(good, prev, 75);
        bad = world.Irecv(small, prev, 74);
        s1 = SendNext(new[] { 5, 6 }, 75);
        s2 = SendNext(new[] { 1, 2 }, 74);
        Request.WaitAll(s1, s2);
        world.Barrier();
        int failures = 0, fineSeen = 0;
        while (failures == 0 || fineSeen == 0) {
            try {
                foreach (int i in Request.TestSome(fine, bad)) {
                    Check.Equal(0, i, "TestSome returns only the good one");
                    fineSeen++;
                }
            } catch (MPException) {
                failures++;
            }
        }
        Check.True(failures == 1 && fineSeen == 1, "TestSome: one failure, one index");
        Check.Equal(0, Request.TestSome(fine, bad).Length, "TestSome: both inactive");
        Request.WaitAll(s1, s2);

        // WaitSome, as before
        bad = world.Irecv(small, prev, 76);
        s1 = SendNext(new[] { 1, 2 }, 76);
        Check.Throws<MPException>(() => Request.WaitSome(bad), "WaitSome raises the failure");
        Check.Equal(0, Request.WaitSome(bad).Length, "WaitSome: inactive afterwards");
        s1.Wait();
    }

    /// <summary>Two threads receive one Message at the same moment: one gets it, the other
    /// InvalidOperationException.</summary>
    static void RacingReceivers()
    {
        for (int round = 0; round < 20; round++) {
            Request s = SendNext(new[] { round }, 77);
            Status probed;
            Message m = world.Mprobe(prev, 77, out probed);
            int wins = 0, refusals = 0, others = 0, value = -1;
            var start = new Barrier(2);
            ThreadStart race = () =>
            {
                var box = new int[1];
                start.SignalAndWait();
                try {
                    m.Recv(box, 0, 1);
                    Interlocked.Increment(ref wins);
                    value = box[0];
                } catch (InvalidOperationException) {
                    Interlocked.Increment(ref refusals);
                } catch (Exception) {
                    Interlocked.Increment(ref others);
                }
            };
            var a = new Thread(race);
            var b = new Thread(race);
            a.Start();
            b.Start();
            a.Join();
            b.Join();
            Check.True(wins == 1 && refusals == 1 && others == 0 && value == round,
                       $"round {round}: one receiver wins, the other is refused " +
                           $"({wins} wins, {refusals} refusals, {others} others)");
            s.Wait();
        }
    }

    /// <summary>Threads probing and receiving on one source and tag each get their own message:
    /// none lost, none received twice, none received with another's size.</summary>
    static void ThreadsShareSourceAndTag(int perRank, int tag)
    {
        const int threads = 4;
        var sends = new Request[perRank];
        for (int i = 0; i < perRank; i++) {
            var payload = new int[1 + i % 13];
            for (int k = 0; k < payload.Length; k++)
                payload[k] = i;
            sends[i] = SendNext(payload, tag);
        }
        var seen = new int[perRank];
        int claimed = 0, wrong = 0;
        Exception failure = null;
        ThreadStart receive = () =>
        {
            bool polls = Thread.CurrentThread.Name == "1";   // one thread uses Improbe
            try {
                while (Interlocked.Increment(ref claimed) <= perRank) {
                    Status probed;
                    Message m;
                    if (polls) {
                        while ((m = world.Improbe(prev, tag, out probed)) == null) { }
                    } else {
                        m = world.Mprobe(prev, tag, out probed);
                    }
                    var data = new int[probed.GetCount<int>()];
                    Status st = m.Recv(data, 0, data.Length);
                    int i = data.Length > 0 ? data[0] : -1;
                    if (i < 0 || i >= perRank || data.Length != 1 + i % 13 ||
                        st.Count != data.Length || data.Any(x => x != i)) {
                        Interlocked.Increment(ref wrong);
                        continue;
                    }
                    Interlocked.Increment(ref seen[i]);
                }
            } catch (Exception e) {
                failure = e;
            }
        };
        var pool = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            pool[t] = new Thread(receive) { Name = t.ToString() };
            pool[t].Start();
        }
        foreach (Thread t in pool)
            t.Join();
        Check.True(failure == null, "threads sharing a source and tag: " + failure);
        Check.Equal(0, wrong, "no message received with another's size or data");
        Check.True(seen.All(c => c == 1), "every message received exactly once");
        Request.WaitAll(sends);
        world.Barrier();
    }

    /// <summary>Probes a message on another thread (whose stack then goes away, so nothing
    /// holds the Message) and drops it.</summary>
    static void ProbeAndDrop(int tag, long bytes)
    {
        long probedBytes = -1;
        ThreadStart probe = () =>
        {
            Status st;
            world.Mprobe(prev, tag, out st);
            probedBytes = st.Bytes;
        };
        var t = new Thread(probe);
        t.Start();
        t.Join();
        Check.Equal(bytes, probedBytes, "the dropped message's probe");
    }

    static void Collect()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        GC.WaitForPendingFinalizers();
    }

    /// <summary>A Message dropped unreceived is received and discarded by the core: a later
    /// receive gets the next message, and nothing is left.</summary>
    static void DroppedSmall()
    {
        Request first = SendNext(new[] { 1 }, 90);
        ProbeAndDrop(90, 4);
        Collect();
        Request second = SendNext(new[] { 2 }, 90);
        var got = new int[1];
        world.Recv(got, prev, 90);
        Check.Equal(2, got[0], "after a dropped Message, a Recv gets the second message");
        Request.WaitAll(first, second);
        world.Barrier();   // nothing more is sent on tag 90
        Status st;
        Check.True(world.Improbe(prev, 90, out st) == null, "nothing is left on the tag");
    }

    /// <summary>A large message (a rendezvous: the sender waits for the receive) dropped: the
    /// sender's request completes once the core has received it.</summary>
    static void DroppedLarge()
    {
        var big = new byte[4 << 20];
        big[0] = 1;
        Request s = SendNext(big, 91);
        ProbeAndDrop(91, big.Length);
        Collect();
        Status st;
        while (!s.Test(out st))   // the core's discarding receive lets it finish
            Collect();
        Check.True(true, "the sender of a dropped large message completes");
        world.Barrier();
        Check.True(world.Improbe(prev, 91, out st) == null, "nothing is left on the tag");
    }

    /// <summary>A Message dropped just before the end: MPI_Finalize finds nothing pending (the
    /// job ends without a hang or an MPI error).</summary>
    static void DroppedAtTheEnd()
    {
        var big = new byte[1 << 20];
        Request s = SendNext(big, 92);
        ProbeAndDrop(92, big.Length);
        GC.Collect();
        GC.WaitForPendingFinalizers();
        Status st;
        while (!s.Test(out st)) { }
    }
}

// ReceiveBudgetTest — the opt-in receive budget (issue 36, item 3): off by default; a graph that
// would allocate more than the budget (a multiple of its message's size, an absolute number of
// bytes, or the smaller of both) refused with MPSerializationException saying the figures, before
// anything is allocated (the heap does not grow; the next message arrives; the communicator stays
// usable); a graph within it arrives; a communicator's budget overrides the process's, which
// covers Serializer.Deserialize; ORecv, OIrecv, Message.ORecv, OBcast, OScatter; collections
// counted with their tables.
using System;
using System.Collections.Generic;
using System.Linq;
using System.MP;

static class ReceiveBudgetTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, next = Ring.Next, prev = Ring.Prev;

    /// <summary>n arrays of one int: about 2.4 times its message's size once allocated.</summary>
    static int[][] Small(int n) => Enumerable.Range(0, n).Select(i => new[] { i }).ToArray();

    static bool SmallOk(int[][] a,
                        int n) => a != null && a.Length == n
                                  && a.Select((x, i) => x.Length == 1 && x[0] == i).All(b => b);

    static void Refused<T>(Func<T> read, string what, params string[] mentions)
    {
        long before = GC.GetTotalMemory(false);
        var e = Check.Throws<MPSerializationException>(() => read(), what + ": refused");
        long grown = GC.GetTotalMemory(false) - before;
        Check.True(grown < (4 << 20), $"{what}: nothing allocated (the heap grew {grown} bytes)");
        if (e == null)
            return;
        foreach (string m in mentions.Concat(new[] { "would allocate", "receive budget" }))
            Check.True(e.Message.Contains(m), $"{what}: the message says '{m}': {e.Message}");
    }

    static T Read<T>(byte[] bytes) => Serializer.Deserialize<T>(bytes, 0, bytes.Length);

    static void Arguments()
    {
        Check.True(MP.ReceiveBudget == null && world.ReceiveBudget == null, "off by default");
        Check.Refused<ArgumentOutOfRangeException>(() => new ReceiveBudget(multiple: 0.5),
                                                   "multiple", "a multiple below 1");
        Check.Refused<ArgumentOutOfRangeException>(() => new ReceiveBudget(multiple: double.NaN),
                                                   "multiple", "a NaN multiple");
        Check.Refused<ArgumentOutOfRangeException>(
            () => new ReceiveBudget(multiple: double.PositiveInfinity), "multiple",
            "an infinite multiple");
        Check.Refused<ArgumentOutOfRangeException>(() => new ReceiveBudget(bytes: -1), "bytes",
                                                   "negative bytes");
        Check.Refused<ArgumentOutOfRangeException>(() => new ReceiveBudget(), "multiple",
                                                   "neither a multiple nor bytes");
        var both = new ReceiveBudget(multiple: 4, bytes: 1000);
        Check.True(both.LimitFor(100) == 400 && both.LimitFor(1000) == 1000 &&
                       new ReceiveBudget(multiple: 2).LimitFor(5) == 10 &&
                       new ReceiveBudget(bytes: 7).LimitFor(1 << 30) == 7,
                   "LimitFor: the smaller cap");
    }

    static void Process()
    {
        const int n = 200000;
        byte[] small = Serializer.Serialize(Small(n));
        Check.True(SmallOk(Read<int[][]>(small), n), "no budget: the amplifying graph arrives");
        try {
            MP.ReceiveBudget = new ReceiveBudget(multiple: 2);
            Refused(() => Read<int[][]>(small), "2 x: small arrays", "2 x");
            MP.ReceiveBudget = new ReceiveBudget(multiple: 4);
            Check.True(SmallOk(Read<int[][]>(small), n), "4 x: the same graph arrives");

            byte[] longs = Serializer.Serialize(new long[200000]);
            MP.ReceiveBudget = new ReceiveBudget(bytes: 1 << 20);
            Refused(() => Read<long[]>(longs), "1 MiB: a 1.6 MB array", "1.0 MiB");
            Check.True(Read<long[]>(Serializer.Serialize(new long[100000])).Length == 100000,
                       "1 MiB: an 0.8 MB array arrives");
            MP.ReceiveBudget = new ReceiveBudget(multiple: 100, bytes: 1 << 20);
            Refused(() => Read<long[]>(longs), "both: the smaller applies", "the smaller of");

            // a dictionary's tables are counted: ~3.5 x its message
            var map = Enumerable.Range(0, 100000).ToDictionary(i => i, i => -i);
            byte[] mapBytes = Serializer.Serialize(map);
            MP.ReceiveBudget = new ReceiveBudget(multiple: 2);
            Refused(() => Read<Dictionary<int, int>>(mapBytes), "2 x: a Dictionary<int,int>");
            MP.ReceiveBudget = new ReceiveBudget(multiple: 8);
            Check.True(Read<Dictionary<int, int>>(mapBytes)[99999] == -99999,
                       "8 x: the Dictionary arrives");
            Check.True(Read<string>(Serializer.Serialize("a string")) == "a string",
                       "8 x: a small graph arrives");
        } finally {
            MP.ReceiveBudget = null;
        }
        Check.True(SmallOk(Read<int[][]>(small), n), "budget off again: the graph arrives");
    }

    static void Communicators()
    {
        const int n = 100000;
        int[][] graph = Small(n);
        Intracomm dup = world.Dup();
        try {
            // the process's budget applies to World; dup's own overrides it
            MP.ReceiveBudget = new ReceiveBudget(multiple: 1.5);
            dup.ReceiveBudget = new ReceiveBudget(multiple: 100);
            int[][] got = null;
            MPSerializationException refusal = null;
            Ring.Exchange(
                () =>
                {
                    world.OSend(graph, next, 90);
                    world.OSend(new[] { new[] { rank } }, next, 90);
                    dup.OSend(graph, next, 91);
                },
                () =>
                {
                    try {
                        world.ORecv<int[][]>(prev, 90);
                    } catch (MPSerializationException e) {
                        refusal = e;
                    }
                    Check.True(world.ORecv<int[][]>(prev, 90) [0][0] == prev,
                               "the next message arrives");
                    got = dup.ORecv<int[][]>(prev, 91);
                    return null;
                });
            Check.True(refusal != null && refusal.Message.Contains("1.5 x"),
                       "ORecv on World: the process's budget refuses: " + refusal?.Message);
            Check.True(SmallOk(got, n), "ORecv on a communicator with its own budget arrives");
            Check.StillUsable(world, "a refused ORecv");

            // a communicator's budget does not reach Serializer or another communicator
            MP.ReceiveBudget = null;
            dup.ReceiveBudget = new ReceiveBudget(multiple: 1.5);
            Check.True(SmallOk(Read<int[][]>(Serializer.Serialize(graph)), n),
                       "Serializer: the process's budget (none), not a communicator's");

            // OIrecv, Message.ORecv on dup
            refusal = null;
            Ring.Exchange(
                () =>
                {
                    dup.OSend(graph, next, 92);
                    dup.OSend(graph, next, 93);
                },
                () =>
                {
                    ORequest<int[][]> r = dup.OIrecv<int[][]>(prev, 92);
                    Check.Throws<MPSerializationException>(() => r.Wait(),
                                                           "OIrecv: refused at Wait");
                    Message m = dup.Mprobe(prev, 93, out Status unused);
                    try {
                        m.ORecv<int[][]>();
                    } catch (MPSerializationException e) {
                        refusal = e;
                    }
                    return null;
                });
            Check.True(refusal != null && refusal.Message.Contains("receive budget"),
                       "Message.ORecv: refused: " + refusal?.Message);

            // ORecvInto: refused before the graph is touched
            var into = new int [n][];
            into[0] = new[] { -1 };
            Ring.Exchange(() => dup.OSend(graph, next, 94),
                          () =>
                          {
                              Check.Throws<MPSerializationException>(
                                  () => dup.ORecvInto(into, prev, 94), "ORecvInto: refused");
                              return null;
                          });
            Check.True(into[0][0] == -1 && into[1] == null, "ORecvInto: the graph is as it was");
            Check.StillUsable(dup, "refused OIrecv and Message.ORecv");

            // collectives: every rank reads, every rank refuses; then usable
            Check.Throws<MPSerializationException>(() => dup.OBcast(rank == 0 ? graph : null, 0),
                                                   "OBcast: refused");
            int[][][] pieces =
                rank == 0 ? Enumerable.Range(0, dup.Size).Select(r => graph).ToArray() : null;
            Check.Throws<MPSerializationException>(() => dup.OScatter(pieces, 0),
                                                   "OScatter: refused");
            Check.Throws<MPSerializationException>(() => dup.OAllgather(new[] { graph }),
                                                   "OAllgather: refused");
            Check.StillUsable(dup, "refused collectives");
            dup.ReceiveBudget = null;
            Check.True(SmallOk(dup.OBcast(rank == 0 ? graph : null, 0), n),
                       "OBcast without a budget arrives");
        } finally {
            MP.ReceiveBudget = null;
            dup.Dispose();
        }
    }

    static int Main()
    {
        Arguments();
        Process();
        Communicators();
        return Check.Finish("ReceiveBudgetTest");
    }
}

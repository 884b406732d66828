// ValuesTest — typed single values (Recv<T>, Bcast(ref T), scalar Reduce/Scan/Gather/Allgather/
// Scatter) and MP.ProcNull on every point-to-point path (API.md, version 2). Any rank count.
using System;
using System.MP;

struct Pair
{
    public int Key;
    public double Value;
    public override string ToString() => $"({Key}, {Value})";
}

static class ValuesTest
{
    static readonly Intracomm world = MP.World;
    static readonly int rank = world.Rank, size = world.Size;

    static int Main()
    {
        SingleValues();
        ScalarCollectives();
        ProcNullPointToPoint();
        ProcNullNonBlocking();
        ProcNullObjectCalls();
        OpenChain();
        BadInput();
        return Check.FinishWithNoPinLeft("ValuesTest");
    }

    /// <summary>Recv&lt;T&gt; of a primitive and of a struct from the previous rank of
    /// a ring.</summary>
    static void SingleValues()
    {
        int got = 0;
        Status st = null;
        Ring.Exchange(() => world.Send(new[] { 1000 + rank }, Ring.Next, 1),
                      () =>
                      {
                          got = world.Recv<int>(Ring.Prev, 1, out st);
                          return st;
                      });
        Check.Equal(1000 + Ring.Prev, got, "Recv<int> from the previous rank");
        Check.Equal(1, st.Count, "Recv<int>: Count is one element");
        Check.Equal(4L, st.Bytes, "Recv<int>: Bytes");
        Check.Equal(Ring.Prev, st.Source, "Recv<int>: Source");

        Pair pair = default(Pair);
        Ring.Exchange(() => world.Send(new[] { new Pair { Key = rank, Value = rank * 0.5 } },
                                       Ring.Next, 2),
                      () =>
                      {
                          pair = world.Recv<Pair>(Ring.Prev, 2, out st);
                          return st;
                      });
        Check.True(pair.Key == Ring.Prev && pair.Value == Ring.Prev * 0.5,
                   $"Recv<Pair> from the previous rank: {pair}");

        // two values where one is expected: truncation, and the communicator goes on
        Ring.Exchange(() => world.Send(new long[] { 1, 2 }, Ring.Next, 3),
                      () =>
                      {
                          Check.Throws<MPException>(() => world.Recv<long>(Ring.Prev, 3),
                                                    "Recv<long> of two longs");
                          return null;
                      });
        // an empty message: no value arrived
        Ring.Exchange(() => world.Send(new long[0], Ring.Next, 4),
                      () =>
                      {
                          Check.Throws<MPException>(() => world.Recv<long>(Ring.Prev, 4),
                                                    "Recv<long> of nothing");
                          return null;
                      });
        Ring.Exchange(() => world.Send(new[] { 7.25 }, Ring.Next, 5),
                      () =>
                      {
                          Check.Equal(7.25, world.Recv<double>(Ring.Prev, 5),
                                      "Recv<double> after the refusals");
                          return null;
                      });
    }

    static void ScalarCollectives()
    {
        int root = size - 1;
        double b = rank == root ? 2.5 : -1;
        world.Bcast(ref b, root);
        Check.Equal(2.5, b, "Bcast(ref double)");

        int sum = world.Reduce(rank + 1, Op.Sum, root);
        Check.Equal(rank == root ? size * (size + 1) / 2 : 0, sum,
                    "Reduce<int> (default off root)");
        Check.Equal(size * (size + 1) / 2L, world.Allreduce((long)rank + 1, Op.Sum),
                    "Allreduce<long>");
        Check.Equal((rank + 1) * (rank + 2) / 2, world.Scan(rank + 1, Op.Sum), "Scan<int>");
        Check.Equal(Math.Pow(2, rank + 1), world.Scan(2.0, Op.Prod), "Scan<double> Prod");
        Check.Equal(rank * (rank + 1) / 2, world.Exscan(rank + 1, Op.Sum),
                    "Exscan<int> (0 = default on rank 0)");
        Check.Equal(rank == 0 ? 0.0 : Math.Pow(3, rank), world.Exscan(3.0, Op.Prod),
                    "Exscan<double> Prod, default on rank 0");

        // a non-commutative, associative user operator on a struct — digits written one after
        // the other (Key: the number, Value: 10^digits) — keeps rank order
        Op keepFirst = Op.Create<Pair>((x, y) => new Pair { Key = x.Key * (int)y.Value + y.Key,
                                                            Value = x.Value * y.Value },
                                       false);
        Pair folded = world.Reduce(new Pair { Key = rank + 1, Value = 10 }, keepFirst, 0);
        if (rank == 0) {
            int expected = 0;
            for (int r = 0; r < size; r++)
                expected = r == 0 ? 1 : expected * 10 + r + 1;
            Check.Equal(expected, folded.Key,
                        "Reduce<Pair> with a non-commutative operator, in rank order");
            Check.Equal(Math.Pow(10, size), folded.Value, "Reduce<Pair> value");
        } else {
            Check.Equal(default(Pair).Key, folded.Key, "Reduce<Pair> off root is default");
        }
        keepFirst.Dispose();

        int[] gathered = world.Gather(rank * rank, root);
        if (rank == root) {
            Check.Equal(size, gathered.Length, "Gather<int> length at root");
            bool ok = true;
            for (int r = 0; r < size; r++)
                ok &= gathered[r] == r * r;
            Check.True(ok, "Gather<int> in rank order");
        } else {
            Check.True(gathered == null, "Gather<int> off root is null");
        }

        Pair[] all = world.Allgather(new Pair { Key = rank, Value = -rank });
        bool allOk = all.Length == size;
        for (int r = 0; allOk && r < size; r++)
            allOk &= all[r].Key == r && all[r].Value == -r;
        Check.True(allOk, "Allgather<Pair> in rank order");

        double[] values = null;
        if (rank == root) {
            values = new double[size];
            for (int r = 0; r < size; r++)
                values[r] = 100 + r;
        }
        Check.Equal(100.0 + rank, world.Scatter(values, root), "Scatter<double>: values[rank]");
        // off the root the values are ignored, whatever they are
        Check.Equal(100.0 + rank, world.Scatter(rank == root ? values : new double[1], root),
                    "Scatter<double> ignores values off root");
    }

    static void ExpectProcNull(Status st, string what)
    {
        Check.True(st != null && st.Source == MP.ProcNull && st.Tag == MP.AnyTag && st.Count == 0 &&
                       st.Bytes == 0 && !st.Cancelled,
                   $"{what}: status of ProcNull, got {st}");
    }

    static void ProcNullPointToPoint()
    {
        Check.Equal(-3, MP.ProcNull, "MP.ProcNull's value is part of the contract");
        var data = new[] { 5, 6, 7 };
        world.Send(data, MP.ProcNull, 1);
        world.Ssend(data, MP.ProcNull, 1);
        world.Send(data, 1, 2, MP.ProcNull, 1);
        world.Ssend(data, 0, 3, MP.ProcNull, 1);

        var into = new[] { 1, 2, 3 };
        ExpectProcNull(world.Recv(into, MP.ProcNull, 1), "Recv from ProcNull");
        ExpectProcNull(world.Recv(into, MP.ProcNull, MP.AnyTag), "Recv from ProcNull, any tag");
        ExpectProcNull(world.Recv(into, 1, 2, MP.ProcNull, 1), "Recv range from ProcNull");
        Check.True(into[0] == 1 && into[1] == 2 && into[2] == 3,
                   "a receive from ProcNull writes nothing");

        Status st;
        Check.Equal(0, world.Recv<int>(MP.ProcNull, 1, out st),
                    "Recv<int> from ProcNull is default");
        ExpectProcNull(st, "Recv<int> from ProcNull");
        Pair p = world.Recv<Pair>(MP.ProcNull, 1);
        Check.True(p.Key == 0 && p.Value == 0, "Recv<Pair> from ProcNull is default");

        ExpectProcNull(world.Sendrecv(data, MP.ProcNull, 1, into, MP.ProcNull, 1),
                       "Sendrecv with ProcNull both ways");
        Check.Equal(0, world.Sendrecv(data, 0, 2, MP.ProcNull, 1, into, 0, 2, MP.ProcNull, 1),
                    "Sendrecv of ranges with ProcNull: 0 received");
        Check.True(into[0] == 1 && into[1] == 2, "Sendrecv from ProcNull writes nothing");

        ExpectProcNull(world.Probe(MP.ProcNull, 1), "Probe(ProcNull)");
        ExpectProcNull(world.Iprobe(MP.ProcNull, MP.AnyTag), "Iprobe(ProcNull) finds at once");

        // a young (movable) receive array: a nursery object must not be pinned forever either
        var young = new byte[64];
        ExpectProcNull(world.Recv(young, MP.ProcNull, 7), "Recv of a young array from ProcNull");
    }

    static void ProcNullNonBlocking()
    {
        var data = new double[4];
        var reqs =
            new[] { world.Isend(data, MP.ProcNull, 1), world.Issend(data, MP.ProcNull, 1),
                    world.Isend(data, 1, 2, MP.ProcNull, 1), world.Irecv(data, MP.ProcNull, 1),
                    world.Irecv(data, 0, 3, MP.ProcNull, MP.AnyTag) };
        for (int i = 0; i < reqs.Length; i++) {
            Status st;
            Check.True(reqs[i].Test(out st), $"request {i} with ProcNull completes at once");
            ExpectProcNull(st, $"request {i} with ProcNull");
        }
        Check.Equal(MP.Undefined, Request.WaitAny(reqs), "all ProcNull requests already observed");
    }

    class Node
    {
        public int Value;
        [Transportable]
        public Node Next;
    }

    static void ProcNullObjectCalls()
    {
        world.OSend(new Node { Value = 1 }, MP.ProcNull, 1);
        world.OSend(null, MP.ProcNull, 1);
        Status st;
        Node n = world.ORecv<Node>(MP.ProcNull, 1, out st);
        Check.True(n == null, "ORecv from ProcNull returns null");
        ExpectProcNull(st, "ORecv from ProcNull");
        Check.Equal(0, world.ORecv<int>(MP.ProcNull, MP.AnyTag),
                    "ORecv<int> from ProcNull returns default");
        // a real graph after the no-ops: the communicator and the matching are untouched
        Node got = null;
        Ring.Exchange(() =>
                          world.OSend(new Node { Value = rank, Next = new Node { Value = -rank } },
                                      Ring.Next, 9),
                      () =>
                      {
                          got = world.ORecv<Node>(Ring.Prev, 9, out st);
                          return st;
                      });
        Check.True(got != null && got.Value == Ring.Prev && got.Next != null &&
                       got.Next.Value == -Ring.Prev,
                   "a graph after ProcNull O-calls");
    }

    /// <summary>A non-periodic chain: each rank sends its value right and left with ProcNull past
    /// the ends — the stencil boundary written with no special case.</summary>
    static void OpenChain()
    {
        int left = rank > 0 ? rank - 1 : MP.ProcNull,
            right = rank < size - 1 ? rank + 1 : MP.ProcNull;
        var cells = new double[] { -1, 10 * rank + 1, 10 * rank + 2, -1 };   // halo, interior, halo
        // to the right: my last interior cell into the right neighbour's left halo
        Status st = world.Sendrecv(new[] { cells[2] }, right, 11, new double[1], left, 11);
        int gotRight = world.Sendrecv(cells, 2, 1, right, 12, cells, 0, 1, left, 12);
        int gotLeft = world.Sendrecv(cells, 1, 1, left, 13, cells, 3, 1, right, 13);
        Check.Equal(left == MP.ProcNull ? MP.ProcNull : left, st.Source,
                    "chain: Source of the left neighbour");
        Check.Equal(left == MP.ProcNull ? 0 : 1, gotRight, "chain: elements from the left");
        Check.Equal(right == MP.ProcNull ? 0 : 1, gotLeft, "chain: elements from the right");
        Check.Equal(left == MP.ProcNull ? -1.0 : 10 * left + 2, cells[0], "chain: left halo");
        Check.Equal(right == MP.ProcNull ? -1.0 : 10 * right + 1, cells[3], "chain: right halo");
    }

    static void BadInput()
    {
        var a = new int[2];
        // -1 (AnySource) and -2 stay invalid destinations; -2 and -4 invalid sources
        foreach (int dest in new[] { -1, -2, -4 }) {
            var e = Check.Throws<ArgumentOutOfRangeException>(() => world.Send(a, dest, 1),
                                                              $"Send to {dest}");
            Check.True(e != null && e.ParamName == "dest" && e.Message.Contains(dest.ToString()) &&
                           e.Message.Contains("ProcNull"),
                       $"Send to {dest}: names dest, its value and ProcNull: {e?.Message}");
            Check.Throws<ArgumentOutOfRangeException>(() => world.OSend(a, dest, 1),
                                                      $"OSend to {dest}");
        }
        foreach (int source in new[] { -2, -4, size })
            Check.Throws<ArgumentOutOfRangeException>(() => world.Recv<int>(source, 1),
                                                      $"Recv<int> from {source}");
        // ProcNull does not excuse a bad tag or a bad buffer
        Check.Throws<ArgumentOutOfRangeException>(() => world.Send(a, MP.ProcNull, -1),
                                                  "Send to ProcNull with tag -1");
        Check.Throws<ArgumentNullException>(() => world.Recv(null, MP.ProcNull, 1),
                                            "Recv(null) from ProcNull");
        Check.Throws<ArgumentException>(() => world.Recv((object)5, MP.ProcNull, 1),
                                        "Recv into a boxed int from ProcNull");
        Check.Throws<ArgumentException>(() => world.Recv<Node2>(MP.ProcNull, 1),
                                        "Recv<T> of a struct with a reference");

        // root-only checks, on Self (this rank is the root, so no other rank waits)
        Intracomm self = MP.Self;
        var e2 = Check.Throws<ArgumentException>(() => self.Scatter(new int[2], 0),
                                                 "Scatter<int>: 2 values for 1 rank");
        Check.True(e2 != null && e2.ParamName == "values" && e2.Message.Contains("2") &&
                       e2.Message.Contains("Size = 1"),
                   $"Scatter<int> names values and the counts: {e2?.Message}");
        Check.Throws<ArgumentNullException>(() => self.Scatter<int>(null, 0),
                                            "Scatter<int>(null) at root");
        Check.Throws<ArgumentOutOfRangeException>(() => world.Reduce(1, Op.Sum, size),
                                                  "Reduce<int> root = Size");
        Check.Throws<ArgumentOutOfRangeException>(() => world.Gather(1, -1), "Gather<int> root -1");
        Check.Throws<ArgumentNullException>(() => world.Scan(1, null), "Scan<int> with a null op");
        Check.Throws<ArgumentNullException>(() => world.Exscan(1, null),
                                            "Exscan<int> with a null op");
        Check.Throws<ArgumentException>(() => world.Allreduce(true, Op.Sum),
                                        "Allreduce<bool> with Sum");
        // then everything still works
        Check.Equal(7, self.Scatter(new[] { 7 }, 0), "Self.Scatter after the refusals");
        Check.Equal(size, world.Allreduce(1, Op.Sum), "World.Allreduce after the refusals");
    }

    struct Node2
    {
        public int Value;
        public string Name;
    }
}

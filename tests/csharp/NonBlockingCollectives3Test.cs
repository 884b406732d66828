// NonBlockingCollectives3Test — the non-blocking collectives of API.md version 3: Igather,
// Iscatter, Igatherv, Iscatterv, Iallgatherv, Ialltoallv, Iscan, Iexscan, IreduceScatterBlock.
// Each against its blocking twin on the same data (uneven counts with zeros, displacements with
// gaps and out of rank order, every root, struct and two-dimensional arrays, young and large
// arrays, several in flight at once); counts and displacements overwritten by the caller while the
// request is in flight (the core works on its own copies); blocks the ranks disagree on
// (MPException where they arrive, through Wait, Test, await and WaitAll, the communicator usable
// after); every refused argument followed by a good call; Cancel refused; dropped requests
// finished by the core; Op.Replace and Op.NoOp refused by every reduction.
using System;
using System.Collections.Generic;
using System.Linq;
using System.MP;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

struct Cell
{
    public double X;
    public int N;
}

static class NonBlockingCollectives3Test
{
    static readonly Intracomm world = MP.World;
    static readonly int rank = world.Rank, size = world.Size;
    const int Bound = 100000;

    static long Val(int from, int to, int k) => from * 1000000L + to * 1000L + k;

    /// <summary>Displacements with a gap of `gap` before each block; reversed: blocks laid out
    /// from the last rank to the first.</summary>
    static int[] Displs(int[] counts, int gap, bool reversed, out int length)
    {
        var d = new int[counts.Length];
        int at = 0;
        foreach (int r in reversed ? Enumerable.Range(0, counts.Length).Reverse()
                                   : Enumerable.Range(0, counts.Length)) {
            at += gap;
            d[r] = at;
            at += counts[r];
        }
        length = at + gap;
        return d;
    }

    /// <summary>A collective to start, what it must have done, its Status's count.</summary>
    sealed class Case
    {
        public readonly string Name;
        public readonly Func<Request> Start;
        public readonly Func<bool> Done;
        public readonly int Count;
        public Case(string name, Func<Request> start, Func<bool> done = null, int count = 0)
        {
            Name = name;
            Start = start;
            Done = done;
            Count = count;
        }
    }

    // Arrays made with new, never LINQ's ToArray: that returns one shared empty array for every
    // empty sequence, which a collective then refuses as "the same array" for send and receive.
    static T[] Make<T>(int n, Func<int, T> f)
    {
        var a = new T[n];
        for (int i = 0; i < n; i++)
            a[i] = f(i);
        return a;
    }

    static T[] Filled<T>(int n, T value) => Make(n,
                                                 _ => value);

    static bool Same<T>(T[] a, T[] b) => a == null ? b == null : b != null && a.SequenceEqual(b);

    // ---- results: each against its blocking twin ----

    static void GatherScatter(int n)
    {
        for (int root = 0; root < size; root++) {
            var mine = Make(n, k => (double)Val(rank, root, k));
            var got = rank == root ? new double[n * size] : null;
            var want = rank == root ? new double[n * size] : null;
            Status st = world.Igather(mine, got, root).Wait();
            world.Gather(mine, want, root);
            Check.True(Same(want, got), $"Igather n={n} root={root}: as Gather");
            Check.Equal(rank == root ? n * size : 0, st.Count, $"Igather n={n}: Status.Count");

            var all = rank == root ? Make(n * size, k => k * 0.5) : null;
            var part = new double[n];
            var part2 = new double[n];
            st = world.Iscatter(all, part, root).Wait();
            world.Scatter(all, part2, root);
            Check.True(Same(part2, part), $"Iscatter n={n} root={root}: as Scatter");
            Check.Equal(n, st.Count, $"Iscatter n={n}: Status.Count");
            Check.Equal(8L * n, st.Bytes, $"Iscatter n={n}: Status.Bytes");
        }
    }

    static void GathervScatterv(int n)
    {
        // rank r: (n + r) % 4 elements, rank 1 n more, so that some blocks are empty
        int[] counts = Make(size, r => (n + r) % 4 + (r == 1 ? n : 0));
        foreach (bool reversed in new[] { false, true }) {
            int[] displs = Displs(counts, reversed ? 2 : 0, reversed, out int length);
            for (int root = 0; root < size; root++) {
                var mine = Make(counts[rank], k => Val(rank, root, k));
                long[] got = rank == root ? Filled(length, -7L) : null;
                long[] want = rank == root ? Filled(length, -7L) : null;
                // counts and displs are the root's only: null elsewhere
                int[] c = rank == root ? counts : null, d = rank == root ? displs : null;
                Status st = world.Igatherv(mine, got, c, d, root).Wait();
                world.Gatherv(mine, want, c, d, root);
                Check.True(Same(want, got),
                           $"Igatherv n={n} root={root} reversed={reversed}: as Gatherv");
                Check.Equal(rank == root ? counts.Sum() : 0, st.Count,
                            $"Igatherv n={n}: Status.Count (the blocks' elements)");

                long[] src = rank == root ? Make(length, k => k * 3L) : null;
                var piece = Filled(counts[rank], -1L);
                var piece2 = Filled(counts[rank], -1L);
                st = world.Iscatterv(src, c, d, piece, root).Wait();
                world.Scatterv(src, c, d, piece2, root);
                Check.True(Same(piece2, piece),
                           $"Iscatterv n={n} root={root} reversed={reversed}: as Scatterv");
                Check.Equal(counts[rank], st.Count, $"Iscatterv n={n}: Status.Count");
            }
        }
    }

    static void AllgathervAlltoallv(int n)
    {
        int[] counts = Make(size, r => (n + 2 * r) % 5);
        int[] displs = Displs(counts, 1, true, out int length);
        var mine = Make(counts[rank], k => (int)Val(rank, 0, k) % 100000);
        var got = Filled(length, -3);
        var want = Filled(length, -3);
        Status st = world.Iallgatherv(mine, got, counts, displs).Wait();
        world.Allgatherv(mine, want, counts, displs);
        Check.True(Same(want, got), $"Iallgatherv n={n}: as Allgatherv (gaps untouched)");
        Check.Equal(counts.Sum(), st.Count, $"Iallgatherv n={n}: Status.Count");

        // Alltoallv: j gets (rank + j + n) % 4 elements from this rank
        int[] sc = Make(size, j => (rank + j + n) % 4);
        int[] rc = Make(size, i => (i + rank + n) % 4);
        int[] sd = Displs(sc, 0, false, out int slen), rd = Displs(rc, 2, true, out int rlen);
        var send = new Cell[slen];
        for (int j = 0; j < size; j++)
            for (int k = 0; k < sc[j]; k++)
                send[sd[j] + k] = new Cell { X = Val(rank, j, k) + 0.5, N = k };
        var recv = Filled(rlen, new Cell { X = -1, N = -1 });
        var recv2 = Filled(rlen, new Cell { X = -1, N = -1 });
        st = world.Ialltoallv(send, sc, sd, recv, rc, rd).Wait();
        world.Alltoallv(send, sc, sd, recv2, rc, rd);
        Check.True(recv.Zip(recv2, (a, b) => a.X == b.X && a.N == b.N).All(ok => ok),
                   $"Ialltoallv n={n} (a struct): as Alltoallv");
        Check.True(Enumerable.Range(0, size).All(
                       i => rc[i] == 0 || recv[rd[i]].X == Val(i, rank, 0) + 0.5),
                   $"Ialltoallv n={n}: each block from its rank");
        Check.Equal(rc.Sum(), st.Count, $"Ialltoallv n={n}: Status.Count");

        // a two-dimensional receive array: counts in elements, row-major
        var grid = new double[size, 3];
        var grid2 = new double[size, 3];
        int[] threes = Filled(size, 3), rows = Make(size, r => 3 * r);
        var row = new[] { rank + 0.25, rank + 0.5, rank + 0.75 };
        world.Iallgatherv(row, grid, threes, rows).Wait();
        world.Allgatherv(row, grid2, threes, rows);
        Check.True(grid.Cast<double>().SequenceEqual(grid2.Cast<double>()) &&
                       grid[size - 1, 2] == size - 1 + 0.75,
                   "Iallgatherv into a double[,]: as Allgatherv");
    }

    static void Reductions(int n)
    {
        var x = Make(n, k => (long)(rank + 1) * (k + 1));
        foreach (Op op in new[] { Op.Sum, Op.Max, Op.BXor }) {
            var got = new long[n];
            var want = new long[n];
            Status st = world.Iscan(x, got, op).Wait();
            world.Scan(x, want, op);
            Check.True(Same(want, got), $"Iscan n={n}: as Scan");
            Check.Equal(n, st.Count, $"Iscan n={n}: Status.Count");

            var ex = Filled(n, -5L);
            var ex2 = Filled(n, -5L);
            st = world.Iexscan(x, ex, op).Wait();
            world.Exscan(x, ex2, op);
            Check.True(Same(ex2, ex), $"Iexscan n={n}: as Exscan");
            if (rank == 0)
                Check.True(ex.All(v => v == -5), "Iexscan: rank 0's recvArray untouched");
            Check.Equal(rank == 0 ? 0 : n, st.Count, $"Iexscan n={n}: Status.Count");
        }
        var inPlace = (long[])x.Clone();
        var scanned = new long[n];
        world.Scan(x, scanned, Op.Sum);
        world.Iscan(inPlace, inPlace, Op.Sum).Wait();
        Check.True(Same(scanned, inPlace), $"Iscan in place n={n}");

        var rs = Make(n * size, k => (double)(rank + k));
        var block = new double[n];
        var block2 = new double[n];
        Status rst = world.IreduceScatterBlock(rs, block, Op.Sum).Wait();
        world.ReduceScatterBlock(rs, block2, Op.Sum);
        Check.True(Same(block2, block), $"IreduceScatterBlock n={n}: as ReduceScatterBlock");
        Check.Equal(n, rst.Count, $"IreduceScatterBlock n={n}: Status.Count");
    }

    /// <summary>Several of them in flight together, completed in reverse order.</summary>
    static void InFlightTogether()
    {
        int[] counts = Make(size, r => r + 1);
        int[] displs = Displs(counts, 0, false, out int length);
        var mine = Filled(rank + 1, rank);
        var gv = rank == 0 ? new int[length] : null;
        var agv = new int[length];
        var sum = new int[1];
        var ex = new int[1];
        var g = new int[size];
        var rsb = new int[1];
        Request[] rs = {
            world.Igatherv(mine, gv, counts, displs, 0),
            world.Iallgatherv(mine, agv, counts, displs),
            world.Iscan(new[] { 1 }, sum, Op.Sum),
            world.Iexscan(new[] { 1 }, ex, Op.Sum),
            world.Igather(new[] { rank }, rank == size - 1 ? g : null, size - 1),
            world.IreduceScatterBlock(Filled(size, rank), rsb, Op.Sum),
        };
        for (int k = rs.Length - 1; k >= 0; k--)
            rs[k].Wait();
        int[] expect = Enumerable.Range(0, size).SelectMany(r => Filled(r + 1, r)).ToArray();
        Check.True(agv.SequenceEqual(expect), "in flight together: Iallgatherv");
        if (rank == 0)
            Check.True(gv.SequenceEqual(expect), "in flight together: Igatherv");
        Check.Equal(rank + 1, sum[0], "in flight together: Iscan");
        if (rank > 0)
            Check.Equal(rank, ex[0], "in flight together: Iexscan");
        if (rank == size - 1)
            Check.True(g.Select((v, i) => v == i).All(ok => ok), "in flight together: Igather");
        Check.Equal(size * (size - 1) / 2, rsb[0], "in flight together: IreduceScatterBlock");
    }

    // ---- the core's copies of counts and displacements ----

    /// <summary>The caller overwrites counts and displs (with values that would be refused)
    /// while the request is still in flight: rank 0 starts and scribbles before the others
    /// start (they wait for its message), so MPI cannot have read them before.</summary>
    static void CountsOverwritten()
    {
        int[] counts = Make(size, r => 2 * r + 1);
        int[] displs = Displs(counts, 1, true, out int length);
        int[] keepCounts = (int[])counts.Clone(), keepDispls = (int[])displs.Clone();
        var mine = Filled(counts[rank], rank + 100);
        int[] expect = Filled(length, -1);
        for (int r = 0; r < size; r++)
            for (int k = 0; k < counts[r]; k++)
                expect[displs[r] + k] = r + 100;

        // Ialltoallv: 2j+1 elements to rank j (send blocks overlapping at 0), from every rank
        // 2 * rank + 1 into blocks laid out in rank order
        int[] rc = Filled(size, counts[rank]), rd = Make(size, j => j * counts[rank]),
              sd = new int[size];
        int[] keepRc = (int[])rc.Clone(), keepRd = (int[])rd.Clone();
        var gathered = rank == 0 ? Filled(length, -1) : null;
        var all = Filled(length, -1);
        var piece = new int[counts[rank]];
        var a2a = new int[size * counts[rank]];
        int own = counts[rank], total = counts.Sum();
        var sendAll = mine.Concat(Filled(2 * size, rank + 100)).ToArray();
        var cases = new[] {
            new Case("Igatherv", () => world.Igatherv(mine, gathered, counts, displs, 0),
                     () => rank != 0 || gathered.SequenceEqual(expect), rank == 0 ? total : 0),
            new Case("Iallgatherv", () => world.Iallgatherv(mine, all, counts, displs),
                     () => all.SequenceEqual(expect), total),
            new Case("Iscatterv",
                     () => world.Iscatterv(rank == 0 ? expect : null, counts, displs, piece, 0),
                     () => piece.All(v => v == rank + 100), own),
            new Case("Ialltoallv", () => world.Ialltoallv(sendAll, counts, sd, a2a, rc, rd),
                     () => Enumerable.Range(0, a2a.Length).All(k => a2a[k] == k / own + 100),
                     size * own),
        };
        int tag = 40;
        foreach (var c in cases) {
            Array.Copy(keepCounts, counts, size);
            Array.Copy(keepDispls, displs, size);
            Array.Copy(keepRc, rc, size);
            Array.Copy(keepRd, rd, size);
            Array.Clear(sd, 0, size);
            Request r;
            if (rank == 0) {
                r = c.Start();
                foreach (int[] a in new[] { counts, displs, rc, rd, sd })
                    for (int i = 0; i < size; i++)
                        a[i] = i % 2 == 0 ? -1000 : int.MaxValue;
                for (int p = 1; p < size; p++)
                    world.Send(new[] { tag }, p, tag);
            } else {
                world.Recv(new int[1], 0, tag);
                r = c.Start();
                foreach (int[] a in new[] { counts, displs, rc, rd, sd })
                    for (int i = 0; i < size; i++)
                        a[i] = -1;
            }
            tag++;
            Status st = r.Wait();
            Check.True(c.Done(),
                       $"{c.Name}: counts and displacements overwritten while in flight, the " +
                           "result is the one they gave at the start");
            Check.Equal(c.Count, st.Count, $"{c.Name}: its Status counts what the blocks got");
        }
    }

    // ---- disagreements: MPException where the block arrives ----

    static void GoodCallStillWorks(string after)
    {
        var one = new[] { 1 };
        var total = new int[1];
        world.Iallreduce(one, total, Op.Sum).Wait();
        Check.Equal(size, total[0], $"after {after}: the communicator still works");
        var g = rank == 0 ? new int[size] : null;
        world.Igatherv(new[] { rank }, g, Filled(size, 1), Enumerable.Range(0, size).ToArray(), 0)
            .Wait();
        if (rank == 0)
            Check.True(g.Select((v, i) => v == i).All(ok => ok), $"after {after}: Igatherv works");
    }

    /// <summary>Completes r one way or another (by the round), returning what it raised.</summary>
    static Exception Complete(Request r, int way)
    {
        try {
            switch (way % 4) {
            case 0: r.Wait(); break;
            case 1: {
                Status st;
                int p = 0;
                while (!r.Test(out st) && ++p < 100 * Bound) { }
                break;
            }
            case 2: r.AsTask().GetAwaiter().GetResult(); break;
            default: Request.WaitAll(r); break;
            }
        } catch (Exception e) {
            return e;
        }
        return null;
    }

    static void Expect(Exception e, bool raises, string text, string what)
    {
        if (raises)
            Check.True(e is MPException && e.Message.Contains(text),
                       $"{what}: MPException saying '{text}', got {e?.GetType().Name}: " +
                           e?.Message);
        else
            Check.True(e == null, $"{what}: no exception here, got {e?.Message}");
    }

    static void Disagreements()
    {
        if (size == 1)
            return;
        int[] twos = Filled(size, 2), displs = Make(size, r => 2 * r);
        int way = 0;
        foreach (int delta in new[] { 1, -1, 3 }) {
            string d = $"({delta:+0;-0})";
            // Igatherv: rank 1 sends 2 + delta, the root expects 2
            var all = rank == 0 ? Filled(2 * size, -1) : null;
            Exception e =
                Complete(world.Igatherv(new int[rank == 1 ? 2 + delta : 2], all, twos, displs, 0),
                         way++);
            Expect(e, rank == 0, "counts[1] at the root", "Igatherv " + d);
            if (rank == 0)
                Check.True(all.Take(2).All(v => v == 0) && all.Skip(4).All(v => v == 0),
                           $"Igatherv {d}: the other blocks arrived, nothing written outside " +
                               "rank 1's block");
            GoodCallStillWorks("an Igatherv disagreement " + d);

            // Iscatterv: the root sends 2, rank 1's recvArray holds 2 + delta
            e = Complete(world.Iscatterv(rank == 0 ? new int[2 * size] : null, twos, displs,
                                         new int[rank == 1 ? 2 + delta : 2], 0),
                         way++);
            Expect(e, rank == 1, "recvArray.Length", "Iscatterv " + d);
            GoodCallStillWorks("an Iscatterv disagreement " + d);

            // Ialltoallv: rank 0 sends 2 + delta to rank 1, which expects 2
            int[] sc = (int[])twos.Clone();
            if (rank == 0)
                sc[1] = 2 + delta;
            e = Complete(world.Ialltoallv(new int[2 * size + 3], sc, displs, new int[2 * size],
                                          twos, displs),
                         way++);
            Expect(e, rank == 1, "recvCounts[0] on this rank", "Ialltoallv " + d);
            GoodCallStillWorks("an Ialltoallv disagreement " + d);

            // Iallgatherv: rank 0's counts give rank 1's block another size than rank 1 sends
            int[] counts = (int[])twos.Clone();
            if (rank == 0)
                counts[1] = 2 + delta;
            int[] d3 = Make(size, r => 5 * r);
            e = Complete(world.Iallgatherv(new int[2], new int[5 * size], counts, d3), way++);
            Expect(e, rank == 0, "rank 1 sent", "Iallgatherv " + d);
            GoodCallStillWorks("an Iallgatherv disagreement " + d);

            // Igather: rank 1's sendArray is 2 + delta, the root's recvArray 2 per rank
            e = Complete(world.Igather(new int[rank == 1 ? 2 + delta : 2],
                                       rank == 0 ? new int[2 * size] : null, 0),
                         way++);
            Expect(e, rank == 0, "recvArray.Length / Size", "Igather " + d);
            GoodCallStillWorks("an Igather disagreement " + d);

            // Iscatter: the root scatters 2 per rank, rank 1's recvArray holds 2 + delta
            e = Complete(world.Iscatter(rank == 0 ? new int[2 * size] : null,
                                        new int[rank == 1 ? 2 + delta : 2], 0),
                         way++);
            Expect(e, rank == 1, "sendArray.Length / Size", "Iscatter " + d);
            GoodCallStillWorks("an Iscatter disagreement " + d);

            // Ibcast (MPI's own, which reports the mismatch in its words): rank 1's array holds
            // 2 + delta, the root's 2
            var bc = Filled(rank == 1 ? 2 + delta : 2, rank == 0 ? 5 : -1);
            e = Complete(world.Ibcast(bc, 0), way++);
            Expect(e, rank == 1, "", "Ibcast " + d);
            if (rank > 1)
                Check.True(bc.All(v => v == 5), $"Ibcast {d}: the other ranks get the root's");
            GoodCallStillWorks("an Ibcast disagreement " + d);

            // Iallgather: rank 1's sendArray holds 2 + delta, every other rank's 2: every rank
            // receives a block of another size (rank 1 from the others, the others from rank 1)
            int mine = rank == 1 ? 2 + delta : 2;
            var ag = Filled(mine * size, -1);
            e = Complete(world.Iallgather(Filled(mine, rank + 10), ag), way++);
            Expect(e, true, rank == 1 ? "rank 0 sent" : "rank 1 sent", "Iallgather " + d);
            Check.True(ag.Skip(rank * mine).Take(mine).All(v => v == rank + 10) &&
                           (rank == 1 || size < 3 ||
                            ag.Skip(2 * mine).Take(mine).All(v => v == 12)),
                       $"Iallgather {d}: the blocks of the right size arrived");
            GoodCallStillWorks("an Iallgather disagreement " + d);

            // Ialltoall: rank 1's arrays hold blocks of 2 + delta, every other rank's of 2
            var at = Filled(mine * size, -1);
            e = Complete(world.Ialltoall(Filled(mine * size, rank + 20), at), way++);
            Expect(e, true, rank == 1 ? "rank 0 sent" : "rank 1 sent", "Ialltoall " + d);
            Check.True(at.Skip(rank * mine).Take(mine).All(v => v == rank + 20),
                       $"Ialltoall {d}: this rank's own block arrived");
            GoodCallStillWorks("an Ialltoall disagreement " + d);

            // the blocking Allgather and Alltoall alike (MPICH's own wrote garbage or dropped
            // blocks silently)
            ag = Filled(mine * size, -1);
            e = null;
            try {
                world.Allgather(Filled(mine, rank + 30), ag);
            } catch (Exception x) {
                e = x;
            }
            Expect(e, true, rank == 1 ? "rank 0 sent" : "rank 1 sent", "Allgather " + d);
            Check.True(ag.Skip(rank * mine).Take(mine).All(v => v == rank + 30) &&
                           ag.All(v => v == -1 || v >= 30 && v < 30 + size),
                       $"Allgather {d}: this rank's own block arrived, nothing else written");
            GoodCallStillWorks("an Allgather disagreement " + d);
            at = Filled(mine * size, -1);
            e = null;
            try {
                world.Alltoall(Filled(mine * size, rank + 40), at);
            } catch (Exception x) {
                e = x;
            }
            Expect(e, true, rank == 1 ? "rank 0 sent" : "rank 1 sent", "Alltoall " + d);
            Check.True(at.All(v => v == -1 || v >= 40 && v < 40 + size),
                       $"Alltoall {d}: nothing but blocks written");
            GoodCallStillWorks("an Alltoall disagreement " + d);
            // and the blocking Gather and Scatter (MPICH's own dropped or cut blocks silently)
            var gw = rank == 0 ? Filled(2 * size, -1) : null;
            e = null;
            try {
                world.Gather(Filled(rank == 1 ? 2 + delta : 2, rank + 50), gw, 0);
            } catch (Exception x) {
                e = x;
            }
            Expect(e, rank == 0, "the root's recvArray.Length / Size", "Gather " + d);
            if (rank == 0)
                Check.True(gw.Take(2).All(v => v == 50) && gw.Skip(4).All(v => v >= 52),
                           $"Gather {d}: the other blocks arrived, nothing written outside " +
                               "rank 1's block");
            GoodCallStillWorks("a Gather disagreement " + d);
            var sp = Filled(rank == 1 ? 2 + delta : 2, -1);
            e = null;
            try {
                world.Scatter(rank == 0 ? Filled(2 * size, 60) : null, sp, 0);
            } catch (Exception x) {
                e = x;
            }
            Expect(e, rank == 1, "this rank's recvArray.Length", "Scatter " + d);
            if (rank != 1)
                Check.True(sp.All(v => v == 60), $"Scatter {d}: the other ranks get their part");
            GoodCallStillWorks("a Scatter disagreement " + d);
        }
        // another element type: 3 shorts where the root expects 3 ints
        int[] three = Filled(size, 3), d4 = Make(size, r => 3 * r);
        Request req =
            rank == 1
                ? world.Igatherv(new short[3], null, null, null, 0)
                : world.Igatherv(new int[3], rank == 0 ? new int[3 * size] : null, three, d4, 0);
        Expect(Complete(req, 0), rank == 0, "6 bytes", "Igatherv of another element type");
        GoodCallStillWorks("an Igatherv of another element type");
        // a disagreement among others in flight: only its own request raises
        var ok = new int[size];
        Request good = world.Iallgatherv(new[] { rank }, ok, Filled(size, 1),
                                         Enumerable.Range(0, size).ToArray());
        Request bad = world.Igatherv(new int[rank == 1 ? 1 : 2],
                                     rank == 0 ? new int[2 * size] : null, twos, displs, 0);
        Exception eb = Complete(bad, 0), eg = Complete(good, 0);
        Expect(eb, rank == 0, "counts[1] at the root", "the disagreeing Igatherv");
        Check.True(eg == null && ok.Select((v, i) => v == i).All(x => x),
                   "the Iallgatherv in flight beside it completes with its data");
        GoodCallStillWorks("disagreements");
    }

    // ---- refused arguments ----

    static void Refused<TException>(Func<Request> call, string param, string text, string what)
        where TException : Exception
    {
        TException e = Check.Throws<TException>(() => call(), what);
        if (e == null)
            return;
        Check.True(e.GetType() == typeof(TException),
                   $"{what}: exactly {typeof(TException).Name}, not {e.GetType().Name}");
        if (param != null)
            Check.Equal(param, (e as ArgumentException)?.ParamName, what + ": ParamName");
        Check.True(text == null || e.Message.Contains(text),
                   $"{what}: the message says '{text}': {e.Message}");
    }

    static void BadArguments()
    {
        long ops = MP.Stats.Operations;
        int[] ones = Filled(size, 1), seq = Enumerable.Range(0, size).ToArray();
        var one = new int[1];
        var recv = new int[size];
        var userOp = Op.Create<int>((a, b) => a + b);

        // arguments every rank passes alike: every rank refuses them
        Refused<ArgumentOutOfRangeException>(() => world.Igather(one, recv, size), "root",
                                             $"root {size} is outside", "Igather root = Size");
        Refused<ArgumentOutOfRangeException>(() => world.Iscatter(recv, one, -1), "root",
                                             "root -1 is outside", "Iscatter root -1");
        Refused<ArgumentNullException>(() => world.Igather(null, recv, 0), "sendArray", null,
                                       "Igather null sendArray");
        Refused<ArgumentNullException>(() => world.Iscatter(recv, null, 0), "recvArray", null,
                                       "Iscatter null recvArray");
        Refused<ArgumentException>(() => world.Iallgatherv(new[] { "s" }, new string[size], ones,
                                                           seq),
                                   "sendArray", "System.String", "Iallgatherv of strings");
        Refused<ArgumentOutOfRangeException>(() => world.Igatherv(one, recv, ones, seq, size),
                                             "root", $"root {size} is outside",
                                             "Igatherv root = Size");
        Refused<ArgumentOutOfRangeException>(() => world.Iscatterv(recv, ones, seq, one, -2),
                                             "root", "root -2 is outside", "Iscatterv root -2");
        Refused<ArgumentNullException>(() => world.Igatherv(null, recv, ones, seq, 0), "sendArray",
                                       "sendArray must not be null", "Igatherv null sendArray");
        Refused<ArgumentNullException>(() => world.Iscatterv(recv, ones, seq, null, 0), "recvArray",
                                       "recvArray must not be null", "Iscatterv null recvArray");
        Refused<ArgumentException>(
            () => world.Iallgatherv(one, recv, ones.Concat(ones).ToArray(), seq), "counts",
            $"counts has {2 * size} elements: one per rank (Size {size})",
            "Iallgatherv counts too long");
        Refused<ArgumentNullException>(() => world.Iallgatherv(one, recv, ones, null), "displs",
                                       "displs must not be null", "Iallgatherv null displs");
        Refused<ArgumentNullException>(() => world.Iallgatherv(one, null, ones, seq), "recvArray",
                                       null, "Iallgatherv null recvArray");
        Refused<ArgumentException>(
            () => world.Iallgatherv(new int[2], new int[2 * size], ones,
                                    seq.Select(d => 2 * d).ToArray()),
            "sendArray",
            $"sendArray has 2 elements but counts[{rank}], this rank's own block, is 1",
            "Iallgatherv own count differs");
        Refused<ArgumentOutOfRangeException>(
            () => world.Iallgatherv(one, recv, ones, seq.Select(d => d + 1).ToArray()), "counts",
            $"the block of rank {size - 1}, [{size}, {size + 1})",
            "Iallgatherv block past the end");
        Refused<ArgumentOutOfRangeException>(
            () => world.Iallgatherv(one, recv, ones, seq.Select(d => d - 1).ToArray()), "displs",
            "displs[0] is -1: a displacement cannot be negative",
            "Iallgatherv negative displacement");
        if (size > 1)
            Refused<ArgumentException>(() => world.Iallgatherv(one, recv, ones, new int[size]),
                                       "displs", "overlap", "Iallgatherv overlapping blocks");
        Refused<ArgumentException>(() => world.Iallgatherv(one, new long[size], ones, seq),
                                   "recvArray", "System.Int64", "Iallgatherv element types differ");
        Refused<ArgumentException>(() => world.Iallgatherv(recv, recv, ones, seq), "recvArray",
                                   "the same array", "Iallgatherv one array for both");
        Refused<ArgumentNullException>(
            () => world.Ialltoallv(recv, null, seq, new int[size], ones, seq), "sendCounts",
            "sendCounts must not be null", "Ialltoallv null sendCounts");
        Refused<ArgumentNullException>(() => world.Ialltoallv(recv, ones, seq, new int[size], ones,
                                                              null),
                                       "recvDispls", null, "Ialltoallv null recvDispls");
        int[] fewer = (int[])ones.Clone();
        fewer[rank] = 0;
        Refused<ArgumentException>(
            () => world.Ialltoallv(recv, ones, seq, new int[size], fewer, seq), "recvCounts",
            $"sendCounts[{rank}] is 1 but recvCounts[{rank}] is 0", "Ialltoallv own block differs");
        Refused<ArgumentOutOfRangeException>(
            () => world.Ialltoallv(recv, ones.Select(c => -c).ToArray(), seq, new int[size], ones,
                                   seq),
            "sendCounts", "sendCounts[0] is -1: a count cannot be negative",
            "Ialltoallv negative count");
        Refused<ArgumentException>(() =>
                                       world.Ialltoallv(recv, ones, seq, new long[size], ones, seq),
                                   "recvArray", "System.Int64", "Ialltoallv element types");
        // reductions
        Refused<ArgumentNullException>(() => world.Iscan(null, recv, Op.Sum), "sendArray", null,
                                       "Iscan null sendArray");
        Refused<ArgumentNullException>(() => world.Iscan(recv, new int[size], null), "op", null,
                                       "Iscan null op");
        Refused<ArgumentException>(() => world.Iscan(recv, new int[size + 1], Op.Sum), "recvArray",
                                   "equal lengths", "Iscan lengths differ");
        Refused<ArgumentException>(() => world.Iscan(new double[1], new double[1], Op.BAnd), "op",
                                   "MPI_BAND is not defined for System.Double",
                                   "Iscan BAnd on double");
        Refused<ArgumentException>(() => world.Iscan(recv, new int[size], userOp), "op",
                                   "Op.Create", "Iscan with a C# operator");
        Refused<ArgumentException>(() => world.Iexscan(recv, recv, Op.Sum), "recvArray",
                                   "the same array", "Iexscan in place");
        Refused<ArgumentException>(() => world.Iexscan(recv, new int[size + 1], Op.Sum),
                                   "recvArray",
                                   $"sendArray has {size} elements and recvArray {size + 1}",
                                   "Iexscan lengths differ");
        Refused<ArgumentException>(() => world.Iexscan(recv, new int[size], userOp), "op",
                                   "Op.Create", "Iexscan with a C# operator");
        Refused<ArgumentNullException>(() => world.Iexscan(recv, new int[size], null), "op", null,
                                       "Iexscan null op");
        Refused<ArgumentException>(
            () => world.IreduceScatterBlock(new int[size + 1], new int[1], Op.Sum), "sendArray",
            $"sendArray has {size + 1} elements; Size ({size}) times recvArray's 1 = {size} were " +
                "expected",
            "IreduceScatterBlock lengths");
        Refused<ArgumentException>(() =>
                                       world.IreduceScatterBlock(new int[size], new int[1], userOp),
                                   "op", "Op.Create", "IreduceScatterBlock with a C# operator");
        Refused<ArgumentException>(
            () => world.IreduceScatterBlock(new int[size], new double[1], Op.Sum), "recvArray",
            "System.Double", "IreduceScatterBlock element types");
        // the operators of one-sided communication, in every reduction
        foreach (Op rma in new[] { Op.Replace, Op.NoOp }) {
            string name = rma == Op.Replace ? "Op.Replace" : "Op.NoOp";
            Refused<ArgumentException>(() => world.Iscan(recv, new int[size], rma), "op", name,
                                       "Iscan with " + name);
            Refused<ArgumentException>(() => world.Iexscan(recv, new int[size], rma), "op", name,
                                       "Iexscan with " + name);
            Refused<ArgumentException>(() => world.IreduceScatterBlock(recv, new int[1], rma), "op",
                                       name, "IreduceScatterBlock with " + name);
            Refused<ArgumentException>(() => world.Iallreduce(recv, new int[size], rma), "op", name,
                                       "Iallreduce with " + name);
            Refused<ArgumentException>(() => world.Ireduce(recv, new int[size], rma, 0), "op", name,
                                       "Ireduce with " + name);
            var e = Check.Throws<ArgumentException>(() => world.Allreduce(recv, new int[size], rma),
                                                    "Allreduce with " + name);
            Check.True(e != null && e.ParamName == "op" && e.Message.Contains("one-sided"),
                       $"Allreduce with {name}: says it is for one-sided communication: " +
                           e?.Message);
            Check.Throws<ArgumentException>(() => world.Allreduce(1.5, rma),
                                            "Allreduce<double> with " + name);
            Check.Throws<ArgumentException>(() => world.Reduce(recv, new int[size], rma, 0),
                                            "Reduce with " + name);
            Check.Throws<ArgumentException>(() => world.Scan(recv, new int[size], rma),
                                            "Scan with " + name);
            Check.Throws<ArgumentException>(() => world.Exscan(recv, new int[size], rma),
                                            "Exscan with " + name);
            Check.Throws<ArgumentException>(() => world.ReduceScatterBlock(recv, new int[1], rma),
                                            "ReduceScatterBlock with " + name);
        }
        userOp.Dispose();
        Refused<ObjectDisposedException>(() => world.Iscan(recv, new int[size], userOp), null, null,
                                         "Iscan with a disposed operator");
        Check.Equal(ops, MP.Stats.Operations, "no collective started by refusals on every rank");
        GoodCallStillWorks("refusals on every rank");
        ops = MP.Stats.Operations;

        // arguments only the root reads: only the root calls (the others would wait in MPI)
        if (rank == 0) {
            var mine = new int[1];
            var all = new int[size + 2];
            Refused<ArgumentNullException>(() => world.Igather(mine, null, 0), "recvArray", null,
                                           "Igather null recvArray at the root");
            Refused<ArgumentException>(() => world.Igather(mine, new int[size + 1], 0), "recvArray",
                                       "were expected", "Igather recvArray not Size times");
            Refused<ArgumentException>(() => world.Igather(mine, mine, 0), "sendArray",
                                       "the same array", "Igather one array for both at the root");
            Refused<ArgumentNullException>(() => world.Iscatter(null, mine, 0), "sendArray", null,
                                           "Iscatter null sendArray at the root");
            Refused<ArgumentException>(() => world.Iscatter(new double[size], mine, 0), "recvArray",
                                       "System.Double", "Iscatter element types at the root");
            Refused<ArgumentNullException>(() => world.Igatherv(mine, null, ones, seq, 0),
                                           "recvArray", "recvArray must not be null",
                                           "Igatherv null recvArray at the root");
            Refused<ArgumentNullException>(() => world.Igatherv(mine, all, null, seq, 0), "counts",
                                           "counts must not be null",
                                           "Igatherv null counts at the root");
            Refused<ArgumentException>(() => world.Igatherv(mine, all, ones, new int[size + 1], 0),
                                       "displs", $"displs has {size + 1} elements",
                                       "Igatherv displs too long");
            int[] negative = (int[])ones.Clone();
            negative[size - 1] = -2;
            Refused<ArgumentOutOfRangeException>(
                () => world.Igatherv(mine, all, negative, seq, 0), "counts",
                $"counts[{size - 1}] is -2: a count cannot be negative", "Igatherv negative count");
            int[] longer = (int[])ones.Clone();
            longer[0] = 2;
            Refused<ArgumentException>(
                () => world.Igatherv(mine, new int[2 * size], longer,
                                     seq.Select(d => 2 * d).ToArray(), 0),
                "sendArray",
                "the root's sendArray has 1 elements but counts[0], the root's own block, is 2",
                "Igatherv root's own count");
            Refused<ArgumentOutOfRangeException>(
                () => world.Igatherv(mine, all, ones, seq.Select(d => d + 3).ToArray(), 0),
                "counts", "passes the end of recvArray", "Igatherv block past the end");
            if (size > 1)
                Refused<ArgumentException>(() => world.Igatherv(mine, all, Filled(size, 2), seq, 0),
                                           "displs", "overlap",
                                           "Igatherv overlapping receive blocks");
            Refused<ArgumentException>(() => world.Igatherv(mine, new short[size], ones, seq, 0),
                                       "recvArray", "System.Int16",
                                       "Igatherv element types differ at the root");
            Refused<ArgumentException>(
                () => world.Iscatterv(all, ones, seq, new int[2], 0), "recvArray",
                "the root's recvArray has 2 elements but counts[0], the root's own block, is 1",
                "Iscatterv root's own count");
            Refused<ArgumentNullException>(() => world.Iscatterv(null, ones, seq, mine, 0),
                                           "sendArray", "sendArray must not be null",
                                           "Iscatterv null sendArray at the root");
            Refused<ArgumentNullException>(() => world.Iscatterv(all, ones, null, mine, 0),
                                           "displs", null, "Iscatterv null displs at the root");
            Refused<ArgumentOutOfRangeException>(
                () => world.Iscatterv(new int[size - 1], ones, seq, mine, 0), "counts",
                "passes the end of sendArray", "Iscatterv block past the end");
        }
        Check.Equal(ops, MP.Stats.Operations, "no collective started by refusals at the root");
        GoodCallStillWorks("refusals at the root");
    }

    // ---- Cancel, drops ----

    static void CancelRefused()
    {
        int[] ones = Filled(size, 1), seq = Enumerable.Range(0, size).ToArray();
        var all = new int[size];
        var cases = new[] {
            new Case("Igather",
                     () => world.Igather(new[] { rank }, rank == 0 ? new int[size] : null, 0)),
            new Case("Iscatter", () => world.Iscatter(rank == 0 ? seq : null, new int[1], 0)),
            new Case("Igatherv",
                     () => world.Igatherv(new[] { rank }, rank == 0 ? new int[size] : null, ones,
                                          seq, 0)),
            new Case("Iscatterv", () => world.Iscatterv(seq, ones, seq, new int[1], 0)),
            new Case("Iallgatherv", () => world.Iallgatherv(new[] { rank }, all, ones, seq)),
            new Case("Ialltoallv",
                     () => world.Ialltoallv(seq, ones, seq, new int[size], ones, seq)),
            new Case("Iscan", () => world.Iscan(new[] { 1 }, new int[1], Op.Sum)),
            new Case("Iexscan", () => world.Iexscan(new[] { 1 }, new int[1], Op.Sum)),
            new Case("IreduceScatterBlock",
                     () => world.IreduceScatterBlock(ones, new int[1], Op.Sum)),
        };
        foreach (var c in cases) {
            Request r = c.Start();
            var e = Check.Throws<NotSupportedException>(() => r.Cancel(), "Cancel of " + c.Name);
            Check.True(e != null && e.Message.Contains(c.Name) &&
                           e.Message.Contains("cannot be cancelled"),
                       $"Cancel of {c.Name} names it: {e?.Message}");
            Status st = r.Wait();
            Check.True(!st.Cancelled, $"{c.Name} whose Cancel was refused completes");
        }
        Check.True(all.Select((v, i) => v == i).All(ok => ok),
                   "the Iallgatherv whose Cancel was refused has its data");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void StartAndDrop(Intracomm comm, int k)
    {
        int[] counts = Make(size, r => r + k % 3);
        int[] displs = Displs(counts, 1, false, out int length);
        comm.Iallgatherv(new double[counts[rank]], new double[length], counts, displs);
        comm.Igatherv(new long[counts[rank]], rank == 0 ? new long[length] : null, counts, displs,
                      0);
        comm.Iexscan(new int[10 + k], new int[10 + k], Op.Sum);
        comm.Igather(new short[3], rank == 1 % size ? new short[3 * size] : null, 1 % size);
    }

    static void Dropped()
    {
        var comm = world.Dup();
        MPStats before = MP.Stats;
        if (rank == 0) {
            for (int k = 0; k < 5; k++)
                StartAndDrop(comm, k);
            if (size > 1)
                Check.True(MP.Stats.PendingRequests >= before.PendingRequests + 20,
                           "dropped collectives pending while other ranks are away");
            world.Barrier();
        } else {
            world.Barrier();
            for (int k = 0; k < 5; k++)
                StartAndDrop(comm, k);
        }
        int polls = 0;
        while ((MP.Stats.PendingRequests > before.PendingRequests || MP.Stats.PinsLive > 0) &&
               ++polls < Bound) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            world.Iprobe(rank, 30001);   // drives MPI progress
        }
        Check.Equal(before.PendingRequests, MP.Stats.PendingRequests,
                    $"dropped collectives finished by the core (after {polls} polls)");
        Check.Equal(0L, MP.Stats.PinsLive, "their pins released");
        world.Barrier();
        comm.Dispose();
    }

    /// <summary>On other communicators: Self, a Split in reverse order, a Dup.</summary>
    static void Communicators()
    {
        var self = new int[1];
        MP.Self.Igatherv(new[] { 42 }, self, new[] { 1 }, new[] { 0 }, 0).Wait();
        Check.Equal(42, self[0], "Igatherv on Self");
        using (Intracomm reversed = world.Split(0, size - rank))
        {
            int r = reversed.Rank, n = reversed.Size;
            var all = new int[n];
            reversed
                .Iallgatherv(new[] { rank }, all, Filled(n, 1), Enumerable.Range(0, n).ToArray())
                .Wait();
            Check.True(all.Select((v, i) => v == size - 1 - i).All(ok => ok),
                       "Iallgatherv on a Split in reverse order");
            var sum = new int[1];
            reversed.Iexscan(new[] { 1 }, sum, Op.Sum).Wait();
            Check.Equal(r, r == 0 ? r : sum[0], "Iexscan on the reversed Split");
        }
    }

    static int Main()
    {
        Check.Equal(3, MP.ThreadLevel, "MPI_THREAD_MULTIPLE granted");
        foreach (int n in new[] { 0, 1, 7, 300, 1100 }) {   // 1100 doubles: the large-object space
            GatherScatter(n);
            GathervScatterv(n);
            AllgathervAlltoallv(n);
            Reductions(n);
        }
        InFlightTogether();
        CountsOverwritten();
        Disagreements();
        BadArguments();
        CancelRefused();
        Dropped();
        Communicators();
        world.Barrier();
        Check.Equal(0L, MP.Stats.PendingRequests, "no pending requests at the end");
        return Check.FinishWithNoPinLeft("NonBlockingCollectives3Test");
    }
}

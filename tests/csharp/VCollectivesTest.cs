// VCollectivesTest — Gatherv, Scatterv, Allgatherv, Alltoallv, Exscan and ReduceScatterBlock
// (API.md, version 2): uneven counts with zeros, displacements with gaps and out of rank order,
// every root, struct and two-dimensional arrays, young and large arrays; built-in and user
// operators (a non-commutative one checks rank order); every refused argument followed by a good
// call on the same communicator; blocks whose sizes the ranks disagree on raise MPException where
// they arrive. Run at 1, 2, 3 and 4 ranks.
using System;
using System.Linq;
using System.MP;

struct Pair
{
    public double X;
    public int N;
}
// 2x2 matrices: associative, not commutative
struct M2
{
    public long A, B, C, D;
}

static class VCollectivesTest
{
    static Intracomm world = MP.World;
    static int rank = world.Rank, size = world.Size;

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

    static void GatherScatter()
    {
        // 700: blocks of ~5-17 KB, beyond the nursery's 8000-byte objects
        foreach (int scale in new[] { 1, 700 }) {
            for (int root = 0; root < size; root++) {
                // zeros included
                int[] counts =
                    Enumerable.Range(0, size).Select(r => ((r + root) % 3) * scale).ToArray();
                bool reversed = root % 2 == 1;
                int[] displs = Displs(counts, 2, reversed, out int length);
                var mine =
                    Enumerable.Range(0, counts[rank]).Select(k => Val(rank, root, k)).ToArray();
                long[] all = rank == root ? Enumerable.Repeat(-1L, length).ToArray() : null;
                world.Gatherv(mine, all, rank == root ? counts : null, rank == root ? displs : null,
                              root);
                if (rank == root) {
                    bool ok = true;
                    var inBlock = new bool[length];
                    for (int r = 0; r < size; r++)
                        for (int k = 0; k < counts[r]; k++) {
                            ok &= all[displs[r] + k] == Val(r, root, k);
                            inBlock[displs[r] + k] = true;
                        }
                    Check.True(ok, $"Gatherv x{scale} root {root}: every block in place");
                    Check.True(Enumerable.Range(0, length).All(i => inBlock[i] || all[i] == -1),
                               $"Gatherv x{scale} root {root}: gaps untouched");
                }

                // Scatterv back, into arrays of exactly counts[rank]
                var back = new long[counts[rank]];
                world.Scatterv(all, rank == root ? counts : null, rank == root ? displs : null,
                               back, root);
                Check.True(back.SequenceEqual(mine),
                           $"Scatterv x{scale} root {root}: this rank's block");
            }
        }

        // overlapping send blocks: every rank gets a window of one array
        {
            int root = size - 1;
            var src = Enumerable.Range(0, size + 4).Select(i => (double)i).ToArray();
            int[] counts = Enumerable.Repeat(5, size).ToArray(),
                  displs = Enumerable.Range(0, size).ToArray();
            var win = new double[5];
            world.Scatterv(rank == root ? src : null, counts, displs, win, root);
            Check.True(win.SequenceEqual(Enumerable.Range(rank, 5).Select(i => (double)i)),
                       "Scatterv of overlapping send blocks");
        }

        // structs, and a two-dimensional receive array (elements in row-major order)
        {
            int[] counts = Enumerable.Range(0, size).Select(r => r % 2 + 1).ToArray();
            int[] displs = Displs(counts, 0, false, out int length);
            var mine = Enumerable.Range(0, counts[rank])
                           .Select(k => new Pair { X = rank + k * 0.5, N = rank * 10 + k })
                           .ToArray();
            var all = rank == 0 ? new Pair[length] : null;
            world.Gatherv(mine, all, counts, displs, 0);
            if (rank == 0)
                Check.True(Enumerable.Range(0, size).All(
                               r => Enumerable.Range(0, counts[r])
                                        .All(k => all[displs[r] + k].N == r * 10 + k &&
                                                  all[displs[r] + k].X == r + k * 0.5)),
                           "Gatherv of structs");
            var grid = new int[size, 3];
            int[] rowCounts = Enumerable.Repeat(3, size).ToArray(),
                  rowDispls = Enumerable.Range(0, size).Select(r => 3 * r).ToArray();
            world.Allgatherv(new[] { rank, rank + 1, rank + 2 }, grid, rowCounts, rowDispls);
            Check.True(Enumerable.Range(0, size).All(r => grid[r, 0] == r && grid[r, 2] == r + 2),
                       "Allgatherv into int[,] rows");
        }
    }

    static void AllgathervAlltoallv()
    {
        foreach (int scale in new[] { 1, 600 }) {
            int[] counts = Enumerable.Range(0, size).Select(r => ((r + 1) % 3) * scale).ToArray();
            int[] displs = Displs(counts, 1, true, out int length);
            var mine = Enumerable.Range(0, counts[rank]).Select(k => Val(rank, 0, k)).ToArray();
            var all = Enumerable.Repeat(-7L, length).ToArray();
            world.Allgatherv(mine, all, counts, displs);
            bool ok = true;
            for (int r = 0; r < size; r++)
                for (int k = 0; k < counts[r]; k++)
                    ok &= all[displs[r] + k] == Val(r, 0, k);
            ok &= displs.All(d => all[d - 1] == -7);
            Check.True(ok, $"Allgatherv x{scale}: blocks in place, gaps untouched");

            // Alltoallv: rank i sends (i + 2j) % 3 * scale elements to rank j
            Func<int, int, int> count = (from, to) => ((from + 2 * to) % 3) * scale;
            int[] sc = Enumerable.Range(0, size).Select(j => count(rank, j)).ToArray();
            int[] rc = Enumerable.Range(0, size).Select(i => count(i, rank)).ToArray();
            int[] sd = Displs(sc, 3, false, out int slen),
                  rd = Displs(rc, 1, rank % 2 == 0, out int rlen);
            var send = new long[slen];
            for (int j = 0; j < size; j++)
                for (int k = 0; k < sc[j]; k++)
                    send[sd[j] + k] = Val(rank, j, k);
            var recv = Enumerable.Repeat(-9L, rlen).ToArray();
            world.Alltoallv(send, sc, sd, recv, rc, rd);
            ok = true;
            for (int i = 0; i < size; i++)
                for (int k = 0; k < rc[i]; k++)
                    ok &= recv[rd[i] + k] == Val(i, rank, k);
            ok &= rd.All(d => recv[d - 1] == -9);
            Check.True(ok, $"Alltoallv x{scale}: every block from every rank, gaps untouched");
        }
        // overlapping send blocks: the same 4 elements to everyone
        var same = new short[] { 1, 2, 3, (short)rank };
        var got = new short[4 * size];
        world.Alltoallv(same, Enumerable.Repeat(4, size).ToArray(), new int[size], got,
                        Enumerable.Repeat(4, size).ToArray(),
                        Enumerable.Range(0, size).Select(i => 4 * i).ToArray());
        Check.True(Enumerable.Range(0, size).All(i => got[4 * i + 3] == i && got[4 * i] == 1),
                   "Alltoallv of one send block to all");
    }

    static M2 Mul(M2 x, M2 y) => new M2 { A = x.A * y.A + x.B * y.C, B = x.A * y.B + x.B * y.D,
                                          C = x.C * y.A + x.D * y.C, D = x.C * y.B + x.D * y.D };
    static M2 MatOf(int r, int k) => new M2 { A = 1, B = r + 1 + k, C = k % 2, D = 1 + r % 2 };
    static bool Same(M2 x, M2 y) => x.A == y.A && x.B == y.B && x.C == y.C && x.D == y.D;

    static void Reductions()
    {
        int n = 1100;   // 8.8 KB of longs: beyond the nursery's large-object threshold
        var s = Enumerable.Range(0, n).Select(i => (long)(rank + 1) * (i + 1)).ToArray();
        var ex = Enumerable.Repeat(-5L, n).ToArray();
        world.Exscan(s, ex, Op.Sum);
        if (rank == 0)
            Check.True(ex.All(x => x == -5), "Exscan leaves rank 0's recvArray untouched");
        else
            Check.True(Enumerable.Range(0, n).All(
                           i => ex[i] == (long)rank * (rank + 1) / 2 * (i + 1)),
                       "Exscan long Sum");
        var mx = new double[] { -1 };
        world.Exscan(new[] { (double)((rank * 7) % 5) }, mx, Op.Max);
        if (rank > 0)
            Check.Equal((double)Enumerable.Range(0, rank).Max(r => (r * 7) % 5), mx[0],
                        "Exscan double Max");

        // user operators: a non-commutative one (rank order), on a struct
        Op mul = Op.Create<M2>(Mul, false);
        var pre = new M2[2];
        world.Exscan(new[] { MatOf(rank, 0), MatOf(rank, 1) }, pre, mul);
        if (rank > 0) {
            M2 w0 = MatOf(0, 0), w1 = MatOf(0, 1);
            for (int r = 1; r < rank; r++) {
                w0 = Mul(w0, MatOf(r, 0));
                w1 = Mul(w1, MatOf(r, 1));
            }
            Check.True(Same(pre[0], w0) && Same(pre[1], w1),
                       "Exscan with a non-commutative user operator: rank order");
        } else {
            Check.True(Same(pre[0], default(M2)),
                       "Exscan with a user operator leaves rank 0 untouched");
        }
        Op plus = Op.Create<long>((a, b) => a + b);
        var exu = new long[3];
        world.Exscan(new long[] { rank, 1, 2 }, exu, plus);
        if (rank > 0)
            Check.True(exu[0] == (long)rank * (rank - 1) / 2 && exu[1] == rank &&
                           exu[2] == 2 * rank,
                       "Exscan with a user operator");

        // ReduceScatterBlock: block i of the sum to rank i
        int per = 3;
        var send = Enumerable.Range(0, size * per).Select(k => (long)rank * 100 + k).ToArray();
        var mineBlock = new long[per];
        world.ReduceScatterBlock(send, mineBlock, Op.Sum);
        Check.True(Enumerable.Range(0, per).All(
                       j => mineBlock[j] ==
                            100L * size * (size - 1) / 2 + (long)size * (rank * per + j)),
                   "ReduceScatterBlock long Sum");
        var big = Enumerable.Range(0, size * 1200).Select(k => (double)(k % 11) + rank).ToArray();
        var bigBlock = new double[1200];
        world.ReduceScatterBlock(big, bigBlock, Op.Max);
        Check.True(Enumerable.Range(0, 1200).All(
                       j => bigBlock[j] == (rank * 1200 + j) % 11 + size - 1),
                   "ReduceScatterBlock double Max, large");
        var ms = Enumerable.Range(0, size * 2).Select(k => MatOf(rank, k)).ToArray();
        var mres = new M2[2];
        world.ReduceScatterBlock(ms, mres, mul);
        bool ok = true;
        for (int j = 0; j < 2; j++) {
            M2 w = MatOf(0, rank * 2 + j);
            for (int r = 1; r < size; r++)
                w = Mul(w, MatOf(r, rank * 2 + j));
            ok &= Same(w, mres[j]);
        }
        Check.True(ok, "ReduceScatterBlock with a non-commutative user operator: rank order");
        var us = new long[1];
        world.ReduceScatterBlock(Enumerable.Range(0, size).Select(k => (long)k * rank).ToArray(),
                                 us, plus);
        Check.Equal((long)rank * size * (size - 1) / 2, us[0],
                    "ReduceScatterBlock with a user operator");

        // a throwing operator: every rank raises, the communicator stays usable
        Op thrower = Op.Create<int>((a, b) =>
                                    { throw new InvalidOperationException("on purpose"); });
        if (size > 1) {
            MPException e = null;
            try {
                world.ReduceScatterBlock(new int[size], new int[1], thrower);
            } catch (MPException x) {
                e = x;
            }
            Check.True(e != null,
                       "a throwing operator in ReduceScatterBlock: MPException on every rank");
            e = null;
            try {
                world.Exscan(new int[2], new int[2], thrower);
            } catch (MPException x) {
                e = x;
            }
            Check.True(e != null, "a throwing operator in Exscan: MPException on every rank");
        }
        Check.Equal(size, world.Allreduce(1, Op.Sum), "usable after a throwing operator");
        foreach (Op op in new[] { mul, plus, thrower })
            op.Dispose();
    }

    /// <summary>The refusal names the parameter and says what is wrong.</summary>
    static void Refused<TException>(Action call, string param, string text, string what)
        where TException : ArgumentException
    {
        TException e = Check.Throws<TException>(call, what);
        if (e == null)
            return;
        Check.Equal(param, e.ParamName, what + ": ParamName");
        Check.True(e.Message.Contains(text), $"{what}: the message says '{text}': {e.Message}");
    }

    static void GoodGatherv(string after)
    {
        int[] counts = Enumerable.Range(0, size).Select(r => r + 1).ToArray();
        int[] displs = Displs(counts, 0, false, out int length);
        var all = rank == 0 ? new int[length] : null;
        world.Gatherv(Enumerable.Repeat(rank, rank + 1).ToArray(), all, counts, displs, 0);
        if (rank == 0)
            Check.True(Enumerable.Range(0, size).All(r => all[displs[r] + r] == r),
                       "good Gatherv after " + after);
    }

    static void BadArguments()
    {
        long ops = MP.Stats.Operations;
        int[] ones = Enumerable.Repeat(1, size).ToArray(),
              seq = Enumerable.Range(0, size).ToArray();
        var one = new int[1];
        var recv = new int[size];

        // arguments every rank passes alike: every rank refuses them
        Refused<ArgumentOutOfRangeException>(() => world.Gatherv(one, recv, ones, seq, size),
                                             "root", $"root {size} is outside",
                                             "Gatherv root = Size");
        Refused<ArgumentOutOfRangeException>(() => world.Scatterv(recv, ones, seq, one, -1), "root",
                                             "root -1 is outside", "Scatterv root -1");
        Refused<ArgumentNullException>(() => world.Gatherv(null, recv, ones, seq, 0), "sendArray",
                                       "sendArray must not be null", "Gatherv null sendArray");
        Refused<ArgumentNullException>(() => world.Scatterv(recv, ones, seq, null, 0), "recvArray",
                                       "recvArray must not be null", "Scatterv null recvArray");
        Refused<ArgumentException>(
            () => world.Allgatherv(one, recv, ones.Concat(ones).ToArray(), seq), "counts",
            $"counts has {2 * size} elements: one per rank (Size {size})",
            "Allgatherv counts too long");
        Refused<ArgumentNullException>(() => world.Allgatherv(one, recv, ones, null), "displs",
                                       "displs must not be null", "Allgatherv null displs");
        Refused<ArgumentException>(
            () => world.Allgatherv(new int[2], new int[2 * size], ones,
                                   seq.Select(d => 2 * d).ToArray()),
            "sendArray",
            $"sendArray has 2 elements but counts[{rank}], this rank's own block, is 1",
            "Allgatherv own count differs");
        Refused<ArgumentOutOfRangeException>(
            () => world.Allgatherv(one, recv, ones, seq.Select(d => d + 1).ToArray()), "counts",
            $"the block of rank {size - 1}, [{size}, {size + 1})", "Allgatherv block past the end");
        Refused<ArgumentOutOfRangeException>(
            () => world.Allgatherv(one, recv, ones, seq.Select(d => d - 1).ToArray()), "displs",
            "displs[0] is -1: a displacement cannot be negative",
            "Allgatherv negative displacement");
        if (size > 1) {
            Refused<ArgumentException>(
                () => world.Allgatherv(one, recv, ones, new int[size]), "displs",
                "the blocks of ranks 0 ([0, 1)) and 1 ([0, 1)) of recvArray overlap",
                "Allgatherv overlapping blocks");
            int[] twos = Enumerable.Repeat(2, size).ToArray();
            int[] crossed = seq.Select(d => 2 * (size - 1 - d)).ToArray();
            // rank 0's block [1, 3) overlaps rank size-1's [0, 2), out of rank order
            crossed[0] = 1;
            Refused<ArgumentException>(
                () => world.Allgatherv(new int[2], new int[2 * size], twos, crossed), "displs",
                $"the blocks of ranks 0 ([1, 3)) and {size - 1} ([0, 2))",
                "Allgatherv overlapping blocks out of order");
        }
        Refused<ArgumentException>(
            () => world.Allgatherv(one, new long[size], ones, seq), "recvArray",
            "sendArray holds System.Int32 elements and recvArray System.Int64",
            "Allgatherv element types differ");
        Refused<ArgumentException>(() => world.Allgatherv(recv, recv, ones, seq), "recvArray",
                                   "the same array", "Allgatherv one array for both");
        Refused<ArgumentNullException>(
            () => world.Alltoallv(recv, null, seq, new int[size], ones, seq), "sendCounts",
            "sendCounts must not be null", "Alltoallv null sendCounts");
        int[] fewer = (int[])ones.Clone();
        fewer[rank] = 0;
        Refused<ArgumentException>(
            () => world.Alltoallv(recv, ones, seq, new int[size], fewer, seq), "recvCounts",
            $"sendCounts[{rank}] is 1 but recvCounts[{rank}] is 0", "Alltoallv own block differs");
        Refused<ArgumentOutOfRangeException>(
            () => world.Alltoallv(recv, ones.Select(c => -c).ToArray(), seq, new int[size], ones,
                                  seq),
            "sendCounts", "sendCounts[0] is -1: a count cannot be negative",
            "Alltoallv negative count");
        Refused<ArgumentException>(() => world.Alltoallv(new string[size], ones, seq,
                                                         new string[size], ones, seq),
                                   "sendArray", "System.String[]", "Alltoallv of strings");
        Refused<ArgumentException>(() => world.Exscan(recv, recv, Op.Sum), "recvArray",
                                   "the same array", "Exscan in place");
        Refused<ArgumentException>(() => world.Exscan(recv, new int[size + 1], Op.Sum), "recvArray",
                                   $"sendArray has {size} elements and recvArray {size + 1}",
                                   "Exscan lengths differ");
        Check.Throws<ArgumentNullException>(() => world.Exscan(recv, new int[size], null),
                                            "Exscan with a null op");
        Refused<ArgumentException>(() => world.Exscan(new double[1], new double[1], Op.BXor), "op",
                                   "MPI_BXOR is not defined for System.Double",
                                   "Exscan BXor on double");
        Refused<ArgumentException>(
            () => world.ReduceScatterBlock(new int[size + 1], new int[1], Op.Sum), "sendArray",
            $"sendArray has {size + 1} elements; Size ({size}) times recvArray's 1 = {size} were " +
                "expected",
            "ReduceScatterBlock lengths");
        Op dbl = Op.Create<double>((x, y) => x + y);
        Refused<ArgumentException>(() => world.ReduceScatterBlock(new int[size], new int[1], dbl),
                                   "op", "it was made for System.Double",
                                   "ReduceScatterBlock with another type's operator");
        dbl.Dispose();
        Check.Throws<ObjectDisposedException>(() => world.Exscan(new double[1], new double[1], dbl),
                                              "Exscan with a disposed operator");
        Check.Equal(ops, MP.Stats.Operations, "no collective started by refusals on every rank");
        GoodGatherv("refusals on every rank");
        ops = MP.Stats.Operations;

        // arguments only the root reads: only the root calls (the others would wait in MPI)
        if (rank == 0) {
            var mine = new int[1];
            var all = new int[size + 2];
            int[] counts = (int[])ones.Clone(), displs = seq;
            Refused<ArgumentNullException>(() => world.Gatherv(mine, null, counts, displs, 0),
                                           "recvArray", "recvArray must not be null",
                                           "Gatherv null recvArray at the root");
            Refused<ArgumentNullException>(() => world.Gatherv(mine, all, null, displs, 0),
                                           "counts", "counts must not be null",
                                           "Gatherv null counts at the root");
            Refused<ArgumentException>(() => world.Gatherv(mine, all, counts, new int[size + 1], 0),
                                       "displs", $"displs has {size + 1} elements",
                                       "Gatherv displs too long");
            int[] negative = (int[])counts.Clone();
            negative[size - 1] = -2;
            Refused<ArgumentOutOfRangeException>(
                () => world.Gatherv(mine, all, negative, displs, 0), "counts",
                $"counts[{size - 1}] is -2: a count cannot be negative", "Gatherv negative count");
            int[] longer = (int[])counts.Clone();
            longer[0] = 2;
            Refused<ArgumentException>(
                () => world.Gatherv(mine, new int[2 * size], longer,
                                    displs.Select(d => 2 * d).ToArray(), 0),
                "sendArray",
                "the root's sendArray has 1 elements but counts[0], the root's own block, is 2",
                "Gatherv root's own count");
            Refused<ArgumentOutOfRangeException>(
                () => world.Gatherv(mine, all, counts, displs.Select(d => d + 3).ToArray(), 0),
                "counts", "passes the end of recvArray", "Gatherv block past the end");
            if (size > 1)
                Refused<ArgumentException>(
                    () => world.Gatherv(mine, all, counts.Select(c => 2).ToArray(), displs, 0),
                    "displs", "overlap", "Gatherv overlapping receive blocks");
            Refused<ArgumentException>(
                () => world.Gatherv(mine, new short[size], counts, displs, 0), "recvArray",
                "System.Int16", "Gatherv element types differ at the root");
            Refused<ArgumentException>(
                () => world.Scatterv(all, counts, displs, new int[2], 0), "recvArray",
                "the root's recvArray has 2 elements but counts[0], the root's own block, is 1",
                "Scatterv root's own count");
            Refused<ArgumentNullException>(() => world.Scatterv(null, counts, displs, mine, 0),
                                           "sendArray", "sendArray must not be null",
                                           "Scatterv null sendArray at the root");
            Refused<ArgumentOutOfRangeException>(
                () => world.Scatterv(new int[size - 1], counts, displs, mine, 0), "counts",
                "passes the end of sendArray", "Scatterv block past the end");
        }
        Check.Equal(ops, MP.Stats.Operations, "no collective started by refusals at the root");
        GoodGatherv("refusals at the root");
        Check.Equal(size, world.Allreduce(1, Op.Sum), "usable after refused arguments");
    }

    /// <summary>Blocks the ranks disagree on: MPException where they arrive, then the
    /// communicator still works.</summary>
    static void Disagreements()
    {
        if (size == 1)
            return;
        int[] twos = Enumerable.Repeat(2, size).ToArray(),
              displs = Enumerable.Range(0, size).Select(r => 2 * r).ToArray();
        foreach (int delta in new[] { 1, -1 }) {
            // Gatherv: rank 1 sends 2 + delta elements, the root expects 2
            var all = rank == 0 ? Enumerable.Repeat(-1, 2 * size).ToArray() : null;
            MPException e = null;
            try {
                world.Gatherv(new int[rank == 1 ? 2 + delta : 2], all, twos, displs, 0);
            } catch (MPException x) {
                e = x;
            }
            if (rank == 0) {
                Check.True(
                    e != null && e.Message.Contains("rank 1 sent") &&
                        e.Message.Contains("counts[1] at the root"),
                    $"Gatherv: the root raises for rank 1's block of {2 + delta}: {e?.Message}");
            } else {
                Check.True(e == null, "Gatherv: a sender does not raise");
            }
            GoodGatherv($"a Gatherv disagreement ({delta:+0;-0})");

            // Scatterv: the root sends 2 to everyone, rank 1's recvArray holds 2 + delta
            e = null;
            var mine = new int[rank == 1 ? 2 + delta : 2];
            try {
                world.Scatterv(rank == 0 ? new int[2 * size] : null, twos, displs, mine, 0);
            } catch (MPException x) {
                e = x;
            }
            if (rank == 1)
                Check.True(
                    e != null && e.Message.Contains("rank 0 sent") &&
                        e.Message.Contains("recvArray.Length"),
                    $"Scatterv: rank 1 raises for a block of 2 into {2 + delta}: {e?.Message}");
            else
                Check.True(e == null, "Scatterv: the others do not raise");
            GoodGatherv("a Scatterv disagreement");

            // Alltoallv: rank 0 sends 2 + delta to rank 1, which expects 2
            e = null;
            int[] sc = (int[])twos.Clone();
            if (rank == 0)
                sc[1] = 2 + delta;
            var send = new int[2 * size + 1];
            var recv = new int[2 * size];
            try {
                world.Alltoallv(send, sc, displs, recv, twos, displs);
            } catch (MPException x) {
                e = x;
            }
            if (rank == 1)
                Check.True(e != null && e.Message.Contains("rank 0 sent") &&
                               e.Message.Contains("recvCounts[0] on this rank"),
                           $"Alltoallv: rank 1 raises: {e?.Message}");
            else
                Check.True(e == null, "Alltoallv: the others do not raise");
            GoodGatherv("an Alltoallv disagreement");

            // Allgatherv: rank 0's counts differ from everyone else's for rank 1's block
            e = null;
            int[] counts = (int[])twos.Clone();
            if (rank == 0)
                counts[1] = 2 - delta;
            int[] d = Enumerable.Range(0, size).Select(r => 3 * r).ToArray();
            try {
                world.Allgatherv(new int[2], new int[3 * size], counts, d);
            } catch (MPException x) {
                e = x;
            }
            if (rank == 0)
                Check.True(e != null && e.Message.Contains("rank 1 sent"),
                           $"Allgatherv: rank 0 raises: {e?.Message}");
            else
                Check.True(e == null, "Allgatherv: the others do not raise");
            GoodGatherv("an Allgatherv disagreement");
        }
        // element types that differ: 3 shorts where the root expects 3 ints
        {
            int[] three = Enumerable.Repeat(3, size).ToArray(),
                  d = Enumerable.Range(0, size).Select(r => 3 * r).ToArray();
            MPException e = null;
            try {
                if (rank == 1)
                    world.Gatherv(new short[3], null, null, null, 0);
                else
                    world.Gatherv(new int[3], rank == 0 ? new int[3 * size] : null, three, d, 0);
            } catch (MPException x) {
                e = x;
            }
            if (rank == 0)
                Check.True(e != null && e.Message.Contains("6 bytes"),
                           $"Gatherv: another element type is seen at the root: {e?.Message}");
            GoodGatherv("a Gatherv of another element type");
        }
        Check.Equal(size, world.Allreduce(1, Op.Sum), "usable after disagreements");
    }

    /// <summary>Communicators made and freed around the v-collectives (each has its
    /// own twin).</summary>
    static void Communicators()
    {
        for (int i = 0; i < 3; i++) {
            // clang-format off
            using (Intracomm dup = world.Dup())
            using (Intracomm half = world.Split(rank % 2, rank)) {
                // clang-format on
                var got = new int[dup.Size];
                dup.Allgatherv(new[] { rank }, got, Enumerable.Repeat(1, dup.Size).ToArray(),
                               Enumerable.Range(0, dup.Size).ToArray());
                Check.True(got.SequenceEqual(Enumerable.Range(0, size)), "Allgatherv on a Dup");
                var hs = new int[half.Size];
                half.Allgatherv(new[] { rank }, hs, Enumerable.Repeat(1, half.Size).ToArray(),
                                Enumerable.Range(0, half.Size).ToArray());
                Check.True(hs.All(r => r % 2 == rank % 2) && hs[half.Rank] == rank,
                           "Allgatherv on a Split");
                using (Intracomm again = dup.Dup())
                {
                    var g = new int[again.Size];
                    again.Allgatherv(new[] { -rank }, g, Enumerable.Repeat(1, again.Size).ToArray(),
                                     Enumerable.Range(0, again.Size).ToArray());
                    Check.True(g.SequenceEqual(Enumerable.Range(0, size).Select(r => -r)),
                               "Allgatherv on a Dup of a Dup");
                }
            }
        }
        var self = new int[1];
        MP.Self.Gatherv(new[] { 42 }, self, new[] { 1 }, new[] { 0 }, 0);
        Check.Equal(42, self[0], "Gatherv on Self");
    }

    static int Main()
    {
        GatherScatter();
        AllgathervAlltoallv();
        Reductions();
        BadArguments();
        Disagreements();
        Communicators();
        return Check.FinishWithNoPinLeft("VCollectivesTest");
    }
}

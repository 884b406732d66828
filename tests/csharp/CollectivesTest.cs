// CollectivesTest — every OPI collective of Intracomm (API.md) on several element types and
// sizes (arrays beyond 8000 bytes included), built-in operators on every type MPI defines
// them for, user operators (double, a MinLoc struct, a non-commutative one, one that allocates
// and collects, one that throws) and bad arguments. Run at 1, 2, 3 and 5 ranks.
using System;
using System.Linq;
using System.MP;

struct MinLoc
{
    public double Value;
    public int Index;
}
// 2x2 matrices: associative, not commutative
struct Mat2
{
    public long A, B, C, D;
}
class Params
{
    public double Dt;
    public int Steps;
    public long Seed;
}

static class CollectivesTest
{
    static Intracomm world = MP.World;
    static int rank = world.Rank, size = world.Size;

    static void Broadcasts()
    {
        for (int root = 0; root < size; root++) {
            var p = rank == root ? new Params { Dt = 0.25, Steps = 100 + root, Seed = -7 }
                                 : new Params();
            world.Bcast(p, root);
            Check.True(p.Dt == 0.25 && p.Steps == 100 + root && p.Seed == -7,
                       $"Bcast object from root {root}");
            foreach (int n in new[] { 1, 1000, 3000 }) {   // 8 B .. 24 KB
                var d = new double[n];
                if (rank == root)
                    for (int i = 0; i < n; i++)
                        d[i] = root * 1e6 + i;
                world.Bcast(d, root);
                Check.True(d[0] == root * 1e6 && d[n - 1] == root * 1e6 + n - 1,
                           $"Bcast double[{n}] from {root}");
            }
            var m = new int[7, 9];
            if (rank == root)
                m[6, 8] = 42 + root;
            world.Bcast(m, root);
            Check.Equal(42 + root, m[6, 8], "Bcast int[,]");
            var r = Enumerable.Repeat(-1, 20).ToArray();
            if (rank == root)
                for (int i = 5; i < 15; i++)
                    r[i] = i;
            world.Bcast(r, 5, 10, root);
            Check.True(r[5] == 5 && r[14] == 14 && r[4] == -1 && r[15] == -1,
                       "Bcast range only touches its range");
        }
    }

    static void ScatterGather()
    {
        foreach (int per in new[] { 1, 3, 1500 }) {   // per-rank elements; 1500 longs = 12 KB
            int root = per % size;
            long[] all = rank == root
                             ? Enumerable.Range(0, per * size).Select(i => (long)i * 3).ToArray()
                             : null;
            var part = new long[per];
            world.Scatter(all, part, root);
            Check.True(part[0] == (long)rank * per * 3 &&
                           part[per - 1] == ((long)rank * per + per - 1) * 3,
                       $"Scatter {per} per rank");

            var back = rank == root ? new long[per * size] : null;
            world.Gather(part, back, root);
            if (rank == root)
                Check.True(back.SequenceEqual(all), $"Gather {per} per rank restores the array");

            var everyone = new long[per * size];
            world.Allgather(part, everyone);
            Check.True(everyone[per * size - 1] == ((long)per * size - 1) * 3, $"Allgather {per}");

            var mine =
                Enumerable.Range(0, per * size).Select(i => (long)(rank * 1000000 + i)).ToArray();
            var got = new long[per * size];
            world.Alltoall(mine, got);
            bool ok = true;
            for (int src = 0; src < size; src++)
                for (int k = 0; k < per; k++)
                    ok &= got[src * per + k] == src * 1000000 + rank * per + k;
            Check.True(ok, $"Alltoall {per}");
        }
        var structs = Enumerable.Range(0, 2 * size)
                          .Select(i => new MinLoc { Value = i * 0.5, Index = i })
                          .ToArray();
        var two = new MinLoc[2];
        world.Scatter(rank == 0 ? structs : null, two, 0);
        Check.True(two[1].Index == 2 * rank + 1 && two[1].Value == (2 * rank + 1) * 0.5,
                   "Scatter struct array");
    }

    static void Reductions()
    {
        int n = 1200;   // 9.6 KB of longs: beyond the 8000-byte large-object threshold
        Func<int, int, long> v = (r, i) => (r + 1) * 10 + i % 7;
        var s = Enumerable.Range(0, n).Select(i => v(rank, i)).ToArray();
        var sum = new long[n];
        world.Allreduce(s, sum, Op.Sum);
        Check.True(Enumerable.Range(0, n).All(
                       i => sum[i] == Enumerable.Range(0, size).Sum(r => v(r, i))),
                   "Allreduce long Sum");
        var max = new long[n];
        world.Reduce(s, rank == size - 1 ? max : null, Op.Max, size - 1);
        if (rank == size - 1)
            Check.True(max[3] == v(size - 1, 3), "Reduce long Max at the last rank");
        var scan = new long[n];
        world.Scan(s, scan, Op.Sum);
        Check.Equal(Enumerable.Range(0, rank + 1).Sum(r => v(r, 5)), scan[5], "Scan long Sum");
        var inplace = (long[])s.Clone();
        world.Allreduce(inplace, inplace, Op.Sum);
        Check.True(inplace.SequenceEqual(sum), "Allreduce in place");

        // every primitive type with the operators MPI defines for it
        Check.Equal(size * (size + 1) / 2, world.Allreduce(rank + 1, Op.Sum), "int Sum");
        Check.Equal((uint)size, world.Allreduce(1u, Op.Sum), "uint Sum");
        Check.Equal((long)size - 1, world.Allreduce((long)rank, Op.Max), "long Max");
        Check.Equal(0UL, world.Allreduce((ulong)rank, Op.Min), "ulong Min");
        Check.Equal((short)size, world.Allreduce((short)1, Op.Sum), "short Sum");
        Check.Equal((ushort)1, world.Allreduce((ushort)1, Op.Prod), "ushort Prod");
        Check.Equal((sbyte)-size, world.Allreduce((sbyte)-1, Op.Sum), "sbyte Sum");
        Check.Equal((byte)(size == 1 ? 1 : 3), world.Allreduce((byte)(rank == 0 ? 1 : 2), Op.BOr),
                    "byte BOr");
        Check.Equal(size - 1.0, world.Allreduce((double)rank, Op.Max), "double Max");
        Check.Equal(0.5f * size, world.Allreduce(0.5f, Op.Sum), "float Sum");
        Check.Equal((char)('A' + size - 1), world.Allreduce((char)('A' + rank), Op.Max),
                    "char Max");
        Check.Equal(size == 1, world.Allreduce(rank == 0, Op.LAnd), "bool LAnd");
        Check.Equal(true, world.Allreduce(rank == 0, Op.LOr), "bool LOr");
        Check.Equal(size == 1 ? 0x0F : 0x0F & 0x3C,
                    world.Allreduce(rank == 0 ? 0x0F : 0x3C, Op.BAnd), "int BAnd");
        Check.Equal(size % 2 == 1 ? 6 : 0, world.Allreduce(6, Op.BXor), "int BXor");
        Check.Equal(size > 1 ? 1 : 1, world.Allreduce(rank == 0 ? 1 : 2, Op.LAnd), "int LAnd");
        var flags = new bool[10000];   // a large bool[]
        flags[rank] = true;
        var anyFlag = new bool[10000];
        world.Allreduce(flags, anyFlag, Op.LOr);
        Check.True(anyFlag.Take(size).All(x => x) && !anyFlag.Skip(size).Any(x => x),
                   "bool[10000] LOr");
    }

    static void UserOperators()
    {
        Op absMax = Op.Create<double>((a, b) => Math.Abs(a) > Math.Abs(b) ? a : b);
        Check.Equal(rank == 0 && size == 1 ? 0.0 : -(size - 1.0),
                    world.Allreduce(-(double)rank, absMax), "user op on double");
        var many = Enumerable.Range(0, 5000)
                       .Select(i => i % 2 == 0 ? (double)rank : -(double)rank)
                       .ToArray();
        var res = new double[5000];
        world.Allreduce(many, res, absMax);
        Check.True(res[0] == size - 1 && res[1] == -(size - 1), "user op on double[5000]");

        Op minLoc = Op.Create<MinLoc>(
            (a, b) => a.Value < b.Value || (a.Value == b.Value && a.Index < b.Index) ? a : b);
        var mine = new[] { new MinLoc { Value = Math.Abs(rank - size / 2.0), Index = rank } };
        var best = new MinLoc[1];
        world.Allreduce(mine, best, minLoc);
        var expect = Enumerable.Range(0, size)
                         .Select(r => new MinLoc { Value = Math.Abs(r - size / 2.0), Index = r })
                         .OrderBy(m => m.Value)
                         .ThenBy(m => m.Index)
                         .First();
        Check.True(best[0].Index == expect.Index && best[0].Value == expect.Value,
                   "MinLoc struct operator");
        Check.Equal(expect.Index, world.Allreduce(mine[0], minLoc).Index, "scalar MinLoc");

        // non-commutative: the product of every rank's matrix, in rank order
        Op mul =
            Op.Create<Mat2>((x, y) =>
                                new Mat2 { A = x.A * y.A + x.B * y.C, B = x.A * y.B + x.B * y.D,
                                           C = x.C * y.A + x.D * y.C, D = x.C * y.B + x.D * y.D },
                            false);
        Func<int, Mat2> matOf = r => new Mat2 { A = 1, B = r + 1, C = 0, D = 1 + r % 2 };
        Mat2 prod = world.Allreduce(matOf(rank), mul);
        Mat2 want = matOf(0);
        for (int r = 1; r < size; r++) {
            Mat2 m = matOf(r);
            want = new Mat2 { A = want.A * m.A + want.B * m.C, B = want.A * m.B + want.B * m.D,
                              C = want.C * m.A + want.D * m.C, D = want.C * m.B + want.D * m.D };
        }
        Check.True(prod.A == want.A && prod.B == want.B && prod.C == want.C && prod.D == want.D,
                   "non-commutative operator in rank order");
        var scanned = new Mat2[1];
        world.Scan(new[] { matOf(rank) }, scanned, mul);
        Mat2 wantScan = matOf(0);
        for (int r = 1; r <= rank; r++) {
            Mat2 m = matOf(r);
            wantScan = new Mat2 { A = wantScan.A * m.A + wantScan.B * m.C,
                                  B = wantScan.A * m.B + wantScan.B * m.D,
                                  C = wantScan.C * m.A + wantScan.D * m.C,
                                  D = wantScan.C * m.B + wantScan.D * m.D };
        }
        Check.True(scanned[0].B == wantScan.B && scanned[0].D == wantScan.D,
                   "non-commutative Scan");

        // an operator that allocates heavily and collects inside the reduction
        long collectionsBefore = MP.Stats.Collections;
        int calls = 0;
        Op churning = Op.Create<long>((a, b) =>
                                      {
                                          calls++;
                                          var junk = new byte[4096];
                                          junk[0] = (byte)a;
                                          if (calls % 200 == 0)
                                              GC.Collect();
                                          return a + b;
                                      });
        var big = Enumerable.Range(0, 20000).Select(i => (long)(i + rank)).ToArray();   // 160 KB
        // nursery-sized
        var small = Enumerable.Range(0, 100).Select(i => (long)(i * rank)).ToArray();
        var bigSum = new long[20000];
        var smallSum = new long[100];
        world.Allreduce(big, bigSum, churning);
        world.Allreduce(small, smallSum, churning);
        int tri = size * (size - 1) / 2;
        Check.True(bigSum[0] == tri && bigSum[19999] == 19999L * size + tri,
                   "allocating operator: large result correct");
        Check.True(smallSum[99] == 99L * tri, "allocating operator: small result correct");
        // MPI decides which ranks apply the operator (rank 0 of 3 may only send)
        Check.True(calls == 0 || MP.Stats.Collections > collectionsBefore,
                   "collections ran inside the operator where it ran");
        if (size > 1)
            Check.True(world.Allreduce(calls, Op.Sum) > 0, "the operator ran somewhere");
        Check.Equal(0L, MP.Stats.PinsLive, "no pins left after user-operator reductions");

        // an operator that throws: MPException with the exception inside, communicator usable
        Op thrower =
            Op.Create<int>((a, b) =>
                           { throw new InvalidOperationException("operator failure on purpose"); });
        if (size > 1) {
            // every rank raises it; where the operator ran, its exception is the inner one
            MPException e = null;
            try {
                world.Allreduce(new[] { 1, 2 }, new int[2], thrower);
            } catch (MPException x) {
                e = x;
            }
            Check.True(e != null, "every rank raises the operator's failure");
            Check.True(e?.InnerException == null || e.InnerException is InvalidOperationException,
                       "the operator's exception is the inner exception");
        } else {
            Check.Equal(5, world.Allreduce(5, thrower), "one rank applies no operator");
        }
        Check.Equal(size, world.Allreduce(1, Op.Sum), "usable after a throwing operator");
        foreach (Op op in new[] { absMax, minLoc, mul, churning, thrower })
            op.Dispose();
        Check.Throws<ObjectDisposedException>(() => world.Allreduce(1.0, absMax),
                                              "a disposed operator");
    }

    /// <summary>The refusal names the parameter and carries the values, as the core
    /// wrote them.</summary>
    static void Names(ArgumentException e, string param, string text, string what)
    {
        if (e == null)
            return;
        Check.Equal(param, e.ParamName, what + ": ParamName");
        Check.True(e.Message.Contains(text), $"{what}: the message says '{text}': {e.Message}");
    }

    static void BadArguments()
    {
        // every rank passes the same bad argument, so all throw and none waits in MPI
        long ops = MP.Stats.Operations;
        var a = new int[size];
        Names(Check.Throws<ArgumentOutOfRangeException>(() => world.Bcast(a, size),
                                                        "Bcast root = Size"),
              "root", $"root {size} is outside 0..{size - 1} of a communicator of size {size}",
              "Bcast root = Size");
        Names(Check.Throws<ArgumentOutOfRangeException>(
                  () => world.Reduce(a, new int[size], Op.Sum, -1), "Reduce root -1"),
              "root", $"root -1 is outside 0..{size - 1}", "Reduce root -1");
        Names(Check.Throws<ArgumentNullException>(() => world.Bcast(null, 0), "Bcast(null)"), "obj",
              "obj must not be null", "Bcast(null)");
        Names(Check.Throws<ArgumentNullException>(() => world.Allreduce(a, null, Op.Sum),
                                                  "Allreduce into null"),
              "recvArray", "recvArray must not be null", "Allreduce into null");
        Check.Throws<ArgumentNullException>(() => world.Allreduce(a, new int[size], null),
                                            "Allreduce with null op");
        Names(Check.Throws<ArgumentException>(() => world.Allreduce(a, new double[size], Op.Sum),
                                              "element types differ"),
              "recvArray", "sendArray holds System.Int32 elements and recvArray System.Double",
              "element types differ");
        Names(Check.Throws<ArgumentException>(() => world.Allreduce(a, new int[size + 1], Op.Sum),
                                              "lengths differ"),
              "recvArray", $"sendArray has {size} elements and recvArray {size + 1}",
              "lengths differ");
        Names(
            Check.Throws<ArgumentException>(() => world.Allgather(a, new int[size * size + 1]),
                                            "Allgather length"),
            "recvArray",
            $"recvArray has {size * size + 1} elements; Size ({size}) times sendArray's {size} = " +
                $"{size * size} were expected",
            "Allgather length");
        if (size > 1)
            Names(Check.Throws<ArgumentException>(() => world.Alltoall(new int[size + 1],
                                                                       new int[size + 1]),
                                                  "Alltoall not divisible"),
                  "sendArray",
                  $"sendArray's {size + 1} elements do not split into Size ({size}) equal blocks",
                  "Alltoall not divisible");
        Names(Check.Throws<ArgumentException>(() => world.Allgather(a, a),
                                              "Allgather with one array for both"),
              "recvArray", "sendArray and recvArray are the same array",
              "Allgather with one array for both");
        Names(
            Check.Throws<ArgumentException>(
                () => world.Allreduce(new double[2], new double[2], Op.BAnd), "BAnd on double"),
            "op",
            "MPI_BAND is not defined for System.Double elements: bitwise operators take integer " +
                "types",
            "BAnd on double");
        Names(
            Check.Throws<ArgumentException>(() => world.Allreduce(new bool[2], new bool[2], Op.Sum),
                                            "Sum on bool"),
            "op",
            "MPI_SUM is not defined for System.Boolean elements: arithmetic operators take numbers",
            "Sum on bool");
        Names(Check.Throws<ArgumentException>(() => world.Allreduce(new MinLoc[1], new MinLoc[1],
                                                                    Op.Min),
                                              "built-in Min on a struct"),
              "op", "MPI_MIN is not defined for MinLoc elements", "built-in Min on a struct");
        Op dbl = Op.Create<double>((x, y) => x + y);
        Names(Check.Throws<ArgumentException>(() => world.Allreduce(a, new int[size], dbl),
                                              "user op for double on int[]"),
              "op",
              "the user operator is not defined for System.Int32 elements: it was made for " +
                  "System.Double",
              "user op for double on int[]");
        Names(Check.Throws<ArgumentException>(
                  () => world.Allgather(new string[1], new string[size]), "Allgather of string[]"),
              "sendArray", "System.String[]", "Allgather of string[]");
        Names(Check.Throws<ArgumentException>(() => world.Bcast(new int[3], 2, 5, 0),
                                              "Bcast range past the end"),
              "count", "count 5 from offset 2 passes the end of array (length 3: 1 fit)",
              "Bcast range past the end");
        ArgumentException refused =
            Check.Throws<ArgumentException>(() => Op.Create<KeyValuePair>((x, y) => x),
                                            "user op on a struct with references");
        Check.True(refused != null && refused.Message.Contains("Value"),
                   "the refusal names the reference field: " + refused?.Message);
        Check.Equal(ops, MP.Stats.Operations, "no collective started by bad arguments");
        Check.Equal(size, world.Allreduce(1, Op.Sum), "usable after bad arguments");

        // a mismatch only MPI sees: the root broadcasts more than the others receive. Both sizes
        // stay below 12 KiB, so root and receivers pick the same algorithm at every rank count
        // (with 4000 ints the root switched algorithms at >= 8 ranks and the job hung)
        if (size > 1) {
            var buf = new int[rank == 0 ? 20 : 10];
            MPException e = null;
            try {
                world.Bcast(buf, 0);
            } catch (MPException x) {
                e = x;
            }
            Check.True(rank == 0 || e != null,
                       "a receiving rank reports the truncated broadcast: " + e?.Message);
            // (a rank below another in MPI's tree may learn only that the collective failed there)
            Check.True(
                e == null || e.ErrorClass != 14 /* MPI_ERR_TRUNCATE */ ||
                    e.Message.Contains(
                        "longer than the 40 bytes (10 elements of 4 bytes) this rank's buffer " +
                        "holds"),
                "a truncated broadcast says what this rank had room for: " + e?.Message);
            world.Barrier();
            Check.Equal(size, world.Allreduce(1, Op.Sum), "usable after a truncated broadcast");
        }
    }

    struct KeyValuePair
    {
        public int Key;
        public string Value;
    }

    static int Main()
    {
        Broadcasts();
        ScatterGather();
        Reductions();
        UserOperators();
        BadArguments();
        return Check.FinishWithNoPinLeft("CollectivesTest");
    }
}

// NonBlockingCollectivesStressTest — young (nursery) arrays in flight in non-blocking
// collectives while a churn thread (and this one) force minor and major collections: an array
// the GC moved while MPI wrote into it would show as a wrong element. Every element of every
// result is verified; requests complete in every way (WaitAll, TestAll polling, WaitSome,
// await through the progress engine, and a late Wait after a collection, when the GC hook
// releases the pins); at the end no pin is live and no request pending. The version 3 forms
// (Igather, Iscatter, the v-forms, Iscan, Iexscan, IreduceScatterBlock) run beside the others,
// their young counts and displacements overwritten as soon as they started.
// Arguments: rounds (default 300).
using System;
using System.Linq;
using System.MP;
using System.Threading.Tasks;

static class NonBlockingCollectivesStressTest
{
    static readonly Intracomm world = MP.World;
    static readonly int rank = world.Rank, size = world.Size;

    static double V(int r, int round, int i) => r * 1e6 + round * 1e3 % 1e6 + i;

    sealed class Round
    {
        public double[] sumSend, sumRecv, bc, redRecv;
        public long[] mine, all;
        public int[] a2aSend, a2aRecv;
        // version 3
        public long[] gatherRecv, scatterSend, scatterRecv, scanRecv, exscanRecv, rsbSend, rsbRecv;
        public double[] gvRecv, svSend, svRecv, agvRecv, a2avSend, a2avRecv;
        public int[] counts, displs, length;
        public Request[] Requests;
    }

    // Block sizes of the v-forms: rank r's is (round + r) % 5 + n / 2 elements, laid out in
    // reverse rank order with a gap of one before each.
    static int[] VCounts(int round, int n) =>
        Enumerable.Range(0, size).Select(r => (round + r) % 5 + n / 2).ToArray();

    static int[] VDispls(int[] counts, out int length)
    {
        var d = new int[size];
        int at = 0;
        for (int r = size - 1; r >= 0; r--) {
            d[r] = ++at;
            at += counts[r];
        }
        length = at;
        return d;
    }

    static double W(int r, int round, int k) => r * 1e5 + round % 1000 + k * 0.5;

    [System.Runtime.CompilerServices.MethodImpl(
        System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static Round Start(Intracomm comm, int round, int n, int root)
    {
        var d = new Round();
        d.sumSend = new double[n];
        d.sumRecv = new double[n];
        for (int i = 0; i < n; i++)
            d.sumSend[i] = V(rank, round, i);
        d.bc = new double[n];
        if (rank == root)
            for (int i = 0; i < n; i++)
                d.bc[i] = V(root, round, i) + 0.5;
        d.mine = new long[n];
        for (int i = 0; i < n; i++)
            d.mine[i] = rank * 100000000L + round * 10000L + i;
        d.all = new long[n * size];
        d.a2aSend = new int[n * size];
        for (int j = 0; j < size; j++)
            for (int i = 0; i < n; i++)
                d.a2aSend[j * n + i] = rank * 1000000 + j * 10000 + i % 10000;
        d.a2aRecv = new int[n * size];
        d.redRecv = rank == root ? new double[n] : null;
        // version 3: young arrays everywhere, counts and displacements too
        d.gatherRecv = rank == root ? new long[n * size] : null;
        d.scatterSend = rank == root ? new long[n * size] : null;
        for (int i = 0; rank == root && i < n * size; i++)
            d.scatterSend[i] = round * 7L + i;
        d.scatterRecv = new long[n];
        d.scanRecv = new long[n];
        d.exscanRecv = new long[n];
        d.rsbSend = new long[n * size];
        for (int i = 0; i < n * size; i++)
            d.rsbSend[i] = rank + i;
        d.rsbRecv = new long[n];
        d.counts = VCounts(round, n);
        int length;
        d.displs = VDispls(d.counts, out length);
        d.length = new[] { length };
        int mineV = d.counts[rank];
        var vSend = new double[mineV];
        for (int k = 0; k < mineV; k++)
            vSend[k] = W(rank, round, k);
        d.gvRecv = rank == root ? new double[length] : null;
        d.svSend = rank == root ? new double[length] : null;
        for (int r = 0; rank == root && r < size; r++)
            for (int k = 0; k < d.counts[r]; k++)
                d.svSend[d.displs[r] + k] = W(r, round, k);
        d.svRecv = new double[mineV];
        d.agvRecv = new double[length];
        // Ialltoallv: to rank j its block of the v-forms' size, from every rank this rank's
        d.a2avSend = new double[d.counts.Sum()];
        int[] sd = new int[size], rc = new int[size], rd = new int[size];
        for (int j = 0, at = 0; j < size; j++) {
            sd[j] = at;
            for (int k = 0; k < d.counts[j]; k++)
                d.a2avSend[at + k] = W(rank, round, k) + j;
            at += d.counts[j];
            rc[j] = mineV;
            rd[j] = j * mineV;
        }
        d.a2avRecv = new double[size * mineV];
        int[] sc = (int[])d.counts.Clone();
        int[] c1 = (int[])d.counts.Clone(), d1 = (int[])d.displs.Clone();
        int[] c2 = (int[])d.counts.Clone(), d2 = (int[])d.displs.Clone();
        int[] c3 = (int[])d.counts.Clone(), d3 = (int[])d.displs.Clone();
        d.Requests = new[] {
            comm.Iallreduce(d.sumSend, d.sumRecv, Op.Sum),
            comm.Ibcast(d.bc, root),
            comm.Iallgather(d.mine, d.all),
            comm.Ialltoall(d.a2aSend, d.a2aRecv),
            comm.Ireduce(d.sumSend, d.redRecv, Op.Max, root),
            comm.Igather(d.mine, d.gatherRecv, root),
            comm.Iscatter(d.scatterSend, d.scatterRecv, root),
            comm.Iscan(d.mine, d.scanRecv, Op.Sum),
            comm.Iexscan(d.mine, d.exscanRecv, Op.Max),
            comm.IreduceScatterBlock(d.rsbSend, d.rsbRecv, Op.Sum),
            comm.Igatherv(vSend, d.gvRecv, c1, d1, root),
            comm.Iscatterv(d.svSend, c2, d2, d.svRecv, root),
            comm.Iallgatherv(vSend, d.agvRecv, c3, d3),
            comm.Ialltoallv(d.a2avSend, sc, sd, d.a2avRecv, rc, rd),
        };
        // the core copied them: overwritten at once
        foreach (int[] a in new[] { c1, d1, c2, d2, c3, d3, sc, sd, rc, rd })
            for (int i = 0; i < a.Length; i++)
                a[i] = -1;
        return d;
    }

    static long VerifyVersion3(Round d, int round, int n, int root, ref long elements)
    {
        long bad = 0;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                if (rank == root && d.gatherRecv[r * n + i] != r * 100000000L + round * 10000L + i)
                    bad++;
        for (int i = 0; i < n; i++) {
            if (d.scatterRecv[i] != round * 7L + rank * n + i)
                bad++;
            long scan = 0, exscan = long.MinValue;
            for (int r = 0; r <= rank; r++) {
                long v = r * 100000000L + round * 10000L + i;
                scan += v;
                if (r < rank)
                    exscan = Math.Max(exscan, v);
            }
            if (d.scanRecv[i] != scan || (rank > 0 && d.exscanRecv[i] != exscan) ||
                (rank == 0 && d.exscanRecv[i] != 0))
                bad++;
            long rsb = 0;
            for (int r = 0; r < size; r++)
                rsb += r + rank * n + i;
            if (d.rsbRecv[i] != rsb)
                bad++;
        }
        elements += n * (rank == root ? size + 4L : 4L);
        int[] counts = d.counts, displs = d.displs;
        for (int r = 0; r < size; r++)
            for (int k = 0; k < counts[r]; k++) {
                if (rank == root && d.gvRecv[displs[r] + k] != W(r, round, k))
                    bad++;
                if (d.agvRecv[displs[r] + k] != W(r, round, k))
                    bad++;
            }
        for (int k = 0; k < counts[rank]; k++) {
            if (d.svRecv[k] != W(rank, round, k))
                bad++;
            for (int j = 0; j < size; j++)
                if (d.a2avRecv[j * counts[rank] + k] != W(j, round, k) + rank)
                    bad++;
        }
        // the gaps before each block stay as they were
        for (int r = 0; r < size; r++)
            if (d.agvRecv[displs[r] - 1] != 0 || (rank == root && d.gvRecv[displs[r] - 1] != 0))
                bad++;
        elements += counts.Sum() * (rank == root ? 2L : 1L) + counts[rank] * (1L + size);
        return bad;
    }

    static int Main(string[] args)
    {
        int rounds = args.Length > 0 ? int.Parse(args[0]) : 300;
        Check.Equal(3, MP.ThreadLevel, "MPI_THREAD_MULTIPLE granted");
        var comm = world.Dup();
        var churn = new HeapChurn(rank + 23, 300, 16, 700, 3, 20000, 6, 2).Start();
        MPStats before = MP.Stats;
        long elements = 0, corrupted = 0;
        // 1500 doubles: the large-object space
        var sizes = new[] { 1, 3, 40, 200, 700, 900, 1500 };
        for (int round = 0; round < rounds; round++) {
            int n = sizes[round % sizes.Length], root = round % size;
            // the arrays are reachable from a heap object only: no stack slot of this thread
            // refers to them (a conservatively scanned stack would pin them by itself)
            Round d = Start(comm, round, n, root);
            Request[] rs = d.Requests;
            // collections while they run: garbage that fills the nursery, and explicit minors
            for (int g = 0; g < 20; g++) {
                var junk = new byte[1000];
                junk[0] = (byte)g;
            }
            if (round % 3 == 0)
                GC.Collect(0);
            switch (round % 5) {
            case 0: Request.WaitAll(rs); break;
            case 1: {
                int p = 0;
                while (!Request.TestAll(rs)) {
                    if (++p % 64 == 0)
                        GC.Collect(0);
                }
                break;
            }
            case 2:
                while (Request.WaitSome(rs).Length > 0) {
                    GC.Collect(0);
                }
                break;
            case 3: Task.WhenAll(rs.Select(r => r.AsTask())).GetAwaiter().GetResult(); break;
            default:
                GC.Collect(0);
                GC.Collect();
                Request.WaitAll(rs);
                break;
            }
            // verify every element
            for (int i = 0; i < n; i++) {
                double expect = 0;
                for (int r = 0; r < size; r++)
                    expect += V(r, round, i);
                if (d.sumRecv[i] != expect)
                    corrupted++;
                if (d.bc[i] != V(root, round, i) + 0.5)
                    corrupted++;
                if (rank == root && d.redRecv[i] != V(size - 1, round, i))
                    corrupted++;
            }
            for (int r = 0; r < size; r++)
                for (int i = 0; i < n; i++) {
                    if (d.all[r * n + i] != r * 100000000L + round * 10000L + i)
                        corrupted++;
                    if (d.a2aRecv[r * n + i] != r * 1000000 + rank * 10000 + i % 10000)
                        corrupted++;
                }
            elements += n * (rank == root ? 3L : 2L) + 2L * n * size;
            corrupted += VerifyVersion3(d, round, n, root, ref elements);
        }
        churn.Stop();
        comm.Dispose();
        for (int k = 0; k < 3 && MP.Stats.PendingRequests + MP.Stats.PinsLive > 0; k++)
            GC.Collect();
        MPStats after = MP.Stats;
        Check.Equal(0L, corrupted, $"0 corrupted elements of {elements} verified");
        Check.True(after.Collections - before.Collections > 0,
                   "collections happened while collectives ran");
        Check.True(size == 1 || after.PinsTaken > before.PinsTaken,
                   "nursery arrays in flight were pinned");
        Check.Equal(0L, after.PendingRequests, "no pending requests");
        Console.WriteLine(
            $"rank {rank}: {rounds} rounds x 14 collectives, {elements} elements verified, " +
            $"{after.Collections - before.Collections} collections (churn rounds " +
            $"{churn.Rounds}), pins taken {after.PinsTaken - before.PinsTaken}, avoided " +
            $"{after.PinsAvoided - before.PinsAvoided}, released by GC " +
            $"{after.PinsReleasedByGC - before.PinsReleasedByGC}");
        return Check.FinishWithNoPinLeft("NonBlockingCollectivesStressTest");
    }
}

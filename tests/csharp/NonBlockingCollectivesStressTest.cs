// NonBlockingCollectivesStressTest — young (nursery) arrays in flight in non-blocking
// collectives while a churn thread (and this one) force minor and major collections: an array
// the GC moved while MPI wrote into it would show as a wrong element. Every element of every
// result is verified; requests complete in every way (WaitAll, TestAll polling, WaitSome,
// await through the progress engine, and a late Wait after a collection, when the GC hook
// releases the pins); at the end no pin is live and no request pending.
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
        public Request[] Requests;
    }

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
        d.Requests = new[] {
            comm.Iallreduce(d.sumSend, d.sumRecv, Op.Sum),
            comm.Ibcast(d.bc, root),
            comm.Iallgather(d.mine, d.all),
            comm.Ialltoall(d.a2aSend, d.a2aRecv),
            comm.Ireduce(d.sumSend, d.redRecv, Op.Max, root),
        };
        return d;
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
            $"rank {rank}: {rounds} rounds x 5 collectives, {elements} elements verified, " +
            $"{after.Collections - before.Collections} collections (churn rounds " +
            $"{churn.Rounds}), pins taken {after.PinsTaken - before.PinsTaken}, avoided " +
            $"{after.PinsAvoided - before.PinsAvoided}, released by GC " +
            $"{after.PinsReleasedByGC - before.PinsReleasedByGC}");
        return Check.FinishWithNoPinLeft("NonBlockingCollectivesStressTest");
    }
}

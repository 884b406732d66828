// GcStressTest — blocking transfers while the heap churns: every rank exchanges arrays of
// varying size and age around a ring while a second thread allocates, keeps survivors,
// fragments the old generation and forces minor and major collections. Every message is
// checked element by element; at the end no pin is live. Run with a tiny nursery for stress.
using System;
using System.Collections.Generic;
using System.MP;
using System.Threading;

static class GcStressTest
{
    static Intracomm world = Ring.World;

    static double Value(int rank, int iteration, int i) => rank * 1e9 + iteration * 1e4 + i;

    static int Main(string[] args)
    {
        // the same total work beyond 3 ranks: oversubscribed ranks share the cores
        int iterations =
            args.Length > 0 ? int.Parse(args[0]) : 1500 * 3 / Math.Max(3, Ring.World.Size);
        var churn = new HeapChurn(Ring.Rank, 500, 16, 400, 4, 20000, 7, 3, doublesOneIn: 10,
                                  maxDoubles: 3000)
                        .Start();
        MPStats before = MP.Stats;
        var sizes = new[] { 1, 10, 100, 900, 1001, 5000, 40000 };   // nursery, old and large (LOS)
        var oldBuffers = new Dictionary<int, double[]>();
        long verified = 0;
        int bad = 0;
        for (int it = 0; it < iterations; it++) {
            int n = sizes[it % sizes.Length];
            double[] send = new double[n];
            for (int i = 0; i < n; i++)
                send[i] = Value(Ring.Rank, it, i);
            // alternate fresh receive buffers with long-lived (promoted) ones
            double[] recv;
            if (it % 2 == 0)
                recv = new double[n];
            else if (!oldBuffers.TryGetValue(n, out recv))
                oldBuffers[n] = recv = new double[n];
            Status st = it % 3 == 0
                            ? world.Sendrecv(send, Ring.Next, it % 1000, recv, Ring.Prev, it % 1000)
                            : Ring.Exchange(() => world.Send(send, Ring.Next, it % 1000),
                                            () => world.Recv(recv, Ring.Prev, it % 1000));
            if (st.Count != n)
                bad++;
            for (int i = 0; i < n; i++)
                if (recv[i] != Value(Ring.Prev, it, i)) {
                    bad++;
                    break;
                }
            verified += 8L * n;
        }
        churn.Stop();
        GC.Collect();
        world.Barrier();
        MPStats after = MP.Stats;
        Check.Equal(0, bad, "every message intact");
        Check.True(after.Collections - before.Collections > 0,
                   "collections happened during the transfers");
        Check.Equal(0L, after.PinsLive, "no live pins");
        Check.Equal(after.PinsTaken, after.PinsReleasedByWait + after.PinsReleasedByGC,
                    "every pin released");
        Console.WriteLine($"rank {Ring.Rank}: {iterations} exchanges, {verified} bytes verified, " +
                          $"{after.Collections - before.Collections} collections, pins taken " +
                          $"{after.PinsTaken - before.PinsTaken}, avoided " +
                          $"{after.PinsAvoided - before.PinsAvoided}");
        return Check.Finish("GcStressTest");
    }
}

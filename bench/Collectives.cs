// Collectives — Bcast / Allreduce latency over a C# transport (see collectives_native.c):
//   mpiexec.mpich -n N motor Collectives.exe TRANSPORT bcast|allreduce|gatherv|alltoallv|iallreduce
//   MIN_BYTES MAX_BYTES REPS
// TRANSPORT: system-mp (Intracomm.Bcast / Allreduce with Op.Sum on managed arrays) or pinvoke
// (baseline: MPI_Bcast / MPI_Allreduce through DllImport, arrays pinned per call).
// iallreduce: Intracomm.Iallreduce(a, b, Op.Sum).Wait(), system-mp only.
using System;
using System.Diagnostics;
using System.Globalization;
using System.MP;
using System.Threading;

static class Collectives
{
    static int Main(string[] args)
    {
        Thread.CurrentThread.CurrentCulture = CultureInfo.InvariantCulture;
        string name = args[0];
        bool allreduce = args[1] == "allreduce";
        bool iallreduce = args[1] == "iallreduce";
        if (iallreduce && name != "system-mp")
            throw new ArgumentException("iallreduce: system-mp only");
        long min = long.Parse(args[2]), max = long.Parse(args[3]);
        int reps = int.Parse(args[4]);
        bool pinvoke = name == "pinvoke";
        if (!pinvoke && name != "system-mp")
            throw new ArgumentException("unknown transport " + name);
        Intracomm world = MP.World;
        // gatherv, alltoallv
        if (VCollectives.Run(args[1], name, pinvoke, min, max, reps))
            return 0;
        for (long size = min; size <= max; size *= 4) {
            var a = new double[size / 8];
            var b = new double[size / 8];
            var bytes = new byte[size];
            GC.Collect();   // buffers of a real code live long: promote them, as the warm-up would
            int iters = BenchCommon.Iterations(size);
            for (int rep = -1; rep < reps; rep++) {
                world.Barrier();
                long t0 = Stopwatch.GetTimestamp();
                for (int i = 0; i < iters; i++) {
                    if (iallreduce) {   // start, then Wait
                        world.Iallreduce(a, b, Op.Sum).Wait();
                        continue;
                    }
                    if (allreduce) {
                        if (pinvoke)
                            PInvokeMpi.AllreduceSum(a, b);
                        else
                            world.Allreduce(a, b, Op.Sum);
                    } else {
                        if (pinvoke)
                            PInvokeMpi.Bcast(bytes, 0);
                        else
                            world.Bcast(bytes, 0);
                    }
                }
                double us = (Stopwatch.GetTimestamp() - t0) * 1e6 / Stopwatch.Frequency;
                if (world.Rank == 0 && rep >= 0)
                    Console.WriteLine($"{name},{size},{rep},{iters},{us / iters:F6}");
            }
        }
        Console.WriteLine($"peak,{name},{world.Rank},{BenchCommon.PeakRssKib()}");
        return 0;
    }
}

// ---- Gatherv and Alltoallv (issue 13). SIZE is the bytes of one block: every rank sends
// SIZE bytes of doubles to the root (Gatherv, root 0) or to every rank (Alltoallv); counts and
// displacements are made once, outside the timed loop, as collectives_native.c does. ----
static class VCollectives
{
    public static bool Run(string op, string name, bool pinvoke, long min, long max, int reps)
    {
        bool gatherv = op == "gatherv";
        if (!gatherv && op != "alltoallv")
            return false;
        Intracomm world = MP.World;
        int p = world.Size;
        for (long size = min; size <= max; size *= 4) {
            int n = (int)(size / 8);
            int[] counts = new int[p], displs = new int[p];
            for (int r = 0; r < p; r++) {
                counts[r] = n;
                displs[r] = r * n;
            }
            var send = new double[gatherv ? n : n * p];
            var recv = new double[gatherv ? (world.Rank == 0 ? n * p : 0) : n * p];
            GC.Collect();   // long-lived buffers, as in Collectives
            int iters = BenchCommon.Iterations(size);
            for (int rep = -1; rep < reps; rep++) {
                world.Barrier();
                long t0 = Stopwatch.GetTimestamp();
                for (int i = 0; i < iters; i++) {
                    if (gatherv) {
                        if (pinvoke)
                            PInvokeMpi.Gatherv(send, recv, counts, displs, 0);
                        else
                            world.Gatherv(send, recv, counts, displs, 0);
                    } else {
                        if (pinvoke)
                            PInvokeMpi.Alltoallv(send, counts, displs, recv, counts, displs);
                        else
                            world.Alltoallv(send, counts, displs, recv, counts, displs);
                    }
                }
                double us = (Stopwatch.GetTimestamp() - t0) * 1e6 / Stopwatch.Frequency;
                if (world.Rank == 0 && rep >= 0)
                    Console.WriteLine($"{name},{size},{rep},{iters},{us / iters:F6}");
            }
        }
        Console.WriteLine($"peak,{name},{world.Rank},{BenchCommon.PeakRssKib()}");
        return true;
    }
}
// ---- end of the v-collectives ----

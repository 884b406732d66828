// Collectives — Bcast / Allreduce latency over a C# transport (see collectives_native.c):
//   mpiexec.mpich -n N motor Collectives.exe TRANSPORT bcast|allreduce|iallreduce MIN_BYTES MAX_BYTES REPS
// TRANSPORT: system-mp (Intracomm.Bcast / Allreduce with Op.Sum on managed arrays) or pinvoke
// (baseline: MPI_Bcast / MPI_Allreduce through DllImport, arrays pinned per call).
// iallreduce (nbc): Intracomm.Iallreduce(a, b, Op.Sum).Wait(), system-mp only.
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
        bool iallreduce = args[1] == "iallreduce";   // nbc
        if (iallreduce && name != "system-mp") throw new ArgumentException("iallreduce: system-mp only");
        long min = long.Parse(args[2]), max = long.Parse(args[3]);
        int reps = int.Parse(args[4]);
        bool pinvoke = name == "pinvoke";
        if (!pinvoke && name != "system-mp") throw new ArgumentException("unknown transport " + name);
        Intracomm world = MP.World;
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
                    if (iallreduce) {   // nbc: start, then Wait
                        world.Iallreduce(a, b, Op.Sum).Wait();
                        continue;
                    }
                    if (allreduce) {
                        if (pinvoke) PInvokeMpi.AllreduceSum(a, b);
                        else world.Allreduce(a, b, Op.Sum);
                    } else {
                        if (pinvoke) PInvokeMpi.Bcast(bytes, 0);
                        else world.Bcast(bytes, 0);
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

// HangCost — what the hang report's records cost a blocking call that does not wait, in one
// process (no second rank: no network, little noise):
//   mpiexec.mpich -n 1 [-genv MOTOR_HANG_REPORT SECONDS] motor HangCost.exe [CALLS]
// Times CALLS Barrier, Allreduce of one int and Sendrecv of one int to itself, 7 times each, and
// prints the median nanoseconds per call. Run it with the report off and on, interleaved
// (bench/README.md, "The hang report").
using System;
using System.Diagnostics;
using System.Globalization;
using System.MP;
using System.Threading;

static class HangCost
{
    static double Median(double[] xs)
    {
        Array.Sort(xs);
        return xs[xs.Length / 2];
    }

    static double Time(int calls, Action call)
    {
        var times = new double[7];
        for (int rep = 0; rep < times.Length; rep++) {
            long t0 = Stopwatch.GetTimestamp();
            for (int i = 0; i < calls; i++)
                call();
            times[rep] = (Stopwatch.GetTimestamp() - t0) * 1e9 / Stopwatch.Frequency / calls;
        }
        return Median(times);
    }

    static int Main(string[] args)
    {
        Thread.CurrentThread.CurrentCulture = CultureInfo.InvariantCulture;
        int calls = args.Length > 0 ? int.Parse(args[0]) : 200000;
        Intracomm world = MP.World;
        var one = new[] { 1 };
        var sum = new int[1];
        var got = new int[1];
        int me = world.Rank;
        double barrier = Time(calls, () => world.Barrier());
        double allreduce = Time(calls, () => world.Allreduce(one, sum, Op.Sum));
        double sendrecv = Time(calls, () => world.Sendrecv(one, me, 1, got, me, 1));
        Console.WriteLine(
            $"hang report {Environment.GetEnvironmentVariable("MOTOR_HANG_REPORT") ?? "unset"}: " +
            $"Barrier {barrier:F1} ns, Allreduce {allreduce:F1} ns, " +
            $"Sendrecv {sendrecv:F1} ns");
        return 0;
    }
}

// Bench — the C# side of the benchmark framework: runs one pattern (bench/patterns/) over one
// C# transport (bench/transports/), sizes MIN..MAX doubling:
//   mpiexec.mpich -n N motor Bench.exe PATTERN TRANSPORT MIN_BYTES MAX_BYTES REPS WARMUP
//   MAX_ITERATIONS [check] motor Bench.exe --list   one "transport,NAME,CAPS,DEFAULT,LABEL" line
//   per C# transport
// MAX_ITERATIONS caps the iterations per repetition (0: none; oversubscribed runs need it).
// Rank 0 prints "TRANSPORT,bytes,rep,iterations,value,METRIC" per timed repetition; every rank
// prints "peak,TRANSPORT,rank,kib", System.MP transports "pins,TRANSPORT,taken,avoided,ops", and
// with "check" (the tests) "checked,TRANSPORT,PATTERN,rank,messages" — then every payload byte
// is stamped and verified on receipt, and the timings mean nothing. Same output as bench_native.
using System;
using System.Globalization;
using System.MP;
using System.Threading;

static class Bench
{
    static int Main(string[] args)
    {
        Thread.CurrentThread.CurrentCulture = CultureInfo.InvariantCulture;
        if (args.Length == 1 && args[0] == "--list") {
            foreach (Transport each in Transport.All())
                Console.WriteLine(each.Describe());
            return 0;
        }
        if (args.Length < 7) {
            Console.Error.WriteLine(
                "usage: Bench.exe PATTERN TRANSPORT MIN_BYTES MAX_BYTES REPS WARMUP " +
                "MAX_ITERATIONS [check]");
            return 2;
        }
        Pattern pattern = Pattern.Create(args[0]);
        Transport t = Transport.Create(args[1]);
        long min = long.Parse(args[2]), max = long.Parse(args[3]);
        int reps = int.Parse(args[4]), warmup = int.Parse(args[5]);
        int maxIterations = int.Parse(args[6]);   // 0: no cap
        bool check = args.Length > 7 && args[7] == "check";
        if (check && (maxIterations == 0 || maxIterations > 20))
            maxIterations = 20;
        Intracomm world = MP.World;
        if (world.Size < pattern.MinRanks)
            throw new ArgumentException($"{pattern.Name} needs at least {pattern.MinRanks} ranks");
        if ((t.Caps & pattern.Requires) != pattern.Requires)
            throw new NotSupportedException(
                $"{pattern.Name} needs {pattern.Requires}; {t.Name} has {t.Caps}");
        var c = new Context(t, world.Rank, world.Size, check);
        MPStats before = MP.Stats;
        for (long size = min; size <= max; size = size == 0 ? 1 : size * 2) {
            pattern.Prepare(c, size);
            int iterations = pattern.Iterations(size);
            if (maxIterations > 0)
                iterations = Math.Min(iterations, maxIterations);
            for (int rep = -warmup; rep < reps; rep++) {
                world.Barrier();
                c.Metrics.Clear();
                pattern.Repetition(c, size, iterations);
                if (c.Rank == 0 && rep >= 0)
                    foreach (var m in c.Metrics)
                        Console.WriteLine(
                            $"{t.Name},{size},{rep},{iterations},{m.Value:F6},{m.Key}");
            }
        }
        MPStats after = MP.Stats;
        if (!t.Name.StartsWith("pinvoke"))
            Console.WriteLine(
                $"pins,{t.Name},{after.PinsTaken - before.PinsTaken}," +
                $"{after.PinsAvoided - before.PinsAvoided},{after.Operations - before.Operations}");
        if (check)
            Console.WriteLine($"checked,{t.Name},{pattern.Name},{c.Rank},{c.Verified}");
        Console.WriteLine($"peak,{t.Name},{c.Rank},{BenchCommon.PeakRssKib()}");
        return 0;
    }
}

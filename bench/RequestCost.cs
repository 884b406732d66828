// RequestCost — what one non-blocking request that goes through the pin registry costs, in one
// process (no second rank, so no network and little noise):
//   mpiexec.mpich -n 1 motor RequestCost.exe [WINDOWS [BYTES]]
// Each window posts 64 Irecv from this rank to itself (none can match yet, so each is registered
// with its buffer), sends the 64 messages, then WaitAll. Prints the nanoseconds per request of 7
// repetitions and their median; compare two builds of the library by running each one's motor
// on this program (bench/README.md, "The pin registry's slots").
using System;
using System.Diagnostics;
using System.Globalization;
using System.MP;
using System.Threading;

static class RequestCost
{
    const int Window = 64;

    static int Main(string[] args)
    {
        Thread.CurrentThread.CurrentCulture = CultureInfo.InvariantCulture;
        Intracomm self = MP.World.Split(MP.World.Rank, 0);
        int windows = args.Length > 0 ? int.Parse(args[0]) : 5000;
        int bytes = args.Length > 1 ? int.Parse(args[1]) : 256;
        var buffers = new byte[Window][];
        for (int k = 0; k < Window; k++)
            buffers[k] = new byte[bytes];
        var payload = new byte[bytes];
        var requests = new Request[Window];
        GC.Collect();   // long-lived buffers, as a real code's
        var times = new double[7];
        long registered = 0;
        for (int rep = 0; rep < times.Length; rep++) {
            long t0 = Stopwatch.GetTimestamp();
            for (int i = 0; i < windows; i++) {
                for (int k = 0; k < Window; k++)
                    requests[k] = self.Irecv(buffers[k], 0, k);
                if (i == 0)
                    registered = MP.Stats.PendingRequests;
                for (int k = 0; k < Window; k++)
                    self.Send(payload, 0, k);
                Request.WaitAll(requests);
            }
            times[rep] = (Stopwatch.GetTimestamp() - t0) * 1e9 / Stopwatch.Frequency /
                         ((double)windows * Window);
        }
        Console.WriteLine($"requests in flight per window: {registered} of {Window} registered");
        Console.WriteLine(
            "ns per request: " + string.Join(" ", Array.ConvertAll(times, t => t.ToString("F1"))));
        Array.Sort(times);
        Console.WriteLine(
            $"median {times[times.Length / 2]:F1} ns per Irecv + Send + its part of WaitAll, " +
            $"{bytes} B");
        return 0;
    }
}

// FirstSend — what the first transfer of a fresh large array costs its process (issue 36,
// item 4). The first transfer of a large array hands it to the core's huge-page thread
// (transfer/huge_pages.c), which copies it into transparent huge pages while the program runs on;
// a collection requested meanwhile by another thread must not wait for that copy.
//   motor FirstSend.exe [MiB...]   (2 ranks; default 64 256 1024)
// Rank 0 allocates a fresh byte[] of each size and sends it once to rank 1, and once to
// MP.ProcNull (a fresh array again), while a second thread of rank 0 runs GC.Collect(0) back to
// back. Printed per size and destination: the send's time, the longest single GC.Collect, and
// how many collections ran during the send. A figure, not a test.
using System;
using System.Diagnostics;
using System.MP;
using System.Threading;

static class FirstSend
{
    static int Main(string[] args)
    {
        int[] sizes = args.Length > 0 ? Array.ConvertAll(args, int.Parse) : new[] { 64, 256, 1024 };
        Intracomm world = MP.World;
        if (world.Size != 2) {
            Console.Error.WriteLine("FirstSend: run with 2 ranks");
            return 2;
        }
        if (world.Rank == 0)
            Console.WriteLine("mib,destination,send_ms,longest_collect_ms,collections");
        foreach (int mib in sizes) {
            foreach (bool toPeer in new[] { true, false }) {
                var a = new byte[(long)mib << 20];
                for (long i = 0; i < a.LongLength; i += 4096)
                    a[i] = 1;   // every page touched, as a program's data is
                world.Barrier();
                if (world.Rank == 0)
                    SendWhileCollecting(a, toPeer ? 1 : MP.ProcNull, mib, toPeer);
                else if (toPeer)
                    world.Recv(a, 0, 7);
                world.Barrier();
            }
        }
        return 0;
    }

    static void SendWhileCollecting(byte[] a, int dest, int mib, bool toPeer)
    {
        var stop = 0;
        long longest = 0, collections = 0;
        var started = new ManualResetEventSlim();
        var collector = new Thread(() =>
        {
            started.Set();
        while (Volatile.Read(ref stop) == 0) {
            long t = Stopwatch.GetTimestamp();
            GC.Collect(0);
            longest = Math.Max(longest, Stopwatch.GetTimestamp() - t);
            collections++;
        }
    });
    collector.Start();
    started.Wait();
    long t0 = Stopwatch.GetTimestamp();
    MP.World.Send(a, dest, 7);
    long sent = Stopwatch.GetTimestamp() - t0;
    Volatile.Write(ref stop, 1);
    collector.Join();
    double ms = 1000.0 / Stopwatch.Frequency;
    Console.WriteLine($"{mib},{(toPeer ? "peer" : "ProcNull")},{sent * ms:F1}," +
                      $"{longest * ms:F1},{collections}");
}
}

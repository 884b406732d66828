// Rma — System.MP's side of rma_native.c: the same ops, sizes, data checks and rows, through
// System.MP.Window over a byte[] (a long[] for fetch-op) exposed on every rank.
//   mpiexec.mpich -n N motor Rma.exe OP MIN_BYTES MAX_BYTES REPS
// OP: put-lock (Lock(1, false) + Put + Unlock(1) per iteration), put-flush and get-flush (Put or
// Get + Flush(1) inside one LockAll), put-fence (rank 0's Put between Fences of every rank),
// fetch-op (FetchAndOp(1L, 1, 0, Op.Sum) inside one LockAll). Rank 0 is the origin, rank 1 the
// target (in Barrier meanwhile). Rows "system-mp,bytes,rep,iterations,us" and
// "peak,system-mp,rank,kib".
using System;
using System.Diagnostics;
using System.Globalization;
using System.MP;
using System.Threading;

static class Rma
{
    static Intracomm world;
    static int rank;

    static int Main(string[] args)
    {
        Thread.CurrentThread.CurrentCulture = CultureInfo.InvariantCulture;
        world = MP.World;
        rank = world.Rank;
        if (world.Size < 2) {
            Console.Error.WriteLine("Rma: needs 2 ranks or more");
            return 2;
        }
        string op = args[0];
        long min = long.Parse(args[1]), max = long.Parse(args[2]);
        int reps = int.Parse(args[3]);
        switch (op) {
        case "put-lock":
        case "put-flush":
        case "get-flush":
        case "put-fence": Transfers(op, min, max, reps); break;
        case "fetch-op": FetchOp(reps); break;
        default: throw new ArgumentException("unknown op " + op);
        }
        Console.WriteLine($"peak,system-mp,{rank},{BenchCommon.PeakRssKib()}");
        return 0;
    }

    static void Report(long bytes, int rep, int iters, double seconds)
    {
        if (rank == 0 && rep >= 0)
            Console.WriteLine($"system-mp,{bytes},{rep},{iters},{seconds * 1e6 / iters:F6}");
    }

    static double Seconds(long t0) => (Stopwatch.GetTimestamp() - t0) / (double)Stopwatch.Frequency;

    static void Check(bool ok, string what, long bytes)
    {
        if (!ok) {
            Console.Error.WriteLine($"Rma: wrong data in {what} at {bytes} bytes");
            MP.Abort(3);
        }
    }

    static void Fill(byte[] p, long bytes, int seed)
    {
        for (long i = 0; i < bytes; i++)
            p[i] = (byte)(i * 7 + seed);
    }

    static bool Filled(byte[] p, long bytes, int seed)
    {
        for (long i = 0; i < bytes; i++)
            if (p[i] != (byte)(i * 7 + seed))
                return false;
        return true;
    }

    static void Transfers(string op, long min, long max, int reps)
    {
        var exposed = new byte[max];
        var origin = new byte[max];
        bool fence = op == "put-fence", lockEach = op == "put-lock", get = op == "get-flush";
        using (Window win = Window.Create(world, exposed))
        {
            for (long bytes = min; bytes <= max; bytes *= 4) {
                int iters = BenchCommon.Iterations(bytes), n = (int)bytes;
                Fill(origin, bytes, 1);
                Fill(exposed, bytes, 2);
                for (int rep = -2; rep < reps; rep++) {   // -2: check, -1: warm-up
                    world.Barrier();
                    int count = rep == -2 ? 1 : iters;
                    long t0 = Stopwatch.GetTimestamp();
                    if (fence) {
                        win.Fence();
                        for (int i = 0; i < count; i++) {
                            if (rank == 0)
                                win.Put(origin, 0, n, 1, 0);
                            win.Fence();
                        }
                    } else if (rank == 0) {
                        if (!lockEach)
                            win.LockAll();
                        for (int i = 0; i < count; i++) {
                            if (lockEach)
                                win.Lock(1, false);
                            if (get)
                                win.Get(origin, 0, n, 1, 0);
                            else
                                win.Put(origin, 0, n, 1, 0);
                            if (lockEach)
                                win.Unlock(1);
                            else
                                win.Flush(1);
                        }
                        if (!lockEach)
                            win.UnlockAll();
                    }
                    double seconds = Seconds(t0);
                    world.Barrier();
                    if (rep == -2) {
                        bool ok = get ? rank != 0 || Filled(origin, bytes, 2)
                                      : rank != 1 || Filled(exposed, bytes, 1);
                        Check(ok, op, bytes);
                        continue;
                    }
                    Report(bytes, rep, count, seconds);
                }
            }
        }
    }

    static void FetchOp(int reps)
    {
        var counter = new long[2];
        int iters = BenchCommon.Iterations(8);
        long done = 0, was = 0;
        using (Window win = Window.Create(world, counter))
        {
            for (int rep = -1; rep < reps; rep++) {
                world.Barrier();
                long t0 = Stopwatch.GetTimestamp();
                if (rank == 0) {
                    win.LockAll();
                    for (int i = 0; i < iters; i++)
                        was = win.FetchAndOp(1L, 1, 0, Op.Sum);
                    win.UnlockAll();
                    Check(was == done + iters - 1, "fetch-op", 8);
                    done += iters;
                }
                double seconds = Seconds(t0);
                world.Barrier();
                Report(8, rep, iters, seconds);
            }
        }
    }
}

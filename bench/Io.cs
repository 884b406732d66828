// Io — System.MP's side of io_native.c: the same sizes, layout, calls and rows, through MPFile.
//   mpiexec.mpich -n P motor Io.exe write|read MIN_BYTES MAX_BYTES REPS DIR
// Per size: the global double[N, N] (N = floor(sqrt(bytes / 8))), rank r's block of rows a
// double[rows, N]; MPFile.Open once, SetView once (a Region of the rows), then per iteration one
// WriteAll (or ReadAll) of the block, timed between barriers; the data checked once per size.
// Rows "system-mp,bytes,rep,iterations,us" and "peak,system-mp,rank,kib".
using System;
using System.Globalization;
using System.IO;
using System.MP;
using System.Threading;

static class Io
{
    static Intracomm world;
    static int rank, size;

    static int Iterations(long bytes) => (int)Math.Max(1, Math.Min(20, (64L << 20) / bytes));

    static double Value(long i, long j, long n) => i * n + j + 0.5;

    static void Run(string op, long nominal, int reps, string dir)
    {
        long n = (long)Math.Sqrt(nominal / 8.0);
        long bytes = n * n * 8;
        int row0 = (int)(rank * (n / size) + Math.Min(rank, n % size));
        int rows = (int)(n / size + (rank < n % size ? 1 : 0));
        var block = new double[rows, n];
        for (long i = 0; i < rows; i++)
            for (long j = 0; j < n; j++)
                block[i, j] = Value(row0 + i, j, n);
        string path = Path.Combine(dir, "io_csharp.bin");
        bool reading = op == "read";
        using (MPFile file = MPFile.Open(world, path, FileMode.OpenOrCreate, FileAccess.ReadWrite))
        {
            file.SetView(0, typeof(double), new[] { (int)n, (int)n },
                         new Region(new[] { row0, 0 }, new[] { rows, (int)n }));
            if (reading)   // the file to read, written once, untimed
                file.WriteAll(block);
            int iters = Iterations(bytes);
            for (int rep = -1; rep < reps; rep++) {
                world.Barrier();
                double t0 = MP.Wtime();
                for (int i = 0; i < iters; i++) {
                    if (reading)
                        file.ReadAll(block);
                    else
                        file.WriteAll(block);
                }
                world.Barrier();
                double seconds = MP.Wtime() - t0;
                if (rank == 0 && rep >= 0)
                    Console.WriteLine(
                        $"system-mp,{bytes},{rep},{iters},{seconds * 1e6 / iters:F6}");
            }
            Array.Clear(block, 0, block.Length);
            file.ReadAll(block);
            for (long i = 0; i < rows; i++)
                for (long j = 0; j < n; j++)
                    if (block[i, j] != Value(row0 + i, j, n)) {
                        Console.Error.WriteLine($"Io: wrong data at {bytes} bytes");
                        MP.Abort(3);
                    }
        }
        if (rank == 0)
            MPFile.Delete(path);
        world.Barrier();
    }

    static int Main(string[] args)
    {
        Thread.CurrentThread.CurrentCulture = CultureInfo.InvariantCulture;
        world = MP.World;
        rank = world.Rank;
        size = world.Size;
        string op = args[0];
        long min = long.Parse(args[1]), max = long.Parse(args[2]);
        int reps = int.Parse(args[3]);
        for (long bytes = min; bytes <= max; bytes *= 4)
            Run(op, bytes, reps, args[4]);
        Console.WriteLine($"peak,system-mp,{rank},{BenchCommon.PeakRssKib()}");
        return 0;
    }
}

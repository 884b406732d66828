// Jacobi — the oversubscription bench's C# program (bench/jacobi.py; jacobi_native.c is the same
// in C on MPICH, the reference): a 2-D Jacobi solve on an N x N grid split into blocks of rows,
// each step Irecv/Isend of the halo rows in place (offset, count) and Request.WaitAll, the
// 5-point update, and an Allreduce of the residual.
//   mpiexec.mpich -n P motor Jacobi.exe N STEPS REPS [NAME]
// Prints "NAME,P,rep,STEPS,ms_per_step", "residual,NAME,value" and "peak,NAME,rank,kib".
using System;
using System.Diagnostics;
using System.Globalization;
using System.MP;
using System.Threading;

static class Jacobi
{
    static int Main(string[] args)
    {
        Thread.CurrentThread.CurrentCulture = CultureInfo.InvariantCulture;
        int n = args.Length > 0 ? int.Parse(args[0]) : 1024,
            steps = args.Length > 1 ? int.Parse(args[1]) : 200;
        int reps = args.Length > 2 ? int.Parse(args[2]) : 3;
        string name = args.Length > 3 ? args[3] : "system-mp";
        Intracomm world = MP.World;
        int rank = world.Rank, size = world.Size;
        int first = (int)((long)rank * n / size), rows = (int)((long)(rank + 1) * n / size) - first;
        int w = n + 2;
        var u = new double[(rows + 2) * w];
        var v = new double[(rows + 2) * w];
        int up = rank > 0 ? rank - 1 : MP.ProcNull, down = rank < size - 1 ? rank + 1 : MP.ProcNull;
        var residual = new double[1];
        var local = new double[1];
        var req = new Request[4];
        for (int rep = -1; rep < reps; rep++) {
            Array.Clear(u, 0, u.Length);
            if (rank == 0)
                for (int j = 0; j < w; j++)
                    u[j] = 1.0;
            Array.Copy(u, v, u.Length);
            world.Barrier();
            long t0 = Stopwatch.GetTimestamp();
            for (int s = 0; s < steps; s++) {
                req[0] = world.Irecv(u, 0, w, up, 1);
                req[1] = world.Irecv(u, (rows + 1) * w, w, down, 0);
                req[2] = world.Isend(u, w, w, up, 0);
                req[3] = world.Isend(u, rows * w, w, down, 1);
                Request.WaitAll(req);
                double sum = 0;
                for (int i = 1; i <= rows; i++)
                    for (int j = 1; j <= n; j++) {
                        int k = i * w + j;
                        double x = 0.25 * (u[k - w] + u[k + w] + u[k - 1] + u[k + 1]);
                        sum += (x - u[k]) * (x - u[k]);
                        v[k] = x;
                    }
                local[0] = sum;
                world.Allreduce(local, residual, Op.Sum);
                var t = u;
                u = v;
                v = t;
            }
            double ms = (Stopwatch.GetTimestamp() - t0) * 1e3 / Stopwatch.Frequency / steps;
            if (rank == 0 && rep >= 0)
                Console.WriteLine($"{name},{size},{rep},{steps},{ms:F6}");
        }
        if (rank == 0)
            Console.WriteLine($"residual,{name},{residual[0]:E12}");
        Console.WriteLine($"peak,{name},{rank},{BenchCommon.PeakRssKib()}");
        return 0;
    }
}

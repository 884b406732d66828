// Regions — System.MP's side of regions_native.c: the same ops, sizes, data checks and rows.
//   mpiexec.mpich -n N motor Regions.exe OP MIN_BYTES MAX_BYTES REPS
// OP: column (Send/Recv of Region.Columns(1, 1) of a double[E, 64]), block3d (the interior block
// of a double[b0+2, b1+2, b2+2] as a Region), persistent (SendInit/RecvInit once, then
// Prequest.StartAll + Request.WaitAll), neighbor (CartComm.NeighborAlltoall with one Region per
// neighbour: the halo of a double[n+2, n+2] in one call), neighbor-packed (the same exchange with
// Isend/Irecv of packed edges: rows with Buffer.BlockCopy, columns by loops, as a C# programmer
// without regions writes it). Rows "system-mp[-packed],bytes,rep,iterations,us" and
// "peak,system-mp[-packed],rank,kib".
using System;
using System.Diagnostics;
using System.Globalization;
using System.MP;
using System.Threading;

static class Regions
{
    const int Columns = 64;   // as regions_native.c
    static Intracomm world;
    static int rank, size;

    static int Main(string[] args)
    {
        Thread.CurrentThread.CurrentCulture = CultureInfo.InvariantCulture;
        world = MP.World;
        rank = world.Rank;
        size = world.Size;
        string op = args[0];
        long min = long.Parse(args[1]), max = long.Parse(args[2]);
        int reps = int.Parse(args[3]);
        string name = op == "neighbor-packed" ? "system-mp-packed" : "system-mp";
        for (long bytes = min; bytes <= max; bytes *= 4) {
            switch (op) {
            case "column": Column(bytes, reps); break;
            case "block3d": Block3d(bytes, reps); break;
            case "persistent": Persistent(bytes, reps); break;
            case "neighbor":
            case "neighbor-packed": Neighbor(bytes, reps, op == "neighbor-packed"); break;
            default: throw new ArgumentException("unknown op " + op);
            }
        }
        Console.WriteLine($"peak,{name},{rank},{BenchCommon.PeakRssKib()}");
        return 0;
    }

    static void Report(string name, long bytes, int rep, int iters, double seconds)
    {
        if (rank == 0 && rep >= 0)
            Console.WriteLine($"{name},{bytes},{rep},{iters},{seconds * 1e6 / iters:F6}");
    }

    static double Seconds(long t0) => (Stopwatch.GetTimestamp() - t0) / (double)Stopwatch.Frequency;

    static void Check(bool ok, string what, long bytes)
    {
        if (!ok) {
            Console.Error.WriteLine($"Regions: wrong data in {what} at {bytes} bytes");
            MP.Abort(3);
        }
    }

    // a ping-pong between ranks 0 and 1 of one region of array, in place; half a round trip
    static void PingPong(Array array, Region region, long bytes, int reps)
    {
        GC.Collect();   // long-lived arrays, as a real code's fields
        int iters = BenchCommon.Iterations(bytes);
        for (int rep = -1; rep < reps; rep++) {
            world.Barrier();
            long t0 = Stopwatch.GetTimestamp();
            for (int i = 0; i < iters && rank < 2; i++) {
                if (rank == 0) {
                    world.Send(array, region, 1, 0);
                    world.Recv(array, region, 1, 0);
                } else {
                    world.Recv(array, region, 0, 0);
                    world.Send(array, region, 0, 0);
                }
            }
            Report("system-mp", bytes, rep, iters, Seconds(t0) / 2);
        }
    }

    static void Column(long bytes, int reps)
    {
        int rows = (int)(bytes / 8);
        var a = new double[rows, Columns];
        Region column = Region.Columns(1, 1);
        PingPong(a, column, bytes, reps);
        for (int r = 0; r < rows; r++)
            a[r, 1] = rank == 0 ? r : -1.0;
        if (rank == 0)
            world.Send(a, column, 1, 1);
        else if (rank == 1) {
            world.Recv(a, column, 0, 1);
            bool ok = true;
            for (int r = 0; r < rows; r++)
                ok &= a[r, 1] == r && a[r, 0] == 0.0;
            Check(ok, "column", bytes);
        }
    }

    // the bytes / 8 elements (a power of two) as three near-equal powers of two, largest first
    static int[] BlockDims(long bytes)
    {
        int e = 0;
        while ((8L << (e + 1)) <= bytes)
            e++;
        return new[] { 1 << ((e + 2) / 3), 1 << ((e + 1) / 3), 1 << (e / 3) };
    }

    static void Block3d(long bytes, int reps)
    {
        int[] b = BlockDims(bytes);
        var a = new double[b[0] + 2, b[1] + 2, b[2] + 2];
        var block = new Region(new[] { 1, 1, 1 }, b);
        PingPong(a, block, bytes, reps);
        int at = 0;
        for (int i = 0; i < b[0] + 2; i++)
            for (int j = 0; j < b[1] + 2; j++)
                for (int k = 0; k < b[2] + 2; k++)
                    a[i, j, k] = rank == 0 ? at++ : -1.0;
        if (rank == 0)
            world.Send(a, block, 1, 1);
        else if (rank == 1) {
            world.Recv(a, block, 0, 1);
            bool ok = true;
            for (int i = 0; i < b[0] + 2; i++)
                for (int j = 0; j < b[1] + 2; j++)
                    for (int k = 0; k < b[2] + 2; k++, at++) {
                        bool inside =
                            i >= 1 && i <= b[0] && j >= 1 && j <= b[1] && k >= 1 && k <= b[2];
                        ok &= a[i, j, k] == (inside ? at : -1.0);
                    }
            Check(ok, "block3d", bytes);
        }
    }

    static void Persistent(long bytes, int reps)
    {
        int n = (int)(bytes / 8);
        int left = (rank + size - 1) % size, right = (rank + 1) % size;
        double[] sl = new double[n], sr = new double[n], rl = new double[n], rr = new double[n];
        GC.Collect();
        // tag 0 travels rightwards, tag 1 leftwards (as regions_native.c)
        var requests =
            new[] { world.RecvInit(rl, 0, n, left, 0), world.RecvInit(rr, 0, n, right, 1),
                    world.SendInit(sr, 0, n, right, 0), world.SendInit(sl, 0, n, left, 1) };
        int iters = BenchCommon.Iterations(bytes);
        for (int rep = -1; rep < reps; rep++) {
            world.Barrier();
            long t0 = Stopwatch.GetTimestamp();
            for (int i = 0; i < iters; i++) {
                Prequest.StartAll(requests);
                Request.WaitAll(requests);
            }
            Report("system-mp", bytes, rep, iters, Seconds(t0));
        }
        for (int i = 0; i < n; i++) {
            sr[i] = rank * 1e6 + i;
            sl[i] = -(rank * 1e6 + i);
        }
        Prequest.StartAll(requests);
        Request.WaitAll(requests);
        bool ok = true;
        for (int i = 0; i < n; i++)
            ok &= rl[i] == left * 1e6 + i && rr[i] == -(right * 1e6 + i);
        Check(ok, "persistent", bytes);
        foreach (Prequest r in requests)
            r.Dispose();
    }

    static double Stamp(int r, int i, int j) => r * 1e7 + i * 1e3 + j;

    // Edge w in MPI's neighbour order (dimension 0 -1, +1, dimension 1 -1, +1): the first or
    // last interior row or column (sent), or the ghost row or column beyond it (received).
    static Region Edge(int n, int w, bool recv)
    {
        int dim = w / 2;
        bool plus = w % 2 == 1;
        int at = recv ? (plus ? n + 1 : 0) : (plus ? n : 1);
        return dim == 0 ? new Region(new[] { at, 1 }, new[] { 1, n })
                        : new Region(new[] { 1, at }, new[] { n, 1 });
    }

    static void Neighbor(long bytes, int reps, bool packed)
    {
        string name = packed ? "system-mp-packed" : "system-mp";
        int n = (int)(bytes / 8);
        int[] dims = MP.DimsCreate(size, new int[2]);
        CartComm cart = world.CreateCart(dims, new[] { true, true }, false);
        int[] nbr = new int[4];
        for (int d = 0; d < 2; d++)
            cart.Shift(d, 1, out nbr[2 * d], out nbr[2 * d + 1]);
        var f = new double[n + 2, n + 2];
        for (int i = 0; i < n + 2; i++)
            for (int j = 0; j < n + 2; j++)
                f[i, j] = i >= 1 && i <= n && j >= 1 && j <= n ? Stamp(rank, i, j) : -1.0;
        var arrays = new Array[] { f, f, f, f };
        var send = new Region[4];
        var recv = new Region[4];
        for (int w = 0; w < 4; w++) {
            send[w] = Edge(n, w, false);
            recv[w] = Edge(n, w, true);
        }
        double[][] outs = { new double[n], new double[n], new double[n], new double[n] };
        double[][] ins = { new double[n], new double[n], new double[n], new double[n] };
        var requests = new Request[8];
        GC.Collect();
        int iters = BenchCommon.Iterations(4 * bytes);
        for (int rep = -2; rep < reps; rep++) {
            world.Barrier();
            long t0 = Stopwatch.GetTimestamp();
            int count = rep == -2 ? 1 : iters;   // -2: one checked exchange
            for (int i = 0; i < count; i++) {
                if (!packed) {
                    cart.NeighborAlltoall(arrays, send, arrays, recv);
                    continue;
                }
                int row = (n + 2) * 8;
                Buffer.BlockCopy(f, row + 8, outs[0], 0, n * 8);       // row 1
                Buffer.BlockCopy(f, n * row + 8, outs[1], 0, n * 8);   // row n
                for (int k = 0; k < n; k++) {
                    outs[2][k] = f[k + 1, 1];
                    outs[3][k] = f[k + 1, n];
                }
                // tag 2d toward -1, 2d + 1 toward +1 (regions_native.c)
                requests[0] = cart.Irecv(ins[0], nbr[0], 1);
                requests[1] = cart.Irecv(ins[1], nbr[1], 0);
                requests[2] = cart.Irecv(ins[2], nbr[2], 3);
                requests[3] = cart.Irecv(ins[3], nbr[3], 2);
                for (int w = 0; w < 4; w++)
                    requests[4 + w] = cart.Isend(outs[w], nbr[w], w);
                Request.WaitAll(requests);
                Buffer.BlockCopy(ins[0], 0, f, 8, n * 8);                   // ghost row 0
                Buffer.BlockCopy(ins[1], 0, f, (n + 1) * row + 8, n * 8);   // ghost row n+1
                for (int k = 0; k < n; k++) {
                    f[k + 1, 0] = ins[2][k];
                    f[k + 1, n + 1] = ins[3][k];
                }
            }
            if (rep == -2) {
                bool ok = true;
                for (int k = 1; k <= n; k++)
                    ok &= f[0, k] == Stamp(nbr[0], n, k) && f[n + 1, k] == Stamp(nbr[1], 1, k) &&
                          f[k, 0] == Stamp(nbr[2], k, n) && f[k, n + 1] == Stamp(nbr[3], k, 1);
                Check(ok, name, bytes);
            }
            Report(name, bytes, rep, count, Seconds(t0));
        }
        cart.Dispose();
    }
}

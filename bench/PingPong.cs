// PingPong — half round-trip time between two ranks, over a C# transport:
//   mpiexec.mpich -n 2 motor PingPong.exe TRANSPORT MIN_BYTES MAX_BYTES REPS
// TRANSPORT: system-mp (System.MP OPI Send/Recv, in place) or pinvoke (baseline, bench/baselines).
// The motor host runs both, so only the binding differs. Prints the same CSV rows as
// pingpong_native.
using System;
using System.Diagnostics;
using System.Globalization;
using System.MP;
using System.Threading;

interface IPingTransport
{
    void Send(byte[] buffer, int count, int peer);
    void Recv(byte[] buffer, int count, int peer);
}

sealed class SystemMpTransport : IPingTransport
{
    readonly Intracomm world = MP.World;
    public void Send(byte[] b, int count, int peer) => world.Send(b, peer, 0);
    public void Recv(byte[] b, int count, int peer) => world.Recv(b, peer, 0);
}

sealed class PInvokeTransport : IPingTransport
{
    public void Send(byte[] b, int count, int peer) => PInvokeMpi.Send(b, count, peer, 0);
    public void Recv(byte[] b, int count, int peer) => PInvokeMpi.Recv(b, count, peer, 0);
}

static class PingPong
{
    static int Main(string[] args)
    {
        Thread.CurrentThread.CurrentCulture = CultureInfo.InvariantCulture;
        string name = args[0];
        long min = long.Parse(args[1]), max = long.Parse(args[2]);
        int reps = int.Parse(args[3]);
        IPingTransport t = name == "system-mp" ? new SystemMpTransport()
                         : name == "pinvoke" ? (IPingTransport)new PInvokeTransport()
                         : throw new ArgumentException("unknown transport " + name);
        Intracomm world = MP.World;
        int rank = world.Rank, peer = 1 - rank;
        for (long size = min; size <= max; size *= 2) {
            var buffer = new byte[size];     // exact size: OPI sends whole objects
            int count = (int)size, iters = BenchCommon.Iterations(size);
            for (int rep = -1; rep < reps; rep++) {   // rep -1: warm-up, not reported
                world.Barrier();
                long t0 = Stopwatch.GetTimestamp();
                for (int i = 0; i < iters; i++) {
                    if (rank == 0) { t.Send(buffer, count, peer); t.Recv(buffer, count, peer); }
                    else if (rank == 1) { t.Recv(buffer, count, peer); t.Send(buffer, count, peer); }
                }
                double us = (Stopwatch.GetTimestamp() - t0) * 1e6 / Stopwatch.Frequency;
                if (rank == 0 && rep >= 0)
                    Console.WriteLine($"{name},{size},{rep},{iters},{us / (2.0 * iters):F6}");
            }
        }
        Console.WriteLine($"peak,{name},{rank},{BenchCommon.PeakRssKib()}");
        return 0;
    }
}

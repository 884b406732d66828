// Window — the non-blocking window pattern over a C# transport (see window_native.c):
//   mpiexec.mpich -n 2 motor Window.exe TRANSPORT MIN_BYTES MAX_BYTES REPS
// TRANSPORT: system-mp (Isend/Irecv + Request.WaitAll; run it with MOTOR_PIN_POLICY=every to
// pin every transfer) or pinvoke (baseline: MPI_Isend/MPI_Irecv, a GCHandle per request held
// until MPI_Waitall). Prints CSV rows like window_native, plus for System.MP, per rank,
// "pins,TRANSPORT,pins_taken,pins_avoided,operations".
using System;
using System.Diagnostics;
using System.Globalization;
using System.MP;
using System.Threading;

interface IWindowTransport
{
    void Isend(byte[] buffer, int peer, int tag, int slot);
    void Irecv(byte[] buffer, int peer, int tag, int slot);
    void WaitAll();
}

sealed class SystemMpWindow : IWindowTransport
{
    readonly Intracomm world = MP.World;
    readonly Request[] requests = new Request[Window.Size];
    public void Isend(byte[] b, int peer, int tag, int slot) => requests[slot] = world.Isend(b, peer, tag);
    public void Irecv(byte[] b, int peer, int tag, int slot) => requests[slot] = world.Irecv(b, peer, tag);
    public void WaitAll() => Request.WaitAll(requests);
}

sealed class PInvokeWindow : IWindowTransport
{
    readonly PInvokeMpi.Pending[] pending = new PInvokeMpi.Pending[Window.Size];
    public void Isend(byte[] b, int peer, int tag, int slot) => pending[slot] = PInvokeMpi.Isend(b, b.Length, peer, tag);
    public void Irecv(byte[] b, int peer, int tag, int slot) => pending[slot] = PInvokeMpi.Irecv(b, b.Length, peer, tag);
    public void WaitAll() => PInvokeMpi.WaitAll(pending);
}

static class Window
{
    public const int Size = 64;

    static int Main(string[] args)
    {
        Thread.CurrentThread.CurrentCulture = CultureInfo.InvariantCulture;
        string name = args[0];
        long min = long.Parse(args[1]), max = long.Parse(args[2]);
        int reps = int.Parse(args[3]);
        IWindowTransport t = name.StartsWith("system-mp") ? new SystemMpWindow()
                           : name == "pinvoke" ? (IWindowTransport)new PInvokeWindow()
                           : throw new ArgumentException("unknown transport " + name);
        Intracomm world = MP.World;
        int rank = world.Rank;
        var ack = new byte[1];
        MPStats before = MP.Stats;
        for (long size = min; size <= max; size *= 4) {
            var buffers = new byte[Size][];
            for (int w = 0; w < Size; w++) buffers[w] = new byte[size];
            int iters = BenchCommon.Iterations(size * Size) / 4 + 5;
            for (int rep = -1; rep < reps; rep++) {
                world.Barrier();
                long t0 = Stopwatch.GetTimestamp();
                for (int i = 0; i < iters && rank < 2; i++) {
                    for (int w = 0; w < Size; w++) {
                        if (rank == 0) t.Isend(buffers[w], 1, w, w);
                        else t.Irecv(buffers[w], 0, w, w);
                    }
                    t.WaitAll();
                    if (rank == 0) world.Recv(ack, 1, Size);
                    else world.Send(ack, 0, Size);
                }
                double us = (Stopwatch.GetTimestamp() - t0) * 1e6 / Stopwatch.Frequency;
                if (rank == 0 && rep >= 0)
                    Console.WriteLine($"{name},{size},{rep},{iters},{us / ((double)iters * Size):F6}");
            }
        }
        MPStats after = MP.Stats;
        if (t is SystemMpWindow)   // every rank: senders rarely pin, receivers may
            Console.WriteLine($"pins,{name},{after.PinsTaken - before.PinsTaken},{after.PinsAvoided - before.PinsAvoided},{after.Operations - before.Operations}");
        Console.WriteLine($"peak,{name},{rank},{BenchCommon.PeakRssKib()}");
        return 0;
    }
}

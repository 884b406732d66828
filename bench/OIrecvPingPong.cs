// OIrecvPingPong — the cost of a non-blocking graph receive as users post it: 2 ranks, each round
// trip an OIrecv posted, the graph (one byte[] of the size) sent with OSend, the request waited
// for. Prints, per size, the half round trip in microseconds: the median of 5 repetitions and
// their min-max. Usage: mpiexec.mpich -n 2 motor OIrecvPingPong.exe
using System;
using System.Diagnostics;
using System.MP;

class Blob
{
    [Transportable]
    public byte[] Data;
}

static class OIrecvPingPong
{
    static int Main()
    {
        Intracomm w = MP.World;
        if (w.Size != 2) {
            Console.Error.WriteLine("OIrecvPingPong runs at 2 ranks");
            return 2;
        }
        int peer = 1 - w.Rank;
        foreach (int bytes in new[] { 64, 4096, 65536, 1 << 20 }) {
            var msg = new Blob { Data = new byte[bytes] };
            int iterations = bytes >= 1 << 20 ? 200 : 2000;
            var reps = new double[5];
            for (int r = -1; r < reps.Length; r++) {   // the first repetition warms up
                w.Barrier();
                var clock = Stopwatch.StartNew();
                for (int i = 0; i < iterations; i++) {
                    ORequest<Blob> q = w.OIrecv<Blob>(peer, 0);
                    if (w.Rank == 0) {
                        w.OSend(msg, peer, 0);
                        q.Wait();
                    } else {
                        q.Wait();
                        w.OSend(msg, peer, 0);
                    }
                }
                if (r >= 0)
                    reps[r] = clock.Elapsed.TotalMilliseconds * 1000 / iterations / 2;
            }
            Array.Sort(reps);
            if (w.Rank == 0)
                Console.WriteLine(
                    $"{bytes} B: {reps[2]:F2} us [{reps[0]:F2}-{reps[reps.Length - 1]:F2}]");
        }
        return 0;
    }
}

// RingJob SECONDS — a job whose ranks keep talking (ring Sendrecv and Allreduce) for SECONDS
// (rank 0's clock: every rank stops after the same round), for the failure tests across hosts
// (multihost_failure_test.sh): rank 0 prints "running" once every rank has exchanged messages, so
// the test knows when to break a host.
using System;
using System.MP;

static class RingJob
{
    static int Main(string[] args)
    {
        Intracomm world = MP.World;
        int rank = world.Rank, size = world.Size;
        var send = new double[1024];
        var recv = new double[1024];
        DateTime end = DateTime.UtcNow.AddSeconds(double.Parse(args[0]));
        for (long round = 1;; round++) {
            world.Sendrecv(send, (rank + 1) % size, 0, recv, (rank + size - 1) % size, 0);
            // each rank gives 1, and rank 0 size more when its time is up
            int votes = world.Allreduce(rank == 0 && DateTime.UtcNow >= end ? size + 1 : 1, Op.Sum);
            if (votes == 2 * size)
                break;
            if (votes != size)
                return 1;
            if (round == 100 && rank == 0)
                Console.WriteLine("running");
        }
        return 0;
    }
}

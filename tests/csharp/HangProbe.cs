// HangProbe — jobs that hang on purpose, for tests/hang_report_test.sh (MOTOR_HANG_REPORT):
// HangProbe.exe MODE. The last rank is the one that goes astray.
using System;
using System.MP;

static class HangProbe
{
    static int Main(string[] args)
    {
        Intracomm world = MP.World;
        int last = world.Size - 1;
        switch (args.Length > 0 ? args[0] : "") {
        case "skip-barrier":   // the last rank skips a Barrier and waits for a message instead
            world.Barrier();   // a first one every rank enters
            if (world.Rank == last)
                world.Recv(new int[1], 0, 7);
            else
                world.Barrier();
            return 0;
        case "skip-barrier-exit":   // the last rank skips a Barrier and ends
            if (world.Rank != last)
                world.Barrier();
            return 0;
        case "mismatch":   // the last rank calls Bcast where the others call Barrier
            if (world.Rank == last)
                world.Bcast(new int[1], 0, 1, 0);
            else
                world.Barrier();
            return 0;
        case "recv":   // rank 0 waits for a message rank 1 never sends; the others are in a Barrier
            if (world.Rank == 0)
                world.Recv(new int[1], 1, 7);
            else
                world.Barrier();
            return 0;
        case "orecv":   // the same with an object graph, and a wait for a request
            if (world.Rank == 0)
                world.ORecv<string>(1, 7);
            else if (world.Rank == 1)
                world.Irecv(new int[1], 0, 8).Wait();
            else
                world.Barrier();
            return 0;
        case "split":   // the same as skip-barrier on a named communicator made by Split
            using (Intracomm all = world.Split(0, last - world.Rank))
            {
                all.Name = "reversed";
                var sum = new int[1];
                if (world.Rank == last)
                    world.Recv(new int[1], 0, 7);
                else
                    all.Allreduce(new[] { 1 }, sum, Op.Sum);
            }
            return 0;
        case "healthy":   // many short calls of every kind: nothing to report
            var one = new int[1];
            var got = new int[1];
            DateTime until = DateTime.UtcNow.AddSeconds(double.Parse(args[1]));
            int rounds = 0;
            while (true) {
                int go = DateTime.UtcNow < until ? 1 : 0;
                var all = new int[1];
                world.Allreduce(new[] { go }, all, Op.Min);   // every rank stops at once
                if (all[0] == 0)
                    break;
                world.Barrier();
                world.Sendrecv(one, (world.Rank + 1) % world.Size, 3, got,
                               (world.Rank + world.Size - 1) % world.Size, 3);
                world.Bcast(one, rounds % world.Size);
                rounds++;
            }
            Console.WriteLine($"healthy: rank {world.Rank} done");
            return 0;
        default:
            Console.Error.WriteLine(
                "HangProbe MODE: skip-barrier, skip-barrier-exit, recv, split, " +
                "healthy SECONDS");
            return 2;
        }
    }
}

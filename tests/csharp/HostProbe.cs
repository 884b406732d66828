// HostProbe — small behaviours of the motor host and of System.MP under stock mono, driven by
// tests/host_test.sh: HostProbe.exe MODE [args...]
using System;
using System.MP;
using System.Threading;

struct Pair
{
    public double Value;
    public int Rank;
}

static class HostProbe
{
    static int Main(string[] args)
    {
        if (args.Length > 1 && args[0] == "env-exit-without-mp")   // System.MP never starts
            Environment.Exit(int.Parse(args[1]));
        Intracomm world = MP.World;
        switch (args.Length > 0 ? args[0] : "") {
        case "exit":   // Main's return value is the process exit code
            return int.Parse(args[1]);
        case "args":
            Console.WriteLine("args:" + string.Join("|", args, 1, args.Length - 1));
            return 0;
        case "throw":   // one rank throws, the others wait for a message that never comes
            if (world.Rank == int.Parse(args[1]))
                throw new InvalidOperationException("probe failure on purpose");
            world.Recv(new int[1], MP.AnySource, 1);
            return 0;
        case "thread-throw":
            ThreadStart fail = () =>
            { throw new ApplicationException("thread failure on purpose"); };
            var t = new Thread(fail);
            t.Start();
            world.Recv(new int[1], MP.AnySource, 1);
            return 0;
        case "abort":
            if (world.Rank == 0)
                MP.Abort(5);
            world.Recv(new int[1], MP.AnySource, 1);
            return 0;
        case "env-exit":   // rank 0 calls Environment.Exit(CODE) while the others wait for it
            AppDomain.CurrentDomain.ProcessExit += (sender, e) =>
                Console.WriteLine("late ProcessExit handler ran on rank " + world.Rank);
            if (world.Rank == 0)
                Environment.Exit(int.Parse(args[1]));
            world.Recv(new int[1], 0, 1);
            return 0;
        // the same from a second thread, while rank 0's main thread waits too
        case "env-exit-thread":
            if (world.Rank == 0)
                new Thread(() => Environment.Exit(int.Parse(args[1]))).Start();
            world.Recv(new int[1], world.Size - 1, 1);
            return 0;
        case "return-while-waiting":   // rank 0's Main returns CODE while the others wait for it
            if (world.Rank == 0)
                return int.Parse(args[1]);
            world.Barrier();
            return 0;
        case "nullref":   // Mono's own signal handling survives MPI (UCX) being loaded
            try {
                object o = args.Length > 5 ? new object() : null;
                Console.WriteLine(o.ToString());
            } catch (NullReferenceException) {
                Console.WriteLine("nullref caught on rank " + world.Rank);
            }
            return 0;
        case "end-while-collecting":   // Main returns with transfers in flight (receives no one
            // matches, their requests dropped) while another thread keeps collecting: the GC
            // hook, which looks at such transfers, must not call MPI while MPI_Finalize runs
            for (int i = 0; i < 64; i++)
                world.Irecv(new byte[16], (world.Rank + 1) % world.Size, 999);
            ThreadStart collect = () =>
            {
                while (true)
                    GC.Collect(0);
            };
            var collector = new Thread(collect) { IsBackground = true };
            collector.Start();
            world.Barrier();
            return 0;
        case "leave-objects":   // MPI objects made and never disposed: freed before MPI ends,
            // so MPI_Finalize reports no leak (MPICH's yaksa printed one per struct operator)
            var minLoc = Op.Create<Pair>((a, b) => a.Value <= b.Value ? a : b, true);
            Pair least =
                world.Allreduce(new Pair { Value = world.Rank, Rank = world.Rank }, minLoc);
            Intracomm dup = world.Dup();
            dup.OAllgather(new[] { world.Rank });   // gives dup its private twin, freed with it
            Intracomm half = world.Split(world.Rank % 2, 0);
            half.Barrier();
            Group g = world.Group.Incl(new[] { 0 });
            Console.WriteLine(
                $"left objects on rank {world.Rank}: least {least.Rank}, group of {g.Size}");
            return 0;
        case "ring":   // a little traffic, then a clean end
            var s = new double[] { world.Rank };
            var r = new double[1];
            world.Sendrecv(s, (world.Rank + 1) % world.Size, 3, r,
                           (world.Rank + world.Size - 1) % world.Size, 3);
            world.Barrier();
            Console.WriteLine($"ring ok on rank {world.Rank}: got {r[0]}");
            return 0;
        default: Console.Error.WriteLine("unknown mode"); return 64;
        }
    }
}

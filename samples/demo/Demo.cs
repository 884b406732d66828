// Demo — what System.MP does, on any number of ranks: arrays, array subsets, a 2-D array and
// a plain object travel in place between ranks in a ring; the root prints what happened.
//   mpiexec.mpich -n 3 build/motor build/Demo.exe
using System;
using System.MP;

class Particle   // no reference fields: an OPI-transportable object
{
    public double X, Y, Z;
    public int Id;
}

static class Demo
{
    static int Main()
    {
        Intracomm world = MP.World;
        int rank = world.Rank, size = world.Size;
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        if (rank == 0)
            Console.WriteLine(
                $"System.MP demo: {size} rank(s) on {MP.ProcessorName}, thread level " +
                $"{MP.ThreadLevel}");

        // 1. a double[] around the ring
        var values = new double[1000];
        for (int i = 0; i < values.Length; i++)
            values[i] = rank * 1000 + i;
        var incoming = new double[1000];
        Status st = world.Sendrecv(values, next, 1, incoming, prev, 1);
        bool ringOk = st.Count == 1000 && incoming[999] == prev * 1000 + 999;

        // 2. subsets: every other rank sends elements [100, 150) of its int[]; the root receives
        //    each into its own 50-element window of one array, nothing written outside it
        var ints = new int[200];
        for (int i = 0; i < ints.Length; i++)
            ints[i] = rank * 10000 + i;
        bool subsetOk = true;
        if (rank == 0) {
            var windows = new int[50 * size + 2];   // one guard element at each end
            windows[0] = windows[windows.Length - 1] = -7;
            for (int r = 1; r < size; r++) {
                st = world.Recv(windows, 1 + 50 * r, 50, r, 2);
                subsetOk &= st.Count == 50 && windows[1 + 50 * r] == r * 10000 + 100 &&
                            windows[50 * r + 50] == r * 10000 + 149;
            }
            subsetOk &= windows[0] == -7 && windows[windows.Length - 1] == -7 && windows[50] == 0;
        } else {
            world.Send(ints, 100, 50, 0, 2);
        }

        // 3. a double[,] and a Particle, root to every other rank
        var grid = new double[4, 5];
        var particle = new Particle();
        if (rank == 0) {
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 5; j++)
                    grid[i, j] = i * 10 + j;
            particle = new Particle { X = 1.5, Y = -2.5, Z = 3.25, Id = 42 };
            for (int r = 1; r < size; r++) {
                world.Send(grid, r, 3);
                world.Send(particle, r, 4);
            }
        } else {
            world.Recv(grid, 0, 3);
            world.Recv(particle, 0, 4);
        }
        bool gridOk = grid[3, 4] == 34 && particle.Id == 42 && particle.Z == 3.25;

        // 4. gather a verdict per rank at the root, with ranks in any order
        var verdict = new int[] { rank, ringOk && subsetOk && gridOk ? 1 : 0 };
        int failures = 0;
        if (rank == 0) {
            failures += verdict[1] == 1 ? 0 : 1;
            for (int r = 1; r < size; r++) {
                var v = new int[2];
                Status s = world.Recv(v, MP.AnySource, 9);
                Console.WriteLine(
                    $"  rank {v[0]} (from {s.Source}): ring {(v[1] == 1 ? "ok" : "FAILED")}");
                failures += v[1] == 1 ? 0 : 1;
            }
            Console.WriteLine(
                $"  rank 0: double[1000] ring {ringOk}, int[] subset {subsetOk}, double[4,5] + " +
                $"Particle {gridOk}");
            MPStats stats = MP.Stats;
            Console.WriteLine($"  rank 0 stats: {stats}");
            Console.WriteLine(
                failures == 0 ? "demo: all ranks OK" : $"demo: {failures} rank(s) FAILED");
        } else {
            world.Send(verdict, 0, 9);
        }
        world.Barrier();
        return failures == 0 ? 0 : 1;
    }
}

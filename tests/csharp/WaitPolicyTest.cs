// WaitPolicyTest — the wait policy (MOTOR_WAIT, MP.WaitPolicy): what the core measured when MPI
// started (World's ranks on this host, the cores their affinity allows together) agrees with
// what this test reads itself from /proc and /sys, auto chose yield exactly when the ranks
// outnumber the cores, spin and yield override it, and every kind of wait still delivers the
// right data under the policy in force (blocking and non-blocking point-to-point, WaitAny,
// WaitSome, the collectives that wait in the core's loop when waits yield, an object-array run).
//   WaitPolicyTest.exe auto|spin|yield [oversubscribed|not]
// The first argument is the policy expected (auto: decided from the counts); the second, when
// given, says whether this job must have been oversubscribed (wait_policy_test.sh runs it under
// `taskset -c 0`). Never timings.
using System;
using System.IO;
using System.Linq;
using System.MP;
using System.MP.Arrays;

static class WaitPolicyTest
{
    static Intracomm world = MP.World;
    static int rank = world.Rank, size = world.Size;

    /// <summary>CPUs in a Linux list such as "0-3,6".</summary>
    static int CountList(string list)
    {
        int n = 0;
        foreach (string part in list.Trim().Split(new[] { ',' },
                                                  StringSplitOptions.RemoveEmptyEntries)) {
            string[] ends = part.Split('-');
            n += ends.Length == 1 ? 1 : int.Parse(ends[1]) - int.Parse(ends[0]) + 1;
        }
        return n;
    }

    static int Main(string[] args)
    {
        string expected = args.Length > 0 ? args[0] : "auto";
        string load = args.Length > 1 ? args[1] : null;

        // what the core measured, against this process's own view: one host, every rank started
        // with the same affinity (mpiexec, or taskset around it), so the union is this one's mask
        string allowed =
            File.ReadAllLines("/proc/self/status").First(l => l.StartsWith("Cpus_allowed_list:"));
        int mine = CountList(allowed.Substring(allowed.IndexOf(':') + 1));
        int online = CountList(File.ReadAllText("/sys/devices/system/cpu/online"));
        Check.Equal(size, MP.RanksOnHost, "RanksOnHost: every rank of this one-host job");
        Check.Equal(Math.Min(mine, online), MP.CoresOnHost,
                    "CoresOnHost: the CPUs the ranks' affinity allows");
        bool over = MP.RanksOnHost > MP.CoresOnHost;
        if (load != null)
            Check.Equal(load == "oversubscribed", over,
                        $"oversubscribed ({MP.RanksOnHost} ranks, {MP.CoresOnHost} cores)");

        WaitPolicy want =
            expected == "spin"    ? WaitPolicy.Spin
            : expected == "yield" ? WaitPolicy.Yield
            : over                ? WaitPolicy.Yield
                                  : WaitPolicy.Spin;
        Check.Equal(
            want, MP.WaitPolicy,
            $"MP.WaitPolicy for {expected} with {MP.RanksOnHost} ranks on {MP.CoresOnHost} cores");
        Check.Equal(MP.WaitPolicy,
                    world.Allreduce((int)MP.WaitPolicy, Op.Max) == 1 ? WaitPolicy.Yield
                                                                     : WaitPolicy.Spin,
                    "every rank chose the same policy");

        PointToPoint();
        Collectives();
        Arrays(over);
        return Check.Finish("WaitPolicyTest " + expected + (load != null ? " " + load : ""));
    }

    static void PointToPoint()
    {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        // a blocking receive that waits: the sender is late by a collective
        var got = new int[4];
        if (size > 1) {
            if (rank == 0) {
                world.Barrier();
                world.Send(new[] { 1, 2, 3, 4 }, 1, 5);
            } else {
                if (rank == 1) {
                    var r = world.Irecv(got, 0, 5);
                    world.Barrier();
                    r.Wait();
                    Check.True(got.SequenceEqual(new[] { 1, 2, 3, 4 }), "Irecv + Wait");
                } else {
                    world.Barrier();
                }
            }
        }
        for (int round = 0; round < 20; round++) {
            var a = new double[64];
            var b = new double[64];
            for (int i = 0; i < a.Length; i++)
                a[i] = rank * 1000 + round * 10 + i;
            var reqs = new[] { world.Irecv(b, prev, 7), world.Isend(a, next, 7) };
            if (round % 2 == 0) {
                int first = Request.WaitAny(reqs);
                int second = Request.WaitAny(reqs);
                Check.True(first != second && first >= 0 && second >= 0,
                           "WaitAny visits each request once");
                Check.Equal(MP.Undefined, Request.WaitAny(reqs), "WaitAny: none left");
            } else {
                int seen = 0;
                while (seen < 2)
                    seen += Request.WaitSome(reqs).Length;
                Check.Equal(0, Request.WaitSome(reqs).Length, "WaitSome: none left");
            }
            bool ok = true;
            for (int i = 0; i < b.Length; i++)
                ok &= b[i] == prev * 1000 + round * 10 + i;
            Check.True(ok, "ring exchange round " + round);
        }
    }

    static void Collectives()
    {
        var sum = new long[3];
        world.Allreduce(new long[] { rank, 1, 2 * rank }, sum, Op.Sum);
        long ranks = (long)size * (size - 1) / 2;
        Check.True(sum.SequenceEqual(new[] { ranks, size, 2 * ranks }), "Allreduce");
        var inPlace = new int[] { rank + 1 };
        world.Allreduce(inPlace, inPlace, Op.Max);
        Check.Equal(size, inPlace[0], "Allreduce in place");
        var b = new int[5];
        if (rank == size - 1)
            for (int i = 0; i < b.Length; i++)
                b[i] = 40 + i;
        world.Bcast(b, size - 1);
        Check.True(b.SequenceEqual(Enumerable.Range(40, 5)), "Bcast");
        var all = world.Rank == 0 ? Enumerable.Range(0, 2 * size).ToArray() : null;
        var part = new int[2];
        world.Scatter(all ?? new int[0], part, 0);
        Check.True(part[0] == 2 * rank && part[1] == 2 * rank + 1, "Scatter");
        var back = new int[rank == 0 ? 2 * size : 0];
        world.Gather(part, rank == 0 ? back : new int[0], 0);
        if (rank == 0)
            Check.True(back.SequenceEqual(Enumerable.Range(0, 2 * size)), "Gather");
        var gathered = new int[size];
        world.Allgather(new[] { rank * 3 }, gathered);
        Check.True(gathered.SequenceEqual(Enumerable.Range(0, size).Select(r => r * 3)),
                   "Allgather");
        var scan = new int[1];
        world.Scan(new[] { rank + 1 }, scan, Op.Sum);
        Check.Equal((rank + 1) * (rank + 2) / 2, scan[0], "Scan");
        var red = new int[1];
        world.Reduce(new[] { rank }, red, Op.Sum, 0);
        if (rank == 0)
            Check.Equal(size * (size - 1) / 2, red[0], "Reduce");
        var to = Enumerable.Range(0, size).Select(r => rank * 100 + r).ToArray();
        var from = new int[size];
        world.Alltoall(to, from);
        Check.True(from.SequenceEqual(Enumerable.Range(0, size).Select(r => r * 100 + rank)),
                   "Alltoall");
        // receive arrays shorter than the root's: the receivers report it, as with MPI's Bcast
        if (size > 1) {
            var buf = new int[rank == 0 ? 8 : 4];
            MPException e = null;
            try {
                world.Bcast(buf, 0);
            } catch (MPException x) {
                e = x;
            }
            Check.True(rank == 0 || e != null, "a receiving rank reports the truncated broadcast");
        }
        world.Barrier();
        Check.Equal(size, world.Allreduce(1, Op.Sum), "usable afterwards");
    }

    static void Arrays(bool over)
    {
        using (var s = new Scheduler(world))
        {
            Check.Equal(over, s.Oversubscribed, "Scheduler.Oversubscribed is the core's measure");
            Hopper.N = 2 * size;
            var a = ObjectArray<int, Hopper>.Create(s, Enumerable.Range(0, Hopper.N),
                                                    i => new Hopper());
            if (rank == 0)
                a.Send(0, nameof(Hopper.Hit), 50);
            s.Run();
            long hits = a.LocalElements.Sum(h => (long)h.Hits);
            Check.Equal(51L, world.Allreduce(hits, Op.Sum),
                        "a chain of 51 element messages through an idle job");
        }
    }
}

public class Hopper : Element<int>
{
    public static int N;
    public int Hits;

    [EntryMethod]
    public void Hit(int hops)
    {
        Hits++;
        if (hops > 0)
            Send((Index + 1) % N, nameof(Hit), hops - 1);
    }
}

// UserOpStressTest — C# reduction operators that allocate and collect inside MPI, in Allreduce on
// the main thread, while other threads of the same rank do point-to-point on communicators of
// their own (blocking and non-blocking sends and receives completed by Wait, Test loops and
// Iprobe loops), one thread forces collections, and one creates and frees operators it never
// uses, between exchanges of its own. The main thread creates each operator just before its
// reductions and frees it after, so stretches where no operator exists (MPI called GC-unsafe)
// alternate with stretches where one does, and an operator is used the moment it exists. Every
// reduction and every message is checked exactly; a deadlock fails the test by its timeout.
// Debian's MPICH holds no lock while an operator runs: only under tests/c/global_lock_shim.c
// (the _global_lock variants) does a break of the rule in gc_hooks.h deadlock.
//   UserOpStressTest.exe [reductions] [p2p-rounds] [ops-made]
using System;
using System.Collections.Generic;
using System.MP;
using System.Threading;

static class UserOpStressTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, size = Ring.Size, next = Ring.Next, prev = Ring.Prev;
    static int opCalls;
    static object[] kept = new object[64];   // some of the operators' garbage survives a while

    struct Best
    {
        public long Value;
        public int Rank;
    }

    // Garbage, and now and then a collection, from inside MPI.
    static void Allocate(long seed)
    {
        int n = Interlocked.Increment(ref opCalls);
        var junk = new long[1 + (int)(seed & 15)];
        junk[0] = seed;
        kept[n & 63] = junk;
        if (n % 20000 == 0)
            GC.Collect();
        else if (n % 1000 == 0)
            GC.Collect(0);
    }

    static long Element(int from, int it, int i) => from * 1000003L + it * 31L + i;

    // Reductions with operators made for them and freed after (Sum on long, a non-commutative
    // "first maximum" on a struct); the element counts reach the large-object space.
    static void Reductions(int count, ref int bad)
    {
        var lengths = new[] { 1, 5, 64, 300, 1200 };
        int tri = size * (size - 1) / 2;
        for (int it = 0; it < count; it++) {
            int n = lengths[it % lengths.Length];
            if (it % 3 != 2) {
                Op sum = Op.Create<long>((a, b) =>
                                         {
                                             Allocate(a);
                                             return a + b;
                                         });
                for (int use = 0; use < 1 + it % 2; use++) {
                    var send = new long[n];
                    for (int i = 0; i < n; i++)
                        send[i] = Element(rank, it + use, i);
                    var got = new long[n];
                    world.Allreduce(send, got, sum);
                    for (int i = 0; i < n; i++)
                        if (got[i] != size * (Element(0, it + use, i)) + 1000003L * tri) {
                            bad++;
                            break;
                        }
                }
                sum.Dispose();
            } else {
                Op first = Op.Create<Best>(
                    (a, b) =>
                    {
                        Allocate(b.Value);
                        return b.Value > a.Value ? b : a;
                    },
                    false);
                var send = new Best[n];
                for (int i = 0; i < n; i++)
                    send[i] = new Best { Value = (i + it + rank) % size, Rank = rank };
                var got = new Best[n];
                world.Allreduce(send, got, first);
                for (int i = 0; i < n; i++) {
                    // the maximum is size - 1; the lowest rank holding it wins
                    int winner = ((size - 1 - i - it) % size + size) % size;
                    if (got[i].Value != size - 1 || got[i].Rank != winner) {
                        bad++;
                        break;
                    }
                }
                first.Dispose();
            }
        }
    }

    static double Value(int from, int thread, int round,
                        int i) => from * 1e9 + thread * 1e8 + round * 1e3 + i;

    // One point-to-point thread: a ring exchange per round on its own communicator, completed
    // five ways in turn. Buffers are fresh (nursery), long-lived (old) or large (LOS).
    static void PointToPoint(Intracomm comm, int thread, int rounds, ref int bad)
    {
        var lengths = new[] { 1, 13, 200, 1100, 9000 };
        var old = new Dictionary<int, double[]>();
        foreach (int n in lengths)
            old[n] = new double[n];
        for (int round = 0; round < rounds; round++) {
            int n = lengths[round % lengths.Length], tag = round % 1000;
            var send = new double[n];
            for (int i = 0; i < n; i++)
                send[i] = Value(rank, thread, round, i);
            double[] recv = round % 2 == 0 ? new double[n] : old[n];
            Status st = null;
            switch (round % 5) {
            case 0: {   // blocking send to a posted receive
                Request r = comm.Irecv(recv, prev, tag);
                comm.Send(send, next, tag);
                st = r.Wait();
                break;
            }
            case 1: {   // blocking receive
                Request s = comm.Isend(send, next, tag);
                st = comm.Recv(recv, prev, tag);
                s.Wait();
                break;
            }
            case 2: {   // Test loops
                Request r = comm.Irecv(recv, prev, tag);
                Request s = comm.Isend(send, next, tag);
                Status unused;
                while (!r.Test(out st)) { }
                while (!s.Test(out unused)) { }
                break;
            }
            case 3: {   // an Iprobe loop, then the receive
                Request s = comm.Isend(send, next, tag);
                Status probed;
                while ((probed = comm.Iprobe(prev, tag)) == null) { }
                if (probed.Bytes != 8L * n)
                    bad++;
                st = comm.Recv(recv, prev, tag);
                s.Wait();
                break;
            }
            default: st = comm.Sendrecv(send, next, tag, recv, prev, tag); break;
            }
            if (st.Count != n || st.Source != prev)
                bad++;
            for (int i = 0; i < n; i++)
                if (recv[i] != Value(prev, thread, round, i)) {
                    bad++;
                    break;
                }
        }
    }

    // Operators created and freed while the others communicate, one per round of a small ring
    // exchange of this thread's own; every fourth is left to the finalizer.
    static void MakeOps(Intracomm comm, int rounds, ref int bad)
    {
        for (int round = 0; round < rounds; round++) {
            Op op = Op.Create<int>((a, b) => a ^ b);
            Request s = comm.Isend(new[] { rank, round }, next, round % 1000);
            var got = new int[2];
            comm.Recv(got, prev, round % 1000);
            s.Wait();
            if (got[0] != prev || got[1] != round)
                bad++;
            if (round % 4 != 3)
                op.Dispose();
        }
    }

    static Thread Start(string name, Action body, Exception[] failures, int slot)
    {
        ThreadStart run = () =>
        {
            try {
                body();
            } catch (Exception e) {
                failures[slot] = e;
            }
        };
        var t = new Thread(run) { Name = name };
        t.Start();
        return t;
    }

    static int Main(string[] args)
    {
        // the defaults suit 2 ranks; beyond, the same total work (oversubscribed ranks share
        // the cores)
        int share = Math.Max(2, world.Size);
        int reductions = args.Length > 0 ? int.Parse(args[0]) : 300 * 2 / share;
        int rounds = args.Length > 1 ? int.Parse(args[1]) : 600 * 2 / share;
        int opsMade = args.Length > 2 ? int.Parse(args[2]) : 2000 * 2 / share;
        Check.Equal(3, MP.ThreadLevel, "MPI_THREAD_MULTIPLE granted");
        var comms = new[] { world.Dup(), world.Dup(), world.Dup() };
        MPStats before = MP.Stats;
        var failures = new Exception[4];
        int badMessages0 = 0, badMessages1 = 0, badMessages2 = 0, badReductions = 0;
        var churn = new HeapChurn(rank + 11, 1000, 16, 500, 3, 20000, 10, 2);
        var churnThread = Start("churn", churn.Run, failures, 3);
        var workers = new[] {
            Start("p2p-0", () => PointToPoint(comms[0], 0, rounds, ref badMessages0), failures, 0),
            Start("p2p-1", () => PointToPoint(comms[1], 1, rounds, ref badMessages1), failures, 1),
            Start("ops", () => MakeOps(comms[2], opsMade, ref badMessages2), failures, 2),
        };
        try {
            Reductions(reductions, ref badReductions);
        } catch (Exception e) {
            Check.True(false, "reductions: " + e);
        }
        foreach (Thread t in workers)
            t.Join();
        churn.Stop();
        churnThread.Join();
        for (int i = 0; i < failures.Length; i++)
            Check.True(failures[i] == null, $"thread {i} failed: {failures[i]}");
        Check.Equal(0, badReductions, "every reduction exact");
        Check.Equal(0, badMessages0 + badMessages1 + badMessages2, "every message intact");
        foreach (Intracomm c in comms)
            c.Dispose();
        GC.Collect();
        GC.WaitForPendingFinalizers();   // the operators left to the finalizer are freed
        MPStats after = MP.Stats;
        Check.True(after.Collections - before.Collections > 0, "collections happened");
        Check.True(world.Allreduce(opCalls, Op.Sum) > 0, "the operators ran");
        Console.WriteLine(
            $"rank {rank}: {reductions} reductions ({opCalls} operator calls), {2 * rounds} " +
            $"exchanges, {opsMade} operators made, {after.Collections - before.Collections} " +
            "collections");
        return Check.FinishWithNoPinLeft("UserOpStressTest");
    }
}

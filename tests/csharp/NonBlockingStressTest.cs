// NonBlockingStressTest — many non-blocking transfers in flight into nursery, old and large
// arrays while a second thread fragments the old generation and forces minor and major
// collections; every received element is checked. Then a long run (default 10^5 non-blocking
// operations, collections in between) must end with no live pin, no pending request and a
// stable heap and resident size.
//   NonBlockingStressTest.exe [stress-rounds] [long-run-operations]
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.MP;
using System.Runtime.CompilerServices;
using System.Threading;

static class NonBlockingStressTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, next = Ring.Next, prev = Ring.Prev;
    const int InFlight = 24;

    static double Value(int from, int round, int slot,
                        int i) => from * 1e9 + round * 1e5 + slot * 1e3 + i;

    static long RssKib()
    {
        string line = File.ReadAllLines("/proc/self/status").First(l => l.StartsWith("VmRSS:"));
        return long.Parse(line.Substring(6).Trim().Split(' ')[0]);
    }

    static int Main(string[] args)
    {
        // the defaults suit 2 ranks; beyond, the same total work (oversubscribed ranks share
        // the cores)
        int share = Math.Max(2, MP.World.Size);
        int rounds = args.Length > 0 ? int.Parse(args[0]) : 300 * 2 / share;
        int longOps = args.Length > 1 ? int.Parse(args[1]) : 100000 * 2 / share;

        // old-generation receive buffers: allocated first, then promoted by the churn's majors
        var oldBuffers =
            Enumerable.Range(0, InFlight).Select(i => new double[50 + 17 * i]).ToArray();
        GC.Collect();
        GC.Collect();
        var churn = new HeapChurn(rank + 7, 400, 16, 600, 3, 30000, 5, 2).Start();
        MPStats before = MP.Stats;
        long bytesVerified = 0, operations = 0;
        int bad = 0;
        var requests = new Request[2 * InFlight];
        for (int round = 0; round < rounds; round++) {
            // clang-format off
            var buffers = new double[InFlight][];
            // clang-format on
            for (int slot = 0; slot < InFlight; slot++) {
                int kind = (slot + round) % 3;   // 0 nursery, 1 old, 2 large (LOS)
                buffers[slot] = kind == 0   ? new double[1 + slot * 31]
                                : kind == 1 ? oldBuffers[slot]
                                            : new double[1100 + slot * 50];
                requests[slot] = world.Irecv(buffers[slot], prev, round % 1000 * 100 + slot);
            }
            for (int slot = 0; slot < InFlight; slot++) {
                int n = buffers[slot].Length;   // same shape on every rank for this (round, slot)
                var send = new double[n];
                for (int i = 0; i < n; i++)
                    send[i] = Value(rank, round, slot, i);
                requests[InFlight + slot] = world.Isend(send, next, round % 1000 * 100 + slot);
            }
            operations += 2 * InFlight;
            // complete them in different ways: WaitAll, Test polling, WaitAny, and late Waits
            // after a collection (some pins then go to the GC hook)
            switch (round % 4) {
            case 0: Request.WaitAll(requests); break;
            case 1:
                foreach (var r in requests) {
                    Status s;
                    while (!r.Test(out s)) { }
                }
                break;
            case 2:
                while (Request.WaitAny(requests) != MP.Undefined) { }
                break;
            default:
                for (int i = 0; i < 50; i++) {
                    var g = new byte[2000];
                    g[0] = 1;
                }
                GC.Collect(0);
                Request.WaitAll(requests);
                break;
            }
            for (int slot = 0; slot < InFlight; slot++) {
                double[] b = buffers[slot];
                for (int i = 0; i < b.Length; i++)
                    if (b[i] != Value(prev, round, slot, i)) {
                        bad++;
                        break;
                    }
                bytesVerified += 8L * b.Length;
            }
        }
        churn.Stop();
        world.Barrier();
        GC.Collect();
        MPStats mid = MP.Stats;
        Check.Equal(0, bad, "every buffer intact under churn");
        Check.True(mid.Collections - before.Collections >= rounds / 3,
                   "collections ran during the transfers");
        Check.Equal(0L, mid.PinsLive, "no live pins after the stress");
        Check.Equal(0L, mid.PendingRequests, "no pending requests after the stress");
        Console.WriteLine(
            $"rank {rank}: stress {operations} non-blocking ops, {bytesVerified} bytes verified, " +
            $"{mid.Collections - before.Collections} collections, pins taken " +
            $"{mid.PinsTaken - before.PinsTaken}, avoided " +
            $"{mid.PinsAvoided - before.PinsAvoided}, released by GC " +
            $"{mid.PinsReleasedByGC - before.PinsReleasedByGC}");

        // long run
        var recv = Enumerable.Range(0, 8).Select(i => new int[1 + i * 100]).ToArray();
        var send8 = Enumerable.Range(0, 8).Select(i => new int[1 + i * 100]).ToArray();
        var reqs = new Request[16];
        long done = 0, rssAtTenth = 0, heapAtTenth = 0;
        int lost = 0;
        for (long round = 0; done < longOps; round++) {
            if (round % 2 == 1)   // every other round into fresh (nursery) buffers
                for (int i = 0; i < 8; i++)
                    recv[i] = new int[recv[i].Length];
            for (int i = 0; i < 8; i++)
                reqs[i] = world.Irecv(recv[i], prev, i);
            for (int i = 0; i < 8; i++) {
                send8[i][0] = (int)round;
                reqs[8 + i] = world.Isend(send8[i], next, i);
            }
            Request.WaitAll(reqs);
            for (int i = 0; i < 8; i++)
                if (recv[i][0] != (int)round)
                    lost++;
            done += 16;
            if (round % 10 == 0)
                GC.Collect(0);
            if (round % 100 == 0)
                GC.Collect();
            if (rssAtTenth == 0 && done >= longOps / 10) {
                GC.Collect();
                heapAtTenth = GC.GetTotalMemory(true);
                rssAtTenth = RssKib();
            }
        }
        world.Barrier();
        GC.Collect();
        long heapEnd = GC.GetTotalMemory(true), rssEnd = RssKib();
        MPStats end = MP.Stats;
        Check.Equal(0, lost, "long run: every message arrived");
        Check.Equal(0L, end.PinsLive, "long run: no live pins");
        Check.Equal(0L, end.PendingRequests, "long run: no pending requests");
        Check.Equal(end.PinsTaken, end.PinsReleasedByWait + end.PinsReleasedByGC,
                    "long run: every pin released");
        Check.True(
            heapEnd < heapAtTenth + (4 << 20),
            $"long run: managed heap stable ({heapAtTenth / 1024} KiB -> {heapEnd / 1024} KiB)");
        Check.True(rssEnd < rssAtTenth + 16 * 1024,
                   $"long run: resident size stable ({rssAtTenth} KiB -> {rssEnd} KiB)");
        Console.WriteLine(
            $"rank {rank}: long run {done} non-blocking ops, {end.Collections - mid.Collections} " +
            $"collections, pins taken {end.PinsTaken - mid.PinsTaken}, avoided " +
            $"{end.PinsAvoided - mid.PinsAvoided}, released by wait " +
            $"{end.PinsReleasedByWait - mid.PinsReleasedByWait}, by GC " +
            $"{end.PinsReleasedByGC - mid.PinsReleasedByGC}, live {end.PinsLive}, heap " +
            $"{heapAtTenth / 1024}->{heapEnd / 1024} KiB, RSS {rssAtTenth}->{rssEnd} KiB");
        return Check.Finish("NonBlockingStressTest");
    }
}

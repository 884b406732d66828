// WorkStealing — dynamic load balancing with one-sided communication (System.MP.Window): N work
// items of very uneven cost (the first quarter costs 20x the rest), handed out two ways.
//   counter: one shared counter on rank 0; every rank takes the next chunk of items with
//            FetchAndOp(chunk, 0, 0, Op.Sum) inside a LockAll epoch (self-scheduling).
//   steal:   every rank starts with its own block of items, as a queue [head, tail) packed in one
//            long on that rank (head in the high 32 bits, tail in the low 32); the owner takes
//            chunks from the head and, once its queue is empty, steals half of a victim's
//            remaining items from the tail, each move one CompareAndSwap of the packed word, so
//            an item is taken exactly once without any lock.
// Each item's result is a 64-bit hash of its index after cost(i) rounds; the ranks' results are
// summed (wrapping) and counted. --verify compares both with a serial computation (exit 1 if
// not). Prints items per rank, steals, and time per mode.
//   mpiexec.mpich -n 4 build/motor build/WorkStealing.exe [--items 2000] [--chunk 4]
//   [--mode counter|steal|both] [--verify]
using System;
using System.Diagnostics;
using System.MP;

static class WorkStealing
{
    static Intracomm world = MP.World;
    static int rank = world.Rank, size = world.Size;

    static int Cost(int i, int items) => i < items / 4 ? 40000 : 2000;

    /// <summary>The work of item i: cost(i) rounds of a 64-bit mix of its index.</summary>
    static ulong Work(int i, int items)
    {
        ulong h = (ulong)i * 0x9E3779B97F4A7C15ul + 1;
        for (int r = Cost(i, items); r > 0; r--) {
            h ^= h >> 33;
            h *= 0xff51afd7ed558ccdul;
            h ^= h >> 29;
        }
        return h;
    }

    struct Tally
    {
        public ulong Sum;
        public long Count, Steals;
    }

    static Tally Counter(int items, int chunk)
    {
        var t = new Tally();
        long[] next = rank == 0 ? new long[1] : null;
        using (Window win = Window.Create(world, next))
        {
            win.LockAll();
            for (;;) {
                long first = win.FetchAndOp((long)chunk, 0, 0, Op.Sum);
                if (first >= items)
                    break;
                long end = Math.Min(first + chunk, items);
                for (long i = first; i < end; i++) {
                    t.Sum += Work((int)i, items);
                    t.Count++;
                }
            }
            win.UnlockAll();
        }
        return t;
    }

    static long Pack(long head, long tail) => (head << 32) | tail;
    static long Head(long q) => q >> 32;
    static long Tail(long q) => q & 0xffffffffL;

    /// <summary>Takes up to n items from the head of rank r's queue (owner) or half of what is
    /// left from its tail (thief, n = 0); returns [first, end), empty when none.</summary>
    static void Take(Window win, int r, int n, out long first, out long end)
    {
        long seen = win.FetchAndOp(0L, r, 0, Op.NoOp);
        for (;;) {
            long head = Head(seen), tail = Tail(seen);
            first = end = 0;
            if (head >= tail)
                return;
            long wanted;
            if (n > 0) {
                first = head;
                end = Math.Min(head + n, tail);
                wanted = Pack(end, tail);
            } else {
                first = tail - (tail - head + 1) / 2;
                end = tail;
                wanted = Pack(head, first);
            }
            long was = win.CompareAndSwap(wanted, seen, r, 0);
            if (was == seen)
                return;
            seen = was;   // another rank moved it: try again with what it left
        }
    }

    static Tally Steal(int items, int chunk)
    {
        var t = new Tally();
        long per = (items + size - 1) / size;
        long mine0 = Math.Min(rank * per, items), mine1 = Math.Min(mine0 + per, items);
        var queue = new long[] { Pack(mine0, mine1) };
        using (Window win = Window.Create(world, queue))
        {
            world.Barrier();   // every queue is filled before anyone steals
            win.LockAll();
            var random = new Random(rank + 1);
            int victim = rank, misses = 0;
            while (misses < 2 * size) {
                long first, end;
                Take(win, victim, victim == rank ? chunk : 0, out first, out end);
                if (first == end) {
                    misses++;
                    victim = misses < size ? (rank + misses) % size : random.Next(size);
                    continue;
                }
                if (victim != rank) {
                    t.Steals++;
                    // the stolen items go into this rank's own queue, for others to steal too
                    long empty = win.FetchAndOp(0L, rank, 0, Op.NoOp);
                    if (Head(empty) >= Tail(empty) &&
                        win.CompareAndSwap(Pack(first, end), empty, rank, 0) == empty) {
                        victim = rank;
                        misses = 0;
                        continue;
                    }
                }
                misses = 0;
                for (long i = first; i < end; i++) {
                    t.Sum += Work((int)i, items);
                    t.Count++;
                }
            }
            win.UnlockAll();
            world.Barrier();   // nobody reads a queue any more
        }
        return t;
    }

    static int Main(string[] args)
    {
        int items = 2000, chunk = 4;
        string mode = "both";
        bool verify = false;
        for (int a = 0; a < args.Length; a++) {
            switch (args[a]) {
            case "--items": items = int.Parse(args[++a]); break;
            case "--chunk": chunk = int.Parse(args[++a]); break;
            case "--mode": mode = args[++a]; break;
            case "--verify": verify = true; break;
            default: Console.Error.WriteLine("unknown argument " + args[a]); return 2;
            }
        }
        ulong serial = 0;
        if (verify && rank == 0)
            for (int i = 0; i < items; i++)
                serial += Work(i, items);
        bool ok = true;
        foreach (string m in new[] { "counter", "steal" }) {
            if (mode != "both" && mode != m)
                continue;
            world.Barrier();
            var clock = Stopwatch.StartNew();
            Tally t = m == "counter" ? Counter(items, chunk) : Steal(items, chunk);
            double seconds = clock.Elapsed.TotalSeconds;
            long[] counts = world.Gather(t.Count, 0);
            long[] steals = world.Gather(t.Steals, 0);
            ulong sum = (ulong)world.Reduce((long)t.Sum, Op.Sum, 0);
            double slowest = world.Reduce(seconds, Op.Max, 0);
            if (rank != 0)
                continue;
            long total = 0;
            foreach (long c in counts)
                total += c;
            Console.WriteLine(
                $"{m}: {items} items, chunk {chunk}, {size} rank(s): {slowest:F3} s; " +
                $"items per rank {string.Join(" ", counts)}; steals " +
                $"{string.Join(" ", steals)}; checksum {sum:x16}");
            if (verify) {
                bool right = total == items && sum == serial;
                Console.WriteLine($"{m}: verify {(right ? "OK" : "FAILED")} (count {total}, " +
                                  $"serial checksum {serial:x16})");
                ok &= right;
            }
        }
        int good = world.Allreduce(ok ? 1 : 0, Op.Min);
        return good == 1 ? 0 : 1;
    }
}

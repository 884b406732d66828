// ObjectArrays — System.MP.Arrays on an irregular problem: a 2-D diffusion stencil over B×B
// blocks, one migratable element per block, halos exchanged through entry methods; the north band
// of blocks costs tenfold (12 sweeps a step against 1; with the halo work every block does once a
// step, a heavy block's step measures ~10× a light one's, printed as "contrast") and Block
// placement puts it on the first rank(s). Runs P phases
// without, then with array.Balance() between phases; prints time per phase, blocks per rank and a
// checksum that must be bit-identical both ways (--verify: against a serial run too; exit 1 if
// not).
//   mpiexec.mpich -n 4 build/motor build/ObjectArrays.exe [--balance|--no-balance] [--verify]
//   [--blocks 8] ...
using System;
using System.Collections.Generic;
using System.MP;
using System.MP.Arrays;
using System.Threading;

/// <summary>One halo edge: the values a block needs along Side (as the receiver sees it)
/// for Step.</summary>
public sealed class Halo
{
    public int Step, Side;
    [Transportable]
    public double[] Values;
}

/// <summary>What the blocks report at the end, one slot per block: combined by adding slots, so
/// the result is exact whatever order the reduction tree combines the contributions in (a
/// floating-point sum over blocks in arrival order would not be reproducible).</summary>
public sealed class Summary
{
    [Transportable]
    public long[] SumBits, Hash, Steps, Updates, Halos;
    public long Errors, Moves;

    public Summary() { }

    public Summary(int blocks)
    {
        SumBits = new long[blocks];
        Hash = new long[blocks];
        Steps = new long[blocks];
        Updates = new long[blocks];
        Halos = new long[blocks];
    }

    public static Summary Combine(Summary a, Summary b)
    {
        var c = new Summary(
            a.SumBits.Length) { Errors = a.Errors + b.Errors, Moves = a.Moves + b.Moves };
        for (int i = 0; i < c.SumBits.Length; i++) {
            unchecked
            {   // each slot is non-zero in one contribution only: x + 0 is exact
                c.SumBits[i] = a.SumBits[i] + b.SumBits[i];
                c.Hash[i] = a.Hash[i] + b.Hash[i];
            }
            c.Steps[i] = a.Steps[i] + b.Steps[i];
            c.Updates[i] = a.Updates[i] + b.Updates[i];
            c.Halos[i] = a.Halos[i] + b.Halos[i];
        }
        return c;
    }

    /// <summary>The grid's sum, added block by block in index order: the same in
    /// every run.</summary>
    public double GridSum()
    {
        double sum = 0;
        foreach (long bits in SumBits)
            sum += BitConverter.Int64BitsToDouble(bits);
        return sum;
    }

    /// <summary>A hash of every bit of every cell, blocks in index order.</summary>
    public ulong GridHash()
    {
        ulong h = 14695981039346656037UL;
        foreach (long x in Hash)
            unchecked { h = (h ^ (ulong)x) * 1099511628211UL; }
        return h;
    }

    public bool SameGrid(Summary o)
    {
        for (int i = 0; i < SumBits.Length; i++)
            if (SumBits[i] != o.SumBits[i] || Hash[i] != o.Hash[i])
                return false;
        return true;
    }
}

/// <summary>The numerics, shared by the elements and the serial reference of --verify, so both
/// do the same floating-point operations in the same order.</summary>
static class Kernel
{
    // κ·dt/h² per (sub-)step: explicit stability needs ≤ 1/4
    public const double Alpha = 0.2;

    // Sides: 0 north (row 0 of the padded block), 1 south, 2 west, 3 east; the neighbour across
    // side s receives our edge on its side s ^ 1.
    public static int Neighbour(int index, int side, int b)
    {
        int bx = index % b, by = index / b;
        switch (side) {
        case 0: by = (by + b - 1) % b; break;
        case 1: by = (by + 1) % b; break;
        case 2: bx = (bx + b - 1) % b; break;
        default: bx = (bx + 1) % b; break;
        }
        return by * b + bx;
    }

    /// <summary>A block's initial field (n×n inside a halo ring of width 1), from
    /// global coordinates.</summary>
    public static double[] Initial(int index, int b, int n)
    {
        int w = n + 2, bx = index % b, by = index / b, size = b * n;
        var u = new double[w * w];
        for (int i = 1; i <= n; i++)
            for (int j = 1; j <= n; j++) {
                int gx = bx * n + j - 1, gy = by * n + i - 1;
                double dx = gx - 0.3 * size, dy = gy - 0.6 * size;
                u[i * w + j] = ((gx * 73 + gy * 151) % 1009) / 1009.0 +
                               (dx * dx + dy * dy < 0.01 * size * size ? 10 : 0);
            }
        return u;
    }

    /// <summary>Copies this block's edge on side into edge (n values).</summary>
    public static void Edge(double[] u, int n, int side, double[] edge)
    {
        int w = n + 2;
        for (int k = 0; k < n; k++) {
            switch (side) {
            case 0: edge[k] = u[w + 1 + k]; break;
            case 1: edge[k] = u[n * w + 1 + k]; break;
            case 2: edge[k] = u[(k + 1) * w + 1]; break;
            default: edge[k] = u[(k + 1) * w + n]; break;
            }
        }
    }

    /// <summary>Puts the 4 halos (pending[offset + side·n ..]) into u's ring.</summary>
    public static void Install(double[] u, int n, double[] pending, int offset)
    {
        int w = n + 2;
        for (int k = 0; k < n; k++) {
            u[1 + k] = pending[offset + k];
            u[(n + 1) * w + 1 + k] = pending[offset + n + k];
            u[(k + 1) * w] = pending[offset + 2 * n + k];
            u[(k + 1) * w + n + 1] = pending[offset + 3 * n + k];
        }
    }

    /// <summary>One step of a block: substeps explicit sweeps with the halos held fixed. Returns
    /// the array that holds the result (u or v: they swap roles each sweep).</summary>
    public static double[] Step(double[] u, double[] v, int n, double[] pending, int offset,
                                int substeps)
    {
        Install(u, n, pending, offset);
        // v's ring is read only from the second sweep on
        if (substeps > 1)
            Install(v, n, pending, offset);
        int w = n + 2;
        for (int s = 0; s < substeps; s++) {
            for (int i = 1; i <= n; i++) {
                int row = i * w;
                for (int j = 1; j <= n; j++) {
                    int k = row + j;
                    double c = u[k];
                    v[k] = c + Alpha * (u[k - w] + u[k + w] + u[k - 1] + u[k + 1] - 4 * c);
                }
            }
            double[] t = u;
            u = v;
            v = t;
        }
        return u;
    }

    public static void Describe(double[] u, int n, out long sumBits, out long hash)
    {
        int w = n + 2;
        double sum = 0;
        ulong h = 14695981039346656037UL;
        for (int i = 1; i <= n; i++)
            for (int j = 1; j <= n; j++) {
                sum += u[i * w + j];
                unchecked
                {
                    h = (h ^ (ulong)BitConverter.DoubleToInt64Bits(u[i * w + j])) * 1099511628211UL;
                }
            }
        sumBits = BitConverter.DoubleToInt64Bits(sum);
        hash = unchecked((long)h);
    }
}

/// <summary>One block of the grid. It advances from step t to t+1 once its 4 halos for t have
/// arrived; a neighbour can be one step ahead (it needed only our halo for t to finish t), so
/// halos are buffered for two steps, by parity.</summary>
public sealed class Block : Element<int>
{
    // the run's configuration: set identically on every rank before the array is created
    public static int B, N, Cost, HeavyRows, Ranks;
    public static bool Wander;
    public static Reduction<Summary> Total;

    public int Step, EndStep, Updates, Halos, Errors, Moves;
    [Transportable]
    public double[] U;   // the field with its halo ring: travels with the block
    [Transportable]
    public double[] Pending;   // [step parity][side][N]
    [Transportable]
    public int[] Got;   // sides received, a bit each, per step parity
    double[] scratch;   // unmarked: left behind on a move, rebuilt on demand
    Halo outgoing;

    public static bool Heavy(int index) => index / B < HeavyRows;

    public static Block Make(int index) => new Block { U = Kernel.Initial(index, B, N),
                                                       Pending = new double[8 * N],
                                                       Got = new int[2] };

    /// <summary>Start of a phase (a broadcast): run up to endStep.</summary>
    [EntryMethod]
    public void Phase(int endStep)
    {
        EndStep = endStep;
        if (Step < EndStep)
            SendHalos();
        TryAdvance();
    }

    [EntryMethod]
    public void Take(Halo h)
    {
        // A halo for any step but this one or the next, or twice for one side, would be a lost
        // or duplicated message: count it, the run reports it.
        if (h == null || h.Values == null || h.Values.Length != N || h.Side < 0 || h.Side > 3 ||
            (h.Step != Step && h.Step != Step + 1) || h.Step > EndStep) {
            Errors++;
            return;
        }
        int slot = h.Step & 1, bit = 1 << h.Side;
        if ((Got[slot] & bit) != 0) {
            Errors++;
            return;
        }
        Array.Copy(h.Values, 0, Pending, (slot * 4 + h.Side) * N, N);
        Got[slot] |= bit;
        Halos++;
        TryAdvance();
    }

    /// <summary>End of the run: this block's slot of the summary.</summary>
    [EntryMethod]
    public void Report()
    {
        var s = new Summary(B * B) { Errors = Errors, Moves = Moves };
        Kernel.Describe(U, N, out s.SumBits[Index], out s.Hash[Index]);
        s.Steps[Index] = Step;
        s.Updates[Index] = Updates;
        s.Halos[Index] = Halos;
        Contribute(Total, s);
    }

    void TryAdvance()
    {
        bool advanced = false;
        while (Step < EndStep && Got[Step & 1] == 15) {
            int slot = Step & 1;
            if (scratch == null)
                scratch = new double[U.Length];
            double[] result =
                Kernel.Step(U, scratch, N, Pending, slot * 4 * N, Heavy(Index) ? Cost : 1);
            if (result != U) {
                scratch = U;
                U = result;
            }
            Got[slot] = 0;
            Step++;
            Updates++;
            advanced = true;
            if (Step < EndStep)
                SendHalos();
        }
        // --verify: blocks also move by themselves in the middle of a phase, their halos in flight
        if (advanced && Wander && Ranks > 1 && (Step + Index) % 3 == 0)
            MigrateTo((Rank + 1 + Index % (Ranks - 1)) % Ranks);
    }

    void SendHalos()
    {
        if (outgoing == null)
            outgoing = new Halo { Values = new double[N] };
        outgoing.Step = Step;
        for (int side = 0; side < 4; side++) {
            Kernel.Edge(U, N, side, outgoing.Values);
            outgoing.Side = side ^ 1;
            // copied during the call
            Send(Kernel.Neighbour(Index, side, B), nameof(Take), outgoing);
        }
    }

    protected override void OnMigrated() { Moves++; }
}

sealed class Config
{
    // 400×400 cells a block: a light block's step (~0.2 ms) dwarfs its four halo messages (a few
    // µs each), as in a real stencil. With small blocks the messages flatten the tenfold contrast:
    // at 160×160 a heavy block measures ~7× a light one, and the most balancing can gain shrinks.
    // Cost: a heavy block's sweeps per step (a light one does 1). Each step also costs every block
    // its halos (cut, sent, received, put in place: ~0.2 of a sweep at 400×400), so 12 sweeps make
    // a heavy block's step ~10× a light one's, as measured (the tenfold contrast of the problem).
    public int Blocks = 8, BlockSize = 400, Steps = 20, Phases = 4, Cost = 12, HeavyRows = -1;
    public string Balancer = "greedy";
    // Balance only when the last phase's measured load was uneven: max/mean rank load above this
    // (moving 1.3 MB blocks costs a fraction of a phase; a balanced run should not pay it again).
    public double Tolerance = 1.10;
    public int HeavyRowsOrDefault => HeavyRows >= 0 ? HeavyRows : Math.Max(1, Blocks / 4);
}

sealed class Outcome
{
    public Summary Summary;
    public double[] PhaseTimes;
    public double BalanceTime, Total;
}

static class ObjectArrays
{
    static readonly Intracomm world = MP.World;
    static readonly int rank = world.Rank, size = world.Size;

    static void Say(string text)
    {
        if (rank == 0)
            Console.WriteLine(text);
    }

    /// <summary>A user balancer that keeps neighbours together: the blocks in index order (bands of
    /// rows) cut into one contiguous piece of equal measured load per rank.</summary>
    static int[] Contiguous(IList<ElementLoad<int>> loads, int ranks)
    {
        var order = new int[loads.Count];
        double total = 0;
        for (int i = 0; i < order.Length; i++) {
            order[i] = i;
            total += loads[i].Load;
        }
        Array.Sort(order, (x, y) => loads[x].Index.CompareTo(loads[y].Index));
        var result = new int[loads.Count];
        double before = 0;
        for (int k = 0; k < order.Length; k++) {
            double load = loads[order[k]].Load;
            double mid = total > 0 ? (before + load / 2) / total : (k + 0.5) / order.Length;
            result[order[k]] = Math.Min(ranks - 1, (int)(mid * ranks));
            before += load;
        }
        return result;
    }

    /// <summary>--verify: every block to the next rank, so every block moves.</summary>
    static int[] Rotate(IList<ElementLoad<int>> loads, int ranks)
    {
        var result = new int[loads.Count];
        for (int i = 0; i < result.Length; i++)
            result[i] = (loads[i].Rank + 1) % ranks;
        return result;
    }

    /// <summary>One run: create the array (Block placement), P phases of S steps, balancing
    /// between phases as mode says (none, greedy, contiguous, rotate, wander).</summary>
    static Outcome RunOnce(Config c, string mode, bool print)
    {
        Block.B = c.Blocks;
        Block.N = c.BlockSize;
        Block.Cost = c.Cost;
        Block.HeavyRows = c.HeavyRowsOrDefault;
        Block.Ranks = size;
        Block.Wander = mode == "wander";
        int blocks = c.Blocks * c.Blocks;
        var indices = new List<int>();
        for (int i = 0; i < blocks; i++)
            indices.Add(i);
        var outcome = new Outcome { PhaseTimes = new double[c.Phases] };
        using (var s = new Scheduler(world))
        {
            var a = ObjectArray<int, Block>.Create(s, indices, Block.Make, Placement.Block);
            Block.Total = a.DefineReduction<Summary>(Summary.Combine);
            double imbalance = 0;
            for (int p = 0; p < c.Phases; p++) {
                if (p > 0 && mode != "none" && mode != "wander" && imbalance <= c.Tolerance &&
                    print)
                    Say($"  balance skipped: imbalance {imbalance:F2} <= {c.Tolerance:F2}");
                if (p > 0 && mode != "none" && mode != "wander" && imbalance > c.Tolerance) {
                    world.Barrier();
                    double tb = MP.Wtime();
                    if (mode == "greedy")
                        a.Balance();
                    else if (mode == "contiguous")
                        a.Balance(Contiguous);
                    else
                        a.Balance(Rotate);
                    tb = world.Allreduce(MP.Wtime() - tb, Op.Max);
                    outcome.BalanceTime += tb;
                    if (print)
                        Say($"  balance ({mode}): {tb:F3} s");
                }
                double loadBefore = LocalLoad(a);
                world.Barrier();
                double t0 = MP.Wtime();
                if (rank == 0)
                    a.Broadcast(nameof(Block.Phase), (p + 1) * c.Steps);
                s.Run();
                double t = world.Allreduce(MP.Wtime() - t0, Op.Max);
                outcome.PhaseTimes[p] = t;
                // the blocks stayed put during the phase (except in wander mode): their load
                // grew by what this phase cost them here
                double load = LocalLoad(a) - loadBefore;
                int heavy = 0;
                foreach (Block b in a.LocalElements)
                    if (Block.Heavy(b.Index))
                        heavy++;
                int[] counts = world.Gather(a.LocalCount, 0);
                int[] heavies = world.Gather(heavy, 0);
                // on every rank, so that all take the same decision to balance (a collective)
                double[] loads = world.Allgather(load);
                double max = 0, sum = 0;
                foreach (double x in loads) {
                    max = Math.Max(max, x);
                    sum += x;
                }
                imbalance = sum > 0 ? max * loads.Length / sum : 1;
                if (print && rank == 0)
                    Console.WriteLine(
                        $"  phase {p}: {t:F3} s ({1000 * t / c.Steps:F1} ms/step)  blocks per " +
                        $"rank: {Join(counts)}  heavy: {Join(heavies)}  measured load (s): " +
                        $"{Join(loads)}  imbalance {imbalance:F2}" +
                        Contrast(counts, heavies, loads));
            }
            if (rank == 0)
                a.Broadcast(nameof(Block.Report));
            s.Run();
            outcome.Summary = Block.Total.Result(0).Result;
        }
        foreach (double t in outcome.PhaseTimes)
            outcome.Total += t;
        outcome.Total += outcome.BalanceTime;
        return outcome;
    }

    /// <summary>A heavy block's measured load against a light one's: the least-squares fit of
    /// each rank's load as heavy·H + light·L ("" when the ranks' mixes cannot tell
    /// them apart).</summary>
    static string Contrast(int[] counts, int[] heavies, double[] loads)
    {
        double hh = 0, hl = 0, ll = 0, hy = 0, ly = 0;
        for (int r = 0; r < loads.Length; r++) {
            double h = heavies[r], l = counts[r] - heavies[r];
            hh += h * h;
            hl += h * l;
            ll += l * l;
            hy += h * loads[r];
            ly += l * loads[r];
        }
        double det = hh * ll - hl * hl;
        if (Math.Abs(det) < 1e-9 * Math.Max(1, hh * ll))
            return "";
        double heavy = (hy * ll - ly * hl) / det, light = (ly * hh - hy * hl) / det;
        return light > 0 ? $"  contrast {heavy / light:F1}x" : "";
    }

    /// <summary>This process's peak resident memory in KiB (Linux: VmHWM), or -1.</summary>
    static long PeakKib()
    {
        try {
            foreach (string line in System.IO.File.ReadAllLines("/proc/self/status"))
                if (line.StartsWith("VmHWM:"))
                    return long.Parse(line.Substring(6).Trim().Split(' ')[0]);
        } catch (System.IO.IOException) { }
        return -1;
    }

    static double LocalLoad(ObjectArray<int, Block> a)
    {
        double sum = 0;
        foreach (Block b in a.LocalElements)
            sum += b.Load;
        return sum;
    }

    static string Join(int[] v) => string.Join(" ", v);
    static string Join(double[] v)
    {
        var parts = new string[v.Length];
        for (int i = 0; i < v.Length; i++)
            parts[i] = v[i].ToString("F2");
        return string.Join(" ", parts);
    }

    static string Checksum(Summary s) => $"sum {s.GridSum():R} hash {s.GridHash():x16}";

    /// <summary>Every block did every step exactly once (and got exactly 4 halos a step).</summary>
    static string Complete(Summary s, int steps)
    {
        if (s.Errors != 0)
            return $"{s.Errors} halos came for the wrong step or twice";
        for (int i = 0; i < s.Steps.Length; i++)
            if (s.Steps[i] != steps || s.Updates[i] != steps || s.Halos[i] != 4L * steps)
                return $"block {i}: step {s.Steps[i]}, {s.Updates[i]} updates, {s.Halos[i]} " +
                       $"halos (want {steps}, {steps}, {4 * steps})";
        return null;
    }

    /// <summary>The same block algorithm on one rank, all blocks in lock step.</summary>
    static Summary Serial(Config c)
    {
        int b = c.Blocks, n = c.BlockSize, blocks = b * b, steps = c.Steps * c.Phases;
        Block.B = b;
        Block.HeavyRows = c.HeavyRowsOrDefault;
        // clang-format off
        var u = new double[blocks][];
        var v = new double[blocks][];
        var pending = new double[blocks][];
        // clang-format on
        var edge = new double[n];
        for (int i = 0; i < blocks; i++) {
            u[i] = Kernel.Initial(i, b, n);
            v[i] = new double[u[i].Length];
            pending[i] = new double[4 * n];
        }
        for (int t = 0; t < steps; t++) {
            for (int i = 0; i < blocks; i++)
                for (int side = 0; side < 4; side++) {
                    Kernel.Edge(u[Kernel.Neighbour(i, side, b)], n, side ^ 1, edge);
                    Array.Copy(edge, 0, pending[i], side * n, n);
                }
            for (int i = 0; i < blocks; i++) {
                double[] r = Kernel.Step(u[i], v[i], n, pending[i], 0, Block.Heavy(i) ? c.Cost : 1);
                if (r != u[i]) {
                    v[i] = u[i];
                    u[i] = r;
                }
            }
        }
        var s = new Summary(blocks);
        for (int i = 0; i < blocks; i++) {
            Kernel.Describe(u[i], n, out s.SumBits[i], out s.Hash[i]);
            s.Steps[i] = s.Updates[i] = steps;
            s.Halos[i] = 4L * steps;
        }
        return s;
    }

    static int Verify()
    {
        // blocks this small cost their halo messages as much as a few sweeps: 200 sweeps keep the
        // heavy row clearly heavier than noise, so the greedy balancer always has something to move
        var c = new Config { Blocks = 4,    BlockSize = 12, Steps = 5, Phases = 3,
                             HeavyRows = 1, Tolerance = 0,  Cost = 200 };
        int steps = c.Steps * c.Phases;
        Summary reference = Serial(c);
        Say($"ObjectArrays --verify: {c.Blocks}x{c.Blocks} blocks of " +
            $"{c.BlockSize}x{c.BlockSize}, {c.Phases} phases of {c.Steps} steps, {size} " +
            "rank(s)");
        Say($"  serial reference: {Checksum(reference)}");
        int failures = 0;
        foreach (string mode in new[] { "none", "greedy", "contiguous", "rotate", "wander" }) {
            Outcome o = RunOnce(c, mode, false);
            string problem = Complete(o.Summary, steps);
            if (problem == null && !o.Summary.SameGrid(reference))
                problem = "the grid differs from the serial reference";
            if (problem == null && size > 1 && mode == "rotate" &&
                o.Summary.Moves != (long)c.Blocks * c.Blocks * (c.Phases - 1))
                problem = $"{o.Summary.Moves} moves, want every block at every balance";
            if (problem == null && size > 1 && (mode == "greedy" || mode == "wander") &&
                o.Summary.Moves == 0)
                problem = "no block moved";
            if (problem != null)
                failures++;
            Say($"  {mode,-10} {Checksum(o.Summary)}  moves {o.Summary.Moves,3}  " +
                $"{(problem == null ? "ok" : "FAILED: " + problem)}");
        }
        Say(failures == 0 ? "ObjectArrays --verify: passed"
                          : $"ObjectArrays --verify: {failures} FAILED");
        return failures == 0 ? 0 : 1;
    }

    static int Usage(string why)
    {
        if (rank == 0)
            Console.Error.WriteLine(
                $"ObjectArrays: {why}\nusage: ObjectArrays.exe [--blocks B] [--block-size n] " +
                "[--steps S] [--phases P] [--cost K] [--heavy-rows R] [--tolerance PERCENT] " +
                "[--balance | --no-balance] [--balancer greedy|contiguous] [--verify]");
        return 2;
    }

    /// <summary>Ranks per host against that host's cores: oversubscribed ranks share cores, which
    /// caps what balancing can gain (the work still runs on the cores there are).</summary>
    static void CoresNote()
    {
        string[] mine = { MP.ProcessorName + "\t" + Environment.ProcessorCount };
        string[] all = world.OGather(mine, 0);
        if (rank != 0)
            return;
        var ranks = new Dictionary<string, int>();
        var cores = new Dictionary<string, int>();
        foreach (string x in all) {
            string[] parts = x.Split('\t');
            int n;
            ranks.TryGetValue(parts[0], out n);
            ranks[parts[0]] = n + 1;
            cores[parts[0]] = int.Parse(parts[1]);
        }
        foreach (var kv in ranks)
            if (kv.Value > cores[kv.Key])
                Console.WriteLine(
                    $"note: {kv.Value} ranks on {kv.Key}, which has {cores[kv.Key]} cores: ranks " +
                    "share cores, so times are those of an oversubscribed machine (balancing " +
                    "can gain at most cores/ranks of the ideal)");
    }

    static int Main(string[] args)
    {
        Thread.CurrentThread.CurrentCulture = System.Globalization.CultureInfo.InvariantCulture;
        var c = new Config();
        bool verify = false, withBalance = true, withoutBalance = true;
        for (int i = 0; i < args.Length; i++) {
            string arg = args[i];
            if (arg == "--help" || arg == "-h") {
                Usage("a 2-D stencil with a tenfold costlier band, run with and without load " +
                      "balancing");
                return 0;
            }
            if (arg == "--verify") {
                verify = true;
                continue;
            }
            if (arg == "--balance") {
                withBalance = true;
                withoutBalance = false;
                continue;
            }
            if (arg == "--no-balance") {
                withBalance = false;
                withoutBalance = true;
                continue;
            }
            if (i + 1 >= args.Length)
                return Usage($"{arg}: unknown, or its value is missing");
            string value = args[++i];
            if (arg == "--balancer") {
                if (value != "greedy" && value != "contiguous")
                    return Usage($"--balancer {value}: greedy or contiguous");
                c.Balancer = value;
                continue;
            }
            int v;
            if (!int.TryParse(value, out v))
                return Usage($"{arg} {value}: not a number");
            if (arg == "--blocks" && v >= 1 && v <= 256)
                c.Blocks = v;
            else if (arg == "--block-size" && v >= 1 && v <= 4096)
                c.BlockSize = v;
            else if (arg == "--steps" && v >= 1)
                c.Steps = v;
            else if (arg == "--phases" && v >= 1)
                c.Phases = v;
            else if (arg == "--cost" && v >= 1 && v <= 1000)
                c.Cost = v;
            else if (arg == "--heavy-rows" && v >= 0)
                c.HeavyRows = v;
            else if (arg == "--tolerance" && v >= 0)
                c.Tolerance = 1 + v / 100.0;
            else
                return Usage($"{arg} {value}: unknown option or out of range");
        }
        if (c.HeavyRowsOrDefault > c.Blocks)
            return Usage("--heavy-rows is more than --blocks");
        if (verify)
            return Verify();

        Say($"ObjectArrays: {c.Blocks}x{c.Blocks} blocks of {c.BlockSize}x{c.BlockSize} cells, " +
            $"{c.Phases} phases of {c.Steps} steps, {size} rank(s); the first " +
            $"{c.HeavyRowsOrDefault} block row(s) cost {c.Cost}x (Block placement: on the " +
            "first rank(s))");
        CoresNote();
        Outcome without = null, with = null;
        if (withoutBalance) {
            Say("without balancing:");
            without = RunOnce(c, "none", true);
            Say($"  total {without.Total:F3} s  {Checksum(without.Summary)}");
        }
        if (withBalance) {
            Say($"with balancing ({c.Balancer}, between phases):");
            with = RunOnce(c, c.Balancer, true);
            Say($"  total {with.Total:F3} s  {Checksum(with.Summary)}");
        }
        int steps = c.Steps * c.Phases;
        foreach (Outcome o in new[] { without, with }) {
            string problem = o == null ? null : Complete(o.Summary, steps);
            if (problem != null) {
                Say("ObjectArrays: FAILED: " + problem);
                return 1;
            }
        }
        if (without != null && with != null) {
            if (!without.Summary.SameGrid(with.Summary)) {
                Say("ObjectArrays: FAILED: the grids differ with and without balancing");
                return 1;
            }
            double a = without.Total - without.PhaseTimes[0], b = with.Total - with.PhaseTimes[0];
            Say($"same grid both ways; after the first phase (balance included) {a:F3} s " +
                $"unbalanced, {b:F3} s balanced: {(b > 0 ? a / b : 0):F2}x; whole run " +
                $"{without.Total / with.Total:F2}x");
        }
        long[] peaks = world.Gather(PeakKib(), 0);
        if (rank == 0)
            Say("peak memory per rank (VmHWM, MiB): " +
                $"{string.Join(" ", Array.ConvertAll(peaks, k => (k / 1024.0).ToString("F1")))}");
        return 0;
    }
}

// halo — the shallow-water halo exchange (samples/shallow_water) with the caches as a model
// leaves them: each iteration first sweeps a buffer as large as the last-level cache (the
// compute phase, untimed), then exchanges the edges of Fields fields in both directions, 2·Fields
// blocking Sendrecv calls, timed. Rank 0 is its own neighbour, as the single worker of a two-rank
// shallow-water run (a partner process would add the skew of its own sweep to every figure);
// other ranks wait. Metrics: µs per Sendrecv ("time") and of the first one after the sweep
// ("first"), which finds every code path and runtime structure cold.
sealed class Halo : Pattern
{
    // U, V, P, then Cu, Cv, Z, H: what one step of the model exchanges
    public const int Fields = 7;
    object[] sendDown, recvUp, sendUp, recvDown;
    static double[] evict;

    public override string Name => "halo";
    public override int MinRanks => 1;
    public override int Iterations(long bytes) => 20;   // a sweep costs milliseconds: a few suffice

    public override void Prepare(Context c, long bytes)
    {
        sendDown = Messages(c, bytes);
        recvUp = Messages(c, bytes);
        sendUp = Messages(c, bytes);
        recvDown = Messages(c, bytes);
        c.T.ReserveSlots(2);
        if (evict == null)
            evict = new double[BenchCommon.EvictBytes / sizeof(double)];
    }

    static object[] Messages(Context c, long bytes)
    {
        var m = new object[Fields];
        for (int f = 0; f < Fields; f++)
            m[f] = c.T.NewMessage(bytes);
        return m;
    }

    public override void Repetition(Context c, long bytes, int iterations)
    {
        if (c.Rank != 0)
            return;
        Transport t = c.T;
        const int up = 0, down = 0;
        double all = 0, first = 0;
        for (int i = 0; i < iterations; i++) {
            for (int f = 0; f < Fields; f++) {
                c.Stamp(sendDown[f], Context.Seed(c.Rank, i, f));
                c.Stamp(sendUp[f], Context.Seed(c.Rank, i, Fields + f));
            }
            Sweep();
            Context.Now();   // the clock's own path warm, as MPI_Wtime's is in C
            long t0 = Context.Now(), t1 = t0;
            for (int f = 0; f < Fields; f++) {
                recvUp[f] = t.Sendrecv(sendDown[f], down, recvUp[f], up, f);
                if (f == 0)
                    t1 = Context.Now();
                recvDown[f] = t.Sendrecv(sendUp[f], up, recvDown[f], down, Fields + f);
            }
            long t2 = Context.Now();
            all += Context.Microseconds(t0, t2);
            first += Context.Microseconds(t0, t1);
            for (int f = 0; f < Fields; f++) {
                c.Verify(recvUp[f], bytes, Context.Seed(up, i, f));
                c.Verify(recvDown[f], bytes, Context.Seed(down, i, Fields + f));
            }
        }
        c.Emit("time", all / (iterations * 2.0 * Fields));
        c.Emit("first", first / iterations);
    }

    /// <summary>Reads and writes every line of a last-level-cache-sized buffer.</summary>
    static void Sweep()
    {
        double[] e = evict;
        for (int k = 0; k < e.Length; k++)
            e[k] = e[k] * 0.5 + 1.0;
    }
}

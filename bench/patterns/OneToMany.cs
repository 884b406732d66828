// onetomany (1:n) — rank 0 serves n = ranks-1 clients: each round it posts an Isend of the
// message to every client and an Irecv of a 1-byte acknowledgement from each, and waits for
// all; clients Recv, then acknowledge. Metrics: time per round and aggregate MB/s (n·s / time).
sealed class OneToMany : Pattern
{
    object[] messages, acks;
    public override string Name => "onetomany";
    public override TransportCaps Requires => TransportCaps.Blocking | TransportCaps.NonBlocking;
    public override int Iterations(long bytes) => BenchCommon.Iterations(bytes * 2) / 2 + 5;

    public override void Prepare(Context c, long bytes)
    {
        int n = c.Rank == 0 ? c.Size - 1 : 1;
        messages = new object[n];
        acks = new object[n];
        for (int k = 0; k < n; k++) { messages[k] = c.T.NewMessage(bytes); acks[k] = c.T.NewMessage(1); }
        c.T.ReserveSlots(2 * n);
    }

    public override void Repetition(Context c, long bytes, int iterations)
    {
        Transport t = c.T;
        int n = c.Size - 1;
        long t0 = Context.Now();
        for (int i = 0; i < iterations; i++) {
            if (c.Rank == 0) {
                for (int k = 0; k < n; k++) t.Irecv(k, acks[k], k + 1, 2);
                for (int k = 0; k < n; k++) {
                    c.Stamp(messages[k], Context.Seed(0, i, k + 1));
                    t.Isend(n + k, messages[k], k + 1, 1);
                }
                t.WaitAll(2 * n);
                for (int k = 0; k < n; k++) c.Verify(t.Received(k), 1, Context.Seed(k + 1, i));
            } else {
                c.Verify(t.Recv(messages[0], 0, 1), bytes, Context.Seed(0, i, c.Rank));
                c.Stamp(acks[0], Context.Seed(c.Rank, i));
                t.Send(acks[0], 0, 2);
            }
        }
        double us = Context.Microseconds(t0, Context.Now()) / iterations;
        c.Emit("time", us);
        c.Emit("MBps", n * bytes / us);
    }
}

// manytoone (n:1) — n = ranks-1 clients each send the message to rank 0, which has an Irecv
// posted for every client, waits for all, then acknowledges each with 1 byte (Isend, wait).
// Metrics: time per round and aggregate MB/s (n·s / time) at the server.
sealed class ManyToOne : Pattern
{
    object[] messages, acks;
    public override string Name => "manytoone";
    public override TransportCaps Requires => TransportCaps.Blocking | TransportCaps.NonBlocking;
    public override int Iterations(long bytes) => BenchCommon.Iterations(bytes * 2) / 2 + 5;

    public override void Prepare(Context c, long bytes)
    {
        int n = c.Rank == 0 ? c.Size - 1 : 1;
        messages = new object[n];
        acks = new object[n];
        for (int k = 0; k < n; k++) { messages[k] = c.T.NewMessage(bytes); acks[k] = c.T.NewMessage(1); }
        c.T.ReserveSlots(n);
    }

    public override void Repetition(Context c, long bytes, int iterations)
    {
        Transport t = c.T;
        int n = c.Size - 1;
        long t0 = Context.Now();
        for (int i = 0; i < iterations; i++) {
            if (c.Rank == 0) {
                for (int k = 0; k < n; k++) t.Irecv(k, messages[k], k + 1, 1);
                t.WaitAll(n);
                for (int k = 0; k < n; k++) {
                    c.Verify(t.Received(k), bytes, Context.Seed(k + 1, i));
                    c.Stamp(acks[k], Context.Seed(0, i, k + 1));
                    t.Isend(k, acks[k], k + 1, 2);
                }
                t.WaitAll(n);
            } else {
                c.Stamp(messages[0], Context.Seed(c.Rank, i));
                t.Send(messages[0], 0, 1);
                c.Verify(t.Recv(acks[0], 0, 2), 1, Context.Seed(0, i, c.Rank));
            }
        }
        double us = Context.Microseconds(t0, Context.Now()) / iterations;
        c.Emit("time", us);
        c.Emit("MBps", n * bytes / us);
    }
}

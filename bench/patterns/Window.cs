// window — rank 0 posts 64 Isend, rank 1 64 Irecv, both wait for all, rank 1 acknowledges
// with one byte; metric: time per message. The pattern of generation-aware deferred pinning.
sealed class Window : Pattern
{
    public const int Size = 64;
    object[] messages;
    object ack;
    public override string Name => "window";
    public override TransportCaps Requires => TransportCaps.Blocking | TransportCaps.NonBlocking;
    public override int Iterations(long bytes) => BenchCommon.Iterations(bytes * Size) / 4 + 5;

    public override void Prepare(Context c, long bytes)
    {
        messages = new object[Size];
        for (int w = 0; w < Size; w++)
            messages[w] = c.T.NewMessage(bytes);
        ack = c.T.NewMessage(1);
        c.T.ReserveSlots(Size);
    }

    public override void Repetition(Context c, long bytes, int iterations)
    {
        if (c.Rank > 1)
            return;
        Transport t = c.T;
        long t0 = Context.Now();
        for (int i = 0; i < iterations; i++) {
            for (int w = 0; w < Size; w++) {
                if (c.Rank == 0) {
                    c.Stamp(messages[w], Context.Seed(0, i, w));
                    t.Isend(w, messages[w], 1, w);
                } else {
                    t.Irecv(w, messages[w], 0, w);
                }
            }
            t.WaitAll(Size);
            if (c.Rank == 0) {
                c.Verify(t.Recv(ack, 1, Size), 1, Context.Seed(1, i));
            } else {
                for (int w = 0; w < Size; w++)
                    c.Verify(t.Received(w), bytes, Context.Seed(0, i, w));
                c.Stamp(ack, Context.Seed(1, i));
                t.Send(ack, 0, Size);
            }
        }
        c.Emit("time", Context.Microseconds(t0, Context.Now()) / ((double)iterations * Size));
    }
}

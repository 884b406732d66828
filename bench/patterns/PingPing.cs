// pingping — ranks 0 and 1 send to each other at the same time (Isend, blocking Recv, Wait);
// metric: time per iteration, one message each way in flight together.
sealed class PingPing : Pattern
{
    object outgoing, incoming;
    public override string Name => "pingping";
    public override TransportCaps Requires => TransportCaps.Blocking | TransportCaps.NonBlocking;

    public override void Prepare(Context c, long bytes)
    {
        outgoing = c.T.NewMessage(bytes);
        incoming = c.T.NewMessage(bytes);
        c.T.ReserveSlots(1);
    }

    public override void Repetition(Context c, long bytes, int iterations)
    {
        if (c.Rank > 1)
            return;
        Transport t = c.T;
        int peer = 1 - c.Rank;
        long t0 = Context.Now();
        for (int i = 0; i < iterations; i++) {
            c.Stamp(outgoing, Context.Seed(c.Rank, i));
            t.Isend(0, outgoing, peer, 0);
            object got = t.Recv(incoming, peer, 0);
            t.WaitAll(1);
            c.Verify(got, bytes, Context.Seed(peer, i));
        }
        c.Emit("time", Context.Microseconds(t0, Context.Now()) / iterations);
    }
}

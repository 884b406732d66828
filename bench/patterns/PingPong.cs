// pingpong — ranks 0 and 1 bounce one message; metric: half the round-trip time.
sealed class PingPong : Pattern
{
    object message;
    public override string Name => "pingpong";
    public override void Prepare(Context c, long bytes) => message = c.T.NewMessage(bytes);

    public override void Repetition(Context c, long bytes, int iterations)
    {
        if (c.Rank > 1)
            return;
        Transport t = c.T;
        int peer = 1 - c.Rank;
        long t0 = Context.Now();
        for (int i = 0; i < iterations; i++) {
            if (c.Rank == 0) {
                c.Stamp(message, Context.Seed(0, i));
                t.Send(message, peer, 0);
                c.Verify(t.Recv(message, peer, 0), bytes, Context.Seed(1, i));
            } else {
                c.Verify(t.Recv(message, peer, 0), bytes, Context.Seed(0, i));
                c.Stamp(message, Context.Seed(1, i));
                t.Send(message, peer, 0);
            }
        }
        c.Emit("time", Context.Microseconds(t0, Context.Now()) / (2.0 * iterations));
    }
}

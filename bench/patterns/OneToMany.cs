// onetomany (1:n) — rank 0 serves n = ranks-1 clients: each round it posts an Irecv of a 1-byte
// acknowledgement from every client and an Isend of the message to each, and waits for all;
// clients Recv, then acknowledge.
sealed class OneToMany : ServerPattern
{
    public override string Name => "onetomany";

    protected override void Serve(Context c, long bytes, int i)
    {
        Transport t = c.T;
        int n = c.Size - 1;
        for (int k = 0; k < n; k++)
            t.Irecv(k, acks[k], k + 1, 2);
        for (int k = 0; k < n; k++) {
            c.Stamp(messages[k], Context.Seed(0, i, k + 1));
            t.Isend(n + k, messages[k], k + 1, 1);
        }
        t.WaitAll(2 * n);
        for (int k = 0; k < n; k++)
            c.Verify(t.Received(k), 1, Context.Seed(k + 1, i));
    }

    protected override void Client(Context c, long bytes, int i)
    {
        c.Verify(c.T.Recv(messages[0], 0, 1), bytes, Context.Seed(0, i, c.Rank));
        c.Stamp(acks[0], Context.Seed(c.Rank, i));
        c.T.Send(acks[0], 0, 2);
    }
}

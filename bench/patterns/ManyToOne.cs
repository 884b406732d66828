// manytoone (n:1) — n = ranks-1 clients each send the message to rank 0, which has an Irecv
// posted for every client, waits for all, then acknowledges each with 1 byte (Isend, wait).
sealed class ManyToOne : ServerPattern
{
    public override string Name => "manytoone";

    protected override void Serve(Context c, long bytes, int i)
    {
        Transport t = c.T;
        int n = c.Size - 1;
        for (int k = 0; k < n; k++)
            t.Irecv(k, messages[k], k + 1, 1);
        t.WaitAll(n);
        for (int k = 0; k < n; k++) {
            c.Verify(t.Received(k), bytes, Context.Seed(k + 1, i));
            c.Stamp(acks[k], Context.Seed(0, i, k + 1));
            t.Isend(k, acks[k], k + 1, 2);
        }
        t.WaitAll(n);
    }

    protected override void Client(Context c, long bytes, int i)
    {
        c.Stamp(messages[0], Context.Seed(c.Rank, i));
        c.T.Send(messages[0], 0, 1);
        c.Verify(c.T.Recv(acks[0], 0, 2), 1, Context.Seed(0, i, c.Rank));
    }
}

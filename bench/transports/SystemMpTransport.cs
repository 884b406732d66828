// system-mp: System.MP's Object Passing Interface — zero-copy Send/Recv of a byte[] in place,
// Isend/Irecv with Request.WaitAll (generation-aware deferred pinning does the rest).
using System.MP;

sealed class SystemMpTransport : ByteArrayTransport
{
    readonly Intracomm world = MP.World;
    Request[] requests = new Request[0];

    public override string Name => "system-mp";
    public override string Label => "C# System.MP (OPI)";
    public override void Send(object m, int dest, int tag) => world.Send(m, dest, tag);
    public override object Recv(object m, int source, int tag)
    {
        world.Recv(m, source, tag);
        return m;
    }
    public override void Isend(int slot, object m, int dest,
                               int tag) => requests[slot] = world.Isend(m, dest, tag);

    public override object Sendrecv(object send, int dest, object recv, int source, int tag)
    {
        byte[] s = (byte[])send, r = (byte[])recv;
        world.Sendrecv(s, 0, s.Length, dest, tag, r, 0, r.Length, source, tag);
        return recv;
    }

    public override void Irecv(int slot, object m, int source, int tag)
    {
        requests[slot] = world.Irecv(m, source, tag);
        received[slot] = m;
    }

    public override void WaitAll(int count)
    {
        if (count == requests.Length)
            Request.WaitAll(requests);
        else
            for (int i = 0; i < count; i++)
                requests[i].Wait();
    }

    protected override void Grow(int slots) => requests = new Request[slots];
}

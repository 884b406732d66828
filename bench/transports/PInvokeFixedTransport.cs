// pinvoke-fixed — BASELINE, the floor of any per-call binding: blocking MPI_Send / MPI_Recv /
// MPI_Sendrecv through DllImport with the buffer pinned by `fixed` for the call (no GCHandle).
// Only blocking patterns: a `fixed` pin ends with the call, so a non-blocking transfer would
// outlive it — exactly the hazard System.MP's deferred pinning exists for.
using System;

sealed class PInvokeFixedTransport : ByteArrayTransport
{
    public override string Name => "pinvoke-fixed";
    public override string Label => "C# P/Invoke + fixed (blocking only)";
    public override TransportCaps Caps => TransportCaps.Blocking;

    public override void Send(object m, int dest,
                              int tag) => PInvokeMpi.SendFixed((byte[])m, dest, tag);

    public override object Recv(object m, int source, int tag)
    {
        PInvokeMpi.RecvFixed((byte[])m, source, tag);
        return m;
    }

    public override object Sendrecv(object send, int dest, object recv, int source, int tag)
    {
        PInvokeMpi.SendrecvFixed((byte[])send, dest, (byte[])recv, source, tag);
        return recv;
    }

    public override void Isend(int slot, object m, int dest, int tag) => throw Blocking();
    public override void Irecv(int slot, object m, int source, int tag) => throw Blocking();
    public override void WaitAll(int count) => throw Blocking();
    protected override void Grow(int slots) { }

    static NotSupportedException Blocking() => new NotSupportedException(
        "pinvoke-fixed has blocking calls only: a fixed pin ends with the call");
}

// pinvoke — BASELINE, the "external binding" (MPI.NET style): MPI_Send/MPI_Recv/MPI_Isend/
// MPI_Irecv/MPI_Wait through DllImport, every buffer pinned with a GCHandle per call and, for
// non-blocking calls, until its MPI_Wait (bench/baselines/PInvokeMpi.cs).
sealed class PInvokeTransport : ByteArrayTransport
{
    PInvokeMpi.Pending[] pending = new PInvokeMpi.Pending[0];

    public override string Name => "pinvoke";
    public override string Label => "C# P/Invoke + GCHandle (baseline)";

    public override void Send(object m, int dest, int tag)
    {
        var b = (byte[])m;
        PInvokeMpi.Send(b, b.Length, dest, tag);
    }

    public override object Recv(object m, int source, int tag)
    {
        var b = (byte[])m;
        PInvokeMpi.Recv(b, b.Length, source, tag);
        return m;
    }

    public override object Sendrecv(object send, int dest, object recv, int source, int tag)
    {
        PInvokeMpi.Sendrecv((byte[])send, dest, (byte[])recv, source, tag);
        return recv;
    }

    public override void Isend(int slot, object m, int dest, int tag)
    {
        var b = (byte[])m;
        pending[slot] = PInvokeMpi.Isend(b, b.Length, dest, tag);
    }

    public override void Irecv(int slot, object m, int source, int tag)
    {
        var b = (byte[])m;
        pending[slot] = PInvokeMpi.Irecv(b, b.Length, source, tag);
        received[slot] = m;
    }

    public override void WaitAll(int count) => PInvokeMpi.WaitAll(pending, count);
    protected override void Grow(int slots) => pending = new PInvokeMpi.Pending[slots];
}

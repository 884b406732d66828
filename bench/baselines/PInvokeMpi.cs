// BASELINE, NOT PART OF THE PRODUCT: MPI from C# the way external bindings (MPI.NET) do it —
// DllImport of libmpich's MPI_Send / MPI_Recv, every array pinned with a GCHandle per call.
// Used by the benchmarks and the case study as the "external binding" to compare against.
using System;
using System.Runtime.InteropServices;

static class PInvokeMpi
{
    const string Lib = "libmpich.so.12";
    // MPICH ABI constants (mpi.h): handles are ints.
    public const int CommWorld = 0x44000000;
    public const int Byte = 0x4c00010d;
    static readonly IntPtr StatusIgnore = (IntPtr)1;

    [DllImport(Lib)]
    static extern int MPI_Send(IntPtr buf, int count, int datatype, int dest, int tag, int comm);
    [DllImport(Lib)]
    static extern int MPI_Recv(IntPtr buf, int count, int datatype, int source, int tag, int comm,
                               IntPtr status);
    [DllImport(Lib)]
    static extern int MPI_Isend(IntPtr buf, int count, int datatype, int dest, int tag, int comm,
                                out int request);
    [DllImport(Lib)]
    static extern int MPI_Irecv(IntPtr buf, int count, int datatype, int source, int tag, int comm,
                                out int request);
    [DllImport(Lib)]
    static extern int MPI_Wait(ref int request, IntPtr status);
    [DllImport(Lib)]
    static extern double MPI_Wtime();

    [DllImport(Lib)]
    static extern int MPI_Bcast(IntPtr buf, int count, int datatype, int root, int comm);
    [DllImport(Lib)]
    static extern int MPI_Allreduce(IntPtr send, IntPtr recv, int count, int datatype, int op,
                                    int comm);
    const int Double = 0x4c00080b, OpSum = 0x58000003;   // MPICH's MPI_DOUBLE, MPI_SUM

    public static double Wtime() => MPI_Wtime();

    public static void Bcast(byte[] buffer, int root)
    {
        GCHandle h = GCHandle.Alloc(buffer, GCHandleType.Pinned);
        try {
            Check(MPI_Bcast(h.AddrOfPinnedObject(), buffer.Length, Byte, root, CommWorld));
        } finally {
            h.Free();
        }
    }

    public static void AllreduceSum(double[] send, double[] recv)
    {
        GCHandle hs = GCHandle.Alloc(send, GCHandleType.Pinned),
                 hr = GCHandle.Alloc(recv, GCHandleType.Pinned);
        try {
            Check(MPI_Allreduce(hs.AddrOfPinnedObject(), hr.AddrOfPinnedObject(), send.Length,
                                Double, OpSum, CommWorld));
        } finally {
            hs.Free();
            hr.Free();
        }
    }

    const int AnySource = -2;   // MPICH's MPI_ANY_SOURCE
    [DllImport(Lib)]
    static extern int MPI_Probe(int source, int tag, int comm, int[] status);
    [DllImport(Lib)]
    static extern int MPI_Get_count(int[] status, int datatype, out int count);

    public static void SendDoubles(double[] d, int offset, int count, int dest, int tag)
    {
        GCHandle h = GCHandle.Alloc(d, GCHandleType.Pinned);
        try {
            Check(
                MPI_Send(h.AddrOfPinnedObject() + offset * 8, count, Double, dest, tag, CommWorld));
        } finally {
            h.Free();
        }
    }

    public static void RecvDoubles(double[] d, int offset, int count, int source, int tag)
    {
        GCHandle h = GCHandle.Alloc(d, GCHandleType.Pinned);
        try {
            Check(MPI_Recv(h.AddrOfPinnedObject() + offset * 8, count, Double, source, tag,
                           CommWorld, StatusIgnore));
        } finally {
            h.Free();
        }
    }

    [DllImport(Lib)]
    static extern int MPI_Sendrecv(IntPtr send, int sendCount, int sendType, int dest, int sendTag,
                                   IntPtr recv, int recvCount, int recvType, int source,
                                   int recvTag, int comm, IntPtr status);

    /// <summary>Sends d[sendOffset .. +count) and receives count doubles into d[recvOffset ..):
    /// one array, one pin for the call.</summary>
    public static void SendrecvDoubles(double[] d, int sendOffset, int count, int dest, int sendTag,
                                       int recvOffset, int source, int recvTag)
    {
        GCHandle h = GCHandle.Alloc(d, GCHandleType.Pinned);
        try {
            IntPtr p = h.AddrOfPinnedObject();
            Check(MPI_Sendrecv(p + sendOffset * 8, count, Double, dest, sendTag, p + recvOffset * 8,
                               count, Double, source, recvTag, CommWorld, StatusIgnore));
        } finally {
            h.Free();
        }
    }

    [DllImport(Lib)]
    static extern int MPI_Iprobe(int source, int tag, int comm, out int flag, int[] status);

    /// <summary>Is a message with this tag from anyone waiting?</summary>
    public static bool Iprobe(int tag)
    {
        int flag;
        Check(MPI_Iprobe(AnySource, tag, CommWorld, out flag, new int[5]));
        return flag != 0;
    }

    /// <summary>Waits for a message with this tag from anyone: its source and size
    /// in bytes.</summary>
    public static void Probe(int tag, out int source, out int bytes)
    {
        // MPICH's MPI_Status: count_lo, count_hi_and_cancelled, source, tag, error
        var status = new int[5];
        Check(MPI_Probe(AnySource, tag, CommWorld, status));
        Check(MPI_Get_count(status, Byte, out bytes));
        source = status[2];
    }

    /// <summary>A started transfer and the pin that must outlive it.</summary>
    public struct Pending
    {
        public int Request;
        public GCHandle Pin;
    }

    public static Pending Isend(byte[] buffer, int count, int dest, int tag)
    {
        var p = new Pending { Pin = GCHandle.Alloc(buffer, GCHandleType.Pinned) };
        Check(MPI_Isend(p.Pin.AddrOfPinnedObject(), count, Byte, dest, tag, CommWorld,
                        out p.Request));
        return p;
    }

    public static Pending Irecv(byte[] buffer, int count, int source, int tag)
    {
        var p = new Pending { Pin = GCHandle.Alloc(buffer, GCHandleType.Pinned) };
        Check(MPI_Irecv(p.Pin.AddrOfPinnedObject(), count, Byte, source, tag, CommWorld,
                        out p.Request));
        return p;
    }

    /// <summary>Waits for each transfer, then frees its pin (MPI.NET's Request.Wait).</summary>
    /// <summary>The first <paramref name="count"/> transfers.</summary>
    public static void WaitAll(Pending[] pending, int count)
    {
        for (int i = 0; i < count; i++) {
            Check(MPI_Wait(ref pending[i].Request, StatusIgnore));
            pending[i].Pin.Free();
        }
    }

    public static void Send(byte[] buffer, int count, int dest, int tag)
    {
        GCHandle h = GCHandle.Alloc(buffer, GCHandleType.Pinned);
        try {
            Check(MPI_Send(h.AddrOfPinnedObject(), count, Byte, dest, tag, CommWorld));
        } finally {
            h.Free();
        }
    }

    public static void Recv(byte[] buffer, int count, int source, int tag)
    {
        GCHandle h = GCHandle.Alloc(buffer, GCHandleType.Pinned);
        try {
            Check(MPI_Recv(h.AddrOfPinnedObject(), count, Byte, source, tag, CommWorld,
                           StatusIgnore));
        } finally {
            h.Free();
        }
    }

    public static void Sendrecv(byte[] send, int dest, byte[] recv, int source, int tag)
    {
        GCHandle hs = GCHandle.Alloc(send, GCHandleType.Pinned),
                 hr = GCHandle.Alloc(recv, GCHandleType.Pinned);
        try {
            Check(MPI_Sendrecv(hs.AddrOfPinnedObject(), send.Length, Byte, dest, tag,
                               hr.AddrOfPinnedObject(), recv.Length, Byte, source, tag, CommWorld,
                               StatusIgnore));
        } finally {
            hs.Free();
            hr.Free();
        }
    }

    // The lightest binding C# allows: `fixed` pins for the duration of a blocking call only (the
    // JIT marks the local; no handle is created), then a plain P/Invoke. What no binding of a
    // per-call managed-to-native design can undercut; blocking calls only.
    public static unsafe void SendFixed(byte[] buffer, int dest, int tag)
    {
        fixed(byte* p = buffer)
            Check(MPI_Send((IntPtr)p, buffer.Length, Byte, dest, tag, CommWorld));
    }

    public static unsafe void RecvFixed(byte[] buffer, int source, int tag)
    {
        fixed(byte* p = buffer)
            Check(MPI_Recv((IntPtr)p, buffer.Length, Byte, source, tag, CommWorld, StatusIgnore));
    }

    public static unsafe void SendrecvFixed(byte[] send, int dest, byte[] recv, int source, int tag)
    {
        fixed(byte* s = send, r = recv)
            Check(MPI_Sendrecv((IntPtr)s, send.Length, Byte, dest, tag, (IntPtr)r, recv.Length,
                               Byte, source, tag, CommWorld, StatusIgnore));
    }

    static void Check(int rc)
    {
        if (rc != 0)
            throw new Exception("MPI error " + rc);
    }

    // ---- Gatherv and Alltoallv of doubles (issue 13) ----
    [DllImport(Lib)]
    static extern int MPI_Gatherv(IntPtr send, int count, int sendType, IntPtr recv, int[] counts,
                                  int[] displs, int recvType, int root, int comm);
    [DllImport(Lib)]
    static extern int MPI_Alltoallv(IntPtr send, int[] sendCounts, int[] sendDispls, int sendType,
                                    IntPtr recv, int[] recvCounts, int[] recvDispls, int recvType,
                                    int comm);

    public static void Gatherv(double[] send, double[] recv, int[] counts, int[] displs, int root)
    {
        GCHandle hs = GCHandle.Alloc(send, GCHandleType.Pinned),
                 hr = GCHandle.Alloc(recv, GCHandleType.Pinned);
        try {
            Check(MPI_Gatherv(hs.AddrOfPinnedObject(), send.Length, Double, hr.AddrOfPinnedObject(),
                              counts, displs, Double, root, CommWorld));
        } finally {
            hs.Free();
            hr.Free();
        }
    }

    public static void Alltoallv(double[] send, int[] sendCounts, int[] sendDispls, double[] recv,
                                 int[] recvCounts, int[] recvDispls)
    {
        GCHandle hs = GCHandle.Alloc(send, GCHandleType.Pinned),
                 hr = GCHandle.Alloc(recv, GCHandleType.Pinned);
        try {
            Check(
                MPI_Alltoallv(hs.AddrOfPinnedObject(), sendCounts, sendDispls, Double,
                              hr.AddrOfPinnedObject(), recvCounts, recvDispls, Double, CommWorld));
        } finally {
            hs.Free();
            hr.Free();
        }
    }
    // ---- end of the v-collectives ----
}

// Comm — a communicator: OPI point-to-point (zero-copy, in place on the managed object).
using System.Runtime.CompilerServices;

namespace System.MP
{
    /// <summary>A communicator: a group of ranks that exchange messages. Point-to-point calls
    /// move transportable objects (OPI, zero-copy, in place) or object graphs (the O-calls,
    /// serialized). Ranks, tags, offsets and counts are checked before anything is sent.</summary>
    public partial class Comm : IDisposable
    {
        internal int handle;   // the MPI_Comm; MPI_COMM_NULL once disposed
        readonly bool owned;   // false for World and Self, which are never freed
        readonly int rank, size;
        // The ranks point-to-point and the O-calls address, for the rank checks: this group
        // (Size) in an intracommunicator, the remote group in an intercommunicator.
        internal int peers;

        const int Standard = 0, Synchronous = 1;

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal Comm(int handle, bool owned)
        {
            this.handle = handle;
            this.owned = owned;
            Errors.Check(MPDirect.CommRank(handle, out rank));
            Errors.Check(MPDirect.CommSize(handle, out size));
            peers = size;
        }

        /// <summary>This process's rank in the communicator, from 0 to Size - 1.</summary>
        public int Rank => rank;
        /// <summary>The number of ranks in the communicator.</summary>
        public int Size => size;

        // ---- OPI point-to-point ----

        /// <summary>Sends a transportable object (see API.md, Terms) in place.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Send(object obj, int dest, int tag) =>
            Errors.Check(MPDirect.Send(handle, peers, obj, dest, tag, Standard));

        /// <summary>Sends array[offset .. offset+count) of a one-dimensional array.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Send(Array array, int offset, int count, int dest, int tag) => Errors.Check(
            MPDirect.SendRange(handle, peers, array, offset, count, dest, tag, Standard));

        /// <summary>Synchronous send: returns once the receiver has started receiving.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Ssend(object obj, int dest, int tag) =>
            Errors.Check(MPDirect.Send(handle, peers, obj, dest, tag, Synchronous));

        /// <summary>Synchronous send of array[offset .. offset+count).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Ssend(Array array, int offset, int count, int dest, int tag) => Errors.Check(
            MPDirect.SendRange(handle, peers, array, offset, count, dest, tag, Synchronous));

        /// <summary>Receives into the object's data in place. A longer message raises MPException
        /// (truncation) and nothing outside the object is written; so does a message that is not
        /// a whole number of the receiving array's elements. A boxed value (int, double, a
        /// struct) is refused with ArgumentException: the data would land in a copy the caller
        /// never sees — use <see cref="Recv{T}(int, int)"/>.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status Recv(object obj, int source, int tag)
        {
            RefuseBoxed(obj, nameof(obj));
            var st = new StatusData();
            Errors.Check(MPDirect.Recv(handle, peers, obj, source, tag, ref st));
            return Status.Of(ref st);
        }

        /// <summary>Receives into array[offset .. offset+count); nothing outside it
        /// is written.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status Recv(Array array, int offset, int count, int source, int tag)
        {
            var st = new StatusData();
            Errors.Check(
                MPDirect.RecvRange(handle, peers, array, offset, count, source, tag, ref st));
            return Status.Of(ref st);
        }

        /// <summary>Sends sendObj and receives into recvObj (not a boxed value) in one blocking
        /// call. The two may have different element types: the bytes received are read as recvObj's
        /// elements (only a message that is not a whole number of them
        /// raises MPException).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status Sendrecv(object sendObj, int dest, int sendTag, object recvObj, int source,
                               int recvTag)
        {
            RefuseBoxed(recvObj, nameof(recvObj));
            var st = new StatusData();
            Errors.Check(MPDirect.Sendrecv(handle, peers, sendObj, dest, sendTag, recvObj, source,
                                           recvTag, ref st));
            return Status.Of(ref st);
        }

        /// <summary>Sends sendArray[sendOffset .. +sendCount) and receives into
        /// recvArray[recvOffset .. +recvCount) in one blocking call (1-D arrays). The two may be
        /// ranges of one array if they do not overlap — a halo exchange in one call, with no
        /// Request objects. Returns the number of elements received (at most recvCount). The two
        /// arrays may have different element types: the bytes received are read as recvArray's
        /// elements. An addition to the API contract's whole-object Sendrecv.</summary>
        /// <remarks>No Status object, as MPI_STATUS_IGNORE in C and mpi4py's optional status: a
        /// halo exchange names its source and tag, and allocating a Status measured ~0.5 µs per
        /// call when caches are cold after a compute phase (the shallow-water
        /// case study).</remarks>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public int Sendrecv(Array sendArray, int sendOffset, int sendCount, int dest, int sendTag,
                            Array recvArray, int recvOffset, int recvCount, int source, int recvTag)
        {
            var st = new StatusData();
            Errors.Check(MPDirect.SendrecvRange(handle, peers, sendArray, sendOffset, sendCount,
                                                dest, sendTag, recvArray, recvOffset, recvCount,
                                                source, recvTag, ref st));
            return st.Count;
        }

        // ---- OPI non-blocking point-to-point ----
        // The object must not be touched until the request completes. A transfer that finishes
        // at once takes no pin; otherwise the object is pinned only if the GC could move it, and
        // the pin goes at Wait/Test, or at the first collection after the transfer finished.

        /// <summary>Starts sending a transportable object; the object must not change until the
        /// request completes.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Isend(object obj, int dest, int tag)
        {
            var request = new Request();
            var st = new StatusData();
            long id;
            Errors.Check(
                MPDirect.Isend(handle, peers, obj, dest, tag, Standard, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts sending array[offset .. offset+count) of a
        /// one-dimensional array.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Isend(Array array, int offset, int count, int dest, int tag)
        {
            var request = new Request();
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.IsendRange(handle, peers, array, offset, count, dest, tag,
                                             Standard, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Non-blocking synchronous send: completes once the receiver has
        /// started receiving.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Issend(object obj, int dest, int tag)
        {
            var request = new Request();
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Isend(handle, peers, obj, dest, tag, Synchronous, request, out id,
                                        ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts receiving into obj (not a boxed value); see Recv.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Irecv(object obj, int source, int tag)
        {
            RefuseBoxed(obj, nameof(obj));
            var request = new Request();
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Irecv(handle, peers, obj, source, tag, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts receiving into array[offset .. offset+count); nothing outside that range
        /// is written.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Irecv(Array array, int offset, int count, int source, int tag)
        {
            var request = new Request();
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.IrecvRange(handle, peers, array, offset, count, source, tag,
                                             request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Receives one value of a primitive type or a struct without references: the
        /// message must hold exactly one T (Status.Count is 1); a longer or empty one raises
        /// MPException. From <see cref="MP.ProcNull"/> it returns default(T) at once.</summary>
        public T Recv<T>(int source, int tag)
            where T : struct
        {
            Status unused;
            return Recv<T>(source, tag, out unused);
        }

        /// <summary>Receives one value, with its status (from <see cref="MP.ProcNull"/>:
        /// default(T), Source ProcNull, Count 0).</summary>
        public T Recv<T>(int source, int tag, out Status status)
            where T : struct
        {
            T[] one = Scalars<T>.Recv;
            one[0] = default(T);
            status = Recv(one, source, tag);
            if (status.Source == MP.ProcNull)
                return default(T);
            if (status.Count != 1)   // an empty message: no value arrived
                throw new MPException("System.MP: Recv<" + typeof(T).Name +
                                          "> received a message of " + status.Bytes +
                                          " bytes, not one " + typeof(T).Name,
                                      Errors.PartialElement);
            return one[0];
        }

        /// <summary>A boxed value given as a receive buffer would be filled in a temporary box
        /// that the caller never sees: refused, whatever the value type.</summary>
        internal static void RefuseBoxed(object obj, string parameter)
        {
            if (obj is ValueType)
                throw new ArgumentException(
                    "System.MP: a boxed value (" + obj.GetType() +
                        ") cannot be received into: the data would land in a temporary " +
                        "copy; use Recv<T>/Bcast(ref T), or an array",
                    parameter);
        }

        /// <summary>Waits for a matching message without receiving it. Count and Bytes are the
        /// message's size in BYTES (a receive's Count is elements): for an array of doubles,
        /// new double[status.Bytes / sizeof(double)], not new double[status.Count]. Cancelled is
        /// false.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status Probe(int source, int tag)
        {
            var st = new StatusData();
            Errors.Check(MPDirect.Probe(handle, peers, source, tag, ref st));
            return Status.Of(ref st);
        }

        /// <summary>The status of a matching waiting message, or null when there is none. As for
        /// Probe, its Count and Bytes are the message's size in bytes, not elements.</summary>
        public Status Iprobe(int source, int tag)
        {
            var st = new StatusData();
            return Iprobe(source, tag, ref st) ? Status.Of(ref st) : null;
        }

        /// <summary>Iprobe without a Status object: for loops that
        /// poll (System.MP.Arrays).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal bool Iprobe(int source, int tag, ref StatusData st)
        {
            int found;
            Errors.Check(MPDirect.Iprobe(handle, peers, source, tag, ref st, out found));
            return found != 0;
        }

        // ---- structured data transport: any object graph, one message per graph ----

        /// <summary>The graph of bytes bytes at offset in the thread's incoming buffer, whose root
        /// must be an expected (the O-collectives' pieces; the object arrays' messages).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static object ReadIncoming(long offset, long bytes, Type expected)
        {
            object result;
            Errors.Check(MPDirect.SdReadIncoming(offset, bytes, expected, out result));
            return result;
        }

        /// <summary>Gives this thread's incoming buffer back to the pool.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static void ReleaseIncoming() => MPDirect.SdRelease();

        /// <summary>Sends the graph under graph (reference fields travel when [Transportable];
        /// arrays of objects with their elements; shared references and cycles kept).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void OSend(object graph, int dest,
                          int tag) => Errors.Check(MPDirect.OSend(handle, peers, graph, dest, tag));

        /// <summary>Receives the next matching graph; its root must be a T. Only types reachable
        /// from T (API.md, "Allowed types on receipt") are ever created.</summary>
        public T ORecv<T>(int source, int tag)
        {
            Status unused;
            return ORecv<T>(source, tag, out unused);
        }

        /// <summary>Receives the next matching graph, with its status (Count and Bytes are the
        /// serialized size).</summary>
        public T ORecv<T>(int source, int tag, out Status status)
        {
            var st = new StatusData();
            object result = ReceiveGraph(source, tag, typeof(T), ref st);
            status = Status.Of(ref st);
            return result == null ? default(T) : (T)result;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        object ReceiveGraph(int source, int tag, Type expected, ref StatusData st)
        {
            object result;
            using (BudgetScope()) Errors.Check(
                MPDirect.ORecv(handle, peers, source, tag, expected, out result, ref st));
            return result;
        }

        /// <summary>Receives the next matching graph into the objects of graph where they fit,
        /// and returns its root (graph itself when the root fits). The message's objects are
        /// matched to graph's in the order the serializer numbers them (the root first, then as
        /// found through [Transportable] references and array elements); an object of the same
        /// class — an array with the same bounds — is overwritten instead of a new one being
        /// made, so a loop that receives graphs of one shape allocates nothing (a new array of
        /// 16 KiB or more costs far more than the copy: it lives in the large-object space).
        /// The other objects are made new; strings, boxed values and collections are never
        /// reused, and a message holding a collection reuses nothing. Reference fields that do
        /// not travel keep their values. Every check that can fail runs before the first object
        /// of graph is written: after an exception graph is as it was. Do not use graph
        /// elsewhere while this runs.</summary>
        public T ORecvInto<T>(T graph, int source, int tag)
            where T : class
        {
            Status unused;
            return ORecvInto(graph, source, tag, out unused);
        }

        /// <summary>ORecvInto, with the message's status.</summary>
        public T ORecvInto<T>(T graph, int source, int tag, out Status status)
            where T : class
        {
            if (graph == null)
                throw new ArgumentNullException(
                    nameof(graph), "graph is null: use ORecv to receive into new objects");
            var st = new StatusData();
            object result = ReceiveGraphInto(source, tag, typeof(T), graph, ref st);
            status = Status.Of(ref st);
            return (T)result;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        object ReceiveGraphInto(int source, int tag, Type expected, object reuse, ref StatusData st)
        {
            object result;
            using (BudgetScope())
                Errors.Check(MPDirect.ORecvInto(handle, peers, source, tag, expected, reuse,
                                                out result, ref st));
            return result;
        }

        /// <summary>Starts sending the graph and returns at once. The graph is serialized
        /// during the call, so changes made to it afterwards do not travel and it may be reused
        /// at once; the bytes leave from a native buffer the core owns until the send completes
        /// (nothing of yours is pinned). Complete the Request as any other; one you drop is
        /// finished by the core. Refusals (ArgumentException) come from this call, before
        /// anything is sent.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request OIsend(object graph, int dest, int tag)
        {
            var request = new Request();
            var st = new StatusData();
            Errors.Check(
                MPDirect.OIsend(handle, peers, graph, dest, tag, request, out long id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts receiving the next graph from source with tag, whose root must be a
        /// T; returns at once. The receive is posted to MPI now, so it takes its place in MPI's
        /// matching order: a receive posted later on this communicator (OIrecv, ORecv, Recv,
        /// Irecv) never takes its message. No size is guessed: the receive lands in up to 16 GiB
        /// of reserved address space of which only what the message fills becomes memory (a
        /// larger graph fails the request: receive it with ORecv). Argument errors are thrown
        /// here.</summary>
        public ORequest<T> OIrecv<T>(int source,
                                     int tag) => new ORequest<T>(this, source, tag).Start();

        // ---- communicator management ----

        /// <summary>A new communicator with the same ranks, whose messages never match this one's
        /// (MPI_Comm_dup). Dispose it when done. Not for an <see cref="Intercomm"/>
        /// (NotSupportedException: merge it first).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Intracomm Dup()
        {
            if (this is Intercomm)
                throw new NotSupportedException(
                    "System.MP: Dup of an intercommunicator is not supported " +
                    "(it would not be an Intracomm); Merge it first");
            int newComm;
            Errors.Check(MPDirect.CommDup(handle, out newComm));
            return new Intracomm(newComm, true);
        }

        /// <summary>MPI_Comm_free; does nothing for World and Self, or when
        /// already disposed.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Dispose()
        {
            if (!owned || handle == NullHandle)
                return;
            Errors.Check(MPDirect.CommFree(ref handle));
        }

        /// <summary>MPI_COMM_NULL: what a freed handle, or Split's "no communicator",
        /// reads as.</summary>
        internal static readonly int NullHandle = ReadNullHandle();

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int ReadNullHandle() => MPDirect.CommNullHandle();
    }

    /// <summary>Per-thread one-element arrays for the single-value calls, Recv&lt;T&gt; and
    /// the collectives of one value (Bcast(ref T), Allreduce&lt;T&gt;, …): no allocation per
    /// call.</summary>
    internal static class Scalars<T>
    {
        [ThreadStatic]
        static T[] send, recv;
        internal static T[] Send => send ?? (send = new T[1]);
        internal static T[] Recv => recv ?? (recv = new T[1]);
    }
}

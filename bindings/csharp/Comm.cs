// Comm — a communicator: OPI point-to-point (zero-copy, in place on the managed object).
using System.Runtime.CompilerServices;

namespace System.MP
{
    /// <summary>A communicator: a group of ranks that exchange messages. Point-to-point calls
    /// move transportable objects (OPI, zero-copy, in place) or object graphs (the O-calls,
    /// serialized). Ranks, tags, offsets and counts are checked before anything is sent.</summary>
    public class Comm : IDisposable
    {
        internal int handle;        // the MPI_Comm; MPI_COMM_NULL once disposed
        readonly bool owned;        // false for World and Self, which are never freed
        readonly int rank, size;

        const int Standard = 0, Synchronous = 1;

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal Comm(int handle, bool owned)
        {
            this.handle = handle;
            this.owned = owned;
            Errors.Check(MPDirect.CommRank(handle, out rank));
            Errors.Check(MPDirect.CommSize(handle, out size));
        }

        /// <summary>This process's rank in the communicator, from 0 to Size - 1.</summary>
        public int Rank => rank;
        /// <summary>The number of ranks in the communicator.</summary>
        public int Size => size;

        // ---- OPI point-to-point ----

        /// <summary>Sends a transportable object (see API.md, Terms) in place.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Send(object obj, int dest, int tag) =>
            Errors.Check(MPDirect.Send(handle, size, obj, dest, tag, Standard));

        /// <summary>Sends array[offset .. offset+count) of a one-dimensional array.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Send(Array array, int offset, int count, int dest, int tag) =>
            Errors.Check(MPDirect.SendRange(handle, size, array, offset, count, dest, tag, Standard));

        /// <summary>Synchronous send: returns once the receiver has started receiving.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Ssend(object obj, int dest, int tag) =>
            Errors.Check(MPDirect.Send(handle, size, obj, dest, tag, Synchronous));

        /// <summary>Synchronous send of array[offset .. offset+count).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Ssend(Array array, int offset, int count, int dest, int tag) =>
            Errors.Check(MPDirect.SendRange(handle, size, array, offset, count, dest, tag, Synchronous));

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
            Errors.Check(MPDirect.Recv(handle, size, obj, source, tag, ref st));
            return new Status(ref st);
        }

        /// <summary>Receives into array[offset .. offset+count); nothing outside it is written.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status Recv(Array array, int offset, int count, int source, int tag)
        {
            var st = new StatusData();
            Errors.Check(MPDirect.RecvRange(handle, size, array, offset, count, source, tag, ref st));
            return new Status(ref st);
        }

        /// <summary>Sends sendObj and receives into recvObj (not a boxed value) in one blocking call.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status Sendrecv(object sendObj, int dest, int sendTag, object recvObj, int source, int recvTag)
        {
            RefuseBoxed(recvObj, nameof(recvObj));
            var st = new StatusData();
            Errors.Check(MPDirect.Sendrecv(handle, size, sendObj, dest, sendTag, recvObj, source, recvTag, ref st));
            return new Status(ref st);
        }

        /// <summary>Sends sendArray[sendOffset .. +sendCount) and receives into
        /// recvArray[recvOffset .. +recvCount) in one blocking call (1-D arrays). The two may be
        /// ranges of one array if they do not overlap — a halo exchange in one call, with no
        /// Request objects. Returns the number of elements received (at most recvCount). An
        /// addition to the API contract's whole-object Sendrecv.</summary>
        /// <remarks>No Status object, as MPI_STATUS_IGNORE in C and mpi4py's optional status: a
        /// halo exchange names its source and tag, and allocating a Status measured ~0.5 µs per
        /// call when caches are cold after a compute phase (the shallow-water case study).</remarks>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public int Sendrecv(Array sendArray, int sendOffset, int sendCount, int dest, int sendTag,
                            Array recvArray, int recvOffset, int recvCount, int source, int recvTag)
        {
            var st = new StatusData();
            Errors.Check(MPDirect.SendrecvRange(handle, size, sendArray, sendOffset, sendCount, dest, sendTag,
                                                recvArray, recvOffset, recvCount, source, recvTag, ref st));
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
            Errors.Check(MPDirect.Isend(handle, size, obj, dest, tag, Standard, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts sending array[offset .. offset+count) of a one-dimensional array.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Isend(Array array, int offset, int count, int dest, int tag)
        {
            var request = new Request();
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.IsendRange(handle, size, array, offset, count, dest, tag, Standard, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Non-blocking synchronous send: completes once the receiver has started receiving.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Issend(object obj, int dest, int tag)
        {
            var request = new Request();
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Isend(handle, size, obj, dest, tag, Synchronous, request, out id, ref st));
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
            Errors.Check(MPDirect.Irecv(handle, size, obj, source, tag, request, out id, ref st));
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
            Errors.Check(MPDirect.IrecvRange(handle, size, array, offset, count, source, tag, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Receives one value of a primitive type or a struct without references: the
        /// message must hold exactly one T (Status.Count is 1).</summary>
        public T Recv<T>(int source, int tag) where T : struct
        {
            Status unused;
            return Recv<T>(source, tag, out unused);
        }

        /// <summary>Receives one value, with its status.</summary>
        public T Recv<T>(int source, int tag, out Status status) where T : struct
        {
            T[] one = Scalars<T>.Recv;
            one[0] = default(T);
            status = Recv(one, source, tag);
            if (status.Count != 1)   // an empty message: no value arrived
                throw new MPException("System.MP: Recv<" + typeof(T).Name + "> received a message of " + status.Bytes +
                                      " bytes, not one " + typeof(T).Name, Errors.PartialElement);
            return one[0];
        }

        /// <summary>A boxed value given as a receive buffer would be filled in a temporary box
        /// that the caller never sees: refused, whatever the value type.</summary>
        internal static void RefuseBoxed(object obj, string parameter)
        {
            if (obj is ValueType)
                throw new ArgumentException("System.MP: a boxed value (" + obj.GetType() + ") cannot be received into: " +
                                            "the data would land in a temporary copy; use Recv<T>/Bcast(ref T), or an array",
                                            parameter);
        }

        /// <summary>Waits for a matching message without receiving it. Count and Bytes are the
        /// message's size in bytes; Cancelled is false.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status Probe(int source, int tag)
        {
            var st = new StatusData();
            Errors.Check(MPDirect.Probe(handle, size, source, tag, ref st));
            return new Status(ref st);
        }

        /// <summary>The status of a matching waiting message, or null when there is none.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status Iprobe(int source, int tag)
        {
            var st = new StatusData();
            int found;
            Errors.Check(MPDirect.Iprobe(handle, size, source, tag, ref st, out found));
            return found != 0 ? new Status(ref st) : null;
        }

        // ---- structured data transport: any object graph, one message per graph ----

        /// <summary>Sends the graph under graph (reference fields travel when [Transportable];
        /// arrays of objects with their elements; shared references and cycles kept).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void OSend(object graph, int dest, int tag) => Errors.Check(MPDirect.OSend(handle, size, graph, dest, tag));

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
            status = new Status(ref st);
            return result == null ? default(T) : (T)result;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        object ReceiveGraph(int source, int tag, Type expected, ref StatusData st)
        {
            object result;
            Errors.Check(MPDirect.ORecv(handle, size, source, tag, expected, out result, ref st));
            return result;
        }

        // ---- communicator management ----

        /// <summary>A new communicator with the same ranks, whose messages never match this one's
        /// (MPI_Comm_dup). Dispose it when done.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Intracomm Dup()
        {
            int newComm;
            Errors.Check(MPDirect.CommDup(handle, out newComm));
            return new Intracomm(newComm, true);
        }

        /// <summary>MPI_Comm_free; does nothing for World and Self, or when already disposed.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Dispose()
        {
            if (!owned || handle == NullHandle)
                return;
            Errors.Check(MPDirect.CommFree(ref handle));
        }

        /// <summary>MPI_COMM_NULL: what a freed handle, or Split's "no communicator", reads as.</summary>
        internal static readonly int NullHandle = ReadNullHandle();

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int ReadNullHandle() => MPDirect.CommNullHandle();
    }

    /// <summary>A communicator within one group of ranks: point-to-point plus collectives.
    /// Every rank of the communicator must call a collective, in the same order.</summary>
    public class Intracomm : Comm
    {
        internal Intracomm(int handle, bool owned) : base(handle, owned) { }

        /// <summary>Splits by color (a negative color: this rank joins no new communicator and
        /// gets null), ordering ranks by key.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Intracomm Split(int color, int key)
        {
            int newComm;
            Errors.Check(MPDirect.CommSplit(handle, color, key, out newComm));
            return newComm == NullHandle ? null : new Intracomm(newComm, true);
        }

        /// <summary>Returns once every rank has called it.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Barrier() => Errors.Check(MPDirect.Barrier(handle));

        // ---- OPI collectives: zero-copy on the arrays, the same pinning policy as point-to-point.
        // Arguments MPI reads only at the root may be null elsewhere. A local argument error
        // throws before this rank enters MPI (ranks that passed good arguments then wait, as
        // in MPI); a mismatch only MPI sees (e.g. a longer message) is an MPException.

        /// <summary>The root's object (any transportable object) overwrites every other rank's.
        /// Off the root a boxed value is refused (ArgumentException): use Bcast(ref T).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Bcast(object obj, int root)
        {
            if (Rank != root)
                RefuseBoxed(obj, nameof(obj));
            Errors.Check(MPDirect.Bcast(handle, Size, obj, root));
        }

        /// <summary>The root's value replaces value on every rank.</summary>
        public void Bcast<T>(ref T value, int root) where T : struct
        {
            T[] one = Scalars<T>.Recv;
            one[0] = value;
            Bcast(one, root);
            value = one[0];
        }

        /// <summary>The root's array[offset .. offset+count) overwrites the same range on every
        /// other rank.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Bcast(Array array, int offset, int count, int root) =>
            Errors.Check(MPDirect.BcastRange(handle, Size, array, offset, count, root));

        /// <summary>The root's sendArray (Size times recvArray's length) is cut into Size equal
        /// parts, part i to rank i.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Scatter(Array sendArray, Array recvArray, int root) =>
            Errors.Check(MPDirect.Scatter(handle, Size, Rank, sendArray, recvArray, root));

        /// <summary>Every rank's sendArray lands, in rank order, in the root's recvArray (Size times as long).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Gather(Array sendArray, Array recvArray, int root) =>
            Errors.Check(MPDirect.Gather(handle, Size, Rank, sendArray, recvArray, root));

        /// <summary>Every rank's sendArray lands, in rank order, in every rank's recvArray (Size
        /// times as long).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Allgather(Array sendArray, Array recvArray) =>
            Errors.Check(MPDirect.Allgather(handle, Size, sendArray, recvArray));

        /// <summary>Both arrays hold Size equal blocks; block j of rank i goes to block i of rank j.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Alltoall(Array sendArray, Array recvArray) =>
            Errors.Check(MPDirect.Alltoall(handle, Size, sendArray, recvArray));

        /// <summary>Element-wise reduction into the root's recvArray (the same array as
        /// sendArray reduces in place).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Reduce(Array sendArray, Array recvArray, Op op, int root)
        {
            Usable(op);
            int rc = MPDirect.Reduce(handle, Size, Rank, sendArray, recvArray, op.Code, root);
            Reduced(rc, op);
        }

        /// <summary>Element-wise reduction whose result every rank receives (the same array as
        /// sendArray reduces in place).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Allreduce(Array sendArray, Array recvArray, Op op)
        {
            Usable(op);
            int rc = MPDirect.Allreduce(handle, Size, sendArray, recvArray, op.Code);
            Reduced(rc, op);
        }

        /// <summary>The reduction of one value over all ranks.</summary>
        public T Allreduce<T>(T value, Op op) where T : struct
        {
            T[] one = Scalars<T>.Send, result = Scalars<T>.Recv;
            one[0] = value;
            Allreduce(one, result, op);
            return result[0];
        }

        /// <summary>Inclusive prefix reduction: rank i gets x0 ∘ … ∘ xi.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Scan(Array sendArray, Array recvArray, Op op)
        {
            Usable(op);
            int rc = MPDirect.Scan(handle, Size, sendArray, recvArray, op.Code);
            Reduced(rc, op);
        }

        /// <summary>Ends a reduction that returned rc. A user operator runs on some ranks only
        /// (leaves of a reduction tree, rank 0 of a scan never apply it), so when one throws,
        /// the ranks agree on it with one extra Allreduce of a flag and every rank raises
        /// MPException; built-in operators need no agreement. A negative rc is an argument this
        /// rank refused before entering MPI: no agreement then, as the collective never ran here.</summary>
        void Reduced(int rc, Op op)
        {
            if (op.Combiner == null || rc < 0) {
                Errors.Check(rc);
                return;
            }
            // made now: the agreement below is another internal call, and the record it reads
            // belongs to this collective
            Exception failed = rc != 0 ? Errors.Make(rc) : null;
            Exception thrown = Combiner.TakeFailure();
            bool thrownAnywhere = AgreeOnFailure(thrown != null);
            if (failed != null)
                throw failed;
            if (thrown != null)
                throw new MPException("System.MP: the user reduction operator threw: " + thrown.Message, -1, thrown);
            if (thrownAnywhere)
                throw new MPException("System.MP: the user reduction operator threw on another rank; the result of this " +
                                      "collective is not valid on any rank", -1);
        }

        /// <summary>true on every rank when failed was true on any.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        bool AgreeOnFailure(bool failed)
        {
            int[] mine = FailureFlags.Mine, any = FailureFlags.Any;
            mine[0] = failed ? 1 : 0;
            Errors.Check(MPDirect.Allreduce(handle, Size, mine, any, Op.Max.Code));
            return any[0] != 0;
        }

        /// <summary>Per-thread flags of AgreeOnFailure (not Scalars: Allreduce&lt;int&gt; holds those).</summary>
        static class FailureFlags
        {
            [ThreadStatic] static int[] mine, any;
            internal static int[] Mine => mine ?? (mine = new int[1]);
            internal static int[] Any => any ?? (any = new int[1]);
        }

        static void Usable(Op op)
        {
            if (op == null)
                throw new ArgumentNullException(nameof(op));
            op.CheckUsable();
        }

        /// <summary>The root's graph arrives at every rank; every rank (the root too) returns its
        /// own copy. graph is ignored off the root.</summary>
        public T OBcast<T>(T graph, int root)
        {
            object result = BroadcastGraph(graph, root, typeof(T));
            return result == null ? default(T) : (T)result;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        object BroadcastGraph(object graph, int root, Type expected)
        {
            object result;
            Errors.Check(MPDirect.OBcast(handle, Size, Rank, graph, root, expected, out result));
            return result;
        }

        /// <summary>The root's array, cut into Size pieces (sizes differ by at most one; lower
        /// ranks take the extra), piece i to rank i, each written once as a self-contained piece.
        /// Returns this rank's piece (empty, never null); array is ignored off the root.</summary>
        public T[] OScatter<T>(T[] array, int root)
        {
            var sizes = new long[Size];
            try {
                Scatter(array, root, sizes);
                return (T[])ReadPiece(0, sizes[0], typeof(T[]));
            } finally {
                ReleasePieces();
            }
        }

        /// <summary>The root gets every rank's piece joined in rank order (the pieces are read,
        /// never re-serialized); other ranks get null.</summary>
        public T[] OGather<T>(T[] piece, int root)
        {
            var sizes = new long[Size];
            try {
                return GatherPieces(piece, root, false, sizes) ? Join<T>(sizes) : null;
            } finally {
                ReleasePieces();
            }
        }

        /// <summary>Every rank gets every rank's piece joined in rank order.</summary>
        public T[] OAllgather<T>(T[] piece)
        {
            var sizes = new long[Size];
            try {
                GatherPieces(piece, 0, true, sizes);
                return Join<T>(sizes);
            } finally {
                ReleasePieces();
            }
        }

        T[] Join<T>(long[] sizes)
        {
            var pieces = new T[sizes.Length][];
            long offset = 0;
            int total = 0;
            for (int r = 0; r < sizes.Length; r++) {
                pieces[r] = (T[])ReadPiece(offset, sizes[r], typeof(T[]));
                offset += sizes[r];
                total += pieces[r].Length;
            }
            var all = new T[total];
            int at = 0;
            foreach (T[] p in pieces) {
                Array.Copy(p, 0, all, at, p.Length);
                at += p.Length;
            }
            return all;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        void Scatter(Array array, int root, long[] sizes) =>
            Errors.Check(MPDirect.OScatter(handle, Size, Rank, array, root, sizes));

        [MethodImpl(MethodImplOptions.NoInlining)]
        bool GatherPieces(Array piece, int root, bool all, long[] sizes)
        {
            Errors.Check(all ? MPDirect.OAllgather(handle, Size, Rank, piece, sizes)
                             : MPDirect.OGather(handle, Size, Rank, piece, root, sizes));
            return all || Rank == root;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void ReleasePieces() => MPDirect.SdRelease();

        [MethodImpl(MethodImplOptions.NoInlining)]
        static object ReadPiece(long offset, long count, Type expected)
        {
            object result;
            Errors.Check(MPDirect.SdReadIncoming(offset, count, expected, out result));
            return result;
        }
    }

    /// <summary>Per-thread one-element arrays for the single-value calls (no allocation per call).</summary>
    internal static class Scalars<T>
    {
        [ThreadStatic] static T[] send, recv;
        internal static T[] Send => send ?? (send = new T[1]);
        internal static T[] Recv => recv ?? (recv = new T[1]);
    }
}

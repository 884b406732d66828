// Intracomm — a communicator within one group: point-to-point plus the collectives.
using System.Runtime.CompilerServices;

namespace System.MP
{
    /// <summary>A communicator within one group of ranks: point-to-point plus collectives.
    /// Every rank of the communicator must call a collective, in the same order.</summary>
    public partial class Intracomm : Comm
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
        public void Bcast<T>(ref T value, int root)
            where T : struct
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

        /// <summary>Every rank's sendArray lands, in rank order, in the root's recvArray (Size
        /// times as long).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Gather(Array sendArray, Array recvArray, int root) =>
            Errors.Check(MPDirect.Gather(handle, Size, Rank, sendArray, recvArray, root));

        /// <summary>Every rank's sendArray lands, in rank order, in every rank's recvArray (Size
        /// times as long).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Allgather(Array sendArray, Array recvArray) =>
            Errors.Check(MPDirect.Allgather(handle, Size, sendArray, recvArray));

        /// <summary>Both arrays hold Size equal blocks; block j of rank i goes to block i of
        /// rank j.</summary>
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
        public T Allreduce<T>(T value, Op op)
            where T : struct
        {
            T[] one = Scalars<T>.Send, result = Scalars<T>.Recv;
            one[0] = value;
            Allreduce(one, result, op);
            return result[0];
        }

        /// <summary>The reduction of one value over all ranks, returned at the root;
        /// default(T) on the other ranks.</summary>
        public T Reduce<T>(T value, Op op, int root)
            where T : struct
        {
            T[] one = Scalars<T>.Send, result = Scalars<T>.Recv;
            one[0] = value;
            result[0] = default(T);
            Reduce(one, result, op, root);
            return Rank == root ? result[0] : default(T);
        }

        /// <summary>Inclusive prefix reduction of one value: rank i gets
        /// x0 ∘ … ∘ xi.</summary>
        public T Scan<T>(T value, Op op)
            where T : struct
        {
            T[] one = Scalars<T>.Send, result = Scalars<T>.Recv;
            one[0] = value;
            Scan(one, result, op);
            return result[0];
        }

        /// <summary>Exclusive prefix reduction of one value: rank i gets x0 ∘ … ∘ x(i-1);
        /// rank 0 gets default(T).</summary>
        public T Exscan<T>(T value, Op op)
            where T : struct
        {
            T[] one = Scalars<T>.Send, result = Scalars<T>.Recv;
            one[0] = value;
            result[0] = default(T);
            Exscan(one, result, op);
            return Rank == 0 ? default(T) : result[0];
        }

        /// <summary>Every rank's value, in rank order, at the root (an array of Size values);
        /// null on the other ranks.</summary>
        public T[] Gather<T>(T value, int root)
            where T : struct
        {
            T[] one = Scalars<T>.Send;
            one[0] = value;
            T[] all = Rank == root ? new T[Size] : null;
            Gather(one, all, root);
            return all;
        }

        /// <summary>Every rank's value, in rank order, on every rank.</summary>
        public T[] Allgather<T>(T value)
            where T : struct
        {
            T[] one = Scalars<T>.Send;
            one[0] = value;
            var all = new T[Size];
            Allgather(one, all);
            return all;
        }

        /// <summary>Rank i gets the root's values[i]; values (Size of them) is read at the root
        /// only and may be null elsewhere.</summary>
        public T Scatter<T>(T[] values, int root)
            where T : struct
        {
            if (Rank == root) {
                if (values == null)
                    throw new ArgumentNullException(nameof(values),
                                                    "System.MP: Scatter<" + typeof(T).Name +
                                                        ">: the root's values are null");
                if (values.Length != Size)
                    throw new ArgumentException("System.MP: Scatter<" + typeof(T).Name +
                                                    ">: the root's values hold " + values.Length +
                                                    " values; one per rank (Size = " + Size +
                                                    ") were expected",
                                                nameof(values));
            }
            T[] one = Scalars<T>.Recv;
            Scatter(Rank == root ? values : null, one, root);
            return one[0];
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
        /// rank refused before entering MPI: no agreement then, as the collective never
        /// ran here.</summary>
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
                throw new MPException(
                    "System.MP: the user reduction operator threw: " + thrown.Message, -1, thrown);
            if (thrownAnywhere)
                throw new MPException(
                    "System.MP: the user reduction operator threw on another rank; the result of " +
                        "this collective is not valid on any rank",
                    -1);
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

        /// <summary>Per-thread flags of AgreeOnFailure (not Scalars: Allreduce&lt;int&gt;
        /// holds those).</summary>
        static class FailureFlags
        {
            [ThreadStatic]
            static int[] mine, any;
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
            using (BudgetScope()) Errors.Check(
                MPDirect.OBcast(handle, Size, Rank, graph, root, expected, out result));
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
                using (BudgetScope()) return (T[])ReadIncoming(0, sizes[0], typeof(T[]));
            } finally {
                ReleaseIncoming();
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
                ReleaseIncoming();
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
                ReleaseIncoming();
            }
        }

        T[] Join<T>(long[] sizes)
        {
            var pieces = new T[sizes.Length][];
            long offset = 0;
            int total = 0;
            using (BudgetScope())   // each piece is one message
                for (int r = 0; r < sizes.Length; r++)
            {
                pieces[r] = (T[])ReadIncoming(offset, sizes[r], typeof(T[]));
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
    }
}

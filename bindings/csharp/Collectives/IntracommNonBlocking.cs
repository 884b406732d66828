// Intracomm, non-blocking collectives: each starts MPI's non-blocking collective and returns a
// Request. The arrays stay MPI's until the request completes (Wait, Test, await, ...); like an
// Isend's object they are pinned only if the GC could move them, and a dropped Request is
// finished by the core. Iallgather, Ialltoall, Igather, Iscatter and the v-forms run as one
// MPI_Ialltoallw in which every block carries its size, so that a block of the wrong size is an
// MPException where it arrives (MPICH drops a too-long block of a non-blocking collective without
// an error, and leaves a short one unreported). MPICH's Ibcast reports a mismatch itself.
using System.Runtime.CompilerServices;

namespace System.MP
{
    public partial class Intracomm
    {
        // The arguments are checked as the blocking calls check them, before anything starts;
        // the Status of a completed collective has Source -1, Tag MP.AnyTag, and Count / Bytes
        // the elements / bytes this rank's receive array got (0 for Ibarrier, for Ireduce,
        // Igather and Igatherv off the root, and for Iexscan at rank 0).

        /// <summary>Starts a barrier: the request completes once every rank has
        /// started it.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Ibarrier()
        {
            var request = new Request(nameof(Ibarrier));
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Ibarrier(handle, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts a broadcast of the root's whole array into every other rank's array
        /// (of the same length and element type). Do not read or write the array until the
        /// request completes. A rank whose array holds another number of elements than the
        /// root's raises MPException when its request completes (Wait, Test, await: MPI's report
        /// of the mismatch; ranks that receive from it in MPI's tree may raise too); nothing past
        /// its array is written.</summary>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">array is not transportable.</exception>
        /// <exception cref="ArgumentOutOfRangeException">root is not a rank of
        /// this communicator.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Ibcast(Array array, int root)
        {
            var request = new Request(nameof(Ibcast));
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Ibcast(handle, Size, array, root, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts an element-wise reduction whose result every rank receives in
        /// recvArray (the same array as sendArray reduces in place). Built-in operators
        /// only.</summary> <exception cref="ArgumentNullException">an array or op is
        /// null.</exception> <exception cref="ArgumentException">the arrays differ in length or
        /// element type, the operator is not defined for the element type, or op is a C# operator
        /// (Op.Create): it would run inside whichever thread's MPI call makes progress — use
        /// Allreduce for it.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Iallreduce(Array sendArray, Array recvArray, Op op)
        {
            Usable(op);
            var request = new Request(nameof(Iallreduce));
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Iallreduce(handle, Size, sendArray, recvArray, op.Code, request,
                                             out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts an element-wise reduction into the root's recvArray (recvArray may be
        /// null off the root; the same array as sendArray reduces in place). Built-in operators
        /// only.</summary> <exception cref="ArgumentNullException">sendArray, the root's recvArray
        /// or op is null.</exception> <exception cref="ArgumentOutOfRangeException">root is not a
        /// rank of this communicator.</exception> <exception cref="ArgumentException">as
        /// for Iallreduce.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Ireduce(Array sendArray, Array recvArray, Op op, int root)
        {
            Usable(op);
            var request = new Request(nameof(Ireduce));
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Ireduce(handle, Size, Rank, sendArray, recvArray, op.Code, root,
                                          request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts gathering every rank's sendArray, in rank order, into every rank's
        /// recvArray (Size times as long). A rank that receives a block of another size (the
        /// ranks' sendArrays differ in length) raises MPException when its request completes
        /// (Wait, Test, await), naming the sender and both sizes; nothing outside the block is
        /// written.</summary>
        /// <exception cref="ArgumentNullException">an array is null.</exception>
        /// <exception cref="ArgumentException">wrong lengths, different element types, or the
        /// same array twice.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Iallgather(Array sendArray, Array recvArray)
        {
            var request = new Request(nameof(Iallgather));
            var st = new StatusData();
            long id;
            Errors.Check(
                MPDirect.Iallgather(handle, Size, sendArray, recvArray, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts an all-to-all exchange: both arrays hold Size equal blocks; block j of
        /// rank i goes to block i of rank j. A rank that receives a block of another size (the
        /// ranks' arrays differ in length) raises MPException when its request completes (Wait,
        /// Test, await), naming the sender and both sizes; nothing outside the block is
        /// written.</summary>
        /// <exception cref="ArgumentNullException">an array is null.</exception>
        /// <exception cref="ArgumentException">wrong lengths, different element types, or the
        /// same array twice.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Ialltoall(Array sendArray, Array recvArray)
        {
            var request = new Request(nameof(Ialltoall));
            var st = new StatusData();
            long id;
            Errors.Check(
                MPDirect.Ialltoall(handle, Size, sendArray, recvArray, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts gathering every rank's sendArray, in rank order, into the root's
        /// recvArray (Size times as long; null elsewhere is fine): the non-blocking
        /// <see cref="Gather(Array, Array, int)"/>. The Status at the root counts recvArray's
        /// elements, elsewhere 0. A rank whose sendArray is not recvArray.Length / Size long
        /// makes the root's Wait raise MPException naming it (every block travels with its
        /// size).</summary>
        /// <example><code>
        /// var mine = new double[] { MP.World.Rank };
        /// var all = MP.World.Rank == 0 ? new double[MP.World.Size] : null;
        /// Request r = MP.World.Igather(mine, all, 0);
        /// // ... work that touches neither array ...
        /// r.Wait();
        /// </code></example>
        /// <exception cref="ArgumentNullException">sendArray, or the root's recvArray, is
        /// null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">root is not a rank of this
        /// communicator.</exception>
        /// <exception cref="ArgumentException">at the root, recvArray is not Size times
        /// sendArray's length, the element types differ, or one array is passed for
        /// both.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Igather(Array sendArray, Array recvArray, int root)
        {
            var request = new Request(nameof(Igather));
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Igather(handle, Size, Rank, sendArray, recvArray, root, request,
                                          out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts scattering the root's sendArray (Size times recvArray's length; null
        /// elsewhere is fine) in rank order: block i lands in rank i's recvArray. The
        /// non-blocking <see cref="Scatter(Array, Array, int)"/>. A rank whose recvArray is
        /// not the root's sendArray.Length / Size long raises MPException from Wait.</summary>
        /// <exception cref="ArgumentNullException">recvArray, or the root's sendArray, is
        /// null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">root is not a rank of this
        /// communicator.</exception>
        /// <exception cref="ArgumentException">at the root, sendArray is not Size times
        /// recvArray's length, the element types differ, or one array is passed for
        /// both.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Iscatter(Array sendArray, Array recvArray, int root)
        {
            var request = new Request(nameof(Iscatter));
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Iscatter(handle, Size, Rank, sendArray, recvArray, root, request,
                                           out id, ref st));
            return request.Started(id, ref st);
        }

        // ---- the v-forms: the checks of Gatherv, Scatterv, Allgatherv and Alltoallv (see
        // IntracommVariable.cs). counts and displs are copied during the call: the caller may
        // reuse or change them at once. The arrays are MPI's until the request completes. A block
        // whose size sender and receiver disagree on raises MPException from the receiver's Wait
        // (Test, await), as the blocking form does; its Status counts the elements its receive
        // blocks hold.

        /// <summary>Starts <see cref="Gatherv"/>: every rank's whole sendArray lands in the root's
        /// recvArray, rank r's at [displs[r], displs[r] + counts[r]). recvArray, counts and
        /// displs are read at the root only (null elsewhere is fine), and only during this call.
        /// </summary>
        /// <example><code>
        /// // rank r contributes r + 1 values; the root lays them end to end
        /// int size = MP.World.Size;
        /// var mine = new int[MP.World.Rank + 1];
        /// int[] counts = null, displs = null;
        /// int[] all = null;
        /// if (MP.World.Rank == 0) {
        ///     counts = new int[size];
        ///     displs = new int[size];
        ///     for (int r = 0; r &lt; size; r++) {
        ///         counts[r] = r + 1;
        ///         displs[r] = r == 0 ? 0 : displs[r - 1] + counts[r - 1];
        ///     }
        ///     all = new int[displs[size - 1] + counts[size - 1]];
        /// }
        /// Request g = MP.World.Igatherv(mine, all, counts, displs, 0);
        /// g.Wait();   // at the root: MPException if a rank's array was not counts[r] long
        /// </code></example>
        /// <exception cref="ArgumentNullException">sendArray, or at the root recvArray, counts or
        /// displs, is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">root is not a rank; a count or
        /// displacement is negative, or a block passes the end of recvArray.</exception>
        /// <exception cref="ArgumentException">counts or displs do not have Size elements; blocks
        /// overlap; the element types differ; sendArray and recvArray are one array; counts[root]
        /// differs from the root's sendArray.Length.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Igatherv(Array sendArray, Array recvArray, int[] counts, int[] displs,
                                int root)
        {
            var request = new Request(nameof(Igatherv));
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Igatherv(handle, Size, Rank, sendArray, recvArray, counts, displs,
                                           root, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts <see cref="Scatterv"/>: the root sends [displs[r], displs[r] +
        /// counts[r]) of its sendArray to rank r's whole recvArray. sendArray, counts and displs
        /// are read at the root only (null elsewhere is fine); counts and displs only during this
        /// call. A rank whose recvArray.Length differs from the root's counts[rank] gets
        /// MPException from Wait.</summary>
        /// <exception cref="ArgumentNullException">recvArray, or at the root sendArray, counts or
        /// displs, is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">root is not a rank; a count or
        /// displacement is negative, or a block passes the end of sendArray.</exception>
        /// <exception cref="ArgumentException">counts or displs do not have Size elements; the
        /// element types differ; sendArray and recvArray are one array; counts[root] differs from
        /// the root's recvArray.Length.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Iscatterv(Array sendArray, int[] counts, int[] displs, Array recvArray,
                                 int root)
        {
            var request = new Request(nameof(Iscatterv));
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Iscatterv(handle, Size, Rank, sendArray, counts, displs,
                                            recvArray, root, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts <see cref="Allgatherv"/>: every rank's whole sendArray lands in every
        /// rank's recvArray, rank r's at [displs[r], displs[r] + counts[r]). counts and displs
        /// are read on every rank, during this call only, and must be the same
        /// everywhere.</summary>
        /// <exception cref="ArgumentNullException">an argument is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">a count or displacement is negative, or
        /// a block passes the end of recvArray.</exception>
        /// <exception cref="ArgumentException">counts or displs do not have Size elements; blocks
        /// overlap; the element types differ; sendArray and recvArray are one array; counts[Rank]
        /// differs from sendArray.Length.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Iallgatherv(Array sendArray, Array recvArray, int[] counts, int[] displs)
        {
            var request = new Request(nameof(Iallgatherv));
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Iallgatherv(handle, Size, Rank, sendArray, recvArray, counts,
                                              displs, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts <see cref="Alltoallv"/>: block j of this rank's sendArray
        /// ([sendDispls[j], sendDispls[j] + sendCounts[j])) goes to rank j, which receives it as
        /// its block i ([recvDispls[i], recvDispls[i] + recvCounts[i])) when this rank is i. The
        /// four int arrays are read during this call only.</summary>
        /// <exception cref="ArgumentNullException">an argument is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">a count or displacement is negative, or
        /// a block passes the end of its array.</exception>
        /// <exception cref="ArgumentException">a counts or displacements array does not have Size
        /// elements; receive blocks overlap; the element types differ; sendArray and recvArray
        /// are one array; sendCounts[Rank] differs from recvCounts[Rank].</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Ialltoallv(Array sendArray, int[] sendCounts, int[] sendDispls,
                                  Array recvArray, int[] recvCounts, int[] recvDispls)
        {
            var request = new Request(nameof(Ialltoallv));
            var st = new StatusData();
            long id;
            Errors.Check(
                MPDirect.Ialltoallv(handle, Size, Rank, sendArray, sendCounts, sendDispls,
                                    recvArray, recvCounts, recvDispls, request, out id, ref st));
            return request.Started(id, ref st);
        }

        // ---- the rest of the reductions: built-in operators only (see Iallreduce)

        /// <summary>Starts an inclusive prefix reduction, element-wise: rank i gets
        /// x0 ∘ … ∘ xi in recvArray (the same array as sendArray reduces in place). The
        /// non-blocking <see cref="Scan(Array, Array, Op)"/>, with MPI's built-in operators
        /// only.</summary>
        /// <example><code>
        /// var mine = new long[] { MP.World.Rank + 1 };
        /// var upTo = new long[1];
        /// MP.World.Iscan(mine, upTo, Op.Sum).Wait();   // rank i: 1 + 2 + ... + (i + 1)
        /// </code></example>
        /// <exception cref="ArgumentNullException">an array or op is null.</exception>
        /// <exception cref="ArgumentException">the arrays differ in length or element type, the
        /// operator is not defined for the element type (Op.Replace and Op.NoOp are for windows
        /// only), or op is a C# operator (Op.Create): use Scan for it.</exception>
        /// <exception cref="ObjectDisposedException">op has been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Iscan(Array sendArray, Array recvArray, Op op)
        {
            Usable(op);
            var request = new Request(nameof(Iscan));
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Iscan(handle, Size, sendArray, recvArray, op.Code, request,
                                        out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts an exclusive prefix reduction, element-wise: rank i (i &gt; 0)
        /// gets x0 ∘ … ∘ x(i-1) in recvArray; rank 0's recvArray is left untouched (its
        /// Status counts 0 elements). The non-blocking <see cref="Exscan"/>, with MPI's
        /// built-in operators only; two arrays of one length and element type.</summary>
        /// <exception cref="ArgumentNullException">an array or op is null.</exception>
        /// <exception cref="ArgumentException">the lengths or element types differ; one array is
        /// passed for both; op is not defined for the element type, or is a C# operator: use
        /// Exscan for it.</exception>
        /// <exception cref="ObjectDisposedException">op has been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Iexscan(Array sendArray, Array recvArray, Op op)
        {
            Usable(op);
            var request = new Request(nameof(Iexscan));
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.Iexscan(handle, Size, Rank, sendArray, recvArray, op.Code,
                                          request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts an element-wise reduction of every rank's sendArray (Size times
        /// recvArray's length), scattered: rank i receives block i of the result. The
        /// non-blocking <see cref="ReduceScatterBlock"/>, with MPI's built-in operators
        /// only.</summary>
        /// <exception cref="ArgumentNullException">an array or op is null.</exception>
        /// <exception cref="ArgumentException">sendArray is not Size times recvArray's length;
        /// the element types differ; one array is passed for both; op is not defined for the
        /// element type, or is a C# operator: use ReduceScatterBlock for it.</exception>
        /// <exception cref="ObjectDisposedException">op has been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request IreduceScatterBlock(Array sendArray, Array recvArray, Op op)
        {
            Usable(op);
            var request = new Request(nameof(IreduceScatterBlock));
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.IreduceScatterBlock(handle, Size, sendArray, recvArray, op.Code,
                                                      request, out id, ref st));
            return request.Started(id, ref st);
        }
    }
}

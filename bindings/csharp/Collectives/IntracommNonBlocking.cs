// Intracomm, non-blocking collectives: each starts MPI's non-blocking collective and returns a
// Request. The arrays stay MPI's until the request completes (Wait, Test, await, ...); like an
// Isend's object they are pinned only if the GC could move them, and a dropped Request is
// finished by the core.
using System.Runtime.CompilerServices;

namespace System.MP
{
    public partial class Intracomm
    {
        // The arguments are checked as the blocking calls check them, before anything starts;
        // the Status of a completed collective has Source -1, Tag MP.AnyTag, and Count / Bytes
        // the elements / bytes this rank's receive array got (0 for Ibarrier, and for Ireduce
        // off the root).

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
        /// request completes.</summary>
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
        /// recvArray (Size times as long).</summary>
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
        /// rank i goes to block i of rank j.</summary>
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
    }
}

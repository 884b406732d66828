// IntracommVariable — the collectives with a block per rank (Gatherv, Scatterv, Allgatherv,
// Alltoallv) and the remaining reductions (Exscan, ReduceScatterBlock). Zero-copy on the arrays,
// with the pinning policy of the other collectives.
using System.Runtime.CompilerServices;

namespace System.MP
{
    public partial class Intracomm
    {
        // Counts and displacements are in elements of the array they cut (of any rank: a
        // double[,] counts its elements in row-major order). Before anything is sent, each rank
        // checks what it can see: one count and one displacement per rank, none negative, every
        // block inside its array, the blocks of a receive array disjoint, the element types of
        // sendArray and recvArray equal, this rank's own block the size of its own array. A block
        // whose size the sender and the receiver still disagree on (the root's counts against
        // another rank's array) raises MPException on the rank it arrives at, and the
        // communicator stays in step: every block travels as one message, also when empty.

        /// <summary>Every rank's whole sendArray lands in the root's recvArray, rank r's at
        /// [displs[r], displs[r] + counts[r]). counts[r] must equal rank r's sendArray.Length:
        /// the root raises MPException naming the rank whose block had another size. recvArray,
        /// counts and displs are read at the root only (null elsewhere is fine); elements of
        /// recvArray outside every block are left as they were.</summary>
        /// <exception cref="ArgumentNullException">sendArray, or at the root recvArray, counts or
        /// displs, is null.</exception> <exception cref="ArgumentOutOfRangeException">root is not a
        /// rank; a count or displacement is negative, or a block passes the end of
        /// recvArray.</exception> <exception cref="ArgumentException">counts or displs do not have
        /// Size elements; blocks overlap; the element types differ; sendArray and recvArray are one
        /// array; counts[root] differs from the root's sendArray.Length.</exception> <exception
        /// cref="MPException">a rank's sendArray does not have the length the root's counts give it
        /// (at the root), or MPI failed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Gatherv(Array sendArray, Array recvArray, int[] counts, int[] displs,
                            int root) =>
            Errors.Check(MPDirect.Gatherv(handle, Size, Rank, sendArray, recvArray, counts, displs,
                                          root));

        /// <summary>The root sends [displs[r], displs[r] + counts[r]) of its sendArray to rank r,
        /// which receives it into its whole recvArray. counts[r] must equal rank r's
        /// recvArray.Length: otherwise rank r raises MPException (never a silently stale tail).
        /// sendArray, counts and displs are read at the root only (null elsewhere is fine);
        /// blocks of sendArray may overlap.</summary>
        /// <exception cref="ArgumentNullException">recvArray, or at the root sendArray, counts or
        /// displs, is null.</exception> <exception cref="ArgumentOutOfRangeException">root is not a
        /// rank; a count or displacement is negative, or a block passes the end of
        /// sendArray.</exception> <exception cref="ArgumentException">counts or displs do not have
        /// Size elements; the element types differ; sendArray and recvArray are one array;
        /// counts[root] differs from the root's recvArray.Length.</exception> <exception
        /// cref="MPException">this rank's block from the root is not recvArray.Length elements
        /// long, or MPI failed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Scatterv(Array sendArray, int[] counts, int[] displs, Array recvArray,
                             int root) =>
            Errors.Check(MPDirect.Scatterv(handle, Size, Rank, sendArray, counts, displs, recvArray,
                                           root));

        /// <summary>Every rank's whole sendArray lands in every rank's recvArray, rank r's at
        /// [displs[r], displs[r] + counts[r]). counts and displs are read on every rank and must
        /// be the same everywhere; counts[Rank] must equal this rank's sendArray.Length. A block
        /// of another size raises MPException where it arrives.</summary>
        /// <exception cref="ArgumentNullException">an argument is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">a count or displacement is negative, or a
        /// block passes the end of recvArray.</exception> <exception
        /// cref="ArgumentException">counts or displs do not have Size elements; blocks overlap; the
        /// element types differ; sendArray and recvArray are one array; counts[Rank] differs from
        /// sendArray.Length.</exception> <exception cref="MPException">a rank's block arrived with
        /// another size than counts gives it here, or MPI failed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Allgatherv(Array sendArray, Array recvArray, int[] counts, int[] displs) =>
            Errors.Check(MPDirect.Allgatherv(handle, Size, Rank, sendArray, recvArray, counts,
                                             displs));

        /// <summary>Block j of this rank's sendArray ([sendDispls[j], sendDispls[j] +
        /// sendCounts[j])) goes to rank j, which receives it as its block i ([recvDispls[i],
        /// recvDispls[i] + recvCounts[i])) when this rank is i. sendCounts[j] here must equal
        /// recvCounts[i] at rank j: otherwise rank j raises MPException. Send blocks may overlap;
        /// receive blocks may not.</summary> <exception cref="ArgumentNullException">an argument is
        /// null.</exception> <exception cref="ArgumentOutOfRangeException">a count or displacement
        /// is negative, or a block passes the end of its array.</exception> <exception
        /// cref="ArgumentException">a counts or displacements array does not have Size elements;
        /// receive blocks overlap; the element types differ; sendArray and recvArray are one array;
        /// sendCounts[Rank] differs from recvCounts[Rank].</exception> <exception
        /// cref="MPException">a block arrived with another size than recvCounts gives it, or
        /// MPI failed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Alltoallv(Array sendArray, int[] sendCounts, int[] sendDispls, Array recvArray,
                              int[] recvCounts, int[] recvDispls) =>
            Errors.Check(MPDirect.Alltoallv(handle, Size, Rank, sendArray, sendCounts, sendDispls,
                                            recvArray, recvCounts, recvDispls));

        /// <summary>Exclusive prefix reduction, element-wise: rank i (i &gt; 0) gets x0 ∘ … ∘
        /// x(i-1) in recvArray; rank 0's recvArray is left untouched. Built-in and user operators
        /// (Op.Create, non-commutative ones in rank order) alike; sendArray and recvArray are two
        /// arrays of one length and element type (no in-place form).</summary>
        /// <exception cref="ArgumentNullException">an array or op is null.</exception>
        /// <exception cref="ArgumentException">the lengths or element types differ; one array is
        /// passed for both; op is not defined for the element type.</exception> <exception
        /// cref="ObjectDisposedException">op has been disposed.</exception> <exception
        /// cref="MPException">MPI failed, or a user operator threw (on every rank:
        /// see Op.Create).</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Exscan(Array sendArray, Array recvArray, Op op)
        {
            Usable(op);
            int rc = MPDirect.Exscan(handle, Size, Rank, sendArray, recvArray, op.Code);
            Reduced(rc, op);
        }

        /// <summary>Element-wise reduction of every rank's sendArray (Size times recvArray's
        /// length), scattered: rank i receives block i of the result, i.e. elements [i·n,
        /// (i+1)·n) with n = recvArray.Length. Built-in and user operators alike (a
        /// non-commutative one in rank order).</summary>
        /// <exception cref="ArgumentNullException">an array or op is null.</exception>
        /// <exception cref="ArgumentException">sendArray is not Size times recvArray's length; the
        /// element types differ; one array is passed for both; op is not defined for the element
        /// type.</exception> <exception cref="ObjectDisposedException">op has been
        /// disposed.</exception> <exception cref="MPException">MPI failed, or a user operator threw
        /// (on every rank: see Op.Create).</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void ReduceScatterBlock(Array sendArray, Array recvArray, Op op)
        {
            Usable(op);
            int rc = MPDirect.ReduceScatterBlock(handle, Size, sendArray, recvArray, op.Code);
            Reduced(rc, op);
        }
    }
}

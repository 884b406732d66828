// DistGraphComm — a communicator whose processes form a directed graph given edge by edge
// (MPI_Dist_graph_create_adjacent), for the neighbourhood collectives.
using System.Runtime.CompilerServices;

namespace System.MP
{
    /// <summary>An intracommunicator whose processes form a directed graph, made by
    /// <see cref="Intracomm.CreateDistGraphAdjacent"/>: each process names the ranks it receives
    /// from (<see cref="Sources"/>) and sends to (<see cref="Destinations"/>). Its neighbourhood
    /// collectives exchange blocks along those edges only — an irregular halo exchange in one
    /// call. Every collective and point-to-point call of <see cref="Intracomm"/> works on it too.
    /// Dispose it when done.</summary>
    /// <remarks>A rank may appear several times in a list (several edges between two processes):
    /// the k-th edge from a process to another carries the k-th block the sender lists for that
    /// destination into the k-th block the receiver lists for that source, as MPI
    /// defines.</remarks>
    /// <example><code>
    /// // a ring: receive from the left, send to the right
    /// int left = (rank + size - 1) % size, right = (rank + 1) % size;
    /// using (DistGraphComm ring = MP.World.CreateDistGraphAdjacent(new[] { left },
    ///                                                              new[] { right }, false))
    /// {
    ///     var got = new double[1];
    ///     ring.NeighborAllgather(new[] { (double)rank }, got);   // got[0] == left
    /// }
    /// </code></example>
    public sealed class DistGraphComm : Intracomm, ITopology
    {
        readonly int[] sources, destinations;
        readonly int[] topology;   // the neighbours as the core reads them

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal DistGraphComm(int handle) : base(handle, true)
        {
            int indegree, outdegree;
            Errors.Check(MPDirect.DistGraphNeighborsCount(handle, out indegree, out outdegree));
            sources = new int[indegree];
            destinations = new int[outdegree];
            Errors.Check(MPDirect.DistGraphNeighbors(handle, sources, destinations));
            topology = Neighborhood.Describe(sources, destinations, false);
        }

        /// <summary>The ranks this process receives from, in the order given to
        /// <see cref="Intracomm.CreateDistGraphAdjacent"/> (ranks of this communicator, which
        /// reorder may have renumbered; a new array each read).</summary>
        public int[] Sources => (int[])sources.Clone();

        /// <summary>The ranks this process sends to, in the order given (a new array each
        /// read).</summary>
        public int[] Destinations => (int[])destinations.Clone();

        // ---- neighbourhood collectives (MPI_Neighbor_*): a block to each of Destinations, a
        // block from each of Sources, in their orders ----

        /// <summary>Sends the whole of sendArray to every destination and receives, in block k of
        /// recvArray, the sendArray of Sources[k] (MPI_Neighbor_allgather). recvArray holds
        /// indegree (Sources.Length) blocks of sendArray's length; a block from
        /// <see cref="MP.ProcNull"/> (an open edge of a grid) is left as it was.</summary>
        /// <exception cref="ArgumentNullException">an array is null.</exception>
        /// <exception cref="ArgumentException">an array is not transportable, the element types
        /// differ, recvArray is not Sources.Length times as long as sendArray, or both are the same
        /// array.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        /// <exception cref="MPException">a block from a neighbour holds another number of elements
        /// than its receive block (raised on the process it arrives at, naming the source, the
        /// sizes and the element type; nothing outside the block is written, the block's
        /// contents are not valid, and the communicator stays usable), or MPI failed.</exception>
        public void NeighborAllgather(Array sendArray, Array recvArray) => Neighborhood.Arrays(
            this, topology, Neighborhood.Allgather, sendArray, null, null, recvArray, null, null);

        /// <summary>Sends block k of sendArray to Destinations[k] and receives in block k of
        /// recvArray the block Sources[k] sent this way (MPI_Neighbor_alltoall). sendArray holds
        /// outdegree (Destinations.Length) equal blocks, recvArray indegree (Sources.Length)
        /// blocks of the same size; a block from <see cref="MP.ProcNull"/> is left as it was. On a
        /// grid the block sent toward -1 arrives in the -1 neighbour's +1 block, also along a
        /// periodic dimension of one or two processes (MPI-4.0's pairing).</summary>
        /// <example><code>
        /// // a 1-D periodic ring: send left, send right; receive from left, from right
        /// var send = new double[2 * n]; var recv = new double[2 * n];
        /// ring.NeighborAlltoall(send, recv);   // recv[0..n) is the left neighbour's send[n..2n)
        /// </code></example>
        /// <exception cref="ArgumentNullException">an array is null.</exception>
        /// <exception cref="ArgumentException">an array is not transportable, the element types
        /// differ, the lengths do not split into equal blocks, one per neighbour, or both are the
        /// same array.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        /// <exception cref="MPException">a block from a neighbour holds another number of elements
        /// than its receive block (raised on the process it arrives at, naming the source, the
        /// sizes and the element type; nothing outside the block is written, the block's
        /// contents are not valid, and the communicator stays usable), or MPI failed.</exception>
        public void NeighborAlltoall(Array sendArray, Array recvArray) => Neighborhood.Arrays(
            this, topology, Neighborhood.Alltoall, sendArray, null, null, recvArray, null, null);

        /// <summary>Sends sendArray[sendDispls[k] .. + sendCounts[k]) to Destinations[k] and
        /// receives from Sources[k] into recvArray[recvDispls[k] .. + recvCounts[k])
        /// (MPI_Neighbor_alltoallv). Counts and displacements are in elements, one per
        /// destination / source; the receive blocks must not overlap. A sender's count must
        /// equal its receiver's: a block of another size raises MPException on the process it
        /// arrives at.</summary>
        /// <exception cref="ArgumentNullException">an argument is null.</exception>
        /// <exception cref="ArgumentException">a count or displacement list does not hold one
        /// entry per neighbour, the element types differ, receive blocks overlap, or both arrays
        /// are the same.</exception>
        /// <exception cref="ArgumentOutOfRangeException">a count or displacement is negative or
        /// a block passes the end of its array.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        /// <exception cref="MPException">a block from a neighbour holds another number of elements
        /// than its receive block (raised on the process it arrives at, naming the source, the
        /// sizes and the element type; nothing outside the block is written, the block's
        /// contents are not valid, and the communicator stays usable), or MPI failed.</exception>
        public void NeighborAlltoallv(Array sendArray, int[] sendCounts, int[] sendDispls,
                                      Array recvArray, int[] recvCounts, int[] recvDispls) =>
            Neighborhood.Arrays(this, topology, Neighborhood.Alltoallv, sendArray, sendCounts,
                                sendDispls, recvArray, recvCounts, recvDispls);

        /// <summary>A halo exchange in one call (MPI_Neighbor_alltoallw's semantics, a datatype per
        /// region, no packing): sendRegions[k] of sendArrays[k] goes to Destinations[k], and
        /// what Sources[k] sent this way lands in recvRegions[k] of recvArrays[k]. The arrays may
        /// be different arrays (one per neighbour) or the same one listed several times, on both
        /// sides: an array may be in both lists as long as its send and receive regions do not
        /// overlap (a field's edges and its ghost cells). All arrays hold one element type; the
        /// elements of a region travel in its row-major order, and a sender's region must hold as
        /// many elements as its receiver's (else MPException where it arrives). The pairing of
        /// blocks is as for <see cref="NeighborAlltoall(Array, Array)"/>.</summary>
        /// <example><code>
        /// // field: double[rows + 2, cols + 2], one ghost row and column on each side; a 2-D grid
        /// // lists its neighbours as { up, down, left, right }
        /// var f = new Array[] { field, field, field, field };
        /// grid.NeighborAlltoall(
        ///     f, new[] { new Region(new[] { 1, 1 }, new[] { 1, cols }),        // first row: up
        ///                new Region(new[] { rows, 1 }, new[] { 1, cols }),     // last row: down
        ///                new Region(new[] { 1, 1 }, new[] { rows, 1 }),        // first column
        ///                new Region(new[] { 1, cols }, new[] { rows, 1 }) },   // last column
        ///     f, new[] { new Region(new[] { 0, 1 }, new[] { 1, cols }),        // ghost row above
        ///                new Region(new[] { rows + 1, 1 }, new[] { 1, cols }), // ghost row below
        ///                new Region(new[] { 1, 0 }, new[] { rows, 1 }),        // ghost column
        ///                left new Region(new[] { 1, cols + 1 }, new[] { rows, 1 }) });
        /// </code></example>
        /// <exception cref="ArgumentNullException">a list or one of its arrays is
        /// null.</exception>
        /// <exception cref="ArgumentException">a list does not hold one entry per neighbour
        /// (Destinations on the send side, Sources on the receive side), a region is
        /// default(Region) or of the wrong rank, the element types differ, two receive regions of
        /// an array overlap, or a send and a receive region of an array overlap.</exception>
        /// <exception cref="ArgumentOutOfRangeException">a region lies outside its
        /// array.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        /// <exception cref="MPException">a block from a neighbour holds another number of elements
        /// than its receive block (raised on the process it arrives at, naming the source, the
        /// sizes and the element type; nothing outside the block is written, the block's
        /// contents are not valid, and the communicator stays usable), or MPI failed.</exception>
        public void NeighborAlltoall(Array[] sendArrays, Region[] sendRegions, Array[] recvArrays,
                                     Region[] recvRegions) =>
            Neighborhood.RegionAlltoall(this, topology, null, sendArrays, sendRegions, recvArrays,
                                        recvRegions);

        /// <summary>Sends sendRegion of sendArray to every destination and receives the region
        /// Sources[k] sent into recvRegions[k] of recvArray (MPI_Neighbor_alltoallw: the
        /// per-neighbour region form of <see cref="NeighborAllgather(Array, Array)"/>).
        /// sendArray and recvArray may be the same array when sendRegion overlaps none of the
        /// receive regions.</summary>
        /// <exception cref="ArgumentNullException">an array or recvRegions is null.</exception>
        /// <exception cref="ArgumentException">recvRegions does not hold one region per source,
        /// a region is default(Region) or of the wrong rank, the element types differ, or regions
        /// overlap (two receive regions, or the send region and a receive region of one
        /// array).</exception>
        /// <exception cref="ArgumentOutOfRangeException">a region lies outside its
        /// array.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        /// <exception cref="MPException">a block from a neighbour holds another number of elements
        /// than its receive block (raised on the process it arrives at, naming the source, the
        /// sizes and the element type; nothing outside the block is written, the block's
        /// contents are not valid, and the communicator stays usable), or MPI failed.</exception>
        public void NeighborAllgather(Array sendArray, Region sendRegion, Array recvArray,
                                      Region[] recvRegions) =>
            Neighborhood.RegionAllgather(this, topology, null, sendArray, sendRegion, recvArray,
                                         recvRegions);

        /// <summary>Sends sendRegions[k] of sendArray to Destinations[k] and receives from
        /// Sources[k] into recvRegions[k] of recvArray (MPI_Neighbor_alltoallw: the region form
        /// of <see cref="NeighborAlltoallv(Array, int[], int[], Array, int[], int[])"/>, a
        /// region per neighbour instead of a count and a displacement). sendArray and recvArray
        /// may be one array whose send and receive regions do not overlap: a whole halo exchange
        /// of one field.</summary>
        /// <exception cref="ArgumentNullException">an array or a region list is
        /// null.</exception>
        /// <exception cref="ArgumentException">a region list does not hold one region per
        /// neighbour, a region is default(Region) or of the wrong rank, the element types differ,
        /// or regions overlap (two receive regions, or a send and a receive region of one
        /// array).</exception>
        /// <exception cref="ArgumentOutOfRangeException">a region lies outside its
        /// array.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        /// <exception cref="MPException">a block from a neighbour holds another number of elements
        /// than its receive block (raised on the process it arrives at, naming the source, the
        /// sizes and the element type; nothing outside the block is written, the block's
        /// contents are not valid, and the communicator stays usable), or MPI failed.</exception>
        public void NeighborAlltoallv(Array sendArray, Region[] sendRegions, Array recvArray,
                                      Region[] recvRegions) =>
            Neighborhood.RegionAlltoallv(this, topology, null, sendArray, sendRegions, recvArray,
                                         recvRegions);

        // ---- the non-blocking forms: the arrays are MPI's until the request completes (Wait,
        // Test, await...); like an Isend's they are pinned only if the GC could move them. The
        // Status has Source -1 and Count / Bytes what this rank's receive blocks hold. Cancel
        // raises NotSupportedException (MPI forbids cancelling a collective). ----

        /// <summary>Starts <see cref="NeighborAllgather(Array, Array)"/>; the same checks,
        /// before anything starts. A block of another size than its receive block raises
        /// MPException when the request completes (Wait, Test, await), on the process it arrives
        /// at.</summary>
        /// <exception cref="ArgumentNullException">an argument is null.</exception>
        /// <exception cref="ArgumentException">as for the blocking form: lengths or lists that
        /// do not fit the neighbours, different element types, overlapping blocks or
        /// regions.</exception>
        /// <exception cref="ArgumentOutOfRangeException">as for the blocking form: a block or
        /// region outside its array.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        public Request INeighborAllgather(Array sendArray, Array recvArray) =>
            Neighborhood.StartArrays(this, topology, Neighborhood.Allgather,
                                     nameof(INeighborAllgather), sendArray, null, null, recvArray,
                                     null, null);

        /// <summary>Starts <see cref="NeighborAlltoall(Array, Array)"/>; the same checks, before
        /// anything starts. A block of another size than its receive block raises MPException
        /// when the request completes (Wait, Test, await), on the process it arrives at.</summary>
        /// <exception cref="ArgumentNullException">an argument is null.</exception>
        /// <exception cref="ArgumentException">as for the blocking form: lengths or lists that
        /// do not fit the neighbours, different element types, overlapping blocks or
        /// regions.</exception>
        /// <exception cref="ArgumentOutOfRangeException">as for the blocking form: a block or
        /// region outside its array.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        public Request INeighborAlltoall(Array sendArray, Array recvArray) =>
            Neighborhood.StartArrays(this, topology, Neighborhood.Alltoall,
                                     nameof(INeighborAlltoall), sendArray, null, null, recvArray,
                                     null, null);

        /// <summary>Starts <see cref="NeighborAlltoallv(Array, int[], int[], Array, int[],
        /// int[])"/>; the same checks, before anything starts. A block of another size than its
        /// receive block raises MPException when the request completes (Wait, Test, await), on
        /// the process it arrives at.</summary>
        /// <exception cref="ArgumentNullException">an argument is null.</exception>
        /// <exception cref="ArgumentException">as for the blocking form: lengths or lists that
        /// do not fit the neighbours, different element types, overlapping blocks or
        /// regions.</exception>
        /// <exception cref="ArgumentOutOfRangeException">as for the blocking form: a block or
        /// region outside its array.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        public Request INeighborAlltoallv(Array sendArray, int[] sendCounts, int[] sendDispls,
                                          Array recvArray, int[] recvCounts, int[] recvDispls) =>
            Neighborhood.StartArrays(this, topology, Neighborhood.Alltoallv,
                                     nameof(INeighborAlltoallv), sendArray, sendCounts, sendDispls,
                                     recvArray, recvCounts, recvDispls);

        /// <summary>Starts the halo exchange of <see cref="NeighborAlltoall(Array[], Region[],
        /// Array[], Region[])"/>; the same checks, before anything starts. Every array listed is
        /// MPI's until the request completes. A block of another size than its receive block
        /// raises MPException when the request completes (Wait, Test, await), on the process it
        /// arrives at.</summary>
        /// <exception cref="ArgumentNullException">an argument is null.</exception>
        /// <exception cref="ArgumentException">as for the blocking form: lengths or lists that
        /// do not fit the neighbours, different element types, overlapping blocks or
        /// regions.</exception>
        /// <exception cref="ArgumentOutOfRangeException">as for the blocking form: a block or
        /// region outside its array.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        public Request INeighborAlltoall(Array[] sendArrays, Region[] sendRegions,
                                         Array[] recvArrays, Region[] recvRegions) =>
            Neighborhood.RegionAlltoall(this, topology, nameof(INeighborAlltoall), sendArrays,
                                        sendRegions, recvArrays, recvRegions);

        /// <summary>Starts <see cref="NeighborAllgather(Array, Region, Array, Region[])"/>; the
        /// same checks, before anything starts. A block of another size than its receive block
        /// raises MPException when the request completes (Wait, Test, await), on the process it
        /// arrives at.</summary>
        /// <exception cref="ArgumentNullException">an argument is null.</exception>
        /// <exception cref="ArgumentException">as for the blocking form: lengths or lists that
        /// do not fit the neighbours, different element types, overlapping blocks or
        /// regions.</exception>
        /// <exception cref="ArgumentOutOfRangeException">as for the blocking form: a block or
        /// region outside its array.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        public Request INeighborAllgather(Array sendArray, Region sendRegion, Array recvArray,
                                          Region[] recvRegions) =>
            Neighborhood.RegionAllgather(this, topology, nameof(INeighborAllgather), sendArray,
                                         sendRegion, recvArray, recvRegions);

        /// <summary>Starts <see cref="NeighborAlltoallv(Array, Region[], Array, Region[])"/>; the
        /// same checks, before anything starts. A block of another size than its receive block
        /// raises MPException when the request completes (Wait, Test, await), on the process it
        /// arrives at.</summary>
        /// <exception cref="ArgumentNullException">an argument is null.</exception>
        /// <exception cref="ArgumentException">as for the blocking form: lengths or lists that
        /// do not fit the neighbours, different element types, overlapping blocks or
        /// regions.</exception>
        /// <exception cref="ArgumentOutOfRangeException">as for the blocking form: a block or
        /// region outside its array.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        public Request INeighborAlltoallv(Array sendArray, Region[] sendRegions, Array recvArray,
                                          Region[] recvRegions) =>
            Neighborhood.RegionAlltoallv(this, topology, nameof(INeighborAlltoallv), sendArray,
                                         sendRegions, recvArray, recvRegions);
    }
}

// Intracomm: distributed graph topologies (MPI_Dist_graph_create_adjacent).
using System.Runtime.CompilerServices;

namespace System.MP
{
    public partial class Intracomm
    {
        /// <summary>A communicator over the same processes whose neighbours form a directed graph
        /// (MPI_Dist_graph_create_adjacent, unweighted): this process receives from
        /// <paramref name="sources"/> and sends to <paramref name="destinations"/>, ranks of this
        /// communicator, in the order its neighbourhood collectives use. A rank may appear more
        /// than once (several edges) and may be this process itself; an empty list is a process
        /// with no neighbours that way. With reorder false a process keeps its rank; with true MPI
        /// may renumber. Collective: every process calls it, and every edge must be named at both
        /// its ends (j lists i among its destinations as often as i lists j among its sources).
        /// Dispose the result when done.</summary>
        /// <remarks>The arguments of every process are checked before any process creates the
        /// graph, at the cost of one Alltoall of Size ints and one Allreduce: a rank that refused
        /// its own, or edges named at one end only (whose collectives would wait forever), make
        /// every process raise, so that none is left waiting. The process that found the fault
        /// names it; the others say another rank did.</remarks>
        /// <example><code>
        /// // the irregular neighbours of a mesh partition
        /// using (DistGraphComm g = MP.World.CreateDistGraphAdjacent(from, to, false))
        ///     g.NeighborAlltoallv(send, sendCounts, sendDispls, recv, recvCounts, recvDispls);
        /// </code></example>
        /// <exception cref="ArgumentNullException">sources or destinations is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">a rank lies outside 0..Size-1
        /// (MP.ProcNull is no neighbour of a graph).</exception>
        /// <exception cref="ArgumentException">the edges disagree between processes, or another
        /// process refused its arguments.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has been
        /// disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public DistGraphComm CreateDistGraphAdjacent(int[] sources, int[] destinations,
                                                     bool reorder)
        {
            int newComm;
            Errors.Check(MPDirect.DistGraphCreate(handle, Size, sources, destinations,
                                                  reorder ? 1 : 0, out newComm));
            return new DistGraphComm(newComm);
        }
    }
}

// ITopology — the neighbours of a communicator with a topology, in the order MPI's neighbourhood
// collectives use them.
namespace System.MP
{
    /// <summary>A communicator whose processes know their neighbours: a <see cref="CartComm"/>
    /// (the grid's neighbours) or a <see cref="DistGraphComm"/> (the edges given to
    /// <see cref="Intracomm.CreateDistGraphAdjacent"/>). The neighbourhood collectives
    /// (NeighborAllgather, NeighborAlltoall, NeighborAlltoallv and their I-forms) receive one block
    /// from each of <see cref="Sources"/> and send one block to each of
    /// <see cref="Destinations"/>, in these orders.</summary>
    /// <example><code>
    /// ITopology t = grid;                     // a CartComm of 2 dimensions
    /// int[] from = t.Sources;                 // { up, down, left, right }: -1 then +1 per
    /// dimension
    /// </code></example>
    public interface ITopology
    {
        /// <summary>The ranks this process receives from, in MPI's order (a new array each
        /// read). A Cartesian grid lists, per dimension, the neighbour at -1 then the one at +1,
        /// with <see cref="MP.ProcNull"/> past an open edge; a graph lists its sources as given
        /// (in the communicator's ranks, which reorder may have changed).</summary>
        int[] Sources { get; }

        /// <summary>The ranks this process sends to, in MPI's order (a new array each read). On a
        /// Cartesian grid the same list as <see cref="Sources"/>.</summary>
        int[] Destinations { get; }
    }
}

// CartComm — a communicator whose processes form a Cartesian grid (MPI_Cart_create).
using System.Runtime.CompilerServices;

namespace System.MP
{
    /// <summary>An intracommunicator whose processes form a Cartesian grid, made by
    /// <see cref="Intracomm.CreateCart"/> or <see cref="Sub"/>. Ranks are numbered row-major:
    /// the last dimension varies fastest. Every collective and point-to-point call of
    /// <see cref="Intracomm"/> works on it; the members below translate between ranks and
    /// coordinates and find neighbours.</summary>
    public sealed partial class CartComm : Intracomm, ITopology
    {
        readonly int[] dims, coords;
        readonly bool[] periods;

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal CartComm(int handle) : base(handle, true)
        {
            int ndims;
            Errors.Check(MPDirect.CartDim(handle, out ndims));
            dims = new int[ndims];
            coords = new int[ndims];
            periods = new bool[ndims];
            Errors.Check(MPDirect.CartGet(handle, dims, periods, coords));
            neighbours = new int[2 * ndims];
            for (int d = 0; d < ndims; d++)
                Errors.Check(MPDirect.CartShift(handle, d, 1, out neighbours[2 * d],
                                                out neighbours[2 * d + 1]));
            topology = Neighborhood.Describe(neighbours, neighbours, true);
        }

        /// <summary>The number of processes along each dimension (a new array each read).</summary>
        public int[] Dims => (int[])dims.Clone();

        /// <summary>Whether each dimension wraps around (a new array each read).</summary>
        public bool[] Periods => (bool[])periods.Clone();

        /// <summary>This process's coordinates in the grid (a new array each read).</summary>
        public int[] Coords => (int[])coords.Clone();

        /// <summary>The coordinates of <paramref name="rank"/> (MPI_Cart_coords).</summary>
        /// <exception cref="ArgumentOutOfRangeException">rank lies outside 0..Size-1.</exception>
        /// <exception cref="ObjectDisposedException">the communicator has
        /// been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public int[] CoordsOf(int rank)
        {
            var result = new int[dims.Length];
            Errors.Check(MPDirect.CartCoords(handle, Size, rank, result));
            return result;
        }

        /// <summary>The rank at <paramref name="coords"/> (MPI_Cart_rank), row-major. A
        /// coordinate on a periodic dimension wraps around (-1 is the last position); on any other
        /// dimension it must lie inside the grid.</summary>
        /// <exception cref="ArgumentNullException">coords is null.</exception>
        /// <exception cref="ArgumentException">coords does not hold one entry per
        /// dimension.</exception> <exception cref="ArgumentOutOfRangeException">a coordinate of a
        /// non-periodic dimension lies outside the grid.</exception> <exception
        /// cref="ObjectDisposedException">the communicator has been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public int RankOf(int[] coords)
        {
            int rank;
            Errors.Check(MPDirect.CartRank(handle, coords, out rank));
            return rank;
        }

        /// <summary>The neighbours along <paramref name="direction"/> (a dimension, 0-based) at
        /// distance <paramref name="displacement"/> (MPI_Cart_shift): <paramref name="dest"/> is
        /// the rank displacement steps forward from this one, <paramref name="source"/> the rank
        /// as many steps back — the pair a shift sends to and receives from. Past an open edge of
        /// a non-periodic dimension the neighbour is <see cref="MP.ProcNull"/>, which
        /// point-to-point calls take as "no process", so edge ranks need no special case.</summary>
        /// <exception cref="ArgumentOutOfRangeException">direction lies outside
        /// 0..Dims.Length-1.</exception> <exception cref="ObjectDisposedException">the communicator
        /// has been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Shift(int direction, int displacement, out int source, out int dest) =>
            Errors.Check(MPDirect.CartShift(handle, direction, displacement, out source, out dest));

        /// <summary>Cuts the grid into lower-dimensional grids (MPI_Cart_sub): the dimensions
        /// where <paramref name="remainDims"/> is true are kept, and the processes that share
        /// their coordinates in the others form one new grid. Collective: every process calls it
        /// and gets its own sub-grid. Dispose it when done.</summary>
        /// <exception cref="ArgumentNullException">remainDims is null.</exception>
        /// <exception cref="ArgumentException">remainDims does not hold one entry per
        /// dimension.</exception> <exception cref="ObjectDisposedException">the communicator has
        /// been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public CartComm Sub(bool[] remainDims)
        {
            int newComm;
            Errors.Check(MPDirect.CartSub(handle, remainDims, out newComm));
            return new CartComm(newComm);
        }
    }
}

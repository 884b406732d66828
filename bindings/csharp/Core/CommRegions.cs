// CommRegions — point-to-point on regions of arrays (System.MP.Region), and the transfers that
// send and receive in one buffer (SendrecvReplace). A region travels in place: the core describes
// it to MPI as a derived datatype, built once per shape and element type, so nothing is packed or
// copied in the binding.
using System.Runtime.CompilerServices;

namespace System.MP
{
    public partial class Comm
    {
        // ---- regions ----
        // Every method below checks the region against the array before anything moves:
        // default(Region) or a region of another rank → ArgumentException, a start or size past
        // the array's length in a dimension → ArgumentOutOfRangeException (naming the dimension,
        // the start, the size and the length). The elements travel in row-major order of the
        // region, so sender and receiver regions may differ in shape.

        /// <summary>Sends the elements of a region of an array (of any rank) in place, in
        /// row-major order of the region.</summary>
        /// <param name="array">A transportable array of any rank.</param>
        /// <param name="region">The part of array to send, of array's rank (Strided: a
        /// one-dimensional array).</param>
        /// <param name="dest">The receiving rank, or <see cref="MP.ProcNull"/>.</param>
        /// <param name="tag">The message's tag.</param>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">region is default(Region) or has another rank
        /// than array; array is not transportable.</exception>
        /// <exception cref="ArgumentOutOfRangeException">the region passes the end of the array
        /// in a dimension; dest or tag is out of range.</exception>
        /// <example><code>
        /// var field = new double[100, 100];
        /// comm.Send(field, Region.Columns(99, 1), right, 0); // the last column: 100 values
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Send(Array array, Region region, int dest, int tag) => Errors.Check(
            MPDirect.SendRegion(handle, peers, array, region.Spec(nameof(region)), dest, tag,
                                Standard));

        /// <summary>Synchronous send of a region: returns once the receiver has started
        /// receiving. See <see cref="Send(Array, Region, int, int)"/>.</summary>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">region is default(Region) or has another rank
        /// than array; array is not transportable.</exception>
        /// <exception cref="ArgumentOutOfRangeException">the region passes the end of the array
        /// in a dimension; dest or tag is out of range.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Ssend(Array array, Region region, int dest, int tag) => Errors.Check(
            MPDirect.SendRegion(handle, peers, array, region.Spec(nameof(region)), dest, tag,
                                Synchronous));

        /// <summary>Receives into a region of an array, in row-major order of the region. A
        /// shorter message fills the front of the region and leaves the rest untouched; a longer
        /// one raises MPException (truncation). Nothing outside the region is ever
        /// written.</summary>
        /// <returns>The status: Count is the number of elements received.</returns>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">region is default(Region) or has another rank
        /// than array; array is not transportable.</exception>
        /// <exception cref="ArgumentOutOfRangeException">the region passes the end of the array
        /// in a dimension; source or tag is out of range.</exception>
        /// <exception cref="MPException">the message is longer than the region.</exception>
        /// <example><code>
        /// var field = new double[100, 100];
        /// comm.Recv(field, Region.Columns(0, 1), left, 0); // 100 values into column 0
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status Recv(Array array, Region region, int source, int tag)
        {
            var st = new StatusData();
            Errors.Check(MPDirect.RecvRegion(handle, peers, array, region.Spec(nameof(region)),
                                             source, tag, ref st));
            return Status.Of(ref st);
        }

        /// <summary>Starts sending a region of an array; the array must not change until the
        /// request completes. See <see cref="Send(Array, Region, int, int)"/>.</summary>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">region is default(Region) or has another rank
        /// than array; array is not transportable.</exception>
        /// <exception cref="ArgumentOutOfRangeException">the region passes the end of the array
        /// in a dimension; dest or tag is out of range.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Isend(Array array, Region region, int dest, int tag)
        {
            int[] spec = region.Spec(nameof(region));
            var request = new Request();
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.IsendRegion(handle, peers, array, spec, dest, tag, Standard,
                                              request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts a synchronous send of array[offset .. offset+count) of a
        /// one-dimensional array: the request completes once the receiver has started
        /// receiving.</summary>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">array is not a one-dimensional transportable
        /// array.</exception>
        /// <exception cref="ArgumentOutOfRangeException">offset or count is outside the array;
        /// dest or tag is out of range.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Issend(Array array, int offset, int count, int dest, int tag)
        {
            var request = new Request();
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.IsendRange(handle, peers, array, offset, count, dest, tag,
                                             Synchronous, request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts a synchronous send of a region: the request completes once the
        /// receiver has started receiving. See <see cref="Send(Array, Region, int,
        /// int)"/>.</summary>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">region is default(Region) or has another rank
        /// than array; array is not transportable.</exception>
        /// <exception cref="ArgumentOutOfRangeException">the region passes the end of the array
        /// in a dimension; dest or tag is out of range.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Issend(Array array, Region region, int dest, int tag)
        {
            int[] spec = region.Spec(nameof(region));
            var request = new Request();
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.IsendRegion(handle, peers, array, spec, dest, tag, Synchronous,
                                              request, out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Starts receiving into a region of an array; see <see cref="Recv(Array,
        /// Region, int, int)"/>. The array must not be touched until the request
        /// completes.</summary>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">region is default(Region) or has another rank
        /// than array; array is not transportable.</exception>
        /// <exception cref="ArgumentOutOfRangeException">the region passes the end of the array
        /// in a dimension; source or tag is out of range.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Irecv(Array array, Region region, int source, int tag)
        {
            int[] spec = region.Spec(nameof(region));
            var request = new Request();
            var st = new StatusData();
            long id;
            Errors.Check(MPDirect.IrecvRegion(handle, peers, array, spec, source, tag, request,
                                              out id, ref st));
            return request.Started(id, ref st);
        }

        /// <summary>Sends a region of sendArray and receives into a region of recvArray in one
        /// blocking call. The two may be regions of one array when they share no element — a
        /// halo exchange of a field in one call: its edge goes out while its halo comes
        /// in.</summary>
        /// <returns>The number of elements received (at most recvRegion's count; a shorter
        /// message fills the front of recvRegion and leaves the rest untouched).</returns>
        /// <exception cref="ArgumentNullException">sendArray or recvArray is null.</exception>
        /// <exception cref="ArgumentException">a region is default(Region) or of another rank
        /// than its array; the two regions of one array overlap.</exception>
        /// <exception cref="ArgumentOutOfRangeException">a region passes the end of its array in
        /// a dimension; a rank or tag is out of range.</exception>
        /// <exception cref="MPException">the message is longer than recvRegion.</exception>
        /// <example><code>
        /// var u = new double[ny, nx + 2];     // columns 0 and nx + 1 are halos
        /// comm.Sendrecv(u, Region.Columns(nx, 1), right, 0,  // my east edge to the right
        ///               u, Region.Columns(0, 1), left, 0);   // my west halo from the left
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public int Sendrecv(Array sendArray, Region sendRegion, int dest, int sendTag,
                            Array recvArray, Region recvRegion, int source, int recvTag)
        {
            int[] sendSpec = sendRegion.Spec(nameof(sendRegion));
            int[] recvSpec = recvRegion.Spec(nameof(recvRegion));
            var st = new StatusData();
            Errors.Check(MPDirect.SendrecvRegion(handle, peers, sendArray, sendSpec, dest, sendTag,
                                                 recvArray, recvSpec, source, recvTag, ref st));
            return st.Count;
        }

        /// <summary>Sends array[offset .. offset+count) of a one-dimensional array to dest,
        /// then receives from source into the same elements (MPI_Sendrecv_replace): one buffer
        /// for both directions, as in a ring shift.</summary>
        /// <returns>The received message's status: Count elements arrived at the front of the
        /// range; the rest of the range keeps what was sent.</returns>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">array is not a one-dimensional transportable
        /// array.</exception>
        /// <exception cref="ArgumentOutOfRangeException">offset or count is outside the array;
        /// a rank or tag is out of range.</exception>
        /// <exception cref="MPException">the message received is longer than the
        /// range.</exception>
        /// <example><code>
        /// // every rank passes its block to the next one around a ring
        /// comm.SendrecvReplace(block, 0, block.Length, (rank + 1) % size, 0,
        ///                      (rank + size - 1) % size, 0);
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status SendrecvReplace(Array array, int offset, int count, int dest, int sendTag,
                                      int source, int recvTag)
        {
            var st = new StatusData();
            Errors.Check(MPDirect.SendrecvReplaceRange(handle, peers, array, offset, count, dest,
                                                       sendTag, source, recvTag, ref st));
            return Status.Of(ref st);
        }

        /// <summary>Sends a region of an array to dest, then receives from source into the same
        /// region (MPI_Sendrecv_replace).</summary>
        /// <returns>The received message's status: Count elements arrived at the front of the
        /// region (row-major); the rest keeps what was sent.</returns>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">region is default(Region) or has another rank
        /// than array; array is not transportable.</exception>
        /// <exception cref="ArgumentOutOfRangeException">the region passes the end of the array
        /// in a dimension; a rank or tag is out of range.</exception>
        /// <exception cref="MPException">the message received is longer than the
        /// region.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status SendrecvReplace(Array array, Region region, int dest, int sendTag, int source,
                                      int recvTag)
        {
            int[] spec = region.Spec(nameof(region));
            var st = new StatusData();
            Errors.Check(MPDirect.SendrecvReplaceRegion(handle, peers, array, spec, dest, sendTag,
                                                        source, recvTag, ref st));
            return Status.Of(ref st);
        }
    }
}

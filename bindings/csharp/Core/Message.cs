// Message — a message a matched probe took off MPI's queue (Comm.Mprobe, Comm.Improbe): no other
// receive can take it, and one of its own receives takes it, once. A Message dropped unreceived
// is received and discarded by the core (its finalizer records it; see transfer/dropped.c).
using System.Runtime.CompilerServices;
using System.Threading;

namespace System.MP
{
    public partial class Comm
    {
        /// <summary>Waits for a message matching source and tag and takes it off the queue for
        /// the returned <see cref="Message"/> alone (MPI_Mprobe): no other receive, on any thread,
        /// can take it, so threads that probe and then receive on the same source and tag each
        /// get their own message. status is the probe's: Source and Tag of the message, Count and
        /// Bytes its size in BYTES (use <see cref="Status.GetCount{T}"/> for elements). From
        /// <see cref="MP.ProcNull"/> it returns at once, with ProcNull's status (Source
        /// MP.ProcNull, Tag MP.AnyTag, Count and Bytes 0) and a Message whose receives complete at
        /// once with that status.</summary>
        /// <remarks>Receive the Message with one of its calls. One you drop is received and
        /// thrown away by the core once it has been collected, never left for a later receive;
        /// until then a sender waiting for it to be received (a large message, Ssend) waits
        /// too.</remarks>
        /// <exception cref="ArgumentOutOfRangeException">source is not a rank of the communicator,
        /// MP.AnySource or MP.ProcNull; tag is not in 0..MP.TagUpperBound or
        /// MP.AnyTag.</exception>
        /// <exception cref="ObjectDisposedException">the communicator was disposed.</exception>
        /// <example><code>
        /// // each worker thread takes its own request: none is received twice, none is lost
        /// Message m = comm.Mprobe(MP.AnySource, WorkTag, out Status probed);
        /// var work = new double[probed.GetCount&lt;double&gt;()];
        /// m.Recv(work, 0, work.Length);
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Message Mprobe(int source, int tag, out Status status)
        {
            var st = new StatusData();
            int message;
            Errors.Check(MPDirect.Mprobe(handle, peers, source, tag, ref st, out message));
            status = Status.Of(ref st);
            return new Message(message, st.Bytes, this);
        }

        /// <summary>The non-blocking <see cref="Mprobe"/> (MPI_Improbe): a matching message,
        /// taken off the queue for the returned Message alone, or null (and status null) when
        /// none is waiting. From <see cref="MP.ProcNull"/> it finds one at once, as Mprobe
        /// does.</summary>
        /// <exception cref="ArgumentOutOfRangeException">source or tag out of range, as for
        /// Mprobe.</exception>
        /// <exception cref="ObjectDisposedException">the communicator was disposed.</exception>
        /// <example><code>
        /// Message m;
        /// Status st;
        /// while ((m = comm.Improbe(MP.AnySource, 3, out st)) == null)
        ///     DoOtherWork();
        /// int value = m.Recv&lt;int&gt;();
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Message Improbe(int source, int tag, out Status status)
        {
            var st = new StatusData();
            int message, found;
            Errors.Check(
                MPDirect.Improbe(handle, peers, source, tag, ref st, out message, out found));
            if (found == 0) {
                status = null;
                return null;
            }
            status = Status.Of(ref st);
            return new Message(message, st.Bytes, this);
        }
    }

    /// <summary>A message that a matched probe (<see cref="Comm.Mprobe"/>,
    /// <see cref="Comm.Improbe"/>) took off MPI's queue: no other receive can take it. Receive it
    /// once, with one of its calls (MPI_Mrecv, MPI_Imrecv); they work as the communicator's
    /// receives of the same shape do — zero-copy into the array, a shorter message fills the
    /// front, a longer one is truncated (MPException), nothing outside the range or region is
    /// written.</summary>
    /// <remarks>
    /// <para>Once: a receive that MPI was given uses the Message, whether it completed or
    /// failed (truncation, a partial element: MPException); any later receive raises
    /// InvalidOperationException. An argument refused before anything moved (null array, a range
    /// out of bounds, an element type that is not transportable) leaves the Message to be
    /// received. Two threads receiving one Message at the same moment: one receives it, the
    /// other gets InvalidOperationException.</para>
    /// <para>A Message dropped without a receive is received and thrown away by the core after
    /// it is collected (its finalizer records it; the receive runs at the next safe point: at
    /// once when MPI allows every thread to call it, else at the next collection or matched
    /// probe, and at the latest before MPI_Finalize). It is never left for a later receive to
    /// pick up.</para>
    /// </remarks>
    public sealed class Message
    {
        const int Fresh = 0, Busy = 1, Used = 2;

        readonly int handle;   // MPI_Message (MPI_MESSAGE_NO_PROC for MP.ProcNull's)
        readonly long bytes;   // the message's size, from its probe
        readonly Comm comm;    // its ReceiveBudget applies to ORecv
        int state;             // Fresh, Busy (a receive is being made), Used

        internal Message(int handle, long bytes, Comm comm)
        {
            this.handle = handle;
            this.bytes = bytes;
            this.comm = comm;
        }

        /// <summary>Receives the message into array[offset .. offset+count) of a one-dimensional
        /// transportable array, as Comm.Recv of a range does, and returns the receive's status
        /// (Count in elements of the array). From MP.ProcNull: at once, ProcNull's
        /// status.</summary>
        /// <exception cref="ArgumentNullException">array is null (the Message stays
        /// usable).</exception>
        /// <exception cref="ArgumentOutOfRangeException">offset or count outside the array (the
        /// Message stays usable).</exception>
        /// <exception cref="ArgumentException">the array is not transportable or not
        /// one-dimensional (the Message stays usable).</exception>
        /// <exception cref="InvalidOperationException">the Message was received already, or
        /// another thread is receiving it.</exception>
        /// <exception cref="MPException">the message is longer than the range (truncation) or
        /// not a whole number of its elements; the Message is used.</exception>
        /// <example><code>
        /// Message m = comm.Mprobe(0, 5, out Status probed);
        /// var row = new float[probed.GetCount&lt;float&gt;()];
        /// Status st = m.Recv(row, 0, row.Length);
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status Recv(Array array, int offset, int count)
        {
            Take();
            var st = new StatusData();
            int used = 0, rc;
            try {
                rc = MPDirect.MessageRecvRange(handle, array, offset, count, ref st, out used);
            } finally {
                Settle(used);
            }
            Errors.Check(rc);
            return Status.Of(ref st);
        }

        /// <summary>Receives the message into a region of array (see <see cref="Region"/>), in
        /// the region's row-major order, as Comm.Recv with a region does; a shorter message fills
        /// the front of the region.</summary>
        /// <exception cref="ArgumentNullException">array is null (the Message stays
        /// usable).</exception>
        /// <exception cref="ArgumentException">region is default(Region), of another rank than
        /// the array, or the array is not transportable (the Message stays usable).</exception>
        /// <exception cref="ArgumentOutOfRangeException">the region passes the array's bounds
        /// (the Message stays usable).</exception>
        /// <exception cref="InvalidOperationException">the Message was received already, or
        /// another thread is receiving it.</exception>
        /// <exception cref="MPException">truncation, or not a whole number of elements; the
        /// Message is used.</exception>
        /// <example><code>
        /// var field = new double[n, n];
        /// Message m = comm.Mprobe(left, 0, out Status probed);
        /// m.Recv(field, Region.Columns(0, 1));
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status Recv(Array array, Region region)
        {
            int[] spec = region.Spec(nameof(region));
            Take();
            var st = new StatusData();
            int used = 0, rc;
            try {
                rc = MPDirect.MessageRecvRegion(handle, array, spec, ref st, out used);
            } finally {
                Settle(used);
            }
            Errors.Check(rc);
            return Status.Of(ref st);
        }

        /// <summary>Receives the message as one value of a primitive type or a struct without
        /// references: it must hold exactly one T (as Comm.Recv&lt;T&gt;). From MP.ProcNull:
        /// default(T).</summary>
        /// <exception cref="ArgumentException">T holds references (the Message stays
        /// usable).</exception>
        /// <exception cref="InvalidOperationException">the Message was received already, or
        /// another thread is receiving it.</exception>
        /// <exception cref="MPException">the message is longer than one T (truncation), empty or
        /// not a whole T; the Message is used.</exception>
        /// <example><code>
        /// Message m = comm.Mprobe(MP.AnySource, CountTag, out Status probed);
        /// long n = m.Recv&lt;long&gt;();
        /// </code></example>
        public T Recv<T>()
            where T : struct
        {
            Status unused;
            return Recv<T>(out unused);
        }

        /// <summary>Recv&lt;T&gt;, with the receive's status (Count 1; from MP.ProcNull,
        /// ProcNull's status and default(T)).</summary>
        /// <exception cref="ArgumentException">T holds references (the Message stays
        /// usable).</exception>
        /// <exception cref="InvalidOperationException">the Message was received already, or
        /// another thread is receiving it.</exception>
        /// <exception cref="MPException">the message is not exactly one T; the Message is
        /// used.</exception>
        public T Recv<T>(out Status status)
            where T : struct
        {
            T[] one = Scalars<T>.Recv;
            one[0] = default(T);
            status = Recv(one, 0, 1);
            if (status.Source == MP.ProcNull)
                return default(T);
            if (status.Count != 1)   // an empty message: no value arrived
                throw new MPException("System.MP: Message.Recv<" + typeof(T).Name +
                                          "> received a message of " + status.Bytes +
                                          " bytes, not one " + typeof(T).Name,
                                      Errors.PartialElement);
            return one[0];
        }

        /// <summary>Receives the message as a graph sent with OSend (or OIsend), whose root must
        /// be a T; only types reachable from T are created (as Comm.ORecv). The bytes land in a
        /// pooled native buffer of the probed size, then are read. From MP.ProcNull:
        /// default(T).</summary>
        /// <exception cref="InvalidOperationException">the Message was received already, or
        /// another thread is receiving it.</exception>
        /// <exception cref="MPSerializationException">the bytes are not a graph whose root is a
        /// T (the Message is used).</exception>
        /// <example><code>
        /// Message m = comm.Mprobe(MP.AnySource, JobTag, out Status probed);
        /// Job job = m.ORecv&lt;Job&gt;();
        /// </code></example>
        public T ORecv<T>()
        {
            Status unused;
            return ORecv<T>(out unused);
        }

        /// <summary>ORecv&lt;T&gt;, with the receive's status (Count and Bytes the serialized
        /// size).</summary>
        /// <exception cref="InvalidOperationException">the Message was received already, or
        /// another thread is receiving it.</exception>
        /// <exception cref="MPSerializationException">the bytes are not a graph whose root is a
        /// T (the Message is used).</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public T ORecv<T>(out Status status)
        {
            Take();
            var st = new StatusData();
            object result = null;
            int used = 0, rc;
            try {
                using (comm.BudgetScope()) rc =
                    MPDirect.MessageORecv(handle, bytes, typeof(T), out result, ref st, out used);
            } finally {
                Settle(used);
            }
            Errors.Check(rc);
            status = Status.Of(ref st);
            return result == null ? default(T) : (T)result;
        }

        /// <summary>Starts receiving the message into array[offset .. offset+count)
        /// (MPI_Imrecv) and returns its Request, which completes as Comm.Irecv's does (a
        /// truncation is raised by its Wait or Test). The Message is used from here on; do not
        /// touch the range until the request completes.</summary>
        /// <exception cref="ArgumentNullException">array is null (the Message stays
        /// usable).</exception>
        /// <exception cref="ArgumentOutOfRangeException">offset or count outside the array (the
        /// Message stays usable).</exception>
        /// <exception cref="ArgumentException">the array is not transportable or not
        /// one-dimensional (the Message stays usable).</exception>
        /// <exception cref="InvalidOperationException">the Message was received already, or
        /// another thread is receiving it.</exception>
        /// <example><code>
        /// Message m = comm.Mprobe(src, 0, out Status probed);
        /// var data = new int[probed.GetCount&lt;int&gt;()];
        /// Request r = m.Irecv(data, 0, data.Length);
        /// DoOtherWork();
        /// r.Wait();
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Request Irecv(Array array, int offset, int count)
        {
            Take();
            var request = new Request();
            var st = new StatusData();
            long id = -1;
            int used = 0, rc;
            try {
                rc = MPDirect.MessageIrecvRange(handle, array, offset, count, request, out id,
                                                ref st, out used);
            } finally {
                Settle(used);
            }
            Errors.Check(rc);
            return request.Started(id, ref st);
        }

        /// <summary>Claims the Message for this thread's receive, or says why it
        /// cannot.</summary>
        void Take()
        {
            int was = Interlocked.CompareExchange(ref state, Busy, Fresh);
            if (was == Fresh)
                return;
            throw new InvalidOperationException(
                was == Busy ? "System.MP: another thread is receiving this Message at this moment"
                            : "System.MP: this Message has been received already (a matched " +
                                  "message is received once)");
        }

        /// <summary>After a receive call: used (MPI was given the message) for good, with no
        /// finalizer left to run; otherwise free to be received again.</summary>
        void Settle(int used)
        {
            if (used != 0) {
                Volatile.Write(ref state, Used);
                GC.SuppressFinalize(this);
            } else {
                Volatile.Write(ref state, Fresh);
            }
        }

        /// <summary>Dropped unreceived: the core receives and discards the message (the call
        /// only records it; no MPI from the finalizer thread unless MPI allows every thread to
        /// call it, and never while MPI is closing).</summary>
        ~Message()
        {
            if (Volatile.Read(ref state) == Fresh)
                Drop(handle, bytes);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Drop(int handle, long bytes) => MPDirect.MessageDrop(handle, bytes);
    }
}

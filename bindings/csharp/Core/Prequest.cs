// Prequest — a persistent request (MPI_Send_init / MPI_Recv_init): made once by Comm.SendInit or
// Comm.RecvInit, started any number of times (Start, StartAll), each use completed as any
// Request's (Wait, Test, WaitAll, WaitAny, TestAny, WaitSome, TestSome, TestAll, await), freed by
// Dispose or, when dropped, by the core once the Prequest is collected. Between uses nothing is
// pinned: a start gives MPI the array's current address (opi/opi_persistent.c; docs/design.md,
// "Persistent requests"). This file also holds Comm's SendInit and RecvInit, and the few members
// Prequest needs of Request (one Request used again: each start begins a new use).
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace System.MP
{
    /// <summary>A persistent request: a send or a receive whose arguments are bound once (by
    /// <see cref="Comm.SendInit(Array, int, int, int, int)"/> or
    /// <see cref="Comm.RecvInit(Array, int, int, int, int)"/>) and that is started again and
    /// again, as MPI_Send_init / MPI_Recv_init and MPI_Start. Each <see cref="Start"/> begins a
    /// use; Wait, Test, WaitAll, WaitAny, TestAny, WaitSome, TestSome, TestAll, IsCompleted,
    /// Cancel and await work on the running use as on any <see cref="Request"/>, and once its
    /// completion is reported the request is inactive — ready for the next Start, not freed.
    /// <see cref="Dispose"/> frees it.</summary>
    /// <remarks>
    /// <para>The array is MPI's from each Start until that use's completion is reported: do not
    /// write a send's range or read a receive's range meanwhile. Between uses it is the
    /// caller's (fill the next message, read the last one). The library keeps it where MPI
    /// expects it during every use, however many collections happen, and pins nothing between
    /// uses.</para>
    /// <para>Before any Start, Wait and Test return at once with the empty status (Source
    /// <see cref="MP.AnySource"/>, Tag <see cref="MP.AnyTag"/>, Count 0), as does WaitAll's
    /// entry; WaitAny, TestAny, WaitSome and TestSome skip an inactive request. With
    /// <see cref="MP.ProcNull"/> as the peer every use completes at once with the ProcNull
    /// status.</para>
    /// <para>A Prequest dropped without Dispose leaks nothing: once it is collected, the core
    /// frees the MPI request (a running use first finishes).</para>
    /// </remarks>
    /// <example>A halo exchange with both neighbours, its requests made once:
    /// <code>
    /// var requests = new[] {
    ///     comm.RecvInit(fromLeft, 0, n, left, 0), comm.RecvInit(fromRight, 0, n, right, 1),
    ///     comm.SendInit(toRight, 0, n, right, 0), comm.SendInit(toLeft, 0, n, left, 1) };
    /// for (int step = 0; step &lt; steps; step++) {
    ///     Fill(toLeft, toRight);
    ///     Prequest.StartAll(requests);
    ///     Request.WaitAll(requests);
    ///     Use(fromLeft, fromRight);
    /// }
    /// foreach (Prequest r in requests)
    ///     r.Dispose();
    /// </code></example>
    public sealed class Prequest : Request, IDisposable
    {
        long handle = -1;       // the persistent request's registry id; -1 once disposed
        readonly Comm comm;     // its communicator: a start after the communicator's Dispose is
                                // refused
        readonly Array array;   // MPI's buffer for the request's life: kept alive here, and given
                                // to every start, which checks where it is now
        int stamp;              // StartAll's check for an entry given twice

        static int stamps;

        internal Prequest(Comm comm, Array array)
        {
            this.comm = comm;
            this.array = array;
            SetInactive(Status.Empty);
        }

        internal Prequest Made(long handle)
        {
            this.handle = handle;
            return this;
        }

        /// <summary>Starts a use of the request (MPI_Start): the send or receive runs until a
        /// Wait, Test or await reports its completion, which makes the request inactive again.
        /// A use that finishes at once (a send to a posted receive, a receive whose message is
        /// waiting, <see cref="MP.ProcNull"/>) completes as a non-blocking call that finished
        /// at once: Wait and Test report it.</summary>
        /// <exception cref="ObjectDisposedException">The request, or its communicator, has been
        /// disposed.</exception>
        /// <exception cref="InvalidOperationException">The request is active: its previous use
        /// has not been completed by Wait, Test, WaitAll, WaitAny, TestAny, WaitSome, TestSome,
        /// TestAll, IsCompleted or await. Nothing is started; the running use is
        /// unaffected.</exception>
        /// <example><code>
        /// Prequest send = comm.SendInit(data, 0, data.Length, dest, 7);
        /// for (int i = 0; i &lt; 100; i++) {
        ///     data[0] = i;     // the array is the caller's between uses
        ///     send.Start();
        ///     send.Wait();
        /// }
        /// send.Dispose();
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Start()
        {
            Ready(-1);
            var st = new StatusData();
            long useId;
            int started;
            int rc = MPDirect.PrequestStart(Volatile.Read(ref handle), array, out useId, ref st,
                                            out started);
            if (started != 0)
                StartedUse(useId, ref st);
            Errors.Check(rc);
        }

        /// <summary>Starts a use of every request (MPI_Startall), in one call into the core;
        /// each is then completed on its own or with the others (<see cref="Request.WaitAll"/>).
        /// Every request is checked before any starts: when one is refused, none is
        /// started.</summary>
        /// <param name="requests">The requests to start; none may appear twice. An empty array
        /// starts nothing.</param>
        /// <exception cref="ArgumentNullException">requests or one of its entries is
        /// null.</exception>
        /// <exception cref="ObjectDisposedException">A request, or its communicator, has been
        /// disposed.</exception>
        /// <exception cref="InvalidOperationException">A request is active (its previous use has
        /// not been completed), or appears twice.</exception>
        /// <example><code>
        /// Prequest.StartAll(recvLeft, recvRight, sendLeft, sendRight);
        /// Request.WaitAll(recvLeft, recvRight, sendLeft, sendRight);
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void StartAll(params Prequest[] requests)
        {
            if (requests == null)
                throw new ArgumentNullException(nameof(requests));
            int n = requests.Length;
            int mark = Interlocked.Increment(ref stamps);
            for (int i = 0; i < n; i++) {
                Prequest r = requests[i];
                if (r == null)
                    throw new ArgumentNullException(nameof(requests),
                                                    "System.MP: request " + i + " is null");
                if (r.stamp == mark)
                    throw new InvalidOperationException(
                        "System.MP: request " + i + " of StartAll appears earlier in the list " +
                        "too: a request cannot be started twice at once");
                r.stamp = mark;
            }
            for (int i = 0; i < n; i++)
                requests[i].Ready(i);
            if (n == 0)
                return;
            StartScratch s = StartScratch.For(n);
            for (int i = 0; i < n; i++) {
                s.Ids[i] = Volatile.Read(ref requests[i].handle);
                s.Arrays[i] = requests[i].array;
            }
            int started;
            int rc = MPDirect.PrequestStartAll(s.Ids, s.Arrays, n, s.Statuses, out started);
            Array.Clear(s.Arrays, 0, n);   // the arrays stay the Prequests', not this thread's
            if (started != 0)
                for (int i = 0; i < n; i++)
                    requests[i].StartedUse(s.Ids[i], ref s.Statuses[i]);
            Errors.Check(rc);
        }

        /// <summary>Frees the persistent request (MPI_Request_free). An inactive one is freed at
        /// once. An active one is ended without waiting for a peer: a receive is cancelled (if
        /// a message has matched it already, it still lands in the array); a send is left to
        /// finish in the background (MPI still reads the array until its receiver takes it).
        /// The core holds the array in place until MPI is done with it and frees the request
        /// then. Afterwards Start, StartAll, Wait, Test and await raise ObjectDisposedException
        /// (TestAll too, completing each request as Wait); IsCompleted is true, Cancel does
        /// nothing; WaitAll's entry for it is the empty status, and WaitAny, TestAny, WaitSome and
        /// TestSome skip it. Calling Dispose again does nothing.</summary>
        /// <exception cref="MPException">MPI refused to free the request (it is freed as far as
        /// System.MP is concerned).</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Dispose()
        {
            long h = Interlocked.Exchange(ref handle, -1);
            if (h < 0)
                return;
            int rc = MPDirect.PrequestFree(h);
            Retire(new ObjectDisposedException(
                nameof(Prequest), "System.MP: the persistent request has been " + "disposed"));
            Errors.Check(rc);
        }

        /// <summary>Refuses a start unless the request (entry index of StartAll, or -1) can
        /// begin a use now. Allocates nothing unless it refuses: StartAll runs it for every
        /// request of every step.</summary>
        void Ready(int index)
        {
            if (Volatile.Read(ref handle) < 0)
                throw new ObjectDisposedException(nameof(Prequest), "System.MP: " + Which(index) +
                                                                        " has been disposed");
            if (comm.handle == Comm.NullHandle)
                throw new ObjectDisposedException(nameof(Comm),
                                                  "System.MP: the communicator of " + Which(index) +
                                                      " has been disposed");
            if (!Inactive)
                throw new InvalidOperationException(
                    "System.MP: " + Which(index) + " is active: its previous use has not been " +
                    "completed by Wait, Test, WaitAll, WaitAny, TestAny, WaitSome, TestSome, " +
                    "TestAll, IsCompleted or await");
            AwaitEngineLetGo();
        }

        static string Which(int index) => index < 0 ? "the persistent request" : "request " + index;

        /// <summary>Per-thread arrays for StartAll's internal call: no allocation per
        /// call.</summary>
        sealed class StartScratch
        {
            [ThreadStatic]
            static StartScratch current;

            internal long[] Ids;
            internal Array[] Arrays;
            internal StatusData[] Statuses;

            internal static StartScratch For(int n)
            {
                StartScratch s = current;
                if (s == null || s.Ids.Length < n) {
                    int size = Math.Max(n, 8);
                    s = current = new StartScratch { Ids = new long[size], Arrays = new Array[size],
                                                     Statuses = new StatusData[size] };
                }
                return s;
            }
        }
    }

    public partial class Comm
    {
        // ---- persistent requests ----

        /// <summary>A persistent send of array[offset .. offset+count) of a one-dimensional
        /// array to dest with tag (MPI_Send_init): nothing moves until
        /// <see cref="Prequest.Start"/>, and each Start sends the range's contents at that
        /// moment. Dispose the request when done.</summary>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">array is not a one-dimensional array of a
        /// transportable element type.</exception>
        /// <exception cref="ArgumentOutOfRangeException">offset or count outside the array, dest
        /// not a rank of the communicator (nor <see cref="MP.ProcNull"/>), or tag outside
        /// 0..<see cref="MP.TagUpperBound"/>.</exception>
        /// <exception cref="ObjectDisposedException">The communicator has been
        /// disposed.</exception>
        /// <example><code>
        /// using (Prequest send = comm.SendInit(row, 0, row.Length, right, 0)) {
        ///     for (int step = 0; step &lt; steps; step++) {
        ///         Compute(row);
        ///         send.Start();
        ///         send.Wait();
        ///     }
        /// }
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Prequest SendInit(Array array, int offset, int count, int dest, int tag)
        {
            var request = new Prequest(this, array);
            long id;
            Errors.Check(
                MPDirect.SendInit(handle, peers, array, offset, count, dest, tag, request, out id));
            return request.Made(id);
        }

        /// <summary>A persistent send of a region of array (MPI_Send_init with the region's
        /// datatype): each <see cref="Prequest.Start"/> sends the region's elements, in its
        /// row-major order, with no copy.</summary>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">region is default(Region), its rank differs from
        /// the array's, or array is not an array of a transportable element type.</exception>
        /// <exception cref="ArgumentOutOfRangeException">The region passes the array's bounds,
        /// dest is not a rank of the communicator (nor <see cref="MP.ProcNull"/>), or tag is
        /// outside 0..<see cref="MP.TagUpperBound"/>.</exception>
        /// <exception cref="ObjectDisposedException">The communicator has been
        /// disposed.</exception>
        /// <example><code>
        /// var field = new double[n, n];
        /// Prequest sendEdge = comm.SendInit(field, Region.Columns(n - 2, 1), right, 0);
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Prequest SendInit(Array array, Region region, int dest, int tag)
        {
            int[] spec = region.Spec(nameof(region));
            var request = new Prequest(this, array);
            long id;
            Errors.Check(
                MPDirect.SendInitRegion(handle, peers, array, spec, dest, tag, request, out id));
            return request.Made(id);
        }

        /// <summary>A persistent receive into array[offset .. offset+count) of a
        /// one-dimensional array from source with tag (MPI_Recv_init; source may be
        /// <see cref="MP.AnySource"/> or <see cref="MP.ProcNull"/>, tag <see cref="MP.AnyTag"/>):
        /// each <see cref="Prequest.Start"/> posts a receive that writes nothing outside the
        /// range. A longer message raises MPException at that use's Wait or Test.</summary>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">array is not a one-dimensional array of a
        /// transportable element type.</exception>
        /// <exception cref="ArgumentOutOfRangeException">offset or count outside the array,
        /// source not a rank of the communicator (nor a wildcard or ProcNull), or tag outside
        /// 0..<see cref="MP.TagUpperBound"/> (nor AnyTag).</exception>
        /// <exception cref="ObjectDisposedException">The communicator has been
        /// disposed.</exception>
        /// <example><code>
        /// using (Prequest recv = comm.RecvInit(ghost, 0, ghost.Length, left, 0)) {
        ///     recv.Start();
        ///     Status st = recv.Wait();   // st.Count elements of ghost arrived
        /// }
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Prequest RecvInit(Array array, int offset, int count, int source, int tag)
        {
            var request = new Prequest(this, array);
            long id;
            Errors.Check(MPDirect.RecvInit(handle, peers, array, offset, count, source, tag,
                                           request, out id));
            return request.Made(id);
        }

        /// <summary>A persistent receive into a region of array (MPI_Recv_init with the region's
        /// datatype): each <see cref="Prequest.Start"/> posts a receive whose message fills the
        /// region in its row-major order (a shorter one fills its front and leaves the rest
        /// untouched), with no copy.</summary>
        /// <exception cref="ArgumentNullException">array is null.</exception>
        /// <exception cref="ArgumentException">region is default(Region), its rank differs from
        /// the array's, or array is not an array of a transportable element type.</exception>
        /// <exception cref="ArgumentOutOfRangeException">The region passes the array's bounds,
        /// source is not a rank of the communicator (nor a wildcard or ProcNull), or tag is
        /// outside 0..<see cref="MP.TagUpperBound"/> (nor AnyTag).</exception>
        /// <exception cref="ObjectDisposedException">The communicator has been
        /// disposed.</exception>
        /// <example><code>
        /// var field = new double[n, n];
        /// Prequest recvGhost = comm.RecvInit(field, Region.Columns(0, 1), left, 0);
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Prequest RecvInit(Array array, Region region, int source, int tag)
        {
            int[] spec = region.Spec(nameof(region));
            var request = new Prequest(this, array);
            long id;
            Errors.Check(
                MPDirect.RecvInitRegion(handle, peers, array, spec, source, tag, request, out id));
            return request.Made(id);
        }
    }

    // What a Prequest needs of Request: one Request used again and again. A use begins at each
    // start and ends when its completion is reported; the fields below are Request's own.
    public partial class Request
    {
        /// <summary>MPI's "inactive": no use is running, or the current use's completion has
        /// been reported (Wait, Test, IsCompleted, WaitAny, WaitSome, TestAll, or an awaited task
        /// that completed).</summary>
        internal bool Inactive => observed || (awaited != null && awaited.Task.IsCompleted);

        /// <summary>Inactive, with st as what Wait and Test report (a Prequest not yet
        /// started: the empty status).</summary>
        internal void SetInactive(Status st)
        {
            status = st;
            observed = true;
        }

        /// <summary>Before a start: when the previous use was awaited and also reported by a
        /// Wait begun before the await, the progress engine settles its task once it sees the
        /// use complete; that happens within a pass, and until then the engine still holds this
        /// request, so the next use must not start under it.</summary>
        internal void AwaitEngineLetGo()
        {
            TaskCompletionSource<Status> previous = awaited;
            if (previous == null)
                return;
            var spin = new SpinWait();
            while (!previous.Task.IsCompleted)
                spin.SpinOnce();
        }

        /// <summary>A new use began: running under id, or finished at once (st), as
        /// Started says. The previous use's outcome is forgotten.</summary>
        internal void StartedUse(long id, ref StatusData st)
        {
            awaited = null;
            failure = null;
            status = null;
            observed = false;
            Started(id, ref st);
        }

        /// <summary>Disposed: inactive for good; Wait, Test and await raise disposed. An awaited
        /// use still running is settled with it by the progress engine (which sees id
        /// -1).</summary>
        internal void Retire(Exception disposed)
        {
            failure = disposed;
            status = null;
            observed = true;
            if (awaited != null && awaited.Task.IsCompleted)
                awaited = null;   // Wait and Test then raise disposed, not the task's outcome
            Volatile.Write(ref id, -1);   // after failure: the engine settles the task from it
        }
    }
}

// Request — a non-blocking transfer. Its object stays protected (pinned if movable) until the
// transfer finishes; a Request dropped without Wait/Test is finished by the core (which holds a
// weak handle on it), its pin released at a collection after the transfer ends.
using System.Runtime.CompilerServices;
using System.Threading;

namespace System.MP
{
    /// <summary>A non-blocking transfer started by Isend, Issend, Irecv or a non-blocking
    /// collective. Do not touch its objects until the request completes (Wait, Test,
    /// IsCompleted, WaitAll, WaitAny, TestAny, WaitSome, TestSome, TestAll, await). A request you
    /// drop is finished by the core.</summary>
    public partial class Request
    {
        long id;   // pin-registry id while running; -1 once completed (written last, Volatile)
        Status status;   // set on completion
        // the transfer failed: raised by every Wait and Test, as a faulted task is
        Exception failure;
        bool observed;   // a Wait or Test has reported completion (MPI: the request is inactive)

        // the collective that started it (Ibarrier, Iallreduce, ...), or null: MPI forbids
        // cancelling those
        readonly string collective;

        internal Request() { id = -1; }

        /// <summary>A request of the non-blocking collective named collective.</summary>
        internal Request(string collective) : this() { this.collective = collective; }

        /// <summary>What the start call reported: a registry id, or completion at once. An
        /// error of a transfer that finished at once is made into its exception here, while the
        /// thread's error record still describes it; Wait or Test raises it.</summary>
        internal Request Started(long id, ref StatusData st)
        {
            this.id = id;
            if (id < 0) {
                if (st.Error != 0)
                    failure = Errors.Make(st.Error);
                status = Status.Of(ref st);
            }
            return this;
        }

        /// <summary>Blocks until the transfer completes (other threads' collections proceed).
        /// For a send, Source is -1, Count and Bytes are what was sent. A failed transfer raises
        /// its MPException here and at every later Wait or Test.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Status Wait()
        {
            if (awaited != null)
                return WaitAwaited();
            if (id >= 0) {
                var st = new StatusData();
                int rc = MPDirect.RequestWait(id, ref st);
                if (rc == Errors.Request) {   // the registry refused: not the transfer's failure
                    Exception refused = Errors.Make(rc);   // (consumes this thread's error record)
                    if (awaited != null)                   // awaited meanwhile: the engine has it
                        return WaitAwaited();
                    throw refused;   // another thread completes it (one thread per request)
                }
                Complete(rc, ref st);
            }
            observed = true;
            RaisePendingError();
            return status;
        }

        /// <summary>true (and the status) once the transfer completed; never blocks.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public bool Test(out Status status)
        {
            if (awaited != null)
                return TestAwaited(out status);
            if (id >= 0) {
                var st = new StatusData();
                int completed;
                int rc = MPDirect.RequestTest(id, ref st, out completed);
                // awaited meanwhile: the engine has it
                if (rc == Errors.Request && awaited != null) {
                    Errors.Make(rc);
                    return TestAwaited(out status);
                }
                if (completed == 0) {
                    Errors.Check(rc);
                    status = null;
                    return false;
                }
                Complete(rc, ref st);
            }
            observed = true;
            RaisePendingError();
            status = this.status;
            return true;
        }

        // A failed transfer stays failed: every later Wait or Test raises the same exception (as
        // `await` does), never a status that no message produced.
        void RaisePendingError()
        {
            if (failure != null)
                throw failure;
        }

        /// <summary>true once the transfer completed (a Test that discards the status). The
        /// call that finds a failed transfer complete raises its MPException; afterwards
        /// IsCompleted is true.</summary>
        public bool IsCompleted
        {
            get {
                // reported (observed) and failed: a Wait or Test has raised the failure already
                if (observed && (failure != null || (awaited != null && awaited.Task.IsFaulted)))
                    return true;
                Status unused;
                return Test(out unused);
            }
        }

        /// <summary>Asks MPI to cancel the transfer; Wait or Test still completes the request,
        /// and its Status tells whether the cancel took effect (Cancelled, with
        /// nothing moved).</summary>
        /// <exception cref="NotSupportedException">The request is a non-blocking collective's
        /// (Ibarrier, Iallreduce, ...), which MPI does not let anyone cancel; the request is left
        /// as it was, to be completed with Wait or Test.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Cancel()
        {
            if (collective != null)
                throw new NotSupportedException(
                    $"System.MP: {collective}'s request cannot be cancelled: MPI forbids " +
                    "cancelling a non-blocking collective (every rank must complete it); " +
                    "complete it with Wait or Test");
            while (id >= 0) {
                int rc = MPDirect.RequestCancel(id);
                if (rc == Errors.Request && awaited != null) {
                    // awaited: the progress engine may be testing it at this very moment
                    Errors.Make(rc);   // consumes this thread's error record of the refusal
                    if (awaited.Task.IsCompleted)
                        return;
                    System.Threading.Thread.Yield();
                    continue;
                }
                Errors.Check(rc);
                return;
            }
        }

        /// <summary>Waits for every request and returns their statuses in the requests' order
        /// (MPI_Waitall). The entry of a request whose completion was reported before (by
        /// Wait, Test, IsCompleted, await or a set call: an inactive request) is the empty
        /// Status: Source MP.AnySource, Tag MP.AnyTag, Count and Bytes 0. Callers that ignore
        /// the result need not change.</summary>
        /// <remarks><para>The running requests are waited for together, in one call into the
        /// core and one wait (as MPI_Waitall), each then reported exactly as its own Wait reports
        /// it: a Prequest is inactive afterwards, ready for the next Start. An awaited request
        /// is reported through its task; a request another thread is waiting on or testing at
        /// that moment is left to that thread (InvalidOperationException for it, raised after
        /// every other request is complete, as its own Wait would); an entry given twice is
        /// reported once, the second entry being then inactive.</para>
        /// <para>Every request is completed, failed or not; when some failed, the first
        /// failure (in array order) is raised after all are complete, as TestAll does, and the
        /// statuses are lost: each request's own Wait returns its status again (and a failed
        /// one raises its own MPException again).</para></remarks>
        /// <exception cref="ArgumentNullException">requests or one of its entries is null
        /// (nothing is waited for).</exception>
        /// <exception cref="MPException">a transfer failed (truncation, a partial element): the
        /// first failure, once every request is complete.</exception>
        /// <exception cref="InvalidOperationException">another thread was waiting on or testing
        /// one of the requests at that moment (raised once every other request is complete; the
        /// other thread completes that one).</exception>
        /// <example><code>
        /// Request r = comm.Irecv(inbox, 0, n, left, 0), s = comm.Isend(outbox, 0, n, right, 0);
        /// Status[] st = Request.WaitAll(r, s);
        /// int received = st[0].Count;
        /// </code></example>
        public static Status[] WaitAll(params Request[] requests)
        {
            CheckArray(requests);
            var statuses = new Status[requests.Length];
            WaitAllRunning(requests, statuses);
            // What the core completed is reported here as its own Wait reports it (it returns at
            // once); the rest — awaited requests, requests that finished at once, requests
            // another thread holds, an entry given twice — Wait handles as it does alone.
            Exception first = null;
            for (int i = 0; i < requests.Length; i++) {
                if (statuses[i] != null)
                    continue;
                Request r = requests[i];
                if (r.observed) {
                    statuses[i] = Status.Empty;
                    continue;
                }
                try {
                    statuses[i] = r.Wait();
                } catch (Exception e) {
                    first = first ?? e;
                }
            }
            if (first != null)
                throw first;
            return statuses;
        }

        /// <summary>WaitAll's first step: the empty status of each inactive request, then one
        /// internal call that waits for every running request (not awaited) at once and
        /// completes each as Wait does, leaving the report (observed, the failure raised) to
        /// Wait.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void WaitAllRunning(Request[] requests, Status[] statuses)
        {
            WaitScratch s = null;
            int m = 0;
            for (int i = 0; i < requests.Length; i++) {
                Request r = requests[i];
                if (r.observed) {
                    statuses[i] = Status.Empty;
                    continue;
                }
                long id = Volatile.Read(ref r.id);
                if (r.awaited != null || id < 0)
                    continue;
                s = s ?? WaitScratch.For(requests.Length);
                s.Ids[m] = id;
                s.Index[m++] = i;
            }
            if (m == 0)
                return;
            int failures;
            Errors.Check(MPDirect.RequestWaitAll(s.Ids, m, s.Statuses, out failures));
            for (int k = 0; k < m; k++) {
                if (s.Ids[k] >= 0)
                    continue;   // not taken: its own Wait says why
                Request r = requests[s.Index[k]];
                int error = s.Statuses[k].Error;
                if (error == 0)
                    r.Complete(0, ref s.Statuses[k]);
                else   // its error record, set aside by the call (Reserved: lost)
                    r.Fail(Errors.Make(
                        s.Statuses[k].Reserved != 0 ? error : MPDirect.RequestFailure()));
            }
        }

        /// <summary>Per-thread arrays for WaitAll's internal call: no allocation per
        /// call.</summary>
        sealed class WaitScratch
        {
            [ThreadStatic]
            static WaitScratch current;

            internal long[] Ids;
            internal int[] Index;
            internal StatusData[] Statuses;

            internal static WaitScratch For(int n)
            {
                WaitScratch s = current;
                if (s == null || s.Ids.Length < n) {
                    int size = Math.Max(n, 8);
                    s = current = new WaitScratch { Ids = new long[size], Index = new int[size],
                                                    Statuses = new StatusData[size] };
                }
                return s;
            }
        }

        /// <summary>Waits until one of the active requests completes, completes it (as Wait)
        /// and returns its index (MPI_Waitany); <see cref="MP.Undefined"/> when none is active.
        /// A request whose completion Wait, Test, IsCompleted, await or a set call already
        /// reported is inactive, so a loop over WaitAny visits each request once; the status of
        /// the one returned is requests[index].Wait() (which returns it again at once).</summary>
        /// <remarks>It polls the requests in turn (pausing between passes when waits yield,
        /// see <see cref="MP.WaitPolicy"/>). A failed transfer is the completion WaitAny finds:
        /// its MPException is raised and that request is inactive afterwards.</remarks>
        /// <exception cref="ArgumentNullException">requests or one of its entries
        /// is null.</exception>
        /// <exception cref="MPException">the request that completed failed.</exception>
        /// <example><code>
        /// int done;
        /// while ((done = Request.WaitAny(reqs)) != MP.Undefined)
        ///     Handle(inbox[done]);
        /// </code></example>
        public static int WaitAny(params Request[] requests)
        {
            CheckArray(requests);
            if (!AnyActive(requests))
                return MP.Undefined;
            bool yields = Backoff.Yields;
            var backoff = new Backoff();
            while (true) {
                for (int i = 0; i < requests.Length; i++) {
                    Status unused;
                    if (!requests[i].observed && requests[i].Test(out unused))
                        return i;
                }
                if (yields)
                    backoff.Pause();   // the host's ranks outnumber its cores: give the core away
            }
        }

        /// <summary>Is some request of the set active (its completion not yet
        /// reported)?</summary>
        static bool AnyActive(Request[] requests)
        {
            foreach (Request r in requests)
                if (!r.observed)
                    return true;
            return false;
        }

        static void CheckArray(Request[] requests)
        {
            if (requests == null)
                throw new ArgumentNullException(nameof(requests));
            for (int i = 0; i < requests.Length; i++)
                if (requests[i] == null)
                    throw new ArgumentNullException(nameof(requests), "request " + i + " is null");
        }

        // Completed, with or without error: MPI freed the request. The outcome is published
        // before id: the progress engine settles an awaited request from it when a Wait begun
        // before the await completed the transfer.
        void Complete(int rc, ref StatusData st)
        {
            if (rc != 0)
                failure = Errors.Make(rc);   // raised by the caller's RaisePendingError
            else
                status = Status.Of(ref st);
            Volatile.Write(ref id, -1);
        }

        // Completed with a failure whose exception the caller made (WaitAll), as Complete.
        void Fail(Exception e)
        {
            failure = e;
            Volatile.Write(ref id, -1);
        }
    }
}

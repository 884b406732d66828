// Request, version 2: TestAll and WaitSome with MPI's semantics, and `await` through one
// progress engine — a background thread that tests every awaited request in one internal call
// per pass and sleeps on a wait handle while nothing is awaited.
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace System.MP
{
    public partial class Request
    {
        // Set once by AsTask; from then on the progress engine completes the request and Wait,
        // Test and IsCompleted read the task.
        TaskCompletionSource<Status> awaited;

        /// <summary>true when every request has completed; each is then completed as by Wait.
        /// When it returns false it completes none of them (as MPI_Testall). Requests whose
        /// completion was reported already count as complete. If some failed, all are completed
        /// and the first failure is raised (MPException).</summary>
        /// <exception cref="ArgumentNullException">requests or one of its entries
        /// is null.</exception>
        public static bool TestAll(params Request[] requests)
        {
            CheckArray(requests);
            foreach (Request r in requests)
                if (!r.HasFinished())
                    return false;
            Exception first = null;
            foreach (Request r in requests) {
                try {
                    r.Wait();   // finished: returns at once
                } catch (Exception e) {
                    r.observed = true;   // its completion is this report
                    first = first ?? e;
                }
            }
            if (first != null)
                throw first;
            return true;
        }

        /// <summary>Waits until at least one active request completes and returns the indices
        /// of all that completed in that pass (each completed as by Test), in increasing order.
        /// A request whose completion was reported before (by Wait, Test, WaitAny, WaitSome, ...)
        /// is inactive and never reported again; with no active request, an empty array. A
        /// failure is raised (MPException) when it is the only completion of a pass; otherwise
        /// the indices are returned and the failure is raised by the next WaitSome (or Wait,
        /// Test) on that request.</summary>
        /// <exception cref="ArgumentNullException">requests or one of its entries
        /// is null.</exception>
        public static int[] WaitSome(params Request[] requests)
        {
            CheckArray(requests);
            if (!AnyActive(requests))
                return NoIndices;
            var spin = new SpinWait();
            bool yields = Backoff.Yields;
            var backoff = new Backoff();
            while (true) {
                List<int> done = SomePass(requests);
                if (done != null)
                    return done.ToArray();
                if (yields)
                    backoff.Pause();   // the host's ranks outnumber its cores: give the core away
                else
                    spin.SpinOnce();
            }
        }

        /// <summary>Completes (as by Test) every active request that has finished, and returns
        /// their indices in increasing order (MPI_Testsome); never blocks. The array is empty
        /// when none has finished yet — and when none is active, where MPI_Testsome reports
        /// MPI_UNDEFINED: keep count of the requests reported to know when all are. A request
        /// whose completion was reported before is inactive and never reported again. Failures
        /// as WaitSome: raised (MPException) when the failed request is the only completion of
        /// the call; otherwise the indices are returned and the next TestSome (or Wait, Test) on
        /// that request raises it.</summary>
        /// <exception cref="ArgumentNullException">requests or one of its entries
        /// is null.</exception>
        /// <exception cref="MPException">the only request that completed failed.</exception>
        /// <example><code>
        /// for (int left = reqs.Length; left > 0;) {
        ///     foreach (int i in Request.TestSome(reqs)) {
        ///         Handle(inbox[i]);
        ///         left--;
        ///     }
        ///     DoOtherWork();
        /// }
        /// </code></example>
        public static int[] TestSome(params Request[] requests)
        {
            CheckArray(requests);
            List<int> done = SomePass(requests);
            return done == null ? NoIndices : done.ToArray();
        }

        /// <summary>Completes (as by Test) the first active request that has finished and sets
        /// index to its position (MPI_Testany); never blocks. Returns true with that index; true
        /// with index <see cref="MP.Undefined"/> when no request is active; false, with index
        /// MP.Undefined, when none of the active ones has finished. A request whose completion was
        /// reported before is inactive and never reported again.</summary>
        /// <exception cref="ArgumentNullException">requests or one of its entries
        /// is null.</exception>
        /// <exception cref="MPException">the request it completed failed: that request is
        /// inactive afterwards (the failure is its completion's report).</exception>
        /// <example><code>
        /// int i;
        /// while (!Request.TestAny(out i, reqs))
        ///     DoOtherWork();
        /// if (i != MP.Undefined)
        ///     Handle(inbox[i]);
        /// </code></example>
        public static bool TestAny(out int index, params Request[] requests)
        {
            index = MP.Undefined;
            CheckArray(requests);
            bool anyActive = false;
            for (int i = 0; i < requests.Length; i++) {
                Request r = requests[i];
                if (r.observed)
                    continue;
                anyActive = true;
                Status unused;
                if (r.Test(out unused)) {
                    index = i;
                    return true;
                }
            }
            return !anyActive;
        }

        static readonly int[] NoIndices = new int[0];

        /// <summary>One pass of WaitSome and TestSome: tests each active request in turn and
        /// returns the indices of those that completed (null: none). A failure ends the pass:
        /// raised when nothing completed before it in the pass (that request is then
        /// inactive), otherwise kept for the next call on that request (Unreport) and the pass
        /// returns what completed.</summary>
        static List<int> SomePass(Request[] requests)
        {
            List<int> done = null;
            for (int i = 0; i < requests.Length; i++) {
                Request r = requests[i];
                if (r.observed)
                    continue;
                Status unused;
                try {
                    if (r.Test(out unused))
                        (done = done ?? new List<int>()).Add(i);
                } catch (Exception e) {
                    if (done == null) {
                        r.observed = true;
                        throw;
                    }
                    r.Unreport(e);   // raised by the next call on it
                    return done;
                }
            }
            return done;
        }

        /// <summary>Makes the request awaitable: `Status s = await request;`. See AsTask.</summary>
        public TaskAwaiter<Status> GetAwaiter() => AsTask().GetAwaiter();

        /// <summary>A task that completes with the request's Status when the transfer completes,
        /// or fails with its MPException. No thread blocks per request: one background progress
        /// engine tests all awaited requests, and continuations run on the thread pool (or the
        /// awaiting context), never on the engine, so they may call System.MP. The same task is
        /// returned every time; afterwards Wait, Test and IsCompleted report the task's outcome.
        /// A request whose completion was already reported gives a completed task.</summary>
        /// <exception cref="NotSupportedException">the request is still running and MPI granted
        /// less than MPI_THREAD_MULTIPLE (MP.ThreadLevel &lt; 3): the engine must call MPI from
        /// its own thread.</exception>
        public Task<Status> AsTask()
        {
            TaskCompletionSource<Status> source = awaited;
            if (source != null)
                return source.Task;
            bool running = id >= 0;
            if (running)
                ProgressEngine.RequireThreadMultiple("request");
            source = new TaskCompletionSource<Status>(
                TaskCreationOptions.RunContinuationsAsynchronously);
            if (Interlocked.CompareExchange(ref awaited, source, null) != null)
                return awaited.Task;
            if (!running) {
                ProgressEngine.Settle(source, failure, status);
                return source.Task;
            }
            ProgressEngine.Add(this);
            return source.Task;
        }

        // ---- helpers ----

        Status WaitAwaited()
        {
            observed = true;
            return awaited.Task.GetAwaiter().GetResult();   // raises the MPException itself
        }

        bool TestAwaited(out Status st)
        {
            if (!awaited.Task.IsCompleted) {
                st = null;
                return false;
            }
            st = WaitAwaited();
            return true;
        }

        /// <summary>A failure WaitSome could not report in its pass: the request stays active,
        /// and the next Wait, Test or WaitSome on it raises e.</summary>
        void Unreport(Exception e)
        {
            observed = false;
            if (awaited == null) {
                id = -1;
                failure = e;
            }
        }

        /// <summary>Has the transfer finished? Completes
        /// nothing (MPI_Request_get_status).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        bool HasFinished()
        {
            if (observed)
                return true;
            // before id: the engine clears id just before it completes the task
            if (awaited != null)
                return awaited.Task.IsCompleted;
            if (id < 0)
                return true;
            int done;
            Errors.Check(MPDirect.RequestDone(id, out done));
            return done != 0;
        }

        /// <summary>The progress engine's completion of an awaited request: st,
        /// or failure.</summary>
        internal void CompleteAwaited(Status st, Exception failure)
        {
            id = -1;
            status = st;
            ProgressEngine.Settle(awaited, failure, st);
        }

        /// <summary>The progress engine's completion of an awaited request that a Wait or Test
        /// begun before the await completed: the task gets what that call reported.</summary>
        internal void SettleCompletedElsewhere() => ProgressEngine.Settle(awaited, failure, status);

        internal long Id => Volatile.Read(ref id);
    }

    /// <summary>The one progress engine of `await`: a background thread that tests every
    /// awaited request in one internal call per pass (RequestTestMany), completes their tasks,
    /// and waits on a wait handle while nothing is awaited. Between passes that complete
    /// nothing it yields the core, then backs off to waits of up to a millisecond (a new
    /// awaited request wakes it at once).</summary>
    internal static class ProgressEngine
    {
        const int YieldingPasses = 200;   // passes with only Thread.Yield before the back-off
        const int MaxBackoffMs = 1;
        const long SettledElsewhere = -2;   // an id no pass tests (RequestTestMany skips ids < 0)

        /// <summary>Completes an awaited task: with failure when there is one, else
        /// with result.</summary>
        internal static void Settle<T>(TaskCompletionSource<T> task, Exception failure, T result)
        {
            if (failure != null)
                task.TrySetException(failure);
            else
                task.TrySetResult(result);
        }

        /// <summary>An awaited operation the engine completes by polling
        /// it (ORequest&lt;T&gt;).</summary>
        internal interface IPolled
        {
            /// <summary>One non-blocking step; true once the operation's task
            /// is complete.</summary>
            bool Poll();
        }

        static readonly object gate = new object();
        static readonly List<Request> incoming = new List<Request>();
        static readonly List<IPolled> incomingPolled = new List<IPolled>();
        static readonly AutoResetEvent wake = new AutoResetEvent(false);
        static Thread thread;

        /// <summary>Awaiting a running operation needs MPI_THREAD_MULTIPLE: the engine calls MPI
        /// from its own thread. NotSupportedException otherwise.</summary>
        internal static void RequireThreadMultiple(string what)
        {
            if (MP.ThreadLevel < 3)
                throw new NotSupportedException(
                    "System.MP: awaiting a running " + what + " needs MPI_THREAD_MULTIPLE " +
                    "(MP.ThreadLevel is " + MP.ThreadLevel + "): the progress engine " +
                    "tests it from its own thread; use Wait or Test");
        }

        internal static void Add(Request r) => Add(r, null);

        internal static void Add(IPolled p) => Add(null, p);

        static void Add(Request r, IPolled p)
        {
            lock (gate)
            {
                if (r != null)
                    incoming.Add(r);
                else
                    incomingPolled.Add(p);
                if (thread == null) {
                    thread =
                        new Thread(Run) { IsBackground = true, Name = "System.MP progress engine" };
                    thread.Start();
                }
            }
            wake.Set();
        }

        static void Run()
        {
            var active = new List<Request>();
            long[] ids = new long[0];
            StatusData[] statuses = new StatusData[0];
            Exception[] failures = new Exception[0];
            var polled = new List<IPolled>();
            int quietPasses = 0;
            while (true) {
                lock (gate)
                {
                    active.AddRange(incoming);
                    incoming.Clear();
                    polled.AddRange(incomingPolled);
                    incomingPolled.Clear();
                }
                if (active.Count == 0 && polled.Count == 0) {
                    wake.WaitOne();   // nothing awaited: no polling at all
                    quietPasses = 0;
                    continue;
                }
                bool progressed = false;
                try {
                    if (active.Count > 0)
                        progressed = Pass(active, ref ids, ref statuses, ref failures);
                } catch (Exception e) {
                    // not a transfer's failure (those complete their own task): the engine
                    // cannot test these requests, so their tasks fail rather than hang
                    foreach (Request r in active)
                        r.CompleteAwaited(
                            null,
                            new MPException("System.MP: the progress engine failed: " + e.Message,
                                            -1, e));
                    active.Clear();
                }
                // each polled operation settles its own task, failures included
                int before = polled.Count;
                polled.RemoveAll(p => p.Poll());
                progressed |= polled.Count < before;
                if (progressed || (active.Count == 0 && polled.Count == 0)) {
                    quietPasses = 0;
                } else if (++quietPasses < YieldingPasses) {
                    Thread.Yield();
                } else {
                    wake.WaitOne(MaxBackoffMs);   // a new awaited request ends the wait early
                }
            }
        }

        /// <summary>One pass over the awaited requests; true when some completed.</summary>
        static bool Pass(List<Request> active, ref long[] ids, ref StatusData[] statuses,
                         ref Exception[] failures)
        {
            if (ids.Length < active.Count) {
                int n = Math.Max(active.Count, 2 * ids.Length);
                ids = new long[n];
                statuses = new StatusData[n];
                failures = new Exception[n];
            }
            for (int i = 0; i < ids.Length; i++) {
                ids[i] = i < active.Count ? active[i].Id : -1;
                if (i < active.Count && ids[i] < 0) {   // completed by a Wait on another thread
                    active[i].SettleCompletedElsewhere();
                    ids[i] = SettledElsewhere;
                }
            }
            int start = 0;
            while (true) {
                int stopped;
                int rc = TestMany(ids, start, statuses, out stopped);
                if (rc == 0)
                    break;
                failures[stopped] = Errors.Make(rc);   // now, while the record is this one's
                start = stopped + 1;
            }
            int kept = 0;
            for (int i = 0; i < active.Count; i++) {
                Request r = active[i];
                if (ids[i] >= 0) {
                    active[kept++] = r;
                    continue;
                }
                if (ids[i] == SettledElsewhere)
                    continue;
                Exception failure = failures[i];
                failures[i] = null;
                r.CompleteAwaited(failure == null ? Status.Of(ref statuses[i]) : null, failure);
            }
            bool progressed = kept < active.Count;
            active.RemoveRange(kept, active.Count - kept);
            return progressed;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int TestMany(long[] ids, int start, StatusData[] statuses, out int stopped) =>
            MPDirect.RequestTestMany(ids, start, statuses, out stopped);
    }
}

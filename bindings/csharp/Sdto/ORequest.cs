// ORequest<T> — a non-blocking graph receive (Comm.OIrecv) with no size guess. Starting it posts
// a real MPI receive, so it takes its place in MPI's matching order at once: receives posted later
// on the communicator never overtake it, plain or not. It lands in reserved address space the
// core's registry owns (only what the message fills becomes memory); completing the request reads
// the graph. A request you drop is finished by the core (its message taken and discarded).
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace System.MP
{
    /// <summary>A non-blocking receive of a graph whose root is a T (Comm.OIrecv): no size
    /// guess at any graph size. Complete it with Wait or Test; a request you drop is finished by
    /// the core (its message taken and discarded).</summary>
    /// <typeparam name="T">The type the root must be assignable to.</typeparam>
    public sealed class ORequest<T> : ProgressEngine.IPolled
    {
        readonly Comm comm;
        readonly int source, tag;
        long id = -1;   // the registry's id while receiving
        volatile bool complete;
        Status status;       // set once complete
        Exception failure;   // the receive failed: raised by every Wait and Test
        T graph;
        readonly object gate = new object();   // one call on the request at a time
        // Set once by AsTask; from then on the progress engine completes the receive and Wait,
        // Test and IsCompleted read the task.
        volatile TaskCompletionSource<T> awaited;

        internal ORequest(Comm comm, int source, int tag)
        {
            this.comm = comm;
            this.source = source;
            this.tag = tag;
        }

        /// <summary>Posts the receive. Argument errors are thrown here, before anything is
        /// received; MP.ProcNull completes at once.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal ORequest<T> Start()
        {
            var st = new StatusData();
            Errors.Check(
                MPDirect.OIrecvPost(comm.handle, comm.peers, source, tag, this, out id, ref st));
            if (id < 0) {   // MP.ProcNull: complete at once, no graph
                status = Status.Of(ref st);
                complete = true;
            }
            return this;
        }

        /// <summary>Blocks until the graph has arrived and returns it (default(T) after a
        /// successful Cancel, or from MP.ProcNull). MPSerializationException for bytes that are
        /// not a graph of an allowed type; MPException for a failed transfer. A failure is raised
        /// again by every later Wait or Test.</summary>
        public T Wait()
        {
            Status unused;
            return Wait(out unused);
        }

        /// <summary>Wait, with the message's status (Count and Bytes: the serialized size;
        /// Cancelled after a successful Cancel).</summary>
        public T Wait(out Status status)
        {
            TaskCompletionSource<T> task = awaited;
            if (task != null) {   // the engine completes it; blocking here must not hold the gate
                T result = task.Task.GetAwaiter().GetResult();   // raises the failure itself
                status = this.status;
                return result;
            }
            lock (gate)
            {
                // (awaited meanwhile: the engine completes it, not this thread)
                if (awaited == null) {
                    if (!complete)
                        Finish(true);
                    return Report(out status);
                }
            }
            return Wait(out status);
        }

        /// <summary>true, with the graph, once it has arrived (or the request was cancelled:
        /// then default(T)); false without blocking otherwise.</summary>
        public bool Test(out T graph)
        {
            TaskCompletionSource<T> task = awaited;
            if (task != null) {
                // read once: a second reading could see it done
                bool done = task.Task.IsCompleted;
                graph = done ? task.Task.GetAwaiter().GetResult() : default(T);
                return done;
            }
            lock (gate)
            {
                graph = default(T);
                if (!Advance())
                    return false;
                Status unused;
                graph = Report(out unused);
                return true;
            }
        }

        /// <summary>true once the graph has arrived (a Test that keeps the graph
        /// for Wait).</summary>
        public bool IsCompleted
        {
            get {
                TaskCompletionSource<T> task = awaited;
                if (task != null)
                    return task.Task.IsCompleted;
                // clang-format off
                lock (gate)
                    return Advance();
                // clang-format on
            }
        }

        /// <summary>Makes the receive awaitable: `T graph = await world.OIrecv&lt;T&gt;(source,
        /// tag);`. See AsTask.</summary>
        public TaskAwaiter<T> GetAwaiter() => AsTask().GetAwaiter();

        /// <summary>A task that completes with the graph once it has arrived (default(T) after a
        /// successful Cancel or from MP.ProcNull), or fails with the receive's exception. No thread
        /// blocks per receive: the progress engine that serves Request's await matches and
        /// completes it, and continuations run on the thread pool. The same task is returned every
        /// time; afterwards Wait, Test and IsCompleted report the task's outcome (Wait's status
        /// once it has completed).</summary>
        /// <exception cref="NotSupportedException">the receive is still running and MPI granted
        /// less than MPI_THREAD_MULTIPLE (MP.ThreadLevel &lt; 3).</exception>
        public Task<T> AsTask()
        {
            lock (gate)
            {
                if (awaited != null)
                    return awaited.Task;
                if (!complete)
                    ProgressEngine.RequireThreadMultiple("receive");
                awaited =
                    new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
                if (complete) {
                    Settle();
                    return awaited.Task;
                }
            }
            ProgressEngine.Add(this);
            return awaited.Task;
        }

        /// <summary>The engine's step: test the receive; settles the task when done.</summary>
        bool ProgressEngine.IPolled.Poll()
        {
            // A Wait that took the gate just before the await blocks in it: the engine, which
            // serves every awaited request, never waits for that; the next pass tries again.
            if (!Monitor.TryEnter(gate))
                return false;
            try {
                try {
                    if (!Advance())
                        return false;
                } catch (Exception e) {
                    // not the receive's failure (Finish keeps those): the test's
                    failure = e;
                    complete = true;
                }
                Settle();
                return true;
            } finally {
                Monitor.Exit(gate);
            }
        }

        /// <summary>One step without blocking (caller holds the gate): true once the request is
        /// complete.</summary>
        bool Advance() => complete || Finish(false);

        /// <summary>Completes the awaited task with the outcome (caller holds the gate).</summary>
        void Settle() => ProgressEngine.Settle(awaited, failure, graph);

        /// <summary>Asks MPI to cancel the receive: it takes effect while no message has matched
        /// it, and Wait then returns default(T) with Status.Cancelled true (and nothing else in
        /// the status), Test true. A message already matched is received as usual (MPI cannot
        /// cancel a matched receive), the rest of a large graph included.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Cancel()
        {
            lock (gate)
            {   // the engine tests an awaited receive under the gate too
                if (!complete)
                    Errors.Check(MPDirect.RequestCancel(id));
            }
        }

        /// <summary>Completes the matched receive (blocking or one test) and reads the graph;
        /// false when a test found it still running.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        bool Finish(bool block)
        {
            var st = new StatusData();
            int rc, completed;
            object result;
            using (comm.BudgetScope()) rc =
                MPDirect.OIrecvComplete(id, block ? 1 : 0, typeof(T), out result, out completed,
                                        ref st);
            if (completed == 0) {
                Errors.Check(rc);
                return false;
            }
            id = -1;
            if (rc != 0)
                failure = Errors.Make(rc);
            else
                graph = Cast(result);
            status = Status.Of(ref st);
            complete = true;
            return true;
        }

        static T Cast(object result) => result == null ? default(T) : (T)result;

        /// <summary>The outcome: the graph, or the failure, raised by every call
        /// that asks.</summary>
        T Report(out Status status)
        {
            status = this.status;
            if (failure != null)
                throw failure;
            return graph;
        }
    }
}

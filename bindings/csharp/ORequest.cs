// ORequest<T> — a non-blocking graph receive (Comm.OIrecv) with no size guess. Its message is
// matched by a probe (MPI_Improbe) when the request is started, tested or waited for, then
// received into a native buffer of exactly its size (MPI_Imrecv) owned by the core's registry;
// completing it reads the graph. Unmatched receives of a communicator queue in posting order, and
// a test matches the older ones first, so two OIrecv with the same envelope get their messages in
// the order they were posted, as MPI receives do.
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace System.MP
{
    /// <summary>The receives of one communicator not yet matched to a message, oldest first
    /// (weakly held: a dropped request matches nothing more once collected).</summary>
    internal sealed class OReceiveQueue
    {
        readonly List<WeakReference<IOReceive>> pending = new List<WeakReference<IOReceive>>();

        internal void Add(IOReceive r)
        {
            lock (pending)
                pending.Add(new WeakReference<IOReceive>(r));
        }

        /// <summary>Matches messages to receives up to r until r has one or none is waiting
        /// for it; true once r is matched. Each message r could take is first seen by envelope
        /// (a non-matching probe, which also checks r's arguments: its errors are thrown), then
        /// taken by a matched probe of that exact envelope for the oldest receive it fits: so
        /// receives get messages in posting order, as MPI receives do, even when a message
        /// arrives between two probes.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal bool MatchUpTo(IOReceive r, Comm comm)
        {
            lock (pending) {
                while (r.Unmatched) {
                    int at = -1;
                    for (int i = 0; i < pending.Count && at < 0; i++) {
                        if (!pending[i].TryGetTarget(out IOReceive p))
                            pending.RemoveAt(i--);
                        else if (p == r)
                            at = i;
                    }
                    if (at < 0)
                        break;   // cancelled meanwhile
                    var st = new StatusData();
                    Errors.Check(MPDirect.Iprobe(comm.handle, comm.peers, r.Source, r.Tag, ref st, out int found));
                    if (found == 0)
                        return false;
                    for (int i = 0; i <= at; i++) {
                        if (pending[i].TryGetTarget(out IOReceive p) && p.Accepts(st.Source, st.Tag)) {
                            if (p.TryMatch(st.Source, st.Tag))
                                pending.RemoveAt(i);
                            break;   // (not matched: another thread took the message; probe again)
                        }
                    }
                }
            }
            return !r.Unmatched;
        }

        /// <summary>Is an unmatched receive waiting (a blocking ORecv must then queue behind it)?</summary>
        internal bool Pending {
            get {
                lock (pending) {
                    for (int i = 0; i < pending.Count; i++) {
                        if (pending[i].TryGetTarget(out IOReceive p) && p.Unmatched)
                            return true;
                        pending.RemoveAt(i--);
                    }
                }
                return false;
            }
        }

        /// <summary>Takes r out of the queue; false when it was matched already.</summary>
        internal bool Remove(IOReceive r)
        {
            lock (pending) {
                for (int i = 0; i < pending.Count; i++)
                    if (pending[i].TryGetTarget(out IOReceive p) && p == r) {
                        pending.RemoveAt(i);
                        return r.Unmatched;
                    }
            }
            return false;
        }

        /// <summary>Is an unmatched receive posted before r still waiting?</summary>
        internal bool OlderThan(IOReceive r)
        {
            lock (pending) {
                foreach (WeakReference<IOReceive> w in pending)
                    if (w.TryGetTarget(out IOReceive p))
                        return p != r;   // the first live entry: r itself, or an older one
            }
            return false;
        }
    }

    /// <summary>What the queue asks of a receive (ORequest&lt;T&gt;).</summary>
    internal interface IOReceive
    {
        /// <summary>No message matched yet.</summary>
        bool Unmatched { get; }
        /// <summary>The source and tag asked for (wildcards included).</summary>
        int Source { get; }
        int Tag { get; }
        /// <summary>Would this receive take a message with this envelope?</summary>
        bool Accepts(int source, int tag);
        /// <summary>A matched probe of exactly this envelope (under the queue's lock): true when
        /// a message is matched to this receive now (a failure becomes its outcome).</summary>
        bool TryMatch(int source, int tag);
    }

    /// <summary>A non-blocking receive of a graph whose root is a T (Comm.OIrecv): no size
    /// guess at any graph size. Complete it with Wait or Test; a request you drop is finished by
    /// the core (its message, if matched already, is received and discarded).</summary>
    /// <typeparam name="T">The type the root must be assignable to.</typeparam>
    public sealed class ORequest<T> : IOReceive, ProgressEngine.IPolled
    {
        readonly Comm comm;
        readonly int source, tag;
        long id = -1;             // the registry's id once matched and receiving
        volatile int state;       // Unmatch, Receiving or Complete
        Status status;            // set once complete
        Exception failure;        // raised once by Wait or Test
        T graph;
        bool reported;            // Wait or Test has returned the outcome once
        readonly object gate = new object();   // one call on the request at a time
        const int Unmatch = 0, Receiving = 1, Complete = 2;
        // Set once by AsTask; from then on the progress engine completes the receive and Wait,
        // Test and IsCompleted read the task.
        volatile TaskCompletionSource<T> awaited;

        internal ORequest(Comm comm, int source, int tag)
        {
            this.comm = comm;
            this.source = source;
            this.tag = tag;
        }

        bool IOReceive.Unmatched => state == Unmatch;
        int IOReceive.Source => source;
        int IOReceive.Tag => tag;

        bool IOReceive.Accepts(int s, int t) => (source == MP.AnySource || source == s) && (tag == MP.AnyTag || tag == t);

        [MethodImpl(MethodImplOptions.NoInlining)]
        bool IOReceive.TryMatch(int s, int t)
        {
            if (state != Unmatch)
                return true;
            var st = new StatusData();
            int rc = MPDirect.OIrecvMatch(comm.handle, comm.peers, s, t, this, out long registered, out int matched, ref st);
            if (rc != 0) {
                failure = Errors.Make(rc);
                status = Status.Of(ref st);
                state = Complete;
                return true;
            }
            if (matched == 0)
                return false;
            if (registered < 0) {   // MP.ProcNull: complete at once, no graph
                status = Status.Of(ref st);
                state = Complete;
            } else {
                id = registered;
                state = Receiving;
            }
            return true;
        }

        /// <summary>Queued in posting order, then one probe: a message already waiting is
        /// matched at once. Argument errors are thrown here, before anything is received.</summary>
        internal ORequest<T> Start()
        {
            if (source == MP.ProcNull) {   // complete at once, never queued (tag still checked)
                ((IOReceive)this).TryMatch(source, tag);
                if (failure != null) {
                    Exception e = failure;
                    failure = null;
                    throw e;
                }
                return this;
            }
            comm.oreceives.Add(this);
            try {
                comm.oreceives.MatchUpTo(this, comm);
            } catch {
                comm.oreceives.Remove(this);
                throw;
            }
            return this;
        }

        /// <summary>Blocks until the graph has arrived and returns it (default(T) after a
        /// successful Cancel, or from MP.ProcNull). MPSerializationException for bytes that are
        /// not a graph of an allowed type; MPException for a failed transfer.</summary>
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
            lock (gate) {
                if (state == Unmatch && !comm.oreceives.MatchUpTo(this, comm)) {
                    if (!comm.oreceives.OlderThan(this) && comm.oreceives.Remove(this)) {
                        // no older receive can claim the message: one blocking matched probe
                        // and receive, GC-safe (as ORecv)
                        var st = new StatusData();
                        try {
                            graph = Cast(Receive(ref st));
                            this.status = Status.Of(ref st);
                        } catch (Exception e) {
                            failure = e;
                        }
                        state = Complete;
                    } else {
                        var spin = new SpinWait();
                        while (!comm.oreceives.MatchUpTo(this, comm))
                            spin.SpinOnce();   // older receives first, as MPI matches
                    }
                }
                if (state == Receiving)
                    Finish(true);
                return Report(out status);
            }
        }

        /// <summary>true, with the graph, once it has arrived (or the request was cancelled:
        /// then default(T)); false without blocking otherwise.</summary>
        public bool Test(out T graph)
        {
            TaskCompletionSource<T> task = awaited;
            if (task != null) {
                graph = task.Task.IsCompleted ? task.Task.GetAwaiter().GetResult() : default(T);
                return task.Task.IsCompleted;
            }
            lock (gate) {
                graph = default(T);
                if (!Advance())
                    return false;
                Status unused;
                graph = Report(out unused);
                return true;
            }
        }

        /// <summary>true once the graph has arrived (a Test that keeps the graph for Wait).</summary>
        public bool IsCompleted {
            get {
                TaskCompletionSource<T> task = awaited;
                if (task != null)
                    return task.Task.IsCompleted;
                lock (gate)
                    return Advance();
            }
        }

        /// <summary>Makes the receive awaitable: `T graph = await world.OIrecv&lt;T&gt;(source, tag);`.
        /// See AsTask.</summary>
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
            lock (gate) {
                if (awaited != null)
                    return awaited.Task;
                if (state != Complete)
                    ProgressEngine.RequireThreadMultiple("receive");
                awaited = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
                if (state == Complete) {
                    Settle();
                    return awaited.Task;
                }
            }
            ProgressEngine.Add(this);
            return awaited.Task;
        }

        /// <summary>The engine's step: match, then test the receive; settles the task when done.</summary>
        bool ProgressEngine.IPolled.Poll()
        {
            lock (gate) {
                try {
                    if (!Advance())
                        return false;
                } catch (Exception e) {
                    if (state == Unmatch)
                        comm.oreceives.Remove(this);
                    failure = e;
                    state = Complete;
                }
                Settle();
                return true;
            }
        }

        /// <summary>One step without blocking (caller holds the gate): match a message if none
        /// is yet, then test the receive; true once the request is complete.</summary>
        bool Advance()
        {
            if (state == Unmatch && !comm.oreceives.MatchUpTo(this, comm))
                return false;
            return state == Complete || Finish(false);
        }

        /// <summary>Completes the awaited task with the outcome (caller holds the gate).</summary>
        void Settle()
        {
            reported = true;
            Exception e = failure;
            failure = null;
            ProgressEngine.Settle(awaited, e, graph);
        }

        /// <summary>Cancels the receive if no message has been matched to it yet: then Wait
        /// returns default(T) with Status.Cancelled true, and Test returns true. A message
        /// already matched is received as usual (MPI cannot cancel a matched receive).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Cancel()
        {
            lock (gate) {
                if (state == Unmatch && comm.oreceives.Remove(this)) {
                    var st = new StatusData { Source = source, Tag = tag, Cancelled = 1 };
                    status = Status.Of(ref st);
                    state = Complete;
                } else if (state == Receiving) {
                    Errors.Check(MPDirect.RequestCancel(id));
                }
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        object Receive(ref StatusData st)
        {
            object result;
            Errors.Check(MPDirect.ORecv(comm.handle, comm.peers, source, tag, typeof(T), out result, ref st));
            return result;
        }

        /// <summary>Completes the matched receive (blocking or one test) and reads the graph;
        /// false when a test found it still running.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        bool Finish(bool block)
        {
            var st = new StatusData();
            int rc = MPDirect.OIrecvComplete(id, block ? 1 : 0, typeof(T), out object result, out int completed, ref st);
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
            state = Complete;
            return true;
        }

        static T Cast(object result) => result == null ? default(T) : (T)result;

        T Report(out Status status)
        {
            status = this.status;
            if (!reported) {
                reported = true;
                Exception e = failure;
                failure = null;
                if (e != null)
                    throw e;
            }
            return graph;
        }
    }
}

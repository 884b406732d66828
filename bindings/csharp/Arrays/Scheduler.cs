// System.MP.Arrays — the per-rank message-driven loop: it receives the arrays' messages, runs
// the entry methods, and detects quiescence (no message in flight, nothing left to run on any
// rank) with Mattern's four-counter waves over a non-blocking allreduce.
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;

namespace System.MP.Arrays
{
    /// <summary>The message-driven scheduler of one rank, for the object arrays of one
    /// communicator. Create it collectively, create arrays on it in the same order on every rank,
    /// send the first messages, then call <see cref="Run"/> on every rank: it delivers messages
    /// until the whole job is quiescent. Use it (and its arrays) from the thread that
    /// created it.</summary>
    public sealed class Scheduler : IDisposable
    {
        // a duplicate: the arrays' messages never meet the user's
        internal readonly Intracomm Comm;
        readonly Channel channel;   // the arrays' messages on Comm
        readonly Thread owner;
        readonly List<IScheduledArray> arrays = new List<IScheduledArray>();
        readonly Queue<Action> work = new Queue<Action>();
        readonly List<Exception> faults = new List<Exception>();
        // kept: a dropped send's buffer waits for a collection
        readonly List<Request> sends = new List<Request>();
        // 10 µs, 20 µs
        static readonly long WaveAfter = Stopwatch.Frequency / 100000,
                             YieldAfter = Stopwatch.Frequency / 50000,
                             NapAfter = Stopwatch.Frequency / 2000;   // 0.5 ms
        long idleSince;
        int reapAt = 256, spins;
        readonly long[] counts = new long[2], totals = new long[2];
        long sent, received, lastSent = -1, lastReceived = -1, phase;
        Request wave;
        bool running, disposed, peerAhead;

        /// <summary>This rank in the scheduler's communicator.</summary>
        public int Rank { get; }
        /// <summary>How many ranks take part.</summary>
        public int Size { get; }

        /// <summary>True when this host runs more of the job's ranks than the cores they may run
        /// on (<see cref="MP.RanksOnHost"/> &gt; <see cref="MP.CoresOnHost"/>): then loads are
        /// measured in CPU time, and under the wait policy this chooses (<see
        /// cref="MP.WaitPolicy"/>, MOTOR_WAIT) a rank idle for more than half a millisecond naps 50
        /// µs at a time instead of spinning, so the ranks with work get the cores.</summary>
        public bool Oversubscribed { get; }
        readonly bool naps;   // MP.WaitPolicy == Yield

        /// <summary>Messages this rank has sent to other ranks (and to itself
        /// through MPI).</summary>
        public long MessagesSent => sent;
        /// <summary>Messages this rank has received.</summary>
        public long MessagesReceived => received;

        /// <summary>Raised on this rank for each failure met while running (a message that could
        /// not be read, an entry method that threw, an insertion of an existing index). With no
        /// handler, <see cref="Run"/> throws the first failure once the job is quiescent.</summary>
        public event EventHandler<ArrayFaultEventArgs> Faulted;

        /// <summary>A scheduler over comm (collective: every rank of comm calls it).</summary>
        public Scheduler(Intracomm comm)
        {
            if (comm == null)
                throw new ArgumentNullException(nameof(comm));
            Comm = comm.Dup();
            channel = new Channel(Comm);
            Rank = Comm.Rank;
            Size = Comm.Size;
            owner = Thread.CurrentThread;
            // more ranks on this host than cores (the core measured it when MPI started: the
            // job's ranks here against the cores their affinity allows); whether an idle rank
            // naps is the wait policy's call (MOTOR_WAIT), as for every other wait
            Oversubscribed = MP.CoresOnHost > 0 && MP.RanksOnHost > MP.CoresOnHost;
            naps = Backoff.Yields;
            secondsPerTick = Oversubscribed ? 1e-9 : TickSeconds();
        }

        readonly double secondsPerTick;

        [System.Runtime.CompilerServices.MethodImpl(
            System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        static double TickSeconds() => MPDirect.TickSeconds();

        [System.Runtime.InteropServices.DllImport("libc", SetLastError = false)]
        static extern int usleep(uint microseconds);

        struct TimeSpec
        {
            public long Seconds, Nanoseconds;
        }
        [System.Runtime.InteropServices.DllImport("libc", SetLastError = false)]
        static extern int clock_gettime(int clock, out TimeSpec time);
        const int ThreadCpuTime = 3;   // CLOCK_THREAD_CPUTIME_ID

        /// <summary>Now, for the elements' loads (read twice per message, so cheap): the core's
        /// ticks of wall time, or where ranks share cores the thread's CPU time in ns (wall time
        /// would count the time others held the core, and the balancer would chase that noise).
        /// <see cref="LoadSeconds"/> converts a difference.</summary>
        [System.Runtime.CompilerServices.MethodImpl(
            System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        internal long LoadClock()
        {
            if (!Oversubscribed)
                return MPDirect.Ticks();
            TimeSpec t;
            clock_gettime(ThreadCpuTime, out t);
            return t.Seconds * 1000000000 + t.Nanoseconds;
        }

        internal double LoadSeconds(long elapsed) => elapsed * secondsPerTick;

        internal void CheckThread()
        {
            if (disposed)
                throw new ObjectDisposedException(nameof(Scheduler));
            if (Thread.CurrentThread != owner)
                throw new InvalidOperationException(
                    "System.MP.Arrays: a scheduler and its arrays are used from the thread that " +
                    "created the scheduler");
        }

        internal void CheckIdle(string what)
        {
            CheckThread();
            if (running)
                throw new InvalidOperationException(
                    $"System.MP.Arrays: {what} is collective: call it outside Run, on every rank");
        }

        /// <summary>The id the next array created will have (its place in the tags).</summary>
        internal int NextArrayId()
        {
            int id = arrays.Count;
            if (id >= (MP.TagUpperBound >> Tags.ArrayShift))
                throw new InvalidOperationException(
                    $"System.MP.Arrays: at most {MP.TagUpperBound >> Tags.ArrayShift} arrays per " +
                    "scheduler (MPI's tag range)");
            return id;
        }

        internal void Add(IScheduledArray array) => arrays.Add(array);

        /// <summary>Sends graph to rank dest with tag; serialized now, so it may change
        /// at once.</summary>
        internal void Post(int dest, int tag, object graph) => Post(dest, tag, null, graph);

        /// <summary>Sends header's longs, then graph (Wire); both copied now. Never waits: a send
        /// that does not finish at once runs on in the core, which frees its bytes.</summary>
        internal void Post(int dest, int tag, long[] header, object graph)
        {
            channel.Post(header, graph, dest, TagFor(tag));
            sent++;
        }

        /// <summary>The first longs of the message taken last (Wire: a message to an
        /// element's header).</summary>
        internal readonly long[] Incoming = new long[Wire.Longs];

        /// <summary>Sends the message taken last on to rank dest with tag, header in place of its
        /// own (Channel.Forward).</summary>
        internal void Forward(int dest, int tag, long[] header)
        {
            channel.Forward(header, dest, TagFor(tag));
            sent++;
        }

        /// <summary>Starts sending a transportable object as itself (OPI: pinned only if the GC
        /// could move it); the request is completed by the loop. Counted like any message: the
        /// array receives it itself right after its envelope (<see cref="ReceivedDirectly"/>), or,
        /// when the envelope could not be read, the loop takes it as a message of
        /// its own.</summary>
        internal void PostData(int dest, int tag, object data)
        {
            Keep(Comm.Isend(data, dest, TagFor(tag)));
            sent++;
        }

        /// <summary>Counts a message an array received itself, not through the loop.</summary>
        internal void ReceivedDirectly() => received++;

        void Keep(Request r)
        {
            if (r.IsCompleted)
                return;
            sends.Add(r);
            if (sends.Count < reapAt)
                return;
            Status unused;
            sends.RemoveAll(x => x.Test(out unused));
            // sends stuck on slow receivers are not rescanned each time
            reapAt = Math.Max(256, 2 * sends.Count);
        }

        /// <summary>Completes the finished sends at the front (the oldest: they tend to finish
        /// in order).</summary>
        void ReapSends()
        {
            Status unused;
            int done = 0;
            while (done < sends.Count && sends[done].Test(out unused))
                done++;
            sends.RemoveRange(0, done);
        }

        /// <summary>The tag with this rank's phase parity: a message sent after this rank left Run
        /// belongs to the next phase, and a rank still finishing the last one leaves
        /// it queued.</summary>
        internal int TagFor(int tag) => tag | ((int)(phase & 1) << Tags.KindBits);

        internal void Later(Action action) => work.Enqueue(action);

        internal void Fault(Exception e)
        {
            EventHandler<ArrayFaultEventArgs> handler = Faulted;
            if (handler == null) {
                faults.Add(e);
                return;
            }
            try {
                handler(this, new ArrayFaultEventArgs(e));
            } catch (Exception fromHandler) {
                // Run throws it once the job is quiescent: leaving now would strand the other ranks
                faults.Add(fromHandler);
            }
        }

        /// <summary>Delivers messages and runs entry methods until the job is quiescent: no rank
        /// has anything to run and no message is in flight. Collective: every rank calls it. Then,
        /// unless a <see cref="Faulted"/> handler took them, throws the first failure met on this
        /// rank (the arrays keep working). May be called again for the next phase.</summary>
        public void Run()
        {
            CheckIdle(nameof(Run));
            running = true;
            try {
                lastSent = lastReceived = -1;
                peerAhead = false;
                while (true) {
                    if (peerAhead) {
                        // a message of the next phase came: a peer saw the job quiescent in a wave
                        // this rank has joined, so that wave ends the phase here too
                        wave.Wait();
                        wave = null;
                        if (totals[0] != totals[1])
                            throw new InvalidOperationException(
                                "System.MP.Arrays: a peer left Run but the last wave counted " +
                                $"{totals[0]} sent, {totals[1]} received");
                        break;
                    }
                    int got = Poll();
                    if (work.Count > 0 || got > 0) {
                        for (int i = 0; i < 64 && work.Count > 0; i++)
                            Execute(work.Dequeue());
                        idleSince = 0;
                        spins = 0;
                        continue;
                    }
                    // idle: a quiescence wave costs an allreduce, and yielding costs ~0.5 µs, so a
                    // rank that is only waiting for a reply polls a while before either; between
                    // two probes it looks at nothing else most of the time, not even the clock
                    // (~30 ns: a reply found a probe later waits for whatever ran in between)
                    if (wave == null && (++spins & 15) != 0)
                        continue;
                    long now = Stopwatch.GetTimestamp();
                    if (idleSince == 0)
                        idleSince = now;
                    long idle = now - idleSince;
                    if (sends.Count > 0)
                        ReapSends();
                    if (wave == null && idle < WaveAfter)
                        continue;
                    if (Quiescent())
                        break;
                    // sched_yield barely yields under CFS; Sleep(1) would add a millisecond to
                    // every hop of a chain
                    if (idle > NapAfter && naps)
                        usleep(50);
                    else if (idle > YieldAfter)   // others are still busy: give them the core
                        Thread.Yield();
                }
                if (sends.Count > 0) {   // all received by now (their receivers were counted)
                    Request.WaitAll(sends.ToArray());
                    sends.Clear();
                }
                foreach (IScheduledArray a in arrays)
                    a.Quiesced();
            } finally {
                System.MP.Comm.ReleaseIncoming();   // the last message taken
                running = false;
                phase++;
            }
            if (faults.Count > 0) {
                Exception first = faults[0];
                faults.Clear();
                throw first;
            }
        }

        void Execute(Action action)
        {
            try {
                action();
            } catch (Exception e) {
                Fault(e);
            }
        }

        /// <summary>Receives what has arrived (at most 64 messages, so local work is not starved),
        /// each taken whole (Channel.Take) before its array reads it.</summary>
        int Poll()
        {
            int got = 0;
            var st = new StatusData();
            while (got < 64) {
                // a message of the next phase can come only while a wave runs (Run): only then is
                // its tag looked at before it is taken, so that it can be left queued
                if (wave == null) {
                    if (!channel.Take(MP.AnySource, MP.AnyTag, Incoming, ref st))
                        break;
                } else {
                    if (!Comm.Iprobe(MP.AnySource, MP.AnyTag, ref st))
                        break;
                    if (((st.Tag >> Tags.KindBits) & 1) != (phase & 1)) {
                        peerAhead = true;
                        break;
                    }
                    // the message probed is still there: one thread probes
                    if (!channel.Take(st.Source, st.Tag, Incoming, ref st))
                        break;
                }
                got++;
                received++;
                int array = st.Tag >> Tags.ArrayShift, kind = st.Tag & ((1 << Tags.KindBits) - 1);
                try {
                    if (array >= arrays.Count)
                        throw new MPSerializationException(
                            $"System.MP.Arrays: a message from rank {st.Source} for array " +
                            $"{array}, which does not exist (tag {st.Tag})");
                    arrays[array].Dispatch(st.Source, kind, st.Tag, st.Count);
                } catch (Exception e) {
                    Fault(e);
                }
            }
            return got;
        }

        /// <summary>One step of termination detection: when idle, join the next wave (an
        /// Iallreduce of the messages sent and received); quiescent once two consecutive waves
        /// find sent == received with the same totals (Mattern's four counters).</summary>
        bool Quiescent()
        {
            if (wave == null) {
                counts[0] = sent;
                counts[1] = received;
                wave = Comm.Iallreduce(counts, totals, Op.Sum);
                return false;
            }
            Status unused;
            if (!wave.Test(out unused))
                return false;
            wave = null;
            bool done =
                totals[0] == totals[1] && totals[0] == lastSent && totals[1] == lastReceived;
            lastSent = totals[0];
            lastReceived = totals[1];
            return done;
        }

        /// <summary>Frees the scheduler's communicator (collective). Its arrays
        /// stop working.</summary>
        public void Dispose()
        {
            if (disposed)
                return;
            disposed = true;
            Comm.Dispose();
        }
    }

    /// <summary>What the scheduler needs of an array.</summary>
    internal interface IScheduledArray
    {
        /// <summary>Handles a message of kind from source, already taken (Channel.Take): its bytes
        /// are in the thread's incoming buffer until the next take.</summary>
        void Dispatch(int source, int kind, int tag, int bytes);
        void Quiesced();
    }
}

// MP — the static entry point of System.MP.
using System.Runtime.CompilerServices;
using System.Threading;

namespace System.MP
{
    /// <summary>The entry point of System.MP: the predefined communicators, wildcards, the
    /// clock and the core's counters. MPI starts at the first use of any member (under
    /// <c>motor</c> it is already running).</summary>
    public static class MP
    {
        /// <summary>A receive or probe source that matches any rank (MPI_ANY_SOURCE).</summary>
        public const int AnySource = -1;
        /// <summary>A receive or probe tag that matches any tag (MPI_ANY_TAG).</summary>
        public const int AnyTag = -1;
        /// <summary>The rank that is no process (MPI_PROC_NULL): a send to it does nothing, a
        /// receive or probe from it completes at once with Source == ProcNull, Tag == AnyTag and
        /// Count == Bytes == 0 (Recv&lt;T&gt; and ORecv return default(T)). Point-to-point calls,
        /// their ranges, Sendrecv and the O-calls all take it, so a stencil's open boundary needs
        /// no special case (CartComm.Shift returns it there).</summary>
        public const int ProcNull = -3;

        /// <summary>MPI_COMM_WORLD.</summary>
        public static Intracomm World => Core.World;
        /// <summary>MPI_COMM_SELF.</summary>
        public static Intracomm Self => Core.Self;

        static int tagUpperBound = -1;
        /// <summary>The largest tag a message may carry (MPI_TAG_UB; at least 32767). Tags run
        /// from 0 to this value.</summary>
        public static int TagUpperBound
        {
            get {
                if (tagUpperBound < 0) {
                    Core.Ensure();
                    tagUpperBound = ReadTagUpperBound();
                }
                return tagUpperBound;
            }
        }

        /// <summary>Wall-clock time in seconds since an arbitrary moment in the past
        /// (MPI_Wtime): subtract two readings to time a section.</summary>
        public static double Wtime()
        {
            Core.Ensure();
            return ReadWtime();
        }

        /// <summary>The name of the node this rank runs on (MPI_Get_processor_name).</summary>
        public static string ProcessorName
        {
            get {
                Core.Ensure();
                return Core.Text(ReadProcessorName);
            }
        }

        /// <summary>MPI_Abort on World: ends every process of the job.</summary>
        public static void Abort(int errorCode)
        {
            Core.Ensure();
            AbortWorld(errorCode);
        }

        /// <summary>A snapshot of the core's counters.</summary>
        public static MPStats Stats
        {
            get {
                Core.Ensure();
                return ReadStats();
            }
        }

        /// <summary>Thread support MPI granted (MPI_THREAD_SINGLE=0
        /// … MPI_THREAD_MULTIPLE=3).</summary>
        public static int ThreadLevel
        {
            get {
                Core.Ensure();
                return ReadThreadLevel();
            }
        }

        /// <summary>Whether the pinning policy treats small old-generation objects as movable
        /// (false when the runtime runs with evacuation-threshold=0, as under the
        /// motor host).</summary>
        public static bool OldGenerationMoves
        {
            get {
                Core.Ensure();
                return ReadOldGenerationMoves();
            }
        }

        /// <summary>The process's receive budget (null, the default: none): it caps what one
        /// graph read by <see cref="Serializer.Deserialize{T}"/>, or received by the O-calls of
        /// a communicator whose own <see cref="Comm.ReceiveBudget"/> is null, may allocate
        /// (docs/reference.md, "Receive budget").</summary>
        /// <example><code>
        /// MP.ReceiveBudget = new ReceiveBudget(multiple: 8);   // every graph: at most 8 x its
        /// bytes
        /// </code></example>
        public static ReceiveBudget ReceiveBudget
        {
            get => receiveBudget;
            set => receiveBudget = ReceiveBudget.Noted(value);
        }

        static ReceiveBudget receiveBudget;

        /// <summary>How blocking calls wait (MOTOR_WAIT, docs/reference.md): Spin polls MPI
        /// without pause, as MPI does, for the lowest latency while every rank has a core; Yield
        /// polls briefly, then gives the core away (yields, then naps of growing length), for a
        /// host whose ranks outnumber its cores (<see cref="RanksOnHost"/> &gt;
        /// <see cref="CoresOnHost"/>), where a spinning rank holds the core the rank it waits
        /// for needs. Chosen once when MPI starts.</summary>
        public static WaitPolicy WaitPolicy
        {
            get {
                Core.Ensure();
                return (WaitPolicy)ReadWaitPolicy(out int unused1, out int unused2);
            }
        }

        /// <summary>The ranks of World on this host (those sharing its memory); 0 when MPI was
        /// started by someone other than System.MP (then it was not measured).</summary>
        public static int RanksOnHost
        {
            get {
                Core.Ensure();
                ReadWaitPolicy(out int ranks, out int unused);
                return ranks;
            }
        }

        /// <summary>The cores World's ranks on this host may run on together (the union of
        /// their CPU affinity masks, at most the CPUs online); 0 when not measured.</summary>
        public static int CoresOnHost
        {
            get {
                Core.Ensure();
                ReadWaitPolicy(out int unused, out int cores);
                return cores;
            }
        }

        // clang-format off
        [MethodImpl(MethodImplOptions.NoInlining)]
        static int ReadWaitPolicy(out int ranks, out int cores) =>
            MPDirect.WaitPolicy(out ranks, out cores);
        // clang-format on

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int ReadTagUpperBound() => MPDirect.TagUpperBound();
        [MethodImpl(MethodImplOptions.NoInlining)]
        static double ReadWtime() => MPDirect.Wtime();
        [MethodImpl(MethodImplOptions.NoInlining)]
        static int ReadProcessorName(byte[] b) => MPDirect.ProcessorName(b);
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void AbortWorld(int code) => Errors.Check(MPDirect.Abort(MPDirect.WorldHandle(),
                                                                        code));
        [MethodImpl(MethodImplOptions.NoInlining)]
        static int ReadThreadLevel() => MPDirect.ThreadLevel();
        [MethodImpl(MethodImplOptions.NoInlining)]
        static bool ReadOldGenerationMoves() => MPDirect.OldGenerationMoves() != 0;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static MPStats ReadStats()
        {
            var v = new long[MPStats.Index.Count];
            Errors.Check(MPDirect.Stats(v));
            return new MPStats(v);
        }

        // ---- groups, topologies, processes ----

        /// <summary>"No rank" (MPI_UNDEFINED): <see cref="Group.Rank"/> of a process outside the
        /// group, and <see cref="Group.TranslateRanks"/> where a process is absent.</summary>
        public const int Undefined = -32766;

        /// <summary>Chooses a balanced grid of <paramref name="nodes"/> processes
        /// (MPI_Dims_create): returns a new array like <paramref name="dims"/> where every 0 is
        /// replaced by a size, the sizes as close to each other as possible and in non-increasing
        /// order; positive entries are kept as given. <paramref name="dims"/> itself is not
        /// changed. Pass the result to <see cref="Intracomm.CreateCart"/>.</summary>
        /// <exception cref="ArgumentNullException">dims is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">nodes is below 1, or an entry of dims is
        /// negative.</exception>
        /// <exception cref="ArgumentException">the positive entries do not divide nodes (or, with
        /// no zero entry, do not multiply to it).</exception>
        public static int[] DimsCreate(int nodes, int[] dims)
        {
            if (dims == null)
                throw new ArgumentNullException(nameof(dims));
            Core.Ensure();
            var filled = (int[])dims.Clone();
            FillDims(nodes, filled);
            return filled;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void FillDims(int nodes,
                             int[] dims) => Errors.Check(MPDirect.DimsCreate(nodes, dims));

        static Intercomm parent;
        static bool parentRead;
        static readonly object parentGate = new object();

        /// <summary>In a program started by <see cref="Intracomm.Spawn"/>: the intercommunicator to
        /// the processes that started it (its remote group; MPI_Comm_get_parent). null in a program
        /// that was not spawned. It belongs to System.MP: Dispose on it does nothing.</summary>
        public static Intercomm Parent
        {
            get {
                if (!parentRead) {
                    Core.Ensure();
                    lock (parentGate)
                    {
                        if (!parentRead) {
                            parent = ReadParent();
                            parentRead = true;
                        }
                    }
                }
                return parent;
            }
        }

        // clang-format off
        [MethodImpl(MethodImplOptions.NoInlining)]
        static Intercomm ReadParent()
        {
            int handle;
            Errors.Check(MPDirect.CommParent(out handle));
            return handle == Comm.NullHandle ? null : new Intercomm(handle, false);
        }
        // clang-format on
    }

    /// <summary>How blocking calls wait: see <see cref="MP.WaitPolicy"/>.</summary>
    public enum WaitPolicy
    {
        /// <summary>Poll without pause (MOTOR_WAIT=spin; auto when every rank has
        /// a core).</summary>
        Spin = 0,
        /// <summary>Poll briefly, then yield the core and nap (MOTOR_WAIT=yield; auto when the
        /// host's ranks outnumber its cores).</summary>
        Yield = 1,
    }

    /// <summary>A snapshot of the core's counters; counters only grow (PinsLive and
    /// PooledBuffers are current values).</summary>
    public sealed class MPStats
    {
        /// <summary>Positions in the array the core fills (OPI_STATS in opi/opi_internal.h;
        /// ContractTest checks that the names and positions agree).</summary>
        internal static class Index
        {
            internal const int Operations = 0, PinsTaken = 1, PinsAvoided = 2,
                               PinsReleasedByWait = 3, PinsReleasedByGC = 4, PinsLive = 5,
                               Collections = 6, PooledBuffers = 7, PooledBuffersFreedByGC = 8,
                               PendingRequests = 9, HugePageArrays = 10, Count = 11;
        }

        internal MPStats(long[] v)
        {
            Operations = v[Index.Operations];
            PinsTaken = v[Index.PinsTaken];
            PinsAvoided = v[Index.PinsAvoided];
            PinsReleasedByWait = v[Index.PinsReleasedByWait];
            PinsReleasedByGC = v[Index.PinsReleasedByGC];
            PinsLive = v[Index.PinsLive];
            Collections = v[Index.Collections];
            PooledBuffers = v[Index.PooledBuffers];
            PooledBuffersFreedByGC = v[Index.PooledBuffersFreedByGC];
            PendingRequests = v[Index.PendingRequests];
            HugePageArrays = v[Index.HugePageArrays];
        }

        /// <summary>Zero-copy transfers and collectives started.</summary>
        public long Operations { get; }
        /// <summary>Objects pinned because the GC could have moved them during
        /// a transfer.</summary>
        public long PinsTaken { get; }
        /// <summary>Transfers that needed no pin: finished before any collection was announced,
        /// or on objects the GC never moves.</summary>
        public long PinsAvoided { get; }
        /// <summary>Pins released when a blocking call, Wait or Test completed
        /// the transfer.</summary>
        public long PinsReleasedByWait { get; }
        /// <summary>Pins released by the GC hook at a collection after the
        /// transfer finished.</summary>
        public long PinsReleasedByGC { get; }
        /// <summary>Pins held right now (PinsTaken minus both kinds of release).</summary>
        public long PinsLive { get; }
        /// <summary>Garbage collections seen by the core since it started.</summary>
        public long Collections { get; }
        /// <summary>Native serialization buffers pooled right now.</summary>
        public long PooledBuffers { get; }
        /// <summary>Pooled buffers freed by the GC hook because no call used them since the
        /// previous collection.</summary>
        public long PooledBuffersFreedByGC { get; }
        /// <summary>Non-blocking transfers not yet completed by Wait/Test (or, once their Request
        /// was collected, not yet finished).</summary>
        public long PendingRequests { get; }
        /// <summary>Large arrays (4 MiB and more) the core has asked the kernel to move into
        /// transparent huge pages, each once, at its first transfer that reached MPI (never for
        /// ProcNull). The copy runs on a thread of the core's own; no collection waits for
        /// it.</summary>
        public long HugePageArrays { get; }

        /// <summary>Every counter as name=value pairs on one line.</summary>
        public override string ToString() =>
            $"operations={Operations} pinsTaken={PinsTaken} pinsAvoided={PinsAvoided} " +
            $"releasedByWait={PinsReleasedByWait} releasedByGC={PinsReleasedByGC} " +
            $"pinsLive={PinsLive} collections={Collections} pooledBuffers={PooledBuffers} " +
            $"pooledFreedByGC={PooledBuffersFreedByGC} pendingRequests={PendingRequests} " +
            $"hugePageArrays={HugePageArrays}";
    }

    /// <summary>The outcome of a receive or probe. Immutable: calls that end with equal outcomes
    /// may return the same instance.</summary>
    public sealed class Status
    {
        Status(ref StatusData d)
        {
            Source = d.Source;
            Tag = d.Tag;
            Count = d.Count;
            Bytes = d.Bytes;
            Cancelled = d.Cancelled != 0;
        }

        // The last Status made, on any thread. A loop that receives the same kind of message
        // again and again (a halo exchange, a ping-pong) gets it back instead of a new object per
        // call. Sharing is safe because a Status never changes; a race between threads only costs
        // an allocation.
        static Status last;

        /// <summary>The Status for d: the last one made when it says the same, else a
        /// new one.</summary>
        internal static Status Of(ref StatusData d)
        {
            Status s = Volatile.Read(ref last);
            if (s != null && s.Source == d.Source && s.Tag == d.Tag && s.Count == d.Count &&
                s.Bytes == d.Bytes && s.Cancelled == (d.Cancelled != 0))
                return s;
            s = new Status(ref d);
            Volatile.Write(ref last, s);
            return s;
        }

        /// <summary>The rank the message came from (useful after a receive from MP.AnySource);
        /// -1 for a completed send.</summary>
        public int Source { get; }
        /// <summary>The message's tag (useful after a receive with MP.AnyTag).</summary>
        public int Tag { get; }
        /// <summary>Elements after an OPI receive (of the receive buffer's element type), a
        /// completed OPI send or a collective; but BYTES after Probe/Iprobe and for graphs
        /// (ORecv, OIrecv). The same message of 4 doubles gives Count 32 when probed and 4 when
        /// received: size an array from a probe with Bytes / sizeof(element), not Count.
        /// Clamped at int.MaxValue: Bytes is always exact.</summary>
        public int Count { get; }
        /// <summary>The size of the message in bytes.</summary>
        public long Bytes { get; }
        /// <summary>true when Request.Cancel took effect (nothing moved: Source is MP.AnySource,
        /// Tag MP.AnyTag, Count and Bytes 0); always false after a probe.</summary>
        public bool Cancelled { get; }

        /// <summary>The number of whole T the message holds: Bytes / sizeof(T), where sizeof(T)
        /// is the size of one T as an element of a T[] that OPI moves (C#'s sizeof: char 2,
        /// bool 1, a struct its managed size); <see cref="MP.Undefined"/> when Bytes is not a
        /// whole number of T (the sender's element type differs). Sizes a receive from a
        /// probe's status without arithmetic, and counts what arrived in units of the
        /// receiver's choice. Clamped at int.MaxValue, as Count is (Bytes is exact).</summary>
        /// <exception cref="ArgumentException">T holds references (not transportable as an
        /// array element).</exception>
        /// <example><code>
        /// Message m = comm.Mprobe(MP.AnySource, 7, out Status probed);
        /// var data = new double[probed.GetCount&lt;double&gt;()];
        /// m.Recv(data, 0, data.Length);
        /// </code></example>
        public int GetCount<T>()
            where T : struct
        {
            int size = ElementSize<T>.Bytes;
            if (Bytes % size != 0)
                return MP.Undefined;
            long n = Bytes / size;
            return n > int.MaxValue ? int.MaxValue : (int)n;
        }

        /// <summary>MPI's empty status: what WaitAll reports for an inactive request (Source
        /// MP.AnySource, Tag MP.AnyTag, Count and Bytes 0).</summary>
        internal static readonly Status Empty = MakeEmpty();

        static Status MakeEmpty()
        {
            var d = new StatusData { Source = MP.AnySource, Tag = MP.AnyTag };
            return new Status(ref d);
        }

        /// <summary>Source, tag, count and bytes on one line.</summary>
        // clang-format off
        public override string ToString() =>
            $"Status(source={Source}, tag={Tag}, count={Count}, bytes={Bytes})";
        // clang-format on
    }

    /// <summary>The bytes of one T as an element of a T[] that OPI moves, as the core's class
    /// plan measures it (Status.GetCount&lt;T&gt;): asked once per T.</summary>
    internal static class ElementSize<T>
        where T : struct
    {
        static int bytes;   // 0: not measured yet

        internal static int Bytes
        {
            get {
                int b = Volatile.Read(ref bytes);
                if (b == 0)
                    Volatile.Write(ref bytes, b = Measure());
                return b;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)] static int Measure()
        {
            int size;
            Errors.Check(MPDirect.ElementSize(new T[0], out size));
            return Math.Max(size, 1);   // an empty struct: C#'s sizeof is 1
        }
    }

    /// <summary>On a field: the reference travels with the graph (structured transport). On a
    /// class: instances may be received polymorphically in slots of a base type.</summary>
    [AttributeUsage(AttributeTargets.Field | AttributeTargets.Class)]
    public sealed class TransportableAttribute : Attribute
    { }
}

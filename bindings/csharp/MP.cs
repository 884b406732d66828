// MP — the static entry point of System.MP.
using System.Runtime.CompilerServices;

namespace System.MP
{
    public static class MP
    {
        public const int AnySource = -1;
        public const int AnyTag = -1;

        /// <summary>MPI_COMM_WORLD.</summary>
        public static Intracomm World => Core.World;
        /// <summary>MPI_COMM_SELF.</summary>
        public static Intracomm Self => Core.Self;

        static int tagUpperBound = -1;
        public static int TagUpperBound {
            get {
                if (tagUpperBound < 0) {
                    Core.Ensure();
                    tagUpperBound = ReadTagUpperBound();
                }
                return tagUpperBound;
            }
        }

        public static double Wtime()
        {
            Core.Ensure();
            return ReadWtime();
        }

        public static string ProcessorName {
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
        public static MPStats Stats {
            get {
                Core.Ensure();
                return ReadStats();
            }
        }

        /// <summary>Thread support MPI granted (MPI_THREAD_SINGLE=0 … MPI_THREAD_MULTIPLE=3).</summary>
        public static int ThreadLevel {
            get {
                Core.Ensure();
                return ReadThreadLevel();
            }
        }

        /// <summary>Whether the pinning policy treats small old-generation objects as movable
        /// (false when the runtime runs with evacuation-threshold=0, as under the motor host).</summary>
        public static bool OldGenerationMoves {
            get {
                Core.Ensure();
                return ReadOldGenerationMoves();
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)] static int ReadTagUpperBound() => MPDirect.TagUpperBound();
        [MethodImpl(MethodImplOptions.NoInlining)] static double ReadWtime() => MPDirect.Wtime();
        [MethodImpl(MethodImplOptions.NoInlining)] static int ReadProcessorName(byte[] b) => MPDirect.ProcessorName(b);
        [MethodImpl(MethodImplOptions.NoInlining)] static void AbortWorld(int code) => Errors.Check(MPDirect.Abort(MPDirect.WorldHandle(), code));
        [MethodImpl(MethodImplOptions.NoInlining)] static int ReadThreadLevel() => MPDirect.ThreadLevel();
        [MethodImpl(MethodImplOptions.NoInlining)] static bool ReadOldGenerationMoves() => MPDirect.OldGenerationMoves() != 0;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static MPStats ReadStats()
        {
            var v = new long[10];
            Errors.Check(MPDirect.Stats(v));
            return new MPStats(v);
        }
    }

    /// <summary>A snapshot of the core's counters; counters only grow (PinsLive and
    /// PooledBuffers are current values).</summary>
    public sealed class MPStats
    {
        internal MPStats(long[] v)
        {
            Operations = v[0]; PinsTaken = v[1]; PinsAvoided = v[2]; PinsReleasedByWait = v[3];
            PinsReleasedByGC = v[4]; PinsLive = v[5]; Collections = v[6]; PooledBuffers = v[7];
            PooledBuffersFreedByGC = v[8]; PendingRequests = v[9];
        }

        public long Operations { get; }
        public long PinsTaken { get; }
        public long PinsAvoided { get; }
        public long PinsReleasedByWait { get; }
        public long PinsReleasedByGC { get; }
        public long PinsLive { get; }
        public long Collections { get; }
        public long PooledBuffers { get; }
        public long PooledBuffersFreedByGC { get; }
        /// <summary>Non-blocking transfers not yet completed by Wait/Test (or, once their Request
        /// was collected, not yet finished).</summary>
        public long PendingRequests { get; }

        public override string ToString() =>
            $"operations={Operations} pinsTaken={PinsTaken} pinsAvoided={PinsAvoided} " +
            $"releasedByWait={PinsReleasedByWait} releasedByGC={PinsReleasedByGC} pinsLive={PinsLive} " +
            $"collections={Collections} pooledBuffers={PooledBuffers} pooledFreedByGC={PooledBuffersFreedByGC} " +
            $"pendingRequests={PendingRequests}";
    }

    /// <summary>The outcome of a receive or probe.</summary>
    public sealed class Status
    {
        internal Status(ref StatusData d)
        {
            Source = d.Source; Tag = d.Tag; Count = d.Count; Bytes = d.Bytes; Cancelled = d.Cancelled != 0;
        }

        public int Source { get; }
        public int Tag { get; }
        /// <summary>Elements received by an OPI receive; bytes for graphs and for Probe/Iprobe.</summary>
        public int Count { get; }
        public long Bytes { get; }
        public bool Cancelled { get; }

        public override string ToString() => $"Status(source={Source}, tag={Tag}, count={Count}, bytes={Bytes})";
    }

    /// <summary>On a field: the reference travels with the graph (structured transport). On a
    /// class: instances may be received polymorphically in slots of a base type.</summary>
    [AttributeUsage(AttributeTargets.Field | AttributeTargets.Class)]
    public sealed class TransportableAttribute : Attribute { }
}

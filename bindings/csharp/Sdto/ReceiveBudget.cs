// ReceiveBudget — an opt-in cap on the memory one received graph may make its receiver allocate
// (docs/reference.md, "Receive budget"): per process (MP.ReceiveBudget) and per communicator
// (Comm.ReceiveBudget). The core's reader estimates the graph's heap bytes from the checked
// records and refuses it before allocating anything (serializer/sd_reader.c, the budget section).
using System.Runtime.CompilerServices;

namespace System.MP
{
    /// <summary>A cap on the managed memory one received graph may allocate: an absolute number
    /// of bytes, a multiple of the message's size, or both (then the smaller applies). A graph
    /// over it raises <see cref="MPSerializationException"/> saying both figures, before any of
    /// its objects is allocated; the message is consumed and the communicator stays usable.
    /// Off by default: set <see cref="MP.ReceiveBudget"/> for the process (it covers
    /// <see cref="Serializer.Deserialize{T}"/> too) or <see cref="Comm.ReceiveBudget"/> for the
    /// O-calls of one communicator (ORecv, ORecvInto, OIrecv, Message.ORecv, OBcast, OScatter,
    /// OGather, OAllgather; each piece of a collective is one message). Immutable: share one
    /// instance freely.</summary>
    /// <example><code>
    /// // a server: no request may make it allocate more than 4 times its size, nor 256 MiB
    /// requests.ReceiveBudget = new ReceiveBudget(multiple: 4, bytes: 256L &lt;&lt; 20);
    /// try {
    ///     Request r = requests.ORecv&lt;Request&gt;(MP.AnySource, RequestTag);
    /// } catch (MPSerializationException e) {
    ///     Log(e.Message);   // "... would allocate 204.0 MiB (...), more than the receive
    ///                       // budget of 64.0 MiB, the smaller of 4 x 16.0 MiB = ..."
    /// }
    /// </code></example>
    public sealed class ReceiveBudget
    {
        /// <summary>A budget of at most multiple × the message's size (0: no such cap; else at
        /// least 1) and at most bytes (0: no such cap); at least one must be given.</summary>
        /// <exception cref="ArgumentOutOfRangeException">multiple is neither 0 nor a finite
        /// number of at least 1, or bytes is negative, or both are 0.</exception>
        public ReceiveBudget(double multiple = 0, long bytes = 0)
        {
            if (!(multiple == 0 || (multiple >= 1 && !double.IsInfinity(multiple))))
                throw new ArgumentOutOfRangeException(
                    nameof(multiple), multiple,
                    "multiple is a finite number of at least 1 (a graph takes at least about " +
                        "its message's size), or 0 for no multiple");
            if (bytes < 0)
                throw new ArgumentOutOfRangeException(nameof(bytes), bytes,
                                                      "bytes is at least 1, or 0 for no cap");
            if (multiple == 0 && bytes == 0)
                throw new ArgumentOutOfRangeException(
                    nameof(multiple), multiple,
                    "a ReceiveBudget needs a multiple or a number of bytes (null is no budget)");
            Multiple = multiple;
            Bytes = bytes;
        }

        /// <summary>The cap as a multiple of the message's size; 0 when there is none.</summary>
        public double Multiple { get; }

        /// <summary>The cap in bytes; 0 when there is none.</summary>
        public long Bytes { get; }

        /// <summary>The bytes a graph received in a message of messageBytes bytes may
        /// allocate: the smaller of the two caps.</summary>
        public long LimitFor(long messageBytes)
        {
            double bySize = Multiple * messageBytes;
            if (Multiple == 0 || (Bytes != 0 && Bytes < bySize))
                return Bytes;
            return bySize >= long.MaxValue ? long.MaxValue : (long)bySize;
        }

        /// <summary>"4 x the message, at most 268435456 bytes".</summary>
        public override string ToString() =>
            Multiple == 0 ? $"{Bytes} bytes"
            : Bytes == 0  ? $"{Multiple} x the message"
                          : $"{Multiple} x the message, at most {Bytes} bytes";

        /// <summary>The budget the core holds for this thread's reads (null: none).</summary>
        [ThreadStatic]
        static ReceiveBudget applied;

        /// <summary>Whether a budget was ever set anywhere in the process: until then a read
        /// reads no thread-static (every thread's is null).</summary>
        static volatile bool used;

        /// <summary>budget, noting that budgets are in use (MP's and Comm's setters).</summary>
        internal static ReceiveBudget Noted(ReceiveBudget budget)
        {
            if (budget != null)
                used = true;
            return budget;
        }

        /// <summary>Sets budget (null: none) in the core for this thread's reads until Dispose,
        /// which puts back what was there (a read nested in another one, in a type initializer or
        /// a key's GetHashCode, may apply another budget). Costs no call into the core when the
        /// budget is the one already applied (none, usually).</summary>
        internal struct Scope : IDisposable
        {
            readonly ReceiveBudget previous;
            readonly bool changed;

            internal Scope(ReceiveBudget budget)
            {
                if (budget == null && !used) {   // no budget anywhere, as by default
                    previous = null;
                    changed = false;
                    return;
                }
                previous = applied;
                changed = !ReferenceEquals(budget, previous);
                if (changed)
                    Apply(budget);
            }

            public void Dispose()
            {
                if (changed)
                    Apply(previous);
            }

            static void Apply(ReceiveBudget budget)
            {
                Core.Ensure();
                Set(budget == null ? 0 : budget.Bytes, budget == null ? 0 : budget.Multiple);
                applied = budget;
            }

            [MethodImpl(MethodImplOptions.NoInlining)]
            static void Set(long bytes,
                            double multiple) => Errors.Check(MPDirect.SdBudget(bytes, multiple));
        }
    }

    public partial class Comm
    {
        /// <summary>The receive budget of this communicator's O-calls; null (the default):
        /// the process's, <see cref="MP.ReceiveBudget"/>. A communicator made from this one
        /// (Dup, Split, a topology) starts with null.</summary>
        public ReceiveBudget ReceiveBudget
        {
            get => receiveBudget;
            set => receiveBudget = ReceiveBudget.Noted(value);
        }

        ReceiveBudget receiveBudget;

        /// <summary>The budget in force for this communicator's reads, for the time of one
        /// receive.</summary>
        internal ReceiveBudget.Scope BudgetScope() => new ReceiveBudget.Scope(ReceiveBudget ??
                                                                              MP.ReceiveBudget);
    }
}

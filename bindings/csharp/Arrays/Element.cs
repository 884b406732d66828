// System.MP.Arrays — the user's side of a parallel object array: the element base class, the
// entry-method attribute, placements, load records and the faults the scheduler reports.
// Lawlor & Kalé's "dynamic parallel object arrays" (shared/papers/001): an element is addressed
// by its index, wherever it lives; messages invoke its entry methods.
using System.Collections.Generic;

namespace System.MP.Arrays
{
    /// <summary>Marks an instance method of an element class as an entry method: one that a
    /// message can invoke. It returns void and takes no parameter or one (the message, any graph
    /// System.MP can carry). Entry methods are addressed by name, so two entry methods of one
    /// element class may not share a name.</summary>
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class EntryMethodAttribute : Attribute
    { }

    /// <summary>Where the elements of a new array start.</summary>
    public enum Placement
    {
        /// <summary>Contiguous blocks of the index list, in rank order, whose sizes differ by at
        /// most one: position i of n goes to rank i·p/n (integer division), so rank r takes
        /// positions ⌈r·n/p⌉ up to but not including ⌈(r+1)·n/p⌉ (5 positions on 2 ranks:
        /// rank 0 takes 0–2, rank 1 takes 3–4).</summary>
        Block,
        /// <summary>Position i of the index list goes to rank i mod p.</summary>
        RoundRobin,
    }

    /// <summary>The base class of the elements of an <see cref="ObjectArray{TIndex, TElement}"/>.
    /// Derive from it, mark the entry methods with <see cref="EntryMethodAttribute"/>, and mark
    /// with <see cref="TransportableAttribute"/> the reference fields that must travel when the
    /// element migrates (value-type fields always travel). The base class's own state is kept
    /// by the runtime and travels with the element.</summary>
    /// <typeparam name="TIndex">the index type: any type System.MP can carry, with value
    /// equality (a primitive, an enum, a string, a struct, or a class that overrides
    /// Equals and GetHashCode)</typeparam>
    public abstract class Element<TIndex>
    {
        internal ElementArray<TIndex> host;   // unmarked references: never transported
        internal Record<TIndex> record;

        Record<TIndex> Placed()
        {
            if (record == null)
                throw new InvalidOperationException(
                    "System.MP.Arrays: this element is not (or no longer) in an array");
            return record;
        }

        /// <summary>This element's index in its array.</summary>
        public TIndex Index => Placed().Index;

        /// <summary>The rank this element lives on now.</summary>
        public int Rank => Placed().Array.Rank;

        /// <summary>Seconds spent in this element's entry methods since the array was created or
        /// since the last Balance took the loads (before its moves): what the load balancer weighs
        /// (CPU seconds where the host runs more ranks than it has cores,
        /// <see cref="Scheduler.Oversubscribed"/>).</summary>
        public double Load => Placed().Load;

        /// <summary>How many times this element has contributed to its array's reductions: the
        /// number of the next reduction it contributes to.</summary>
        public long Contributions => Placed().Reductions;

        /// <summary>Sends message to the entry method named entry of the element at index to of
        /// this array. The message is copied during the call (later changes do not travel).
        /// Messages from this element to one element arrive in the order sent, exactly once,
        /// wherever either of them migrates. A message the serializer cannot carry raises
        /// ArgumentException and is neither sent nor numbered.</summary>
        protected void Send<TMessage>(TIndex to, string entry, TMessage message) =>
            Placed().Array.SendFrom(record, to, entry, message, true);

        /// <summary>Sends message to entry method entry of the element at to without copying it:
        /// a one-dimensional array of a primitive type or of a struct without references, or an
        /// object whose fields hold no references. It is handed over and must not be changed
        /// afterwards.</summary>
        protected void SendZeroCopy(TIndex to, string entry, object message) =>
            Placed().Array.SendZeroCopyFrom(record, to, entry, message);

        /// <summary>Invokes the parameterless entry method named entry of the element
        /// at to.</summary>
        protected void Send(TIndex to, string entry) => Placed().Array.SendFrom(record, to, entry,
                                                                                null, false);

        /// <summary>Sends message to the entry method named entry of every element of this array
        /// (this one included), each exactly once, even while elements migrate.</summary>
        protected void Broadcast<TMessage>(string entry, TMessage message) =>
            Placed().Array.BroadcastFrom(entry, message, true);

        /// <summary>Invokes the parameterless entry method named entry of every element of
        /// this array.</summary>
        protected void Broadcast(string entry) => Placed().Array.BroadcastFrom(entry, null, false);

        /// <summary>Contributes value to this element's next reduction (number
        /// <see cref="Contributions"/>). Every element of the array contributes once to each
        /// reduction number; the result reaches every rank once all have. The array's reductions
        /// share the numbering, so every element contributes to them in the same order (a number
        /// given to different reductions fails for all of them, on every rank). A value that
        /// cannot be serialized raises ArgumentException here, and counts for nothing.</summary>
        protected void Contribute<T>(Reduction<T> reduction, T value) =>
            Placed().Array.Contribute(record, reduction, value);

        /// <summary>Moves this element to rank once the current entry method returns:
        /// <see cref="OnMigrating"/> runs here, the element travels as a graph, and
        /// <see cref="OnMigrated"/> runs there. Messages follow it.</summary>
        protected void MigrateTo(int rank) => Placed().Array.RequestMigration(record, rank);

        /// <summary>Inserts element (a new instance of this array's element class) at index on
        /// rank toRank (this rank when omitted), as ObjectArray.Insert does. The new element
        /// starts where this one is: it gets the broadcasts after the last one this element got,
        /// and contributes from this element's next reduction on (or from the number its rank
        /// works on, if that is later).</summary>
        protected void Insert(TIndex index, Element<TIndex> element, int toRank = -1) =>
            Placed().Array.InsertFrom(record, index, element, toRank < 0 ? Rank : toRank);

        /// <summary>Deletes the element at index, after the messages this element sent
        /// it earlier.</summary>
        protected void Delete(TIndex index) => Placed().Array.DeleteFrom(record, index);

        /// <summary>Deletes this element once the current entry method returns. Later messages
        /// to its index are held until an element with that index is inserted again.</summary>
        protected void Destroy() => Placed().Destroying = true;

        /// <summary>Runs on the old rank just before the element leaves (release what
        /// cannot travel).</summary>
        protected internal virtual void OnMigrating() { }

        /// <summary>Runs on the new rank just after the element arrived (rebuild what did
        /// not travel).</summary>
        protected internal virtual void OnMigrated() { }
    }

    /// <summary>One element's load, as the load balancer sees it.</summary>
    public sealed class ElementLoad<TIndex>
    {
        /// <summary>The element's index.</summary>
        [Transportable]
        public TIndex Index;
        /// <summary>Seconds spent in its entry methods since the last balance took
        /// the loads.</summary>
        public double Load;
        /// <summary>The rank it lives on.</summary>
        public int Rank;
    }

    /// <summary>A failure the scheduler met while running: a message that could not be read
    /// (<see cref="MPSerializationException"/>), an entry method or a migration hook that threw
    /// (<see cref="ElementException"/>), or an insertion of an index that exists.</summary>
    public sealed class ArrayFaultEventArgs : EventArgs
    {
        /// <summary>What went wrong.</summary>
        public Exception Exception { get; }
        internal ArrayFaultEventArgs(Exception e) { Exception = e; }
    }

    /// <summary>An entry method or a migration hook of an element threw.</summary>
    public sealed class ElementException : Exception
    {
        /// <summary>The element's index.</summary>
        public object ElementIndex { get; }
        /// <summary>The entry method (or hook) that threw.</summary>
        public string Entry { get; }
        internal ElementException(object index, string entry, Exception inner)
            : base($"System.MP.Arrays: element {index}: {entry} threw {inner.GetType().Name}: " +
                       $"{inner.Message}",
                   inner)
        {
            ElementIndex = index;
            Entry = entry;
        }
    }

    /// <summary>A message number in a table, read and advanced with one lookup.</summary>
    internal sealed class Seq
    {
        internal long Value;
        internal Seq(long value) { Value = value; }
    }

    /// <summary>Message numbers by sender or by target, with the last one used at hand: a
    /// ping-pong or a stream asks for the same key again and again, and a lookup costs ~40 ns.
    /// An entry, once made, is never replaced (Set changes it in place), so the one at hand
    /// stays right.</summary>
    internal sealed class SeqTable<TKey>
    {
        readonly Dictionary<TKey, Seq> table;
        readonly IEqualityComparer<TKey> eq;
        TKey lastKey;
        Seq last;

        internal SeqTable(IEqualityComparer<TKey> eq)
        {
            this.eq = eq;
            table = new Dictionary<TKey, Seq>(eq);
        }

        internal int Count => table.Count;
        // for foreach
        public Dictionary<TKey, Seq>.Enumerator GetEnumerator() => table.GetEnumerator();

        /// <summary>The entry for key, made with value initial when there is none.</summary>
        internal Seq Get(TKey key, long initial)
        {
            if (last != null && eq.Equals(lastKey, key))
                return last;
            Seq found;
            if (!table.TryGetValue(key, out found))
                table[key] = found = new Seq(initial);
            lastKey = key;
            last = found;
            return found;
        }

        internal void Set(TKey key, long value) => Get(key, value).Value = value;
    }

    /// <summary>The runtime's record of one element: what travels with it besides
    /// its fields.</summary>
    internal sealed class Record<TIndex>
    {
        internal ElementArray<TIndex> Array;
        internal Element<TIndex> Element;
        internal TIndex Index;
        internal long Uid;             // unique over the job's life: the sender id of its messages
        internal long Epoch;           // location version: grows at each move, never reused
        internal long LastBroadcast;   // broadcasts delivered: 1..LastBroadcast
        internal long Reductions;      // the next reduction number it contributes to
        internal double Load;
        internal bool Ready;   // false while its insertion is being registered
        internal int MoveTo = -1;
        internal bool Destroying;
        // by sender: the number expected next
        internal readonly SeqTable<long> NextSeq =
            new SeqTable<long>(EqualityComparer<long>.Default);
        internal readonly Dictionary<long, SortedDictionary<long, Header<TIndex>>> OutOfOrder =
            new Dictionary<long, SortedDictionary<long, Header<TIndex>>>();
        // by target: the number sent last
        internal readonly SeqTable<TIndex> SendSeq =
            new SeqTable<TIndex>(IndexRules<TIndex>.Equality);
        internal List<Header<TIndex>> Parked;   // messages that came before Ready
    }
}

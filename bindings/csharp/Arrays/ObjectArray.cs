// System.MP.Arrays — a parallel array of migratable elements addressed by index (Lawlor & Kalé,
// shared/papers/001): location management (a home rank per index, forwarding from the last known
// rank, caches corrected after a forward, location epochs so stale news never wins), delivery
// exactly once and in order per sender–element pair (sequence numbers that travel with the
// element), broadcasts numbered at rank 0 and caught up by elements that arrive late, and
// reductions counted against the number of elements alive for each reduction number.
using System.Collections.Generic;

namespace System.MP.Arrays
{
    /// <summary>The array an element belongs to, whatever the element class:
    /// <see cref="ObjectArray{TIndex, TElement}"/> is the only kind.</summary>
    public abstract class ElementArray<TIndex> : IScheduledArray
    {
        internal ElementArray() { }
        void IScheduledArray.Dispatch(int source, int kind, int tag,
                                      int bytes) => Dispatch(source, kind, tag, bytes);
        void IScheduledArray.Quiesced() => Quiesced();
        internal abstract void Dispatch(int source, int kind, int tag, int bytes);
        internal abstract void Quiesced();
        internal abstract int Rank { get; }
        // messages come boxed: a generic virtual method costs Mono a lookup per call
        internal abstract void SendFrom(Record<TIndex> from, TIndex to, string entry,
                                        object message, bool hasMessage);
        internal abstract void BroadcastFrom(string entry, object message, bool hasMessage);
        internal abstract void Contribute<T>(Record<TIndex> from, Reduction<T> reduction, T value);
        internal abstract void RequestMigration(Record<TIndex> from, int rank);
        internal abstract void InsertFrom(Record<TIndex> from, TIndex index,
                                          Element<TIndex> element, int rank);
        internal abstract void DeleteFrom(Record<TIndex> from, TIndex index);
        internal abstract void SendZeroCopyFrom(Record<TIndex> from, TIndex to, string entry,
                                                object message);
    }

    /// <summary>A parallel array of elements of type TElement addressed by TIndex, spread over the
    /// ranks of a <see cref="Scheduler"/>: elements receive messages (entry-method calls) from any
    /// rank or element, migrate between ranks, are inserted and deleted at any time, take part in
    /// broadcasts and reductions, and are moved by a load balancer between phases.</summary>
    public sealed class ObjectArray<TIndex, TElement> : ElementArray<TIndex>
        where TElement : Element<TIndex>
    {
        struct Location
        {
            internal int Rank;   // −1: deleted
            internal long Epoch;
            internal Location(int rank, long epoch)
            {
                Rank = rank;
                Epoch = epoch;
            }
        }

        readonly Scheduler s;
        readonly int id, rank, size, parent;
        readonly List<int> children;
        readonly Entry<TIndex, TElement>[] entries = EntryTable<TIndex, TElement>.All;
        readonly EqualityComparer<TIndex> eq = IndexRules<TIndex>.Equality;
        readonly Dictionary<TIndex, Record<TIndex>> local;
        // insertions here that the index's home has not registered yet: kept apart from local, so
        // that the real element, when the index already exists elsewhere and migrates here before
        // the home's refusal comes back, is not taken for a duplicate (and lost)
        readonly Dictionary<TIndex, Record<TIndex>> pending;
        readonly Dictionary<TIndex, Location> cache, homeTable;
        readonly Dictionary<TIndex, LocationNote<TIndex>> tombstones;
        readonly Dictionary<TIndex, List<Header<TIndex>>> held;
        readonly SeqTable<TIndex> rankSendSeq;
        readonly long[] wireOut = new long[Wire.Longs];   // a header (Wire), copied at each post
        long inserted, heldCount, forwarded;

        // broadcasts: numbered at rank 0, logged until quiescence for elements that arrive late
        long broadcasts, numbered, logBase;
        readonly List<BroadcastNote> log = new List<BroadcastNote>();

        // reductions (see Contribute): this rank's frontier, the highest number started, partial
        // slots, local elements by the number they owe next, deltas of the element count
        readonly List<Reduction> reductions = new List<Reduction>();
        sealed class Slot
        {
            internal long Count;
            internal object Value;
            internal int Reduction = -1;
            internal int ChildrenIn;
            internal string Failure;
            // other reductions given to this number: the elements disagreed
            internal List<int> Others;
            // what user code threw here, for the failure's inner exception
            internal Exception Cause;
        }
        // per failed number, what user code threw on this rank: the failed result, when it comes,
        // carries it (each rank reports a failed number once, from its result)
        readonly Dictionary<long, Exception> causes = new Dictionary<long, Exception>();
        long frontier, known = -1, rootNext, initialCount;
        readonly Dictionary<long, Slot> slots = new Dictionary<long, Slot>(),
                                        rootSlots = new Dictionary<long, Slot>();
        readonly SortedDictionary<long, int> owing = new SortedDictionary<long, int>();
        readonly SortedDictionary<long, long> rootDeltas = new SortedDictionary<long, long>();
        readonly List<long> deltaAt = new List<long>(), delta = new List<long>();
        // per child: partials received (in order), highest number announced
        readonly long[] childReported, childStarted;

        ObjectArray(Scheduler scheduler, int count, int id)
        {
            this.id = id;
            s = scheduler;
            rank = s.Rank;
            size = s.Size;
            parent = rank == 0 ? -1 : Tree.Parent(rank);
            children = Tree.Children(rank, size);
            childReported = new long[children.Count];
            childStarted = new long[children.Count];
            for (int i = 0; i < children.Count; i++)
                childStarted[i] = -1;
            local = new Dictionary<TIndex, Record<TIndex>>(eq);
            pending = new Dictionary<TIndex, Record<TIndex>>(eq);
            cache = new Dictionary<TIndex, Location>(eq);
            homeTable = new Dictionary<TIndex, Location>(eq);
            tombstones = new Dictionary<TIndex, LocationNote<TIndex>>(eq);
            held = new Dictionary<TIndex, List<Header<TIndex>>>(eq);
            rankSendSeq = new SeqTable<TIndex>(eq);
            initialCount = count;
        }

        // ---------------------------------------------------------------- creation

        /// <summary>Creates the array collectively: every rank of the scheduler passes the same
        /// indices (no duplicates); placement decides where each starts; make creates the
        /// elements this rank holds. A disagreement between ranks, a duplicate index or a make
        /// that fails raises ArgumentException on every rank, and nothing is created.</summary>
        public static ObjectArray<TIndex, TElement> Create(
            Scheduler scheduler, IEnumerable<TIndex> indices, Func<TIndex, TElement> make,
            Placement placement = Placement.Block)
        {
            if (placement != Placement.Block && placement != Placement.RoundRobin)
                throw new ArgumentOutOfRangeException(nameof(placement), placement,
                                                      "System.MP.Arrays: not a placement");
            return Create(scheduler, indices, make, placement, null);
        }

        /// <summary>Creates the array collectively, element at index i starting on rank
        /// rankOf(i) (which must give the same answer on every rank).</summary>
        public static ObjectArray<TIndex, TElement> Create(
            Scheduler scheduler, IEnumerable<TIndex> indices, Func<TIndex, TElement> make,
            Func<TIndex, int> rankOf)
        {
            if (rankOf == null)
                throw new ArgumentNullException(nameof(rankOf));
            return Create(scheduler, indices, make, Placement.Block, rankOf);
        }

        static ObjectArray<TIndex, TElement> Create(Scheduler s, IEnumerable<TIndex> indices,
                                                    Func<TIndex, TElement> make,
                                                    Placement placement, Func<TIndex, int> rankOf)
        {
            if (s == null)
                throw new ArgumentNullException("scheduler");
            if (indices == null)
                throw new ArgumentNullException(nameof(indices));
            if (make == null)
                throw new ArgumentNullException(nameof(make));
            s.CheckIdle(nameof(Create));
            IndexRules<TIndex>.CheckType();
            if (EntryTable<TIndex, TElement>.Refusal != null)
                throw EntryTable<TIndex, TElement>.Refusal;

            // everything that can fail happens before the ranks agree, so all throw or none does
            var list = new List<TIndex>(indices);
            // registered with the scheduler only once every rank agrees (nothing else can take
            // the id meanwhile: creation is collective and outside Run)
            var a = new ObjectArray<TIndex, TElement>(s, list.Count, s.NextArrayId());
            var made = new List<Record<TIndex>>();
            string error = null;
            long hash = list.Count;
            var seen = new HashSet<TIndex>(IndexRules<TIndex>.Equality);
            try {
                for (int i = 0; i < list.Count; i++) {
                    TIndex index = list[i];
                    if (index == null)
                        throw new ArgumentException(
                            $"System.MP.Arrays: index at position {i} is null");
                    if (!seen.Add(index))
                        throw new ArgumentException(
                            $"System.MP.Arrays: index {index} appears twice in the list");
                    int r = rankOf != null                 ? rankOf(index)
                            : placement == Placement.Block ? (int)((long)i * s.Size / list.Count)
                                                           : i % s.Size;
                    if (r < 0 || r >= s.Size)
                        throw new ArgumentException(
                            $"System.MP.Arrays: index {index} is placed on rank {r}, outside " +
                            $"0..{s.Size - 1}");
                    hash = hash * 1000003 + IndexRules<TIndex>.StableHash(index) * 31 + r;
                    a.cache[index] = new Location(r, 1);
                    if (a.HomeOf(index) == s.Rank)
                        a.homeTable[index] = new Location(r, 1);
                    a.moves++;
                    if (r != s.Rank)
                        continue;
                    TElement e = make(index);
                    if (e == null)
                        throw new ArgumentException(
                            $"System.MP.Arrays: make returned null for index {index}");
                    if (e.record != null)
                        throw new ArgumentException(
                            $"System.MP.Arrays: make returned, for index {index}, an element " +
                            "already in an array");
                    made.Add(new Record<TIndex> { Element = e, Index = index, Uid = i + 1,
                                                  Epoch = 1, Ready = true });
                }
            } catch (Exception e) {
                error = e.Message;
            }
            var mine = new long[] { error == null ? 0 : 1, hash };
            var low = new long[2];
            var high = new long[2];
            s.Comm.Allreduce(mine, low, Op.Min);
            s.Comm.Allreduce(mine, high, Op.Max);
            if (error != null)
                throw new ArgumentException(error);
            if (high[0] != 0)
                throw new ArgumentException(
                    "System.MP.Arrays: creating the array failed on another rank (its exception " +
                    "says why)");
            if (low[1] != high[1])
                throw new ArgumentException(
                    "System.MP.Arrays: the ranks gave different index lists or placements (every " +
                    "rank passes the same)");

            foreach (Record<TIndex> r in made)
                a.Attach(r);
            s.Add(a);
            return a;
        }

        void Attach(Record<TIndex> r)
        {
            r.Array = this;
            r.Element.host = this;
            r.Element.record = r;
            (r.Ready ? local : pending)[r.Index] = r;
            moves++;
            Owe(r.Reductions, +1);
        }

        void Detach(Record<TIndex> r)
        {
            (r.Ready ? local : pending).Remove(r.Index);
            moves++;
            Owe(r.Reductions, -1);
            r.Element.record = null;
            r.Element.host = null;
        }

        // ---------------------------------------------------------------- public surface

        /// <summary>The scheduler that runs this array.</summary>
        public Scheduler Scheduler => s;
        internal override int Rank => rank;

        /// <summary>Elements living on this rank now (insertions here included while their home
        /// registers them).</summary>
        public int LocalCount => local.Count + pending.Count;

        /// <summary>The elements living on this rank now (a snapshot).</summary>
        public IList<TElement> LocalElements
        {
            get {
                var list = new List<TElement>(local.Count + pending.Count);
                foreach (Record<TIndex> r in local.Values)
                    list.Add((TElement)r.Element);
                foreach (Record<TIndex> r in pending.Values)
                    list.Add((TElement)r.Element);
                return list;
            }
        }

        /// <summary>The element at index, if it lives on this rank.</summary>
        public bool TryGetLocal(TIndex index, out TElement element)
        {
            Record<TIndex> r;
            element = index != null &&
                              (local.TryGetValue(index, out r) || pending.TryGetValue(index, out r))
                          ? (TElement)r.Element
                          : null;
            return element != null;
        }

        /// <summary>The home rank of index: the rank that always knows where it lives.</summary>
        public int HomeOf(TIndex index) => (int)(IndexRules<TIndex>.StableHash(index) % (uint)size);

        /// <summary>Messages this rank holds for indices with no element (not inserted yet, or
        /// deleted): delivered when an element with that index is inserted.</summary>
        public long HeldMessages => heldCount;

        /// <summary>Messages this rank forwarded because their element was not here.</summary>
        public long ForwardedMessages => forwarded;

        /// <summary>Sends message to entry method entry of the element at index (from this rank's
        /// own code, not from an element). The message is copied during the call. Messages from
        /// one rank's code to one element arrive in the order sent, exactly once. A message the
        /// serializer cannot carry raises ArgumentException and is neither sent
        /// nor numbered.</summary>
        public void Send<TMessage>(TIndex index, string entry,
                                   TMessage message) => SendFrom(null, index, entry, message, true);

        /// <summary>Invokes the parameterless entry method entry of the element at index.</summary>
        public void Send(TIndex index, string entry) => SendFrom(null, index, entry, null, false);

        /// <summary>Sends message to entry method entry of the element at index without copying
        /// it. The message is a one-dimensional array of a primitive type or of a struct without
        /// references, or an instance of a class whose fields hold no references (exactly the
        /// entry's parameter type). It is handed over: the sender must not change it afterwards
        /// (a local receiver gets this very object; a remote one gets the bytes MPI moves straight
        /// from it, perhaps after the sender's next change).</summary>
        public void SendZeroCopy(TIndex index, string entry,
                                 object message) => SendZeroCopyFrom(null, index, entry, message);

        internal override void SendZeroCopyFrom(Record<TIndex> from, TIndex to, string entry,
                                                object message)
        {
            s.CheckThread();
            if (to == null)
                throw new ArgumentNullException(nameof(to));
            if (message == null)
                throw new ArgumentNullException(nameof(message));
            Type type = message.GetType();
            if (!ZeroCopyRules.Accepts(type))
                throw new ArgumentException(
                    $"System.MP.Arrays: a {type} cannot travel without a copy: only a " +
                        "one-dimensional array of a primitive type or of a struct without " +
                        "references, or an object whose fields hold no references, can",
                    nameof(message));
            Entry<TIndex, TElement> e = EntryTable<TIndex, TElement>.Find(entry, type, true);
            if (!type.IsArray && type != e.MessageType)
                throw new ArgumentException(
                    $"System.MP.Arrays: entry method {entry} takes a {e.MessageType}; an object " +
                        $"sent without a copy must be exactly that type, not a {type}",
                    nameof(message));
            SendMessage(from, from == null ? rankSendSeq : from.SendSeq, to, e, message, true);
        }

        /// <summary>Sends message to entry method entry of every element, each
        /// exactly once.</summary>
        public void Broadcast<TMessage>(string entry,
                                        TMessage message) => BroadcastFrom(entry, message, true);

        /// <summary>Invokes the parameterless entry method entry of every element, each
        /// exactly once.</summary>
        public void Broadcast(string entry) => BroadcastFrom(entry, null, false);

        /// <summary>Inserts element at index on this rank. Messages already sent to index are
        /// delivered to it. If index exists elsewhere, the element is dropped and the failure
        /// reported by the scheduler (<see cref="Scheduler.Faulted"/>, or thrown by Run).</summary>
        public void Insert(TIndex index, TElement element) => Insert(index, element, rank);

        /// <summary>Inserts element at index on rank toRank (it travels there as
        /// a graph).</summary>
        public void Insert(TIndex index, TElement element,
                           int toRank) => Insert(null, index, element, toRank);

        /// <summary>An insertion by from (null: by this rank's code). The new element starts where
        /// its inserter is, wherever it lands: it gets the broadcasts after the last one the
        /// inserter got, and contributes from the inserter's next reduction on (or from the
        /// number its new rank works on, if that is later) — whatever order the insertion and
        /// those broadcasts reach its rank in.</summary>
        void Insert(Record<TIndex> from, TIndex index, TElement element, int toRank)
        {
            s.CheckThread();
            if (index == null)
                throw new ArgumentNullException(nameof(index));
            if (element == null)
                throw new ArgumentNullException(nameof(element));
            CheckRank(toRank, nameof(toRank));
            if (element.record != null)
                throw new ArgumentException("System.MP.Arrays: the element is already in an array",
                                            nameof(element));
            long lastBroadcast = from?.LastBroadcast ?? broadcasts,
                 reductions = Math.Max(frontier, from?.Reductions ?? frontier);
            if (toRank != rank) {
                s.Post(toRank, Tags.Of(id, Tags.Migrate),
                       new Passport<TIndex, TElement> { Element = element, Index = index,
                                                        LastBroadcast = lastBroadcast,
                                                        Reductions = reductions });
                return;
            }
            if (local.ContainsKey(index) || pending.ContainsKey(index))
                throw new ArgumentException(
                    $"System.MP.Arrays: index {index} already lives on this rank", nameof(index));
            InsertHere(index, element, lastBroadcast, reductions);
        }

        /// <summary>Deletes the element at index, wherever it lives, after the messages this
        /// rank sent it earlier.</summary>
        public void Delete(TIndex index) => DeleteFrom(null, index);

        internal override void DeleteFrom(Record<TIndex> from, TIndex index) =>
            SendMessage(from, from == null ? rankSendSeq : from.SendSeq, index, DeleteEntry, null);

        internal override void InsertFrom(Record<TIndex> from, TIndex index,
                                          Element<TIndex> element, int toRank)
        {
            var typed = element as TElement;
            if (element != null && typed == null)
                throw new ArgumentException(
                    $"System.MP.Arrays: this array holds {typeof(TElement)}, not " +
                        $"{element.GetType()}",
                    nameof(element));
            Insert(from, index, typed, toRank);
        }

        /// <summary>Moves the element at index, which lives on this rank, to rank toRank.</summary>
        public void Migrate(TIndex index, int toRank)
        {
            s.CheckThread();
            CheckRank(toRank, nameof(toRank));
            Record<TIndex> r;
            if (index == null || !local.TryGetValue(index, out r) || !r.Ready)
                throw new ArgumentException(
                    $"System.MP.Arrays: element {index} does not live on rank {rank}; an element " +
                        "migrates itself with MigrateTo",
                    nameof(index));
            if (toRank != rank)
                MigrateNow(r, toRank);
        }

        /// <summary>Defines, collectively (same order on every rank), a reduction combining values
        /// with a built-in operator (Sum, Prod, Min, Max over int, long, float, double; BAnd, BOr,
        /// BXor over int, long; LAnd, LOr over bool). With resultEntry, each result is also
        /// broadcast to that entry method of every element.</summary>
        public Reduction<T> DefineReduction<T>(Op op, string resultEntry = null) =>
            DefineReduction(BuiltinCombine<T>.Of(op), resultEntry);

        /// <summary>Defines, collectively, a reduction combining values with combine (associative
        /// and commutative: the order of combination is not fixed).</summary>
        public Reduction<T> DefineReduction<T>(Func<T, T, T> combine, string resultEntry = null)
        {
            if (combine == null)
                throw new ArgumentNullException(nameof(combine));
            s.CheckIdle(nameof(DefineReduction));
            if (resultEntry != null)
                EntryTable<TIndex, TElement>.Find(resultEntry, typeof(T), true);
            // clang-format off
            var r = new Reduction<T>(combine) { Array = this, Id = reductions.Count,
                                                ResultEntry = resultEntry };
            // clang-format on
            reductions.Add(r);
            return r;
        }

        /// <summary>Moves elements so that the measured loads are balanced: the greedy balancer
        /// (heaviest element first, each to the least-loaded rank). Collective, outside Run. It
        /// takes every element's load and resets it to 0, then moves the elements and runs the
        /// scheduler until every move is done: entry methods that run meanwhile (messages sent
        /// before Balance) count towards the next balance.</summary>
        public void Balance() => Balance(Greedy);

        /// <summary>Moves elements where balancer says: it runs on rank 0 with every element's
        /// load and the rank count, and returns the new rank of each, in the order given. The
        /// loads are reset as <see cref="Balance()"/> does. A plan of the wrong length or with
        /// ranks out of range raises ArgumentException on every rank; then nothing moves and the
        /// loads are kept.</summary>
        public void Balance(Func<IList<ElementLoad<TIndex>>, int, int[]> balancer)
        {
            if (balancer == null)
                throw new ArgumentNullException(nameof(balancer));
            s.CheckIdle(nameof(Balance));
            var mine = new List<Record<TIndex>>(local.Values);
            var loads = new ElementLoad<TIndex>[mine.Count];
            for (int i = 0; i < mine.Count; i++)
                loads[i] = new ElementLoad<TIndex> { Index = mine[i].Index, Load = mine[i].Load,
                                                     Rank = rank };
            ElementLoad<TIndex>[] all = s.Comm.OGather(loads, 0);
            var plan = new BalancePlan();
            if (rank == 0) {
                try {
                    plan.Ranks = balancer(all, size);
                    if (plan.Ranks == null || plan.Ranks.Length != all.Length)
                        throw new ArgumentException(
                            "the balancer returned " +
                            $"{(plan.Ranks == null ? "null" : plan.Ranks.Length + " ranks")} " +
                            $"for {all.Length} elements");
                    foreach (int r in plan.Ranks)
                        if (r < 0 || r >= size)
                            throw new ArgumentException(
                                $"the balancer placed an element on rank {r}, outside " +
                                $"0..{size - 1}");
                } catch (Exception e) {
                    plan = new BalancePlan { Error = "System.MP.Arrays: Balance: " + e.Message };
                }
            }
            plan = s.Comm.OBcast(plan, 0);
            if (plan.Error != null)
                throw new ArgumentException(plan.Error);
            int offset = s.Comm.Exscan(mine.Count, Op.Sum);
            if (rank == 0)
                offset = 0;
            // the loads are reset as they are taken, before the moves: what runs from here on is
            // the next balance's to weigh
            for (int i = 0; i < mine.Count; i++) {
                mine[i].Load = 0;
                if (plan.Ranks[offset + i] != rank)
                    MigrateNow(mine[i], plan.Ranks[offset + i]);
            }
            s.Run();
        }

        sealed class BalancePlan
        {
            [Transportable]
            public int[] Ranks;
            [Transportable]
            public string Error;
        }

        /// <summary>The greedy balancer: heaviest first, each element stays on its rank while that
        /// rank stays within 5% of the average load, and otherwise goes to the least-loaded rank
        /// (so a balanced array is left as it is).</summary>
        public static int[] Greedy(IList<ElementLoad<TIndex>> loads, int ranks)
        {
            if (loads == null)
                throw new ArgumentNullException(nameof(loads));
            if (ranks < 1)
                throw new ArgumentOutOfRangeException(nameof(ranks), ranks,
                                                      "System.MP.Arrays: at least one rank");
            var order = new int[loads.Count];
            double sum = 0;
            for (int i = 0; i < order.Length; i++) {
                order[i] = i;
                sum += loads[i].Load;
            }
            Array.Sort(order, (a, b) => loads[b].Load.CompareTo(loads[a].Load) != 0
                                            ? loads[b].Load.CompareTo(loads[a].Load)
                                            : a.CompareTo(b));
            double limit = sum / ranks * 1.05;
            var total = new double[ranks];
            var result = new int[loads.Count];
            foreach (int i in order) {
                int here = loads[i].Rank, best = 0;
                if (here >= 0 && here < ranks && total[here] + loads[i].Load <= limit) {
                    best = here;
                } else {
                    for (int r = 1; r < ranks; r++)
                        if (total[r] < total[best])
                            best = r;
                }
                result[i] = best;
                total[best] += loads[i].Load;
            }
            return result;
        }

        void CheckRank(int r, string name)
        {
            if (r < 0 || r >= size)
                throw new ArgumentOutOfRangeException(
                    name, r, $"System.MP.Arrays: rank {r} is outside 0..{size - 1}");
        }

        // ---------------------------------------------------------------- sending and routing

        static readonly Entry<TIndex, TElement> DeleteEntry = new DeleteMarker();

        /// <summary>A pseudo entry: delete the element (numbered after the real ones).</summary>
        sealed class DeleteMarker : Entry<TIndex, TElement>
        {
            internal DeleteMarker()
            {
                Number = EntryTable<TIndex, TElement>.All.Length;
                Name = "(delete)";
            }
            internal override Header<TIndex> Make(object message) =>
                new Envelope<TIndex, NoMessage> { Entry = Number };
            internal override object MessageOf(Header<TIndex> m) => null;
            internal override object Graph(Header<TIndex> m) =>
                IndexCodec<TIndex>.Fits ? null : new Keyed<TIndex, NoMessage> { Index = m.Index };
            internal override Header<TIndex> Receive(long[] header)
            {
                var m = new Envelope<TIndex, NoMessage> { Entry = Number };
                if (!IndexCodec<TIndex>.Fits) {
                    var k = (Keyed<TIndex, NoMessage>)
                                Channel.ReadIncomingAfter(header, typeof(Keyed<TIndex, NoMessage>));
                    if (k == null)
                        throw new MPSerializationException(
                            "System.MP.Arrays: a delete message without an index");
                    m.Index = k.Index;
                } else if (Channel.ReadIncomingAfter(header, typeof(NoMessage)) != null) {
                    throw new MPSerializationException(
                        "System.MP.Arrays: a delete message with a message");
                }
                Wire.Read(header, m);
                return m;
            }
            internal override Header<TIndex> Copy(Header<TIndex> m) => m;
            internal override Header<TIndex> Decode(byte[] bytes)
            {
                var m = Serializer.Deserialize<Envelope<TIndex, NoMessage>>(bytes, 0, bytes.Length);
                if (m == null)
                    throw new MPSerializationException("System.MP.Arrays: a null delete message");
                m.Entry = Number;
                return m;
            }
            internal override void Invoke(TElement element,
                                          Header<TIndex> m) => element.record.Destroying = true;
            internal override void InvokeBroadcast(TElement element, byte[] message) { }
        }

        Entry<TIndex, TElement> EntryNumbered(int n) => n == entries.Length ? DeleteEntry
                                                                            : entries[n];

        internal override void SendFrom(Record<TIndex> from, TIndex to, string entry,
                                        object message, bool hasMessage)
        {
            s.CheckThread();
            if (to == null)
                throw new ArgumentNullException(nameof(to));
            Entry<TIndex, TElement> e =
                EntryTable<TIndex, TElement>.FindFor(entry, message, hasMessage);
            SendMessage(from, from == null ? rankSendSeq : from.SendSeq, to, e, message);
        }

        void SendMessage(Record<TIndex> from, SeqTable<TIndex> seqs, TIndex to,
                         Entry<TIndex, TElement> e, object message, bool zeroCopy = false)
        {
            s.CheckThread();
            if (to == null)
                throw new ArgumentNullException(nameof(to));
            // the number is the sender's next, but it is taken only once the message is copied
            // or posted: a message refused on the way (the serializer cannot carry it) must leave
            // no gap, or the element would wait for that number for ever and hold every later one
            Seq last = seqs.Get(to, 0);
            Header<TIndex> h = e.Make(message);
            h.Index = to;
            h.Sender = from == null ? -(rank + 1) : from.Uid;
            h.Seq = last.Value + 1;
            h.Origin = rank;
            h.ZeroCopy = zeroCopy;
            Whereabouts w = Locate(sending, to);
            if (w.Local != null || w.Pending != null) {
                Header<TIndex> copy = e.Copy(h);
                last.Value = h.Seq;
                s.Later(() => Arrive(copy));
                return;
            }
            Route(h, true, w.Hop);
            last.Value = h.Seq;
        }

        /// <summary>The next rank towards index: the newest location this rank knows (its cache,
        /// or its home table when it is the home), else the home; this rank when it is the home
        /// and the index has no element (the message is held).</summary>
        int NextHop(TIndex index)
        {
            Location c, h;
            bool hasC = cache.TryGetValue(index, out c);
            // the home table holds only indices homed here: no hash needed to consult it
            if (homeTable.TryGetValue(index, out h) && (!hasC || h.Epoch >= c.Epoch)) {
                c = h;
                hasC = true;
            }
            if (hasC && c.Rank >= 0 && c.Rank != rank)
                return c.Rank;
            return HomeOf(index);
        }

        // The index last looked up for sending and for receiving, with what the tables said: a
        // ping-pong or a stream asks about the same index again and again, and each lookup costs
        // ~40 ns. An answer holds while `moves` is unchanged: every change of local, cache or
        // homeTable bumps it.
        sealed class Whereabouts
        {
            internal TIndex Index;
            internal Record<TIndex> Local;     // the element, when it is on this rank
            internal Record<TIndex> Pending;   // else its insertion here, not registered yet
            internal int Hop;                  // else NextHop (this rank for a pending insertion)
            internal long Moves = -1;
        }
        readonly Whereabouts sending = new Whereabouts(), arriving = new Whereabouts();
        long moves;

        Whereabouts Locate(Whereabouts w, TIndex index)
        {
            if (w.Moves == moves && eq.Equals(w.Index, index))
                return w;
            w.Index = index;
            w.Moves = moves;
            w.Pending = null;
            if (local.TryGetValue(index, out w.Local) ||
                (pending.Count > 0 && pending.TryGetValue(index, out w.Pending)))
                w.Hop = rank;
            else
                w.Hop = NextHop(index);
            return w;
        }

        void Route(Header<TIndex> h, bool fromUser, int dest)
        {
            if (dest == rank) {
                Hold(fromUser ? EntryNumbered(h.Entry).Copy(h) : h);
                return;
            }
            if (!h.ZeroCopy) {
                Wire.Write(wireOut, h);
                s.Post(dest, Tags.Of(id, Tags.Entries + h.Entry), wireOut,
                       EntryNumbered(h.Entry).Graph(h));
                return;
            }
            object message = EntryNumbered(h.Entry).MessageOf(h);
            var array = message as Array;
            s.Post(dest, Tags.Of(id, Tags.ZeroCopy),
                   new ZeroCopyNote<TIndex> { Index = h.Index, Sender = h.Sender, Seq = h.Seq,
                                              Origin = h.Origin, Hops = h.Hops, Entry = h.Entry,
                                              Length = array == null ? -1 : array.Length });
            s.PostData(dest, Tags.Of(id, Tags.ZeroCopyData), message);
        }

        /// <summary>A zero-copy message: its envelope, then the data received straight into a new
        /// array or object of the entry's parameter type (OPI refuses a message that is not a
        /// whole number of its elements). An envelope that cannot be read is refused before its
        /// data is looked for: that comes through the loop on its own and is
        /// refused there.</summary>
        void ReceiveZeroCopy(Comm c, int source, int tag, int bytes)
        {
            var note = Channel.ReadIncoming<ZeroCopyNote<TIndex>>(bytes);
            Type type = note != null && note.Entry >= 0 && note.Entry < entries.Length
                            ? entries[note.Entry].MessageType
                            : null;
            if (note == null || note.Index == null || !ZeroCopyRules.Accepts(type) ||
                note.Length < -1 || (note.Length < 0) != !type.IsArray)
                throw new MPSerializationException(
                    $"System.MP.Arrays: a malformed zero-copy message from rank {source}" +
                    (note == null ? "" : $" (entry {note.Entry}, length {note.Length})"));
            // the sender's phase
            int dataTag = Tags.Of(id, Tags.ZeroCopyData) | (tag & (1 << Tags.KindBits));
            Status data = c.Probe(source, dataTag);   // sent right after its envelope
            s.ReceivedDirectly();
            if (note.Length > data.Bytes) {
                c.Recv(new byte[data.Count], source, dataTag);
                throw new MPSerializationException(
                    $"System.MP.Arrays: a zero-copy message from rank {source} announced " +
                    $"{note.Length} elements in {data.Bytes} bytes");
            }
            object message =
                type.IsArray
                    ? Array.CreateInstance(type.GetElementType(), note.Length)
                    : System.Runtime.Serialization.FormatterServices.GetUninitializedObject(type);
            Status got = c.Recv(message, source, dataTag);
            if (got.Count != (type.IsArray ? note.Length : 1))
                throw new MPSerializationException(
                    $"System.MP.Arrays: a zero-copy message from rank {source} announced " +
                    $"{note.Length} elements and brought {got.Count}");
            Header<TIndex> h = entries[note.Entry].Make(message);
            h.Index = note.Index;
            h.Sender = note.Sender;
            h.Seq = note.Seq;
            h.Origin = note.Origin;
            h.Hops = Math.Max(0, note.Hops);
            h.ZeroCopy = true;
            Arrive(h);
        }

        void Hold(Header<TIndex> h)
        {
            List<Header<TIndex>> list;
            if (!held.TryGetValue(h.Index, out list))
                held[h.Index] = list = new List<Header<TIndex>>();
            list.Add(h);
            heldCount++;
        }

        void Release(TIndex index)
        {
            List<Header<TIndex>> list;
            if (!held.TryGetValue(index, out list))
                return;
            held.Remove(index);
            heldCount -= list.Count;
            foreach (Header<TIndex> h in list)
                Arrive(h);
        }

        /// <summary>A message for an element reached this rank: delivered if the element is here,
        /// parked if it is being registered, forwarded otherwise.</summary>
        void Arrive(Header<TIndex> h)
        {
            Whereabouts w = Locate(arriving, h.Index);
            Record<TIndex> r = w.Local;
            if (r != null) {
                Accept(r, h);
                return;
            }
            if (w.Pending != null) {
                (w.Pending.Parked ?? (w.Pending.Parked = new List<Header<TIndex>>())).Add(h);
                return;
            }
            int dest = w.Hop;
            if (dest != rank) {
                h.Hops++;
                forwarded++;
            }
            Route(h, false, dest);
        }

        /// <summary>Is r still this rank's (not moved or deleted since)? Attach and Detach keep
        /// the element's back reference in step with the local table.</summary>
        static bool IsHere(Record<TIndex> r) => r.Element != null && r.Element.record == r;

        /// <summary>Delivers h if it is the next from its sender, then any held successors; keeps
        /// it otherwise.</summary>
        void Accept(Record<TIndex> r, Header<TIndex> h)
        {
            Seq expected = r.NextSeq.Get(h.Sender, 1);
            long next = expected.Value;
            if (h.Seq != next) {
                if (h.Seq < next) {
                    s.Fault(new MPSerializationException(
                        $"System.MP.Arrays: element {r.Index} got message {h.Seq} from sender " +
                        $"{h.Sender} twice"));
                    return;
                }
                SortedDictionary<long, Header<TIndex>> waiting;
                if (!r.OutOfOrder.TryGetValue(h.Sender, out waiting))
                    r.OutOfOrder[h.Sender] = waiting = new SortedDictionary<long, Header<TIndex>>();
                if (waiting.ContainsKey(h.Seq))
                    s.Fault(new MPSerializationException(
                        $"System.MP.Arrays: element {r.Index} got message {h.Seq} from sender " +
                        $"{h.Sender} twice"));
                else
                    waiting[h.Seq] = h;
                return;
            }
            while (true) {
                expected.Value = h.Seq + 1;
                Invoke(r, h);
                SortedDictionary<long, Header<TIndex>> waiting;
                Header<TIndex> following;
                if (r.OutOfOrder.Count == 0 || !IsHere(r) ||
                    !r.OutOfOrder.TryGetValue(h.Sender, out waiting) ||
                    !waiting.TryGetValue(h.Seq + 1, out following))
                    return;
                waiting.Remove(h.Seq + 1);
                if (waiting.Count == 0)
                    r.OutOfOrder.Remove(h.Sender);
                h = following;
            }
        }

        void Invoke(Record<TIndex> r, Header<TIndex> h)
        {
            // correct the sender's cache
            if (h.Hops > 0 && h.Origin != rank && h.Origin >= 0 && h.Origin < size)
                s.Post(h.Origin, Tags.Of(id, Tags.Location),
                       new LocationNote<TIndex> { Index = r.Index, Rank = rank, Epoch = r.Epoch });
            Entry<TIndex, TElement> e = EntryNumbered(h.Entry);
            long t0 = s.LoadClock();
            try {
                e.Invoke((TElement)r.Element, h);
            } catch (Exception x) {
                s.Fault(new ElementException(r.Index, e.Name, x));
            }
            r.Load += s.LoadSeconds(s.LoadClock() - t0);
            Settle(r);
        }

        /// <summary>After an entry method: the deletion or the move it asked for.</summary>
        void Settle(Record<TIndex> r)
        {
            if (r.Destroying)
                DestroyNow(r);
            else if (r.MoveTo >= 0) {
                int to = r.MoveTo;
                r.MoveTo = -1;
                if (to != rank)
                    MigrateNow(r, to);
            }
        }

        internal override void RequestMigration(Record<TIndex> from, int toRank)
        {
            s.CheckThread();
            CheckRank(toRank, nameof(toRank));
            from.MoveTo = toRank;
        }

        // ---------------------------------------------------------------- migration,
        // insertion, deletion

        void MigrateNow(Record<TIndex> r, int to)
        {
            try {
                r.Element.OnMigrating();
            } catch (Exception x) {
                s.Fault(new ElementException(r.Index, nameof(Element<TIndex>.OnMigrating), x));
            }
            var p = new Passport<TIndex, TElement> {
                Element = (TElement)r.Element,
                Index = r.Index,
                Uid = r.Uid,
                Epoch = r.Epoch + 1,
                LastBroadcast = r.LastBroadcast,
                Reductions = r.Reductions,
                Load = r.Load,
                SeqSenders = new long[r.NextSeq.Count],
                SeqNext = new long[r.NextSeq.Count],
                SendTargets = new TIndex[r.SendSeq.Count],
                SendNext = new long[r.SendSeq.Count],
            };
            int i = 0;
            foreach (var kv in r.NextSeq) {
                p.SeqSenders[i] = kv.Key;
                p.SeqNext[i++] = kv.Value.Value;
            }
            i = 0;
            foreach (var kv in r.SendSeq) {
                p.SendTargets[i] = kv.Key;
                p.SendNext[i++] = kv.Value.Value;
            }
            // serialized (and sent) before anything changes here: an element that cannot travel
            // (a [Transportable] field holding what no graph can carry) stays, and the loop that
            // delivered the message asking for the move goes on with the messages after it
            try {
                var heldBytes = new List<HeldMessage>();
                foreach (var waiting in r.OutOfOrder.Values)
                    foreach (Header<TIndex> h in waiting.Values)
                        heldBytes.Add(
                            new HeldMessage { Entry = h.Entry, Bytes = Serializer.Serialize(h) });
                p.Held = heldBytes.ToArray();
                s.Post(to, Tags.Of(id, Tags.Migrate), p);
            } catch (Exception x) {
                s.Fault(new ElementException(
                    r.Index, $"its migration to rank {to} (it stays on rank {rank})", x));
                try {
                    r.Element.OnMigrated();
                } catch (Exception y) {
                    s.Fault(new ElementException(r.Index, nameof(Element<TIndex>.OnMigrated), y));
                }
                return;
            }
            r.Epoch++;
            Detach(r);
            cache[r.Index] = new Location(to, r.Epoch);
            if (HomeOf(r.Index) == rank)
                homeTable[r.Index] = new Location(to, r.Epoch);
            moves++;
            Advance();
        }

        void Arrived(Passport<TIndex, TElement> p, int source)
        {
            if (p == null || p.Element == null || p.Index == null)
                throw new MPSerializationException(
                    $"System.MP.Arrays: an element from rank {source} arrived without its " +
                    "element or index");
            if (p.Uid == 0) {   // a remote Insert
                if (local.ContainsKey(p.Index) || pending.ContainsKey(p.Index))
                    throw new InvalidOperationException(
                        $"System.MP.Arrays: Insert of index {p.Index}: it already lives on rank " +
                        $"{rank}");
                if (p.LastBroadcast < 0 || p.Reductions < 0)
                    throw new MPSerializationException(
                        $"System.MP.Arrays: an insertion of index {p.Index} from rank {source} " +
                        "with negative counts");
                InsertHere(p.Index, p.Element, p.LastBroadcast, Math.Max(frontier, p.Reductions));
                return;
            }
            int senders = p.SeqSenders?.Length ?? -1, targets = p.SendTargets?.Length ?? -1;
            if (senders < 0 || p.SeqNext?.Length != senders || targets < 0 ||
                p.SendNext?.Length != targets || p.Held == null)
                throw new MPSerializationException(
                    $"System.MP.Arrays: element {p.Index} from rank {source} arrived with " +
                    "inconsistent tables");
            if (local.ContainsKey(p.Index))
                throw new MPSerializationException(
                    $"System.MP.Arrays: element {p.Index} arrived from rank {source} but already " +
                    "lives here");
            var r = new Record<TIndex> { Element = p.Element,
                                         Index = p.Index,
                                         Uid = p.Uid,
                                         Epoch = p.Epoch,
                                         LastBroadcast = p.LastBroadcast,
                                         Reductions = p.Reductions,
                                         Load = p.Load,
                                         Ready = true };
            for (int i = 0; i < senders; i++)
                r.NextSeq.Set(p.SeqSenders[i], p.SeqNext[i]);
            for (int i = 0; i < targets; i++)
                if (p.SendTargets[i] != null)
                    r.SendSeq.Set(p.SendTargets[i], p.SendNext[i]);
            var restored = new List<Header<TIndex>>();
            foreach (HeldMessage m in p.Held) {
                if (m == null || m.Bytes == null || m.Entry < 0 || m.Entry > entries.Length) {
                    s.Fault(new MPSerializationException(
                        $"System.MP.Arrays: element {p.Index} arrived with a malformed held " +
                        "message"));
                    continue;
                }
                try {
                    Header<TIndex> h = EntryNumbered(m.Entry).Decode(m.Bytes);
                    h.Index = r.Index;
                    restored.Add(h);
                } catch (MPSerializationException x) {
                    s.Fault(x);
                }
            }
            Attach(r);
            Located(r.Index, rank, r.Epoch);
            try {
                r.Element.OnMigrated();
            } catch (Exception x) {
                s.Fault(new ElementException(r.Index, nameof(Element<TIndex>.OnMigrated), x));
            }
            // still waiting for earlier ones, unless it moved on
            foreach (Header<TIndex> h in restored) {
                if (IsHere(r))
                    Accept(r, h);
                else
                    Arrive(h);
            }
            s.Later(() => CatchUp(r));
            Advance();
        }

        /// <summary>This rank now holds index at epoch: its cache, and the home's table (here, or
        /// by a note).</summary>
        void Located(TIndex index, int at, long epoch)
        {
            cache[index] = new Location(at, epoch);
            moves++;
            int home = HomeOf(index);
            if (home == rank)
                SetHome(index, at, epoch);
            else
                s.Post(home, Tags.Of(id, Tags.Location),
                       new LocationNote<TIndex> { Index = index, Rank = at, Epoch = epoch });
        }

        /// <summary>Index was at rank `at` at epoch: kept unless this rank knows a newer epoch. A
        /// rank's cache never goes back in epochs, so following caches never goes round in a
        /// circle (each rank an element left points to where it went next, or to
        /// its death).</summary>
        void Learn(TIndex index, int at, long epoch)
        {
            Location old;
            if (at < 0 || at >= size || (cache.TryGetValue(index, out old) && old.Epoch >= epoch))
                return;
            cache[index] = new Location(at, epoch);
            moves++;
        }

        void SetHome(TIndex index, int at, long epoch)
        {
            Location old;
            if (homeTable.TryGetValue(index, out old) && old.Epoch >= epoch)
                return;
            homeTable[index] = new Location(at, epoch);
            moves++;
            if (at >= 0)
                Release(index);
        }

        void InsertHere(TIndex index, TElement element, long lastBroadcast, long reductions)
        {
            var r = new Record<TIndex> { Element = element,
                                         Index = index,
                                         Uid = ((long)(rank + 1) << 40) + (++inserted),
                                         LastBroadcast = lastBroadcast,
                                         Reductions = reductions,
                                         Ready = false };
            Attach(r);
            AddDelta(r.Reductions, +1);
            var note = new LocationNote<TIndex> { Index = index, Rank = rank };
            int home = HomeOf(index);
            if (home == rank)
                Register(note);
            else
                s.Post(home, Tags.Of(id, Tags.Register), note);
        }

        /// <summary>At the home: an insertion asks for index.</summary>
        void Register(LocationNote<TIndex> note)
        {
            Location loc;
            bool exists = homeTable.TryGetValue(note.Index, out loc);
            if (exists && loc.Rank >= 0) {
                Reply(note.Rank, Tags.Duplicate,
                      new LocationNote<TIndex> { Index = note.Index, Rank = loc.Rank,
                                                 Epoch = loc.Epoch });
                return;
            }
            LocationNote<TIndex> tomb;
            tombstones.TryGetValue(note.Index, out tomb);
            tombstones.Remove(note.Index);
            long epoch = (exists ? loc.Epoch : 0) + 1;
            homeTable[note.Index] = new Location(note.Rank, epoch);
            moves++;
            Reply(note.Rank, Tags.Registered,
                  new LocationNote<TIndex> { Index = note.Index, Rank = note.Rank, Epoch = epoch,
                                             SeqSenders = tomb?.SeqSenders,
                                             SeqNext = tomb?.SeqNext });
            Release(note.Index);
        }

        void Reply(int to, int kind, LocationNote<TIndex> note)
        {
            if (to == rank) {
                if (kind == Tags.Duplicate)
                    Duplicate(note);
                else
                    Registered(note);
            } else {
                s.Post(to, Tags.Of(id, kind), note);
            }
        }

        void Registered(LocationNote<TIndex> note)
        {
            Record<TIndex> r;
            if (!pending.TryGetValue(note.Index, out r) || local.ContainsKey(note.Index))
                throw new MPSerializationException(
                    $"System.MP.Arrays: a registration of index {note.Index} that no insertion " +
                    "here waits for");
            int n = note.SeqSenders?.Length ?? 0;
            if ((note.SeqNext?.Length ?? 0) != n)
                throw new MPSerializationException(
                    $"System.MP.Arrays: the registration of index {note.Index} has inconsistent " +
                    "tables");
            for (int i = 0; i < n; i++)
                r.NextSeq.Set(note.SeqSenders[i], note.SeqNext[i]);
            r.Epoch = note.Epoch;
            pending.Remove(r.Index);
            r.Ready = true;
            local[r.Index] = r;
            cache[r.Index] = new Location(rank, r.Epoch);
            moves++;
            List<Header<TIndex>> parked = r.Parked;
            r.Parked = null;
            if (parked != null)
                foreach (Header<TIndex> h in parked) {
                    if (IsHere(r))
                        Accept(r, h);
                    else
                        Arrive(h);
                }
            s.Later(() => CatchUp(r));
        }

        void Duplicate(LocationNote<TIndex> note)
        {
            Record<TIndex> r;
            if (!pending.TryGetValue(note.Index, out r))
                throw new MPSerializationException(
                    $"System.MP.Arrays: a refusal of index {note.Index} that no insertion here " +
                    "waits for");
            Detach(r);
            AddDelta(r.Reductions, -1);
            // this rank may know a newer place than the home did
            Learn(note.Index, note.Rank, note.Epoch);
            if (r.Parked != null)
                foreach (Header<TIndex> h in r.Parked)
                    Arrive(h);
            s.Fault(new InvalidOperationException(
                $"System.MP.Arrays: Insert of index {note.Index} on rank {rank}: it already " +
                $"lives on rank {note.Rank}; the new element was dropped"));
            Advance();
        }

        void DestroyNow(Record<TIndex> r)
        {
            Detach(r);
            AddDelta(r.Reductions, -1);
            // the death is the newest news of index here: a note about an older epoch that comes
            // later must not point this rank back along the element's old path (a message would
            // go round between the ranks that path left pointing at each other)
            cache[r.Index] = new Location(-1, r.Epoch + 1);
            moves++;
            var tomb = new LocationNote<TIndex> { Index = r.Index, Rank = -1, Epoch = r.Epoch + 1,
                                                  SeqSenders = new long[r.NextSeq.Count],
                                                  SeqNext = new long[r.NextSeq.Count] };
            int i = 0;
            foreach (var kv in r.NextSeq) {
                tomb.SeqSenders[i] = kv.Key;
                tomb.SeqNext[i++] = kv.Value.Value;
            }
            int home = HomeOf(r.Index);
            if (home == rank)
                Bury(tomb);
            else
                s.Post(home, Tags.Of(id, Tags.Tombstone), tomb);
            foreach (var waiting in r.OutOfOrder.Values)
                foreach (Header<TIndex> h in waiting.Values)
                    Arrive(h);
            Advance();
        }

        void Bury(LocationNote<TIndex> tomb)
        {
            Location old;
            if (homeTable.TryGetValue(tomb.Index, out old) && old.Epoch >= tomb.Epoch)
                return;
            homeTable[tomb.Index] = new Location(-1, tomb.Epoch);
            moves++;
            tombstones[tomb.Index] = tomb;
        }

        // ---------------------------------------------------------------- broadcasts

        internal override void BroadcastFrom(string entry, object message, bool hasMessage)
        {
            s.CheckThread();
            Entry<TIndex, TElement> e =
                EntryTable<TIndex, TElement>.FindFor(entry, message, hasMessage);
            var note = new BroadcastNote {
                Entry = e.Number, Message = message == null ? null : Serializer.Serialize(message)
            };
            if (rank == 0)
                Number(note);
            else
                s.Post(0, Tags.Of(id, Tags.BroadcastRequest), note);
        }

        void Number(BroadcastNote note)
        {
            note.Number = ++numbered;
            Broadcasted(note);
        }

        void Broadcasted(BroadcastNote note)
        {
            if (note.Number != broadcasts + 1)
                throw new MPSerializationException(
                    $"System.MP.Arrays: broadcast {note.Number} arrived after {broadcasts}");
            broadcasts++;
            log.Add(note);
            foreach (int child in children)
                s.Post(child, Tags.Of(id, Tags.Broadcast), note);
            s.Later(() =>
                    {
                        foreach (Record<TIndex> r in new List<Record<TIndex>>(local.Values))
                            CatchUp(r);
                    });
        }

        /// <summary>Delivers to r the broadcasts this rank has seen and r has not.</summary>
        void CatchUp(Record<TIndex> r)
        {
            while (IsHere(r) && r.Ready && r.LastBroadcast < broadcasts) {
                long b = ++r.LastBroadcast;
                if (b <= logBase)
                    continue;
                BroadcastNote note = log[(int)(b - logBase - 1)];
                Entry<TIndex, TElement> e = entries[note.Entry];
                long t0 = s.LoadClock();
                try {
                    e.InvokeBroadcast((TElement)r.Element, note.Message);
                } catch (MPSerializationException x) {
                    s.Fault(x);
                } catch (Exception x) {
                    s.Fault(new ElementException(r.Index, e.Name, x));
                }
                r.Load += s.LoadSeconds(s.LoadClock() - t0);
                Settle(r);
            }
        }

        // ---------------------------------------------------------------- reductions
        // Each element contributes to reductions 0, 1, 2, ... in turn. A rank sends reduction k
        // up the tree (its "frontier") once no local element still owes k and its children's
        // partials are in; a contribution to a k already sent (the element arrived late) goes
        // straight to rank 0. Rank 0 knows how many contributions k needs: the initial count
        // plus the insertions and deletions reported with positions ≤ k (an insertion counts from
        // its rank's frontier, which is reported no later than that rank's partial of it).

        void Owe(long k, int d)
        {
            int n;
            owing.TryGetValue(k, out n);
            if (n + d == 0)
                owing.Remove(k);
            else
                owing[k] = n + d;
        }

        long OwedAt(long k)
        {
            long n = 0;
            foreach (var kv in owing) {
                if (kv.Key > k)
                    break;
                n += kv.Value;
            }
            return n;
        }

        Slot SlotAt(Dictionary<long, Slot> table, long k)
        {
            Slot slot;
            if (!table.TryGetValue(k, out slot))
                table[k] = slot = new Slot();
            return slot;
        }

        const string Mixed =
            "elements contributed to this number with different reductions: every element must " +
            "contribute to the array's reductions in the same order (they share one numbering)";

        /// <summary>Adds count contributions (value, or failure: a part that could not be
        /// combined; others: reductions it met besides its own) to slot. A combine function that
        /// throws, or a contribution of another reduction, fails the slot's result, which every
        /// rank then gets as a failure: the counts go on, so later reductions
        /// still complete.</summary>
        void Combine(Slot slot, int reduction, object value, long count, string failure = null,
                     int[] others = null)
        {
            slot.Count += count;
            if (reduction < 0)
                return;
            if (slot.Reduction < 0) {
                slot.Reduction = reduction;
                slot.Value = value;
            } else if (slot.Reduction != reduction) {
                AddOther(slot, reduction);
                failure = failure ?? Mixed;
            } else if (failure == null && slot.Failure == null) {
                try {
                    slot.Value = reductions[reduction].Combine(slot.Value, value);
                } catch (Exception x) {
                    failure = Failed(slot, "its combine function threw", x);
                }
            }
            if (others != null)
                foreach (int other in others)
                    AddOther(slot, other);
            if (failure != null && slot.Failure == null) {
                slot.Failure = failure;
                slot.Value = null;
            }
        }

        static void AddOther(Slot slot, int reduction)
        {
            if (reduction == slot.Reduction)
                return;
            if (slot.Others == null)
                slot.Others = new List<int>();
            if (!slot.Others.Contains(reduction))
                slot.Others.Add(reduction);
        }

        /// <summary>A partial's value on the wire; a value that cannot be encoded fails the
        /// partial instead of losing it (the counts travel on).</summary>
        ReductionNote Partial(long number, Slot slot)
        {
            byte[] value = null;
            if (slot.Reduction >= 0 && slot.Failure == null) {
                try {
                    value = reductions[slot.Reduction].Encode(slot.Value);
                } catch (Exception x) {
                    slot.Failure = Failed(slot, "its combined value could not be sent:", x);
                }
            }
            if (slot.Cause != null && !causes.ContainsKey(number))
                causes[number] = slot.Cause;
            return new ReductionNote {
                Number = number,        Count = slot.Count, Reduction = slot.Reduction,
                Failure = slot.Failure, Value = value,      Others = slot.Others?.ToArray()
            };
        }

        /// <summary>A partial or late contribution from another rank, added to slot.</summary>
        void CombineNote(Slot slot, ReductionNote note) => Combine(
            slot, note.Reduction,
            note.Reduction >= 0 && note.Failure == null
                ? reductions[note.Reduction].Decode(note.Value)
                : null,
            note.Count, note.Failure, note.Others);

        /// <summary>User code failed slot's value: why, for the note. Not reported here: every
        /// rank reports the failed number once, when its result comes
        /// (<see cref="Result"/>).</summary>
        static string Failed(Slot slot, string what, Exception x)
        {
            if (slot.Cause == null)
                slot.Cause = x;
            return $"{what} {x.GetType().Name}: {x.Message}";
        }

        internal override void Contribute<T>(Record<TIndex> from, Reduction<T> reduction, T value)
        {
            s.CheckThread();
            if (reduction == null)
                throw new ArgumentNullException(nameof(reduction));
            if (reduction.Array != this)
                throw new ArgumentException(
                    "System.MP.Arrays: the reduction was defined on another array",
                    nameof(reduction));
            if (!from.Ready)
                throw new InvalidOperationException(
                    "System.MP.Arrays: an element contributes once its insertion is registered");
            // a value that cannot travel is refused here, before anything counts it
            byte[] encoded = reduction.Encode(value);
            long k = from.Reductions++;
            Owe(k, -1);
            Owe(k + 1, +1);
            if (k >= frontier) {
                Combine(SlotAt(slots, k), reduction.Id, value, 1);
                if (k > known)
                    known = k;
            } else {
                var late = new ReductionNote { Number = k, Count = 1, Reduction = reduction.Id,
                                               Value = encoded };
                TakeDeltas(late);
                if (rank == 0)
                    AtRoot(late, false);
                else
                    s.Post(0, Tags.Of(id, Tags.ReductionLate), late);
            }
            Advance();
        }

        void AddDelta(long at, long d)
        {
            if (rank == 0) {
                long old;
                rootDeltas.TryGetValue(at, out old);
                rootDeltas[at] = old + d;
                Complete();
                return;
            }
            deltaAt.Add(at);
            delta.Add(d);
            if (at < frontier) {   // no partial of this rank will carry it in time: send it now
                var note = new ReductionNote { Number = at, Reduction = -1 };
                TakeDeltas(note);
                s.Post(0, Tags.Of(id, Tags.ReductionLate), note);
            }
        }

        void TakeDeltas(ReductionNote note)
        {
            note.DeltaAt = deltaAt.ToArray();
            note.Delta = delta.ToArray();
            deltaAt.Clear();
            delta.Clear();
        }

        /// <summary>Sends this rank's partials up the tree while they are complete.</summary>
        void Advance()
        {
            while (frontier <= known) {
                Slot slot = SlotAt(slots, frontier);
                if (OwedAt(frontier) > 0)
                    return;
                if (slot.ChildrenIn < children.Count) {
                    // a child that has not reported may not know the reduction started (a subtree
                    // without contributing elements): tell it, once, now that only children
                    // are missing
                    for (int i = 0; i < children.Count; i++)
                        if (childReported[i] <= frontier && childStarted[i] < known) {
                            childStarted[i] = known;
                            s.Post(children[i], Tags.Of(id, Tags.ReductionStarted),
                                   new ReductionNote { Number = known });
                        }
                    return;
                }
                slots.Remove(frontier);
                ReductionNote note = Partial(frontier, slot);
                TakeDeltas(note);
                frontier++;
                if (rank == 0)
                    AtRoot(note, true);
                else
                    s.Post(parent, Tags.Of(id, Tags.ReductionPartial), note);
            }
        }

        void CheckNote(ReductionNote note, int source)
        {
            if (note == null || note.Number < 0 || note.Count < 0 || note.Reduction < -1 ||
                note.Reduction >= reductions.Count ||
                (note.DeltaAt?.Length ?? 0) != (note.Delta?.Length ?? 0) ||
                (note.Reduction >= 0 && note.Failure == null) != (note.Value != null) ||
                (note.Others != null &&
                 (note.Failure == null || note.Reduction < 0 ||
                  Array.Exists(note.Others, r => r < 0 || r >= reductions.Count))))
                throw new MPSerializationException(
                    $"System.MP.Arrays: a malformed reduction message from rank {source}");
        }

        void AtRoot(ReductionNote note, bool main)
        {
            int n = note.DeltaAt?.Length ?? 0;
            for (int i = 0; i < n; i++) {
                long old;
                rootDeltas.TryGetValue(note.DeltaAt[i], out old);
                rootDeltas[note.DeltaAt[i]] = old + note.Delta[i];
            }
            if (note.Number < rootNext) {
                if (note.Count > 0)
                    s.Fault(new InvalidOperationException(
                        $"System.MP.Arrays: a contribution to reduction {note.Number} came after " +
                        "its result"));
            } else {
                Slot slot = SlotAt(rootSlots, note.Number);
                if (main)
                    slot.ChildrenIn = 1;
                CombineNote(slot, note);
            }
            Complete();
        }

        /// <summary>At rank 0: sends down the results that have all their contributions,
        /// in order.</summary>
        void Complete()
        {
            while (true) {
                Slot slot;
                if (!rootSlots.TryGetValue(rootNext, out slot) || slot.ChildrenIn == 0)
                    return;
                long expected = initialCount;
                foreach (var kv in rootDeltas) {
                    if (kv.Key > rootNext)
                        break;
                    expected += kv.Value;
                }
                if (slot.Count != expected)
                    return;
                rootSlots.Remove(rootNext);
                Result(Partial(rootNext++, slot));
            }
        }

        void Result(ReductionNote note)
        {
            foreach (int child in children)
                s.Post(child, Tags.Of(id, Tags.ReductionResult), note);
            if (note.Reduction < 0)
                return;
            Reduction reduction = reductions[note.Reduction];
            if (note.Failure != null) {
                Failure(note);
                return;
            }
            object value = reduction.Decode(note.Value);
            try {
                reduction.Complete(note.Number, value);
            } catch (Exception x) {
                // a Completed handler threw: the result still goes to the elements
                s.Fault(x);
            }
            if (rank == 0 && reduction.ResultEntry != null)   // the result, as a broadcast of it
                Number(new BroadcastNote {
                    Entry = EntryTable<TIndex, TElement>.ByName[reduction.ResultEntry].Number,
                    Message = value == null ? null : Serializer.Serialize(value)
                });
        }

        /// <summary>A number that has no result: every rank learns it here, once. The Result
        /// tasks of every reduction given to it fail, and Run reports it (one fault
        /// per rank).</summary>
        void Failure(ReductionNote note)
        {
            var involved = new List<int> { note.Reduction };
            if (note.Others != null)
                foreach (int other in note.Others)
                    if (!involved.Contains(other))
                        involved.Add(other);
            involved.Sort();
            Exception cause;
            if (causes.TryGetValue(note.Number, out cause))
                causes.Remove(note.Number);
            string which =
                involved.Count == 1
                    ? $"reduction {involved[0]} of array {id}, number {note.Number}, has"
                    : $"reductions {string.Join(" and ", involved)} of array {id}, number " +
                          $"{note.Number}, have";
            var failed = new InvalidOperationException(
                $"System.MP.Arrays: {which} no result: {note.Failure}", cause);
            foreach (int r in involved)
                reductions[r].Fail(note.Number, failed);
            s.Fault(failed);
        }

        // ---------------------------------------------------------------- receiving

        internal override void Dispatch(int source, int kind, int tag, int bytes)
        {
            Comm c = s.Comm;
            if (kind >= Tags.Entries) {
                int number = kind - Tags.Entries;
                if (number > entries.Length)
                    throw new MPSerializationException(
                        $"System.MP.Arrays: a message from rank {source} for entry method " +
                        $"{number}, which {typeof(TElement)} does not have");
                long[] header = s.Incoming;
                if (IndexCodec<TIndex>.Fits && PassedOn(header, number))
                    return;
                Header<TIndex> h = EntryNumbered(number).Receive(header);
                if (h.Index == null)
                    throw new MPSerializationException(
                        $"System.MP.Arrays: a message from rank {source} without an index");
                Arrive(h);
                return;
            }
            switch (kind) {
            case Tags.ZeroCopy: ReceiveZeroCopy(c, source, tag, bytes); return;
            case Tags.ZeroCopyData:   // (taken whole by the loop: nothing is left queued)
                throw new MPSerializationException(
                    $"System.MP.Arrays: zero-copy data from rank {source} ({bytes} bytes) after " +
                    "an envelope that could not be read");
            case Tags.Migrate:
                Arrived(Channel.ReadIncoming<Passport<TIndex, TElement>>(bytes), source);
                return;
            case Tags.Location: {
                LocationNote<TIndex> note = Note(source, bytes);
                Learn(note.Index, note.Rank, note.Epoch);
                if (HomeOf(note.Index) == rank && note.Rank >= 0 && note.Rank < size)
                    SetHome(note.Index, note.Rank, note.Epoch);
                return;
            }
            case Tags.Register: {
                LocationNote<TIndex> note = Note(source, bytes);
                note.Rank = source;
                if (HomeOf(note.Index) != rank)
                    throw new MPSerializationException(
                        $"System.MP.Arrays: rank {source} registered index {note.Index} at rank " +
                        $"{rank}, which is not its home");
                Register(note);
                return;
            }
            case Tags.Registered: Registered(Note(source, bytes)); return;
            case Tags.Duplicate: Duplicate(Note(source, bytes)); return;
            case Tags.Tombstone: {
                LocationNote<TIndex> note = Note(source, bytes);
                if (HomeOf(note.Index) != rank ||
                    (note.SeqSenders?.Length ?? 0) != (note.SeqNext?.Length ?? 0))
                    throw new MPSerializationException(
                        $"System.MP.Arrays: a malformed deletion of index {note.Index} from rank " +
                        $"{source}");
                Bury(note);
                return;
            }
            case Tags.BroadcastRequest:
            case Tags.Broadcast: {
                var note = Channel.ReadIncoming<BroadcastNote>(bytes);
                if (note == null || note.Entry < 0 || note.Entry >= entries.Length)
                    throw new MPSerializationException(
                        $"System.MP.Arrays: a malformed broadcast from rank {source}");
                if (kind == Tags.BroadcastRequest) {
                    if (rank != 0)
                        throw new MPSerializationException(
                            $"System.MP.Arrays: a broadcast request from rank {source} reached " +
                            $"rank {rank}");
                    Number(note);
                } else {
                    if (source != parent)
                        throw new MPSerializationException(
                            $"System.MP.Arrays: a broadcast from rank {source}, not from this " +
                            "rank's parent");
                    Broadcasted(note);
                }
                return;
            }
            case Tags.ReductionStarted: {
                var note = Channel.ReadIncoming<ReductionNote>(bytes);
                CheckNote(note, source);
                if (source != parent)
                    throw new MPSerializationException(
                        $"System.MP.Arrays: a reduction start from rank {source}, not from this " +
                        "rank's parent");
                if (note.Number > known)
                    known = note.Number;
                Advance();
                return;
            }
            case Tags.ReductionPartial:
            case Tags.ReductionLate: {
                var note = Channel.ReadIncoming<ReductionNote>(bytes);
                CheckNote(note, source);
                if (kind == Tags.ReductionLate) {
                    if (rank != 0)
                        throw new MPSerializationException(
                            $"System.MP.Arrays: a late contribution from rank {source} reached " +
                            $"rank {rank}");
                    AtRoot(note, false);
                    return;
                }
                int child = children.IndexOf(source);
                if (child < 0 || note.Number != childReported[child] || note.Number < frontier)
                    throw new MPSerializationException(
                        $"System.MP.Arrays: an unexpected partial of reduction {note.Number} " +
                        $"from rank {source}");
                childReported[child]++;
                Slot slot = SlotAt(slots, note.Number);
                slot.ChildrenIn++;
                for (int i = 0; i < (note.DeltaAt?.Length ?? 0); i++) {
                    deltaAt.Add(note.DeltaAt[i]);
                    delta.Add(note.Delta[i]);
                }
                CombineNote(slot, note);
                if (note.Number > known)
                    known = note.Number;
                Advance();
                return;
            }
            case Tags.ReductionResult: {
                var note = Channel.ReadIncoming<ReductionNote>(bytes);
                CheckNote(note, source);
                if (source != parent)
                    throw new MPSerializationException(
                        $"System.MP.Arrays: a reduction result from rank {source}, not from this " +
                        "rank's parent");
                Result(note);
                return;
            }
            default:
                throw new MPSerializationException(
                    $"System.MP.Arrays: a message of unknown kind {kind} from rank {source}");
            }
        }

        /// <summary>A message to an element that is elsewhere goes on as it came, one hop more,
        /// without its graph being read and written again (the index is in its header).</summary>
        bool PassedOn(long[] header, int entry)
        {
            Whereabouts w = Locate(arriving, IndexCodec<TIndex>.Decode(header[Wire.Index]));
            if (w.Local != null || w.Hop == rank)
                return false;
            Wire.AddHop(header);
            forwarded++;
            s.Forward(w.Hop, Tags.Of(id, Tags.Entries + entry), header);
            return true;
        }

        LocationNote<TIndex> Note(int source, int bytes)
        {
            var note = Channel.ReadIncoming<LocationNote<TIndex>>(bytes);
            if (note == null || note.Index == null)
                throw new MPSerializationException(
                    $"System.MP.Arrays: a malformed location message from rank {source}");
            return note;
        }

        internal override void Quiesced()
        {
            foreach (Record<TIndex> r in local.Values)
                if (r.LastBroadcast < broadcasts)
                    return;   // keep the log: someone still needs it
            logBase = broadcasts;
            log.Clear();
        }
    }
}

// System.MP.Arrays — what travels between ranks, and the entry-method table. Every message is
// one SDTO graph of a type the receiver knows from the tag before it reads a byte (the tag
// names the array and the kind, or the entry method), so hostile bytes can only ever produce
// objects of that type's allowed set (API.md, "Allowed types on receipt"); a message to an
// element puts four longs (Wire) before its graph.
using System.Collections.Generic;
using System.Linq.Expressions;
using System.Reflection;

namespace System.MP.Arrays
{
    /// <summary>The tag of a message: array id in the high bits, the sender's phase parity (see
    /// Scheduler.Run), then a kind below 64 or an entry method (64 + its number).</summary>
    internal static class Tags
    {
        internal const int KindBits = 12, ArrayShift = KindBits + 1, Entries = 64,
                           MaxEntries = (1 << KindBits) - Entries;
        internal const int Migrate = 1, Location = 2, Register = 3, Registered = 4, Duplicate = 5,
                           Tombstone = 6, BroadcastRequest = 7, Broadcast = 8,
                           ReductionStarted = 10, ReductionPartial = 11, ReductionResult = 12,
                           ReductionLate = 13, ZeroCopy = 14, ZeroCopyData = 15;
        // Post adds the parity
        internal static int Of(int array, int kind) => (array << ArrayShift) | kind;
    }

    /// <summary>The binomial tree over the ranks rooted at 0: broadcasts go down it, reduction
    /// partials up, each O(log p) deep.</summary>
    internal static class Tree
    {
        internal static int Parent(int rank)
        {
            for (int mask = 1;; mask <<= 1)
                if ((rank & mask) != 0)
                    return rank - mask;
        }

        internal static List<int> Children(int rank, int size)
        {
            var children = new List<int>();
            for (int mask = 1; mask < size; mask <<= 1) {
                if ((rank & mask) != 0)
                    break;
                if (rank + mask < size)
                    children.Add(rank + mask);
            }
            return children;
        }
    }

    /// <summary>The parameter type of a parameterless entry method: its messages
    /// carry null.</summary>
    internal sealed class NoMessage
    { }

    /// <summary>A message to an element: who sent it (an element's uid, or −(rank+1) for a rank's
    /// own code), its number from that sender to that element (1, 2, ...), where it started and
    /// how often it was forwarded.</summary>
    internal class Header<TIndex>
    {
        [Transportable]
        public TIndex Index;
        public long Sender, Seq;
        public int Origin, Hops;
        public int Entry;       // set from the tag on receipt, never trusted from the bytes
        public bool ZeroCopy;   // its message is an array handed over: it travels as itself
    }

    /// <summary>The envelope of a zero-copy message; the array follows as an OPI message of
    /// its own.</summary>
    internal sealed class ZeroCopyNote<TIndex>
    {
        [Transportable]
        public TIndex Index;
        public long Sender, Seq;
        public int Origin, Hops, Entry, Length;   // Length −1: one object, not an array
    }

    /// <summary>What may travel without a copy, as OPI moves it: a one-dimensional array of a
    /// primitive type or of a struct without references (recursively), or an instance of a class
    /// whose fields (inherited ones too) hold no references.</summary>
    internal static class ZeroCopyRules
    {
        internal static bool Accepts(Type t)
        {
            if (t == null)
                return false;
            if (t.IsArray)
                return t == t.GetElementType().MakeArrayType() && Plain(t.GetElementType());
            if (!t.IsClass || t == typeof(string) || typeof(Delegate).IsAssignableFrom(t) ||
                t.IsAbstract)
                return false;
            for (Type c = t; c != typeof(object); c = c.BaseType)
                foreach (FieldInfo f in c.GetFields(
                             BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic |
                             BindingFlags.DeclaredOnly))
                    if (!Plain(f.FieldType))
                        return false;
            return true;
        }

        static readonly System.Collections.Concurrent.ConcurrentDictionary<Type, bool> accepted =
            new System.Collections.Concurrent.ConcurrentDictionary<Type, bool>();
        static readonly Func<object, object> memberwiseClone =
            (Func<object, object>)Delegate.CreateDelegate(
                typeof(Func<object, object>),
                typeof(object).GetMethod("MemberwiseClone",
                                         BindingFlags.Instance | BindingFlags.NonPublic));

        /// <summary>A copy of message made without the serializer when it holds no references
        /// (a shallow copy is then a whole one); null when it needs the serializer.</summary>
        internal static object PlainCopy(object message)
        {
            Type t = message.GetType();
            if (!accepted.GetOrAdd(t, Accepts))
                return null;
            return t.IsArray ? ((Array)message).Clone() : memberwiseClone(message);
        }

        static bool Plain(Type t)
        {
            if (t.IsPrimitive || t.IsEnum)
                return t != typeof(IntPtr) && t != typeof(UIntPtr);
            if (!t.IsValueType)
                return false;
            foreach (FieldInfo f in t.GetFields(
                         BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic))
                if (!Plain(f.FieldType))
                    return false;
            return true;
        }
    }

    internal sealed class Envelope<TIndex, TMessage> : Header<TIndex>
    {
        [Transportable]
        public TMessage Message;
    }

    /// <summary>How a message to an element travels: its header as raw longs before the graph
    /// (Scheduler.Post), not as an object of the graph, which cost ~0.2 µs a message. The graph is
    /// the message itself when the index fits in the header (IndexCodec), else a
    /// Keyed pair.</summary>
    internal static class Wire
    {
        internal const int Sender = 0, Seq = 1, OriginAndHops = 2, Index = 3, Longs = 4;

        internal static void Write<TIndex>(long[] header, Header<TIndex> h)
        {
            header[Sender] = h.Sender;
            header[Seq] = h.Seq;
            header[OriginAndHops] = OriginHops(h.Origin, h.Hops);
            header[Index] = IndexCodec<TIndex>.Fits ? IndexCodec<TIndex>.Encode(h.Index) : 0;
        }

        /// <summary>h's fields from a received header (the index only when it fits there). Origin
        /// and hops are checked where they are used: the bytes came from a peer.</summary>
        internal static void Read<TIndex>(long[] header, Header<TIndex> h)
        {
            h.Sender = header[Sender];
            h.Seq = header[Seq];
            h.Origin = (int)header[OriginAndHops];
            h.Hops = Hops(header);
            if (IndexCodec<TIndex>.Fits)
                h.Index = IndexCodec<TIndex>.Decode(header[Index]);
        }

        /// <summary>One hop more on a received header (a forward that passes the
        /// bytes on).</summary>
        internal static void AddHop(long[] header)
        {
            int hops = Hops(header);
            header[OriginAndHops] =
                OriginHops((int)header[OriginAndHops], hops == int.MaxValue ? hops : hops + 1);
        }

        static int Hops(long[] header) => Math.Max(0, (int)(header[OriginAndHops] >> 32));

        static long OriginHops(int origin, int hops) => (uint)origin | ((long)hops << 32);
    }

    /// <summary>An index travels in the message's header as a long when it is of an integral type
    /// or an enum, or a struct of such fields (no more than 8 bytes of them: a 2-D index of two
    /// ints fits), packed field by field in metadata order (the same on every rank).</summary>
    internal static class IndexCodec<TIndex>
    {
        internal static readonly bool Fits;
        internal static readonly Func<TIndex, long> Encode;
        internal static readonly Func<long, TIndex> Decode;

        static IndexCodec()
        {
            Type t = typeof(TIndex);
            try {
                if (Width(t) > 0) {
                    Type u = Plain(t);
                    var index = Expression.Parameter(t, "index");
                    var bits = Expression.Parameter(typeof(long), "bits");
                    Encode = Expression
                                 .Lambda<Func<TIndex, long>>(
                                     Expression.Convert(Expression.Convert(index, u), typeof(long)),
                                     index)
                                 .Compile();
                    Decode = Expression
                                 .Lambda<Func<long, TIndex>>(
                                     Expression.Convert(Expression.Convert(bits, u), t), bits)
                                 .Compile();
                } else if (t.IsValueType && !t.IsPrimitive && !t.IsExplicitLayout) {
                    Packs(t, out Encode, out Decode);
                }
                // round trips must give the value back (a field the compiled code may not touch
                // would throw here, not in a send; a field spilling into its neighbours shows)
                if (Encode == null)
                    return;
                var eq = IndexRules<TIndex>.Equality;
                bool same = eq.Equals(Decode(Encode(default(TIndex))), default(TIndex));
                foreach (long pattern in new[] { -1L, 0x5555555555555555L,
                                                 unchecked((long)0xAAAAAAAAAAAAAAAAUL),
                                                 0x00FF00FF00FF00FFL, 0x7F7F7F7F7F7F7F7FL }) {
                    TIndex value = Decode(pattern);
                    same &= eq.Equals(Decode(Encode(value)), value);
                }
                Fits = same;
            } catch (Exception) {
                Fits = false;
            }
        }

        static Type Plain(Type t) => t.IsEnum ? Enum.GetUnderlyingType(t) : t;

        /// <summary>Bits of an integral type or enum (0: neither).</summary>
        static int Width(Type t)
        {
            Type u = Plain(t);
            if (u == typeof(long) || u == typeof(ulong))
                return 64;
            if (u == typeof(int) || u == typeof(uint))
                return 32;
            if (u == typeof(short) || u == typeof(ushort) || u == typeof(char))
                return 16;
            if (u == typeof(byte) || u == typeof(sbyte))
                return 8;
            return 0;
        }

        static Type Unsigned(Type u) => u == typeof(long) || u == typeof(ulong)   ? typeof(ulong)
                                        : u == typeof(int) || u == typeof(uint)   ? typeof(uint)
                                        : u == typeof(byte) || u == typeof(sbyte) ? typeof(byte)
                                                                                  : typeof(ushort);

        /// <summary>Encode and decode for a struct whose fields are all integral or enums, 64 bits
        /// at most.</summary>
        static bool Packs(Type t, out Func<TIndex, long> encode, out Func<long, TIndex> decode)
        {
            encode = null;
            decode = null;
            FieldInfo[] fields =
                t.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic);
            Array.Sort(fields, (a, b) => a.MetadataToken.CompareTo(b.MetadataToken));
            int total = 0;
            foreach (FieldInfo f in fields) {
                if (f.IsInitOnly || Width(f.FieldType) == 0)
                    return false;
                total += Width(f.FieldType);
            }
            if (fields.Length == 0 || total > 64)
                return false;
            var index = Expression.Parameter(t, "index");
            var bits = Expression.Parameter(typeof(long), "bits");
            var value = Expression.Variable(t, "value");
            var unsignedBits = Expression.Convert(bits, typeof(ulong));
            Expression packed = Expression.Constant(0UL);
            var unpack = new List<Expression> { Expression.Assign(value, Expression.Default(t)) };
            int offset = 0;
            foreach (FieldInfo f in fields) {
                Type u = Plain(f.FieldType), us = Unsigned(u);
                int width = Width(u);
                ulong mask = width == 64 ? ulong.MaxValue : (1UL << width) - 1;
                // masked: Mono's compiled conversions may sign-extend a negative field on the way
                Expression field = Expression.And(
                    Expression.Convert(
                        Expression.Convert(Expression.Convert(Expression.Field(index, f), u), us),
                        typeof(ulong)),
                    Expression.Constant(mask));
                packed =
                    Expression.Or(packed, Expression.LeftShift(field, Expression.Constant(offset)));
                Expression part =
                    Expression.And(Expression.RightShift(unsignedBits, Expression.Constant(offset)),
                                   Expression.Constant(mask));
                unpack.Add(Expression.Assign(
                    Expression.Field(value, f),
                    Expression.Convert(Expression.Convert(Expression.Convert(part, us), u),
                                       f.FieldType)));
                offset += width;
            }
            unpack.Add(value);
            encode =
                Expression
                    .Lambda<Func<TIndex, long>>(Expression.Convert(packed, typeof(long)), index)
                    .Compile();
            decode =
                Expression
                    .Lambda<Func<long, TIndex>>(Expression.Block(new[] { value }, unpack), bits)
                    .Compile();
            return true;
        }
    }

    /// <summary>The graph of a message whose index does not fit in its header.</summary>
    internal sealed class Keyed<TIndex, TMessage>
    {
        [Transportable]
        public TIndex Index;
        [Transportable]
        public TMessage Message;
    }

    /// <summary>A message held for later (out of order), kept as bytes when its
    /// element moves.</summary>
    internal sealed class HeldMessage
    {
        public int Entry;
        [Transportable]
        public byte[] Bytes;
    }

    /// <summary>An element on its way to another rank, with the runtime's record of it.</summary>
    internal sealed class Passport<TIndex, TElement>
    {
        [Transportable]
        public TElement Element;
        [Transportable]
        public TIndex Index;
        public long Uid, Epoch, LastBroadcast, Reductions;
        public double Load;
        [Transportable]
        public long[] SeqSenders, SeqNext;
        [Transportable]
        public TIndex[] SendTargets;
        [Transportable]
        public long[] SendNext;
        [Transportable]
        public HeldMessage[] Held;
    }

    /// <summary>Location news: index lives on Rank since Epoch (Rank −1: deleted);
    /// Register/Registered/ Duplicate/Tombstone reuse it with the sequence tables of a
    /// deleted element.</summary>
    internal sealed class LocationNote<TIndex>
    {
        [Transportable]
        public TIndex Index;
        public int Rank;
        public long Epoch;
        [Transportable]
        public long[] SeqSenders, SeqNext;
    }

    internal sealed class BroadcastNote
    {
        public long Number;   // 0 in a request to rank 0, which numbers them
        public int Entry;
        [Transportable]
        public byte[] Message;
    }

    internal sealed class ReductionNote
    {
        public long Number, Count;
        public int Reduction = -1;   // −1: no contribution in it
        [Transportable]
        public byte[] Value;
        [Transportable]
        public long[] DeltaAt, Delta;
        // the combine function or a value's encoding threw, or reductions were mixed: no value,
        // counts kept
        [Transportable]
        public string Failure;
        // reductions given to this number besides Reduction (the elements disagreed)
        [Transportable]
        public int[] Others;
    }

    /// <summary>What makes an index an index: value equality, and a home rank every rank
    /// computes alike.</summary>
    internal static class IndexRules<TIndex>
    {
        internal static readonly EqualityComparer<TIndex> Equality =
            EqualityComparer<TIndex>.Default;

        internal static void CheckType()
        {
            Type t = typeof(TIndex);
            if (t.IsArray || t.IsPointer || typeof(Delegate).IsAssignableFrom(t))
                throw new ArgumentException(
                    $"System.MP.Arrays: {t} cannot be an index type: it has no value equality " +
                    "(use a struct or a string)");
            if (!t.IsValueType && t != typeof(string)) {
                MethodInfo equals = t.GetMethod("Equals", new[] { typeof(object) });
                if (equals == null || equals.DeclaringType == typeof(object))
                    throw new ArgumentException(
                        $"System.MP.Arrays: index class {t} does not override Equals(object): " +
                        "two equal indices would be two elements");
            }
        }

        /// <summary>FNV-1a over the index's serialized bytes (its own bytes for int, long and
        /// string): the same on every rank, unlike GetHashCode.</summary>
        internal static uint StableHash(TIndex index)
        {
            uint h = 2166136261;
            object boxed = index;
            if (boxed is int)
                return Mix((uint)(int)boxed);
            if (boxed is long) {
                long v = (long)boxed;
                return Mix((uint)v ^ (uint)(v >> 32));
            }
            if (boxed is string) {
                foreach (char c in (string)boxed) {
                    h = (h ^ (byte)c) * 16777619;
                    h = (h ^ (byte)(c >> 8)) * 16777619;
                }
                return h;
            }
            foreach (byte b in Serializer.Serialize(boxed))
                h = (h ^ b) * 16777619;
            return h;
        }

        static uint Mix(uint x)   // spreads consecutive ints over the ranks without clustering
        {
            x ^= x >> 16;
            x *= 0x7feb352d;
            x ^= x >> 15;
            x *= 0x846ca68b;
            x ^= x >> 16;
            return x;
        }
    }

    /// <summary>One entry method: how its messages are made, sent, received, copied
    /// and delivered.</summary>
    internal abstract class Entry<TIndex, TElement>
        where TElement : Element<TIndex>
    {
        internal int Number;
        internal string Name;
        internal Type MessageType;   // null: parameterless
        internal abstract Header<TIndex> Make(object message);
        internal abstract object MessageOf(Header<TIndex> m);
        /// <summary>What travels after the header (Wire): the message, or a Keyed pair.</summary>
        internal abstract object Graph(Header<TIndex> m);
        /// <summary>The message the scheduler took (Channel.Take), read into a new
        /// header.</summary>
        internal abstract Header<TIndex> Receive(long[] header);
        internal abstract Header<TIndex> Copy(Header<TIndex> m);   // a local delivery's own copy
        internal abstract Header<TIndex> Decode(byte[] bytes);
        internal abstract void Invoke(TElement element, Header<TIndex> m);
        internal abstract void InvokeBroadcast(TElement element, byte[] message);
    }

    internal sealed class Entry<TIndex, TElement, TMessage> : Entry<TIndex, TElement>
        where TElement : Element<TIndex>
    {
        readonly Action<TElement, TMessage> call;
        readonly bool immutable;   // no copy needed for a local delivery

        internal Entry(MethodInfo method, bool parameterless)
        {
            Name = method.Name;
            MessageType = parameterless ? null : typeof(TMessage);
            if (parameterless) {
                var call0 = (Action<TElement>)Delegate.CreateDelegate(typeof(Action<TElement>),
                                                                      null, method);
                call = (e, m) => call0(e);
            } else {
                call = (Action<TElement, TMessage>)Delegate.CreateDelegate(
                    typeof(Action<TElement, TMessage>), null, method);
            }
            Type t = typeof(TMessage);
            immutable = parameterless || t.IsPrimitive || t.IsEnum || t == typeof(string) ||
                        t == typeof(decimal) || t == typeof(DateTime) || t == typeof(TimeSpan) ||
                        t == typeof(Guid);
        }

        internal override Header<TIndex> Make(object message) =>
            new Envelope<TIndex, TMessage> { Entry = Number, Message = (TMessage)message };

        // clang-format off
        internal override object MessageOf(Header<TIndex> m) =>
            ((Envelope<TIndex, TMessage>)m).Message;
        // clang-format on

        internal override object Graph(Header<TIndex> m)
        {
            var e = (Envelope<TIndex, TMessage>)m;
            if (IndexCodec<TIndex>.Fits)
                return e.Message;
            return new Keyed<TIndex, TMessage> { Index = e.Index, Message = e.Message };
        }

        static readonly bool nullable =
            !typeof(TMessage).IsValueType || Nullable.GetUnderlyingType(typeof(TMessage)) != null;

        internal override Header<TIndex> Receive(long[] header)
        {
            var m = new Envelope<TIndex, TMessage> { Entry = Number };
            object graph;
            if (IndexCodec<TIndex>.Fits) {
                graph = Channel.ReadIncomingAfter(header, typeof(TMessage));
            } else {
                var k = (Keyed<TIndex, TMessage>)
                            Channel.ReadIncomingAfter(header, typeof(Keyed<TIndex, TMessage>));
                if (k == null)
                    throw new MPSerializationException(
                        $"System.MP.Arrays: a message for entry {Name} without an index");
                m.Index = k.Index;
                graph = k.Message;
            }
            if (graph == null && !nullable)
                throw new MPSerializationException(
                    $"System.MP.Arrays: a null message for entry {Name}, which takes a " +
                    $"{typeof(TMessage)}");
            if (graph != null)
                m.Message = (TMessage)graph;
            Wire.Read(header, m);
            return m;
        }

        internal override Header<TIndex> Copy(Header<TIndex> m)
        {
            var e = (Envelope<TIndex, TMessage>)m;
            if (immutable || e.Message == null || e.ZeroCopy)
                return m;
            var copy = new Envelope<TIndex, TMessage> { Index = e.Index, Sender = e.Sender,
                                                        Seq = e.Seq,     Origin = e.Origin,
                                                        Hops = e.Hops,   Entry = e.Entry };
            object plain = ZeroCopyRules.PlainCopy(e.Message);
            if (plain != null) {
                copy.Message = (TMessage)plain;
            } else {
                byte[] bytes = Serializer.Serialize(e.Message);
                copy.Message = Serializer.Deserialize<TMessage>(bytes, 0, bytes.Length);
            }
            return copy;
        }

        internal override Header<TIndex> Decode(byte[] bytes)
        {
            var m = Serializer.Deserialize<Envelope<TIndex, TMessage>>(bytes, 0, bytes.Length);
            if (m == null)
                throw new MPSerializationException(
                    $"System.MP.Arrays: a null held message for entry {Name}");
            m.Entry = Number;
            return m;
        }

        internal override void Invoke(TElement element, Header<TIndex> m) =>
            call(element, ((Envelope<TIndex, TMessage>)m).Message);

        internal override void InvokeBroadcast(TElement element, byte[] message)
        {
            TMessage value =
                message == null ? default(TMessage)
                                : Serializer.Deserialize<TMessage>(message, 0, message.Length);
            call(element, value);
        }
    }

    /// <summary>The entry methods of an element class, numbered by name (the same on
    /// every rank).</summary>
    internal static class EntryTable<TIndex, TElement>
        where TElement : Element<TIndex>
    {
        internal static readonly Entry<TIndex, TElement>[] All;
        internal static readonly Dictionary<string, Entry<TIndex, TElement>> ByName =
            new Dictionary<string, Entry<TIndex, TElement>>();
        internal static readonly Exception Refusal;

        static EntryTable()
        {
            try {
                var methods = new List<MethodInfo>();
                for (Type t = typeof(TElement); t != null && t != typeof(Element<TIndex>);
                     t = t.BaseType)
                    foreach (MethodInfo m in t.GetMethods(
                                 BindingFlags.Instance | BindingFlags.Public |
                                 BindingFlags.NonPublic | BindingFlags.DeclaredOnly))
                        if (m.IsDefined(typeof(EntryMethodAttribute), false) &&
                            !methods.Exists(x => x.GetBaseDefinition() == m.GetBaseDefinition()))
                            methods.Add(m);
                methods.Sort((a, b) => string.CompareOrdinal(a.Name, b.Name));
                var all = new List<Entry<TIndex, TElement>>();
                foreach (MethodInfo m in methods) {
                    ParameterInfo[] ps = m.GetParameters();
                    string
                        where = $"{typeof(TElement)}.{m.Name}";
                    if (ByName.ContainsKey(m.Name))
                        throw new ArgumentException(
                            $"System.MP.Arrays: two entry methods are named {where}: entry " +
                            "methods are addressed by name");
                    if (m.ReturnType != typeof(void) || ps.Length > 1 ||
                        m.IsGenericMethodDefinition)
                        throw new ArgumentException(
                            $"System.MP.Arrays: entry method {where} must return void and take " +
                            "at most one parameter");
                    if (ps.Length == 1 &&
                        (ps[0].ParameterType.IsByRef || ps[0].ParameterType.IsPointer))
                        throw new ArgumentException(
                            $"System.MP.Arrays: entry method {where} takes a ref or pointer " +
                            "parameter");
                    Type message = ps.Length == 1 ? ps[0].ParameterType : typeof(NoMessage);
                    var entry = (Entry<TIndex, TElement>)Activator.CreateInstance(
                        typeof(Entry<,, >)
                            .MakeGenericType(typeof(TIndex), typeof(TElement), message),
                        BindingFlags.Instance | BindingFlags.NonPublic, null,
                        new object[] { m, ps.Length == 0 }, null);
                    entry.Number = all.Count;
                    all.Add(entry);
                    ByName[m.Name] = entry;
                }
                if (all.Count > Tags.MaxEntries)
                    throw new ArgumentException(
                        $"System.MP.Arrays: {typeof(TElement)} has {all.Count} entry methods, " +
                        $"more than {Tags.MaxEntries}");
                All = all.ToArray();
            } catch (Exception e) {
                Refusal = e is TargetInvocationException && e.InnerException != null
                              ? e.InnerException
                              : e;
                All = new Entry<TIndex, TElement>[0];
            }
        }

        /// <summary>The entry named name, checked against the message the caller gives (null: no
        /// message, or a null one, which a value-type parameter cannot take).</summary>
        internal static Entry<TIndex, TElement> FindFor(string name, object message,
                                                        bool hasMessage)
        {
            // the last entry found, by reference: names come from nameof, so the same string
            // object every time, and a repeated send skips hashing it and the type check
            Type type = message?.GetType();
            Checked last = lastChecked;
            if (last != null && ReferenceEquals(last.Name, name) && last.Type == type &&
                last.HasMessage == hasMessage)
                return last.Entry;
            Entry<TIndex, TElement> entry = Find(name, type, hasMessage);
            if (hasMessage && message == null && entry.MessageType.IsValueType)
                throw new ArgumentNullException(
                    "message",
                    $"System.MP.Arrays: entry method {name} takes a {entry.MessageType}, not null");
            lastChecked =
                new Checked { Name = name, Type = type, HasMessage = hasMessage, Entry = entry };
            return entry;
        }

        sealed class Checked
        {
            internal string Name;
            internal Type Type;
            internal bool HasMessage;
            internal Entry<TIndex, TElement> Entry;
        }
        [ThreadStatic]
        static Checked lastChecked;

        /// <summary>The entry named name, checked against the message type the
        /// caller gives.</summary>
        internal static Entry<TIndex, TElement> Find(string name, Type given, bool hasMessage)
        {
            if (name == null)
                throw new ArgumentNullException(nameof(name));
            Entry<TIndex, TElement> entry;
            if (!ByName.TryGetValue(name, out entry))
                throw new ArgumentException(
                    $"System.MP.Arrays: {typeof(TElement)} has no entry method named '{name}' " +
                        "(mark it [EntryMethod])",
                    nameof(name));
            if (hasMessage && entry.MessageType == null)
                throw new ArgumentException(
                    $"System.MP.Arrays: entry method {typeof(TElement)}.{name} takes no message, " +
                        $"one of type {given} was given",
                    nameof(name));
            if (!hasMessage && entry.MessageType != null)
                throw new ArgumentException(
                    $"System.MP.Arrays: entry method {typeof(TElement)}.{name} needs a message " +
                        $"of type {entry.MessageType}",
                    nameof(name));
            if (hasMessage && given != null && !entry.MessageType.IsAssignableFrom(given))
                throw new ArgumentException(
                    $"System.MP.Arrays: entry method {typeof(TElement)}.{name} takes a " +
                        $"{entry.MessageType}, not a {given}",
                    nameof(name));
            return entry;
        }
    }
}

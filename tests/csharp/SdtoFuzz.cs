// SdtoFuzz: the graph reader against hostile bytes, by kind of mutation, on graphs full of values
// whose bytes the runtime constrains (bool, decimal, DateTime, DateTimeOffset, bool?) in fields,
// structs, arrays and collections:
//   random   random bytes of random length, or a sample's bytes random after a random point
//            past the header (which keeps its record count)
//   bytes    1 to 5 random bytes of a valid message changed, anywhere
//   value    1 to 3 values of a valid message given other bytes (hostile ones, edges, valid
//            ones): at the offsets of the value fields, found by serializing two variants of
//            the graph that differ in that value only
// The graphs are small (under 8 records: the reader's own paths, and Ledger's collections) and
// large (8 records and more, no collections: the compiled factories) — arrays, lists with a cycle
// into their middle and shared references of classes with every kind of value field, structs
// without references and structs holding references (one marked, one not), object slots holding
// framework values, and a 5,000-node chain whose last node points back into it (the writer's seen
// bits, then its identity map; picked less often).
// Every case must end in MPSerializationException or in a graph whose every value is one the
// runtime accepts (decimal.GetBits round trips, DateTime.AddDays(0) works, a bool is 0 or 1 as a
// byte...), whose every reference field not [Transportable] is null and every marked one null or
// an object of its declared type (so every array element); a value-mutated graph read must also
// write back the very bytes read. The last 256 graphs read stay alive and GC.Collect() runs every
// 256 cases. Anything else is counted, and the first few printed.
//   mpiexec.mpich -n 1 motor tests/SdtoFuzz.exe [CASES [SEED]]
// runs CASES cases (default 3000) split evenly over the kinds and prints, per kind:
// "KIND: N cases, N refused, N accepted-valid, N other", then the same of those on samples of 8
// records or more. Exit status 1 when any is other.
#pragma warning disable 649   // fields exist to give types a shape
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.MP;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

struct Cell
{
    public int Id;
    public bool On;
    public decimal Amount;
    public DateTime When;
    public DateTimeOffset Stamp;
    public bool? Maybe;
}

class Ledger
{
    public bool Open;
    public decimal Money;
    public DateTime Opened;
    public DateTimeOffset Stamp;
    public bool? Flag;
    public TimeSpan Age;
    public Cell Inline;
    [Transportable]
    public Cell[] Cells;
    [Transportable]
    public bool[] Bits;
    [Transportable]
    public decimal[] Amounts;
    [Transportable]
    public List<DateTime> Dates;
    [Transportable]
    public Dictionary<DateTime, decimal> ByDay;
    [Transportable]
    public HashSet<DateTimeOffset> Stamps;
    [Transportable]
    public List<Cell> MoreCells;
    [Transportable]
    public string Name;
    [Transportable]
    public Ledger Next;
}

enum Tone : short
{
    Low = 1,
    High = 2
}

[Flags]
enum Mask : long
{
    A = 1,
    B = 1L << 40
}

struct Flat   // a struct without references
{
    public int A;
    public double B;
    public bool On;
    public decimal D;
}

struct Tagged   // a struct holding references, one marked and one not
{
    public long Before;
    [Transportable]
    public string Label;
    public string Hidden;   // not [Transportable]: arrives null
    public bool On;
    public DateTime When;
}

[Transportable]   // may sit in an object slot
class Rec         // every kind of value field; classes like it are made by the compiled factories
{
    public int I;
    public long L;
    public double D;
    public bool B;
    public decimal M;
    public DateTime T;
    public DateTimeOffset O;
    public bool? Q;
    public Tone Tone;
    public Mask Mask;
    public Flat Flat;
    public TimeSpan Span;
    public char Ch;
    public object Unmarked;   // not [Transportable]: arrives null
    [Transportable]
    public Rec Next;
    [Transportable]
    public Rec Back;
    [Transportable]
    public string Name;
}

class Knot   // a value field holding references inside
{
    public long Before;
    public Tagged Tag;
    public bool On;
    public decimal M;
    public string Hidden;   // not [Transportable]: arrives null
    [Transportable]
    public Knot Next;
}

[Transportable]
class Slot   // an object slot holding framework values (and objects of the graph)
{
    public int Id;
    public bool On;
    [Transportable]
    public object Any;
    [Transportable]
    public Slot Peer;
}

class Link   // the long chain
{
    public int V;
    public bool On;
    [Transportable]
    public Link Next;
    [Transportable]
    public Link Back;
}

/// <summary>The kinds of constrained value, as a value mutation sees them.</summary>
enum ValueKind
{
    Bool,
    Decimal,
    DateTime,
    Offset,
    HasValue
}

/// <summary>Builds the values of a sample graph: every value it hands out is counted, and the one
/// numbered mark comes in a second variant that differs from the first in one byte on the wire
/// (Back says how far that byte lies from the value's start).</summary>
sealed class Vary
{
    const long TicksPerMinute = 600000000L;
    readonly int mark;
    public readonly List<ValueKind> Kinds = new List<ValueKind>();

    public Vary(int mark) { this.mark = mark; }

    bool Hit(ValueKind k)
    {
        Kinds.Add(k);
        return Kinds.Count - 1 == mark;
    }

    public static int Back(ValueKind k) => k == ValueKind.Decimal    ? 3
                                           : k == ValueKind.DateTime ? 7
                                           : k == ValueKind.Offset   ? 8
                                                                     : 0;

    public bool Bool() => Hit(ValueKind.Bool);
    // the sign bit: the last byte of the flags word (v is not zero)
    public decimal Dec(decimal v) => Hit(ValueKind.Decimal) ? -v : v;
    // the kind: the last byte of the ticks word
    public DateTime Time(long ticks) =>
        new DateTime(ticks, Hit(ValueKind.DateTime)? DateTimeKind.Utc: DateTimeKind.Unspecified);
    // the offset's first byte (the same instant, one minute east), 8 bytes after its DateTime
    public DateTimeOffset Dto(long utcTicks) =>
        Hit(ValueKind.Offset)
            ? new DateTimeOffset(utcTicks + TicksPerMinute, TimeSpan.FromMinutes(1))
            : new DateTimeOffset(utcTicks, TimeSpan.Zero);
    // hasValue
    public bool? Maybe() => Hit(ValueKind.HasValue) ? (bool?) false : null;
}

/// <summary>A graph to mutate: how to build it (with its values from a Vary) and read it.</summary>
sealed class Sample
{
    public string Name;
    public Func<Vary, object> Build;
    public Func<byte[], object> Read;
    public byte[] Bytes;
    public List<KeyValuePair<int, ValueKind>> Sites;   // value start, kind
    public int Weight = 10;                            // how often it is picked
}

static class SdtoFuzz
{
    const long MaxTicks = 3155378975999999999L;
    const long TicksPerMinute = 600000000L;

    static Cell MakeCell(Vary v, int id) => new Cell {
        Id = id,
        On = v.Bool(),
        Amount = v.Dec(1.25m + id),
        When = v.Time(1000 + id),
        Stamp = v.Dto(5000 + id),
        Maybe = v.Maybe(),
    };

    static Ledger MakeLedger(Vary v, int id, bool next)
    {
        var l = new Ledger {
            Open = v.Bool(),
            Money = v.Dec(100.5m + id),
            Opened = v.Time(7000 + id),
            Stamp = v.Dto(9000 + id),
            Flag = v.Maybe(),
            Age = TimeSpan.FromTicks(12345),
            Inline = MakeCell(v, 1),
            Cells = new[] { MakeCell(v, 2), MakeCell(v, 3) },
            Bits = new[] { v.Bool(), v.Bool(), v.Bool() },
            Amounts = new[] { v.Dec(1m), v.Dec(-2.5m), v.Dec(decimal.MaxValue) },
            Dates = new List<DateTime> { v.Time(11), v.Time(DateTime.MaxValue.Ticks) },
            ByDay = new Dictionary<DateTime, decimal> { [v.Time(21)] = v.Dec(3m),
                                                        [v.Time(22)] = v.Dec(4m) },
            Stamps = new HashSet<DateTimeOffset> { v.Dto(31), v.Dto(32) },
            MoreCells = new List<Cell> { MakeCell(v, 4) },
            Name = "ledger",
        };
        if (next)
            l.Next = MakeLedger(v, id + 1, false);
        return l;
    }

    static readonly string[] Names = { "north", "south", "east" };

    static Rec MakeRec(Vary v, int i) => new Rec {
        I = -100000 - i,
        L = -(1L << 50) - i,
        D = Math.PI * (i + 1),
        B = v.Bool(),
        M = v.Dec(12345.6789m + i),
        T = v.Time(630000000000000000L + i),
        O = v.Dto(630000000000000000L + 7 * i),
        Q = v.Maybe(),
        Tone = Tone.High,
        Mask = Mask.A | Mask.B,
        Flat = new Flat { A = 3 * i, B = -0.5 * i, On = v.Bool(), D = v.Dec(0.5m + i) },
        Span = TimeSpan.FromMilliseconds(1234 + i),
        Ch = (char)('a' + i % 26),
        Unmarked = "not travelling",
    };

    /// <summary>n records: Next along the array, Back to the node at half the index (shared),
    /// names shared; with names, n + 1 + 3 records.</summary>
    static Rec[] Recs(Vary v, int n, bool links, bool names)
    {
        var a = new Rec[n];
        for (int i = 0; i < n; i++)
            a[i] = MakeRec(v, i);
        for (int i = 0; links && i < n; i++) {
            a[i].Next = i + 1 < n ? a[i + 1] : null;
            a[i].Back = a[i / 2];
        }
        for (int i = 0; names && i < n; i++)
            a[i].Name = Names[i % Names.Length];
        return a;
    }

    /// <summary>A list of n Recs whose last node points back into its middle.</summary>
    static Rec Cycle(Vary v, int n)
    {
        Rec[] a = Recs(v, n, false, true);
        for (int i = 0; i < n; i++)
            a[i].Next = a[i + 1 < n ? i + 1 : n / 2];
        a[n - 1].Back = a[1];
        return a[0];
    }

    static Knot[] Knots(Vary v, int n)
    {
        var a = new Knot[n];
        for (int i = 0; i < n; i++)
            a[i] = new Knot {
                Before = -i,
                Tag = new Tagged { Before = i, Label = Names[i % Names.Length], Hidden = "h",
                                   On = v.Bool(), When = v.Time(5000 + i) },
                On = v.Bool(),
                M = v.Dec(7.25m + i),
                Hidden = "hidden",
            };
        for (int i = 0; i < n; i++)
            a[i].Next = a[i + 1 < n ? i + 1 : n / 3];
        return a;
    }

    /// <summary>Object slots holding framework values, an array, a Rec, and other slots.</summary>
    static Slot[] Slots(Vary v)
    {
        object[] any = { v.Dec(3.5m),
                         v.Bool(),
                         v.Time(77),
                         v.Dto(88),
                         42,
                         2.5,
                         "text",
                         new[] { v.Bool(), v.Bool() },
                         new Guid(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11),
                         MakeRec(v, 99),
                         null,
                         'c',
                         (long)-5,
                         new[] { v.Dec(1m) } };
        var a = new Slot[any.Length];
        for (int i = 0; i < a.Length; i++)
            a[i] = new Slot { Id = i, On = v.Bool(), Any = any[i] };
        for (int i = 0; i < a.Length; i++)
            a[i].Peer = a[(i + 5) % a.Length];
        a[10].Any = a[3];   // an object slot holding a slot of the graph
        return a;
    }

    /// <summary>A chain of n Links, the last pointing back into the middle and that one near the
    /// start: only the first few and the last hand out values (the sites stay few).</summary>
    static Link Chain(Vary v, int n)
    {
        var quiet = new Vary(-1);
        var a = new Link[n];
        for (int i = 0; i < n; i++)
            a[i] = new Link { V = i, On = (i < 4 || i == n - 1 ? v : quiet).Bool() };
        for (int i = 0; i + 1 < n; i++)
            a[i].Next = a[i + 1];
        a[n - 1].Back = a[n / 2];
        a[n / 2].Back = a[3];
        return a[0];
    }

    static Sample S<T>(string name, Func<Vary, T> build, int weight = 10) => new Sample {
        Name = name,
        Build = v => build(v),
        Read = b => Serializer.Deserialize<T>(b, 0, b.Length),
        Weight = weight,
    };

    static readonly Sample[] Samples = {
        S("Ledger", v => MakeLedger(v, 0, true)),
        S("bool[]", v => new[] { v.Bool(), v.Bool(), v.Bool(), v.Bool() }),
        S("decimal[]", v => new[] { v.Dec(1m), v.Dec(0.001m), v.Dec(decimal.MinValue) }),
        S("DateTimeOffset[]", v => new[] { v.Dto(1), v.Dto(MaxTicks - TicksPerMinute) }),
        S("bool?[]", v => new[] { v.Maybe(), v.Maybe() }),
        S("Cell[,]", v => new[,] { { MakeCell(v, 1) }, { MakeCell(v, 2) } }),
        S("List<decimal>", v => new List<decimal> { v.Dec(5m), v.Dec(6m) }),
        S("Dictionary<DateTime,bool>",
          v => new Dictionary<DateTime, bool> { [v.Time(1)] = v.Bool(), [v.Time(2)] = v.Bool() }),
        S("decimal", v => v.Dec(12.5m)),
        S("DateTime", v => v.Time(99)),
        // small: under 8 records, the reader's own path for the classes below
        S("Rec", v => MakeRec(v, 1)),
        S("Rec[5] linked", v => Recs(v, 5, true, false)),
        S("Slot[1]", v => new[] { new Slot { On = v.Bool(), Any = v.Dec(2m) } }),
        // large: 8 records and more, no collections (the compiled factories)
        S("Rec[7] linked (8 records)", v => Recs(v, 7, true, false)),
        S("Rec[24] shared", v => Recs(v, 24, true, true)),
        S("Rec cycle of 12", v => Cycle(v, 12)),
        S("Rec[40] unlinked", v => Recs(v, 40, false, false)),
        S("Knot[16]", v => Knots(v, 16)),
        S("Slot[14]", v => Slots(v)),
        S("object[] of 30 Recs", v => Recs(v, 30, true, true).Cast<object>().ToArray()),
        S("Link chain of 5000", v => Chain(v, 5000), 1),
    };

    /// <summary>Where each value of the sample lies: the one byte in which the variant of that
    /// value differs, less Back.</summary>
    static void FindSites(Sample s)
    {
        var plain = new Vary(-1);
        s.Bytes = Serializer.Serialize(s.Build(plain));
        s.Sites = new List<KeyValuePair<int, ValueKind>>();
        for (int k = 0; k < plain.Kinds.Count; k++) {
            byte[] b = Serializer.Serialize(s.Build(new Vary(k)));
            int at = -1, n = 0;
            for (int i = 0; i < b.Length && b.Length == s.Bytes.Length; i++)
                if (b[i] != s.Bytes[i]) {
                    at = i;
                    n++;
                }
            if (n != 1)
                throw new Exception($"{s.Name}: value {k} ({plain.Kinds[k]}) differs in {n} bytes");
            s.Sites.Add(
                new KeyValuePair<int, ValueKind>(at - Vary.Back(plain.Kinds[k]), plain.Kinds[k]));
        }
    }

    // ---- value mutations: hostile bytes, the edges around them, and valid ones ----

    static long Near(Random r, long edge) => edge + r.Next(-3, 4);

    static void PutLong(byte[] b, int at, long v) => BitConverter.GetBytes(v).CopyTo(b, at);

    static void MutateValue(Random r, byte[] b, int at, ValueKind k)
    {
        switch (k) {
        case ValueKind.Bool:
        case ValueKind.HasValue: b[at] = (byte)(r.Next(3) == 0 ? r.Next(2) : r.Next(256)); break;
        case ValueKind.Decimal: {
            int flags;
            switch (r.Next(4)) {
            case 0: flags = r.Next() ^ (r.Next(2) << 31); break;               // anything
            case 1: flags = r.Next(256) << 16 | (r.Next(2) << 31); break;      // any scale
            case 2: flags = r.Next(26, 31) << 16 | (1 << r.Next(32)); break;   // a stray bit
            default: flags = r.Next(29) << 16 | (r.Next(2) << 31); break;      // valid
            }
            PutLong(b, at, (uint)flags | (long)r.Next() << 32);   // flags, and hi
            if (r.Next(2) == 0)
                PutLong(b, at + 8, (long)r.Next() << 32 | (uint)r.Next());   // lo, mid
            break;
        }
        case ValueKind.DateTime: {
            long ticks = r.Next(3) == 0 ? (long)(r.NextDouble() * long.MaxValue)
                                        : Near(r, r.Next(2) == 0 ? MaxTicks : 0);
            PutLong(b, at, (ticks & 0x3FFFFFFFFFFFFFFF) | (long)r.Next(4) << 62);
            break;
        }
        case ValueKind.Offset: {
            long utc = r.Next(3) == 0 ? (long)(r.NextDouble() * long.MaxValue)
                                      : Near(r, r.Next(2) == 0 ? MaxTicks - 840 * TicksPerMinute
                                                               : 840 * TicksPerMinute);
            if (r.Next(4) == 0)
                utc |= (long)r.Next(4) << 62;
            short minutes = (short)(r.Next(3) == 0 ? r.Next(short.MinValue, short.MaxValue + 1)
                                                   : (r.Next(2) == 0 ? 840 : -840) + r.Next(-2, 3));
            if (r.Next(4) == 0)
                utc = (utc & 0x3FFFFFFFFFFFFFFF) % (MaxTicks + 1);   // in range: any offset
            PutLong(b, at, utc);
            BitConverter.GetBytes(minutes).CopyTo(b, at + 8);
            break;
        }
        }
    }

    // ---- what an accepted graph must hold ----

    [StructLayout(LayoutKind.Explicit)]
    struct BoolBytes
    {
        [FieldOffset(0)]
        public bool Value;
        [FieldOffset(0)]
        public byte Byte;
    }

    sealed class Identity : IEqualityComparer<object>
    {
        public new bool Equals(object a, object b) => ReferenceEquals(a, b);
        public int GetHashCode(object o) => RuntimeHelpers.GetHashCode(o);
    }

    static readonly Dictionary<Type, FieldInfo[]> FieldsOf = new Dictionary<Type, FieldInfo[]>();

    static FieldInfo[] Fields(Type t)
    {
        if (FieldsOf.TryGetValue(t, out FieldInfo[] fs))
            return fs;
        var l = new List<FieldInfo>();
        for (Type c = t; c != null; c = c.BaseType)
            l.AddRange(c.GetFields(BindingFlags.Instance | BindingFlags.Public |
                                   BindingFlags.NonPublic | BindingFlags.DeclaredOnly));
        return FieldsOf[t] = l.ToArray();
    }

    /// <summary>Why a value of the graph is not one the runtime accepts, or null: the graph walked
    /// with a stack (a chain of 5,000 is deep).</summary>
    static string Invalid(object root, HashSet<object> seen)
    {
        var work = new Stack<object>();
        work.Push(root);
        while (work.Count > 0) {
            string why = Invalid1(work.Pop(), seen, work);
            if (why != null)
                return why;
        }
        return null;
    }

    /// <summary>Why o is not valid itself, or null; what it holds pushed on work.</summary>
    static string Invalid1(object o, HashSet<object> seen, Stack<object> work)
    {
        if (o == null)
            return null;
        Type t = o.GetType();
        if (o is bool flag) {
            byte by = new BoolBytes { Value = flag }.Byte;
            return by <= 1 ? null : $"a bool byte {by}";
        }
        if (o is decimal d) {
            try {
                int[] bits = decimal.GetBits(d);
                var again = new decimal(bits);
                if (!decimal.GetBits(again).SequenceEqual(bits) || d * 1m != d ||
                    decimal.Parse(d.ToString(CultureInfo.InvariantCulture),
                                  CultureInfo.InvariantCulture) != d)
                    return $"a decimal that does not compute: {d}";
            } catch (Exception e) {
                return $"a decimal the runtime refuses: {e.GetType().Name}";
            }
            return null;
        }
        if (o is DateTime dt) {
            try {
                dt.AddDays(0).ToString("o");
                return dt.Ticks <= MaxTicks ? null : $"a DateTime of {dt.Ticks} ticks";
            } catch (Exception e) {
                return $"a DateTime the runtime refuses: {e.GetType().Name}";
            }
        }
        if (o is DateTimeOffset dto) {
            try {
                var again = new DateTimeOffset(dto.DateTime.Ticks, dto.Offset);
                if (again.UtcTicks != dto.UtcTicks ||
                    dto.UtcDateTime.AddDays(0).Kind != DateTimeKind.Utc)
                    return "a DateTimeOffset that does not compute";
            } catch (Exception e) {
                return $"a DateTimeOffset the runtime refuses: {e.GetType().Name}";
            }
            return null;
        }
        if (t.IsPrimitive || t.IsEnum || o is string || o is TimeSpan)
            return null;
        if (!t.IsValueType && !seen.Add(o))
            return null;
        if (o is Array arr) {
            Type et = t.GetElementType();
            foreach (object e in arr) {
                if (e != null && !et.IsValueType && !et.IsInstanceOfType(e))
                    return $"a {e.GetType().Name} in a {t.Name}";
                work.Push(e);
            }
            return null;
        }
        if (o is IEnumerable && t.Namespace == "System.Collections.Generic") {
            foreach (object e in (IEnumerable)o)
                work.Push(e);
            return null;
        }
        bool ours = t.Assembly == typeof(SdtoFuzz).Assembly;
        foreach (FieldInfo f in Fields(t)) {
            object v = f.GetValue(o);
            if (ours && !f.FieldType.IsValueType && v != null) {
                if (!f.IsDefined(typeof(TransportableAttribute), false))
                    return $"{t.Name}.{f.Name}, not [Transportable], holds a {v.GetType().Name}";
                if (!f.FieldType.IsInstanceOfType(v))
                    return $"{t.Name}.{f.Name} ({f.FieldType.Name}) holds a {v.GetType().Name}";
            }
            work.Push(v);
        }
        return null;
    }

    // ---- the kinds, and the counts ----

    static readonly string[] Kinds = { "random", "bytes", "value" };

    static byte[] Mutant(int kind, Random r, Sample s)
    {
        if (kind == 0) {
            if (r.Next(2) == 0) {
                var b = new byte[r.Next(0, 300)];
                r.NextBytes(b);
                return b;
            }
            // the sample's header (its record count: small or large) and random bytes after it,
            // from a random point on
            var t = (byte[])s.Bytes.Clone();
            int from = r.Next(32, t.Length + 1);
            var tail = new byte[t.Length - from];
            r.NextBytes(tail);
            tail.CopyTo(t, from);
            return t;
        }
        var m = (byte[])s.Bytes.Clone();
        if (kind == 1)
            for (int k = r.Next(1, 6); k > 0; k--)
                m[r.Next(m.Length)] ^= (byte)r.Next(1, 256);
        else
            for (int k = r.Next(1, 4); k > 0; k--) {
                var site = s.Sites[r.Next(s.Sites.Count)];
                MutateValue(r, m, site.Key, site.Value);
            }
        return m;
    }

    static int Main(string[] args)
    {
        long cases = args.Length > 0 ? long.Parse(args[0]) : 3000;
        int seed = args.Length > 1 ? int.Parse(args[1]) : 36;
        foreach (Sample s in Samples)
            FindSites(s);
        Check.True(Samples.All(s => s.Sites.Count > 0),
                   "every sample's values found: " +
                       string.Join(", ", Samples.Select(s => $"{s.Name} {s.Sites.Count}")));
        var r = new Random(seed + 1000 * MP.World.Rank);
        int weights = Samples.Sum(x => x.Weight);
        var kept = new object[256];   // the last graphs read, alive through each GC.Collect()
        long[,] counts = new long[Kinds.Length, 4];   // cases, refused, accepted-valid, other
        // the same of the cases on samples of 8 records and more (the compiled paths)
        long[,] large = new long[Kinds.Length, 4];
        int shown = 0;
        for (long i = 0; i < cases; i++) {
            int kind = (int)(i % Kinds.Length);
            Sample s = Samples[0];
            for (int w = r.Next(weights), j = 0; j < Samples.Length; w -= Samples[j++].Weight)
                if (w < Samples[j].Weight) {
                    s = Samples[j];
                    break;
                }
            if (i % kept.Length == kept.Length - 1)
                GC.Collect();
            byte[] m = Mutant(kind, r, s);
            int big = BitConverter.ToInt32(s.Bytes, 12) >= 8 ? 1 : 0;   // its record count
            counts[kind, 0]++;
            large[kind, 0] += big;
            string other = null;
            try {
                object g = s.Read(m);
                kept[i % kept.Length] = g;
                other = Invalid(g, new HashSet<object>(new Identity()));
                if (other == null && kind == 2 && !Serializer.Serialize(g).SequenceEqual(m))
                    other = "a graph that does not write back the bytes it was read from";
                // (reflection sees a bool? boxed, not its hasValue byte: the bytes written back
                // are those read, and there every bool and hasValue must be 0 or 1)
                if (other == null && kind == 2)
                    foreach (var site in s.Sites)
                        if ((site.Value == ValueKind.Bool || site.Value == ValueKind.HasValue) &&
                            m[site.Key] > 1)
                            other = $"a {site.Value} byte {m[site.Key]} written back";
            } catch (MPSerializationException) {
                counts[kind, 1]++;
                large[kind, 1] += big;
                continue;
            } catch (Exception e) {
                other = $"{e.GetType().Name}: {e.Message}";
            }
            if (other == null) {
                counts[kind, 2]++;
                large[kind, 2] += big;
                continue;
            }
            counts[kind, 3]++;
            large[kind, 3] += big;
            if (shown++ < 10)
                Console.Error.WriteLine($"{Kinds[kind]} case {i} ({s.Name}): {other}");
        }
        for (int k = 0; k < Kinds.Length; k++) {
            Console.WriteLine($"rank {MP.World.Rank} {Kinds[k]}: {counts[k, 0]} cases, " +
                              $"{counts[k, 1]} refused, {counts[k, 2]} accepted-valid, " +
                              $"{counts[k, 3]} other");
            Console.WriteLine($"rank {MP.World.Rank} {Kinds[k]} of them on 8 records or more: " +
                              $"{large[k, 0]} cases, {large[k, 1]} refused, " +
                              $"{large[k, 2]} accepted-valid, {large[k, 3]} other");
            Check.Equal(0L, counts[k, 3], $"{Kinds[k]} mutations: nothing but refused or valid");
            Check.True(large[k, 0] > 0 && large[k, 0] < counts[k, 0],
                       $"{Kinds[k]} mutations on small and large messages");
        }
        return Check.Finish("SdtoFuzz");
    }
}

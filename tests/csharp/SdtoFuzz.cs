// SdtoFuzz: the graph reader against hostile bytes, by kind of mutation, on graphs full of values
// whose bytes the runtime constrains (bool, decimal, DateTime, DateTimeOffset, bool?) in fields,
// structs, arrays and collections:
//   random   random bytes of random length
//   bytes    1 to 5 random bytes of a valid message changed, anywhere
//   value    1 to 3 values of a valid message given other bytes (hostile ones, edges, valid
//            ones): at the offsets of the value fields, found by serializing two variants of
//            the graph that differ in that value only
// Every case must end in MPSerializationException or in a graph whose every value is one the
// runtime accepts (decimal.GetBits round trips, DateTime.AddDays(0) works, a bool is 0 or 1 as a
// byte...); a value-mutated graph read must also write back the very bytes read. Anything else
// is counted, and the first few printed.
//   mpiexec.mpich -n 1 motor tests/SdtoFuzz.exe [CASES [SEED]]
// runs CASES cases (default 3000) split evenly over the kinds and prints, per kind:
// "KIND: N cases, N refused, N accepted-valid, N other". Exit status 1 when any is other.
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

    static Sample S<T>(string name, Func<Vary, T> build) => new Sample {
        Name = name,
        Build = v => build(v),
        Read = b => Serializer.Deserialize<T>(b, 0, b.Length),
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

    /// <summary>Why a value of the graph is not one the runtime accepts, or null.</summary>
    static string Invalid(object o, HashSet<object> seen)
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
        if (o is Array || (o is IEnumerable && t.Namespace == "System.Collections.Generic")) {
            foreach (object e in (IEnumerable)o) {
                string why = Invalid(e, seen);
                if (why != null)
                    return why;
            }
            return null;
        }
        for (Type c = t; c != null; c = c.BaseType)
            foreach (FieldInfo f in c.GetFields(
                         BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic |
                         BindingFlags.DeclaredOnly)) {
                string why = Invalid(f.GetValue(o), seen);
                if (why != null)
                    return why;
            }
        return null;
    }

    // ---- the kinds, and the counts ----

    static readonly string[] Kinds = { "random", "bytes", "value" };

    static byte[] Mutant(int kind, Random r, Sample s)
    {
        if (kind == 0) {
            var b = new byte[r.Next(0, 300)];
            r.NextBytes(b);
            return b;
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
        long[,] counts = new long[Kinds.Length, 4];   // cases, refused, accepted-valid, other
        int shown = 0;
        for (long i = 0; i < cases; i++) {
            int kind = (int)(i % Kinds.Length);
            Sample s = Samples[r.Next(Samples.Length)];
            byte[] m = Mutant(kind, r, s);
            counts[kind, 0]++;
            string other = null;
            try {
                object g = s.Read(m);
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
                continue;
            } catch (Exception e) {
                other = $"{e.GetType().Name}: {e.Message}";
            }
            if (other == null) {
                counts[kind, 2]++;
                continue;
            }
            counts[kind, 3]++;
            if (shown++ < 10)
                Console.Error.WriteLine($"{Kinds[kind]} case {i} ({s.Name}): {other}");
        }
        for (int k = 0; k < Kinds.Length; k++) {
            Console.WriteLine($"rank {MP.World.Rank} {Kinds[k]}: {counts[k, 0]} cases, " +
                              $"{counts[k, 1]} refused, {counts[k, 2]} accepted-valid, " +
                              $"{counts[k, 3]} other");
            Check.Equal(0L, counts[k, 3], $"{Kinds[k]} mutations: nothing but refused or valid");
        }
        return Check.Finish("SdtoFuzz");
    }
}

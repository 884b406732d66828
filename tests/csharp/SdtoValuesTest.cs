// SdtoValuesTest — values no program could make (issue 36, item 1): a bool byte other than 0 or
// 1, a decimal with scale > 28 or reserved flag bits, a DateTime beyond MaxValue, a
// DateTimeOffset whose offset or range is impossible, a Nullable whose hasValue is not a bool.
// Each is refused with MPSerializationException naming the path and the value: at the root, in a
// field, in a struct, in an array, in an array of structs and in collections; through Serializer
// and over MPI (the communicator stays usable, a graph received into stays as it was). Every
// valid edge value still arrives: MinValue/MaxValue, decimal scale 28, negative zero, the four
// DateTime kinds, any TimeSpan, lone surrogates, enum values outside the declared ones.
#pragma warning disable 649   // fields exist to give types a shape
using System;
using System.Collections.Generic;
using System.Linq;
using System.MP;

enum Tint
{
    Red,
    Green
}

struct Inner
{
    public int Marker;
    public bool On;
    public decimal Amount;
    public DateTime When;
    public DateTimeOffset Stamp;
    public bool? Maybe;
}

struct Outer
{
    public long Id;
    public Inner Deep;
}

class Account
{
    public decimal Money;
    public bool Open;
    public DateTime Opened;
    public DateTimeOffset Stamp;
    public bool? Maybe;
    public TimeSpan Age;
    public char Initial;
    public Tint Tint;
    public Outer Nested;
    [Transportable]
    public Inner[] Many;
    [Transportable]
    public List<decimal> Amounts;
    [Transportable]
    public Dictionary<DateTime, bool> Days;
    [Transportable]
    public string Name;
}

class BaseFlags
{
    public bool Inherited;
}

class DerivedFlags : BaseFlags
{
    public int Own;
    public DateTime When;
}

static class SdtoValuesTest
{
    static readonly Intracomm world = Ring.World;
    static readonly int next = Ring.Next, prev = Ring.Prev;
    const long MaxTicks = 3155378975999999999L;   // DateTime.MaxValue.Ticks
    const long TicksPerMinute = 600000000L;

    // ---- where a value lies in a message ----

    // What the one value a case varies is, and how far from the byte that differs between its
    // two variants (below) the value starts.
    enum Kind
    {
        Bool,       // false / true: the byte itself
        Decimal,    // 1m / -1m: the sign bit, the last byte of the flags word
        DateTime,   // kind Unspecified / Utc: the last byte of the ticks word
        Offset,     // DateTimeOffset 0 / the same instant 1 minute east: the offset's first byte,
                    // 8 bytes after its DateTime
        HasValue,   // bool? null / false: the hasValue byte
    }

    static int Back(Kind k) => k == Kind.Decimal    ? 3
                               : k == Kind.DateTime ? 7
                               : k == Kind.Offset   ? 8
                                                    : 0;

    // The variants of each kind's value: v(false) and v(true) differ in one byte only.
    static bool B(bool f) => f;
    static decimal D(bool f) => f ? -1m : 1m;
    static DateTime T(bool f) => new DateTime(1, f? DateTimeKind.Utc: DateTimeKind.Unspecified);
    static DateTimeOffset O(bool f) => f ? new DateTimeOffset(TicksPerMinute,
                                                              TimeSpan.FromMinutes(1))
                                         : new DateTimeOffset(0, TimeSpan.Zero);
    static bool? N(bool f) => f ? (bool?) false : null;

    /// <summary>The start of the value a case varies, in the bytes of make(false): the one
    /// byte where make(false) and make(true) differ, less Back(kind).</summary>
    static int Site(Func<bool, object> make, Kind kind)
    {
        byte[] a = Serializer.Serialize(make(false)), b = Serializer.Serialize(make(true));
        if (a.Length != b.Length)
            throw new Exception("the two variants differ in length");
        int at = -1, n = 0;
        for (int i = 0; i < a.Length; i++)
            if (a[i] != b[i]) {
                at = i;
                n++;
            }
        if (n != 1)
            throw new Exception($"the two variants differ in {n} bytes, not one");
        return at - Back(kind);
    }

    static byte[] With(byte[] m, int at, byte[] value)
    {
        var b = (byte[])m.Clone();
        value.CopyTo(b, at);
        return b;
    }

    static byte[] Flags(int flags) => BitConverter.GetBytes(flags);
    static byte[] Ticks(long ticks,
                        int kind = 0) => BitConverter.GetBytes((ulong)ticks | (ulong)kind << 62);
    static byte[] Dto(long utcTicks, short minutes, int kind = 0) =>
        Ticks(utcTicks, kind).Concat(BitConverter.GetBytes(minutes)).ToArray();

    // ---- the hostile values of each kind, and the valid edges patched in the same places ----

    struct Patch
    {
        public byte[] Bytes;
        public string Says;   // in the refusal, after "<path> holds "; null: a valid value
    }

    static Patch Bad(byte[] b, string says) => new Patch { Bytes = b, Says = says };
    static Patch Good(byte[] b) => new Patch { Bytes = b };

    static IEnumerable<Patch> Patches(Kind k)
    {
        switch (k) {
        case Kind.Bool:
        case Kind.HasValue:
            yield return Bad(new byte[] { 2 }, "a bool byte 2 (");
            yield return Bad(new byte[] { 255 }, "a bool byte 255 (");
            yield return Good(new byte[] { 1 });
            yield return Good(new byte[] { 0 });
            break;
        case Kind.Decimal:
            yield return Bad(Flags(29 << 16), "a decimal with scale 29 (at most 28)");
            yield return Bad(Flags(unchecked((int)0x80FF0000)), "a decimal with scale 255");
            yield return Bad(Flags(1), "a decimal whose flags 0x00000001 set reserved bits");
            yield return Bad(Flags(unchecked((int)0x801C8000)), "flags 0x801C8000 set reserved");
            yield return Good(Flags(28 << 16));
            yield return Good(Flags(unchecked((int)0x801C0000)));
            break;
        case Kind.DateTime:
            yield return Bad(Ticks(MaxTicks + 1), "a DateTime of 3155378976000000000 ticks (");
            yield return Bad(Ticks(0x3FFFFFFFFFFFFFFF, 3),
                             "a DateTime of 4611686018427387903 ticks");
            for (int kind = 0; kind < 4; kind++)
                yield return Good(Ticks(MaxTicks, kind));
            break;
        case Kind.Offset:
            yield return Bad(Dto(1000 * TicksPerMinute, 841), "offset of 841 minutes");
            yield return Bad(Dto(1000 * TicksPerMinute, -841), "offset of -841 minutes");
            yield return Bad(Dto(1000, 0, 1), "UTC DateTime has kind bits 1");
            yield return Bad(Dto(MaxTicks + 1, 0), "a DateTime of 3155378976000000000 ticks");
            yield return Bad(Dto(MaxTicks, 1), "outside DateTime's range");
            yield return Bad(Dto(0, -1), "outside DateTime's range");
            yield return Good(Dto(MaxTicks - 840 * TicksPerMinute, 840));
            yield return Good(Dto(840 * TicksPerMinute, -840));
            yield return Good(Dto(0, 0));
            break;
        }
    }

    static int cases;

    /// <summary>Every patch of kind in the value that make varies (at path): the hostile ones
    /// refused, naming the path and the value, the valid ones read.</summary>
    static void Case<TRoot>(string path, Kind kind, Func<bool, TRoot> make)
    {
        int site;
        try {
            site = Site(f => make(f), kind);
        } catch (Exception e) {
            Check.True(false, $"{path} ({kind}): the value's place found: {e.Message}");
            return;
        }
        byte[] valid = Serializer.Serialize(make(false));
        foreach (Patch p in Patches(kind)) {
            cases++;
            byte[] b = With(valid, site, p.Bytes);
            string what = $"{typeof(TRoot).Name} {path} ({kind}) patched to " +
                          BitConverter.ToString(p.Bytes);
            if (p.Says == null) {
                try {
                    Serializer.Deserialize<TRoot>(b, 0, b.Length);
                    Check.True(true, what);
                } catch (Exception e) {
                    Check.True(false,
                               $"{what}: a valid value read, got {e.GetType().Name}: " + e.Message);
                }
                continue;
            }
            var ex = Check.Throws<MPSerializationException>(
                () => Serializer.Deserialize<TRoot>(b, 0, b.Length), what + ": refused");
            if (ex != null)
                Check.True(ex.Message.Contains(path + " holds ") && ex.Message.Contains(p.Says),
                           $"{what}: names '{path}' and says '{p.Says}': {ex.Message}");
        }
    }

    static Inner In(bool f, Kind k) => new Inner {
        Marker = 7,
        On = k == Kind.Bool && f,
        Amount = k == Kind.Decimal ? D(f) : 3m,
        When = k == Kind.DateTime ? T(f) : new DateTime(5),
        Stamp = k == Kind.Offset ? O(f) : new DateTimeOffset(9, TimeSpan.Zero),
        Maybe = k == Kind.HasValue ? N(f) : true,
    };

    static Account Acct(bool f, Kind k, string where)
    {
        Func<string, bool> at = w =>
            w ==
                where &&
            f;
        var a = new Account {
            Money = k == Kind.Decimal &&
                    where == "Money"
            ? D(f) : 12.5m,
                Open =
                    k == Kind.Bool &&
                    at("Open"),
                       Opened = k == Kind.DateTime &&
                                where == "Opened"
                       ? T(f) : new DateTime(
                             3),
                             Stamp = k == Kind.Offset &&
                                     where == "Stamp"
                             ? O(f) : default(
                                   DateTimeOffset),
                                   Maybe = k == Kind.HasValue &&
                                           where == "Maybe"
                                   ? N(f) : null,
                                       Nested = new Outer {
                                           Id = 4,
                                           Deep = In(
                                               where == "Nested.Deep" && f, k) },
                                           Many = new[] { In(
                                               false, k),
                                               In(
                                                   where == "Many" && f, k) },
                                               Amounts = new List<decimal> {
                                                   1m, k == Kind.Decimal &&
                                                           where == "Amounts"
                                                   ? D(f) : 2m },
                                                   Days = new Dictionary<
                                                       DateTime,
                                                       bool> { [new DateTime(10)] = false,
                                                                [k == Kind.DateTime &&
                                                                 where == "Days"
                                                                 ? T(f) : new DateTime(1)] =
                                                                       k == Kind.Bool &&
                                                                       at("Days"), }, Name = "n", };
        return a;
    }

    static readonly Kind[] All = { Kind.Bool, Kind.Decimal, Kind.DateTime, Kind.Offset,
                                   Kind.HasValue };

    static string Field(Kind k) => k == Kind.Bool       ? "On"
                                   : k == Kind.Decimal  ? "Amount"
                                   : k == Kind.DateTime ? "When"
                                   : k == Kind.Offset   ? "Stamp"
                                                        : "Maybe.hasValue";

    static void Refusals()
    {
        // at the root: a boxed value, and arrays and collections of values
        Case("root", Kind.Bool, B);
        Case("root", Kind.Decimal, D);
        Case("root", Kind.DateTime, T);
        Case("root", Kind.Offset, O);
        Case("root[2]", Kind.Bool, f => new[] { true, false, B(f) });
        Case("root[1]", Kind.Decimal, f => new[] { 1m, D(f) });
        Case("root[1]", Kind.DateTime, f => new[] { new DateTime(2), T(f) });
        Case("root[1]", Kind.Offset, f => new[] { O(false), O(f) });
        Case("root[1].hasValue", Kind.HasValue, f => new bool?[] { true, N(f) });
        Case("root[1,0]", Kind.Decimal, f => new decimal[,] { { 1m }, { D(f) } });
        // long arrays, read in chunks of a megabyte: the first bad value found past the first
        Case("root[2500001]", Kind.Bool,
             f =>
             {
                 var a = new bool[3000000];
                 a[2500001] = B(f);
                 return a;
             });
        Case("root[199999]", Kind.Decimal,
             f => Enumerable.Repeat(1m, 199999).Append(D(f)).Append(2m).ToArray());
        Case("root[2]", Kind.Bool, f => new List<bool> { true, false, B(f) });
        Case("root[1]", Kind.Decimal, f => new List<decimal> { 1m, D(f) });
        Case("root[1]", Kind.DateTime, f => new HashSet<DateTime> { new DateTime(2), T(f) });
        Case("root[0]", Kind.Offset, f => new Queue<DateTimeOffset>(new[] { O(f) }));
        Case("root[1].key", Kind.DateTime,
             f => new Dictionary<DateTime, int> { [new DateTime(3)] = 1, [T(f)] = 2 });
        Case("root[0].value", Kind.Decimal, f => new Dictionary<int, decimal> { [1] = D(f) });
        Case("root[1].value", Kind.Bool,
             f => new Dictionary<string, bool> { ["a"] = true, ["b"] = B(f) });
        foreach (Kind k in All) {
            // a struct at the root, in a struct at the root, in an array, in a List
            Case("root." + Field(k), k, f => In(f, k));
            Case("root.Deep." + Field(k), k, f => new Outer { Deep = In(f, k) });
            Case("root[1]." + Field(k), k, f => new[] { In(false, k), In(f, k) });
            Case("root[0]." + Field(k), k, f => new List<Inner> { In(f, k) });
            // in a class: its own field, a struct in a struct, an array of structs, collections
            Case("root.Nested.Deep." + Field(k), k, f => Acct(f, k, "Nested.Deep"));
            Case("root.Many[1]." + Field(k), k, f => Acct(f, k, "Many"));
        }
        Case("root.Open", Kind.Bool, f => Acct(f, Kind.Bool, "Open"));
        Case("root.Inherited", Kind.Bool, f => new DerivedFlags { Inherited = f, Own = 1 });
        Case("root.When", Kind.DateTime, f => new DerivedFlags { When = T(f) });
        Case("root.Money", Kind.Decimal, f => Acct(f, Kind.Decimal, "Money"));
        Case("root.Opened", Kind.DateTime, f => Acct(f, Kind.DateTime, "Opened"));
        Case("root.Stamp", Kind.Offset, f => Acct(f, Kind.Offset, "Stamp"));
        Case("root.Maybe.hasValue", Kind.HasValue, f => Acct(f, Kind.HasValue, "Maybe"));
        Case("root.Amounts[1]", Kind.Decimal, f => Acct(f, Kind.Decimal, "Amounts"));
        Case("root.Days[1].key", Kind.DateTime, f => Acct(f, Kind.DateTime, "Days"));
        Case("root.Days[1].value", Kind.Bool, f => Acct(f, Kind.Bool, "Days"));
    }

    // ---- valid edges: every one arrives as it left ----

    static bool Same(decimal a, decimal b) => decimal.GetBits(a).SequenceEqual(decimal.GetBits(b));

    static void Edges()
    {
        var decimals =
            new[] { decimal.MinValue,
                    decimal.MaxValue,
                    0m,
                    decimal.One,
                    decimal.MinusOne,
                    new decimal(1, 0, 0, false, 28),
                    new decimal(-1, -1, -1, true, 28),
                    new decimal(0, 0, 0, true, 0),
                    new decimal(0, 0, 0, true, 28),
                    new decimal(0, 0, 0, false, 17) };
        decimal[] backD = Graphs.RoundTrip(decimals);
        Check.True(decimals.Zip(backD, Same).All(x => x),
                   "decimals: Min, Max, scale 28, negative zero arrive bit for bit");
        Check.True(backD.All(d => Same(new decimal(decimal.GetBits(d)), d) && d + 0m == d),
                   "the decimals received are ones the runtime accepts");
        var dates = new[] { DateTime.MinValue, DateTime.MaxValue,
                            new DateTime(DateTime.MaxValue.Ticks, DateTimeKind.Utc),
                            new DateTime(DateTime.MaxValue.Ticks, DateTimeKind.Local),
                            new DateTime(2026, 11, 27, 0, 0, 0, DateTimeKind.Local) };
        DateTime[] backT = Graphs.RoundTrip(dates);
        Check.True(dates.Zip(backT, (a, b) => a.ToBinary() == b.ToBinary() && a.Kind == b.Kind)
                       .All(x => x),
                   "DateTimes: MinValue, MaxValue, each kind");
        var spans = new[] { TimeSpan.MinValue, TimeSpan.MaxValue, TimeSpan.Zero };
        Check.True(Graphs.RoundTrip(spans).SequenceEqual(spans), "TimeSpan Min and Max");
        var offsets =
            new[] { DateTimeOffset.MinValue, DateTimeOffset.MaxValue,
                    new DateTimeOffset(MaxTicks, TimeSpan.FromHours(14)),
                    new DateTimeOffset(0, TimeSpan.FromHours(-14)),
                    new DateTimeOffset(2026, 11, 27, 23, 0, 0, TimeSpan.FromMinutes(-210)) };
        DateTimeOffset[] backO = Graphs.RoundTrip(offsets);
        Check.True(
            offsets.Zip(backO, (a, b) => a.Ticks == b.Ticks && a.Offset == b.Offset).All(x => x),
            "DateTimeOffsets: Min, Max, ±14 hours at the ends of the range");
        var chars = new[] { '\uD800', '\uDFFF', 'a', '\uFFFF' };
        Check.True(Graphs.RoundTrip(chars).SequenceEqual(chars), "lone surrogate chars");
        Check.Equal("\uDC00x\uD800", Graphs.RoundTrip("\uDC00x\uD800"),
                    "a string with lone surrogates");
        var tints = new[] { Tint.Green, (Tint)42, (Tint)(-1) };
        Check.True(Graphs.RoundTrip(tints).SequenceEqual(tints),
                   "enum values outside the declared ones travel raw");
        var maybes = new bool?[] { null, true, false };
        Check.True(Graphs.RoundTrip(maybes).SequenceEqual(maybes), "bool? null, true, false");
        Account acct = Acct(false, Kind.Bool, "");
        acct.Money = decimal.MinValue;
        acct.Open = true;
        acct.Opened = DateTime.MaxValue;
        acct.Stamp = DateTimeOffset.MaxValue;
        acct.Maybe = false;
        acct.Age = TimeSpan.MinValue;
        acct.Initial = '\uDBFF';
        acct.Tint = (Tint)7;
        Account b2 = Graphs.RoundTrip(acct);
        Check.True(b2.Money == decimal.MinValue && b2.Open && b2.Opened == DateTime.MaxValue &&
                       b2.Stamp == DateTimeOffset.MaxValue && b2.Maybe == false &&
                       b2.Age == TimeSpan.MinValue && b2.Initial == '\uDBFF' &&
                       b2.Tint == (Tint)7 && b2.Amounts.SequenceEqual(acct.Amounts) &&
                       b2.Days.Count == 2,
                   "an Account of edge values");
        // any TimeSpan bytes are a TimeSpan (as any char and any enum bytes, above)
        int site = Site(f => f ? TimeSpan.FromTicks(1) : TimeSpan.Zero, Kind.Bool);
        byte[] span =
            With(Serializer.Serialize(TimeSpan.Zero), site, BitConverter.GetBytes(long.MinValue));
        Check.Equal(TimeSpan.MinValue, Serializer.Deserialize<TimeSpan>(span, 0, span.Length),
                    "a TimeSpan of long.MinValue ticks");
    }

    // ---- over MPI: refused, the communicator usable, a graph received into untouched ----

    static void OverMpi()
    {
        int site = Site(f => Acct(f, Kind.Decimal, "Money"), Kind.Decimal);
        byte[] bad =
            With(Serializer.Serialize(Acct(false, Kind.Decimal, "Money")), site, Flags(31 << 16));
        Ring.Exchange(
            () => world.Send(bad, next, 61),
            () =>
            {
                var e = Check.Throws<MPSerializationException>(() => world.ORecv<Account>(prev, 61),
                                                               "ORecv of a decimal with scale 31");
                Check.True(e != null &&
                               e.Message.Contains("root.Money holds a decimal with scale 31"),
                           "ORecv's refusal names the field and the value: " + e?.Message);
                return null;
            });
        Check.StillUsable(world, "a refused value");
        Account into = Acct(false, Kind.Bool, "");
        into.Money = 5m;
        into.Open = true;
        Ring.Exchange(() => world.Send(bad, next, 62),
                      () =>
                      {
                          Check.Throws<MPSerializationException>(
                              () => world.ORecvInto(into, prev, 62),
                              "ORecvInto of a decimal with scale 31");
                          return null;
                      });
        Check.True(into.Money == 5m && into.Open && into.Many.Length == 2,
                   "the graph received into is as it was");
        // bools in an array, from rank 0 to every other rank
        int bsite = Site(f => new[] { false, B(f) }, Kind.Bool);
        byte[] bools = With(Serializer.Serialize(new[] { false, false }), bsite, new byte[] { 7 });
        if (world.Rank == 0)
            for (int r = 1; r < world.Size; r++)
                world.Send(bools, r, 63);
        else
            Check.Throws<MPSerializationException>(() => world.ORecv<bool[]>(0, 63),
                                                   "ORecv of a bool byte 7");
        Check.StillUsable(world, "a refused bool");
        // OIrecv: Wait throws, and the next message on the same tag arrives whole
        ORequest<bool[]> pending = world.OIrecv<bool[]>(prev, 65);
        Ring.Exchange(() => world.Send(bools, next, 65),
                      () =>
                      {
                          Check.Throws<MPSerializationException>(() => pending.Wait(),
                                                                 "OIrecv's Wait on a bool byte 7");
                          return null;
                      });
        bool[] fine = null;
        Ring.Exchange(() => world.OSend(new[] { true, false }, next, 65),
                      () =>
                      {
                          fine = world.OIrecv<bool[]>(prev, 65).Wait();
                          return null;
                      });
        Check.True(fine != null && fine.Length == 2 && fine[0] && !fine[1],
                   "the next message after a refused one");
        // edge values over OSend/ORecv
        Account edge = Acct(false, Kind.Bool, "");
        edge.Money = decimal.MaxValue;
        edge.Opened = new DateTime(MaxTicks, DateTimeKind.Local);
        edge.Stamp = DateTimeOffset.MinValue;
        Account got = null;
        Ring.Exchange(() => world.OSend(edge, next, 64), () =>
                                                         {
                                                             got = world.ORecv<Account>(prev, 64);
                                                             return null;
                                                         });
        Check.True(got != null && got.Money == decimal.MaxValue && got.Opened.Ticks == MaxTicks &&
                       got.Opened.Kind == DateTimeKind.Local &&
                       got.Stamp == DateTimeOffset.MinValue,
                   "edge values over OSend/ORecv");
    }

    static int Main()
    {
        Refusals();
        Check.True(cases > 300, $"{cases} patched values tried");
        Edges();
        OverMpi();
        return Check.FinishWithNoPinLeft("SdtoValuesTest");
    }
}

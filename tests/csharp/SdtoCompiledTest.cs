// SdtoCompiledTest — the reader's compiled factories (bindings/csharp/Sdto/SdtoFactories.cs,
// serializer/sd_reader.c: `new` and one load and store per value field, emitted once per class):
// every kind of value field arrives as sent — each primitive, enums, bool, char, decimal, the
// time types, Guid, structs, readonly fields, fields of base classes (private ones too), generic
// classes, overlapping fields — in messages large enough for the compiled path (8 records and
// more) and small ones (the reader's own path), through Serializer and over MPI. Wire bytes never
// reach a reference slot: every 8-byte window of a message overwritten with a pattern leaves every
// unmarked reference null and every marked one an object of its type (or the message refused),
// and collections run afterwards. Factories compiled while another thread collects, for 144
// generic instantiations met for the first time, read their values right. ORecvInto overwrites
// the objects of a graph with the compiled fillers.
#pragma warning disable 649, 169, 414   // fields exist to give types a shape
using System;
using System.Collections.Generic;
using System.MP;
using System.Runtime.InteropServices;

enum Colour : short
{
    Red = 1,
    Green = 2
}

[Flags]
enum Bits : long
{
    A = 1,
    B = 1L << 40
}

struct Plain
{
    public int A;
    public double B;
    public byte C;
}

struct WithName   // a struct holding a reference: its class is read by the reader's own path
{
    public string Name;
    public int Y;
}

class KindsBase
{
    int secret;
    protected long baseLong;
    public int Secret
    {
        get {
            return secret;
        }
        set {
            secret = value;
        }
    }
}

class Kinds : KindsBase
{
    public byte U8;
    public sbyte I8;
    public short I16;
    public ushort U16;
    public int I32;
    public uint U32;
    public long I64;
    public ulong U64;
    public float F32;
    public double F64;
    public char Ch;
    public bool Flag;
    public decimal Money;
    public DateTime When;
    public TimeSpan Span;
    public DateTimeOffset At;
    public Guid Id;
    public Colour Colour;
    public Bits Bits;
    public Plain Inline;
    public readonly int ReadOnly;
    public object Unmarked;   // not [Transportable]: arrives null
    [Transportable]
    public Kinds Next;

    public static Kinds Make(int i)
    {
        var k = new Kinds {
            U8 = (byte)(i + 1),
            I8 = (sbyte)(-i - 2),
            I16 = (short)(-300 - i),
            U16 = (ushort)(60000 + i),
            I32 = -100000 - i,
            U32 = 4000000000u + (uint)i,
            I64 = -(1L << 50) - i,
            U64 = (1UL << 63) + (ulong)i,
            F32 = 1.5f + i,
            F64 = Math.PI * (i + 1),
            Ch = (char)('a' + i % 26),
            Flag = i % 2 == 1,
            Money = 12345.6789m + i,
            When = new DateTime(2026, 11, 28, 1, 2, 3, DateTimeKind.Utc).AddTicks(i),
            Span = TimeSpan.FromMilliseconds(1234 + i),
            At = new DateTimeOffset(2020, 1, 2, 3, 4, 5, TimeSpan.FromHours(i % 14)),
            Id = new Guid(i, (short)i, 7, 1, 2, 3, 4, 5, 6, 7, 8),
            Colour = Colour.Green,
            Bits = Bits.A | Bits.B,
            Inline = new Plain { A = i * 3, B = -i * 0.5, C = 9 },
            Unmarked = "not travelling",
            Secret = 777 + i
        };
        k.baseLong = (1L << 33) + i;
        System.Reflection.FieldInfo ro = typeof(Kinds).GetField("ReadOnly");
        ro.SetValue(k, 4242 + i);
        return k;
    }

    public long BaseLong => baseLong;

    public bool SameValues(Kinds o)
    {
        return U8 == o.U8 && I8 == o.I8 && I16 == o.I16 && U16 == o.U16 && I32 == o.I32 &&
               U32 == o.U32 && I64 == o.I64 && U64 == o.U64 && F32 == o.F32 && F64 == o.F64 &&
               Ch == o.Ch && Flag == o.Flag && Money == o.Money && When == o.When &&
               When.Kind == o.When.Kind && Span == o.Span && At == o.At &&
               At.Offset == o.At.Offset && Id == o.Id && Colour == o.Colour && Bits == o.Bits &&
               Inline.A == o.Inline.A && Inline.B == o.Inline.B && Inline.C == o.Inline.C &&
               ReadOnly == o.ReadOnly && Secret == o.Secret && BaseLong == o.BaseLong;
    }
}

class Named   // a value field that holds a reference inside
{
    public long Before;
    public WithName Label;
    public long After;
    [Transportable]
    public Named Next;
}

[StructLayout(LayoutKind.Explicit)]
class Overlap
{
    [FieldOffset(0)]
    public long Whole;
    [FieldOffset(0)]
    public int Low;
    [FieldOffset(4)]
    public int High;
}

class Pair<A, B>
{
    public A First;
    public B Second;
    public int Check;
}

class Holder
{
    public long M1;
    public object Hidden;
    [Transportable]
    public Holder Next;
    [Transportable]
    public string Text;
    public int M2;
}

static class SdtoCompiledTest
{
    static Kinds[] KindsArray(int n)
    {
        var a = new Kinds[n];
        for (int i = 0; i < n; i++)
            a[i] = Kinds.Make(i);
        for (int i = 0; i + 1 < n; i++)
            a[i].Next = a[i + 1];
        return a;
    }

    static void SameKinds(Kinds[] sent, Kinds[] got, string what)
    {
        Check.Equal(sent.Length, got.Length, what + ": length");
        int bad = 0;
        for (int i = 0; i < sent.Length && i < got.Length; i++)
            if (got[i] == null || !sent[i].SameValues(got[i]) || got[i].Unmarked != null ||
                (i + 1 < got.Length ? !ReferenceEquals(got[i].Next, got[i + 1])
                                    : got[i].Next != null))
                bad++;
        Check.Equal(0, bad, what + ": every value field as sent, unmarked null, linked");
    }

    static void Kinds_()
    {
        foreach (int n in new[] { 1, 3, 8, 100, 5000 }) {
            Kinds[] a = KindsArray(n);
            SameKinds(a, Graphs.RoundTrip(a), $"{n} objects of every value kind");
        }
        foreach (int n in new[] { 2, 50 }) {
            var a = new Named[n];
            for (int i = 0; i < n; i++)
                a[i] = new Named { Before = i, Label = new WithName { Name = "x" + i, Y = -i },
                                   After = ~i };
            Named[] got = Graphs.RoundTrip(a);
            int bad = 0;
            for (int i = 0; i < n; i++)
                if (got[i].Before != i || got[i].After != ~i || got[i].Label.Y != -i ||
                    got[i].Label.Name != null)
                    bad++;
            Check.Equal(0, bad,
                        $"{n} objects with a struct holding a reference: values, the " +
                            "struct's unmarked reference null");
        }
        var overlaps = new Overlap[20];
        for (int i = 0; i < overlaps.Length; i++)
            overlaps[i] = new Overlap { Whole = (long)i << 32 | (uint)(i + 7) };
        Overlap[] o = Graphs.RoundTrip(overlaps);
        int wrong = 0;
        for (int i = 0; i < o.Length; i++)
            if (o[i].Whole != ((long)i << 32 | (uint)(i + 7)) || o[i].Low != i + 7 ||
                o[i].High != i)
                wrong++;
        Check.Equal(0, wrong, "20 objects with overlapping fields");
        var boxes = new Pair<int, DateTime>[30];
        for (int i = 0; i < boxes.Length; i++)
            boxes[i] = new Pair<int, DateTime> { First = i, Second = new DateTime(2000 + i, 1, 1),
                                                 Check = -i };
        Pair<int, DateTime>[] b = Graphs.RoundTrip(boxes);
        wrong = 0;
        for (int i = 0; i < b.Length; i++)
            if (b[i].First != i || b[i].Second.Year != 2000 + i || b[i].Check != -i)
                wrong++;
        Check.Equal(0, wrong, "30 objects of a generic class");
    }

    // Every 8-byte window of the message overwritten: refused, or every reference sound.
    static void Windows<T>(T[] graph, Func<T, bool> sound, string what)
    {
        byte[] bytes = Serializer.Serialize(graph);
        int accepted = 0, refused = 0, unsound = 0, other = 0;
        foreach (ulong pattern in new[] { 0xABABABABABABABABUL, 0x00007F0000001000UL, 1UL }) {
            for (int at = 0; at + 8 <= bytes.Length; at++) {
                var copy = (byte[])bytes.Clone();
                BitConverter.GetBytes(pattern).CopyTo(copy, at);
                try {
                    T[] got = Serializer.Deserialize<T[]>(copy, 0, copy.Length);
                    accepted++;
                    if (got != null)
                        foreach (T x in got)
                            if (x != null && !sound(x))
                                unsound++;
                } catch (MPSerializationException) {
                    refused++;
                } catch (Exception) {
                    other++;
                }
            }
            GC.Collect();
        }
        Check.Equal(0, unsound,
                    $"{what}: no accepted message leaves wire bytes in a reference " +
                        $"({accepted} accepted, {refused} refused)");
        Check.Equal(0, other, what + ": nothing but MPSerializationException");
        Check.True(accepted > 0 && refused > 0, what + ": some windows accepted, some refused");
    }

    static void Hostile()
    {
        var holders = new Holder[12];
        for (int i = 0; i < holders.Length; i++)
            holders[i] = new Holder { M1 = i, M2 = -i, Text = "t" + i, Hidden = holders };
        for (int i = 0; i + 1 < holders.Length; i++)
            holders[i].Next = holders[i + 1];
        Windows(holders,
                h => h.Hidden == null && (h.Next == null || h.Next.GetType() == typeof(Holder)) &&
                     (h.Text == null || h.Text.GetType() == typeof(string)),
                "Holder (an unmarked object field, marked Next and Text)");
        var named = new Named[10];
        for (int i = 0; i < named.Length; i++)
            named[i] = new Named { Before = i, Label = new WithName { Name = "n", Y = i } };
        Windows(named, x => x.Label.Name == null && (x.Next == null || x.Next is Named),
                "Named (a struct field holding a reference)");
        Kinds[] kinds = KindsArray(9);
        Windows(kinds, k => k.Unmarked == null && (k.Next == null || k.Next is Kinds),
                "Kinds (every value kind)");
    }

    static readonly Type[] Elements = { typeof(int),      typeof(long),  typeof(double),
                                        typeof(byte),     typeof(short), typeof(char),
                                        typeof(bool),     typeof(float), typeof(decimal),
                                        typeof(DateTime), typeof(Guid),  typeof(Plain) };

    static object Value(Type t, int i)
    {
        if (t == typeof(bool))
            return i % 2 == 1;
        if (t == typeof(char))
            return (char)('A' + i % 26);
        if (t == typeof(decimal))
            return 1000.25m + i;
        if (t == typeof(DateTime))
            return new DateTime(1990 + i % 50, 1 + i % 12, 1);
        if (t == typeof(Guid))
            return new Guid(i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
        if (t == typeof(Plain))
            return new Plain { A = i, B = i + 0.25, C = (byte)i };
        return Convert.ChangeType(i % 100, t);
    }

    // Pair<A, B> for A, B of Elements: 144 classes, each read for the first time here, with a
    // collection about every millisecond on another thread.
    static void UnderCollections()
    {
        int classes = 0, bad = 0;
        using (new PacedCollector())
        {
            foreach (Type a in Elements)
                foreach (Type b in Elements) {
                    Type pair = typeof(Pair<, >).MakeGenericType(a, b);
                    Array graph = Array.CreateInstance(pair, 10);
                    for (int i = 0; i < 10; i++) {
                        object p = Activator.CreateInstance(pair);
                        pair.GetField("First").SetValue(p, Value(a, i));
                        pair.GetField("Second").SetValue(p, Value(b, i + 1));
                        pair.GetField("Check").SetValue(p, i * 7);
                        graph.SetValue(p, i);
                    }
                    byte[] bytes = Serializer.Serialize(graph);
                    var got = (Array) typeof(Serializer)
                                  .GetMethod("Deserialize")
                                  .MakeGenericMethod(pair.MakeArrayType())
                                  .Invoke(null, new object[] { bytes, 0, bytes.Length });
                    for (int i = 0; i < 10; i++) {
                        object p = got.GetValue(i);
                        if (!pair.GetField("First").GetValue(p).Equals(Value(a, i)) ||
                            !pair.GetField("Second").GetValue(p).Equals(Value(b, i + 1)) ||
                            (int)pair.GetField("Check").GetValue(p) != i * 7)
                            bad++;
                    }
                    classes++;
                }
        }
        Check.Equal(Elements.Length * Elements.Length, classes, "every Pair<A, B> read");
        Check.Equal(0, bad, "factories compiled under collections read every value right");
    }

    static void Transport()
    {
        if (Ring.Size < 2)
            return;
        Kinds[] a = KindsArray(300);
        Kinds[] got = null;
        Ring.Exchange(() => MP.World.OSend(a, Ring.Next, 5),
                      () =>
                      {
                          got = MP.World.ORecv<Kinds[]>(Ring.Prev, 5);
                          return null;
                      });
        SameKinds(a, got, "over MPI: 300 objects of every value kind");

        // ORecvInto: the compiled fillers overwrite the objects of the graph received before
        Kinds[] b = KindsArray(300);
        for (int i = 0; i < b.Length; i++) {
            b[i].I64 = -i;
            b[i].Money = i + 0.5m;
            b[i].Inline.B = i * 2.0;
        }
        Kinds[] previous = got, into = null;
        var before = (Kinds[])previous.Clone();
        Ring.Exchange(() => MP.World.OSend(b, Ring.Next, 6),
                      () =>
                      {
                          into = MP.World.ORecvInto(previous, Ring.Prev, 6);
                          return null;
                      });
        SameKinds(b, into, "over MPI into the graph received before: every value kind");
        int kept = 0;
        for (int i = 0; i < into.Length; i++)
            if (ReferenceEquals(into[i], before[i]))
                kept++;
        Check.Equal(into.Length, kept, "ORecvInto kept every object of the graph");
    }

    static int Main()
    {
        Kinds_();
        Hostile();
        UnderCollections();
        Transport();
        return Check.Finish("SdtoCompiledTest");
    }
}

// SdtoObjectSlotTest — any object in an `object` slot (issue 35, items 3 and 4): every framework
// value kind (boxed primitives, decimal, the time types, Guid, string, arrays of them, object[],
// the standard collections of them) round-trips as `object`, at the root (Serializer and ORecv)
// and in fields declared object, ValueType, IList, IEnumerable, Array and IComparable, with its
// type and value; nested (Outer.Inner) and generic (Box<int>, Pair<string, Box<int>>) classes
// marked [Transportable] arrive where their base type is declared. Still refused: an unmarked
// class, a delegate, a Type, an IntPtr, other framework classes, an unmarked subclass — at the
// sender (ArgumentException) and, from hostile bytes naming them, at the receiver
// (MPSerializationException naming the field path); so are generic classes with a type argument
// outside the allowed set or against a constraint, and names nested too deep. Mutated messages
// with object slots — bytes anywhere, and type names (a character changed, inserted or removed,
// names swapped, hostile names) — MPSerializationException or a valid graph, nothing else.
// `SdtoObjectSlotTest.exe fuzz N` runs N cases of each mutation kind and prints the counts.
#pragma warning disable 649   // fields exist to give types a shape
using System;
using System.Collections;
using System.Collections.Generic;
using System.Linq;
using System.MP;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Text;

[Transportable]
class Shape
{
    public int Id;
}
class Outer
{
    [Transportable]
    public class Inner : Shape
    {
        public int X;
    }
    public class Mid
    {
        [Transportable]
        public class Deep : Shape
        {
            public long Y;
        }
    }
    [Transportable]
    public class NBox<T> : Shape
    {
        [Transportable]
        public T Value;
    }
}
[Transportable]
class Box<T> : Shape
{
    [Transportable]
    public T Value;
}
[Transportable]
class Pair<A, B> : Shape
{
    [Transportable]
    public A First;
    [Transportable]
    public B Second;
}
[Transportable]
class Strict<T> : Shape
    where T : struct
{
    public T V;
}
class Unmarked : Shape   // a subclass without [Transportable]
{
    public int Z;
}
[Transportable]
class Marked
{
    public int W;
}
class Unmark   // same layout and name length as Marked, not marked
{
    public int W;
}
[Transportable]
class HolderBox
{
    [Transportable]
    public Holder Value;
}

class Holder
{
    public int Id;
    [Transportable]
    public object O;
    [Transportable]
    public Shape S;
    [Transportable]
    public ValueType V;
    [Transportable]
    public IList L;
    [Transportable]
    public IEnumerable E;
    [Transportable]
    public Array A;
    [Transportable]
    public IComparable C;
    [Transportable]
    public object[] Items;
    [Transportable]
    public List<object> Mixed;
}

static class SdtoObjectSlotTest
{
    static Intracomm world = Ring.World;
    static int next = Ring.Next, prev = Ring.Prev;

    // ---- comparing what arrived with what was sent: the same type, the same value ----

    static bool Same(object a, object b)
    {
        if (a == null || b == null)
            return a == null && b == null;
        if (a.GetType() != b.GetType())
            return false;
        Type type = a.GetType();
        if (type.IsGenericType && type.GetGenericTypeDefinition() == typeof(KeyValuePair<, >))
            return Same(type.GetProperty("Key").GetValue(a), type.GetProperty("Key").GetValue(b)) &&
                   Same(type.GetProperty("Value").GetValue(a),
                        type.GetProperty("Value").GetValue(b));
        if (a is string || !(a is IEnumerable))
            return a is Box<int> x ? x.Value == ((Box<int>)b).Value
                   : a is Shape    ? Shapes(a, b)
                                   : a.Equals(b);
        if (a is Array aa) {
            var ba = (Array)b;
            if (aa.Rank != ba.Rank)
                return false;
            for (int d = 0; d < aa.Rank; d++)
                if (aa.GetLength(d) != ba.GetLength(d) ||
                    aa.GetLowerBound(d) != ba.GetLowerBound(d))
                    return false;
        }
        var ea = ((IEnumerable)a).Cast<object>().ToList();
        var eb = ((IEnumerable)b).Cast<object>().ToList();
        if (ea.Count != eb.Count)
            return false;
        for (int i = 0; i < ea.Count; i++)
            if (!Same(ea[i], eb[i]))
                return false;
        return true;
    }

    static bool Shapes(object a, object b)
    {
        if (a is Outer.Inner i)
            return i.X == ((Outer.Inner)b).X && i.Id == ((Shape)b).Id;
        if (a is Outer.Mid.Deep d)
            return d.Y == ((Outer.Mid.Deep)b).Y;
        if (a is Box<string> s)
            return s.Value == ((Box<string>)b).Value;
        if (a is Box<List<int>> l)
            return Same(l.Value, ((Box<List<int>>)b).Value);
        if (a is Box<Outer.Inner> bi)
            return Same(bi.Value, ((Box<Outer.Inner>)b).Value);
        if (a is Pair<string, Box<int>> p)
            return p.First == ((Pair<string, Box<int>>)b).First &&
                   Same(p.Second, ((Pair<string, Box<int>>)b).Second);
        if (a is Outer.NBox<double> n)
            return n.Value == ((Outer.NBox<double>)b).Value;
        if (a is Strict<int> st)
            return st.V == ((Strict<int>)b).V;
        return ((Shape)a).Id == ((Shape)b).Id;
    }

    // every framework value kind the issue names, and the shapes built of them
    static object[] Values() => new object[] {
        true,
        'x',
        (sbyte)-5,
        (byte)250,
        (short)-300,
        (ushort)60000,
        42,
        4000000000u,
        -5L,
        ulong.MaxValue,
        1.5f,
        2.25,
        79228162514264337593543950335m,
        -0.5m,
        new DateTime(2026, 11, 27, 1, 2, 3, DateTimeKind.Utc),
        TimeSpan.FromMinutes(-3),
        new DateTimeOffset(2026, 1, 2, 3, 4, 5, TimeSpan.FromHours(5)),
        new Guid("0123456789abcdef0123456789abcdef"),
        "héllo",
        "",
        new[] { 1, 2, 3 },
        new double[] { 1.5, double.NaN },
        new[] { "a", null, "c" },
        new bool[0],
        new[,] { { 1, 2 }, { 3, 4 } },
        new[] { new[] { 1 }, new[] { 2, 3 } },
        new decimal[] { 1m, 2.5m },
        new[] { DateTime.MinValue, DateTime.MaxValue },
        new object[] { 1, "two", 3.0, new[] { 4 }, null },
        new List<int> { 1, 2 },
        new List<string> { "a", null },
        new Queue<double>(new[] { 1.0, 2.0 }),
        new Stack<string>(new[] { "x", "y" }),
        new HashSet<long> { 5, 6, 7 },
        new Dictionary<string, int> { ["a"] = 1, ["b"] = 2 },
        new Dictionary<int, List<string>> { [1] = new List<string> { "x" } },
        new List<int[]> { new[] { 1 }, null },
        new List<object> { 1, "a", new List<int> { 2 } },
        new List<int?> { 1, null },
        new List<KeyValuePair<string, int>> { new KeyValuePair<string, int>("k", 1) },
        new Box<int> { Id = 1, Value = 7 },
        new Box<int>[] { new Box<int> { Value = 8 } },
        new List<Shape> { new Outer.Inner { X = 3 } },
    };

    static void AtTheRoot()
    {
        foreach (object v in Values()) {
            string what = "root " + v.GetType().Name;
            try {
                byte[] b = Serializer.Serialize(v);
                object back = Serializer.Deserialize<object>(b, 0, b.Length);
                Check.True(Same(v, back),
                           $"{what}: arrives as object, same type and value ({back})");
            } catch (Exception e) {
                Check.True(false, $"{what}: {e.GetType().Name}: {e.Message}");
            }
        }
        byte[] ints = Serializer.Serialize(new[] { 1, 2 });
        Check.True(Same(new[] { 1, 2 }, Serializer.Deserialize<IList>(ints, 0, ints.Length)),
                   "an int[] received as an IList");
        Check.True(Same(new[] { 1, 2 }, Serializer.Deserialize<Array>(ints, 0, ints.Length)),
                   "an int[] received as an Array");
        byte[] date = Serializer.Serialize(new DateTime(5));
        Check.True(Same(new DateTime(5), Serializer.Deserialize<ValueType>(date, 0, date.Length)),
                   "a DateTime received as a ValueType");
        byte[] list = Serializer.Serialize(new List<string> { "q" });
        Check.True(Same(new List<string> { "q" },
                        Serializer.Deserialize<IEnumerable>(list, 0, list.Length)),
                   "a List<string> received as an IEnumerable");
        Check.Throws<MPSerializationException>(
            () => Serializer.Deserialize<IComparable>(ints, 0, ints.Length),
            "an int[] is no IComparable: refused");
    }

    static void InFields()
    {
        var holder =
            new Holder { Id = 1,
                         V = 3.5m,
                         L = new List<int> { 4 },
                         E = "text",
                         A = new[,] { { 1.0 } },
                         C = 12L,
                         S = new Outer.Inner { X = 9 },
                         Items = Values(),
                         Mixed = Values().ToList() };
        foreach (object v in Values()) {
            holder.O = v;
            string what = "field object holding " + v.GetType().Name;
            try {
                Holder back = Graphs.RoundTrip(holder);
                Check.True(Same(v, back.O) && Same(holder.V, back.V) && Same(holder.L, back.L) &&
                               Same(holder.E, back.E) && Same(holder.A, back.A) &&
                               Same(holder.C, back.C) && Same(holder.S, back.S) &&
                               Same(holder.Items, back.Items) && Same(holder.Mixed, back.Mixed),
                           what + ": every slot arrives with its type and value");
            } catch (Exception e) {
                Check.True(false, $"{what}: {e.GetType().Name}: {e.Message}");
            }
        }
        // one object in two object slots stays one object
        var shared = new List<int> { 1 };
        Holder two = Graphs.RoundTrip(new Holder { O = shared, L = shared });
        Check.True(ReferenceEquals(two.O, two.L), "one List in two slots arrives as one object");
    }

    // nested and generic [Transportable] classes where their base is declared
    static Shape[] Subclasses() => new Shape[] {
        new Outer.Inner { Id = 1, X = 2 },
        new Outer.Mid.Deep { Y = 3 },
        new Box<int> { Value = 4 },
        new Box<string> { Value = "five" },
        new Box<List<int>> { Value = new List<int> { 6 } },
        new Box<Outer.Inner> { Value = new Outer.Inner { X = 7 } },
        new Pair<string, Box<int>> { First = "p", Second = new Box<int> { Value = 8 } },
        new Outer.NBox<double> { Value = 9.5 },
        new Strict<int> { V = 10 },
    };

    static void Subclasses_()
    {
        foreach (Shape s in Subclasses()) {
            string what = s.GetType().Name;
            try {
                Holder back = Graphs.RoundTrip(new Holder { S = s, O = s });
                Check.True(Same(s, back.S) && ReferenceEquals(back.S, back.O),
                           what + " in a Shape and an object slot");
                byte[] b = Serializer.Serialize(s);
                Check.True(Same(s, Serializer.Deserialize<Shape>(b, 0, b.Length)),
                           what + " received as its base, at the root");
            } catch (Exception e) {
                Check.True(false, $"{what}: {e.GetType().Name}: {e.Message}");
            }
        }
    }

    // ---- refusals ----

    static void RefusedAtSender(object value, string what, params string[] mentions)
    {
        var e =
            Check.Throws<ArgumentException>(() => Serializer.Serialize(new Holder { O = value }),
                                            what + ": the sender refuses");
        if (e != null)
            foreach (string m in mentions)
                Check.True(e.Message.Contains(m), $"{what}: the message names '{m}': {e.Message}");
    }

    /// <summary>m with the type name that starts with `from` (one must) starting with `to`
    /// instead, the name's length and the message's total_bytes adjusted: bytes no writer
    /// makes.</summary>
    static byte[] Renamed(byte[] m, string from, string to)
    {
        byte[] f = Encoding.ASCII.GetBytes(from), t = Encoding.ASCII.GetBytes(to);
        int at = -1, found = 0;
        for (int i = 4; i + f.Length <= m.Length; i++)
            if (BitConverter.ToInt32(m, i - 4) >= f.Length &&
                BitConverter.ToInt32(m, i - 4) <= 1024 &&
                m.Skip(i).Take(f.Length).SequenceEqual(f)) {
                at = i;
                found++;
            }
        Check.Equal(1, found, $"a type name of the message starts with '{from}'");
        if (found != 1)
            return m;
        var r = new byte[m.Length - f.Length + t.Length];
        Array.Copy(m, r, at);
        BitConverter.GetBytes(BitConverter.ToInt32(m, at - 4) - f.Length + t.Length)
            .CopyTo(r, at - 4);
        t.CopyTo(r, at);
        Array.Copy(m, at + f.Length, r, at + t.Length, m.Length - at - f.Length);
        BitConverter.GetBytes((long)r.Length).CopyTo(r, 24);
        return r;
    }

    static void RefusedAtReceiver(object sent, string from, string to, string what,
                                  params string[] mentions)
    {
        byte[] b = Renamed(Serializer.Serialize(sent), from, to);
        var e = Check.Throws<MPSerializationException>(
            () => Serializer.Deserialize<Holder>(b, 0, b.Length), what + ": the receiver refuses");
        if (e != null)
            foreach (string m in mentions)
                Check.True(e.Message.Contains(m), $"{what}: the message names '{m}': {e.Message}");
    }

    static void Refusals()
    {
        RefusedAtSender(new Unmark { W = 1 }, "an unmarked class in an object slot", "root.O",
                        "Unmark");
        RefusedAtSender(new Action(() =>
                                   {}),
                        "a delegate", "root.O", "delegates");
        RefusedAtSender(typeof(int), "a Type", "root.O", "reflection");
        RefusedAtSender(new IntPtr(5), "an IntPtr", "root.O", "pointers");
        RefusedAtSender(new Version(1, 2), "a framework class", "root.O", "System.Version");
        RefusedAtSender(new System.Text.RegularExpressions.Match[0],
                        "an array of a framework class", "root.O");
        RefusedAtSender(new List<Version>(), "a List of a framework class", "root.O");
        var e = Check.Throws<ArgumentException>(
            () => Serializer.Serialize(new Holder { S = new Unmarked() }),
            "an unmarked subclass in a base slot: the sender refuses");
        Check.True(e != null && e.Message.Contains("root.S"), "it names the path: " + e?.Message);

        // an unmarked class in an object slot travels where a receiver of the root's class allows
        // it (a type of the graph declares it somewhere), whatever the walk met first, and
        // nowhere else: in a Holder[], a Holder also in an object slot (met first in its own
        // slot, or only in the object slot); in an object[] alone, a Holder refused
        var h = new Holder { Id = 7, Items = new object[1] };
        h.Items[0] = h;
        Holder[] back = Graphs.RoundTrip(new[] { h });
        Check.True(back.Length == 1 && ReferenceEquals(back[0].Items[0], back[0]) &&
                       back[0].Id == 7,
                   "a Holder met first in its own slot, then in an object slot: travels");
        var only = new Holder { Id = 8 };
        var outer = new Holder { Id = 9, Items = new object[] { only } };
        Holder[] back2 = Graphs.RoundTrip(new[] { outer });
        Check.True(back2[0].Items[0] is Holder && ((Holder)back2[0].Items[0]).Id == 8,
                   "a Holder only in an object slot of a Holder[]'s graph: travels");
        e = Check.Throws<ArgumentException>(
            () => Serializer.Serialize(new object[] { new Holder() }),
            "a Holder in an object slot of an object[]: the " + "sender refuses");
        Check.True(e != null && e.Message.Contains("root[0]") && e.Message.Contains("Holder"),
                   "it names the slot: " + e?.Message);
        // a marked class in the graph brings the types it declares: a Holder in an object[] next
        // to a HolderBox holding it travels, before it or after it in the walk
        var inner = new Holder { Id = 3 };
        foreach (bool boxFirst in new[] { true, false }) {
            var box = new HolderBox { Value = inner };
            var roots = boxFirst ? new object[] { box, inner } : new object[] { inner, box };
            var got = Graphs.RoundTrip(roots);
            var gotBox = (HolderBox)got[boxFirst ? 0 : 1];
            Check.True(ReferenceEquals(gotBox.Value, got[boxFirst ? 1 : 0]) && gotBox.Value.Id == 3,
                       "a Holder in an object[] beside a HolderBox holding it travels, " +
                           (boxFirst ? "box first" : "box last"));
        }
        // and the reader takes what the sender sends: a Holder[] whose second Holder also sits in
        // the first one's Items (the message's last reference, null, made that Holder's record)
        var two = new[] { new Holder { Id = 1, Items = new object[1] }, new Holder { Id = 2 } };
        byte[] bytes = Serializer.Serialize(two);
        Check.Equal(-1, BitConverter.ToInt32(bytes, bytes.Length - 4),
                    "the object[]'s element is the message's last reference");
        BitConverter.GetBytes(2).CopyTo(bytes, bytes.Length - 4);   // records: [], h1, h2, Items
        Holder[] read = Serializer.Deserialize<Holder[]>(bytes, 0, bytes.Length);
        Check.True(ReferenceEquals(read[0].Items[0], read[1]),
                   "such bytes arrive: the Holder in the slot and in the array is one");
        Check.Equal(bytes.Length, Serializer.Serialize(read).Length,
                    "and what arrived can be sent again");

        // hostile bytes: each names a type outside the allowed set in a slot that declares a base
        var boxed = new Holder { O = 42 };
        RefusedAtReceiver(boxed, "System.Int32, mscorlib", "System.IO.FileInfo, mscorlib",
                          "a FileInfo in an object slot", "root.O", "System.IO.FileInfo",
                          "not allowed");
        RefusedAtReceiver(boxed, "System.Int32, mscorlib", "System.Action, mscorlib",
                          "a delegate in an object slot", "root.O", "not allowed");
        RefusedAtReceiver(boxed, "System.Int32, mscorlib", "System.RuntimeType, mscorlib",
                          "a Type in an object slot", "root.O", "not allowed");
        RefusedAtReceiver(boxed, "System.Int32, mscorlib", "System.IntPtr, mscorlib",
                          "an IntPtr in an object slot", "root.O", "not allowed");
        RefusedAtReceiver(boxed, "System.Int32, mscorlib", "System.Version, mscorlib",
                          "a framework class in an object slot", "root.O", "not allowed");
        RefusedAtReceiver(new Holder { O = new Marked() }, "Marked, ", "Unmark, ",
                          "an unmarked class in an object slot", "root.O",
                          "not marked [Transportable]");
        RefusedAtReceiver(new Holder { S = new Outer.Inner() }, "Outer.Inner, ", "Unmarked, ",
                          "an unmarked subclass in a base slot", "root.S", "Unmarked");
        RefusedAtReceiver(new Holder { O = new[] { 1 } }, "System.Int32[], mscorlib",
                          "System.IO.FileInfo[], mscorlib", "a FileInfo[] in an object slot",
                          "root.O", "not allowed");
        RefusedAtReceiver(new Holder { O = new List<int>() },
                          "System.Collections.Generic.List<System.Int32>, mscorlib",
                          "System.Collections.Generic.List<System.IO.FileInfo>, mscorlib",
                          "a List<FileInfo> in an object slot", "root.O", "not allowed");
        RefusedAtReceiver(new Holder { S = new Box<int>() }, "Box<System.Int32>, ",
                          "Box<System.IO.FileInfo>, ", "a generic with a FileInfo argument",
                          "root.S", "type arguments");
        RefusedAtReceiver(new Holder { S = new Box<int>() }, "Box<System.Int32>, ", "Box<Unmark>, ",
                          "a generic with an unmarked class argument", "root.S", "type arguments");
        RefusedAtReceiver(new Holder { S = new Strict<int>() }, "Strict<System.Int32>, ",
                          "Strict<System.Int64>, ", "control: a constraint met, another layout",
                          "root.S", "layout");
        RefusedAtReceiver(new Holder { S = new Strict<int>() }, "Strict<System.Int32>, ",
                          "Strict<System.String>, ", "a generic against its constraint", "root.S",
                          "constraints");
        RefusedAtReceiver(new Holder { S = new Box<int>() }, "Box<System.Int32>, ",
                          "Box<System.Int32,System.Int32>, ", "a generic of the wrong arity",
                          "root.S", "not allowed");
        string deep = "System.Int32";
        for (int i = 0; i < 12; i++)
            deep = "Box<" + deep + ">";
        RefusedAtReceiver(new Holder { S = new Box<int>() }, "Box<System.Int32>, ", deep + ", ",
                          "a name nested 12 deep", "root.S", "not allowed");
        RefusedAtReceiver(new Holder { S = new Box<int>() }, "Box<System.Int32>, ",
                          "Box<System.Int32>, NoSuchAssembly", "an assembly not loaded", "root.S",
                          "not allowed");
        // the root: an object asked for, a type outside the set found
        byte[] root = Renamed(Serializer.Serialize((object)42), "System.Int32, mscorlib",
                              "System.UIntPtr, mscorlib");
        Check.Throws<MPSerializationException>(
            () => Serializer.Deserialize<object>(root, 0, root.Length),
            "a UIntPtr at the root, object asked for");
    }

    // ---- mutations of messages with object slots ----

    /// <summary>Where each type name of message m lies: (offset, length).</summary>
    static List<KeyValuePair<int, int>> NameSpans(byte[] m)
    {
        var spans = new List<KeyValuePair<int, int>>();
        int types = BitConverter.ToInt32(m, 8), at = 32;
        for (int t = 0; t < types; t++) {
            int len = BitConverter.ToInt32(m, at + 12);
            spans.Add(new KeyValuePair<int, int>(at + 16, len));
            at += 16 + len;
        }
        return spans;
    }

    /// <summary>m with the name at span replaced by name (lengths adjusted).</summary>
    static byte[] WithName(byte[] m, KeyValuePair<int, int> span, byte[] name)
    {
        var r = new byte[m.Length - span.Value + name.Length];
        Array.Copy(m, r, span.Key);
        BitConverter.GetBytes(name.Length).CopyTo(r, span.Key - 4);
        name.CopyTo(r, span.Key);
        Array.Copy(m, span.Key + span.Value, r, span.Key + name.Length,
                   m.Length - span.Key - span.Value);
        BitConverter.GetBytes((long)r.Length).CopyTo(r, 24);
        return r;
    }

    const string NameChars = "<>[],.*`+& ABISTXabcefilmnorstxy0123456789";
    static readonly string[] Hostile = {
        "System.IO.FileInfo",
        "System.Action",
        "System.RuntimeType",
        "System.IntPtr",
        "Box<System.IO.FileInfo>",
        "Strict<System.String>",
        "Box<Box<Box<System.Int32>>>",
        "System.Collections.Generic.List<System.Action>",
        "System.Int32[*]",
        "System.Object[,]",
        "Outer.Inner",
        "Outer.NBox<System.Double>",
        "Pair<System.Int32>",
        "Box<>",
        "<>",
        "[]",
        "System.Collections.Generic.Dictionary<System.String,System.Int32>",
        "Box<System.Int32[]>",
        "System.Nullable<System.Int32>",
        "Outer..Inner",
        "System.Int32[,,,,,,,,,,,,,,,,,,,,,,,,,]",
    };

    /// <summary>A mutation of m's type names: a character changed, inserted or removed, a name
    /// swapped with another's, or one from Hostile (with or without its assembly).</summary>
    static byte[] NameMutation(byte[] m, Random rnd)
    {
        List<KeyValuePair<int, int>> spans = NameSpans(m);
        KeyValuePair<int, int> span = spans[rnd.Next(spans.Count)];
        var name = new List<byte>(m.Skip(span.Key).Take(span.Value));
        switch (rnd.Next(5)) {
        case 0: name[rnd.Next(name.Count)] = (byte)NameChars[rnd.Next(NameChars.Length)]; break;
        case 1:
            name.Insert(rnd.Next(name.Count + 1), (byte)NameChars[rnd.Next(NameChars.Length)]);
            break;
        case 2:
            if (name.Count > 1)
                name.RemoveAt(rnd.Next(name.Count));
            break;
        case 3:
            KeyValuePair<int, int> other = spans[rnd.Next(spans.Count)];
            name = new List<byte>(m.Skip(other.Key).Take(other.Value));
            break;
        default:
            string h = Hostile[rnd.Next(Hostile.Length)];
            string asm = rnd.Next(2) == 0 ? "mscorlib" : typeof(Shape).Assembly.GetName().Name;
            name = new List<byte>(Encoding.ASCII.GetBytes(rnd.Next(8) == 0 ? h : h + ", " + asm));
            break;
        }
        return WithName(m, span, name.ToArray());
    }

    static Holder MutationGraph() => new Holder {
        Id = 3,
        O = new List<object> { 1, "a", new[] { 2.5 }, 4m, new Box<int>[0] },
        S = new Pair<string, Box<int>> { First = "f", Second = new Box<int> { Value = 1 } },
        V = DateTime.UtcNow,
        L = new[] { "x" },
        C = 'c',
        A = new Outer.Inner[1],
        Items = new object[] { new Dictionary<string, int> { ["k"] = 1 }, new Outer.Inner(),
                               (byte)1, new Outer.NBox<double>(), new Strict<int>() }
    };

    /// <summary>A graph of 8 records and more without collections (the reader's compiled
    /// factories): holders whose object slots hold framework values, [Transportable] classes
    /// nested and generic, arrays, and the other holders (shared, in a cycle).</summary>
    static Holder[] LargeGraph()
    {
        var hs = new Holder[6];
        for (int i = 0; i < hs.Length; i++)
            hs[i] = new Holder {
                Id = i,
                O = i % 2 == 0 ? (object)(decimal)i : new Guid(i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
                S = i % 3 == 0 ? new Outer.Inner { Id = i, X = 2 * i }
                    : i % 3 == 1
                        ? (Shape) new Pair<string, Box<int>> { First = "p",
                                                               Second = new Box<int> { Value = i } }
                        : new Outer.NBox<double> { Value = i + 0.5 },
                V = new DateTime(2026, 11, 28, 0, 0, i, DateTimeKind.Utc),
                L = new[] { "x", null },
                E = new[] { i, -i },
                A = new Outer.Inner[] { new Outer.Inner { X = i }, null },
                C = i % 2 == 0 ? (IComparable) "c" : 'c',
                Items = new object[] { 1, "a", new Box<int> { Value = i }, 2.5m, (byte)i,
                                       new Outer.Mid.Deep { Y = i }, new Strict<int> { V = i },
                                       TimeSpan.FromTicks(i), null },
            };
        for (int i = 0; i < hs.Length; i++)   // shared, and a cycle through object slots
            hs[i].Items[8] = new HolderBox { Value = hs[(i + 1) % hs.Length] };
        // (Holder is not [Transportable]: it travels in slots declared Holder, never in an object
        // slot, whatever the writer met first — this graph had one there once, which the writer
        // took and the reader took back, and a mutation that dropped the Holder[]'s reference to
        // it left a graph the reader accepted and the writer refused)
        return hs;
    }

    /// <summary>Why a graph read is not sound, or null: a reference field of the test's classes
    /// not [Transportable] holding something, a marked one (or an array element) holding an object
    /// not of its declared type.</summary>
    static string Unsound(object root)
    {
        var seen = new HashSet<object>(new Identity());
        var work = new Stack<object>();
        work.Push(root);
        while (work.Count > 0) {
            object o = work.Pop();
            if (o == null || o is string || !seen.Add(o))
                continue;
            Type t = o.GetType();
            if (t.IsPrimitive || t.IsEnum)
                continue;
            if (o is Array a) {
                Type et = t.GetElementType();
                foreach (object e in a) {
                    if (e != null && !et.IsValueType && !et.IsInstanceOfType(e))
                        return $"a {e.GetType().Name} in a {t.Name}";
                    work.Push(e);
                }
                continue;
            }
            if (o is IEnumerable) {
                foreach (object e in (IEnumerable)o)
                    work.Push(e);
                continue;
            }
            if (t.Assembly != typeof(Shape).Assembly)
                continue;
            for (Type c = t; c != null; c = c.BaseType)
                foreach (var f in c.GetFields(BindingFlags.Instance | BindingFlags.Public |
                                              BindingFlags.NonPublic | BindingFlags.DeclaredOnly)) {
                    object v = f.GetValue(o);
                    if (v != null && !f.FieldType.IsValueType) {
                        if (!f.IsDefined(typeof(TransportableAttribute), false))
                            return $"{t.Name}.{f.Name}, not [Transportable], holds a " +
                                   v.GetType().Name;
                        if (!f.FieldType.IsInstanceOfType(v))
                            return $"{t.Name}.{f.Name} ({f.FieldType.Name}) holds a " +
                                   v.GetType().Name;
                    }
                    work.Push(v);
                }
        }
        return null;
    }

    sealed class Identity : IEqualityComparer<object>
    {
        public new bool Equals(object a, object b) => ReferenceEquals(a, b);
        public int GetHashCode(object o) => RuntimeHelpers.GetHashCode(o);
    }

    /// <summary>A graph of under 8 records without collections (the reader's own path).</summary>
    static Holder SmallGraph() => new Holder {
        Id = 1,
        O = 4m,
        S = new Outer.Inner { Id = 2, X = 3 },
        Items = new object[] { 1, "a" },
    };

    /// <summary>cases mutations of each kind (bytes anywhere; type names only) of three messages
    /// with object slots, taken in turn: MutationGraph (collections: the reader's own path) and
    /// SmallGraph (under 8 records: its own path too), read as a Holder and as object, and
    /// LargeGraph (8 records and more: the compiled factories), read as a Holder[] and as
    /// object. Prints the counts per kind, then per message; checks that nothing but
    /// MPSerializationException ever comes out, and that what arrives is sound (Unsound) and
    /// survives GC.Collect() (the last 256 graphs read stay alive, collected every 256
    /// cases).</summary>
    static void Fuzz(int cases, bool print)
    {
        byte[][] valid = { Serializer.Serialize(MutationGraph()),
                           Serializer.Serialize(SmallGraph()), Serializer.Serialize(LargeGraph()) };
        string[] names = { "collections", "small", "large" };
        int[] records = valid.Select(v => BitConverter.ToInt32(v, 12)).ToArray();
        Check.True(records[1] < 8 && records[2] >= 8,
                   $"fuzzed messages of {string.Join(", ", records)} records");
        var rnd = new Random(43 + Ring.Rank);
        var kept = new object[256];
        foreach (string kind in new[] { "bytes", "names" }) {
            long[,] counts = new long[valid.Length, 4];   // cases, refused, accepted, other
            for (int i = 0; i < cases; i++) {
                int g = i / 2 % valid.Length;
                byte[] b;
                if (kind == "bytes") {
                    b = (byte[])valid[g].Clone();
                    for (int k = rnd.Next(1, 5); k > 0; k--)
                        b[rnd.Next(b.Length)] ^= (byte)rnd.Next(1, 256);
                } else {
                    b = NameMutation(valid[g], rnd);
                }
                if (i % kept.Length == kept.Length - 1)
                    GC.Collect();
                counts[g, 0]++;
                string other = null;
                try {
                    object got = i % 2 == 1 ? Serializer.Deserialize<object>(b, 0, b.Length)
                                 : g < 2    ? Serializer.Deserialize<Holder>(b, 0, b.Length)
                                         : (object)Serializer.Deserialize<Holder[]>(b, 0, b.Length);
                    kept[i % kept.Length] = got;
                    other = Unsound(got);
                    if (other == null && got != null)
                        Serializer.Serialize(got);   // what arrived is a graph that can travel
                } catch (MPSerializationException) {
                    counts[g, 1]++;
                    continue;
                } catch (Exception e) {
                    other = $"unexpected {e.GetType()}: {e.Message}";
                }
                if (other == null) {
                    counts[g, 2]++;
                    continue;
                }
                if (counts[g, 3]++ < 5)
                    Console.Error.WriteLine($"{kind} case {i} ({names[g]}): {other}");
            }
            Func<int, long> Sum = c => Enumerable.Range(0, valid.Length).Sum(g => counts[g, c]);
            if (print) {
                Console.WriteLine($"rank {Ring.Rank}: {kind}: {cases} cases, {Sum(1)} refused, " +
                                  $"{Sum(2)} accepted, {Sum(3)} other");
                for (int g = 0; g < valid.Length; g++)
                    Console.WriteLine($"rank {Ring.Rank}: {kind} of them on {names[g]} " +
                                      $"({records[g]} records): {counts[g, 0]} cases, " +
                                      $"{counts[g, 1]} refused, {counts[g, 2]} accepted, " +
                                      $"{counts[g, 3]} other");
            }
            Check.Equal(0L, Sum(3),
                        $"{cases} {kind} mutations with object slots: only " +
                            $"MPSerializationException or a sound graph ({Sum(2)} accepted)");
        }
    }

    static void Mutations()
    {
        var graph = new Holder {
            Id = 3,
            O = new List<object> { 1, "a", new[] { 2.5 }, 4m },
            S = new Pair<string, Box<int>> { First = "f", Second = new Box<int> { Value = 1 } },
            V = DateTime.UtcNow,
            L = new[] { "x" },
            C = 'c',
            Items = new object[] { new Dictionary<string, int> { ["k"] = 1 }, new Outer.Inner(),
                                   (byte)1 }
        };
        byte[] valid = Serializer.Serialize(graph);
        var rnd = new Random(41 + Ring.Rank);
        int others = 0, survived = 0;
        for (int i = 0; i < 3000; i++) {
            var b = (byte[])valid.Clone();
            for (int k = rnd.Next(1, 5); k > 0; k--)
                b[rnd.Next(b.Length)] ^= (byte)rnd.Next(1, 256);
            try {
                if (Serializer.Deserialize<Holder>(b, 0, b.Length) != null)
                    survived++;
            } catch (MPSerializationException) {
            } catch (Exception e) {
                others++;
                Console.Error.WriteLine("unexpected " + e.GetType() + ": " + e.Message);
            }
        }
        Check.Equal(0, others,
                    $"3000 mutated messages with object slots: only MPSerializationException " +
                        $"({survived} still valid)");
    }

    // ---- over MPI: ORecv<object> returns what was sent ----

    static void Transport()
    {
        object[] values = Values();
        for (int i = 0; i < values.Length; i++) {
            object v = values[i], got = null;
            Ring.Exchange(() => world.OSend(v, next, 20), () =>
                                                          {
                                                              got = world.ORecv<object>(prev, 20);
                                                              return null;
                                                          });
            Check.True(Same(v, got), "ORecv<object> of " + v.GetType().Name);
        }
        foreach (Shape s in Subclasses()) {
            Shape got = null;
            Ring.Exchange(() => world.OSend(s, next, 21), () =>
                                                          {
                                                              got = world.ORecv<Shape>(prev, 21);
                                                              return null;
                                                          });
            Check.True(Same(s, got), "ORecv<Shape> of " + s.GetType().Name);
        }
        // a refused message leaves the communicator usable
        byte[] hostile = Renamed(Serializer.Serialize((object)42), "System.Int32, mscorlib",
                                 "System.IO.FileInfo, mscorlib");
        Ring.Exchange(() => world.Send(hostile, next, 22),
                      () =>
                      {
                          Check.Throws<MPSerializationException>(
                              () => world.ORecv<object>(prev, 22), "ORecv<object> of a FileInfo");
                          return null;
                      });
        Check.StillUsable(world, "a refused object");
    }

    /// <summary>No argument: the suite. `fuzz N`: N cases of each mutation kind, counts
    /// printed.</summary>
    static int Main(string[] args)
    {
        if (args.Length == 2 && args[0] == "fuzz") {
            Fuzz(int.Parse(args[1]), true);
            return Check.Finish("SdtoObjectSlotTest fuzz");
        }
        AtTheRoot();
        InFields();
        Subclasses_();
        Refusals();
        Mutations();
        Fuzz(2000, false);
        Transport();
        world.Barrier();
        Check.Equal(0L, MP.Stats.PinsLive, "no live pins");
        return Check.Finish("SdtoObjectSlotTest");
    }
}

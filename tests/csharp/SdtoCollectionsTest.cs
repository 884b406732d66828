// SdtoCollectionsTest — the standard collections travel by value in graphs (API.md, version 2):
// List, Dictionary, HashSet, Queue, Stack, KeyValuePair, Nullable, enums and the framework values,
// as roots, fields and array elements; identity and cycles through them; collections with free
// entries (removals) and a wrapped queue; a custom comparer or a collection subclass refused at the
// sender with the field path, nothing sent; hostile bytes (duplicate keys and elements, null keys,
// absurd and negative counts, a lower bound, wrong element types) always MPSerializationException,
// never a crash or a large allocation; over MPI with OSend/ORecv, OBcast and OScatter/OGather.
#pragma warning disable 649   // fields exist to give types a shape
using System;
using System.Collections.Generic;
using System.Linq;
using System.MP;

enum Colour : byte
{
    Red = 1,
    Green = 2,
    Blue = 3
}

class Bag
{
    public int Id;
    [Transportable]
    public List<int> Numbers;
    [Transportable]
    public List<string> Words;
    [Transportable]
    public Dictionary<string, int> Counts;
    [Transportable]
    public Dictionary<int, List<string>> Groups;
    [Transportable]
    public HashSet<long> Seen;
    [Transportable]
    public Queue<double> Pending;
    [Transportable]
    public Stack<string> Undo;
    [Transportable]
    public List<Colour> Colours;
    [Transportable]
    public Dictionary<Colour, decimal> Prices;
    [Transportable]
    public List<int?> Maybe;
    [Transportable]
    public List<KeyValuePair<string, DateTime>> Stamps;
    [Transportable]
    public List<List<int>> Nested;
    [Transportable]
    public List<int> Same;                     // the same list as Numbers: one object on arrival
    public KeyValuePair<string, int> Inline;   // carries its key and value
    public int? Optional;
    [Transportable]
    public List<int>[] Lists;
    [Transportable]
    public List<Guid> Ids;
    [Transportable]
    public List<TimeSpan> Spans;
}

class Cell
{
    public int Id;
    [Transportable]
    public List<Cell> Neighbours;   // cycles through the list
    [Transportable]
    public Dictionary<string, Cell> ByName;
    [Transportable]
    public Cell Owner;
}

class Keyed
{
    public int K;
    public override bool Equals(object o) => o is Keyed other && other.K == K;
    public override int GetHashCode() => K;
}

// A key whose hashing reads another graph: a read nested in the rebuild of the outer one.
class NestingKey
{
    public int K;
    public static byte[] Inner;
    public override bool Equals(object o) => o is NestingKey other && other.K == K;
    public override int GetHashCode()
    {
        if (Inner != null && Serializer.Deserialize<int[]>(Inner, 0, Inner.Length).Length != 3)
            throw new InvalidOperationException("the nested read went wrong");
        return K;
    }
}

class Registry
{
    [Transportable]
    public Dictionary<Keyed, string> Names;
    [Transportable]
    public HashSet<Keyed> Set;
}
class Sorted
{
    [Transportable]
    public SortedDictionary<string, int> Map;
}
class Linked
{
    [Transportable]
    public LinkedList<int> Items;
}
class Custom
{
    [Transportable]
    public Dictionary<string, int> Map;
    [Transportable]
    public HashSet<string> Set;
}
class MyList : List<int>
{
    public int Extra;
}
class HoldsMyList
{
    [Transportable]
    public MyList Items;
}
class Other
{
    [Transportable]
    public List<long> Numbers;
}

static class SdtoCollectionsTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, next = Ring.Next, prev = Ring.Prev;

    static Bag Sample(int seed)
    {
        var numbers = Enumerable.Range(seed, 20).ToList();
        var counts = new Dictionary<string, int>();
        for (int i = 0; i < 40; i++)
            counts["w" + i] = i * seed;
        for (int i = 0; i < 40; i += 3)
            counts.Remove("w" + i);   // free entries in the middle
        counts["late"] = -seed;       // reuses a free entry
        var pending = new Queue<double>(4);
        for (int i = 0; i < 6; i++)
            pending.Enqueue(i);
        for (int i = 0; i < 3; i++)
            pending.Dequeue();
        for (int i = 6; i < 9; i++)
            pending.Enqueue(i + seed);   // the queue's store has wrapped
        var seen = new HashSet<long> { 1, 2, 3, 1L << 40, -seed };
        seen.Remove(2);
        var undo = new Stack<string>();
        undo.Push("first");
        undo.Push(null);
        undo.Push("third " + seed);
        return new Bag {
            Id = seed,
            Numbers = numbers,
            Same = numbers,
            Words = new List<string> { "alpha", null, "", "ω " + seed },
            Counts = counts,
            Groups =
                new Dictionary<int, List<string>> { [1] = new List<string> { "a" },
                                                    [seed + 7] = new List<string>(), [-3] = null },
            Seen = seen,
            Pending = pending,
            Undo = undo,
            Colours = new List<Colour> { Colour.Blue, Colour.Red },
            Prices = new Dictionary<Colour, decimal> { [Colour.Green] = -12.340m,
                                                       [Colour.Red] = 1e-20m },
            Maybe = new List<int?> { 1, null, seed },
            Stamps =
                new List<KeyValuePair<string, DateTime>> {
                    new KeyValuePair<string, DateTime>("utc", new DateTime(2026, 11, 24, 1, 2, 3,
                                                                           DateTimeKind.Utc)),
                    new KeyValuePair<string, DateTime>(null, new DateTime(2000, 1, 1, 0, 0, 0,
                                                                          DateTimeKind.Local))
                },
            Nested = new List<List<int>> { new List<int> { 1 }, null, new List<int> { 2, 3 } },
            Inline = new KeyValuePair<string, int>("inline", seed),
            Optional = seed,
            Lists = new[] { new List<int> { seed }, null, numbers },
            Ids = new List<Guid> { new Guid(seed, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11) },
            Spans = new List<TimeSpan> { TimeSpan.FromTicks(seed * 1234567L) },
        };
    }

    static void CheckBag(Bag b, int seed, string how)
    {
        Bag e = Sample(seed);
        Check.True(b != null && b.Id == seed, how + ": the root");
        if (b == null)
            return;
        Check.True(b.Numbers.SequenceEqual(e.Numbers) && b.Numbers.Count == b.Numbers.Capacity,
                   how + ": List<int> in order");
        Check.True(ReferenceEquals(b.Numbers, b.Same) && ReferenceEquals(b.Lists[2], b.Numbers),
                   how + ": one List, three references");
        Check.True(b.Words.SequenceEqual(e.Words),
                   how + ": List<string> with null and empty strings");
        Check.True(b.Counts.Count == e.Counts.Count &&
                       e.Counts.All(kv =>
                                        b.Counts.TryGetValue(kv.Key, out int v) && v == kv.Value) &&
                       b.Counts.Keys.SequenceEqual(e.Counts.Keys),
                   how + ": Dictionary<string,int> after removals, in enumeration order");
        Check.True(b.Groups.Count == 3 && b.Groups[1].SequenceEqual(new[] { "a" }) &&
                       b.Groups[seed + 7].Count == 0 && b.Groups[-3] == null,
                   how + ": Dictionary<int,List<string>> with an empty and a null list");
        Check.True(b.Seen.SetEquals(e.Seen) && b.Seen.Count == 4 && b.Seen.Contains(1L << 40) &&
                       !b.Seen.Contains(2),
                   how + ": HashSet<long> after a removal");
        Check.True(b.Pending.SequenceEqual(e.Pending) && b.Pending.Peek() == 3,
                   how + ": a wrapped Queue<double> in order");
        Check.True(b.Undo.SequenceEqual(e.Undo) && b.Undo.Peek() == "third " + seed,
                   how + ": Stack<string>, top first");
        Check.True(b.Colours.SequenceEqual(e.Colours), how + ": List of an enum");
        Check.True(b.Prices.Count == 2 && b.Prices[Colour.Green] == -12.340m &&
                       b.Prices[Colour.Green].ToString() == "-12.340" &&
                       b.Prices[Colour.Red] == 1e-20m,
                   how + ": Dictionary<enum,decimal>, the decimal's scale and sign");
        Check.True(b.Maybe.SequenceEqual(e.Maybe), how + ": List<int?>");
        Check.True(b.Stamps[0].Key == "utc" && b.Stamps[0].Value == e.Stamps[0].Value &&
                       b.Stamps[0].Value.Kind == DateTimeKind.Utc && b.Stamps[1].Key == null &&
                       b.Stamps[1].Value.Kind == DateTimeKind.Local,
                   how + ": KeyValuePair<string,DateTime> elements, DateTime.Kind");
        Check.True(b.Nested.Count == 3 && b.Nested[0].SequenceEqual(new[] { 1 }) &&
                       b.Nested[1] == null && b.Nested[2].SequenceEqual(new[] { 2, 3 }),
                   how + ": List<List<int>>");
        Check.True(b.Inline.Key == "inline" && b.Inline.Value == seed && b.Optional == seed,
                   how + ": an inline KeyValuePair<string,int> and int?");
        Check.True(b.Lists.Length == 3 && b.Lists[0].Single() == seed && b.Lists[1] == null,
                   how + ": an array of lists");
        Check.True(b.Ids.SequenceEqual(e.Ids) && b.Spans.SequenceEqual(e.Spans),
                   how + ": List<Guid>, List<TimeSpan>");
        // the rebuilt collections work as new ones do
        b.Counts.Add("new", 1);
        b.Seen.Add(99);
        b.Pending.Enqueue(1);
        b.Numbers.Add(5);
        Check.True(b.Counts["new"] == 1 && b.Seen.Contains(99) &&
                       b.Pending.Count == e.Pending.Count + 1 && b.Same.Last() == 5,
                   how + ": the collections are usable afterwards");
    }

    static void Shapes()
    {
        CheckBag(Graphs.RoundTrip(Sample(4)), 4, "Serializer");
        Check.True(Graphs.RoundTrip(new List<int>()).Count == 0, "an empty List<int> root");
        Check.True(Graphs.RoundTrip(new Dictionary<string, string>()).Count == 0,
                   "an empty Dictionary root");
        var d = Graphs.RoundTrip(new Dictionary<string, string> { ["k"] = null, ["e"] = "" });
        Check.True(d.Count == 2 && d["k"] == null && d["e"] == "",
                   "Dictionary<string,string> with a null value");
        var kv = Graphs.RoundTrip(new KeyValuePair<string, List<int>>("k", new List<int> { 1 }));
        Check.True(kv.Key == "k" && kv.Value.Single() == 1,
                   "a KeyValuePair<string,List<int>> root");
        Check.True(Graphs.RoundTrip(new List<string>[] { new List<string> { "x" } }) [0].Single() ==
                       "x",
                   "a List<string>[] root");
        Check.True(Graphs.RoundTrip(new int?[] { 1, null })[1] == null, "int?[]");
        Check.True(Graphs.RoundTrip<List<int>>(null) == null, "a null List root");

        // identity and cycles through collections
        var a = new Cell { Id = 1 };
        var b = new Cell { Id = 2, Owner = a };
        a.Neighbours = new List<Cell> { a, b, b };
        b.Neighbours = a.Neighbours;
        a.ByName = new Dictionary<string, Cell> { ["self"] = a, ["b"] = b };
        b.ByName = new Dictionary<string, Cell> { ["a"] = a };
        Cell a2 = Graphs.RoundTrip(a);
        Check.True(a2.Id == 1 && ReferenceEquals(a2.Neighbours[0], a2) &&
                       ReferenceEquals(a2.Neighbours[1], a2.Neighbours[2]) &&
                       a2.Neighbours[1].Id == 2 && ReferenceEquals(a2.Neighbours[1].Owner, a2) &&
                       ReferenceEquals(a2.Neighbours[1].Neighbours, a2.Neighbours) &&
                       ReferenceEquals(a2.ByName["self"], a2) &&
                       ReferenceEquals(a2.ByName["b"], a2.Neighbours[1]) &&
                       ReferenceEquals(a2.Neighbours[1].ByName["a"], a2),
                   "identity and cycles through List and Dictionary");

        // keys with their own Equals/GetHashCode, rebuilt by value
        var reg =
            new Registry { Names = new Dictionary<Keyed, string>(), Set = new HashSet<Keyed>() };
        for (int i = 0; i < 100; i++) {
            reg.Names[new Keyed { K = i }] = "n" + i;
            reg.Set.Add(new Keyed { K = -i });
        }
        Registry r2 = Graphs.RoundTrip(reg);
        Check.True(r2.Names.Count == 100 && r2.Names[new Keyed { K = 57 }] == "n57" &&
                       r2.Set.Count == 100 && r2.Set.Contains(new Keyed { K = -99 }),
                   "user keys hash on arrival as they did before");

        // a read nested in a read (a key's GetHashCode reads a graph while the outer read rebuilds)
        NestingKey.Inner = Serializer.Serialize(new[] { 1, 2, 3 });
        var nesting = new Dictionary<NestingKey, List<int>>();
        for (int i = 0; i < 300; i++)
            nesting[new NestingKey { K = i }] = new List<int> { i, -i };
        NestingKey.Inner = Serializer.Serialize(new[] { 1, 2, 3 });
        Dictionary<NestingKey, List<int>> nested = Graphs.RoundTrip(nesting);
        NestingKey.Inner = null;
        Check.True(
            nested.Count == 300 &&
                Enumerable.Range(0, 300).All(
                    i => nested[new NestingKey { K = i }].SequenceEqual(new[] { i, -i })),
            "a read nested in another (a key's GetHashCode deserializes) leaves both intact");

        // a large List<double>: contiguous, and whole
        var big = new List<double>(Enumerable.Range(0, 1000000).Select(i => i * 0.5));
        List<double> big2 = Graphs.RoundTrip(big);
        bool same = big2.Count == big.Count;
        for (int i = 0; same && i < big.Count; i++)
            same = big2[i] == big[i];
        Check.True(same, "List<double> of 10^6 elements");
    }

    static void Refused(object graph, string what, params string[] mentions)
    {
        var e = Check.Throws<ArgumentException>(() => Serializer.Serialize(graph),
                                                what + ": refused at the sender");
        if (e == null)
            return;
        foreach (string m in mentions)
            Check.True(e.Message.Contains(m), $"{what}: the message names '{m}': {e.Message}");
    }

    static void Refusals()
    {
        Refused(new Custom { Map = new Dictionary<string, int>(
                                 StringComparer.OrdinalIgnoreCase) { ["a"] = 1 } },
                "a Dictionary with a custom comparer", "root.Map", "comparer", "Dictionary<");
        Refused(new Custom { Set = new HashSet<string>(StringComparer.Ordinal) },
                "an empty HashSet with a custom comparer", "root.Set", "comparer");
        Refused(new Sorted { Map = new SortedDictionary<string, int> { ["a"] = 1 } },
                "a SortedDictionary (not carried)", "root.Map", "SortedDictionary");
        Refused(new Linked { Items = new LinkedList<int>(new[] { 1 }) },
                "a LinkedList (not carried)", "root.Items", "LinkedList");
        Refused(new HoldsMyList { Items = new MyList { 1 } },
                "a user class deriving from List<int>", "root.Items", "_items");
        Refused(new object[] { new List<Version>() },
                "a List of a framework class in a slot declared object", "root[0]", "List<");
        Refused(new List<ValueTuple<string, int>> { ("a", 1) },
                "a List of a framework struct holding a reference", "root[0]", "Item1");
        // a collection found while another's elements are gathered, whose elements are larger
        var outer = new Dictionary<int, List<KeyValuePair<string, decimal>>> {
            [1] = new List<KeyValuePair<string, decimal>> { new KeyValuePair<string, decimal>(
                "k", 2.5m) }
        };
        var outer2 = Graphs.RoundTrip(outer);
        Check.True(outer2[1].Single().Key == "k" && outer2[1].Single().Value == 2.5m,
                   "nested collections with growing elements");
        // a default comparer passed explicitly is the default
        var explicitDefault =
            new Dictionary<string, int>(EqualityComparer<string>.Default) { ["x"] = 1 };
        Check.True(Graphs.RoundTrip(explicitDefault)["x"] == 1,
                   "Dictionary with EqualityComparer.Default travels");
        var setDefault = new HashSet<Colour>(EqualityComparer<Colour>.Default) { Colour.Blue };
        Check.True(Graphs.RoundTrip(setDefault).Contains(Colour.Blue),
                   "HashSet<enum> with its default comparer travels");

        // OSend refuses and sends nothing: the next message on the tag is the good one
        Custom got = null;
        Exception refusal = null;
        Ring.Exchange(
            () =>
            {
                try {
                    world.OSend(new Custom { Map = new Dictionary<string, int>(
                                                 StringComparer.Ordinal) },
                                next, 50);
                } catch (ArgumentException e) {
                    refusal = e;
                }
                world.OSend(new Custom { Map = new Dictionary<string, int> { ["r"] = rank } }, next,
                            50);
            },
            () =>
            {
                got = world.ORecv<Custom>(prev, 50);
                return null;
            });
        Check.True(refusal != null && refusal.Message.Contains("root.Map"),
                   "OSend refuses a custom comparer: " + refusal?.Message);
        Check.True(got != null && got.Map["r"] == prev, "nothing was sent by the refused OSend");
    }

    // ---- hostile bytes ----

    /// <summary>Offset of record 0 (the root) in a message: after the header and
    /// type table.</summary>
    static int FirstRecord(byte[] m)
    {
        int types = BitConverter.ToInt32(m, 8), at = 32;
        for (int t = 0; t < types; t++)
            at += 16 + BitConverter.ToInt32(m, at + 12);
        return at;
    }

    static void Rejected<T>(byte[] m, string what, string mention = null)
    {
        long before = GC.GetTotalMemory(false);
        var e =
            Check.Throws<MPSerializationException>(() => Serializer.Deserialize<T>(m, 0, m.Length),
                                                   what);
        Check.True(GC.GetTotalMemory(false) - before < (64 << 20), what + ": no large allocation");
        if (e != null && mention != null)
            Check.True(e.Message.Contains(mention),
                       $"{what}: the message says '{mention}': {e.Message}");
    }

    static byte[] Patched(byte[] m, int at, int value)
    {
        var b = (byte[])m.Clone();
        BitConverter.GetBytes(value).CopyTo(b, at);
        return b;
    }

    static void Hostile()
    {
        // a Dictionary<int,int> root: record 0 is type, length, lower bound, then key,value pairs
        byte[] dict =
            Serializer.Serialize(new Dictionary<int, int> { [1] = 10, [2] = 20, [3] = 30 });
        int r0 = FirstRecord(dict);
        Check.Equal(3, BitConverter.ToInt32(dict, r0 + 4),
                    "the collection's length where FORMAT.md puts it");
        Check.Equal(2, BitConverter.ToInt32(dict, r0 + 12 + 8),
                    "the second key where FORMAT.md puts it");
        Rejected<Dictionary<int, int>>(Patched(dict, r0 + 12 + 8, 1), "a duplicate Dictionary key",
                                       "same key");
        Rejected<Dictionary<int, int>>(Patched(dict, r0 + 4, int.MaxValue),
                                       "an absurd collection length");
        Rejected<Dictionary<int, int>>(Patched(dict, r0 + 4, -1), "a negative collection length");
        Rejected<Dictionary<int, int>>(Patched(dict, r0 + 4, 2),
                                       "a length shorter than the elements");
        Rejected<Dictionary<int, int>>(Patched(dict, r0 + 8, 1), "a collection with a lower bound");
        Rejected<Dictionary<long, int>>(dict,
                                        "Dictionary<int,int> bytes read as Dictionary<long,int>");
        Rejected<List<int>>(dict, "a Dictionary read as a List");
        byte[] nums = Serializer.Serialize(new Other { Numbers = new List<long> { 1 } });
        Rejected<Bag>(nums, "a type not reachable from T");

        // a HashSet<string>: elements are references to string records; make two strings equal
        byte[] set = Serializer.Serialize(new HashSet<string> { "ab", "ac" });
        int c = -1;
        for (int i = set.Length - 2; i >= 0 && c < 0; i--)
            if (set[i] == (byte)'c' && set[i + 1] == 0)
                c = i;
        Check.True(c > 0, "the second string's last character found");
        var dup = (byte[])set.Clone();
        dup[c] = (byte)'b';
        Rejected<HashSet<string>>(dup, "a duplicate HashSet element", "equals an earlier one");
        Check.True(
            Graphs.RoundTrip(new HashSet<string> { "ab", "ac" }).SetEquals(new[] { "ab", "ac" }),
            "the unpatched set reads");

        // a Dictionary<string,int>: a null key (its reference patched to -1)
        byte[] sd = Serializer.Serialize(new Dictionary<string, int> { ["k"] = 0x5EADBEEF });
        int v = -1;
        for (int i = 0; i + 4 <= sd.Length && v < 0; i++)
            if (BitConverter.ToInt32(sd, i) == 0x5EADBEEF)
                v = i;
        // KeyValuePair<string,int>: key slot (8), value (4), padding (4), then the key's reference
        int refAt = v + 8;
        Check.True(v > 0 && BitConverter.ToInt32(sd, refAt) > 0, "the key's reference found");
        Rejected<Dictionary<string, int>>(Patched(sd, refAt, -1), "a null Dictionary key", "null");
        Rejected<Dictionary<string, int>>(
            Patched(sd, refAt, 0), "a key that is the dictionary itself", "not a System.String");

        // random mutations of a graph full of collections: a valid graph
        // or MPSerializationException
        byte[] valid = Serializer.Serialize(Sample(2));
        var rnd = new Random(23 + rank);
        int others = 0, survived = 0;
        for (int i = 0; i < 2000; i++) {
            var b = (byte[])valid.Clone();
            for (int k = rnd.Next(1, 5); k > 0; k--)
                b[rnd.Next(b.Length)] ^= (byte)rnd.Next(1, 256);
            try {
                if (Serializer.Deserialize<Bag>(b, 0, b.Length) != null)
                    survived++;
            } catch (MPSerializationException) {
            } catch (Exception e) {
                others++;
                Console.Error.WriteLine("unexpected " + e.GetType() + ": " + e.Message);
            }
        }
        Check.Equal(
            0, others,
            $"2000 mutated payloads: only MPSerializationException ({survived} still valid)");
        int rejected = 0;
        for (int cut = 0; cut < valid.Length; cut += 7)
            try {
                Serializer.Deserialize<Bag>(valid, 0, cut);
            } catch (MPSerializationException) {
                rejected++;
            }
        Check.Equal((valid.Length + 6) / 7, rejected, "truncations are rejected");
    }

    static void Transport()
    {
        Bag got = null;
        Ring.Exchange(() => world.OSend(Sample(rank), next, 60),
                      () =>
                      {
                          got = world.ORecv<Bag>(prev, 60);
                          return null;
                      });
        CheckBag(got, prev, "OSend/ORecv");
        CheckBag(world.OBcast(rank == 0 ? Sample(9) : null, 0), 9, "OBcast");
        var pieces = rank == 0 ? Enumerable.Range(0, world.Size * 2)
                                     .Select(i => new Dictionary<int, string> { [i] = "p" + i })
                                     .ToArray()
                               : null;
        Dictionary<int, string>[] mine = world.OScatter(pieces, 0);
        Check.True(mine.Length == 2 && mine[0][2 * rank] == "p" + 2 * rank &&
                       mine[1][2 * rank + 1] == "p" + (2 * rank + 1),
                   "OScatter of Dictionary pieces");
        Dictionary<int, string>[] all = world.OGather(mine, 0);
        Check.True(rank != 0 || (all.Length == 2 * world.Size &&
                                 all.Select((d, i) => d[i] == "p" + i).All(x => x)),
                   "OGather of Dictionary pieces");
        Check.Equal(world.Size, world.Allreduce(1, Op.Sum), "usable afterwards");
    }

    /// <summary>Collections written and rebuilt while another thread forces minor and major
    /// collections: fresh (nursery) collections whose stores move, and large ones whose writes
    /// give way to the collector; every element arrives.</summary>
    static void WhileCollecting()
    {
        var collector = new Collector();
        int bad = 0;
        for (int round = 0; round < 12; round++) {
            var map = new Dictionary<string, List<int>>();
            for (int i = 0; i < 20000; i++)
                map["k" + i] = new List<int> { i, round };
            for (int i = 0; i < 20000; i += 5)
                map.Remove("k" + i);
            Dictionary<string, List<int>> back = Graphs.RoundTrip(map);
            if (back.Count != 16000)
                bad++;
            foreach (var kv in map)
                if (!back.TryGetValue(kv.Key, out List<int> l) || l.Count != 2 ||
                    l[0] != kv.Value[0] || l[1] != round) {
                    bad++;
                    break;
                }
            var q = new Queue<string>();
            for (int i = 0; i < 30000; i++) {
                q.Enqueue("s" + i);
                if (i % 3 == 0)
                    q.Dequeue();
            }
            if (!Graphs.RoundTrip(q).SequenceEqual(q))
                bad++;
            CheckBag(Graphs.RoundTrip(Sample(round)), round, "while collecting");
        }
        collector.Dispose();
        Check.Equal(0, bad,
                    "collections written and rebuilt while another thread collects arrive whole");
    }

    static int Main()
    {
        Shapes();
        Refusals();
        Hostile();
        Transport();
        WhileCollecting();
        world.Barrier();
        Check.Equal(0L, MP.Stats.PinsLive, "no live pins");
        return Check.Finish("SdtoCollectionsTest");
    }
}

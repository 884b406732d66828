// SdtoTest — the structured data transport: round trips of every shape API.md names (through
// Serializer and through OSend/ORecv/OBcast), identity and cycles, unmarked references arriving
// null, inherited fields, structs with references, double[,] inside graphs, a 10^6-element list,
// polymorphism rules, and hostile bytes: random, every truncation, mutations, types not reachable
// from T, roots not assignable to T, absurd lengths — always MPSerializationException (or a valid
// object), never a crash, and the communicator stays usable.
#pragma warning disable 649   // fields exist to give types a shape
using System;
using System.Linq;
using System.MP;
using System.Threading;

class Node
{
    public int Value;
    [Transportable]
    public Node Next;
}

// Classes whose constructors do something: a received object must never run them (a message of
// 8 records or more has its objects made by `new` where that only allocates).
class Initialized
{
    public int X = 7;
    [Transportable]
    public Initialized Next;
}
class Counted
{
    public static int Made;
    public int X;
    [Transportable]
    public Counted Next;
    public Counted() { Made++; }
}
class InitializedBase
{
    public int B = 5;
}
class PlainDerived : InitializedBase
{
    public int D;
    [Transportable]
    public PlainDerived Next;
}
class Plain<T>
{
    public T Value;
    [Transportable]
    public Plain<T> Next;
    [Transportable]
    public string Name;
    [Transportable]
    public int[] Data;
}
class Chain
{
    public int V;
    [Transportable]
    public Chain Next;
    [Transportable]
    public string Label;
}
class Carrier<T>
    where T : class
{
    [Transportable]
    public T Item;
    [Transportable]
    public Carrier<T> Next;
    public T NotSent;
}
class RefBase
{
    [Transportable]
    public string Name;
    public string Local;
}
class RefDerived : RefBase
{
    [Transportable]
    public RefDerived Next;
    [Transportable]
    public RefBase Other;
}
class Finalized
{
    public static int Finalizers;
    public int X;
    [Transportable]
    public Finalized Next;
    ~Finalized() { Interlocked.Increment(ref Finalizers); }
}
class Record
{
    public long Id;
    public double Score;
    [Transportable]
    public string Name;
    public string Note;   // unmarked: arrives null
    [Transportable]
    public int[] Data;
    [Transportable]
    public double[,] Grid;
    [Transportable]
    public Record Peer;
    [Transportable]
    public object[] Bag;
    public Pair Inline;   // value-type field: always travels
    [Transportable]
    public Pair[] Pairs;
}
struct Pair
{
    public int Key;
    [Transportable]
    public string Label;
    public string Hidden;
}
class BaseShape
{
    public int Sides;
}
[Transportable]
class Square : BaseShape
{
    public double Edge;
}
// not marked: no polymorphic travel
class Triangle : BaseShape
{
    public double Height;
}
// not marked; Square's layout, a name as long
class Circle : BaseShape
{
    public double Radius;
}
class Holder
{
    [Transportable]
    public BaseShape Shape;
}
class Secret
{
    public int Code;
}
// the shallow-water record
class Res
{
    public int Row, Col;
    [Transportable]
    public double[,] Block;
}
class Unsafe
{
    [Transportable]
    public Action Callback;
}

static class SdtoTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, next = Ring.Next, prev = Ring.Prev;

    static Record Sample(int seed)
    {
        var r = new Record {
            Id = 1000 + seed,
            Score = seed * 0.5,
            Name = "record " + seed,
            Note = "secret",
            Data = Enumerable.Range(seed, 50).ToArray(),
            Grid = new double[3, 4],
            Inline = new Pair { Key = 7, Label = "inline", Hidden = "h" },
            Pairs = new[] { new Pair { Key = 1, Label = "one" },
                            new Pair { Key = 2, Label = null, Hidden = "x" } },
        };
        r.Grid[2, 3] = seed + 0.25;
        r.Peer = r;   // a cycle
        // shared references
        r.Bag = new object[] { r, new Square { Sides = 4, Edge = 2 }, null, r.Pairs };
        return r;
    }

    static void CheckSample(Record r, int seed, string how)
    {
        bool ok =
            r != null && r.Id == 1000 + seed && r.Score == seed * 0.5 &&
            r.Name == "record " + seed && r.Note == null && r.Data.Length == 50 &&
            r.Data[49] == seed + 49 && r.Grid[2, 3] == seed + 0.25 && r.Grid.GetLength(0) == 3 &&
            r.Grid.GetLength(1) == 4 && ReferenceEquals(r.Peer, r) &&
            ReferenceEquals(r.Bag[0], r) && r.Bag[2] == null && ((Square)r.Bag[1]).Edge == 2 &&
            ((Square)r.Bag[1]).Sides == 4 && ReferenceEquals(r.Bag[3], r.Pairs) &&
            r.Inline.Key == 7 && r.Inline.Label == "inline" && r.Inline.Hidden == null &&
            r.Pairs[0].Label == "one" && r.Pairs[1].Key == 2 && r.Pairs[1].Label == null &&
            r.Pairs[1].Hidden == null;
        Check.True(ok, how + ": every field, identity and cycle as written");
    }

    static void Shapes()
    {
        CheckSample(Graphs.RoundTrip(Sample(3)), 3, "Serializer round trip");
        Check.True(Graphs.RoundTrip<Record>(null) == null, "null root");
        Check.Equal(
            0, Serializer.Deserialize<int>(Serializer.Serialize(null), 0, Serializer.Measure(null)),
            "null graph as a value type");
        Check.Equal(42L, Graphs.RoundTrip(42L), "a long as the root");
        byte[] boxed = Serializer.Serialize(42L);
        Check.Equal((object)42L, Serializer.Deserialize<object>(boxed, 0, boxed.Length),
                    "a boxed long received as object (a framework value)");
        Check.Equal("héllo wörld", Graphs.RoundTrip("héllo wörld"), "string root");
        Check.True(Graphs.RoundTrip(new[] { 1.5, 2.5 }).SequenceEqual(new[] { 1.5, 2.5 }),
                   "double[] root");
        var m = new int[2, 3, 4];
        m[1, 2, 3] = 99;
        Check.Equal(99, Graphs.RoundTrip(m)[1, 2, 3], "int[,,] root");
        var sq = Graphs.RoundTrip(new Holder { Shape = new Square { Sides = 4, Edge = 1.5 } });
        Check.True(sq.Shape is Square s && s.Edge == 1.5 && s.Sides == 4,
                   "[Transportable] subclass in a base-typed field, inherited fields");
        Check.Throws<ArgumentException>(() => Serializer.Serialize(
                                            new Holder { Shape = new Triangle() }),
                                        "unmarked subclass in a base-typed field");
        // clang-format off
        Check.Throws<ArgumentException>(
            () => Serializer.Serialize(new Unsafe { Callback = () => { } }),
            "a delegate never travels");
        // clang-format on
        var res = Graphs.RoundTrip(new Res { Row = 4, Col = 1, Block = new double[16, 256] });
        Check.True(res.Block.GetLength(0) == 16 && res.Block.GetLength(1) == 256 && res.Row == 4,
                   "Res with a double[,] block");
        var jagged = Graphs.RoundTrip(new[] { new[] { 1 }, null, new[] { 2, 3 } });
        Check.True(jagged[0][0] == 1 && jagged[1] == null && jagged[2][1] == 3, "jagged int[][]");
    }

    static void LongList()
    {
        Node head = null;
        for (int i = 0; i < 1000000; i++)
            head = new Node { Value = i, Next = head };
        Node back = Graphs.RoundTrip(head);
        int n = 0;
        bool ordered = true;
        for (Node p = back; p != null; p = p.Next, n++)
            ordered &= p.Value == 999999 - n;
        Check.True(n == 1000000 && ordered, "a 1,000,000-element list round trip");
        // and over MPI, around the ring
        Node got = null;
        Ring.Exchange(() => world.OSend(head, next, 3), () =>
                                                        {
                                                            got = world.ORecv<Node>(prev, 3);
                                                            return null;
                                                        });
        n = 0;
        for (Node p = got; p != null; p = p.Next)
            n++;
        Check.Equal(1000000, n, "a 1,000,000-element list through OSend/ORecv");
    }

    static T List<T>(int n, Func<int, T, T> make)
        where T : class
    {
        T head = null;
        for (int i = 0; i < n; i++)
            head = make(i, head);
        return head;
    }

    // Large messages (8 records or more) have their objects made by `new` in JIT-compiled code
    // where that only allocates (System.MP's SdtoFactories), else by the reader: either way no
    // constructor or field initializer runs on receipt, every value arrives as sent, generic
    // classes, strings (empty ones too), arrays and finalizable classes included.
    static void ManyObjects()
    {
        const int n = 200;
        var init =
            Graphs.RoundTrip(List<Initialized>(n, (i, next) =>
                                                  {
                                                      var o = new Initialized { Next = next };
                                                      o.X = i;
                                                      return o;
                                                  }));
        int k = n - 1, wrong = 0;
        for (var p = init; p != null; p = p.Next, k--)
            wrong += p.X == k ? 0 : 1;
        Check.True(wrong == 0 && k == -1,
                   "a field initializer does not run on receipt (X as sent, not 7)");

        var counted = List<Counted>(n, (i, next) => new Counted { X = i, Next = next });
        int before = Counted.Made;
        var back = Graphs.RoundTrip(counted);
        Check.True(Counted.Made == before && back.X == n - 1 && back.Next.X == n - 2,
                   "a constructor does not run on receipt");

        var derived = List<PlainDerived>(n, (i, next) =>
                                            {
                                                var o = new PlainDerived { D = i, Next = next };
                                                o.B = -i;
                                                return o;
                                            });
        var d = Graphs.RoundTrip(derived);
        wrong = 0;
        k = n - 1;
        for (var p = d; p != null; p = p.Next, k--)
            wrong += p.D == k && p.B == -k ? 0 : 1;
        Check.True(wrong == 0 && k == -1,
                   "a base class's field initializer does not run on receipt");

        var plain = List<Plain<double>>(n, (i, next) => new Plain<double> {
            Value = i + 0.5, Next = next, Name = i % 3 == 0 ? "" : "n" + i,
            Data = i % 5 == 0 ? null : new[] { i, -i }
        });
        foreach (var g in new[] { Graphs.RoundTrip(plain), Exchanged(plain) }) {
            wrong = 0;
            k = n - 1;
            for (var p = g; p != null; p = p.Next, k--)
                wrong +=
                    p.Value == k + 0.5 && p.Name == (k % 3 == 0 ? "" : "n" + k) &&
                            (k % 5 == 0 ? p.Data == null
                                        : p.Data.Length == 2 && p.Data[0] == k && p.Data[1] == -k)
                        ? 0
                        : 1;
            Check.True(wrong == 0 && k == -1,
                       "a generic class with strings (empty ones too) and arrays arrives as sent");
        }

        var strings = Enumerable.Range(0, n)
                          .Select(i => i % 4 == 0 ? "" : new string((char)('a' + i % 26), i))
                          .ToArray();
        var s2 = Graphs.RoundTrip(strings);
        Check.True(s2.Length == n && s2.SequenceEqual(strings),
                   "a string[] of 200 strings arrives as sent");

        var jagged =
            Enumerable.Range(0, n).Select(i => Enumerable.Range(i, i % 7).ToArray()).ToArray();
        var j2 = Graphs.RoundTrip(jagged);
        Check.True(j2.Length == n && j2.Select((a, i) => a.SequenceEqual(jagged[i])).All(x => x),
                   "an int[][] of 200 arrays arrives as sent");

        // linkers: a field of a generic parameter's type, fields inherited from a base class,
        // null and non-null references of one field, unmarked fields arriving null
        var carried = Graphs.RoundTrip(List<Carrier<string>>(
            n, (i, next) => new Carrier<string> { Item = "s" + i, Next = next, NotSent = "x" }));
        var arrays = Exchanged(List<Carrier<int[]>>(
            n, (i, next) => new Carrier<int[]> { Item = new[] { i }, Next = next }));
        var derived2 = Graphs.RoundTrip(List<RefDerived>(n, (i, next) => new RefDerived {
            Name = "n" + i, Local = "l", Next = next,
            Other = i % 2 == 0 ? null : new RefBase { Name = "o" + i, Local = "l" }
        }));
        wrong = 0;
        k = n - 1;
        var c1 = carried;
        var c2 = arrays;
        var c3 = derived2;
        for (; c1 != null; c1 = c1.Next, c2 = c2.Next, c3 = c3.Next, k--)
            wrong += c1.Item == "s" + k && c1.NotSent == null && c2.Item.Single() == k &&
                             c3.Name == "n" + k && c3.Local == null &&
                             (k % 2 == 0 ? c3.Other == null
                                         : c3.Other.Name == "o" + k && c3.Other.Local == null)
                         ? 0
                         : 1;
        Check.True(wrong == 0 && k == -1 && c2 == null && c3 == null,
                   "generic-typed and inherited references arrive as sent, unmarked ones null");

        // a large message whose first node's two references are swapped (Next names a string,
        // Label a Chain): refused before any object is linked, and the reader goes on working
        byte[] chain = Serializer.Serialize(
            List<Chain>(n, (i, next) => new Chain { V = i, Next = next, Label = "L" + i }));
        int at = -1;
        for (int i = 32; i + 8 <= chain.Length && at < 0; i++)
            if (BitConverter.ToInt32(chain, i) == 1 && BitConverter.ToInt32(chain, i + 4) == 2)
                at = i;
        Check.True(at > 0, "the first record's references are records 1 and 2");
        byte[] swapped = (byte[])chain.Clone();
        BitConverter.GetBytes(2).CopyTo(swapped, at);
        BitConverter.GetBytes(1).CopyTo(swapped, at + 4);
        var refused = Check.Throws<MPSerializationException>(
            () => Serializer.Deserialize<Chain>(swapped, 0, swapped.Length),
            "a reference to a record of the wrong type in a large message");
        Check.True(
            refused != null &&
                refused.Message.Contains(
                    "receiving a Chain: root.Next holds a System.String where a Chain is declared"),
            "it says which reference does not fit, where, and what was declared there: " +
                refused?.Message);
        var fine = Serializer.Deserialize<Chain>(chain, 0, chain.Length);
        Check.True(fine.V == n - 1 && fine.Label == "L" + (n - 1) &&
                       fine.Next.Label == "L" + (n - 2),
                   "the unswapped message still reads");

        var fin =
            Graphs.RoundTrip(List<Finalized>(n, (i, next) => new Finalized { X = i, Next = next }));
        Check.True(fin.X == n - 1 && fin.Next.X == n - 2, "a finalizable class arrives as sent");
        int finalizers = Finalized.Finalizers;
        fin = null;
        for (int i = 0; i < 3; i++) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Check.True(
            Finalized.Finalizers - finalizers >= n,
            $"received finalizable objects are finalized ({Finalized.Finalizers - finalizers} of " +
                $"{n})");
    }

    static T Exchanged<T>(T graph)
    {
        T got = default(T);
        Ring.Exchange(() => world.OSend(graph, next, 11),
                      () =>
                      {
                          got = world.ORecv<T>(prev, 11);
                          return null;
                      });
        return got;
    }

    // A thread that reads keeps a pinned holder (an object[] as long as its largest read, up to
    // 65536 entries) for its next reads, and the reader's native work arrays (~3.6 MB for 60000
    // records): both must go when the thread ends, or every short-lived reading thread leaks a
    // pinned large object (40 threads here: ~20 MB that no collection frees) and native memory
    // (~140 MB).
    static void ThreadsLeaveNoHolders()
    {
        Node head = null;
        for (int i = 0; i < 60000; i++)
            head = new Node { Value = i, Next = head };
        byte[] bytes = Serializer.Serialize(head);
        head = null;
        const int threads = 40;
        long perThread = 60000L * IntPtr.Size;
        // this thread's own holder exists before
        Serializer.Deserialize<Node>(bytes, 0, bytes.Length);
        for (int i = 0; i < 3; i++)
            GC.Collect();   // earlier garbage swept: only what stays counts
        long before = GC.GetTotalMemory(true), residentBefore = ResidentBytes();
        int read = 0;
        for (int t = 0; t < threads; t++) {
            ThreadStart readOnce = () =>
            {
                if (Serializer.Deserialize<Node>(bytes, 0, bytes.Length).Value == 59999)
                    Interlocked.Increment(ref read);
            };
            var th = new Thread(readOnce);
            th.Start();
            th.Join();
        }
        for (int i = 0; i < 3; i++)
            GC.Collect();
        long grown = GC.GetTotalMemory(true) - before,
             residentGrown = ResidentBytes() - residentBefore;
        Check.Equal(threads, read, "every thread read the graph");
        Check.True(
            grown < threads * perThread / 4,
            $"the heap grew {grown} bytes after {threads} reading threads ended (a kept holder " +
                $"each would be {threads * perThread})");
        Check.True(
            residentGrown < 60L << 20,
            $"resident memory grew {residentGrown >> 20} MiB after {threads} reading threads " +
                "ended (~3.6 MB each if their work arrays were kept)");
    }

    static long ResidentBytes()
    {
        foreach (string line in System.IO.File.ReadAllLines("/proc/self/status"))
            if (line.StartsWith("VmRSS:"))
                return long.Parse(line.Split(new[] { ' ', '\t' },
                                             StringSplitOptions.RemoveEmptyEntries)[1]) *
                       1024;
        return 0;
    }

    // A thread that writes keeps the writer's work arrays (identity map, record tables: ~2.4 MB
    // for a 60000-object graph) for its next write: they must go when the thread ends.
    static void ThreadsLeaveNoWriterArrays()
    {
        Node head = null;
        for (int i = 0; i < 60000; i++)
            head = new Node { Value = i, Next = head };
        const int threads = 40;
        long size = Serializer.Measure(head), wrote = 0;
        for (int i = 0; i < 3; i++)
            GC.Collect();
        long before = ResidentBytes();
        for (int t = 0; t < threads; t++) {
            var th = new Thread(() => Interlocked.Add(ref wrote, Serializer.Measure(head)));
            th.Start();
            th.Join();
        }
        for (int i = 0; i < 3; i++)
            GC.Collect();
        long grown = ResidentBytes() - before;
        Check.Equal(threads * size, wrote, "every thread measured the graph");
        Check.True(
            grown < 40L << 20,
            $"resident memory grew {grown >> 20} MiB after {threads} writing threads ended (~2.4 " +
                "MB each if kept)");
    }

    static void Transport()
    {
        Status st = null;
        Record r = null;
        Ring.Exchange(() => world.OSend(Sample(rank), next, 7),
                      () =>
                      {
                          r = world.ORecv<Record>(MP.AnySource, 7, out st);
                          return st;
                      });
        CheckSample(r, prev, "OSend/ORecv");
        Check.True(st.Source == prev && st.Tag == 7 && st.Bytes > 0 && st.Count == st.Bytes,
                   "ORecv status counts bytes");
        for (int root = 0; root < world.Size; root++) {
            Record b = world.OBcast(rank == root ? Sample(root) : null, root);
            CheckSample(b, root, "OBcast from " + root);
        }
        var mine = Sample(rank);
        Check.True(!ReferenceEquals(world.OBcast(mine, 0), mine), "the root gets its own copy");
        // receiving as a base type the sender did not use: allowed only along API.md's rules
        BaseShape shape = null;
        Ring.Exchange(() => world.OSend(new Square { Edge = 3 }, next, 8),
                      () =>
                      {
                          shape = world.ORecv<BaseShape>(prev, 8);
                          return null;
                      });
        Check.True(shape is Square q && q.Edge == 3,
                   "a [Transportable] subclass received as its base type");
    }

    static void Hostile()
    {
        byte[] valid = Serializer.Serialize(Sample(1));
        // every truncation
        int rejected = 0;
        for (int cut = 0; cut < valid.Length; cut++) {
            try {
                Serializer.Deserialize<Record>(valid, 0, cut);
            } catch (MPSerializationException) {
                rejected++;
            }
        }
        Check.Equal(valid.Length, rejected, "every truncation of a valid payload is rejected");
        // random bytes and random mutations: a valid object or MPSerializationException,
        // nothing else
        var rnd = new Random(17 + rank);
        int others = 0, survived = 0;
        for (int i = 0; i < 3000; i++) {
            byte[] b = i % 3 == 0 ? new byte[rnd.Next(0, 300)] : (byte[])valid.Clone();
            if (i % 3 == 0)
                rnd.NextBytes(b);
            else
                for (int k = rnd.Next(1, 6); k > 0; k--)
                    b[rnd.Next(b.Length)] ^= (byte)rnd.Next(1, 256);
            try {
                if (Serializer.Deserialize<Record>(b, 0, b.Length) != null)
                    survived++;
            } catch (MPSerializationException) {
            } catch (Exception e) {
                others++;
                Console.Error.WriteLine("unexpected " + e.GetType() + ": " + e.Message);
            }
        }
        Check.Equal(
            0, others,
            $"3000 random or mutated payloads: only MPSerializationException ({survived} still " +
                "valid)");
        // a type not reachable from T, and a root not assignable to T
        byte[] secret = Serializer.Serialize(new Secret { Code = 1234 });
        var e1 = Check.Throws<MPSerializationException>(
            () => Serializer.Deserialize<Record>(secret, 0, secret.Length),
            "a type not reachable from T");
        Check.True(e1 != null && e1.Message.Contains("receiving a Record: root holds a Secret") &&
                       e1.Message.Contains("receive it as a Secret"),
                   "the message names the expected type, the type found, where, and the fix: " +
                       e1?.Message);
        Check.Throws<MPSerializationException>(
            () => Serializer.Deserialize<Secret>(valid, 0, valid.Length),
            "a root not assignable to T");
        byte[] tri = Serializer.Serialize(new Triangle());
        Check.Throws<MPSerializationException>(
            () => Serializer.Deserialize<BaseShape>(tri, 0, tri.Length),
            "an unmarked subclass as its base type");
        Check.Throws<MPSerializationException>(
            () => Serializer.Deserialize<object>(secret, 0, secret.Length),
            "object as T admits nothing unmarked");
        // absurd declared lengths: patch the int[] length of a small graph
        byte[] arr = Serializer.Serialize(new[] { 1, 2, 3 });
        int at = arr.Length - 12 - 8;   // length:u32 lower:i32 then 3 ints
        BitConverter.GetBytes(int.MaxValue).CopyTo(arr, at);
        long before = GC.GetTotalMemory(false);
        Check.Throws<MPSerializationException>(
            () => Serializer.Deserialize<int[]>(arr, 0, arr.Length), "an absurd array length");
        Check.True(GC.GetTotalMemory(false) - before < (64 << 20),
                   "no large allocation for an absurd length");
        Check.Throws<ArgumentOutOfRangeException>(
            () => Serializer.Deserialize<Record>(valid, 5, valid.Length), "count past the end");
        Check.Throws<ArgumentException>(() => Serializer.Serialize(Sample(1), new byte[10], 0),
                                        "a buffer too small");
        // a hostile message over MPI: ORecv rejects it and the communicator stays usable
        Ring.Exchange(() => world.Send(secret, next, 9),
                      () =>
                      {
                          Check.Throws<MPSerializationException>(
                              () => world.ORecv<Record>(prev, 9),
                              "ORecv of a graph of another type");
                          return null;
                      });
        Ring.Exchange(() => world.OSend(new Triangle { Sides = 3 }, next, 12),
                      () =>
                      {
                          var e2 = Check.Throws<MPSerializationException>(
                              () => world.ORecv<BaseShape>(prev, 12),
                              "ORecv<BaseShape> of an unmarked Triangle");
                          Check.True(e2 != null &&
                                         e2.Message.Contains(
                                             "receiving a BaseShape: root holds a Triangle") &&
                                         e2.Message.Contains("mark class Triangle [Transportable]"),
                                     "it names both types, where, and which class to mark: " +
                                         e2?.Message);
                          return null;
                      });
        // an unmarked subclass in a field declared as its base: only hostile bytes hold one (the
        // sender refuses it), here a Square renamed Circle
        byte[] circle =
            Serializer.Serialize(new Holder { Shape = new Square { Sides = 1, Edge = 2 } });
        int named = 0;
        for (int i = 0; i + 6 <= circle.Length; i++)
            if (System.Text.Encoding.ASCII.GetString(circle, i, 6) == "Square") {
                System.Text.Encoding.ASCII.GetBytes("Circle").CopyTo(circle, i);
                named++;
            }
        Check.Equal(1, named, "the Square's type name appears once in its bytes");
        var e3 = Check.Throws<MPSerializationException>(
            () => Serializer.Deserialize<Holder>(circle, 0, circle.Length),
            "an unmarked subclass in a base-typed field");
        Check.True(
            e3 != null &&
                e3.Message.Contains(
                    "receiving a Holder: root.Shape holds a Circle where a BaseShape is " +
                    "declared") &&
                e3.Message.Contains("mark class Circle [Transportable]"),
            "it names both types, the field path, the declared type and which class to mark: " +
                e3?.Message);
        Ring.Exchange(() => world.Send(new byte[] { 1, 2, 3 }, next, 10),
                      () =>
                      {
                          Check.Throws<MPSerializationException>(
                              () => world.ORecv<Record>(prev, 10),
                              "ORecv of bytes that are no graph");
                          return null;
                      });
        Record ok = null;
        Ring.Exchange(() => world.OSend(Sample(rank), next, 11),
                      () =>
                      {
                          ok = world.ORecv<Record>(prev, 11);
                          return null;
                      });
        CheckSample(ok, prev, "usable after hostile messages");
    }

    static void SplitCollectives()
    {
        int size = world.Size;
        var shared = new Node { Value = -1 };
        foreach (int n in new[] { 0, 1, size - 1, 10, 1001 }) {
            int root = n % size;
            Record[] all = null;
            if (rank == root) {
                all = new Record[n];
                for (int i = 0; i < n; i++)
                    all[i] = new Record { Id = i, Name = "r" + i, Peer = null, Data = new[] { i } };
            }
            Record[] piece = world.OScatter(all, root);
            int expect = n / size + (rank < n % size ? 1 : 0);
            int first = rank * (n / size) + Math.Min(rank, n % size);
            Check.True(piece != null && piece.Length == expect,
                       $"OScatter of {n}: piece size (lower ranks take the extra)");
            bool inOrder = piece != null;
            for (int i = 0; piece != null && i < piece.Length; i++)
                inOrder &= piece[i].Id == first + i && piece[i].Name == "r" + (first + i) &&
                           piece[i].Data[0] == first + i;
            Check.True(inOrder, $"OScatter of {n}: the right elements in order");

            Record[] back = world.OGather(piece, root);
            if (rank == root)
                Check.True(back.Length == n && back.Select(r => r.Id).SequenceEqual(
                                                   Enumerable.Range(0, n).Select(i => (long)i)),
                           $"OGather of {n} joins the pieces in rank order");
            else
                Check.True(back == null, "OGather returns null off the root");

            Record[] everywhere = world.OAllgather(piece);
            Check.True(everywhere.Length == n && (n == 0 || everywhere[n - 1].Id == n - 1),
                       $"OAllgather of {n}");
        }
        // identity inside a piece: elements sharing one object still share it after the cut
        Node[] nodes = rank == 0 ? Enumerable.Range(0, 4 * size)
                                       .Select(i => new Node { Value = i, Next = shared })
                                       .ToArray()
                                 : null;
        Node[] mine = world.OScatter(nodes, 0);
        Check.True(mine.Length == 4 && ReferenceEquals(mine[0].Next, mine[3].Next) &&
                       mine[0].Next.Value == -1,
                   "shared references stay shared within a piece");
        // a root that cannot serialize: every rank gets an exception, none waits
        var bad = rank == 0 ? new[] { new Holder { Shape = new Triangle() } } : null;
        Check.Throws<ArgumentException>(() => world.OScatter(bad, 0),
                                        "OScatter of an array the root cannot serialize");
        Check.Throws<ArgumentException>(() => world.OAllgather(new[] {
            new Holder { Shape = rank == 0 ? (BaseShape) new Triangle() : new Square() }
        }),
                                        "OAllgather where one rank cannot serialize its piece");
        Check.Equal(size, world.Allreduce(1, Op.Sum), "usable afterwards");
    }

    /// <summary>Serializing while another thread collects all the time: the writer must never
    /// record an address a collection changed (it restarts when a collection began).</summary>
    static void WhileCollecting()
    {
        var collector = new Collector();
        int bad = 0;
        for (int round = 0; round < 20; round++) {
            Node head = null;
            for (int i = 0; i < 50000; i++)
                head = new Node { Value = i ^ round, Next = head };
            var r = Graphs.RoundTrip(Sample(round));
            if (r.Id != 1000 + round || !ReferenceEquals(r.Peer, r))
                bad++;
            int n = 0;
            for (Node p = Graphs.RoundTrip(head); p != null; p = p.Next, n++)
                if (p.Value != ((49999 - n) ^ round)) {
                    bad++;
                    break;
                }
            if (n != 50000)
                bad++;
        }
        collector.Dispose();
        Check.Equal(0, bad, "graphs written while another thread collects come back intact");
    }

    /// <summary>Serialization buffers are pooled and reused, and the GC hook frees those unused
    /// since the previous collection.</summary>
    static void BufferPool()
    {
        var g = Sample(5);
        for (int i = 0; i < 20; i++)
            Serializer.Serialize(g);
        MPStats used = MP.Stats;
        Check.True(used.PooledBuffers >= 1, "buffers go back to the pool: " + used.PooledBuffers);
        for (int i = 0; i < 3; i++)
            GC.Collect();
        MPStats swept = MP.Stats;
        Check.Equal(0L, swept.PooledBuffers,
                    "collections free buffers no one used since the previous one");
        Check.True(swept.PooledBuffersFreedByGC >= used.PooledBuffersFreedByGC + used.PooledBuffers,
                   "counted as freed by the GC hook");
        Serializer.Serialize(g);
        Check.True(MP.Stats.PooledBuffers >= 1, "the pool fills again on use");
    }

    static int Main()
    {
        Shapes();
        BufferPool();
        WhileCollecting();
        SplitCollectives();
        Transport();
        Hostile();
        LongList();
        ThreadsLeaveNoHolders();
        ThreadsLeaveNoWriterArrays();
        ManyObjects();
        world.Barrier();
        Check.Equal(0L, MP.Stats.PinsLive, "no live pins");
        return Check.Finish("SdtoTest");
    }
}

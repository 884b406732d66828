// SdtoSafetyTest — the structured data transport never delivers a silently wrong result:
// framework objects whose private state cannot travel are refused at the sender with the field
// path (and OPI never advises marking a framework's private field); reference slots of received
// objects never hold wire bytes; a received type's static constructor has run before its first
// instance exists, and a throwing one is a managed exception, not a crash; a long serializer
// call gives way to another thread's collection instead of stalling it.
#pragma warning disable 649, 414   // fields exist to give types a shape
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.MP;
using System.Runtime.CompilerServices;
using System.Threading;

class WithList
{
    public int Id;
    [Transportable]
    public List<int> Items;
}
class WithSorted
{
    [Transportable]
    public SortedDictionary<string, int> Map;
}
class WithLinked
{
    [Transportable]
    public LinkedList<int> Items;
}
class WithTuple
{
    [Transportable]
    public Tuple<int, string> Pair;
}
class WithBag
{
    [Transportable]
    public object[] Bag;
}
class WithPairField
{
    public int Id;
    public KeyValuePair<string, int> Entry;
}
class ListChild : List<int>
{
    public int Extra;
}
class Chain
{
    public int Id;
    [Transportable]
    public Chain Next;
    [Transportable]
    public WithTuple Leaf;
}
class Plain
{
    public DateTime When;
    public Guid Id;
    public decimal Money;
    public TimeSpan Span;
    public DayOfWeek Day;
    public KeyValuePair<int, long> Counts;
    [Transportable]
    public Tuple<int, double> Numbers;   // a framework class without references
}

// Reference slots that do not travel: hostile bytes put garbage there.
class Slots
{
    public long A;
    public string Hidden;
    public long B;
}
struct SlotPair
{
    public long A;
    public object Hidden;
}

// Types with a static constructor, and look-alikes without one (same wire layout, names of the
// same length): bytes written for the look-alike are patched to name the type under test, so
// that no instance of it is ever made with `new` in this process.
static class Clock
{
    public static int Ticks;
    public static int Next() => Interlocked.Increment(ref Clock.Ticks);
}
class InitA
{
    public static int Stamp;
    public int Value;
    static InitA() { Stamp = Clock.Next(); }
}
class TwinA
{
    public int Value;
}
class InitB
{
    public static int Stamp;
    public int Value;
    static InitB() { Stamp = Clock.Next(); }
}
class TwinB
{
    public int Value;
}
class ShapeBase
{
    public int Sides;
}
class ShapeHolder
{
    [Transportable]
    public ShapeBase Shape;
}
[Transportable]
class InitC : ShapeBase
{
    public static int Stamp;
    public double Edge;
    static InitC() { Stamp = Clock.Next(); }
}
[Transportable]
class TwinC : ShapeBase
{
    public double Edge;
}
class InitBad
{
    public int Value;
    static InitBad() { throw new InvalidOperationException("initializer refuses"); }
}
class TwinBad
{
    public int Value;
}

class LinkNode
{
    public int Value;
    [Transportable]
    public LinkNode Next;
}

static class SdtoSafetyTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, next = Ring.Next, prev = Ring.Prev;

    // ---- item 7: framework objects whose state cannot travel are refused ----

    static void Refused(object graph, string what, params string[] mentions)
    {
        var e = Check.Throws<ArgumentException>(() => Serializer.Serialize(graph),
                                                what + ": Serialize refuses");
        if (e == null)
            return;
        foreach (string m in mentions)
            Check.True(e.Message.Contains(m), $"{what}: the message names '{m}': {e.Message}");
        Check.Equal("graph", e.ParamName, what + ": ParamName");
        Check.Throws<ArgumentException>(() => Serializer.Measure(graph),
                                        what + ": Measure refuses");
    }

    static void FrameworkRefused()
    {
        // (the standard collections travel: SdtoCollectionsTest; others are refused)
        Refused(new WithLinked { Items = new LinkedList<int>(new[] { 1, 2, 3 }) },
                "a LinkedList<int> field", "root.Items", "LinkedList<System.Int32>");
        Refused(new WithSorted { Map = new SortedDictionary<string, int> { ["a"] = 1 } },
                "a SortedDictionary field", "root.Map", "SortedDictionary<");
        Refused(new WithTuple { Pair = Tuple.Create(1, "one") }, "a Tuple<int,string> field",
                "root.Pair", "Tuple<");
        Refused(new WithBag { Bag = new object[] { null, new Version(1, 2) } },
                "a Version as an object[] element", "root.Bag[1]", "System.Version");
        Refused(new LinkedList<int>(new[] { 4 }), "a LinkedList<int> root", "root",
                "LinkedList<System.Int32>");
        Refused(new ListChild { 1, 2 }, "a user class deriving from List<int>", "root (ListChild)",
                "_items");
        var chain =
            new Chain { Id = 0,
                        Next = new Chain { Id = 1, Next = new Chain { Id = 2, Leaf = new WithTuple {
                                                                         Pair = Tuple.Create(2, "x")
                                                                     } } } };
        Refused(chain, "a Tuple three links down", "root.Next.Next.Leaf.Pair");

        // a null field of such a type is fine, and arrives null
        var none = Serializer.Serialize(new WithList { Id = 9, Items = null });
        var back = Serializer.Deserialize<WithList>(none, 0, none.Length);
        Check.True(back.Id == 9 && back.Items == null, "a null List field travels as null");
        var nullKey = Serializer.Serialize(
            new WithPairField { Id = 3, Entry = new KeyValuePair<string, int>(null, 7) });
        var pk = Serializer.Deserialize<WithPairField>(nullKey, 0, nullKey.Length);
        Check.True(pk.Id == 3 && pk.Entry.Key == null && pk.Entry.Value == 7,
                   "an inline KeyValuePair whose reference is null travels");
        var withKey = Serializer.Serialize(
            new WithPairField { Id = 4, Entry = new KeyValuePair<string, int>("k", 8) });
        var pk2 = Serializer.Deserialize<WithPairField>(withKey, 0, withKey.Length);
        Check.True(pk2.Id == 4 && pk2.Entry.Key == "k" && pk2.Entry.Value == 8,
                   "an inline KeyValuePair carries its key");

        // framework values without references travel as they are
        var plain = new Plain {
            When = new DateTime(2024, 2, 29, 13, 14, 15, DateTimeKind.Utc),
            Id = Guid.NewGuid(),
            Money = -12.340m,
            Span = TimeSpan.FromTicks(123456789),
            Day = DayOfWeek.Friday,
            Counts = new KeyValuePair<int, long>(3, 4L << 40),
            Numbers = Tuple.Create(8, 0.5),
        };
        var pb = Serializer.Serialize(plain);
        var p2 = Serializer.Deserialize<Plain>(pb, 0, pb.Length);
        Check.True(
            p2.When == plain.When && p2.When.Kind == DateTimeKind.Utc && p2.Id == plain.Id &&
                p2.Money == plain.Money && p2.Money.ToString() == "-12.340" &&
                p2.Span == plain.Span && p2.Day == DayOfWeek.Friday && p2.Counts.Key == 3 &&
                p2.Counts.Value == 4L << 40 && p2.Numbers.Item1 == 8 && p2.Numbers.Item2 == 0.5,
            "DateTime, Guid, decimal, TimeSpan, enums, KeyValuePair<int,long>, Tuple<int,double> " +
                "travel");

        // OSend refuses and sends nothing: the next message on the tag is the good one
        Chain got = null;
        Exception refusal = null;
        Ring.Exchange(
            () =>
            {
                try {
                    world.OSend(new Chain { Id = -1,
                                            Leaf =
                                                new WithTuple { Pair = Tuple.Create(1, "one") } },
                                next, 40);
                } catch (ArgumentException e) {
                    refusal = e;
                }
                world.OSend(new Chain { Id = rank }, next, 40);
            },
            () =>
            {
                got = world.ORecv<Chain>(prev, 40);
                return null;
            });
        Check.True(refusal != null && refusal.Message.Contains("root.Leaf.Pair"),
                   "OSend refuses a Tuple field: " + refusal?.Message);
        Check.True(got != null && got.Id == prev && got.Leaf == null,
                   "nothing was sent by the refused OSend");
        var bcast = Check.Throws<ArgumentException>(
            () => world.OBcast(rank == 0 ? new WithTuple { Pair = Tuple.Create(0, "") } : null, 0),
            "OBcast of a Tuple field: every rank gets an exception");
        Check.True(bcast == null ||
                       bcast.Message.Contains(
                           rank == 0 ? "root.Pair"
                                     : "the root (rank 0) could not serialize the graph"),
                   "OBcast: the root says why, the others that the root failed: " + bcast?.Message);
        Check.Equal(world.Size, world.Allreduce(1, Op.Sum), "usable after the refusals");

        // OPI: the refusal of a framework type never tells the user to mark its private field
        var opi =
            Check.Throws<ArgumentException>(() => world.Send(new List<int> { 1, 2 }, next, 41),
                                            "OPI Send of a List<int>");
        Check.True(opi != null && !opi.Message.Contains("[Transportable]") &&
                       !opi.Message.Contains("mark") && opi.Message.Contains("framework"),
                   "OPI refusal names a framework type, no marking advice: " + opi?.Message);
        var opi2 = Check.Throws<ArgumentException>(() => world.Send(new ListChild(), next, 41),
                                                   "OPI Send of a List<int> subclass");
        Check.True(opi2 != null && !opi2.Message.Contains("mark") &&
                       opi2.Message.Contains("framework"),
                   "OPI refusal of a user class whose framework base holds the reference: " +
                       opi2?.Message);
        var opi3 = Check.Throws<ArgumentException>(
            () => world.Send(new KeyValuePair<string, int>[2], next, 41),
            "OPI Send of KeyValuePair<string,int>[]");
        Check.True(opi3 != null && opi3.Message.Contains("OSend") && !opi3.Message.Contains("mark"),
                   "OPI refusal of KeyValuePair<string,int>[] points at OSend, which carries it: " +
                       opi3?.Message);
    }

    // ---- item 11: reference slots never hold wire bytes ----

    static void Garbage(byte[] b, int from, int count, long keep1, long keep2)
    {
        for (int at = from; at + 8 <= from + count; at += 8) {
            long w = BitConverter.ToInt64(b, at);
            if (w != keep1 && w != keep2)
                BitConverter.GetBytes(0x4141414141414141L).CopyTo(b, at);
        }
    }

    static void HostileSlots()
    {
        const long A = 0x1111111111111111L, B = 0x2222222222222222L;
        byte[] one = Serializer.Serialize(new Slots { A = A, Hidden = "not sent", B = B });
        Garbage(one, one.Length - 24, 24, A, B);   // the last record's data
        var s = Serializer.Deserialize<Slots>(one, 0, one.Length);
        Check.True(s.A == A && s.B == B && s.Hidden == null,
                   "garbage in an object's unmarked slot arrives null");

        const int n = 5000;
        byte[] many = Serializer.Serialize(
            Enumerable.Range(0, n).Select(i => new SlotPair { A = A, Hidden = "x" }).ToArray());
        Garbage(many, many.Length - 16 * n, 16 * n, A, A);
        var arr = Serializer.Deserialize<SlotPair[]>(many, 0, many.Length);
        Check.True(arr.Length == n && arr.All(p => p.A == A && p.Hidden == null),
                   "garbage in struct elements' slots arrives null");

        byte[] boxed = Serializer.Serialize((object) new SlotPair { A = A, Hidden = "y" });
        Garbage(boxed, boxed.Length - 16, 16, A, A);
        var sp = Serializer.Deserialize<SlotPair>(boxed, 0, boxed.Length);
        Check.True(sp.A == A && sp.Hidden == null, "garbage in a boxed struct's slot arrives null");
        GC.Collect();   // a collection scans them all
        Check.True(arr[n - 1].Hidden == null && s.Hidden == null, "and they survive a collection");

        // the same while another thread forces full collections: a collection that stopped the
        // reader between copying wire bytes into a new array and zeroing its slots would mark
        // through 0x4141... Hybrid and coop suspend stop the reader only at safepoints, where
        // this cannot happen; under preemptive suspend (which the host refuses) the reader that
        // copied into slots crashed in the collector (SIGSEGV) in 3 of 3 runs of
        // `mpiexec -n 1 -genv MONO_THREADS_SUSPEND preemptive motor SdtoSafetyTest.exe slots`.
        const int m = 200000;
        byte[] large = Serializer.Serialize(
            Enumerable.Range(0, m).Select(i => new SlotPair { A = A, Hidden = "z" }).ToArray());
        Garbage(large, large.Length - 16 * m, 16 * m, A, A);
        int stop = 0, bad = 0;
        ThreadStart collect = () =>
        {
            while (Volatile.Read(ref stop) == 0)
                GC.Collect();
        };
        var churn = new Thread(collect);
        churn.Start();
        for (int r = 0; r < 30; r++) {
            var got = Serializer.Deserialize<SlotPair[]>(large, 0, large.Length);
            if (got[0].Hidden != null || got[m - 1].Hidden != null || got[m / 2].A != A)
                bad++;
        }
        Volatile.Write(ref stop, 1);
        churn.Join();
        Check.Equal(0, bad, "30 reads of 200,000 structs with garbage slots while collections run");

        // data copied in chunks arrives whole: a string and an array of a few MiB
        string text =
            new string(Enumerable.Range(0, 3 << 20).Select(i => (char)('a' + i % 26)).ToArray()) +
            "é";
        byte[] tb = Serializer.Serialize(text);
        Check.True(Serializer.Deserialize<string>(tb, 0, tb.Length) == text,
                   "a 3 Mi-character string round trip");
        var big = Enumerable.Range(0, 3 << 20).Select(i => (long)i * 7).ToArray();
        byte[] bb = Serializer.Serialize(big);
        Check.True(Serializer.Deserialize<long[]>(bb, 0, bb.Length).SequenceEqual(big),
                   "a 24 MiB long[] round trip");
    }

    // ---- item 13: type initializers run before the first received instance exists ----

    static byte[] Renamed(object twin, string from, string to)
    {
        byte[] b = Serializer.Serialize(twin);
        byte[] f = System.Text.Encoding.UTF8.GetBytes(from),
               t = System.Text.Encoding.UTF8.GetBytes(to);
        int replaced = 0;
        for (int i = 0; i + f.Length <= b.Length; i++)
            if (b.Skip(i).Take(f.Length).SequenceEqual(f)) {
                t.CopyTo(b, i);
                replaced++;
            }
        Check.Equal(1, replaced, "the look-alike's name appears once in its bytes");
        return b;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static int StampA() => InitA.Stamp;
    [MethodImpl(MethodImplOptions.NoInlining)]
    static int StampB() => InitB.Stamp;
    [MethodImpl(MethodImplOptions.NoInlining)]
    static int StampC() => InitC.Stamp;

    static void TypeInitializers()
    {
        // Serializer: the static constructor ran during Deserialize, before the tick taken after
        // it (reading the static afterwards would otherwise run it now, with a later tick)
        byte[] a = Renamed(new TwinA { Value = 11 }, "TwinA", "InitA");
        var ia = Serializer.Deserialize<InitA>(a, 0, a.Length);
        int after = Clock.Next();
        int stamp = StampA();
        Check.True(
            ia.Value == 11 && stamp != 0 && stamp < after,
            $"Deserialize ran InitA's static constructor first (stamp {stamp}, after {after})");

        // ORecv of a graph received as a plain type
        byte[] b = Renamed(new TwinB { Value = 12 }, "TwinB", "InitB");
        InitB ib = null;
        int afterB = 0;
        Ring.Exchange(() => world.Send(b, next, 42), () =>
                                                     {
                                                         ib = world.ORecv<InitB>(prev, 42);
                                                         afterB = Clock.Next();
                                                         return null;
                                                     });
        int stampB = StampB();
        Check.True(ib.Value == 12 && stampB != 0 && stampB < afterB,
                   $"ORecv ran InitB's static constructor first (stamp {stampB}, after {afterB})");

        // ORecv of a [Transportable] class received polymorphically in a base-typed field
        byte[] c = Renamed(new ShapeHolder { Shape = new TwinC { Sides = 3, Edge = 2.5 } }, "TwinC",
                           "InitC");
        ShapeHolder hc = null;
        int afterC = 0;
        Ring.Exchange(() => world.Send(c, next, 43), () =>
                                                     {
                                                         hc = world.ORecv<ShapeHolder>(prev, 43);
                                                         afterC = Clock.Next();
                                                         return null;
                                                     });
        int stampC = StampC();
        Check.True(hc.Shape is InitC ic && ic.Edge == 2.5 && ic.Sides == 3 && stampC != 0 &&
                       stampC < afterC,
                   "a polymorphically received class had its static constructor run first (stamp " +
                       $"{stampC}, after {afterC})");

        // a throwing type initializer: a managed exception naming the type, and the process
        // lives on
        byte[] bad = Renamed(new TwinBad { Value = 1 }, "TwinBad", "InitBad");
        var e = Check.Throws<MPSerializationException>(
            () => Serializer.Deserialize<InitBad>(bad, 0, bad.Length),
            "a throwing static constructor");
        Check.True(e != null && e.Message.Contains("InitBad") &&
                       e.Message.Contains("initializer refuses"),
                   "the exception names the type and the initializer's failure: " + e?.Message);
        Check.Throws<MPSerializationException>(
            () => Serializer.Deserialize<InitBad>(bad, 0, bad.Length), "and again, the same way");
        Ring.Exchange(() => world.Send(bad, next, 44),
                      () =>
                      {
                          Check.Throws<MPSerializationException>(
                              () => world.ORecv<InitBad>(prev, 44),
                              "ORecv of a type whose initializer throws");
                          return null;
                      });
        Check.Equal(world.Size, world.Allreduce(1, Op.Sum), "usable afterwards");
    }

    // ---- item 14: a long serializer call gives way to a requested collection ----

    /// <summary>A worker calls <paramref name="work"/> back to back; once it has finished one
    /// call (so it is inside the next one nearly all the time), this thread collects, and no call
    /// may have completed meanwhile: the collection ran while the call was still running (a
    /// walk interrupted by a collection starts over; a read goes on). Rounds where the scheduler
    /// kept this thread off the CPU for a whole call can fail on a loaded machine (3 of 5 did
    /// beside a benchmark): rounds go on until 3 pass, up to 40. The waits are printed for the
    /// record. (This check cannot see a call that
    /// holds the collection up: the worker is stopped right after the call returns, before it
    /// can count it. CopyGivesWay sees that, through a buffer filled during the call.)</summary>
    static void GivesWay(string what, Action work)
    {
        const int needed = 3, maxRounds = 40;
        int passed = 0, calls = 0, stop = 0, rounds = 0;
        var waits = new List<string>();
        Exception failure = null;
        ThreadStart loop = () =>
        {
            try {
                while (Volatile.Read(ref stop) == 0) {
                    work();
                    Interlocked.Increment(ref calls);
                }
            } catch (Exception e) {
                failure = e;
            }
        };
        var worker = new Thread(loop);
        worker.Start();
        for (; passed < needed && rounds < maxRounds && failure == null; rounds++) {
            int target = Volatile.Read(ref calls) + 1;
            while (Volatile.Read(ref calls) < target && failure == null)
                Thread.Yield();   // wait until a whole call is done
            int before = Volatile.Read(ref calls);
            var sw = Stopwatch.StartNew();
            GC.Collect(0);
            sw.Stop();
            int during = Volatile.Read(ref calls) - before;
            if (during == 0)
                passed++;
            waits.Add($"{sw.Elapsed.TotalMilliseconds:F1} " +
                      $"ms{(during == 0 ? "" : " (a call ended meanwhile)")}");
        }
        Volatile.Write(ref stop, 1);
        worker.Join();
        Check.True(failure == null, what + ": the worker's calls succeed " + failure);
        Console.WriteLine($"rank {rank}: GC.Collect(0) while {what}: {string.Join(", ", waits)}");
        Check.True(passed >= needed,
                   $"{what}: the collection ran while the call was still running in {passed} of " +
                       $"{rounds} rounds");
    }

    /// <summary>A worker serializes two large arrays, one all 1s and one all 2s, in turn into
    /// the same buffer. This thread waits until it sees the copy into the buffer begin (its first
    /// data byte takes the new value, its last one not yet), collects, and looks at the last
    /// byte at once: still the old value means the collection completed in the middle of the
    /// copy, the call still running. Only a copy that gives way lets that happen (a raw call
    /// otherwise holds the collection until it returns). This thread may notice the copy too
    /// late on a loaded machine, so some of the rounds, not all, must see it.</summary>
    static void CopyGivesWay()
    {
        const int n = 32 << 20, rounds = 40;
        var ones = new byte[n];
        var twos = new byte[n];
        for (int i = 0; i < n; i++) {
            ones[i] = 1;
            twos[i] = 2;
        }
        int size = Serializer.Measure(ones);
        var dest = new byte[size];
        int stop = 0, calls = 0, seen = 0;
        Exception failure = null;
        ThreadStart loop = () =>
        {
            try {
                for (int k = 0; Volatile.Read(ref stop) == 0; k++) {
                    Serializer.Serialize(k % 2 == 0 ? ones : twos, dest, 0);
                    Interlocked.Increment(ref calls);
                }
            } catch (Exception e) {
                failure = e;
            }
        };
        var worker = new Thread(loop);
        worker.Start();
        var waits = new List<string>();
        for (int round = 0; round < rounds && failure == null; round++) {
            int target = Volatile.Read(ref calls) + 1;
            while (Volatile.Read(ref calls) < target && failure == null)
                Thread.Yield();                            // a whole call is done:
            byte next = (byte)(target % 2 == 0 ? 1 : 2);   // the next one writes this
            while (Volatile.Read(ref dest[size - n]) != next &&
                   Volatile.Read(ref calls) <= target && failure == null)
                ;   // until its copy begins
            if (Volatile.Read(ref dest[size - 1]) == next)
                continue;   // noticed too late: done already
            var sw = Stopwatch.StartNew();
            GC.Collect(0);
            byte last = Volatile.Read(ref dest[size - 1]);
            sw.Stop();
            if (last != next)
                seen++;
            waits.Add(sw.Elapsed.TotalMilliseconds.ToString("F1"));
        }
        Volatile.Write(ref stop, 1);
        worker.Join();
        Check.True(failure == null, "the worker's Serialize calls succeed " + failure);
        Console.WriteLine($"rank {rank}: GC.Collect(0) while Serialize copies 32 MiB (ms): " +
                          $"{string.Join(" ", waits)}; mid-copy in {seen} of {rounds}");
        Check.True(
            seen > 0,
            $"a collection completed in the middle of a 32 MiB copy ({seen} of {rounds} rounds)");
    }

    static void CollectionsGiveWay()
    {
        LinkNode head = null;
        for (int i = 0; i < 1000000; i++)
            head = new LinkNode { Value = i, Next = head };
        int size = Serializer.Measure(head);
        GivesWay("Measure walks a 10^6-node list",
                 () =>
                 {
                     if (Serializer.Measure(head) != size)
                         throw new Exception("size changed");
                 });
        GivesWay("Serialize writes a 10^6-node list",
                 () =>
                 {
                     if (Serializer.Serialize(head).Length != size)
                         throw new Exception("size changed");
                 });
        var nodes = new LinkNode[1000000];
        for (int i = 0; i < nodes.Length; i++)
            nodes[i] = new LinkNode { Value = i };
        int arraySize = Serializer.Measure(nodes);
        GivesWay("Measure walks a 10^6-element array",
                 () =>
                 {
                     if (Serializer.Measure(nodes) != arraySize)
                         throw new Exception("size changed");
                 });
        byte[] bytes = Serializer.Serialize(head);
        GivesWay("Deserialize reads a 10^6-node list",
                 () =>
                 {
                     if (Serializer.Deserialize<LinkNode>(bytes, 0, bytes.Length).Value != 999999)
                         throw new Exception("wrong head");
                 });
    }

    static int Main(string[] args)
    {
        string only = args.Length > 0 ? args[0] : "";
        if (only == "" || only == "framework")
            FrameworkRefused();
        if (only == "" || only == "slots")
            HostileSlots();
        if (only == "" || only == "cctor")
            TypeInitializers();
        if (only == "" || only == "giveway")
            CollectionsGiveWay();
        if (only == "" || only == "copy")
            CopyGivesWay();
        world.Barrier();
        return Check.Finish("SdtoSafetyTest");
    }
}

// ArraysTest — System.MP.Arrays (issue 15): every message delivered exactly once and in order
// per sender–element pair while elements migrate after every message, are inserted and deleted;
// broadcasts and reductions exact during migration; messages to elements created later (or
// deleted and created again) delivered; a hostile message is MPSerializationException on the
// receiving rank and the array keeps working; bad arguments refused before anything is sent;
// string and struct indices; the load balancer's moves; no deadlock at quiescence.
#pragma warning disable 649
using System;
using System.Collections.Generic;
using System.Linq;
using System.MP;
using System.MP.Arrays;
using System.Reflection;
using System.Threading;
using System.Threading.Tasks;

public class Note
{
    public int From, Serial;
    [Transportable]
    public string Text;

    /// <summary>The next note from `from` to `to`, numbered per target in sentTo.</summary>
    public static Note Next(Dictionary<int, int> sentTo, int from, int to)
    {
        int serial;
        sentTo.TryGetValue(to, out serial);
        sentTo[to] = ++serial;
        return new Note { From = from, Serial = serial, Text = "n" + serial };
    }

    /// <summary>Is n the next note from its sender (by lastSerial), intact? Records it.</summary>
    public static bool InOrder(Dictionary<int, int> lastSerial, Note n)
    {
        int last;
        lastSerial.TryGetValue(n.From, out last);
        lastSerial[n.From] = n.Serial;
        return n.Serial == last + 1 && n.Text == "n" + n.Serial;
    }
}

/// <summary>Counts what it gets, checks the order per sender, and moves after
/// every message.</summary>
public class Walker : Element<int>
{
    public static int N, Size;
    public int Received, OutOfOrder, Broadcasts, BroadcastOrder, Moves, Hooks;
    public long LastSum = -1;
    public bool Wander = true;
    // sender (≥0 element, <0 rank) → serial
    [Transportable]
    public Dictionary<int, int> LastSerial = new Dictionary<int, int>();
    // target → serials sent
    [Transportable]
    public Dictionary<int, int> SentTo = new Dictionary<int, int>();

    int NextRank(int salt) => (int)((uint)(Index * 7919 + Received * 104729 + salt * 15485863) %
                                    (uint)Size);

    void Wanderer(int salt)
    {
        if (!Wander || Size == 1)
            return;
        MigrateTo(NextRank(salt));
        Moves++;
    }

    [EntryMethod]
    public void Go(int count)
    {
        for (int j = 1; j <= count; j++) {
            int to = (Index * 7 + j * 13) % N;
            Send(to, nameof(Take), Note.Next(SentTo, Index, to));
        }
        Wanderer(1);
    }

    [EntryMethod]
    public void Take(Note n)
    {
        if (!Note.InOrder(LastSerial, n))
            OutOfOrder++;
        Received++;
        Wanderer(2);
    }

    [EntryMethod]
    public void Tick(int b)
    {
        if (b != Broadcasts + 1)
            BroadcastOrder++;
        Broadcasts++;
        Wanderer(3);
    }

    public static Reduction<long> Total;

    [EntryMethod]
    public void Give() { Contribute(Total, (long)Index); }

    [EntryMethod]
    public void Sum(long total)   // a reduction's result, broadcast to every element
    {
        LastSum = total;
    }

    [EntryMethod]
    public void Bye() { Destroy(); }

    [EntryMethod]
    public void Throw() { throw new InvalidOperationException("element asked to throw"); }

    [EntryMethod]
    public void MoveTo(int rank) { MigrateTo(rank); }

    protected override void OnMigrating() { Hooks++; }
    protected override void OnMigrated() { Hooks++; }
}

/// <summary>Contributes to reduction after reduction, moving after each; element 0 deletes itself
/// after its third contribution.</summary>
public class Adder : Element<int>
{
    public static Reduction<long> Total;
    public static int Rounds, Size;
    public int Done;
    public long Last = -1;

    public static long Value(int index) => 1 + 1000L * index;

    void Give()
    {
        if (Contributions >= Rounds)
            return;
        Contribute(Total, Value(Index));
        if (Index == 0 && Contributions == 3) {
            Destroy();
            return;
        }
        if (Size > 1)
            MigrateTo((int)((uint)(Index * 31 + Done * 17) % (uint)Size));
    }

    [EntryMethod]
    public void Start() { Give(); }

    [EntryMethod]
    public void Next(long sum)   // each result is broadcast here; contribute to the next
    {
        Last = sum;
        Done++;
        Give();
    }
}

/// <summary>Elements all on one rank: the others must still take part in reductions.</summary>
public class Lonely : Element<int>
{
    public static Reduction<int> Count, Largest;
    public static Reduction<bool> All;
    [EntryMethod]
    public void Start(int times)
    {
        for (int i = 0; i < times; i++)
            Contribute(Count, 1);
    }
    [EntryMethod]
    public void Big()
    {
        Contribute(Largest, Index);
        Contribute(All, Index >= 0);
    }
}

/// <summary>Inserts a new element and sends to old and new indices while everyone moves.</summary>
public class Churner : Element<int>
{
    public static int N, K, Size;
    // this rank's deliveries of Take, over all incarnations
    public static long Delivered, Disorder;
    public int Received;
    [Transportable]
    public Dictionary<int, int> LastSerial = new Dictionary<int, int>();
    [Transportable]
    public Dictionary<int, int> SentTo = new Dictionary<int, int>();

    void Move(int salt)
    {
        if (Size > 1)
            MigrateTo((int)((uint)(Index * 7919 + Received * 104729 + salt) % (uint)Size));
    }

    public static int Target(int index, int j) => (index * 7 + j * 13) % (2 * N);

    [EntryMethod]
    public void Go()
    {
        Insert(N + Index, new Churner(), (Rank + 1) % Size);
        for (int j = 1; j <= K; j++) {
            int to = Target(Index, j);
            Send(to, nameof(Take), Note.Next(SentTo, Index, to));
        }
        Move(1);
    }

    [EntryMethod]
    public void Take(Note n)
    {
        if (!Note.InOrder(LastSerial, n))
            Disorder++;
        Received++;
        Delivered++;
        Move(2);
    }
}

/// <summary>Counts its messages; the first one makes it unable to travel (a delegate in a
/// graph field) and asks it to move, so the move fails while later messages wait
/// behind it.</summary>
public class Fragile : Element<int>
{
    public int Count;
    [Transportable]
    public object Payload;

    [EntryMethod]
    public void Take(int n)
    {
        Count++;
        if (n != 1 || Ranks < 2)
            return;
        // clang-format off
        Payload = new Action(() => { });
        // clang-format on
        MigrateTo((Rank + 1) % Ranks);
    }

    public static int Ranks;
}

/// <summary>Contributes to reductions whose combine function or result handler throws.</summary>
public class Summer : Element<int>
{
    public static Reduction<long> Picky, Total;
    public long LastSum = -1;
    public int Results;

    [EntryMethod]
    public void GivePicky(int round)
    {
        Contribute(Picky, round == 0 && Index == 0 ? -1L : Index + 1L);
    }
    [EntryMethod]
    public void GiveTotal() { Contribute(Total, 1L); }
    [EntryMethod]
    public void Got(long sum)
    {
        LastSum = sum;
        Results++;
    }
}

/// <summary>Contributes three times, then inserts a child on another rank; the child must join
/// the reductions where its inserter is, not where its new rank is.</summary>
public class Joiner : Element<int>
{
    public static Reduction<long> Count;
    public static int ChildRank;

    [EntryMethod]
    public void Go()
    {
        for (int i = 0; i < 3; i++)
            Contribute(Count, 1L);
        Insert(2, new Joiner(), ChildRank);
    }

    [EntryMethod]
    public void Give(int times)
    {
        for (int i = 0; i < times; i++)
            Contribute(Count, 1L);
    }
}

/// <summary>A message the serializer refuses once Payload holds a delegate.</summary>
public class Parcel
{
    public int Serial;
    [Transportable]
    public object Payload;

    public static Parcel Good() => new Parcel { Serial = 1 };
    // clang-format off
    public static Parcel Bad() => new Parcel { Serial = -1, Payload = new Action(() => { }) };
    // clang-format on
}

/// <summary>Counts the parcels it gets; asked to relay, sends a refused parcel and then a good
/// one to each target, from inside an element.</summary>
public class Refusing : Element<int>
{
    public int Got, Bad, Refusals;
    [Transportable]
    public object Payload;

    [EntryMethod]
    public void Take(Parcel p)
    {
        if (p == null || p.Serial != 1 || p.Payload != null)
            Bad++;
        Got++;
    }

    [EntryMethod]
    public void Relay(int[] targets)
    {
        foreach (int to in targets) {
            try {
                Send(to, nameof(Take), Parcel.Bad());
            } catch (ArgumentException) {
                Refusals++;
            }
            Send(to, nameof(Take), Parcel.Good());
        }
    }
}

/// <summary>Contributes to two reductions of one array: in the same order as every element, or
/// (mixed) even elements A then B and odd ones B then A, which the shared
/// numbering refuses.</summary>
public class Mixer : Element<int>
{
    public static Reduction<long> A, B;

    [EntryMethod]
    public void Give(bool mixed)
    {
        if (mixed && Index % 2 == 1) {
            Contribute(B, 1000L);
            Contribute(A, 1L);
        } else {
            Contribute(A, 1L);
            Contribute(B, 1000L);
        }
    }
}

/// <summary>Does a fixed amount of arithmetic per message, so its measured load grows.</summary>
public class Worker : Element<int>
{
    public double Acc;

    [EntryMethod]
    public void Work(int iterations)
    {
        for (int i = 1; i <= iterations; i++)
            Acc += Math.Sqrt(i + Acc % 7);
    }
}

public struct Pair
{
    public int A;
    public double B;
}
public class Point
{
    public long X;
    public double Y;
}
public class MovingPoint : Point
{
    public int Z;
}

/// <summary>Receives arrays handed over without a copy, checks them, passes some on.</summary>
public class Taker : Element<int>
{
    public static int N, Size;
    public int Got, Bad, Pairs, Points;

    [EntryMethod]
    public void Take(double[] data)
    {
        for (int i = 0; i < data.Length; i++)
            if (data[i] != data.Length * 0.5 + i) {
                Bad++;
                break;
            }
        Got++;
        if (data.Length % 3 == 0)
            SendZeroCopy((Index + 1) % N, nameof(Take),
                         new double [data.Length + 1]
                             .Select((x, i) => (data.Length + 1) * 0.5 + i)
                             .ToArray());
        if (Size > 1)
            MigrateTo((Index + Got) % Size);
    }

    [EntryMethod]
    public void TakePoint(Point p)
    {
        if (p.X != Index || p.Y != -Index * 0.5)
            Bad++;
        Points++;
    }

    [EntryMethod]
    public void TakePairs(Pair[] pairs)
    {
        for (int i = 0; i < pairs.Length; i++)
            if (pairs[i].A != i || pairs[i].B != i * 0.25) {
                Bad++;
                break;
            }
        Pairs++;
    }

    public static double[] Make(int length) =>
        Enumerable.Range(0, length).Select(i => length * 0.5 + i).ToArray();
}

public struct Cell : IEquatable<Cell>
{
    public int X, Y;
    public Cell(int x, int y)
    {
        X = x;
        Y = y;
    }
    public bool Equals(Cell o) => X == o.X && Y == o.Y;
    public override bool Equals(object o) => o is Cell && Equals((Cell)o);
    public override int GetHashCode() => X * 65599 + Y;
    public override string ToString() => $"({X},{Y})";
}

public class Sparse : Element<Cell>
{
    public int Got;
    [EntryMethod]
    public void Hello(string text)
    {
        if (text == "cell " + Index)
            Got++;
    }
}

public class Named : Element<string>
{
    public int Got;
    [EntryMethod]
    public void Hello() { Got++; }
}

public enum Colour : byte
{
    Red = 1,
    Green = 2,
    Blue = 3
}

public class Tinted : Element<Colour>
{
    public int Got;
    [EntryMethod]
    public void Paint(int colour)
    {
        if ((int)Index == colour)
            Got++;
    }
}

public struct Mixed : IEquatable<Mixed>
{
    public Colour C;
    public char K;
    short s;   // private: packed all the same
    public sbyte B;
    public Mixed(Colour c, char k, short s, sbyte b)
    {
        C = c;
        K = k;
        this.s = s;
        B = b;
    }
    public bool Equals(Mixed o) => C == o.C && K == o.K && s == o.s && B == o.B;
    public override bool Equals(object o) => o is Mixed && Equals((Mixed)o);
    public override int GetHashCode() => ((int)C * 31 + K) * 31 + s * 7 + B;
    public override string ToString() => $"{C}/{(int)K}/{s}/{B}";
}

public struct Triple : IEquatable<Triple>
{
    public int A, B, C;
    public Triple(int a, int b, int c)
    {
        A = a;
        B = b;
        C = c;
    }
    public bool Equals(Triple o) => A == o.A && B == o.B && C == o.C;
    public override bool Equals(object o) => o is Triple && Equals((Triple)o);
    public override int GetHashCode() => (A * 31 + B) * 31 + C;
    public override string ToString() => $"{A}/{B}/{C}";
}

public class Spot : Element<Mixed>
{
    public int Got;
    [EntryMethod]
    public void Hello(string text)
    {
        if (text == Index.ToString())
            Got++;
    }
}

public class Trio : Element<Triple>
{
    public int Got;
    [EntryMethod]
    public void Hello(string text)
    {
        if (text == Index.ToString())
            Got++;
    }
}

public class Wide : Element<long>
{
    public int Got;
    [EntryMethod]
    public void Hello(long index)
    {
        if (index == Index)
            Got++;
    }
}

public class Twice : Element<int>
{
    [EntryMethod]
    public void A() { }
    [EntryMethod]
    public void A(int x) { }
}

static class ArraysTest
{
    static readonly Intracomm world = MP.World;
    static readonly int rank = world.Rank, size = world.Size;

    static long Sum(long v) => world.Allreduce(v, Op.Sum);

    /// <summary>Run on every rank, expecting TException on rank `on` only.</summary>
    static void RunExpectingOn<TException>(Scheduler s, int on, string what)
        where TException : Exception
    {
        if (rank == on)
            RunExpecting<TException>(s, what);
        else
            s.Run();
    }

    static void RunExpecting<TException>(Scheduler s, string what)
        where TException : Exception
    {
        Exception got = null;
        try {
            s.Run();
        } catch (Exception e) {
            got = e;
        }
        Check.True(got is TException,
                   $"{what}: Run threw " +
                       $"{(got == null ? "nothing" : got.GetType().Name + ": " + got.Message)}");
    }

    /// <summary>Every element sends K messages; every receipt moves the receiver; rank code
    /// sends too.</summary>
    static void ExactlyOnceWhileMigrating(Scheduler s)
    {
        int n = 4 * size + 3, k = 12;
        Walker.N = n;
        Walker.Size = size;
        var a = ObjectArray<int, Walker>.Create(s, Enumerable.Range(0, n), i => new Walker());
        Check.Equal(n, (int)Sum(a.LocalCount), "every element created once");
        var expected = new int[n];
        for (int i = 0; i < n; i++)
            for (int j = 1; j <= k; j++)
                expected[(i * 7 + j * 13) % n]++;
        // rank code: each rank sends k notes to every element, as sender -(rank+1)
        for (int i = 0; i < n; i++)
            for (int j = 1; j <= k; j++)
                a.Send(i, nameof(Walker.Take),
                       new Note { From = -(rank + 1), Serial = j, Text = "n" + j });
        for (int i = rank; i < n; i += size)
            a.Send(i, nameof(Walker.Go), k);
        s.Run();
        int wrongCount = 0, disorder = 0, moves = 0;
        foreach (Walker w in a.LocalElements) {
            if (w.Received != expected[w.Index] + k * size)
                wrongCount++;
            disorder += w.OutOfOrder;
            moves += w.Moves;
        }
        Check.Equal(n, (int)Sum(a.LocalCount), "after the storm: every element exists once");
        Check.Equal(0L, Sum(wrongCount), "every element got exactly its messages");
        Check.Equal(0L, Sum(disorder), "in order per sender-element pair");
        if (size > 1)
            Check.True(Sum(moves) > n, $"elements migrated ({Sum(moves)} moves)");
        if (size > 1)
            Check.True(Sum(a.ForwardedMessages) > 0,
                       "some messages were forwarded (stale locations)");

        // broadcasts while every delivery moves the element
        int b = 7;
        if (rank == size - 1)
            for (int i = 1; i <= b; i++)
                a.Broadcast(nameof(Walker.Tick), i);
        s.Run();
        int wrongB = 0;
        foreach (Walker w in a.LocalElements)
            if (w.Broadcasts != b || w.BroadcastOrder != 0)
                wrongB++;
        Check.Equal(0L, Sum(wrongB), $"every element got the {b} broadcasts once, in order");

        // a reduction with its result broadcast to the elements (defined collectively)
        Reduction<long> total = Walker.Total = a.DefineReduction<long>(Op.Sum, nameof(Walker.Sum));
        var seen = new List<long>();
        total.Completed += (number, value) => seen.Add(value);
        foreach (Walker w in a.LocalElements)
            w.Wander = false;
        // a second array on the scheduler
        var sumOnce = ObjectArray<int, Walker>.Create(s, new int[0], i => new Walker());
        Check.Equal(0, sumOnce.LocalCount, "an empty array");
        if (rank == 0)
            a.Broadcast(nameof(Walker.Give));
        s.Run();
        long want = (long)n * (n - 1) / 2;
        Check.True(seen.Count == 1 && seen[0] == want,
                   $"reduction result on every rank: {string.Join(",", seen)} (want {want})");
        int wrongSum = 0;
        foreach (Walker w in a.LocalElements)
            if (w.LastSum != want)
                wrongSum++;
        Check.Equal(0L, Sum(wrongSum), "the result broadcast reached every element");
        Check.True(total.Result(0).IsCompleted && total.Result(0).Result == want,
                   "Result(0) is the awaited result");

        // deletion: rank 0 deletes element 1; messages to it afterwards are held; re-inserted, it
        // gets them
        if (rank == 0)
            a.Delete(1);
        s.Run();
        Check.Equal(n - 1, (int)Sum(a.LocalCount), "element 1 deleted");
        if (rank == size - 1)
            for (int j = 1; j <= 3; j++)
                a.Send(1, nameof(Walker.Take),
                       new Note { From = 1000, Serial = j, Text = "n" + j });
        s.Run();
        Check.Equal(3L, Sum(a.HeldMessages), "3 messages held for the deleted element");
        if (rank == 0)
            a.Insert(1, new Walker { Wander = false }, size - 1);
        s.Run();
        Walker again;
        if (a.TryGetLocal(1, out again))
            Check.True(
                again.Received == 3 && again.OutOfOrder == 0,
                $"the re-inserted element got the held messages in order ({again.Received})");
        Check.Equal(0L, Sum(a.HeldMessages), "nothing held any more");
        Check.Equal(n, (int)Sum(a.LocalCount), "element 1 is back");

        // the scheduler's faults: an entry that throws, a duplicate insertion; the array
        // keeps working
        if (rank == 0)
            a.Send(2, nameof(Walker.Throw));
        Walker there;
        bool throwsHere = a.TryGetLocal(2, out there);
        Exception thrown = null;
        try {
            s.Run();
        } catch (Exception e) {
            thrown = e;
        }
        Check.Equal(1L,
                    Sum(thrown is ElementException &&
                                ((ElementException)thrown).Entry == nameof(Walker.Throw)
                            ? 1
                            : 0),
                    "exactly the rank holding element 2 saw its ElementException");
        if (throwsHere)
            Check.True(thrown is ElementException,
                       $"ElementException on the element's rank ({thrown?.GetType().Name})");
        // with a handler, faults go there and Run does not throw; a handler that throws is thrown
        // by Run
        var handled = new List<Exception>();
        EventHandler<ArrayFaultEventArgs> collect = (sender, e) => handled.Add(e.Exception);
        s.Faulted += collect;
        if (rank == 0)
            a.Send(2, nameof(Walker.Throw));
        s.Run();
        Check.Equal(1L, Sum(handled.Count(e => e is ElementException)),
                    "the Faulted handler got the one ElementException");
        s.Faulted -= collect;
        EventHandler<ArrayFaultEventArgs> rethrow = (sender, e) =>
        { throw new FormatException("handler"); };
        s.Faulted += rethrow;
        if (rank == 0)
            a.Send(2, nameof(Walker.Throw));
        thrown = null;
        try {
            s.Run();
        } catch (Exception e) {
            thrown = e;
        }
        Check.Equal(1L, Sum(thrown is FormatException ? 1 : 0),
                    "a handler's own exception comes out of Run, after quiescence");
        s.Faulted -= rethrow;
        Walker three;
        int holder = (int)Sum(a.TryGetLocal(3, out three) ? rank : 0),
            inserter = (holder + 1) % size;
        if (size == 1) {
            Check.Throws<ArgumentException>(() => a.Insert(3, new Walker()),
                                            "Insert of an index that lives here");
        } else {
            if (rank == inserter)
                a.Insert(3, new Walker());
            RunExpectingOn<InvalidOperationException>(
                s, inserter, "a duplicate insertion is reported on the inserting rank");
        }
        Check.Equal(n, (int)Sum(a.LocalCount), "the duplicate was dropped");

        // messages to an index created later, from every rank, then an insertion on another rank
        int late = n + 5;
        a.Send(late, nameof(Walker.Take), new Note { From = -(rank + 1), Serial = 1, Text = "n1" });
        a.Send(late, nameof(Walker.Take), new Note { From = -(rank + 1), Serial = 2, Text = "n2" });
        s.Run();
        if (rank == size / 2)
            a.Insert(late, new Walker { Wander = false });
        s.Run();
        Walker lateOne;
        if (a.TryGetLocal(late, out lateOne))
            Check.True(
                lateOne.Received == 2 * size && lateOne.OutOfOrder == 0,
                $"the element created later got all {2 * size} messages ({lateOne.Received})");
        Check.Equal(1L, Sum(a.TryGetLocal(late, out lateOne) ? 1 : 0),
                    "the late element lives on one rank");

        // the user's balancer: every element to rank index % size; hooks ran
        a.Balance((loads, ranks) => loads.Select(l => l.Index % ranks).ToArray());
        int misplaced = 0;
        foreach (Walker w in a.LocalElements)
            if (w.Index % size != rank)
                misplaced++;
        Check.Equal(0L, Sum(misplaced), "Balance put every element where the balancer said");
        foreach (Walker w in a.LocalElements)
            w.Received = 0;
        for (int i = 0; i <= late; i++)
            if (i < n || i == late)
                a.Send(i, nameof(Walker.Take),
                       new Note { From = 5000 + rank, Serial = 1, Text = "n1" });
        s.Run();
        int wrongAfter = 0;
        foreach (Walker w in a.LocalElements)
            if (w.Received != size)
                wrongAfter++;
        Check.Equal(0L, Sum(wrongAfter), "after balancing, messages still reach every element");
        // the greedy balancer: heaviest first to the least-loaded rank
        var loadsGiven =
            new[] { 5.0, 1, 1, 1, 1, 1, 0.5, 0.5 }
                .Select((l, i) => new ElementLoad<int> { Index = i, Load = l, Rank = 0 })
                .ToList();
        int[] plan = ObjectArray<int, Walker>.Greedy(loadsGiven, 2);
        double on0 =
            Enumerable.Range(0, plan.Length).Where(i => plan[i] == 0).Sum(i => loadsGiven[i].Load);
        Check.True(plan.All(r => r == 0 || r == 1) && on0 == 5.5,
                   $"Greedy balances 11 units as 5.5 + 5.5: rank 0 gets {on0}");
        Check.True(ObjectArray<int, Walker>.Greedy(loadsGiven, 1).All(r => r == 0),
                   "Greedy on one rank keeps everything there");
        // the greedy balancer on measured loads: every element still exists once and is reachable
        a.Balance();
        Check.Equal(n + 1, (int)Sum(a.LocalCount), "Balance() keeps every element");
        foreach (Walker w in a.LocalElements) {
            w.Received = 0;
            Check.True(w.Load == 0, "loads reset by Balance");
        }
        for (int i = 0; i <= late; i++)
            if (i < n || i == late)
                a.Send(i, nameof(Walker.Take),
                       new Note { From = 6000 + rank, Serial = 1, Text = "n1" });
        s.Run();
        wrongAfter = 0;
        foreach (Walker w in a.LocalElements)
            if (w.Received != size)
                wrongAfter++;
        Check.Equal(0L, Sum(wrongAfter),
                    "after the greedy balance, messages still reach every element");
        var balancerFails = Check.Throws<ArgumentException>(
            () => a.Balance((loads, ranks) => new int[1] { -1 }),
            "a balancer's bad plan: ArgumentException on every rank");
        Check.True(balancerFails == null || balancerFails.Message.Contains("Balance"),
                   "the message says Balance");
    }

    /// <summary>Rounds of reductions whose results drive the next contribution, every element
    /// moving after each; element 0 deleted after round 2; an element inserted between
    /// phases joins.</summary>
    static void ReductionsWhileMigrating(Scheduler s)
    {
        int n = 3 * size + 2;
        Adder.Rounds = 6;
        Adder.Size = size;
        var a = ObjectArray<int, Adder>.Create(s, Enumerable.Range(0, n), i => new Adder(),
                                               Placement.RoundRobin);
        Adder.Total = a.DefineReduction<long>((x, y) => x + y, nameof(Adder.Next));
        var results = new List<long>();
        Adder.Total.Completed += (k, v) => results.Add(v);
        if (rank == 0)
            a.Broadcast(nameof(Adder.Start));
        s.Run();
        long all = Enumerable.Range(0, n).Sum(i => Adder.Value(i)),
             withoutZero = all - Adder.Value(0);
        var want = new List<long> { all, all, all, withoutZero, withoutZero, withoutZero };
        Check.True(results.SequenceEqual(want),
                   "6 reductions exact and in order while migrating, element 0 deleted after 3: " +
                       $"{string.Join(",", results)}");
        Check.Equal(n - 1, (int)Sum(a.LocalCount), "element 0 deleted itself");
        int wrong = 0;
        foreach (Adder x in a.LocalElements)
            if (x.Done != 6 || x.Last != withoutZero)
                wrong++;
        Check.Equal(0L, Sum(wrong), "every element saw every result");

        // an element inserted between phases joins from the next reduction number
        if (rank == size - 1)
            a.Insert(n, new Adder { Done = 6 });
        s.Run();
        Adder.Rounds = 9;
        if (rank == 0)
            a.Broadcast(nameof(Adder.Start));
        s.Run();
        long withNew = withoutZero + Adder.Value(n);
        want.AddRange(new[] { withNew, withNew, withNew });
        Check.True(results.SequenceEqual(want),
                   $"3 more with the inserted element: {string.Join(",", results)}");
        Check.True(Adder.Total.Result(8).IsCompleted && Adder.Total.Result(8).Result == withNew,
                   "Result(8) awaited");
        Check.True(Adder.Total.Result(0).IsCompleted && Adder.Total.Result(0).Result == all,
                   "Result(0) is still kept");

        // all elements on the last rank: ranks without elements still close every reduction
        var lonely = ObjectArray<int, Lonely>.Create(s, Enumerable.Range(0, 3), i => new Lonely(),
                                                     i => size - 1);
        Lonely.Count = lonely.DefineReduction<int>(Op.Sum);
        var counted = new List<int>();
        Lonely.Count.Completed += (k, v) => counted.Add(v);
        if (rank == 0)
            for (int i = 0; i < 3; i++)
                lonely.Send(i, nameof(Lonely.Start), 4);
        s.Run();
        Check.True(counted.SequenceEqual(new[] { 3, 3, 3, 3 }),
                   "4 reductions over elements on one rank reach every rank: " +
                       $"{string.Join(",", counted)}");
        // other built-in operators, and the ones a type does not have
        Lonely.Largest = lonely.DefineReduction<int>(Op.Max);
        Lonely.All = lonely.DefineReduction<bool>(Op.LAnd);
        if (rank == 0)
            for (int i = 0; i < 3; i++)
                lonely.Send(i, nameof(Lonely.Big));
        s.Run();
        Check.True(Lonely.Largest.Result(4).IsCompleted && Lonely.Largest.Result(4).Result == 2,
                   "Op.Max over int");
        Check.True(Lonely.All.Result(5).IsCompleted && Lonely.All.Result(5).Result,
                   "Op.LAnd over bool");
        Check.Throws<ArgumentException>(() => lonely.DefineReduction<double>(Op.BXor),
                                        "Op.BXor over double is refused");
        Check.Throws<ArgumentException>(() => lonely.DefineReduction<bool>(Op.Sum),
                                        "Op.Sum over bool is refused");
    }

    /// <summary>Elements insert new elements on other ranks and send to indices that do not exist
    /// yet, while ranks delete elements and everything moves after every message.</summary>
    static void ConcurrentInsertDelete(Scheduler s)
    {
        int n = 3 * size + 4, k = 10;
        Churner.N = n;
        Churner.K = k;
        Churner.Size = size;
        var a = ObjectArray<int, Churner>.Create(s, Enumerable.Range(0, n), i => new Churner());
        var expected = new int[2 * n];
        for (int i = 0; i < n; i++)
            for (int j = 1; j <= k; j++)
                expected[Churner.Target(i, j)]++;
        for (int i = 0; i < 2 * n; i++) {
            expected[i] += k * size;
            for (int j = 1; j <= k; j++)
                a.Send(i, nameof(Churner.Take),
                       new Note { From = -(rank + 1), Serial = j, Text = "n" + j });
        }
        var deleted = new[] { 1, 2 };
        for (int i = rank; i < n; i += size) {
            a.Send(i, nameof(Churner.Go));
            if (deleted.Contains(i))
                a.Delete(i);   // after its Go: same sender, so in order
        }
        s.Run();
        long sent = (long)n * k + 2L * n * k * size;
        Check.Equal(sent, Sum(Churner.Delivered) + Sum(a.HeldMessages),
                    "every message delivered exactly once or held for a deleted element");
        Check.Equal(0L, Sum(Churner.Disorder),
                    "in order per sender-element pair across insertions and deletions");
        Check.Equal(2 * n - deleted.Length, (int)Sum(a.LocalCount),
                    "n elements inserted, 2 deleted");
        int wrong = 0;
        foreach (Churner c in a.LocalElements)
            if (c.Received != expected[c.Index])
                wrong++;
        Check.Equal(
            0L, Sum(wrong),
            "every surviving element got exactly its messages (those sent before it existed " +
                "included)");
    }

    /// <summary>Arrays handed over without a copy: to local and remote elements, forwarded after
    /// moves, passed on by elements; lengths 0 to 100000; refusals.</summary>
    static void ZeroCopy(Scheduler s)
    {
        int n = 2 * size + 1;
        Taker.N = n;
        Taker.Size = size;
        var a = ObjectArray<int, Taker>.Create(s, Enumerable.Range(0, n), i => new Taker());
        var lengths = new[] { 0, 1, 7, 9, 1000, 100000 };
        int passedOn = lengths.Count(l => l % 3 == 0);
        for (int i = 0; i < n; i++)
            foreach (int length in lengths)
                a.SendZeroCopy(i, nameof(Taker.Take), Taker.Make(length));
        var pairs =
            Enumerable.Range(0, 500).Select(i => new Pair { A = i, B = i * 0.25 }).ToArray();
        a.SendZeroCopy(rank, nameof(Taker.TakePairs), pairs);
        for (int i = 0; i < n; i++)
            a.SendZeroCopy(i, nameof(Taker.TakePoint), new Point { X = i, Y = -i * 0.5 });
        s.Run();
        int got = 0, bad = 0, pairsGot = 0, points = 0;
        foreach (Taker t in a.LocalElements) {
            got += t.Got;
            bad += t.Bad;
            pairsGot += t.Pairs;
            points += t.Points;
        }
        Check.Equal((long)n * size, Sum(points),
                    "single objects without references, without a copy");
        Check.Equal((long)n * size * (lengths.Length + passedOn), Sum(got),
                    "every array arrived once (the passed-on ones too)");
        Check.Equal(0L, Sum(bad), "every array arrived intact");
        Check.Equal((long)size, Sum(pairsGot), "arrays of structs");
        // Send copies during the call, for a local element too (plain messages by a shallow clone)
        foreach (Taker t in a.LocalElements) {
            t.Got = 0;
            t.Points = 0;
        }
        // 51 % 3 == 0: it would pass a copy on
        Taker here = a.LocalElements.FirstOrDefault(t => t.Index % 3 != 2);
        if (here != null) {
            // TakePoint first: Take moves the element, and `here` keeps the values it had then
            var point = new Point { X = here.Index, Y = -here.Index * 0.5 };
            a.Send(here.Index, nameof(Taker.TakePoint), point);
            point.X = -7;
            double[] mine = Taker.Make(50);
            a.Send(here.Index, nameof(Taker.Take), mine);
            for (int i = 0; i < mine.Length; i++)
                mine[i] = -1;
        }
        s.Run();
        if (here != null)
            Check.True(here.Got == 1 && here.Points == 1 && here.Bad == 0,
                       "a local Send delivers the values of the call, not later changes (got " +
                           $"{here.Got}, {here.Points}, bad {here.Bad})");
        Check.Throws<ArgumentException>(() =>
                                            a.SendZeroCopy(0, nameof(Taker.Take), new[] { "text" }),
                                        "strings cannot travel without a copy");
        Check.Throws<ArgumentException>(() => a.SendZeroCopy(0, nameof(Taker.Take), new int[3]),
                                        "an int[] for an entry that takes double[]");
        Check.Throws<ArgumentNullException>(() => a.SendZeroCopy(0, nameof(Taker.Take), null),
                                            "a null array");
        Check.Throws<ArgumentException>(() => a.SendZeroCopy(0, nameof(Taker.TakePoint),
                                                             new MovingPoint()),
                                        "a subclass of the entry's type");
        Check.Throws<ArgumentException>(() =>
                                            a.SendZeroCopy(0, nameof(Taker.TakePoint), new Note()),
                                        "an object with references");
        s.Run();
    }

    static void IndexKinds(Scheduler s)
    {
        var cells = new List<Cell>();
        for (int x = 0; x < 5; x++)
            for (int y = 0; y < 5; y += 2)
                cells.Add(new Cell(x * 1000, y));
        var sparse = ObjectArray<Cell, Sparse>.Create(s, cells, c => new Sparse(),
                                                      c => (c.X / 1000 + c.Y) % size);
        foreach (Cell c in cells)
            if ((c.X + c.Y) % size == rank)
                sparse.Send(c, nameof(Sparse.Hello), "cell " + c);
        s.Run();
        int got = 0;
        foreach (Sparse e in sparse.LocalElements)
            got += e.Got;
        Check.Equal((long)cells.Count, Sum(got), "struct indices: every cell got its message");

        var names = new[] { "alpha", "beta", "gamma", "delta", "epsilon" };
        var named = ObjectArray<string, Named>.Create(s, names, x => new Named());
        foreach (string name in names)
            named.Send(name, nameof(Named.Hello));
        named.Insert("zeta-" + rank, new Named());
        named.Send("zeta-" + ((rank + 1) % size), nameof(Named.Hello));
        s.Run();
        got = 0;
        foreach (Named e in named.LocalElements)
            got += e.Got;
        Check.Equal((long)(names.Length + 1) * size, Sum(got),
                    "string indices, inserted ones included");
        named.Delete("zeta-" + ((rank + 1) % size));
        s.Run();
        Check.Equal((long)names.Length, Sum(named.LocalElements.Count()),
                    "string indices: deleted from another rank");

        // indices that travel in the message's header: an enum, and longs beyond int's range
        var colours =
            ObjectArray<Colour, Tinted>.Create(s, new[] { Colour.Red, Colour.Green, Colour.Blue },
                                               c => new Tinted());
        colours.Send((Colour)(rank % 3 + 1), nameof(Tinted.Paint), (int)(rank % 3 + 1));
        s.Run();
        got = 0;
        foreach (Tinted e in colours.LocalElements)
            got += e.Got;
        Check.Equal((long)size, Sum(got), "enum indices: each message reached its colour");
        // structs: of small integral fields, signed ones negative too (packed into the header),
        // and of three ints (12 bytes: they travel in the graph)
        var mixed = new[] { new Mixed(Colour.Red, 'a', -1, -128),
                            new Mixed(Colour.Blue, '\uffff', short.MaxValue, 127),
                            new Mixed(Colour.Green, 'z', short.MinValue, 0) };
        var packed =
            ObjectArray<Mixed, Spot>.Create(s, mixed, m => new Spot(), Placement.RoundRobin);
        foreach (Mixed m in mixed)
            packed.Send(m, nameof(Spot.Hello), m.ToString());
        var triples = new[] { new Triple(1, -2, 3), new Triple(int.MinValue, 0, int.MaxValue) };
        var wide3 =
            ObjectArray<Triple, Trio>.Create(s, triples, x => new Trio(), Placement.RoundRobin);
        foreach (Triple x in triples)
            wide3.Send(x, nameof(Trio.Hello), x.ToString());
        s.Run();
        got = 0;
        foreach (Spot e in packed.LocalElements)
            got += e.Got;
        Check.Equal((long)mixed.Length * size, Sum(got),
                    "struct indices packed into the header arrive intact");
        got = 0;
        foreach (Trio e in wide3.LocalElements)
            got += e.Got;
        Check.Equal((long)triples.Length * size, Sum(got),
                    "struct indices too wide for the header travel in the graph");
        var far = new[] { long.MinValue, -5000000000L, -1L, 0L, 5000000000L, long.MaxValue };
        var wide = ObjectArray<long, Wide>.Create(s, far, x => new Wide());
        foreach (long x in far)
            wide.Send(x, nameof(Wide.Hello), x);
        s.Run();
        got = 0;
        foreach (Wide e in wide.LocalElements)
            got += e.Got;
        Check.Equal((long)far.Length * size, Sum(got),
                    "long indices beyond int's range: every message reached its element");
    }

    static void BadInput(Scheduler s)
    {
        var a = ObjectArray<int, Walker>.Create(s, Enumerable.Range(0, size),
                                                i => new Walker { Wander = false });
        Check.Throws<ArgumentException>(() => a.Send(0, "NoSuchEntry", 1), "an unknown entry name");
        Check.Throws<ArgumentException>(() => a.Send(0, nameof(Walker.Take), 42),
                                        "a message of the wrong type");
        Check.Throws<ArgumentException>(() => a.Send(0, nameof(Walker.Take)),
                                        "no message for an entry that takes one");
        Check.Throws<ArgumentException>(() => a.Send(0, nameof(Walker.Bye), 1),
                                        "a message for an entry that takes none");
        Check.Throws<ArgumentNullException>(() => a.Send(0, null, 1), "a null entry name");
        Check.Throws<ArgumentOutOfRangeException>(() => a.Migrate(rank, size),
                                                  "Migrate to a rank out of range");
        Check.Throws<ArgumentException>(
            () => a.Migrate((rank + 1) % size == rank ? 999 : (rank + 1) % size, 0),
            "Migrate of an element that is not here");
        Check.Throws<ArgumentOutOfRangeException>(() => a.Insert(999, new Walker(), -1),
                                                  "Insert on a rank out of range");
        Check.Throws<ArgumentException>(() => a.Insert(rank, new Walker()),
                                        "Insert of an index that lives here");
        var strings = ObjectArray<string, Named>.Create(s, new[] { "x" }, x => new Named());
        Check.Throws<ArgumentNullException>(() => strings.Send(null, nameof(Named.Hello)),
                                            "a null index");
        Check.Throws<ArgumentException>(
            () => ObjectArray<int, Walker>.Create(s, new[] { 1, 2, 1 }, i => new Walker()),
            "duplicate indices");
        if (size > 1)
            Check.Throws<ArgumentException>(
                () =>
                    ObjectArray<int, Walker>.Create(s, Enumerable.Range(0, 3 + (rank == 0 ? 1 : 0)),
                                                    i => new Walker()),
                "ranks that disagree on the indices: every rank refuses");
        Check.Throws<ArgumentException>(
            () => ObjectArray<int, Walker>.Create(s, Enumerable.Range(0, 3), i => new Walker(),
                                                  i => size),
            "a placement outside the ranks");
        Check.Throws<ArgumentException>(() => ObjectArray<int[], ArrayIndexed>.Create(
                                            s, new[] { new int[1] }, i => new ArrayIndexed()),
                                        "an index type without value equality");
        Check.Throws<ArgumentException>(
            () => ObjectArray<int, Twice>.Create(s, new[] { 0 }, i => new Twice()),
            "two entry methods with one name");
        Exception other = null;
        ThreadStart sendBye = () =>
        {
            try {
                a.Send(0, nameof(Walker.Bye));
            } catch (Exception e) {
                other = e;
            }
        };
        var t = new Thread(sendBye);
        t.Start();
        t.Join();
        Check.True(other is InvalidOperationException,
                   $"another thread is refused ({other?.GetType().Name})");
        s.Run();   // nothing was sent: quiescent at once
        Walker mine;
        Check.True(a.TryGetLocal(rank, out mine) && mine.Received == 0,
                   "the refused calls sent nothing");
        // an entry that migrates to a bad rank: the element's exception, reported on its rank
        a.Send(rank, nameof(Walker.MoveTo), size + 3);
        RunExpecting<ElementException>(s, "MigrateTo out of range inside an entry method");
    }

    /// <summary>Bytes that are no message of the kind their tag names: MPSerializationException
    /// on the receiving rank only; the array keeps working.</summary>
    /// <summary>Messages written by hand into a scheduler's communicator, for its last array,
    /// counted as the scheduler counts its own (so quiescence still balances).</summary>
    sealed class RawSender
    {
        readonly Scheduler s;
        readonly Intracomm comm;
        readonly FieldInfo sent =
            typeof(Scheduler).GetField("sent", BindingFlags.Instance | BindingFlags.NonPublic);
        readonly MethodInfo tagFor =
            typeof(Scheduler).GetMethod("TagFor", BindingFlags.Instance | BindingFlags.NonPublic);
        readonly int arrayId;

        public RawSender(Scheduler s)
        {
            this.s = s;
            comm = (Intracomm) typeof(Scheduler)
                       .GetField("Comm", BindingFlags.Instance | BindingFlags.NonPublic)
                       .GetValue(s);
            var arrays = (System.Collections.IList) typeof(Scheduler)
                             .GetField("arrays", BindingFlags.Instance | BindingFlags.NonPublic)
                             .GetValue(s);
            arrayId = arrays.Count - 1;
        }

        // Tags.Of, with the phase
        int Tag(int kind) => (int)tagFor.Invoke(s, new object[] { (arrayId << 13) | kind });

        void Count() => sent.SetValue(s, (long)sent.GetValue(s) + 1);

        /// <summary>bytes as a message of kind (Isend: a blocking send to oneself would wait
        /// for Run).</summary>
        public Request Send(byte[] bytes, int to, int kind)
        {
            Request r = comm.Isend(bytes, to, Tag(kind));
            Count();
            return r;
        }

        /// <summary>data as the zero-copy data message that follows an envelope, sent (and
        /// counted) by the scheduler itself, as an array's SendZeroCopy sends it.</summary>
        public void SendData(object data, int to)
        {
            typeof(Scheduler)
                .GetMethod("PostData", BindingFlags.Instance | BindingFlags.NonPublic)
                // Tags.ZeroCopyData
                .Invoke(s, new object[] { to, (arrayId << 13) | 15, data });
        }

        /// <summary>graph, serialized, as a message of kind.</summary>
        public Request SendGraph(object graph, int to, int kind)
        {
            Request r = comm.OIsend(graph, to, Tag(kind));
            Count();
            return r;
        }
    }

    static void Hostile(Scheduler s)
    {
        var a = ObjectArray<int, Walker>.Create(s, Enumerable.Range(0, size),
                                                i => new Walker { Wander = false });
        var raw = new RawSender(s);
        int to = (rank + 1) % size;
        // Walker's entries by name: Bye, Give, Go, MoveTo, Sum, Take, Throw, Tick
        int entryTake = 5;
        var garbage = new byte[] { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17 };
        Request r1 = raw.Send(garbage, to, 64 + entryTake);
        RunExpecting<MPSerializationException>(s, "garbage bytes for an entry method");
        r1.Wait();
        Request r2 = raw.Send(garbage, to, 1);   // as a migrating element
        RunExpecting<MPSerializationException>(s, "garbage bytes as a migrating element");
        r2.Wait();
        Request r3 = raw.Send(garbage, to, 14);   // as the envelope of a zero-copy array
        RunExpecting<MPSerializationException>(s, "garbage bytes as a zero-copy envelope");
        r3.Wait();
        // an envelope that cannot be read, then its data as the array sends it: the loop takes
        // the data on its own and refuses it (before, the data was not counted as sent, and the
        // job never became quiescent)
        Request r7 = raw.Send(garbage, to, 14);
        raw.SendData(new double[3], to);
        RunExpecting<MPSerializationException>(
            s, "garbage bytes as a zero-copy envelope, then its data");
        r7.Wait();
        // a whole header (4 longs: sender, number, origin and hops, index) before bytes that are
        // no graph: for the element on the receiving rank, then for one elsewhere (the receiving
        // rank passes the bytes on unread, and the element's rank finds them wrong); and a header
        // before the null graph, for Go(int), which takes a value
        Func<long[], byte[], byte[]> headed = (longs, rest) =>
        {
            var bytes = new byte[32 + rest.Length];
            Buffer.BlockCopy(longs, 0, bytes, 0, 32);
            Buffer.BlockCopy(rest, 0, bytes, 32, rest.Length);
            return bytes;
        };
        Request r4 =
            raw.Send(headed(new long[] { -(rank + 1), 1, rank, to }, garbage), to, 64 + entryTake);
        RunExpecting<MPSerializationException>(s,
                                               "a header before garbage bytes for an entry method");
        r4.Wait();
        int beyond = (to + 1) % size;   // the element there lives on the rank after the receiver
        Request r6 = raw.Send(headed(new long[] { -(rank + 1), 1, rank, beyond }, garbage), to,
                              64 + entryTake);
        RunExpecting<MPSerializationException>(s, "garbage bytes forwarded to the element's rank");
        r6.Wait();
        byte[] nullGraph = Serializer.Serialize(null);
        var header = new long[] { -(rank + 1), 1, rank, to };
        var headerAndNull = new byte[32 + nullGraph.Length];
        Buffer.BlockCopy(header, 0, headerAndNull, 0, 32);
        Buffer.BlockCopy(nullGraph, 0, headerAndNull, 32, nullGraph.Length);
        Request r5 = raw.Send(headerAndNull, to, 64 + 2);   // Go(int)
        RunExpecting<MPSerializationException>(s, "no value for an entry method that takes an int");
        r5.Wait();
        a.Send(to, nameof(Walker.Take), new Note { From = 1, Serial = 1, Text = "n1" });
        s.Run();
        Walker mine;
        Check.True(a.TryGetLocal(rank, out mine) && mine.Received == 1,
                   "the array works after hostile bytes");
    }

    /// <summary>A location note that arrives late (here written by hand: the element moved on or
    /// died since) must not send messages round in circles: the rank where an element died, and
    /// a rank whose insertion was refused, keep the newest epoch they know and ignore older
    /// notes. Before, each cleared its entry, the late note pointed it back along the element's
    /// old path, and a message went between two ranks for ever (seen as a rare hang at 5 ranks).
    /// Three ranks at least: the circle needs two ranks besides the index's home.</summary>
    /// <summary>A one-element array (index 0, a Walker that stays put) whose element is moved,
    /// from rank 0 where it is created, to the rank after its home.</summary>
    static ObjectArray<int, Walker> OneWalkerAfterItsHome(Scheduler s, out int home)
    {
        var a = ObjectArray<int, Walker>.Create(s, new[] { 0 }, i => new Walker { Wander = false },
                                                i => 0);
        home = a.HomeOf(0);
        int start = (home + 1) % size;
        if (rank == 0 && start != 0)
            a.Migrate(0, start);
        s.Run();
        return a;
    }

    static void StaleLocations(Scheduler s)
    {
        if (size < 3)
            return;
        const int Location = 2;   // Tags.Location
        // a deleted element, and a late note on the rank where it died
        int home;
        var a = OneWalkerAfterItsHome(s, out home);
        int from = (home + 1) % size, died = (home + 2) % size;
        var raw = new RawSender(s);
        if (rank == from)
            a.Migrate(0, died);
        s.Run();
        if (rank == died)
            a.Delete(0);
        s.Run();
        Request late =
            rank == from ? raw.SendGraph(LocationNote(0, from, 1), died, Location) : null;
        s.Run();
        late?.Wait();
        if (rank == from)
            a.Send(0, nameof(Walker.Take), new Note { From = -1, Serial = 1, Text = "n1" });
        s.Run();
        Check.Equal(
            1L, Sum(a.HeldMessages),
            "a message to a deleted element, after a late note about it, is held at its home");
        // a rank the element passed through, whose own insertion of the index was refused
        var b = OneWalkerAfterItsHome(s, out home);
        raw = new RawSender(s);
        int passed = died;
        if (rank == from)
            b.Migrate(0, passed);
        s.Run();
        if (rank == passed)
            b.Migrate(0, home);
        s.Run();
        if (rank == passed)
            b.Insert(0, new Walker { Wander = false });
        RunExpectingOn<InvalidOperationException>(s, passed,
                                                  "an insertion of an index that lives elsewhere");
        late = rank == from ? raw.SendGraph(LocationNote(0, from, 1), passed, Location) : null;
        s.Run();
        late?.Wait();
        if (rank == passed)
            b.Send(0, nameof(Walker.Take), new Note { From = -1, Serial = 1, Text = "n1" });
        s.Run();
        Walker w;
        Check.Equal(1L, Sum(b.TryGetLocal(0, out w) ? w.Received : 0),
                    "a message from a refused inserter, after a late note, reaches the element");
    }

    /// <summary>An insertion of an index that exists (refused by its home) must not cost the
    /// real element: here the element migrates to the inserting rank before the home's refusal
    /// comes back (one sender posts both, so they arrive in that order). Before, the arriving
    /// element was taken for a duplicate and dropped, and messages to it went round
    /// for ever.</summary>
    static void InsertionMeetsTheElement(Scheduler s)
    {
        if (size < 3)
            return;
        int home;
        var a = OneWalkerAfterItsHome(s, out home);
        int holder = (home + 1) % size, inserter = (home + 2) % size;
        if (rank == holder) {
            // refused at the home: index 0 exists
            a.Insert(0, new Walker { Wander = false }, inserter);
            a.Migrate(0, inserter);   // and the element follows it
        }
        RunExpectingOn<InvalidOperationException>(s, inserter,
                                                  "an insertion of an index that exists");
        Check.Equal(1L, Sum(a.LocalCount),
                    "the element survives a refused insertion on the rank it moves to");
        Walker w;
        Check.True(rank != inserter || a.TryGetLocal(0, out w), "the element lives where it moved");
        if (rank == home)
            a.Send(0, nameof(Walker.Take), new Note { From = -1, Serial = 1, Text = "n1" });
        s.Run();
        Check.Equal(1L, Sum(a.TryGetLocal(0, out w) ? w.Received : 0),
                    "a message reaches it afterwards");
    }

    /// <summary>An element that cannot travel stays where it is and the messages behind the one
    /// that asked for the move are still delivered: three messages held at the home until the
    /// index is inserted there, the first of which makes the element unserializable and asks to
    /// move. Before, the failed move's exception left Insert and the two others
    /// were lost.</summary>
    static void MigrationThatCannotHappen(Scheduler s)
    {
        if (size < 2)
            return;
        Fragile.Ranks = size;
        var a = ObjectArray<int, Fragile>.Create(s, new int[0], i => new Fragile());
        int home = a.HomeOf(7), from = (home + 1) % size;
        if (rank == from)
            for (int n = 1; n <= 3; n++)
                a.Send(7, nameof(Fragile.Take), n);
        s.Run();
        Check.Equal(3L, Sum(a.HeldMessages), "messages to an index not inserted yet are held");
        // registered at once here: the held messages run now
        if (rank == home)
            a.Insert(7, new Fragile());
        RunExpectingOn<ElementException>(s, home,
                                         "a migration of an element that cannot be serialized");
        Fragile f;
        Check.Equal(3L, Sum(a.TryGetLocal(7, out f) ? f.Count : 0),
                    "every held message delivered, the failed move's included");
        Check.True(rank != home || a.TryGetLocal(7, out f),
                   "the element stays where it could not leave");
        Check.Equal(0L, Sum(a.HeldMessages), "nothing left held");
    }

    /// <summary>User code that throws inside a reduction: a combine function (that reduction
    /// number has no result, on every rank, and the next one is exact) and a Completed handler
    /// (the result still reaches the elements). Before, the exception left the reduction's
    /// bookkeeping half done: the next result never came, and the result broadcast
    /// was skipped.</summary>
    static void ReductionFailures(Scheduler s)
    {
        int n = 2 * size + 1;
        var a = ObjectArray<int, Summer>.Create(s, Enumerable.Range(0, n), i => new Summer());
        Summer.Picky = a.DefineReduction<long>(
            (x, y) =>
            {
                if (x < 0 || y < 0)
                    throw new ArithmeticException("negative parts are not combined");
                return x + y;
            });
        Summer.Total = a.DefineReduction<long>(Op.Sum, nameof(Summer.Got));
        if (rank == 0) {
            a.Broadcast(nameof(Summer.GivePicky), 0);
            a.Broadcast(nameof(Summer.GivePicky), 1);
        }
        RunExpecting<InvalidOperationException>(s, "a combine function that throws");
        Task<long> failed = Summer.Picky.Result(0), next = Summer.Picky.Result(1);
        Check.True(failed.IsFaulted &&
                       failed.Exception.InnerException.Message.Contains("negative parts"),
                   $"the failed reduction's result is a failure on every rank ({failed.Status})");
        Check.True(next.IsCompleted && !next.IsFaulted && next.Result == (long)n * (n + 1) / 2,
                   $"the next reduction is exact ({next.Status}, " +
                       $"{(next.IsCompleted && !next.IsFaulted ? next.Result : -1)})");
        Action<long, long> throwing = (k, v) =>
        { throw new TimeoutException("a Completed handler that throws"); };
        Summer.Total.Completed += throwing;
        if (rank == 0)
            a.Broadcast(nameof(Summer.GiveTotal));
        RunExpecting<TimeoutException>(s, "a Completed handler that throws");
        Summer.Total.Completed -= throwing;
        int wrong = 0;
        foreach (Summer e in a.LocalElements)
            if (e.Results != 1 || e.LastSum != n)
                wrong++;
        Check.Equal(0L, Sum(wrong), "the result still reaches every element");
        // a combine function that throws is one fault on every rank (number 3). Before, the rank
        // where it ran got it twice: when it threw, and again with the failed result
        var faults = new List<Exception>();
        EventHandler<ArrayFaultEventArgs> collect = (sender, e) => faults.Add(e.Exception);
        s.Faulted += collect;
        if (rank == 0)
            a.Broadcast(nameof(Summer.GivePicky), 0);
        s.Run();
        s.Faulted -= collect;
        Check.True(
            faults.Count == 1 && faults[0] is InvalidOperationException &&
                faults[0].Message.Contains("number 3") &&
                faults[0].Message.Contains("negative parts"),
            "one fault for the failed number on this rank: " +
                $"{string.Join(" | ", faults.Select(f => f.GetType().Name + ": " + f.Message))}");
    }

    /// <summary>An element inserted by another joins the reductions from its inserter's next
    /// number: element 0 gives to reductions 0–2 and inserts a child on the rank of element 1,
    /// which has given nothing yet. Before, the child took that rank's number (0) and was
    /// counted in reductions its inserter had already given to.</summary>
    static void InsertionJoinsItsInserter(Scheduler s)
    {
        int first = 0, last = size - 1;
        var a = ObjectArray<int, Joiner>.Create(s, new[] { 0, 1 }, i => new Joiner(),
                                                i => i == 0 ? first : last);
        Joiner.Count = a.DefineReduction<long>(Op.Sum);
        Joiner.ChildRank = last;
        if (rank == first)
            a.Send(0, nameof(Joiner.Go));
        s.Run();
        if (rank == last) {
            a.Send(1, nameof(Joiner.Give), 3);
            a.Send(2, nameof(Joiner.Give), 1);
        }
        s.Run();
        for (int k = 0; k < 3; k++) {
            Task<long> t = Joiner.Count.Result(k);
            Check.True(
                t.IsCompleted && !t.IsFaulted && t.Result == 2,
                $"reduction {k} counts the inserter and element 1, not the child ({t.Status}, " +
                    $"{(t.IsCompleted && !t.IsFaulted ? t.Result : -1)})");
        }
        Joiner child;
        Check.True(rank != last || (a.TryGetLocal(2, out child) && child.Contributions == 4),
                   "the child's first contribution is number 3");
    }

    /// <summary>A Send the serializer refuses (a delegate in the message) raises
    /// ArgumentException and consumes nothing: the next message from the same sender to the same
    /// element arrives. From a rank's code and from inside an element, to an element on the same
    /// rank and on the next. Before, the refused Send had taken the message number, the element
    /// waited for it for ever, and every later message from that sender
    /// stayed undelivered.</summary>
    static void RefusedSends(Scheduler s)
    {
        // elements 2r (relays) and 2r+1 (receivers) live on rank r
        var a = ObjectArray<int, Refusing>.Create(s, Enumerable.Range(0, 2 * size),
                                                  i => new Refusing(), i => i / 2);
        int local = 2 * rank + 1, remote = 2 * ((rank + 1) % size) + 1;
        foreach (int to in new[] { local, remote }) {
            var refused = Check.Throws<ArgumentException>(
                () => a.Send(to, nameof(Refusing.Take), Parcel.Bad()),
                $"a parcel holding a delegate, to element {to}, is refused");
            Check.True(refused == null || refused.Message.Contains("Action"),
                       $"the refusal names the delegate's type: {refused?.Message}");
            a.Send(to, nameof(Refusing.Take), Parcel.Good());
        }
        s.Run();
        Refusing r;
        Check.True(
            a.TryGetLocal(local, out r) && r.Got == 2 && r.Bad == 0,
            $"from rank code: element {local} got the 2 good parcels after the refused ones " +
                $"({r?.Got} of 2, {r?.Bad} bad)");
        Check.Equal(0L, Sum(a.HeldMessages), "nothing held");
        a.Send(2 * rank, nameof(Refusing.Relay), new[] { local, remote });
        s.Run();
        Check.True(a.TryGetLocal(2 * rank, out r) && r.Refusals == 2,
                   $"inside an element: both bad parcels refused ({r?.Refusals})");
        Check.True(
            a.TryGetLocal(local, out r) && r.Got == 4 && r.Bad == 0,
            $"from elements: element {local} got the 2 good parcels after the refused ones " +
                $"({r?.Got} of 4, {r?.Bad} bad)");
        Check.Equal(0L, Sum(a.HeldMessages), "nothing held after the elements' sends");
        if (size < 2)
            return;
        // an insertion on another rank of an element that cannot travel: refused, nothing counted;
        // the same index inserted right afterwards lives and gets its messages
        int index = 2 * size + rank, there = (rank + 1) % size;
        // clang-format off
        Check.Throws<ArgumentException>(
            () => a.Insert(index, new Refusing { Payload = new Action(() => { }) }, there),
            "an insertion of an element that cannot travel is refused");
        // clang-format on
        a.Insert(index, new Refusing(), there);
        a.Send(index, nameof(Refusing.Take), Parcel.Good());
        s.Run();
        Check.Equal(3L * size, Sum(a.LocalCount), "every good insertion lives, no refused one");
        Check.True(a.TryGetLocal(2 * size + (rank + size - 1) % size, out r) && r.Got == 1,
                   $"the element inserted after a refused insertion got its message ({r?.Got})");
    }

    static string Outcome(Reduction<long> reduction, long number)
    {
        try {
            Task<long> t = reduction.Result(number);
            return t.IsFaulted     ? "failed: " + t.Exception.InnerException.Message
                   : t.IsCompleted ? "= " + t.Result
                                   : "pending";
        } catch (Exception e) {
            return "Result threw " + e.GetType().Name + ": " + e.Message;
        }
    }

    /// <summary>Elements that contribute to an array's two reductions in different orders (the
    /// reductions share one numbering): numbers 0 and 1 fail for both reductions on every rank,
    /// with one InvalidOperationException per number per rank, no Completed and no partial
    /// value; in the same order afterwards, the next numbers are exact. Before, the scheduler
    /// reported the mix but Completed still fired with partial values (A #0 = 3,
    /// expected 8).</summary>
    static void ReductionsInDifferentOrders(Scheduler s)
    {
        int n = 2 * size + 1;
        var a = ObjectArray<int, Mixer>.Create(s, Enumerable.Range(0, n), i => new Mixer(),
                                               Placement.RoundRobin);
        Mixer.A = a.DefineReduction<long>(Op.Sum);
        Mixer.B = a.DefineReduction<long>(Op.Sum);
        var completed = new List<string>();
        Mixer.A.Completed += (k, v) => completed.Add($"A #{k} = {v}");
        Mixer.B.Completed += (k, v) => completed.Add($"B #{k} = {v}");
        var faults = new List<Exception>();
        EventHandler<ArrayFaultEventArgs> collect = (sender, e) => faults.Add(e.Exception);
        s.Faulted += collect;
        if (rank == 0)
            a.Broadcast(nameof(Mixer.Give), true);
        s.Run();
        Check.True(completed.Count == 0,
                   "no Completed for the numbers the elements disagreed on: " +
                       $"{string.Join(", ", completed)}");
        foreach (long k in new long[] { 0, 1 })
            foreach (var r in new[] { Mixer.A, Mixer.B }) {
                string outcome = Outcome(r, k);
                Check.True(
                    outcome.StartsWith("failed: ") && outcome.Contains("different reductions") &&
                        outcome.Contains($"number {k}"),
                    $"reduction {(r == Mixer.A ? "A" : "B")} #{k} fails, saying why: {outcome}");
            }
        Check.True(
            faults.Count == 2 && faults.All(f => f is InvalidOperationException) &&
                faults[0].Message.Contains("number 0") && faults[1].Message.Contains("number 1"),
            "one fault per failed number on this rank: " +
                $"{string.Join(" | ", faults.Select(f => f.GetType().Name + ": " + f.Message))}");
        faults.Clear();
        if (rank == 0)
            a.Broadcast(nameof(Mixer.Give), false);
        s.Run();
        s.Faulted -= collect;
        Check.True(faults.Count == 0,
                   "no fault when every element contributes in the same order: " +
                       $"{string.Join(" | ", faults.Select(f => f.Message))}");
        Check.True(completed.SequenceEqual(new[] { $"A #2 = {n}", $"B #3 = {1000L * n}" }),
                   $"the next numbers are exact: {string.Join(", ", completed)}");
    }

    /// <summary>Placement.Block as its documentation says: position i of n on rank ⌊i·p/n⌋,
    /// that is rank r holds [⌈r·n/p⌉, ⌈(r+1)·n/p⌉), so 5 positions on 2 ranks are 0–2
    /// and 3–4.</summary>
    static void BlockPlacement(Scheduler s)
    {
        foreach (int n in new[] { 1, 5, 7, 2 * size + 1 }) {
            var a = ObjectArray<int, Worker>.Create(s, Enumerable.Range(0, n), i => new Worker(),
                                                    Placement.Block);
            int first = (rank * n + size - 1) / size, end = ((rank + 1) * n + size - 1) / size;
            var mine = a.LocalElements.Select(w => w.Index).OrderBy(i => i).ToArray();
            Check.True(
                mine.SequenceEqual(Enumerable.Range(first, end - first)),
                $"Placement.Block of {n} on {size} ranks: rank {rank} holds [{first}, {end}), " +
                    $"got [{string.Join(",", mine)}]");
        }
        if (size == 2) {
            var five = ObjectArray<int, Worker>.Create(s, Enumerable.Range(0, 5), i => new Worker(),
                                                       Placement.Block);
            Check.Equal(rank == 0 ? 3 : 2, five.LocalCount,
                        "5 on 2 ranks: rank 0 takes the extra element");
        }
    }

    /// <summary>Balance resets the loads when it takes them, before its moves: work that runs
    /// inside Balance (a message sent before it) is measured for the next balance.</summary>
    static void BalanceResetsBeforeMoving(Scheduler s)
    {
        int n = 2 * size;
        var a = ObjectArray<int, Worker>.Create(s, Enumerable.Range(0, n), i => new Worker());
        for (int i = rank; i < n; i += size)
            a.Send(i, nameof(Worker.Work), 200000);
        s.Run();
        Check.True(a.LocalElements.All(w => w.Load > 0), "every element measured its work");
        if (rank == 0)
            a.Send(0, nameof(Worker.Work), 200000);   // delivered inside Balance
        double[] gathered = null;
        a.Balance((loads, ranks) =>
                  {
                      gathered = loads.Select(l => l.Load).ToArray();
                      return loads.Select(l => l.Rank).ToArray();
                  });
        Check.True(rank != 0 ||
                       (gathered != null && gathered.Length == n && gathered.All(l => l > 0)),
                   "the balancer saw every element's load: " +
                       $"{(gathered == null ? "none" : string.Join(",", gathered))}");
        foreach (Worker w in a.LocalElements)
            Check.True(
                w.Index == 0 ? w.Load > 0 : w.Load == 0,
                $"element {w.Index}: load {w.Load} after Balance (only element 0 worked since " +
                    "the loads were taken)");
    }

    /// <summary>An internal location note (index at rank since epoch), as the arrays
    /// send them.</summary>
    static object LocationNote(int index, int at, long epoch)
    {
        Type t = typeof(Scheduler)
                     .Assembly.GetType("System.MP.Arrays.LocationNote`1", true)
                     .MakeGenericType(typeof(int));
        object note = Activator.CreateInstance(t, true);
        t.GetField("Index").SetValue(note, index);
        t.GetField("Rank").SetValue(note, at);
        t.GetField("Epoch").SetValue(note, epoch);
        return note;
    }

    static int Main()
    {
        Thread.CurrentThread.CurrentCulture = System.Globalization.CultureInfo.InvariantCulture;
        // ArraysTest collect: another thread forces minor and major collections throughout, so
        // elements, messages and passports move under every step
        Collector collector =
            Environment.GetCommandLineArgs().Contains("collect") ? new Collector() : null;
        using (var s = new Scheduler(world))
        {
            s.Run();   // nothing at all: quiescent at once
            ExactlyOnceWhileMigrating(s);
            ReductionsWhileMigrating(s);
            ConcurrentInsertDelete(s);
            ZeroCopy(s);
            IndexKinds(s);
            BadInput(s);
            Hostile(s);
            StaleLocations(s);
            InsertionMeetsTheElement(s);
            MigrationThatCannotHappen(s);
            ReductionFailures(s);
            InsertionJoinsItsInserter(s);
            RefusedSends(s);
            ReductionsInDifferentOrders(s);
            BlockPlacement(s);
            BalanceResetsBeforeMoving(s);
        }
        collector?.Dispose();
        return Check.FinishWithNoPinLeft("ArraysTest");
    }
}

public class ArrayIndexed : Element<int[]>
{ }

// SdtoReuseTest — ORecvInto receives a graph into the objects of an existing one where they fit
// (same class; arrays with the same bounds), matched in the serializer's record order: reused
// objects are the very same objects afterwards, mismatched ones are made new, strings and
// collections are never reused, unmarked reference fields keep their values and travelling ones
// become what was sent (null included). A message that fails (wrong root type, bytes that are no
// graph) leaves the graph exactly as it was. And a long loop of OSend + ORecvInto, which
// allocates nothing and so lets no collection run, keeps going: OSend's buffered sends are
// reaped as they finish, not only by the GC hook (it hung after 256 MiB before).
#pragma warning disable 649
using System;
using System.Collections.Generic;
using System.Linq;
using System.MP;

class Cargo
{
    public int Id;
    [Transportable]
    public int[] Data;
    [Transportable]
    public double[,] Grid;
    [Transportable]
    public string Name;
    [Transportable]
    public Cargo Next;
    [Transportable]
    public List<int> Tags;
    public object Cache;   // does not travel: keeps its value
}

class SubCargo : Cargo
{
    public int Extra;
}

// A record with an array of structs after the root: hostile bytes give that array a lower bound.
struct R2
{
    public int Mark;
    public int B;
}
class Rack
{
    public int Id;
    [Transportable]
    public int[] Data;
    [Transportable]
    public R2[] Rows;
    [Transportable]
    public Rack Next;
    public string Label;
}

class Link
{
    public int V;
    [Transportable]
    public Link Next;
    [Transportable]
    public Link Skip;
    [Transportable]
    public int[] Data;
    public Link Cache;
}

static class SdtoReuseTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, next = Ring.Next, prev = Ring.Prev;

    static Cargo Make(int id, int length)
    {
        var c = new Cargo { Id = id, Data = Enumerable.Range(id, length).ToArray(),
                            Grid = new double[2, 3], Name = "c" + id,
                            Next = new Cargo { Id = id + 1, Data = new[] { id }, Name = "tail" } };
        c.Grid[1, 2] = id + 0.5;
        return c;
    }

    static Cargo Exchange(Cargo send, Cargo into)
    {
        Cargo got = null;
        Ring.Exchange(() => world.OSend(send, next, 1), () =>
                                                        {
                                                            got = world.ORecvInto(into, prev, 1);
                                                            return null;
                                                        });
        return got;
    }

    static void SameShape()
    {
        Cargo into = Make(-100, 50);
        var cache = new object();
        into.Cache = cache;
        int[] data = into.Data;
        double[,] grid = into.Grid;
        Cargo tail = into.Next;
        string name = into.Name;
        Cargo got = Exchange(Make(rank * 10, 50), into);
        Check.True(ReferenceEquals(got, into) && ReferenceEquals(got.Data, data) &&
                       ReferenceEquals(got.Grid, grid) && ReferenceEquals(got.Next, tail),
                   "same shape: the root, its arrays and the next node are reused");
        Check.True(got.Id == prev * 10 && got.Data.SequenceEqual(Enumerable.Range(prev * 10, 50)) &&
                       got.Grid[1, 2] == prev * 10 + 0.5 && got.Next.Id == prev * 10 + 1 &&
                       got.Next.Data.Single() == prev * 10 && got.Name == "c" + prev * 10 &&
                       got.Next.Name == "tail",
                   "same shape: every value as sent");
        Check.True(!ReferenceEquals(got.Name, name), "strings are never overwritten");
        Check.True(ReferenceEquals(got.Cache, cache),
                   "a field that does not travel keeps its value");
        Check.True(got.Next.Next == null && got.Tags == null, "null references as sent");
    }

    static void OtherShapes()
    {
        Cargo into = Make(-1, 10);
        int[] data = into.Data;
        double[,] grid = into.Grid;
        into.Next.Next = new Cargo { Id = 99 };   // the message's tail has no Next: cleared
        Cargo got = Exchange(Make(rank, 20), into);
        Check.True(ReferenceEquals(got, into) && !ReferenceEquals(got.Data, data) &&
                       got.Data.Length == 20 && ReferenceEquals(got.Grid, grid),
                   "an array of another length is made new, the rest reused");
        Check.True(got.Data.SequenceEqual(Enumerable.Range(prev, 20)) && got.Next.Next == null,
                   "values as sent; a travelling reference cleared");

        var sub = new SubCargo { Id = 7, Extra = 8, Data = new int[3] };
        Cargo got2 = Exchange(Make(rank, 3), sub);
        Check.True(!ReferenceEquals(got2, sub) && got2.GetType() == typeof(Cargo) && sub.Id == 7 &&
                       sub.Extra == 8,
                   "a root of another class is made new; graph untouched");
        Check.True(got2.Data.SequenceEqual(Enumerable.Range(prev, 3)), "its values as sent");

        var withList = Make(rank, 4);
        withList.Tags = new List<int> { 1, 2 };
        Cargo target = Make(-5, 4);
        int[] before = target.Data;
        Cargo got3 = Exchange(withList, target);
        Check.True(!ReferenceEquals(got3, target) && ReferenceEquals(target.Data, before) &&
                       target.Id == -5 && target.Data[0] == -5 &&
                       got3.Tags.SequenceEqual(new[] { 1, 2 }),
                   "a message holding a collection reuses nothing");
    }

    static void FailuresLeaveTheGraph()
    {
        Cargo into = Make(-3, 8);
        Ring.Exchange(() => world.OSend(new List<string> { "x" }, next, 2),
                      () =>
                      {
                          Check.Throws<MPSerializationException>(
                              () => world.ORecvInto(into, prev, 2), "a root that is not a Cargo");
                          return null;
                      });
        Ring.Exchange(() => world.Send(new byte[] { 1, 2, 3 }, next, 3),
                      () =>
                      {
                          Check.Throws<MPSerializationException>(
                              () => world.ORecvInto(into, prev, 3), "bytes that are no graph");
                          return null;
                      });
        Check.True(into.Id == -3 && into.Data.SequenceEqual(Enumerable.Range(-3, 8)) &&
                       into.Name == "c-3" && into.Next.Id == -2,
                   "after failed receives the graph is as it was");
        Check.Throws<ArgumentNullException>(() => world.ORecvInto<Cargo>(null, prev, 4),
                                            "a null graph");
        Cargo ok = Exchange(Make(rank, 8), into);
        Check.True(ReferenceEquals(ok, into) && ok.Id == prev, "usable afterwards");
    }

    // A chain of n racks; the last one has an R2[] whose first element's Mark is mark.
    static Rack MakeRacks(int n, int id, int mark)
    {
        Rack head = null;
        for (int k = n - 1; k >= 0; k--)
            head = new Rack { Id = id + k, Data = new[] { id, k }, Next = head, Label = "kept" + k,
                              Rows = k == n - 1 ? new[] { new R2 { Mark = mark, B = id },
                                                          new R2 { Mark = mark + 1, B = -id } }
                                                : null };
        return head;
    }

    // Every field of every rack, and every object's identity, as a value to compare.
    static Tuple<string, List<object>> Snapshot(Rack r)
    {
        var text = new System.Text.StringBuilder();
        var objects = new List<object>();
        for (; r != null; r = r.Next) {
            objects.Add(r);
            objects.Add(r.Data);
            objects.Add(r.Rows);
            objects.Add(r.Label);
            text.Append(
                $"{r.Id} {r.Label} [{(r.Data == null ? "null" : string.Join(",", r.Data))}] " +
                "[" +
                (r.Rows == null ? "null"
                                : string.Join(",", r.Rows.Select(x => x.Mark + "/" + x.B))) +
                "];");
        }
        return Tuple.Create(text.ToString(), objects);
    }

    // A message whose every check but one passes: an R2[] (a T[], always zero-based) with lower
    // bound 1, after records the graph reuses (found by a fuzzer: the array was refused at its
    // creation after the root's Id and Data had been overwritten, `g.Id = 777 (was 1)`). Every
    // field of the graph must be as it was, and a good message still fits it afterwards. At 2
    // racks (5 records: linked by the reader) and at 12 (25: linked in compiled code).
    static void HostileBoundsLeaveTheGraph()
    {
        const int mark = 0x5EADBEEF;
        foreach (int n in new[] { 2, 12 }) {
            byte[] bytes = Serializer.Serialize(MakeRacks(n, 777, mark));
            int at = -1;
            for (int i = 32; i + 4 <= bytes.Length && at < 0; i++)
                if (BitConverter.ToInt32(bytes, i) == mark)
                    at = i;
            Check.True(at > 40 && BitConverter.ToInt32(bytes, at - 8) == 2 &&
                           BitConverter.ToInt32(bytes, at - 4) == 0,
                       "the R2[]'s length and lower bound precede its first element (FORMAT.md)");
            BitConverter.GetBytes(1).CopyTo(bytes, at - 4);

            Rack into = MakeRacks(n, 1, 5);
            var before = Snapshot(into);
            MPSerializationException e = null;
            Ring.Exchange(() => world.Send(bytes, next, 7),
                          () =>
                          {
                              e = Check.Throws<MPSerializationException>(
                                  () => world.ORecvInto(into, prev, 7),
                                  $"{n} racks: an R2[] with lower bound 1 is refused");
                              return null;
                          });
            Check.True(e != null && e.Message.Contains("lower bound 1"),
                       $"{n} racks: it says why: " + e?.Message);
            var after = Snapshot(into);
            Check.Equal(before.Item1, after.Item1, $"{n} racks: every field as it was");
            Check.True(before.Item2.Count == after.Item2.Count &&
                           before.Item2.Zip(after.Item2, ReferenceEquals).All(same => same),
                       $"{n} racks: every reference as it was");

            Rack ok = null;
            Ring.Exchange(() => world.OSend(MakeRacks(n, rank * 100, 9), next, 8),
                          () =>
                          {
                              ok = world.ORecvInto(into, prev, 8);
                              return null;
                          });
            var good = Snapshot(ok);
            Check.True(ReferenceEquals(ok, into) &&
                           before.Item2
                               .Zip(good.Item2, (x, y) => x is string || ReferenceEquals(x, y))
                               .All(same => same) &&
                           good.Item1 == Snapshot(MakeRacks(n, prev * 100, 9)).Item1,
                       $"{n} racks: a good message is received into the same objects afterwards: " +
                           $"{good.Item1}");
        }
    }

    /// <summary>1,200 OSend + ORecvInto of 256 KiB graphs (300 MiB, more than OSend buffers)
    /// with nothing allocated: no collection runs, so only OSend itself can free the buffers of
    /// its earlier sends.</summary>
    static void LongLoopWithoutCollections()
    {
        var mine = new Cargo { Data = new int[65536] };
        var into = new Cargo { Data = new int[65536] };
        int bad = 0;
        for (int i = 0; i < 1200; i++) {
            mine.Id = i;
            mine.Data[i % 65536] = i;
            world.OSend(mine, next, 5);
            Cargo got = world.ORecvInto(into, prev, 5);
            if (got.Id != i || got.Data[i % 65536] != i)
                bad++;
        }
        Check.Equal(0, bad, "1200 graphs of 256 KiB sent and received into one graph");
    }

    // A graph of 8 records or more is linked in compiled code (SdtoFactories' linkers): reused
    // objects' travelling references become what was sent, null included; others keep theirs.
    static void LargeGraphs()
    {
        const int n = 100;
        Link into = null, sent = null;
        for (int i = 0; i < n; i++) {
            into = new Link { V = -i, Next = into, Data = new[] { -i }, Cache = into };
            sent = new Link { V = rank * 1000 + i, Next = sent, Data = new[] { i } };
        }
        for (Link p = into; p != null; p = p.Next)
            p.Skip = into;   // every node points at the head
        var before = new List<Link>();
        for (Link p = into; p != null; p = p.Next)
            before.Add(p);
        Link got = null;
        Ring.Exchange(() => world.OSend(sent, next, 6), () =>
                                                        {
                                                            got = world.ORecvInto(into, prev, 6);
                                                            return null;
                                                        });
        int k = n - 1, wrong = 0;
        Link q = got;
        foreach (Link p in before) {
            wrong += ReferenceEquals(p, q) && q.V == prev * 1000 + k && q.Skip == null &&
                             q.Data.Single() == k &&
                             ReferenceEquals(q.Cache, k > 0 ? before[n - k] : null)
                         ? 0
                         : 1;
            q = q?.Next;
            k--;
        }
        Check.True(
            wrong == 0 && q == null,
            $"a 100-node list received into one: nodes reused, Skip cleared, Cache kept ({wrong} " +
                "wrong)");
    }

    static int Main()
    {
        SameShape();
        OtherShapes();
        FailuresLeaveTheGraph();
        HostileBoundsLeaveTheGraph();
        LongLoopWithoutCollections();
        LargeGraphs();
        return Check.Finish("SdtoReuseTest");
    }
}

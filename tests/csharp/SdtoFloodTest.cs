// SdtoFloodTest — hash flooding (issue 36, item 2): a HashSet or Dictionary whose keys collide in
// the table the receiver builds is refused with MPSerializationException naming the collection,
// its path and its count, before the quadratic insertions; keys that hash alike (long keys x<<32|x
// all hash to 0), keys that fall in one bucket without hashing alike (multiples of the bucket
// count), strings built to share Mono's string hash (Marvin with its fixed seed), user keys; at
// the root, in a field, in a list; through Serializer and over MPI (the communicator usable
// after). Ordinary and honestly structured keys still arrive.
using System;
using System.Collections.Generic;
using System.Linq;
using System.MP;
using System.Reflection;

class Holder
{
    [Transportable]
    public Dictionary<string, int> Map;
}

class SameHash
{
    public int K;
    public override bool Equals(object o) => o is SameHash other && other.K == K;
    public override int GetHashCode() => 7;
}

static class SdtoFloodTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, next = Ring.Next, prev = Ring.Prev;

    // ---- checks ----

    static void Refused<T>(T graph, string what, params string[] mentions)
    {
        byte[] bytes = Serializer.Serialize(graph);
        var e = Check.Throws<MPSerializationException>(
            () => Serializer.Deserialize<T>(bytes, 0, bytes.Length), what + ": refused");
        if (e == null)
            return;
        foreach (string m in mentions.Concat(new[] { "collide" }))
            Check.True(e.Message.Contains(m), $"{what}: the message says '{m}': {e.Message}");
    }

    static int BucketsFor(int n)
    {
        var set = new HashSet<long>(n);
        var buckets = (int[]) typeof(HashSet<long>)
                          .GetField("_buckets", BindingFlags.NonPublic | BindingFlags.Instance)
                          .GetValue(set);
        return buckets.Length;
    }

    static void Floods()
    {
        const int n = 4096;
        var zero = new HashSet<long>(Enumerable.Range(0, n).Select(i => ((long)i << 32) | (uint)i));
        Check.True(zero.All(x => x.GetHashCode() == 0), "the premise: x<<32|x hashes to 0");
        Refused(zero, "a HashSet<long> of keys that all hash to 0", "root", "HashSet",
                "4096 elements");

        // one bucket, distinct hash codes: the bucket count the receiver's table really has
        int buckets = BucketsFor(n);
        var oneBucket = new HashSet<long>(Enumerable.Range(1, n).Select(i => (long)i * buckets));
        Check.True(oneBucket.Select(x => x.GetHashCode()).Distinct().Count() == n,
                   "the premise: multiples of the bucket count hash apart");
        Refused(oneBucket, "a HashSet<long> whose keys share one bucket", "root",
                $"{buckets} buckets");

        List<string> strings = MarvinCollisions.Strings(12);
        Check.True(strings.Distinct().Count() == 4096 &&
                       strings.Select(s => s.GetHashCode()).Distinct().Count() == 1,
                   "the premise: 4096 distinct strings share one hash code");
        var holder = new Holder {
            Map = Enumerable.Range(0, strings.Count).ToDictionary(i => strings[i], i => i)
        };
        Refused(holder, "a Dictionary<string,int> of colliding strings in a field", "root.Map",
                "Dictionary", "4096 elements");

        var user =
            new HashSet<SameHash>(Enumerable.Range(0, 1000).Select(i => new SameHash { K = i }));
        Refused(user, "a HashSet of user keys that hash alike", "root", "1000 elements");

        var lists = new List<HashSet<long>> { new HashSet<long> { 1, 2 }, zero };
        Refused(lists, "a flooded set inside a list", "root[1]");

        // every dictionary key type: a Dictionary<long,string>
        var dict = zero.ToDictionary(x => x, x => "v");
        Refused(dict, "a Dictionary<long,string> of keys that all hash to 0", "root");
    }

    static void StillArrive()
    {
        var rnd = new Random(11 + rank);
        var longs = new HashSet<long>();
        while (longs.Count < 100000)
            longs.Add(((long)rnd.Next() << 31) ^ rnd.Next());
        Check.True(Graphs.RoundTrip(longs).SetEquals(longs), "100000 random long keys arrive");
        var words = Enumerable.Range(0, 50000).ToDictionary(i => "key" + i * 7919, i => i);
        var back = Graphs.RoundTrip(words);
        Check.True(back.Count == words.Count && words.All(kv => back[kv.Key] == kv.Value),
                   "50000 ordinary string keys arrive");
        // packed coordinates: (x<<32|y) hashes to x^y, 256 keys per hash code; the sender's
        // set paid the same collisions, and they stay within the bound
        var grid = new HashSet<long>();
        for (long x = 0; x < 256; x++)
            for (long y = 0; y < 256; y++)
                grid.Add(x << 32 | y);
        Check.True(Graphs.RoundTrip(grid).SetEquals(grid),
                   "256 x 256 packed coordinates (256 keys per hash code) arrive");
        // a small set may collide freely: at most the bound's constant
        var few = new HashSet<long>(Enumerable.Range(0, 90).Select(i => ((long)i << 32) | (uint)i));
        Check.True(Graphs.RoundTrip(few).SetEquals(few), "90 keys hashing alike arrive");
    }

    static void OverMpi()
    {
        var zero =
            new HashSet<long>(Enumerable.Range(0, 4096).Select(i => ((long)i << 32) | (uint)i));
        MPSerializationException refusal = null;
        HashSet<long> good = null;
        Ring.Exchange(
            () =>
            {
                world.OSend(zero, next, 80);
                world.OSend(new HashSet<long> { rank }, next, 80);
            },
            () =>
            {
                try {
                    world.ORecv<HashSet<long>>(prev, 80);
                } catch (MPSerializationException e) {
                    refusal = e;
                }
                good = world.ORecv<HashSet<long>>(prev, 80);
                return null;
            });
        Check.True(refusal != null && refusal.Message.Contains("collide"),
                   "ORecv refuses a flooded set: " + refusal?.Message);
        Check.True(good != null && good.Single() == prev, "the next message arrives");
        Check.StillUsable(world, "a flooded set");
    }

    static int Main()
    {
        Floods();
        StillArrive();
        OverMpi();
        return Check.Finish("SdtoFloodTest");
    }
}

// Flooding — what a HashSet or Dictionary costs its receiver (issue 36, item 2): the time to read
// (Serializer.Deserialize, the reader every receive uses) a set or dictionary of ordinary keys,
// and of keys that collide in the receiver's table, refused since the flooding bound; "add" is
// the old reader's way, new C(n) then Add of every key, timed on its own.
//   motor Flooding.exe [keys] [reps] [ordinary]   (1 rank; default 32768 keys, 5 repetitions;
//   "ordinary": only the honest keys, to compare builds)
// Printed per case: the message's bytes and the median, min and max in ms, and what the read
// gave (arrived, or refused); the "new + Add" cases run once (the old reader's quadratic cost). A
// figure, not a test.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.MP;
using System.Reflection;

static class Flooding
{
    static int reps;

    static void Time(string name, int keys, int bytes, Func<string> run, int reps)
    {
        var ms = new double[reps];
        string outcome = null;
        for (int r = 0; r < reps; r++) {
            GC.Collect();
            long t = Stopwatch.GetTimestamp();
            outcome = run();
            ms[r] = (Stopwatch.GetTimestamp() - t) * 1000.0 / Stopwatch.Frequency;
        }
        Array.Sort(ms);
        Console.WriteLine(
            $"{name},{keys},{bytes},{ms[reps / 2]:F2},{ms[0]:F2},{ms[reps - 1]:F2}," + outcome);
    }

    static void Read<T>(string name, T graph, int keys)
    {
        byte[] bytes = Serializer.Serialize(graph);
        Time(name, keys, bytes.Length,
             () =>
             {
                 try {
                     Serializer.Deserialize<T>(bytes, 0, bytes.Length);
                     return "arrived";
                 } catch (MPSerializationException) {
                     return "refused";
                 }
             },
             reps);
    }

    static void Add<K>(string name, IList<K> keys)
    {
        Time(name, keys.Count, 0,
             () =>
             {
                 var set = new HashSet<K>(keys.Count);
                 foreach (K k in keys)
                     set.Add(k);
                 return "built";
             },
             1);
    }

    static int Main(string[] args)
    {
        int n = args.Length > 0 ? int.Parse(args[0]) : 32768;
        reps = args.Length > 1 ? int.Parse(args[1]) : 5;
        bool all = args.Length < 3 || args[2] != "ordinary";
        Console.WriteLine("case,keys,bytes,median_ms,min_ms,max_ms,outcome");
        var rnd = new Random(1);
        var ordinary = new HashSet<long>();
        while (ordinary.Count < n)
            ordinary.Add(((long)rnd.Next() << 31) ^ rnd.Next());
        var flood = Enumerable.Range(0, n).Select(i => ((long)i << 32) | (uint)i).ToList();
        Read("HashSet<long> ordinary", ordinary, n);
        if (all) {
            Read("HashSet<long> all hash 0", new HashSet<long>(flood), n);
            Add("HashSet<long> all hash 0: new + Add", flood);
        }
        var words = Enumerable.Range(0, n).ToDictionary(i => "key" + i * 7919, i => i);
        Read("Dictionary<string,int> ordinary", words, n);
        if (all) {
            int k = 0;
            while (2 << k <= n)
                k++;
            List<string> colliding = MarvinCollisions.Strings(k);
            Read("Dictionary<string,int> one string hash",
                 colliding.Select((s, i) => new KeyValuePair<string, int>(s, i))
                     .ToDictionary(p => p.Key, p => p.Value),
                 colliding.Count);
            Add("HashSet<string> one string hash: new + Add", colliding);
        }
        // larger ordinary collections: what the check costs honest keys
        var many = new HashSet<long>();
        while (many.Count < 16 * n)
            many.Add(((long)rnd.Next() << 31) ^ rnd.Next());
        Read("HashSet<long> ordinary", many, many.Count);
        var manyWords = Enumerable.Range(0, 16 * n).ToDictionary(i => "key" + i * 7919, i => i);
        Read("Dictionary<string,int> ordinary", manyWords, manyWords.Count);
        return 0;
    }
}

// Sdto — structured data over MPI, the Motor paper's LinkedArray ping-pong: a linked list of N
// elements, each an int[] buffer and a next reference, 4096 ints in total, sent rank 0 -> 1 ->
// 0. Transports: sdto (System.MP OSend/ORecv: one message, matched probe); sdto-into (OSend and
// ORecvInto, receiving into the previous graph of the same shape: no allocation); binaryformatter
// and datacontract (BASELINES: .NET serializers into a byte[], moved with OPI Send and a Probe for
// the size, one message too).
//   mpiexec.mpich -n 2 motor Sdto.exe pingpong TRANSPORT MIN_N MAX_N REPS
//   mpiexec.mpich -n 2 motor Sdto.exe bandwidth KIND ELEMENTS REPS
//     ping-pong of ELEMENTS doubles as KIND: list (List<double>, OSend/ORecv), array (double[],
//     OSend/ORecv) or opi (double[], OPI Send/Recv into the same array):
//     "KIND,bytes,rep,iterations,µs".
//   mpiexec.mpich -n 1 motor Sdto.exe allocfloor alloc-floor MIN_N MAX_N REPS
//     the floor of any receiver in this runtime: only allocating and linking the list's 2N objects
//     (new, no bytes read, nothing checked), µs per list, rows as pingpong's.
//   mpiexec.mpich -n 1 motor Sdto.exe perobject TRANSPORT OBJECTS REPS
//     a list of OBJECTS small nodes: rows "TRANSPORT-serialize" and "TRANSPORT-roundtrip"
//     (serialize + deserialize), nanoseconds per object, each repetition averaged over
//     max(1, 20000 / OBJECTS) round trips (so OBJECTS = 1 measures a graph's fixed cost). Each
//     serialization makes a fresh byte[] (Serializer.Serialize(graph)); for sdto also
//     "sdto-buffer-serialize" and "sdto-buffer-roundtrip": into one byte[] reused, sized once
//     with Serializer.Measure (Serialize(graph, buffer, 0)), and deserialized from it; and
//     "sdto-unshared-*" and "sdto-shared-*": a list of TaggedNode the same way, nothing shared or
//     every Tag the head (the writer's seen bits against its identity map).
//   mpiexec.mpich -n 2 motor Sdto.exe userloop TRANSPORT N WARMUP ITERS
//     a user's plain loop (issue 35), one list of N elements per run: rank 0 OSends the list
//     and receives it back, rank 1 receives it and OSends it on; WARMUP round trips, then
//     ITERS timed by one Stopwatch. TRANSPORT sdto (ORecv: a new list per message) or
//     sdto-into (ORecvInto the list this rank last sent; rank 1's first receive is an ORecv).
//     Rank 0 prints "TRANSPORT,N,0,ITERS,µs per round trip" and, per round trip over the timed
//     loop, its minor ("gc0") and major ("gc1") collections: "TRANSPORT,N,0,ITERS,count,gc0".
using System;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.MP;
using System.Runtime.Serialization;
using System.Runtime.Serialization.Formatters.Binary;
using System.Threading;
using System.Xml;

[Serializable, DataContract]
public class LinkedArray
{
    [Transportable, DataMember]
    public int[] Buffer;
    [Transportable, DataMember]
    public LinkedArray Next;
}

[Serializable, DataContract]
public class SmallNode
{
    [DataMember]
    public int Value;
    [Transportable, DataMember]
    public SmallNode Next;
}

// The writer's identity map (issue 35): the same list, its nodes' Tag null (nothing shared: the
// writer's seen bits only) or the head (shared from the second object on: the map for every
// object) — "sdto-unshared-*" and "sdto-shared-*" rows of perobject.
public class TaggedNode
{
    public int Value;
    [Transportable]
    public TaggedNode Next;
    [Transportable]
    public TaggedNode Tag;
}

interface IGraphTransport
{
    byte[] Serialize(object graph);
    T Deserialize<T>(byte[] bytes);
}

sealed class BinaryFormatterTransport : IGraphTransport
{
    readonly BinaryFormatter f = new BinaryFormatter();
    public byte[] Serialize(object graph)
    {
        var m = new MemoryStream();
        f.Serialize(m, graph);
        return m.ToArray();
    }
    public T Deserialize<T>(byte[] bytes) => (T)f.Deserialize(new MemoryStream(bytes));
}

sealed class DataContractTransport : IGraphTransport
{
    public byte[] Serialize(object graph)
    {
        var m = new MemoryStream();
        // clang-format off
        using (var w = XmlDictionaryWriter.CreateBinaryWriter(m))
            new DataContractSerializer(graph.GetType()).WriteObject(w, graph);
        // clang-format on
        return m.ToArray();
    }

    public T Deserialize<T>(byte[] bytes)
    {
        // clang-format off
        using (var r = XmlDictionaryReader.CreateBinaryReader(bytes,
                                                              XmlDictionaryReaderQuotas.Max))
            return (T)new DataContractSerializer(typeof(T)).ReadObject(r);
        // clang-format on
    }
}

sealed class SdtoTransport : IGraphTransport   // for perobject: System.MP's Serializer
{
    public byte[] Serialize(object graph) => Serializer.Serialize(graph);
    public T Deserialize<T>(byte[] bytes) => Serializer.Deserialize<T>(bytes, 0, bytes.Length);
}

static class Sdto
{
    static IGraphTransport Transport(string name) =>
        name == "binaryformatter" ? new BinaryFormatterTransport()
        : name == "datacontract"  ? (IGraphTransport) new DataContractTransport()
        : name == "sdto" || name == "sdto-into"
            ? new SdtoTransport()
            : throw new ArgumentException("unknown transport " + name);

    // a list of n tagged nodes, Value = n - 1 at the head; every Tag the head when shared
    static TaggedNode Tagged(int n, bool shared)
    {
        TaggedNode head = null;
        for (int i = 0; i < n; i++)
            head = new TaggedNode { Value = i, Next = head };
        for (TaggedNode x = head; shared && x != null; x = x.Next)
            x.Tag = head;
        return head;
    }

    static LinkedArray Build(int n)
    {
        LinkedArray head = null;
        for (int i = 0; i < n; i++)
            head = new LinkedArray { Buffer = new int[4096 / n], Next = head };
        return head;
    }

    static void Send(Intracomm w, string name, IGraphTransport t, object graph, int peer)
    {
        if (name.StartsWith("sdto")) {
            w.OSend(graph, peer, 0);
            return;
        }
        w.Send(t.Serialize(graph), peer, 0);
    }

    static LinkedArray Receive(Intracomm w, string name, IGraphTransport t, int peer,
                               LinkedArray previous)
    {
        if (name == "sdto")
            return w.ORecv<LinkedArray>(peer, 0);
        if (name == "sdto-into")
            return w.ORecvInto(previous, peer, 0);
        var bytes = new byte[w.Probe(peer, 0).Count];
        w.Recv(bytes, peer, 0);
        return t.Deserialize<LinkedArray>(bytes);
    }

    // The program a user writes (issue 35), as plain as theirs: no barrier, no repetitions, one
    // Stopwatch around the timed round trips. The list is filled and checked outside the loops.
    static void UserLoop(Intracomm w, string name, int n, int warmup, int iters)
    {
        if (w.Size != 2)
            throw new ArgumentException("userloop runs on 2 ranks");
        bool into = name == "sdto-into";
        LinkedArray g = null;
        if (w.Rank == 0) {
            g = Build(n);
            for (LinkedArray x = g; x != null; x = x.Next)
                for (int j = 0; j < x.Buffer.Length; j++)
                    x.Buffer[j] = j;
        }
        for (int i = 0; i < warmup; i++)
            g = RoundTrip(w, g, into);
        int gc0 = GC.CollectionCount(0), gc1 = GC.CollectionCount(1);
        var sw = Stopwatch.StartNew();
        for (int i = 0; i < iters; i++)
            g = RoundTrip(w, g, into);
        sw.Stop();
        gc0 = GC.CollectionCount(0) - gc0;
        gc1 = GC.CollectionCount(1) - gc1;
        int nodes = 0;
        for (LinkedArray x = g; x != null; x = x.Next, nodes++) {
            if (x.Buffer.Length != 4096 / n)
                throw new Exception("an element arrived with the wrong length");
            for (int j = 0; j < x.Buffer.Length; j++)
                if (x.Buffer[j] != j)
                    throw new Exception("the ints arrived wrong");
        }
        if (nodes != n)
            throw new Exception($"the list arrived with {nodes} elements, not {n}");
        if (w.Rank != 0)
            return;
        double perTrip = 1.0 / Math.Max(1, iters);
        Console.WriteLine(
            $"{name},{n},0,{iters},{sw.Elapsed.TotalMilliseconds * 1e3 * perTrip:F6}");
        Console.WriteLine($"{name},{n},0,{iters},{gc0 * perTrip:F6},gc0");
        Console.WriteLine($"{name},{n},0,{iters},{gc1 * perTrip:F6},gc1");
    }

    // One round trip of the user's loop: rank 0 sends its list and receives it back, rank 1
    // receives it (into the list it last sent, once it has one, with ORecvInto) and sends it on.
    static LinkedArray RoundTrip(Intracomm w, LinkedArray g, bool into)
    {
        if (w.Rank == 0) {
            w.OSend(g, 1, 0);
            return into ? w.ORecvInto(g, 1, 0) : w.ORecv<LinkedArray>(1, 0);
        }
        g = into && g != null ? w.ORecvInto(g, 0, 0) : w.ORecv<LinkedArray>(0, 0);
        w.OSend(g, 0, 0);
        return g;
    }

    static int Main(string[] args)
    {
        Thread.CurrentThread.CurrentCulture = CultureInfo.InvariantCulture;
        Intracomm w = MP.World;
        string mode = args[0], name = args[1];
        IGraphTransport t = mode == "bandwidth" || mode == "allocfloor" ? null : Transport(name);
        if (mode == "bandwidth") {
            int elements = int.Parse(args[2]), reps = int.Parse(args[3]), peer = 1 - w.Rank,
                iters = 20;
            var list = new System.Collections.Generic.List<double>(elements);
            for (int i = 0; i < elements; i++)
                list.Add(i * 0.5);
            double[] array = list.ToArray();
            for (int rep = -1; rep < reps; rep++) {
                w.Barrier();
                long t0 = Stopwatch.GetTimestamp();
                for (int i = 0; i < iters && w.Rank < 2; i++) {
                    for (int turn = 0; turn < 2; turn++) {
                        if ((w.Rank == 0) == (turn == 0)) {
                            if (name == "list")
                                w.OSend(list, peer, 0);
                            else if (name == "array")
                                w.OSend(array, peer, 0);
                            else
                                w.Send(array, peer, 0);
                        } else {
                            if (name == "list")
                                list = w.ORecv<System.Collections.Generic.List<double>>(peer, 0);
                            else if (name == "array")
                                array = w.ORecv<double[]>(peer, 0);
                            else
                                w.Recv(array, peer, 0);
                        }
                    }
                }
                double us =
                    (Stopwatch.GetTimestamp() - t0) * 1e6 / Stopwatch.Frequency / (2.0 * iters);
                if (w.Rank == 0 && rep >= 0)
                    Console.WriteLine($"{name},{8L * elements},{rep},{iters},{us:F3}");
            }
            if ((name == "list" ? list[elements - 1] : array[elements - 1]) != (elements - 1) * 0.5)
                throw new Exception("the doubles arrived wrong");
        } else if (mode == "allocfloor") {
            int min = int.Parse(args[2]), max = int.Parse(args[3]), reps = int.Parse(args[4]);
            for (int n = min; n <= max; n *= 4) {
                int iters = Math.Max(5, 2000 / n);
                LinkedArray kept = null;
                for (int rep = -1; rep < reps; rep++) {
                    long t0 = Stopwatch.GetTimestamp();
                    for (int i = 0; i < iters; i++)
                        kept = Build(n);
                    double us = (Stopwatch.GetTimestamp() - t0) * 1e6 / Stopwatch.Frequency / iters;
                    if (rep >= 0)
                        Console.WriteLine($"{name},{n},{rep},{iters},{us:F6}");
                }
                if (kept.Buffer.Length != 4096 / n)
                    throw new Exception("the list was not built");
            }
        } else if (mode == "perobject") {
            int objects = int.Parse(args[2]), reps = int.Parse(args[3]);
            SmallNode head = null;
            for (int i = 0; i < objects; i++)
                head = new SmallNode { Value = i, Next = head };
            // small graphs: their fixed cost, above the clock's grain
            int iters = Math.Max(1, 20000 / objects);
            byte[] buffer = name == "sdto" ? new byte[Serializer.Measure(head)] : null;
            for (int rep = -1; rep < reps; rep++) {
                long serialize = 0, roundtrip = 0, bufferSerialize = 0, bufferRoundtrip = 0;
                for (int i = 0; i < iters; i++) {
                    long t0 = Stopwatch.GetTimestamp();
                    byte[] bytes = t.Serialize(head);
                    long t1 = Stopwatch.GetTimestamp();
                    var back = t.Deserialize<SmallNode>(bytes);
                    long t2 = Stopwatch.GetTimestamp();
                    if (back.Value != objects - 1)
                        throw new Exception("round trip lost data");
                    serialize += t1 - t0;
                    roundtrip += t2 - t0;
                }
                for (int i = 0; buffer != null && i < iters; i++) {
                    long t0 = Stopwatch.GetTimestamp();
                    int size = Serializer.Serialize(head, buffer, 0);
                    long t1 = Stopwatch.GetTimestamp();
                    var back = Serializer.Deserialize<SmallNode>(buffer, 0, size);
                    long t2 = Stopwatch.GetTimestamp();
                    if (back.Value != objects - 1)
                        throw new Exception("round trip lost data");
                    bufferSerialize += t1 - t0;
                    bufferRoundtrip += t2 - t0;
                }
                double perObject = 1e9 / Stopwatch.Frequency / objects / iters;
                if (rep >= 0) {
                    Console.WriteLine(
                        $"{name}-serialize,{objects},{rep},{iters},{serialize * perObject:F3}");
                    Console.WriteLine(
                        $"{name}-roundtrip,{objects},{rep},{iters},{roundtrip * perObject:F3}");
                }
                if (rep >= 0 && buffer != null) {
                    Console.WriteLine($"sdto-buffer-serialize,{objects},{rep},{iters}," +
                                      $"{bufferSerialize * perObject:F3}");
                    Console.WriteLine($"sdto-buffer-roundtrip,{objects},{rep},{iters}," +
                                      $"{bufferRoundtrip * perObject:F3}");
                }
                foreach (bool shared in buffer != null ? new[] { false, true } : new bool[0]) {
                    TaggedNode list = Tagged(objects, shared);
                    var bytes = new byte[Serializer.Measure(list)];
                    long ser = 0, trip = 0;
                    for (int i = 0; i < iters; i++) {
                        long t0 = Stopwatch.GetTimestamp();
                        int size = Serializer.Serialize(list, bytes, 0);
                        long t1 = Stopwatch.GetTimestamp();
                        var back = Serializer.Deserialize<TaggedNode>(bytes, 0, size);
                        long t2 = Stopwatch.GetTimestamp();
                        if (back.Value != objects - 1 ||
                            (shared && back.Next != null && back.Next.Tag != back.Tag))
                            throw new Exception("round trip lost data");
                        ser += t1 - t0;
                        trip += t2 - t0;
                    }
                    string row = shared ? "sdto-shared" : "sdto-unshared";
                    if (rep >= 0) {
                        Console.WriteLine(
                            $"{row}-serialize,{objects},{rep},{iters}," + $"{ser * perObject:F3}");
                        Console.WriteLine(
                            $"{row}-roundtrip,{objects},{rep},{iters}," + $"{trip * perObject:F3}");
                    }
                }
            }
        } else if (mode == "userloop") {
            UserLoop(w, name, int.Parse(args[2]), int.Parse(args[3]), int.Parse(args[4]));
        } else {
            int min = int.Parse(args[2]), max = int.Parse(args[3]), reps = int.Parse(args[4]);
            int peer = 1 - w.Rank;
            for (int n = min; n <= max; n *= 4) {
                LinkedArray graph = Build(n), mine = Build(n);
                int iters = Math.Max(5, 2000 / n);
                for (int rep = -1; rep < reps; rep++) {
                    w.Barrier();
                    long t0 = Stopwatch.GetTimestamp();
                    for (int i = 0; i < iters && w.Rank < 2; i++) {
                        if (w.Rank == 0) {
                            Send(w, name, t, graph, peer);
                            graph = Receive(w, name, t, peer, graph);
                        } else {
                            mine = Receive(w, name, t, peer, mine);
                            Send(w, name, t, mine, peer);
                        }
                    }
                    double us =
                        (Stopwatch.GetTimestamp() - t0) * 1e6 / Stopwatch.Frequency / (2.0 * iters);
                    if (w.Rank == 0 && rep >= 0)
                        Console.WriteLine($"{name},{n},{rep},{iters},{us:F6}");
                }
            }
        }
        Console.WriteLine($"peak,{name},{w.Rank},{BenchCommon.PeakRssKib()}");
        return 0;
    }
}

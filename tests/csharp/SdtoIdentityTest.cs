// SdtoIdentityTest — shared references and cycles keep their identity whatever the writer's
// identity map sees of them (serializer/sd_writer.c: a bit per address until an object is met
// twice, then the map). Graphs of many pages with no sharing (each object arrives once); sharing
// and cycles found at the first object, in the middle and at the last of 20,000; large arrays (on
// page boundaries, in the large-object space) shared and not; a graph written after another whose
// objects lay at the same addresses; the same graphs after collections have moved and promoted
// them; and over MPI to the next rank. Each received graph is checked object by object against
// the one sent: same shape, values, and the same objects shared (no more, no fewer).
using System;
using System.Collections.Generic;
using System.MP;
using System.Runtime.CompilerServices;

class Node
{
    public int Value;
    [Transportable]
    public Node Next;
    [Transportable]
    public object Extra;
}

static class SdtoIdentityTest
{
    // a list of n nodes, Value = i
    static Node List(int n)
    {
        Node head = null;
        for (int i = n - 1; i >= 0; i--)
            head = new Node { Value = i, Next = head };
        return head;
    }

    static Node At(Node head, int k)
    {
        for (; k > 0; k--)
            head = head.Next;
        return head;
    }

    sealed class ByReference : IEqualityComparer<object>
    {
        public new bool Equals(object a, object b) => ReferenceEquals(a, b);
        public int GetHashCode(object o) => RuntimeHelpers.GetHashCode(o);
    }

    // The graph's objects in the writer's order (breadth first, Next before Extra), each once.
    static List<object> Objects(object root)
    {
        var seen = new HashSet<object>(new ByReference());
        var order = new List<object>();
        var queue = new Queue<object>();
        if (root != null && seen.Add(root))
            queue.Enqueue(root);
        while (queue.Count > 0) {
            object o = queue.Dequeue();
            order.Add(o);
            var n = o as Node;
            if (n == null)
                continue;
            foreach (object r in new object[] { n.Next, n.Extra })
                if (r != null && seen.Add(r))
                    queue.Enqueue(r);
        }
        return order;
    }

    static Dictionary<object, int> Index(List<object> objects)
    {
        var index = new Dictionary<object, int>(new ByReference());
        for (int i = 0; i < objects.Count; i++)
            index[objects[i]] = i;
        return index;
    }

    // Same shape, values and sharing: the two graphs' objects pair one to one.
    static void SameGraph(object sent, object got, string what)
    {
        List<object> a = Objects(sent), b = Objects(got);
        Check.Equal(a.Count, b.Count, what + ": as many distinct objects as sent");
        if (a.Count != b.Count)
            return;
        Dictionary<object, int> index = Index(b), sentIndex = Index(a);
        int bad = 0;
        for (int i = 0; i < a.Count && bad == 0; i++) {
            object x = a[i], y = b[i];
            if (x.GetType() != y.GetType()) {
                bad++;
                continue;
            }
            var n = x as Node;
            if (n != null) {
                var m = (Node)y;
                if (n.Value != m.Value || (n.Next == null) != (m.Next == null) ||
                    (n.Extra == null) != (m.Extra == null) ||
                    (n.Next != null && index[m.Next] != sentIndex[n.Next]) ||
                    (n.Extra != null && index[m.Extra] != sentIndex[n.Extra]))
                    bad++;
            } else if (x is int[]) {
                int[] p = (int[])x, q = (int[])y;
                if (p.Length != q.Length || p[0] != q[0] || p[p.Length - 1] != q[q.Length - 1])
                    bad++;
            }
        }
        Check.Equal(0, bad, what + ": every object as sent, shared where it was");
    }

    static void Both(Node g, string what) { SameGraph(g, Graphs.RoundTrip(g), what); }

    static void Graphs_()
    {
        Both(List(20000), "a list of 20,000 nodes, nothing shared");
        Node cycleFirst = List(20000);
        At(cycleFirst, 19999).Next = cycleFirst;
        Both(cycleFirst, "a cycle back to the first node");
        Node cycleMid = List(20000);
        At(cycleMid, 19999).Next = At(cycleMid, 7000);
        Both(cycleMid, "a cycle back to node 7,000");
        Node lastShared = List(20000);
        At(lastShared, 19999).Extra = At(lastShared, 19998);
        Both(lastShared, "the last node shares the one before it");
        Node self = List(3);
        self.Next.Extra = self.Next;
        Both(self, "a node pointing to itself");
        Node everyOne = List(5000);
        var shared = new int[] { 42, 43 };
        for (Node n = everyOne; n != null; n = n.Next)
            n.Extra = shared;
        Both(everyOne, "5,000 nodes sharing one array");

        // large arrays (over 8,000 bytes: the large-object space, page aligned)
        Node large = List(64);
        var arrays = new int [8][];
        for (int k = 0; k < arrays.Length; k++) {
            arrays[k] = new int[5000];
            arrays[k][0] = k;
            arrays[k][4999] = -k;
        }
        int i = 0;
        for (Node n = large; n != null; n = n.Next, i++)
            n.Extra = arrays[i % arrays.Length];
        Both(large, "64 nodes sharing 8 large arrays");
        Node distinct = List(64);
        i = 0;
        for (Node n = distinct; n != null; n = n.Next, i++) {
            var a = new int[5000];
            a[0] = i;
            a[4999] = -i;
            n.Extra = a;
        }
        Both(distinct, "64 nodes with a large array each, none shared");

        // a write after another whose objects were at the same addresses: the first graph is
        // dropped and collected, the second allocated where it lay
        for (int round = 0; round < 3; round++) {
            Node first = List(3000);
            Serializer.Measure(first);
            first = null;
            GC.Collect();
            Node second = List(3000);
            At(second, 2999).Extra = At(second, 1500);
            Both(second, "a graph at the addresses of one written before, round " + round);
            Both(List(3000), "and one without sharing there, round " + round);
        }

        // moved and promoted: the same graphs written again after collections
        GC.Collect();
        Both(cycleMid, "the cycle after a full collection");
        Both(everyOne, "the shared array after a full collection");
        Both(large, "the large arrays after a full collection");
    }

    static void Transport()
    {
        if (Ring.Size < 2)
            return;
        Node g = List(10000);
        At(g, 9999).Next = At(g, 4321);
        for (Node n = g; n.Value < 9999; n = n.Next)
            if (n.Value % 100 == 0)
                n.Extra = At(g, n.Value / 2);
        Node got = null;
        Ring.Exchange(() => MP.World.OSend(g, Ring.Next, 3),
                      () =>
                      {
                          got = MP.World.ORecv<Node>(Ring.Prev, 3);
                          return null;
                      });
        SameGraph(g, got, "over MPI: a list with a late cycle and shared nodes");
    }

    static int Main()
    {
        Graphs_();
        Transport();
        return Check.Finish("SdtoIdentityTest");
    }
}

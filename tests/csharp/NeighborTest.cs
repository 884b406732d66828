// NeighborTest — graph topologies and the neighbourhood collectives (API.md, version 3):
// CartComm's and DistGraphComm's Sources/Destinations (MPI's order, ProcNull at open edges);
// NeighborAllgather, NeighborAlltoall, NeighborAlltoallv, blocking and I-prefixed, each against the
// same exchange written by hand with Sendrecv (grids: per dimension, the block sent toward -1
// arrives in the -1 neighbour's +1 block, MPI-4.0's pairing, also along periodic dimensions of one
// and two processes) or Isend/Irecv (graphs: the k-th edge between two processes carries the k-th
// block), on 1-D and 2-D grids, periodic or not, a ring, an irregular graph with repeated and self
// edges, and ranks with no neighbours; non-blocking forms with young arrays while collections
// happen; the region forms (a halo of a double[,] with ghost cells in one call, equal to the
// exchange by packed rows and columns; an array per neighbour; interleaved strided regions); every
// documented exception, after which the communicator still works.
// Runs at any rank count; every expected value is computed from the rank count.
using System;
using System.Collections.Generic;
using System.Linq;
using System.MP;
using System.Runtime.CompilerServices;

static class NeighborTest
{
    const int ProcNull = MP.ProcNull;
    static readonly Intracomm world = MP.World;
    static readonly int rank = world.Rank, size = world.Size;
    static int round;   // a fresh salt per exchange, the same on every rank

    /// <summary>A topology communicator and its collectives, whichever class it is.</summary>
    sealed class Topo
    {
        public string Name;
        public Intracomm Comm;
        public ITopology T;
        public bool Cart;
        public Action<Array, Array> Allgather, Alltoall;
        public Func<Array, Array, Request> IAllgather, IAlltoall;
        public Action<Array, int[], int[], Array, int[], int[]> Alltoallv;
        public Func<Array, int[], int[], Array, int[], int[], Request> IAlltoallv;
        public Action<Array[], Region[], Array[], Region[]> RegionAlltoall;
        public Func<Array[], Region[], Array[], Region[], Request> IRegionAlltoall;
        public Action<Array, Region[], Array, Region[]> RegionAlltoallv;
        public Func<Array, Region[], Array, Region[], Request> IRegionAlltoallv;
        public Action<Array, Region, Array, Region[]> RegionAllgather;
        public Func<Array, Region, Array, Region[], Request> IRegionAllgather;

        public static Topo Of(CartComm c, string name) => new Topo {
            Name = name,
            Comm = c,
            T = c,
            Cart = true,
            Allgather = c.NeighborAllgather,
            Alltoall = c.NeighborAlltoall,
            IAllgather = c.INeighborAllgather,
            IAlltoall = c.INeighborAlltoall,
            Alltoallv = c.NeighborAlltoallv,
            IAlltoallv = c.INeighborAlltoallv,
            RegionAlltoall = c.NeighborAlltoall,
            IRegionAlltoall = c.INeighborAlltoall,
            RegionAlltoallv = c.NeighborAlltoallv,
            IRegionAlltoallv = c.INeighborAlltoallv,
            RegionAllgather = c.NeighborAllgather,
            IRegionAllgather = c.INeighborAllgather
        };

        public static Topo Of(DistGraphComm c, string name) => new Topo {
            Name = name,
            Comm = c,
            T = c,
            Cart = false,
            Allgather = c.NeighborAllgather,
            Alltoall = c.NeighborAlltoall,
            IAllgather = c.INeighborAllgather,
            IAlltoall = c.INeighborAlltoall,
            Alltoallv = c.NeighborAlltoallv,
            IAlltoallv = c.INeighborAlltoallv,
            RegionAlltoall = c.NeighborAlltoall,
            IRegionAlltoall = c.INeighborAlltoall,
            RegionAlltoallv = c.NeighborAlltoallv,
            IRegionAlltoallv = c.INeighborAlltoallv,
            RegionAllgather = c.NeighborAllgather,
            IRegionAllgather = c.INeighborAllgather
        };
    }

    // ---- the exchange by hand ----

    /// <summary>Block k of send (sd[k], sc[k]) to Destinations[k]; block j of recv (rd[j], rc[j])
    /// from Sources[j]. A grid: per dimension two Sendrecv, the block toward -1 into the -1
    /// neighbour's +1 block and back (MPI-4.0's pairing); a graph: Isend/Irecv, the k-th edge
    /// between two processes tagged k on both ends.</summary>
    static void ByHand(Topo t, Array send, int[] sc, int[] sd, Array recv, int[] rc, int[] rd)
    {
        int[] src = t.T.Sources, dst = t.T.Destinations;
        if (t.Cart) {
            for (int d = 0; d < src.Length / 2; d++) {
                t.Comm.Sendrecv(send, sd[2 * d], sc[2 * d], dst[2 * d], 500 + d, recv,
                                rd[2 * d + 1], rc[2 * d + 1], src[2 * d + 1], 500 + d);
                t.Comm.Sendrecv(send, sd[2 * d + 1], sc[2 * d + 1], dst[2 * d + 1], 600 + d, recv,
                                rd[2 * d], rc[2 * d], src[2 * d], 600 + d);
            }
            return;
        }
        var requests = new List<Request>();
        for (int j = 0; j < src.Length; j++)
            requests.Add(t.Comm.Irecv(recv, rd[j], rc[j], src[j],
                                      700 + src.Take(j).Count(s => s == src[j])));
        for (int k = 0; k < dst.Length; k++)
            requests.Add(t.Comm.Isend(send, sd[k], sc[k], dst[k],
                                      700 + dst.Take(k).Count(s => s == dst[k])));
        foreach (Request r in requests)
            r.Wait();
    }

    static int V(int from, int k, int i, int salt) => from * 1000000 + k * 10000 + i * 7 + salt;

    static int[] Filled(int n, Func<int, int> f)
    {
        var a = new int[n];
        for (int i = 0; i < n; i++)
            a[i] = f(i);
        return a;
    }

    static bool Same(int[] a, int[] b) => a.Length == b.Length && a.SequenceEqual(b);

    /// <summary>The elements per block of the edge from s to r (v-collectives): 1..3, known at
    /// both ends; any for ProcNull (nothing arrives).</summary>
    static int EdgeCount(int s, int r) => s == ProcNull || r == ProcNull ? 2 : 1 + (s + 2 * r) % 3;

    // ---- the collectives on arrays, against the exchange by hand ----

    static void ArrayForms(Topo t)
    {
        int[] src = t.T.Sources, dst = t.T.Destinations;
        int nin = src.Length, nout = dst.Length, salt = ++round;
        string at = t.Name + ": ";

        // NeighborAllgather: the whole send array to everyone
        for (int blocking = 0; blocking < 2; blocking++) {
            const int n = 5;
            int[] send = Filled(n, i => V(rank, 0, i, salt));
            int[] got = Filled(n * nin, i => -1), want = Filled(n * nin, i => -1);
            if (blocking == 1)
                t.Allgather(send, got);
            else {
                Status st = t.IAllgather(send, got).Wait();
                Check.Equal(n * nin, st.Count, at + "INeighborAllgather Status.Count");
                Check.Equal(4L * n * nin, st.Bytes, at + "INeighborAllgather Status.Bytes");
            }
            ByHand(t, send, Filled(nout, k => n), new int[nout], want, Filled(nin, j => n),
                   Filled(nin, j => j * n));
            Check.True(Same(want, got), at + (blocking == 1 ? "" : "I") + "NeighborAllgather");
            for (int j = 0; j < nin; j++)
                if (src[j] != ProcNull)
                    Check.Equal(V(src[j], 0, 0, salt), got[j * n],
                                at + $"NeighborAllgather block {j} from Sources[{j}]");
        }

        // NeighborAlltoall: equal blocks
        for (int blocking = 0; blocking < 2; blocking++) {
            const int b = 3;
            int[] send = Filled(b * nout, i => V(rank, i / b, i % b, salt));
            int[] got = Filled(b * nin, i => -1), want = Filled(b * nin, i => -1);
            if (blocking == 1)
                t.Alltoall(send, got);
            else
                t.IAlltoall(send, got).Wait();
            ByHand(t, send, Filled(nout, k => b), Filled(nout, k => k * b), want,
                   Filled(nin, j => b), Filled(nin, j => j * b));
            Check.True(Same(want, got), at + (blocking == 1 ? "" : "I") + "NeighborAlltoall");
            if (t.Cart)   // MPI-4.0: block j from Sources[j] is the one it sent toward this rank
                for (int j = 0; j < nin; j++)
                    if (src[j] != ProcNull)
                        Check.Equal(V(src[j], j ^ 1, 0, salt), got[j * b],
                                    at + $"NeighborAlltoall: block {j} is Sources[{j}]'s block " +
                                        $"{j ^ 1}");
        }

        // NeighborAlltoallv: a count per edge, blocks with gaps between them (left untouched)
        for (int blocking = 0; blocking < 2; blocking++) {
            int[] sc = Filled(nout, k => EdgeCount(rank, dst[k]));
            int[] sd = new int[nout], rc = Filled(nin, j => EdgeCount(src[j], rank)),
                  rd = new int[nin];
            for (int k = 1; k < nout; k++)
                sd[k] = sd[k - 1] + sc[k - 1] + 1;
            for (int j = 1; j < nin; j++)
                rd[j] = rd[j - 1] + rc[j - 1] + 2;
            int slen = nout == 0 ? 0 : sd[nout - 1] + sc[nout - 1],
                rlen = nin == 0 ? 0 : rd[nin - 1] + rc[nin - 1] + 1;
            int[] send = Filled(slen, i => V(rank, 0, i, salt));
            int[] got = Filled(rlen, i => -1), want = Filled(rlen, i => -1);
            if (blocking == 1)
                t.Alltoallv(send, sc, sd, got, rc, rd);
            else
                t.IAlltoallv(send, sc, sd, got, rc, rd).Wait();
            ByHand(t, send, sc, sd, want, rc, rd);
            Check.True(Same(want, got), at + (blocking == 1 ? "" : "I") + "NeighborAlltoallv");
        }
    }

    // ---- the topologies ----

    sealed class Shape
    {
        public int[] Dims;
        public bool[] Periods;
    }

    static IEnumerable<Shape> CartShapes()
    {
        int[] two = MP.DimsCreate(size, new int[2]);
        yield return new Shape { Dims = new[] { size }, Periods = new[] { true } };
        yield return new Shape { Dims = new[] { size }, Periods = new[] { false } };
        yield return new Shape { Dims = two, Periods = new[] { true, true } };
        yield return new Shape { Dims = two, Periods = new[] { false, false } };
        yield return new Shape { Dims = two, Periods = new[] { true, false } };
        // periodic dimensions of one process (both neighbours: this one) beside others
        yield return new Shape { Dims = new[] { 1, size }, Periods = new[] { true, true } };
        yield return new Shape { Dims = new[] { size, 1 }, Periods = new[] { false, true } };
        yield return new Shape { Dims = new[] { 1, 1, size },
                                 Periods = new[] { true, true, true } };
    }

    static string Describe(Shape s) =>
        "grid {" + string.Join("x", s.Dims) +
        "} periods {" + string.Join(",", s.Periods.Select(p => p ? "T" : "F")) + "}";

    static void Grids()
    {
        foreach (Shape s in CartShapes()) {
            using (CartComm c = world.CreateCart(s.Dims, s.Periods, false))
            {
                string name = Describe(s);
                int[] src = c.Sources, dst = c.Destinations;
                Check.Equal(2 * s.Dims.Length, src.Length, name + ": two sources per dimension");
                bool listed = Same(src, dst);
                for (int d = 0; d < s.Dims.Length; d++) {
                    c.Shift(d, 1, out int minus, out int plus);
                    listed &= src[2 * d] == minus && src[2 * d + 1] == plus;
                }
                Check.True(listed, name + ": Sources = Destinations = Shift(d, 1) per dimension");
                if (s.Dims.Length == 1 && !s.Periods[0]) {
                    Check.Equal(rank == 0 ? ProcNull : rank - 1, src[0], name + ": -1 edge");
                    Check.Equal(rank == size - 1 ? ProcNull : rank + 1, src[1], name + ": +1 edge");
                }
                src[0] = -99;   // a copy
                Check.True(c.Sources[0] != -99, name + ": Sources is a new array each read");
                ArrayForms(Topo.Of(c, name));
            }
        }
    }

    /// <summary>The irregular graph: ranks 0..m-1 (m = Size-1 when Size > 1: the last rank has
    /// no neighbour) each send to (r+1)%m twice, to itself, and to (r+2)%m; sources listed from
    /// the highest sender down.</summary>
    static int[] IrregularDestinations(int r)
    {
        int m = size > 1 ? size - 1 : 1;
        if (r >= m)
            return new int[0];
        return new[] { (r + 1) % m, r, (r + 1) % m, (r + 2) % m };
    }

    static int[] IrregularSources(int r)
    {
        var from = new List<int>();
        for (int s = size - 1; s >= 0; s--)
            foreach (int d in IrregularDestinations(s))
                if (d == r)
                    from.Add(s);
        return from.ToArray();
    }

    static void Graphs()
    {
        int left = (rank + size - 1) % size, right = (rank + 1) % size;
        using (DistGraphComm ring =
                   world.CreateDistGraphAdjacent(new[] { left }, new[] { right }, false))
        {
            Check.True(Same(new[] { left }, ring.Sources) &&
                           Same(new[] { right }, ring.Destinations),
                       "ring: Sources and Destinations as given");
            Check.Equal(rank, ring.Rank, "reorder false keeps the rank");
            ArrayForms(Topo.Of(ring, "ring"));
            var got = new double[1];
            ring.NeighborAllgather(new[] { rank + 0.5 }, got);
            Check.Equal(left + 0.5, got[0], "ring: NeighborAllgather brings the left rank's");
        }
        using (DistGraphComm ring = world.CreateDistGraphAdjacent(new[] { left, right },
                                                                  new[] { right, left }, true))
        {
            Check.Equal(size, ring.Size, "reorder true: every rank is in it");
            ArrayForms(Topo.Of(ring, "ring, reordered"));
        }
        int[] from = IrregularSources(rank), to = IrregularDestinations(rank);
        using (DistGraphComm g = world.CreateDistGraphAdjacent(from, to, false))
        {
            Check.True(Same(from, g.Sources) && Same(to, g.Destinations),
                       "irregular graph: Sources and Destinations as given");
            ArrayForms(Topo.Of(g, "irregular graph"));
        }
        using (DistGraphComm none = world.CreateDistGraphAdjacent(new int[0], new int[0], false))
        {
            Check.Equal(0, none.Sources.Length + none.Destinations.Length, "no neighbours");
            ArrayForms(Topo.Of(none, "graph with no edges"));
            none.NeighborAlltoall(new long[0], new long[0]);
            Check.Equal(0, none.INeighborAllgather(new long[0], new long[0]).Wait().Count,
                        "no neighbours: nothing received");
        }
    }

    // ---- refusals ----

    static void GraphRefusals()
    {
        int left = (rank + size - 1) % size, right = (rank + 1) % size;
        // every rank refuses alike
        Check.Refused<ArgumentNullException>(
            () => world.CreateDistGraphAdjacent(null, new[] { right }, false), "sources",
            "CreateDistGraphAdjacent(null sources)");
        Check.Refused<ArgumentNullException>(
            () => world.CreateDistGraphAdjacent(new[] { left }, null, false), "destinations",
            "CreateDistGraphAdjacent(null destinations)");
        Check.Refused<ArgumentOutOfRangeException>(
            () => world.CreateDistGraphAdjacent(new[] { left }, new[] { size }, false),
            "destinations", "CreateDistGraphAdjacent: a destination past the last rank");
        Check.Refused<ArgumentOutOfRangeException>(
            () => world.CreateDistGraphAdjacent(new[] { -1 }, new[] { right }, false), "sources",
            "CreateDistGraphAdjacent: a negative source");
        Check.Refused<ArgumentOutOfRangeException>(
            () => world.CreateDistGraphAdjacent(new[] { ProcNull }, new[] { ProcNull }, false),
            "sources", "CreateDistGraphAdjacent: MP.ProcNull is no neighbour");
        Check.StillUsable(world, "graph arguments refused on every rank");
        // one rank refuses: it names its argument, every other one says another rank refused
        if (rank == 0)
            Check.Refused<ArgumentOutOfRangeException>(
                () => world.CreateDistGraphAdjacent(new[] { left }, new[] { size + 3 }, false),
                "destinations", "CreateDistGraphAdjacent refused here, on rank 0");
        else
            Check.Throws<ArgumentException>(
                () => world.CreateDistGraphAdjacent(new[] { left }, new[] { right }, false),
                "CreateDistGraphAdjacent refused on rank 0: every rank raises");
        Check.StillUsable(world, "a graph refused on rank 0 only");
        // edges named at one end only: every rank finds it (each lists a source that does not
        // list it as a destination)
        Check.Refused<ArgumentException>(
            () => world.CreateDistGraphAdjacent(new[] { left }, new int[0], false), "sources",
            "CreateDistGraphAdjacent: edges named at one end only");
        // the other way round: destinations nobody lists as a source
        Check.Throws<ArgumentException>(
            () => world.CreateDistGraphAdjacent(new int[0], new[] { right }, false),
            "CreateDistGraphAdjacent: destinations nobody receives from");
        Check.StillUsable(world, "inconsistent graphs refused");
        using (DistGraphComm ok =
                   world.CreateDistGraphAdjacent(new[] { left }, new[] { right }, false))
        {
            Check.Equal(1, ok.Sources.Length, "a graph is made after the refusals");
            // a block larger than its receive block: MPException on the receiver (here every
            // rank), nothing written outside the block
            var three = new[] { 1, 2, 3 };
            for (int blocking = 0; blocking < 2; blocking++) {
                var four = new[] { -1, -1, -1, -1 };
                Exception e = Run(blocking == 1 ? 0 : 1,
                                  () => ok.NeighborAlltoallv(three, new[] { 3 }, new[] { 0 }, four,
                                                             new[] { 2 }, new[] { 1 }),
                                  () => ok.INeighborAlltoallv(three, new[] { 3 }, new[] { 0 }, four,
                                                              new[] { 2 }, new[] { 1 }));
                string what = (blocking == 1 ? "" : "I") + "NeighborAlltoallv of a block longer " +
                              "than its receive block";
                Check.True(e is MPException && e.Message.Contains("sent more"),
                           what + ": MPException, got " + e?.Message);
                Check.True(four[0] == -1 && four[3] == -1, what + ": nothing written outside it");
            }
            Check.StillUsable(ok, "a truncated neighbourhood collective");
            var got = new int[1];
            ok.NeighborAllgather(new[] { rank }, got);
            Check.Equal(left, got[0], "the graph works after the truncations");
        }
    }

    static void ArrayRefusals(Topo t)
    {
        string at = t.Name + ": ";
        int nin = t.T.Sources.Length, nout = t.T.Destinations.Length;
        var send = new int[2 * nout];
        var recv = new int[2 * nin];
        Check.Refused<ArgumentNullException>(() => t.Alltoall(null, recv), "sendArray",
                                             at + "NeighborAlltoall(null, ..)");
        Check.Refused<ArgumentNullException>(() => t.Allgather(send, null), "recvArray",
                                             at + "NeighborAllgather(.., null)");
        Check.Refused<ArgumentException>(() => t.Alltoall(send, new long[2 * nin]), "recvArray",
                                         at + "NeighborAlltoall with different element types");
        Check.Refused<ArgumentException>(() => t.Alltoall(send, new int[2 * nin + 1]), "recvArray",
                                         at + "NeighborAlltoall: recvArray not indegree blocks");
        Check.Refused<ArgumentException>(() => t.Alltoall(send, send), "recvArray",
                                         at + "NeighborAlltoall with one array twice");
        Check.Refused<ArgumentException>(() => t.Allgather(new int[3], new int[3 * nin + 1]),
                                         "recvArray",
                                         at + "NeighborAllgather: wrong recvArray length");
        Check.Refused<ArgumentException>(() => t.Alltoall(new string[nout], new string[nin]),
                                         "sendArray", at + "NeighborAlltoall of strings");
        int[] ones = Filled(nout, k => 1), offs = Filled(nout, k => k);
        int[] rones = Filled(nin, j => 1), roffs = Filled(nin, j => j);
        Check.Refused<ArgumentNullException>(
            () => t.Alltoallv(send, null, offs, recv, rones, roffs), "sendCounts",
            at + "NeighborAlltoallv: null sendCounts");
        Check.Refused<ArgumentException>(
            () => t.Alltoallv(send, new int[nout + 1], offs, recv, rones, roffs), "sendCounts",
            at + "NeighborAlltoallv: sendCounts not one per destination");
        Check.Refused<ArgumentException>(
            () => t.Alltoallv(send, ones, offs, recv, rones, new int[nin + 2]), "recvDispls",
            at + "NeighborAlltoallv: recvDispls not one per source");
        if (nout > 0) {
            Check.Refused<ArgumentOutOfRangeException>(
                () => t.Alltoallv(send, Filled(nout, k => -1), offs, recv, rones, roffs),
                "sendCounts", at + "NeighborAlltoallv: a negative count");
            Check.Refused<ArgumentOutOfRangeException>(
                () => t.Alltoallv(send, Filled(nout, k => 3 * nout), offs, recv, rones, roffs),
                "sendCounts", at + "NeighborAlltoallv: a block past the end");
            Check.Refused<ArgumentOutOfRangeException>(
                () => t.Alltoallv(send, ones, Filled(nout, k => -2), recv, rones, roffs),
                "sendDispls", at + "NeighborAlltoallv: a negative displacement");
        }
        if (nin > 1)
            Check.Refused<ArgumentException>(
                () => t.Alltoallv(send, ones, offs, recv, Filled(nin, j => 2), roffs), "recvDispls",
                at + "NeighborAlltoallv: receive blocks overlap");
        Check.Refused<ArgumentException>(() => t.IAlltoall(send, new double[2 * nin]), "recvArray",
                                         at + "INeighborAlltoall: the same checks");
        Check.Refused<ArgumentNullException>(() =>
                                                 t.IAlltoallv(send, ones, offs, null, rones, roffs),
                                             "recvArray", at + "INeighborAlltoallv(.., null, ..)");
        // the region forms' lists, before any region is looked at
        Region one = Region.Strided(0, 1, 1);
        Region[] outRegions = Enumerable.Repeat(one, nout).ToArray(),
                 inRegions = Enumerable.Repeat(one, nin).ToArray();
        Check.Refused<ArgumentNullException>(
            () => t.RegionAlltoall(null, outRegions, new Array[nin], inRegions), "sendArrays",
            at + "region NeighborAlltoall: null sendArrays");
        Check.Refused<ArgumentNullException>(
            () => t.RegionAlltoall(new Array[nout], null, new Array[nin], inRegions), "sendRegions",
            at + "region NeighborAlltoall: null sendRegions");
        Check.Refused<ArgumentNullException>(() => t.RegionAlltoallv(send, outRegions, recv, null),
                                             "recvRegions",
                                             at + "region NeighborAlltoallv: null recvRegions");
        Check.Refused<ArgumentNullException>(() => t.RegionAllgather(null, one, recv, inRegions),
                                             "sendArray",
                                             at + "region NeighborAllgather: null sendArray");
        Check.Refused<ArgumentException>(
            () => t.RegionAlltoallv(send, new Region[nout + 1], recv, new Region[nin]),
            "sendRegions", at + "region NeighborAlltoallv: default(Region) or a wrong length");
        Check.Refused<ArgumentException>(
            () => t.RegionAllgather(send, default(Region), recv, new Region[nin]), "sendRegion",
            at + "region NeighborAllgather: default(Region)");
        {
            Region r = Region.Strided(0, 1, 1);
            Check.Refused<ArgumentException>(
                () => t.RegionAlltoallv(send, Enumerable.Repeat(r, nout + 1).ToArray(), recv,
                                        Enumerable.Repeat(r, nin).ToArray()),
                "sendRegions", at + "region NeighborAlltoallv: one region too many");
            Check.Refused<ArgumentException>(
                () => t.RegionAlltoall(Enumerable.Repeat((Array)send, nout).ToArray(),
                                       Enumerable.Repeat(r, nout).ToArray(),
                                       Enumerable.Repeat((Array)recv, nin + 1).ToArray(),
                                       Enumerable.Repeat(r, nin + 1).ToArray()),
                "recvRegions", at + "region NeighborAlltoall: one receive region too many");
            Check.Refused<ArgumentException>(
                () => t.RegionAlltoall(Enumerable.Repeat((Array)send, nout + 1).ToArray(),
                                       Enumerable.Repeat(r, nout).ToArray(),
                                       Enumerable.Repeat((Array)recv, nin).ToArray(),
                                       Enumerable.Repeat(r, nin).ToArray()),
                "sendArrays", at + "region NeighborAlltoall: one send array too many");
            if (nin > 0)
                Check.Refused<ArgumentNullException>(
                    () => t.RegionAlltoall(Enumerable.Repeat((Array)send, nout).ToArray(),
                                           Enumerable.Repeat(r, nout).ToArray(), new Array[nin],
                                           Enumerable.Repeat(r, nin).ToArray()),
                    "recvArrays", at + "region NeighborAlltoall: a null receive array");
        }
        Check.StillUsable(t.Comm, at + "refused neighbourhood collectives");
        Request q = t.IAlltoall(Filled(2 * nout, k => k), new int[2 * nin]);
        Check.Throws<NotSupportedException>(() => q.Cancel(), at + "Cancel of INeighborAlltoall");
        q.Wait();
        ArrayForms(t);   // and the collectives still work
    }

    static void Refusals()
    {
        GraphRefusals();
        using (CartComm c = world.CreateCart(new[] { size }, new[] { true }, false))
            ArrayRefusals(Topo.Of(c, "periodic ring"));
        using (DistGraphComm g = world.CreateDistGraphAdjacent(IrregularSources(rank),
                                                               IrregularDestinations(rank), false))
            ArrayRefusals(Topo.Of(g, "irregular graph"));
        CartComm gone = world.CreateCart(new[] { size }, new[] { false }, false);
        gone.Dispose();
        Check.Throws<ObjectDisposedException>(() => gone.NeighborAllgather(new int[1], new int[2]),
                                              "a disposed grid refuses NeighborAllgather");
        DistGraphComm goneGraph = world.CreateDistGraphAdjacent(new int[0], new int[0], false);
        goneGraph.Dispose();
        Check.Throws<ObjectDisposedException>(
            () => goneGraph.INeighborAlltoall(new int[0], new int[0]),
            "a disposed graph refuses INeighborAlltoall");
        Check.Throws<ObjectDisposedException>(
            () => gone.CreateDistGraphAdjacent(new int[0], new int[0], false),
            "a disposed communicator refuses CreateDistGraphAdjacent");
    }

    // ---- blocks of the wrong size: MPException on the rank they arrive at ----

    /// <summary>Runs one form blocking (way 0) or starts it and completes it by Wait, Test or
    /// await (ways 1-3); returns what it raised.</summary>
    static Exception Run(int way, Action blocking, Func<Request> start)
    {
        try {
            if (way == 0) {
                blocking();
                return null;
            }
            Request r = start();
            if (way == 1) {
                r.Wait();
            } else if (way == 2) {
                Status st;
                while (!r.Test(out st)) { }
            } else {
                r.AsTask().GetAwaiter().GetResult();
            }
        } catch (Exception e) {
            return e;
        }
        return null;
    }

    static readonly string[] Ways = { "blocking", "Wait", "Test", "await" };

    /// <summary>The value element i of the block rank s sends.</summary>
    static int M(int s, int i) => 1000 * (s + 1) + i;

    /// <summary>Checks what one call did on this rank. got[j] is block j's array (a segment of
    /// it from at[j], n elements expected); every element of the arrays outside the blocks is -7
    /// (a sentinel, checked); len[j] the number of elements Sources[j] sent (-1: MP.ProcNull).
    /// The receiver of a block of another size raises MPException naming the first such source
    /// and the element type; good blocks arrive whole.</summary>
    static void Verdict(Exception e, string what, int n, int[] src, Func<int, int[]> got,
                        Func<int, int> at, Func<int, int> len, IEnumerable<int[]> arrays,
                        Func<int[], int, bool> inBlock)
    {
        int bad = -1;
        for (int j = 0; j < src.Length && bad < 0; j++)
            if (src[j] != ProcNull && len(j) != n)
                bad = j;
        if (bad >= 0) {
            string who = $"Sources[{bad}] (rank {src[bad]})",
                   sent = len(bad) > n ? "sent more" : $"sent {len(bad)}";
            Check.True(e is MPException && e.Message.Contains(who) &&
                           e.Message.Contains("System.Int32") && e.Message.Contains(sent),
                       $"{what}: MPException naming {who}, Int32 and '{sent}', got " +
                           $"{e?.GetType().Name}: {e?.Message}");
        } else {
            Check.True(e == null, $"{what}: no exception on this rank, got {e?.Message}");
        }
        bool outside = true, good = true;
        foreach (int[] a in arrays)
            for (int i = 0; i < a.Length; i++)
                outside &= inBlock(a, i) || a[i] == -7;
        for (int j = 0; j < src.Length; j++)
            if (src[j] != ProcNull && len(j) == n)
                for (int i = 0; i < n; i++)
                    good &= got(j) [at(j) + i] == M(src[j], i);
        Check.True(outside, what + ": nothing written outside the receive blocks");
        Check.True(good, what + ": the blocks of the right size arrived whole");
    }

    /// <summary>A correct exchange right after a disagreement: the communicator still
    /// works.</summary>
    static void StillExchanges(Topo t, string after)
    {
        Check.StillUsable(t.Comm, after);
        int[] src = t.T.Sources, dst = t.T.Destinations;
        var got = Filled(2 * src.Length, i => -1);
        t.Alltoallv(Filled(2 * dst.Length, i => M(rank, i % 2)), Filled(dst.Length, k => 2),
                    Filled(dst.Length, k => 2 * k), got, Filled(src.Length, j => 2),
                    Filled(src.Length, j => 2 * j));
        bool ok = true;
        for (int j = 0; j < src.Length; j++)
            if (src[j] != ProcNull)
                ok &= got[2 * j] == M(src[j], 0) && got[2 * j + 1] == M(src[j], 1);
        Check.True(ok, $"{t.Name}: a correct NeighborAlltoallv right after {after}");
    }

    /// <summary>Every form with rank 0 sending a block delta elements longer or shorter (to
    /// destination kbad where the form has a block per destination; every block where it has
    /// one size per rank), completed blocking, by Wait, by Test and by await.</summary>
    static void Mismatches(Topo t, int kbad)
    {
        const int n = 3;
        int[] src = t.T.Sources, dst = t.T.Destinations;
        int nin = src.Length, nout = dst.Length, way = 0;
        foreach (int delta in new[] { 1, -1, 2 })
            for (int w = 0; w < 4; w++, way++) {
                string how = $"{t.Name}, rank 0's block {delta:+0;-0}, {Ways[w]}: ";
                // the forms with one block size per rank: rank 0's are all off
                int mine = rank == 0 ? n + delta : n;
                Func<int, int> uniform = j => src[j] == 0 ? n + delta : n;

                // NeighborAllgather(arrays): recvArray holds a block of this rank's length each
                int[] gs = Filled(mine, i => M(rank, i)), gg = Filled(mine * nin, i => -7);
                Exception e = Run(w, () => t.Allgather(gs, gg), () => t.IAllgather(gs, gg));
                Verdict(e, how + "NeighborAllgather", mine, src, j => gg, j => j * mine, uniform,
                        new[] { gg }, (a, i) => true);
                StillExchanges(t, how + "NeighborAllgather");

                // NeighborAlltoall(arrays): equal blocks of this rank's size
                int[] ts = Filled(mine * nout, i => M(rank, i % mine)),
                      tg = Filled(mine * nin, i => -7);
                e = Run(w, () => t.Alltoall(ts, tg), () => t.IAlltoall(ts, tg));
                Verdict(e, how + "NeighborAlltoall", mine, src, j => tg, j => j * mine, uniform,
                        new[] { tg }, (a, i) => true);
                StillExchanges(t, how + "NeighborAlltoall");

                // the forms with a block per destination: rank 0's block to dst[kbad] is off;
                // its receiver is rank (kbad's neighbour), block jbad as MPI-4.0 pairs it
                Func<int, int> sent = k => rank == 0 && k == kbad ? n + delta : n;
                int room = n + 4;   // each block's room: sentinels around it
                int[] sc = Filled(nout, sent), sd = Filled(nout, k => room * k + 2);
                int[] vs = Filled(room * nout, i => M(rank, i % room - 2));
                int[] rc = Filled(nin, j => n), rd = Filled(nin, j => room * j + 2);
                int[] vg = Filled(room * nin, i => -7);
                Func<int[], int, bool> inV = (a, i) => i % room >= 2 && i % room < 2 + n;
                Func<int, int> edge = j => BadEdge(t, j) ? n + delta : n;
                e = Run(w, () => t.Alltoallv(vs, sc, sd, vg, rc, rd),
                        () => t.IAlltoallv(vs, sc, sd, vg, rc, rd));
                Verdict(e, how + "NeighborAlltoallv", n, src, j => vg, j => room * j + 2, edge,
                        new[] { vg }, inV);
                StillExchanges(t, how + "NeighborAlltoallv");

                // NeighborAlltoallv(regions of one array each side)
                Region[] sr =
                    Filled(nout, k => k)
                        .Select(k => new Region(new[] { room * k + 2 }, new[] { sent(k) }))
                        .ToArray();
                Region[] rr = Filled(nin, j => j)
                                  .Select(j => new Region(new[] { room * j + 2 }, new[] { n }))
                                  .ToArray();
                vg = Filled(room * nin, i => -7);
                e = Run(w, () => t.RegionAlltoallv(vs, sr, vg, rr),
                        () => t.IRegionAlltoallv(vs, sr, vg, rr));
                Verdict(e, how + "NeighborAlltoallv(regions)", n, src, j => vg, j => room * j + 2,
                        edge, new[] { vg }, inV);
                StillExchanges(t, how + "NeighborAlltoallv(regions)");

                // NeighborAlltoall(an array and a region per neighbour)
                Array[] sa = Filled(nout, k => k).Select(k => (Array)vs).ToArray();
                int[][] ra = Filled(nin, j => j).Select(j => Filled(n + 4, i => -7)).ToArray();
                Region[] rr1 =
                    Filled(nin, j => j).Select(j => new Region(new[] { 2 }, new[] { n })).ToArray();
                Array[] raa = ra.Select(a => (Array)a).ToArray();
                e = Run(w, () => t.RegionAlltoall(sa, sr, raa, rr1),
                        () => t.IRegionAlltoall(sa, sr, raa, rr1));
                Verdict(e, how + "NeighborAlltoall(regions)", n, src, j => ra[j], j => 2, edge, ra,
                        (a, i) => i >= 2 && i < 2 + n);
                StillExchanges(t, how + "NeighborAlltoall(regions)");

                // NeighborAllgather(a region): rank 0's one send region is off, to every
                // destination
                Region one = new Region(new[] { 2 }, new[] { mine });
                vg = Filled(room * nin, i => -7);
                e = Run(w, () => t.RegionAllgather(vs, one, vg, rr),
                        () => t.IRegionAllgather(vs, one, vg, rr));
                Verdict(e, how + "NeighborAllgather(region)", n, src, j => vg, j => room * j + 2,
                        uniform, new[] { vg }, inV);
                StillExchanges(t, how + "NeighborAllgather(region)");
            }
    }

    /// <summary>Whether receive block j of this rank is the one rank 0's block to
    /// Destinations[kbad] lands in (Mismatches: on the ring graph kbad 0, rank 1 % size's
    /// block 0; on a 1-D grid kbad 1, toward +1: the +1 neighbour's -1 block, 0).</summary>
    static bool BadEdge(Topo t, int j) => j == 0 && rank == 1 % size && t.T.Sources[0] == 0;

    static void AllMismatches()
    {
        int left = (rank + size - 1) % size, right = (rank + 1) % size;
        using (DistGraphComm ring =
                   world.CreateDistGraphAdjacent(new[] { left }, new[] { right }, false))
            Mismatches(Topo.Of(ring, "ring graph"), 0);
        using (CartComm c = world.CreateCart(new[] { size }, new[] { true }, false))
            Mismatches(Topo.Of(c, "periodic 1-D grid"), 1);
        using (CartComm c = world.CreateCart(new[] { size }, new[] { false }, false))
            Mismatches(Topo.Of(c, "open 1-D grid"), 1);
    }

    // ---- non-blocking forms with young arrays while collections happen ----

    sealed class InFlight
    {
        public int[] Send, Got, VSend, VGot, GSend, GGot;
        public int[] Sc, Sd, Rc, Rd;
        public Request[] Requests;
    }

    /// <summary>Starts the three non-blocking forms on arrays reachable from the returned object
    /// only (no stack slot of this thread refers to them: nothing pins them by
    /// itself).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    static InFlight Start(Topo t, int salt, int b)
    {
        int[] src = t.T.Sources, dst = t.T.Destinations;
        var f = new InFlight();
        f.Send = Filled(b * dst.Length, i => V(rank, i / b, i % b, salt));
        f.Got = Filled(b * src.Length, i => -1);
        f.Sc = Filled(dst.Length, k => EdgeCount(rank, dst[k]) * b);
        f.Sd = Filled(dst.Length, k => k * 3 * b);
        f.Rc = Filled(src.Length, j => EdgeCount(src[j], rank) * b);
        f.Rd = Filled(src.Length, j => j * 3 * b);
        f.VSend = Filled(3 * b * dst.Length, i => V(rank, 1, i, salt));
        f.VGot = Filled(3 * b * src.Length, i => -1);
        f.GSend = Filled(b, i => V(rank, 2, i, salt));
        f.GGot = Filled(b * src.Length, i => -1);
        f.Requests = new[] { t.IAlltoall(f.Send, f.Got),
                             t.IAlltoallv(f.VSend, f.Sc, f.Sd, f.VGot, f.Rc, f.Rd),
                             t.IAllgather(f.GSend, f.GGot) };
        return f;
    }

    static void Churn()
    {
        for (int g = 0; g < 30; g++) {
            var junk = new byte[500 + g];
            junk[0] = (byte)g;
        }
        GC.Collect(0);
    }

    static void YoungInFlight(Topo t, int rounds)
    {
        int[] src = t.T.Sources, dst = t.T.Destinations;
        int wrong = 0;
        for (int r = 0; r < rounds; r++) {
            int salt = ++round, b = 1 + r % 40;   // up to 40*3*4 ints: nursery arrays
            InFlight f = Start(t, salt, b);
            Churn();
            if (r % 5 == 0)
                GC.Collect();
            Churn();
            foreach (Request q in f.Requests)
                q.Wait();
            // the same exchanges by hand, into fresh arrays
            int[] want = Filled(f.Got.Length, i => -1), vwant = Filled(f.VGot.Length, i => -1),
                  gwant = Filled(f.GGot.Length, i => -1);
            ByHand(t, f.Send, Filled(dst.Length, k => b), Filled(dst.Length, k => k * b), want,
                   Filled(src.Length, j => b), Filled(src.Length, j => j * b));
            ByHand(t, f.VSend, f.Sc, f.Sd, vwant, f.Rc, f.Rd);
            ByHand(t, f.GSend, Filled(dst.Length, k => b), new int[dst.Length], gwant,
                   Filled(src.Length, j => b), Filled(src.Length, j => j * b));
            if (!Same(want, f.Got) || !Same(vwant, f.VGot) || !Same(gwant, f.GGot))
                wrong++;
        }
        Check.Equal(0, wrong,
                    t.Name + $": {rounds} rounds of young arrays in flight while " +
                        "collecting, every element as by hand");
    }

    static void NonBlocking()
    {
        int[] two = MP.DimsCreate(size, new int[2]);
        using (CartComm c = world.CreateCart(two, new[] { true, true }, false))
            YoungInFlight(Topo.Of(c, "periodic 2-D grid"), 60);
        using (DistGraphComm g = world.CreateDistGraphAdjacent(IrregularSources(rank),
                                                               IrregularDestinations(rank), false))
            YoungInFlight(Topo.Of(g, "irregular graph"), 60);
        // dropped requests are finished by the core
        using (CartComm c = world.CreateCart(new[] { size }, new[] { true }, false))
        {
            for (int i = 0; i < 20; i++)
                c.INeighborAlltoall(new double[2 * 10], new double[2 * 10]);
            c.Barrier();
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
        }
    }

    // ---- the region forms ----

    static double F(int r, int i, int j, int salt) => r * 1e6 + i * 1e3 + j + salt * 1e-3;

    /// <summary>A field of rows x cols with one ghost cell on each side, its interior
    /// filled.</summary>
    static double[,] Field(int rows, int cols, int salt)
    {
        var f = new double[rows + 2, cols + 2];
        for (int i = 0; i < rows + 2; i++)
            for (int j = 0; j < cols + 2; j++)
                f[i, j] = i >= 1 && i <= rows && j >= 1 && j <= cols ? F(rank, i, j, salt) : -1;
        return f;
    }

    /// <summary>The halo exchange of a 2-D grid by packed rows and columns and Sendrecv:
    /// Sources = {up, down, left, right}; the first row goes up into the ghost row below of the
    /// rank above, and so on.</summary>
    static void HaloByHand(CartComm c, double[,] f, int rows, int cols)
    {
        int[] nb = c.Sources;
        var edge = new double[Math.Max(rows, cols)];
        var ghost = new double[Math.Max(rows, cols)];
        // up: send the first row to nb[0], receive the ghost row below from nb[1]
        Action<int, int, int, int, int, bool> rowsOrColumns =
            (sendAt, recvAt, to, from, tag, isRow) =>
        {
            int n = isRow ? cols : rows;
            for (int x = 0; x < n; x++)
                edge[x] = isRow ? f[sendAt, x + 1] : f[x + 1, sendAt];
            bool arrived = from != ProcNull;
            c.Sendrecv(edge, 0, n, to, tag, ghost, 0, n, from, tag);
            if (arrived)
                for (int x = 0; x < n; x++)
                    if (isRow)
                        f[recvAt, x + 1] = ghost[x];
                    else
                        f[x + 1, recvAt] = ghost[x];
        };
        rowsOrColumns(1, rows + 1, nb[0], nb[1], 801, true);    // first row up
        rowsOrColumns(rows, 0, nb[1], nb[0], 802, true);        // last row down
        rowsOrColumns(1, cols + 1, nb[2], nb[3], 803, false);   // first column left
        rowsOrColumns(cols, 0, nb[3], nb[2], 804, false);       // last column right
    }

    static Region[] EdgeRegions(int rows, int cols) => new[] {
        new Region(new[] { 1, 1 }, new[] { 1, cols }),      // first row: up
        new Region(new[] { rows, 1 }, new[] { 1, cols }),   // last row: down
        new Region(new[] { 1, 1 }, new[] { rows, 1 }),      // first column: left
        new Region(new[] { 1, cols }, new[] { rows, 1 })    // last column: right
    };

    static Region[] GhostRegions(int rows, int cols) => new[] {
        new Region(new[] { 0, 1 }, new[] { 1, cols }),          // from up
        new Region(new[] { rows + 1, 1 }, new[] { 1, cols }),   // from down
        new Region(new[] { 1, 0 }, new[] { rows, 1 }),          // from left
        new Region(new[] { 1, cols + 1 }, new[] { rows, 1 })    // from right
    };

    static bool SameBits(double[,] a, double[,] b)
    {
        if (a.GetLength(0) != b.GetLength(0) || a.GetLength(1) != b.GetLength(1))
            return false;
        for (int i = 0; i < a.GetLength(0); i++)
            for (int j = 0; j < a.GetLength(1); j++)
                if (BitConverter.DoubleToInt64Bits(a[i, j]) !=
                    BitConverter.DoubleToInt64Bits(b[i, j]))
                    return false;
        return true;
    }

    static void Halo(CartComm c, string name)
    {
        const int rows = 5, cols = 7;
        int salt = ++round;
        double[,] want = Field(rows, cols, salt);
        HaloByHand(c, want, rows, cols);
        Region[] edges = EdgeRegions(rows, cols), ghosts = GhostRegions(rows, cols);

        double[,] f = Field(rows, cols, salt);
        var four = new Array[] { f, f, f, f };
        c.NeighborAlltoall(four, edges, four, ghosts);
        Check.True(SameBits(want, f), name + ": halo by NeighborAlltoall(regions) = by packed " +
                                          "rows and columns, bit for bit");
        f = Field(rows, cols, salt);
        c.NeighborAlltoallv(f, edges, f, ghosts);
        Check.True(SameBits(want, f), name + ": halo by NeighborAlltoallv(regions of one array)");
        f = Field(rows, cols, salt);
        four = new Array[] { f, f, f, f };
        Status st = c.INeighborAlltoall(four, edges, four, ghosts).Wait();
        Check.True(SameBits(want, f), name + ": halo by INeighborAlltoall(regions)");
        Check.Equal(2 * rows + 2 * cols, st.Count, name + ": Status.Count is the ghost cells");
        f = Field(rows, cols, salt);
        c.INeighborAlltoallv(f, edges, f, ghosts).Wait();
        Check.True(SameBits(want, f), name + ": halo by INeighborAlltoallv(regions)");

        // from an array per neighbour (packed edges, 1-D) into the ghost cells: five arrays
        f = Field(rows, cols, salt);
        var packed = new Array[4];
        var packedRegions = new Region[4];
        for (int k = 0; k < 4; k++) {
            int n = k < 2 ? cols : rows;
            var e = new double[n];
            for (int x = 0; x < n; x++)
                e[x] = k == 0   ? f[1, x + 1]
                       : k == 1 ? f[rows, x + 1]
                       : k == 2 ? f[x + 1, 1]
                                : f[x + 1, cols];
            packed[k] = e;
            packedRegions[k] = new Region(new[] { 0 }, new[] { n });
        }
        c.NeighborAlltoall(packed, packedRegions, new Array[] { f, f, f, f }, ghosts);
        Check.True(SameBits(want, f), name + ": five arrays (packed edges into the field's ghost " +
                                          "cells), one call");
    }

    sealed class HaloRound
    {
        public double[,] Field;
        public double[][] Edges;
        public Request Request;
    }

    /// <summary>The region forms with young arrays, five of them per call (held by the core
    /// beyond the two a bracket holds), reachable from the returned object only (no stack slot of
    /// this thread refers to them: nothing pins them by itself).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    static HaloRound StartYoungHalo(CartComm c, int rows, int cols, int salt)
    {
        var h = new HaloRound { Field = Field(rows, cols, salt), Edges = new double [4][] };
        for (int k = 0; k < 4; k++) {
            int n = k < 2 ? cols : rows;
            h.Edges[k] = new double[n];
            for (int x = 0; x < n; x++)
                h.Edges[k][x] = k == 0   ? h.Field[1, x + 1]
                                : k == 1 ? h.Field[rows, x + 1]
                                : k == 2 ? h.Field[x + 1, 1]
                                         : h.Field[x + 1, cols];
        }
        var regions = new Region[4];
        for (int k = 0; k < 4; k++)
            regions[k] = new Region(new[] { 0 }, new[] { h.Edges[k].Length });
        h.Request = c.INeighborAlltoall(h.Edges, regions,
                                        new Array[] { h.Field, h.Field, h.Field, h.Field },
                                        GhostRegions(rows, cols));
        return h;
    }

    static void YoungHalo(CartComm c, string name)
    {
        int wrong = 0;
        long pinsBefore = MP.Stats.PinsTaken;
        for (int r = 0; r < 40; r++) {
            int rows = 3 + r % 5, cols = 4 + r % 7, salt = ++round;
            HaloRound h = StartYoungHalo(c, rows, cols, salt);
            Churn();
            if (r % 4 == 0)
                GC.Collect();
            h.Request.Wait();
            double[,] want = Field(rows, cols, salt);
            HaloByHand(c, want, rows, cols);
            if (!SameBits(want, h.Field))
                wrong++;
        }
        Check.Equal(0, wrong, name + ": young fields and edges in flight while collecting");
        Check.True(MP.Stats.PinsTaken > pinsBefore,
                   name + ": the young arrays of five-array calls were pinned");
    }

    static void RegionRefusals(CartComm c)
    {
        const int rows = 4, cols = 4;
        double[,] f = Field(rows, cols, 0);
        var four = new Array[] { f, f, f, f };
        Region[] edges = EdgeRegions(rows, cols), ghosts = GhostRegions(rows, cols);
        Region[] overlapping = (Region[])ghosts.Clone();
        overlapping[1] = overlapping[0];
        Check.Refused<ArgumentException>(() => c.NeighborAlltoall(four, edges, four, overlapping),
                                         "recvRegions", "two receive regions of an array overlap");
        Check.Refused<ArgumentException>(() => c.NeighborAlltoallv(f, edges, f, edges),
                                         "recvRegions",
                                         "a send and a receive region of an array overlap");
        Check.Refused<ArgumentException>(() => c.INeighborAlltoallv(f, ghosts, f, ghosts),
                                         "recvRegions",
                                         "INeighborAlltoallv: send and receive regions overlap");
        Region outside = new Region(new[] { rows + 1, 0 }, new[] { 2, cols });
        Region[] bad = (Region[])ghosts.Clone();
        bad[2] = outside;
        Check.Throws<ArgumentOutOfRangeException>(() => c.NeighborAlltoall(four, edges, four, bad),
                                                  "a region outside its array");
        bad[2] = new Region(new[] { 0 }, new[] { 1 });
        Check.Throws<ArgumentException>(() => c.NeighborAlltoall(four, edges, four, bad),
                                        "a region of the wrong rank");
        var mixed = new Array[] { f, f, new float[rows + 2, cols + 2], f };
        Check.Refused<ArgumentException>(() => c.NeighborAlltoall(mixed, edges, four, ghosts),
                                         "sendArrays", "arrays of different element types");
        bad[2] = default(Region);
        Check.Refused<ArgumentException>(() => c.NeighborAlltoall(four, edges, four, bad),
                                         "recvRegions", "default(Region) in a list");
        Check.Refused<ArgumentException>(
            () => c.NeighborAllgather(f, edges[0], f, ghosts.Take(3).ToArray()), "recvRegions",
            "NeighborAllgather: a receive region short");
        Check.Refused<ArgumentException>(() => c.NeighborAllgather(f, ghosts[0], f, ghosts),
                                         "recvRegions",
                                         "NeighborAllgather: the send region is a receive region");
        Check.StillUsable(c, "refused region forms");
        double[,] again = Field(rows, cols, 0);
        four = new Array[] { again, again, again, again };
        c.NeighborAlltoall(four, edges, four, ghosts);
        double[,] want = Field(rows, cols, 0);
        HaloByHand(c, want, rows, cols);
        Check.True(SameBits(want, again), "the halo exchange works after the refusals");
    }

    static void RegionForms()
    {
        int[] two = MP.DimsCreate(size, new int[2]);
        foreach (bool periodic in new[] { true, false })
            using (CartComm c = world.CreateCart(two, new[] { periodic, periodic }, false))
            {
                string name =
                    "2-D grid {" + string.Join("x", two) + "} " + (periodic ? "periodic" : "open");
                Halo(c, name);
                YoungHalo(c, name);
            }
        // periodic dimensions of one process beside a ring (the pairing of the two blocks)
        using (CartComm c = world.CreateCart(new[] { 1, size }, new[] { true, true }, false))
            Halo(c, "grid {1x" + size + "} periodic");
        using (CartComm c = world.CreateCart(new[] { size, 1 }, new[] { false, true }, false))
            Halo(c, "grid {" + size + "x1}, the second periodic");

        // NeighborAllgather of a region into rows of a 2-D array
        using (CartComm c = world.CreateCart(two, new[] { true, false }, false))
        {
            const int n = 6;
            int salt = ++round;
            var mine = new double[n + 2];
            for (int i = 0; i < n + 2; i++)
                mine[i] = F(rank, 0, i, salt);
            var got = new double[4, n];
            var rowsOf = new Region[4];
            for (int k = 0; k < 4; k++)
                rowsOf[k] = new Region(new[] { k, 0 }, new[] { 1, n });
            c.NeighborAllgather(mine, new Region(new[] { 1 }, new[] { n }), got, rowsOf);
            int[] src = c.Sources;
            bool ok = true;
            for (int k = 0; k < 4; k++)
                for (int i = 0; i < n; i++)
                    ok &= got[k, i] == (src[k] == ProcNull ? 0 : F(src[k], 0, i + 1, salt));
            Check.True(ok, "NeighborAllgather(region): each source's region in its row");
            got = new double[4, n];
            c.INeighborAllgather(mine, new Region(new[] { 1 }, new[] { n }), got, rowsOf).Wait();
            bool iok = true;
            for (int k = 0; k < 4; k++)
                for (int i = 0; i < n; i++)
                    iok &= got[k, i] == (src[k] == ProcNull ? 0 : F(src[k], 0, i + 1, salt));
            Check.True(iok, "INeighborAllgather(region)");
            RegionRefusals(c);
        }

        // interleaved strided regions of one array: evens out, odds in (they do not overlap)
        int left = (rank + size - 1) % size, right = (rank + 1) % size;
        using (DistGraphComm ring =
                   world.CreateDistGraphAdjacent(new[] { left }, new[] { right }, false))
        {
            const int n = 8;
            var a = new long[2 * n];
            for (int i = 0; i < n; i++)
                a[2 * i] = rank * 100 + i;
            ring.NeighborAlltoallv(a, new[] { Region.Strided(0, n, 2) }, a,
                                   new[] { Region.Strided(1, n, 2) });
            bool ok = true;
            for (int i = 0; i < n; i++)
                ok &= a[2 * i] == rank * 100 + i && a[2 * i + 1] == left * 100 + i;
            Check.True(ok, "strided regions of one array, interleaved: evens sent, odds received");
            Check.Refused<ArgumentException>(
                () => ring.NeighborAlltoallv(a, new[] { Region.Strided(0, n, 2) }, a,
                                             new[] { Region.Strided(4, 2, 4) }),
                "recvRegions", "strided regions that meet");
        }
    }

    static int Main()
    {
        Grids();
        Graphs();
        Refusals();
        AllMismatches();
        NonBlocking();
        RegionForms();
        return Check.FinishWithNoPinLeft("NeighborTest");
    }
}

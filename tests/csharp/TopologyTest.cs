// TopologyTest — groups (MPI orderings of Incl, Excl, Union, Intersection, Difference,
// TranslateRanks), Intracomm.Create, Cartesian grids (row-major ranks, Shift with MP.ProcNull at
// open edges, periodic wrap, Sub, DimsCreate), intercommunicators (point-to-point and the O-calls
// address the remote group, Merge orders the low group first), MP.Parent. Every bad argument
// raises its managed exception before MPI is called, and the communicator works afterwards.
// Runs at any rank count; the results are computed from the rank count, never hard-coded.
using System;
using System.Linq;
using System.MP;

static class TopologyTest
{
    const int ProcNull = MP.ProcNull;
    static readonly Intracomm world = MP.World;
    static readonly int rank = world.Rank, size = world.Size;

    static void Groups()
    {
        using (Group g = world.Group)
        {
            Check.Equal(size, g.Size, "world group size");
            Check.Equal(rank, g.Rank, "world group rank");
            int[] reversed = Enumerable.Range(0, size).Reverse().ToArray();
            // clang-format off
            using (Group rev = g.Incl(reversed))
            using (Group noZero = g.Excl(new[] { 0 }))
            using (Group zero = g.Incl(new[] { 0 }))
            using (Group empty = g.Incl(new int[0])) {
                // clang-format on
                Check.Equal(size - 1 - rank, rev.Rank, "Incl: rank i of the new group is ranks[i]");
                Check.Equal(size - 1, noZero.Size, "Excl size");
                Check.Equal(rank == 0 ? MP.Undefined : rank - 1, noZero.Rank,
                            "Excl keeps the order; Undefined outside");
                Check.Equal(0, empty.Size, "Incl of nothing: the empty group");
                Check.Equal(MP.Undefined, empty.Rank, "no rank in the empty group");
                Check.Equal(-32766, MP.Undefined, "MP.Undefined is MPI_UNDEFINED's value");
                using (Group u = Group.Union(noZero, zero))
                {   // a's members, then b's not in a
                    Check.Equal(size, u.Size, "Union size");
                    Check.Equal(rank == 0 ? size - 1 : rank - 1, u.Rank, "Union: a first, then b");
                }
                using (Group i = Group.Intersection(rev, noZero))
                {   // in a's order
                    Check.Equal(size - 1, i.Size, "Intersection size");
                    Check.Equal(rank == 0 ? MP.Undefined : size - 1 - rank, i.Rank,
                                "Intersection in a's order");
                }
                using (Group d = Group.Difference(g, noZero))
                {
                    Check.Equal(1, d.Size, "Difference size");
                    Check.Equal(rank == 0 ? 0 : MP.Undefined, d.Rank, "Difference: a without b");
                }
                int[] all = Enumerable.Range(0, size).ToArray();
                int[] inRev = g.TranslateRanks(all, rev), inNoZero = g.TranslateRanks(all, noZero);
                for (int r = 0; r < size; r++) {
                    Check.Equal(size - 1 - r, inRev[r],
                                $"TranslateRanks {r} into the reversed group");
                    Check.Equal(r == 0 ? MP.Undefined : r - 1, inNoZero[r],
                                $"TranslateRanks {r}: Undefined where absent");
                }
                Check.Equal(ProcNull, g.TranslateRanks(new[] { ProcNull }, rev)[0],
                            "ProcNull translates to itself");

                // bad input, before MPI
                Check.Refused<ArgumentNullException>(() => g.Incl(null), "ranks", "Incl(null)");
                Check.Refused<ArgumentOutOfRangeException>(() => g.Incl(new[] { size }), "ranks",
                                                           "Incl of a rank past the group");
                Check.Refused<ArgumentOutOfRangeException>(() => g.Excl(new[] { -1 }), "ranks",
                                                           "Excl of -1");
                Check.Refused<ArgumentException>(() => g.Incl(new[] { 0, 0 }), "ranks",
                                                 "Incl with a rank twice");
                Check.Refused<ArgumentException>(() => g.Excl(new[] { 0, 0 }), "ranks",
                                                 "Excl with a rank twice");
                Check.Refused<ArgumentNullException>(() => Group.Union(null, g), "a",
                                                     "Union(null, g)");
                Check.Refused<ArgumentNullException>(() => Group.Difference(g, null), "b",
                                                     "Difference(g, null)");
                Check.Refused<ArgumentNullException>(() => g.TranslateRanks(null, rev), "ranks",
                                                     "TranslateRanks(null)");
                Check.Refused<ArgumentNullException>(() => g.TranslateRanks(all, null), "other",
                                                     "TranslateRanks(.., null)");
                Check.Refused<ArgumentOutOfRangeException>(
                    () => g.TranslateRanks(new[] { size }, rev), "ranks",
                    "TranslateRanks of a rank past the group");
                Group gone = g.Incl(new[] { 0 });
                gone.Dispose();
                gone.Dispose();   // a second Dispose does nothing
                Check.Throws<ObjectDisposedException>(() => gone.Incl(new[] { 0 }),
                                                      "a disposed group refuses Incl");
                Check.Throws<ObjectDisposedException>(() => Group.Union(gone, g),
                                                      "a disposed group refuses Union");
                Check.Equal(size, g.Incl(all).Size, "the group works after the refusals");
            }
        }
        // groups left to the finalizer are freed by a later group call, not by the finalizer thread
        for (int i = 0; i < 100; i++)
            world.Group.Incl(new[] { 0 });
        GC.Collect();
        GC.WaitForPendingFinalizers();
        using (Group g = world.Group)
            Check.Equal(size, g.Size, "groups work after finalized ones were freed");
        Check.StillUsable(world, "the group checks");
    }

    static void Create()
    {
        int[] evens = Enumerable.Range(0, size).Where(r => r % 2 == 0).ToArray();
        // clang-format off
        using (Group g = world.Group)
        using (Group even = g.Incl(evens)) {
            // clang-format on
            Intracomm c = world.Create(even);
            Check.Equal(rank % 2 == 0, c != null, "Create: null outside the group");
            if (c != null) {
                Check.Equal(evens.Length, c.Size, "Create: the group's size");
                Check.Equal(rank / 2, c.Rank, "Create: ranked in the group's order");
                var one = new[] { rank };
                var sum = new int[1];
                c.Allreduce(one, sum, Op.Sum);
                Check.Equal(evens.Sum(), sum[0], "Create: a collective over the group's processes");
                c.Dispose();
                Check.Throws<ObjectDisposedException>(() => c.Barrier(),
                                                      "a disposed communicator refuses a barrier");
                Check.Throws<ObjectDisposedException>(() =>
                                                      { var x = c.Group; },
                                                      "a disposed communicator has no group");
            }
            Check.Refused<ArgumentNullException>(() => world.Create(null), "group", "Create(null)");
            Group gone = g.Incl(new[] { 0 });
            gone.Dispose();
            Check.Throws<ObjectDisposedException>(() => world.Create(gone),
                                                  "Create of a disposed group");
            // a group with processes outside the communicator: every process sees it
            using (Intracomm half = world.Split(rank % 2, rank))
            {
                if (size > 1)
                    Check.Refused<ArgumentException>(() => half.Create(g), "group",
                                                     "Create of a group that is not a subgroup");
                Check.StillUsable(half, "Create refused");
            }
        }
        Check.StillUsable(world, "the Create checks");
    }

    static void Cartesian()
    {
        var free = new int[2];
        int[] dims = MP.DimsCreate(size, free);
        Check.True(free[0] == 0 && free[1] == 0, "DimsCreate leaves its argument as it was");
        Check.Equal(size, dims[0] * dims[1], "DimsCreate: the dims multiply to the nodes");
        Check.True(dims[0] >= dims[1], "DimsCreate: non-increasing");
        Check.True(MP.DimsCreate(12, new[] { 0, 3, 0 }).SequenceEqual(new[] { 2, 3, 2 }),
                   "DimsCreate keeps fixed entries");
        Check.True(MP.DimsCreate(size, new[] { 0 }).SequenceEqual(new[] { size }),
                   "DimsCreate in one dimension");

        // an open 2-D grid, ranks kept
        using (CartComm cart = world.CreateCart(dims, new[] { false, false }, false))
        {
            Check.Equal(rank, cart.Rank, "reorder: false keeps ranks");
            Check.True(cart.Dims.SequenceEqual(dims), "Dims");
            Check.True(cart.Periods.SequenceEqual(new[] { false, false }), "Periods");
            int row = rank / dims[1], col = rank % dims[1];
            Check.True(cart.Coords.SequenceEqual(new[] { row, col }), "Coords are row-major");
            for (int r = 0; r < size; r++) {
                int[] c = cart.CoordsOf(r);
                Check.True(c[0] == r / dims[1] && c[1] == r % dims[1], $"CoordsOf({r}) row-major");
                Check.Equal(r, cart.RankOf(c), $"RankOf(CoordsOf({r}))");
            }
            cart.Shift(0, 1, out int up, out int down);
            Check.Equal(row == 0 ? ProcNull : rank - dims[1], up,
                        "Shift(0, 1) source: ProcNull at the top edge");
            Check.Equal(row == dims[0] - 1 ? ProcNull : rank + dims[1], down,
                        "Shift(0, 1) dest: ProcNull at the bottom edge");
            cart.Shift(1, -1, out int right, out int left);
            Check.Equal(col == dims[1] - 1 ? ProcNull : rank + 1, right, "Shift(1, -1) source");
            Check.Equal(col == 0 ? ProcNull : rank - 1, left,
                        "Shift(1, -1) dest: ProcNull at the left edge");

            // clang-format off
            using (CartComm rowComm = cart.Sub(new[] { false, true }))
            using (CartComm colComm = cart.Sub(new[] { true, false })) {
                // clang-format on
                Check.Equal(dims[1], rowComm.Size, "Sub keeping dimension 1: a row");
                Check.Equal(col, rowComm.Rank, "the row is ranked by column");
                Check.True(rowComm.Dims.SequenceEqual(new[] { dims[1] }), "the row's Dims");
                Check.Equal(dims[0], colComm.Size, "Sub keeping dimension 0: a column");
                Check.Equal(row, colComm.Rank, "the column is ranked by row");
                var one = new[] { rank };
                var sum = new int[1];
                rowComm.Allreduce(one, sum, Op.Sum);
                Check.Equal(Enumerable.Range(row * dims[1], dims[1]).Sum(), sum[0],
                            "a collective over the row");
            }

            // bad input, before MPI; the grid works afterwards
            Check.Refused<ArgumentOutOfRangeException>(() => cart.Shift(2, 1, out int s, out int d),
                                                       "direction", "Shift in direction 2 of 2");
            Check.Refused<ArgumentOutOfRangeException>(() =>
                                                           cart.Shift(-1, 1, out int s, out int d),
                                                       "direction", "Shift in direction -1");
            Check.Refused<ArgumentNullException>(() => cart.RankOf(null), "coords", "RankOf(null)");
            Check.Refused<ArgumentException>(() => cart.RankOf(new[] { 0 }), "coords",
                                             "RankOf with one coordinate of two");
            Check.Refused<ArgumentOutOfRangeException>(() => cart.RankOf(new[] { dims[0], 0 }),
                                                       "coords", "RankOf past an open edge");
            Check.Refused<ArgumentOutOfRangeException>(() => cart.RankOf(new[] { 0, -1 }), "coords",
                                                       "RankOf before an open edge");
            Check.Refused<ArgumentOutOfRangeException>(() => cart.CoordsOf(size), "rank",
                                                       "CoordsOf(Size)");
            Check.Refused<ArgumentOutOfRangeException>(() => cart.CoordsOf(-1), "rank",
                                                       "CoordsOf(-1)");
            Check.Refused<ArgumentNullException>(() => cart.Sub(null), "remainDims", "Sub(null)");
            Check.Refused<ArgumentException>(() => cart.Sub(new[] { true }), "remainDims",
                                             "Sub with one entry of two");
            Check.StillUsable(cart, "the grid's refusals");
        }

        // a periodic ring: wraps
        using (CartComm ring = world.CreateCart(new[] { size }, new[] { true }, false))
        {
            Check.True(ring.Periods[0] && ring.Dims[0] == size && ring.Coords[0] == rank,
                       "a periodic grid's Periods, Dims and Coords");
            ring.Shift(0, 1, out int prev, out int next);
            Check.Equal((rank + size - 1) % size, prev, "periodic Shift source wraps");
            Check.Equal((rank + 1) % size, next, "periodic Shift dest wraps");
            ring.Shift(0, 2, out int prev2, out int next2);
            Check.Equal(((rank - 2) % size + size) % size, prev2, "Shift by 2 wraps");
            Check.Equal((rank + 2) % size, next2, "Shift by 2 wraps forward");
            Check.Equal(size - 1, ring.RankOf(new[] { -1 }), "RankOf wraps a periodic -1");
            Check.Equal(0, ring.RankOf(new[] { size }), "RankOf wraps a periodic Size");
            Check.Equal(1 % size, ring.RankOf(new[] { 1 + 3 * size }),
                        "RankOf wraps several times");
            var mine = new[] { rank * 10 };
            var got = new int[1];
            ring.Sendrecv(mine, next, 3, got, prev, 3);
            Check.Equal(prev * 10, got[0], "a shift along the ring with Shift's ranks");
        }
        // an open 1-D line: ProcNull at both ends
        using (CartComm line = world.CreateCart(new[] { size }, new[] { false }, false))
        {
            line.Shift(0, 1, out int src, out int dst);
            Check.Equal(rank == 0 ? ProcNull : rank - 1, src,
                        "open line: ProcNull before the first");
            Check.Equal(rank == size - 1 ? ProcNull : rank + 1, dst,
                        "open line: ProcNull after the last");
            // the open edges need no special case: a transfer with ProcNull does nothing
            var mine = new[] { rank + 100 };
            var got = new[] { -7 };
            Status st = line.Sendrecv(mine, dst, 4, got, src, 4);
            Check.Equal(rank == 0 ? -7 : rank - 1 + 100, got[0],
                        "a shift along the open line with Shift's ranks");
            Check.Equal(src, st.Source, "the status names Shift's source (ProcNull at the first)");
            line.Shift(0, size, out src, out dst);
            Check.True(src == ProcNull && dst == ProcNull, "a shift by Size leaves an open line");
        }
        // a grid smaller than the communicator: the rest get null
        CartComm part = world.CreateCart(new[] { Math.Max(1, size - 1) }, new[] { false }, true);
        Check.Equal(size == 1 || rank < size - 1, part != null,
                    "CreateCart: null for processes outside the grid");
        part?.Dispose();

        Check.Refused<ArgumentNullException>(() => world.CreateCart(null, new[] { false }, false),
                                             "dims", "CreateCart(null dims)");
        Check.Refused<ArgumentNullException>(() => world.CreateCart(new[] { 1 }, null, false),
                                             "periods", "CreateCart(null periods)");
        Check.Refused<ArgumentException>(
            () => world.CreateCart(new[] { 1, 1 }, new[] { false }, false), "periods",
            "dims and periods differ in length");
        Check.Refused<ArgumentOutOfRangeException>(
            () => world.CreateCart(new[] { 0 }, new[] { false }, false), "dims",
            "a dimension of 0");
        Check.Refused<ArgumentException>(
            () => world.CreateCart(new[] { size + 1 }, new[] { false }, false), "dims",
            "dims past Size");
        Check.Refused<ArgumentException>(
            () => world.CreateCart(new[] { size, 2 }, new[] { false, true }, false), "dims",
            "dims multiply past Size");
        Check.Refused<ArgumentOutOfRangeException>(() => MP.DimsCreate(0, new int[1]), "nodes",
                                                   "DimsCreate(0)");
        Check.Refused<ArgumentNullException>(() => MP.DimsCreate(size, null), "dims",
                                             "DimsCreate(null)");
        Check.Refused<ArgumentOutOfRangeException>(() => MP.DimsCreate(size, new[] { -1 }), "dims",
                                                   "DimsCreate of a negative entry");
        Check.Refused<ArgumentException>(() => MP.DimsCreate(6, new[] { 4, 0 }), "dims",
                                         "DimsCreate: 4 does not divide 6");
        Check.Refused<ArgumentException>(() => MP.DimsCreate(6, new[] { 2, 2 }), "dims",
                                         "DimsCreate: no free entry, 2x2 is not 6");
        CartComm gone = world.CreateCart(new[] { size }, new[] { true }, false);
        gone.Dispose();
        Check.Throws<ObjectDisposedException>(() => gone.Shift(0, 1, out int s, out int d),
                                              "Shift on a disposed grid");
        Check.Throws<ObjectDisposedException>(() => gone.RankOf(new[] { 0 }),
                                              "RankOf on a disposed grid");
        Check.Throws<ObjectDisposedException>(() => gone.Sub(new[] { true }),
                                              "Sub on a disposed grid");
        Check.StillUsable(world, "the CreateCart checks");
    }

    class Note
    {
        public int From;
        [Transportable]
        public string Text;
    }

    static void Intercommunicators()
    {
        Check.True(MP.Parent == null, "MP.Parent is null in a program that was not spawned");
        // refusals every process sees
        Check.Refused<ArgumentOutOfRangeException>(() => world.CreateIntercomm(size, world, 0, 5),
                                                   "localLeader", "localLeader past Size");
        Check.Refused<ArgumentOutOfRangeException>(() => world.CreateIntercomm(0, world, 0, -1),
                                                   "tag", "a negative tag");
        Check.Refused<ArgumentOutOfRangeException>(() => world.CreateIntercomm(0, world, size, 5),
                                                   "remoteLeader", "remoteLeader past peer");
        // only the leader can see it: with more processes the others would wait, as in MPI
        if (size == 1)
            Check.Refused<ArgumentNullException>(() => world.CreateIntercomm(0, null, 0, 5), "peer",
                                                 "a null peer at the local leader");
        Check.StillUsable(world, "the CreateIntercomm checks");
        if (size < 2)
            return;

        int color = rank % 2;   // evens: the low group; odds: the high one
        int evens = (size + 1) / 2, odds = size / 2;
        using (Intracomm local = world.Split(color, rank))
        {
            Intracomm gonePeer = world.Dup();
            gonePeer.Dispose();
            Check.Throws<ObjectDisposedException>(
                () => local.CreateIntercomm(0, gonePeer, 1 - color, 9), "a disposed peer");

            using (Intercomm inter = local.CreateIntercomm(0, world, color == 0 ? 1 : 0, 99))
            {
                Check.Equal(local.Size, inter.Size, "Size: the local group's");
                Check.Equal(local.Rank, inter.Rank, "Rank: in the local group");
                Check.Equal(color == 0 ? odds : evens, inter.RemoteSize, "RemoteSize");
                using (Group g = inter.Group)
                    Check.Equal(local.Size, g.Size, "Group: the local group");

                // point-to-point addresses the remote group: process k pairs with remote k
                int pairs = Math.Min(evens, odds);
                if (inter.Rank < pairs) {
                    var mine = new[] { rank };
                    var got = new int[1];
                    Status st = inter.Sendrecv(mine, inter.Rank, 11, got, inter.Rank, 11);
                    Check.Equal(color == 0 ? rank + 1 : rank - 1, got[0],
                                "intercomm Sendrecv with remote rank k");
                    Check.Equal(inter.Rank, st.Source, "Status.Source is a remote rank");
                }
                // O-calls: the leaders exchange graphs
                if (inter.Rank == 0) {
                    var note = new Note { From = rank, Text = "from " + rank };
                    Note back;
                    if (color == 0) {
                        inter.OSend(note, 0, 12);
                        back = inter.ORecv<Note>(0, 12);
                    } else {
                        back = inter.ORecv<Note>(0, 12);
                        inter.OSend(note, 0, 12);
                    }
                    int other = color == 0 ? 1 : 0;
                    Check.True(back.From == other && back.Text == "from " + other,
                               "OSend/ORecv to the remote leader");
                }
                // ranks are checked against the remote group
                int remote = inter.RemoteSize;
                Check.Refused<ArgumentOutOfRangeException>(() => inter.Send(new int[1], remote, 1),
                                                           "dest", "dest = RemoteSize");
                Check.Refused<ArgumentOutOfRangeException>(() => inter.Recv(new int[1], remote, 1),
                                                           "source", "source = RemoteSize");
                Check.Refused<ArgumentOutOfRangeException>(() => inter.OSend("x", remote, 1),
                                                           "dest", "OSend to dest = RemoteSize");
                Check.Throws<NotSupportedException>(() => inter.Dup(),
                                                    "Dup of an intercommunicator");
                inter.Send(new int[1], MP.ProcNull, 1);   // no process: nothing happens
                Check.Equal(MP.ProcNull, inter.Recv(new int[1], MP.ProcNull, 1).Source,
                            "a receive from ProcNull on an intercommunicator");
                if (inter.Rank == 0) {   // still usable: the leaders exchange again
                    var got = new int[1];
                    inter.Sendrecv(new[] { rank }, 0, 13, got, 0, 13);
                    Check.Equal(color == 0 ? 1 : 0, got[0], "intercomm usable after the refusals");
                }

                // Merge: the group passing high = false comes first
                using (Intracomm lowFirst = inter.Merge(color == 1))
                {
                    Check.Equal(size, lowFirst.Size, "Merge: both groups");
                    Check.Equal(color == 0 ? local.Rank : evens + local.Rank, lowFirst.Rank,
                                "Merge(high): the low group first");
                    var one = new[] { rank };
                    var sum = new int[1];
                    lowFirst.Allreduce(one, sum, Op.Sum);
                    Check.Equal(size * (size - 1) / 2, sum[0],
                                "a collective over the merged communicator");
                }
                using (Intracomm highFirst = inter.Merge(color == 0))
                    Check.Equal(color == 1 ? local.Rank : odds + local.Rank, highFirst.Rank,
                                "Merge: the odds first when they pass high = false");
                inter.Dispose();
                Check.Throws<ObjectDisposedException>(() => inter.Send(new int[1], 0, 1),
                                                      "a disposed intercommunicator refuses Send");
                Check.Throws<ObjectDisposedException>(() => inter.Merge(true),
                                                      "a disposed intercommunicator refuses Merge");
            }
        }
        Check.StillUsable(world, "the intercommunicator checks");
    }

    /// <summary>Dispose frees what it should: more communicators than MPICH has context ids
    /// (2048) are created and disposed one after another — over Self, where creating one involves
    /// no other process (over World each costs a collective: 15 ms on a loaded
    /// 2-core machine).</summary>
    static void DisposeFrees()
    {
        Intracomm self = MP.Self;
        int fine = 0;
        // clang-format off
        using (Group mine = self.Group)
            for (int i = 0; i < 1100; i++) {
                using (CartComm c = self.CreateCart(new[] { 1 }, new[] { true }, false))
                using (Intracomm d = self.Create(mine))
                    if (c.Size == 1 && d.Size == 1)
                        fine++;
            }
        // clang-format on
        Check.Equal(1100, fine,
                    "2200 communicators created and disposed: Dispose frees their context ids");
        Check.StillUsable(world, "2200 communicators");
    }

    static int Main()
    {
        Groups();
        Create();
        Cartesian();
        Intercommunicators();
        DisposeFrees();
        return Check.FinishWithNoPinLeft("TopologyTest");
    }
}

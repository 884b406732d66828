// RegionTest — System.MP.Region and every point-to-point member that takes one (API.md,
// "Regions"), with SendrecvReplace and the range forms of Issend and Ssend: columns, rows,
// blocks of 3-D arrays and strided elements travel in row-major order of the region into regions
// of other shapes; a shorter message fills the front, a longer one raises MPException with
// nothing outside the region written; regions of one array in one Sendrecv (a halo exchange) are
// allowed when they share no element; every refusal leaves the rank usable. At any rank count
// (sends run on a second thread, so a rank can talk to itself).
using System;
using System.MP;

struct Cell
{
    public double Value;
    public int Id;
    public short Flag;
}

static class RegionTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, size = Ring.Size, next = Ring.Next, prev = Ring.Prev;
    const double Sentinel = -12345.5;

    static Status Exchange(Action send, Func<Status> recv) => Ring.Exchange(send, recv);

    // a value that names its rank and its element: rank r's element (i, j) of an n-column array
    static double V(int r, int i, int j, int n) => r * 1000000.0 + i * n + j;

    static double[,] Field(int r, int rows, int cols)
    {
        var a = new double[rows, cols];
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++)
                a[i, j] = V(r, i, j, cols);
        return a;
    }

    static double[,] Filled(int rows, int cols, double value)
    {
        var a = new double[rows, cols];
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++)
                a[i, j] = value;
        return a;
    }

    static double[] Filled(int n, double value)
    {
        var a = new double[n];
        for (int i = 0; i < n; i++)
            a[i] = value;
        return a;
    }

    /// <summary>Region's values: the constructor and the factories, and their refusals.</summary>
    static void Values()
    {
        var box = new Region(new[] { 1, 2 }, new[] { 3, 4 });
        Check.Equal("1,2", string.Join(",", box.Starts), "box Starts");
        Check.Equal("3,4", string.Join(",", box.Sizes), "box Sizes");
        Check.Equal(12, box.Count, "box Count");
        box.Starts[0] = 99;   // copies
        Check.Equal(1, box.Starts[0], "Starts is a copy");
        Region rows = Region.Rows(2, 3);
        Check.Equal("2,0", string.Join(",", rows.Starts), "Rows Starts");
        Check.Equal("3,-1", string.Join(",", rows.Sizes), "Rows Sizes: -1 is the whole dimension");
        Check.Equal(-1, rows.Count, "Rows Count is -1 until applied");
        Region cols = Region.Columns(4, 2);
        Check.Equal("0,4", string.Join(",", cols.Starts), "Columns Starts");
        Check.Equal("-1,2", string.Join(",", cols.Sizes), "Columns Sizes");
        Check.Equal(-1, cols.Count, "Columns Count");
        Region strided = Region.Strided(3, 5, 2);
        Check.Equal("3", string.Join(",", strided.Starts), "Strided Starts");
        Check.Equal("5", string.Join(",", strided.Sizes), "Strided Sizes");
        Check.Equal(5, strided.Count, "Strided Count");
        Region none = default(Region);
        Check.Equal(0, none.Starts.Length, "default(Region) Starts");
        Check.Equal(0, none.Sizes.Length, "default(Region) Sizes");
        Check.Equal(0, none.Count, "default(Region) Count");
        Check.True(strided.ToString().Contains("stride=2"), "ToString names the stride");

        Check.Throws<ArgumentNullException>(() => new Region(null, new[] { 1 }), "null starts");
        Check.Throws<ArgumentNullException>(() => new Region(new[] { 1 }, null), "null sizes");
        Check.Throws<ArgumentException>(() => new Region(new[] { 1, 2 }, new[] { 1 }),
                                        "starts and sizes of different lengths");
        Check.Throws<ArgumentException>(() => new Region(new int[0], new int[0]), "no dimension");
        Check.Throws<ArgumentOutOfRangeException>(() => new Region(new[] { -1 }, new[] { 1 }),
                                                  "negative start");
        Check.Throws<ArgumentOutOfRangeException>(() => new Region(new[] { 0 }, new[] { -2 }),
                                                  "negative size");
        Check.Throws<ArgumentOutOfRangeException>(() => Region.Rows(-1, 1), "Rows negative");
        Check.Throws<ArgumentOutOfRangeException>(() => Region.Rows(0, -1), "Rows count < 0");
        Check.Throws<ArgumentOutOfRangeException>(() => Region.Columns(-2, 1), "Columns < 0");
        Check.Throws<ArgumentOutOfRangeException>(() => Region.Columns(0, -1), "Columns count");
        Check.Throws<ArgumentOutOfRangeException>(() => Region.Strided(-1, 2, 1), "Strided first");
        Check.Throws<ArgumentOutOfRangeException>(() => Region.Strided(0, -1, 1), "Strided count");
        var e = Check.Throws<ArgumentOutOfRangeException>(() => Region.Strided(0, 2, 0),
                                                          "Strided stride 0");
        Check.True(e != null && e.ParamName == "stride", "stride < 1 names stride");
        Check.Throws<ArgumentOutOfRangeException>(() => Region.Strided(0, 2, -3),
                                                  "Strided negative stride");
    }

    /// <summary>A column of a double[N,N] arrives as N consecutive values in a double[N], in a
    /// row region, and in a column of another array; rows arrive in order.</summary>
    static void ColumnsAndRows()
    {
        const int n = 9;
        double[,] mine = Field(rank, n, n);
        for (int col = 0; col < n; col += 4) {
            int c = col, tag = 10 + col;
            var vector = Filled(n, Sentinel);
            Status st = Exchange(() => world.Send(mine, Region.Columns(c, 1), next, tag),
                                 () => world.Recv(vector, prev, tag));
            bool same = true;
            for (int i = 0; i < n; i++)
                same &= vector[i] == V(prev, i, c, n);
            Check.True(same, $"column {c} of double[{n},{n}] arrives in a double[{n}]");
            Check.Equal(n, st.Count, "column into a vector: Count");
            Check.Equal(prev, st.Source, "column: Source");
        }
        // a column into a row region of another array, the rest untouched
        var grid = Filled(n, n, Sentinel);
        Status rowSt = Exchange(() => world.Send(mine, Region.Columns(2, 1), next, 20),
                                () => world.Recv(grid, Region.Rows(5, 1), prev, 20));
        bool ok = true;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                ok &= grid[i, j] == (i == 5 ? V(prev, j, 2, n) : Sentinel);
        Check.True(ok, "a column arrives in a row, nothing else written");
        Check.Equal(n, rowSt.Count, "column into a row: Count in elements");
        Check.Equal((long)n * sizeof(double), rowSt.Bytes, "column into a row: Bytes");
        // a column into a column (two of them: a region of 2 columns is n x 2, row-major)
        grid = Filled(n, n, Sentinel);
        Exchange(() => world.Ssend(mine, Region.Columns(6, 2), next, 21),
                 () => world.Recv(grid, Region.Columns(0, 2), prev, 21));
        ok = true;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                ok &= grid[i, j] == (j < 2 ? V(prev, i, 6 + j, n) : Sentinel);
        Check.True(ok, "two columns (Ssend) into two columns, nothing else written");
        // rows into a vector and into rows
        var flat = Filled(3 * n, Sentinel);
        Exchange(() => world.Send(mine, Region.Rows(4, 3), next, 22),
                 () => world.Recv(flat, prev, 22));
        ok = true;
        for (int k = 0; k < 3 * n; k++)
            ok &= flat[k] == V(prev, 4 + k / n, k % n, n);
        Check.True(ok, "three rows arrive in order in a double[]");
        grid = Filled(n, n, Sentinel);
        Exchange(() => world.Send(flat, 0, 3 * n, next, 23),
                 () => world.Recv(grid, Region.Rows(0, 3), prev, 23));
        ok = true;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                ok &= grid[i, j] == (i < 3 ? V(PrevOf(prev), i + 4, j, n) : Sentinel);
        Check.True(ok, "a range into three rows");
        // an inner box of a 2-D array into an inner box of another shape
        grid = Filled(n, n, Sentinel);
        Exchange(() => world.Send(mine, new Region(new[] { 1, 2 }, new[] { 2, 6 }), next, 24),
                 () => world.Recv(grid, new Region(new[] { 3, 3 }, new[] { 4, 3 }), prev, 24));
        ok = true;
        int seen = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                bool inside = i >= 3 && i < 7 && j >= 3 && j < 6;
                if (!inside) {
                    ok &= grid[i, j] == Sentinel;
                    continue;
                }
                int k = (i - 3) * 3 + (j - 3);   // the k-th element of the receiving box
                ok &= grid[i, j] == V(prev, 1 + k / 6, 2 + k % 6, n);
                seen++;
            }
        Check.True(ok && seen == 12, "a 2 x 6 box arrives in a 4 x 3 box, row-major");
    }

    static int PrevOf(int r) => (r + size - 1) % size;

    /// <summary>A block of a double[,,] into a 2-D region and into a vector; a block of a 4-D
    /// array; zero-size regions.</summary>
    static void Blocks()
    {
        int d0 = 4, d1 = 5, d2 = 6;
        var cube = new double[d0, d1, d2];
        for (int i = 0; i < d0; i++)
            for (int j = 0; j < d1; j++)
                for (int k = 0; k < d2; k++)
                    cube[i, j, k] = rank * 1000000.0 + (i * d1 + j) * d2 + k;
        var block = new Region(new[] { 1, 2, 3 }, new[] { 2, 2, 3 });
        Check.Equal(12, block.Count, "3-D block Count");
        var plane = Filled(5, 5, Sentinel);
        Status st =
            Exchange(() => world.Send(cube, block, next, 30),
                     () => world.Recv(plane, new Region(new[] { 1, 1 }, new[] { 3, 4 }), prev, 30));
        bool ok = true;
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++) {
                bool inside = i >= 1 && i < 4 && j >= 1 && j < 5;
                if (!inside) {
                    ok &= plane[i, j] == Sentinel;
                    continue;
                }
                int n = (i - 1) * 4 + (j - 1);   // n-th element of the block, row-major
                int a = 1 + n / 6, b = 2 + n / 3 % 2, c = 3 + n % 3;
                ok &= plane[i, j] == prev * 1000000.0 + (a * d1 + b) * d2 + c;
            }
        Check.True(ok, "a 2x2x3 block of a double[,,] arrives in a 3x4 box of a double[,]");
        Check.Equal(12, st.Count, "block: Count");
        // a whole plane (contiguous) and a block back into a cube of another shape
        var other = new double[3, 2, 2];
        Exchange(() => world.Send(cube, new Region(new[] { 2, 0, 0 }, new[] { 1, 2, 6 }), next, 31),
                 () =>
                     world.Recv(other, new Region(new[] { 0, 0, 0 }, new[] { 3, 2, 2 }), prev, 31));
        ok = true;
        for (int n = 0; n < 12; n++)
            ok &=
                other[n / 4, n / 2 % 2, n % 2] == prev * 1000000.0 + (2 * d1 + n / 6) * d2 + n % 6;
        Check.True(ok, "two rows of a plane of a cube arrive in a double[3,2,2]");
        // 4-D
        var four = new int[3, 3, 3, 3];
        for (int n = 0; n < 81; n++)
            four[n / 27, n / 9 % 3, n / 3 % 3, n % 3] = rank * 1000 + n;
        var got = new int[8];
        Exchange(() => world.Send(four, new Region(new[] { 1, 1, 1, 1 }, new[] { 2, 2, 2, 1 }),
                                  next, 32),
                 () => world.Recv(got, prev, 32));
        ok = true;
        for (int n = 0; n < 8; n++) {
            int a = 1 + n / 4, b = 1 + n / 2 % 2, c = 1 + n % 2;
            ok &= got[n] == prev * 1000 + ((a * 3 + b) * 3 + c) * 3 + 1;
        }
        Check.True(ok, "a block of an int[,,,]");
        // zero-size regions: nothing travels
        var empty = Filled(4, 4, Sentinel);
        st =
            Exchange(() => world.Send(cube, new Region(new[] { 0, 0, 0 }, new[] { 0, 5, 6 }), next,
                                      33),
                     () => world.Recv(empty, new Region(new[] { 4, 0 }, new[] { 0, 4 }), prev, 33));
        Check.Equal(0, st.Count, "an empty region receives 0 elements");
        Check.Equal(0L, st.Bytes, "an empty region: 0 bytes");
        st = Exchange(() => world.Send(new double[5], Region.Strided(5, 0, 3), next, 34),
                      () => world.Recv(empty, Region.Columns(4, 0), prev, 34));
        Check.Equal(0, st.Count, "an empty Strided into empty columns at the end");
    }

    /// <summary>Strided regions, and regions of int and struct arrays.</summary>
    static void StridedAndTypes()
    {
        var src = new double[30];
        for (int i = 0; i < 30; i++)
            src[i] = rank * 1000 + i;
        var dst = Filled(30, Sentinel);
        Status st = Exchange(() => world.Send(src, Region.Strided(1, 6, 5), next, 40),
                             () => world.Recv(dst, Region.Strided(2, 6, 4), prev, 40));
        bool ok = true;
        for (int i = 0; i < 30; i++) {
            bool inside = i >= 2 && (i - 2) % 4 == 0 && (i - 2) / 4 < 6;
            ok &= dst[i] == (inside ? prev * 1000 + 1 + (i - 2) / 4 * 5 : Sentinel);
        }
        Check.True(ok, "Strided(1, 6, 5) into Strided(2, 6, 4), nothing else written");
        Check.Equal(6, st.Count, "Strided: Count");
        // stride 1 is a range; a column into strided elements
        double[,] field = Field(rank, 6, 6);
        dst = Filled(30, Sentinel);
        Exchange(() => world.Send(field, Region.Columns(3, 1), next, 41),
                 () => world.Recv(dst, Region.Strided(0, 6, 5), prev, 41));
        ok = true;
        for (int i = 0; i < 30; i++)
            ok &= dst[i] == (i % 5 == 0 ? V(prev, i / 5, 3, 6) : Sentinel);
        Check.True(ok, "a column into every fifth element");
        dst = Filled(30, Sentinel);
        Exchange(() => world.Send(src, Region.Strided(4, 10, 1), next, 42),
                 () => world.Recv(dst, Region.Strided(20, 10, 1), prev, 42));
        ok = true;
        for (int i = 0; i < 30; i++)
            ok &= dst[i] == (i >= 20 ? prev * 1000 + 4 + i - 20 : Sentinel);
        Check.True(ok, "stride 1 moves a range");
        // int[,]
        var ints = new int[7, 5];
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 5; j++)
                ints[i, j] = rank * 100 + i * 5 + j;
        var col = new int[7];
        st = Exchange(() => world.Send(ints, Region.Columns(4, 1), next, 43),
                      () => world.Recv(col, prev, 43));
        ok = true;
        for (int i = 0; i < 7; i++)
            ok &= col[i] == prev * 100 + i * 5 + 4;
        Check.True(ok, "a column of an int[,]");
        Check.Equal(7, st.Count, "int column: Count");
        Check.Equal(28L, st.Bytes, "int column: Bytes");
        // a struct array: a column of Cell[,] into a row of another
        var cells = new Cell[4, 6];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 6; j++)
                cells[i, j] = new Cell { Value = rank + i * 0.5, Id = i * 6 + j, Flag = (short)j };
        var into = new Cell[5, 4];
        st = Exchange(() => world.Send(cells, Region.Columns(5, 1), next, 44),
                      () => world.Recv(into, Region.Rows(2, 1), prev, 44));
        ok = true;
        for (int j = 0; j < 4; j++)
            ok &= into[2, j].Value == prev + j * 0.5 && into[2, j].Id == j * 6 + 5 &&
                  into[2, j].Flag == 5;
        for (int i = 0; i < 5; i++)
            if (i != 2)
                for (int j = 0; j < 4; j++)
                    ok &= into[i, j].Id == 0 && into[i, j].Value == 0;
        Check.True(ok, "a column of a struct array into a row of another");
        Check.Equal(4, st.Count, "struct column: Count in elements");
    }

    /// <summary>Isend, Issend and Irecv of regions of young arrays while another thread
    /// collects: every transfer keeps its array in place.</summary>
    static void NonBlockingWhileCollecting()
    {
        const int n = 12, rounds = 150;
        int bad = 0;
        using (new Collector())
        {
            for (int round = 0; round < rounds; round++) {
                double[,] src = Field(rank * 1000 + round, n, n);
                var dst = Filled(n, n, Sentinel);
                int c = round % n, tag = 50 + round % 7;
                Request r = world.Irecv(dst, Region.Columns(c, 1), prev, tag);
                Request s = round % 2 == 0 ? world.Isend(src, Region.Rows(c, 1), next, tag)
                                           : world.Issend(src, Region.Rows(c, 1), next, tag);
                var garbage = new byte[round % 5 * 1000 + 10];
                garbage[0] = 1;
                Status st = r.Wait();
                s.Wait();
                int from = prev * 1000 + round;
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < n; j++)
                        if (dst[i, j] != (j == c ? V(from, c, i, n) : Sentinel))
                            bad++;
                if (st.Count != n)
                    bad++;
            }
        }
        Check.Equal(0, bad, $"{rounds} non-blocking region exchanges while collecting");
        // Issend of a range, Ssend of a range
        var a = new int[10];
        for (int i = 0; i < 10; i++)
            a[i] = rank * 10 + i;
        var b = new int[10];
        Request rr = world.Irecv(b, 2, 5, prev, 60);
        Request ss = world.Issend(a, 3, 5, next, 60);
        Status got = rr.Wait();
        ss.Wait();
        bool ok = got.Count == 5 && b[0] == 0 && b[1] == 0 && b[7] == 0;
        for (int i = 0; i < 5; i++)
            ok &= b[2 + i] == prev * 10 + 3 + i;
        Check.True(ok, "Issend of a range");
        var c2 = new int[10];
        Exchange(() => world.Ssend(a, 1, 4, next, 61), () => world.Recv(c2, 6, 4, prev, 61));
        Check.True(c2[6] == prev * 10 + 1 && c2[9] == prev * 10 + 4 && c2[5] == 0,
                   "Ssend of a range");
    }

    /// <summary>A halo exchange of one field: its edges go out while its halos come in, in one
    /// Sendrecv each way; overlapping regions of one array are refused.</summary>
    static void HaloExchange()
    {
        const int ny = 6, nx = 5;
        var u = new double[ny, nx + 2];
        for (int i = 0; i < ny; i++)
            for (int j = 1; j <= nx; j++)
                u[i, j] = V(rank, i, j, nx + 2);
        // east edge to next, west halo from prev; west edge to prev, east halo from next
        int got =
            world.Sendrecv(u, Region.Columns(nx, 1), next, 70, u, Region.Columns(0, 1), prev, 70);
        Check.Equal(ny, got, "Sendrecv of regions returns the elements received");
        world.Sendrecv(u, Region.Columns(1, 1), prev, 71, u, Region.Columns(nx + 1, 1), next, 71);
        bool ok = true;
        for (int i = 0; i < ny; i++) {
            ok &= u[i, 0] == V(prev, i, nx, nx + 2);
            ok &= u[i, nx + 1] == V(next, i, 1, nx + 2);
            for (int j = 1; j <= nx; j++)
                ok &= u[i, j] == V(rank, i, j, nx + 2);
        }
        Check.True(ok, "halo exchange of one double[,] with column regions");
        // rows of one array (contiguous regions)
        var v = Field(rank, 5, 4);
        world.Sendrecv(v, Region.Rows(3, 1), next, 72, v, Region.Rows(0, 1), prev, 72);
        ok = true;
        for (int j = 0; j < 4; j++)
            ok &= v[0, j] == V(prev, 3, j, 4) && v[3, j] == V(rank, 3, j, 4);
        Check.True(ok, "halo exchange with row regions");
        // interleaved Strided regions of one array share no element
        var w = new double[20];
        for (int i = 0; i < 20; i++)
            w[i] = rank * 100 + i;
        world.Sendrecv(w, Region.Strided(0, 10, 2), next, 73, w, Region.Strided(1, 10, 2), prev,
                       73);
        ok = true;
        for (int i = 0; i < 20; i++)
            ok &= w[i] == (i % 2 == 0 ? rank * 100 + i : prev * 100 + i - 1);
        Check.True(ok, "even elements out, odd elements in");
        world.Sendrecv(w, Region.Strided(0, 4, 6), next, 74, w, Region.Strided(3, 4, 4), prev, 74);
        ok = true;
        for (int k = 0; k < 4; k++)
            ok &= w[3 + 4 * k] == prev * 100 + 6 * k && w[6 * k] == rank * 100 + 6 * k;
        Check.True(ok, "Strided(0, 4, 6) out and Strided(3, 4, 4) in: disjoint sets of one array");

        // overlapping regions of one array: refused, nothing moves
        var f = Field(rank, 6, 6);
        var e =
            Check.Throws<ArgumentException>(() => world.Sendrecv(f, Region.Columns(1, 2), next, 75,
                                                                 f, Region.Columns(2, 1), prev, 75),
                                            "overlapping column regions of one array");
        Check.True(e != null && e.ParamName == "recvRegion" && e.Message.Contains("[0, 2]"),
                   $"the refusal names recvRegion and an element of both: {e?.Message}");
        Check.Throws<ArgumentException>(
            () => world.Sendrecv(f, new Region(new[] { 0, 0 }, new[] { 3, 3 }), next, 75, f,
                                 new Region(new[] { 2, 2 }, new[] { 3, 3 }), prev, 75),
            "overlapping boxes");
        Check.Throws<ArgumentException>(() => world.Sendrecv(f, Region.Rows(0, 6), next, 75, f,
                                                             Region.Columns(5, 1), prev, 75),
                                        "rows and a column that cross");
        e = Check.Throws<ArgumentException>(
            () => world.Sendrecv(w, Region.Strided(0, 5, 4), next, 75, w, Region.Strided(2, 3, 6),
                                 prev, 75),
            "strided sets that meet (at 8)");
        Check.True(e != null && e.Message.Contains("[8]"), $"names element 8: {e?.Message}");
        var cube = new double[3, 3, 3];
        Check.Throws<ArgumentException>(
            () => world.Sendrecv(cube, new Region(new[] { 0, 0, 1 }, new[] { 3, 1, 1 }), next, 75,
                                 cube, new Region(new[] { 2, 0, 0 }, new[] { 1, 3, 3 }), prev, 75),
            "3-D boxes that meet at [2, 0, 1]");
        Check.True(f[0, 0] == V(rank, 0, 0, 6) && f[5, 5] == V(rank, 5, 5, 6),
                   "nothing moved for a refused Sendrecv");
        // the rank is usable after the refusals
        int n =
            world.Sendrecv(f, Region.Columns(5, 1), next, 76, f, Region.Columns(0, 1), prev, 76);
        Check.True(n == 6 && f[2, 0] == V(prev, 2, 5, 6), "a real Sendrecv after the refusals");
        // two arrays: any regions
        var g = Filled(6, 6, Sentinel);
        n = world.Sendrecv(f, Region.Columns(2, 3), next, 77, g, Region.Rows(1, 3), prev, 77);
        Check.Equal(18, n, "Sendrecv between two arrays: 18 elements");
        Check.True(g[1, 0] == V(prev, 0, 2, 6) && g[3, 5] == V(prev, 5, 4, 6) &&
                       g[0, 0] == Sentinel && g[4, 0] == Sentinel,
                   "three columns into three rows");
    }

    /// <summary>SendrecvReplace: a range and a region shift around the ring in place.</summary>
    static void Replace()
    {
        var a = new int[12];
        for (int i = 0; i < 12; i++)
            a[i] = rank * 100 + i;
        Status st = world.SendrecvReplace(a, 3, 5, next, 80, prev, 80);
        bool ok = st.Count == 5 && st.Source == prev && st.Tag == 80;
        for (int i = 0; i < 12; i++)
            ok &= a[i] == (i >= 3 && i < 8 ? prev * 100 + i : rank * 100 + i);
        Check.True(ok, $"SendrecvReplace of a range (Count {st.Count}, Source {st.Source})");
        double[,] f = Field(rank, 5, 5);
        st = world.SendrecvReplace(f, Region.Columns(1, 2), next, 81, prev, 81);
        ok = st.Count == 10 && st.Bytes == 80;
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++)
                ok &= f[i, j] == (j == 1 || j == 2 ? V(prev, i, j, 5) : V(rank, i, j, 5));
        Check.True(ok, "SendrecvReplace of a column region");
        var s = new double[16];
        for (int i = 0; i < 16; i++)
            s[i] = rank * 100 + i;
        st = world.SendrecvReplace(s, Region.Strided(1, 5, 3), next, 82, prev, 82);
        ok = st.Count == 5;
        for (int i = 0; i < 16; i++)
            ok &= s[i] == (i % 3 == 1 ? prev * 100 + i : rank * 100 + i);
        Check.True(ok, "SendrecvReplace of a Strided region");
        // ProcNull on both sides: nothing moves; on one side: a shift along an open chain
        st = world.SendrecvReplace(a, 0, 12, MP.ProcNull, 83, MP.ProcNull, 83);
        Check.True(st.Source == MP.ProcNull && st.Count == 0 && a[0] == rank * 100,
                   "SendrecvReplace with ProcNull both ways");
        int up = rank + 1 < size ? rank + 1 : MP.ProcNull, down = rank > 0 ? rank - 1 : MP.ProcNull;
        var chain = new long[4];
        for (int i = 0; i < 4; i++)
            chain[i] = rank * 10 + i;
        st = world.SendrecvReplace(chain, Region.Strided(0, 2, 2), up, 84, down, 84);
        if (down == MP.ProcNull)
            Check.True(st.Source == MP.ProcNull && st.Count == 0 && chain[0] == 0 && chain[2] == 2,
                       "open chain: the first rank receives nothing");
        else
            Check.True(st.Source == down && st.Count == 2 && chain[0] == down * 10 &&
                           chain[2] == down * 10 + 2 && chain[1] == rank * 10 + 1,
                       "open chain: elements 0 and 2 from below");
        // a shorter message fills the front
        var big = new int[8];
        for (int i = 0; i < 8; i++)
            big[i] = -1;
        Status shorter =
            Exchange(() => world.Send(new[] { 7, 8, 9 }, next, 85),
                     () => world.SendrecvReplace(big, 0, 8, MP.ProcNull, 85, prev, 85));
        Check.True(shorter.Count == 3 && big[0] == 7 && big[2] == 9 && big[3] == -1,
                   "SendrecvReplace: a shorter message fills the front");
        // refusals
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.SendrecvReplace(a, 10, 5, next, 86, prev, 86), "range past the end");
        Check.Throws<ArgumentException>(
            () => world.SendrecvReplace(f, default(Region), next, 86, prev, 86), "default region");
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.SendrecvReplace(f, Region.Rows(4, 2), next, 86, prev, 86),
            "rows past the end");
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.SendrecvReplace(a, 0, 2, size, 86, prev, 86), "dest out of range");
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.SendrecvReplace(a, 0, 2, next, -5, prev, 86), "negative sendTag");
        Check.Throws<ArgumentNullException>(
            () => world.SendrecvReplace(null, 0, 2, next, 86, prev, 86), "null array");
        st = world.SendrecvReplace(a, 0, 2, next, 87, prev, 87);
        Check.Equal(2, st.Count, "a real SendrecvReplace after the refusals");
    }

    /// <summary>A shorter message fills the front of the region and leaves the rest; a longer one
    /// raises MPException and writes nothing outside the region.</summary>
    static void ShorterAndLonger()
    {
        var g = Filled(5, 5, Sentinel);
        Status st = Exchange(() => world.Send(new double[] { 1, 2, 3 }, next, 90),
                             () => world.Recv(g, Region.Columns(1, 1), prev, 90));
        bool ok = st.Count == 3;
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++)
                ok &= g[i, j] == (j == 1 && i < 3 ? i + 1 : Sentinel);
        Check.True(ok, "a shorter message fills the front of a column, the rest untouched");
        // into a 3-D block: the front in row-major order
        var c = new double[3, 3, 3];
        Exchange(() => world.Send(new double[] { 1, 2, 3, 4, 5 }, next, 91),
                 () => world.Recv(c, new Region(new[] { 1, 1, 1 }, new[] { 2, 2, 2 }), prev, 91));
        Check.True(c[1, 1, 1] == 1 && c[1, 1, 2] == 2 && c[1, 2, 1] == 3 && c[1, 2, 2] == 4 &&
                       c[2, 1, 1] == 5 && c[2, 1, 2] == 0 && c[2, 2, 2] == 0,
                   "a shorter message fills a block's front in row-major order");
        // Sendrecv returns the number received
        var h = Filled(4, 4, Sentinel);
        int n = world.Sendrecv(new double[4, 4], Region.Rows(0, 1), next, 92, h,
                               Region.Columns(3, 1), prev, 92);
        Check.Equal(4, n, "Sendrecv regions: the count received");
        // longer: MPException, nothing outside the region written
        var t = Filled(6, 6, Sentinel);
        var tenValues = new double[10];
        for (int i = 0; i < 10; i++)
            tenValues[i] = 77;
        Check.Throws<MPException>(() =>
                                      Exchange(() => world.Send(tenValues, next, 93),
                                               () => world.Recv(t, Region.Columns(2, 1), prev, 93)),
                                  "a longer message into a column: truncation");
        ok = true;
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++)
                if (j != 2)
                    ok &= t[i, j] == Sentinel;
        Check.True(ok, "truncation: nothing outside the column written");
        var strided = Filled(20, Sentinel);
        Request r = world.Irecv(strided, Region.Strided(1, 4, 5), prev, 94);
        world.Isend(tenValues, next, 94).Wait();
        Check.Throws<MPException>(() => r.Wait(), "a longer message into a Strided Irecv");
        ok = true;
        for (int i = 0; i < 20; i++)
            if (i % 5 != 1)
                ok &= strided[i] == Sentinel;
        Check.True(ok, "truncation: nothing outside the strided elements written");
        // the rank is usable after
        st = Exchange(() => world.Send(Field(rank, 6, 6), Region.Columns(4, 1), next, 95),
                      () => world.Recv(t, Region.Columns(2, 1), prev, 95));
        Check.True(st.Count == 6 && t[5, 2] == V(prev, 5, 4, 6), "a real receive after truncation");
    }

    /// <summary>MP.ProcNull with every region form.</summary>
    static void ProcNull()
    {
        var g = Filled(3, 3, Sentinel);
        world.Send(g, Region.Columns(0, 1), MP.ProcNull, 100);
        world.Ssend(g, Region.Columns(0, 1), MP.ProcNull, 100);
        Status st = world.Recv(g, Region.Rows(1, 1), MP.ProcNull, 100);
        Check.True(st.Source == MP.ProcNull && st.Tag == MP.AnyTag && st.Count == 0,
                   "Recv of a region from ProcNull: the ProcNull status");
        st = world.Isend(g, Region.Rows(0, 1), MP.ProcNull, 100).Wait();
        st = world.Issend(g, Region.Rows(0, 1), MP.ProcNull, 100).Wait();
        st = world.Irecv(g, Region.Rows(0, 1), MP.ProcNull, 100).Wait();
        Check.True(st.Source == MP.ProcNull && st.Count == 0, "Irecv of a region from ProcNull");
        int n = world.Sendrecv(g, Region.Columns(0, 1), MP.ProcNull, 100, g, Region.Columns(2, 1),
                               MP.ProcNull, 100);
        Check.Equal(0, n, "Sendrecv of regions with ProcNull");
        Check.Equal(Sentinel, g[1, 1], "ProcNull wrote nothing");
        // the region is still checked
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.Send(g, Region.Columns(3, 1), MP.ProcNull, 100),
            "a bad region to ProcNull is refused");
    }

    /// <summary>Every documented refusal, each followed by a real transfer.</summary>
    static void Refusals()
    {
        var g = Field(rank, 4, 5);
        var v = new double[10];
        var cube = new double[2, 3, 4];
        ArgumentException e;
        // default(Region)
        e = Check.Throws<ArgumentException>(() => world.Send(g, default(Region), next, 1),
                                            "Send default(Region)");
        Check.True(e != null && e.ParamName == "region", "default(Region) names region");
        Check.Throws<ArgumentException>(() => world.Ssend(g, default(Region), next, 1), "Ssend");
        Check.Throws<ArgumentException>(() => world.Recv(g, default(Region), prev, 1), "Recv");
        Check.Throws<ArgumentException>(() => world.Isend(g, default(Region), next, 1), "Isend");
        Check.Throws<ArgumentException>(() => world.Issend(g, default(Region), next, 1), "Issend");
        Check.Throws<ArgumentException>(() => world.Irecv(g, default(Region), prev, 1), "Irecv");
        e = Check.Throws<ArgumentException>(
            () => world.Sendrecv(g, Region.Rows(0, 1), next, 1, g, default(Region), prev, 1),
            "Sendrecv default recvRegion");
        Check.True(e != null && e.ParamName == "recvRegion", "names recvRegion");
        e = Check.Throws<ArgumentException>(
            () => world.Sendrecv(g, default(Region), next, 1, g, Region.Rows(0, 1), prev, 1),
            "Sendrecv default sendRegion");
        Check.True(e != null && e.ParamName == "sendRegion", "names sendRegion");
        // wrong rank
        e = Check.Throws<ArgumentException>(() => world.Send(v, Region.Columns(0, 1), next, 1),
                                            "Columns of a double[]");
        Check.True(e != null && !(e is ArgumentOutOfRangeException) && e.ParamName == "region" &&
                       e.Message.Contains("2") && e.Message.Contains("1"),
                   $"wrong rank names both ranks: {e?.Message}");
        Check.Throws<ArgumentException>(() => world.Send(g, Region.Strided(0, 2, 2), next, 1),
                                        "Strided of a double[,]");
        e = Check.Throws<ArgumentException>(
            () => world.Recv(cube, new Region(new[] { 0, 0 }, new[] { 1, 1 }), prev, 1),
            "a 2-D region of a double[,,]");
        Check.True(e != null && e.GetType() == typeof(ArgumentException),
                   "exactly ArgumentException");
        // out of bounds, naming the dimension, the start, the size and the length
        var o = Check.Throws<ArgumentOutOfRangeException>(
            () => world.Send(g, new Region(new[] { 1, 3 }, new[] { 2, 3 }), next, 1),
            "a box past the end of dimension 1");
        Check.True(o != null && o.ParamName == "region" && o.Message.Contains("dimension 1") &&
                       o.Message.Contains("start 3") && o.Message.Contains("size 3") &&
                       o.Message.Contains("5"),
                   $"names dimension, start, size, length: {o?.Message}");
        o = Check.Throws<ArgumentOutOfRangeException>(
            () => world.Recv(g, Region.Rows(3, 2), prev, 1), "Rows past the end");
        Check.True(o != null && o.Message.Contains("dimension 0"), $"dimension 0: {o?.Message}");
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.Recv(g, Region.Columns(6, 0), prev, 1), "Columns start past the end");
        o = Check.Throws<ArgumentOutOfRangeException>(
            () => world.Isend(v, Region.Strided(1, 4, 3), next, 1), "Strided reaching 10");
        Check.True(o != null && o.Message.Contains("10") && o.Message.Contains("stride 3"),
                   $"Strided names the element reached: {o?.Message}");
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.Irecv(cube, new Region(new[] { 0, 0, 2 }, new[] { 2, 3, 3 }), prev, 1),
            "a 3-D box past the end of dimension 2");
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.Issend(v, Region.Strided(11, 0, 1), next, 1), "empty Strided past the end");
        // arrays: null, not transportable
        Check.Throws<ArgumentNullException>(() => world.Send(null, Region.Rows(0, 1), next, 1),
                                            "null array");
        Check.Throws<ArgumentNullException>(
            () => world.Sendrecv(g, Region.Rows(0, 1), next, 1, null, Region.Rows(0, 1), prev, 1),
            "null recvArray");
        Check.Throws<ArgumentException>(() => world.Send(new string[2, 2], Region.Rows(0, 1), next,
                                                         1),
                                        "a string[,] is not transportable");
        // ranks and tags
        Check.Throws<ArgumentOutOfRangeException>(() => world.Send(g, Region.Rows(0, 1), size, 1),
                                                  "dest out of range");
        Check.Throws<ArgumentOutOfRangeException>(
            () => world.Recv(g, Region.Rows(0, 1), size + 3, 1), "source out of range");
        Check.Throws<ArgumentOutOfRangeException>(() => world.Isend(g, Region.Rows(0, 1), next, -4),
                                                  "negative tag");
        // Issend range refusals
        Check.Throws<ArgumentOutOfRangeException>(() => world.Issend(v, 8, 5, next, 1),
                                                  "Issend range past the end");
        Check.Throws<ArgumentException>(() => world.Issend(g, 0, 1, next, 1),
                                        "Issend range of a 2-D array");
        // the rank is usable: a real transfer of a region
        var col = new double[4];
        Status st = Exchange(() => world.Send(g, Region.Columns(4, 1), next, 2),
                             () => world.Recv(col, prev, 2));
        Check.True(st.Count == 4 && col[3] == V(prev, 3, 4, 5), "a real transfer after refusals");
    }

    static int Main()
    {
        Values();
        ColumnsAndRows();
        Blocks();
        StridedAndTypes();
        NonBlockingWhileCollecting();
        HaloExchange();
        Replace();
        ShorterAndLonger();
        ProcNull();
        Refusals();
        return Check.FinishWithNoPinLeft("RegionTest");
    }
}

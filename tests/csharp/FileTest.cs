// FileTest: parallel files of managed arrays (API.md version 3, MPFile): every member, every
// documented exception (each refusal followed by a real operation on the same rank), the FileMode
// and FileAccess combinations, views of a global row-major array (rows, columns, an empty part,
// a displacement, a struct element type) checked byte for byte against the serial layout,
// explicit offsets in bytes and in view elements, non-blocking accesses, Dispose completing them,
// and no pin left at the end.
//   `FileTest.exe stress [rounds]`: the GC stress mode. Young arrays of three sizes (nursery,
// small old, large-object space) written and read back through IwriteAt/IreadAt, WriteAtAll and
// a view's WriteAll/ReadAll while another thread forces minor and major collections; every
// element checked every round.
// Files live in a per-job directory (rank 0 makes it under the system's temporary directory,
// removes it at the end).
using System;
using System.Collections.Generic;
using System.IO;
using System.MP;
using System.Runtime.CompilerServices;
using System.Threading;

static class FileTest
{
    static Intracomm world = MP.World;
    static int rank = world.Rank, size = world.Size;
    static string dir;

    static string Name(string leaf) => System.IO.Path.Combine(dir, leaf);

    static void MakeDirectory()
    {
        var id = new int[2];
        if (rank == 0) {
            id[0] = System.Diagnostics.Process.GetCurrentProcess().Id;
            id[1] = Environment.TickCount & 0xffff;
        }
        world.Bcast(id, 0);   // one name on every rank
        dir =
            System.IO.Path.Combine(System.IO.Path.GetTempPath(), $"motor-filetest-{id[0]}-{id[1]}");
        if (rank == 0)
            Directory.CreateDirectory(dir);
        world.Barrier();
    }

    static void RemoveDirectory()
    {
        world.Barrier();
        if (rank == 0)
            Directory.Delete(dir, true);
    }

    // ---- explicit offsets, no view ----

    static void Bytes()
    {
        string f = Name("bytes.bin");
        const int N = 100;
        var mine = new double[N];
        for (int i = 0; i < N; i++)
            mine[i] = rank * 1000 + i;
        using (MPFile file = MPFile.Open(world, f, FileMode.Create, FileAccess.ReadWrite))
        {
            Check.Equal(f, file.Path, "Path");
            Status st = file.WriteAt((long)rank * N * 8, mine, 0, N);
            Check.True(st.Count == N && st.Bytes == N * 8 && st.Source == MP.AnySource &&
                           st.Tag == MP.AnyTag,
                       "WriteAt's status: elements and bytes written, no envelope");
            file.Sync();
            world.Barrier();
            file.Sync();   // MPI's sync-barrier-sync: the others' writes visible
            Check.Equal((long)size * N * 8, file.Length, "Length after every rank's block");
            int other = (rank + 1) % size;
            var back = new double[N + 10];
            st = file.ReadAt((long)other * N * 8, back, 5, N);
            bool ok = st.Count == N && st.Bytes == N * 8;
            for (int i = 0; i < N; i++)
                ok &= back[5 + i] == other * 1000 + i;
            ok &= back[0] == 0 && back[N + 5] == 0;
            Check.True(ok, "ReadAt of another rank's block into array[5..]");

            // the end of the file: fewer elements, exact bytes (a partial element counts 0)
            st = file.ReadAt((long)size * N * 8 - 20, back, 0, 10);
            Check.True(st.Count == 2 && st.Bytes == 20,
                       $"ReadAt at the end: 2 elements, 20 bytes ({st.Count}, {st.Bytes})");
            st = file.ReadAt((long)size * N * 8 + 100, back, 0, 10);
            Check.True(st.Count == 0 && st.Bytes == 0, "ReadAt past the end: nothing");

            // collective forms
            world.Barrier();
            var ints = new int[] { rank, rank + 1, rank + 2 };
            st = file.WriteAtAll(1000000 + rank * 12, ints, 0, 3);
            Check.True(st.Count == 3 && st.Bytes == 12, "WriteAtAll's status");
            var got = new int[3 * size];
            st = file.ReadAtAll(1000000, got, 0, 3 * size);
            ok = st.Count == 3 * size;
            for (int r = 0; r < size; r++)
                ok &= got[3 * r] == r && got[3 * r + 2] == r + 2;
            Check.True(ok, "ReadAtAll sees every rank's WriteAtAll");
            // a rank may take no part in the data of a collective
            st = file.ReadAtAll(0, got, 0, rank == 0 ? 1 : 0);
            Check.True(st.Count == (rank == 0 ? 1 : 0), "ReadAtAll with count 0 on some ranks");
            // the end of the file in a collective read: what was read, not what was asked
            long length = file.Length;
            var past = new int[8];
            st = file.ReadAtAll(length - 12 + (rank == 0 ? 0 : 12), past, 0, 8);
            Check.True(rank == 0 ? st.Count == 3 && st.Bytes == 12 : st.Count == 0 && st.Bytes == 0,
                       $"ReadAtAll at the end: {st.Count} elements, {st.Bytes} bytes");

            // multi-dimensional arrays: arrayOffset and count are row-major linear indices
            var grid = new long[3, 4];
            st = file.ReadAt(8, grid, 5, 3);   // reads rank 0's elements 1..3 as longs
            Check.True(st.Count == 3 && grid[1, 1] == BitConverter.DoubleToInt64Bits(1.0) &&
                           grid[1, 3] == BitConverter.DoubleToInt64Bits(3.0) && grid[1, 0] == 0,
                       "ReadAt into a long[3,4] at linear index 5");

            // SetLength: truncate and extend with zeros
            world.Barrier();
            file.SetLength(16);
            Check.Equal(16L, file.Length, "SetLength shrinks");
            file.SetLength(64);
            Check.Equal(64L, file.Length, "SetLength extends");
            var tail = new byte[48];
            tail[0] = 7;
            st = file.ReadAt(16, tail, 0, 48);
            Check.True(st.Count == 48 && Array.TrueForAll(tail, b => b == 0),
                       "extended bytes read as zeros");
            world.Barrier();
        }
    }

    // ---- non-blocking ----

    static void NonBlocking()
    {
        string f = Name("nb.bin");
        const int N = 4096;
        var a = new int[N];
        for (int i = 0; i < N; i++)
            a[i] = rank * N + i;
        using (MPFile file = MPFile.Open(world, f, FileMode.Create, FileAccess.ReadWrite))
        {
            Request w = file.IwriteAt((long)rank * N * 4, a, 0, N);
            Status st = w.Wait();
            Check.True(st.Count == N && st.Bytes == N * 4 && st.Source == MP.AnySource,
                       "IwriteAt's Wait: elements and bytes");
            file.Sync();
            world.Barrier();
            file.Sync();
            var b = new int[N];
            int other = (rank + size - 1) % size;
            Request r = file.IreadAt((long)other * N * 4, b, 0, N);
            st = r.Wait();
            bool ok = st.Count == N;
            for (int i = 0; i < N; i++)
                ok &= b[i] == other * N + i;
            Check.True(ok, "IreadAt reads another rank's block");
            // several at once, completed together
            var parts = new int [4][];
            var reqs = new Request[4];
            for (int k = 0; k < 4; k++) {
                parts[k] = new int[N / 4];
                reqs[k] = file.IreadAt((long)rank * N * 4 + k * N, parts[k], 0, N / 4);
            }
            Status[] all = Request.WaitAll(reqs);
            ok = true;
            for (int k = 0; k < 4; k++)
                for (int i = 0; i < N / 4; i++)
                    ok &= parts[k][i] == rank * N + k * N / 4 + i;
            Check.True(ok && all[3].Count == N / 4, "four IreadAt completed by WaitAll");
            // at the end of the file
            var c = new int[8];
            st = file.IreadAt((long)size * N * 4 - 8, c, 0, 8).Wait();
            Check.True(st.Count == 2 && st.Bytes == 8, "IreadAt at the end: 2 elements");
            world.Barrier();
        }
        // Dispose completes an outstanding access
        var d = new int[N];
        Request left;
        using (MPFile file = MPFile.Open(world, f, FileMode.Open, FileAccess.Read)) left =
            file.IreadAt((long)rank * N * 4, d, 0, N);
        Status ls = left.Wait();
        bool same = ls.Count == N;
        for (int i = 0; i < N; i++)
            same &= d[i] == rank * N + i;
        Check.True(same, "an IreadAt left to Dispose completed with its data");
    }

    // ---- views ----

    // Rows [first, first + count) of n for rank r of p (the last ranks may get one fewer).
    static void Split(int n, int r, int p, out int first, out int count)
    {
        count = n / p + (r < n % p ? 1 : 0);
        first = r * (n / p) + Math.Min(r, n % p);
    }

    static double Value(int i, int j) => i * 1000.0 + j + 0.25;

    static void CheckSerial(string f, int n, int m, long header, string what)
    {
        // every rank reads the whole file without a view: the serial double[n, m] after header
        using (MPFile file = MPFile.Open(world, f, FileMode.Open, FileAccess.Read))
        {
            Check.Equal(header + (long)n * m * 8, file.Length, what + ": the file's length");
            var whole = new double[n, m];
            Status st = file.ReadAt(header, whole, 0, n * m);
            bool ok = st.Count == n * m;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < m; j++)
                    ok &= whole[i, j] == Value(i, j);
            Check.True(ok, what + ": equals the serial row-major array");
        }
    }

    static void Views()
    {
        const int n = 7, m = 5;
        // rows: each rank's block of rows, a double[rows, m]
        string f = Name("rows.bin");
        int first, rows;
        Split(n, rank, size, out first, out rows);
        var block = new double[rows, m];
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < m; j++)
                block[i, j] = Value(first + i, j);
        using (MPFile file = MPFile.Open(world, f, FileMode.Create, FileAccess.Write))
        {
            file.SetView(0, typeof(double), new[] { n, m },
                         new Region(new[] { first, 0 }, new[] { rows, m }));
            file.WriteAll(block);
        }
        CheckSerial(f, n, m, 0, "blocks of rows");

        // columns (a true subarray), behind a 16-byte header, read back by view with ReadAll
        f = Name("columns.bin");
        int col, cols;
        Split(m, rank, size, out col, out cols);
        var part = new double[n * cols];   // a 1-D array holding the part row-major
        for (int i = 0; i < n; i++)
            for (int j = 0; j < cols; j++)
                part[i * cols + j] = Value(i, col + j);
        using (MPFile file = MPFile.Open(world, f, FileMode.Create, FileAccess.ReadWrite))
        {
            if (rank == 0)
                file.WriteAt(0, new long[] { n, m }, 0, 2);   // the header, before the view
            file.SetView(16, typeof(double), new[] { n, m },
                         new Region(new[] { 0, col }, new[] { n, cols }));
            file.WriteAll(part);
            file.Sync();
            world.Barrier();
            file.Sync();
            var back = new double[n, cols];
            file.ReadAll(back);
            bool ok = true;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < cols; j++)
                    ok &= back[i, j] == Value(i, col + j);
            Check.True(ok, "ReadAll of a column block into a double[n, cols]");
            // explicit offsets count elements of this rank's part
            if (cols > 0) {
                var two = new double[2];
                Status st = file.ReadAt(cols, two, 0, 2);   // the part's row 1
                Check.True(st.Count == 2 && two[0] == Value(1, col) &&
                               (cols < 2 ? two[1] == Value(2, col) : two[1] == Value(1, col + 1)),
                           "ReadAt with a view: offsets in elements of this rank's part");
            }
        }
        CheckSerial(f, n, m, 16, "column blocks behind a header");

        // an empty part on the last rank (when there are several) and Region.Rows
        f = Name("empty.bin");
        int owners = size > 1 ? size - 1 : 1;
        int r0 = 0, rc = 0;
        if (rank < owners)
            Split(n, rank, owners, out r0, out rc);
        var mine = new double[rc * m];
        for (int i = 0; i < rc; i++)
            for (int j = 0; j < m; j++)
                mine[i * m + j] = Value(r0 + i, j);
        using (MPFile file = MPFile.Open(world, f, FileMode.Create, FileAccess.Write))
        {
            file.SetView(0, typeof(double), new[] { n, m },
                         rc > 0 ? Region.Rows(r0, rc) : new Region(new[] { 0, 0 }, new[] { 0, m }));
            file.WriteAll(mine);
        }
        CheckSerial(f, n, m, 0, "with an empty part");

        // a struct element type (12 bytes): a view's element, not its words
        f = Name("struct.bin");
        var cells = new Cell[3];
        for (int k = 0; k < 3; k++)
            cells[k] = new Cell { A = rank, B = k, C = rank * 10 + k };
        using (MPFile file = MPFile.Open(world, f, FileMode.Create, FileAccess.ReadWrite))
        {
            file.SetView(0, typeof(Cell), new[] { size * 3 },
                         new Region(new[] { rank * 3 }, new[] { 3 }));
            file.WriteAll(cells);
            file.Sync();
            world.Barrier();
            file.Sync();
            Check.Equal((long)size * 36, file.Length, "12-byte elements: the length");
            var one = new Cell[1];
            Status st = file.ReadAt(2, one, 0, 1);
            Check.True(st.Count == 1 && st.Bytes == 12 && one[0].C == rank * 10 + 2,
                       "a struct view: offset 2 is this part's element 2");
            // a new view replaces the old one: the whole array, every rank
            file.SetView(0, typeof(Cell), new[] { size * 3 },
                         new Region(new[] { 0 }, new[] { size * 3 }));
            var everything = new Cell[size * 3];
            file.ReadAll(everything);
            bool ok = true;
            for (int r = 0; r < size; r++)
                ok &= everything[3 * r + 1].A == r && everything[3 * r + 1].B == 1;
            Check.True(ok, "a second SetView replaces the first");
        }
    }

    struct Cell
    {
        public int A, B, C;
    }

    // ---- modes and access ----

    static void Modes()
    {
        string f = Name("modes.bin");
        var four = new int[] { 1, 2, 3, 4 };
        using (MPFile file =
                   MPFile.Open(world, f, FileMode.CreateNew, FileAccess.Write)) if (rank == 0)
            file.WriteAt(0, four, 0, 4);
        Check.Throws<IOException>(() => MPFile.Open(world, f, FileMode.CreateNew, FileAccess.Write),
                                  "CreateNew of an existing file");
        using (MPFile file = MPFile.Open(world, f, FileMode.OpenOrCreate, FileAccess.ReadWrite))
            Check.Equal(16L, file.Length, "OpenOrCreate keeps the data");
        using (MPFile file = MPFile.Open(world, f, FileMode.Append, FileAccess.Write))
        {
            Check.Equal(16L, file.Length, "Append keeps the data");
            world.Barrier();
            if (rank == 0)
                file.WriteAt(16, four, 0, 2);   // explicit offsets are as they are
            world.Barrier();
        }
        using (MPFile file = MPFile.Open(world, f, FileMode.Open, FileAccess.Read))
        {
            Check.Equal(24L, file.Length, "Append: explicit offsets write where they say");
            var back = new int[6];
            file.ReadAt(0, back, 0, 6);
            Check.True(back[0] == 1 && back[3] == 4 && back[4] == 1 && back[5] == 2,
                       "Open/Read sees the data");
            file.Sync();   // nothing to flush on a read-only file: no error
        }
        using (MPFile file = MPFile.Open(world, f, FileMode.Truncate, FileAccess.ReadWrite))
            Check.Equal(0L, file.Length, "Truncate empties");
        using (MPFile file = MPFile.Open(world, f, FileMode.Create, FileAccess.Write))
        {
            if (rank == 0)
                file.WriteAt(0, four, 0, 4);
        }
        using (MPFile file = MPFile.Open(world, f, FileMode.Create, FileAccess.ReadWrite))
            Check.Equal(0L, file.Length, "Create truncates an existing file");
        string fresh = Name("fresh-read.bin");
        using (MPFile file = MPFile.Open(world, fresh, FileMode.OpenOrCreate, FileAccess.Read))
            Check.Equal(0L, file.Length, "OpenOrCreate with Read creates an empty file");
        world.Barrier();
        if (rank == 0) {
            Check.True(File.Exists(fresh), "the file OpenOrCreate made exists");
            MPFile.Delete(fresh);
            Check.True(!File.Exists(fresh), "Delete removes it");
            MPFile.Delete(fresh);   // as File.Delete: a missing file is no error
            Check.True(true, "Delete of a missing file");
            Check.Throws<DirectoryNotFoundException>(() => MPFile.Delete(Name("no-such-dir/x.bin")),
                                                     "Delete in a missing directory");
            Check.Throws<ArgumentNullException>(() => MPFile.Delete(null), "Delete(null)");
            Check.Throws<ArgumentException>(() => MPFile.Delete(""), "Delete(\"\")");
        }
        world.Barrier();
    }

    // ---- refusals: each followed by a real operation ----

    static void Refusals()
    {
        string f = Name("refusals.bin");
        string missing = Name("missing.bin");
        var e = Check.Throws<FileNotFoundException>(
            () => MPFile.Open(world, missing, FileMode.Open, FileAccess.Read),
            "Open of a missing file, on every rank");
        Check.True(e != null && e.FileName == missing,
                   "FileNotFoundException.FileName is the path");
        Check.Throws<FileNotFoundException>(
            () => MPFile.Open(world, missing, FileMode.Truncate, FileAccess.Write),
            "Truncate of a missing file");
        Check.Throws<DirectoryNotFoundException>(
            () => MPFile.Open(world, Name("nowhere/x.bin"), FileMode.Create, FileAccess.Write),
            "a missing directory");
        Check.Throws<UnauthorizedAccessException>(
            () =>
                MPFile.Open(world, "/sys/motor-filetest-denied", FileMode.Create, FileAccess.Write),
            "no permission (a file in /sys, refused even to root)");
        Check.Throws<IOException>(() =>
                                      MPFile.Open(world, dir, FileMode.Open, FileAccess.ReadWrite),
                                  "a directory opened as a file");
        if (size > 1) {
            // one outcome when only some ranks fail: rank 0's path exists, the others' does not
            using (MPFile made = MPFile.Open(world, f, FileMode.Create, FileAccess.Write)) { }
            string mine = rank == 0 ? f : missing;
            var failed = Check.Throws<FileNotFoundException>(
                () => MPFile.Open(world, mine, FileMode.Open, FileAccess.Read),
                "an open that fails on some ranks raises on every rank");
            Check.True(failed != null && failed.Message.Contains("rank 1"),
                       "the message names the lowest rank that failed");
        }
        Check.Throws<ArgumentNullException>(
            () => MPFile.Open(null, f, FileMode.Create, FileAccess.Write), "null comm");
        Check.Throws<ArgumentNullException>(
            () => MPFile.Open(world, null, FileMode.Create, FileAccess.Write), "null path");
        Check.Throws<ArgumentException>(
            () => MPFile.Open(world, "", FileMode.Create, FileAccess.Write), "empty path");
        Check.Throws<ArgumentOutOfRangeException>(
            () => MPFile.Open(world, f, (FileMode)42, FileAccess.Write), "a mode out of range");
        Check.Throws<ArgumentOutOfRangeException>(
            () => MPFile.Open(world, f, FileMode.Create, (FileAccess)0), "an access out of range");
        Check.Throws<ArgumentException>(() => MPFile.Open(world, f, FileMode.Append,
                                                          FileAccess.ReadWrite),
                                        "Append needs Write alone");
        Check.Throws<ArgumentException>(
            () => MPFile.Open(world, f, FileMode.Create, FileAccess.Read), "Create with Read");

        MPFile file = MPFile.Open(world, f, FileMode.Create, FileAccess.Write);
        var a = new double[10];
        Check.Throws<NotSupportedException>(() => file.ReadAt(0, a, 0, 1),
                                            "reading a file opened with Write");
        Check.Throws<NotSupportedException>(() => file.IreadAt(0, a, 0, 1), "IreadAt on Write");
        Check.Throws<ArgumentNullException>(() => file.WriteAt(0, null, 0, 1), "null array");
        Check.Throws<ArgumentOutOfRangeException>(() => file.WriteAt(0, a, 11, 0),
                                                  "arrayOffset past the end");
        Check.Throws<ArgumentOutOfRangeException>(() => file.WriteAt(0, a, 5, 6),
                                                  "count past the end");
        Check.Throws<ArgumentOutOfRangeException>(() => file.WriteAt(0, a, 0, -1),
                                                  "negative count");
        Check.Throws<ArgumentOutOfRangeException>(() => file.WriteAt(-8, a, 0, 1),
                                                  "negative offset");
        Check.Throws<ArgumentException>(() => file.WriteAt(0, new string[2], 0, 1),
                                        "an array of references");
        Check.Throws<ArgumentOutOfRangeException>(() => file.SetLength(-1), "negative length");
        Check.Throws<InvalidOperationException>(() => file.WriteAll(a), "WriteAll with no view");
        Check.True(file.WriteAt(rank * 80, a, 0, 10).Count == 10, "usable after the refusals");

        // views
        var all = new Region(new[] { rank * 10 }, new[] { 10 });
        Check.Throws<ArgumentNullException>(() => file.SetView(0, null, new[] { size * 10 }, all),
                                            "null elementType");
        Check.Throws<ArgumentNullException>(() => file.SetView(0, typeof(double), null, all),
                                            "null globalSizes");
        Check.Throws<ArgumentException>(
            () => file.SetView(0, typeof(string), new[] { size * 10 }, all), "string elements");
        Check.Throws<ArgumentException>(
            () => file.SetView(0, typeof(void), new[] { size * 10 }, all), "void elements");
        Check.Throws<ArgumentException>(() => file.SetView(0, typeof(double), new[] { size * 10 },
                                                           default(Region)),
                                        "default(Region)");
        Check.Throws<ArgumentException>(() => file.SetView(0, typeof(double), new[] { size * 10 },
                                                           Region.Strided(0, 2, 3)),
                                        "a strided part");
        Check.Throws<ArgumentException>(
            () => file.SetView(0, typeof(double), new[] { size, 10 }, all), "ranks differ");
        Check.Throws<ArgumentOutOfRangeException>(
            () => file.SetView(0, typeof(double), new[] { size * 10 },
                               new Region(new[] { size * 10 - 5 }, new[] { 10 })),
            "a part past the end");
        Check.Throws<ArgumentOutOfRangeException>(
            () => file.SetView(-1, typeof(double), new[] { size * 10 }, all),
            "negative displacement");
        Check.Throws<ArgumentOutOfRangeException>(
            () => file.SetView(0, typeof(double), new[] { -3 }, all), "a negative global size");
        file.SetView(0, typeof(double), new[] { size * 10 }, all);
        Check.Throws<ArgumentException>(() => file.WriteAll(new double[9]),
                                        "WriteAll of the wrong length");
        Check.Throws<ArgumentException>(() => file.WriteAll(new long[10]),
                                        "WriteAll of another element type");
        Check.Throws<ArgumentException>(() => file.WriteAt(0, new float[4], 0, 1),
                                        "WriteAt with a view: another element type");
        Check.Throws<NotSupportedException>(() => file.ReadAll(a), "ReadAll on Write");
        file.WriteAll(a);
        Check.True(true, "WriteAll after the refusals");
        file.Dispose();
        file.Dispose();   // idempotent
        Check.True(true, "Dispose twice");
        Check.Throws<ObjectDisposedException>(() => file.WriteAt(0, a, 0, 1), "use after Dispose");
        Check.Throws<ObjectDisposedException>(() =>
                                              { long unused = file.Length; },
                                              "Length after Dispose");
        Check.Throws<ObjectDisposedException>(() => file.Sync(), "Sync after Dispose");

        using (MPFile ro = MPFile.Open(world, f, FileMode.Open, FileAccess.Read))
        {
            Check.Throws<NotSupportedException>(() => ro.WriteAt(0, a, 0, 1),
                                                "writing a file opened with Read");
            Check.Throws<NotSupportedException>(() => ro.IwriteAt(0, a, 0, 1), "IwriteAt on Read");
            Check.Throws<NotSupportedException>(() => ro.SetLength(0), "SetLength on Read");
            Check.Equal(10, ro.ReadAt(rank * 80, a, 0, 10).Count, "usable after the refusals");
            // the file ends inside a part: ReadAll says so
            ro.SetView(0, typeof(double), new[] { size * 10 + 1 },
                       new Region(new[] { rank * 10 + 1 }, new[] { 10 }));
            if (rank == size - 1)
                Check.Throws<IOException>(() => ro.ReadAll(a), "ReadAll past the end");
            else
                ro.ReadAll(a);
        }
    }

    // ---- the GC stress mode ----

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Churn(int n)
    {
        for (int g = 0; g < n; g++)
            GC.KeepAlive(new byte[16 + g % 200]);
    }

    static int Stress(int rounds)
    {
        MakeDirectory();
        string f = Name("stress.bin");
        int[] sizes = { 200, 3000, 40000 };   // nursery, small (old once promoted), large objects
        using (var collector = new PacedCollector()) using (
            MPFile file = MPFile.Open(
                world, f, FileMode.Create,
                FileAccess.ReadWrite)) using (MPFile viewed =
                                                  MPFile.Open(world, Name("stress-view.bin"),
                                                              FileMode.Create,
                                                              FileAccess.ReadWrite))
        {
            bool ok = true;
            for (int round = 0; round < rounds; round++) {
                int n = sizes[round % 3];
                long bases = (long)rank * n * 8;
                // young arrays, written without waiting, collections in between
                var w = new long[n];
                for (int i = 0; i < n; i++)
                    w[i] = round * 1000003L + rank * 7919L + i;
                Request wr = file.IwriteAt(bases, w, 0, n);
                Churn(2000);
                GC.Collect(round % 2 == 0 ? 0 : 2);
                ok &= wr.Wait().Count == n;
                var r = new long[n];
                Request rr = file.IreadAt(bases, r, 0, n);
                Churn(2000);
                ok &= rr.Wait().Count == n;
                for (int i = 0; i < n; i++)
                    ok &= r[i] == w[i];
                // collective, blocking, then through a view
                var c = new long[n];
                file.ReadAtAll(bases, c, 0, n);
                for (int i = 0; i < n; i++)
                    ok &= c[i] == w[i];
                viewed.SetView(0, typeof(long), new[] { size, n },
                               new Region(new[] { rank, 0 }, new[] { 1, n }));
                var v = new long[1, n];
                for (int i = 0; i < n; i++)
                    v[0, i] = -w[i];
                viewed.WriteAll(v);
                Churn(1000);
                var back = new long[n];
                viewed.ReadAll(back);
                for (int i = 0; i < n; i++)
                    ok &= back[i] == -w[i];
            }
            Check.True(ok, $"{rounds} rounds of accesses of young arrays during collections");
        }
        RemoveDirectory();
        return Check.FinishWithNoPinLeft("FileTest stress");
    }

    // `FileTest.exe leak DIR`: writes DIR/leaked.bin (each rank its long at rank * 8, through a
    // view; a non-blocking write too) and exits without Dispose; `FileTest.exe leaked DIR` then
    // checks the data the close at exit kept (file_exit_close.sh runs both).
    static int Leak(string where)
    {
        MPFile f = MPFile.Open(world, System.IO.Path.Combine(where, "leaked.bin"), FileMode.Create,
                               FileAccess.Write);
        f.SetView(0, typeof(long), new[] { 2 * size }, new Region(new[] { rank }, new[] { 1 }));
        f.WriteAll(new long[] { 1000 + rank });
        f.IwriteAt(0, new long[] { 0 }, 0, 0);   // (nothing: a request left to the end)
        var g = MPFile.Open(world, System.IO.Path.Combine(where, "leaked.bin"), FileMode.Open,
                            FileAccess.Write);
        Check.Equal(1, g.WriteAt((size + rank) * 8, new long[] { 2000 + rank }, 0, 1).Count,
                    "a write to a file left open");
        return Check.Finish("FileTest leak");
    }

    static int Leaked(string where)
    {
        using (MPFile f = MPFile.Open(world, System.IO.Path.Combine(where, "leaked.bin"),
                                      FileMode.Open, FileAccess.Read))
        {
            Check.Equal(16L * size, f.Length, "the files closed at exit: the length");
            var all = new long[2 * size];
            f.ReadAt(0, all, 0, 2 * size);
            bool ok = true;
            for (int r = 0; r < size; r++)
                ok &= all[r] == 1000 + r && all[size + r] == 2000 + r;
            Check.True(ok, "the files closed at exit: every rank's data intact");
        }
        return Check.Finish("FileTest leaked");
    }

    static int Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "stress")
            return Stress(args.Length > 1 ? int.Parse(args[1]) : 60);
        if (args.Length > 1 && args[0] == "leak")
            return Leak(args[1]);
        if (args.Length > 1 && args[0] == "leaked")
            return Leaked(args[1]);
        MakeDirectory();
        Bytes();
        NonBlocking();
        Views();
        Modes();
        Refusals();
        // a file left open: closed when MPI ends, with a warning (its data written)
        MPFile leaked = MPFile.Open(world, Name("leaked.bin"), FileMode.Create, FileAccess.Write);
        leaked.WriteAt(rank * 8, new long[] { rank }, 0, 1);
        GC.KeepAlive(leaked);
        RemoveDirectory();   // (an open file's name may go: its data is the file's until closed)
        return Check.FinishWithNoPinLeft("FileTest");
    }
}

// P2PTest — every OPI point-to-point member of System.MP (API.md), at any number of ranks.
// Sends run on a second thread so that a rank can also talk to itself (1
// rank, MPI_THREAD_MULTIPLE).
using System;
using System.Linq;
using System.MP;

struct Inner
{
    public short A;
    public byte B;
}
struct Sample
{
    public double X;
    public int Id;
    public Inner In;
}

class Base
{
    public long BaseValue;
    public int BaseFlag;
}
// inherited fields, no references
class Derived : Base
{
    public double Extra;
    public char Letter;
}
struct Vec3
{
    public double X, Y, Z;
}

static class P2PTest
{
    static Intracomm world = Ring.World;
    static int rank = Ring.Rank, size = Ring.Size, next = Ring.Next, prev = Ring.Prev;

    static Status Exchange(Action send, Func<Status> recv) => Ring.Exchange(send, recv);

    static void RingArray<T>(Func<int, int, T> value, int length, string name, int elementBytes)
    {
        var send = new T[length];
        for (int i = 0; i < length; i++)
            send[i] = value(rank, i);
        var recv = new T[length];
        int tag = 100 + name.Length;
        Status st = Exchange(() => world.Send(send, next, tag), () => world.Recv(recv, prev, tag));
        bool same = true;
        for (int i = 0; i < length; i++)
            same &= recv[i].Equals(value(prev, i));
        Check.True(same, $"{name}[{length}] ring data");
        Check.Equal(prev, st.Source, $"{name} status source");
        Check.Equal(tag, st.Tag, $"{name} status tag");
        Check.Equal(length, st.Count, $"{name} status count (elements)");
        Check.Equal((long)length * elementBytes, st.Bytes, $"{name} status bytes");
        Check.True(!st.Cancelled, $"{name} not cancelled");
    }

    static unsafe int SampleSize() => sizeof(Sample);

    static void PrimitiveArrays()
    {
        foreach (int n in new[] { 1, 17, 3000, 70000 }) {   // eager, LOS-sized and rendezvous sizes
            RingArray((r, i) => (byte)(r * 31 + i), n, "byte", 1);
            RingArray((r, i) => (sbyte)(r - i), n, "sbyte", 1);
            RingArray((r, i) => (short)(r * 1000 - i), n, "short", 2);
            RingArray((r, i) => (ushort)(r * 1000 + i), n, "ushort", 2);
            RingArray((r, i) => r * 100000 - i, n, "int", 4);
            RingArray((r, i) => (uint)(r * 100000 + i), n, "uint", 4);
            RingArray((r, i) => ((long)r << 40) - i, n, "long", 8);
            RingArray((r, i) => ((ulong)r << 40) + (ulong)i, n, "ulong", 8);
            RingArray((r, i) => r + i * 0.5f, n, "float", 4);
            RingArray((r, i) => r * 1e6 + i / 3.0, n, "double", 8);
            RingArray((r, i) => (char)('A' + (r + i) % 26), n, "char", 2);
            RingArray((r, i) => ((r + i) & 1) == 0, n, "bool", 1);
        }
        RingArray((r, i) => new Sample { X = r + i * 0.25, Id = i,
                                         In = new Inner { A = (short)r, B = (byte)i } },
                  500, "struct Sample", SampleSize());
    }

    static void SingleObjects()
    {
        var d = new Derived { BaseValue = 1000 + rank, BaseFlag = -rank, Extra = rank * 0.5,
                              Letter = (char)('a' + rank) };
        var got = new Derived();
        Status st = Exchange(() => world.Send(d, next, 7), () => world.Recv(got, prev, 7));
        Check.True(got.BaseValue == 1000 + prev && got.BaseFlag == -prev &&
                       got.Extra == prev * 0.5 && got.Letter == (char)('a' + prev),
                   "object with inherited fields");
        Check.Equal(1, st.Count, "object status count");

        object boxed = new Vec3 { X = rank, Y = rank * 2, Z = -rank };
        var v = new Vec3();
        Exchange(() => world.Send(boxed, next, 8),
                 () =>
                 {
                     v = world.Recv<Vec3>(prev, 8, out Status s);
                     return s;
                 });
        Check.True(v.X == prev && v.Y == prev * 2 && v.Z == -prev,
                   "boxed struct sent, received with Recv<T>");
    }

    static void MultiDimensional()
    {
        var m = new double[30, 40];
        for (int i = 0; i < 30; i++)
            for (int j = 0; j < 40; j++)
                m[i, j] = rank * 10000 + i * 100 + j;
        var r = new double[30, 40];
        Status st = Exchange(() => world.Send(m, next, 9), () => world.Recv(r, prev, 9));
        Check.True(r[0, 0] == prev * 10000 && r[29, 39] == prev * 10000 + 2939 &&
                       r[7, 3] == prev * 10000 + 703,
                   "double[,] row-major");
        Check.Equal(1200, st.Count, "double[,] count is total elements");

        var c = new int[3, 4, 5];
        c[2, 3, 4] = rank + 1;
        c[1, 2, 3] = -rank;
        var cr = new int[3, 4, 5];
        Exchange(() => world.Send(c, next, 10), () => world.Recv(cr, prev, 10));
        Check.True(cr[2, 3, 4] == prev + 1 && cr[1, 2, 3] == -prev, "int[,,]");
    }

    static void Ranges()
    {
        var src = Enumerable.Range(rank * 1000, 1000).ToArray();
        var dst = Enumerable.Repeat(-1, 300).ToArray();
        Status st = Exchange(() => world.Send(src, 250, 100, next, 11),
                             () => world.Recv(dst, 40, 100, prev, 11));
        Check.True(dst[40] == prev * 1000 + 250 && dst[139] == prev * 1000 + 349,
                   "range data lands at offset");
        Check.True(dst.Take(40).All(x => x == -1) && dst.Skip(140).All(x => x == -1),
                   "nothing written outside [offset, offset+count)");
        Check.Equal(100, st.Count, "range count");

        // a shorter message into a longer window: Count says how many, the rest is untouched
        var small = Enumerable.Repeat(-5, 50).ToArray();
        st = Exchange(() => world.Send(src, 0, 10, next, 12),
                      () => world.Recv(small, 5, 40, prev, 12));
        Check.Equal(10, st.Count, "short message count");
        Check.True(small[5] == prev * 1000 && small[14] == prev * 1000 + 9 && small[15] == -5 &&
                       small[4] == -5,
                   "short message bounds");

        // statuses of consecutive receives that differ in one field at a time (count, tag) or
        // not at all: each says what its own receive got (equal ones may be one shared object)
        int[] counts = { 7, 7, 3, 3, 7 }, tags = { 20, 20, 20, 21, 21 };
        for (int i = 0; i < counts.Length; i++) {
            int n = counts[i], tag = tags[i];
            st = Exchange(() => world.Send(src, 0, n, next, tag),
                          () => world.Recv(small, 0, 50, prev, MP.AnyTag));
            Check.True(st.Count == n && st.Bytes == 4 * n && st.Tag == tag && st.Source == prev &&
                           !st.Cancelled,
                       $"status of receive {i}: {st}, expected count {n}, tag {tag}");
        }

        // empty ranges, including offset == length
        st = Exchange(() => world.Send(src, 1000, 0, next, 13),
                      () => world.Recv(dst, 300, 0, prev, 13));
        Check.Equal(0, st.Count, "empty range");

        // ranges of a struct array and of a big array
        var big = new double[100000];
        for (int i = 0; i < big.Length; i++)
            big[i] = rank + i;
        var bigr = new double[100000];
        Exchange(() => world.Send(big, 50000, 50000, next, 14),
                 () => world.Recv(bigr, 0, 50000, prev, 14));
        Check.True(bigr[0] == prev + 50000 && bigr[49999] == prev + 99999 && bigr[50000] == 0,
                   "large range");

        // the range overload of Ssend
        Exchange(() => world.Ssend(src, 1, 2, next, 15), () => world.Recv(dst, 0, 2, prev, 15));
        Check.True(dst[0] == prev * 1000 + 1 && dst[1] == prev * 1000 + 2, "Ssend range");
    }

    static void SynchronousAndSendrecv()
    {
        var a = new long[] { rank, rank * 2 };
        var b = new long[2];
        Exchange(() => world.Ssend(a, next, 20), () => world.Recv(b, prev, 20));
        Check.True(b[0] == prev && b[1] == prev * 2, "Ssend");

        var s = Enumerable.Range(rank, 5000).Select(x => (double)x).ToArray();
        var r = new double[5000];
        Status st = world.Sendrecv(s, next, 21, r, prev, 21);
        Check.True(r[0] == prev && r[4999] == prev + 4999, "Sendrecv data");
        Check.True(st.Source == prev && st.Tag == 21 && st.Count == 5000, "Sendrecv status");

        // ranges of one array: a halo exchange. Row layout [halo | 3 own rows | halo], 4 wide;
        // the last own row goes down to next, the halo above fills from prev's last own row.
        const int w = 4;
        var f = new double[5 * w];
        for (int i = 0; i < f.Length; i++)
            f[i] = i < w || i >= 4 * w ? -1 : rank * 100 + i;
        int received = world.Sendrecv(f, 3 * w, w, next, 22, f, 0, w, prev, 22);
        Check.True(Enumerable.Range(0, w).All(j => f[j] == prev * 100 + 3 * w + j),
                   "Sendrecv range: halo holds the neighbour's edge");
        Check.True(Enumerable.Range(w, 3 * w).All(i => f[i] == rank * 100 + i),
                   "Sendrecv range: own rows untouched");
        Check.True(Enumerable.Range(4 * w, w).All(i => f[i] == -1),
                   "Sendrecv range: nothing written past the window");
        Check.True(received == w, "Sendrecv range: elements received");
        // large arrays never move: MPI_Sendrecv itself runs, in a GC-safe region
        var big = new double[3000];
        for (int i = 0; i < big.Length; i++)
            big[i] = i < 1000 ? -1 : rank * 10000 + i;
        int bigReceived = world.Sendrecv(big, 2000, 1000, next, 24, big, 0, 1000, prev, 24);
        Check.True(Enumerable.Range(0, 1000).All(i => big[i] == prev * 10000 + 2000 + i),
                   "Sendrecv of large-array ranges: data");
        Check.True(Enumerable.Range(1000, 2000).All(i => big[i] == rank * 10000 + i),
                   "Sendrecv of large-array ranges: the rest untouched");
        Check.True(bigReceived == 1000, "Sendrecv of large-array ranges: elements received");
        var bigOut = Enumerable.Range(rank, 2500).Select(x => (long)x).ToArray();
        var bigIn = new long[2500];
        Status ws = world.Sendrecv(bigOut, next, 25, bigIn, prev, 25);
        Check.True(bigIn[0] == prev && bigIn[2499] == prev + 2499 && ws.Count == 2500,
                   "whole-object Sendrecv of large arrays");
        var bytes = new byte[64];
        var ints = Enumerable.Range(rank * 10, 8).ToArray();
        // 4 ints arrive as 16 bytes
        int bytesReceived = world.Sendrecv(ints, 2, 4, next, 23, bytes, 8, 16, prev, 23);
        Check.True(BitConverter.ToInt32(bytes, 8) == prev * 10 + 2 &&
                       BitConverter.ToInt32(bytes, 20) == prev * 10 + 5 &&
                       bytes.Take(8).All(x => x == 0) && bytes.Skip(24).All(x => x == 0) &&
                       bytesReceived == 16,
                   "Sendrecv range between arrays");
        // fewer elements than the receive range: the count says how many, the rest is untouched
        var shortIn = Enumerable.Repeat(-1.0, 8).ToArray();
        int shortCount = world.Sendrecv(new[] { rank + 0.5, rank + 1.5, rank + 2.5 }, 0, 3, next,
                                        26, shortIn, 2, 5, prev, 26);
        Check.True(shortCount == 3 && shortIn[2] == prev + 0.5 && shortIn[4] == prev + 2.5 &&
                       shortIn.Take(2).All(x => x == -1) && shortIn.Skip(5).All(x => x == -1),
                   "Sendrecv range: a shorter message");
    }

    static void ProbesAndWildcards()
    {
        world.Barrier();
        Check.True(world.Iprobe(MP.AnySource, 40) == null,
                   "Iprobe returns null when nothing waits");
        world.Barrier();   // nobody sends tag 40 before every rank has looked

        var payload = new int[123];
        payload[0] = rank;
        var into = new int[123];
        Status probed = null, got = null;
        Exchange(() => world.Send(payload, next, 40),
                 () =>
                 {
                     probed = world.Probe(MP.AnySource, 40);
                     Status again = world.Iprobe(prev, 40);
                     Check.True(again != null && again.Source == prev && again.Bytes == 123 * 4,
                                "Iprobe sees the waiting message");
                     got = world.Recv(into, MP.AnySource, MP.AnyTag);
                     return got;
                 });
        Check.True(probed.Source == prev && probed.Tag == 40 && probed.Count == 123 * 4 &&
                       probed.Bytes == 123 * 4,
                   "Probe status counts bytes");
        Check.True(got.Source == prev && got.Tag == 40 && into[0] == prev,
                   "AnySource/AnyTag receive reports the real source and tag");
    }

    static void Communicators()
    {
        Check.True(MP.Self.Size == 1 && MP.Self.Rank == 0, "Self");
        Check.True(world.Size >= 1 && world.Rank >= 0 && world.Rank < world.Size,
                   "World rank/size");

        // a Dup'ed communicator is a separate message space
        Intracomm dup = world.Dup();
        Check.True(dup.Size == size && dup.Rank == rank, "Dup keeps ranks");
        var x = new int[] { rank };
        var y = new int[1];
        var z = new int[1];
        Exchange(() => dup.Send(new[] { 1000 + rank }, next, 50),
                 () =>
                 {
                     dup.Probe(prev, 50);   // the message has arrived on dup ...
                     Check.True(world.Iprobe(prev, 50) == null,
                                "Dup isolates messages from its parent");
                     return dup.Recv(z, prev, 50);
                 });
        world.Barrier();   // no rank sends the tag-50 message on World before every rank has looked
        Exchange(() => world.Send(x, next, 50), () => world.Recv(y, prev, 50));
        Check.True(y[0] == prev && z[0] == 1000 + prev, "Dup and parent both deliver");

        // Split by parity, keys reverse the order
        Intracomm half = world.Split(rank % 2, -rank);
        int expectedSize = (size + 1 - rank % 2) / 2;
        Check.Equal(expectedSize, half.Size, "Split size");
        Check.Equal(expectedSize - 1 - rank / 2, half.Rank, "Split rank ordered by key");
        half.Barrier();
        Intracomm none = world.Split(rank == 0 ? -1 : 1, 0);
        Check.True(rank == 0 ? none == null : none != null && none.Size == size - 1,
                   "Split with negative color gives null");

        half.Dispose();
        half.Dispose();   // twice is harmless
        Check.Throws<ObjectDisposedException>(() => half.Send(x, 0, 1),
                                              "disposed communicator refuses sends");
        Check.Throws<ObjectDisposedException>(() => half.Barrier(),
                                              "disposed communicator refuses Barrier");
        none?.Dispose();
        dup.Dispose();
        world.Dispose();   // no-op for World
        MP.Self.Dispose();
        world.Barrier();
        Check.True(true, "World usable after Dispose (no-op)");
        MP.Self.Barrier();
    }

    static void Statics()
    {
        Check.True(MP.TagUpperBound >= 32767, "TagUpperBound at least 32767");
        Check.Equal(-1, MP.AnySource, "AnySource");
        Check.Equal(-1, MP.AnyTag, "AnyTag");
        double t0 = MP.Wtime();
        world.Barrier();
        Check.True(MP.Wtime() >= t0 && t0 > 0, "Wtime grows");
        Check.True(!string.IsNullOrEmpty(MP.ProcessorName), "ProcessorName");
        Check.Equal(3, MP.ThreadLevel, "MPI_THREAD_MULTIPLE granted");

        // the biggest tag works
        var one = new byte[1];
        Exchange(() => world.Send(new byte[] { 9 }, next, MP.TagUpperBound),
                 () => world.Recv(one, prev, MP.TagUpperBound));
        Check.Equal((byte)9, one[0], "tag = TagUpperBound");
    }

    static unsafe void HugePages()
    {
        // a large array's first transfer has its memory collapsed into transparent huge pages
        // (where the kernel offers them: Linux >= 6.1, THP not "never"); the data is exact
        // either way
        const int length = 8 << 20;
        var a = new byte[length];
        var b = new byte[length];
        for (int i = 0; i < length; i += 4096) {
            a[i] = (byte)(i >> 12);
            b[i] = 0xEE;
        }
        world.Sendrecv(a, rank, 60, b, rank, 60);
        bool exact = true;
        for (int i = 0; i < length && exact; i += 4096)
            exact = b[i] == (byte)(i >> 12);
        Check.True(exact, "an 8 MiB array sent to this rank arrives exact");
        string release = System.IO.File.ReadAllText("/proc/sys/kernel/osrelease").Trim();
        string[] v = release.Split('.', '-');
        bool newKernel = int.Parse(v[0]) > 6 || (int.Parse(v[0]) == 6 && int.Parse(v[1]) >= 1);
        string thp = "/sys/kernel/mm/transparent_hugepage/enabled";
        bool offered =
            System.IO.File.Exists(thp) && !System.IO.File.ReadAllText(thp).Contains("[never]");
        if (!newKernel || !offered) {
            Console.WriteLine($"P2PTest: huge pages not checked (kernel {release}, THP " +
                              $"{(offered ? "offered" : "never")})");
            return;
        }
        // the copy runs on the core's own thread: wait for it (an internal call, by reflection)
        typeof(MP)
            .Assembly.GetType("System.MP.MPDirect", true)
            .GetMethod("HugePagesWait", System.Reflection.BindingFlags.NonPublic |
                                            System.Reflection.BindingFlags.Static)
            .Invoke(null, null);
        long ha, hb;
        fixed(byte* pa = a, pb = b)
        {
            ha = Pages.AnonHugeKiB((long)pa + length / 2);
            hb = Pages.AnonHugeKiB((long)pb + length / 2);
        }
        Check.True(ha > 0 && hb > 0,
                   $"both 8 MiB arrays now lie in huge pages (AnonHugePages {ha} and {hb} kB)");
    }

    static int Main()
    {
        MPStats before = MP.Stats;
        HugePages();
        Statics();
        PrimitiveArrays();
        SingleObjects();
        MultiDimensional();
        Ranges();
        SynchronousAndSendrecv();
        ProbesAndWildcards();
        Communicators();
        world.Barrier();
        MPStats after = MP.Stats;
        Check.True(after.Operations - before.Operations >= 2 * (4 * 12 + 1 + 2 + 2 + 5 + 3 + 1),
                   "Operations counts every transfer");
        Check.Equal(0L, after.PinsLive, "no live pins");
        Check.Equal(after.PinsTaken, after.PinsReleasedByWait + after.PinsReleasedByGC,
                    "every pin released");
        Check.True(after.PinsAvoided > 0, "some transfers needed no pin");
        return Check.Finish("P2PTest");
    }
}

// BadInputTest — every bad argument gets its documented managed exception before any transfer
// starts, receives never write outside their object or window, and the communicator stays
// usable after each exception.
#pragma warning disable 649 // fields exist to give types a shape
using System;
using System.Collections.Generic;
using System.Linq;
using System.MP;

class WithString { public int A; public string Name; }
struct Holder { public int A; public int[] Data; }
class WithNestedRef { public double X; public Holder H; }
class PlainBase { public int A; }
class DerivedWithRef : PlainBase { public object Extra; }

static class BadInputTest
{
    static Intracomm world = Ring.World;
    static int next = Ring.Next, prev = Ring.Prev;
    static int round;

    /// <summary>A real exchange after each exception: the communicator must still work.</summary>
    static void StillUsable(string after)
    {
        var s = new int[] { Ring.Rank, ++round };
        var r = new int[2];
        Ring.Exchange(() => world.Send(s, next, 77), () => world.Recv(r, prev, 77));
        Check.True(r[0] == prev && r[1] == round, "communicator usable after " + after);
    }

    /// <summary>The call must throw TException, start no transfer, and leave the comm usable.</summary>
    static TException Refused<TException>(Action call, string what) where TException : Exception
    {
        long before = MP.Stats.Operations;
        TException e = Check.Throws<TException>(call, what);
        Check.Equal(before, MP.Stats.Operations, what + ": no transfer started");
        return e;
    }

    static void ParamName(ArgumentException e, string name, string what)
    {
        if (e != null) Check.Equal(name, e.ParamName, what + " names parameter");
    }

    static void NotTransportable()
    {
        var cases = new List<Tuple<object, string>> {
            Tuple.Create<object, string>("text", "System.String"),
            Tuple.Create<object, string>(new object[3], "System.Object[]"),
            Tuple.Create<object, string>(new string[2], "System.String[]"),
            Tuple.Create<object, string>(new int[2][], "System.Int32[][]"),
            Tuple.Create<object, string>(new WithString(), "Name"),
            Tuple.Create<object, string>(new WithNestedRef(), "H.Data"),
            Tuple.Create<object, string>(new DerivedWithRef(), "Extra"),
            Tuple.Create<object, string>(new Holder[4], "Data"),
            Tuple.Create<object, string>(new List<int>(), "List"),
        };
        foreach (var c in cases) {
            object obj = c.Item1;
            string type = obj.GetType().ToString();
            var e = Refused<ArgumentException>(() => world.Send(obj, next, 1), "Send " + type);
            Check.True(e != null && e.Message.Contains(c.Item2), $"message for {type} names '{c.Item2}': {e?.Message}");
            Refused<ArgumentException>(() => world.Recv(obj, prev, 1), "Recv " + type);
            Refused<ArgumentException>(() => world.Ssend(obj, next, 1), "Ssend " + type);
        }
        Refused<ArgumentException>(() => world.Sendrecv(new int[1], next, 1, "x", prev, 1), "Sendrecv into a string");
        Refused<ArgumentException>(() => world.Send(new string[4], 0, 1, next, 1), "range of a string[]");
        StillUsable("not-transportable objects");
    }

    static void Nulls()
    {
        Refused<ArgumentNullException>(() => world.Send(null, next, 1), "Send(null)");
        Refused<ArgumentNullException>(() => world.Recv(null, prev, 1), "Recv(null)");
        Refused<ArgumentNullException>(() => world.Send(null, 0, 0, next, 1), "Send(null range)");
        Refused<ArgumentNullException>(() => world.Recv(null, 0, 0, prev, 1), "Recv(null range)");
        Refused<ArgumentNullException>(() => world.Sendrecv(new int[1], next, 1, null, prev, 1), "Sendrecv(null recv)");
        StillUsable("nulls");
    }

    static void RanksAndTags()
    {
        var a = new int[4];
        int size = world.Size;
        foreach (int dest in new[] { -1, -2, size, size + 100, int.MinValue }) {
            ParamName(Refused<ArgumentOutOfRangeException>(() => world.Send(a, dest, 1), $"Send dest={dest}"), "dest", "Send");
            ParamName(Refused<ArgumentOutOfRangeException>(() => world.Ssend(a, 0, 1, dest, 1), $"Ssend range dest={dest}"), "dest", "Ssend");
        }
        foreach (int source in new[] { -2, -3, size, int.MaxValue })
            ParamName(Refused<ArgumentOutOfRangeException>(() => world.Recv(a, source, 1), $"Recv source={source}"), "source", "Recv");
        foreach (int tag in new[] { -1, -2, MP.TagUpperBound + 1, int.MinValue })
            ParamName(Refused<ArgumentOutOfRangeException>(() => world.Send(a, next, tag), $"Send tag={tag}"), "tag", "Send");
        foreach (int tag in new[] { -2, MP.TagUpperBound + 1 }) {
            ParamName(Refused<ArgumentOutOfRangeException>(() => world.Recv(a, prev, tag), $"Recv tag={tag}"), "tag", "Recv");
            Refused<ArgumentOutOfRangeException>(() => world.Probe(prev, tag), $"Probe tag={tag}");
            Refused<ArgumentOutOfRangeException>(() => world.Iprobe(prev, tag), $"Iprobe tag={tag}");
        }
        Refused<ArgumentOutOfRangeException>(() => world.Probe(size, 1), "Probe source=size");
        Refused<ArgumentOutOfRangeException>(() => world.Sendrecv(a, size, 1, new int[4], prev, 1), "Sendrecv dest");
        Refused<ArgumentOutOfRangeException>(() => world.Sendrecv(a, next, 1, new int[4], -5, 1), "Sendrecv source");
        Refused<ArgumentOutOfRangeException>(() => world.Sendrecv(a, next, -1, new int[4], prev, 1), "Sendrecv tag");
        StillUsable("bad ranks and tags");
    }

    static void OffsetsAndCounts()
    {
        var a = new double[10];
        var cases = new[] {
            Tuple.Create(-1, 1, "offset"), Tuple.Create(11, 0, "offset"), Tuple.Create(int.MinValue, 0, "offset"),
            Tuple.Create(0, -1, "count"), Tuple.Create(0, 11, "count"), Tuple.Create(5, 6, "count"),
            Tuple.Create(10, 1, "count"), Tuple.Create(1, int.MaxValue, "count"),
        };
        foreach (var c in cases) {
            string what = $"offset={c.Item1} count={c.Item2}";
            ParamName(Refused<ArgumentOutOfRangeException>(() => world.Send(a, c.Item1, c.Item2, next, 1), "Send " + what), c.Item3, what);
            ParamName(Refused<ArgumentOutOfRangeException>(() => world.Recv(a, c.Item1, c.Item2, prev, 1), "Recv " + what), c.Item3, what);
        }
        Refused<ArgumentException>(() => world.Send(new double[3, 3], 0, 1, next, 1), "range of a 2-D array");
        Refused<ArgumentException>(() => world.Recv(new int[2, 2], 0, 1, prev, 1), "range receive into a 2-D array");
        var same = new int[5];
        Refused<ArgumentException>(() => world.Sendrecv(same, next, 1, same, prev, 1), "Sendrecv with one object for both");
        var f = new double[20];
        foreach (var c in cases) {
            string what = $"offset={c.Item1} count={c.Item2}";
            ParamName(Refused<ArgumentOutOfRangeException>(() => world.Sendrecv(a, c.Item1, c.Item2, next, 1, f, 0, 1, prev, 1), "Sendrecv range send " + what), c.Item3, what);
            ParamName(Refused<ArgumentOutOfRangeException>(() => world.Sendrecv(f, 0, 1, next, 1, a, c.Item1, c.Item2, prev, 1), "Sendrecv range receive " + what), c.Item3, what);
        }
        Refused<ArgumentException>(() => world.Sendrecv(f, 0, 5, next, 1, f, 4, 5, prev, 1), "Sendrecv ranges that overlap");
        Refused<ArgumentException>(() => world.Sendrecv(f, 4, 5, next, 1, f, 0, 5, prev, 1), "Sendrecv ranges that overlap (receive first)");
        Refused<ArgumentException>(() => world.Sendrecv(new double[2, 2], 0, 1, next, 1, f, 0, 1, prev, 1), "Sendrecv range of a 2-D array");
        Refused<ArgumentNullException>(() => world.Sendrecv(f, 0, 1, next, 1, null, 0, 1, prev, 1), "Sendrecv range into null");
        Refused<ArgumentException>(() => world.Sendrecv(new string[2], 0, 1, next, 1, f, 0, 1, prev, 1), "Sendrecv range of references");
        ParamName(Refused<ArgumentOutOfRangeException>(() => world.Sendrecv(f, 0, 1, world.Size, 1, f, 1, 1, prev, 1), "Sendrecv range dest"), "dest", "Sendrecv range");
        ParamName(Refused<ArgumentOutOfRangeException>(() => world.Sendrecv(f, 0, 1, next, 1, f, 1, 1, -7, 1), "Sendrecv range source"), "source", "Sendrecv range");
        ParamName(Refused<ArgumentOutOfRangeException>(() => world.Sendrecv(f, 0, 1, next, -1, f, 1, 1, prev, 1), "Sendrecv range tag"), "tag", "Sendrecv range");
        Check.True(f.All(x => x == 0), "refused Sendrecv ranges wrote nothing");
        StillUsable("bad offsets and counts");
    }

    static void TooSmallReceives()
    {
        // window too small: MPI_ERR_TRUNCATE, guards around the window untouched
        var big = Enumerable.Range(1, 100).ToArray();
        var target = Enumerable.Repeat(-9, 60).ToArray();
        MPException e = null;
        Ring.Exchange(() => world.Send(big, next, 5), () => {
            e = Check.Throws<MPException>(() => world.Recv(target, 5, 50, prev, 5), "receive 100 ints into a 50-int window");
            return null;
        });
        Check.True(e != null && e.ErrorClass == 14 /* MPICH's MPI_ERR_TRUNCATE */ && e.Message.ToLower().Contains("trunc"),
                   $"truncation error class and message: {e?.ErrorClass} {e?.Message}");
        Check.True(target.Take(5).All(x => x == -9) && target.Skip(55).All(x => x == -9), "guards around the window untouched");
        StillUsable("truncated range receive");

        // whole object too small (array and plain object)
        var small = new int[10];
        Ring.Exchange(() => world.Send(big, next, 6), () => {
            Check.Throws<MPException>(() => world.Recv(small, prev, 6), "receive 100 ints into int[10]");
            return null;
        });
        StillUsable("truncated array receive");
        var obj = new PlainBase();
        Ring.Exchange(() => world.Send(new long[4], next, 7), () => {
            Check.Throws<MPException>(() => world.Recv(obj, prev, 7), "receive 32 bytes into a 4-byte object");
            return null;
        });
        StillUsable("truncated object receive");

        // Sendrecv whose receive truncates: the send still completes, the exception follows
        Check.Throws<MPException>(() => world.Sendrecv(big, next, 8, small, prev, 8), "Sendrecv truncation");
        StillUsable("truncated Sendrecv");
        // the same with large arrays, which never move (MPI_Sendrecv itself runs)
        var largeOut = new int[5000];
        var largeIn = Enumerable.Repeat(-9, 4000).ToArray();
        Check.Throws<MPException>(() => world.Sendrecv(largeOut, next, 9, largeIn, prev, 9), "Sendrecv truncation, large arrays");
        StillUsable("truncated Sendrecv of large arrays");
        var rangeIn = Enumerable.Repeat(-9, 4000).ToArray();
        Check.Throws<MPException>(() => world.Sendrecv(largeOut, 0, 3000, next, 10, rangeIn, 100, 2000, prev, 10), "Sendrecv range truncation, large arrays");
        Check.True(rangeIn.Take(100).All(x => x == -9) && rangeIn.Skip(2100).All(x => x == -9), "guards around a truncated large range untouched");
        StillUsable("truncated Sendrecv range of large arrays");
    }

    static void DisposedCommunicator()
    {
        Intracomm dup = world.Dup();
        dup.Dispose();
        Refused<ObjectDisposedException>(() => dup.Send(new int[1], 0, 1), "Send on disposed");
        Refused<ObjectDisposedException>(() => dup.Recv(new int[1], 0, 1), "Recv on disposed");
        Refused<ObjectDisposedException>(() => dup.Probe(0, 1), "Probe on disposed");
        Refused<ObjectDisposedException>(() => dup.Dup(), "Dup of disposed");
        Refused<ObjectDisposedException>(() => dup.Split(0, 0), "Split of disposed");
        StillUsable("disposed communicator");
    }

    static int Main()
    {
        NotTransportable();
        Nulls();
        RanksAndTags();
        OffsetsAndCounts();
        TooSmallReceives();
        DisposedCommunicator();
        return Check.FinishWithNoPinLeft("BadInputTest");
    }
}

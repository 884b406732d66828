// BadInputTest — every bad argument gets its documented managed exception before any transfer
// starts, naming the parameter (ParamName) and carrying the values (the rank and the valid
// range, the offset, count and length, the bytes a truncated receive had room for); receives
// never write outside their object or window, and the communicator stays usable after each
// exception.
#pragma warning disable 649   // fields exist to give types a shape
using System;
using System.Collections.Generic;
using System.Linq;
using System.MP;

class WithString
{
    public int A;
    public string Name;
}
struct Holder
{
    public int A;
    public int[] Data;
}
class WithNestedRef
{
    public double X;
    public Holder H;
}
class PlainBase
{
    public int A;
}
class DerivedWithRef : PlainBase
{
    public object Extra;
}

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

    /// <summary>The call must throw TException, start no transfer, and leave the
    /// comm usable.</summary>
    static TException Refused<TException>(Action call, string what)
        where TException : Exception
    {
        long before = MP.Stats.Operations;
        TException e = Check.Throws<TException>(call, what);
        Check.Equal(before, MP.Stats.Operations, what + ": no transfer started");
        return e;
    }

    static void ParamName(ArgumentException e, string name, string what)
    {
        if (e != null)
            Check.Equal(name, e.ParamName, what + " names parameter");
    }

    /// <summary>The message carries the values involved, as the core wrote them.</summary>
    static void Says(Exception e, string text, string what)
    {
        if (e != null)
            Check.True(e.Message.Contains(text), $"{what}: the message says '{text}': {e.Message}");
    }

    /// <summary>ParamName and the values, together.</summary>
    static void Names(ArgumentException e, string name, string text, string what)
    {
        ParamName(e, name, what);
        Says(e, text, what);
    }

    /// <summary>A C# parameter of a range: offset, or sendOffset / recvOffset
    /// for Sendrecv's.</summary>
    static string Param(string prefix, string name) =>
        prefix == "" ? name : prefix + char.ToUpper(name[0]) + name.Substring(1);

    /// <summary>What the core says of a refused offset or count of an array of
    /// length elements.</summary>
    static string RangeText(string prefix, int offset, int count, int length)
    {
        string o = Param(prefix, "offset"), c = Param(prefix, "count"), a = Param(prefix, "array");
        if (offset < 0 || offset > length)
            return $"{o} {offset} is outside 0..{length}, the length of {a}";
        if (count < 0)
            return $"{c} {count} is negative";
        return $"{c} {count} from {o} {offset} passes the end of {a} (length {length}: " +
               $"{length - offset} fit)";
    }

    static void NotTransportable()
    {
        var cases = new List<Tuple<object, string>> {
            Tuple.Create<object, string>("text", "System.String"),
            Tuple.Create<object, string>(new object[3], "System.Object[]"),
            Tuple.Create<object, string>(new string[2], "System.String[]"),
            // clang-format off
            Tuple.Create<object, string>(new int[2][], "System.Int32[][]"),
            // clang-format on
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
            Check.True(e != null && e.Message.Contains(c.Item2),
                       $"message for {type} names '{c.Item2}': {e?.Message}");
            ParamName(e, "obj", "Send " + type);
            Refused<ArgumentException>(() => world.Recv(obj, prev, 1), "Recv " + type);
            Refused<ArgumentException>(() => world.Ssend(obj, next, 1), "Ssend " + type);
        }
        // the record names the argument that failed: no guess from which object is transportable
        Names(Refused<ArgumentException>(() => world.Sendrecv(new int[1], next, 1, "x", prev, 1),
                                         "Sendrecv into a string"),
              "recvObj", "System.String", "Sendrecv into a string");
        Names(Refused<ArgumentException>(() => world.Sendrecv("x", next, 1, new int[1], prev, 1),
                                         "Sendrecv of a string"),
              "sendObj", "System.String", "Sendrecv of a string");
        Refused<ArgumentException>(() => world.Send(new string[4], 0, 1, next, 1),
                                   "range of a string[]");
        StillUsable("not-transportable objects");
    }

    static void Nulls()
    {
        ParamName(Refused<ArgumentNullException>(() => world.Send(null, next, 1), "Send(null)"),
                  "obj", "Send(null)");
        ParamName(Refused<ArgumentNullException>(() => world.Recv(null, prev, 1), "Recv(null)"),
                  "obj", "Recv(null)");
        ParamName(Refused<ArgumentNullException>(() => world.Send(null, 0, 0, next, 1),
                                                 "Send(null range)"),
                  "array", "Send(null range)");
        ParamName(Refused<ArgumentNullException>(() => world.Recv(null, 0, 0, prev, 1),
                                                 "Recv(null range)"),
                  "array", "Recv(null range)");
        ParamName(
            Refused<ArgumentNullException>(() => world.Sendrecv(new int[1], next, 1, null, prev, 1),
                                           "Sendrecv(null recv)"),
            "recvObj", "Sendrecv(null recv)");
        ParamName(
            Refused<ArgumentNullException>(() => world.Sendrecv(null, next, 1, new int[1], prev, 1),
                                           "Sendrecv(null send)"),
            "sendObj", "Sendrecv(null send)");
        StillUsable("nulls");
    }

    static void RanksAndTags()
    {
        var a = new int[4];
        int size = world.Size;
        string ranks = $"outside 0..{size - 1} of a communicator of size {size}";
        foreach (int dest in new[] { -1, -2, size, size + 100, int.MinValue }) {
            Names(Refused<ArgumentOutOfRangeException>(() => world.Send(a, dest, 1),
                                                       $"Send dest={dest}"),
                  "dest", $"dest {dest} is {ranks}, and is not MP.ProcNull (-3)", "Send");
            Names(Refused<ArgumentOutOfRangeException>(() => world.Ssend(a, 0, 1, dest, 1),
                                                       $"Ssend range dest={dest}"),
                  "dest", $"dest {dest} is {ranks}, and is not MP.ProcNull (-3)", "Ssend");
        }
        foreach (int source in new[] { -2, -4, size, int.MaxValue })
            Names(Refused<ArgumentOutOfRangeException>(() => world.Recv(a, source, 1),
                                                       $"Recv source={source}"),
                  "source",
                  $"source {source} is {ranks}, and is neither MP.AnySource (-1) nor MP.ProcNull " +
                      "(-3)",
                  "Recv");
        string tags = $"outside 0..{MP.TagUpperBound} (0..MP.TagUpperBound)";
        foreach (int tag in new[] { -1, -2, MP.TagUpperBound + 1, int.MinValue })
            Names(Refused<ArgumentOutOfRangeException>(() => world.Send(a, next, tag),
                                                       $"Send tag={tag}"),
                  "tag", $"tag {tag} is {tags}", "Send");
        foreach (int tag in new[] { -2, MP.TagUpperBound + 1 }) {
            Names(Refused<ArgumentOutOfRangeException>(() => world.Recv(a, prev, tag),
                                                       $"Recv tag={tag}"),
                  "tag", $"tag {tag} is {tags}, and is not MP.AnyTag (-1)", "Recv");
            Refused<ArgumentOutOfRangeException>(() => world.Probe(prev, tag), $"Probe tag={tag}");
            Refused<ArgumentOutOfRangeException>(() => world.Iprobe(prev, tag),
                                                 $"Iprobe tag={tag}");
        }
        Names(Refused<ArgumentOutOfRangeException>(() => world.Probe(size, 1), "Probe source=size"),
              "source", $"source {size} is {ranks}", "Probe");
        Names(Refused<ArgumentOutOfRangeException>(
                  () => world.Sendrecv(a, size, 1, new int[4], prev, 1), "Sendrecv dest"),
              "dest", $"dest {size} is {ranks}", "Sendrecv dest");
        Names(Refused<ArgumentOutOfRangeException>(
                  () => world.Sendrecv(a, next, 1, new int[4], -5, 1), "Sendrecv source"),
              "source", $"source -5 is {ranks}", "Sendrecv source");
        Names(Refused<ArgumentOutOfRangeException>(
                  () => world.Sendrecv(a, next, -1, new int[4], prev, 1), "Sendrecv tag"),
              "sendTag", $"sendTag -1 is {tags}", "Sendrecv sendTag");
        Names(Refused<ArgumentOutOfRangeException>(
                  () => world.Sendrecv(a, next, 1, new int[4], prev, -5), "Sendrecv recvTag"),
              "recvTag", $"recvTag -5 is {tags}, and is not MP.AnyTag (-1)", "Sendrecv recvTag");
        StillUsable("bad ranks and tags");
    }

    static void OffsetsAndCounts()
    {
        var a = new double[10];
        var cases = new[] {
            Tuple.Create(-1, 1, "offset"),
            Tuple.Create(11, 0, "offset"),
            Tuple.Create(int.MinValue, 0, "offset"),
            Tuple.Create(0, -1, "count"),
            Tuple.Create(0, 11, "count"),
            Tuple.Create(5, 6, "count"),
            Tuple.Create(10, 1, "count"),
            Tuple.Create(1, int.MaxValue, "count"),
        };
        foreach (var c in cases) {
            string what = $"offset={c.Item1} count={c.Item2}";
            Names(Refused<ArgumentOutOfRangeException>(
                      () => world.Send(a, c.Item1, c.Item2, next, 1), "Send " + what),
                  c.Item3, RangeText("", c.Item1, c.Item2, a.Length), what);
            Names(Refused<ArgumentOutOfRangeException>(
                      () => world.Recv(a, c.Item1, c.Item2, prev, 1), "Recv " + what),
                  c.Item3, RangeText("", c.Item1, c.Item2, a.Length), what);
        }
        Names(Refused<ArgumentException>(() => world.Send(new double[3, 3], 0, 1, next, 1),
                                         "range of a 2-D array"),
              "array",
              "offset and count apply to one-dimensional arrays only; array is a System.Double[,]",
              "range of a 2-D array");
        Refused<ArgumentException>(() => world.Recv(new int[2, 2], 0, 1, prev, 1),
                                   "range receive into a 2-D array");
        var same = new int[5];
        Names(Refused<ArgumentException>(() => world.Sendrecv(same, next, 1, same, prev, 1),
                                         "Sendrecv with one object for both"),
              "recvObj", "sendObj and recvObj are the same object",
              "Sendrecv with one object for both");
        var f = new double[20];
        foreach (var c in cases) {
            string what = $"offset={c.Item1} count={c.Item2}";
            Names(Refused<ArgumentOutOfRangeException>(
                      () => world.Sendrecv(a, c.Item1, c.Item2, next, 1, f, 0, 1, prev, 1),
                      "Sendrecv range send " + what),
                  Param("send", c.Item3), RangeText("send", c.Item1, c.Item2, a.Length),
                  "Sendrecv range send " + what);
            Names(Refused<ArgumentOutOfRangeException>(
                      () => world.Sendrecv(f, 0, 1, next, 1, a, c.Item1, c.Item2, prev, 1),
                      "Sendrecv range receive " + what),
                  Param("recv", c.Item3), RangeText("recv", c.Item1, c.Item2, a.Length),
                  "Sendrecv range receive " + what);
        }
        Names(Refused<ArgumentException>(() => world.Sendrecv(f, 0, 5, next, 1, f, 4, 5, prev, 1),
                                         "Sendrecv ranges that overlap"),
              "recvOffset",
              "the send range [0, 5) and the receive range [4, 9) of one array overlap",
              "Sendrecv ranges that overlap");
        Says(Refused<ArgumentException>(() => world.Sendrecv(f, 4, 5, next, 1, f, 0, 5, prev, 1),
                                        "Sendrecv ranges that overlap (receive first)"),
             "the send range [4, 9) and the receive range [0, 5) of one array overlap",
             "Sendrecv ranges that overlap (receive first)");
        Names(Refused<ArgumentException>(() => world.Sendrecv(new double[2, 2], 0, 1, next, 1, f, 0,
                                                              1, prev, 1),
                                         "Sendrecv range of a 2-D array"),
              "sendArray", "sendOffset and sendCount apply to one-dimensional arrays only",
              "Sendrecv range of a 2-D array");
        ParamName(Refused<ArgumentNullException>(() => world.Sendrecv(f, 0, 1, next, 1, null, 0, 1,
                                                                      prev, 1),
                                                 "Sendrecv range into null"),
                  "recvArray", "Sendrecv range into null");
        Names(Refused<ArgumentException>(() => world.Sendrecv(new string[2], 0, 1, next, 1, f, 0, 1,
                                                              prev, 1),
                                         "Sendrecv range of references"),
              "sendArray", "System.String[]", "Sendrecv range of references");
        Names(Refused<ArgumentOutOfRangeException>(
                  () => world.Sendrecv(f, 0, 1, world.Size, 1, f, 1, 1, prev, 1),
                  "Sendrecv range dest"),
              "dest", $"dest {world.Size} is outside", "Sendrecv range");
        Names(Refused<ArgumentOutOfRangeException>(
                  () => world.Sendrecv(f, 0, 1, next, 1, f, 1, 1, -7, 1), "Sendrecv range source"),
              "source", "source -7 is outside", "Sendrecv range");
        Names(Refused<ArgumentOutOfRangeException>(
                  () => world.Sendrecv(f, 0, 1, next, -1, f, 1, 1, prev, 1), "Sendrecv range tag"),
              "sendTag", "sendTag -1 is outside", "Sendrecv range");
        Check.True(f.All(x => x == 0), "refused Sendrecv ranges wrote nothing");
        StillUsable("bad offsets and counts");
    }

    static void TooSmallReceives()
    {
        // window too small: MPI_ERR_TRUNCATE, guards around the window untouched
        var big = Enumerable.Range(1, 100).ToArray();
        var target = Enumerable.Repeat(-9, 60).ToArray();
        MPException e = null;
        Ring.Exchange(() => world.Send(big, next, 5),
                      () =>
                      {
                          e = Check.Throws<MPException>(() => world.Recv(target, 5, 50, prev, 5),
                                                        "receive 100 ints into a 50-int window");
                          return null;
                      });
        Check.True(e != null && e.ErrorClass == 14 /* MPICH's MPI_ERR_TRUNCATE */ &&
                       e.Message.ToLower().Contains("trunc"),
                   $"truncation error class and message: {e?.ErrorClass} {e?.Message}");
        // MPI reports no size for a truncated message: the core says who sent it with which tag,
        // what the buffer held and how to learn the size, without MPICH's internal stack
        Says(e,
             "the message from rank " + prev +
                 " with tag 5 is longer than the 200 bytes (50 elements of 4 bytes) the receive " +
                 "buffer holds",
             "truncated window");
        Says(e, "Probe first", "truncated window");
        Check.True(e == null || !e.Message.Contains("MPIR_"),
                   "truncated window: no MPICH internals: " + e?.Message);
        Check.True(target.Take(5).All(x => x == -9) && target.Skip(55).All(x => x == -9),
                   "guards around the window untouched");
        StillUsable("truncated range receive");

        // whole object too small (array and plain object)
        var small = new int[10];
        Ring.Exchange(() => world.Send(big, next, 6),
                      () =>
                      {
                          Says(Check.Throws<MPException>(() => world.Recv(small, prev, 6),
                                                         "receive 100 ints into int[10]"),
                               "the 40 bytes (10 elements of 4 bytes) the receive buffer holds",
                               "truncated array receive");
                          return null;
                      });
        StillUsable("truncated array receive");
        // the same with the message already waiting when the receive starts (sent before a
        // barrier): the receive's first test, made with its start, reports the truncation
        var early = world.Isend(big, next, 8);
        world.Barrier();
        Says(Check.Throws<MPException>(() => world.Recv(small, prev, 8),
                                       "receive 100 waiting ints into int[10]"),
             "the 40 bytes (10 elements of 4 bytes) the receive buffer holds",
             "truncated receive of a waiting message");
        early.Wait();
        StillUsable("truncated receive of a waiting message");
        var obj = new PlainBase();
        Ring.Exchange(() => world.Send(new long[4], next, 7),
                      () =>
                      {
                          Says(Check.Throws<MPException>(() => world.Recv(obj, prev, 7),
                                                         "receive 32 bytes into a 4-byte object"),
                               "longer than the 4 bytes the receive buffer holds",
                               "truncated object receive");
                          return null;
                      });
        StillUsable("truncated object receive");

        // Sendrecv whose receive truncates: the send still completes, the exception follows
        Says(Check.Throws<MPException>(() => world.Sendrecv(big, next, 8, small, prev, 8),
                                       "Sendrecv truncation"),
             "the 40 bytes (10 elements of 4 bytes)", "Sendrecv truncation");
        StillUsable("truncated Sendrecv");
        // the same with large arrays, which never move (MPI_Sendrecv itself runs)
        var largeOut = new int[5000];
        var largeIn = Enumerable.Repeat(-9, 4000).ToArray();
        Says(Check.Throws<MPException>(() => world.Sendrecv(largeOut, next, 9, largeIn, prev, 9),
                                       "Sendrecv truncation, large arrays"),
             "the 16000 bytes (4000 elements of 4 bytes)", "Sendrecv truncation, large arrays");
        StillUsable("truncated Sendrecv of large arrays");
        var rangeIn = Enumerable.Repeat(-9, 4000).ToArray();
        Says(Check.Throws<MPException>(() => world.Sendrecv(largeOut, 0, 3000, next, 10, rangeIn,
                                                            100, 2000, prev, 10),
                                       "Sendrecv range truncation, large arrays"),
             "the 8000 bytes (2000 elements of 4 bytes)",
             "Sendrecv range truncation, large arrays");
        Check.True(rangeIn.Take(100).All(x => x == -9) && rangeIn.Skip(2100).All(x => x == -9),
                   "guards around a truncated large range untouched");
        StillUsable("truncated Sendrecv range of large arrays");

        // Irecv: a receive that fails as it starts keeps its own account until Wait raises it,
        // whatever failed on this thread in between; one that fails later is told at Wait
        Ring.Exchange(
            () => world.Send(big, next, 11),
            () =>
            {
                // the message is here: the receive is likely to end as it starts
                world.Probe(prev, 11);
                Request r = world.Irecv(small, prev, 11);
                Check.Throws<ArgumentOutOfRangeException>(() => world.Send(small, -1, 1),
                                                          "a bad dest between Irecv and Wait");
                Says(Check.Throws<MPException>(() => r.Wait(), "Irecv truncated, raised by Wait"),
                     "the 40 bytes (10 elements of 4 bytes) the receive buffer holds",
                     "Irecv truncated as it started");
                return null;
            });
        StillUsable("truncated Irecv");
        Request late = world.Irecv(small, prev, 12);
        Ring.Exchange(() => world.Send(big, next, 12),
                      () =>
                      {
                          Says(Check.Throws<MPException>(() => late.Wait(),
                                                         "Irecv truncated later, raised by Wait"),
                               "the 40 bytes (10 elements of 4 bytes) the receive buffer holds",
                               "Irecv truncated while waiting");
                          return null;
                      });
        StillUsable("truncated Irecv at Wait");
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

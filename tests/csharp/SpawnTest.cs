// SpawnTest — Intracomm.Spawn and MP.Parent. Where the MPI library starts processes, the parent
// job starts two copies of this program (under the same host), which find their parent through
// MP.Parent and report to it. Where it cannot (Debian 12's MPICH 4.0.2 ch4:ucx), EVERY rank must
// raise NotSupportedException naming the limitation — none may wait in MPI (a hang fails in the
// test's timeout). Arguments refused at the root reach every rank the same way; the
// communicator works afterwards.
using System;
using System.MP;
using System.Reflection;

static class SpawnTest
{
    static readonly Intracomm world = MP.World;
    static readonly int rank = world.Rank, size = world.Size;

    /// <summary>A spawned copy: tells the parent's rank 0 its rank and the arguments
    /// it got.</summary>
    static int Child(Intercomm parent, string[] args)
    {
        var report =
            new[] { world.Rank, world.Size, args.Length > 1 && args[1] == "two words" ? 1 : 0 };
        if (parent.Rank < parent.Size)
            parent.Send(report, 0, 1);
        parent.Dispose();   // MP.Parent is System.MP's: Dispose does nothing
        return 0;
    }

    static void SameEverywhere<TException>(Action call, string parameter, string what)
        where TException : Exception
    {
        TException e = Check.Throws<TException>(call, what);
        if (e is ArgumentException a)
            Check.Equal(parameter, a.ParamName, what + ": names the parameter on every rank");
    }

    static int Main(string[] args)
    {
        Intercomm parent = MP.Parent;
        if (parent != null)
            return Child(parent, args);

        string self = Assembly.GetExecutingAssembly().Location;
        Intercomm children = null;
        bool supported = true;
        try {
            children = world.Spawn(self, new[] { "child", "two words" }, 2, 0);
        } catch (NotSupportedException e) {
            supported = false;
            Check.True(e.Message.Contains("Spawn") && e.Message.Contains("MPI_Open_port"),
                       "NotSupportedException names the limitation: " + e.Message);
            if (rank == 0)
                Console.WriteLine("rank 0: Spawn is not supported here: " + e.Message);
        }
        // every rank agrees on the outcome
        var flags = new[] { supported ? 1 : 0 };
        var all = new int[1];
        world.Allreduce(flags, all, Op.Sum);
        Check.True(all[0] == 0 || all[0] == size, "every rank saw the same outcome of Spawn");

        if (children != null) {
            Check.Equal(2, children.RemoteSize, "two processes started");
            Check.Equal(size, children.Size, "the local group is the parent job");
            if (rank == 0) {
                var seen = new bool[2];
                for (int i = 0; i < 2; i++) {
                    var report = new int[3];
                    Status st = children.Recv(report, MP.AnySource, 1);
                    Check.Equal(st.Source, report[0], "a child reports its rank");
                    Check.Equal(2, report[1], "the children's World holds both");
                    Check.Equal(1, report[2], "the children got the arguments");
                    seen[report[0]] = true;
                }
                Check.True(seen[0] && seen[1], "both children reported");
            }
            children.Dispose();
        }

        // refusals at the root reach every rank before anyone enters MPI
        SameEverywhere<ArgumentNullException>(() =>
                                                  world.Spawn(rank == 0 ? null : self, null, 1, 0),
                                              "program", "a null program at the root");
        SameEverywhere<ArgumentException>(() => world.Spawn("no-such-program.exe", null, 1, 0),
                                          "program", "a program that does not exist");
        SameEverywhere<ArgumentOutOfRangeException>(() => world.Spawn(self, null, 0, 0), "maxProcs",
                                                    "maxProcs 0");
        SameEverywhere<ArgumentNullException>(() => world.Spawn(self, new string[] { null }, 1, 0),
                                              "args", "a null argument");
        SameEverywhere<ArgumentOutOfRangeException>(() => world.Spawn(self, null, 1, size), "root",
                                                    "root = Size");
        // the arguments that matter at the root only are ignored elsewhere: no refusal off the root
        if (!supported)
            Check.Throws<NotSupportedException>(
                () => world.Spawn(rank == 0 ? self : null, null, rank == 0 ? 1 : -5, 0),
                "arguments off the root are not checked");
        Intracomm gone = world.Dup();
        gone.Dispose();
        Check.Throws<ObjectDisposedException>(() => gone.Spawn(self, null, 1, 0),
                                              "Spawn on a disposed communicator");

        var mine = new[] { rank };
        var sum = new int[1];
        world.Allreduce(mine, sum, Op.Sum);
        Check.Equal(size * (size - 1) / 2, sum[0], "World usable after Spawn");
        return Check.FinishWithNoPinLeft("SpawnTest");
    }
}

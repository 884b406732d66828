// CommTest — communicator names (Comm.Name), Comm.Compare and Intracomm.SplitShared (API.md
// version 3): World's and Self's names, "" for every new communicator (Dup, Split, Create,
// CreateCart, SplitShared, Merge), 127 ASCII characters round-trip, the refusals (null, longer,
// not ASCII, a disposed communicator) each followed by a good call; Compare over identical,
// congruent, similar and unequal pairs; SplitShared groups the ranks of one host (every rank of
// World on one machine), ordered by key.
using System;
using System.Linq;
using System.MP;

static class CommTest
{
    static readonly Intracomm world = MP.World;
    static readonly int rank = world.Rank, size = world.Size;

    static void StillWorks(Comm comm, string after)
    {
        comm.Name = "after";
        Check.Equal("after", comm.Name, $"after {after}: the name can be set");
        Check.Equal(size, world.Allreduce(1, Op.Sum), $"after {after}: World still works");
    }

    static void Names()
    {
        Check.Equal("MPI_COMM_WORLD", world.Name, "World's name");
        Check.Equal("MPI_COMM_SELF", MP.Self.Name, "Self's name");
        using (Intracomm dup = world.Dup())
        {
            Check.Equal("", dup.Name, "a Dup's name is \"\"");
            dup.Name = "solver";
            Check.Equal("solver", dup.Name, "a name round-trips");
            Check.Equal("MPI_COMM_WORLD", world.Name, "naming a Dup leaves World's name");
            using (Intracomm again = dup.Dup())
                Check.Equal("", again.Name, "a Dup of a named communicator is not named");
            string longest =
                new string(Enumerable.Range(0, 127).Select(i => (char)(' ' + i % 95)).ToArray());
            dup.Name = longest;
            Check.Equal(longest, dup.Name, "127 ASCII characters (all printable ones) round-trip");
            dup.Name = "tab\there";
            Check.Equal("tab\there", dup.Name, "control characters are ASCII too");
            dup.Name = "";
            Check.Equal("", dup.Name, "\"\" clears the name");

            var e = Check.Throws<ArgumentException>(() => dup.Name = longest + "x",
                                                    "a name of 128 characters");
            Check.True(e != null && e.GetType() == typeof(ArgumentException) &&
                           e.ParamName == "value" && e.Message.Contains("128"),
                       "the refusal names value and the length: " + e?.Message);
            StillWorks(dup, "a long name");
            Check.Throws<ArgumentNullException>(() => dup.Name = null, "a null name");
            StillWorks(dup, "a null name");
            e = Check.Throws<ArgumentException>(() => dup.Name = "naïve", "a name with ï");
            Check.True(e != null && e.GetType() == typeof(ArgumentException) &&
                           e.Message.Contains("U+00EF") && e.Message.Contains("character 2"),
                       "the refusal names the character and where: " + e?.Message);
            StillWorks(dup, "a name that is not ASCII");
            Check.Throws<ArgumentException>(() => dup.Name = "nul\0inside", "a name with NUL");
            Check.Equal("after", dup.Name, "a refused name leaves the old one");
            // each rank names its own communicator: the name is local
            dup.Name = "rank " + rank;
            world.Barrier();
            Check.Equal("rank " + rank, dup.Name, "names are local to each rank");
        }
        using (Intracomm split = world.Split(rank % 2, rank))
            Check.Equal("", split.Name, "a Split's name is \"\"");
        using (Intracomm shared = world.SplitShared(0))
            Check.Equal("", shared.Name, "SplitShared's name is \"\"");
        using (Group g = world.Group) using (Intracomm created = world.Create(g))
            Check.Equal("", created.Name, "Create's name is \"\"");
        using (CartComm cart = world.CreateCart(new[] { size }, new[] { false }, false))
            Check.Equal("", cart.Name, "CreateCart's name is \"\"");
        Intracomm disposed = world.Dup();
        disposed.Dispose();
        Check.Throws<ObjectDisposedException>(() => Console.Write(disposed.Name),
                                              "the name of a disposed communicator");
        Check.Throws<ObjectDisposedException>(() => disposed.Name = "x",
                                              "naming a disposed communicator");
        StillWorks(MP.Self, "a disposed communicator");
        MP.Self.Name = "MPI_COMM_SELF";
    }

    static void Compare()
    {
        Check.Equal(Comparison.Identical, Comm.Compare(world, world), "World with World");
        Check.Equal(Comparison.Identical, Comm.Compare(world, MP.World), "World with MP.World");
        using (Intracomm dup = world.Dup())
        {
            Check.Equal(Comparison.Congruent, Comm.Compare(world, dup), "World with its Dup");
            Check.Equal(Comparison.Congruent, Comm.Compare(dup, world), "and the other way round");
            Check.Equal(Comparison.Identical, Comm.Compare(dup, dup), "a Dup with itself");
        }
        using (Intracomm same = world.Split(0, rank))
            Check.Equal(Comparison.Congruent, Comm.Compare(world, same),
                        "a Split that keeps everyone in order");
        using (Intracomm reversed = world.Split(7, size - rank))
            Check.Equal(size == 1 ? Comparison.Congruent : Comparison.Similar,
                        Comm.Compare(world, reversed), "a Split in reverse order");
        using (Intracomm half = world.Split(rank % 2, rank))
            Check.Equal(size == 1 ? Comparison.Congruent : Comparison.Unequal,
                        Comm.Compare(world, half), "a Split in two");
        Check.Equal(size == 1 ? Comparison.Congruent : Comparison.Unequal,
                    Comm.Compare(world, MP.Self), "World with Self");
        Check.Equal(0, (int)Comparison.Identical, "Comparison.Identical is 0 (MPI_IDENT's place)");
        Check.Equal(3, (int)Comparison.Unequal, "Comparison.Unequal is 3");

        var e = Check.Throws<ArgumentNullException>(() => Comm.Compare(null, world),
                                                    "Compare(null, World)");
        Check.Equal("a", e?.ParamName, "names a");
        e = Check.Throws<ArgumentNullException>(() => Comm.Compare(world, null),
                                                "Compare(World, null)");
        Check.Equal("b", e?.ParamName, "names b");
        Intracomm disposed = world.Dup();
        disposed.Dispose();
        Check.Throws<ObjectDisposedException>(() => Comm.Compare(world, disposed),
                                              "Compare with a disposed communicator");
        StillWorks(MP.Self, "Compare refusals");
        MP.Self.Name = "MPI_COMM_SELF";
    }

    static void SplitShared()
    {
        string me = MP.ProcessorName;
        using (Intracomm host = world.SplitShared(0))
        {
            // the ranks of this host: those whose processor name is this rank's
            string[] names = world.OAllgather(new[] { me });
            int here = names.Count(n => n == me);
            Check.Equal(here, host.Size, "SplitShared: the ranks of this host");
            if (names.All(n => n == me)) {
                Check.Equal(size, host.Size, "on one machine: every rank of World");
                Check.Equal(Comparison.Congruent, Comm.Compare(world, host),
                            "on one machine: congruent to World");
            }
            // ordered by key (here 0): by rank in World
            int[] worldRanks = host.OAllgather(new[] { rank });
            Check.True(worldRanks.SequenceEqual(worldRanks.OrderBy(r => r)),
                       "key 0: in World's rank order");
            Check.True(worldRanks.All(r => names[r] == me), "every member is on this host");
            var sum = new int[1];
            host.Iallreduce(new[] { 1 }, sum, Op.Sum).Wait();
            Check.Equal(host.Size, sum[0], "the host's communicator works");
        }
        using (Intracomm reversed = world.SplitShared(-rank))
        {
            int[] worldRanks = reversed.OAllgather(new[] { rank });
            Check.True(worldRanks.SequenceEqual(worldRanks.OrderByDescending(r => r)),
                       "key -rank: in reverse order");
        }
        using (Intracomm sub =
                   world.Split(rank % 2, rank)) using (Intracomm subHost = sub.SplitShared(0))
            Check.True(subHost.Size <= sub.Size && subHost.Size >= 1,
                       "SplitShared of a Split: within it");
        Intracomm disposed = world.Dup();
        disposed.Dispose();
        Check.Throws<ObjectDisposedException>(() => disposed.SplitShared(0),
                                              "SplitShared of a disposed communicator");
        StillWorks(MP.Self, "SplitShared refused");
        MP.Self.Name = "MPI_COMM_SELF";
    }

    static int Main()
    {
        Names();
        Compare();
        SplitShared();
        world.Barrier();
        return Check.FinishWithNoPinLeft("CommTest");
    }
}

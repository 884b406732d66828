// GcProgressTest — while a rank is blocked in Recv, another thread's collections proceed, and
// the receive buffer stays in place with no GC handle: the wait's GC-safe region holds it in
// its stack mark, which the conservative stack scan pins, whether the array is in the nursery,
// old (moved by evacuating major collections, GcProgressTest_evacuating) or large. The data
// must arrive intact in every case (a buffer moved under MPI would miss it); the coop variant
// checks the same where native frames below the mark are not scanned.
using System;
using System.Collections.Generic;
using System.MP;
using System.Threading;

static class GcProgressTest
{
    const int CollectionsWhileBlocked = 30;
    static Intracomm world = MP.World;
    static int rank = world.Rank;
    static List<byte[]> keep = new List<byte[]>();

    static void BlockedReceive(string kind, byte[] buffer, int tag)
    {
        var payload = new byte[buffer.Length];
        for (int i = 0; i < payload.Length; i++)
            payload[i] = (byte)(i * 7 + tag + rank);
        MPStats before = MP.Stats;
        int gcsDone = 0;
        ThreadStart collect = () =>
        {
            while (MP.Stats.Operations == before.Operations) { }   // the Recv below has started
            for (int k = 0; k < CollectionsWhileBlocked; k++) {
                for (int j = 0; j < 200; j++)
                    keep.Add(new byte[64 + j]);   // garbage and survivors
                if (keep.Count > 5000)
                    keep.RemoveRange(0, 4000);
                GC.Collect(k % 3 == 2 ? 1 : 0);
                gcsDone++;
            }
            world.Send(payload, rank, tag);   // only now can the receive complete
        };
        var helper = new Thread(collect);
        helper.Start();
        Status st = world.Recv(buffer, rank, tag);
        helper.Join();
        MPStats after = MP.Stats;

        Check.Equal(CollectionsWhileBlocked, gcsDone,
                    kind + ": collections ran while this thread was blocked in Recv");
        Check.True(after.Collections - before.Collections >= CollectionsWhileBlocked,
                   kind + ": the GC hook saw them");
        bool intact = st.Count == buffer.Length;
        for (int i = 0; i < buffer.Length && intact; i++)
            intact = buffer[i] == payload[i];
        Check.True(intact, kind + ": data arrived intact in the (possibly moved) buffer");
        Check.Equal(0L, after.PinsTaken - before.PinsTaken,
                    kind + ": no GC handle pinned the buffer (its anchor did)");
        Check.Equal(0L, after.PinsLive, kind + ": no live pin afterwards");
    }

    static byte[][] holder = new byte[1][];

    /// <summary>An array promoted to the old generation. No stack slot may hold it during the
    /// collections: a conservatively scanned reference pins it, and pinned nursery objects stay
    /// in the nursery.</summary>
    static byte[] Promoted(int length)
    {
        AllocateIntoHolder(length);
        GC.Collect();
        GC.Collect();
        return holder[0];
    }

    [System.Runtime.CompilerServices.MethodImpl(
        System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static void AllocateIntoHolder(int length) { holder[0] = new byte[length]; }

    static int Main()
    {
        bool oldMoves = MP.OldGenerationMoves;
        bool hosted =
            Environment.GetEnvironmentVariable("MOTOR_EXPECT_OLD_GENERATION_MOVES") == null;
        if (!hosted)
            Check.Equal(Environment.GetEnvironmentVariable("MOTOR_EXPECT_OLD_GENERATION_MOVES") ==
                            "1",
                        oldMoves, "pin policy reads the effective MONO_GC_PARAMS");
        else
            Check.True(!oldMoves, "motor host disables old-generation evacuation");

        for (int round = 0; round < 3; round++) {
            var fresh = new byte[1000];
            Check.Equal(0, GC.GetGeneration(fresh), "fresh small array is in the nursery");
            BlockedReceive("nursery byte[1000]", fresh, 10 + round);
            // a nursery object that survives a collection unpinned is copied out of the nursery:
            // still generation 0 after 30 collections, it was held in place throughout
            Check.Equal(0, GC.GetGeneration(fresh),
                        "the nursery buffer stayed pinned in the nursery");

            byte[] old = Promoted(1000);
            Check.Equal(1, GC.GetGeneration(old), "promoted array is old");
            BlockedReceive("old byte[1000]", old, 20 + round);

            var large = new byte[200000];
            BlockedReceive("large byte[200000]", large, 30 + round);
        }
        world.Barrier();
        return Check.Finish("GcProgressTest");
    }
}

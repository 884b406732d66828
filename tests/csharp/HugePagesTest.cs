// HugePagesTest — the huge-page advice for large arrays (transfer/huge_pages.c, issue 36 item 4):
// a transfer that never reaches MPI (to or from ProcNull) asks for nothing, and its array's pages
// stay as they were; a real transfer hands a large array over once; small arrays never. The copy
// itself runs later on the core's own thread, so what it does to the pages is not checked here
// (bench/FirstSend.cs measures what it costs a collection).
using System;
using System.MP;
using System.Runtime.InteropServices;

static class HugePagesTest
{
    const int Large = 8 << 20, Small = 1 << 20;

    static long Handed => MP.Stats.HugePageArrays;

    static byte[] Fresh(int bytes)
    {
        var a = new byte[bytes];
        for (int i = 0; i < a.Length; i += 4096)
            a[i] = 1;   // every page touched, as a program's data is
        return a;
    }

    /// <summary>The AnonHugePages (kB) of the mapping holding a's data.</summary>
    static long HugeKiB(byte[] a)
    {
        GCHandle h = GCHandle.Alloc(a, GCHandleType.Pinned);
        long at = h.AddrOfPinnedObject().ToInt64();
        h.Free();   // an array this large lies in the large-object space: it never moves
        return Pages.AnonHugeKiB(at);
    }

    static void ProcNullAsksForNothing(Intracomm world)
    {
        long before = Handed;
        byte[] a = Fresh(Large);
        long pagesBefore = HugeKiB(a);
        world.Send(a, MP.ProcNull, 1);
        Check.Equal(pagesBefore, HugeKiB(a), "Send to ProcNull leaves the array's pages alone");
        world.Recv(a, MP.ProcNull, 1);
        world.Isend(a, MP.ProcNull, 1).Wait();
        world.Irecv(a, MP.ProcNull, 1).Wait();
        world.Send(a, 0, Large / 2, MP.ProcNull, 1);
        world.SendrecvReplace(a, 0, a.Length, MP.ProcNull, 1, MP.ProcNull, 1);
        using (Prequest p = world.SendInit(a, 0, Large, MP.ProcNull, 1))
        {
            p.Start();
            p.Wait();
        }
        Message m = world.Mprobe(MP.ProcNull, 1, out Status probed);
        m.Recv(a, 0, a.Length);
        Check.Equal(before, Handed, "no transfer to or from ProcNull asks for huge pages");
        Check.Equal(pagesBefore, HugeKiB(a), "nor changes the array's pages");
        // the next call that enters MPI hands over nothing left behind by those
        world.Barrier();
        Check.Equal(before, Handed, "a Barrier after them hands nothing over");
    }

    static void RealTransfersHandOverOnce(Intracomm world)
    {
        int next = (world.Rank + 1) % world.Size, prev = (world.Rank + world.Size - 1) % world.Size;
        byte[] send = Fresh(Large), recv = Fresh(Large), small = Fresh(Small);
        long before = Handed;
        world.Sendrecv(send, next, 2, recv, prev, 2);
        Check.Equal(before + 2, Handed, "a Sendrecv of two large arrays hands both over");
        world.Sendrecv(send, next, 2, recv, prev, 2);
        Check.Equal(before + 2, Handed, "each array once");
        byte[] smallRecv = new byte[Small];
        world.Sendrecv(small, next, 3, smallRecv, prev, 3);
        Check.Equal(before + 2, Handed, "arrays under 4 MiB are not handed over");
        Check.True(recv[4096] == 1 && smallRecv[0] == 1, "the data arrived");
        // a collective hands its arrays over too
        byte[] all = Fresh(Large);
        world.Bcast(all, 0);
        Check.Equal(before + 3, Handed, "Bcast of a large array hands it over");
    }

    static int Main()
    {
        Intracomm world = MP.World;
        ProcNullAsksForNothing(world);
        world.Barrier();
        RealTransfersHandOverOnce(world);
        return Check.FinishWithNoPinLeft("HugePagesTest");
    }
}

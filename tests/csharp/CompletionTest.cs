// CompletionTest — what a completion reports, each case reproduced as a user wrote it: a
// cancelled receive after other messages (MPI leaves the status's other fields stale), Wait and
// Test after a failed Wait, `await` while another thread is in Wait, and what a truncation says.
using System;
using System.MP;
using System.Threading;
using System.Threading.Tasks;

static class CompletionTest
{
    static readonly Intracomm world = Ring.World;
    static readonly int size = Ring.Size, next = Ring.Next, prev = Ring.Prev;

    // clang-format off
    static bool IsEmpty(Status s) =>
        s.Source == MP.AnySource && s.Tag == MP.AnyTag && s.Count == 0 && s.Bytes == 0;
    // clang-format on

    /// <summary>A receive cancelled before any message matched reports nothing arrived: MPI's
    /// empty status, never the envelope or size of a message received earlier.</summary>
    static void CancelledReceiveReportsNothing()
    {
        // Messages of sizes no int[1] could hold go through first, so stale fields would show
        // as a 10-byte or 96-byte message with another tag.
        Ring.Exchange(() => world.Send(new byte[10], next, 7),
                      () => world.Recv(new byte[10], prev, 7));
        Ring.Exchange(() => world.Send(new int[24], next, 8),
                      () => world.Recv(new int[24], prev, 8));
        for (int round = 0; round < 20; round++) {
            Request r = world.Irecv(new int[1], MP.AnySource, 99);
            r.Cancel();
            Status st = null;
            Exception failure = null;
            try {
                st = r.Wait();
            } catch (Exception e) {
                failure = e;
            }
            Check.True(
                failure == null,
                $"round {round}: Wait of a cancelled receive raises nothing: {failure?.Message}");
            if (st == null)
                continue;
            Check.True(st.Cancelled, $"round {round}: the status says Cancelled");
            Check.True(IsEmpty(st),
                       $"round {round}: a cancelled receive's status is empty, got {st}");
            Status again;
            Check.True(r.Test(out again) && again.Cancelled && IsEmpty(again),
                       "Test afterwards: the same empty status");
        }
        // a cancelled send of a message no receive matched: nothing was sent
        if (size == 1) {
            Request s = world.Issend(new int[5], 0, 98);
            s.Cancel();
            // MPI may fail to cancel a send: then only the matching receive completes it
            Status ss;
            bool received = false;
            while (!s.Test(out ss))
                if (!received && world.Iprobe(0, 98) != null) {
                    world.Recv(new int[5], 0, 98);
                    received = true;
                }
            if (ss.Cancelled)
                Check.True(ss.Count == 0 && ss.Bytes == 0,
                           "a cancelled send reports 0 elements sent, got " + ss);
            else
                Check.True(ss.Count == 5 && received,
                           "a send not cancelled was received whole, got " + ss);
        }
        world.Barrier();
    }

    /// <summary>A failed transfer stays failed: Wait and Test after it raise the same failure
    /// again, never a status no message produced.</summary>
    static void FailureIsReportedAgain()
    {
        int[] small = new int[2];
        Request r = null;
        Ring.Exchange(() => world.Send(new int[8], next, 7),
                      () =>
                      {
                          r = world.Irecv(small, prev, 7);
                          return null;
                      });
        MPException first = null;
        try {
            r.Wait();
        } catch (MPException e) {
            first = e;
        }
        Check.True(first != null, "Wait of a truncated receive raises MPException");
        Exception again = null;
        Status st = null;
        bool done = false;
        try {
            done = r.Test(out st);
        } catch (Exception e) {
            again = e;
        }
        Check.True(ReferenceEquals(first, again),
                   $"Test after a failed Wait raises the same failure, got done={done} {st}");
        again = null;
        try {
            st = r.Wait();
        } catch (Exception e) {
            again = e;
        }
        Check.True(ReferenceEquals(first, again),
                   $"Wait after a failed Wait raises the same failure, got {st}");
        // the same for a request that failed as it started (truncated at once)
        Request sent = world.Isend(new int[8], next, 9);
        world.Barrier();   // the message is on its way: the receive may find it as it starts
        Request early = world.Irecv(small, prev, 9);
        Exception e1 = null, e2 = null;
        try {
            early.Wait();
        } catch (Exception e) {
            e1 = e;
        }
        try {
            early.Wait();
        } catch (Exception e) {
            e2 = e;
        }
        Check.True(e1 is MPException && ReferenceEquals(e1, e2),
                   "a failure at the start is raised by every Wait");
        sent.Wait();
        world.Barrier();
    }

    /// <summary>A truncation says who sent it, with which tag, and the buffer's size.</summary>
    static void TruncationSaysWhatArrived()
    {
        MPException e = null;
        Ring.Exchange(() => world.Send(new int[8], next, 11),
                      () =>
                      {
                          try {
                              world.Recv(new int[2], prev, 11);
                          } catch (MPException x) {
                              e = x;
                          }
                          return null;
                      });
        Check.True(e != null, "a truncated Recv raises MPException");
        if (e == null)
            return;
        string m = e.Message;
        Check.True(m.Contains("rank " + prev) && m.Contains("tag 11"),
                   "the truncation names the source and tag: " + m);
        // MPICH 4.0 reports no size for a truncated message (not in the status, not in its text):
        // the buffer's size is what can be said, with the message longer than that.
        Check.True(m.Contains("longer than the 8 bytes (2 elements of 4 bytes)"),
                   "the truncation names the buffer's size: " + m);
        Check.True(!m.Contains("MPIR_") && !m.Contains("MPID") && !m.Contains("0x"),
                   "no MPICH internals: " + m);
        MPException ie = null;
        Ring.Exchange(() => world.Send(new int[8], next, 12),
                      () =>
                      {
                          try {
                              world.Irecv(new int[2], prev, 12).Wait();
                          } catch (MPException x) {
                              ie = x;
                          }
                          return null;
                      });
        Check.True(ie != null && ie.Message.Contains("rank " + prev + " with tag 12") &&
                       ie.Message.Contains("8 bytes"),
                   "a truncated Irecv says the same: " + ie?.Message);
    }

    /// <summary>`await` on a request another thread is waiting on: both get the real status,
    /// and so does every later Wait.</summary>
    static void AwaitAndWaitAgree()
    {
        if (MP.ThreadLevel < 3)
            return;
        int rounds = 300, wrong = 0, failed = 0;
        for (int k = 0; k < rounds; k++) {
            var buf = new int[1];
            Request r = world.Irecv(buf, prev, 1);
            Status waited = null;
            ThreadStart wait = () =>
            {
                try {
                    waited = r.Wait();
                } catch (InvalidOperationException) { }
            };
            var waiter = new Thread(wait);
            waiter.Start();
            Task<Status> t = r.AsTask();
            world.Send(new int[] { k }, next, 1);
            Status awaitedStatus = null;
            try {
                awaitedStatus = t.Result;
            } catch (AggregateException) {
                failed++;
            }
            waiter.Join();
            Status later = null;
            try {
                later = r.Wait();
            } catch (Exception) {
                failed++;
            }
            foreach (Status s in new[] { waited, awaitedStatus, later })
                if (s != null && (s.Source != prev || s.Tag != 1 || s.Count != 1 || s.Bytes != 4))
                    wrong++;
            if (buf[0] != k)
                wrong++;
        }
        Check.Equal(
            0, wrong,
            $"statuses of {rounds} receives both awaited and waited on that are not the message's");
        Check.Equal(0, failed, "awaited receives whose task or later Wait failed");
        world.Barrier();
    }

    /// <summary>Two threads waiting on one request (one thread per request is the rule): the one
    /// the registry refuses gets InvalidOperationException, and that refusal is not the
    /// transfer's failure — the request completes with the message's status for good.</summary>
    static void RefusedSecondWaiterLeavesTheRequestAlone()
    {
        int rounds = 200, spoiled = 0;
        for (int k = 0; k < rounds; k++) {
            var buf = new int[1];
            Request r = world.Irecv(buf, prev, 2);
            ThreadStart wait = () =>
            {
                try {
                    r.Wait();
                } catch (InvalidOperationException) { }
            };
            var other = new Thread(wait);
            other.Start();
            Request s = world.Isend(new[] { k }, next, 2);
            try {
                r.Wait();
            } catch (InvalidOperationException) { }
            other.Join();
            s.Wait();
            try {
                Status st = r.Wait();
                if (st.Source != prev || st.Count != 1 || buf[0] != k)
                    spoiled++;
            } catch (Exception) {
                spoiled++;
            }
        }
        Check.Equal(
            0, spoiled,
            $"receives of {rounds} whose later Wait failed or lied after a refused second waiter");
        world.Barrier();
    }

    static int Main()
    {
        CancelledReceiveReportsNothing();
        FailureIsReportedAgain();
        TruncationSaysWhatArrived();
        AwaitAndWaitAgree();
        RefusedSecondWaiterLeavesTheRequestAlone();
        return Check.FinishWithNoPinLeft("CompletionTest");
    }
}

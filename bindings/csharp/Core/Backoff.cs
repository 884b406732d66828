// Backoff — how System.MP's own polling loops (Request.WaitAny and WaitSome, the object arrays'
// scheduler) pause between polls that found nothing when waits yield (MP.WaitPolicy == Yield:
// the host's ranks outnumber its cores, or MOTOR_WAIT=yield). The same steps as the core's wait
// loop (transfer/wait.c): poll without pause for a short while, then Thread.Yield for a while, then
// naps that double up to a cap. With the Spin policy the loops keep their own behaviour.
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.MP
{
    internal struct Backoff
    {
        // Keep in step with mpc_backoff_pause in mpc/wait_policy.c (BACKOFF_*), where the steps
        // were measured.
        static readonly long SpinTicks = Stopwatch.Frequency / 50000,   // 20 µs
            YieldTicks = Stopwatch.Frequency / 10000;                   // 100 µs
        const uint NapMinMicroseconds = 1, NapMaxMicroseconds = 100;

        static int yields = -1;   // -1: not read yet (the core starts MPI when it is)

        /// <summary>Whether waits yield: read from the core once.</summary>
        internal static bool Yields
        {
            get {
                int y = Volatile.Read(ref yields);
                if (y < 0)
                    Volatile.Write(ref yields, y = MP.WaitPolicy == WaitPolicy.Yield ? 1 : 0);
                return y == 1;
            }
        }

        long since;
        uint nap;

        /// <summary>One pause after a poll that found nothing (Yield policy only).</summary>
        internal void Pause()
        {
            long now = Stopwatch.GetTimestamp();
            if (since == 0) {
                since = now;
                nap = NapMinMicroseconds;
                return;
            }
            long waited = now - since;
            if (waited < SpinTicks)
                return;
            if (waited < YieldTicks) {
                Thread.Yield();
                return;
            }
            usleep(nap);
            nap = Math.Min(nap * 2, NapMaxMicroseconds);
        }

        /// <summary>Back to polling without pause (something arrived).</summary>
        internal void Reset() => since = 0;

        [DllImport("libc", SetLastError = false)]
        static extern int usleep(uint microseconds);
    }
}

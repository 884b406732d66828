// loggp — LogGP parameter assessment by parametrised round trips (Hoefler, Lichei, Rehm,
// "Low-overhead LogGP parameter assessment for modern interconnection networks", the method
// Netgauge implements). Rank 0 is the client, rank 1 the server.
//   PRTT(n, d, s): the client sends n messages of s bytes, busy-waiting d µs between two sends;
//   the server receives all n, then answers with one message of s bytes. Time per round trip.
// Metrics per size s (all µs):
//   prtt1 = PRTT(1, 0, s)
//   os    = (PRTT(n, d, s) - PRTT(1, 0, s)) / (n - 1) - d, with d = PRTT(1, 0, s)   (send overhead)
//   T     = (PRTT(n, 0, s) - PRTT(1, 0, s)) / (n - 1) = g + (s - 1)·G           (Netgauge Fig. 7)
//   or    = the time the client's Recv takes when the answer is already there (sent, then a
//           delay of 2·PRTT(1, 0, s) before the Recv)                           (receive overhead)
// The driver fits g and G to T(s) and estimates L = PRTT(1,0,s)/2 - os - or - (s-1)·G.
sealed class LogGP : Pattern
{
    public const int N = 16;   // Netgauge's n
    object message;
    public override string Name => "loggp";
    public override int Iterations(long bytes) => BenchCommon.Iterations(bytes * N) / N + 3;
    public override void Prepare(Context c, long bytes) => message = c.T.NewMessage(bytes);

    public override void Repetition(Context c, long bytes, int iterations)
    {
        if (c.Rank > 1)
            return;
        double prtt1 = Prtt(c, bytes, iterations, 1, 0);
        double prttn = Prtt(c, bytes, iterations, N, 0);
        // The server does not need d; the client tells nobody: both run the same sequence.
        double prttd = Prtt(c, bytes, iterations, N, c.Rank == 0 ? prtt1 : 0);
        double or = ReceiveOverhead(c, bytes, iterations, 2 * prtt1);
        c.Emit("prtt1", prtt1);
        c.Emit("os", (prttd - prtt1) / (N - 1) - prtt1);
        c.Emit("T", (prttn - prtt1) / (N - 1));
        c.Emit("or", or);
    }

    double Prtt(Context c, long bytes, int iterations, int n, double delay)
    {
        Transport t = c.T;
        long t0 = Context.Now();
        for (int i = 0; i < iterations; i++) {
            if (c.Rank == 0) {
                for (int k = 0; k < n; k++) {
                    if (k > 0 && delay > 0)
                        Context.Delay(delay);
                    c.Stamp(message, Context.Seed(0, i, k));
                    t.Send(message, 1, 0);
                }
                c.Verify(t.Recv(message, 1, 1), bytes, Context.Seed(1, i));
            } else {
                for (int k = 0; k < n; k++)
                    c.Verify(t.Recv(message, 0, 0), bytes, Context.Seed(0, i, k));
                c.Stamp(message, Context.Seed(1, i));
                t.Send(message, 0, 1);
            }
        }
        return Context.Microseconds(t0, Context.Now()) / iterations;
    }

    double ReceiveOverhead(Context c, long bytes, int iterations, double delay)
    {
        Transport t = c.T;
        double inRecv = 0;
        for (int i = 0; i < iterations; i++) {
            if (c.Rank == 0) {
                c.Stamp(message, Context.Seed(0, i));
                t.Send(message, 1, 0);
                Context.Delay(delay);
                long r0 = Context.Now();
                object got = t.Recv(message, 1, 1);
                inRecv += Context.Microseconds(r0, Context.Now());
                c.Verify(got, bytes, Context.Seed(1, i));
            } else {
                c.Verify(t.Recv(message, 0, 0), bytes, Context.Seed(0, i));
                c.Stamp(message, Context.Seed(1, i));
                t.Send(message, 0, 1);
            }
        }
        return inRecv / iterations;
    }
}

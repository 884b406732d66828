// System.MP.Arrays — the arrays' own calls on a communicator, which the core binding never makes:
// a header of longs before the graph, one probe per receive, a forward that passes the bytes on,
// and the reads of the message taken. Over the internal calls (MPDirect), as Comm's own calls.
using System.Runtime.CompilerServices;

namespace System.MP.Arrays
{
    /// <summary>The scheduler's messages on its communicator (Wire: a header of raw longs, then
    /// the graph). A message taken lands in this thread's incoming buffer, where it stays until
    /// the next take or split collective (Comm.ReleaseIncoming gives the buffer back).</summary>
    internal sealed class Channel
    {
        readonly Comm comm;   // its handle is read at each call: a disposed one is refused

        internal Channel(Comm comm) { this.comm = comm; }

        /// <summary>Sends header's longs (null: none), then the graph, to dest; both are copied
        /// now. Never waits: a send that does not finish at once runs on in the core.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal void Post(long[] header, object graph, int dest, int tag) =>
            Errors.Check(MPDirect.OPost(comm.handle, comm.peers, header, graph, dest, tag));

        /// <summary>Receives the next message matching (source, tag), if one waits, into this
        /// thread's incoming buffer (replacing what was there), copies its first bytes into
        /// header (zeros past a shorter message), and says whether one did. Read it with
        /// ReadIncoming or ReadIncomingAfter, or pass it on with Forward, before the next take or
        /// split collective.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal bool Take(int source, int tag, long[] header, ref StatusData st)
        {
            int found;
            Errors.Check(
                MPDirect.OTake(comm.handle, comm.peers, source, tag, header, out found, ref st));
            return found != 0;
        }

        /// <summary>Sends the message taken last to dest with header's longs in place of its own
        /// first ones, the rest as it came (neither read nor written again). Never waits.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal void Forward(long[] header, int dest, int tag) =>
            Errors.Check(MPDirect.OForward(comm.handle, comm.peers, header, dest, tag));

        /// <summary>The graph of the message taken (bytes long), whose root must be a T (under
        /// the process's receive budget: the arrays' messages are the library's own).</summary>
        internal static T ReadIncoming<T>(int bytes)
        {
            object result;
            using (new ReceiveBudget.Scope(MP.ReceiveBudget)) result =
                Comm.ReadIncoming(0, bytes, typeof(T));
            return result == null ? default(T) : (T)result;
        }

        /// <summary>Copies the taken message's first bytes into header, then reads the graph
        /// after them.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static object ReadIncomingAfter(long[] header, Type expected)
        {
            object result;
            using (new ReceiveBudget.Scope(MP.ReceiveBudget))
                Errors.Check(MPDirect.SdReadIncomingAfter(header, expected, out result));
            return result;
        }
    }
}

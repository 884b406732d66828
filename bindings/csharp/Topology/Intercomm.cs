// Intercomm — a communicator between two disjoint groups of processes.
using System.Runtime.CompilerServices;

namespace System.MP
{
    /// <summary>A communicator between two disjoint groups (an intercommunicator), made by
    /// <see cref="Intracomm.CreateIntercomm"/> or <see cref="Intracomm.Spawn"/>, or
    /// <see cref="MP.Parent"/> in a spawned program. Rank and Size are this process's in its own
    /// (local) group, and <see cref="Comm.Group"/> is the local group; point-to-point calls and
    /// the O-calls address the other (remote) group: dest and source run over
    /// 0..<see cref="RemoteSize"/>-1. There are no collectives on an intercommunicator (nor
    /// Dup): <see cref="Merge"/> first.</summary>
    public sealed class Intercomm : Comm
    {
        readonly int remoteSize;

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal Intercomm(int handle, bool owned) : base(handle, owned)
        {
            Errors.Check(MPDirect.CommRemoteSize(handle, out remoteSize));
            peers = remoteSize;
        }

        /// <summary>The number of processes in the remote group: the ranks that point-to-point
        /// calls and the O-calls address.</summary>
        public int RemoteSize => remoteSize;

        /// <summary>One intracommunicator over both groups (MPI_Intercomm_merge): the group whose
        /// processes pass high = false comes first, the other after it, each in its own rank
        /// order (when both pass the same value, the order of the groups is MPI's choice).
        /// Collective over both groups. Dispose it when done.</summary>
        /// <exception cref="ObjectDisposedException">the communicator has
        /// been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public Intracomm Merge(bool high)
        {
            int newComm;
            Errors.Check(MPDirect.IntercommMerge(handle, high ? 1 : 0, out newComm));
            return new Intracomm(newComm, true);
        }
    }
}

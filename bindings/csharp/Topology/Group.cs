// Group — an ordered set of processes (MPI_Group): the set algebra behind Intracomm.Create.
using System.Collections.Concurrent;
using System.Runtime.CompilerServices;

namespace System.MP
{
    /// <summary>An ordered set of processes (MPI_Group), taken from a communicator with
    /// <see cref="Comm.Group"/>. Groups are local objects: building one involves no other
    /// process. Ranks in a group run from 0 to Size - 1 in the group's order; the set operations
    /// keep MPI's orderings. Dispose a group when done with it.</summary>
    /// <remarks>A group that is not disposed is freed later: its finalizer never calls MPI (the
    /// finalizer thread may not be allowed to, and MPI may have ended), it only queues the handle,
    /// and the next group operation of the program frees the queued ones on its
    /// own thread.</remarks>
    public sealed class Group : IDisposable
    {
        int handle;
        bool disposed;
        readonly int size, rank;

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal Group(int handle)
        {
            this.handle = handle;
            int rc = MPDirect.GroupSize(handle, out size);
            if (rc == 0)
                rc = MPDirect.GroupRank(handle, out rank);
            if (rc != 0) {
                Exception e = Errors.Make(rc);
                MPDirect.GroupFree(ref this.handle);
                disposed = true;
                GC.SuppressFinalize(this);
                throw e;
            }
        }

        /// <summary>The number of processes in the group.</summary>
        public int Size => size;

        /// <summary>This process's rank in the group, or <see cref="MP.Undefined"/> when it is
        /// not a member.</summary>
        public int Rank => rank;

        /// <summary>The group of the processes at <paramref name="ranks"/> of this group, in that
        /// order (MPI_Group_incl): rank i of the new group is ranks[i] of this one. An empty array
        /// gives the empty group.</summary>
        /// <exception cref="ArgumentNullException">ranks is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">a rank lies outside 0..Size-1.</exception>
        /// <exception cref="ArgumentException">a rank appears twice.</exception>
        /// <exception cref="ObjectDisposedException">the group has been disposed.</exception>
        public Group Incl(int[] ranks) => InclExcl(ranks, 0);

        /// <summary>This group without the processes at <paramref name="ranks"/>, the others in
        /// their order (MPI_Group_excl).</summary>
        /// <exception cref="ArgumentNullException">ranks is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">a rank lies outside 0..Size-1.</exception>
        /// <exception cref="ArgumentException">a rank appears twice.</exception>
        /// <exception cref="ObjectDisposedException">the group has been disposed.</exception>
        public Group Excl(int[] ranks) => InclExcl(ranks, 1);

        [MethodImpl(MethodImplOptions.NoInlining)]
        Group InclExcl(int[] ranks, int exclude)
        {
            int h = Handle;
            FreeOrphans();
            int newGroup;
            Errors.Check(MPDirect.GroupInclExcl(h, ranks, exclude, out newGroup));
            return new Group(newGroup);
        }

        /// <summary>The processes of a, then those of b that are not in a, each part in its
        /// group's order (MPI_Group_union).</summary>
        /// <exception cref="ArgumentNullException">a or b is null.</exception>
        /// <exception cref="ObjectDisposedException">a or b has been disposed.</exception>
        public static Group Union(Group a, Group b) => Combine(a, b, Combination.Union);

        /// <summary>The processes of a that are also in b, in a's order
        /// (MPI_Group_intersection).</summary> <exception cref="ArgumentNullException">a or b is
        /// null.</exception> <exception cref="ObjectDisposedException">a or b has
        /// been disposed.</exception>
        public static Group Intersection(Group a,
                                         Group b) => Combine(a, b, Combination.Intersection);

        /// <summary>The processes of a that are not in b, in a's order
        /// (MPI_Group_difference).</summary> <exception cref="ArgumentNullException">a or b is
        /// null.</exception> <exception cref="ObjectDisposedException">a or b has
        /// been disposed.</exception>
        public static Group Difference(Group a, Group b) => Combine(a, b, Combination.Difference);

        // GroupCombine's kinds: OPI_GROUP_COMBINES (opi/opi_constants.h), checked by ContractTest.
        static class Combination
        {
            internal const int Union = 0, Intersection = 1, Difference = 2;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static Group Combine(Group a, Group b, int kind)
        {
            if (a == null)
                throw new ArgumentNullException(nameof(a));
            if (b == null)
                throw new ArgumentNullException(nameof(b));
            int ha = a.Handle, hb = b.Handle;
            FreeOrphans();
            int newGroup;
            Errors.Check(MPDirect.GroupCombine(ha, hb, kind, out newGroup));
            return new Group(newGroup);
        }

        /// <summary>The ranks in <paramref name="other"/> of the processes at
        /// <paramref name="ranks"/> of this group (MPI_Group_translate_ranks):
        /// <see cref="MP.Undefined"/> where a process is not in other. MP.ProcNull (-3) translates
        /// to itself.</summary>
        /// <exception cref="ArgumentNullException">ranks or other is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">a rank lies outside 0..Size-1.</exception>
        /// <exception cref="ObjectDisposedException">this group or other has
        /// been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public int[] TranslateRanks(int[] ranks, Group other)
        {
            if (ranks == null)
                throw new ArgumentNullException(nameof(ranks));
            if (other == null)
                throw new ArgumentNullException(nameof(other));
            int h = Handle, ho = other.Handle;
            var result = new int[ranks.Length];
            Errors.Check(MPDirect.GroupTranslateRanks(h, ranks, ho, result));
            return result;
        }

        /// <summary>Frees the group (MPI_Group_free). Communicators made from it are not affected;
        /// a second Dispose does nothing.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Dispose()
        {
            if (disposed)
                return;
            disposed = true;
            GC.SuppressFinalize(this);
            Errors.Check(MPDirect.GroupFree(ref handle));
        }

        /// <summary>Queues the handle for freeing by the program's next group operation: a
        /// finalizer must not call MPI.</summary>
        ~Group()
        {
            if (!disposed)
                orphans.Enqueue(handle);
        }

        static readonly ConcurrentQueue<int> orphans = new ConcurrentQueue<int>();

        /// <summary>Frees the groups whose finalizers ran, on a thread that is
        /// calling MPI.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static void FreeOrphans()
        {
            while (orphans.TryDequeue(out int h))
                MPDirect.GroupFree(ref h);   // nothing to report to: a failure leaks one handle
        }

        /// <summary>The MPI handle; ObjectDisposedException after Dispose.</summary>
        internal int Handle
        {
            get {
                if (disposed)
                    throw new ObjectDisposedException(nameof(Group),
                                                      "System.MP: the group has been disposed");
                return handle;
            }
        }

        /// <summary>Size and rank on one line.</summary>
        public override string ToString() =>
            $"Group(size={size}, rank={(rank == MP.Undefined ? "undefined" : rank.ToString())})";
    }

    public partial class Comm
    {
        /// <summary>The group of this communicator's processes (MPI_Comm_group), in rank order; of
        /// an intercommunicator, its local group. Each read returns a new Group: dispose it when
        /// done.</summary>
        /// <exception cref="ObjectDisposedException">the communicator has
        /// been disposed.</exception>
        public Group Group
        {
            [MethodImpl(MethodImplOptions.NoInlining)]
            get
            {
                Group.FreeOrphans();
                int group;
                Errors.Check(MPDirect.CommGroup(handle, out group));
                return new Group(group);
            }
        }
    }
}

// Window — one-sided communication (MPI RMA) over managed arrays: every rank exposes an array (or
// nothing), and any rank reads, writes and updates the others' arrays with Put, Get, Accumulate,
// FetchAndOp and CompareAndSwap inside epochs (Fence; Lock/Unlock; LockAll/UnlockAll). The core
// owns the MPI window, the pinned exposed array and the origin arrays held until their epoch
// closes (opi/opi_window.c; docs/design.md, "Windows").
using System.Runtime.CompilerServices;
using System.Threading;

namespace System.MP
{
    /// <summary>A window for one-sided communication (MPI_Win): each rank of a communicator
    /// exposes a managed array, or nothing, and every rank can then access the exposed arrays
    /// of all ranks directly — <see cref="Put"/>, <see cref="Get"/>, <see cref="Accumulate"/>,
    /// <see cref="FetchAndOp{T}"/>, <see cref="CompareAndSwap{T}"/> — without the target taking
    /// part in each transfer.</summary>
    /// <remarks>
    /// <para><b>Exposed memory.</b> The exposed array does not move and is not collected while
    /// the window lives: the library pins it from <see cref="Create"/> to
    /// <see cref="Dispose"/>, whatever its size and generation (a small young array stays in
    /// the nursery, pinned, until then). Target indices are element indices into the target's
    /// array (linear, row-major for a multi-dimensional array); every rank knows every rank's
    /// exposed count and element type, so a bad index or a mismatched element type is refused
    /// at the origin before anything moves. All ranks that expose memory expose one element
    /// type, exactly (<c>long</c> ≠ <c>double</c>).</para>
    /// <para><b>Epochs.</b> Operations are allowed inside an epoch: after a <see cref="Fence"/>
    /// (collective; active target: every rank calls it, and the next Fence completes every
    /// operation of the epoch on every rank), or inside <see cref="Lock"/>/<see cref="Unlock"/>
    /// of the target or <see cref="LockAll"/>/<see cref="UnlockAll"/> (passive target: only the
    /// origin calls them). An operation outside an epoch raises <see cref="MPException"/>,
    /// never a crash. <see cref="FetchAndOp{T}"/> and <see cref="CompareAndSwap{T}"/> return
    /// their value at once, so they need a passive epoch of the target.</para>
    /// <para><b>Origin arrays.</b> The array given to Put, Get or Accumulate is the library's
    /// until the epoch that covers it closes: <see cref="Fence"/>, <see cref="Unlock"/> of that
    /// target, <see cref="UnlockAll"/>, <see cref="Flush"/> of that target,
    /// <see cref="FlushAll"/> or <see cref="Dispose"/>. It stays in place meanwhile (pinned if
    /// the collector could move it); do not write a Put's range or read a Get's range before
    /// then — a Get's data is defined only afterwards.</para>
    /// <para><b>Threads.</b> Several threads may issue operations on one window (MPI's thread
    /// level permitting); Dispose must not run concurrently with another call on the same
    /// window. A window dropped without Dispose keeps its array pinned and is freed at exit,
    /// before MPI ends, with a warning on standard error.</para>
    /// </remarks>
    /// <example>A halo written into the neighbours' arrays between fences:
    /// <code>
    /// double[] local = new double[n + 2];                 // [0] and [n+1]: ghost cells
    /// using (Window win = Window.Create(MP.World, local)) {
    ///     win.Fence();
    ///     win.Put(local, 1, 1, left, n + 1);             // my first cell: left's right ghost
    ///     win.Put(local, n, 1, right, 0);                // my last cell: right's left ghost
    ///     win.Fence();                                   // both ghosts of local are in place
    /// }
    /// </code></example>
    public sealed class Window : IDisposable
    {
        // MPI_ERR_RMA_SYNC: the ErrorClass of an operation refused outside an epoch (the class MPI
        // reports for that misuse; opi/opi_constants.h, checked by ContractTest)
        internal const int RmaSyncClass = 50;

        int id;                  // the core's window id; 0 once disposed
        readonly Array memory;   // the exposed array (also pinned by the core): kept alive here
        readonly int size;

        Window(int id, Array memory, int size)
        {
            this.id = id;
            this.memory = memory;
            this.size = size;
        }

        /// <summary>Creates a window over <paramref name="memory"/> on every rank of
        /// <paramref name="comm"/> (MPI_Win_create; collective: every rank calls it, with its
        /// own array or null).</summary>
        /// <param name="comm">The communicator whose ranks take part.</param>
        /// <param name="memory">The array this rank exposes: any transportable array, of any
        /// rank (its elements count linearly, row-major); null or empty exposes nothing. It is
        /// pinned until <see cref="Dispose"/>.</param>
        /// <returns>The window.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="comm"/> is null.</exception>
        /// <exception cref="ObjectDisposedException">The communicator has been
        /// disposed.</exception>
        /// <exception cref="ArgumentException"><paramref name="memory"/> is not a transportable
        /// array, or two ranks expose different element types (raised on every rank; no window
        /// is made).</exception>
        /// <example><code>
        /// long[] counter = MP.World.Rank == 0 ? new long[1] : null;
        /// using (Window win = Window.Create(MP.World, counter)) { ... }
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static Window Create(Intracomm comm, Array memory)
        {
            if (comm == null)
                throw new ArgumentNullException(nameof(comm));
            int made;
            Errors.Check(MPDirect.WinCreate(comm.handle, comm.Size, memory, out made));
            return new Window(made, memory, comm.Size);
        }

        /// <summary>The number of elements <paramref name="rank"/> exposes (0 when it passed
        /// null).</summary>
        /// <param name="rank">A rank of the window's communicator.</param>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="rank"/> is outside
        /// 0 … Size - 1.</exception>
        /// <exception cref="ObjectDisposedException">The window has been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public int TargetCount(int rank)
        {
            long count;
            Errors.Check(MPDirect.WinTargetCount(Id(), rank, out count));
            return (int)count;
        }

        /// <summary>The number of ranks of the window's communicator.</summary>
        public int Size => size;

        /// <summary>Closes the current fence epoch and opens the next (MPI_Win_fence;
        /// collective). On return every Put, Get and Accumulate of the closing epoch, by any
        /// rank, is complete at its origin and target, and their origin arrays are released.
        /// </summary>
        /// <exception cref="MPException">A passive-target epoch (<see cref="Lock"/>,
        /// <see cref="LockAll"/>) is open on this rank, or MPI reports an error.</exception>
        /// <exception cref="ObjectDisposedException">The window has been disposed.</exception>
        /// <example><code>
        /// win.Fence();
        /// win.Get(copy, 0, copy.Length, peer, 0);
        /// win.Fence();          // copy holds peer's array now
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Fence() => Errors.Check(MPDirect.WinFence(Id()));

        /// <summary>Opens a passive-target epoch of <paramref name="rank"/> (MPI_Win_lock):
        /// operations on that target are allowed until <see cref="Unlock"/>.</summary>
        /// <param name="rank">The target rank.</param>
        /// <param name="exclusive">true: no other origin accesses the target's window
        /// meanwhile (MPI_LOCK_EXCLUSIVE); false: shared (MPI_LOCK_SHARED).</param>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="rank"/> is outside
        /// 0 … Size - 1.</exception>
        /// <exception cref="MPException">The target is locked already by this rank, a
        /// <see cref="LockAll"/> epoch is open, or MPI reports an error.</exception>
        /// <exception cref="ObjectDisposedException">The window has been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Lock(int rank, bool exclusive) =>
            Errors.Check(MPDirect.WinLock(Id(), rank, exclusive? 1: 0));

        /// <summary>Closes the passive-target epoch of <paramref name="rank"/> (MPI_Win_unlock):
        /// its operations are complete at origin and target, and their origin arrays are
        /// released.</summary>
        /// <param name="rank">The target rank, locked by <see cref="Lock"/>.</param>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="rank"/> is outside
        /// 0 … Size - 1.</exception>
        /// <exception cref="MPException"><paramref name="rank"/> is not locked by this rank,
        /// or MPI reports an error.</exception>
        /// <exception cref="ObjectDisposedException">The window has been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Unlock(int rank) => Errors.Check(MPDirect.WinUnlock(Id(), rank));

        /// <summary>Opens a shared passive-target epoch of every rank (MPI_Win_lock_all).
        /// </summary>
        /// <exception cref="MPException">A passive-target epoch is open already on this rank,
        /// or MPI reports an error.</exception>
        /// <exception cref="ObjectDisposedException">The window has been disposed.</exception>
        /// <example><code>
        /// win.LockAll();
        /// long ticket = win.FetchAndOp(1L, 0, 0, Op.Sum);    // a shared counter on rank 0
        /// win.UnlockAll();
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void LockAll() => Errors.Check(MPDirect.WinLockAll(Id()));

        /// <summary>Closes the <see cref="LockAll"/> epoch (MPI_Win_unlock_all): every operation
        /// is complete, every origin array released.</summary>
        /// <exception cref="MPException">No LockAll epoch is open, or MPI reports an
        /// error.</exception>
        /// <exception cref="ObjectDisposedException">The window has been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void UnlockAll() => Errors.Check(MPDirect.WinUnlockAll(Id()));

        /// <summary>Completes every operation on <paramref name="rank"/> at origin and target
        /// (MPI_Win_flush) and releases their origin arrays; the epoch stays open.</summary>
        /// <param name="rank">The target rank.</param>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="rank"/> is outside
        /// 0 … Size - 1.</exception>
        /// <exception cref="MPException">No passive-target epoch covers
        /// <paramref name="rank"/> (<see cref="Lock"/> of it, or <see cref="LockAll"/>), or
        /// MPI reports an error.</exception>
        /// <exception cref="ObjectDisposedException">The window has been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Flush(int rank) => Errors.Check(MPDirect.WinFlush(Id(), rank));

        /// <summary>Completes every operation on every target (MPI_Win_flush_all) and releases
        /// every origin array; the epochs stay open.</summary>
        /// <exception cref="MPException">No passive-target epoch is open, or MPI reports an
        /// error.</exception>
        /// <exception cref="ObjectDisposedException">The window has been disposed.</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void FlushAll() => Errors.Check(MPDirect.WinFlushAll(Id()));

        /// <summary>Writes <paramref name="count"/> elements of <paramref name="origin"/> from
        /// <paramref name="offset"/> into the array of <paramref name="targetRank"/> from
        /// element <paramref name="targetIndex"/> (MPI_Put). Complete when the epoch closes;
        /// the origin array is the library's until then.</summary>
        /// <param name="origin">An array of the window's element type (any rank: offset and
        /// count are linear, row-major).</param>
        /// <param name="offset">The first element of origin to write.</param>
        /// <param name="count">The number of elements.</param>
        /// <param name="targetRank">The target rank, or <see cref="MP.ProcNull"/> (nothing
        /// happens).</param>
        /// <param name="targetIndex">The first element of the target's array written.</param>
        /// <exception cref="ArgumentNullException"><paramref name="origin"/> is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">offset or count outside origin;
        /// targetRank outside the communicator; targetIndex … targetIndex + count - 1 outside
        /// the target's array.</exception>
        /// <exception cref="ArgumentException">origin is not a transportable array, or its
        /// element type is not the window's.</exception>
        /// <exception cref="MPException">No epoch covers the target (see the class remarks),
        /// or MPI reports an error.</exception>
        /// <exception cref="ObjectDisposedException">The window has been disposed.</exception>
        /// <example><code>
        /// win.Lock(peer, true);
        /// win.Put(row, 0, row.Length, peer, peerRowStart);
        /// win.Unlock(peer);
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Put(Array origin, int offset, int count, int targetRank, long targetIndex) =>
            Errors.Check(MPDirect.WinPut(Id(), origin, offset, count, targetRank, targetIndex));

        /// <summary>Reads <paramref name="count"/> elements of the array of
        /// <paramref name="targetRank"/> from element <paramref name="targetIndex"/> into
        /// <paramref name="origin"/> from <paramref name="offset"/> (MPI_Get). The data is
        /// defined only once the epoch closes (or a Flush of the target).</summary>
        /// <param name="origin">An array of the window's element type.</param>
        /// <param name="offset">The first element of origin written.</param>
        /// <param name="count">The number of elements.</param>
        /// <param name="targetRank">The target rank, or <see cref="MP.ProcNull"/>.</param>
        /// <param name="targetIndex">The first element of the target's array read.</param>
        /// <exception cref="ArgumentNullException"><paramref name="origin"/> is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">As <see cref="Put"/>.</exception>
        /// <exception cref="ArgumentException">As <see cref="Put"/>.</exception>
        /// <exception cref="MPException">No epoch covers the target, or MPI reports an
        /// error.</exception>
        /// <exception cref="ObjectDisposedException">The window has been disposed.</exception>
        /// <example><code>
        /// win.Fence();
        /// win.Get(copy, 0, n, peer, 0);
        /// win.Fence();
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Get(Array origin, int offset, int count, int targetRank, long targetIndex) =>
            Errors.Check(MPDirect.WinGet(Id(), origin, offset, count, targetRank, targetIndex));

        /// <summary>Combines <paramref name="count"/> elements of <paramref name="origin"/> into
        /// the target's array element by element, target = target op origin, atomically per
        /// element with respect to other Accumulates and FetchAndOps (MPI_Accumulate).
        /// <see cref="Op.Replace"/> writes atomically.</summary>
        /// <param name="origin">An array of the window's element type (a primitive
        /// type).</param>
        /// <param name="offset">The first element of origin.</param>
        /// <param name="count">The number of elements.</param>
        /// <param name="targetRank">The target rank, or <see cref="MP.ProcNull"/>.</param>
        /// <param name="targetIndex">The first element of the target's array updated.</param>
        /// <param name="op">A built-in operator (<see cref="Op.Sum"/>, Prod, Min, Max, LAnd,
        /// LOr, BAnd, BOr, BXor) or <see cref="Op.Replace"/>.</param>
        /// <exception cref="ArgumentNullException">origin or op is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">As <see cref="Put"/>.</exception>
        /// <exception cref="ArgumentException">As <see cref="Put"/>; op is
        /// <see cref="Op.NoOp"/>, or not defined for the element type.</exception>
        /// <exception cref="NotSupportedException">op is a user operator
        /// (<see cref="Op.Create{T}"/>).</exception>
        /// <exception cref="MPException">No epoch covers the target, or MPI reports an
        /// error.</exception>
        /// <exception cref="ObjectDisposedException">The window has been disposed.</exception>
        /// <example><code>
        /// win.Fence();
        /// win.Accumulate(partial, 0, partial.Length, 0, 0, Op.Sum);   // histogram on rank 0
        /// win.Fence();
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Accumulate(Array origin, int offset, int count, int targetRank,
                               long targetIndex, Op op)
        {
            if (op == null)
                throw new ArgumentNullException(nameof(op));
            Errors.Check(MPDirect.WinAccumulate(Id(), origin, offset, count, targetRank,
                                                targetIndex, op.Code));
            GC.KeepAlive(op);
        }

        /// <summary>Atomically combines <paramref name="value"/> into one element of the
        /// target's array and returns the element's previous value (MPI_Fetch_and_op, then
        /// MPI_Win_flush of the target, so the value is returned at once).</summary>
        /// <typeparam name="T">A primitive type: the window's element type.</typeparam>
        /// <param name="value">The operand (ignored by <see cref="Op.NoOp"/>).</param>
        /// <param name="targetRank">The target rank, or <see cref="MP.ProcNull"/> (returns
        /// default(T)).</param>
        /// <param name="targetIndex">The element of the target's array.</param>
        /// <param name="op">A built-in operator, <see cref="Op.Replace"/> (an atomic swap) or
        /// <see cref="Op.NoOp"/> (an atomic read).</param>
        /// <returns>The element's value before the operation.</returns>
        /// <exception cref="ArgumentNullException">op is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException">targetRank or targetIndex out of
        /// range.</exception>
        /// <exception cref="ArgumentException">T is not a primitive type, not the window's
        /// element type, or op is not defined for it.</exception>
        /// <exception cref="NotSupportedException">op is a user operator.</exception>
        /// <exception cref="MPException">No <see cref="Lock"/> of the target nor
        /// <see cref="LockAll"/> epoch is open, or MPI reports an error.</exception>
        /// <exception cref="ObjectDisposedException">The window has been disposed.</exception>
        /// <example><code>
        /// win.Lock(0, false);
        /// long next = win.FetchAndOp(1L, 0, 0, Op.Sum);      // a ticket from rank 0's counter
        /// win.Unlock(0);
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public T FetchAndOp<T>(T value, int targetRank, long targetIndex, Op op)
            where T : struct
        {
            if (op == null)
                throw new ArgumentNullException(nameof(op));
            T[] v = Scratch<T>.Get();
            v[0] = value;
            Errors.Check(MPDirect.WinFetchAndOp(Id(), v, targetRank, targetIndex, op.Code));
            GC.KeepAlive(op);
            return v[2];
        }

        /// <summary>Atomically replaces one element of the target's array with
        /// <paramref name="value"/> if it equals <paramref name="compare"/>, and returns the
        /// element's previous value either way (MPI_Compare_and_swap, then MPI_Win_flush of the
        /// target).</summary>
        /// <typeparam name="T">An integer type, bool or char: the window's element
        /// type.</typeparam>
        /// <param name="value">The new value.</param>
        /// <param name="compare">The value the element must have for the swap.</param>
        /// <param name="targetRank">The target rank, or <see cref="MP.ProcNull"/> (returns
        /// default(T)).</param>
        /// <param name="targetIndex">The element of the target's array.</param>
        /// <returns>The element's value before the call (equal to compare when the swap
        /// happened).</returns>
        /// <exception cref="ArgumentOutOfRangeException">targetRank or targetIndex out of
        /// range.</exception>
        /// <exception cref="ArgumentException">T is not an integer type, bool or char, or not
        /// the window's element type.</exception>
        /// <exception cref="MPException">No passive epoch of the target is open, or MPI
        /// reports an error.</exception>
        /// <exception cref="ObjectDisposedException">The window has been disposed.</exception>
        /// <example>A spin lock in rank 0's int[] flags:
        /// <code>
        /// win.Lock(0, false);
        /// while (win.CompareAndSwap(1, 0, 0, 0) != 0) { }    // take it
        /// ...
        /// win.FetchAndOp(0, 0, 0, Op.Replace);               // give it back
        /// win.Unlock(0);
        /// </code></example>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public T CompareAndSwap<T>(T value, T compare, int targetRank, long targetIndex)
            where T : struct
        {
            T[] v = Scratch<T>.Get();
            v[0] = value;
            v[1] = compare;
            Errors.Check(MPDirect.WinCompareAndSwap(Id(), v, targetRank, targetIndex));
            return v[2];
        }

        /// <summary>Frees the window (MPI_Win_free; collective: every rank calls it). Open
        /// passive-target epochs are closed first (Unlock, UnlockAll) and a fence epoch with a
        /// last fence, so every operation completes; then the exposed array is unpinned and every
        /// origin array released. Calling Dispose again does nothing; any other member then
        /// raises <see cref="ObjectDisposedException"/>.</summary>
        /// <exception cref="MPException">MPI reported an error (the window is freed as far as
        /// System.MP is concerned).</exception>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Dispose()
        {
            int made = Interlocked.Exchange(ref id, 0);
            if (made == 0)
                return;
            int rc = MPDirect.WinFree(made);
            GC.KeepAlive(memory);
            Errors.Check(rc);
        }

        int Id()
        {
            int made = Volatile.Read(ref id);
            if (made == 0)
                throw new ObjectDisposedException(nameof(Window),
                                                  "System.MP: the window has been disposed");
            return made;
        }

        // A per-thread T[3] (value, compare, result) for the atomics: no allocation per call.
        static class Scratch<T>
        {
            [ThreadStatic]
            static T[] values;

            internal static T[] Get() => values ?? (values = new T[3]);
        }
    }
}

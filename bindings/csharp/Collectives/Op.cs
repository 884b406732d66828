// Op — reduction operators: MPI's built-ins, and operators written in C#.
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace System.MP
{
    /// <summary>A reduction operator: one of MPI's built-ins, or a C# function made with
    /// <see cref="Create{T}"/>. Taken by Reduce, Allreduce, Scan, Exscan and ReduceScatterBlock
    /// (arrays), by Reduce&lt;T&gt;, Allreduce&lt;T&gt;, Scan&lt;T&gt; and Exscan&lt;T&gt; (one
    /// value per rank), and, built-ins only, by the non-blocking reductions (Ireduce, Iallreduce,
    /// Iscan, Iexscan, IreduceScatterBlock). <see cref="Replace"/> and <see cref="NoOp"/> are
    /// for one-sided communication only.</summary>
    public sealed class Op : IDisposable
    {
        // Codes 0..10 are MPI's built-ins, in the order of OPI_BUILTIN_OPS (opi/opi_internal.h;
        // ContractTest checks them); user operators get codes from the core.
        /// <summary>Sum (MPI_SUM): numbers.</summary>
        public static readonly Op Sum = new Op(0);
        /// <summary>Product (MPI_PROD): numbers.</summary>
        public static readonly Op Prod = new Op(1);
        /// <summary>Minimum (MPI_MIN): numbers.</summary>
        public static readonly Op Min = new Op(2);
        /// <summary>Maximum (MPI_MAX): numbers.</summary>
        public static readonly Op Max = new Op(3);
        /// <summary>Logical and (MPI_LAND): bool and integers (non-zero is true).</summary>
        public static readonly Op LAnd = new Op(4);
        /// <summary>Logical or (MPI_LOR): bool and integers.</summary>
        public static readonly Op LOr = new Op(5);
        /// <summary>Bitwise and (MPI_BAND): integers.</summary>
        public static readonly Op BAnd = new Op(6);
        /// <summary>Bitwise or (MPI_BOR): integers.</summary>
        public static readonly Op BOr = new Op(7);
        /// <summary>Bitwise exclusive or (MPI_BXOR): integers.</summary>
        public static readonly Op BXor = new Op(8);
        /// <summary>Replace (MPI_REPLACE), for one-sided communication only: the target's element
        /// becomes the origin's (Window.Accumulate, Window.FetchAndOp). A reduction (Reduce,
        /// Allreduce, Scan, ...) given it raises ArgumentException naming it.</summary>
        public static readonly Op Replace = new Op(9);
        /// <summary>No operation (MPI_NO_OP), for one-sided communication only: the target's
        /// element is left as it is, which makes Window.FetchAndOp an atomic read. A reduction
        /// given it raises ArgumentException naming it.</summary>
        public static readonly Op NoOp = new Op(10);

        internal int Code { get; private set; }
        internal readonly Combiner Combiner;   // user operators only

        Op(int code) { Code = code; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        Op(Combiner combiner, bool commutative)
        {
            Combiner = combiner;
            int code;
            Errors.Check(
                MPDirect.OpCreate(combiner.ElementType, combiner, commutative ? 1 : 0, out code));
            Code = code;
        }

        /// <summary>A user operator: combine(a, b) applied element-wise, T a primitive or a struct
        /// without references. Must be associative; for a non-commutative operator the result is
        /// x0 ∘ x1 ∘ … ∘ x(p-1) in rank order, with combine(a, b) = a ∘ b and a from the
        /// lower rank. MPI calls it natively through a libffi closure; no managed array is
        /// allocated per call. If it throws on any rank, the collective raises an MPException on
        /// every rank (the one that threw carries the exception as InnerException). One Op may be
        /// used by several threads at once.</summary>
        public static Op Create<T>(Func<T, T, T> combine, bool commutative = true)
            where T : struct
        {
            if (combine == null)
                throw new ArgumentNullException(nameof(combine));
            Core.Ensure();
            return Make(new Combiner<T>(combine), commutative);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static Op Make(Combiner combiner, bool commutative) => new Op(combiner, commutative);

        /// <summary>Frees the MPI operator and its closure (user operators; built-ins
        /// ignore it).</summary>
        public void Dispose()
        {
            if (Combiner != null && Code >= 0) {
                Free(Code);
                Code = -1;
                GC.SuppressFinalize(this);
            }
        }

        /// <summary>Frees a user operator nobody disposed.</summary>
        ~Op()
        {
            if (Combiner != null && Code >= 0)
                Free(Code);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Free(int code) => MPDirect.OpFree(code);

        internal void CheckUsable()
        {
            if (Code < 0)
                throw new ObjectDisposedException("Op");
        }
    }

    /// <summary>The managed trampoline of a user operator: MPI hands it raw vectors.</summary>
    internal abstract class Combiner
    {
        // What the operator threw, per thread: a blocking collective applies its operator on the
        // calling thread, so each thread sees only its own collectives' failures even when
        // threads share one Op.
        [ThreadStatic]
        static Exception failure;

        internal abstract Type ElementType { get; }

        /// <summary>inout[i] = combine(in[i], inout[i]) for i &lt; len. Called through an unmanaged
        /// thunk from the operator's libffi closure; must not throw (it records instead).</summary>
        internal abstract void Apply(IntPtr invec, IntPtr inout, int len);

        protected static void Record(Exception e)
        {
            if (failure == null)
                failure = e;
        }

        /// <summary>The first exception an operator threw on this thread since the
        /// last call.</summary>
        internal static Exception TakeFailure()
        {
            Exception e = failure;
            failure = null;
            return e;
        }
    }

    internal sealed unsafe class Combiner<T> : Combiner
        where T : struct
    {
        readonly Func<T, T, T> combine;
        static readonly int elementSize = ElementSize();

        // Scratch vectors per thread (per T): threads sharing one Op never share or free each
        // other's buffers, and no call allocates once they are big enough.
        [ThreadStatic]
        static Scratch scratch;

        internal Combiner(Func<T, T, T> combine) { this.combine = combine; }

        internal override Type ElementType => typeof(T);

        internal override void Apply(IntPtr invec, IntPtr inout, int len)
        {
            try {
                Scratch s = scratch;
                if (s == null || s.A.Length < len)
                    scratch = s = Scratch.Grow(s, len);
                long bytes = (long)len * elementSize;
                void *pa = (void*)s.AddressA, pb = (void*)s.AddressB;
                Buffer.MemoryCopy((void*)invec, pa, bytes, bytes);
                Buffer.MemoryCopy((void*)inout, pb, bytes, bytes);
                T[] x = s.A, y = s.B;
                Func<T, T, T> f = combine;
                for (int i = 0; i < len; i++)
                    y[i] = f(x[i], y[i]);
                Buffer.MemoryCopy(pb, (void*)inout, bytes, bytes);
            } catch (Exception e) {
                Record(e);
            }
        }

        /// <summary>Two pinned vectors owned by one thread; unpinned when replaced or when the
        /// thread is gone (the finalizer).</summary>
        sealed class Scratch
        {
            internal readonly T[] A, B;
            GCHandle pinA, pinB;

            Scratch(int n)
            {
                A = new T[n];
                B = new T[n];
                pinA = GCHandle.Alloc(A, GCHandleType.Pinned);
                pinB = GCHandle.Alloc(B, GCHandleType.Pinned);
            }

            internal IntPtr AddressA => pinA.AddrOfPinnedObject();
            internal IntPtr AddressB => pinB.AddrOfPinnedObject();

            internal static Scratch Grow(Scratch old, int len)
            {
                var s = new Scratch(Math.Max(len, old == null ? 16 : 2 * old.A.Length));
                if (old != null) {
                    old.Unpin();
                    GC.SuppressFinalize(old);
                }
                return s;
            }

            void Unpin()
            {
                if (pinA.IsAllocated)
                    pinA.Free();
                if (pinB.IsAllocated)
                    pinB.Free();
            }

            ~Scratch() { Unpin(); }
        }

        /// <summary>Bytes per element in an array (not Marshal.SizeOf: bool and
        /// char differ).</summary>
        static int ElementSize()
        {
            var two = new T[2];
            GCHandle h = GCHandle.Alloc(two, GCHandleType.Pinned);
            try {
                return (int)((long)Marshal.UnsafeAddrOfPinnedArrayElement(two, 1) -
                             (long)Marshal.UnsafeAddrOfPinnedArrayElement(two, 0));
            } finally {
                h.Free();
            }
        }
    }
}

// Op — reduction operators: MPI's built-ins, and operators written in C#.
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace System.MP
{
    public sealed class Op : IDisposable
    {
        // Codes 0..8 are MPI's built-ins (opi/opi_ops.c numbers them alike); user operators get
        // codes from the core.
        public static readonly Op Sum = new Op(0), Prod = new Op(1), Min = new Op(2), Max = new Op(3),
                                  LAnd = new Op(4), LOr = new Op(5), BAnd = new Op(6), BOr = new Op(7),
                                  BXor = new Op(8);

        internal int Code { get; private set; }
        internal readonly Combiner Combiner;   // user operators only

        Op(int code) { Code = code; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        Op(Combiner combiner, bool commutative)
        {
            Combiner = combiner;
            int code;
            Errors.Check(MPDirect.OpCreate(combiner.ElementType, combiner, commutative ? 1 : 0, out code));
            Code = code;
        }

        /// <summary>A user operator: combine(a, b) applied element-wise, T a primitive or a struct
        /// without references. Must be associative; for a non-commutative operator the result is
        /// x0 ∘ x1 ∘ … ∘ x(p-1) in rank order, with combine(a, b) = a ∘ b and a from the lower
        /// rank. MPI calls it natively through a libffi closure; no managed array is allocated
        /// per call. An exception it throws is raised by the collective as an MPException.</summary>
        public static Op Create<T>(Func<T, T, T> combine, bool commutative = true) where T : struct
        {
            if (combine == null)
                throw new ArgumentNullException(nameof(combine));
            Core.Ensure();
            return Make(new Combiner<T>(combine), commutative);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static Op Make(Combiner combiner, bool commutative) => new Op(combiner, commutative);

        /// <summary>Frees the MPI operator and its closure (user operators; built-ins ignore it).</summary>
        public void Dispose()
        {
            if (Combiner != null && Code >= 0) {
                Free(Code);
                Code = -1;
                GC.SuppressFinalize(this);
            }
        }

        ~Op()
        {
            if (Combiner != null && Code >= 0)
                Free(Code);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Free(int code) => MPDirect.OpFree(code);

        /// <summary>Raises what the user operator threw during the last collective, if anything.</summary>
        internal void RaiseOperatorFailure()
        {
            Exception e = Combiner?.TakeFailure();
            if (e != null)
                throw new MPException("System.MP: the user reduction operator threw: " + e.Message, -1, e);
        }

        internal void CheckUsable()
        {
            if (Code < 0)
                throw new ObjectDisposedException("Op");
        }
    }

    /// <summary>The managed trampoline of a user operator: MPI hands it raw vectors.</summary>
    internal abstract class Combiner
    {
        Exception failure;

        internal abstract Type ElementType { get; }

        /// <summary>inout[i] = combine(in[i], inout[i]) for i &lt; len. Called through an unmanaged
        /// thunk from the operator's libffi closure; must not throw (it records instead).</summary>
        internal abstract void Apply(IntPtr invec, IntPtr inout, int len);

        protected void Record(Exception e)
        {
            if (failure == null)
                failure = e;
        }

        internal Exception TakeFailure()
        {
            Exception e = failure;
            failure = null;
            return e;
        }
    }

    internal sealed unsafe class Combiner<T> : Combiner where T : struct
    {
        readonly Func<T, T, T> combine;
        T[] a = new T[0], b = new T[0];       // scratch, pinned while alive
        GCHandle pinA, pinB;
        readonly int elementSize = ElementSize();

        internal Combiner(Func<T, T, T> combine) { this.combine = combine; }

        internal override Type ElementType => typeof(T);

        internal override void Apply(IntPtr invec, IntPtr inout, int len)
        {
            try {
                if (a.Length < len)
                    Grow(len);
                long bytes = (long)len * elementSize;
                void* pa = (void*)pinA.AddrOfPinnedObject(), pb = (void*)pinB.AddrOfPinnedObject();
                Buffer.MemoryCopy((void*)invec, pa, bytes, bytes);
                Buffer.MemoryCopy((void*)inout, pb, bytes, bytes);
                T[] x = a, y = b;
                Func<T, T, T> f = combine;
                for (int i = 0; i < len; i++)
                    y[i] = f(x[i], y[i]);
                Buffer.MemoryCopy(pb, (void*)inout, bytes, bytes);
            } catch (Exception e) {
                Record(e);
            }
        }

        void Grow(int len)
        {
            if (pinA.IsAllocated) { pinA.Free(); pinB.Free(); }
            int n = Math.Max(len, 2 * a.Length);
            a = new T[n];
            b = new T[n];
            pinA = GCHandle.Alloc(a, GCHandleType.Pinned);
            pinB = GCHandle.Alloc(b, GCHandleType.Pinned);
        }

        ~Combiner()
        {
            if (pinA.IsAllocated) { pinA.Free(); pinB.Free(); }
        }

        /// <summary>Bytes per element in an array (not Marshal.SizeOf: bool and char differ).</summary>
        static int ElementSize()
        {
            var two = new T[2];
            GCHandle h = GCHandle.Alloc(two, GCHandleType.Pinned);
            try {
                return (int)((long)Marshal.UnsafeAddrOfPinnedArrayElement(two, 1) - (long)Marshal.UnsafeAddrOfPinnedArrayElement(two, 0));
            } finally {
                h.Free();
            }
        }
    }
}

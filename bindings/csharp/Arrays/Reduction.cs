// System.MP.Arrays — reductions over the elements of an array: a handle per kind of reduction,
// defined collectively, whose results reach every rank in reduction-number order.
using System.Collections.Generic;
using System.Linq.Expressions;
using System.Threading.Tasks;

namespace System.MP.Arrays
{
    /// <summary>A kind of reduction over the elements of one array (see
    /// <see cref="ObjectArray{TIndex, TElement}.DefineReduction{T}(Func{T, T, T}, string)"/>).
    /// Elements contribute with <c>Contribute(reduction, value)</c>; each reduction number
    /// combines one contribution of every element. All the reductions of an array share one
    /// numbering, so every element contributes to them in the same order.</summary>
    public abstract class Reduction
    {
        internal object Array;
        internal int Id;
        internal string ResultEntry;   // null: the result goes to Completed and Result only

        /// <summary>How many results of this reduction this rank has received.</summary>
        public long CompletedCount { get; protected set; }

        internal abstract object Combine(object a, object b);
        internal abstract byte[] Encode(object value);
        internal abstract object Decode(byte[] bytes);
        internal abstract void Complete(long number, object value);
        internal abstract void Fail(long number, Exception failure);
    }

    /// <summary>A reduction whose values are T.</summary>
    public sealed class Reduction<T> : Reduction
    {
        // the value travels in a holder class: the root of a graph is an object, never a bare T
        internal sealed class Holder
        {
            [Transportable]
            public T Value;
        }

        readonly Func<T, T, T> combine;
        const int Kept = 1024;
        readonly Dictionary<long, TaskCompletionSource<T>> results =
            new Dictionary<long, TaskCompletionSource<T>>();
        readonly Queue<long> kept = new Queue<long>();
        long lastNumber = -1;

        /// <summary>Raised on every rank, in reduction-number order, with (number, result), from
        /// within <see cref="Scheduler.Run"/>; not for a number that failed (its
        /// <see cref="Result"/> task fails). An exception from a handler is reported
        /// by Run.</summary>
        public event Action<long, T> Completed;

        internal Reduction(Func<T, T, T> combine) { this.combine = combine; }

        /// <summary>The result of reduction number on this rank, once it is known (the task
        /// completes within <see cref="Scheduler.Run"/>). The last 1024 results are kept for a
        /// late caller; an older number (or one another reduction of the array took) raises
        /// InvalidOperationException. The task fails with InvalidOperationException when the
        /// number failed: the combine function threw, the combined value could not be sent, or
        /// elements gave that number to different reductions of the array (all of
        /// them fail).</summary>
        public Task<T> Result(long number)
        {
            if (number < 0)
                throw new ArgumentOutOfRangeException(
                    nameof(number), number, "System.MP.Arrays: reduction numbers start at 0");
            TaskCompletionSource<T> tcs;
            if (results.TryGetValue(number, out tcs))
                return tcs.Task;
            if (number <= lastNumber)
                throw new InvalidOperationException(
                    $"System.MP.Arrays: reduction {number} is not kept: it was another " +
                    $"reduction's, or older than the last {Kept} results");
            results[number] = tcs =
                new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
            return tcs.Task;
        }

        internal override object Combine(object a, object b) => combine((T)a, (T)b);

        internal override byte[] Encode(object value) =>
            Serializer.Serialize(new Holder { Value = (T)value });

        internal override object Decode(byte[] bytes)
        {
            if (bytes == null)
                throw new MPSerializationException(
                    "System.MP.Arrays: a reduction value is missing");
            Holder h = Serializer.Deserialize<Holder>(bytes, 0, bytes.Length);
            if (h == null)
                throw new MPSerializationException("System.MP.Arrays: a reduction value is null");
            return h.Value;
        }

        internal override void Complete(long number, object value)
        {
            Settle(number).TrySetResult((T)value);
            Completed?.Invoke(number, (T)value);
        }

        /// <summary>Reduction number has no result (see <see cref="Result"/>): its task fails,
        /// and Completed is not raised for it.</summary>
        internal override void Fail(long number,
                                    Exception failure) => Settle(number).TrySetException(failure);

        TaskCompletionSource<T> Settle(long number)
        {
            CompletedCount++;
            lastNumber = number;
            TaskCompletionSource<T> tcs;
            if (!results.TryGetValue(number, out tcs))
                results[number] = tcs =
                    new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
            kept.Enqueue(number);
            if (kept.Count > Kept)
                results.Remove(kept.Dequeue());
            return tcs;
        }
    }

    /// <summary>The built-in operators on the primitive types, as combine functions: one
    /// expression per (operator, type), compiled once when the reduction is defined.</summary>
    internal static class BuiltinCombine<T>
    {
        internal static Func<T, T, T> Of(Op op)
        {
            if (op == null)
                throw new ArgumentNullException(nameof(op));
            Type t = typeof(T);
            bool integer = t == typeof(int) || t == typeof(long),
                 number = integer || t == typeof(float) || t == typeof(double);
            ParameterExpression a = Expression.Parameter(t, "a"), b = Expression.Parameter(t, "b");
            int code = op.Code;
            Expression body =
                !number && t != typeof(bool)     ? null
                : code == Op.Sum.Code && number  ? Expression.Add(a, b)
                : code == Op.Prod.Code && number ? Expression.Multiply(a, b)
                : (code == Op.Min.Code || code == Op.Max.Code) && number
                    ? Expression.Call(typeof(Math).GetMethod(code == Op.Min.Code ? "Min" : "Max",
                                                             new[] { t, t }),
                                      a, b)
                : code == Op.LAnd.Code && t == typeof(bool) ? Expression.AndAlso(a, b)
                : code == Op.LOr.Code && t == typeof(bool)  ? Expression.OrElse(a, b)
                : code == Op.BAnd.Code && integer           ? Expression.And(a, b)
                : code == Op.BOr.Code && integer            ? Expression.Or(a, b)
                : code == Op.BXor.Code && integer ? (Expression)Expression.ExclusiveOr(a, b)
                                                  : null;
            if (body == null)
                throw new ArgumentException(
                    $"System.MP.Arrays: a built-in Op reduction over {t} is not available here " +
                        "(int, long, float, double with Sum/Prod/Min/Max; int and long with " +
                        "BAnd/BOr/BXor; bool with LAnd/LOr); pass a Func<T,T,T>",
                    nameof(op));
            return Expression.Lambda<Func<T, T, T>>(body, a, b).Compile();
        }
    }
}

// SdtoCollections — the managed half of carrying the standard collections by value
// (serializer/FORMAT.md, "Collections"): which collections travel, and how a receiver rebuilds
// them. The C serializer reads a collection's elements in place when writing; reading, it creates
// the collection uninitialised, its elements into an E[], links every reference, and then calls
// Rebuild once per message, which builds each collection through its public API.
using System.Collections.Generic;
using System.Reflection;
using System.Reflection.Emit;

namespace System.MP
{
    internal static class SdtoCollections
    {
        /// <summary>E, the type a collection's elements travel as (T, or KeyValuePair&lt;K,V&gt;
        /// for a Dictionary), or null when the type is not carried. Called by the class plan (C),
        /// once per collection class.</summary>
        static Type ElementType(Type collection)
        {
            if (!collection.IsGenericType)
                return null;
            Type definition = collection.GetGenericTypeDefinition();
            Type[] arguments = collection.GetGenericArguments();
            if (definition == typeof(List<>) || definition == typeof(Queue<>) ||
                definition == typeof(Stack<>) || definition == typeof(HashSet<>))
                return arguments[0];
            // clang-format off
            if (definition == typeof(Dictionary<,>))
                return typeof(KeyValuePair<,>).MakeGenericType(arguments);
            // clang-format on
            return null;
        }

        /// <summary>Builds every collection of a message: objects[i] is a collection created
        /// without a constructor, items[i] its elements (an E[]), or null for other records.
        /// Later records first: a collection's elements are usually found after it, so nested
        /// collections are whole before an outer one hashes them. A duplicate or null key, a
        /// duplicate set element, or keys that collide (Spread), throws RebuildFailure naming
        /// the record: the read fails and nothing is returned.</summary>
        static void Rebuild(object[] objects, object[] items)
        {
            int i = items.Length - 1;
            try {
                for (; i >= 0; i--)
                    if (items[i] != null)
                        Builder.Of(objects[i].GetType()).Fill(objects[i], (Array)items[i]);
            } catch (Exception e) {
                throw new RebuildFailure(i, e);
            }
        }

        /// <summary>Why the collection of record Record could not be rebuilt. The reader
        /// (sd_reader.c) reads Record to name the collection's path; its text is the cause's
        /// type and message.</summary>
        sealed class RebuildFailure : Exception
        {
            internal readonly int Record;

            internal RebuildFailure(int record, Exception cause)
                : base(cause is FloodException ? cause.Message
                                               : cause.GetType() + ": " + cause.Message,
                       cause)
            {
                Record = record;
            }

            public override string ToString() => Message;
        }

        /// <summary>Keys that would make the insertions walk long hash chains.</summary>
        sealed class FloodException : Exception
        {
            internal FloodException(string message) : base(message) { }
        }

        /// <summary>The hash-chain steps the insertions of n keys may take before the
        /// collection is refused as flooded: 8 n (log2(n) + 1) + 4096. Random keys take about n/2
        /// (a table of at least n buckets), so honest keys stay far below it, and a message of
        /// n keys costs O(n log n) to rebuild whatever its keys (reference.md,
        /// "Hash flooding").</summary>
        static long FloodBound(int n)
        {
            int log2 = 0;
            for (int m = n; m > 1; m >>= 1)
                log2++;
            return 8L * n * (log2 + 1) + 4096;
        }

        /// <summary>Checks, before any key is added, that the keys spread over the table of
        /// `buckets` buckets (0: not known, then equal hash codes are counted): the steps the
        /// insertions walk along hash chains, Σ m(m-1)/2 over the buckets' m keys, within
        /// FloodBound, counted with the collection's own comparer and bucket rule ((hash &amp;
        /// 0x7FFFFFFF) % buckets). Stops at the first step past the bound, so a flood costs
        /// one pass over the keys, not the quadratic insertions. Skipped where even equal
        /// keys would stay within the bound. key: a key of an element (null: the elements are
        /// the keys).</summary>
        static void Spread<E, K>(E[] elements, Func<E, K> key, int buckets)
        {
            int n = elements.Length;
            long bound = FloodBound(n), steps = 0;
            if ((long)n * (n - 1) / 2 <= bound)
                return;
            EqualityComparer<K> comparer = EqualityComparer<K>.Default;
            int[] chains = new int[buckets > 0 ? buckets : n];
            var keys = key == null ? (K[])(object)elements : null;   // a set's elements
            for (int i = 0; i < n; i++) {
                K k = keys != null ? keys[i] : key(elements[i]);
                int h = k == null ? 0 : comparer.GetHashCode(k) & 0x7FFFFFFF;
                if (buckets > 0)
                    steps += chains[h % buckets]++;
                else
                    chains[i] = h;
                if (steps > bound)
                    throw Flooded(n, buckets, bound);
            }
            if (buckets > 0)
                return;
            Array.Sort(chains);   // equal hash codes: every bucket count puts them together
            for (int i = 1, run = 0; i < n; i++) {
                run = chains[i] == chains[i - 1] ? run + 1 : 0;
                if ((steps += run) > bound)
                    throw Flooded(n, buckets, bound);
            }
        }

        static FloodException Flooded(int n, int buckets, long bound) => new FloodException(
            $"its {n} keys collide" +
            (buckets > 0 ? $" in the {buckets} buckets of its table" : " (equal hash codes)") +
            $": adding them would walk more than {bound} hash-chain entries (8 n (log2 n + 1) + " +
            "4096), as a hash-flooding attack does; refused before adding any");

        /// <summary>Fills one kind of collection; one instance per collection class.</summary>
        abstract class Builder
        {
            static readonly Dictionary<Type, Builder> builders = new Dictionary<Type, Builder>();

            internal static Builder Of(Type collection)
            {
                lock (builders)
                {
                    if (!builders.TryGetValue(collection, out Builder b)) {
                        Type definition = collection.GetGenericTypeDefinition();
                        string factory =
                            definition == typeof(List<>)      ? nameof(ForList)
                            : definition == typeof(Queue<>)   ? nameof(ForQueue)
                            : definition == typeof(Stack<>)   ? nameof(ForStack)
                            : definition == typeof(HashSet<>) ? nameof(ForHashSet)
                                                              : nameof(ForDictionary);
                        MethodInfo make =
                            typeof(Builder).GetMethod(factory,
                                                      BindingFlags.NonPublic | BindingFlags.Static);
                        b = (Builder)make.MakeGenericMethod(collection.GetGenericArguments())
                                .Invoke(null, null);
                        builders.Add(collection, b);
                    }
                    return b;
                }
            }

            static Builder ForList<T>() => new ListBuilder<T>();
            static Builder ForQueue<T>() => new AddingBuilder<Queue<T>, T>((q, e, i,
                                                                            n) => q.Enqueue(e));
            // bottom first
            static Builder ForStack<T>() => new AddingBuilder<Stack<T>, T>((s, e, i,
                                                                            n) => s.Push(e));
            static Builder ForHashSet<T>() => new AddingBuilder<HashSet<T>, T>(
                (set, e, i, n) =>
                {
                    if (!set.Add(e))
                        throw new ArgumentException(
                            $"element {i} of a {typeof(HashSet<T>)} of {n} equals an earlier one");
                },
                (set, elements) => Spread<T, T>(elements, null, Buckets(set)));
            static Builder ForDictionary<K, V>() =>   // Add throws on a null or duplicate key
                new AddingBuilder<Dictionary<K, V>, KeyValuePair<K, V>>(
                    (d, pair, i, n) => d.Add(pair.Key, pair.Value),
                    (d, pairs) => Spread(pairs, pair => pair.Key, Buckets(d)));

            /// <summary>The length of the bucket array of a HashSet or Dictionary made with its
            /// capacity (which the insertions never outgrow), read once per collection through
            /// a method compiled once per class; 0 when this runtime's class has no int[]
            /// _buckets (Spread then counts equal hash codes).</summary>
            static int Buckets<C>(C collection)
                where C : class => BucketReader<C>.Read?.Invoke(collection) ?? 0;

  static class BucketReader<C>
                where C : class
            {
                internal static readonly Func<C, int> Read = Compile();

                static Func<C, int> Compile()
                {
                    FieldInfo f = typeof(C).GetField("_buckets", BindingFlags.NonPublic |
                                                                     BindingFlags.Instance);
                    if (f == null || f.FieldType != typeof(int[]))
                        return null;
                    var method = new DynamicMethod("Buckets", typeof(int), new[] { typeof(C) },
                                                   typeof(SdtoCollections).Module, true);
                    ILGenerator il = method.GetILGenerator();
                    Label some = il.DefineLabel();
                    il.Emit(OpCodes.Ldarg_0);
                    il.Emit(OpCodes.Ldfld, f);
                    il.Emit(OpCodes.Dup);
                    il.Emit(OpCodes.Brtrue_S, some);
                    il.Emit(OpCodes.Pop);   // no table yet (capacity 0)
                    il.Emit(OpCodes.Ldc_I4_0);
                    il.Emit(OpCodes.Ret);
                    il.MarkLabel(some);
                    il.Emit(OpCodes.Ldlen);
                    il.Emit(OpCodes.Conv_I4);
                    il.Emit(OpCodes.Ret);
                    return (Func<C, int>)method.CreateDelegate(typeof(Func<C, int>));
                }
            }

            /// <summary>A call of the collection's (int capacity) constructor on an object the
            /// serializer created without one, so it starts as `new` would make it.</summary>
            protected static Action<object, int> Constructor(Type collection)
            {
                ConstructorInfo ctor = collection.GetConstructor(new[] { typeof(int) });
                var method =
                    new DynamicMethod("Construct", null, new[] { typeof(object), typeof(int) },
                                      typeof(SdtoCollections).Module, true);
                ILGenerator il = method.GetILGenerator();
                il.Emit(OpCodes.Ldarg_0);
                il.Emit(OpCodes.Castclass, collection);
                il.Emit(OpCodes.Ldarg_1);
                il.Emit(OpCodes.Call, ctor);
                il.Emit(OpCodes.Ret);
                return (Action<object, int>)method.CreateDelegate(typeof(Action<object, int>));
            }

            internal abstract void Fill(object collection, Array items);
        }

        /// <summary>A List: its elements copied in one AddRange.</summary>
        sealed class ListBuilder<T> : Builder
        {
            readonly Action<object, int> construct = Constructor(typeof(List<T>));

            internal override void Fill(object collection, Array items)
            {
                var elements = (T[])items;
                construct(collection, elements.Length);
                ((List<T>)collection).AddRange(elements);
            }
        }

        /// <summary>The others: element by element through their public Add
        /// (Enqueue, Push); a hashed collection's keys are checked first (Spread).</summary>
        sealed class AddingBuilder<C, E> : Builder
            where C : class
        {
            readonly Action<object, int> construct = Constructor(typeof(C));
            readonly Action<C, E, int, int> add;   // (collection, element, its index, count)
            readonly Action<C, E[]> check;         // before the first add, or null

            internal AddingBuilder(Action<C, E, int, int> add, Action<C, E[]> check = null)
            {
                this.add = add;
                this.check = check;
            }

            internal override void Fill(object collection, Array items)
            {
                var elements = (E[])items;
                construct(collection, elements.Length);
                var c = (C)collection;
                check?.Invoke(c, elements);
                for (int i = 0; i < elements.Length; i++)
                    add(c, elements[i], i, elements.Length);
            }
        }
    }
}

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
        /// collections are whole before an outer one hashes them. A duplicate or null key, or
        /// a duplicate set element, throws: the read fails and nothing is returned.</summary>
        static void Rebuild(object[] objects, object[] items)
        {
            for (int i = items.Length - 1; i >= 0; i--)
                if (items[i] != null)
                    Builder.Of(objects[i].GetType()).Fill(objects[i], (Array)items[i]);
        }

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
                });
            static Builder ForDictionary<K, V>() =>   // Add throws on a null or duplicate key
                new AddingBuilder<Dictionary<K, V>, KeyValuePair<K, V>>(
                    (d, pair, i, n) => d.Add(pair.Key, pair.Value));

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
        /// (Enqueue, Push).</summary>
        sealed class AddingBuilder<C, E> : Builder
            where C : class
        {
            readonly Action<object, int> construct = Constructor(typeof(C));
            readonly Action<C, E, int, int> add;   // (collection, element, its index, count)

            internal AddingBuilder(Action<C, E, int, int> add) { this.add = add; }

            internal override void Fill(object collection, Array items)
            {
                var elements = (E[])items;
                construct(collection, elements.Length);
                var c = (C)collection;
                for (int i = 0; i < elements.Length; i++)
                    add(c, elements[i], i, elements.Length);
            }
        }
    }
}

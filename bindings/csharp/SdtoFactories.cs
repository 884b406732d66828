// SdtoFactories — the structured transport's reader (serializer/sd_reader.c) makes the objects of
// a large message here, with the JIT's allocator: through the embedding API each object costs an
// allocation call and a write-barrier call (~60 ns in all), `new` in JIT-compiled code a few ns.
// The reader has checked the whole message before it comes here, and copies the data and links
// the references afterwards; it also checks that every object made is of its record's class and
// length. Only objects that `new` makes exactly as the reader would get a factory: strings,
// one-dimensional zero-based arrays, and classes whose constructors, up to object's, do nothing
// (no constructor may run on receipt). Anything else keeps the reader's own path.
using System;
using System.Collections.Generic;
using System.Reflection;
using System.Reflection.Emit;
using System.Threading;

namespace System.MP
{
    internal static class SdtoFactories
    {
        static readonly object gate = new object();
        static readonly Dictionary<Type, int> numbers = new Dictionary<Type, int>();
        // factories by number (0: none); replaced whole when it grows, so Create reads it unlocked
        static Func<int, object>[] factories = new Func<int, object>[16];
        static int next = 1;

        // Called by the reader once per class (it remembers the answer in the class plan): the
        // number of t's factory, or 0 when `new` cannot make a t exactly as the reader would.
        static int Register(Type t)
        {
            lock (gate) {
                int number;
                if (numbers.TryGetValue(t, out number))
                    return number;
                Func<int, object> factory = Factory(t);
                number = 0;
                if (factory != null) {
                    Func<int, object>[] all = factories;
                    if (next == all.Length)
                        Array.Resize(ref all, 2 * next);
                    all[next] = factory;
                    Volatile.Write(ref factories, all);
                    number = next++;
                }
                numbers[t] = number;
                return number;
            }
        }

        // objs[i] = a new object of record i's class for every record: numbers[i] is its
        // factory (from Register), lengths[i] its array or string length; both native int arrays
        // of count entries owned by the reader.
        static unsafe void Create(object[] objs, IntPtr numbers, IntPtr lengths, int count)
        {
            Func<int, object>[] all = Volatile.Read(ref factories);
            int* number = (int*)numbers, length = (int*)lengths;
            for (int i = 0; i < count; i++)
                objs[i] = all[number[i]](length[i]);
        }

        static Func<int, object> Factory(Type t)
        {
            if (t == typeof(string))
                return n => n == 0 ? string.Empty : new string('\0', n);
            if (t.IsArray) {
                Type e = t.GetElementType();
                if (t != e.MakeArrayType() || e.IsPointer)
                    return null; // T[] only: not T[*] (bounds) nor T[,]
                MethodInfo make = typeof(SdtoFactories).GetMethod("NewArray", BindingFlags.NonPublic | BindingFlags.Static);
                return (Func<int, object>)Delegate.CreateDelegate(typeof(Func<int, object>), make.MakeGenericMethod(e));
            }
            if (!t.IsClass || t.IsAbstract || t.ContainsGenericParameters || typeof(MarshalByRefObject).IsAssignableFrom(t)
                || !ConstructorsDoNothing(t))
                return null;
            var method = new DynamicMethod("SdtoNew", typeof(object), new[] { typeof(int) }, typeof(SdtoFactories).Module, true);
            ILGenerator il = method.GetILGenerator();
            il.Emit(OpCodes.Newobj, Parameterless(t));
            il.Emit(OpCodes.Ret);
            return (Func<int, object>)method.CreateDelegate(typeof(Func<int, object>));
        }

        static object NewArray<T>(int n) { return new T[n]; }

        static ConstructorInfo Parameterless(Type t)
        {
            return t.GetConstructor(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic, null, Type.EmptyTypes, null);
        }

        // Does `new t()` only allocate? Each class from t up to object must have the compiler's
        // empty parameterless constructor: ldarg.0, call the base class's parameterless
        // constructor, ret (nops aside) — no field initializer, no statement.
        static bool ConstructorsDoNothing(Type t)
        {
            for (; t != typeof(object); t = t.BaseType) {
                if (t == null || t.BaseType == null)
                    return false;
                ConstructorInfo c = Parameterless(t);
                MethodBody body = c == null ? null : c.GetMethodBody();
                byte[] il = body == null ? null : body.GetILAsByteArray();
                if (il == null)
                    return false;
                int k = Skip(il, 0);
                if (k >= il.Length || il[k] != 0x02) // ldarg.0
                    return false;
                k = Skip(il, k + 1);
                if (k + 5 > il.Length || il[k] != 0x28) // call, and its token
                    return false;
                int token = BitConverter.ToInt32(il, k + 1);
                k = Skip(il, k + 5);
                if (k != il.Length - 1 || il[k] != 0x2A) // ret, and nothing after it
                    return false;
                MethodBase callee;
                try {
                    callee = t.Module.ResolveMethod(token, t.IsGenericType ? t.GetGenericArguments() : null, null);
                } catch (ArgumentException) {
                    return false;
                }
                Type declaring = callee.DeclaringType;
                Type baseType = t.BaseType;
                bool baseCall = declaring == baseType || (baseType.IsGenericType && declaring.IsGenericType
                                                         && declaring.GetGenericTypeDefinition() == baseType.GetGenericTypeDefinition());
                if (!(callee is ConstructorInfo) || callee.IsStatic || callee.GetParameters().Length != 0 || !baseCall)
                    return false;
            }
            return true;
        }

        static int Skip(byte[] il, int k)
        {
            while (k < il.Length && il[k] == 0x00) // nop
                k++;
            return k;
        }
    }
}

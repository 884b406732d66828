// SdtoFactories — the structured transport's reader (serializer/sd_reader.c) makes the objects of
// a large message here, and links their references, in JIT-compiled code: through the embedding
// API each object costs an allocation call and a write-barrier call (~60 ns in all) and each
// reference another barrier call (~10 ns); `new` and a field store with the JIT's inline barrier
// cost a few ns. The reader has checked the whole message before it comes here — every
// reference points to an object assignable to its slot, every constrained value (bool, decimal,
// DateTime...) is one the runtime makes. Only objects that `new` makes exactly as the reader
// would get a factory: strings, one-dimensional zero-based arrays, and classes whose
// constructors, up to object's, do nothing (no constructor may run on receipt).
//
// A class's factory is compiled for it (IL emitted once, cached here and in the reader's class
// plan): `new`, then a load from the record and a store for each value field the reader names,
// at the offset it gives — a straight sequence, no field table read per object. The reader names
// only fields that hold no reference anywhere (a struct with a reference inside is copied by the
// reader around its reference slots): no wire byte ever reaches a reference slot. The reader
// copies the data of the other objects afterwards (arrays, strings, classes it named no fields
// for), after checking that each is of its record's class and length. Only classes whose
// travelling references are their own fields, and arrays of references, get a linker. Anything
// else keeps the reader's own path.
using System;
using System.Collections.Generic;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.MP
{
    internal static class SdtoFactories
    {
        // Items the reader names by number (a factory, a linker), one per class, made once; 0
        // names none. The array is replaced whole when it grows, so Create reads it unlocked.
        sealed class Numbered<T>
            where T : class
        {
            readonly Dictionary<Type, int> numbers = new Dictionary<Type, int>();
            T[] items = new T[16];
            int next = 1;

            internal T[] Items
            {
                get {
                    return Volatile.Read(ref items);
                }
            }

            // t's number: make's item for t, made the first time (0 when make gives none)
            internal int NumberOf(Type t, Func<T> make)
            {
                lock (numbers)
                {
                    int number;
                    if (numbers.TryGetValue(t, out number))
                        return number;
                    T item = make();
                    number = 0;
                    if (item != null) {
                        T[] all = items;
                        if (next == all.Length)
                            Array.Resize(ref all, 2 * next);
                        all[next] = item;
                        Volatile.Write(ref items, all);
                        number = next++;
                    }
                    numbers[t] = number;
                    return number;
                }
            }
        }

        // Sets an object's travelling references: o, every object of the message, and the record's
        // reference list (a record number per slot, -1 for null, stored too: a reused object's
        // field may hold something).
        unsafe delegate void Linker(object o, object[] objs, int* refs);

        // Makes a record's object: its data (the record's instance data, or its first element)
        // and length (an array's or string's; 1 for an object).
        unsafe delegate object Factory(byte* data, int length);

        // Overwrites the value fields or elements of o, an object of a graph reused (ORecvInto)
        // that the reader found of the record's class and length, from the record's data.
        unsafe delegate void Filler(object o, byte* data, int length);

        // Where the reader's record index (sd_place, serializer/sd_format.h) keeps a record's
        // pieces, and the largest string or array a factory copies itself (a larger one the
        // reader copies in chunks that let collections run): the contract reports these,
        // ContractTest compares.
        internal static class Place
        {
            internal const int Size = 32, Data = 0, Refs = 8, Elements = 16, TypeIndex = 24,
                               CopyBytes = 64;
        }

        static readonly Numbered<Factory> factories = new Numbered<Factory>();
        static readonly Numbered<Linker> linkers = new Numbered<Linker>();
        static readonly Numbered<Filler> fillers = new Numbered<Filler>();

        // Called by the reader once per class (it remembers the answer in the class plan): the
        // number of t's factory, or 0 when `new` cannot make a t exactly as the reader would.
        // fields and offsets (a class's, or null): the value fields its factory copies from the
        // record, at those offsets of the instance data; for a T[], an empty fields: T holds no
        // reference, and the factory copies the elements (up to Place.CopyBytes).
        static int Register(Type t, FieldInfo[] fields, int[] offsets)
        {
            return factories.NumberOf(t, () => MakeFactory(t, fields, offsets));
        }

        // Called by the reader once per class it reuses objects of: the number of t's filler, or
        // 0. fields and offsets: the value fields to copy, as for Register (a T[]: empty).
        static int RegisterFiller(Type t, FieldInfo[] fields, int[] offsets)
        {
            return fillers.NumberOf(t, () => MakeFiller(t, fields, offsets));
        }

        // Called by the reader once per class with reference slots: the number of t's linker, or
        // 0. fields: t's travelling fields in the order of a record's references, null for an
        // array of references.
        static int RegisterLinker(Type t, FieldInfo[] fields)
        {
            return linkers.NumberOf(t, () => MakeLinker(t, fields));
        }

        delegate int MakeFunction(IntPtr holder, IntPtr places, int count, IntPtr factoryOf,
                                  IntPtr linkerOf, IntPtr fillerOf);
        static readonly MakeFunction make = Make;   // kept: the reader holds a pointer to it

        // Make as a function pointer for the reader, which calls it like C
        // (no mono_runtime_invoke).
        internal static IntPtr Maker
        {
            get {
                return Marshal.GetFunctionPointerForDelegate(make);
            }
        }

        // Called by the reader through Maker: Create on the object[] held by the GC handle holder.
        // No exception may cross into C: a failure (out of memory) returns -1.
        unsafe static int Make(IntPtr holder, IntPtr places, int count, IntPtr factoryOf,
                               IntPtr linkerOf, IntPtr fillerOf)
        {
            try {
                Create((object[])GCHandle.FromIntPtr(holder).Target, (byte*)places, count,
                       (int*)factoryOf, (int*)linkerOf, (int*)fillerOf);
                return 0;
            } catch (Exception) {
                return -1;
            }
        }

        // For every record i (count in all, places: the reader's record index): objs[i] = a new
        // object of its class, made by the factory its type has in factoryOf (from Register) —
        // unless factoryOf is null: the objects exist (a graph reused), and those whose type has
        // a filler in fillerOf (from RegisterFiller; 0: the reader fills them) get their data —
        // then, for every record whose type has a linker in linkerOf (from RegisterLinker; 0: the
        // reader links it), its references. The reader checked every length fits an int.
        static unsafe void Create(object[] objs, byte* places, int count, int* factoryOf,
                                  int* linkerOf, int* fillerOf)
        {
            Factory[] all = factories.Items;
            byte* place = places;
            for (int i = 0; factoryOf != null && i < count; i++, place += Place.Size)
                objs[i] = all[factoryOf[*(int*)(place + Place.TypeIndex)]](
                    *(byte**)(place + Place.Data), (int)*(long*)(place + Place.Elements));
            Filler[] fill = fillers.Items;
            place = places;
            for (int i = 0; fillerOf != null && i < count; i++, place += Place.Size) {
                int f = fillerOf[*(int*)(place + Place.TypeIndex)];
                if (f != 0)
                    fill[f](objs[i], *(byte**)(place + Place.Data),
                            (int)*(long*)(place + Place.Elements));
            }
            Linker[] linker = linkers.Items;
            place = places;
            for (int i = 0; i < count; i++, place += Place.Size) {
                int l = linkerOf[*(int*)(place + Place.TypeIndex)];
                if (l != 0)
                    linker[l](objs[i], objs, *(int**)(place + Place.Refs));
            }
        }

        unsafe static Linker MakeLinker(Type t, FieldInfo[] fields)
        {
            if (fields == null) {
                Type e = t.IsArray ? t.GetElementType() : null;
                if (e == null || t != e.MakeArrayType() || e.IsValueType || e.IsPointer)
                    return null;
                MethodInfo link =
                    typeof(SdtoFactories)
                        .GetMethod("LinkArray", BindingFlags.NonPublic | BindingFlags.Static);
                return (Linker)Delegate.CreateDelegate(typeof(Linker), link.MakeGenericMethod(e));
            }
            if (!t.IsClass || t.IsArray || fields.Length == 0)
                return null;
            foreach (FieldInfo f in fields)
                if (f == null || f.IsStatic || f.FieldType.IsValueType ||
                    !f.DeclaringType.IsAssignableFrom(t))
                    return null;
            // o.f_k = refs[k] < 0 ? null : objs[refs[k]] for each field. No type checks: the
            // reader checked that each record it names is assignable to the field's type.
            var method = new DynamicMethod("SdtoLink", null,
                                           new[] { typeof(object), typeof(object[]), typeof(int*) },
                                           typeof(SdtoFactories).Module, true);
            ILGenerator il = method.GetILGenerator();
            LocalBuilder index = il.DeclareLocal(typeof(int));
            for (int k = 0; k < fields.Length; k++) {
                Label isNull = il.DefineLabel(), next = il.DefineLabel();
                il.Emit(OpCodes.Ldarg_2);
                il.Emit(OpCodes.Ldc_I4, 4 * k);
                il.Emit(OpCodes.Add);
                il.Emit(OpCodes.Ldind_I4);
                il.Emit(OpCodes.Dup);
                il.Emit(OpCodes.Stloc, index);
                il.Emit(OpCodes.Ldc_I4_0);
                il.Emit(OpCodes.Blt, isNull);
                il.Emit(OpCodes.Ldarg_0);
                il.Emit(OpCodes.Ldarg_1);
                il.Emit(OpCodes.Ldloc, index);
                il.Emit(OpCodes.Ldelem_Ref);
                il.Emit(OpCodes.Stfld, fields[k]);
                il.Emit(OpCodes.Br, next);
                il.MarkLabel(isNull);
                il.Emit(OpCodes.Ldarg_0);
                il.Emit(OpCodes.Ldnull);
                il.Emit(OpCodes.Stfld, fields[k]);
                il.MarkLabel(next);
            }
            il.Emit(OpCodes.Ret);
            return (Linker)method.CreateDelegate(typeof(Linker));
        }

        unsafe static void LinkArray<T>(object o, object[] objs, int* refs)
            where T : class
        {
            T[] a = (T[])o;
            for (int e = 0; e < a.Length; e++)
                a[e] = refs[e] >= 0 ? (T)objs[refs[e]] : null;
        }

        unsafe static Factory MakeFactory(Type t, FieldInfo[] fields, int[] offsets)
        {
            if (t == typeof(string))
                return NewString;
            if (t.IsArray) {
                Type e = t.GetElementType();
                if (t != e.MakeArrayType() || e.IsPointer)
                    return null;   // T[] only: not T[*] (bounds) nor T[,]
                if (fields != null && fields.Length == 0 && e.IsValueType)
                    return CopiedArray(e);
                MethodInfo make =
                    typeof(SdtoFactories)
                        .GetMethod("NewArray", BindingFlags.NonPublic | BindingFlags.Static);
                return (Factory)Delegate.CreateDelegate(typeof(Factory), make.MakeGenericMethod(e));
            }
            if (!t.IsClass || t.IsAbstract || t.ContainsGenericParameters ||
                typeof(MarshalByRefObject).IsAssignableFrom(t) || !ConstructorsDoNothing(t))
                return null;
            if (fields != null && (offsets == null || offsets.Length != fields.Length))
                return null;
            // new t(), then its value fields from the record
            var method =
                new DynamicMethod("SdtoNew", typeof(object), new[] { typeof(byte*), typeof(int) },
                                  typeof(SdtoFactories).Module, true);
            ILGenerator il = method.GetILGenerator();
            il.Emit(OpCodes.Newobj, Parameterless(t));
            if (fields != null && !EmitFields(il, t, fields, offsets, 0))
                return null;
            il.Emit(OpCodes.Ret);
            return (Factory)method.CreateDelegate(typeof(Factory));
        }

        // A filler: the value fields (a class) or the elements (a T[] of reference-free T, up to
        // Place.CopyBytes) the factory would copy, into an existing object. No type check: the
        // reader found o of the record's class, as it checks a linker's targets.
        static Filler MakeFiller(Type t, FieldInfo[] fields, int[] offsets)
        {
            if (fields == null)
                return null;
            var method = new DynamicMethod("SdtoFill", null,
                                           new[] { typeof(object), typeof(byte*), typeof(int) },
                                           typeof(SdtoFactories).Module, true);
            ILGenerator il = method.GetILGenerator();
            if (t.IsArray) {
                Type e = t.GetElementType();
                if (t != e.MakeArrayType() || !e.IsValueType || fields.Length != 0)
                    return null;
                LocalBuilder array = il.DeclareLocal(t);
                il.Emit(OpCodes.Ldarg_0);
                il.Emit(OpCodes.Stloc, array);
                EmitElements(il, e, array, 1, 2);
            } else {
                if (!t.IsClass || offsets == null || offsets.Length != fields.Length)
                    return null;
                il.Emit(OpCodes.Ldarg_0);
                if (!EmitFields(il, t, fields, offsets, 1))
                    return null;
                il.Emit(OpCodes.Pop);
            }
            il.Emit(OpCodes.Ret);
            return (Filler)method.CreateDelegate(typeof(Filler));
        }

        // With an object of t on the stack (left there): o.f_k = *(F_k*)(data + offset_k) for
        // each field, data the argument dataArg. False when a field is not a value field of t.
        static bool EmitFields(ILGenerator il, Type t, FieldInfo[] fields, int[] offsets,
                               short dataArg)
        {
            for (int k = 0; k < fields.Length; k++) {
                FieldInfo f = fields[k];
                if (f == null || f.IsStatic || !f.FieldType.IsValueType || offsets[k] < 0 ||
                    !f.DeclaringType.IsAssignableFrom(t))
                    return false;
                il.Emit(OpCodes.Dup);
                il.Emit(OpCodes.Ldarg, dataArg);
                il.Emit(OpCodes.Ldc_I4, offsets[k]);
                il.Emit(OpCodes.Add);
                il.Emit(OpCodes.Ldobj, f.FieldType);
                il.Emit(OpCodes.Stfld, f);
            }
            return true;
        }

        // array[i] = *(E*)(data + i * sizeof(E)) for i < n (the arguments dataArg, lengthArg) when
        // they take at most Place.CopyBytes: a loop of typed loads and stores (the JIT's copy of
        // a block is a call, too slow for the few bytes of a small array).
        static void EmitElements(ILGenerator il, Type e, LocalBuilder array, short dataArg,
                                 short lengthArg)
        {
            LocalBuilder i = il.DeclareLocal(typeof(int));
            Label done = il.DefineLabel(), loop = il.DefineLabel(), test = il.DefineLabel();
            il.Emit(OpCodes.Ldarg, lengthArg);   // n * sizeof(E) > CopyBytes: the reader copies
            il.Emit(OpCodes.Conv_I8);
            il.Emit(OpCodes.Sizeof, e);
            il.Emit(OpCodes.Conv_I8);
            il.Emit(OpCodes.Mul);
            il.Emit(OpCodes.Ldc_I8, (long)Place.CopyBytes);
            il.Emit(OpCodes.Bgt, done);
            il.Emit(OpCodes.Ldc_I4_0);
            il.Emit(OpCodes.Stloc, i);
            il.Emit(OpCodes.Br, test);
            il.MarkLabel(loop);
            il.Emit(OpCodes.Ldloc, array);
            il.Emit(OpCodes.Ldloc, i);
            il.Emit(OpCodes.Ldarg, dataArg);
            il.Emit(OpCodes.Ldloc, i);
            il.Emit(OpCodes.Sizeof, e);
            il.Emit(OpCodes.Mul);
            il.Emit(OpCodes.Add);
            il.Emit(OpCodes.Ldobj, e);
            il.Emit(OpCodes.Stelem, e);
            il.Emit(OpCodes.Ldloc, i);
            il.Emit(OpCodes.Ldc_I4_1);
            il.Emit(OpCodes.Add);
            il.Emit(OpCodes.Stloc, i);
            il.MarkLabel(test);
            il.Emit(OpCodes.Ldloc, i);
            il.Emit(OpCodes.Ldarg, lengthArg);
            il.Emit(OpCodes.Blt, loop);
            il.MarkLabel(done);
        }

        // new E[n], its elements copied from data when they take at most Place.CopyBytes
        static Factory CopiedArray(Type e)
        {
            var method = new DynamicMethod("SdtoNewArray", typeof(object),
                                           new[] { typeof(byte*), typeof(int) },
                                           typeof(SdtoFactories).Module, true);
            ILGenerator il = method.GetILGenerator();
            LocalBuilder array = il.DeclareLocal(e.MakeArrayType());
            il.Emit(OpCodes.Ldarg_1);
            il.Emit(OpCodes.Newarr, e);
            il.Emit(OpCodes.Stloc, array);
            EmitElements(il, e, array, 0, 1);
            il.Emit(OpCodes.Ldloc, array);
            il.Emit(OpCodes.Ret);
            return (Factory)method.CreateDelegate(typeof(Factory));
        }

        unsafe static object NewString(byte* data, int n)
        {
            if (n == 0)
                return string.Empty;
            return 2L * n <= Place.CopyBytes ? new string((char*)data, 0, n) : new string('\0', n);
        }

        unsafe static object NewArray<T>(byte* data, int n) { return new T[n]; }

        static ConstructorInfo Parameterless(Type t)
        {
            return t.GetConstructor(BindingFlags.Instance | BindingFlags.Public |
                                        BindingFlags.NonPublic,
                                    null, Type.EmptyTypes, null);
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
                if (k >= il.Length || il[k] != 0x02)   // ldarg.0
                    return false;
                k = Skip(il, k + 1);
                if (k + 5 > il.Length || il[k] != 0x28)   // call, and its token
                    return false;
                int token = BitConverter.ToInt32(il, k + 1);
                k = Skip(il, k + 5);
                if (k != il.Length - 1 || il[k] != 0x2A)   // ret, and nothing after it
                    return false;
                MethodBase callee;
                try {
                    callee = t.Module.ResolveMethod(
                        token, t.IsGenericType ? t.GetGenericArguments() : null, null);
                } catch (ArgumentException) {
                    return false;
                }
                Type declaring = callee.DeclaringType;
                Type baseType = t.BaseType;
                bool baseCall =
                    declaring == baseType ||
                    (baseType.IsGenericType && declaring.IsGenericType &&
                     declaring.GetGenericTypeDefinition() == baseType.GetGenericTypeDefinition());
                if (!(callee is ConstructorInfo) || callee.IsStatic ||
                    callee.GetParameters().Length != 0 || !baseCall)
                    return false;
            }
            return true;
        }

        static int Skip(byte[] il, int k)
        {
            while (k < il.Length && il[k] == 0x00)   // nop
                k++;
            return k;
        }
    }
}

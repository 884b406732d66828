// SdtoTypes — the managed half of resolving a generic class named in a message
// (serializer/sd_reader.c, class_named): the reader finds the generic definition and each type
// argument itself, among the assemblies already loaded and under the allow-list; this binds them,
// and only where every constraint of the definition holds, so that no instantiation a compiler
// would refuse is ever created from a message.
namespace System.MP
{
    internal static class SdtoTypes
    {
        /// <summary>definition instantiated with arguments (each a Type), or null when definition
        /// is not a generic type definition of that many parameters or an argument breaks one of
        /// its constraints. Called by the reader (C) for a generic class named in a message that
        /// is not yet in its allowed set.</summary>
        static Type Instantiate(Type definition, object[] arguments)
        {
            if (definition == null || arguments == null || !definition.IsGenericTypeDefinition)
                return null;
            Type[] parameters = definition.GetGenericArguments();
            if (parameters.Length != arguments.Length)
                return null;
            var types = new Type[arguments.Length];
            for (int i = 0; i < types.Length; i++)
                if ((types[i] = arguments[i] as Type) == null || types[i].ContainsGenericParameters)
                    return null;
            for (int i = 0; i < types.Length; i++)
                if (!Satisfies(parameters[i], types[i]))
                    return null;
            try {
                return definition.MakeGenericType(types);
            } catch (ArgumentException) {
                return null;
            } catch (TypeLoadException) {
                return null;
            }
        }

        /// <summary>Does argument meet the constraints of parameter? A constraint that itself
        /// names a generic parameter (<c>where T : IComparable&lt;T&gt;</c>) is not checked here
        /// and refuses the argument: no transportable class needs one.</summary>
        static bool Satisfies(Type parameter, Type argument)
        {
            Reflection.GenericParameterAttributes a = parameter.GenericParameterAttributes;
            bool nullable = Nullable.GetUnderlyingType(argument) != null;
            if ((a & Reflection.GenericParameterAttributes.ReferenceTypeConstraint) != 0 &&
                argument.IsValueType)
                return false;
            if ((a & Reflection.GenericParameterAttributes.NotNullableValueTypeConstraint) != 0 &&
                (!argument.IsValueType || nullable))
                return false;
            if ((a & Reflection.GenericParameterAttributes.DefaultConstructorConstraint) != 0 &&
                !argument.IsValueType &&
                (argument.IsAbstract || argument.GetConstructor(Type.EmptyTypes) == null))
                return false;
            foreach (Type c in parameter.GetGenericParameterConstraints())
                if (c.ContainsGenericParameters || !c.IsAssignableFrom(argument))
                    return false;
            return true;
        }
    }
}

// IcallTableTest — the C table of internal calls (opi/icall_table.h) and the C# externs of
// System.MP.MPDirect agree, every extern is callable, and every System.MP method that calls an
// internal call is NoInlining (internal calls bind when their caller is compiled: an inlined
// caller compiled before the core registered them would fail under stock mono).
using System;
using System.Collections.Generic;
using System.Linq;
using System.MP;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Text;

static class IcallTableTest
{
    const BindingFlags All = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static |
                             BindingFlags.Instance | BindingFlags.DeclaredOnly;

    static int Main()
    {
        MPStats unused = MP.Stats; // starts the core
        Assembly asm = typeof(MP).Assembly;
        Type direct = asm.GetType("System.MP.MPDirect", true);
        var externs = direct.GetMethods(All)
            .Where(m => (m.GetMethodImplementationFlags() & MethodImplAttributes.InternalCall) != 0).ToList();
        Check.True(externs.Count == direct.GetMethods(All).Length, "MPDirect holds internal calls only");

        var names = direct.GetMethod("IcallNames", All);
        var buffer = new byte[8192];
        int length = (int)names.Invoke(null, new object[] { buffer });
        var table = Encoding.UTF8.GetString(buffer, 0, length)
            .Split(new[] { '\n' }, StringSplitOptions.RemoveEmptyEntries).ToList();
        var cNames = new HashSet<string>(table.Select(n => n.Substring(n.IndexOf("::") + 2)));
        var csNames = new HashSet<string>(externs.Select(m => m.Name));
        Check.True(table.All(n => n.StartsWith("System.MP.MPDirect::")), "C names are MPDirect members");
        Check.Equal(table.Count, cNames.Count, "no duplicate C entry");
        Check.Equal(externs.Count, csNames.Count, "no overloaded extern (one C function each)");
        foreach (string n in csNames.Except(cNames))
            Check.True(false, $"extern MPDirect.{n} has no C table entry");
        foreach (string n in cNames.Except(csNames))
            Check.True(false, $"C table entry {n} has no C# extern");
        Check.True(cNames.SetEquals(csNames), $"{cNames.Count} C entries = {csNames.Count} C# externs");

        // every extern binds: a method that calls it compiles (the runtime resolves it)
        foreach (MethodInfo m in externs) {
            try {
                RuntimeHelpers.PrepareMethod(m.MethodHandle);
                Check.True(true, "binds " + m.Name);
            } catch (Exception e) {
                Check.True(false, $"extern {m.Name} does not bind: {e.Message}");
            }
        }

        // NoInlining on every caller of an internal call
        var opcodes = typeof(OpCodes).GetFields(BindingFlags.Public | BindingFlags.Static)
            .Select(f => (OpCode)f.GetValue(null)).ToDictionary(o => (ushort)o.Value);
        int callers = 0;
        foreach (Type t in asm.GetTypes()) {
            if (t == direct) continue;
            var methods = t.GetMethods(All).Cast<MethodBase>().Concat(t.GetConstructors(All));
            foreach (MethodBase m in methods) {
                if (!CallsAny(m, direct, opcodes)) continue;
                callers++;
                bool compilerGenerated = m.Name.Contains("<") || t.Name.Contains("<"); // lambdas run through delegates
                bool noInlining = (m.GetMethodImplementationFlags() & MethodImplAttributes.NoInlining) != 0;
                Check.True(noInlining || compilerGenerated, $"{t.Name}.{m.Name} calls an internal call and must be NoInlining");
            }
        }
        Check.True(callers > 20, $"found the callers of internal calls ({callers})");
        return Check.Finish("IcallTableTest");
    }

    /// <summary>Walks the IL of m and tells whether a call instruction targets a method of type.</summary>
    static bool CallsAny(MethodBase m, Type type, Dictionary<ushort, OpCode> opcodes)
    {
        byte[] il = m.GetMethodBody()?.GetILAsByteArray();
        if (il == null) return false;
        for (int i = 0; i < il.Length;) {
            ushort value = il[i] == 0xFE ? (ushort)(0xFE00 | il[i + 1]) : il[i];
            OpCode op = opcodes[value];
            i += op.Size;
            if (op.OperandType == OperandType.InlineMethod) {
                int token = BitConverter.ToInt32(il, i);
                MethodBase target = m.Module.ResolveMethod(token, m.DeclaringType.IsGenericType ? m.DeclaringType.GetGenericArguments() : null,
                                                           m.IsGenericMethod ? m.GetGenericArguments() : null);
                if (target.DeclaringType == type) return true;
            }
            i += OperandSize(op.OperandType, il, i);
        }
        return false;
    }

    static int OperandSize(OperandType t, byte[] il, int at)
    {
        switch (t) {
        case OperandType.InlineNone: return 0;
        case OperandType.ShortInlineBrTarget: case OperandType.ShortInlineI: case OperandType.ShortInlineVar: return 1;
        case OperandType.InlineVar: return 2;
        case OperandType.InlineI8: case OperandType.InlineR: return 8;
        case OperandType.InlineSwitch: return 4 + 4 * BitConverter.ToInt32(il, at);
        default: return 4;
        }
    }
}

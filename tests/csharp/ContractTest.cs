// ContractTest — everything C and C# agree on is checked, not hand-kept: the C table of internal
// calls (opi/icall_table.h) and the C# externs of System.MP.MPDirect agree name by name and
// parameter by parameter, error codes (mpc.h) match Errors' constants, stats positions match
// MPStats.Index, built-in operator codes match Op's, the managed methods the core calls
// (SD_MANAGED_METHODS) exist, and opi_status's layout matches StatusData's. The constants C# writes
// too (sentinels, send modes, group kinds, wait policies: opi/opi_constants.h) match its literal
// fields, and Errors.Make throws for each error code the exception that file's table names.
// Every extern is callable, and every System.MP method that calls an internal
// call is NoInlining (internal calls bind when their caller is compiled: an inlined caller
// compiled before the core registered them would fail under stock mono).
using System;
using System.Collections.Generic;
using System.Linq;
using System.MP;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;

static class ContractTest
{
    const BindingFlags All = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static |
                             BindingFlags.Instance | BindingFlags.DeclaredOnly;

    static int Main()
    {
        MPStats unused = MP.Stats;   // starts the core
        Assembly asm = typeof(MP).Assembly;
        Type direct = asm.GetType("System.MP.MPDirect", true);
        var externs = direct.GetMethods(All)
                          .Where(m => (m.GetMethodImplementationFlags() &
                                       MethodImplAttributes.InternalCall) != 0)
                          .ToList();
        Check.True(externs.Count == direct.GetMethods(All).Length,
                   "MPDirect holds internal calls only");

        var contract = direct.GetMethod("Contract", All);
        var buffer = new byte[1 << 16];
        int length = (int)contract.Invoke(null, new object[] { buffer });
        Check.True(length > 0 && length <= buffer.Length, "the contract text fits: " + length);
        var lines = Encoding.UTF8.GetString(buffer, 0, length)
                        .Split(new[] { '\n' }, StringSplitOptions.RemoveEmptyEntries)
                        .Select(l => l.Split(new[] { ' ' }, 3))
                        .ToList();

        // internal calls: names, then every parameter and the return type
        var table = lines.Where(l => l[0] == "icall").ToList();
        var cNames = new HashSet<string>(table.Select(l => l[1].Substring(l[1].IndexOf("::") + 2)));
        var csNames = new HashSet<string>(externs.Select(m => m.Name));
        Check.True(table.All(l => l[1].StartsWith("System.MP.MPDirect::")),
                   "C names are MPDirect members");
        Check.Equal(table.Count, cNames.Count, "no duplicate C entry");
        Check.Equal(externs.Count, csNames.Count, "no overloaded extern (one C function each)");
        foreach (string n in csNames.Except(cNames))
            Check.True(false, $"extern MPDirect.{n} has no C table entry");
        foreach (string n in cNames.Except(csNames))
            Check.True(false, $"C table entry {n} has no C# extern");
        Check.True(cNames.SetEquals(csNames),
                   $"{cNames.Count} C entries = {csNames.Count} C# externs");
        foreach (var l in table) {
            string name = l[1].Substring(l[1].IndexOf("::") + 2);
            MethodInfo m = externs.FirstOrDefault(e => e.Name == name);
            if (m == null)
                continue;
            string signature = l[2];
            int open = signature.IndexOf('(');
            string cReturn = signature.Substring(0, open).Trim();
            string[] cParams =
                signature.Substring(open + 1, signature.Length - open - 2)
                    .Split(',')
                    .Select(p => p.Trim())
                    .Where(p => p != "void")
                    .ToArray();
            ParameterInfo[] ps = m.GetParameters();
            Check.True(Matches(cReturn, m.ReturnType),
                       $"{name}: returns {m.ReturnType.Name}, C returns {cReturn}");
            Check.True(ps.Length == cParams.Length,
                       $"{name}: {ps.Length} parameters in C#, {cParams.Length} in C");
            for (int i = 0; i < Math.Min(ps.Length, cParams.Length); i++)
                Check.True(
                    Matches(cParams[i], ps[i].ParameterType),
                    $"{name}: parameter {i} ({ps[i].Name}) is {ps[i].ParameterType.Name} in C#, " +
                        $"{cParams[i]} in C");
        }

        // error codes: every C code has a C# constant of the same name and value, and no other
        var errors = asm.GetType("System.MP.Errors", true)
                         .GetFields(All)
                         .Where(f => f.IsLiteral)
                         .ToDictionary(f => Key(f.Name), f => (int)f.GetRawConstantValue());
        var cErrors =
            lines.Where(l => l[0] == "error").ToDictionary(l => Key(l[1]), l => int.Parse(l[2]));
        foreach (var e in cErrors)
            Check.True(errors.ContainsKey(e.Key) && errors[e.Key] == e.Value,
                       $"error {e.Key} = {e.Value} in C and in Errors");
        foreach (var e in errors)
            Check.True(cErrors.ContainsKey(e.Key), $"Errors.{e.Key} is a C error code");

        // stats positions
        var index = asm.GetType("System.MP.MPStats+Index", true)
                        .GetFields(All)
                        .Where(f => f.IsLiteral)
                        .ToDictionary(f => Key(f.Name), f => (int)f.GetRawConstantValue());
        var stats = lines.Where(l => l[0] == "stat").ToList();
        Check.Equal(stats.Count, index["count"], "MPStats.Index.Count is the number of C counters");
        foreach (var st in stats)
            Check.True(index.TryGetValue(Key(st[1]), out int at) && at == int.Parse(st[2]),
                       $"stat {st[1]} at {st[2]} in C and C#");

        // built-in operator codes
        PropertyInfo code = typeof(Op).GetProperty("Code", All);
        var ops = typeof(Op)
                      .GetFields(BindingFlags.Public | BindingFlags.Static)
                      .ToDictionary(f => Key(f.Name), f => (int)code.GetValue(f.GetValue(null)));
        var cOps = lines.Where(l => l[0] == "op").ToList();
        Check.Equal(cOps.Count, ops.Count, "as many built-in operators in C as in Op");
        foreach (var o in cOps)
            Check.True(ops.TryGetValue(Key(o[1]), out int c) && c == int.Parse(o[2]),
                       $"Op.{o[1]} has code {o[2]}");

        // the managed methods the core calls, found as Mono finds them: by name and parameter count
        var managed = lines.Where(l => l[0] == "managed").ToList();
        Check.True(managed.Count > 0, "the core names the managed methods it calls");
        foreach (var l in managed) {
            string[] rest = l[2].Split(' ');
            Type t = asm.GetType("System.MP." + l[1], false);
            int count =
                t == null
                    ? 0
                    : t.GetMethods(All).Count(m => m.Name == rest[0] && m.IsStatic &&
                                                   m.GetParameters().Length == int.Parse(rest[1]));
            Check.True(count == 1,
                       $"System.MP.{l[1]}.{rest[0]} taking {rest[1]} arguments exists, once");
        }

        // opi_status and StatusData
        Type status = asm.GetType("System.MP.StatusData", true);
        var layout = lines.Single(l => l[0] == "layout" && l[1] == "StatusData");
        Check.Equal(int.Parse(layout[2]), Marshal.SizeOf(status),
                    "StatusData has opi_status's size");
        var fields = status.GetFields(All)
                         .Where(f => !f.IsStatic)
                         .ToDictionary(f => Key(f.Name), f => f.Name);
        var cFields = lines.Where(l => l[0] == "field" && l[1] == "StatusData")
                          .Select(l => l[2].Split(' '))
                          .ToList();
        Check.Equal(cFields.Count, fields.Count, "StatusData has opi_status's fields");
        foreach (var f in cFields)
            Check.True(fields.TryGetValue(Key(f[0]), out string n) &&
                           (int)Marshal.OffsetOf(status, n) == int.Parse(f[1]),
                       $"StatusData.{f[0]} at offset {f[1]}");

        // constants C# writes too: each C# home holds exactly its C rows, name by name, same values
        foreach (var home in lines.Where(l => l[0] == "constant").GroupBy(l => l[1])) {
            Type t = asm.GetType("System.MP." + home.Key.Replace('.', '+'), false);
            Check.True(t != null, $"System.MP.{home.Key} exists");
            if (t == null)
                continue;
            var cs = t.GetFields(All).Where(f => f.IsLiteral).ToDictionary(f => Key(f.Name));
            var c = home.Select(l => l[2].Split(' ')).ToDictionary(p => Key(p[0]));
            foreach (var e in c) {
                bool found = cs.TryGetValue(e.Key, out FieldInfo f);
                int value = found ? Convert.ToInt32(f.GetRawConstantValue()) : 0;
                Check.True(found && value == int.Parse(e.Value[1]),
                           $"{home.Key}: {e.Value[0]} is {e.Value[1]} in C, " +
                               (found ? $"{f.Name} is {value} in C#" : "absent in C#"));
            }
            foreach (var e in cs.Where(e => !c.ContainsKey(e.Key)))
                Check.True(false, $"{home.Key}.{e.Value.Name} in C# has no row in C");
        }
        Check.True(lines.Count(l => l[0] == "constant") >= 11, "the core reports its constants");

        // the exception of each error code: what Errors.Make builds, as opi_constants.h says
        MethodInfo make = asm.GetType("System.MP.Errors", true).GetMethod("Make", All);
        var exceptions = lines.Where(l => l[0] == "exception").ToList();
        Check.Equal(exceptions.Count, cErrors.Count, "an exception row for every error code");
        foreach (var l in exceptions) {
            string[] rest = l[2].Split(' ');
            var made = (Exception)make.Invoke(null, new object[] { int.Parse(rest[0]) });
            string thrown = made.GetType().Name;
            Check.True(thrown == rest[1], $"error {l[1]} ({rest[0]}): C# {thrown}, C {rest[1]}");
        }

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
        var opcodes = typeof(OpCodes)
                          .GetFields(BindingFlags.Public | BindingFlags.Static)
                          .Select(f => (OpCode)f.GetValue(null))
                          .ToDictionary(o => (ushort)o.Value);
        int callers = 0;
        foreach (Type t in asm.GetTypes()) {
            if (t == direct)
                continue;
            var methods = t.GetMethods(All).Cast<MethodBase>().Concat(t.GetConstructors(All));
            foreach (MethodBase m in methods) {
                if (!CallsAny(m, direct, opcodes))
                    continue;
                callers++;
                // lambdas run through delegates
                bool compilerGenerated = m.Name.Contains("<") || t.Name.Contains("<");
                bool noInlining =
                    (m.GetMethodImplementationFlags() & MethodImplAttributes.NoInlining) != 0;
                Check.True(noInlining || compilerGenerated,
                           $"{t.Name}.{m.Name} calls an internal call and must be NoInlining");
            }
        }
        Check.True(callers > 20, $"found the callers of internal calls ({callers})");
        return Check.Finish("ContractTest");
    }

    /// <summary>A name as both languages spell it:
    /// POOLED_BUFFERS_FREED_BY_GC, PooledBuffersFreedByGC.</summary>
    static string Key(string name) => name.Replace("_", "").ToLowerInvariant();

    /// <summary>Does a C type of icall_table.h stand for this C# parameter or
    /// return type?</summary>
    static bool Matches(string c, Type t)
    {
        switch (c) {
        case "IC_I32": return t == typeof(int);
        case "IC_I64": return t == typeof(long);
        case "IC_F64": return t == typeof(double);
        case "IC_OBJ": return !t.IsValueType && !t.IsByRef && t != typeof(Type);
        case "IC_TYPE": return t == typeof(Type);
        case "IC_I32_REF": return t == typeof(int).MakeByRefType();
        case "IC_I64_REF": return t == typeof(long).MakeByRefType();
        case "IC_OBJ_REF": return t == typeof(object).MakeByRefType();
        case "IC_STATUS_REF": return t.IsByRef && t.GetElementType().Name == "StatusData";
        default: return false;
        }
    }

    /// <summary>Walks the IL of m and tells whether a call instruction targets a method
    /// of type.</summary>
    static bool CallsAny(MethodBase m, Type type, Dictionary<ushort, OpCode> opcodes)
    {
        byte[] il = m.GetMethodBody()?.GetILAsByteArray();
        if (il == null)
            return false;
        for (int i = 0; i < il.Length;) {
            ushort value = il[i] == 0xFE ? (ushort)(0xFE00 | il[i + 1]) : il[i];
            OpCode op = opcodes[value];
            i += op.Size;
            if (op.OperandType == OperandType.InlineMethod) {
                int token = BitConverter.ToInt32(il, i);
                MethodBase target = m.Module.ResolveMethod(
                    token,
                    m.DeclaringType.IsGenericType ? m.DeclaringType.GetGenericArguments() : null,
                    m.IsGenericMethod ? m.GetGenericArguments() : null);
                if (target.DeclaringType == type)
                    return true;
            }
            i += OperandSize(op.OperandType, il, i);
        }
        return false;
    }

    static int OperandSize(OperandType t, byte[] il, int at)
    {
        switch (t) {
        case OperandType.InlineNone: return 0;
        case OperandType.ShortInlineBrTarget:
        case OperandType.ShortInlineI:
        case OperandType.ShortInlineVar: return 1;
        case OperandType.InlineVar: return 2;
        case OperandType.InlineI8:
        case OperandType.InlineR: return 8;
        case OperandType.InlineSwitch: return 4 + 4 * BitConverter.ToInt32(il, at);
        default: return 4;
        }
    }
}

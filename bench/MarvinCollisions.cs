// MarvinCollisions — strings that share one hash code under Mono's string hash (Marvin with a
// fixed seed), for the hash-flooding test (tests/csharp/SdtoFloodTest.cs, which checks that they
// do collide) and its benchmark (bench/Flooding.cs).
using System;
using System.Collections.Generic;
using System.Reflection;

static class MarvinCollisions
{
    static uint Rotl(uint x, int n) => (x << n) | (x >> (32 - n));

    static void Block(ref uint p0, ref uint p1)
    {
        p1 ^= p0;
        p0 = Rotl(p0, 20);
        p0 += p1;
        p1 = Rotl(p1, 9);
        p1 ^= p0;
        p0 = Rotl(p0, 27);
        p0 += p1;
        p1 = Rotl(p1, 19);
    }

    /// <summary>Mono's seed: a constant in Mono 6.8 (System.Marvin.DefaultSeed).</summary>
    public static ulong Seed()
    {
        Type marvin = typeof(string).Assembly.GetType("System.Marvin");
        PropertyInfo seed =
            marvin?.GetProperty("DefaultSeed", BindingFlags.NonPublic | BindingFlags.Static);
        return seed != null ? (ulong)seed.GetValue(null) : 0xc47310;
    }

    /// <summary>2^k strings of 4k characters whose Marvin states agree after every 4
    /// characters, so they share one hash code: at each step two first blocks whose states
    /// agree in one half (a birthday search), then second blocks that make the other half
    /// agree too (Joux's multicollisions).</summary>
    public static List<string> Strings(int k)
    {
        ulong seed = Seed();
        uint p0 = (uint)seed, p1 = (uint)(seed >> 32);
        var steps = new List<uint[]>();
        var rnd = new Random(5);
        for (int j = 0; j < k; j++) {
            var seen = new Dictionary<uint, uint>();
            while (true) {
                uint b = (uint)rnd.Next() ^ ((uint)rnd.Next() << 16);
                uint a0 = p0 + b, a1 = p1;
                Block(ref a0, ref a1);
                if (seen.TryGetValue(a1, out uint other) && other != b) {
                    uint o0 = p0 + other, o1 = p1;
                    Block(ref o0, ref o1);
                    uint second = 0x00410041;
                    steps.Add(new[] { b, second, other, a0 + second - o0 });
                    p0 = a0 + second;
                    p1 = a1;
                    Block(ref p0, ref p1);
                    break;
                }
                seen[a1] = b;
            }
        }
        var strings = new List<string>(1 << k);
        var c = new char[4 * k];
        for (int m = 0; m < 1 << k; m++) {
            for (int j = 0; j < k; j++) {
                int pick = (m >> j & 1) * 2;
                uint x = steps[j][pick], y = steps[j][pick + 1];
                c[4 * j] = (char)(x & 0xFFFF);
                c[4 * j + 1] = (char)(x >> 16);
                c[4 * j + 2] = (char)(y & 0xFFFF);
                c[4 * j + 3] = (char)(y >> 16);
            }
            strings.Add(new string(c));
        }
        return strings;
    }
}

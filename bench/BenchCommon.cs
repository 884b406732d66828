// BenchCommon — what every C# benchmark shares with the native ones (bench_common.h).
using System;
using System.IO;
using System.Linq;

static class BenchCommon
{
    /// <summary>Iterations per timed repetition; the same rule as bench_iterations()
    /// in C.</summary>
    public static int Iterations(long bytes)
    {
        long n = 200000000L / (bytes + 20000);
        return (int)Math.Max(20, Math.Min(10000, n));
    }

    /// <summary>What the halo pattern sweeps between exchanges: the last-level cache of the machine
    /// this was measured on (32 MiB), more than the 27 MB a 512×512 shallow-water
    /// worker touches.</summary>
    public const int EvictBytes = 32 << 20;

    /// <summary>Peak resident set size (VmHWM) of this process in KiB.</summary>
    public static long PeakRssKib()
    {
        string line =
            File.ReadAllLines("/proc/self/status").FirstOrDefault(l => l.StartsWith("VmHWM:"));
        return line == null ? -1 : long.Parse(line.Substring(6).Trim().Split(' ')[0]);
    }
}

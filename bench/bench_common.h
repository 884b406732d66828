/* bench_common.h — shared by the native benchmark programs; the C# side mirrors it in
 * BenchCommon.cs (same iteration rule, same peak-memory source). */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdio.h>
#include <string.h>

/* Iterations per timed repetition: enough that a repetition lasts milliseconds at any size. */
static inline int bench_iterations(long bytes)
{
    long n = 200000000L / (bytes + 20000);
    return (int)(n < 20 ? 20 : n > 10000 ? 10000 : n);
}

/* What the halo pattern sweeps between exchanges: the last-level cache of the machine this was
 * measured on (32 MiB), more than the 27 MB a 512x512 shallow-water worker touches. */
#define BENCH_EVICT_BYTES (32L << 20)

/* Peak resident set size of this process (VmHWM), in KiB. */
static inline long bench_peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            sscanf(line + 6, "%ld", &kib);
    if (f)
        fclose(f);
    return kib;
}

#endif

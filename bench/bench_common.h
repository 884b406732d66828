/* bench_common.h — shared by the native benchmark programs; the C# side mirrors it in
 * BenchCommon.cs (same iteration rule, same peak-memory source). */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include "mpc_internal.h"

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

/* MPI for the native reference programs, started and ended as motor does it (mpc): so a run
 * across hosts ends by itself as System.MP's does (MPICH 4.0.2 can hang in MPI_Finalize there,
 * see mpc_finalize_within), and both carry the same heartbeat. */
static inline int bench_mpi_init(int *argc, char ***argv)
{
    int provided = 0;
    return mpc_init(argc, argv, MPI_THREAD_MULTIPLE, &provided);
}

static inline int bench_mpi_finalize(void)
{
    double bound = mpc_config_seconds(MPC_CONFIG_FINALIZE_TIMEOUT);
    return mpc_finalize_within(bound, 0);
}

#endif

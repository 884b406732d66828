/* rma_native — the reference for one-sided communication (System.MP.Window): plain C on MPICH
 * with the MPI calls a C programmer would write, over a window of max bytes on every rank.
 *   mpiexec.mpich -n N rma_native OP MIN_BYTES MAX_BYTES REPS
 * OP (sizes in bytes of the data one operation moves, x4 steps; rank 0 is the origin, rank 1 the
 * target, which waits in MPI_Barrier meanwhile; every size's data is checked once after it is
 * timed):
 *   put-lock   MPI_Win_lock(SHARED, 1) + MPI_Put + MPI_Win_unlock(1) per iteration: a whole
 *              passive epoch; µs per iteration
 *   put-flush  inside one MPI_Win_lock_all: MPI_Put + MPI_Win_flush(1); µs per iteration
 *   get-flush  inside one MPI_Win_lock_all: MPI_Get + MPI_Win_flush(1); µs per iteration
 *   put-fence  MPI_Put by rank 0 between two MPI_Win_fence of every rank; µs per iteration
 *   fetch-op   MPI_Fetch_and_op(MPI_SUM) of one int64_t + MPI_Win_flush(1) inside one
 *              MPI_Win_lock_all (sizes ignored: 8 bytes); µs per operation (its inverse is the
 *              throughput of one origin)
 * Prints "native-c,bytes,rep,iterations,us" and "peak,native-c,rank,kib". */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

static int rank, nranks;

static void check(int ok, const char *what, long bytes)
{
    if (!ok) {
        fprintf(stderr, "rma_native: wrong data in %s at %ld bytes\n", what, bytes);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static void report(const char *name, long bytes, int rep, int iters, double seconds)
{
    if (rank == 0 && rep >= 0)
        printf("%s,%ld,%d,%d,%.6f\n", name, bytes, rep, iters, seconds * 1e6 / iters);
}

static void fill(unsigned char *p, long bytes, int seed)
{
    for (long i = 0; i < bytes; i++)
        p[i] = (unsigned char)(i * 7 + seed);
}

static int filled(const unsigned char *p, long bytes, int seed)
{
    for (long i = 0; i < bytes; i++)
        if (p[i] != (unsigned char)(i * 7 + seed))
            return 0;
    return 1;
}

/* put-lock, put-flush, get-flush, put-fence over a window of max bytes. */
static void transfers(const char *op, long min, long max, int reps)
{
    unsigned char *exposed = malloc((size_t)max), *origin = malloc((size_t)max);
    if (!origin || !exposed)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Win win; /* as System.MP makes it: over memory the program owns, displacement unit 1 */
    MPI_Win_create(exposed, (MPI_Aint)max, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int fence = strcmp(op, "put-fence") == 0, lock = strcmp(op, "put-lock") == 0;
    int get = strcmp(op, "get-flush") == 0;
    for (long bytes = min; bytes <= max; bytes *= 4) {
        int iters = bench_iterations(bytes);
        fill(origin, bytes, 1);
        fill(exposed, bytes, 2);
        for (int rep = -2; rep < reps; rep++) { /* -2: check, -1: warm-up */
            MPI_Barrier(MPI_COMM_WORLD);
            int count = rep == -2 ? 1 : iters;
            double t0 = MPI_Wtime();
            if (fence) {
                MPI_Win_fence(0, win);
                for (int i = 0; i < count; i++) {
                    if (rank == 0)
                        MPI_Put(origin, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
                    MPI_Win_fence(0, win);
                }
            } else if (rank == 0) {
                if (!lock)
                    MPI_Win_lock_all(0, win);
                for (int i = 0; i < count; i++) {
                    if (lock)
                        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                    if (get)
                        MPI_Get(origin, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
                    else
                        MPI_Put(origin, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
                    if (lock)
                        MPI_Win_unlock(1, win);
                    else
                        MPI_Win_flush(1, win);
                }
                if (!lock)
                    MPI_Win_unlock_all(win);
            }
            double seconds = MPI_Wtime() - t0;
            MPI_Barrier(MPI_COMM_WORLD);
            if (rep == -2) {
                int ok = get ? rank != 0 || filled(origin, bytes, 2)
                             : rank != 1 || filled(exposed, bytes, 1);
                check(ok, op, bytes);
                continue;
            }
            report("native-c", bytes, rep, count, seconds);
        }
    }
    MPI_Win_free(&win);
    free(origin);
    free(exposed);
}

static void fetch_op(int reps)
{
    static int64_t counter[2];
    int64_t one = 1, was = 0;
    MPI_Win win;
    MPI_Win_create(counter, sizeof counter, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int iters = bench_iterations(8);
    long done = 0;
    for (int rep = -1; rep < reps; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Win_lock_all(0, win);
            for (int i = 0; i < iters; i++) {
                MPI_Fetch_and_op(&one, &was, MPI_INT64_T, 1, 0, MPI_SUM, win);
                MPI_Win_flush(1, win);
            }
            MPI_Win_unlock_all(win);
            check(was == done + iters - 1, "fetch-op", 8);
            done += iters;
        }
        double seconds = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        report("native-c", 8, rep, iters, seconds);
    }
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    bench_mpi_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *op = argc > 1 ? argv[1] : "put-flush";
    long min = argc > 2 ? atol(argv[2]) : 8, max = argc > 3 ? atol(argv[3]) : 1 << 20;
    int reps = argc > 4 ? atoi(argv[4]) : 5;
    if (nranks < 2) {
        fprintf(stderr, "rma_native: needs 2 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (strcmp(op, "fetch-op") == 0)
        fetch_op(reps);
    else if (!strcmp(op, "put-lock") || !strcmp(op, "put-flush") || !strcmp(op, "get-flush") ||
             !strcmp(op, "put-fence"))
        transfers(op, min, max, reps);
    else {
        fprintf(stderr, "rma_native: unknown op %s\n", op);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    printf("peak,native-c,%d,%ld\n", rank, bench_peak_rss_kib());
    bench_mpi_finalize();
    return 0;
}

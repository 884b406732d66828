/* collectives_native — the reference for collective latency, plain C on MPICH.
 *   mpiexec.mpich -n N collectives_native bcast|allreduce|gatherv|alltoallv|iallreduce MIN_BYTES
 * MAX_BYTES REPS bcast: MPI_Bcast of bytes from rank 0; allreduce: MPI_Allreduce of doubles with
 * MPI_SUM; gatherv, alltoallv: MPI_Gatherv to rank 0 / MPI_Alltoallv of blocks of MIN..MAX bytes of
 * doubles per rank (vcoll_main); iallreduce: MPI_Iallreduce of doubles with MPI_SUM, then MPI_Wait.
 * Prints "native-c,bytes,rep,iterations,us_per_call" and "peak,native-c,rank,kib". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

static int vcoll_main(int argc, char **argv);

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "gatherv") == 0 || strcmp(argv[1], "alltoallv") == 0))
        return vcoll_main(argc, argv);
    int rank;
    bench_mpi_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int allreduce = argc > 1 && strcmp(argv[1], "allreduce") == 0;
    int iallreduce = argc > 1 && strcmp(argv[1], "iallreduce") == 0;
    long min = argc > 2 ? atol(argv[2]) : 8, max = argc > 3 ? atol(argv[3]) : 1 << 20;
    int reps = argc > 4 ? atoi(argv[4]) : 5;
    double *a = malloc((size_t)max), *b = malloc((size_t)max);
    if (!a || !b)
        MPI_Abort(MPI_COMM_WORLD, 2);
    memset(a, 0, (size_t)max);
    memset(b, 0, (size_t)max);
    for (long size = min; size <= max; size *= 4) {
        int iters = bench_iterations(size);
        for (int rep = -1; rep < reps; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                if (iallreduce) { /* start, then wait */
                    MPI_Request req;
                    MPI_Iallreduce(a, b, (int)(size / 8), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                   &req);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                    continue;
                }
                if (allreduce)
                    MPI_Allreduce(a, b, (int)(size / 8), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                else
                    MPI_Bcast(a, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
            }
            double t = MPI_Wtime() - t0;
            if (rank == 0 && rep >= 0)
                printf("native-c,%ld,%d,%d,%.6f\n", size, rep, iters, t * 1e6 / iters);
        }
    }
    printf("peak,native-c,%d,%ld\n", rank, bench_peak_rss_kib());
    bench_mpi_finalize();
    return 0;
}

/* ---- Gatherv and Alltoallv (issue 13) ----
 * Every rank sends SIZE bytes of doubles to rank 0 (MPI_Gatherv) or to every rank
 * (MPI_Alltoallv); counts and displacements (doubles) are made once, outside the timed loop. */
static int vcoll_main(int argc, char **argv)
{
    int rank, p;
    bench_mpi_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int gatherv = strcmp(argv[1], "gatherv") == 0;
    long min = argc > 2 ? atol(argv[2]) : 8, max = argc > 3 ? atol(argv[3]) : 1 << 20;
    int reps = argc > 4 ? atoi(argv[4]) : 5;
    double *send = calloc((size_t)max / 8 * (size_t)p, sizeof(double));
    double *recv = calloc((size_t)max / 8 * (size_t)p, sizeof(double));
    int *counts = malloc((size_t)p * sizeof *counts), *displs = malloc((size_t)p * sizeof *displs);
    if (!send || !recv || !counts || !displs)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (long size = min; size <= max; size *= 4) {
        int n = (int)(size / 8);
        for (int r = 0; r < p; r++) {
            counts[r] = n;
            displs[r] = r * n;
        }
        int iters = bench_iterations(size);
        for (int rep = -1; rep < reps; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                if (gatherv)
                    MPI_Gatherv(send, n, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, 0,
                                MPI_COMM_WORLD);
                else
                    MPI_Alltoallv(send, counts, displs, MPI_DOUBLE, recv, counts, displs,
                                  MPI_DOUBLE, MPI_COMM_WORLD);
            }
            double t = MPI_Wtime() - t0;
            if (rank == 0 && rep >= 0)
                printf("native-c,%ld,%d,%d,%.6f\n", size, rep, iters, t * 1e6 / iters);
        }
    }
    printf("peak,native-c,%d,%ld\n", rank, bench_peak_rss_kib());
    free(send);
    free(recv);
    free(counts);
    free(displs);
    bench_mpi_finalize();
    return 0;
}
/* ---- end of the v-collectives ---- */

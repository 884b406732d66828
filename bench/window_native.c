/* window_native — the reference for the non-blocking window pattern, plain C on MPICH:
 * rank 0 posts WINDOW MPI_Isend, rank 1 WINDOW MPI_Irecv, both MPI_Waitall, then rank 1
 * acknowledges with one byte. Time per message = elapsed / (iterations x WINDOW).
 *   mpiexec.mpich -n 2 window_native MIN_BYTES MAX_BYTES REPS
 * Prints "native-c,bytes,rep,iterations,us_per_message" and "peak,native-c,rank,kib". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define WINDOW 64

int main(int argc, char **argv)
{
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long min = argc > 1 ? atol(argv[1]) : 8, max = argc > 2 ? atol(argv[2]) : 1 << 20;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    char *bufs[WINDOW], ack = 0;
    for (int w = 0; w < WINDOW; w++) {
        bufs[w] = malloc((size_t)max);
        if (!bufs[w])
            MPI_Abort(MPI_COMM_WORLD, 2);
        memset(bufs[w], 1, (size_t)max);
    }
    MPI_Request reqs[WINDOW];
    MPI_Status statuses[WINDOW]; /* not MPI_STATUSES_IGNORE: GCC 12 flags that pointer constant */
    for (long size = min; size <= max; size *= 4) {
        int iters = bench_iterations(size * WINDOW) / 4 + 5;
        for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters && rank < 2; i++) {
                for (int w = 0; w < WINDOW; w++) {
                    if (rank == 0)
                        MPI_Isend(bufs[w], (int)size, MPI_BYTE, 1, w, MPI_COMM_WORLD, &reqs[w]);
                    else
                        MPI_Irecv(bufs[w], (int)size, MPI_BYTE, 0, w, MPI_COMM_WORLD, &reqs[w]);
                }
                MPI_Waitall(WINDOW, reqs, statuses);
                if (rank == 0)
                    MPI_Recv(&ack, 1, MPI_BYTE, 1, WINDOW, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                else
                    MPI_Send(&ack, 1, MPI_BYTE, 0, WINDOW, MPI_COMM_WORLD);
            }
            double t = MPI_Wtime() - t0;
            if (rank == 0 && rep >= 0)
                printf("native-c,%ld,%d,%d,%.6f\n", size, rep, iters, t * 1e6 / ((double)iters * WINDOW));
        }
    }
    printf("peak,native-c,%d,%ld\n", rank, bench_peak_rss_kib());
    MPI_Finalize();
    return 0;
}

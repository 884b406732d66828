/* pingpong_native — the reference: ping-pong in plain C on MPICH.
 *   mpiexec.mpich -n 2 pingpong_native MIN_BYTES MAX_BYTES REPS [nonblocking]
 * Default: MPI_Send / MPI_Recv, as a C programmer writes it ("native-c"). With "nonblocking":
 * MPI_Isend / MPI_Irecv completed by MPI_Wait ("native-c-nb"), the MPI path System.MP's
 * blocking calls take, to tell binding cost from MPI path cost.
 * Prints CSV rows "TRANSPORT,bytes,rep,iterations,half_rtt_us" and "peak,TRANSPORT,rank,kib". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

int main(int argc, char **argv)
{
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided); /* as motor does */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long min = argc > 1 ? atol(argv[1]) : 4, max = argc > 2 ? atol(argv[2]) : 4 << 20;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    int nonblocking = argc > 4 && strcmp(argv[4], "nonblocking") == 0;
    const char *name = nonblocking ? "native-c-nb" : "native-c";
    char *buf = malloc((size_t)max);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 2);
    memset(buf, 1, (size_t)max);
    for (long size = min; size <= max; size *= 2) {
        int iters = bench_iterations(size);
        for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up, not reported */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                for (int step = 0; step < 2 && rank < 2; step++) {
                    int sending = (rank == 0) == (step == 0), peer = 1 - rank;
                    if (nonblocking) {
                        MPI_Request req;
                        if (sending)
                            MPI_Isend(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req);
                        else
                            MPI_Irecv(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req);
                        MPI_Wait(&req, MPI_STATUS_IGNORE);
                    } else if (sending) {
                        MPI_Send(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
                    } else {
                        MPI_Recv(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    }
                }
            }
            double t = MPI_Wtime() - t0;
            if (rank == 0 && rep >= 0)
                printf("%s,%ld,%d,%d,%.6f\n", name, size, rep, iters, t * 1e6 / (2.0 * iters));
        }
    }
    free(buf);
    printf("peak,%s,%d,%ld\n", name, rank, bench_peak_rss_kib());
    MPI_Finalize();
    return 0;
}

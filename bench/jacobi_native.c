/* jacobi_native — the reference for the oversubscription bench (bench/jacobi.py), plain C on
 * MPICH: a 2-D Jacobi solve of Laplace's equation on an N x N grid split into blocks of rows,
 * each step an MPI_Isend/MPI_Irecv halo exchange with the neighbours above and below
 * (MPI_Waitall), the 5-point update, and an MPI_Allreduce of the residual — the calls Jacobi.cs
 * makes through System.MP.
 *   mpiexec.mpich -n P jacobi_native N STEPS REPS [NAME]
 * Prints "NAME,P,rep,STEPS,ms_per_step" (NAME defaults to native-c), "residual,NAME,value" (the
 * last repetition's, the same in every implementation) and "peak,NAME,rank,kib". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define CHECK(call)                       \
    do {                                  \
        if ((call) != MPI_SUCCESS)        \
            MPI_Abort(MPI_COMM_WORLD, 3); \
    } while (0)

int main(int argc, char **argv)
{
    if (bench_mpi_init(&argc, &argv) != MPC_OK)
        return 2;
    int rank, size;
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int n = argc > 1 ? atoi(argv[1]) : 1024, steps = argc > 2 ? atoi(argv[2]) : 200,
        reps = argc > 3 ? atoi(argv[3]) : 3;
    const char *name = argc > 4 ? argv[4] : "native-c";
    int first = (int)((long)rank * n / size), rows = (int)((long)(rank + 1) * n / size) - first;
    int w = n + 2; /* a row with its two boundary columns */
    size_t cells = (size_t)(rows + 2) * (size_t)w;
    double *u = malloc(cells * sizeof *u), *v = malloc(cells * sizeof *v);
    if (!u || !v)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double residual = 0;
    for (int rep = -1; rep < reps; rep++) {
        /* the top edge of the whole grid held at 1, the rest at 0 */
        memset(u, 0, cells * sizeof *u);
        if (rank == 0)
            for (int j = 0; j < w; j++)
                u[j] = 1.0;
        memcpy(v, u, cells * sizeof *u);
        CHECK(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = MPI_Wtime();
        for (int s = 0; s < steps; s++) {
            MPI_Request req[4];
            MPI_Status st[4]; /* not MPI_STATUSES_IGNORE: gcc reads its (MPI_Status *)1 as a 0-byte
                                 region */
            CHECK(MPI_Irecv(u, w, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &req[0]));
            CHECK(MPI_Irecv(u + (size_t)(rows + 1) * w, w, MPI_DOUBLE, down, 0, MPI_COMM_WORLD,
                            &req[1]));
            CHECK(MPI_Isend(u + w, w, MPI_DOUBLE, up, 0, MPI_COMM_WORLD, &req[2]));
            CHECK(MPI_Isend(u + (size_t)rows * w, w, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &req[3]));
            CHECK(MPI_Waitall(4, req, st));
            double local = 0;
            for (int i = 1; i <= rows; i++)
                for (int j = 1; j <= n; j++) {
                    size_t k = (size_t)i * w + j;
                    double x = 0.25 * (u[k - w] + u[k + w] + u[k - 1] + u[k + 1]);
                    local += (x - u[k]) * (x - u[k]);
                    v[k] = x;
                }
            CHECK(MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
            double *t = u;
            u = v;
            v = t;
        }
        double ms = (MPI_Wtime() - t0) * 1e3 / steps;
        if (rank == 0 && rep >= 0)
            printf("%s,%d,%d,%d,%.6f\n", name, size, rep, steps, ms);
    }
    if (rank == 0)
        printf("residual,%s,%.12e\n", name, residual);
    printf("peak,%s,%d,%ld\n", name, rank, bench_peak_rss_kib());
    free(u);
    free(v);
    bench_mpi_finalize();
    return 0;
}

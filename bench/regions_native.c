/* regions_native — the reference for regions, persistent requests and neighbourhood halos:
 * plain C on MPICH with the MPI calls and datatypes a C programmer would write.
 *   mpiexec.mpich -n N regions_native OP MIN_BYTES MAX_BYTES REPS
 * OP (sizes in bytes of the data one message moves, x4 steps; every size's data is checked once
 * after it is timed):
 *   column     ping-pong of one column of a double[E][64] (E = bytes / 8 rows): MPI_Type_vector
 *              (E, 1, 64, MPI_DOUBLE), sent and received in place; half a round trip, rank 0-1
 *   block3d    ping-pong of the interior b0 x b1 x b2 block of a double[b0+2][b1+2][b2+2]
 *              (b0 b1 b2: the bytes / 8 elements split into three near-equal powers of two):
 *              MPI_Type_create_subarray; half a round trip
 *   persistent a ring halo of contiguous doubles with persistent requests: MPI_Send_init /
 *              MPI_Recv_init to both neighbours once, then MPI_Startall + MPI_Waitall per
 *              iteration; µs per iteration
 *   neighbor   the halo of a periodic 2-D grid of ranks, each with a double[n+2][n+2] field
 *              (n = bytes / 8: one edge's bytes): MPI_Neighbor_alltoallw with subarray types, in
 *              place; µs per exchange
 *   neighbor-packed  the same exchange with MPI_Isend / MPI_Irecv / MPI_Waitall of the four edges,
 *              columns packed into and unpacked from buffers (rows sent in place)
 *   column-nb, block3d-nb  the same ping-pongs with every blocking call made as MPI_Isend /
 *              MPI_Irecv + MPI_Wait: the MPI path System.MP's blocking calls take
 * Prints "native-c,bytes,rep,iterations,us" (native-c-packed for neighbor-packed, native-c-nb for
 * the -nb ops) and
 * "peak,native-c,rank,kib". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define COLUMNS 64 /* the column op's row length: each element on a cache line of its own */

static int rank, nranks;
/* (MPI_STATUSES_IGNORE trips gcc 12's -Wstringop-overflow inside MPI_Waitall's prototype) */
static MPI_Status statuses[8];

static void check(int ok, const char *what, long bytes)
{
    if (!ok) {
        fprintf(stderr, "regions_native: wrong data in %s at %ld bytes\n", what, bytes);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static void *alloc(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p)
        MPI_Abort(MPI_COMM_WORLD, 2);
    return p;
}

static void report(const char *name, long bytes, int rep, int iters, double seconds)
{
    if (rank == 0 && rep >= 0)
        printf("%s,%ld,%d,%d,%.6f\n", name, bytes, rep, iters, seconds * 1e6 / iters);
}

/* with -nb: every blocking call as MPI_Isend / MPI_Irecv + MPI_Wait, the MPI path System.MP's
 * blocking calls take (they must not block inside MPI while the GC may need the thread) */
static int nonblocking;

static void send1(void *base, MPI_Datatype type, int peer)
{
    if (!nonblocking) {
        MPI_Send(base, 1, type, peer, 0, MPI_COMM_WORLD);
        return;
    }
    MPI_Request req;
    MPI_Isend(base, 1, type, peer, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static void recv1(void *base, MPI_Datatype type, int peer)
{
    if (!nonblocking) {
        MPI_Recv(base, 1, type, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Request req;
    MPI_Irecv(base, 1, type, peer, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* A ping-pong between ranks 0 and 1 of one element of type at base; half a round trip. */
static void pingpong(void *base, MPI_Datatype type, long bytes, int reps)
{
    int iters = bench_iterations(bytes);
    for (int rep = -1; rep < reps; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters && rank < 2; i++) {
            if (rank == 0) {
                send1(base, type, 1);
                recv1(base, type, 1);
            } else {
                recv1(base, type, 0);
                send1(base, type, 0);
            }
        }
        report(nonblocking ? "native-c-nb" : "native-c", bytes, rep, iters, (MPI_Wtime() - t0) / 2);
    }
}

static void column(long min, long max, int reps)
{
    for (long bytes = min; bytes <= max; bytes *= 4) {
        long rows = bytes / 8;
        double *a = alloc((size_t)rows * COLUMNS * sizeof(double));
        MPI_Datatype col;
        MPI_Type_vector((int)rows, 1, COLUMNS, MPI_DOUBLE, &col);
        MPI_Type_commit(&col);
        pingpong(a + 1, col, bytes, reps);
        /* check: rank 0 stamps column 1, rank 1 receives it */
        for (long r = 0; r < rows; r++)
            a[r * COLUMNS + 1] = rank == 0 ? (double)r : -1.0;
        if (rank == 0)
            MPI_Send(a + 1, 1, col, 1, 1, MPI_COMM_WORLD);
        else if (rank == 1) {
            MPI_Recv(a + 1, 1, col, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int ok = 1;
            for (long r = 0; r < rows; r++)
                ok &= a[r * COLUMNS + 1] == (double)r && a[r * COLUMNS] == 0.0;
            check(ok, "column", bytes);
        }
        MPI_Type_free(&col);
        free(a);
    }
}

/* The bytes / 8 elements (a power of two) as three near-equal powers of two, largest first. */
static void block_dims(long bytes, int b[3])
{
    int e = 0;
    while ((8L << (e + 1)) <= bytes)
        e++;
    for (int d = 0; d < 3; d++)
        b[d] = 1 << ((e + 2 - d) / 3);
}

static void block3d(long min, long max, int reps)
{
    for (long bytes = min; bytes <= max; bytes *= 4) {
        int b[3], full[3], starts[3] = {1, 1, 1};
        block_dims(bytes, b);
        for (int d = 0; d < 3; d++)
            full[d] = b[d] + 2;
        size_t total = (size_t)full[0] * full[1] * full[2];
        double *a = alloc(total * sizeof(double));
        MPI_Datatype block;
        MPI_Type_create_subarray(3, full, b, starts, MPI_ORDER_C, MPI_DOUBLE, &block);
        MPI_Type_commit(&block);
        pingpong(a, block, bytes, reps);
        for (size_t i = 0; i < total; i++)
            a[i] = rank == 0 ? (double)i : -1.0;
        if (rank == 0)
            MPI_Send(a, 1, block, 1, 1, MPI_COMM_WORLD);
        else if (rank == 1) {
            MPI_Recv(a, 1, block, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int ok = 1;
            for (int i = 0; i < full[0]; i++)
                for (int j = 0; j < full[1]; j++)
                    for (int k = 0; k < full[2]; k++) {
                        size_t at = ((size_t)i * full[1] + j) * full[2] + k;
                        int inside =
                            i >= 1 && i <= b[0] && j >= 1 && j <= b[1] && k >= 1 && k <= b[2];
                        ok &= a[at] == (inside ? (double)at : -1.0);
                    }
            check(ok, "block3d", bytes);
        }
        MPI_Type_free(&block);
        free(a);
    }
}

static void persistent(long min, long max, int reps)
{
    int left = (rank + nranks - 1) % nranks, right = (rank + 1) % nranks;
    for (long bytes = min; bytes <= max; bytes *= 4) {
        int n = (int)(bytes / 8);
        double *sl = alloc((size_t)bytes), *sr = alloc((size_t)bytes);
        double *rl = alloc((size_t)bytes), *rr = alloc((size_t)bytes);
        MPI_Request req[4];
        /* tag 0 travels rightwards, tag 1 leftwards */
        MPI_Recv_init(rl, n, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Recv_init(rr, n, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[1]);
        MPI_Send_init(sr, n, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[2]);
        MPI_Send_init(sl, n, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[3]);
        int iters = bench_iterations(bytes);
        for (int rep = -1; rep < reps; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                MPI_Startall(4, req);
                MPI_Waitall(4, req, statuses);
            }
            report("native-c", bytes, rep, iters, MPI_Wtime() - t0);
        }
        for (int i = 0; i < n; i++) {
            sr[i] = rank * 1e6 + i;
            sl[i] = -(rank * 1e6 + i);
        }
        MPI_Startall(4, req);
        MPI_Waitall(4, req, statuses);
        int ok = 1;
        for (int i = 0; i < n; i++)
            ok &= rl[i] == left * 1e6 + i && rr[i] == -(right * 1e6 + i);
        check(ok, "persistent", bytes);
        for (int i = 0; i < 4; i++)
            MPI_Request_free(&req[i]);
        free(sl);
        free(sr);
        free(rl);
        free(rr);
    }
}

/* The four edges of a double[n+2][n+2] in MPI's neighbour order for a 2-D Cartesian grid:
 * dimension 0 -1 then +1 (rows), dimension 1 -1 then +1 (columns). Sent: the first and last
 * interior rows / columns; received: the ghost rows / columns beyond them. */
static void edge_box(int n, int which, int recv, int starts[2], int sizes[2])
{
    int dim = which / 2, plus = which % 2;
    int at = recv ? (plus ? n + 1 : 0) : (plus ? n : 1);
    starts[dim] = at;
    sizes[dim] = 1;
    starts[1 - dim] = 1;
    sizes[1 - dim] = n;
}

static double stamp(int r, int i, int j) { return r * 1e7 + i * 1e3 + j; }

static void fill_field(double *f, int n)
{
    for (int i = 0; i < n + 2; i++)
        for (int j = 0; j < n + 2; j++)
            f[(size_t)i * (n + 2) + j] =
                i >= 1 && i <= n && j >= 1 && j <= n ? stamp(rank, i, j) : -1.0;
}

/* Every ghost cell holds what the neighbour across it sent (its edge nearest to us). */
static int ghosts_ok(const double *f, int n, MPI_Comm cart)
{
    int src[4], ok = 1; /* MPI's neighbour order: per dimension, -1 then +1 */
    for (int d = 0; d < 2; d++)
        MPI_Cart_shift(cart, d, 1, &src[2 * d], &src[2 * d + 1]);
    for (int k = 1; k <= n; k++) {
        /* ghost row 0 from the -1 neighbour of dimension 0: its last interior row n */
        ok &= f[(size_t)0 * (n + 2) + k] == stamp(src[0], n, k);
        ok &= f[(size_t)(n + 1) * (n + 2) + k] == stamp(src[1], 1, k);
        ok &= f[(size_t)k * (n + 2) + 0] == stamp(src[2], k, n);
        ok &= f[(size_t)k * (n + 2) + n + 1] == stamp(src[3], k, 1);
    }
    return ok;
}

static void neighbor(long min, long max, int reps, int packed)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(nranks, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int nbr[4];
    for (int d = 0; d < 2; d++)
        MPI_Cart_shift(cart, d, 1, &nbr[2 * d], &nbr[2 * d + 1]);
    const char *name = packed ? "native-c-packed" : "native-c";
    for (long bytes = min; bytes <= max; bytes *= 4) {
        int n = (int)(bytes / 8), full[2] = {n + 2, n + 2};
        double *f = alloc((size_t)full[0] * full[1] * sizeof(double));
        MPI_Datatype stypes[4], rtypes[4];
        int counts[4] = {1, 1, 1, 1};
        MPI_Aint displs[4] = {0, 0, 0, 0};
        for (int w = 0; w < 4; w++) {
            int st[2], sz[2];
            edge_box(n, w, 0, st, sz);
            MPI_Type_create_subarray(2, full, sz, st, MPI_ORDER_C, MPI_DOUBLE, &stypes[w]);
            MPI_Type_commit(&stypes[w]);
            edge_box(n, w, 1, st, sz);
            MPI_Type_create_subarray(2, full, sz, st, MPI_ORDER_C, MPI_DOUBLE, &rtypes[w]);
            MPI_Type_commit(&rtypes[w]);
        }
        /* MPICH 4.0.2's MPI_Neighbor_alltoallw pairs the blocks between two ranks in the order
         * it posts them, so where a periodic dimension has one rank on both sides (a dimension of
         * size 1 or 2) the block sent toward -1 lands in that rank's -1 block; MPI-4.0 says its +1
         * block. Swapping that dimension's two receive blocks gives MPI-4.0's exchange. */
        for (int d = 0; d < 2; d++)
            if (nbr[2 * d] == nbr[2 * d + 1]) {
                MPI_Datatype t = rtypes[2 * d];
                rtypes[2 * d] = rtypes[2 * d + 1];
                rtypes[2 * d + 1] = t;
            }
        double *pack_out[2] = {alloc((size_t)bytes), alloc((size_t)bytes)};
        double *pack_in[2] = {alloc((size_t)bytes), alloc((size_t)bytes)};
        fill_field(f, n);
        int iters = bench_iterations(4 * bytes);
        for (int rep = -2; rep < reps; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            int count = rep == -2 ? 1 : iters; /* -2: one checked exchange */
            for (int i = 0; i < count; i++) {
                if (!packed) {
                    MPI_Neighbor_alltoallw(f, counts, displs, stypes, f, counts, displs, rtypes,
                                           cart);
                    continue;
                }
                MPI_Request req[8];
                size_t row = (size_t)n + 2;
                for (int k = 0; k < n; k++) { /* columns 1 and n */
                    pack_out[0][k] = f[(k + 1) * row + 1];
                    pack_out[1][k] = f[(k + 1) * row + n];
                }
                MPI_Irecv(f + 0 * row + 1, n, MPI_DOUBLE, nbr[0], 1, cart, &req[0]);
                MPI_Irecv(f + (n + 1) * row + 1, n, MPI_DOUBLE, nbr[1], 0, cart, &req[1]);
                MPI_Irecv(pack_in[0], n, MPI_DOUBLE, nbr[2], 3, cart, &req[2]);
                MPI_Irecv(pack_in[1], n, MPI_DOUBLE, nbr[3], 2, cart, &req[3]);
                MPI_Isend(f + 1 * row + 1, n, MPI_DOUBLE, nbr[0], 0, cart, &req[4]);
                MPI_Isend(f + n * row + 1, n, MPI_DOUBLE, nbr[1], 1, cart, &req[5]);
                MPI_Isend(pack_out[0], n, MPI_DOUBLE, nbr[2], 2, cart, &req[6]);
                MPI_Isend(pack_out[1], n, MPI_DOUBLE, nbr[3], 3, cart, &req[7]);
                MPI_Waitall(8, req, statuses);
                for (int k = 0; k < n; k++) {
                    f[(k + 1) * row + 0] = pack_in[0][k];
                    f[(k + 1) * row + n + 1] = pack_in[1][k];
                }
            }
            if (rep == -2)
                check(ghosts_ok(f, n, cart), name, bytes);
            report(name, bytes, rep, count, MPI_Wtime() - t0);
        }
        for (int w = 0; w < 4; w++) {
            MPI_Type_free(&stypes[w]);
            MPI_Type_free(&rtypes[w]);
        }
        for (int k = 0; k < 2; k++) {
            free(pack_out[k]);
            free(pack_in[k]);
        }
        free(f);
    }
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
    bench_mpi_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    char op[32];
    snprintf(op, sizeof op, "%s", argc > 1 ? argv[1] : "column");
    char *nb = strstr(op, "-nb"); /* column-nb, block3d-nb */
    if (nb && nb[3] == '\0') {
        nonblocking = 1;
        *nb = '\0';
    }
    long min = argc > 2 ? atol(argv[2]) : 8, max = argc > 3 ? atol(argv[3]) : 1 << 20;
    int reps = argc > 4 ? atoi(argv[4]) : 5;
    if (strcmp(op, "column") == 0)
        column(min, max, reps);
    else if (strcmp(op, "block3d") == 0)
        block3d(min, max, reps);
    else if (strcmp(op, "persistent") == 0)
        persistent(min, max, reps);
    else if (strcmp(op, "neighbor") == 0 || strcmp(op, "neighbor-packed") == 0)
        neighbor(min, max, reps, strcmp(op, "neighbor-packed") == 0);
    else {
        fprintf(stderr, "regions_native: unknown op %s\n", op);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    printf("peak,%s,%d,%ld\n",
           strstr(op, "packed") ? "native-c-packed"
           : nonblocking        ? "native-c-nb"
                                : "native-c",
           rank, bench_peak_rss_kib());
    bench_mpi_finalize();
    return 0;
}

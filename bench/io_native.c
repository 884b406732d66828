/* io_native — the reference for MPFile: plain C on MPICH making the MPI-IO calls a C programmer
 * writes to checkpoint a distributed double[N][N] and read it back.
 *   mpiexec.mpich -n P io_native OP MIN_BYTES MAX_BYTES REPS DIR
 * For each size (MIN_BYTES x4 up to MAX_BYTES) the global array is N x N doubles with
 * N = floor(sqrt(bytes / 8)) (the rows report N * N * 8 bytes); rank r owns a block of
 * consecutive rows. The file DIR/io_native.bin is opened once per size (MPI_File_open), the view
 * set once (MPI_File_set_view with an MPI_Type_create_subarray of MPI_DOUBLE, "native"), and each
 * iteration is one collective access of the rank's whole block, timed between barriers:
 *   write  MPI_File_write_at_all(fh, 0, block, rows * N, MPI_DOUBLE)
 *   read   MPI_File_read_at_all of the same (the file written once before, untimed)
 * Every size's data is checked once (the read's contents; the write's by reading it back).
 * Prints "native-c,bytes,rep,iterations,us" (µs per collective access) and
 * "peak,native-c,rank,kib". */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench_common.h"

static int rank, nranks;

static void ok_or_abort(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        fprintf(stderr, "io_native: %s failed: %s\n", what, text);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* Iterations per repetition: a repetition of at least ~64 MiB moved, 1 to 20 accesses. */
static int io_iterations(long bytes)
{
    long n = (64L << 20) / (bytes > 0 ? bytes : 1);
    return (int)(n < 1 ? 1 : n > 20 ? 20 : n);
}

static double value(long i, long j, long n) { return (double)(i * n + j) + 0.5; }

static void run(const char *op, long nominal, int reps, const char *dir)
{
    long n = (long)sqrt((double)nominal / 8.0);
    long bytes = n * n * 8;
    int row0 = (int)(rank * (n / nranks) + (rank < n % nranks ? rank : n % nranks));
    int rows = (int)(n / nranks + (rank < n % nranks ? 1 : 0));
    /* As System.MP's arrays of 4 MiB and more (opi_buffers.c), the block lies in transparent
     * huge pages: asked for before the first touch, on its 2 MiB-aligned part. */
    size_t block_bytes = (size_t)rows * (size_t)n * sizeof(double) + 8;
    double *block = malloc(block_bytes);
    if (!block)
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (block_bytes >= ((size_t)4 << 20)) {
        uintptr_t huge = (uintptr_t)2 << 20;
        uintptr_t start = ((uintptr_t)block + huge - 1) & ~(huge - 1);
        uintptr_t end = ((uintptr_t)block + block_bytes) & ~(huge - 1);
        if (end > start)
            (void)madvise((void *)start, end - start, MADV_HUGEPAGE); /* advice */
    }
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < n; j++)
            block[i * n + j] = value(row0 + i, j, n);
    char path[4096];
    snprintf(path, sizeof path, "%s/io_native.bin", dir);
    MPI_File fh;
    ok_or_abort(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
        "MPI_File_open");
    int gsizes[2] = {(int)n, (int)n}, sizes[2] = {rows, (int)n}, starts[2] = {row0, 0};
    MPI_Datatype filetype;
    ok_or_abort(
        MPI_Type_create_subarray(2, gsizes, sizes, starts, MPI_ORDER_C, MPI_DOUBLE, &filetype),
        "MPI_Type_create_subarray");
    ok_or_abort(MPI_Type_commit(&filetype), "MPI_Type_commit");
    ok_or_abort(MPI_File_set_view(fh, 0, MPI_DOUBLE, filetype, "native", MPI_INFO_NULL),
                "MPI_File_set_view");
    int reading = strcmp(op, "read") == 0;
    int count = rows * (int)n;
    MPI_Status st;
    if (reading) /* the file to read, written once, untimed */
        ok_or_abort(MPI_File_write_at_all(fh, 0, block, count, MPI_DOUBLE, &st), "write");
    int iters = io_iterations(bytes);
    for (int rep = -1; rep < reps; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (reading)
                ok_or_abort(MPI_File_read_at_all(fh, 0, block, count, MPI_DOUBLE, &st), "read");
            else
                ok_or_abort(MPI_File_write_at_all(fh, 0, block, count, MPI_DOUBLE, &st), "write");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double seconds = MPI_Wtime() - t0;
        if (rank == 0 && rep >= 0)
            printf("native-c,%ld,%d,%d,%.6f\n", bytes, rep, iters, seconds * 1e6 / iters);
    }
    /* the data, once: what is in the file is every rank's block */
    memset(block, 0, (size_t)count * sizeof(double));
    ok_or_abort(MPI_File_read_at_all(fh, 0, block, count, MPI_DOUBLE, &st), "read back");
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < n; j++)
            if (block[i * n + j] != value(row0 + i, j, n)) {
                fprintf(stderr, "io_native: wrong data at %ld bytes\n", bytes);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
    ok_or_abort(MPI_File_close(&fh), "MPI_File_close");
    MPI_Type_free(&filetype);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    free(block);
}

int main(int argc, char **argv)
{
    bench_mpi_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 6) {
        if (rank == 0)
            fprintf(stderr, "usage: io_native write|read MIN_BYTES MAX_BYTES REPS DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *op = argv[1];
    long min = atol(argv[2]), max = atol(argv[3]);
    int reps = atoi(argv[4]);
    for (long bytes = min; bytes <= max; bytes *= 4)
        run(op, bytes, reps, argv[5]);
    printf("peak,native-c,%d,%ld\n", rank, bench_peak_rss_kib());
    bench_mpi_finalize();
    return 0;
}

/* sdto_native — the LinkedArray ping-pong of bench/Sdto.cs written by hand in C on MPICH: the
 * floor a structured transport is measured against. A list of N nodes, each with its own array
 * (4096 ints in all) and a next pointer, is packed into one buffer ([N][len][ints]... , the
 * buffer reused), sent as one message, matched-probed for its size, received into a reused
 * buffer and unpacked into a fresh list (a malloc per node and per array, every length checked
 * against the bytes received), which is sent back; the old list is freed — as the C# side
 * allocates a new graph per message and drops the old one.
 *   mpiexec.mpich -n 2 sdto_native pingpong native-c MIN_N MAX_N REPS
 * prints "native-c,N,rep,iterations,µs per half round trip" and "peak,native-c,rank,KiB".
 *   mpiexec.mpich -n 2 sdto_native userloop native-c N WARMUP ITERS
 * a user's plain loop (issue 35): the same round trips over one list of N elements, WARMUP of
 * them, then ITERS timed by one MPI_Wtime pair, no barrier; prints "native-c,N,0,ITERS,µs per
 * round trip" and the peak line. */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
    int32_t *buffer;
    int32_t length;
    struct node *next;
} node;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "sdto_native: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static node *build(int n)
{
    node *head = NULL;
    for (int i = 0; i < n; i++) {
        node *x = xmalloc(sizeof *x);
        x->length = 4096 / n;
        x->buffer = calloc((size_t)x->length, sizeof *x->buffer);
        if (!x->buffer)
            MPI_Abort(MPI_COMM_WORLD, 2);
        x->next = head;
        head = x;
    }
    return head;
}

static void free_list(node *h)
{
    while (h) {
        node *next = h->next;
        free(h->buffer);
        free(h);
        h = next;
    }
}

/* One growable buffer per direction, reused for every message. */
typedef struct bytes {
    uint8_t *data;
    size_t capacity;
} bytes;

static void reserve(bytes *b, size_t n)
{
    if (n <= b->capacity)
        return;
    free(b->data);
    b->data = xmalloc(n);
    b->capacity = n;
}

static void send_list(const node *h, bytes *out, int peer)
{
    size_t total = sizeof(int32_t);
    int32_t count = 0;
    for (const node *x = h; x; x = x->next, count++)
        total += sizeof(int32_t) + (size_t)x->length * sizeof(int32_t);
    reserve(out, total);
    uint8_t *p = out->data;
    memcpy(p, &count, sizeof count);
    p += sizeof count;
    for (const node *x = h; x; x = x->next) {
        memcpy(p, &x->length, sizeof x->length);
        p += sizeof x->length;
        memcpy(p, x->buffer, (size_t)x->length * sizeof(int32_t));
        p += (size_t)x->length * sizeof(int32_t);
    }
    MPI_Send(out->data, (int)total, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
}

static node *receive_list(bytes *in, int peer)
{
    MPI_Message msg;
    MPI_Status st;
    int size;
    MPI_Mprobe(peer, 0, MPI_COMM_WORLD, &msg, &st);
    MPI_Get_count(&st, MPI_BYTE, &size);
    reserve(in, (size_t)size);
    MPI_Mrecv(in->data, size, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    const uint8_t *p = in->data, *end = in->data + size;
    int32_t count;
    if (end - p < (ptrdiff_t)sizeof count)
        MPI_Abort(MPI_COMM_WORLD, 3);
    memcpy(&count, p, sizeof count);
    p += sizeof count;
    node *head = NULL, **tail = &head;
    for (int32_t i = 0; i < count; i++) {
        int32_t length;
        if (end - p < (ptrdiff_t)sizeof length)
            MPI_Abort(MPI_COMM_WORLD, 3);
        memcpy(&length, p, sizeof length);
        p += sizeof length;
        if (length < 0 || (size_t)(end - p) / sizeof(int32_t) < (size_t)length)
            MPI_Abort(MPI_COMM_WORLD, 3);
        node *x = xmalloc(sizeof *x);
        x->length = length;
        x->buffer = xmalloc((size_t)length * sizeof(int32_t));
        memcpy(x->buffer, p, (size_t)length * sizeof(int32_t));
        p += (size_t)length * sizeof(int32_t);
        x->next = NULL;
        *tail = x;
        tail = &x->next;
    }
    return head;
}

/* One round trip: rank 0 sends its list, receives the copy back and frees the old one (the new
 * list is returned); rank 1 receives a list, sends it back and frees it (NULL is returned). */
static node *round_trip(node *graph, int rank, bytes *in, bytes *out)
{
    int peer = 1 - rank;
    if (rank == 0) {
        send_list(graph, out, peer);
        node *back = receive_list(in, peer);
        free_list(graph);
        return back;
    }
    node *g = receive_list(in, peer);
    send_list(g, out, peer);
    free_list(g);
    return NULL;
}

static long peak_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/* The pingpong mode: half round trips, a barrier before each repetition, max(5, 2000 / N)
 * round trips a repetition, the first repetition untimed. */
static void pingpong(const char *name, int min, int max, int reps, int rank, bytes *in, bytes *out)
{
    for (int n = min; n <= max; n *= 4) {
        node *graph = rank == 0 ? build(n) : NULL;
        int iters = 2000 / n > 5 ? 2000 / n : 5;
        for (int rep = -1; rep < reps; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters && rank < 2; i++)
                graph = round_trip(graph, rank, in, out);
            double us = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
            if (rank == 0 && rep >= 0)
                printf("%s,%d,%d,%d,%.6f\n", name, n, rep, iters, us);
        }
        free_list(graph);
    }
}

/* The user's plain loop (issue 35) on 2 ranks: the list filled before and checked after. */
static void user_loop(const char *name, int n, int warmup, int iters, int rank, bytes *in,
                      bytes *out)
{
    node *graph = NULL;
    if (rank == 0) {
        graph = build(n);
        for (node *x = graph; x; x = x->next)
            for (int32_t j = 0; j < x->length; j++)
                x->buffer[j] = j;
    }
    for (int i = 0; i < warmup; i++)
        graph = round_trip(graph, rank, in, out);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        graph = round_trip(graph, rank, in, out);
    double us = (MPI_Wtime() - t0) * 1e6 / (iters > 0 ? iters : 1);
    int nodes = 0;
    for (const node *x = graph; x; x = x->next, nodes++) {
        if (x->length != 4096 / n)
            MPI_Abort(MPI_COMM_WORLD, 4);
        for (int32_t j = 0; j < x->length; j++)
            if (x->buffer[j] != j)
                MPI_Abort(MPI_COMM_WORLD, 4);
    }
    if (rank == 0 && nodes != n)
        MPI_Abort(MPI_COMM_WORLD, 4);
    if (rank == 0)
        printf("%s,%d,0,%d,%.6f\n", name, n, iters, us);
    free_list(graph);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int loop = argc == 6 && !strcmp(argv[1], "userloop");
    if (argc != 6 || (!loop && strcmp(argv[1], "pingpong"))) {
        fprintf(stderr, "usage: sdto_native pingpong NAME MIN_N MAX_N REPS\n"
                        "       sdto_native userloop NAME N WARMUP ITERS\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const char *name = argv[2];
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bytes in = {0}, out = {0};
    if (loop) {
        int n = atoi(argv[3]), warmup = atoi(argv[4]), iters = atoi(argv[5]);
        if (size != 2 || n < 1 || n > 4096) {
            fprintf(stderr, "sdto_native: userloop runs on 2 ranks, 1 <= N <= 4096\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        user_loop(name, n, warmup, iters, rank, &in, &out);
    } else {
        pingpong(name, atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), rank, &in, &out);
    }
    printf("peak,%s,%d,%ld\n", name, rank, peak_kib());
    free(in.data);
    free(out.data);
    MPI_Finalize();
    return 0;
}

/* bench_native — the reference side of the benchmark framework, plain C on MPICH: the same
 * patterns as bench/patterns/ (C#) over two communication modules (Netgauge's split):
 *   native-c     MPI_Send / MPI_Recv, MPI_Isend / MPI_Irecv + MPI_Waitall (how C is written)
 *   native-c-nb  every blocking call done as MPI_Isend / MPI_Irecv + MPI_Wait (the MPI path
 *                System.MP's blocking calls take: tells binding cost from MPI path cost)
 *   native-c-test  the same completed by an MPI_Test loop instead of MPI_Wait
 *   mpiexec.mpich -n N bench_native PATTERN TRANSPORT MIN_BYTES MAX_BYTES REPS WARMUP
 * MAX_ITERATIONS [check] bench_native --list   one "transport,NAME,CAPS,DEFAULT,LABEL" line per
 * module (the driver's registry) MAX_ITERATIONS caps the iterations per repetition (0: none;
 * oversubscribed runs need it). Output rows as Bench.exe:
 * "TRANSPORT,bytes,rep,iterations,value,METRIC", "peak,...", "checked,..." (check mode: every
 * payload byte stamped and verified). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench_common.h"

#define MAX_SLOTS 1024
#define WINDOW 64
#define LOGGP_N 16
#define HALO_FIELDS 7 /* U, V, P, then Cu, Cv, Z, H: what one step of the model exchanges */

/* ---- communication modules ---- */

typedef struct {
    const char *name;
    const char *label; /* for tables and plots */
    int by_default;    /* measured unless transports are named */
    void (*send)(void *buf, long bytes, int dest, int tag);
    void (*recv)(void *buf, long bytes, int source, int tag);
    void (*sendrecv)(void *sbuf, int dest, void *rbuf, int source, long bytes, int tag);
} transport;

static MPI_Request slots[MAX_SLOTS];
static MPI_Status
    statuses[MAX_SLOTS]; /* not MPI_STATUSES_IGNORE: GCC 12 flags that pointer constant */

static void check_mpi(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "bench_native: %s failed (%d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static void blocking_send(void *buf, long bytes, int dest, int tag)
{
    check_mpi(MPI_Send(buf, (int)bytes, MPI_BYTE, dest, tag, MPI_COMM_WORLD), "MPI_Send");
}

static void blocking_recv(void *buf, long bytes, int source, int tag)
{
    check_mpi(MPI_Recv(buf, (int)bytes, MPI_BYTE, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "MPI_Recv");
}

static void blocking_sendrecv(void *sbuf, int dest, void *rbuf, int source, long bytes, int tag)
{
    check_mpi(MPI_Sendrecv(sbuf, (int)bytes, MPI_BYTE, dest, tag, rbuf, (int)bytes, MPI_BYTE,
                           source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
}

static void nb_send(void *buf, long bytes, int dest, int tag)
{
    MPI_Request r;
    check_mpi(MPI_Isend(buf, (int)bytes, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &r), "MPI_Isend");
    check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
}

static void nb_recv(void *buf, long bytes, int source, int tag)
{
    MPI_Request r;
    check_mpi(MPI_Irecv(buf, (int)bytes, MPI_BYTE, source, tag, MPI_COMM_WORLD, &r), "MPI_Irecv");
    check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
}

/* The receive, then the send, of a Sendrecv done as two non-blocking calls. */
static void post_sendrecv(void *sbuf, int dest, void *rbuf, int source, long bytes, int tag,
                          MPI_Request r[2])
{
    check_mpi(MPI_Irecv(rbuf, (int)bytes, MPI_BYTE, source, tag, MPI_COMM_WORLD, &r[0]),
              "MPI_Irecv");
    check_mpi(MPI_Isend(sbuf, (int)bytes, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &r[1]), "MPI_Isend");
}

static void nb_sendrecv(void *sbuf, int dest, void *rbuf, int source, long bytes, int tag)
{
    MPI_Request r[2];
    MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: GCC 12 flags that pointer constant */
    post_sendrecv(sbuf, dest, rbuf, source, bytes, tag, r);
    check_mpi(MPI_Waitall(2, r, st), "MPI_Waitall");
}

/* MPI_Test until done: how a blocking call looks that must keep watching something else
 * while it waits (System.MP's first phase watches for an announced collection). */
static void test_until_done(MPI_Request *r)
{
    int done = 0;
    while (!done)
        check_mpi(MPI_Test(r, &done, MPI_STATUS_IGNORE), "MPI_Test");
}

static void test_send(void *buf, long bytes, int dest, int tag)
{
    MPI_Request r;
    check_mpi(MPI_Isend(buf, (int)bytes, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &r), "MPI_Isend");
    test_until_done(&r);
}

static void test_recv(void *buf, long bytes, int source, int tag)
{
    MPI_Request r;
    check_mpi(MPI_Irecv(buf, (int)bytes, MPI_BYTE, source, tag, MPI_COMM_WORLD, &r), "MPI_Irecv");
    test_until_done(&r);
}

static void test_sendrecv(void *sbuf, int dest, void *rbuf, int source, long bytes, int tag)
{
    MPI_Request r[2];
    MPI_Status st[2];
    int done = 0;
    post_sendrecv(sbuf, dest, rbuf, source, bytes, tag, r);
    while (!done)
        check_mpi(MPI_Testall(2, r, &done, st), "MPI_Testall");
}

static const transport transports[] = {
    {"native-c", "native C (MPICH)", 1, blocking_send, blocking_recv, blocking_sendrecv},
    {"native-c-nb", "native C, Isend/Irecv+Wait", 1, nb_send, nb_recv, nb_sendrecv},
    {"native-c-test", "native C, Isend/Irecv+Test loop", 0, test_send, test_recv, test_sendrecv},
};

/* Non-blocking calls are the same in both modules. */
static void isend(int slot, void *buf, long bytes, int dest, int tag)
{
    check_mpi(MPI_Isend(buf, (int)bytes, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &slots[slot]),
              "MPI_Isend");
}

static void irecv(int slot, void *buf, long bytes, int source, int tag)
{
    check_mpi(MPI_Irecv(buf, (int)bytes, MPI_BYTE, source, tag, MPI_COMM_WORLD, &slots[slot]),
              "MPI_Irecv");
}

static void waitall(int count) { check_mpi(MPI_Waitall(count, slots, statuses), "MPI_Waitall"); }

/* ---- what a pattern sees ---- */

typedef struct {
    const transport *t;
    int rank, size, check;
    long verified;
    char *msg[MAX_SLOTS], *ack[MAX_SLOTS]; /* this size's messages */
    int nmsg;
    int nmetrics;
    const char *metric[4];
    double value[4];
} context;

static void emit(context *c, const char *metric, double value)
{
    c->metric[c->nmetrics] = metric;
    c->value[c->nmetrics++] = value;
}

static int seed_of(int sender, int iteration, int slot)
{
    return sender * 7919 + iteration * 67 + slot;
}

static void stamp(context *c, char *m, long bytes, int seed)
{
    if (c->check)
        for (long i = 0; i < bytes; i++)
            m[i] = (char)(unsigned char)(seed * 131 + i);
}

static void verify(context *c, const char *m, long bytes, int seed)
{
    if (!c->check)
        return;
    for (long i = 0; i < bytes; i++)
        if ((unsigned char)m[i] != (unsigned char)(seed * 131 + i)) {
            fprintf(stderr,
                    "rank %d: message (seed %d) of %ld bytes arrived wrong at byte %ld (%s)\n",
                    c->rank, seed, bytes, i, c->t->name);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
    c->verified++;
}

static void delay_us(double us)
{
    double until = MPI_Wtime() + us * 1e-6;
    while (MPI_Wtime() < until) {
    }
}

static void prepare(context *c, long bytes, int n)
{
    for (int k = 0; k < c->nmsg; k++) {
        free(c->msg[k]);
        free(c->ack[k]);
    }
    c->nmsg = n;
    for (int k = 0; k < n; k++) {
        c->msg[k] = calloc((size_t)bytes + 1, 1);
        c->ack[k] = calloc(1, 1);
        if (!c->msg[k] || !c->ack[k])
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* ---- patterns (the same as bench/patterns/, whose comments explain them) ---- */

static void pingpong(context *c, long bytes, int iters)
{
    if (c->rank > 1)
        return;
    const transport *t = c->t;
    int peer = 1 - c->rank;
    char *m = c->msg[0];
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (c->rank == 0) {
            stamp(c, m, bytes, seed_of(0, i, 0));
            t->send(m, bytes, peer, 0);
            t->recv(m, bytes, peer, 0);
            verify(c, m, bytes, seed_of(1, i, 0));
        } else {
            t->recv(m, bytes, peer, 0);
            verify(c, m, bytes, seed_of(0, i, 0));
            stamp(c, m, bytes, seed_of(1, i, 0));
            t->send(m, bytes, peer, 0);
        }
    }
    emit(c, "time", (MPI_Wtime() - t0) * 1e6 / (2.0 * iters));
}

static void pingping(context *c, long bytes, int iters)
{
    if (c->rank > 1)
        return;
    int peer = 1 - c->rank;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        stamp(c, c->msg[0], bytes, seed_of(c->rank, i, 0));
        isend(0, c->msg[0], bytes, peer, 0);
        c->t->recv(c->msg[1], bytes, peer, 0);
        waitall(1);
        verify(c, c->msg[1], bytes, seed_of(peer, i, 0));
    }
    emit(c, "time", (MPI_Wtime() - t0) * 1e6 / iters);
}

static void window(context *c, long bytes, int iters)
{
    if (c->rank > 1)
        return;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        for (int w = 0; w < WINDOW; w++) {
            if (c->rank == 0) {
                stamp(c, c->msg[w], bytes, seed_of(0, i, w));
                isend(w, c->msg[w], bytes, 1, w);
            } else {
                irecv(w, c->msg[w], bytes, 0, w);
            }
        }
        waitall(WINDOW);
        if (c->rank == 0) {
            c->t->recv(c->ack[0], 1, 1, WINDOW);
            verify(c, c->ack[0], 1, seed_of(1, i, 0));
        } else {
            for (int w = 0; w < WINDOW; w++)
                verify(c, c->msg[w], bytes, seed_of(0, i, w));
            stamp(c, c->ack[0], 1, seed_of(1, i, 0));
            c->t->send(c->ack[0], 1, 0, WINDOW);
        }
    }
    emit(c, "time", (MPI_Wtime() - t0) * 1e6 / ((double)iters * WINDOW));
}

static void onetomany(context *c, long bytes, int iters)
{
    int n = c->size - 1;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (c->rank == 0) {
            for (int k = 0; k < n; k++)
                irecv(k, c->ack[k], 1, k + 1, 2);
            for (int k = 0; k < n; k++) {
                stamp(c, c->msg[k], bytes, seed_of(0, i, k + 1));
                isend(n + k, c->msg[k], bytes, k + 1, 1);
            }
            waitall(2 * n);
            for (int k = 0; k < n; k++)
                verify(c, c->ack[k], 1, seed_of(k + 1, i, 0));
        } else {
            c->t->recv(c->msg[0], bytes, 0, 1);
            verify(c, c->msg[0], bytes, seed_of(0, i, c->rank));
            stamp(c, c->ack[0], 1, seed_of(c->rank, i, 0));
            c->t->send(c->ack[0], 1, 0, 2);
        }
    }
    double us = (MPI_Wtime() - t0) * 1e6 / iters;
    emit(c, "time", us);
    emit(c, "MBps", n * bytes / us);
}

static void manytoone(context *c, long bytes, int iters)
{
    int n = c->size - 1;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (c->rank == 0) {
            for (int k = 0; k < n; k++)
                irecv(k, c->msg[k], bytes, k + 1, 1);
            waitall(n);
            for (int k = 0; k < n; k++) {
                verify(c, c->msg[k], bytes, seed_of(k + 1, i, 0));
                stamp(c, c->ack[k], 1, seed_of(0, i, k + 1));
                isend(k, c->ack[k], 1, k + 1, 2);
            }
            waitall(n);
        } else {
            stamp(c, c->msg[0], bytes, seed_of(c->rank, i, 0));
            c->t->send(c->msg[0], bytes, 0, 1);
            c->t->recv(c->ack[0], 1, 0, 2);
            verify(c, c->ack[0], 1, seed_of(0, i, c->rank));
        }
    }
    double us = (MPI_Wtime() - t0) * 1e6 / iters;
    emit(c, "time", us);
    emit(c, "MBps", n * bytes / us);
}

static double prtt(context *c, long bytes, int iters, int n, double delay)
{
    const transport *t = c->t;
    char *m = c->msg[0];
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (c->rank == 0) {
            for (int k = 0; k < n; k++) {
                if (k > 0 && delay > 0)
                    delay_us(delay);
                stamp(c, m, bytes, seed_of(0, i, k));
                t->send(m, bytes, 1, 0);
            }
            t->recv(m, bytes, 1, 1);
            verify(c, m, bytes, seed_of(1, i, 0));
        } else {
            for (int k = 0; k < n; k++) {
                t->recv(m, bytes, 0, 0);
                verify(c, m, bytes, seed_of(0, i, k));
            }
            stamp(c, m, bytes, seed_of(1, i, 0));
            t->send(m, bytes, 0, 1);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / iters;
}

static double receive_overhead(context *c, long bytes, int iters, double delay)
{
    const transport *t = c->t;
    char *m = c->msg[0];
    double in_recv = 0;
    for (int i = 0; i < iters; i++) {
        if (c->rank == 0) {
            stamp(c, m, bytes, seed_of(0, i, 0));
            t->send(m, bytes, 1, 0);
            delay_us(delay);
            double r0 = MPI_Wtime();
            t->recv(m, bytes, 1, 1);
            in_recv += MPI_Wtime() - r0;
            verify(c, m, bytes, seed_of(1, i, 0));
        } else {
            t->recv(m, bytes, 0, 0);
            verify(c, m, bytes, seed_of(0, i, 0));
            stamp(c, m, bytes, seed_of(1, i, 0));
            t->send(m, bytes, 0, 1);
        }
    }
    return in_recv * 1e6 / iters;
}

static void loggp(context *c, long bytes, int iters)
{
    if (c->rank > 1)
        return;
    double prtt1 = prtt(c, bytes, iters, 1, 0);
    double prttn = prtt(c, bytes, iters, LOGGP_N, 0);
    double prttd = prtt(c, bytes, iters, LOGGP_N, c->rank == 0 ? prtt1 : 0);
    double o_r = receive_overhead(c, bytes, iters, 2 * prtt1);
    emit(c, "prtt1", prtt1);
    emit(c, "os", (prttd - prtt1) / (LOGGP_N - 1) - prtt1);
    emit(c, "T", (prttn - prtt1) / (LOGGP_N - 1));
    emit(c, "or", o_r);
}

/* halo (bench/patterns/Halo.cs): rank 0 exchanges HALO_FIELDS fields' edges with itself in both
 * directions after sweeping a last-level-cache-sized buffer; µs per Sendrecv and of the first. */
static void halo(context *c, long bytes, int iters)
{
    static double *evict;
    if (c->rank != 0)
        return;
    if (!evict && !(evict = calloc(BENCH_EVICT_BYTES / sizeof(double), sizeof(double))))
        MPI_Abort(MPI_COMM_WORLD, 2);
    /* messages: send down, receive from up, send up, receive from down — per field */
    char **send_down = c->msg, **recv_up = c->msg + HALO_FIELDS,
         **send_up = c->msg + 2 * HALO_FIELDS, **recv_down = c->msg + 3 * HALO_FIELDS;
    double all = 0, first = 0;
    for (int i = 0; i < iters; i++) {
        for (int f = 0; f < HALO_FIELDS; f++) {
            stamp(c, send_down[f], bytes, seed_of(0, i, f));
            stamp(c, send_up[f], bytes, seed_of(0, i, HALO_FIELDS + f));
        }
        for (size_t k = 0; k < BENCH_EVICT_BYTES / sizeof(double); k++)
            evict[k] = evict[k] * 0.5 + 1.0;
        double t0 = MPI_Wtime(), t1 = t0;
        for (int f = 0; f < HALO_FIELDS; f++) {
            c->t->sendrecv(send_down[f], 0, recv_up[f], 0, bytes, f);
            if (f == 0)
                t1 = MPI_Wtime();
            c->t->sendrecv(send_up[f], 0, recv_down[f], 0, bytes, HALO_FIELDS + f);
        }
        double t2 = MPI_Wtime();
        all += t2 - t0;
        first += t1 - t0;
        for (int f = 0; f < HALO_FIELDS; f++) {
            verify(c, recv_up[f], bytes, seed_of(0, i, f));
            verify(c, recv_down[f], bytes, seed_of(0, i, HALO_FIELDS + f));
        }
    }
    emit(c, "time", all * 1e6 / (iters * 2.0 * HALO_FIELDS));
    emit(c, "first", first * 1e6 / iters);
}

typedef struct {
    const char *name;
    void (*repetition)(context *c, long bytes, int iters);
    long volume_factor; /* iterations follow bench_iterations(bytes * factor) / divisor + extra */
    int divisor, extra;
} pattern;

static const pattern patterns[] = {
    {"pingpong", pingpong, 1, 1, 0},   {"pingping", pingping, 1, 1, 0},
    {"window", window, WINDOW, 4, 5},  {"onetomany", onetomany, 2, 2, 5},
    {"manytoone", manytoone, 2, 2, 5}, {"loggp", loggp, LOGGP_N, LOGGP_N, 3},
    {"halo", halo, 0, 500, 0}, /* 10000 / 500 = 20 iterations: a sweep costs milliseconds */
};

int main(int argc, char **argv)
{
    context c = {0};
    if (argc == 2 && strcmp(argv[1], "--list") == 0) { /* no MPI needed to say what is here */
        for (size_t i = 0; i < sizeof transports / sizeof *transports; i++)
            printf("transport,%s,blocking+nonblocking,%s,%s\n", transports[i].name,
                   transports[i].by_default ? "default" : "optional", transports[i].label);
        return 0;
    }
    check_mpi(bench_mpi_init(&argc, &argv), "MPI_Init_thread"); /* as motor */
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    if (argc < 8) {
        if (c.rank == 0)
            fprintf(stderr, "usage: bench_native PATTERN TRANSPORT MIN_BYTES MAX_BYTES REPS WARMUP "
                            "MAX_ITERATIONS [check]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const pattern *p = NULL;
    for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++)
        if (strcmp(argv[1], patterns[i].name) == 0)
            p = &patterns[i];
    for (size_t i = 0; i < sizeof transports / sizeof *transports; i++)
        if (strcmp(argv[2], transports[i].name) == 0)
            c.t = &transports[i];
    int min_ranks = p && p->repetition == halo ? 1 : 2;
    if (!p || !c.t || c.size < min_ranks || c.size > MAX_SLOTS / 2) {
        if (c.rank == 0)
            fprintf(stderr, "bench_native: unknown pattern or transport, or %d..%d ranks needed\n",
                    min_ranks, MAX_SLOTS / 2);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long min = atol(argv[3]), max = atol(argv[4]);
    int reps = atoi(argv[5]), warmup = atoi(argv[6]);
    int max_iters = atoi(argv[7]); /* 0: no cap */
    c.check = argc > 8 && strcmp(argv[8], "check") == 0;
    int messages = p->repetition == window ? WINDOW
                   : p->repetition == halo ? 4 * HALO_FIELDS
                                           : c.size;
    for (long size = min; size <= max; size = size == 0 ? 1 : size * 2) {
        prepare(&c, size, messages);
        int iters = bench_iterations(size * p->volume_factor) / p->divisor + p->extra;
        if (c.check && (max_iters == 0 || max_iters > 20))
            max_iters = 20;
        if (max_iters > 0 && iters > max_iters)
            iters = max_iters;
        for (int rep = -warmup; rep < reps; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            c.nmetrics = 0;
            p->repetition(&c, size, iters);
            if (c.rank == 0 && rep >= 0)
                for (int k = 0; k < c.nmetrics; k++)
                    printf("%s,%ld,%d,%d,%.6f,%s\n", c.t->name, size, rep, iters, c.value[k],
                           c.metric[k]);
        }
    }
    prepare(&c, 0, 0);
    if (c.check)
        printf("checked,%s,%s,%d,%ld\n", c.t->name, p->name, c.rank, c.verified);
    printf("peak,%s,%d,%ld\n", c.t->name, c.rank, bench_peak_rss_kib());
    check_mpi(bench_mpi_finalize(), "MPI_Finalize");
    return 0;
}

/* liveness.c — ends a job spanning hosts when one host falls silent.
 *
 * Hydra notices a process that dies (its proxy sees the exit) but not a host cut off from the
 * network: every rank then waits forever for messages that cannot come, and mpiexec for a proxy
 * that cannot answer. So each rank of a job on several hosts runs a thread that sends a small
 * message to its two ring neighbours every interval and expects one from each. When a neighbour
 * has been silent for the timeout, the rank names it and kills its own process, without another
 * MPI call (MPI may wait on the lost host too). On the reachable side Hydra sees a process killed
 * and ends the job; on the cut-off side each rank sees its neighbours beyond the cut fall silent
 * and ends, and so its proxy ends. */
#include "liveness.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { NAME_SIZE = 64, NEIGHBOURS = 2 };

static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* stop requested */
    int running, stop;
    pthread_t thread;
    MPI_Comm comm; /* a duplicate of World: heartbeats never match the program's receives */
    int rank, size;
    double timeout, interval; /* seconds */
    char *names;              /* size * NAME_SIZE host names */
    int spans;                /* World spans hosts: 1, 0, or -1 before the start */
} live = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, MPI_COMM_NULL, 0, 0, 0, 0, NULL, -1};

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static __attribute__((noreturn)) void peer_lost(int peer, double silent)
{
    fprintf(stderr,
            "motor: rank %d on host %s: rank %d on host %s has been silent for %.1f s (the host "
            "is down or cut off from the network); ending the job\n",
            live.rank, live.names + (size_t)live.rank * NAME_SIZE, peer,
            live.names + (size_t)peer * NAME_SIZE, silent);
    fflush(stdout);
    fflush(stderr);
    /* Killed by a signal, the process makes Hydra end the whole job at once; after a plain exit
     * status mpiexec would wait for the lost host's proxy, which cannot answer. */
    kill(getpid(), SIGKILL);
    _exit(MPC_EXIT_PEER_LOST); /* not reached */
}

/* Waits up to `seconds` for a stop request; returns 1 when asked to stop. */
static int wait_for_stop(double seconds)
{
    struct timespec until; /* the condition variable's clock */
    clock_gettime(CLOCK_REALTIME, &until);
    long nanos = until.tv_nsec + (long)(seconds * 1e9);
    until.tv_sec += nanos / 1000000000L;
    until.tv_nsec = nanos % 1000000000L;
    pthread_mutex_lock(&live.lock);
    int rc = 0;
    while (!live.stop && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&live.changed, &live.lock, &until);
    int stop = live.stop;
    pthread_mutex_unlock(&live.lock);
    return stop;
}

static void *watch(void *arg)
{
    (void)arg;
    int peers[NEIGHBOURS] = {(live.rank + live.size - 1) % live.size, (live.rank + 1) % live.size};
    int count = peers[0] == peers[1] ? 1 : NEIGHBOURS;
    MPI_Request recvs[NEIGHBOURS];
    static const int beat = 0; /* outlives a send that never completes */
    int beats[NEIGHBOURS];
    double heard[NEIGHBOURS];
    for (int i = 0; i < count; i++) {
        heard[i] = now_seconds();
        if (MPI_Irecv(&beats[i], 1, MPI_INT, peers[i], 0, live.comm, &recvs[i]) != MPI_SUCCESS)
            return NULL; /* no watch rather than a false alarm */
    }
    do {
        for (int i = 0; i < count; i++) {
            MPI_Request send;
            /* a beat to a lost host may never complete: the request is let go */
            if (MPI_Isend(&beat, 1, MPI_INT, peers[i], 0, live.comm, &send) == MPI_SUCCESS)
                MPI_Request_free(&send);
        }
        double t = now_seconds();
        for (int i = 0; i < count; i++) {
            int arrived = 0;
            while (MPI_Test(&recvs[i], &arrived, MPI_STATUS_IGNORE) == MPI_SUCCESS && arrived) {
                heard[i] = t;
                if (MPI_Irecv(&beats[i], 1, MPI_INT, peers[i], 0, live.comm, &recvs[i]) != MPI_SUCCESS)
                    return NULL;
            }
            if (t - heard[i] > live.timeout)
                peer_lost(peers[i], t - heard[i]);
        }
    } while (!wait_for_stop(live.interval));
    for (int i = 0; i < count; i++) {
        MPI_Cancel(&recvs[i]);
        MPI_Wait(&recvs[i], MPI_STATUS_IGNORE);
    }
    return NULL;
}

/* 1 on every rank when World's ranks are on more than one host. */
static int spans_hosts(void)
{
    MPI_Comm local;
    int local_size = 0, world_size = 0, spans = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) !=
        MPI_SUCCESS)
        return -1;
    int rc = MPI_Comm_size(local, &local_size);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    spans = local_size < world_size;
    if (rc == MPI_SUCCESS)
        rc = MPI_Allreduce(MPI_IN_PLACE, &spans, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Comm_free(&local);
    return rc == MPI_SUCCESS ? spans : -1;
}

int liveness_spans_hosts(void) { return live.spans; }

int liveness_start(int thread_level)
{
    double timeout = mpc_env_seconds("MOTOR_HEARTBEAT_TIMEOUT", 4.0);
    live.spans = spans_hosts(); /* collective: every rank asks, whatever it decides */
    if (timeout == 0 || live.spans != 1 || thread_level != MPI_THREAD_MULTIPLE)
        return 0;
    int rc;
    if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, &live.rank)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(MPI_COMM_WORLD, &live.size)) != MPI_SUCCESS ||
        (rc = MPI_Comm_dup(MPI_COMM_WORLD, &live.comm)) != MPI_SUCCESS)
        return rc;
    MPI_Comm_set_errhandler(live.comm, MPI_ERRORS_RETURN);
    live.names = calloc((size_t)live.size, NAME_SIZE);
    if (!live.names)
        return MPI_ERR_NO_MEM;
    char mine[MPI_MAX_PROCESSOR_NAME] = {0};
    int length = 0;
    if ((rc = MPI_Get_processor_name(mine, &length)) != MPI_SUCCESS)
        return rc;
    mine[NAME_SIZE - 1] = '\0';
    if ((rc = MPI_Allgather(mine, NAME_SIZE, MPI_CHAR, live.names, NAME_SIZE, MPI_CHAR,
                            live.comm)) != MPI_SUCCESS)
        return rc;
    live.timeout = timeout;
    live.interval = timeout / 8;
    if (pthread_create(&live.thread, NULL, watch, NULL) != 0)
        return MPI_ERR_OTHER;
    live.running = 1;
    return MPI_SUCCESS;
}

void liveness_stop(void)
{
    if (!live.running)
        return;
    pthread_mutex_lock(&live.lock);
    live.stop = 1;
    pthread_cond_signal(&live.changed);
    pthread_mutex_unlock(&live.lock);
    pthread_join(live.thread, NULL);
    live.running = 0;
}

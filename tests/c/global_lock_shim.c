/* global_lock_shim.c — LD_PRELOAD library that gives MPI the locking of an MPICH built with a
 * global critical section (--enable-thread-cs=global): one recursive lock per process, held
 * inside every MPI call motor makes, and held throughout a blocking collective — so while a
 * user operator runs, as in such a build. Blocking point-to-point calls poll their
 * non-blocking forms and release the lock between polls, as MPICH yields it while it waits.
 * Debian's MPICH (ch4, per-VCI locks) runs user operators with no lock held, so without this
 * a test cannot see what a thread blocked on the lock does to a collection (gc_hooks.h, the
 * rule for calling MPI). Only the entry points mpc/ uses with counts that fit an int. */
#include <mpi.h>
#include <pthread.h>
#include <sched.h>

static pthread_mutex_t big;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void make_lock(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE); /* MPICH's global lock nests */
    pthread_mutex_init(&big, &a);
    pthread_mutexattr_destroy(&a);
}

static void lock(void)
{
    pthread_once(&once, make_lock);
    pthread_mutex_lock(&big);
}

static void unlock(void) { pthread_mutex_unlock(&big); }

/* Runs a call with the lock held. */
#define LOCKED(call)      \
    do {                  \
        lock();           \
        int rc_ = (call); \
        unlock();         \
        return rc_;       \
    } while (0)

/* Completes a started request, the lock taken for each poll only. */
static int poll_until_done(int rc, MPI_Request *req, MPI_Status *status)
{
    if (rc != MPI_SUCCESS)
        return rc;
    for (;;) {
        int done = 0;
        lock();
        rc = PMPI_Test(req, &done, status);
        unlock();
        if (rc != MPI_SUCCESS || done)
            return rc;
        sched_yield(); /* glibc's mutex is not fair: let a waiting thread in */
    }
}

/* ---- non-blocking calls: the lock around the call ---- */

int MPI_Isend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r)
{
    LOCKED(PMPI_Isend(b, n, t, d, tag, c, r));
}
int MPI_Issend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r)
{
    LOCKED(PMPI_Issend(b, n, t, d, tag, c, r));
}
int MPI_Irecv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request *r)
{
    LOCKED(PMPI_Irecv(b, n, t, s, tag, c, r));
}
int MPI_Test(MPI_Request *r, int *f, MPI_Status *st) { LOCKED(PMPI_Test(r, f, st)); }
int MPI_Request_get_status(MPI_Request r, int *f, MPI_Status *st)
{
    LOCKED(PMPI_Request_get_status(r, f, st));
}
int MPI_Cancel(MPI_Request *r) { LOCKED(PMPI_Cancel(r)); }
int MPI_Iprobe(int s, int tag, MPI_Comm c, int *f, MPI_Status *st)
{
    LOCKED(PMPI_Iprobe(s, tag, c, f, st));
}
int MPI_Improbe(int s, int tag, MPI_Comm c, int *f, MPI_Message *m, MPI_Status *st)
{
    LOCKED(PMPI_Improbe(s, tag, c, f, m, st));
}
int MPI_Ibarrier(MPI_Comm c, MPI_Request *r) { LOCKED(PMPI_Ibarrier(c, r)); }
int MPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
    LOCKED(PMPI_Op_create(fn, commute, op));
}
int MPI_Op_free(MPI_Op *op) { LOCKED(PMPI_Op_free(op)); }
int MPI_Type_contiguous(int n, MPI_Datatype old, MPI_Datatype *t)
{
    LOCKED(PMPI_Type_contiguous(n, old, t));
}
int MPI_Type_commit(MPI_Datatype *t) { LOCKED(PMPI_Type_commit(t)); }
int MPI_Type_free(MPI_Datatype *t) { LOCKED(PMPI_Type_free(t)); }
int MPI_Get_processor_name(char *name, int *len) { LOCKED(PMPI_Get_processor_name(name, len)); }

/* ---- blocking point-to-point: polled, the lock released between polls ---- */

int MPI_Wait(MPI_Request *r, MPI_Status *st) { return poll_until_done(MPI_SUCCESS, r, st); }
int MPI_Send(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c)
{
    MPI_Request r;
    return poll_until_done(MPI_Isend(b, n, t, d, tag, c, &r), &r, MPI_STATUS_IGNORE);
}
int MPI_Ssend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c)
{
    MPI_Request r;
    return poll_until_done(MPI_Issend(b, n, t, d, tag, c, &r), &r, MPI_STATUS_IGNORE);
}
int MPI_Recv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st)
{
    MPI_Request r;
    return poll_until_done(MPI_Irecv(b, n, t, s, tag, c, &r), &r, st);
}
int MPI_Mrecv(void *b, int n, MPI_Datatype t, MPI_Message *m, MPI_Status *st)
{
    MPI_Request r;
    lock();
    int rc = PMPI_Imrecv(b, n, t, m, &r);
    unlock();
    return poll_until_done(rc, &r, st);
}
int MPI_Sendrecv(const void *sb, int sn, MPI_Datatype st_, int d, int stag, void *rb, int rn,
                 MPI_Datatype rt, int s, int rtag, MPI_Comm c, MPI_Status *st)
{
    MPI_Request r[2];
    int rc = MPI_Irecv(rb, rn, rt, s, rtag, c, &r[0]);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = MPI_Isend(sb, sn, st_, d, stag, c, &r[1])) != MPI_SUCCESS) {
        MPI_Cancel(&r[0]);
        poll_until_done(MPI_SUCCESS, &r[0], MPI_STATUS_IGNORE);
        return rc;
    }
    int rc2 = poll_until_done(MPI_SUCCESS, &r[1], MPI_STATUS_IGNORE);
    rc = poll_until_done(MPI_SUCCESS, &r[0], st);
    return rc != MPI_SUCCESS ? rc : rc2;
}
int MPI_Probe(int s, int tag, MPI_Comm c, MPI_Status *st)
{
    for (;;) {
        int found = 0, rc = MPI_Iprobe(s, tag, c, &found, st);
        if (rc != MPI_SUCCESS || found)
            return rc;
        sched_yield();
    }
}

/* ---- blocking collectives and communicator calls: the lock held throughout ---- */

int MPI_Barrier(MPI_Comm c) { LOCKED(PMPI_Barrier(c)); }
int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    LOCKED(PMPI_Bcast(b, n, t, root, c));
}
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    LOCKED(PMPI_Allreduce(s, r, n, t, op, c));
}
int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c)
{
    LOCKED(PMPI_Reduce(s, r, n, t, op, root, c));
}
int MPI_Scan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    LOCKED(PMPI_Scan(s, r, n, t, op, c));
}
int MPI_Scatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
                MPI_Comm c)
{
    LOCKED(PMPI_Scatter(s, sn, st, r, rn, rt, root, c));
}
int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
               MPI_Comm c)
{
    LOCKED(PMPI_Gather(s, sn, st, r, rn, rt, root, c));
}
int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm c)
{
    LOCKED(PMPI_Allgather(s, sn, st, r, rn, rt, c));
}
int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                 MPI_Comm c)
{
    LOCKED(PMPI_Alltoall(s, sn, st, r, rn, rt, c));
}
int MPI_Comm_dup(MPI_Comm c, MPI_Comm *out) { LOCKED(PMPI_Comm_dup(c, out)); }
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *out)
{
    LOCKED(PMPI_Comm_split(c, color, key, out));
}
int MPI_Comm_free(MPI_Comm *c) { LOCKED(PMPI_Comm_free(c)); }

/* mpc_impl.h — what mpc's own source files share; included by the .c files of mpc/ only (the
 * layering test checks that), never by another layer: they use mpc.h and mpc_internal.h. */
#ifndef MPC_IMPL_H
#define MPC_IMPL_H

#include "mpc_internal.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <time.h>

/* Byte counts above INT_MAX go through the MPI-4 large-count (_c) entry points. */
#define MPC_FITS_INT(bytes) ((bytes) <= (size_t)INT_MAX)
/* The same for an MPI_Count of elements of any datatype (the typed calls of mpc_internal.h). */
#define MPC_COUNT_FITS_INT(count) ((count) >= 0 && (count) <= (MPI_Count)INT_MAX)

/* For mpc's own threads (liveness.c, hang_watch.c): waits up to seconds for *stop, set under
 * lock with changed signalled; returns *stop. */
static inline int mpc_wait_for_stop(pthread_mutex_t *lock, pthread_cond_t *changed, const int *stop,
                                    double seconds)
{
    struct timespec until; /* the condition variable's clock */
    clock_gettime(CLOCK_REALTIME, &until);
    long nanos = until.tv_nsec + (long)(seconds * 1e9);
    until.tv_sec += nanos / 1000000000L;
    until.tv_nsec = nanos % 1000000000L;
    pthread_mutex_lock(lock);
    int rc = 0;
    while (!*stop && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(changed, lock, &until);
    int stopped = *stop;
    pthread_mutex_unlock(lock);
    return stopped;
}

/* Its twin, for the thread that stops one: sets *stop under lock and wakes the waiter. */
static inline void mpc_request_stop(pthread_mutex_t *lock, pthread_cond_t *changed, int *stop)
{
    pthread_mutex_lock(lock);
    *stop = 1;
    pthread_cond_signal(changed);
    pthread_mutex_unlock(lock);
}

/* Whether the blocking calls that carry bytes wait with the backoff (wait_policy.c). */
#define YIELDING (mpc_wait_mode() == MPC_WAIT_YIELD)

/* MPI is initialised and not finalised (mpc_is_initialized, for mpc's own files: the handles'
 * registry asks it too, and lifetime.c calls the registry). */
static inline int mpi_running(void)
{
    int init = 0, fin = 0;
    if (MPI_Initialized(&init) != MPI_SUCCESS || MPI_Finalized(&fin) != MPI_SUCCESS)
        return 0;
    return init && !fin;
}

/* MPICH keeps the byte count and the cancel bit in the status itself (mpi.h,
 * MPIR_STATUS_GET_COUNT and _GET_CANCEL_BIT); reading them saves two library calls on every
 * receive (MPI_Get_count takes MPICH's global lock under MPI_THREAD_MULTIPLE). test_mpc checks
 * both against MPI_Get_count and MPI_Test_cancelled. */
static inline int64_t status_bytes(const MPI_Status *in)
{
    return (int64_t)(((uint64_t)((unsigned)in->count_hi_and_cancelled >> 1) << 32) +
                     (unsigned)in->count_lo);
}

/* datatypes.c, for lifetime.c: frees every cached region datatype, just before MPI_Finalize.
 * Returns MPI_SUCCESS or the first failure's code. */
int mpc_datatypes_free_all(void);
/* neighbors.c, for lifetime.c: frees the cached datatypes of the exchanges with headers (below),
 * the same way. */
int mpc_neighbor_types_free_all(void);

/* neighbors.c, for the exchanges with a size header before every block (mpc_neighbor_exchange,
 * mpc_ivexchange): the two-piece datatypes of blocks behind headers, cached by (data, count,
 * type, header). Under the lock, mpc_header_type gives MPI's count, displacement and type for
 * block b behind header (count 0: the header alone, one MPI_INT64_T at its address) and what the
 * call holds in *lease; after the lock and once the call has started (non-blocking) or returned
 * (blocking), the leases are given back (an entry held is never freed). */
struct nb_type;
typedef struct mpc_type_lease {
    struct nb_type *entry; /* an entry of the cache, busy while held */
    MPI_Datatype own;      /* or a type made for this call alone */
} mpc_type_lease;
void mpc_header_types_lock(void);
void mpc_header_types_unlock(void);
int mpc_header_type(const mpc_nb_block *b, int64_t *header, MPI_Count *count, MPI_Aint *displ,
                    MPI_Datatype *type, mpc_type_lease *lease);
void mpc_header_types_give_back(mpc_type_lease *leases, int n);

/* wait_policy.c, for lifetime.c: measures the ranks and cores of this host (collective over
 * World; only by the mpc_init that initialised MPI), then chooses the policy from MOTOR_WAIT. */
int wait_policy_measure(void);
void wait_policy_choose(void);

/* wait_policy.c, for the blocking collectives: under MPC_WAIT_YIELD they run as their
 * non-blocking form, started with code rc, completed here with the backoff (MPICH's blocking
 * calls busy-poll, and ch4 has no setting that makes them yield). status may be NULL. */
int backoff_complete(int rc, MPI_Request *req, MPI_Status *status);

#endif

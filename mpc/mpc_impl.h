/* mpc_impl.h — what mpc's own source files share; included by the .c files of mpc/ only (the
 * layering test checks that), never by another layer: they use mpc.h and mpc_internal.h. */
#ifndef MPC_IMPL_H
#define MPC_IMPL_H

#include "mpc_internal.h"

#include <limits.h>

/* Byte counts above INT_MAX go through the MPI-4 large-count (_c) entry points. */
#define MPC_FITS_INT(bytes) ((bytes) <= (size_t)INT_MAX)
/* The same for an MPI_Count of elements of any datatype (the typed calls of mpc_internal.h). */
#define MPC_COUNT_FITS_INT(count) ((count) >= 0 && (count) <= (MPI_Count)INT_MAX)

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
/* neighbors.c, for lifetime.c: frees the cached datatypes of mpc_neighbor_exchange, the same way.
 */
int mpc_neighbor_types_free_all(void);

/* wait_policy.c, for lifetime.c: measures the ranks and cores of this host (collective over
 * World; only by the mpc_init that initialised MPI), then chooses the policy from MOTOR_WAIT. */
int wait_policy_measure(void);
void wait_policy_choose(void);

/* wait_policy.c, for the blocking collectives: under MPC_WAIT_YIELD they run as their
 * non-blocking form, started with code rc, completed here with the backoff (MPICH's blocking
 * calls busy-poll, and ch4 has no setting that makes them yield). status may be NULL. */
int backoff_complete(int rc, MPI_Request *req, MPI_Status *status);

#endif

/* owned_handles.h — internal to mpc: the MPI objects mpc made for its callers (communicators,
 * groups, datatypes, operators) and not yet freed, so that the end of MPI frees what a program
 * left behind (MPICH's pools otherwise report leaks on stderr at MPI_Finalize). */
#ifndef MPC_OWNED_HANDLES_H
#define MPC_OWNED_HANDLES_H

#include <mpi.h>

typedef enum { OWNED_COMM, OWNED_GROUP, OWNED_TYPE, OWNED_OP } owned_kind;

/* Records a handle just made (rc is the making call's code: nothing is recorded unless it is
 * MPI_SUCCESS and the handle is not null). Returns rc. A handle that cannot be recorded (out of
 * memory) is simply left to MPI_Finalize. */
int owned_add(int rc, owned_kind kind, int handle);
/* Frees a handle its owner is done with (MPI sets *handle to its kind's null), and forgets it;
 * does nothing, and returns MPI_SUCCESS, when MPI has ended or its end freed the handle already
 * (a finalizer that got there late). */
int owned_free(owned_kind kind, int *handle);
/* Frees every handle still recorded, newest first. Just before MPI_Finalize, on every rank.
 * Returns MPI_SUCCESS or the first failure's code (the others are still freed). */
int owned_free_all(void);

#endif

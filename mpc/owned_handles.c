/* owned_handles.c — the MPI objects mpc made and no caller freed (owned_handles.h). MPICH's
 * handles are ints; the list is small (what a program keeps alive), so a linear search does. */
#include "owned_handles.h"

#include "mpc_impl.h" /* mpi_running */

#include <pthread.h>
#include <stdlib.h>

typedef struct {
    owned_kind kind;
    int handle;
} owned;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static owned *list;
static size_t count, capacity;

int owned_add(int rc, owned_kind kind, int handle)
{
    if (rc != MPI_SUCCESS)
        return rc;
    if ((kind == OWNED_COMM && handle == (int)MPI_COMM_NULL) ||
        (kind == OWNED_GROUP && handle == (int)MPI_GROUP_NULL) ||
        (kind == OWNED_GROUP && handle == (int)MPI_GROUP_EMPTY))
        return rc; /* nothing to free: MPI_GROUP_EMPTY is predefined */
    pthread_mutex_lock(&lock);
    if (count == capacity) {
        size_t grown = capacity ? 2 * capacity : 32;
        owned *g = realloc(list, grown * sizeof *g);
        if (g) {
            list = g;
            capacity = grown;
        }
    }
    if (count < capacity)
        list[count++] = (owned){kind, handle};
    pthread_mutex_unlock(&lock);
    return rc;
}

static int ended; /* owned_free_all has run: every handle recorded is freed */

/* Takes handle out of the list; 0 when its owner must not free it: the end of MPI freed it
 * already (it was recorded, and is no longer). */
static int forget(owned_kind kind, int handle)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = count; i-- > 0;) {
        if (list[i].kind == kind && list[i].handle == handle) {
            for (size_t j = i + 1; j < count; j++) /* keeps the order of making */
                list[j - 1] = list[j];
            count--;
            found = 1;
            break;
        }
    }
    int free_it = found || !ended; /* not found before the end: made when the list was full */
    pthread_mutex_unlock(&lock);
    return free_it;
}

/* MPI_Comm_free and the other frees are local in MPICH (they release the handle and, for a
 * communicator, its context id), so ranks that left different objects behind still end alike. */
static int free_one(owned_kind kind, int *handle)
{
    switch (kind) {
    case OWNED_COMM: return MPI_Comm_free((MPI_Comm *)handle);
    case OWNED_GROUP: return MPI_Group_free((MPI_Group *)handle);
    case OWNED_TYPE: return MPI_Type_free((MPI_Datatype *)handle);
    case OWNED_OP: return MPI_Op_free((MPI_Op *)handle);
    }
    return MPI_ERR_ARG;
}

int owned_free(owned_kind kind, int *handle)
{
    if (!mpi_running() || !forget(kind, *handle))
        return MPI_SUCCESS;
    return free_one(kind, handle);
}

int owned_free_all(void)
{
    int first = MPI_SUCCESS;
    pthread_mutex_lock(&lock);
    while (count > 0) {
        count--;
        int rc = free_one(list[count].kind, &list[count].handle);
        if (first == MPI_SUCCESS)
            first = rc;
    }
    free(list);
    list = NULL;
    capacity = 0;
    ended = 1;
    pthread_mutex_unlock(&lock);
    return first;
}

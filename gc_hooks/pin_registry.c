/* pin_registry.c — non-blocking transfers in flight and the GC handles on their objects.
 *
 * Lock discipline: the registry mutex is never held while calling Mono (handles are freed
 * after unlocking) and never while waiting; MPI is called under it only for non-blocking
 * status queries and frees. The GC hook runs at PRE_STOP_WORLD, when no thread is stopped, so
 * it may take the mutex; it skips the sweep on a thread already inside MPI or this registry. */
#include "gc_hooks.h"

#include <mono/metadata/object.h>
#include <pthread.h>
#include <stdlib.h>

enum record_state { FREE, ACTIVE, ACQUIRED, ABANDONED };

typedef struct record {
    MPI_Request req;
    uint32_t handle;  /* 0 once released */
    int pinned;
    enum record_state state;
    gch_transfer_info info;
    int32_t next_free;
    uint32_t generation; /* bumped when the record is freed */
} record;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static record *records;
static int32_t capacity, first_free = -1;
static int64_t live;
static __thread int mpi_depth __attribute__((tls_model("initial-exec")));
static __thread int in_registry __attribute__((tls_model("initial-exec")));

void gch_enter_mpi(void) { mpi_depth++; }
void gch_leave_mpi(void) { mpi_depth--; }
int gch_in_mpi(void) { return mpi_depth > 0; }

static void enter(void)
{
    pthread_mutex_lock(&lock);
    in_registry = 1;
}

static void leave(void)
{
    in_registry = 0;
    pthread_mutex_unlock(&lock);
}

static void release_handle(uint32_t handle, int pinned, gch_counter reason)
{
    if (!handle)
        return;
    mono_gchandle_free(handle);
    if (pinned)
        gch_count(reason, 1);
}

/* The record an id names, if the id is current; caller holds the lock. */
static int32_t index_of(int64_t id)
{
    int32_t i = (int32_t)(id & 0x7fffffff);
    if (id < 0 || i >= capacity || records[i].generation != (uint32_t)(id >> 32))
        return -1;
    return i;
}

/* Caller holds the lock. */
static void free_record(int32_t id)
{
    records[id].generation++;
    records[id].state = FREE;
    records[id].handle = 0;
    records[id].next_free = first_free;
    first_free = id;
    live--;
}

int gch_transfer_add(MPI_Request req, uint32_t handle, int pinned, const gch_transfer_info *info,
                     int64_t *id)
{
    enter();
    if (first_free < 0) {
        int32_t grown = capacity ? capacity * 2 : 64;
        record *r = realloc(records, (size_t)grown * sizeof *r);
        if (!r) {
            leave();
            return MPC_ERR_NO_MEMORY;
        }
        records = r;
        for (int32_t i = grown - 1; i >= capacity; i--) {
            records[i].state = FREE;
            records[i].generation = 0;
            records[i].next_free = first_free;
            first_free = i;
        }
        capacity = grown;
    }
    int32_t i = first_free;
    first_free = records[i].next_free;
    records[i] = (record){req, handle, pinned, ACTIVE, *info, -1, records[i].generation};
    live++;
    *id = ((int64_t)records[i].generation << 32) | i;
    leave();
    return MPC_OK;
}

int gch_transfer_acquire(int64_t id, MPI_Request *req, gch_transfer_info *info)
{
    int rc = MPC_ERR_REQUEST;
    enter();
    int32_t i = index_of(id);
    if (i >= 0 && records[i].state == ACTIVE) {
        records[i].state = ACQUIRED;
        *req = records[i].req;
        *info = records[i].info;
        rc = MPC_OK;
    }
    leave();
    return rc;
}

void gch_transfer_release(int64_t transfer, int completed)
{
    uint32_t handle = 0;
    int pinned = 0;
    enter();
    int32_t id = index_of(transfer); /* current: the caller acquired it */
    if (completed) {
        handle = records[id].handle;
        pinned = records[id].pinned;
        free_record(id);
    } else {
        records[id].state = ACTIVE;
    }
    leave();
    release_handle(handle, pinned, GCH_PINS_RELEASED_BY_WAIT);
}

/* Caller holds the lock. Completes an abandoned record if MPI says it finished; returns the
 * handle to release (0 if none or not finished). */
static uint32_t finish_abandoned(int32_t id, int *pinned, int *finished)
{
    record *r = &records[id];
    int flag = 0;
    *finished = 0;
    if (mpc_is_initialized()) {
        MPI_Status st;
        if (MPI_Request_get_status(r->req, &flag, &st) != MPI_SUCCESS)
            flag = 1; /* a failed request has completed */
        if (!flag)
            return 0;
        MPI_Test(&r->req, &flag, &st); /* frees the request */
    }
    uint32_t handle = r->handle;
    *pinned = r->pinned;
    *finished = 1;
    free_record(id);
    return handle;
}

void gch_transfer_abandon(int64_t transfer)
{
    uint32_t handle = 0;
    int pinned = 0, finished = 0;
    enter();
    int32_t id = index_of(transfer);
    if (id >= 0 && records[id].state == ACTIVE) {
        records[id].state = ABANDONED;
        handle = finish_abandoned(id, &pinned, &finished);
    }
    leave();
    release_handle(handle, pinned, GCH_PINS_RELEASED_BY_GC);
}

int64_t gch_transfers_live(void)
{
    enter();
    int64_t n = live;
    leave();
    return n;
}

void gch_transfers_sweep(void)
{
    if (mpi_depth > 0 || in_registry || !mpc_is_initialized())
        return; /* a pin kept one collection longer is safe */
    /* Handles are collected under the lock and freed after it (Mono is never called under it);
     * freeing them before the world stops still lets those objects move in this collection. */
    enum { BATCH = 64 };
    uint32_t handles[BATCH];
    int pinned[BATCH];
    int n = 0;
    enter();
    for (int32_t id = 0; id < capacity && n < BATCH; id++) {
        record *r = &records[id];
        if (r->state == ABANDONED) {
            int finished;
            uint32_t h = finish_abandoned(id, &pinned[n], &finished);
            if (h)
                handles[n++] = h;
        } else if (r->state == ACTIVE && r->handle) {
            int flag = 0;
            MPI_Status st;
            if (MPI_Request_get_status(r->req, &flag, &st) == MPI_SUCCESS && flag) {
                handles[n] = r->handle;
                pinned[n++] = r->pinned;
                r->handle = 0; /* the record stays until Wait/Test completes the request */
            }
        }
    }
    leave();
    for (int i = 0; i < n; i++)
        release_handle(handles[i], pinned[i], GCH_PINS_RELEASED_BY_GC);
}

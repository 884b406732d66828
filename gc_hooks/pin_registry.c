/* pin_registry.c — non-blocking transfers in flight and the GC handles on their objects.
 *
 * Each record holds the MPI request, a handle on each object MPI reads or writes (pinned when
 * the GC could move it; up to GCH_TRANSFER_OBJECTS) and a weak handle on the managed Request: when the Request is
 * collected while its transfer runs, the record is abandoned and finishes by itself. (A weak
 * handle, not a finalizer: finalizable objects cost far more to allocate and collect.)
 *
 * Lock discipline: the registry mutex is never held while waiting; under it only
 * non-blocking MPI status queries and frees and Mono handle reads run. Handles are freed
 * after unlocking. The GC hook runs at PRE_STOP_WORLD, when no thread is stopped, so it may
 * take the mutex; it skips the sweep on a thread already inside this registry, and while a C#
 * operator may run inside MPI (gch_hook_mpi_begin). */
#include "gc_hooks.h"

#include "error_record.h"

#include <mono/metadata/object.h>
#include <pthread.h>
#include <stdlib.h>

enum record_state { FREE, ACTIVE, ACQUIRED, ABANDONED };

typedef struct record {
    MPI_Request req;
    uint32_t handle[GCH_TRANSFER_OBJECTS]; /* on the transferred objects; 0: none, or released */
    uint32_t owner;      /* weak, on the Request */
    int pinned[GCH_TRANSFER_OBJECTS];
    int64_t unowned_bytes_counted; /* its part of unowned_bytes */
    int listed;                    /* in the FIFO of transfers with no owner */
    int32_t older, newer;          /* its neighbours there */
    enum record_state state;
    gch_transfer_info info;
    int32_t next_free;
    uint32_t generation; /* bumped when the record is freed: stale ids are refused */
} record;

/* Handles taken out of records under the lock, freed after it. A sweep fills batches in
 * turn, so any number of records is released in one collection. */
#define BATCH_HANDLES 128
typedef struct handle_batch {
    int n, nbuffers;
    uint32_t handle[BATCH_HANDLES];
    gch_counter reason[BATCH_HANDLES]; /* GCH_COUNTER_COUNT: not a pin, nothing to count */
    gch_buffer *buffer[BATCH_HANDLES]; /* native buffers of the records freed */
} handle_batch;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static record *records;
static int32_t capacity, first_free = -1;
static int64_t live;
static int64_t unowned_bytes; /* bytes of the buffers of transfers with no owner (buffered sends) */
static int32_t oldest_unowned = -1, newest_unowned = -1; /* their FIFO: they finish about in order */
static __thread int in_registry __attribute__((tls_model("initial-exec")));

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

static void defer_free(handle_batch *b, uint32_t handle, gch_counter reason)
{
    if (handle) {
        b->handle[b->n] = handle;
        b->reason[b->n++] = reason;
    }
}

static void free_batch(const handle_batch *b)
{
    for (int i = 0; i < b->nbuffers; i++)
        gch_buffer_give(b->buffer[i]);
    for (int i = 0; i < b->n; i++) {
        mono_gchandle_free(b->handle[i]);
        if (b->reason[i] != GCH_COUNTER_COUNT)
            gch_count(b->reason[i], 1);
    }
}

/* The record an id names, if the id is current; caller holds the lock. */
static int32_t index_of(int64_t id)
{
    int32_t i = (int32_t)(id & 0x7fffffff);
    if (id < 0 || i >= capacity || records[i].generation != (uint32_t)(id >> 32))
        return -1;
    return i;
}

/* Takes the record's object handles out (into the batch); caller holds the lock. */
static void release_objects(record *r, handle_batch *b, gch_counter pin_reason)
{
    for (int k = 0; k < GCH_TRANSFER_OBJECTS; k++) {
        defer_free(b, r->handle[k], r->pinned[k] ? pin_reason : GCH_COUNTER_COUNT);
        r->handle[k] = 0;
    }
}

static int holds_objects(const record *r)
{
    for (int k = 0; k < GCH_TRANSFER_OBJECTS; k++)
        if (r->handle[k])
            return 1;
    return 0;
}

/* Frees a record whose MPI request is complete; caller holds the lock. */
static void free_record(int32_t i, handle_batch *b, gch_counter pin_reason)
{
    record *r = &records[i];
    release_objects(r, b, pin_reason);
    defer_free(b, r->owner, GCH_COUNTER_COUNT);
    r->owner = 0;
    if (r->info.buffer)
        b->buffer[b->nbuffers++] = r->info.buffer;
    unowned_bytes -= r->unowned_bytes_counted;
    r->unowned_bytes_counted = 0;
    if (r->listed) {
        if (r->older >= 0)
            records[r->older].newer = r->newer;
        else
            oldest_unowned = r->newer;
        if (r->newer >= 0)
            records[r->newer].older = r->older;
        else
            newest_unowned = r->older;
        r->listed = 0;
    }
    r->info.buffer = NULL;
    r->generation++;
    r->state = FREE;
    r->next_free = first_free;
    first_free = i;
    live--;
}

int gch_transfer_add(MPI_Request req, const uint32_t *handles, const int *pinned, int nhandles, uint32_t owner,
                     const gch_transfer_info *info, int64_t *id)
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
    /* no owner: nobody will wait for it (a buffered send), so the GC hook finishes it */
    int64_t counted = !owner && info->buffer ? info->bytes : 0;
    records[i] = (record){.req = req, .owner = owner, .state = owner ? ACTIVE : ABANDONED, .info = *info,
                          .next_free = -1, .generation = records[i].generation, .unowned_bytes_counted = counted};
    unowned_bytes += counted;
    if (!owner) {
        records[i].listed = 1;
        records[i].older = newest_unowned;
        records[i].newer = -1;
        if (newest_unowned >= 0)
            records[newest_unowned].newer = i;
        else
            oldest_unowned = i;
        newest_unowned = i;
    }
    for (int k = 0; k < nhandles; k++) {
        records[i].handle[k] = handles[k];
        records[i].pinned[k] = handles[k] && pinned[k];
    }
    live++;
    *id = ((int64_t)records[i].generation << 32) | i;
    leave();
    return MPC_OK;
}

int gch_transfer_acquire(int64_t id, MPI_Request *req, gch_transfer_info *info)
{
    return gch_transfer_acquire_or_busy(id, req, info, NULL);
}

int gch_transfer_acquire_or_busy(int64_t id, MPI_Request *req, gch_transfer_info *info, bool *busy_out)
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
    int busy = rc != MPC_OK && i >= 0 && records[i].state == ACQUIRED;
    leave();
    if (busy_out)
        *busy_out = busy;
    if (rc == MPC_OK || (busy && busy_out))
        return rc;
    return error_record(rc, NULL,
                        busy ? "another thread is waiting on or testing this request at the same moment"
                             : "the request has completed already");
}

void gch_transfer_release(int64_t id, int completed)
{
    handle_batch b;
    b.n = b.nbuffers = 0; /* the arrays need no clearing: only the first n entries are read */
    enter();
    int32_t i = index_of(id); /* current: the caller acquired it */
    if (completed)
        free_record(i, &b, GCH_PINS_RELEASED_BY_WAIT);
    else
        records[i].state = ACTIVE;
    leave();
    free_batch(&b);
}

/* Has MPI finished this transfer? Does not complete the request. */
static int finished(record *r);

/* Completes an abandoned transfer MPI has finished (its error has no reader) and frees its
 * record; caller holds the lock. */
static void finish_abandoned(int32_t i, handle_batch *b)
{
    int done;
    mpc_test(&records[i].req, &done, NULL); /* completes and frees the request */
    free_record(i, b, GCH_PINS_RELEASED_BY_GC);
}

void gch_transfers_reap_unowned(void)
{
    if (in_registry)
        return;
    handle_batch b;
    b.n = b.nbuffers = 0;
    enter();
    while (oldest_unowned >= 0 && b.nbuffers < BATCH_HANDLES && b.n < BATCH_HANDLES) {
        record *r = &records[oldest_unowned];
        if (r->state != ABANDONED || !finished(r))
            break;
        finish_abandoned(oldest_unowned, &b);
    }
    leave();
    free_batch(&b);
}

int64_t gch_unowned_bytes(void)
{
    enter();
    int64_t n = unowned_bytes;
    leave();
    return n;
}

int64_t gch_transfers_live(void)
{
    enter();
    int64_t n = live;
    leave();
    return n;
}

/* Has MPI finished this transfer? Does not complete the request. */
static int finished(record *r)
{
    int done = 0;
    mpc_request_done(r->req, &done); /* a failed request counts as completed */
    return done;
}

void gch_transfers_sweep(void)
{
    /* No MPI while a reduction with a C# operator is in flight (that operator may hold
     * MPICH's lock and wait for the GC lock this collection holds; on this thread it is inside
     * MPI already). A pin kept one collection longer is safe. */
    if (in_registry || !mpc_is_initialized() || !gch_hook_mpi_begin())
        return;
    handle_batch b;
    b.n = b.nbuffers = 0;
    enter();
    for (int32_t i = 0; i < capacity; i++) {
        if (b.n > BATCH_HANDLES - (GCH_TRANSFER_OBJECTS + 1) || b.nbuffers == BATCH_HANDLES) {
            /* a record frees its object handles, its owner's and its buffer: empty the batch first */
            leave();
            free_batch(&b);
            b.n = b.nbuffers = 0;
            enter(); /* records may have been added or grown meanwhile: i indexes them still */
        }
        record *r = &records[i];
        if (r->state == ACTIVE && r->owner && !mono_gchandle_get_target(r->owner))
            r->state = ABANDONED; /* its Request was collected */
        if (r->state == ABANDONED && finished(r)) {
            finish_abandoned(i, &b);
        } else if (r->state == ACTIVE && holds_objects(r) && finished(r)) {
            /* the record stays until Wait/Test completes the request; the objects are free to
             * move in this very collection */
            release_objects(r, &b, GCH_PINS_RELEASED_BY_GC);
        }
    }
    leave();
    gch_hook_mpi_end();
    free_batch(&b);
}

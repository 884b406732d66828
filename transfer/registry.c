/* registry.c — non-blocking transfers in flight and what holds their objects in place, from
 * the first test after their start (xfer_track) to their release.
 *
 * Each record holds the MPI request, the objects MPI reads or writes (up to
 * XFER_MAX_OBJECTS in its slots; more in the hold of its info, hold.c) and a weak handle on the
 * managed Request: when the Request is collected
 * while its transfer runs, the record is abandoned and finishes by itself. (A weak handle, not a
 * finalizer: finalizable objects cost far more to allocate and collect.)
 *
 * The objects sit in slots of a pinned root: chunks of memory registered once with the GC
 * without a descriptor, which SGen scans conservatively at every collection, minor or major,
 * and at both ends of a concurrent one — as it scans thread stacks. A slot keeps its object
 * alive and in place, and costs nothing until a collection comes: deferred pinning with no GC
 * handle per transfer (a handle taken and freed cost ~50 ns per object). Chunks are never
 * freed (Mono 6.8 exports no way to unregister a root); a free record's slots are NULL.
 *
 * A persistent request (Comm.SendInit / RecvInit) keeps its record from its init to its
 * Dispose or the collection of its Prequest: INACTIVE between uses, with no object held, and
 * ACTIVE from a start to the completion Wait or Test reports, with its array in slot 0 as any
 * transfer's (transfer.h). When its owner is collected or Dispose abandons a running use, the
 * sweep ends it as any abandoned transfer and then frees the MPI request (MPI_Request_free).
 *
 * Lock discipline: the registry mutex is never held while waiting; under it only
 * non-blocking MPI status queries and frees and Mono handle reads run. Handles are freed
 * after unlocking. The GC hook runs at PRE_STOP_WORLD, when no thread is stopped, so it may
 * take the mutex; it skips the sweep on a thread already inside this registry, and while a C#
 * operator may run inside MPI (xfer_hook_mpi_begin). */
#include "transfer_internal.h"

#include "error_record.h"
#include "gc_hooks.h"

#include <mono/metadata/mono-gc.h>
#include <mono/metadata/object.h>
#include <pthread.h>
#include <stdlib.h>

/* Exported by libmonosgen, not declared by Debian's headers; a NULL descriptor registers a
 * root that is scanned conservatively and pins what it points at (sgen-mono.c). */
int mono_gc_register_root(char *start, size_t size, void *descr, MonoGCRootSource source, void *key,
                          const char *msg);

/* INACTIVE: a persistent request between uses (transfer.h) */
enum record_state { FREE, ACTIVE, ACQUIRED, ABANDONED, INACTIVE };

typedef struct record {
    mpc_request req;
    uint32_t
        early[XFER_MAX_OBJECTS];   /* MOTOR_PIN_POLICY=every: GC handles taken before the start */
    uint32_t owner;                /* weak, on the Request */
    int pinned[XFER_MAX_OBJECTS];  /* counted as a pin: the GC could have moved the object */
    int holds;                     /* its slots hold its objects (until released) */
    int64_t unowned_bytes_counted; /* its part of unowned_bytes */
    int listed;                    /* in the FIFO of transfers with no owner */
    int32_t older, newer;          /* its neighbours there */
    enum record_state state;
    xfer_info info;
    int32_t next_free;
    uint32_t generation;  /* bumped when the record is freed (31 bits): stale ids are refused */
    int persistent;       /* a persistent request's record: INACTIVE, not freed, when a use ends */
    int free_pending;     /* Dispose came while a thread held it: abandoned when given back */
    xfer_persist persist; /* persistent: the arguments of its MPI request (req is the record's) */
} record;

/* Handles taken out of records under the lock, freed after it. A sweep fills batches in
 * turn, so any number of records is released in one collection. */
#define BATCH_HANDLES 128
typedef struct handle_batch {
    int n, nbuffers, nholds;
    uint32_t handle[BATCH_HANDLES];
    gch_counter reason[BATCH_HANDLES];  /* GCH_COUNTER_COUNT: not a pin, nothing to count */
    xfer_buffer *buffer[BATCH_HANDLES]; /* native buffers of the records freed */
    xfer_hold *hold[BATCH_HANDLES];     /* holds of the records released (xfer_info.hold) */
    gch_counter hold_reason[BATCH_HANDLES];
} handle_batch;

/* A record's generation starts this many uses before it wraps (31 bits, so that ids stay
 * positive): every run then crosses the wrap, as Linux starts its jiffies just before theirs. */
#define GENERATION_MASK 0x7fffffffu
#define FIRST_GENERATION (GENERATION_MASK - 511)

/* Records in the first chunk of slots; each further chunk doubles the capacity. */
#define CHUNK_RECORDS 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t grow_lock = PTHREAD_MUTEX_INITIALIZER; /* never taken by the GC hook */
static record *records;
/* chunks[k]: the slots of records [CHUNK_RECORDS << k >> 1, CHUNK_RECORDS << k) (chunk 0: from 0),
 * XFER_MAX_OBJECTS each */
static MonoObject **chunks[32];
static MonoObject **spare_chunk; /* registered, not yet in use (a grow that could not finish) */
static int32_t capacity, first_free = -1;
static int64_t live;
static int64_t unowned_bytes; /* bytes of the buffers of transfers with no owner (buffered sends) */
/* their FIFO: they finish about in order */
static int32_t oldest_unowned = -1, newest_unowned = -1;
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
        xfer_buffer_give(b->buffer[i]);
    for (int i = 0; i < b->nholds; i++)
        xfer_hold_release(b->hold[i], b->hold_reason[i]);
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

/* The chunk holding record i's slots (see chunks). */
static int chunk_of(int32_t i)
{
    return i < CHUNK_RECORDS ? 0 : 32 - __builtin_clz((unsigned)(i / CHUNK_RECORDS));
}

static MonoObject **slots_of(int32_t i)
{
    int k = chunk_of(i);
    int32_t first = k ? CHUNK_RECORDS << (k - 1) : 0;
    return chunks[k] + (size_t)(i - first) * XFER_MAX_OBJECTS;
}

/* Lets the record's objects go: clears its slots (they may move from the next collection
 * on, or in this one when the GC hook does it) and takes its early handles out into the batch,
 * counting each pin released for pin_reason; caller holds the lock. */
static void release_objects(int32_t i, handle_batch *b, gch_counter pin_reason)
{
    record *r = &records[i];
    if (!r->holds)
        return;
    if (r->info.hold) {
        b->hold[b->nholds] = r->info.hold;
        b->hold_reason[b->nholds++] = pin_reason;
        r->info.hold = NULL;
    }
    MonoObject **slot = slots_of(i);
    for (int k = 0; k < XFER_MAX_OBJECTS; k++) {
        slot[k] = NULL;
        if (r->early[k])
            defer_free(b, r->early[k], pin_reason); /* counted when freed */
        else if (r->pinned[k])
            gch_count(pin_reason, 1);
        r->early[k] = 0;
    }
    r->holds = 0;
}

/* Frees a record whose MPI request is complete; caller holds the lock. */
static void free_record(int32_t i, handle_batch *b, gch_counter pin_reason)
{
    release_objects(i, b, pin_reason);
    record *r = &records[i];
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
    r->generation = (r->generation + 1) & GENERATION_MASK;
    r->state = FREE;
    r->next_free = first_free;
    first_free = i;
    live--;
}

/* Doubles the records (the first time: CHUNK_RECORDS) with a chunk of slots for the new ones.
 * The chunk is registered as a root before the registry lock is taken: registering takes the
 * GC lock, which a collecting thread holds while its hook takes the registry lock. Called with
 * grow_lock held, so capacity changes only here. */
static int grow(void)
{
    int32_t added = capacity ? capacity : CHUNK_RECORDS;
    if (capacity > INT32_MAX / 2)
        return MPC_ERR_NO_MEMORY;
    /* registered by a grow that failed after it, for this capacity */
    MonoObject **chunk = spare_chunk;
    if (!chunk) {
        size_t bytes = (size_t)added * XFER_MAX_OBJECTS * sizeof *chunk;
        chunk = calloc(1, bytes);
        if (!chunk)
            return MPC_ERR_NO_MEMORY;
        if (!mono_gc_register_root((char *)chunk, bytes, NULL, MONO_ROOT_SOURCE_EXTERNAL, NULL,
                                   "System.MP: objects of transfers in flight")) {
            free(chunk);
            return MPC_ERR_NO_MEMORY;
        }
    }
    enter();
    int32_t grown = capacity + added;
    record *r = realloc(records, (size_t)grown * sizeof *r);
    if (!r) {
        spare_chunk = chunk; /* registered already: kept for the next try */
        leave();
        return MPC_ERR_NO_MEMORY;
    }
    records = r;
    chunks[chunk_of(capacity)] = chunk; /* the new chunk starts at record capacity */
    spare_chunk = NULL;
    for (int32_t i = grown - 1; i >= capacity; i--) {
        records[i].state = FREE;
        records[i].generation = FIRST_GENERATION;
        records[i].next_free = first_free;
        first_free = i;
    }
    capacity = grown;
    leave();
    return MPC_OK;
}

/* xfer_registry_add, or with persist a persistent request's record (INACTIVE, no object). */
static int add_record(mpc_request req, MonoObject *const *objs, const uint32_t *early,
                      const int *pinned, int nobjs, uint32_t owner, const xfer_info *info,
                      const xfer_persist *persist, int64_t *id)
{
    enter();
    while (first_free < 0) {
        leave();
        /* One grower at a time (the spare chunk is its own), waited for GC-safe: the holder may
         * be inside mono_gc_register_root, waiting for a collection that must not wait for us. */
        gch_lock_gc_safe(&grow_lock);
        enter();
        int full = first_free < 0;
        leave();
        int rc = full ? grow() : MPC_OK;
        pthread_mutex_unlock(&grow_lock);
        if (rc != MPC_OK)
            return rc;
        enter();
    }
    int32_t i = first_free;
    first_free = records[i].next_free;
    /* no owner: nobody will wait for it (a buffered send), so the GC hook finishes it */
    int64_t counted = !owner && info->buffer ? info->bytes : 0;
    records[i] = (record){.req = req,
                          .owner = owner,
                          .state = owner ? ACTIVE : ABANDONED,
                          .info = *info,
                          .next_free = -1,
                          .generation = records[i].generation,
                          .unowned_bytes_counted = counted};
    if (persist) {
        records[i].persistent = 1;
        records[i].persist = *persist;
        records[i].state = owner ? INACTIVE : ABANDONED;
    }
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
    MonoObject **slot = slots_of(i);
    for (int k = 0; k < nobjs; k++) {
        if (!objs[k])
            continue;
        slot[k] = objs[k]; /* pinned from here on; the caller's stack held it until now */
        records[i].early[k] = early[k];
        records[i].pinned[k] = pinned[k];
        records[i].holds = 1;
    }
    if (info->hold)
        records[i].holds = 1; /* its objects: the hold's handles */
    live++;
    *id = ((int64_t)records[i].generation << 32) | i;
    leave();
    return MPC_OK;
}

/* A persistent request given back by the thread that held it: ACTIVE while its use runs,
 * INACTIVE (its object let go) once it ended; abandoned instead when Dispose came meanwhile (the
 * sweep frees it once MPI reports it finished). Caller holds the lock. */
static void settle_persistent(int32_t i, int running, handle_batch *b)
{
    record *r = &records[i];
    if (!running)
        release_objects(i, b, GCH_PINS_RELEASED_BY_WAIT);
    if (r->free_pending) {
        r->free_pending = 0;
        defer_free(b, r->owner, GCH_COUNTER_COUNT);
        r->owner = 0;
        r->state = ABANDONED;
        return;
    }
    r->state = running ? ACTIVE : INACTIVE;
}

int xfer_registry_add(mpc_request req, MonoObject *const *objs, const uint32_t *early,
                      const int *pinned, int nobjs, uint32_t owner, const xfer_info *info,
                      int64_t *id)
{
    return add_record(req, objs, early, pinned, nobjs, owner, info, NULL, id);
}

int xfer_acquire(int64_t id, mpc_request *req, xfer_info *info)
{
    return xfer_acquire_or_busy(id, req, info, NULL);
}

int xfer_acquire_or_busy(int64_t id, mpc_request *req, xfer_info *info, bool *busy_out)
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
    if (busy_out) { /* the caller handles both refusals itself: no error record */
        *busy_out = busy;
        return rc;
    }
    if (rc == MPC_OK)
        return rc;
    return error_record(
        rc, NULL,
        busy ? "another thread is waiting on or testing this request at the same moment"
             : "the request has completed already");
}

void xfer_release(int64_t id, int completed)
{
    handle_batch b;
    b.n = b.nbuffers = b.nholds = 0; /* no clearing: only the first n entries are read */
    enter();
    int32_t i = index_of(id); /* current: the caller acquired it */
    if (records[i].persistent)
        settle_persistent(i, !completed, &b);
    else if (completed)
        free_record(i, &b, GCH_PINS_RELEASED_BY_WAIT);
    else
        records[i].state = ACTIVE;
    leave();
    free_batch(&b);
}

int xfer_acquire_many(const int64_t *ids, int n, mpc_request *reqs, xfer_info *infos, int *acquired,
                      int *busy)
{
    int taken = 0;
    enter();
    for (int k = 0; k < n; k++) {
        int32_t i = index_of(ids[k]);
        acquired[k] = i >= 0 && records[i].state == ACTIVE;
        if (busy)
            busy[k] = !acquired[k] && i >= 0 && records[i].state == ACQUIRED;
        if (!acquired[k])
            continue;
        records[i].state = ACQUIRED;
        reqs[k] = records[i].req;
        infos[k] = records[i].info;
        taken++;
    }
    leave();
    return taken;
}

void xfer_release_completed(const int64_t *ids, int n, const int *acquired)
{
    handle_batch b;
    b.n = b.nbuffers = b.nholds = 0;
    enter();
    for (int k = 0; k < n; k++) {
        if (!acquired[k])
            continue;
        /* a record puts at most an owner and XFER_MAX_OBJECTS early handles, a buffer and a
         * hold into the batch: hand a nearly full one over (outside the lock) first */
        if (b.n > BATCH_HANDLES - 1 - XFER_MAX_OBJECTS || b.nbuffers == BATCH_HANDLES ||
            b.nholds == BATCH_HANDLES) {
            leave();
            free_batch(&b);
            b.n = b.nbuffers = b.nholds = 0;
            enter();
        }
        int32_t i = index_of(ids[k]); /* current: the caller acquired it */
        if (records[i].persistent)
            settle_persistent(i, 0, &b);
        else
            free_record(i, &b, GCH_PINS_RELEASED_BY_WAIT);
    }
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
    record *r = &records[i];
    mpc_test(&r->req, &done, NULL); /* completes and frees the request (a persistent one: ends its
                                       use, if any) */
    if (r->persistent && r->req != MPI_REQUEST_NULL)
        mpc_request_free(&r->req); /* inactive now: freed at once */
    free_record(i, b, GCH_PINS_RELEASED_BY_GC);
}

void xfer_reap_unowned(void)
{
    if (in_registry)
        return;
    handle_batch b;
    b.n = b.nbuffers = b.nholds = 0;
    enter();
    while (oldest_unowned >= 0 && b.nbuffers < BATCH_HANDLES && b.n < BATCH_HANDLES &&
           b.nholds < BATCH_HANDLES) {
        record *r = &records[oldest_unowned];
        if (r->state != ABANDONED || !finished(r))
            break;
        finish_abandoned(oldest_unowned, &b);
    }
    leave();
    free_batch(&b);
}

int64_t xfer_unowned_bytes(void)
{
    enter();
    int64_t n = unowned_bytes;
    leave();
    return n;
}

int64_t xfer_live(void)
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

/* Empties the batch while a record can still overflow it (a record frees its early handles,
 * its owner's and its buffer); caller holds the lock, which this lets go meanwhile: records may
 * be added or grown then, and an index into them stays valid. */
static void make_room(handle_batch *b)
{
    if (b->n <= BATCH_HANDLES - (XFER_MAX_OBJECTS + 1) && b->nbuffers < BATCH_HANDLES &&
        b->nholds < BATCH_HANDLES)
        return;
    leave();
    free_batch(b);
    b->n = b->nbuffers = b->nholds = 0;
    enter();
}

void xfer_close(void)
{
    xfer_huge_pages_stop();
    xfer_close_mpi();
    xfer_close_dropped();
    handle_batch b;
    b.n = b.nbuffers = b.nholds = 0;
    enter();
    for (int32_t i = 0; i < capacity; i++) {
        make_room(&b);
        record *r = &records[i];
        if (r->state != ACTIVE && r->state != ABANDONED && r->state != INACTIVE)
            continue; /* free, or another thread waits on it */
        int done = finished(r);
        /* a receive waiting; one already matched is not cancelled */
        if (!done && !r->info.is_send) {
            int cancelled = 0;
            if (mpc_cancel(&r->req) == MPC_OK && mpc_test(&r->req, &cancelled, NULL) == MPC_OK)
                done = cancelled;
        }
        if (done)
            finish_abandoned(i, &b); /* (owned or not: nobody will wait for it now) */
    }
    leave();
    free_batch(&b);
}

void xfer_registry_sweep(void)
{
    /* No MPI while a reduction with a C# operator is in flight (that operator may hold
     * MPICH's lock and wait for the GC lock this collection holds; on this thread it is inside
     * MPI already). A pin kept one collection longer is safe. */
    if (in_registry || !mpc_is_initialized() || !xfer_hook_mpi_begin())
        return;
    xfer_dropped_sweep(); /* matched messages whose Message was collected unreceived */
    handle_batch b;
    b.n = b.nbuffers = b.nholds = 0;
    enter();
    for (int32_t i = 0; i < capacity; i++) {
        make_room(&b);
        record *r = &records[i];
        if ((r->state == ACTIVE || r->state == INACTIVE) && r->owner &&
            !mono_gchandle_get_target(r->owner))
            r->state = ABANDONED; /* its Request was collected (a Prequest: used or not) */
        if (r->state == ABANDONED && finished(r)) {
            finish_abandoned(i, &b);
        } else if (r->state == ACTIVE && r->holds && finished(r)) {
            /* the record stays until Wait/Test completes the request; the objects are free to
             * move in this very collection */
            release_objects(i, &b, GCH_PINS_RELEASED_BY_GC);
        }
    }
    leave();
    xfer_hook_mpi_end();
    free_batch(&b);
}

int xfer_install(void)
{
    if (gch_on_collection(xfer_registry_sweep) != 0 || gch_on_collection(xfer_buffers_sweep) != 0)
        return -1;
    return 0;
}

/* ---- starting to track a transfer ---- */

/* xfer_registry_add (with persist: a persistent request's record) with owner (NULL: none) held
 * through a weak handle, which goes again when the registry cannot take the transfer. */
static int add_owned(mpc_request req, MonoObject *const *objs, const uint32_t *early,
                     const int *pinned, int nobjs, MonoObject *owner, const xfer_info *info,
                     const xfer_persist *persist, int64_t *id)
{
    uint32_t owner_handle = owner ? mono_gchandle_new_weakref(owner, 0) : 0;
    int rc = add_record(req, objs, early, pinned, nobjs, owner_handle, info, persist, id);
    if (rc != MPC_OK && owner_handle)
        mono_gchandle_free(owner_handle);
    return rc;
}

void xfer_early_pins(MonoObject *const *objs, int nobjs, uint32_t *pins)
{
    for (int i = 0; i < nobjs; i++) {
        pins[i] = 0;
        if (xfer_pin_every() && objs[i]) {
            pins[i] = mono_gchandle_new(objs[i], 1);
            gch_count(GCH_PINS_TAKEN, 1);
        }
    }
}

void xfer_early_unpin(const uint32_t *pins, int nobjs)
{
    for (int i = 0; i < nobjs; i++) {
        if (pins[i]) {
            mono_gchandle_free(pins[i]);
            gch_count(GCH_PINS_RELEASED_BY_WAIT, 1);
        }
    }
}

void xfer_track(const xfer_started *s, MonoObject *const *objs, int nobjs,
                const uint32_t *early_pins, MonoObject *owner, const xfer_info *info, int64_t *id,
                int *rc, mpc_status *st)
{
    static const uint32_t no_pins[XFER_MAX_OBJECTS];
    const uint32_t *early = early_pins ? early_pins : no_pins;
    gch_count(GCH_OPERATIONS, 1);
    *id = -1;
    if (s->test_rc != MPC_OK || s->done) {
        /* Finished at once. An error (e.g. truncation by a message already waiting) belongs
         * to the completion, as in MPI: Wait/Test raise it. */
        for (int i = 0; i < nobjs; i++)
            if (objs[i] && !early[i])
                gch_count(GCH_PINS_AVOIDED, 1);
        xfer_early_unpin(early, nobjs);
        *rc = s->test_rc;
        *st = s->st;
        return;
    }
    int pinned[XFER_MAX_OBJECTS] = {0};
    for (int i = 0; i < nobjs; i++) {
        if (!objs[i])
            continue;
        pinned[i] = early[i] || xfer_may_move(objs[i]);
        if (!early[i])
            gch_count(pinned[i] ? GCH_PINS_TAKEN : GCH_PINS_AVOIDED, 1);
    }
    *rc = MPC_OK;
    if (add_owned(s->req, objs, early, pinned, nobjs, owner, info, NULL, id) == MPC_OK)
        return;
    /* cannot track it: finish it here, the objects held by this call's stack */
    mpc_request req = s->req;
    *rc = xfer_complete(&req, 1, objs, nobjs, st);
    for (int i = 0; i < nobjs; i++)
        if (pinned[i] && !early[i])
            gch_count(GCH_PINS_RELEASED_BY_WAIT, 1);
    xfer_early_unpin(early, nobjs);
}

int xfer_track_native(mpc_request req, MonoObject *owner, const xfer_info *info, int64_t *id)
{
    return add_owned(req, NULL, NULL, NULL, 0, owner, info, NULL, id);
}

/* ---- persistent requests (transfer.h) ---- */

int xfer_persist_add(const xfer_persist *p, MonoObject *owner, const xfer_info *info, int64_t *id)
{
    return add_owned(p->req, NULL, NULL, NULL, 0, owner, info, p, id);
}

int xfer_persist_take(int64_t id, MonoObject *obj, uint32_t early, xfer_persist *p, xfer_info *info)
{
    enter();
    int32_t i = index_of(id);
    enum record_state state = i >= 0 && records[i].persistent ? records[i].state : FREE;
    if (state == INACTIVE) {
        record *r = &records[i];
        r->state = ACQUIRED;
        slots_of(i)[0] = obj; /* held from here on; the caller's stack held it until now */
        r->early[0] = early;
        r->pinned[0] = 0; /* counted at xfer_persist_give, if the use runs */
        r->holds = 1;
        r->persist.req = r->req;
        *p = r->persist;
        *info = r->info;
    }
    leave();
    if (state == INACTIVE)
        return MPC_OK;
    return error_record(MPC_ERR_REQUEST, NULL,
                        state == ACQUIRED ? "another thread is starting, waiting on or testing "
                                            "this persistent request at the same moment"
                        : state == FREE   ? "the persistent request was freed (MPI was finalised)"
                                          : "the persistent request is active: its use has not "
                                            "been completed by Wait or Test");
}

void xfer_persist_give(int64_t id, const xfer_persist *p, int running, int pinned)
{
    handle_batch b;
    b.n = b.nbuffers = b.nholds = 0;
    enter();
    int32_t i = index_of(id); /* current: the caller took it */
    record *r = &records[i];
    r->persist = *p;
    r->req = p->req;
    if (running) {
        r->pinned[0] = pinned;
        if (!r->early[0]) /* an early handle was counted when taken */
            gch_count(pinned ? GCH_PINS_TAKEN : GCH_PINS_AVOIDED, 1);
    }
    settle_persistent(i, running, &b);
    leave();
    free_batch(&b);
}

bool xfer_persist_take_for_free(int64_t id, xfer_persist *p, xfer_info *info, int *active)
{
    bool taken = false;
    enter();
    int32_t i = index_of(id);
    record *r = i >= 0 && records[i].persistent ? &records[i] : NULL;
    if (r && (r->state == INACTIVE || r->state == ACTIVE)) {
        *active = r->state == ACTIVE;
        r->state = ACQUIRED;
        r->persist.req = r->req;
        *p = r->persist;
        *info = r->info;
        taken = true;
    } else if (r && r->state == ACQUIRED) {
        r->free_pending = 1; /* its holder abandons it (settle_persistent) */
    }
    leave();
    return taken;
}

void xfer_persist_drop(int64_t id, int finished)
{
    handle_batch b;
    b.n = b.nbuffers = b.nholds = 0;
    enter();
    int32_t i = index_of(id); /* current: the caller took it */
    record *r = &records[i];
    if (finished) {
        r->req = MPI_REQUEST_NULL; /* freed by the caller */
        free_record(i, &b, GCH_PINS_RELEASED_BY_WAIT);
    } else {
        r->free_pending = 1;
        settle_persistent(i, 1, &b);
    }
    leave();
    free_batch(&b);
}

/* opi_window.c — one-sided communication over managed arrays (System.MP.Window): creation and
 * Dispose (MPI_Win_create, MPI_Win_free), epochs (Fence, Lock, Unlock, LockAll, UnlockAll, Flush,
 * FlushAll), Put, Get, Accumulate, FetchAndOp and CompareAndSwap (docs/design.md, "Windows").
 *
 * A window is a record here, named to C# by an id that is never reused (use after Dispose is
 * found, not mistaken for another window). The record owns everything that outlives a call:
 * - the exposed array, pinned by a GC handle from creation to Dispose (it never moves and is
 *   never collected while MPI may write into it, at every generation and collector setting);
 * - MPICH 4.0.2 rounds a window's base down to 16 bytes (shared MONO-FACTS), and Mono array data
 *   is only 8-byte aligned: the MPI window starts at base = data & ~15 with displacement unit 1,
 *   and every rank's (data - base), element count and element type are exchanged at creation,
 *   so an origin computes disp = offset[r] + index * elem_size and checks the index and the type
 *   before anything moves;
 * - the origin arrays of Put, Get and Accumulate, held (pinned where the GC could move them,
 *   alive otherwise) per target until the epoch that covers them closes (Fence, Unlock of that
 *   target, UnlockAll, Flush of that target, FlushAll, Dispose);
 * - the epoch state (fence epoch opened, targets locked, LockAll), so that an operation outside
 *   an epoch that allows it is refused with OPI_ERR_WIN_EPOCH before MPI sees it (MPICH may
 *   accept some of these silently, or fail inside a later call).
 * One mutex guards the table and the records' state; MPI calls are made outside it. Concurrent
 * operations of several threads on one window are allowed (MPI_THREAD_MULTIPLE); Dispose
 * concurrent with another call on the same window is the program's error. */
#include "opi_icalls.h"

#include "gc_hooks.h"
#include "layout.h"
#include "names.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What every rank tells the others at creation. */
typedef struct win_exposed {
    int64_t offset;    /* data - base: where the array's data lies in the MPI window */
    int64_t count;     /* elements exposed (0: none) */
    uint64_t type_id;  /* the element type's name hash (0: nothing exposed) */
    int64_t elem_size; /* bytes per element */
} win_exposed;

typedef struct held_origin {
    int target;
    xfer_hold *hold;
} held_origin;

#define KEPT 4

typedef struct window {
    MPI_Win win;
    int size, rank;
    uint32_t pin;          /* the exposed array's pinned handle; 0: none */
    uint64_t type_id;      /* the element type of every exposing rank; 0: nobody exposes */
    uint32_t elem_size;    /* its size */
    MonoClass *elem_class; /* the local class of that type, once one was seen; NULL before */
    win_exposed *ranks;    /* size entries */
    int fenced;            /* a Fence opened an epoch (until Dispose) */
    int lock_all;
    uint8_t *locked; /* per target: 0, 1 shared, 2 exclusive */
    int nlocked;
    held_origin *held;
    int nheld, held_capacity;
    /* Origins the collector cannot move need only be kept alive: the last few stay so (a plain
     * handle each) until another replaces them or Dispose, so that a loop reusing its arrays
     * takes no handle per operation. */
    MonoObject *kept[KEPT];
    uint32_t kept_handle[KEPT];
    int kept_next;
} window;

/* A type id that says: this rank's memory was refused. */
#define REFUSED UINT64_MAX

static pthread_mutex_t wins_lock = PTHREAD_MUTEX_INITIALIZER;
static window **wins; /* by id - 1; NULL once disposed */
static int32_t nwins, wins_capacity;

/* ---- the element type ---- */

static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

/* A type id that is the same in every process for the same element type: the hash of its full
 * name and its size (never 0). */
static int type_id_of(MonoClass *k, uint32_t size, uint64_t *id)
{
    char *name = rt_class_name(k);
    if (!name)
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory naming a class");
    uint64_t h = fnv1a(0xcbf29ce484222325ull, name) ^ ((uint64_t)size << 48);
    free(name);
    *id = h == 0 || h == REFUSED ? 1 : h;
    return MPC_OK;
}

/* A class's name for a message (free it). */
static char *name_of(MonoClass *k)
{
    char *n = k ? rt_class_name(k) : NULL;
    return n ? n : strdup("?");
}

/* The plan of an array argument: transportable, an array (of any rank). */
static int array_plan(MonoObject *array, const char *name, const rt_class_plan **plan)
{
    if (!array)
        return error_record(OPI_ERR_NULL_ARGUMENT, name, "%s must not be null", name);
    if (!(*plan = opi_plan_for(array)))
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a class plan");
    if ((*plan)->raw_refusal)
        return error_record(OPI_ERR_NOT_TRANSPORTABLE, name, "%s", (*plan)->raw_refusal);
    if ((*plan)->shape != RT_ARRAY) {
        char *type = name_of((*plan)->klass);
        error_record(OPI_ERR_BAD_ARGUMENT, name, "%s must be an array; it is a %s", name, type);
        free(type);
        return OPI_ERR_BAD_ARGUMENT;
    }
    return MPC_OK;
}

/* Whether elements of class k (size bytes) are the window's element type: a pointer compare once
 * one class was matched; the first time, by the type id. Caller holds wins_lock. */
static int same_type_locked(window *w, MonoClass *k, uint32_t size, int *same)
{
    if (w->elem_class) {
        *same = w->elem_class == k;
        return MPC_OK;
    }
    uint64_t id = 0;
    int rc = type_id_of(k, size, &id);
    if (rc != MPC_OK)
        return rc;
    *same = id == w->type_id;
    if (*same)
        __atomic_store_n(&w->elem_class, k, __ATOMIC_RELEASE);
    return MPC_OK;
}

/* Refuses an origin (argument name) whose elements are not the window's. */
static int check_type(window *w, const rt_class_plan *p, const char *name)
{
    if (w->type_id == 0)
        return MPC_OK; /* nobody exposes: every access is out of range, found after */
    if (__atomic_load_n(&w->elem_class, __ATOMIC_ACQUIRE) == p->elem_class)
        return MPC_OK;
    int same = 0;
    pthread_mutex_lock(&wins_lock);
    int rc = same_type_locked(w, p->elem_class, p->data_size, &same);
    MonoClass *window_class = w->elem_class;
    pthread_mutex_unlock(&wins_lock);
    if (rc != MPC_OK || same)
        return rc;
    char *given = name_of(p->elem_class), *exposed = name_of(window_class);
    if (window_class)
        error_record(OPI_ERR_TYPE_MISMATCH, name,
                     "%s has %s elements and the window exposes %s elements: the element types "
                     "must be exactly the same",
                     name, given, exposed);
    else
        error_record(OPI_ERR_TYPE_MISMATCH, name,
                     "%s has %s elements (%u bytes) and the window exposes another type (%u-byte "
                     "elements): the element types must be exactly the same",
                     name, given, p->data_size, w->elem_size);
    free(given);
    free(exposed);
    return OPI_ERR_TYPE_MISMATCH;
}

/* ---- the table ---- */

/* Without the lock: the table only grows, a grown table is published after its entries are
 * copied, and an older one is never freed (ids are never reused). */
static window *find(int32_t id)
{
    window *w = NULL;
    window **table = __atomic_load_n(&wins, __ATOMIC_ACQUIRE);
    if (id >= 1 && id <= __atomic_load_n(&nwins, __ATOMIC_ACQUIRE))
        w = __atomic_load_n(&table[id - 1], __ATOMIC_ACQUIRE);
    if (!w)
        error_record(OPI_ERR_WIN_DISPOSED, NULL, "window %d has been disposed", id);
    return w;
}

static int add(window *w, int32_t *id)
{
    pthread_mutex_lock(&wins_lock);
    if (nwins == wins_capacity) {
        int32_t grown = wins_capacity ? 2 * wins_capacity : 16;
        window **more = calloc((size_t)grown, sizeof *more);
        if (!more) {
            pthread_mutex_unlock(&wins_lock);
            return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for the window table");
        }
        for (int32_t i = 0; i < nwins; i++)
            more[i] = wins[i];
        __atomic_store_n(&wins, more, __ATOMIC_RELEASE); /* the old table stays: see find */
        wins_capacity = grown;
    }
    __atomic_store_n(&wins[nwins], w, __ATOMIC_RELEASE);
    __atomic_store_n(&nwins, nwins + 1, __ATOMIC_RELEASE);
    *id = nwins;
    pthread_mutex_unlock(&wins_lock);
    return MPC_OK;
}

static void discard(window *w)
{
    if (!w)
        return;
    free(w->ranks);
    free(w->locked);
    free(w->held);
    free(w);
}

/* ---- held origin arrays ---- */

static MonoObject *single_object(void *ctx, int i)
{
    (void)i;
    return *(MonoObject **)ctx;
}

/* Holds origin for an operation on target until its epoch closes. *array is re-read by the
 * caller afterwards (it does not move from here on). */
static int hold_origin(window *w, MonoObject **array, int target)
{
    xfer_hold *h = NULL;
    int rc = xfer_hold_take(single_object, array, 1, true, &h);
    if (rc != MPC_OK || !h)
        return rc;
    pthread_mutex_lock(&wins_lock);
    if (w->nheld == w->held_capacity) {
        int grown = w->held_capacity ? 2 * w->held_capacity : 8;
        held_origin *more = realloc(w->held, (size_t)grown * sizeof *more);
        if (!more) {
            pthread_mutex_unlock(&wins_lock);
            xfer_hold_release(h, GCH_PINS_RELEASED_BY_WAIT);
            return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory holding an origin array");
        }
        w->held = more;
        w->held_capacity = grown;
    }
    w->held[w->nheld++] = (held_origin){target, h};
    pthread_mutex_unlock(&wins_lock);
    return MPC_OK;
}

/* Keeps origin (which the collector cannot move) alive until its epoch closes, and longer: see
 * window.kept. */
static void keep_origin(window *w, MonoObject *origin)
{
    pthread_mutex_lock(&wins_lock);
    for (int k = 0; k < KEPT; k++)
        if (w->kept[k] == origin) {
            pthread_mutex_unlock(&wins_lock);
            return;
        }
    int k = w->kept_next;
    w->kept_next = (k + 1) % KEPT;
    uint32_t old = w->kept_handle[k];
    w->kept[k] = origin;
    w->kept_handle[k] = xfer_keep_alive(origin);
    pthread_mutex_unlock(&wins_lock);
    xfer_let_go(old);
}

static void let_go_kept(window *w)
{
    for (int k = 0; k < KEPT; k++) {
        xfer_let_go(w->kept_handle[k]);
        w->kept_handle[k] = 0;
        w->kept[k] = NULL;
    }
}

/* Lets go of the origin arrays held for target (-1: every target): their epoch closed. */
static void release_origins(window *w, int target)
{
    pthread_mutex_lock(&wins_lock);
    int kept = 0;
    for (int i = 0; i < w->nheld; i++) {
        if (target < 0 || w->held[i].target == target)
            xfer_hold_release(w->held[i].hold, GCH_PINS_RELEASED_BY_WAIT);
        else
            w->held[kept++] = w->held[i];
    }
    w->nheld = kept;
    pthread_mutex_unlock(&wins_lock);
}

/* ---- creation and Dispose ---- */

RT_HOLDS_STACK_MARK int32_t opi_win_create(int32_t comm, int32_t size, MonoObject *memory,
                                           int32_t *id)
{
    int rc = check_comm(comm);
    if (rc != MPC_OK)
        return rc;
    const rt_class_plan *p = NULL;
    win_exposed mine = {0, 0, 0, 0};
    /* A refusal of this rank's memory still takes part in the exchange (type_id REFUSED), so that
     * every rank raises and none is left waiting in a collective. */
    int refused = MPC_OK;
    if (memory) {
        if ((refused = array_plan(memory, "memory", &p)) == MPC_OK &&
            (refused = type_id_of(p->elem_class, p->data_size, &mine.type_id)) == MPC_OK) {
            mine.count = (int64_t)rt_array_length(memory);
            mine.elem_size = p->data_size;
        }
        if (refused != MPC_OK) {
            mine = (win_exposed){0, 0, REFUSED, 0};
            memory = NULL;
        }
    }
    window *w = calloc(1, sizeof *w);
    if (w) {
        w->ranks = calloc((size_t)size, sizeof *w->ranks);
        w->locked = calloc((size_t)size, 1);
    }
    if (!w || !w->ranks || !w->locked) {
        discard(w);
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a window of %d ranks",
                            size);
    }
    w->size = size;
    w->win = MPI_WIN_NULL;
    char *base = NULL;
    size_t bytes = 0;
    if (memory) {
        /* pinned for the window's life, movable or not: the handle also keeps it alive */
        w->pin = xfer_pin_for_life(memory);
        char *data = (char *)rt_array_data(memory);
        base = (char *)((uintptr_t)data & ~(uintptr_t)15); /* MPICH's 16-byte rounding */
        mine.offset = data - base;
        bytes = (size_t)mine.offset + (size_t)mine.count * p->data_size;
    }
    XFER_BLOCKING_BEGIN(memory);
    rc = mpc_allgather(&mine, w->ranks, sizeof mine, comm);
    XFER_BLOCKING_END;
    if (rc == MPC_OK)
        rc = mpc_comm_rank(comm, &w->rank);
    /* every rank sees the same table: all refuse a mismatch alike, before MPI_Win_create */
    for (int r = 0; rc == MPC_OK && r < size; r++)
        if (w->ranks[r].type_id == REFUSED)
            rc = refused != MPC_OK
                     ? refused /* this rank's own record */
                     : error_record(OPI_ERR_BAD_ARGUMENT, "memory",
                                    "rank %d passed memory that cannot be exposed (it raised the "
                                    "reason); no window was made",
                                    r);
    int first = -1;
    for (int r = 0; rc == MPC_OK && r < size; r++) {
        if (w->ranks[r].type_id == 0)
            continue;
        if (first < 0) {
            first = r;
            w->type_id = w->ranks[r].type_id;
            w->elem_size = (uint32_t)w->ranks[r].elem_size;
        } else if (w->ranks[r].type_id != w->type_id) {
            rc = error_record(OPI_ERR_TYPE_MISMATCH, "memory",
                              "rank %d exposes %" PRId64 "-byte elements of one type and rank %d "
                              "%" PRId64 "-byte elements of another: every rank that exposes "
                              "memory exposes one element type",
                              first, w->ranks[first].elem_size, r, w->ranks[r].elem_size);
        }
    }
    if (rc == MPC_OK) {
        if (memory && mine.type_id == w->type_id)
            w->elem_class = p->elem_class;
        MPI_Win win = MPI_WIN_NULL;
        /* Not GC-safe where the rule allows (docs/design.md, "Windows"): MPI_Win_create registers
         * the memory with UCX (ucp_mem_map) holding UCX's locks, and a collection that stops this
         * thread there (hybrid suspend signals GC-safe threads) deadlocks when the collector
         * unmaps memory, which UCX's munmap hook serves under the same locks. GC-unsafe, a
         * collection waits for the call instead; every rank has just left the exchange above, so
         * the wait is short. */
        XFER_MPI_BEGIN(memory);
        rc = mpc_win_create(base, bytes, comm, &win);
        XFER_MPI_END;
        w->win = win;
    }
    if (rc == MPC_OK)
        rc = add(w, id);
    if (rc != MPC_OK) {
        if (w->win != MPI_WIN_NULL) {
            XFER_BLOCKING_BEGIN();
            (void)mpc_win_free(&w->win); /* out of memory is the error to report */
            XFER_BLOCKING_END;
        }
        xfer_unpin_for_life(w->pin);
        discard(w);
    }
    return rc;
}

/* Closes what an epoch left open: passive epochs unlocked, then a last fence (MPI_MODE_NOSUCCEED,
 * collective: it completes a fence epoch's operations and brings every rank to MPI_Win_free
 * together). Only MPI calls: the caller's GC-safe bracket, or at exit. Returns the first error;
 * every step is tried. */
static int close_epochs(window *w)
{
    int rc = MPC_OK, r;
    if (w->lock_all && (r = mpc_win_unlock_all(w->win)) != MPC_OK && rc == MPC_OK)
        rc = r;
    for (int t = 0; t < w->size; t++)
        if (w->locked[t] && (r = mpc_win_unlock(t, w->win)) != MPC_OK && rc == MPC_OK)
            rc = r;
    if ((r = mpc_win_fence(MPI_MODE_NOSUCCEED, w->win)) != MPC_OK && rc == MPC_OK)
        rc = r;
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_win_free(int32_t id)
{
    window *w = NULL;
    pthread_mutex_lock(&wins_lock);
    if (id >= 1 && id <= nwins) {
        w = wins[id - 1];
        __atomic_store_n(&wins[id - 1], NULL, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&wins_lock);
    if (!w)
        return MPC_OK; /* idempotent; or freed at exit already */
    int rc = MPC_OK;
    if (mpc_is_initialized()) {
        XFER_BLOCKING_BEGIN();
        rc = close_epochs(w);
        XFER_BLOCKING_END;
        int freed;
        /* GC-unsafe where the rule allows, as MPI_Win_create (ucp_mem_unmap under UCX's locks) */
        XFER_MPI_BEGIN();
        freed = mpc_win_free(&w->win);
        XFER_MPI_END;
        if (rc == MPC_OK)
            rc = freed;
    }
    release_origins(w, -1);
    let_go_kept(w);
    xfer_unpin_for_life(w->pin);
    discard(w);
    return rc;
}

void opi_window_close_all(void)
{
    /* at exit, GC-safe, before MPI_Finalize: only MPI calls; the handles go with the process */
    pthread_mutex_lock(&wins_lock);
    int32_t n = nwins;
    pthread_mutex_unlock(&wins_lock);
    for (int32_t i = 0; i < n; i++) {
        pthread_mutex_lock(&wins_lock);
        window *w = wins[i];
        __atomic_store_n(&wins[i], NULL, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&wins_lock);
        if (!w)
            continue;
        fprintf(stderr,
                "System.MP: warning: a Window (%d) was not disposed; it is freed at exit "
                "(MPI_Win_free, in creation order)\n",
                i + 1);
        int rc = close_epochs(w);
        int freed = mpc_win_free(&w->win);
        rc = rc != MPC_OK ? rc : freed;
        if (rc != MPC_OK)
            fprintf(stderr, "System.MP: warning: freeing window %d at exit failed (MPI error %d)\n",
                    i + 1, rc);
    }
}

int32_t opi_win_target_count(int32_t id, int32_t rank, int64_t *count)
{
    window *w = find(id);
    if (!w)
        return OPI_ERR_WIN_DISPOSED;
    if (rank < 0 || rank >= w->size)
        return error_record(OPI_ERR_OUT_OF_RANGE, "rank",
                            "rank %d is outside 0..%d of the window's communicator of size %d",
                            rank, w->size - 1, w->size);
    *count = w->ranks[rank].count;
    return MPC_OK;
}

/* ---- epochs ---- */

static int epoch_error(const char *what)
{
    return error_record(OPI_ERR_WIN_EPOCH, NULL, "%s", what);
}

static int check_target(const window *w, int32_t rank, const char *name)
{
    if (rank < 0 || rank >= w->size)
        return error_record(OPI_ERR_OUT_OF_RANGE, name,
                            "%s %d is outside 0..%d of the window's communicator of size %d", name,
                            rank, w->size - 1, w->size);
    return MPC_OK;
}

/* Whether a passive-target epoch covers target (-1: any target). */
static int passive(window *w, int target)
{
    return __atomic_load_n(&w->lock_all, __ATOMIC_RELAXED) ||
           (target < 0 ? __atomic_load_n(&w->nlocked, __ATOMIC_RELAXED) > 0
                       : __atomic_load_n(&w->locked[target], __ATOMIC_RELAXED) != 0);
}

/* Sets one field of w's epoch state: under wins_lock, which the read-modify-writes of the
 * state hold, and atomically, for the lock-free reads of passive and the operations. */
static void set_epoch_state(int *field, int value)
{
    pthread_mutex_lock(&wins_lock);
    __atomic_store_n(field, value, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&wins_lock);
}

RT_HOLDS_STACK_MARK int32_t opi_win_fence(int32_t id)
{
    window *w = find(id);
    if (!w)
        return OPI_ERR_WIN_DISPOSED;
    if (passive(w, -1))
        return epoch_error("Fence inside a passive-target epoch (Lock or LockAll): Unlock or "
                           "UnlockAll first");
    int rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_win_fence(0, w->win);
    XFER_BLOCKING_END;
    if (rc != MPC_OK)
        return rc;
    set_epoch_state(&w->fenced, 1);
    release_origins(w, -1);
    return MPC_OK;
}

RT_HOLDS_STACK_MARK int32_t opi_win_lock(int32_t id, int32_t rank, int32_t exclusive)
{
    window *w = find(id);
    if (!w)
        return OPI_ERR_WIN_DISPOSED;
    int rc = check_target(w, rank, "rank");
    if (rc != MPC_OK)
        return rc;
    pthread_mutex_lock(&wins_lock);
    int state = w->lock_all ? -1 : w->locked[rank];
    if (state == 0)
        __atomic_store_n(&w->locked[rank], exclusive ? 2 : 1, __ATOMIC_RELAXED); /* claimed */
    pthread_mutex_unlock(&wins_lock);
    if (state < 0)
        return epoch_error("Lock inside a LockAll epoch: every target is locked already");
    if (state > 0)
        return error_record(OPI_ERR_WIN_EPOCH, "rank",
                            "rank %d is locked already (Unlock it first)", rank);
    XFER_BLOCKING_BEGIN();
    rc = mpc_win_lock(exclusive, rank, w->win);
    XFER_BLOCKING_END;
    pthread_mutex_lock(&wins_lock);
    if (rc != MPC_OK)
        __atomic_store_n(&w->locked[rank], 0, __ATOMIC_RELAXED);
    else
        __atomic_store_n(&w->nlocked, w->nlocked + 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&wins_lock);
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_win_unlock(int32_t id, int32_t rank)
{
    window *w = find(id);
    if (!w)
        return OPI_ERR_WIN_DISPOSED;
    int rc = check_target(w, rank, "rank");
    if (rc != MPC_OK)
        return rc;
    pthread_mutex_lock(&wins_lock);
    int locked = w->locked[rank];
    pthread_mutex_unlock(&wins_lock);
    if (!locked)
        return error_record(OPI_ERR_WIN_EPOCH, "rank",
                            "Unlock(%d) without Lock(%d): rank %d is not locked by this process",
                            rank, rank, rank);
    XFER_BLOCKING_BEGIN();
    rc = mpc_win_unlock(rank, w->win);
    XFER_BLOCKING_END;
    if (rc != MPC_OK)
        return rc; /* the epoch is as MPI left it; the origins stay held */
    pthread_mutex_lock(&wins_lock);
    __atomic_store_n(&w->locked[rank], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&w->nlocked, w->nlocked - 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&wins_lock);
    release_origins(w, rank);
    return MPC_OK;
}

RT_HOLDS_STACK_MARK int32_t opi_win_lock_all(int32_t id)
{
    window *w = find(id);
    if (!w)
        return OPI_ERR_WIN_DISPOSED;
    pthread_mutex_lock(&wins_lock);
    int busy = w->lock_all || w->nlocked;
    if (!busy)
        __atomic_store_n(&w->lock_all, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&wins_lock);
    if (busy)
        return epoch_error("LockAll while a passive-target epoch is open (Lock or LockAll): "
                           "Unlock or UnlockAll first");
    int rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_win_lock_all(w->win);
    XFER_BLOCKING_END;
    if (rc != MPC_OK)
        set_epoch_state(&w->lock_all, 0);
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_win_unlock_all(int32_t id)
{
    window *w = find(id);
    if (!w)
        return OPI_ERR_WIN_DISPOSED;
    pthread_mutex_lock(&wins_lock);
    int open = w->lock_all;
    pthread_mutex_unlock(&wins_lock);
    if (!open)
        return epoch_error("UnlockAll without LockAll");
    int rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_win_unlock_all(w->win);
    XFER_BLOCKING_END;
    if (rc != MPC_OK)
        return rc;
    set_epoch_state(&w->lock_all, 0);
    release_origins(w, -1);
    return MPC_OK;
}

RT_HOLDS_STACK_MARK int32_t opi_win_flush(int32_t id, int32_t rank)
{
    window *w = find(id);
    if (!w)
        return OPI_ERR_WIN_DISPOSED;
    int rc = check_target(w, rank, "rank");
    if (rc != MPC_OK)
        return rc;
    if (!passive(w, rank))
        return error_record(OPI_ERR_WIN_EPOCH, "rank",
                            "Flush(%d) outside a passive-target epoch of rank %d (Lock(%d) or "
                            "LockAll)",
                            rank, rank, rank);
    XFER_BLOCKING_BEGIN();
    rc = mpc_win_flush(rank, w->win);
    XFER_BLOCKING_END;
    if (rc != MPC_OK)
        return rc;
    release_origins(w, rank);
    return MPC_OK;
}

RT_HOLDS_STACK_MARK int32_t opi_win_flush_all(int32_t id)
{
    window *w = find(id);
    if (!w)
        return OPI_ERR_WIN_DISPOSED;
    if (!passive(w, -1))
        return epoch_error("FlushAll outside a passive-target epoch (Lock or LockAll)");
    int rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_win_flush_all(w->win);
    XFER_BLOCKING_END;
    if (rc != MPC_OK)
        return rc;
    release_origins(w, -1);
    return MPC_OK;
}

/* ---- operations ---- */

/* Checks target and the target's elements [index, index + count): MP.ProcNull (-3) makes the
 * operation a no-op (*none = 1); otherwise the target must be a rank whose array holds them. */
static int check_access(window *w, int32_t target, int64_t index, int64_t count, int *none)
{
    *none = 0;
    if (target == OPI_PROC_NULL) {
        *none = 1;
        return MPC_OK;
    }
    if (target < 0 || target >= w->size)
        return error_record(OPI_ERR_OUT_OF_RANGE, "targetRank",
                            "targetRank %d is outside 0..%d of the window's communicator of size "
                            "%d, and is not MP.ProcNull (-3)",
                            target, w->size - 1, w->size);
    int64_t exposed = w->ranks[target].count;
    if (index < 0 || index > exposed || count > exposed - index)
        return error_record(OPI_ERR_OUT_OF_RANGE, "targetIndex",
                            "targetIndex %" PRId64 " and %" PRId64 " element%s pass the %" PRId64
                            " element%s rank %d exposes",
                            index, count, count == 1 ? "" : "s", exposed, exposed == 1 ? "" : "s",
                            target);
    return MPC_OK;
}

/* An operation on target is allowed in a fence epoch or a passive epoch covering it. */
static int check_epoch(window *w, int32_t target, const char *op)
{
    /* read without the lock: the epoch calls that change these are the program's to order */
    int open = __atomic_load_n(&w->fenced, __ATOMIC_RELAXED) ||
               __atomic_load_n(&w->lock_all, __ATOMIC_RELAXED) ||
               __atomic_load_n(&w->locked[target], __ATOMIC_RELAXED);
    if (open)
        return MPC_OK;
    return error_record(OPI_ERR_WIN_EPOCH, NULL,
                        "%s to rank %d outside an epoch: call Fence (on every rank), Lock(%d) or "
                        "LockAll first",
                        op, target, target);
}

/* The origin range [offset, offset + count) of an array of any rank (linear row-major). */
static int check_origin(window *w, MonoObject *origin, int32_t offset, int32_t count,
                        const rt_class_plan **plan)
{
    int rc = array_plan(origin, "origin", plan);
    if (rc != MPC_OK)
        return rc;
    size_t length = rt_array_length(origin);
    if (offset < 0 || (size_t)offset > length)
        return error_record(OPI_ERR_OFFSET, "offset",
                            "offset %d is outside 0..%zu, the length of origin", offset, length);
    if (count < 0)
        return error_record(OPI_ERR_COUNT, "count", "count %d is negative", count);
    if ((size_t)count > length - (size_t)offset)
        return error_record(OPI_ERR_COUNT, "count",
                            "count %d from offset %d passes the end of origin (length %zu: %zu "
                            "fit)",
                            count, offset, length, length - (size_t)offset);
    return check_type(w, *plan, "origin");
}

enum rma_kind { RMA_PUT, RMA_GET, RMA_ACCUMULATE };

RT_HOLDS_STACK_MARK static int32_t transfer(enum rma_kind kind, int32_t id, MonoObject *origin,
                                            int32_t offset, int32_t count, int32_t target,
                                            int64_t index, int32_t op_code)
{
    static const char *const names[] = {"Put", "Get", "Accumulate"};
    window *w = find(id);
    if (!w)
        return OPI_ERR_WIN_DISPOSED;
    const rt_class_plan *p = NULL;
    int none = 0;
    int rc = check_origin(w, origin, offset, count, &p);
    if (rc == MPC_OK)
        rc = check_access(w, target, index, count, &none);
    MPI_Op op = MPI_OP_NULL;
    MPI_Datatype dt = MPI_BYTE;
    if (rc == MPC_OK && kind == RMA_ACCUMULATE) {
        if (op_code == OP_NO_OP)
            return error_record(OPI_ERR_BAD_ARGUMENT, "op",
                                "Op.NoOp is for FetchAndOp only (an atomic read); Accumulate "
                                "takes Op.Replace or a built-in reduction operator");
        rc = opi_op_resolve_one_sided(op_code, p, &op, &dt);
    }
    if (rc != MPC_OK || none)
        return rc;
    if ((rc = check_epoch(w, target, names[kind])) != MPC_OK)
        return rc;
    if (count > 0) {
        if (!xfer_pin_every() && !xfer_may_move(origin))
            keep_origin(w, origin);
        else if ((rc = hold_origin(w, &origin, target)) != MPC_OK)
            return rc;
    }
    /* origin is held from here on (or needs no hold: nothing moves for count 0) */
    char *data = (char *)rt_array_data(origin) + (size_t)offset * p->data_size;
    size_t bytes = (size_t)count * p->data_size;
    MPI_Aint disp = (MPI_Aint)(w->ranks[target].offset + index * (int64_t)p->data_size);
    XFER_MPI_BEGIN(origin);
    switch (kind) {
    case RMA_PUT: rc = mpc_put(data, bytes, target, disp, w->win); break;
    case RMA_GET: rc = mpc_get(data, bytes, target, disp, w->win); break;
    case RMA_ACCUMULATE:
        rc = mpc_accumulate(data, (MPI_Count)count, dt, target, disp, op, w->win);
        break;
    }
    XFER_MPI_END;
    if (rc == MPC_OK)
        gch_count(GCH_OPERATIONS, 1);
    /* on failure the origin stays held until the epoch closes: MPI may have taken part of it */
    return rc;
}

int32_t opi_win_put(int32_t id, MonoObject *origin, int32_t offset, int32_t count, int32_t target,
                    int64_t index)
{
    return transfer(RMA_PUT, id, origin, offset, count, target, index, 0);
}

int32_t opi_win_get(int32_t id, MonoObject *origin, int32_t offset, int32_t count, int32_t target,
                    int64_t index)
{
    return transfer(RMA_GET, id, origin, offset, count, target, index, 0);
}

int32_t opi_win_accumulate(int32_t id, MonoObject *origin, int32_t offset, int32_t count,
                           int32_t target, int64_t index, int32_t op)
{
    return transfer(RMA_ACCUMULATE, id, origin, offset, count, target, index, op);
}

/* The atomics: values is a T[3] (value, compare, result), result written after the call; op_code
 * < 0 for CompareAndSwap. Allowed only in a passive epoch covering the target (the result is
 * returned at once: MPI_Win_flush follows). */
RT_HOLDS_STACK_MARK static int32_t atomic(int32_t id, MonoObject *values, int32_t target,
                                          int64_t index, int32_t op_code)
{
    const int cas = op_code < 0;
    const char *what = cas ? "CompareAndSwap" : "FetchAndOp";
    window *w = find(id);
    if (!w)
        return OPI_ERR_WIN_DISPOSED;
    const rt_class_plan *p = NULL;
    int rc = array_plan(values, "value", &p);
    if (rc != MPC_OK)
        return rc;
    if (rt_array_length(values) < 3 || p->data_size > 8)
        return error_record(OPI_ERR_BAD_ARGUMENT, "value", "%s: not a value System.MP passed",
                            what);
    MPI_Op op = MPI_NO_OP;
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    if (cas) {
        switch (p->elem_type) {
        case MONO_TYPE_R4:
        case MONO_TYPE_R8:
        case MONO_TYPE_VALUETYPE: dt = MPI_DATATYPE_NULL; break;
        default: rc = opi_op_resolve_one_sided(OP_REPLACE, p, &op, &dt); break;
        }
        if (rc == MPC_OK && dt == MPI_DATATYPE_NULL) {
            char *type = name_of(p->elem_class);
            error_record(OPI_ERR_BAD_ARGUMENT, "value",
                         "CompareAndSwap takes integer types, bool and char; not %s", type);
            free(type);
            return OPI_ERR_BAD_ARGUMENT;
        }
    } else {
        rc = opi_op_resolve_one_sided(op_code, p, &op, &dt);
    }
    int none = 0;
    if (rc == MPC_OK)
        rc = check_type(w, p, "value");
    if (rc == MPC_OK)
        rc = check_access(w, target, index, 1, &none);
    if (rc != MPC_OK)
        return rc;
    uint64_t in[2] = {0, 0}, out = 0;
    const char *v = (const char *)rt_array_data(values);
    memcpy(&in[0], v, p->data_size);
    memcpy(&in[1], v + p->data_size, p->data_size);
    if (!none) {
        if (!passive(w, target))
            return error_record(OPI_ERR_WIN_EPOCH, NULL,
                                "%s returns its value at once, so it needs a passive-target epoch "
                                "of rank %d: Lock(%d) or LockAll first",
                                what, target, target);
        MPI_Aint disp = (MPI_Aint)(w->ranks[target].offset + index * (int64_t)p->data_size);
        XFER_BLOCKING_BEGIN(values);
        rc = cas ? mpc_compare_and_swap(&in[0], &in[1], &out, dt, target, disp, w->win)
                 : mpc_fetch_and_op(&in[0], &out, dt, target, disp, op, w->win);
        XFER_BLOCKING_END;
        if (rc != MPC_OK)
            return rc;
        gch_count(GCH_OPERATIONS, 1);
    }
    memcpy((char *)rt_array_data(values) + 2 * (size_t)p->data_size, &out, p->data_size);
    return MPC_OK;
}

int32_t opi_win_fetch_and_op(int32_t id, MonoObject *values, int32_t target, int64_t index,
                             int32_t op)
{
    if (op < 0)
        return error_record(OPI_ERR_NOT_SUPPORTED, "op",
                            "a disposed user operator cannot be applied to a window");
    return atomic(id, values, target, index, op);
}

int32_t opi_win_compare_and_swap(int32_t id, MonoObject *values, int32_t target, int64_t index)
{
    return atomic(id, values, target, index, -1);
}

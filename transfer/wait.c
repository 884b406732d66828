/* wait.c — generation-aware deferred pinning: how an internal call enters MPI and waits.
 *
 * Internal calls run GC-unsafe (raw registration): while one runs, a collection can only
 * happen at a safepoint (any exported Mono function may be one), and objects this thread
 * holds in C locals or arguments are then pinned by the conservative stack scan. The poll loop
 * calls MPI only, so a wait may poll in place for as long as no collection is coming and no C#
 * operator exists (the rule in transfer.h). When the GC hook announces a collection (the
 * epoch changes before the world stops), an operator exists or the spin budget is spent, the
 * wait keeps polling inside a GC-safe region whose stack mark is an array of the transfer's
 * objects, so the collection — and every other thread — proceeds.
 *
 * That anchor is the pin. SGen scans every thread's stack conservatively from its mark up (and
 * the spilled registers and frames between the mark and the transition), and an object a
 * conservatively scanned word points at or into is pinned for that collection, in either
 * generation, in every suspend mode: it is how C#'s `fixed` pins in Mono. A GC handle (~50 ns
 * per object, taken and freed) would add nothing while the region lasts. Only what outlives the
 * call — a non-blocking transfer in the pin registry — needs a handle. */
#include "transfer_internal.h"

#include "class_plan.h"
#include "gc_hooks.h"
#include "layout.h"

#include <mono/metadata/mono-gc.h>
#include <mono/metadata/object.h>
#include <time.h>

/* SGen puts objects larger than this in the large-object space, which never moves. */
#define LOS_THRESHOLD 8000
/* How long a wait polls GC-unsafe when no collection is announced: it bounds how long a
 * stop-the-world request the GC hook does not announce (a debugger, a sampling profiler)
 * waits for this thread. A bound in time, not in polls: a busy machine spends a poll count in
 * microseconds, and the wait then pinned with no collection in sight. The clock is read once
 * every CLOCK_POLLS polls (~20 ns a reading). */
#define SPIN_NANOSECONDS 1000000
#define CLOCK_POLLS 16

/* How long a wait polls GC-unsafe when waits yield (mpc_wait_mode, an oversubscribed host):
 * then it goes GC-safe and backs off (mpc_backoff_pause, which counts this spin in its own). */
#define YIELD_SPIN_NANOSECONDS 20000

static bool old_generation_moves = true;
static bool pin_every_transfer;

void xfer_set_old_generation_moves(bool moves) { old_generation_moves = moves; }
bool xfer_old_generation_moves(void) { return old_generation_moves; }
void xfer_set_pin_every(bool every) { pin_every_transfer = every; }
bool xfer_pin_every(void) { return pin_every_transfer; }

/* A lower bound of the object's size from its cached plan, without calling into the runtime:
 * the first transfer after a compute phase runs with cold caches, and mono_object_get_size
 * (a GC-state transition plus class lookups in libmono) then measured ~1 µs. The bound is the
 * header plus the data; the runtime's size adds multi-dimensional bounds and alignment, so a
 * bound above the threshold means the object really is in the large-object space. */
static size_t size_lower_bound(MonoObject *obj)
{
    int built = 0;
    const rt_class_plan *p = rt_plan_of(obj, &built); /* no address kept across a build */
    if (p && p->shape == RT_ARRAY)
        return rt_array_data_offset + rt_array_length(obj) * (size_t)p->data_size;
    if (p && p->shape == RT_OBJECT)
        return sizeof(MonoObject) + p->data_size;
    return mono_object_get_size(obj);
}

bool xfer_may_move(MonoObject *obj)
{
    if (size_lower_bound(obj) > LOS_THRESHOLD)
        return false;
    return mono_gc_get_generation(obj) == 0 || old_generation_moves;
}

/* Puts every object into anchor (the GC-safe region's stack mark), which pins it while the
 * region lasts (see the top of this file). When they are MPI's buffers (buffers), with pin_all
 * (MOTOR_PIN_POLICY=every, the comparison policy) each also gets a pinned GC handle, as external
 * bindings take; otherwise the handle is counted as avoided. Objects already pinned are
 * skipped. */
static void anchor_objects(MonoObject *const *objs, int nobjs, uint32_t *pins, MonoObject **anchor,
                           int pin_all, int buffers)
{
    for (int i = 0; i < nobjs; i++) {
        if (!objs[i] || pins[i])
            continue;
        anchor[i] = objs[i];
        if (!buffers) /* objects the caller reads after the wait, not MPI's buffers */
            continue;
        if (pin_all) {
            pins[i] = mono_gchandle_new(objs[i], 1);
            gch_count(GCH_PINS_TAKEN, 1);
        } else {
            gch_count(GCH_PINS_AVOIDED, 1);
        }
    }
}

static void release_pins(const uint32_t *pins, int nobjs)
{
    for (int i = 0; i < nobjs; i++) {
        if (pins[i]) {
            mono_gchandle_free(pins[i]);
            gch_count(GCH_PINS_RELEASED_BY_WAIT, 1);
        }
    }
}

static int64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t); /* cannot fail for CLOCK_MONOTONIC with a valid pointer */
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Waits until poll() reports nothing left running (poll returns the number still running).
 * objs[0..nobjs) are the objects whose data MPI reads or writes meanwhile (buffers), or, without
 * buffers, objects the caller reads after the wait: held in place alike, but no transfer's pins
 * (neither counted nor pinned by MOTOR_PIN_POLICY=every). */
RT_HOLDS_STACK_MARK static void wait_deferred(int (*poll)(void *ctx), void *ctx,
                                              MonoObject *const *objs, int nobjs, int buffers)
{
    uint32_t pins[XFER_MAX_OBJECTS] = {0};
    MonoObject *anchor[XFER_MAX_OBJECTS] = {NULL};
    xfer_discard_dropped(); /* a safe point: matched messages dropped unreceived go first */
    int hang_marked = mpc_hang_block(); /* in the call its start or caller noted */
    if (pin_every_transfer && buffers)  /* the comparison policy: pin first, whatever the object */
        anchor_objects(objs, nobjs, pins, anchor, 1, buffers);
    /* Each poll GC-unsafe only as the rule allows (transfer.h): not while a C# operator
     * exists, which could hold MPICH's lock while its collection waits for this thread. */
    int running = 1;
    uint64_t epoch = gch_epoch();
    int64_t deadline = 0;
    int yields = mpc_wait_mode() == MPC_WAIT_YIELD;
    for (unsigned spin = 0; running > 0 && gch_epoch() == epoch; spin++) {
        if (spin % CLOCK_POLLS == CLOCK_POLLS - 1) {
            int64_t now = monotonic_ns();
            if (deadline == 0) /* the first reading: most waits end before it */
                deadline = now + (yields ? YIELD_SPIN_NANOSECONDS : SPIN_NANOSECONDS);
            else if (now >= deadline)
                break;
        }
        if (!xfer_unsafe_mpi_begin())
            break;
        running = poll(ctx);
        xfer_unsafe_mpi_end();
    }

    anchor_objects(objs, nobjs, pins, anchor, 0, buffers);
    if (running > 0) {
        /* The region's stack mark is the anchor array itself: the GC scans from there up, so
         * the objects stay in place in every suspend mode (coop scans no native frame below
         * the mark, where MPI runs). */
        void *cookie = mono_threads_enter_gc_safe_region_unbalanced((void **)anchor);
        if (yields) {
            /* the host's ranks outnumber its cores: a spinning rank holds the core the rank it
             * waits for needs, so back off (yield, then nap) */
            mpc_backoff b = {deadline ? deadline - YIELD_SPIN_NANOSECONDS : 0, 0};
            while ((running = poll(ctx)) > 0)
                mpc_backoff_pause(&b);
        } else {
            /* Busy polling, as MPI_Wait does: yielding the core here slowed 4 MiB transfers 3x. */
            while (running > 0)
                running = poll(ctx);
        }
        mono_threads_exit_gc_safe_region_unbalanced(cookie, (void **)anchor);
    }
    mpc_hang_unblock(hang_marked);
    release_pins(pins, nobjs);
}

struct request_set {
    mpc_request *reqs;
    mpc_status *st;
    int *rcs; /* each request's code, or NULL */
    int n;
    int first_error;
};

/* One pass over the unfinished requests. A request that fails has completed (MPI frees it);
 * the first error is kept. A completed request's handle here becomes MPI_REQUEST_NULL, so that
 * no later pass tests it again: a persistent request stays valid once complete (inactive), and a
 * test of it would report the empty status over its own. */
static int poll_requests(void *ctx)
{
    struct request_set *rs = ctx;
    int running = 0;
    for (int i = 0; i < rs->n; i++) {
        if (rs->reqs[i] == MPI_REQUEST_NULL)
            continue;
        int done = 0;
        int rc = mpc_test(&rs->reqs[i], &done, rs->st ? &rs->st[i] : NULL);
        if (rc != MPC_OK) {
            if (rs->first_error == MPC_OK)
                rs->first_error = rc;
            done = 1;
        }
        if (rs->rcs)
            rs->rcs[i] = rc;
        if (done)
            rs->reqs[i] = MPI_REQUEST_NULL;
        running += !done;
    }
    return running;
}

int xfer_complete(mpc_request *reqs, int nreqs, MonoObject *const *objs, int nobjs,
                  mpc_status *statuses)
{
    struct request_set rs = {reqs, statuses, NULL, nreqs, MPC_OK};
    wait_deferred(poll_requests, &rs, objs, nobjs, 1);
    return rs.first_error;
}

int xfer_complete_each(mpc_request *reqs, int nreqs, MonoObject *const *keep, int nkeep,
                       mpc_status *statuses, int *rcs)
{
    struct request_set rs = {reqs, statuses, rcs, nreqs, MPC_OK};
    for (int i = 0; i < nreqs; i++)
        rcs[i] = MPC_OK;
    wait_deferred(poll_requests, &rs, keep, nkeep, 0);
    return rs.first_error;
}

struct probe {
    int source, tag;
    mpc_comm comm;
    mpc_status *st;
    mpc_message *msg; /* matched probe when set */
    int error;
};

static int poll_probe(void *ctx)
{
    struct probe *pr = ctx;
    int found = 0;
    int rc = pr->msg ? mpc_improbe(pr->source, pr->tag, pr->comm, &found, pr->msg, pr->st)
                     : mpc_iprobe(pr->source, pr->tag, pr->comm, &found, pr->st);
    if (rc != MPC_OK) {
        pr->error = rc;
        return 0;
    }
    return !found;
}

int xfer_probe_wait(int source, int tag, mpc_comm comm, mpc_status *status, mpc_message *msg)
{
    struct probe pr = {source, tag, comm, status, msg, MPC_OK};
    wait_deferred(poll_probe, &pr, NULL, 0, 1);
    return pr.error;
}

/* The slow side of a bracket (transfer.h): the objects go into the bracket's mark array, the
 * GC-safe region's stack mark, which pins them while the region lasts (see the top). */
RT_HOLDS_STACK_MARK void xfer_enter_gc_safe(xfer_bracket *b, MonoObject *const *objs, int nobjs)
{
    if (xfer_huge_pages_staged_)
        xfer_huge_pages_submit();
    xfer_discard_dropped(); /* before a blocking call: see wait_deferred */
    b->gc_safe = true;
    b->nobjs = nobjs;
    for (int i = 0; i <= XFER_MAX_OBJECTS; i++)
        b->mark[i] = NULL;
    for (int i = 0; i < nobjs; i++)
        b->pins[i] = 0;
    anchor_objects(objs, nobjs, b->pins, b->mark, pin_every_transfer, 1);
    b->cookie = mono_threads_enter_gc_safe_region_unbalanced((void **)b->mark);
}

RT_HOLDS_STACK_MARK void xfer_leave_gc_safe(xfer_bracket *b)
{
    mono_threads_exit_gc_safe_region_unbalanced(b->cookie, (void **)b->mark);
    release_pins(b->pins, b->nobjs);
}

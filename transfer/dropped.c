/* dropped.c — matched messages that nobody will receive. A matched probe takes a message off
 * MPI's queue for one receive (MPI_Mprobe); when System.MP's Message is collected unused, its
 * finalizer records the message here (xfer_message_drop) and the message is received into a
 * pooled buffer and thrown away. Left alone it would stay matched and unreceived for ever: a
 * sender in a rendezvous would wait for it, and MPI_Finalize would find it pending.
 *
 * Recording calls no MPI (a finalizer runs on the finalizer thread at any moment, also while MPI
 * is closing or gone): a lock-free push, nothing else. The discarding receives start without
 * blocking (MPI_Imrecv) at the next safe point — xfer_discard_dropped, which the recording
 * thread itself calls when MPI allows it (opi's Message drop), as do the waits and the slow side
 * of the brackets (wait.c), request tests, matched probes and the GC event's registry sweep — and
 * are tested there each time until they finish, when their buffers go back to the pool: a rank
 * that waits (for the sender of the very message it dropped, say) discards first. xfer_close
 * finishes the rest before MPI_Finalize.
 *
 * The lock only orders the discarders (never taken by the recording side); the GC event and
 * the internal calls only try it: when it is taken, the discard under way (or the next safe
 * point, for a message recorded meanwhile) covers theirs. */
#include "transfer_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct dropped {
    mpc_message msg;
    int64_t bytes;       /* the message's size, from its probe */
    mpc_request req;     /* the discarding receive, once started */
    xfer_buffer *buffer; /* what it receives into (NULL when out of memory: truncated to 0) */
    struct dropped *next;
} dropped;

static _Atomic(dropped *) recorded; /* pushed by xfer_message_drop, taken whole */
static dropped *receiving;          /* discarding receives started; under lock */
static atomic_int nreceiving;       /* their number, read without the lock */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Bounds xfer_close's wait for the discarding receives (a sender that never completes its send
 * must not hold MPI_Finalize for ever; the finalize watch bounds what follows). */
#define CLOSE_WAIT_NS ((int64_t)10 * 1000000000)

int xfer_message_drop(mpc_message msg, int64_t bytes)
{
    dropped *d = malloc(sizeof *d);
    if (!d)
        return MPC_ERR_NO_MEMORY;
    *d = (dropped){.msg = msg, .bytes = bytes < 0 ? 0 : bytes, .req = MPI_REQUEST_NULL};
    d->next = atomic_load_explicit(&recorded, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&recorded, &d->next, d, memory_order_release,
                                                  memory_order_relaxed)) {
    }
    return MPC_OK;
}

static bool xfer_dropped_pending(void)
{
    return atomic_load_explicit(&recorded, memory_order_relaxed) ||
           atomic_load_explicit(&nreceiving, memory_order_relaxed);
}

/* Starts d's discarding receive into a pooled buffer of the message's size; out of memory, into
 * nothing (MPI truncates it, which receives it all the same). Caller holds the lock. */
static void start(dropped *d)
{
    d->buffer = xfer_buffer_take(d->bytes > 0 ? (size_t)d->bytes : 1);
    void *data = d->buffer ? d->buffer->data : NULL;
    MPI_Count count = d->buffer ? (MPI_Count)d->bytes : 0;
    if (mpc_imrecv_typed(data, count, MPI_BYTE, &d->msg, &d->req) != MPC_OK) {
        /* MPI refused the handle: there is nothing left to receive it with */
        xfer_buffer_give(d->buffer);
        free(d);
        return;
    }
    d->next = receiving;
    receiving = d;
    atomic_fetch_add_explicit(&nreceiving, 1, memory_order_relaxed);
}

/* Starts what was recorded, and frees the discarding receives that have finished (a failed one,
 * a truncation when it had no buffer, has finished too). Caller holds the lock. */
static void step(void)
{
    dropped *d = atomic_exchange_explicit(&recorded, NULL, memory_order_acquire);
    while (d) {
        dropped *next = d->next;
        start(d);
        d = next;
    }
    for (dropped **link = &receiving; *link;) {
        d = *link;
        int done = 0;
        if (mpc_test(&d->req, &done, NULL) != MPC_OK)
            done = 1;
        if (!done) {
            link = &d->next;
            continue;
        }
        *link = d->next;
        xfer_buffer_give(d->buffer);
        free(d);
        atomic_fetch_sub_explicit(&nreceiving, 1, memory_order_relaxed);
    }
}

void xfer_dropped_sweep(void)
{
    if (!xfer_dropped_pending() || pthread_mutex_trylock(&lock) != 0)
        return;
    step();
    pthread_mutex_unlock(&lock);
}

/* This thread is inside xfer_discard_dropped: its own bracket (which may go GC-safe, a safe point
 * too) does not start another. */
static __thread int discarding __attribute__((tls_model("initial-exec")));

RT_HOLDS_STACK_MARK void xfer_discard_dropped(void)
{
    if (!xfer_dropped_pending() || discarding || !mpc_is_initialized())
        return;
    /* the GC event's rule (no MPI while closing, nor during a reduction with a C# operator) and
     * the brackets' (GC-safe while a C# operator exists) */
    if (!xfer_hook_mpi_begin())
        return;
    discarding = 1;
    XFER_MPI_BEGIN();
    xfer_dropped_sweep();
    XFER_MPI_END;
    discarding = 0;
    xfer_hook_mpi_end();
}

void xfer_close_dropped(void)
{
    pthread_mutex_lock(&lock);
    step();
    mpc_backoff b = {0, 0};
    int64_t deadline = mpc_monotonic_ns() + CLOSE_WAIT_NS;
    while (receiving && mpc_monotonic_ns() < deadline) {
        mpc_backoff_pause(&b);
        step();
    }
    pthread_mutex_unlock(&lock);
}

/* gc_hooks.c — the GC event callback, the collection epoch, yielding to a collection, and the
 * per-thread counters (gc_hooks.h). */
#include "gc_hooks.h"

#include "mono_private.h"
#include "thread_blocks.h"

#include <mono/metadata/profiler.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

struct _MonoProfiler {
    int unused;
};

static _Atomic uint64_t gc_epoch;
static atomic_flag installed = ATOMIC_FLAG_INIT;
/* What runs at each collection's start (gch_on_collection): filled before it is counted. */
static void (*sweeps[GCH_SWEEPS])(void);
static atomic_int nsweeps;

/* Runs on the thread that triggers the collection. At PRE_STOP_WORLD the world still runs:
 * the epoch tells waiting threads to step aside, and the sweeps run (transfer/'s releases the
 * objects of finished transfers, so that they may already move in this collection). Every later
 * event until POST_START_WORLD has the world stopped, where locks and MPI deadlock
 * (MONO-FACTS §4): nothing is done there. */
static void on_gc_event(MonoProfiler *prof, MonoProfilerGCEvent ev, uint32_t generation,
                        mono_bool is_serial)
{
    (void)prof;
    (void)generation;
    (void)is_serial;
    if (ev == MONO_GC_EVENT_PRE_STOP_WORLD) {
        atomic_fetch_add_explicit(&gc_epoch, 1, memory_order_release);
        for (int i = 0, n = atomic_load(&nsweeps); i < n; i++)
            sweeps[i]();
    }
}

static void (*thread_stopping)(void);

/* Raised as the runtime detaches a thread; only when that is the calling thread (at shutdown
 * the runtime may detach others) is its own thread-local state the one to release. */
static void on_thread_stopped(MonoProfiler *prof, uintptr_t tid)
{
    (void)prof;
    if (tid == (uintptr_t)pthread_self() && thread_stopping)
        thread_stopping();
}

int gch_on_collection(void (*sweep)(void))
{
    static pthread_mutex_t adding = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&adding);
    int n = atomic_load(&nsweeps), rc = -1;
    if (n < GCH_SWEEPS) {
        sweeps[n] = sweep;
        atomic_store(&nsweeps, n + 1);
        rc = 0;
    }
    pthread_mutex_unlock(&adding);
    return rc;
}

int gch_install(void (*on_thread_stop)(void))
{
    if (atomic_flag_test_and_set(&installed))
        return 0;
    MonoProfilerHandle h = mono_profiler_create(NULL);
    if (!h)
        return -1;
    thread_stopping = on_thread_stop;
    mono_profiler_set_gc_event_callback(h, on_gc_event);
    mono_profiler_set_thread_stopped_callback(h, on_thread_stopped);
    return 0;
}

RT_HOLDS_STACK_MARK void gch_yield_to_gc(void)
{
    void *mark = NULL;
    void *cookie = mono_threads_enter_gc_safe_region_unbalanced(&mark);
    mono_threads_exit_gc_safe_region_unbalanced(cookie, &mark);
}

RT_HOLDS_STACK_MARK void gch_lock_gc_safe(pthread_mutex_t *m)
{
    void *mark = NULL;
    void *cookie = mono_threads_enter_gc_safe_region_unbalanced(&mark);
    pthread_mutex_lock(m);
    mono_threads_exit_gc_safe_region_unbalanced(cookie, &mark); /* may wait for a collection */
}

uint64_t gch_epoch(void) { return atomic_load_explicit(&gc_epoch, memory_order_acquire); }

/* Each thread owns one block; only the owner writes it, so a relaxed load+store is enough
 * and readers summing the blocks see each value whole. A block outlives its thread (its
 * counts stay in the totals) and is adopted by the next new thread. The block also carries the
 * thread's word (gch_thread_word). */
struct counter_block {
    thread_block link; /* first: the pool's */
    _Atomic int64_t value[GCH_COUNTER_COUNT];
    atomic_int word;
};

static thread_blocks blocks;
static __thread struct counter_block *my_block __attribute__((tls_model("initial-exec")));

static struct counter_block *claim_block(void)
{
    return my_block = (struct counter_block *)thread_block_claim(&blocks, sizeof *my_block);
}

/* Every thread's block, in turn. */
#define EACH_BLOCK(b)                                                                   \
    for (struct counter_block *b = (struct counter_block *)atomic_load(&blocks.all); b; \
         b = (struct counter_block *)b->link.next)

atomic_int *gch_thread_word(void) { return &(my_block ? my_block : claim_block())->word; }

void gch_wait_other_words_clear(void)
{
    struct counter_block *mine = my_block;
    EACH_BLOCK(b)
    while (b != mine && atomic_load_explicit(&b->word, memory_order_acquire))
        sched_yield();
}

void gch_count(gch_counter c, int64_t n)
{
    struct counter_block *b = my_block ? my_block : claim_block();
    int64_t v = atomic_load_explicit(&b->value[c], memory_order_relaxed);
    atomic_store_explicit(&b->value[c], v + n, memory_order_relaxed);
}

void gch_snapshot(int64_t out[GCH_COUNTER_COUNT])
{
    for (int i = 0; i < GCH_COUNTER_COUNT; i++)
        out[i] = 0;
    EACH_BLOCK(b)
    for (int i = 0; i < GCH_COUNTER_COUNT; i++)
        out[i] += atomic_load_explicit(&b->value[i], memory_order_relaxed);
}

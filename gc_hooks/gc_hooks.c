/* gc_hooks.c — GC event callback, collection epoch, per-thread counters, and the rule for
 * calling MPI while a C# operator may run inside it (gc_hooks.h). */
#include "gc_hooks.h"

#include "mono_private.h"

#include <linux/membarrier.h>
#include <mono/metadata/profiler.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct _MonoProfiler {
    int unused;
};

static _Atomic uint64_t gc_epoch;
static atomic_flag installed = ATOMIC_FLAG_INIT;

/* Runs on the thread that triggers the collection. At PRE_STOP_WORLD the world still runs:
 * the epoch tells waiting threads to step aside, and the registry sweep releases the handles
 * of finished transfers so those objects may already move in this collection. Every later
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
        gch_transfers_sweep();
        gch_buffers_sweep();
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
 * counts stay in the totals) and is adopted by the next new thread. The block also carries
 * the thread's "inside an MPI call made GC-unsafe" flag, which gch_user_op_add reads. */
struct counter_block {
    _Atomic int64_t value[GCH_COUNTER_COUNT];
    atomic_int owned;
    atomic_int unsafe_mpi;
    struct counter_block *next;
};

static struct counter_block *_Atomic all_blocks;
static __thread struct counter_block *my_block __attribute__((tls_model("initial-exec")));
static pthread_key_t release_key;
static pthread_once_t release_key_once = PTHREAD_ONCE_INIT;

static void release_block(void *block) { atomic_store(&((struct counter_block *)block)->owned, 0); }
static void make_release_key(void) { pthread_key_create(&release_key, release_block); }

static struct counter_block *claim_block(void)
{
    struct counter_block *b;
    for (b = atomic_load(&all_blocks); b; b = b->next) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&b->owned, &expected, 1))
            break;
    }
    if (!b) {
        b = calloc(1, sizeof *b);
        if (!b)
            abort(); /* a few dozen bytes per thread; nothing sensible remains if this fails */
        atomic_store(&b->owned, 1);
        b->next = atomic_load(&all_blocks);
        while (!atomic_compare_exchange_weak(&all_blocks, &b->next, b))
            ;
    }
    pthread_once(&release_key_once, make_release_key);
    pthread_setspecific(release_key, b);
    my_block = b;
    return b;
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
    for (struct counter_block *b = atomic_load(&all_blocks); b; b = b->next)
        for (int i = 0; i < GCH_COUNTER_COUNT; i++)
            out[i] += atomic_load_explicit(&b->value[i], memory_order_relaxed);
}

/* ---- the rule for calling MPI (gc_hooks.h) ---- */

static atomic_int user_ops;            /* user operators that exist (or are being created) */
static atomic_int user_op_reductions;  /* reductions with a user operator in flight */
static atomic_int hook_in_mpi;         /* GC hooks between gch_hook_mpi_begin and end */
static atomic_int mpi_closing;         /* MPI_Finalize is coming: the hook calls MPI no more */

static pthread_once_t barrier_once = PTHREAD_ONCE_INIT;
static int membarrier_ready;
static pthread_mutex_t page_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int *barrier_page;

static void prepare_barrier(void)
{
    membarrier_ready = syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    if (!membarrier_ready) {
        void *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            abort(); /* neither way to order other threads' memory: the rule cannot hold */
        barrier_page = p;
    }
}

/* A full memory barrier on every thread of the process: what a fence in gch_unsafe_mpi_begin
 * would give, paid here instead, once per operator created. membarrier (Linux 4.14); without
 * it, a protection change of a dirty page, whose TLB shootdown interrupts every CPU running a
 * thread of the process (CoreCLR's FlushProcessWriteBuffers does the same). */
static void process_wide_barrier(void)
{
    pthread_once(&barrier_once, prepare_barrier);
    if (membarrier_ready && syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
        return;
    if (!barrier_page)
        abort(); /* registered, then refused: the kernel broke its contract */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    pthread_mutex_lock(&page_lock);
    if (mprotect((void *)barrier_page, page, PROT_READ | PROT_WRITE) != 0)
        abort();
    (*barrier_page)++; /* dirty, so the kernel cannot skip the flush */
    if (mprotect((void *)barrier_page, page, PROT_NONE) != 0)
        abort();
    pthread_mutex_unlock(&page_lock);
}

bool gch_unsafe_mpi_begin(void)
{
    struct counter_block *b = my_block ? my_block : claim_block();
    atomic_store_explicit(&b->unsafe_mpi, 1, memory_order_relaxed);
    /* Only the compiler is kept from swapping the store and the load: gch_user_op_add's
     * process-wide barrier orders them against its increment and scan. */
    atomic_signal_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&user_ops, memory_order_relaxed) == 0)
        return true;
    atomic_store_explicit(&b->unsafe_mpi, 0, memory_order_relaxed);
    return false;
}

void gch_unsafe_mpi_end(void) { atomic_store_explicit(&my_block->unsafe_mpi, 0, memory_order_release); }

/* Once the count is raised and the barrier passed, a thread that enters a bracket sees the
 * count and refuses; one that entered before has its flag visible here. So, after every flag
 * is seen clear once, no MPI call begun GC-unsafe remains. */
RT_HOLDS_STACK_MARK void gch_user_op_add(void)
{
    atomic_fetch_add(&user_ops, 1);
    process_wide_barrier();
    struct counter_block *mine = my_block;
    void *mark = NULL;
    /* GC-safe: a thread in its MPI call may wait for a collection (coop) */
    void *cookie = mono_threads_enter_gc_safe_region_unbalanced(&mark);
    for (struct counter_block *b = atomic_load(&all_blocks); b; b = b->next)
        while (b != mine && atomic_load_explicit(&b->unsafe_mpi, memory_order_acquire))
            sched_yield();
    mono_threads_exit_gc_safe_region_unbalanced(cookie, &mark);
}

void gch_user_op_remove(void) { atomic_fetch_sub(&user_ops, 1); }

static void wait_for_hooks_out_of_mpi(void)
{
    while (atomic_load(&hook_in_mpi)) /* a sweep's non-blocking MPI calls: a short wait */
        sched_yield();
}

/* With gch_hook_mpi_begin, a Dekker pair (sequentially consistent on both sides): of a
 * reduction and a hook starting together, at least one sees the other. */
void gch_user_op_reduction_begin(void)
{
    atomic_fetch_add(&user_op_reductions, 1);
    wait_for_hooks_out_of_mpi();
}

void gch_user_op_reduction_end(void) { atomic_fetch_sub(&user_op_reductions, 1); }

bool gch_hook_mpi_begin(void)
{
    atomic_fetch_add(&hook_in_mpi, 1);
    if (atomic_load(&user_op_reductions) == 0 && !atomic_load(&mpi_closing))
        return true;
    atomic_fetch_sub(&hook_in_mpi, 1);
    return false;
}

/* The same Dekker pair with gch_hook_mpi_begin: a hook that entered first is waited for, one
 * that enters later sees the flag. */
void gch_close_mpi(void)
{
    atomic_store(&mpi_closing, 1);
    wait_for_hooks_out_of_mpi();
}

void gch_hook_mpi_end(void) { atomic_fetch_sub(&hook_in_mpi, 1); }

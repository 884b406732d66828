/* mpi_rule.c — the rule for calling MPI while a C# reduction operator may run inside it
 * (transfer.h), with the word each thread sets while it is inside an MPI call made GC-unsafe.
 *   Internal calls: "may run" means a user operator exists. Each MPI call is bracketed by
 * xfer_unsafe_mpi_begin/end, or made in a GC-safe region when begin refuses (XFER_MPI_BEGIN
 * does both; blocking calls always go GC-safe). Creating an operator raises the count first,
 * then waits until no bracket entered before is still open: no MPI call begun unguarded
 * outlasts the creation.
 *   The GC event: "may run" means a reduction with a user operator is in flight; the sweep
 * brackets its MPI calls with xfer_hook_mpi_begin/end, which keep such reductions out. */
#include "transfer_internal.h"

#include "gc_hooks.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The calling thread's word (gch_thread_word): set while it is inside an MPI call made GC-unsafe;
 * xfer_user_op_add reads every thread's. */
static __thread atomic_int *my_word __attribute__((tls_model("initial-exec")));

static atomic_int user_ops;           /* user operators that exist (or are being created) */
static atomic_int user_op_reductions; /* reductions with a user operator in flight */
static atomic_int hook_in_mpi;        /* GC events between xfer_hook_mpi_begin and end */
static atomic_int mpi_closing;        /* MPI_Finalize is coming: the GC event calls MPI no more */

static pthread_once_t barrier_once = PTHREAD_ONCE_INIT;
static int membarrier_ready;
static pthread_mutex_t page_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int *barrier_page;

static void prepare_barrier(void)
{
    membarrier_ready =
        syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    if (!membarrier_ready) {
        void *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            abort(); /* neither way to order other threads' memory: the rule cannot hold */
        barrier_page = p;
    }
}

/* A full memory barrier on every thread of the process: what a fence in xfer_unsafe_mpi_begin
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

bool xfer_unsafe_mpi_begin(void)
{
    if (xfer_huge_pages_staged_)
        xfer_huge_pages_submit();
    atomic_int *w = my_word ? my_word : (my_word = gch_thread_word());
    atomic_store_explicit(w, 1, memory_order_relaxed);
    /* Only the compiler is kept from swapping the store and the load: xfer_user_op_add's
     * process-wide barrier orders them against its increment and scan. */
    atomic_signal_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&user_ops, memory_order_relaxed) == 0)
        return true;
    atomic_store_explicit(w, 0, memory_order_relaxed);
    return false;
}

void xfer_unsafe_mpi_end(void) { atomic_store_explicit(my_word, 0, memory_order_release); }

/* Once the count is raised and the barrier passed, a thread that enters a bracket sees the
 * count and refuses; one that entered before has its flag visible here. So, after every flag
 * is seen clear once, no MPI call begun GC-unsafe remains. */
RT_HOLDS_STACK_MARK void xfer_user_op_add(void)
{
    atomic_fetch_add(&user_ops, 1);
    process_wide_barrier();
    void *mark = NULL;
    /* GC-safe: a thread in its MPI call may wait for a collection (coop) */
    void *cookie = mono_threads_enter_gc_safe_region_unbalanced(&mark);
    gch_wait_other_words_clear();
    mono_threads_exit_gc_safe_region_unbalanced(cookie, &mark);
}

void xfer_user_op_remove(void) { atomic_fetch_sub(&user_ops, 1); }

static void wait_for_hooks_out_of_mpi(void)
{
    while (atomic_load(&hook_in_mpi)) /* a sweep's non-blocking MPI calls: a short wait */
        sched_yield();
}

/* With xfer_hook_mpi_begin, a Dekker pair (sequentially consistent on both sides): of a
 * reduction and a hook starting together, at least one sees the other. */
void xfer_user_op_reduction_begin(void)
{
    atomic_fetch_add(&user_op_reductions, 1);
    wait_for_hooks_out_of_mpi();
}

void xfer_user_op_reduction_end(void) { atomic_fetch_sub(&user_op_reductions, 1); }

bool xfer_hook_mpi_begin(void)
{
    atomic_fetch_add(&hook_in_mpi, 1);
    if (atomic_load(&user_op_reductions) == 0 && !atomic_load(&mpi_closing))
        return true;
    atomic_fetch_sub(&hook_in_mpi, 1);
    return false;
}

/* The same Dekker pair with xfer_hook_mpi_begin: a hook that entered first is waited for, one
 * that enters later sees the flag. */
void xfer_close_mpi(void)
{
    atomic_store(&mpi_closing, 1);
    wait_for_hooks_out_of_mpi();
}

void xfer_hook_mpi_end(void) { atomic_fetch_sub(&hook_in_mpi, 1); }

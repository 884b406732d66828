/* huge_pages.c — large arrays moved into transparent huge pages, on a thread the GC never waits
 * for.
 *
 * Arrays of 4 MiB and more move faster in 2 MiB pages: fewer TLB misses in MPI's copies through
 * shared memory (ping-pong of 16 MiB ~1.9x faster, 64 MiB ~1.5x). Mono allocates them in the
 * large-object space, which never moves them, but in 4 KiB pages, already touched by then; so the
 * first transfer of such an array asks the kernel to collapse its 2 MiB-aligned part
 * (MADV_COLLAPSE, Linux >= 6.1; a kernel that refuses, older or THP "never", changes nothing).
 *
 * The collapse copies the array: seconds for 1 GiB. Done by the transferring thread, it held up
 * the transfer and, since madvise takes no signal until its range is done, every collection of
 * the process meanwhile. So it runs on a thread of its own that the runtime does not know: a
 * collection never waits for it, and the transfer proceeds in 4 KiB pages while the copy goes
 * on (the kernel keeps concurrent accesses right). The thread works one 2 MiB page per call, so
 * it stops within one page when MPI is closed. The array may be collected meanwhile: advice on
 * memory unmapped since fails harmlessly, and on memory reused since only changes its pages.
 *
 * A conversion (opi_buffers.c) only stages the array; the stage is handed to the thread when
 * the call enters MPI (a bracket), so a transfer that never reaches MPI, to or from ProcNull,
 * collapses nothing. */
#include "transfer_internal.h"

#include "ptr_map.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1 */
#endif

#define HUGE_PAGE_ARRAY_MIN ((size_t)4 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

enum { STAGED_MAX = 4, QUEUE_MAX = 64 };

typedef struct range {
    uintptr_t start, end; /* 2 MiB-aligned */
    const void *key;      /* the array's data address */
} range;

/* What this thread's call staged (a Sendrecv stages two arrays); count read by the brackets. */
__thread int xfer_huge_pages_staged_ __attribute__((tls_model("initial-exec")));
static __thread range staged[STAGED_MAX];

static ptr_map handed = PTR_MAP_INIT; /* data addresses of arrays given to the thread */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t work, idle; /* idle: the queue is empty and no copy is under way */
    range queue[QUEUE_MAX];
    unsigned head, count;
    int started, copying;
    atomic_int stopping; /* set under lock; also read between pages, without it */
    pthread_t thread;
} collapser = {.lock = PTHREAD_MUTEX_INITIALIZER,
               .work = PTHREAD_COND_INITIALIZER,
               .idle = PTHREAD_COND_INITIALIZER};

static _Atomic int64_t arrays_handed; /* MPStats.HugePageArrays */

int64_t xfer_huge_page_arrays(void) { return atomic_load(&arrays_handed); }

void xfer_huge_pages_stage(const char *data, size_t bytes)
{
    if (bytes < HUGE_PAGE_ARRAY_MIN || xfer_huge_pages_staged_ == STAGED_MAX ||
        ptr_map_get(&handed, data))
        return;
    uintptr_t start = ((uintptr_t)data + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t end = ((uintptr_t)data + bytes) & ~(HUGE_PAGE - 1);
    if (end > start)
        staged[xfer_huge_pages_staged_++] = (range){start, end, data};
}

void xfer_huge_pages_unstage(void) { xfer_huge_pages_staged_ = 0; }

static void *mark_handed(const void *key, void *ctx)
{
    (void)key;
    (void)ctx;
    return (void *)1;
}

static void *collapse_all(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&collapser.lock);
    for (;;) {
        while (!collapser.count && !collapser.stopping)
            pthread_cond_wait(&collapser.work, &collapser.lock);
        if (collapser.stopping)
            break;
        range r = collapser.queue[collapser.head];
        collapser.head = (collapser.head + 1) % QUEUE_MAX;
        collapser.count--;
        collapser.copying = 1;
        pthread_mutex_unlock(&collapser.lock);
        for (uintptr_t page = r.start; page < r.end && !atomic_load(&collapser.stopping);
             page += HUGE_PAGE)
            (void)madvise((void *)page, HUGE_PAGE, MADV_COLLAPSE); /* advice: refusal is fine */
        pthread_mutex_lock(&collapser.lock);
        collapser.copying = 0;
        if (!collapser.count)
            pthread_cond_broadcast(&collapser.idle);
    }
    pthread_cond_broadcast(&collapser.idle);
    pthread_mutex_unlock(&collapser.lock);
    return NULL;
}

/* The thread, with every signal blocked: signals meant for the process go to its own threads. */
static int start_thread(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&collapser.thread, NULL, collapse_all, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

void xfer_huge_pages_submit(void)
{
    int n = xfer_huge_pages_staged_;
    xfer_huge_pages_staged_ = 0;
    pthread_mutex_lock(&collapser.lock);
    if (!collapser.stopping && !collapser.started)
        collapser.started = start_thread() == 0 ? 1 : -1; /* -1: no thread, no collapse */
    for (int i = 0; i < n && collapser.started == 1 && !collapser.stopping; i++) {
        if (collapser.count == QUEUE_MAX || ptr_map_get(&handed, staged[i].key))
            continue; /* full: a later transfer of the array stages it again */
        collapser.queue[(collapser.head + collapser.count++) % QUEUE_MAX] = staged[i];
        ptr_map_get_or_build(&handed, staged[i].key, mark_handed, NULL);
        atomic_fetch_add(&arrays_handed, 1);
        pthread_cond_signal(&collapser.work);
    }
    pthread_mutex_unlock(&collapser.lock);
}

void xfer_huge_pages_wait(void)
{
    pthread_mutex_lock(&collapser.lock);
    while ((collapser.count || collapser.copying) && collapser.started == 1 && !collapser.stopping)
        pthread_cond_wait(&collapser.idle, &collapser.lock);
    pthread_mutex_unlock(&collapser.lock);
}

void xfer_huge_pages_stop(void)
{
    pthread_mutex_lock(&collapser.lock);
    collapser.stopping = 1;
    int joinable = collapser.started == 1;
    collapser.started = 0;
    pthread_cond_signal(&collapser.work);
    pthread_mutex_unlock(&collapser.lock);
    if (joinable)
        pthread_join(collapser.thread, NULL);
}

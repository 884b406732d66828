/* buffer_pool.c — native buffers for serialized graphs, reused: a stack that hands out a
 * buffer big enough (or the biggest, grown), and a GC-hook sweep that frees the buffers no one
 * has used since the previous collection, so a burst of large messages does not pin its memory
 * for the life of the process. The lock is never held across a Mono or MPI call. */
#include "transfer_internal.h"

#include "gc_hooks.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static xfer_buffer *pool;    /* most recently returned first */
static xfer_buffer *regions; /* xfer_region_take's, the same way */
static int64_t pooled;
#define REGION_MIN_BYTES ((size_t)1 << 20)
static __thread int in_pool __attribute__((tls_model("initial-exec")));

static void enter(void)
{
    pthread_mutex_lock(&lock);
    in_pool = 1;
}

static void leave(void)
{
    in_pool = 0;
    pthread_mutex_unlock(&lock);
}

xfer_buffer *xfer_buffer_take(size_t min_capacity)
{
    xfer_buffer *best = NULL, **best_link = NULL;
    enter();
    for (xfer_buffer **link = &pool; *link; link = &(*link)->next) {
        xfer_buffer *b = *link;
        if (!best || (best->capacity < min_capacity
                          ? b->capacity > best->capacity
                          : b->capacity >= min_capacity && b->capacity < best->capacity)) {
            best = b;
            best_link = link;
        }
    }
    if (best) {
        *best_link = best->next;
        pooled--;
    }
    leave();
    if (!best && !(best = calloc(1, sizeof *best)))
        return NULL;
    best->next = NULL;
    best->length = 0;
    if (best->capacity < min_capacity) {
        uint8_t *d = realloc(best->data, min_capacity);
        if (!d) {
            free(best->data);
            free(best);
            return NULL;
        }
        best->data = d;
        best->capacity = min_capacity;
    }
    return best;
}

xfer_buffer *xfer_region_take(void)
{
    enter();
    xfer_buffer *b = regions;
    if (b) {
        regions = b->next;
        pooled--;
    }
    leave();
    if (b) {
        b->next = NULL;
        b->length = 0;
        return b;
    }
    if (!(b = calloc(1, sizeof *b)))
        return NULL;
    /* as much address space as the system grants (strict overcommit charges it all) */
    for (size_t bytes = XFER_REGION_BYTES; bytes >= REGION_MIN_BYTES; bytes /= 2) {
        void *d = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (d != MAP_FAILED) {
            b->data = d;
            b->capacity = bytes;
            b->region = 1;
            return b;
        }
    }
    free(b);
    return NULL;
}

static void buffer_free(xfer_buffer *b)
{
    if (b->region)
        (void)munmap(b->data, b->capacity); /* cannot fail on a mapping this file made */
    else
        free(b->data);
    free(b);
}

void xfer_buffer_give(xfer_buffer *b)
{
    if (!b)
        return;
    b->last_used = gch_epoch();
    enter();
    xfer_buffer **list = b->region ? &regions : &pool;
    b->next = *list;
    *list = b;
    pooled++;
    leave();
}

int64_t xfer_pooled_buffers(void)
{
    enter();
    int64_t n = pooled;
    leave();
    return n;
}

void xfer_buffers_sweep(void)
{
    if (in_pool)
        return;
    uint64_t now = gch_epoch(); /* already counts the collection that is starting */
    xfer_buffer *stale = NULL;
    enter();
    xfer_buffer **lists[2] = {&pool, &regions};
    for (int k = 0; k < 2; k++) {
        for (xfer_buffer **link = lists[k]; *link;) {
            xfer_buffer *b = *link;
            if (b->last_used + 1 < now) { /* not used since the previous collection began */
                *link = b->next;
                b->next = stale;
                stale = b;
                pooled--;
            } else {
                link = &b->next;
            }
        }
    }
    leave();
    while (stale) {
        xfer_buffer *b = stale;
        stale = b->next;
        buffer_free(b);
        gch_count(GCH_POOLED_BUFFERS_FREED_BY_GC, 1);
    }
}

/* buffer_pool.c — native buffers for serialized graphs, reused: a stack that hands out a
 * buffer big enough (or the biggest, grown), and a GC-hook sweep that frees the buffers no one
 * has used since the previous collection, so a burst of large messages does not pin its memory
 * for the life of the process. The lock is never held across a Mono or MPI call. */
#include "gc_hooks.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gch_buffer *pool;       /* most recently returned first */
static int64_t pooled;
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

gch_buffer *gch_buffer_take(size_t min_capacity)
{
    gch_buffer *best = NULL, **best_link = NULL;
    enter();
    for (gch_buffer **link = &pool; *link; link = &(*link)->next) {
        gch_buffer *b = *link;
        if (!best || (best->capacity < min_capacity ? b->capacity > best->capacity
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

void gch_buffer_give(gch_buffer *b)
{
    if (!b)
        return;
    b->last_used = gch_epoch();
    enter();
    b->next = pool;
    pool = b;
    pooled++;
    leave();
}

int64_t gch_pooled_buffers(void)
{
    enter();
    int64_t n = pooled;
    leave();
    return n;
}

void gch_buffers_sweep(void)
{
    if (in_pool)
        return;
    uint64_t now = gch_epoch(); /* already counts the collection that is starting */
    gch_buffer *stale = NULL;
    enter();
    for (gch_buffer **link = &pool; *link;) {
        gch_buffer *b = *link;
        if (b->last_used + 1 < now) { /* not used since the previous collection began */
            *link = b->next;
            b->next = stale;
            stale = b;
            pooled--;
        } else {
            link = &b->next;
        }
    }
    leave();
    while (stale) {
        gch_buffer *b = stale;
        stale = b->next;
        free(b->data);
        free(b);
        gch_count(GCH_POOLED_BUFFERS_FREED_BY_GC, 1);
    }
}

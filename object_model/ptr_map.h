/* ptr_map.h — an insert-once map from a pointer to a pointer, for per-class plans: lookups take
 * no lock (a thread-free read of an open-addressed table); inserts build the value once under a
 * mutex; a full table is replaced by a larger copy and the old one is kept, since readers may
 * still be in it. Values are never removed (classes are never unloaded here). */
#ifndef PTR_MAP_H
#define PTR_MAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

struct ptr_map_table;

typedef struct ptr_map {
    struct ptr_map_table *_Atomic table;
    pthread_mutex_t lock;
    size_t count;
} ptr_map;

#define PTR_MAP_INIT                       \
    {                                      \
        NULL, PTHREAD_MUTEX_INITIALIZER, 0 \
    }

/* How a contended lock is waited for (NULL: pthread_mutex_lock). The runtime glue sets a wait
 * in a GC-safe region: build() calls Mono, where the builder may be stopped by a collection
 * while it holds the lock, and a waiter that stayed GC-unsafe would hold that collection up
 * for ever. */
void ptr_map_set_lock_wait(void (*wait)(pthread_mutex_t *lock));

/* The value for key, or NULL. */
void *ptr_map_get(ptr_map *m, const void *key);
/* The value for key, built by build(key, ctx) the first time (NULL when build fails). */
void *ptr_map_get_or_build(ptr_map *m, const void *key, void *(*build)(const void *key, void *ctx),
                           void *ctx);

#endif

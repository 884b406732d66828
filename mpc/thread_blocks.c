/* thread_blocks.c — see thread_blocks.h. */
#include "thread_blocks.h"

#include <stdlib.h>

static void release(void *block) { atomic_store(&((thread_block *)block)->owned, 0); }

/* Makes the pool's key once (pools are static: pthread_once takes no argument to tell them). */
static void make_key(thread_blocks *pool)
{
    static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;
    if (atomic_load_explicit(&pool->key_made, memory_order_acquire))
        return;
    pthread_mutex_lock(&key_lock);
    if (!atomic_load_explicit(&pool->key_made, memory_order_relaxed) &&
        pthread_key_create(&pool->release_key, release) == 0)
        atomic_store_explicit(&pool->key_made, 1, memory_order_release);
    pthread_mutex_unlock(&key_lock);
}

thread_block *thread_block_claim(thread_blocks *pool, size_t size)
{
    thread_block *b;
    for (b = atomic_load(&pool->all); b; b = b->next) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&b->owned, &expected, 1))
            break;
    }
    if (!b) {
        b = calloc(1, size);
        if (!b)
            abort();
        atomic_store(&b->owned, 1);
        b->next = atomic_load(&pool->all);
        while (!atomic_compare_exchange_weak(&pool->all, &b->next, b))
            ;
    }
    make_key(pool);
    if (atomic_load_explicit(&pool->key_made, memory_order_acquire))
        pthread_setspecific(pool->release_key, b);
    return b;
}

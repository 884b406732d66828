/* ptr_map.c — see ptr_map.h. */
#include "ptr_map.h"

#include <stdint.h>
#include <stdlib.h>

struct entry {
    const void *_Atomic key;
    void *value;
};

struct ptr_map_table {
    size_t mask;
    struct entry slot[];
};

static size_t hash(const void *key) { return ((uintptr_t)key >> 3) * 0x9E3779B97F4A7C15ull; }

static void *find(const struct ptr_map_table *t, const void *key)
{
    for (size_t i = hash(key) & t->mask;; i = (i + 1) & t->mask) {
        const void *k =
            atomic_load_explicit(&((struct ptr_map_table *)t)->slot[i].key, memory_order_acquire);
        if (!k)
            return NULL;
        if (k == key)
            return t->slot[i].value;
    }
}

void *ptr_map_get(ptr_map *m, const void *key)
{
    struct ptr_map_table *t = atomic_load_explicit(&m->table, memory_order_acquire);
    return t ? find(t, key) : NULL;
}

/* The value is written before the key is published, so a reader that sees the key sees it. */
static void place(struct ptr_map_table *t, const void *key, void *value)
{
    size_t i = hash(key) & t->mask;
    while (atomic_load_explicit(&t->slot[i].key, memory_order_relaxed))
        i = (i + 1) & t->mask;
    t->slot[i].value = value;
    atomic_store_explicit(&t->slot[i].key, key, memory_order_release);
}

static _Atomic(void (*)(pthread_mutex_t *)) lock_wait;

void ptr_map_set_lock_wait(void (*wait)(pthread_mutex_t *lock)) { atomic_store(&lock_wait, wait); }

static void lock(pthread_mutex_t *m)
{
    if (pthread_mutex_trylock(m) == 0)
        return;
    void (*wait)(pthread_mutex_t *) = atomic_load(&lock_wait);
    if (wait)
        wait(m);
    else
        pthread_mutex_lock(m);
}

void *ptr_map_get_or_build(ptr_map *m, const void *key, void *(*build)(const void *key, void *ctx),
                           void *ctx)
{
    void *v = ptr_map_get(m, key);
    if (v)
        return v;
    lock(&m->lock);
    struct ptr_map_table *t = atomic_load(&m->table);
    if (t && (v = find(t, key))) {
        pthread_mutex_unlock(&m->lock);
        return v;
    }
    if (!t || (m->count + 1) * 2 > t->mask + 1) { /* keep the load factor under 1/2 */
        size_t capacity = t ? (t->mask + 1) * 2 : 256;
        struct ptr_map_table *bigger =
            calloc(1, sizeof *bigger + capacity * sizeof bigger->slot[0]);
        if (!bigger) {
            pthread_mutex_unlock(&m->lock);
            return NULL;
        }
        bigger->mask = capacity - 1;
        for (size_t i = 0; t && i <= t->mask; i++) {
            const void *k = atomic_load(&t->slot[i].key);
            if (k)
                place(bigger, k, t->slot[i].value);
        }
        atomic_store(&m->table, bigger);
        t = bigger;
    }
    v = build(key, ctx);
    if (v) {
        place(t, key, v);
        m->count++;
    }
    pthread_mutex_unlock(&m->lock);
    return v;
}

/* gc_hooks.h — cooperation with Mono's garbage collector: the GC event, the collection epoch
 * that lets waits yield to a coming collection, yielding, and the counters behind MP.Stats.
 * Knows nothing of MPI: what must happen at a collection's start registers itself
 * (gch_on_collection). */
#ifndef GC_HOOKS_H
#define GC_HOOKS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <mono/metadata/object-forward.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gch_counter {
    GCH_OPERATIONS,            /* transfers started */
    GCH_PINS_TAKEN,            /* explicit pins created */
    GCH_PINS_AVOIDED,          /* transfers that needed no pin */
    GCH_PINS_RELEASED_BY_WAIT, /* released when the transfer completed in Wait/Test */
    GCH_PINS_RELEASED_BY_GC,   /* released by the GC hook */
    GCH_POOLED_BUFFERS_FREED_BY_GC,
    GCH_COUNTER_COUNT
} gch_counter;

/* Registers the GC event callback with the running Mono runtime, and on_thread_stop (or NULL),
 * which runs on each thread the runtime detaches, still attached, to release what the thread
 * kept for itself (GC handles). Idempotent; 0 on success. */
int gch_install(void (*on_thread_stop)(void));

/* Adds fn to what the GC event runs at each collection's start (PRE_STOP_WORLD: the world still
 * runs; fn may take locks and make non-blocking calls, but must not wait for a thread the
 * collection may stop, nor on one holding the GC lock). At most GCH_SWEEPS; 0 on success. */
#define GCH_SWEEPS 4
int gch_on_collection(void (*fn)(void));

/* Number of collections that have begun (counted before the world stops, so a thread that
 * polls it can get out of the collector's way before it is asked to stop). */
uint64_t gch_epoch(void);

/* Lets a collection that another thread has requested run now: the calling thread (GC-unsafe,
 * in an internal call) passes through a GC-safe region and is suspended there if needed. The
 * caller must hold no object address outside its stack across this call. */
void gch_yield_to_gc(void);

/* Locks m, waiting in a GC-safe region (the caller is GC-unsafe, in an internal call): a
 * collection may stop the holder while it holds m, and must not wait for this thread. */
void gch_lock_gc_safe(pthread_mutex_t *m);

/* Adds n to a counter. Per-thread storage: no atomic read-modify-write on the hot path. */
void gch_count(gch_counter c, int64_t n);

/* The calling thread's word: one int per thread that the layer above keeps and any thread may
 * read (transfer/'s "inside an MPI call made GC-unsafe"); it lives in the thread's counter block,
 * which outlives the thread and is adopted, word cleared by its last owner, by a new one. */
atomic_int *gch_thread_word(void);
/* Returns once every other thread's word has been seen 0 (each once, in turn). */
void gch_wait_other_words_clear(void);

/* Sums every thread's counters. Counters only grow. */
void gch_snapshot(int64_t out[GCH_COUNTER_COUNT]);

#ifdef __cplusplus
}
#endif
#endif

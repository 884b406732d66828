/* gc_hooks.h — cooperation with Mono's garbage collector: the collection epoch that lets
 * waits yield to a coming collection, and the counters behind MP.Stats.
 * (The pin registry and buffer-pool sweep attach to the same GC event.) */
#ifndef GC_HOOKS_H
#define GC_HOOKS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gch_counter {
    GCH_OPERATIONS,            /* OPI transfers started */
    GCH_PINS_TAKEN,            /* explicit pins created */
    GCH_PINS_AVOIDED,          /* transfers that needed no pin */
    GCH_PINS_RELEASED_BY_WAIT, /* released when the transfer completed in Wait/Test */
    GCH_PINS_RELEASED_BY_GC,   /* released by the GC hook */
    GCH_POOLED_BUFFERS_FREED_BY_GC,
    GCH_COUNTER_COUNT
} gch_counter;

/* Registers the GC event callback with the running Mono runtime. Idempotent; 0 on success. */
int gch_install(void);

/* Number of collections that have begun (counted before the world stops, so a thread that
 * polls it can get out of the collector's way before it is asked to stop). */
uint64_t gch_epoch(void);

/* Adds n to a counter. Per-thread storage: no atomic read-modify-write on the hot path. */
void gch_count(gch_counter c, int64_t n);

/* Sums every thread's counters. Counters only grow. */
void gch_snapshot(int64_t out[GCH_COUNTER_COUNT]);

#ifdef __cplusplus
}
#endif
#endif

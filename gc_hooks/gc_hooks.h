/* gc_hooks.h — cooperation with Mono's garbage collector: the collection epoch that lets
 * waits yield to a coming collection, and the counters behind MP.Stats.
 * (The pin registry and buffer-pool sweep attach to the same GC event.) */
#ifndef GC_HOOKS_H
#define GC_HOOKS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mpc.h"

#include <mono/metadata/object-forward.h>

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

/* Registers the GC event callback with the running Mono runtime, and on_thread_stop (or NULL),
 * which runs on each thread the runtime detaches, still attached, to release what the thread
 * kept for itself (GC handles). Idempotent; 0 on success. */
int gch_install(void (*on_thread_stop)(void));

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

/* Sums every thread's counters. Counters only grow. */
void gch_snapshot(int64_t out[GCH_COUNTER_COUNT]);

/* ---- pin registry (pin_registry.c) ----
 * One record per non-blocking transfer still running when its call returned: the MPI request,
 * each object whose data MPI reads or writes (up to GCH_TRANSFER_OBJECTS: a point-to-point
 * transfer has one, a collective its send and receive arrays, a barrier none), held in a slot
 * of a pinned root — alive and in place at every collection until released, with no GC handle
 * — and a weak handle on the managed Request. The GC hook releases the objects of transfers
 * MPI reports finished (MPI_Request_get_status: the request stays for Wait/Test), and finishes
 * transfers whose Request was collected. */

#define GCH_TRANSFER_OBJECTS 2

struct gch_buffer;

typedef struct gch_transfer_info {
    uint32_t elem_size; /* bytes per element, for Status.Count */
    int32_t is_send;    /* non-zero: the Status comes from tag and bytes here (sends, collectives) */
    int32_t tag;        /* sends: the tag sent with */
    int64_t bytes;      /* sends: the bytes sent */
    struct gch_buffer *buffer; /* native bytes MPI reads or writes (a serialized graph), or NULL:
                                  owned by the record, given back to the pool when it goes */
} gch_transfer_info;

/* Registers a started transfer with its objects, objs[0..nobjs) (NULL entries: none; nobjs <=
 * GCH_TRANSFER_OBJECTS; the caller's stack holds them until then), early[i] a GC handle already
 * pinning objs[i] (MOTOR_PIN_POLICY=every) or 0, pinned[i] whether objs[i] counts as a pin
 * (it has an early handle or the GC could move it), and the weak handle owner; the registry owns every handle (and
 * info->buffer) from then on. With no owner
 * (0) nobody waits for the transfer: the GC hook finishes it, as one whose Request was
 * collected. *id carries a generation: a
 * stale id (record completed and reused) is refused, never mistaken for another. */
int gch_transfer_add(MPI_Request req, MonoObject *const *objs, const uint32_t *early, const int *pinned, int nobjs,
                     uint32_t owner, const gch_transfer_info *info, int64_t *id);
/* Takes the transfer for the calling thread (Wait, Test, Cancel): the GC hook leaves it alone
 * and other threads get MPC_ERR_REQUEST until gch_transfer_release. *req is a copy of the
 * request handle (MPI only changes it when it completes the request). */
int gch_transfer_acquire(int64_t id, MPI_Request *req, gch_transfer_info *info);
/* The same, for a caller that handles a refusal itself: MPC_ERR_REQUEST with no error recorded,
 * *busy true while another thread holds the transfer, false when it has completed already. */
int gch_transfer_acquire_or_busy(int64_t id, MPI_Request *req, gch_transfer_info *info, bool *busy);
/* Gives it back; when completed (MPI freed the request), the record and its handles go. */
void gch_transfer_release(int64_t id, int completed);
/* Bytes of the buffers of transfers registered with no owner, not yet finished. */
int64_t gch_unowned_bytes(void);
/* Frees the transfers with no owner that MPI has finished, oldest first, up to the first still
 * running (they finish about in the order they started): what the GC hook would do, from a
 * thread that may call MPI (the caller keeps the rule in gc_hooks.h). */
void gch_transfers_reap_unowned(void);
/* Records still registered (transfers not yet completed by Wait/Test or finished). */
int64_t gch_transfers_live(void);
/* The GC hook's sweep; calls MPI only inside gch_hook_mpi_begin/end. */
void gch_transfers_sweep(void);
/* Before MPI_Finalize, on the thread that ends MPI, once no hook calls MPI (gch_close_mpi):
 * nobody will wait for what is still registered. Finished transfers are completed, and
 * receives still waiting for a message are cancelled, so that MPI_Finalize does not find them
 * pending (UCX prints a line for each). Running sends and collectives, receives being filled
 * and transfers another thread holds are left to MPI_Finalize. */
void gch_transfers_close(void);

/* ---- buffer pool (buffer_pool.c): native buffers for serialized graphs ---- */

typedef struct gch_buffer {
    uint8_t *data;
    size_t length, capacity;
    int region; /* gch_region_take's: reserved address space, capacity its size */
    uint64_t last_used; /* the epoch when it was given back */
    struct gch_buffer *next;
} gch_buffer;

/* A buffer of at least min_capacity bytes (length 0), from the pool or new; NULL when out of
 * memory. Give it back with gch_buffer_give. */
gch_buffer *gch_buffer_take(size_t min_capacity);
void gch_buffer_give(gch_buffer *b);
/* A receive buffer for a message of a size not known yet (OIrecv posts a real MPI receive so that
 * it takes its place in MPI's matching order): address space reserved with MAP_NORESERVE, not
 * memory, GCH_REGION_BYTES or as much as the system grants down to 1 MiB; pages are committed
 * only as messages fill them. Given back with gch_buffer_give and pooled like the buffers: the
 * pages stay for the next receive (returning them after each one made the next fault them in
 * again: a 1 MiB OIrecv ping-pong went from 0.74 to 1.1 ms), and the GC hook's sweep unmaps a
 * region unused since the previous collection. NULL when no address space is left. */
#define GCH_REGION_BYTES ((size_t)16 << 30)
gch_buffer *gch_region_take(void);
int64_t gch_pooled_buffers(void);
/* The GC hook's sweep: frees pooled buffers unused since the previous collection. */
void gch_buffers_sweep(void);

/* ---- the rule for calling MPI (gc_hooks.c) ----
 * A C# reduction operator (Op.Create) runs managed code inside MPI; where MPICH is built with a
 * global critical section it runs holding MPICH's lock, and it may allocate, so collect. Then a
 * thread blocked on that lock while GC-unsafe (in an internal call) never reaches a safepoint
 * and the collection waits for it forever, and a GC hook blocked on it holds the GC lock the
 * operator waits for. The rule: while a C# operator may run inside MPI, nothing calls MPI
 * GC-unsafe or from the GC hook. It covers every MPI call that may take MPICH's lock; those
 * that take none (MPI_Comm_rank/size, MPI_Wtime, MPI_Error_string/class, MPI_Initialized,
 * MPI_Finalized, MPI_Query_thread) are exempt.
 *   Internal calls: "may run" means a user operator exists. Each MPI call is bracketed by
 * gch_unsafe_mpi_begin/end, or made in a GC-safe region when begin refuses (opi_call_mpi does
 * both; blocking calls always go GC-safe). Creating an operator raises the count first, then
 * waits until no bracket entered before is still open: no MPI call begun unguarded outlasts
 * the creation.
 *   The GC hook: "may run" means a reduction with a user operator is in flight; the sweep
 * brackets its MPI calls with gch_hook_mpi_begin/end, which keep such reductions out. */

/* true: the caller may call MPI GC-unsafe now, and calls gch_unsafe_mpi_end right after;
 * false: a user operator exists, so the call goes in a GC-safe region. The cost: two stores
 * to the thread's own counter block and one relaxed load — no fence, no atomic
 * read-modify-write (gch_user_op_add pays for the ordering). */
bool gch_unsafe_mpi_begin(void);
void gch_unsafe_mpi_end(void);
/* Raises the count before a user operator exists, then waits (GC-safe; the caller, in an
 * internal call, holds no object address outside its stack) until every other thread has left
 * the MPI call it began GC-unsafe, if any. */
void gch_user_op_add(void);
/* Lowers it once the operator's MPI handle is freed (or its creation failed). */
void gch_user_op_remove(void);
/* Around the MPI call of a reduction with a user operator, inside its GC-safe region: begin
 * waits until the GC hook is out of MPI and keeps it out until end. */
void gch_user_op_reduction_begin(void);
void gch_user_op_reduction_end(void);
/* The GC hook's bracket: true when no reduction with a user operator is in flight, and none
 * starts before gch_hook_mpi_end; false: no MPI now. */
bool gch_hook_mpi_begin(void);
void gch_hook_mpi_end(void);
/* Before MPI_Finalize: from the return on, no GC hook calls MPI (one running inside MPI is
 * waited for). MPI_Finalize frees what a sweep's MPI calls would read, and a collection started
 * by another thread (the finalizer's, a user's) may run its hook at any moment of it. */
void gch_close_mpi(void);

#ifdef __cplusplus
}
#endif
#endif

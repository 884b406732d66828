/* transfer.h — a transfer's whole life, from its start to the release of what it held: how an
 * internal call enters MPI (brackets), how it waits (generation-aware deferred pinning), the
 * registry of non-blocking transfers still running when their call returned (and what pins
 * their objects meanwhile), the pool of native buffers for serialized graphs, and the rule for
 * calling MPI while a C# reduction operator may run inside it. Speaks MPI requests and statuses
 * (mpc) and opaque objects; what a C# caller sees of them is opi's business. */
#ifndef TRANSFER_H
#define TRANSFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mono_private.h"
#include "mpc_internal.h" /* mpc.h and the rest of mpc the layers use */

#include <mono/metadata/object-forward.h>

/* Objects one transfer reads or writes in place: a point-to-point transfer has one, a
 * collective its send and receive arrays, a barrier none. A transfer with more (a neighbourhood
 * collective's regions may lie in an array per neighbour) holds them in an xfer_hold instead. */
#define XFER_MAX_OBJECTS 2

/* Registers the registry's and the buffer pool's sweeps with the GC event (gc_hooks). */
int xfer_install(void);

/* ---- the pinning policy (wait.c) ---- */

/* true when the GC could move obj while a transfer is in flight. */
bool xfer_may_move(MonoObject *obj);
/* Whether small objects of the old generation can move (the runtime's evacuation threshold). */
void xfer_set_old_generation_moves(bool moves);
bool xfer_old_generation_moves(void);
/* MOTOR_PIN_POLICY=every: pin every transfer's objects before it starts, movable or not, as
 * external bindings do. Only for measuring what the generation-aware policy saves. */
void xfer_set_pin_every(bool every);
bool xfer_pin_every(void);

/* ---- entering MPI: brackets around the plain call (wait.c, mpi_rule.c) ----
 * Internal calls run GC-unsafe. A non-blocking MPI call (a start, test, probe, cancel, free)
 * is made in place when the rule below allows it — always, unless a C# operator exists — and
 * otherwise in a GC-safe region whose stack mark holds the call's objects (which pins them
 * for the region's length):
 *     XFER_MPI_BEGIN(obj);  rc = mpc_isend(...);  XFER_MPI_END;
 * A blocking MPI call always runs GC-safe, so that collections and other threads proceed:
 *     XFER_BLOCKING_BEGIN(send, recv);  rc = mpc_allreduce(...);  XFER_BLOCKING_END;
 * Between BEGIN and END only the MPI call and plain C run: no object is touched, no Mono
 * function called. The objects (up to XFER_MAX_OBJECTS, NULL entries allowed) are those whose
 * data MPI reads or writes. A function holding a bracket holds a stack mark: declare it
 * RT_HOLDS_STACK_MARK (the sanitizer build copies the frame). Every MPI call an internal call
 * makes goes through a bracket or the waits below, except the few that take no lock in MPICH
 * (MPI_Comm_rank/size, MPI_Wtime, MPI_Error_string/class, MPI_Initialized/Finalized). */
typedef struct xfer_bracket {
    bool gc_safe;
    void *cookie;
    uint32_t pins[XFER_MAX_OBJECTS];
    int nobjs;
    MonoObject *mark[XFER_MAX_OBJECTS + 1]; /* the GC-safe region's stack mark */
} xfer_bracket;

bool xfer_unsafe_mpi_begin(void);
void xfer_unsafe_mpi_end(void);
void xfer_enter_gc_safe(xfer_bracket *b, MonoObject *const *objs, int nobjs);
void xfer_leave_gc_safe(xfer_bracket *b);

static inline void xfer_mpi_enter(xfer_bracket *b, MonoObject *const *objs, int nobjs)
{
    b->gc_safe = !xfer_unsafe_mpi_begin();
    if (b->gc_safe)
        xfer_enter_gc_safe(b, objs, nobjs);
}
static inline void xfer_mpi_leave(xfer_bracket *b)
{
    if (b->gc_safe)
        xfer_leave_gc_safe(b);
    else
        xfer_unsafe_mpi_end();
}

#define XFER_OBJECTS_(...) ((MonoObject *const[]){NULL, __VA_ARGS__} + 1)
#define XFER_NOBJS_(...) \
    ((int)(sizeof((MonoObject *const[]){NULL, __VA_ARGS__}) / sizeof(MonoObject *)) - 1)
#define XFER_MPI_BEGIN(...)         \
    do {                            \
        xfer_bracket xfer_bracket_; \
    xfer_mpi_enter(&xfer_bracket_, XFER_OBJECTS_(__VA_ARGS__), XFER_NOBJS_(__VA_ARGS__))
#define XFER_MPI_END                \
    xfer_mpi_leave(&xfer_bracket_); \
    }                               \
    while (0)
#define XFER_BLOCKING_BEGIN(...)    \
    do {                            \
        xfer_bracket xfer_bracket_; \
    xfer_enter_gc_safe(&xfer_bracket_, XFER_OBJECTS_(__VA_ARGS__), XFER_NOBJS_(__VA_ARGS__))
#define XFER_BLOCKING_END               \
    xfer_leave_gc_safe(&xfer_bracket_); \
    }                                   \
    while (0)

/* ---- huge pages (huge_pages.c) ----
 * A large array (4 MiB and more) that this call is about to transfer: staged, and handed to a
 * thread of the core's own that moves it into transparent huge pages when the call next enters
 * MPI (a bracket), so a call that never reaches MPI (a transfer to or from ProcNull) hands
 * nothing. Each array once; smaller ones are ignored. Nothing here waits or enters Mono. */
void xfer_huge_pages_stage(const char *data, size_t bytes);
/* Forgets what this thread staged: the call ends without entering MPI. */
void xfer_huge_pages_unstage(void);
/* Arrays handed to the thread so far. */
int64_t xfer_huge_page_arrays(void);
/* Waits until the thread has done every array handed to it (for tests and benchmarks that look
 * at the pages). Blocks: call it GC-safe. */
void xfer_huge_pages_wait(void);

/* ---- waiting (wait.c) ---- */

/* Completes nreqs started requests whose buffers lie in objs[0..nobjs) (NULL entries: none).
 * Polls while no collection is coming; once it must let the GC run, waits in a GC-safe region
 * whose stack mark holds the objects. Returns the first error; every request is complete on
 * return. statuses may be NULL (sends). */
int xfer_complete(mpc_request *reqs, int nreqs, MonoObject *const *objs, int nobjs,
                  mpc_status *statuses);
/* The same for requests of registered transfers (their records hold their objects), each
 * request's code in rcs[i] and its status in statuses[i]; keep[0..nkeep) are objects the caller
 * reads after the wait (its managed arguments), held in place while it waits GC-safe. A
 * completed request's handle in reqs becomes MPI_REQUEST_NULL (a persistent one's record keeps
 * its own). Returns the first error. */
int xfer_complete_each(mpc_request *reqs, int nreqs, MonoObject *const *keep, int nkeep,
                       mpc_status *statuses, int *rcs);
/* Blocks until a message matching (source, tag) — MPI's values — is waiting; with msg, the
 * probe is matched: the message is then *msg's alone. The caller notes what it waits for
 * (mpc_hang_note: a Probe, or the receive the probe serves). */
int xfer_probe_wait(int source, int tag, mpc_comm comm, mpc_status *status, mpc_message *msg);

/* ---- the registry of transfers in flight (registry.c) ----
 * One record per non-blocking transfer still running when its call returned: the MPI request,
 * its objects, held in slots of a pinned root (alive and in place at every collection until
 * released, with no GC handle), and a weak handle on its owner (the managed Request). The GC
 * event releases the objects of transfers MPI reports finished and finishes transfers whose
 * owner was collected. */

struct xfer_buffer;

#define XFER_FILE_ACCESS 2 /* xfer_info.is_send of a file's read or write (opi_file.c) */
typedef struct xfer_info {
    uint32_t elem_size; /* bytes per element, for a status's count */
    int32_t is_send;    /* non-zero: the status comes from tag and bytes here (sends, collectives);
                           XFER_FILE_ACCESS: an MPI-IO access, never cancelled at the end */
    int32_t tag;        /* sends: the tag sent with */
    int64_t bytes;      /* sends: the bytes sent; receives: the buffer's */
    struct xfer_buffer *buffer; /* native bytes MPI reads or writes (a serialized graph), or NULL:
                                   owned by the record, given back to the pool when it goes */
    struct xfer_hold *hold;     /* objects beyond the record's XFER_MAX_OBJECTS, or NULL: owned by
                                   the record, released with its objects */
    /* What arrived, checked by whoever completes the transfer for its owner (Wait, Test, the
     * progress engine, or the start when it finished at once: opi's opi_completed), before the
     * record and its buffer go; rc is the completion's code, the result replaces it. NULL: no
     * check. The non-blocking v-collectives compare the block sizes their buffer's headers got
     * with the counts. A transfer the GC event finishes (its owner was collected) is not. */
    int (*verify)(const struct xfer_info *info, int rc);
} xfer_info;

/* ---- transfers of more objects than XFER_MAX_OBJECTS (hold.c) ----
 * A bracket's stack mark, a wait's anchor and a record's slots hold up to XFER_MAX_OBJECTS
 * objects. A transfer whose buffers lie in more (a neighbourhood collective with an array per
 * neighbour) passes none of them there and holds them all in a hold, with GC handles: a pinned
 * one for each object the GC could move (xfer_may_move; every object under
 * MOTOR_PIN_POLICY=every), counted as pins; with keep_alive a plain (strong, not pinning) one for
 * each other object, which a transfer that outlives its call needs to keep it alive. Objects
 * that cannot move and need no keeping are only counted as pins avoided. */
typedef struct xfer_hold xfer_hold;
/* The i-th object of a transfer (NULL: none), read again at each call from where the GC keeps
 * it current (a managed array): every handle taken is a point where a collection may run and
 * move an object not held yet, so a C copy of an earlier reading may be stale. */
typedef MonoObject *(*xfer_object_at)(void *ctx, int i);
/* Holds the distinct objects at(ctx, 0 .. n-1) (an object listed twice is held once). From the
 * return on, none of them moves (until xfer_hold_release), so addresses into them computed after
 * it stay valid. *out is NULL when nothing needed a handle. MPC_ERR_NO_MEMORY (recorded) when out
 * of memory; then nothing is held. */
int xfer_hold_take(xfer_object_at at, void *ctx, int n, bool keep_alive, xfer_hold **out);
/* Releases h's handles (NULL: nothing), counting each pin released for reason
 * (GCH_PINS_RELEASED_BY_WAIT or _BY_GC), and frees h. */
void xfer_hold_release(xfer_hold *h, int reason);

/* A long-lived MPI object over obj's data (a window's exposed array): a pinned GC handle, movable
 * or not (it keeps obj alive too), counted as a pin until xfer_unpin_for_life (0: nothing). */
uint32_t xfer_pin_for_life(MonoObject *obj);
void xfer_unpin_for_life(uint32_t handle);
/* A plain (strong, not pinning) handle keeping obj alive, for an object the collector cannot move
 * that MPI uses after its call returned (a window's origin array); 0: nothing to let go. */
uint32_t xfer_keep_alive(MonoObject *obj);
void xfer_let_go(uint32_t handle);

/* MOTOR_PIN_POLICY=every: pins objs[0..nobjs) (NULL entries: none) before a transfer starts,
 * pins[i] = 0 where nothing was pinned; xfer_early_unpin releases them if it does not start. */
void xfer_early_pins(MonoObject *const *objs, int nobjs, uint32_t *pins);
void xfer_early_unpin(const uint32_t *pins, int nobjs);

/* What a started transfer's first test found. */
typedef struct xfer_started {
    mpc_request req;
    int test_rc; /* the test's error: the transfer failed, and so completed */
    int done;    /* finished at once */
    mpc_status st;
} xfer_started;

/* Tracks a started transfer reading or writing objs[0..nobjs) (NULL entries: none), with
 * early_pins from xfer_early_pins (NULL: none), owned by owner (NULL: nobody waits for it; the
 * GC event finishes it). Finished at once (or not trackable, then completed here): *id = -1,
 * and *rc and *st are the completion's; info's buffer and hold stay the caller's. Otherwise the
 * registry holds it under *id, with its objects held in place and alive (counted as pins where
 * the GC could move them) and info (its buffer and hold too) — and *rc = MPC_OK. */
void xfer_track(const xfer_started *s, MonoObject *const *objs, int nobjs,
                const uint32_t *early_pins, MonoObject *owner, const xfer_info *info, int64_t *id,
                int *rc, mpc_status *st);
/* Registers a started transfer of native memory only (info->buffer: a serialized graph), owned
 * by owner (NULL: nobody waits for it — a buffered send — and the GC event finishes it).
 * MPC_ERR_NO_MEMORY when the registry cannot grow; then nothing was registered. */
int xfer_track_native(mpc_request req, MonoObject *owner, const xfer_info *info, int64_t *id);
/* Takes the transfer for the calling thread (Wait, Test, Cancel): the GC event leaves it alone
 * and other threads get MPC_ERR_REQUEST until xfer_release. *req is a copy of the request
 * handle (MPI only changes it when it completes the request). */
int xfer_acquire(int64_t id, mpc_request *req, xfer_info *info);
/* The same, for a caller that handles a refusal itself: MPC_ERR_REQUEST with no error recorded,
 * *busy true while another thread holds the transfer, false when it has completed already. */
int xfer_acquire_or_busy(int64_t id, mpc_request *req, xfer_info *info, bool *busy);
/* Gives it back; when completed (MPI freed the request), the record and its handles go. */
void xfer_release(int64_t id, int completed);
/* xfer_acquire_or_busy of ids[0..n) under one lock: acquired[i] says whether ids[i] was taken
 * (then reqs[i] and infos[i] are filled); busy[i] (busy may be NULL) whether another thread
 * held it. Refusals record no error. Returns how many were taken. */
int xfer_acquire_many(const int64_t *ids, int n, mpc_request *reqs, xfer_info *infos, int *acquired,
                      int *busy);
/* xfer_release(ids[i], 1) of every ids[i] with acquired[i], under one lock: they completed. */
void xfer_release_completed(const int64_t *ids, int n, const int *acquired);
/* Bytes of the buffers of transfers registered with no owner, not yet finished. */
int64_t xfer_unowned_bytes(void);
/* Frees the transfers with no owner that MPI has finished, oldest first, up to the first still
 * running (they finish about in the order they started). Calls MPI: inside a bracket. */
void xfer_reap_unowned(void);
/* Records still registered (transfers not yet completed by Wait/Test or finished, and persistent
 * requests not yet freed). */
int64_t xfer_live(void);
/* Before MPI_Finalize, on the thread that ends MPI: no GC event calls MPI from the return on
 * (one inside MPI is waited for), matched messages dropped unreceived are received (their
 * discarding receives waited for, up to a bound: dropped.c), then what is still registered is
 * finished where it can be — finished transfers completed, receives still waiting for a message
 * cancelled — so that MPI_Finalize does not find them pending. */
void xfer_close(void);

/* ---- matched messages dropped unreceived (dropped.c) ---- */

/* Records a matched message (of bytes bytes, from its probe) that nobody will receive: it is
 * received into a pooled buffer and discarded at the next safe point (xfer_discard_dropped, the
 * GC event, xfer_close). Calls no MPI and takes no lock: safe from a finalizer at any moment.
 * MPC_ERR_NO_MEMORY when it cannot be recorded. */
int xfer_message_drop(mpc_message msg, int64_t bytes);
/* From an internal call (GC-unsafe, any thread MPI allows to call it): starts the discarding
 * receives of what was recorded and frees those finished, when MPI is running and not closing. A
 * few loads when nothing is pending. */
void xfer_discard_dropped(void);

/* ---- persistent requests (registry.c) ----
 * A persistent request (Comm.SendInit / RecvInit) keeps one record for its whole life, from its
 * init to its Dispose or the collection of its Prequest, and counts in xfer_live meanwhile. It
 * is INACTIVE between uses, holding no object: the array may move then, and the next start gives
 * MPI the array's address anew when it has moved (opi/opi_persistent.c). From a start to the
 * completion Wait or Test reports it is ACTIVE, its array held in its slot like any transfer's
 * (xfer_acquire, xfer_release and the sweep treat it as any record), and a completed use leaves
 * it INACTIVE, not freed. The registry makes no MPI call for it but in the GC event's sweep and
 * xfer_close (MPI_Request_free of a request whose Prequest was collected, or of one abandoned by
 * Dispose once it finished); the internal calls make theirs in brackets. */
typedef struct xfer_persist {
    mpc_request req;       /* MPI's persistent request; MPI_REQUEST_NULL with MPI_PROC_NULL */
    char *data;            /* the address MPI's request was made with */
    ptrdiff_t data_offset; /* data's offset in its object: where the data is once it has moved */
    MPI_Count count;       /* what MPI is given: (data, count, type) */
    MPI_Datatype type;
    int32_t peer, tag; /* MPI's values (MPI_PROC_NULL, MPI_ANY_SOURCE, MPI_ANY_TAG) */
    mpc_comm comm;
} xfer_persist;

/* Registers a persistent request made by MPI_Send_init / MPI_Recv_init (p->req; none for
 * MPI_PROC_NULL), INACTIVE, owned by owner (the Prequest) through a weak handle: once the owner
 * is collected, the GC event frees the request, or lets a running use finish first. info as for
 * xfer_track (its status fields serve every use). MPC_ERR_NO_MEMORY when the registry cannot
 * grow; then nothing was registered. */
int xfer_persist_add(const xfer_persist *p, MonoObject *owner, const xfer_info *info, int64_t *id);
/* Takes an INACTIVE persistent request for a start on the calling thread: obj (its array) is
 * held in its slot from here on, alive and in place at every collection, with early (a GC handle
 * from xfer_early_pins, or 0); *p and *info are copies. MPC_ERR_REQUEST, with the error recorded,
 * when a use is active (not yet completed by Wait or Test), another thread holds it, or it was
 * freed (MPI finalised). */
int xfer_persist_take(int64_t id, MonoObject *obj, uint32_t early, xfer_persist *p,
                      xfer_info *info);
/* Gives it back after the start, with p->req and p->data as they now are (a new MPI request when
 * the array had moved). running: ACTIVE, the object still held, counted as a pin when pinned (the
 * GC could move it, or early pinned it); otherwise (finished at once, or not started) INACTIVE,
 * the object let go. */
void xfer_persist_give(int64_t id, const xfer_persist *p, int running, int pinned);
/* Dispose: takes the request for freeing whatever its use's state; *active: a use runs (MPI has
 * not reported it complete to Wait or Test). false when there is nothing to take: freed already
 * (MPI finalised), or held by another thread (a Wait, a Test, a start), which then abandons it
 * as it lets go — the GC event frees it once MPI reports it finished. */
bool xfer_persist_take_for_free(int64_t id, xfer_persist *p, xfer_info *info, int *active);
/* After xfer_persist_take_for_free. finished: the caller freed the MPI request, and the record
 * goes (its object let go). Otherwise (a use still running) it is abandoned: its object stays
 * held until the GC event finds the use finished, completes it and frees the request. */
void xfer_persist_drop(int64_t id, int finished);

/* ---- native buffers for serialized graphs (buffer_pool.c) ---- */

typedef struct xfer_buffer {
    uint8_t *data;
    size_t length, capacity;
    int region;         /* xfer_region_take's: reserved address space, capacity its size */
    uint64_t last_used; /* the collection epoch when it was given back */
    struct xfer_buffer *next;
} xfer_buffer;

/* A buffer of at least min_capacity bytes (length 0), from the pool or new; NULL when out of
 * memory. Give it back with xfer_buffer_give. */
xfer_buffer *xfer_buffer_take(size_t min_capacity);
void xfer_buffer_give(xfer_buffer *b);
/* A receive buffer for a message of a size not known yet (OIrecv posts a real MPI receive so that
 * it takes its place in MPI's matching order): address space reserved with MAP_NORESERVE, not
 * memory, XFER_REGION_BYTES or as much as the system grants down to 1 MiB; pages are committed
 * only as messages fill them. Given back with xfer_buffer_give and pooled like the buffers: the
 * pages stay for the next receive (returning them after each one made the next fault them in
 * again: a 1 MiB OIrecv ping-pong went from 0.74 to 1.1 ms), and the GC event's sweep unmaps a
 * region unused since the previous collection. NULL when no address space is left. */
#define XFER_REGION_BYTES ((size_t)16 << 30)
xfer_buffer *xfer_region_take(void);
int64_t xfer_pooled_buffers(void);

/* ---- C# reduction operators inside MPI (mpi_rule.c) ----
 * A C# operator (Op.Create) runs managed code inside MPI; where MPICH is built with a global
 * critical section it runs holding MPICH's lock, and it may allocate, so collect. Then a thread
 * blocked on that lock while GC-unsafe never reaches a safepoint and the collection waits for it
 * forever, and a GC event blocked on it holds the GC lock the operator waits for. The rule:
 * while a C# operator may run inside MPI, nothing calls MPI GC-unsafe (the brackets go GC-safe)
 * or from the GC event (it skips its MPI calls). */

/* Raises the count before a user operator exists, then waits (GC-safe; the caller, in an
 * internal call, holds no object address outside its stack) until every other thread has left
 * the MPI call it began GC-unsafe, if any. */
void xfer_user_op_add(void);
/* Lowers it once the operator's MPI handle is freed (or its creation failed). */
void xfer_user_op_remove(void);
/* Around the MPI call of a reduction with a user operator, inside its GC-safe region: begin
 * waits until the GC event is out of MPI and keeps it out until end. */
void xfer_user_op_reduction_begin(void);
void xfer_user_op_reduction_end(void);

#endif

/* opi_internal.h — shared between the files of the Object Passing Interface. Not installed. */
#ifndef OPI_INTERNAL_H
#define OPI_INTERNAL_H

#include <mono/metadata/object.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "class_plan.h"
#include "error_record.h"
#include "gc_hooks.h"
#include "icall_table.h"
#include "mpc.h"
#include "opi_constants.h"
#include "opi_errors.h"

/* ---- the bytes of a transfer (opi_buffers.c) ---- */

/* Learns the array layout from the running runtime; fails rather than guessing. */
int opi_layout_init(void);
/* The plan of obj's class (non-NULL obj); NULL only when out of memory. OPI moves an instance
 * as raw bytes only when plan->raw_refusal is NULL. */
const rt_class_plan *opi_plan_for(MonoObject *obj);

/* The bytes an OPI transfer reads or writes in place. */
typedef struct opi_buffer {
    char *data;
    size_t bytes;
    uint32_t elem_size; /* for Status.Count */
} opi_buffer;

/* The C# parameters a range comes from: the array, its offset and its count. A failed check
 * names them in the error record (ParamName, and the message). */
typedef struct opi_range_names {
    const char *array, *offset, *count;
} opi_range_names;

/* Whole transportable object; OPI_ERR_NULL_ARGUMENT / OPI_ERR_NOT_TRANSPORTABLE otherwise,
 * recorded as about name, the C# parameter obj came from. */
int opi_buffer_whole_as(MonoObject *obj, const char *name, opi_buffer *out);
/* [offset, offset+count) of a 1-D transportable array, bounds-checked. */
int opi_buffer_range_as(MonoObject *array, int32_t offset, int32_t count, const opi_range_names *names,
                        opi_buffer *out);
/* The same for the usual parameter names: obj; array, offset, count. */
static inline int opi_buffer_whole(MonoObject *obj, opi_buffer *out)
{
    return opi_buffer_whole_as(obj, "obj", out);
}
static inline int opi_buffer_range(MonoObject *array, int32_t offset, int32_t count, opi_buffer *out)
{
    return opi_buffer_range_as(array, offset, count, &(opi_range_names){"array", "offset", "count"}, out);
}

/* ---- the wait policy (opi_wait.c) ---- */

/* true when the GC could move obj while a transfer is in flight: the pinning policy. */
bool opi_may_move(MonoObject *obj);
void opi_set_old_generation_moves(bool moves);
bool opi_old_generation_moves(void);
/* MOTOR_PIN_POLICY=every: pin every transfer's object before it starts, movable or not, as
 * external bindings do. Only for measuring what the generation-aware policy saves. */
void opi_set_pin_every_transfer(bool every);
bool opi_pin_every_transfer(void);

#define OPI_MAX_OBJECTS 2

/* Completes nreqs started requests whose buffers lie in objs[0..nobjs) (NULL entries: none;
 * nobjs <= OPI_MAX_OBJECTS). Generation-aware deferred pinning: polls while no collection is
 * coming; once it must let the GC run, pins what could move and waits in a GC-safe region.
 * Returns the first error; every request is complete on return. statuses may be NULL (sends). */
int opi_complete(mpc_request *reqs, int nreqs, MonoObject **objs, int nobjs, mpc_status *statuses);


/* Blocks until a message matching (source, tag) — MPI's wildcards, as check_source leaves
 * them — is waiting; GC-friendly. With msg, the probe is matched: the message is then *msg's
 * alone. */
int opi_probe_wait(int source, int tag, mpc_comm comm, mpc_status *status, mpc_message *msg);

/* Runs a blocking MPI call GC-safe, so that collections and other threads proceed while it
 * blocks; the buffers it uses lie in objs[0..nobjs) (NULL entries: none, nobjs <=
 * OPI_MAX_OBJECTS), which the region's stack mark holds — and so pins, for no more than a
 * stack slot (opi_wait.c). Collectives use this rather than MPI's non-blocking collectives
 * plus opi_complete: in MPICH 4.0 those cost ~0.5 µs more per small call — except when waits
 * yield (an oversubscribed host), as MPI's blocking calls spin (opi_collectives.c). */
typedef int (*opi_blocking_fn)(void *arg);
int opi_run_gc_safe(opi_blocking_fn fn, void *arg, MonoObject **objs, int nobjs);
/* How an internal call makes a non-blocking MPI call (a start, test, probe, cancel, free):
 * GC-unsafe when the rule in gc_hooks.h allows it — always, unless a C# operator exists —
 * otherwise through opi_run_gc_safe with the same objects. Every MPI call an internal call
 * makes goes through this, opi_run_gc_safe (blocking calls) or opi_complete / opi_probe_wait,
 * except the few that take no lock in MPICH (gc_hooks.h). */
int opi_call_mpi(opi_blocking_fn fn, void *arg, MonoObject **objs, int nobjs);
/* MPI_Barrier on comm, waited for as the wait policy says (mpc_wait_mode(): yielding, a barrier
 * started non-blocking and completed by opi_complete; otherwise MPI's own, GC-safe). */
int opi_barrier_wait(MPI_Comm comm);

/* ---- argument checks shared by the internal calls ---- */

/* System.MP's wildcards (MP.AnySource, MP.AnyTag) and MP.ProcNull, the rank that makes a
 * transfer a no-op (MPI_PROC_NULL). MPICH numbers them otherwise (its MPI_PROC_NULL is -1, our
 * AnySource): the checks below translate System.MP's values into MPI's; a ProcNull status is
 * OPI's own (opi_proc_null_status). OPI_ANY_SOURCE, OPI_ANY_TAG, OPI_PROC_NULL: opi_constants.h. */

/* Record a refused rank (code MPC_ERR_DEST, _SOURCE or _ROOT) or tag, with the value and the
 * valid range, as about argument (opi_icalls.c). Return the code. */
int opi_rank_error(int code, const char *argument, int32_t rank, int32_t size);
int opi_tag_error(const char *argument, int32_t tag, int wildcard_allowed);

/* Checks a receive's source and tag (whose C# parameter is tag_name), and turns System.MP's
 * wildcards and MP.ProcNull into MPI's: the one place where they are translated (mpc takes
 * MPI's values). */
static inline int check_source_as(int32_t size, int32_t *source, int32_t *tag, const char *tag_name)
{
    if (*source != OPI_ANY_SOURCE && *source != OPI_PROC_NULL && (*source < 0 || *source >= size))
        return opi_rank_error(MPC_ERR_SOURCE, "source", *source, size);
    if (*tag != OPI_ANY_TAG && (*tag < 0 || *tag > mpc_tag_ub()))
        return opi_tag_error(tag_name, *tag, 1);
    if (*source == OPI_ANY_SOURCE)
        *source = MPI_ANY_SOURCE;
    else if (*source == OPI_PROC_NULL)
        *source = MPI_PROC_NULL;
    if (*tag == OPI_ANY_TAG)
        *tag = MPI_ANY_TAG;
    return MPC_OK;
}
static inline int check_source(int32_t size, int32_t *source, int32_t *tag)
{
    return check_source_as(size, source, tag, "tag");
}

/* A send's destination (MP.ProcNull becomes MPI_PROC_NULL) and tag. */
static inline int check_dest_as(int32_t size, int32_t *dest, int32_t tag, const char *tag_name)
{
    if (*dest != OPI_PROC_NULL && (*dest < 0 || *dest >= size))
        return opi_rank_error(MPC_ERR_DEST, "dest", *dest, size);
    if (tag < 0 || tag > mpc_tag_ub())
        return opi_tag_error(tag_name, tag, 0);
    if (*dest == OPI_PROC_NULL)
        *dest = MPI_PROC_NULL;
    return MPC_OK;
}
static inline int check_dest(int32_t size, int32_t *dest, int32_t tag)
{
    return check_dest_as(size, dest, tag, "tag");
}

static inline int check_comm(int32_t comm)
{
    if (comm != MPI_COMM_NULL)
        return MPC_OK;
    return error_record(MPC_ERR_COMM_NULL, NULL, "the communicator has been disposed");
}
static inline int check_root(int32_t size, int32_t root)
{
    return root < 0 || root >= size ? opi_rank_error(MPC_ERR_ROOT, "root", root, size) : MPC_OK;
}

/* Records what a failed receive's MPI error means when MPI reports a truncation: the message
 * (from st's source with st's tag, when st is not NULL) was longer than the bytes (elements of
 * elem_size) that `what` holds. Returns rc. */
int opi_receive_failed(int rc, const mpc_status *st, const char *what, size_t bytes, uint32_t elem_size);

/* Broadcasts native memory (no managed object involved), GC-safe. */
int opi_native_bcast(void *buf, size_t bytes, int root, MPI_Comm comm);

/* ---- reduction operators (opi_ops.c) ---- */

/* MPI's built-in operators as System.MP.Op numbers them: X(NAME, MPI operator, family); the
 * code is the position in the list (the contract test checks Op.NAME's code). */
#define OPI_BUILTIN_OPS(X)              \
    X(SUM, MPI_SUM, ARITHMETIC)         \
    X(PROD, MPI_PROD, ARITHMETIC)       \
    X(MIN, MPI_MIN, ARITHMETIC)         \
    X(MAX, MPI_MAX, ARITHMETIC)         \
    X(LAND, MPI_LAND, LOGICAL)          \
    X(LOR, MPI_LOR, LOGICAL)            \
    X(BAND, MPI_BAND, BITWISE)          \
    X(BOR, MPI_BOR, BITWISE)            \
    X(BXOR, MPI_BXOR, BITWISE)

#define OPI_OP_ENUM(name, op, family) OP_##name,
enum { OPI_BUILTIN_OPS(OPI_OP_ENUM) OP_BUILTINS };
#undef OPI_OP_ENUM

/* The MPI operator and datatype for reducing arrays of plan's element type with operator code
 * (System.MP.Op's numbering); OPI_ERR_OP when MPI does not define it for that type. */
int opi_op_resolve(int32_t code, const rt_class_plan *elements, MPI_Op *op, MPI_Datatype *dt);

/* ---- internal calls (opi_icalls.h, icall_table.c) ---- */

/* The counters MP.Stats returns, in the order of its array (MPStats.Index on the C# side; the
 * contract test checks names and positions). */
#define OPI_STATS(X)                                    \
    X(OPERATIONS) X(PINS_TAKEN) X(PINS_AVOIDED)         \
    X(PINS_RELEASED_BY_WAIT) X(PINS_RELEASED_BY_GC)     \
    X(PINS_LIVE) X(COLLECTIONS) X(POOLED_BUFFERS)       \
    X(POOLED_BUFFERS_FREED_BY_GC) X(PENDING_REQUESTS)

#define OPI_STAT_ENUM(name) STAT_##name,
enum { OPI_STATS(OPI_STAT_ENUM) STAT_COUNT };
#undef OPI_STAT_ENUM

/* Mirrors System.MP.StatusData (the contract test checks size and offsets). */
typedef struct opi_status {
    int32_t source;
    int32_t tag;
    int32_t count;
    int32_t cancelled;
    int64_t bytes;
    int32_t error; /* non-blocking start: the transfer finished at once, with this error */
    int32_t reserved;
} opi_status;

/* Fills a managed Status from a completed receive or probe (count = bytes / elem_size); returns
 * OPI_ERR_PARTIAL_ELEMENT when the bytes are not a whole number of elements. */
int opi_fill_status(opi_status *out, const mpc_status *st, uint32_t elem_size);
/* The status of any transfer or probe with MP.ProcNull: Source MP.ProcNull, Tag MP.AnyTag,
 * Count = Bytes = 0. Filled by OPI, not read from MPI (MPICH 4.0 gets it wrong). */
void opi_proc_null_status(opi_status *out);

/* The table MOTOR_ICALLS expands to (icall_table.c). */
typedef struct opi_icall {
    const char *name;      /* "System.MP.MPDirect::Name" */
    const char *signature; /* "IC_I32 (IC_I32, IC_OBJ)": the table's return and parameter types */
    const void *fn;
} opi_icall;
extern const opi_icall opi_icall_table[];
extern const size_t opi_icall_count;

/* ---- non-blocking transfers (opi_icalls.c) ---- */

/* A test (or cancel) of an acquired request, made through opi_call_mpi: opi_test_request sets
 * done and st. No object: the registry's slot holds the transfer's. */
typedef struct opi_request_call {
    mpc_request req;
    int done;
    mpc_status st;
} opi_request_call;
int opi_test_request(void *call);

/* MOTOR_PIN_POLICY=every: pins objs[0..nobjs) (NULL entries: none) before a transfer starts,
 * pins[i] = 0 where nothing was pinned; opi_early_unpin releases them if it does not start. */
void opi_early_pins(MonoObject **objs, int nobjs, uint32_t *pins);
void opi_early_unpin(const uint32_t *pins, int nobjs);
/* A non-blocking transfer or collective that has just started and been tested once (test_rc,
 * done, st: the outcome), reading or writing objs[0..nobjs) (NULL entries: none; nobjs <=
 * GCH_TRANSFER_OBJECTS), with early_pins from opi_early_pins. Finished at once: *id = -1 and
 * *status is filled (an error in status->error, described with `what`, the buffer it was
 * about). Otherwise the transfer goes into the pin registry under *id with its objects (held
 * in place and alive there; counted as pins where the GC could move them) and a weak handle on
 * owner (the managed Request). Returns MPC_OK: from here on, errors belong to the completion. */
int opi_track_transfer(mpc_request req, int test_rc, int done, const mpc_status *st, MonoObject **objs, int nobjs,
                       const uint32_t *early_pins, MonoObject *owner, const gch_transfer_info *info,
                       const char *what, int64_t *id, opi_status *status);

#endif

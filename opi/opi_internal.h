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
#include "mpc_internal.h"
#include "opi_constants.h"
#include "opi_errors.h"
#include "transfer.h"

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
    /* What MPI is given: (data, count, type). Contiguous bytes (a whole object, a range):
     * count = bytes of MPI_BYTE. A region: data is its first element, count 1 of the region's
     * cached datatype (mpc/datatypes.c). */
    MPI_Count count;
    MPI_Datatype type;
    size_t offset; /* data - the object's address: see opi_buffer_rebase */
} opi_buffer;

/* A collection may run inside opi_buffer_region_as (the first use of a shape builds its MPI
 * datatype, GC-safe when C# operators exist) and move objects whose buffers were computed
 * before. A call that computes
 * several buffers re-reads each one's address, from the object it came from, after the last. */
static inline void opi_buffer_rebase(opi_buffer *b, MonoObject *obj)
{
    b->data = (char *)obj + b->offset;
}

/* The C# parameters a range comes from: the array, its offset and its count. A failed check
 * names them in the error record (ParamName, and the message). */
typedef struct opi_range_names {
    const char *array, *offset, *count;
} opi_range_names;

/* Whole transportable object; OPI_ERR_NULL_ARGUMENT / OPI_ERR_NOT_TRANSPORTABLE otherwise,
 * recorded as about name, the C# parameter obj came from. */
int opi_buffer_whole_as(MonoObject *obj, const char *name, opi_buffer *out);
/* [offset, offset+count) of a 1-D transportable array, bounds-checked. */
int opi_buffer_range_as(MonoObject *array, int32_t offset, int32_t count,
                        const opi_range_names *names, opi_buffer *out);
/* The C# parameters a region comes from: the array and the Region. */
typedef struct opi_region_names {
    const char *array, *region;
} opi_region_names;
/* The elements of a 1-D or multi-dimensional transportable array that region (the int[] spec of
 * System.MP.Region: [stride, ndims, starts[ndims], sizes[ndims]], a size -1 for a whole
 * dimension) selects, checked against the array's rank and bounds before anything moves. */
int opi_buffer_region_as(MonoObject *array, MonoObject *region, const opi_region_names *names,
                         opi_buffer *out);
/* Whether two regions (each as opi_buffer_region_as takes it) share no element: MPC_OK when they
 * are of different arrays or disjoint (boxes that miss each other in some dimension; strided
 * sets with no common index), else OPI_ERR_SAME_OBJECT naming b's region and an element of
 * both. Checks each region against its array as opi_buffer_region_as does. For a transfer that
 * reads one and writes the other (Sendrecv, neighbourhood exchanges). */
int opi_regions_disjoint(MonoObject *array_a, MonoObject *region_a, const opi_region_names *a,
                         MonoObject *array_b, MonoObject *region_b, const opi_region_names *b);
/* The same for the usual parameter names: obj; array, offset, count. */
static inline int opi_buffer_whole(MonoObject *obj, opi_buffer *out)
{
    return opi_buffer_whole_as(obj, "obj", out);
}
static inline int opi_buffer_range(MonoObject *array, int32_t offset, int32_t count,
                                   opi_buffer *out)
{
    return opi_buffer_range_as(array, offset, count, &(opi_range_names){"array", "offset", "count"},
                               out);
}

/* ---- argument checks shared by the internal calls ---- */

/* System.MP's wildcards (MP.AnySource, MP.AnyTag) and MP.ProcNull, the rank that makes a
 * transfer a no-op (MPI_PROC_NULL). MPICH numbers them otherwise (its MPI_PROC_NULL is -1, our
 * AnySource): the checks below translate System.MP's values into MPI's; a ProcNull status is
 * OPI's own (opi_proc_null_status). OPI_ANY_SOURCE, OPI_ANY_TAG, OPI_PROC_NULL: opi_constants.h. */

/* Record a refused rank (code MPC_ERR_DEST, _SOURCE or _ROOT) or tag, with the value and the
 * valid range, as about argument (opi_status.c). Return the code. */
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
int opi_receive_failed(int rc, const mpc_status *st, const char *what, size_t bytes,
                       uint32_t elem_size);

/* Broadcasts native memory (no managed object involved), GC-safe. */
int opi_native_bcast(void *buf, size_t bytes, int root, MPI_Comm comm);

/* ---- files (opi_file.c) ---- */

/* At the end of MPI, before the registry closes: closes the files a program did not dispose, in
 * the order they were opened (collective: every rank does the same), with a warning on stderr. */
void opi_files_close_at_exit(void);

/* ---- reduction operators (opi_ops.c) ---- */

/* MPI's built-in operators as System.MP.Op numbers them: X(NAME, MPI operator, family); the
 * code is the position in the list (the contract test checks Op.NAME's code). The ONE_SIDED ones
 * (Op.Replace, Op.NoOp) are for RMA windows only: opi_op_resolve refuses them. */
#define OPI_BUILTIN_OPS(X)             \
    X(SUM, MPI_SUM, ARITHMETIC)        \
    X(PROD, MPI_PROD, ARITHMETIC)      \
    X(MIN, MPI_MIN, ARITHMETIC)        \
    X(MAX, MPI_MAX, ARITHMETIC)        \
    X(LAND, MPI_LAND, LOGICAL)         \
    X(LOR, MPI_LOR, LOGICAL)           \
    X(BAND, MPI_BAND, BITWISE)         \
    X(BOR, MPI_BOR, BITWISE)           \
    X(BXOR, MPI_BXOR, BITWISE)         \
    X(REPLACE, MPI_REPLACE, ONE_SIDED) \
    X(NO_OP, MPI_NO_OP, ONE_SIDED)

#define OPI_OP_ENUM(name, op, family) OP_##name,
enum { OPI_BUILTIN_OPS(OPI_OP_ENUM) OP_BUILTINS };
#undef OPI_OP_ENUM

/* The MPI operator and datatype for reducing arrays of plan's element type with operator code
 * (System.MP.Op's numbering); OPI_ERR_OP when MPI does not define it for that type, and for
 * the one-sided operators (Op.Replace, Op.NoOp), which no reduction takes. */
int opi_op_resolve(int32_t code, const rt_class_plan *elements, MPI_Op *op, MPI_Datatype *dt);
/* The same for one-sided operations (Window.Accumulate, FetchAndOp): Op.Replace and Op.NoOp too
 * (any primitive type), a user operator OPI_ERR_NOT_SUPPORTED (MPI applies only built-in ones
 * to a window). */
int opi_op_resolve_one_sided(int32_t code, const rt_class_plan *elements, MPI_Op *op,
                             MPI_Datatype *dt);

/* ---- internal calls (opi_icalls.h, icall_table.c) ---- */

/* The counters MP.Stats returns, in the order of its array (MPStats.Index on the C# side; the
 * contract test checks names and positions). */
/* clang-format off */
#define OPI_STATS(X)                \
    X(OPERATIONS)                   \
    X(PINS_TAKEN)                   \
    X(PINS_AVOIDED)                 \
    X(PINS_RELEASED_BY_WAIT)        \
    X(PINS_RELEASED_BY_GC)          \
    X(PINS_LIVE)                    \
    X(COLLECTIONS)                  \
    X(POOLED_BUFFERS)               \
    X(POOLED_BUFFERS_FREED_BY_GC)   \
    X(PENDING_REQUESTS)             \
    X(HUGE_PAGE_ARRAYS)
/* clang-format on */

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

/* ---- statuses and the start of non-blocking transfers (opi_status.c) ---- */

/* A non-blocking transfer or collective that has just started and been tested once (s), reading
 * or writing objs[0..nobjs), tracked by xfer_track (early_pins from xfer_early_pins, or NULL).
 * Finished at once: *id = -1 and *status is filled (an error in status->error, described with
 * `what`, the buffer it was about). Otherwise the transfer is registered under *id with a weak
 * handle on owner (the managed Request). Returns MPC_OK: from here on, errors belong to the
 * completion. */
int opi_track_transfer(const xfer_started *s, MonoObject *const *objs, int nobjs,
                       const uint32_t *early_pins, MonoObject *owner, const xfer_info *info,
                       const char *what, int64_t *id, opi_status *status);
/* The status of a completed registered transfer: a receive's from MPI's, a send's from info. */
int opi_request_status(opi_status *out, const mpc_status *st, const xfer_info *info);
/* A transfer has just completed with code rc for its owner: its own check (info->verify), made
 * while its buffer is still the record's — before xfer_release — whose code replaces rc. Every
 * path that completes a registered transfer for a caller calls it. */
static inline int opi_completed(const xfer_info *info, int rc)
{
    return info->verify ? info->verify(info, rc) : rc;
}

/* ---- one-sided communication (opi_window.c) ---- */

/* At exit, before MPI_Finalize (GC-safe, MPI calls only): frees the windows not disposed, in
 * creation order, each with a warning on stderr. */
void opi_window_close_all(void);

#endif

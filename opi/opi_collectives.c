/* opi_collectives.c — zero-copy collectives on managed arrays. Each validates its arguments,
 * then runs MPI's blocking collective in a GC-safe region (XFER_BLOCKING_BEGIN): arrays the GC
 * could move are pinned first (nursery arrays; never large or, under motor, old ones), and
 * other threads' collections proceed while the call blocks — also those a C# reduction
 * operator triggers from inside MPI. */
#include "opi_icalls.h"

#include "gc_hooks.h"
#include "layout.h"
#include "names.h"

#include <stdio.h>
#include <stdlib.h>

/* A whole transportable array, the C# parameter name: its bytes and plan. */
static int array_arg(MonoObject *a, const char *name, opi_buffer *b, const rt_class_plan **plan)
{
    int rc = opi_buffer_whole_as(a, name, b);
    if (rc != MPC_OK)
        return rc;
    *plan = opi_plan_for(a);
    if ((*plan)->shape != RT_ARRAY)
        return error_record(OPI_ERR_NOT_TRANSPORTABLE, name, "%s must be an array", name);
    return MPC_OK;
}

/* Elements of an array argument, for messages. */
static size_t elements(const opi_buffer *b) { return b->elem_size ? b->bytes / b->elem_size : 0; }

/* Two arrays a and b (C# parameters a_name, b_name) of one collective: both transportable, the
 * same element type, and not the same array unless same_ok (in place). */
static int array_pair(MonoObject *a, const char *a_name, MonoObject *b, const char *b_name,
                      opi_buffer *ab, opi_buffer *bb, const rt_class_plan **plan, int same_ok)
{
    const rt_class_plan *bp;
    int rc;
    if ((rc = array_arg(a, a_name, ab, plan)) || (rc = array_arg(b, b_name, bb, &bp)))
        return rc;
    if ((*plan)->elem_class != bp->elem_class) {
        char *at = rt_class_name((*plan)->elem_class), *bt = rt_class_name(bp->elem_class);
        error_record(OPI_ERR_TYPE_MISMATCH, b_name,
                     "%s holds %s elements and %s %s: they must be of one element type", a_name,
                     at ? at : "?", b_name, bt ? bt : "?");
        free(at);
        free(bt);
        return OPI_ERR_TYPE_MISMATCH;
    }
    if (a == b && !same_ok)
        return error_record(OPI_ERR_ALIAS, b_name,
                            "%s and %s are the same array: this collective needs two", a_name,
                            b_name);
    return MPC_OK;
}

enum collective_kind {
    BCAST,
    SCATTER,
    GATHER,
    ALLGATHER,
    ALLTOALL,
    REDUCE,
    ALLREDUCE,
    SCAN,
    EXSCAN,
    REDUCE_SCATTER_BLOCK,
    VEXCHANGE /* the non-blocking v-collectives' exchange (mpc_ivexchange), started only */
};

struct collective {
    enum collective_kind kind;
    const void *send;
    void *recv; /* BCAST: the buffer */
    size_t n;   /* bytes (per rank for the byte-wise ones) or reduction elements */
    MPI_Datatype dt;
    MPI_Op op;
    int root;
    MPI_Comm comm;
};

/* Makes c's blocking MPI call: inside a bracket. */
static int call_collective(const struct collective *c)
{
    switch (c->kind) {
    case BCAST: return mpc_bcast(c->recv, c->n, c->root, c->comm);
    case SCATTER: return mpc_scatter(c->send, c->recv, c->n, c->root, c->comm);
    case GATHER: return mpc_gather(c->send, c->recv, c->n, c->root, c->comm);
    case ALLGATHER: return mpc_allgather(c->send, c->recv, c->n, c->comm);
    case ALLTOALL: return mpc_alltoall(c->send, c->recv, c->n, c->comm);
    case REDUCE: return mpc_reduce(c->send, c->recv, c->n, c->dt, c->op, c->root, c->comm);
    case ALLREDUCE: return mpc_allreduce(c->send, c->recv, c->n, c->dt, c->op, c->comm);
    case SCAN: return mpc_scan(c->send, c->recv, c->n, c->dt, c->op, c->comm);
    case EXSCAN: return mpc_exscan(c->send, c->recv, c->n, c->dt, c->op, c->comm);
    case REDUCE_SCATTER_BLOCK:
        return mpc_reduce_scatter_block(c->send, c->recv, c->n, c->dt, c->op, c->comm);
    case VEXCHANGE: break; /* no blocking form */
    }
    return RT_ERR_RUNTIME;
}

RT_HOLDS_STACK_MARK int opi_native_bcast(void *buf, size_t bytes, int root, MPI_Comm comm)
{
    int rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_bcast(buf, bytes, root, comm);
    XFER_BLOCKING_END;
    return rc;
}

/* Starts c's non-blocking MPI call (c NULL: a barrier on comm; VEXCHANGE: the exchange x) and,
 * with test, tests it once: one entry into MPI, inside a bracket. */
static int start_collective(const struct collective *c, mpc_vexchange *x, MPI_Comm comm, int test,
                            xfer_started *s)
{
    int rc;
    if (!c) {
        rc = mpc_ibarrier(comm, &s->req);
    } else {
        switch (c->kind) {
        case BCAST: rc = mpc_ibcast(c->recv, c->n, c->root, c->comm, &s->req); break;
        case ALLGATHER: rc = mpc_iallgather(c->send, c->recv, c->n, c->comm, &s->req); break;
        case ALLTOALL: rc = mpc_ialltoall(c->send, c->recv, c->n, c->comm, &s->req); break;
        case REDUCE:
            rc = mpc_ireduce(c->send, c->recv, c->n, c->dt, c->op, c->root, c->comm, &s->req);
            break;
        case ALLREDUCE:
            rc = mpc_iallreduce(c->send, c->recv, c->n, c->dt, c->op, c->comm, &s->req);
            break;
        case SCATTER: rc = mpc_iscatter(c->send, c->recv, c->n, c->root, c->comm, &s->req); break;
        case GATHER: rc = mpc_igather(c->send, c->recv, c->n, c->root, c->comm, &s->req); break;
        case SCAN: rc = mpc_iscan(c->send, c->recv, c->n, c->dt, c->op, c->comm, &s->req); break;
        case EXSCAN:
            rc = mpc_iexscan(c->send, c->recv, c->n, c->dt, c->op, c->comm, &s->req);
            break;
        case REDUCE_SCATTER_BLOCK:
            rc = mpc_ireduce_scatter_block(c->send, c->recv, c->n, c->dt, c->op, c->comm, &s->req);
            break;
        case VEXCHANGE: rc = mpc_ivexchange(c->send, c->recv, x, c->comm, &s->req); break;
        default: return RT_ERR_RUNTIME;
        }
    }
    if (rc == MPC_OK && test)
        s->test_rc = mpc_test(&s->req, &s->done, &s->st);
    return rc;
}

/* When waits yield (mpc_wait_mode(): the host's ranks outnumber its cores, or MOTOR_WAIT=yield), a
 * blocking collective starts MPI's non-blocking one and waits for it in xfer_complete, which
 * gives the core away: MPICH's blocking collectives busy-poll inside MPI, and ch4 has no setting
 * that makes them yield (MPIR_CVAR_POLLS_BEFORE_YIELD is ch3's; at 4 ranks on 2 cores it left
 * the native Jacobi bench at 8-17 ms per step). c NULL: a barrier on comm. The objects stay in
 * C locals, GC-unsafe, from the start to xfer_complete, as a blocking send's do. Reductions with
 * a C# operator keep MPI's blocking call (the operator must not run inside another thread's
 * test, see the non-blocking collectives below); the v-collectives wait in mpc (yielding too). */
static int yielding_kind(const struct collective *c)
{
    switch (c->kind) {
    case BCAST:
    case SCATTER:
    case GATHER:
    case ALLGATHER:
    case ALLTOALL:
    case REDUCE:
    case ALLREDUCE:
    case SCAN:
    case EXSCAN:
    case REDUCE_SCATTER_BLOCK: return 1;
    case VEXCHANGE: return 0;
    }
    return 0;
}

RT_HOLDS_STACK_MARK static int run_yielding(const struct collective *c, MPI_Comm comm,
                                            MonoObject *a, MonoObject *b)
{
    xfer_started s = {0};
    int rc;
    XFER_MPI_BEGIN(a, b);
    rc = start_collective(c, NULL, comm, 0, &s);
    XFER_MPI_END;
    if (rc != MPC_OK)
        return rc;
    return xfer_complete(&s.req, 1, (MonoObject *const[]){a, b}, 2, &s.st);
}

/* MPI_Barrier on comm, waited for as the wait policy says (mpc_wait_mode(): yielding, a barrier
 * started non-blocking and completed by xfer_complete; otherwise MPI's own, GC-safe). */
RT_HOLDS_STACK_MARK static int barrier_wait(MPI_Comm comm)
{
    if (mpc_wait_mode() == MPC_WAIT_YIELD)
        return run_yielding(NULL, comm, NULL, NULL);
    int rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_barrier(comm);
    XFER_BLOCKING_END;
    return rc;
}

int32_t opi_barrier(int32_t comm)
{
    int rc = check_comm(comm);
    return rc ? rc : barrier_wait(comm);
}

/* Runs a validated collective whose buffers lie in arrays a and b (either may be NULL); with
 * user_op, a reduction with a C# operator: the operator may collect inside MPI, so the GC event
 * stays out of MPI until the reduction is over (transfer.h). A receive that MPI truncates (the
 * ranks disagree on sizes) is reported with this rank's size. */
RT_HOLDS_STACK_MARK static int collective_by(int user_op, struct collective c, MonoObject *a,
                                             MonoObject *b, uint32_t elem_size)
{
    gch_count(GCH_OPERATIONS, 1);
    int rc;
    if (!user_op && mpc_wait_mode() == MPC_WAIT_YIELD && yielding_kind(&c)) {
        rc = run_yielding(&c, c.comm, a, b);
    } else {
        XFER_BLOCKING_BEGIN(a, b);
        if (user_op)
            xfer_user_op_reduction_begin();
        rc = call_collective(&c);
        if (user_op)
            xfer_user_op_reduction_end();
        XFER_BLOCKING_END;
    }
    if (rc == MPC_OK)
        return rc;
    switch (c.kind) {
    case BCAST: return opi_receive_failed(rc, NULL, "this rank's buffer", c.n, elem_size);
    case SCATTER: return opi_receive_failed(rc, NULL, "this rank's recvArray", c.n, elem_size);
    case GATHER:
    case ALLGATHER:
    case ALLTOALL:
        return opi_receive_failed(rc, NULL, "recvArray's block of each rank", c.n, elem_size);
    default: return opi_receive_failed(rc, NULL, "recvArray", c.n * elem_size, elem_size);
    }
}

static int collective(struct collective c, MonoObject *a, MonoObject *b, uint32_t elem_size)
{
    return collective_by(0, c, a, b, elem_size);
}

/* A collective whose arguments passed the checks, ready to run blocking (run_prepared) or to
 * start as a request (opi_icollective, at the end of this file): the MPI call, the arrays its
 * buffers lie in (either may be NULL), the bytes per element, the bytes this rank receives
 * (for a request's Status) and whether a C# operator reduces. */
struct prepared {
    struct collective c;
    MonoObject *a, *b;
    uint32_t elem_size;
    size_t received;
    int user_op;
};

static int run_prepared(const struct prepared *p)
{
    return collective_by(p->user_op, p->c, p->a, p->b, p->elem_size);
}

/* Bcast of a whole object (its C# parameter: name). */
static int prepare_bcast(int32_t comm, int32_t size, MonoObject *obj, const char *name,
                         int32_t root, struct prepared *p)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_whole_as(obj, name, &b)) ||
        (rc = check_root(size, root)))
        return rc;
    *p = (struct prepared){
        {BCAST, NULL, b.data, b.bytes, 0, 0, root, comm}, obj, NULL, b.elem_size, b.bytes, 0};
    return MPC_OK;
}

int32_t opi_bcast(int32_t comm, int32_t size, MonoObject *obj, int32_t root)
{
    struct prepared p = {0};
    int rc = prepare_bcast(comm, size, obj, "obj", root, &p);
    return rc ? rc : run_prepared(&p);
}

int32_t opi_bcast_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset,
                        int32_t count, int32_t root)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_range(array, offset, count, &b)) ||
        (rc = check_root(size, root)))
        return rc;
    return collective((struct collective){BCAST, NULL, b.data, b.bytes, 0, 0, root, comm}, array,
                      NULL, b.elem_size);
}

/* Scatter and gather: `whole` is the Size-times array, significant at the root only. */
static int prepare_scatter_gather(int gather, int32_t comm, int32_t size, int32_t rank,
                                  MonoObject *whole, MonoObject *part, int32_t root,
                                  struct prepared *p)
{
    const char *whole_name = gather ? "recvArray" : "sendArray",
               *part_name = gather ? "sendArray" : "recvArray";
    opi_buffer wb = {0}, pb;
    const rt_class_plan *plan;
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_root(size, root)))
        return rc;
    if (rank == root) {
        if ((rc = array_pair(whole, whole_name, part, part_name, &wb, &pb, &plan, 0)))
            return rc;
        if (wb.bytes != pb.bytes * (size_t)size)
            return error_record(
                OPI_ERR_LENGTH, whole_name,
                "the root's %s has %zu elements; Size (%d) times %s's %zu = %zu were expected",
                whole_name, elements(&wb), size, part_name, elements(&pb),
                elements(&pb) * (size_t)size);
    } else if ((rc = array_arg(part, part_name, &pb, &plan))) {
        return rc;
    } else {
        whole = NULL;
    }
    struct collective c =
        gather ? (struct collective){GATHER, pb.data, wb.data, pb.bytes, 0, 0, root, comm}
               : (struct collective){SCATTER, wb.data, pb.data, pb.bytes, 0, 0, root, comm};
    /* what this rank's receive array gets: the part, or at a gather's root the whole */
    size_t received = !gather ? pb.bytes : rank == root ? wb.bytes : 0;
    *p = (struct prepared){c, whole, part, pb.elem_size, received, 0};
    return MPC_OK;
}

/* Scatter and Gather run as the exact Scatterv and Gatherv (below). */
static int32_t exact_rooted(int gather, const struct prepared *p, int32_t size, int32_t rank);

int32_t opi_scatter(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv,
                    int32_t root)
{
    struct prepared p = {0};
    int rc = prepare_scatter_gather(0, comm, size, rank, send, recv, root, &p);
    return rc ? rc : exact_rooted(0, &p, size, rank);
}

int32_t opi_gather(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv,
                   int32_t root)
{
    struct prepared p = {0};
    int rc = prepare_scatter_gather(1, comm, size, rank, recv, send, root, &p);
    return rc ? rc : exact_rooted(1, &p, size, rank);
}

static int prepare_allgather(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv,
                             struct prepared *p)
{
    opi_buffer sb, rb;
    const rt_class_plan *plan;
    int rc;
    if ((rc = check_comm(comm)) ||
        (rc = array_pair(send, "sendArray", recv, "recvArray", &sb, &rb, &plan, 0)))
        return rc;
    if (rb.bytes != sb.bytes * (size_t)size)
        return error_record(
            OPI_ERR_LENGTH, "recvArray",
            "recvArray has %zu elements; Size (%d) times sendArray's %zu = %zu were expected",
            elements(&rb), size, elements(&sb), elements(&sb) * (size_t)size);
    *p = (struct prepared){{ALLGATHER, sb.data, rb.data, sb.bytes, 0, 0, 0, comm},
                           send,
                           recv,
                           sb.elem_size,
                           rb.bytes,
                           0};
    return MPC_OK;
}

/* Allgather and Alltoall run as the exact Alltoallv (below). */
static int32_t exact_equal_blocks(int blocks, const struct prepared *p, int32_t size);

int32_t opi_allgather(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv)
{
    struct prepared p = {0};
    int rc = prepare_allgather(comm, size, send, recv, &p);
    return rc ? rc : exact_equal_blocks(0, &p, size);
}

static int prepare_alltoall(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv,
                            struct prepared *p)
{
    opi_buffer sb, rb;
    const rt_class_plan *plan;
    int rc;
    if ((rc = check_comm(comm)) ||
        (rc = array_pair(send, "sendArray", recv, "recvArray", &sb, &rb, &plan, 0)))
        return rc;
    if (rb.bytes != sb.bytes)
        return error_record(
            OPI_ERR_LENGTH, "recvArray",
            "sendArray has %zu elements and recvArray %zu: Alltoall needs equal lengths",
            elements(&sb), elements(&rb));
    if ((sb.bytes / plan->data_size) % (size_t)size != 0)
        return error_record(OPI_ERR_LENGTH, "sendArray",
                            "sendArray's %zu elements do not split into Size (%d) equal blocks",
                            elements(&sb), size);
    size_t per_rank = sb.bytes / (size_t)size;
    *p = (struct prepared){{ALLTOALL, sb.data, rb.data, per_rank, 0, 0, 0, comm},
                           send,
                           recv,
                           sb.elem_size,
                           rb.bytes,
                           0};
    return MPC_OK;
}

int32_t opi_alltoall(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv)
{
    struct prepared p = {0};
    int rc = prepare_alltoall(comm, size, send, recv, &p);
    return rc ? rc : exact_equal_blocks(1, &p, size);
}

/* Reduce (recv significant at the root only), Allreduce and Scan. send == recv means in place. */
static int prepare_reduction(enum collective_kind kind, int32_t comm, int32_t size, int32_t rank,
                             MonoObject *send, MonoObject *recv, int32_t op_code, int32_t root,
                             struct prepared *p)
{
    opi_buffer sb, rb;
    const rt_class_plan *plan;
    MPI_Op op;
    MPI_Datatype dt;
    int rc;
    if ((rc = check_comm(comm)) || (kind == REDUCE && (rc = check_root(size, root))))
        return rc;
    int needs_recv = kind != REDUCE || rank == root;
    if (needs_recv) {
        /* one array for both: MPI_IN_PLACE */
        rc = array_pair(send, "sendArray", recv, "recvArray", &sb, &rb, &plan, 1);
        if (rc == MPC_OK && rb.bytes != sb.bytes)
            rc = error_record(
                OPI_ERR_LENGTH, "recvArray",
                "sendArray has %zu elements and recvArray %zu: a reduction needs equal lengths",
                elements(&sb), elements(&rb));
    } else {
        rc = array_arg(send, "sendArray", &sb, &plan);
        recv = NULL;
        rb = sb;
    }
    /* A C# operator may collect inside MPI: the blocking bracket pins before MPI runs. */
    if (rc != MPC_OK || (rc = opi_op_resolve(op_code, plan, &op, &dt)) != MPC_OK)
        return rc;
    const void *sendbuf = send == recv ? MPI_IN_PLACE : sb.data;
    *p = (struct prepared){{kind, sendbuf, rb.data, sb.bytes / plan->data_size, dt, op, root, comm},
                           send == recv ? NULL : send,
                           recv,
                           plan->data_size,
                           recv ? rb.bytes : 0,
                           op_code >= OP_BUILTINS};
    return MPC_OK;
}

static int32_t reduction(enum collective_kind kind, int32_t comm, int32_t size, int32_t rank,
                         MonoObject *send, MonoObject *recv, int32_t op_code, int32_t root)
{
    struct prepared p = {0};
    int rc = prepare_reduction(kind, comm, size, rank, send, recv, op_code, root, &p);
    return rc ? rc : run_prepared(&p);
}

int32_t opi_reduce(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv,
                   int32_t op, int32_t root)
{
    return reduction(REDUCE, comm, size, rank, send, recv, op, root);
}

int32_t opi_allreduce(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv, int32_t op)
{
    return reduction(ALLREDUCE, comm, size, 0, send, recv, op, 0);
}

int32_t opi_scan(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv, int32_t op)
{
    return reduction(SCAN, comm, size, 0, send, recv, op, 0);
}

/* ---- Gatherv, Scatterv, Allgatherv, Alltoallv, Exscan, ReduceScatterBlock (issue 13) ----
 * The v-collectives run as mpc's exact ones: point-to-point on the communicator's private twin,
 * so every receiver learns the size of each block it got; a block whose size the sender and the
 * receiver disagree on is an error where it arrives (BLOCK_MISMATCH, an MPException), never a
 * silent stale tail. Counts and displacements (int[], elements) are read and checked here,
 * before anything is sent, into native blocks (bytes): MPI then runs GC-safe on those. */

/* Per-rank scratch of one call: on the stack for small communicators. */
#define VC_STACK_RANKS 64
typedef struct vc_scratch {
    mpc_block stack_blocks[2 * VC_STACK_RANKS];
    int64_t stack_got[VC_STACK_RANKS];
    mpc_block *blocks; /* 2 * size: [0, size) and [size, 2 * size) */
    int64_t *got;
} vc_scratch;

static int vc_scratch_init(vc_scratch *s, int32_t size)
{
    if (size <= VC_STACK_RANKS) {
        s->blocks = s->stack_blocks;
        s->got = s->stack_got;
        return MPC_OK;
    }
    s->blocks = malloc(2 * (size_t)size * sizeof *s->blocks);
    s->got = malloc((size_t)size * sizeof *s->got);
    if (!s->blocks || !s->got) {
        free(s->blocks);
        free(s->got);
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for the blocks of %d ranks",
                            size);
    }
    return MPC_OK;
}

static void vc_scratch_free(vc_scratch *s)
{
    if (s->blocks != s->stack_blocks) {
        free(s->blocks);
        free(s->got);
    }
}

/* An int[] argument with one element per rank. */
static int per_rank_arg(MonoObject *a, const char *name, int32_t size, const int32_t **out)
{
    if (!a)
        return error_record(OPI_ERR_NULL_ARGUMENT, name, "%s must not be null", name);
    size_t n = rt_array_length(a);
    if (n != (size_t)size)
        return error_record(OPI_ERR_LENGTH, name,
                            "%s has %zu elements: one per rank (Size %d) was expected", name, n,
                            size);
    *out = (const int32_t *)rt_array_data(a);
    return MPC_OK;
}

struct ranked_block {
    size_t offset, bytes;
    int rank;
};

static int by_offset(const void *a, const void *b)
{
    const struct ranked_block *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset ? 1 : x->rank - y->rank;
}

/* Blocks (elements: offset and count) that overlap, in names; OPI_ERR_BLOCKS_OVERLAP. */
static int overlap_error(const char *cn, const char *dn, const char *an, int a, int b,
                         const int32_t *c, const int32_t *d)
{
    return error_record(
        OPI_ERR_BLOCKS_OVERLAP, dn,
        "the blocks of ranks %d ([%d, %d)) and %d ([%d, %d)) of %s overlap (%s, %s): the blocks "
        "of a receive array must be disjoint",
        a, d[a], d[a] + c[a], b, d[b], d[b] + c[b], an, dn, cn);
}

/* No two non-empty blocks share an element: in rank order the common case, sorted otherwise. */
static int check_disjoint(const mpc_block *blocks, int32_t size, const char *cn, const char *dn,
                          const char *an, const int32_t *c, const int32_t *d)
{
    int last = -1;
    int ordered = 1;
    for (int r = 0; r < size && ordered; r++) {
        if (!blocks[r].bytes)
            continue;
        if (last >= 0 && blocks[r].offset < blocks[last].offset + blocks[last].bytes)
            ordered = 0;
        else
            last = r;
    }
    if (ordered)
        return MPC_OK;
    struct ranked_block *sorted = malloc((size_t)size * sizeof *sorted);
    if (!sorted)
        return error_record(MPC_ERR_NO_MEMORY, NULL,
                            "out of memory checking the blocks of %d ranks", size);
    int n = 0;
    for (int r = 0; r < size; r++)
        if (blocks[r].bytes)
            sorted[n++] = (struct ranked_block){blocks[r].offset, blocks[r].bytes, r};
    qsort(sorted, (size_t)n, sizeof *sorted, by_offset);
    int rc = MPC_OK;
    for (int i = 1; i < n && rc == MPC_OK; i++)
        if (sorted[i].offset < sorted[i - 1].offset + sorted[i - 1].bytes) {
            int a = sorted[i - 1].rank < sorted[i].rank ? sorted[i - 1].rank : sorted[i].rank;
            int b = sorted[i - 1].rank < sorted[i].rank ? sorted[i].rank : sorted[i - 1].rank;
            rc = overlap_error(cn, dn, an, a, b, c, d);
        }
    free(sorted);
    return rc;
}

/* counts and displs (C# names cn, dn; one element each per rank) cut array b (C# name an) into
 * one block per rank, in bytes: no negative count or displacement, every block inside the
 * array; receive arrays' blocks (disjoint) must not overlap. */
static int blocks_arg(MonoObject *counts, const char *cn, MonoObject *displs, const char *dn,
                      int32_t size, const opi_buffer *b, const char *an, int disjoint,
                      mpc_block *out)
{
    const int32_t *c = NULL, *d = NULL;
    int rc;
    if ((rc = per_rank_arg(counts, cn, size, &c)) || (rc = per_rank_arg(displs, dn, size, &d)))
        return rc;
    size_t length = elements(b);
    for (int r = 0; r < size; r++) {
        if (c[r] < 0)
            return error_record(OPI_ERR_COUNT, cn, "%s[%d] is %d: a count cannot be negative", cn,
                                r, c[r]);
        if (d[r] < 0)
            return error_record(OPI_ERR_OFFSET, dn,
                                "%s[%d] is %d: a displacement cannot be negative", dn, r, d[r]);
        if ((size_t)d[r] > length || (size_t)c[r] > length - (size_t)d[r])
            return error_record(
                OPI_ERR_COUNT, cn,
                "the block of rank %d, [%d, %lld) (%s[%d] %d, %s[%d] %d), passes the end of %s "
                "(length %zu)",
                r, d[r], (long long)d[r] + c[r], dn, r, d[r], cn, r, c[r], an, length);
        out[r] = (mpc_block){(size_t)d[r] * b->elem_size, (size_t)c[r] * b->elem_size};
    }
    return disjoint ? check_disjoint(out, size, cn, dn, an, c, d) : MPC_OK;
}

/* A block whose size sender and receiver disagree on: rank `from` sent got bytes (or more than
 * the block holds) where the receiver's `count` elements (from `source`, a printf format taking
 * the rank) were expected; `rule` says what must agree. */
static int mismatch_error(int from, int64_t got, uint32_t elem_size, int32_t count,
                          const char *source, const char *rule)
{
    char expected[64];
    snprintf(expected, sizeof expected, source, from);
    if (got == MPC_GOT_MORE)
        return error_record(
            OPI_ERR_BLOCK_MISMATCH, NULL,
            "rank %d sent more than the %d elements of its block (%s): the ranks disagree on the "
            "block's size, %s (nothing was written past the block)",
            from, count, expected, rule);
    if (elem_size && got % elem_size == 0)
        return error_record(
            OPI_ERR_BLOCK_MISMATCH, NULL,
            "rank %d sent %lld elements, but its block holds %d (%s): the ranks disagree on the "
            "block's size, %s (the rest of the block is not valid)",
            from, (long long)(got / elem_size), count, expected, rule);
    return error_record(
        OPI_ERR_BLOCK_MISMATCH, NULL,
        "rank %d sent %lld bytes, not a whole number of %u-byte elements, where its block holds %d "
        "elements (%s): the ranks disagree on the block's size or element type, %s",
        from, (long long)got, elem_size, count, expected, rule);
}

enum vcoll_kind { GATHERV, SCATTERV, ALLTOALLV };

/* What a receiver's message about a block of the wrong size says: where its count comes from
 * (a printf format that may take the sender's rank) and what must agree. */
struct block_names {
    const char *count, *rule;
};
static const struct block_names
    gatherv_names = {"counts[%d] at the root", "and each rank sends its whole sendArray"},
    scatterv_names = {"this rank's recvArray.Length", "and the root's counts[rank] must equal the "
                                                      "receiver's recvArray.Length"},
    allgatherv_names = {"counts[%d] on this rank", "and every rank must pass the same counts"},
    alltoallv_names = {"recvCounts[%d] on this rank", "and a sender's sendCounts must match its "
                                                      "receivers' recvCounts"},
    igather_names = {"the root's recvArray.Length / Size", "and every rank's sendArray must hold "
                                                           "recvArray.Length / Size elements"},
    iscatter_names = {"this rank's recvArray.Length", "and every recvArray must hold the root's "
                                                      "sendArray.Length / Size elements"},
    allgather_names = {"this rank's recvArray.Length / Size", "and every rank's sendArray must "
                                                              "hold as many elements"},
    alltoall_names = {"this rank's recvArray.Length / Size", "and every rank's arrays must hold "
                                                             "as many elements"};

/* A block that arrived from rank from with got bytes (or MPC_GOT_MORE) where expected were: the
 * error its receiver raises. */
static int block_mismatch(const struct block_names *names, int from, int64_t got,
                          uint32_t elem_size, size_t expected)
{
    return mismatch_error(from, got, elem_size, (int32_t)(expected / elem_size), names->count,
                          names->rule);
}

/* A v-collective whose arguments passed the checks (prepare_rooted_v, prepare_alltoallv): its
 * arrays (NULL where this rank has none) and the blocks cut from them per rank, in bytes, written
 * into the caller's sblocks and rblocks (size entries each; left as they were where this rank
 * sends or receives nothing, and for Gatherv's and Scatterv's one whole array). */
struct vprep {
    enum vcoll_kind kind;
    const struct block_names *names;
    int root;
    MonoObject *send, *recv;
    opi_buffer sb, rb;
    mpc_block *sblocks, *rblocks;
};

/* Gatherv (gather) and Scatterv: every rank has its own array (Gatherv's sendArray, Scatterv's
 * recvArray); the root alone also has the array cut into per-rank blocks by counts and displs
 * (Gatherv's recvArray, whose blocks must not overlap, and Scatterv's sendArray), and its own
 * block must be as long as its own array. */
static int prepare_rooted_v(int gather, int32_t comm, int32_t size, int32_t rank, MonoObject *send,
                            MonoObject *recv, MonoObject *counts, MonoObject *displs, int32_t root,
                            struct vprep *p)
{
    MonoObject *own = gather ? send : recv;
    const char *own_name = gather ? "sendArray" : "recvArray";
    const char *cut_name = gather ? "recvArray" : "sendArray";
    opi_buffer *own_b = gather ? &p->sb : &p->rb, *cut_b = gather ? &p->rb : &p->sb;
    mpc_block *blocks = gather ? p->rblocks : p->sblocks;
    const rt_class_plan *plan;
    int rc;
    p->kind = gather ? GATHERV : SCATTERV;
    p->names = gather ? &gatherv_names : &scatterv_names;
    p->root = root;
    p->send = gather ? send : NULL;
    p->recv = gather ? NULL : recv;
    if ((rc = check_comm(comm)) || (rc = check_root(size, root)))
        return rc;
    if (rank != root)
        return array_arg(own, own_name, own_b, &plan);
    p->send = send;
    p->recv = recv;
    if ((rc = array_pair(send, "sendArray", recv, "recvArray", &p->sb, &p->rb, &plan, 0)) ||
        (rc =
             blocks_arg(counts, "counts", displs, "displs", size, cut_b, cut_name, gather, blocks)))
        return rc;
    if (blocks[root].bytes != own_b->bytes)
        return error_record(OPI_ERR_LENGTH, own_name,
                            "the root's %s has %zu elements but counts[%d], the root's own block, "
                            "is %zu",
                            own_name, elements(own_b), root, blocks[root].bytes / own_b->elem_size);
    return MPC_OK;
}

/* Alltoallv, and Allgatherv (send_counts and send_displs NULL: sendArray whole to every rank). */
static int prepare_alltoallv(int32_t comm, int32_t size, int32_t rank, MonoObject *send,
                             MonoObject *send_counts, MonoObject *send_displs, MonoObject *recv,
                             MonoObject *recv_counts, MonoObject *recv_displs, struct vprep *p)
{
    int all = send_counts != NULL || send_displs != NULL;
    const char *rcn = all ? "recvCounts" : "counts", *rdn = all ? "recvDispls" : "displs";
    const rt_class_plan *plan;
    mpc_block *sblocks = p->sblocks, *rblocks = p->rblocks;
    int rc;
    p->kind = ALLTOALLV;
    p->names = all ? &alltoallv_names : &allgatherv_names;
    p->root = 0;
    p->send = send;
    p->recv = recv;
    if ((rc = check_comm(comm)) ||
        (rc = array_pair(send, "sendArray", recv, "recvArray", &p->sb, &p->rb, &plan, 0)))
        return rc;
    if (all) {
        rc = blocks_arg(send_counts, "sendCounts", send_displs, "sendDispls", size, &p->sb,
                        "sendArray", 0, sblocks);
    } else {
        for (int r = 0; r < size; r++)
            sblocks[r] = (mpc_block){0, p->sb.bytes};
    }
    if (rc == MPC_OK)
        rc = blocks_arg(recv_counts, rcn, recv_displs, rdn, size, &p->rb, "recvArray", 1, rblocks);
    if (rc == MPC_OK && sblocks[rank].bytes != rblocks[rank].bytes)
        rc = all ? error_record(OPI_ERR_LENGTH, "recvCounts",
                                "sendCounts[%d] is %zu but recvCounts[%d] is %zu: this rank's "
                                "block to itself has "
                                "one size",
                                rank, sblocks[rank].bytes / p->sb.elem_size, rank,
                                rblocks[rank].bytes / p->rb.elem_size)
                 : error_record(
                       OPI_ERR_LENGTH, "sendArray",
                       "sendArray has %zu elements but counts[%d], this rank's own block, is %zu",
                       elements(&p->sb), rank, rblocks[rank].bytes / p->rb.elem_size);
    return rc;
}

struct vcoll {
    enum vcoll_kind kind;
    const void *send;
    size_t sendbytes;
    void *recv;
    size_t recvbytes;
    const mpc_block *send_blocks, *recv_blocks;
    int root;
    MPI_Comm comm;
    int64_t *got;
};

/* Makes v's blocking MPI call: inside a bracket. */
static int call_vcoll(const struct vcoll *v)
{
    switch (v->kind) {
    case GATHERV:
        return mpc_gatherv_exact(v->send, v->sendbytes, v->recv, v->recv_blocks, v->root, v->comm,
                                 v->got);
    case SCATTERV:
        return mpc_scatterv_exact(v->send, v->send_blocks, v->recv, v->recvbytes, v->root, v->comm,
                                  v->got);
    case ALLTOALLV:
        return mpc_alltoallv_exact(v->send, v->send_blocks, v->recv, v->recv_blocks, v->comm,
                                   v->got);
    }
    return RT_ERR_RUNTIME;
}

RT_HOLDS_STACK_MARK static int vcollective(struct vcoll *v, MonoObject *send, MonoObject *recv)
{
    gch_count(GCH_OPERATIONS, 1);
    int rc;
    XFER_BLOCKING_BEGIN(send, recv);
    rc = call_vcoll(v);
    XFER_BLOCKING_END;
    return rc;
}

/* Runs a prepared v-collective blocking, as mpc's exact one, and checks what every block that
 * came to this rank brought (got: size entries; Scatterv's one block from the root in got[0]). */
static int run_vprep(const struct vprep *p, int32_t comm, int32_t size, int32_t rank, int64_t *got)
{
    struct vcoll v = {p->kind,    p->sb.data, p->sb.bytes, p->rb.data, p->rb.bytes,
                      p->sblocks, p->rblocks, p->root,     comm,       got};
    int rc = vcollective(&v, p->send, p->recv);
    if (rc != MPC_OK)
        return rc;
    switch (p->kind) {
    case SCATTERV: /* the root's own block was checked before it was copied */
        if (rank == p->root || got[0] == (int64_t)p->rb.bytes)
            return MPC_OK;
        return block_mismatch(p->names, p->root, got[0], p->rb.elem_size, p->rb.bytes);
    case GATHERV:
        if (rank != p->root)
            return MPC_OK;
        break;
    case ALLTOALLV: break;
    }
    for (int r = 0; r < size; r++)
        if (got[r] != (int64_t)p->rblocks[r].bytes)
            return block_mismatch(p->names, r, got[r], p->rb.elem_size, p->rblocks[r].bytes);
    return MPC_OK;
}

/* Scratch for the blocks of a blocking v-collective, which p's preparation fills. */
static int blocking_scratch(vc_scratch *s, struct vprep *p, int32_t size)
{
    int rc = vc_scratch_init(s, size);
    p->sblocks = s->blocks;
    p->rblocks = s->blocks + size;
    return rc;
}

/* The rest of a blocking v-collective whose preparation returned rc: runs it, frees s. */
static int run_blocking(int rc, const struct vprep *p, vc_scratch *s, int32_t comm, int32_t size,
                        int32_t rank)
{
    if (rc == MPC_OK)
        rc = run_vprep(p, comm, size, rank, s->got);
    vc_scratch_free(s);
    return rc;
}

/* Gather (gather 1) and Scatter (0) as the exact Gatherv and Scatterv, every rank's part of the
 * root's whole array one equal block: MPICH 4.0.2's MPI_Gather and MPI_Scatter complete silently
 * when one rank's part is longer or shorter (the block dropped, or the rest of it left as it was);
 * here the receiver learns what arrived. */
static int32_t exact_rooted(int gather, const struct prepared *p, int32_t size, int32_t rank)
{
    vc_scratch s;
    struct vprep v = {0};
    int rc = blocking_scratch(&s, &v, size);
    if (rc != MPC_OK)
        return rc;
    size_t n = p->c.n; /* bytes per rank */
    int root = p->c.root;
    mpc_block *whole = gather ? v.rblocks : v.sblocks;
    for (int r = 0; r < size; r++)
        whole[r] = (mpc_block){(size_t)r * n, n};
    v.kind = gather ? GATHERV : SCATTERV;
    v.names = gather ? &igather_names : &iscatter_names;
    v.root = root;
    opi_buffer part = {.data = gather ? (char *)p->c.send : p->c.recv,
                       .bytes = n,
                       .elem_size = p->elem_size},
               all = {.data = gather ? p->c.recv : (char *)p->c.send,
                      .bytes = rank == root ? n * (size_t)size : 0,
                      .elem_size = p->elem_size};
    v.sb = gather ? part : all;
    v.rb = gather ? all : part;
    v.send = gather ? p->b : p->a; /* prepare_scatter_gather: a the whole, b the part */
    v.recv = gather ? p->a : p->b;
    return run_blocking(MPC_OK, &v, &s, p->c.comm, size, rank);
}

/* Allgather (blocks 0: every rank's whole sendArray to every rank) and Alltoall (blocks 1: block
 * r of sendArray to rank r) as the exact Alltoallv: MPICH 4.0.2's MPI_Allgather writes garbage
 * into recvArray, silently, when one rank's arrays are longer or shorter (3 ranks: values from
 * its scratch memory), and MPI_Alltoall drops a longer block without an error; here every
 * receiver learns each block's size, and a disagreement is its MPException. */
static int32_t exact_equal_blocks(int blocks, const struct prepared *p, int32_t size)
{
    vc_scratch s;
    struct vprep v = {0};
    int rc = blocking_scratch(&s, &v, size);
    if (rc != MPC_OK)
        return rc;
    size_t n = p->c.n; /* bytes per rank */
    for (int r = 0; r < size; r++) {
        v.sblocks[r] = (mpc_block){blocks ? (size_t)r * n : 0, n};
        v.rblocks[r] = (mpc_block){(size_t)r * n, n};
    }
    v.kind = ALLTOALLV;
    v.names = blocks ? &alltoall_names : &allgather_names;
    v.send = p->a;
    v.recv = p->b;
    v.sb = (opi_buffer){.data = (char *)p->c.send,
                        .bytes = blocks ? n * (size_t)size : n,
                        .elem_size = p->elem_size};
    v.rb = (opi_buffer){.data = p->c.recv, .bytes = n * (size_t)size, .elem_size = p->elem_size};
    return run_blocking(MPC_OK, &v, &s, p->c.comm, size, 0);
}

int32_t opi_gatherv(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv,
                    MonoObject *counts, MonoObject *displs, int32_t root)
{
    vc_scratch s;
    struct vprep p = {0};
    int rc = blocking_scratch(&s, &p, size);
    if (rc != MPC_OK)
        return rc;
    rc = prepare_rooted_v(1, comm, size, rank, send, recv, counts, displs, root, &p);
    return run_blocking(rc, &p, &s, comm, size, rank);
}

int32_t opi_scatterv(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *counts,
                     MonoObject *displs, MonoObject *recv, int32_t root)
{
    vc_scratch s;
    struct vprep p = {0};
    int rc = blocking_scratch(&s, &p, size);
    if (rc != MPC_OK)
        return rc;
    rc = prepare_rooted_v(0, comm, size, rank, send, recv, counts, displs, root, &p);
    return run_blocking(rc, &p, &s, comm, size, rank);
}

int32_t opi_allgatherv(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv,
                       MonoObject *counts, MonoObject *displs)
{
    vc_scratch s;
    struct vprep p = {0};
    int rc = blocking_scratch(&s, &p, size);
    if (rc != MPC_OK)
        return rc;
    rc = prepare_alltoallv(comm, size, rank, send, NULL, NULL, recv, counts, displs, &p);
    return run_blocking(rc, &p, &s, comm, size, rank);
}

int32_t opi_alltoallv(int32_t comm, int32_t size, int32_t rank, MonoObject *send,
                      MonoObject *send_counts, MonoObject *send_displs, MonoObject *recv,
                      MonoObject *recv_counts, MonoObject *recv_displs)
{
    if (!send_counts)
        return error_record(OPI_ERR_NULL_ARGUMENT, "sendCounts", "sendCounts must not be null");
    vc_scratch s;
    struct vprep p = {0};
    int rc = blocking_scratch(&s, &p, size);
    if (rc != MPC_OK)
        return rc;
    rc = prepare_alltoallv(comm, size, rank, send, send_counts, send_displs, recv, recv_counts,
                           recv_displs, &p);
    return run_blocking(rc, &p, &s, comm, size, rank);
}

/* Exscan and ReduceScatterBlock: two different arrays (no in-place form), an operator. */
static int prepare_vreduction(enum collective_kind kind, int32_t comm, int32_t size,
                              MonoObject *send, MonoObject *recv, int32_t op_code,
                              struct prepared *p)
{
    opi_buffer sb, rb;
    const rt_class_plan *plan;
    MPI_Op op;
    MPI_Datatype dt;
    int rc;
    if ((rc = check_comm(comm)) ||
        (rc = array_pair(send, "sendArray", recv, "recvArray", &sb, &rb, &plan, 0)))
        return rc;
    if (kind == EXSCAN && rb.bytes != sb.bytes)
        return error_record(
            OPI_ERR_LENGTH, "recvArray",
            "sendArray has %zu elements and recvArray %zu: Exscan needs equal lengths",
            elements(&sb), elements(&rb));
    if (kind == REDUCE_SCATTER_BLOCK && sb.bytes != rb.bytes * (size_t)size)
        return error_record(
            OPI_ERR_LENGTH, "sendArray",
            "sendArray has %zu elements; Size (%d) times recvArray's %zu = %zu were expected",
            elements(&sb), size, elements(&rb), elements(&rb) * (size_t)size);
    if ((rc = opi_op_resolve(op_code, plan, &op, &dt)) != MPC_OK)
        return rc;
    *p = (struct prepared){{kind, sb.data, rb.data, rb.bytes / plan->data_size, dt, op, 0, comm},
                           send,
                           recv,
                           plan->data_size,
                           rb.bytes,
                           op_code >= OP_BUILTINS};
    return MPC_OK;
}

/* MPI leaves rank 0's Exscan result undefined: it goes to native scratch (of the recvArray's
 * bytes, p->received), and recvArray stays as it was. */
static void exscan_into_scratch(struct prepared *p, void *scratch)
{
    p->c.recv = scratch;
    p->b = NULL;
    p->received = 0;
}

static int32_t vreduction(enum collective_kind kind, int32_t comm, int32_t size, int32_t rank,
                          MonoObject *send, MonoObject *recv, int32_t op_code)
{
    struct prepared p = {0};
    int rc = prepare_vreduction(kind, comm, size, send, recv, op_code, &p);
    if (rc != MPC_OK)
        return rc;
    void *scratch = NULL;
    if (kind == EXSCAN && rank == 0 && p.received) {
        if (!(scratch = malloc(p.received)))
            return error_record(MPC_ERR_NO_MEMORY, NULL,
                                "out of memory for rank 0's %zu bytes of Exscan scratch",
                                p.received);
        exscan_into_scratch(&p, scratch);
    }
    rc = run_prepared(&p);
    free(scratch);
    return rc;
}

int32_t opi_exscan(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv,
                   int32_t op)
{
    return vreduction(EXSCAN, comm, size, rank, send, recv, op);
}

int32_t opi_reduce_scatter_block(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv,
                                 int32_t op)
{
    return vreduction(REDUCE_SCATTER_BLOCK, comm, size, 0, send, recv, op);
}
/* ---- end of the v-collectives ---- */

/* ---- non-blocking collectives ----
 * The same checks as the blocking calls above (the prepare_* functions), then MPI's
 * non-blocking collective, tested once, and the request tracked like an Isend's
 * (opi_track_transfer): the arrays are pinned only if the GC could move them, released by
 * Wait/Test or by the GC hook once MPI reports the request complete, and a dropped Request is
 * finished by the GC hook.
 *
 * C# operators are refused here. A non-blocking reduction applies its operator inside
 * whichever MPI call makes progress: any thread's Test or Wait, the progress engine of `await`,
 * and the GC hook's sweep (MPI_Request_get_status progresses MPI). The operator is managed code
 * that may allocate and so collect; inside the GC hook it would run while the GC lock is held,
 * and the rule of transfer.h — no MPI call GC-unsafe or from the hook while an operator may
 * run inside MPI — would have to cover every request test of the process for as long as any
 * such reduction is in flight. The blocking reductions bracket their one MPI call instead
 * (xfer_user_op_reduction_begin/end). */

/* What a request owns besides its arrays: native memory MPI reads or writes until completion
 * (Iexscan's scratch at rank 0; the v-collectives' exchange, laid out in it), given back when the
 * request's record goes, and the check of what arrived (xfer_info.verify). */
struct request_owns {
    xfer_buffer *buffer;
    mpc_vexchange *exchange;
    int (*verify)(const xfer_info *info, int rc);
};

/* Starts p (NULL: a barrier on comm) for the Request owner; the request takes own (NULL: none)
 * whatever happens. The Status of a collective: Source -1, Tag MP.AnyTag, Count and Bytes what
 * this rank's receive array got.
 *   Only a communicator of one rank tests the request at once (it has finished then, and needs
 * no handles): with more ranks it cannot have finished before the others joined, and a test
 * takes MPICH's lock once more (~0.1 µs of an 8-byte Iallreduce + Wait). */
RT_HOLDS_STACK_MARK static int icollective_owning(const struct prepared *p,
                                                  const struct request_owns *own, MPI_Comm comm,
                                                  int32_t size, MonoObject *owner, int64_t *id,
                                                  opi_status *status)
{
    MonoObject *objs[2] = {p ? p->a : NULL, p ? p->b : NULL};
    uint32_t early[2];
    xfer_early_pins(objs, 2, early);
    xfer_started s = {0};
    int rc;
    XFER_MPI_BEGIN(objs[0], objs[1]);
    rc = start_collective(p ? &p->c : NULL, own ? own->exchange : NULL, comm, size == 1, &s);
    XFER_MPI_END;
    xfer_buffer *buffer = own ? own->buffer : NULL;
    if (rc != MPC_OK) {
        xfer_early_unpin(early, 2);
        xfer_buffer_give(buffer);
        return rc;
    }
    xfer_info info = {.elem_size = p ? p->elem_size : 1,
                      .is_send = 1,
                      .tag = OPI_ANY_TAG,
                      .bytes = p ? (int64_t)p->received : 0,
                      .buffer = buffer,
                      .verify = own ? own->verify : NULL};
    rc = opi_track_transfer(&s, objs, 2, early, owner, &info, "this rank's receive array", id,
                            status);
    if (*id < 0) /* finished at once (checked then): the registry never took the buffer */
        xfer_buffer_give(buffer);
    return rc;
}

static int icollective(const struct prepared *p, MPI_Comm comm, int32_t size, MonoObject *owner,
                       int64_t *id, opi_status *status)
{
    return icollective_owning(p, NULL, comm, size, owner, id, status);
}

static int refuse_user_op(const struct prepared *p, const char *call)
{
    if (!p->user_op)
        return MPC_OK;
    return error_record(
        OPI_ERR_OP, "op",
        "%s takes MPI's built-in operators only (Op.Sum, Op.Max, ...): a C# operator (Op.Create) "
        "would run inside whichever thread's MPI call makes progress, the GC hook's included, "
        "where managed code must not run; use the blocking reduction for it",
        call);
}

int32_t opi_ibarrier(int32_t comm, MonoObject *owner, int64_t *id, opi_status *status)
{
    int32_t size = 0;
    int rc = check_comm(comm);
    if (rc == MPC_OK)
        rc = mpc_comm_size(comm, &size); /* takes no lock in MPICH (transfer.h) */
    return rc ? rc : icollective(NULL, comm, size, owner, id, status);
}

/* MPI's own: MPICH's MPI_Ibcast reports a disagreement on the receiving ranks (an "Other MPI
 * error"; also below a rank whose array differs, in its tree), and its tree is 3-4x faster than an
 * exchange from the root at 512 KiB. */
int32_t opi_ibcast(int32_t comm, int32_t size, MonoObject *array, int32_t root, MonoObject *owner,
                   int64_t *id, opi_status *status)
{
    struct prepared p = {0};
    int rc = prepare_bcast(comm, size, array, "array", root, &p);
    return rc ? rc : icollective(&p, comm, size, owner, id, status);
}

int32_t opi_ireduce(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv,
                    int32_t op, int32_t root, MonoObject *owner, int64_t *id, opi_status *status)
{
    struct prepared p = {0};
    int rc;
    if ((rc = prepare_reduction(REDUCE, comm, size, rank, send, recv, op, root, &p)) ||
        (rc = refuse_user_op(&p, "Ireduce")))
        return rc;
    return icollective(&p, comm, size, owner, id, status);
}

int32_t opi_iallreduce(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv, int32_t op,
                       MonoObject *owner, int64_t *id, opi_status *status)
{
    struct prepared p = {0};
    int rc;
    if ((rc = prepare_reduction(ALLREDUCE, comm, size, 0, send, recv, op, 0, &p)) ||
        (rc = refuse_user_op(&p, "Iallreduce")))
        return rc;
    return icollective(&p, comm, size, owner, id, status);
}

int32_t opi_iscan(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv, int32_t op,
                  MonoObject *owner, int64_t *id, opi_status *status)
{
    struct prepared p = {0};
    int rc;
    if ((rc = prepare_reduction(SCAN, comm, size, 0, send, recv, op, 0, &p)) ||
        (rc = refuse_user_op(&p, "Iscan")))
        return rc;
    return icollective(&p, comm, size, owner, id, status);
}

/* Iexscan and IreduceScatterBlock. Rank 0's Exscan result, which MPI leaves undefined, goes to
 * scratch the request owns until it completes: recvArray stays as it was. */
static int32_t ivreduction(enum collective_kind kind, const char *call, int32_t comm, int32_t size,
                           int32_t rank, MonoObject *send, MonoObject *recv, int32_t op,
                           MonoObject *owner, int64_t *id, opi_status *status)
{
    struct prepared p = {0};
    int rc;
    if ((rc = prepare_vreduction(kind, comm, size, send, recv, op, &p)) ||
        (rc = refuse_user_op(&p, call)))
        return rc;
    struct request_owns own = {NULL, NULL, NULL};
    if (kind == EXSCAN && rank == 0 && p.received) {
        if (!(own.buffer = xfer_buffer_take(p.received)))
            return error_record(MPC_ERR_NO_MEMORY, NULL,
                                "out of memory for rank 0's %zu bytes of Iexscan scratch",
                                p.received);
        exscan_into_scratch(&p, own.buffer->data);
    }
    return icollective_owning(&p, &own, comm, size, owner, id, status);
}

int32_t opi_iexscan(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv,
                    int32_t op, MonoObject *owner, int64_t *id, opi_status *status)
{
    return ivreduction(EXSCAN, "Iexscan", comm, size, rank, send, recv, op, owner, id, status);
}

int32_t opi_ireduce_scatter_block(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv,
                                  int32_t op, MonoObject *owner, int64_t *id, opi_status *status)
{
    return ivreduction(REDUCE_SCATTER_BLOCK, "IreduceScatterBlock", comm, size, 0, send, recv, op,
                       owner, id, status);
}

/* ---- Igather, Iscatter, Igatherv, Iscatterv, Iallgatherv, Ialltoallv ----
 * The same checks as the blocking forms (prepare_scatter_gather, prepare_rooted_v,
 * prepare_alltoallv), with the blocks written into the request's own buffer, and then one
 * MPI_Ialltoallw_c in which each block carries its size in a header (mpc_ivexchange: MPICH's
 * non-blocking collectives report neither a truncated block nor a short one). MPI reads counts,
 * displacements and datatypes until completion: they live in that buffer, so the caller's
 * counts and displs arrays are free once the call returns. At completion (opi_completed) the
 * receiver compares each header with its count, and a block of another size raises
 * MPException, with the blocking v-form's message (Igather and Iscatter: their own). */

/* The request's buffer: this, then the exchange's storage. */
struct ivcoll {
    const struct block_names *names;
    uint32_t elem_size;
    mpc_vexchange x;
};
#define IVCOLL_HEAD ((sizeof(struct ivcoll) + 15) & ~(size_t)15)

static int ivcoll_verify(const xfer_info *info, int rc)
{
    const struct ivcoll *v = (const struct ivcoll *)info->buffer->data;
    if (rc != MPC_OK && (rc < 0 || mpc_error_class(rc) != MPI_ERR_TRUNCATE))
        return rc; /* not about sizes: MPI's own error */
    for (int r = 0; r < v->x.size; r++) {
        size_t expected = v->x.recv[r].bytes;
        int64_t got = mpc_vexchange_got(&v->x, r);
        if (expected != MPC_NO_BLOCK && got != (int64_t)expected)
            return block_mismatch(v->names, r, got, v->elem_size, expected);
    }
    return rc;
}

/* A buffer for a non-blocking exchange over size ranks, its blocks all MPC_NO_BLOCK. */
static int ivcoll_take(int32_t size, xfer_buffer **buffer, struct ivcoll **v)
{
    if (!(*buffer = xfer_buffer_take(IVCOLL_HEAD + mpc_vexchange_bytes(size))))
        return error_record(MPC_ERR_NO_MEMORY, NULL,
                            "out of memory for the blocks of a non-blocking collective over %d "
                            "ranks",
                            size);
    *v = (struct ivcoll *)(*buffer)->data;
    mpc_vexchange_init(&(*v)->x, (*buffer)->data + IVCOLL_HEAD, size);
    return MPC_OK;
}

/* Starts v's exchange (its blocks filled: offsets into sendbuf, in send, and recvbuf, in recv,
 * arrays of elem_size-byte elements) for the Request owner; the request takes buffer (v's). */
static int start_exchange(xfer_buffer *buffer, struct ivcoll *v, const struct block_names *names,
                          MonoObject *send, const void *sendbuf, MonoObject *recv, void *recvbuf,
                          uint32_t elem_size, int32_t comm, int32_t size, MonoObject *owner,
                          int64_t *id, opi_status *status)
{
    size_t received = 0;
    for (int r = 0; r < size; r++)
        if (v->x.recv[r].bytes != MPC_NO_BLOCK)
            received += v->x.recv[r].bytes;
    v->names = names;
    v->elem_size = elem_size;
    struct prepared q = {
        {VEXCHANGE, sendbuf, recvbuf, 0, 0, 0, 0, comm}, send, recv, elem_size, received, 0};
    struct request_owns own = {buffer, &v->x, ivcoll_verify};
    return icollective_owning(&q, &own, comm, size, owner, id, status);
}

/* Iallgather and Ialltoall as an exchange, every block with its size: MPICH's own complete
 * silently when one rank's arrays are longer (the block dropped) or shorter (unreported).
 * Iallgather: every rank its sendArray to every rank, block r of recvArray from rank r;
 * Ialltoall: block r of sendArray to rank r. (Ibcast stays MPI's, above.) */
/* Iallgather (blocks: 0) and Ialltoall (blocks: 1) of a prepared collective. */
static int32_t iallgather_alltoall(int blocks, const struct prepared *p, int32_t comm, int32_t size,
                                   MonoObject *owner, int64_t *id, opi_status *status)
{
    xfer_buffer *buffer = NULL;
    struct ivcoll *v = NULL;
    int rc = ivcoll_take(size, &buffer, &v);
    if (rc != MPC_OK)
        return rc;
    size_t n = p->c.n; /* bytes per rank */
    for (int r = 0; r < size; r++) {
        v->x.send[r] = (mpc_block){blocks ? (size_t)r * n : 0, n};
        v->x.recv[r] = (mpc_block){(size_t)r * n, n};
    }
    return start_exchange(buffer, v, blocks ? &alltoall_names : &allgather_names, p->a, p->c.send,
                          p->b, p->c.recv, p->elem_size, comm, size, owner, id, status);
}

int32_t opi_iallgather(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv,
                       MonoObject *owner, int64_t *id, opi_status *status)
{
    struct prepared p = {0};
    int rc = prepare_allgather(comm, size, send, recv, &p);
    return rc ? rc : iallgather_alltoall(0, &p, comm, size, owner, id, status);
}

int32_t opi_ialltoall(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv,
                      MonoObject *owner, int64_t *id, opi_status *status)
{
    struct prepared p = {0};
    int rc = prepare_alltoall(comm, size, send, recv, &p);
    return rc ? rc : iallgather_alltoall(1, &p, comm, size, owner, id, status);
}

/* Igather and Iscatter as an exchange: every block with its size, as the v-forms' (MPICH's
 * MPI_Igather drops a block longer than the root expects without an error, as MPI_Igatherv). */
static int32_t iscatter_gather(int gather, int32_t comm, int32_t size, int32_t rank,
                               MonoObject *whole, MonoObject *part, int32_t root, MonoObject *owner,
                               int64_t *id, opi_status *status)
{
    struct prepared p = {0};
    xfer_buffer *buffer = NULL;
    struct ivcoll *v = NULL;
    int rc;
    if ((rc = prepare_scatter_gather(gather, comm, size, rank, whole, part, root, &p)) ||
        (rc = ivcoll_take(size, &buffer, &v)))
        return rc;
    size_t n = p.c.n; /* bytes per rank */
    mpc_block *to_whole = gather ? v->x.recv : v->x.send, *to_part = gather ? v->x.send : v->x.recv;
    to_part[root] = (mpc_block){0, n};
    for (int r = 0; r < size && rank == root; r++)
        to_whole[r] = (mpc_block){(size_t)r * n, n};
    /* prepare_scatter_gather's arrays: a the whole (NULL off the root), b the part */
    MonoObject *send = gather ? p.b : p.a, *recv = gather ? p.a : p.b;
    return start_exchange(buffer, v, gather ? &igather_names : &iscatter_names, send, p.c.send,
                          recv, p.c.recv, p.elem_size, comm, size, owner, id, status);
}

/* Starts a v-collective prepared into v's exchange (buffer: v's), which the request takes; or,
 * when its preparation returned rc, gives the buffer back. */
static int istart_v(int rc, struct vprep *p, xfer_buffer *buffer, struct ivcoll *v, int32_t comm,
                    int32_t size, MonoObject *owner, int64_t *id, opi_status *status)
{
    if (rc != MPC_OK) {
        xfer_buffer_give(buffer);
        return rc;
    }
    if (p->kind == GATHERV) /* the whole sendArray to the root */
        v->x.send[p->root] = (mpc_block){0, p->sb.bytes};
    else if (p->kind == SCATTERV) /* the whole recvArray from the root */
        v->x.recv[p->root] = (mpc_block){0, p->rb.bytes};
    return start_exchange(buffer, v, p->names, p->send, p->sb.data, p->recv, p->rb.data,
                          p->recv ? p->rb.elem_size : p->sb.elem_size, comm, size, owner, id,
                          status);
}

/* A vprep whose preparation fills v's blocks. */
static void vprep_into(struct vprep *p, struct ivcoll *v)
{
    p->sblocks = v->x.send;
    p->rblocks = v->x.recv;
}

int32_t opi_igather(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv,
                    int32_t root, MonoObject *owner, int64_t *id, opi_status *status)
{
    return iscatter_gather(1, comm, size, rank, recv, send, root, owner, id, status);
}

int32_t opi_iscatter(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv,
                     int32_t root, MonoObject *owner, int64_t *id, opi_status *status)
{
    return iscatter_gather(0, comm, size, rank, send, recv, root, owner, id, status);
}

int32_t opi_igatherv(int32_t comm, int32_t size, int32_t rank, MonoObject *send, MonoObject *recv,
                     MonoObject *counts, MonoObject *displs, int32_t root, MonoObject *owner,
                     int64_t *id, opi_status *status)
{
    xfer_buffer *buffer = NULL;
    struct ivcoll *v = NULL;
    struct vprep p = {0};
    int rc = ivcoll_take(size, &buffer, &v);
    if (rc != MPC_OK)
        return rc;
    vprep_into(&p, v);
    rc = prepare_rooted_v(1, comm, size, rank, send, recv, counts, displs, root, &p);
    return istart_v(rc, &p, buffer, v, comm, size, owner, id, status);
}

int32_t opi_iscatterv(int32_t comm, int32_t size, int32_t rank, MonoObject *send,
                      MonoObject *counts, MonoObject *displs, MonoObject *recv, int32_t root,
                      MonoObject *owner, int64_t *id, opi_status *status)
{
    xfer_buffer *buffer = NULL;
    struct ivcoll *v = NULL;
    struct vprep p = {0};
    int rc = ivcoll_take(size, &buffer, &v);
    if (rc != MPC_OK)
        return rc;
    vprep_into(&p, v);
    rc = prepare_rooted_v(0, comm, size, rank, send, recv, counts, displs, root, &p);
    return istart_v(rc, &p, buffer, v, comm, size, owner, id, status);
}

int32_t opi_iallgatherv(int32_t comm, int32_t size, int32_t rank, MonoObject *send,
                        MonoObject *recv, MonoObject *counts, MonoObject *displs, MonoObject *owner,
                        int64_t *id, opi_status *status)
{
    xfer_buffer *buffer = NULL;
    struct ivcoll *v = NULL;
    struct vprep p = {0};
    int rc = ivcoll_take(size, &buffer, &v);
    if (rc != MPC_OK)
        return rc;
    vprep_into(&p, v);
    rc = prepare_alltoallv(comm, size, rank, send, NULL, NULL, recv, counts, displs, &p);
    return istart_v(rc, &p, buffer, v, comm, size, owner, id, status);
}

int32_t opi_ialltoallv(int32_t comm, int32_t size, int32_t rank, MonoObject *send,
                       MonoObject *send_counts, MonoObject *send_displs, MonoObject *recv,
                       MonoObject *recv_counts, MonoObject *recv_displs, MonoObject *owner,
                       int64_t *id, opi_status *status)
{
    if (!send_counts)
        return error_record(OPI_ERR_NULL_ARGUMENT, "sendCounts", "sendCounts must not be null");
    xfer_buffer *buffer = NULL;
    struct ivcoll *v = NULL;
    struct vprep p = {0};
    int rc = ivcoll_take(size, &buffer, &v);
    if (rc != MPC_OK)
        return rc;
    vprep_into(&p, v);
    rc = prepare_alltoallv(comm, size, rank, send, send_counts, send_displs, recv, recv_counts,
                           recv_displs, &p);
    return istart_v(rc, &p, buffer, v, comm, size, owner, id, status);
}

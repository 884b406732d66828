/* opi_collectives.c — zero-copy collectives on managed arrays. Each validates its arguments,
 * then runs MPI's blocking collective in a GC-safe region (opi_run_gc_safe): arrays the GC
 * could move are pinned first (nursery arrays; never large or, under motor, old ones), and
 * other threads' collections proceed while the call blocks — also those a C# reduction
 * operator triggers from inside MPI. */
#include "opi_icalls.h"

#include "gc_hooks.h"
#include "names.h"

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
static int array_pair(MonoObject *a, const char *a_name, MonoObject *b, const char *b_name, opi_buffer *ab,
                      opi_buffer *bb, const rt_class_plan **plan, int same_ok)
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
        return error_record(OPI_ERR_ALIAS, b_name, "%s and %s are the same array: this collective needs two",
                            a_name, b_name);
    return MPC_OK;
}

enum collective_kind { BCAST, SCATTER, GATHER, ALLGATHER, ALLTOALL, REDUCE, ALLREDUCE, SCAN };

struct collective {
    enum collective_kind kind;
    const void *send;
    void *recv;       /* BCAST: the buffer */
    size_t n;         /* bytes (per rank for the byte-wise ones) or reduction elements */
    MPI_Datatype dt;
    MPI_Op op;
    int root;
    MPI_Comm comm;
};

static int run_collective(void *arg)
{
    const struct collective *c = arg;
    switch (c->kind) {
    case BCAST: return mpc_bcast(c->recv, c->n, c->root, c->comm);
    case SCATTER: return mpc_scatter(c->send, c->recv, c->n, c->root, c->comm);
    case GATHER: return mpc_gather(c->send, c->recv, c->n, c->root, c->comm);
    case ALLGATHER: return mpc_allgather(c->send, c->recv, c->n, c->comm);
    case ALLTOALL: return mpc_alltoall(c->send, c->recv, c->n, c->comm);
    case REDUCE: return mpc_reduce(c->send, c->recv, c->n, c->dt, c->op, c->root, c->comm);
    case ALLREDUCE: return mpc_allreduce(c->send, c->recv, c->n, c->dt, c->op, c->comm);
    case SCAN: return mpc_scan(c->send, c->recv, c->n, c->dt, c->op, c->comm);
    }
    return RT_ERR_RUNTIME;
}

/* A reduction with a C# operator, in its GC-safe region: the operator may collect inside MPI,
 * so the GC hook stays out of MPI until the reduction is over (gc_hooks.h). */
static int run_user_reduction(void *arg)
{
    gch_user_op_reduction_begin();
    int rc = run_collective(arg);
    gch_user_op_reduction_end();
    return rc;
}

int opi_native_bcast(void *buf, size_t bytes, int root, MPI_Comm comm)
{
    struct collective c = {BCAST, NULL, buf, bytes, 0, 0, root, comm};
    return opi_run_gc_safe(run_collective, &c, NULL, 0);
}

/* Runs a validated collective, by run (run_collective, or run_user_reduction for a C#
 * operator), whose buffers lie in arrays a and b (either may be NULL). A receive that MPI
 * truncates (the ranks disagree on sizes) is reported with this rank's size. */
static int collective_by(opi_blocking_fn run, struct collective c, MonoObject *a, MonoObject *b,
                         uint32_t elem_size)
{
    gch_count(GCH_OPERATIONS, 1);
    MonoObject *objs[2] = {a, b};
    int rc = opi_run_gc_safe(run, &c, objs, 2);
    if (rc == MPC_OK)
        return rc;
    switch (c.kind) {
    case BCAST: return opi_receive_failed(rc, "this rank's buffer", c.n, elem_size);
    case SCATTER: return opi_receive_failed(rc, "this rank's recvArray", c.n, elem_size);
    case GATHER:
    case ALLGATHER:
    case ALLTOALL: return opi_receive_failed(rc, "recvArray's block of each rank", c.n, elem_size);
    default: return opi_receive_failed(rc, "recvArray", c.n * elem_size, elem_size);
    }
}

static int collective(struct collective c, MonoObject *a, MonoObject *b, uint32_t elem_size)
{
    return collective_by(run_collective, c, a, b, elem_size);
}

int32_t opi_bcast(int32_t comm, int32_t size, MonoObject *obj, int32_t root)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_whole(obj, &b)) || (rc = check_root(size, root)))
        return rc;
    return collective((struct collective){BCAST, NULL, b.data, b.bytes, 0, 0, root, comm}, obj, NULL,
                      b.elem_size);
}

int32_t opi_bcast_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset,
                               int32_t count, int32_t root)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_range(array, offset, count, &b)) ||
        (rc = check_root(size, root)))
        return rc;
    return collective((struct collective){BCAST, NULL, b.data, b.bytes, 0, 0, root, comm}, array, NULL,
                      b.elem_size);
}

/* Scatter and gather: `whole` is the Size-times array, significant at the root only. */
static int32_t scatter_gather(int gather, int32_t comm, int32_t size, int32_t rank,
                              MonoObject *whole, MonoObject *part, int32_t root)
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
            return error_record(OPI_ERR_LENGTH, whole_name,
                                "the root's %s has %zu elements; Size (%d) times %s's %zu = %zu were expected",
                                whole_name, elements(&wb), size, part_name, elements(&pb),
                                elements(&pb) * (size_t)size);
    } else if ((rc = array_arg(part, part_name, &pb, &plan))) {
        return rc;
    } else {
        whole = NULL;
    }
    struct collective c = gather ? (struct collective){GATHER, pb.data, wb.data, pb.bytes, 0, 0, root, comm}
                                 : (struct collective){SCATTER, wb.data, pb.data, pb.bytes, 0, 0, root, comm};
    return collective(c, whole, part, pb.elem_size);
}

int32_t opi_scatter(int32_t comm, int32_t size, int32_t rank, MonoObject *send,
                           MonoObject *recv, int32_t root)
{
    return scatter_gather(0, comm, size, rank, send, recv, root);
}

int32_t opi_gather(int32_t comm, int32_t size, int32_t rank, MonoObject *send,
                          MonoObject *recv, int32_t root)
{
    return scatter_gather(1, comm, size, rank, recv, send, root);
}

int32_t opi_allgather(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv)
{
    opi_buffer sb, rb;
    const rt_class_plan *plan;
    int rc;
    if ((rc = check_comm(comm)) ||
        (rc = array_pair(send, "sendArray", recv, "recvArray", &sb, &rb, &plan, 0)))
        return rc;
    if (rb.bytes != sb.bytes * (size_t)size)
        return error_record(OPI_ERR_LENGTH, "recvArray",
                            "recvArray has %zu elements; Size (%d) times sendArray's %zu = %zu were expected",
                            elements(&rb), size, elements(&sb), elements(&sb) * (size_t)size);
    return collective((struct collective){ALLGATHER, sb.data, rb.data, sb.bytes, 0, 0, 0, comm}, send, recv,
                      sb.elem_size);
}

int32_t opi_alltoall(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv)
{
    opi_buffer sb, rb;
    const rt_class_plan *plan;
    int rc;
    if ((rc = check_comm(comm)) ||
        (rc = array_pair(send, "sendArray", recv, "recvArray", &sb, &rb, &plan, 0)))
        return rc;
    if (rb.bytes != sb.bytes)
        return error_record(OPI_ERR_LENGTH, "recvArray",
                            "sendArray has %zu elements and recvArray %zu: Alltoall needs equal lengths",
                            elements(&sb), elements(&rb));
    if ((sb.bytes / plan->data_size) % (size_t)size != 0)
        return error_record(OPI_ERR_LENGTH, "sendArray",
                            "sendArray's %zu elements do not split into Size (%d) equal blocks",
                            elements(&sb), size);
    size_t per_rank = sb.bytes / (size_t)size;
    return collective((struct collective){ALLTOALL, sb.data, rb.data, per_rank, 0, 0, 0, comm}, send, recv,
                      sb.elem_size);
}

/* Reduce (recv significant at the root only), Allreduce and Scan. send == recv means in place. */
static int32_t reduction(enum collective_kind kind, int32_t comm, int32_t size, int32_t rank,
                         MonoObject *send, MonoObject *recv, int32_t op_code, int32_t root)
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
            rc = error_record(OPI_ERR_LENGTH, "recvArray",
                              "sendArray has %zu elements and recvArray %zu: a reduction needs equal lengths",
                              elements(&sb), elements(&rb));
    } else {
        rc = array_arg(send, "sendArray", &sb, &plan);
        recv = NULL;
        rb = sb;
    }
    /* A C# operator may collect inside MPI: opi_run_gc_safe pins before MPI runs. */
    if (rc != MPC_OK || (rc = opi_op_resolve(op_code, plan, &op, &dt)) != MPC_OK)
        return rc;
    const void *sendbuf = send == recv ? MPI_IN_PLACE : sb.data;
    struct collective c = {kind, sendbuf, rb.data, sb.bytes / plan->data_size, dt, op, root, comm};
    return collective_by(op_code < OP_BUILTINS ? run_collective : run_user_reduction, c,
                         send == recv ? NULL : send, recv, plan->data_size);
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

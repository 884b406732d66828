/* opi_collectives.c — zero-copy collectives on managed arrays. Each validates its arguments,
 * then runs MPI's blocking collective in a GC-safe region (opi_run_gc_safe): arrays the GC
 * could move are pinned first (nursery arrays; never large or, under motor, old ones), and
 * other threads' collections proceed while the call blocks — also those a C# reduction
 * operator triggers from inside MPI. */
#include "opi_icalls.h"

#include "gc_hooks.h"

/* A whole transportable array: its bytes and plan. */
static int array_arg(MonoObject *a, opi_buffer *b, const transport_plan **plan)
{
    int rc = opi_buffer_whole(a, b);
    if (rc != MPC_OK)
        return rc;
    *plan = opi_plan_for(a);
    return (*plan)->kind == PLAN_ARRAY ? MPC_OK : MPC_ERR_NOT_TRANSPORTABLE;
}

/* Two arrays of one collective: both transportable, same element type, not the same array. */
static int array_pair(MonoObject *send, MonoObject *recv, opi_buffer *sb, opi_buffer *rb,
                      const transport_plan **plan)
{
    const transport_plan *rp;
    int rc;
    if ((rc = array_arg(send, sb, plan)) || (rc = array_arg(recv, rb, &rp)))
        return rc;
    if ((*plan)->elem_class != rp->elem_class)
        return MPC_ERR_TYPE_MISMATCH;
    return send == recv ? MPC_ERR_ALIAS : MPC_OK;
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
    return MPC_ERR_RUNTIME;
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

/* Runs a validated collective whose buffers lie in arrays a and b (either may be NULL). */
static int collective(struct collective c, MonoObject *a, MonoObject *b)
{
    gch_count(GCH_OPERATIONS, 1);
    MonoObject *objs[2] = {a, b};
    return opi_run_gc_safe(run_collective, &c, objs, 2);
}

int32_t opi_bcast(int32_t comm, int32_t size, MonoObject *obj, int32_t root)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_whole(obj, &b)) || (rc = check_root(size, root)))
        return rc;
    return collective((struct collective){BCAST, NULL, b.data, b.bytes, 0, 0, root, comm}, obj, NULL);
}

int32_t opi_bcast_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset,
                               int32_t count, int32_t root)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_range(array, offset, count, &b)) ||
        (rc = check_root(size, root)))
        return rc;
    return collective((struct collective){BCAST, NULL, b.data, b.bytes, 0, 0, root, comm}, array, NULL);
}

/* Scatter and gather: `whole` is the Size-times array, significant at the root only. */
static int32_t scatter_gather(int gather, int32_t comm, int32_t size, int32_t rank,
                              MonoObject *whole, MonoObject *part, int32_t root)
{
    opi_buffer wb = {0}, pb;
    const transport_plan *plan;
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_root(size, root)))
        return rc;
    if (rank == root) {
        if ((rc = array_pair(whole, part, &wb, &pb, &plan)))
            return rc;
        if (wb.bytes != pb.bytes * (size_t)size)
            return MPC_ERR_LENGTH;
    } else if ((rc = array_arg(part, &pb, &plan))) {
        return rc;
    } else {
        whole = NULL;
    }
    struct collective c = gather ? (struct collective){GATHER, pb.data, wb.data, pb.bytes, 0, 0, root, comm}
                                 : (struct collective){SCATTER, wb.data, pb.data, pb.bytes, 0, 0, root, comm};
    return collective(c, whole, part);
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
    const transport_plan *plan;
    int rc;
    if ((rc = check_comm(comm)) || (rc = array_pair(send, recv, &sb, &rb, &plan)))
        return rc;
    if (rb.bytes != sb.bytes * (size_t)size)
        return MPC_ERR_LENGTH;
    return collective((struct collective){ALLGATHER, sb.data, rb.data, sb.bytes, 0, 0, 0, comm}, send, recv);
}

int32_t opi_alltoall(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv)
{
    opi_buffer sb, rb;
    const transport_plan *plan;
    int rc;
    if ((rc = check_comm(comm)) || (rc = array_pair(send, recv, &sb, &rb, &plan)))
        return rc;
    if (rb.bytes != sb.bytes || (sb.bytes / plan->elem_size) % (size_t)size != 0)
        return MPC_ERR_LENGTH;
    size_t per_rank = sb.bytes / (size_t)size;
    return collective((struct collective){ALLTOALL, sb.data, rb.data, per_rank, 0, 0, 0, comm}, send, recv);
}

/* Reduce (recv significant at the root only), Allreduce and Scan. send == recv means in place. */
static int32_t reduction(enum collective_kind kind, int32_t comm, int32_t size, int32_t rank,
                         MonoObject *send, MonoObject *recv, int32_t op_code, int32_t root)
{
    opi_buffer sb, rb;
    const transport_plan *plan;
    MPI_Op op;
    MPI_Datatype dt;
    int rc;
    if ((rc = check_comm(comm)) || (kind == REDUCE && (rc = check_root(size, root))))
        return rc;
    int needs_recv = kind != REDUCE || rank == root;
    if (needs_recv) {
        rc = array_pair(send, recv, &sb, &rb, &plan);
        if (rc == MPC_ERR_ALIAS)
            rc = MPC_OK; /* MPI_IN_PLACE */
        if (rc == MPC_OK && rb.bytes != sb.bytes)
            rc = MPC_ERR_LENGTH;
    } else {
        rc = array_arg(send, &sb, &plan);
        recv = NULL;
        rb = sb;
    }
    /* A C# operator may collect inside MPI: opi_run_gc_safe pins before MPI runs. */
    if (rc != MPC_OK || (rc = opi_op_resolve(op_code, plan, &op, &dt)) != MPC_OK)
        return rc;
    const void *sendbuf = send == recv ? MPI_IN_PLACE : sb.data;
    struct collective c = {kind, sendbuf, rb.data, sb.bytes / plan->elem_size, dt, op, root, comm};
    if (op_code < OP_BUILTINS)
        return collective(c, send == recv ? NULL : send, recv);
    gch_count(GCH_OPERATIONS, 1);
    MonoObject *objs[2] = {send == recv ? NULL : send, recv};
    return opi_run_gc_safe(run_user_reduction, &c, objs, 2);
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

/* opi_collectives.c — zero-copy collectives on managed arrays. Each starts MPI's non-blocking
 * collective and completes it through opi_complete, so blocking collectives follow the same
 * deferred, generation-aware pinning as point-to-point and never stop other threads'
 * collections. With a user operator, managed code runs inside MPI and may collect: then the
 * movable arrays are pinned before the collective starts. */
#include "opi_icalls.h"

#include "../gc_hooks/gc_hooks.h"

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

/* Waits for a started collective over up to two arrays. */
static int finish(int rc, MPI_Request *req, MonoObject *a, MonoObject *b)
{
    if (rc != MPC_OK)
        return rc;
    gch_count(GCH_OPERATIONS, 1);
    MPI_Status st;
    MonoObject *objs[2] = {a, b};
    return opi_complete(req, 1, objs, 2, &st);
}

int32_t opi_bcast(int32_t comm, int32_t size, MonoObject *obj, int32_t root)
{
    opi_buffer b;
    MPI_Request req;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_whole(obj, &b)) || (rc = check_root(size, root)))
        return rc;
    return finish(mpc_ibcast(b.data, b.bytes, root, comm, &req), &req, obj, NULL);
}

int32_t opi_bcast_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset,
                               int32_t count, int32_t root)
{
    opi_buffer b;
    MPI_Request req;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_range(array, offset, count, &b)) ||
        (rc = check_root(size, root)))
        return rc;
    return finish(mpc_ibcast(b.data, b.bytes, root, comm, &req), &req, array, NULL);
}

/* Scatter and gather: `whole` is the Size-times array, significant at the root only. */
static int32_t scatter_gather(int gather, int32_t comm, int32_t size, int32_t rank,
                              MonoObject *whole, MonoObject *part, int32_t root)
{
    opi_buffer wb = {0}, pb;
    const transport_plan *plan;
    MPI_Request req;
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
    rc = gather ? mpc_igather(pb.data, wb.data, pb.bytes, root, comm, &req)
                : mpc_iscatter(wb.data, pb.data, pb.bytes, root, comm, &req);
    return finish(rc, &req, whole, part);
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
    MPI_Request req;
    int rc;
    if ((rc = check_comm(comm)) || (rc = array_pair(send, recv, &sb, &rb, &plan)))
        return rc;
    if (rb.bytes != sb.bytes * (size_t)size)
        return MPC_ERR_LENGTH;
    return finish(mpc_iallgather(sb.data, rb.data, sb.bytes, comm, &req), &req, send, recv);
}

int32_t opi_alltoall(int32_t comm, int32_t size, MonoObject *send, MonoObject *recv)
{
    opi_buffer sb, rb;
    const transport_plan *plan;
    MPI_Request req;
    int rc;
    if ((rc = check_comm(comm)) || (rc = array_pair(send, recv, &sb, &rb, &plan)))
        return rc;
    if (rb.bytes != sb.bytes || (sb.bytes / plan->elem_size) % (size_t)size != 0)
        return MPC_ERR_LENGTH;
    size_t per_rank = sb.bytes / (size_t)size;
    return finish(mpc_ialltoall(sb.data, rb.data, per_rank, comm, &req), &req, send, recv);
}

enum reduction { REDUCE, ALLREDUCE, SCAN };

/* Reduce (recv significant at the root only), Allreduce and Scan. send == recv means in place. */
static int32_t reduction(enum reduction kind, int32_t comm, int32_t size, int32_t rank,
                         MonoObject *send, MonoObject *recv, int32_t op_code, int32_t root)
{
    opi_buffer sb, rb;
    const transport_plan *plan;
    MPI_Op op;
    MPI_Datatype dt;
    MPI_Request req;
    int rc, user;
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
    if (rc != MPC_OK || (rc = opi_op_resolve(op_code, plan, &op, &dt, &user)) != MPC_OK)
        return rc;
    const void *sendbuf = send == recv ? MPI_IN_PLACE : sb.data;
    MonoObject *objs[2] = {send == recv ? NULL : send, recv};
    uint32_t pins[2] = {0, 0};
    if (user) /* the operator runs managed code inside MPI: a collection may come at any time */
        opi_pin_now(objs, 2, pins);
    size_t count = sb.bytes / plan->elem_size;
    rc = kind == REDUCE    ? mpc_ireduce(sendbuf, rb.data, count, dt, op, root, comm, &req)
         : kind == SCAN    ? mpc_iscan(sendbuf, rb.data, count, dt, op, comm, &req)
                           : mpc_iallreduce(sendbuf, rb.data, count, dt, op, comm, &req);
    if (rc == MPC_OK) {
        gch_count(GCH_OPERATIONS, 1);
        MPI_Status st;
        rc = user ? opi_complete(&req, 1, NULL, 0, &st) : opi_complete(&req, 1, objs, 2, &st);
    }
    if (user)
        opi_unpin(pins, 2);
    return rc;
}

int32_t opi_reduce(int32_t comm, int32_t size, int32_t rank, MonoObject *send,
                          MonoObject *recv, int32_t op, int32_t root)
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

/* collectives.c — the collectives that are MPI's own (mpc.h, mpc_internal.h): byte-wise ones,
 * reductions, v-collectives, and their non-blocking forms. Under MOTOR_WAIT's yield policy the
 * blocking ones that carry bytes wait with the backoff (backoff_complete, wait_policy.c). Each
 * is counted on its communicator and noted for the hang report, a blocking one also marked as
 * the call its thread blocks in (mpc_hang_enter_collective ... mpc_hang_leave, mpc_internal.h). */
#include "mpc_impl.h"

int mpc_barrier(mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_BARRIER, comm);
    MPI_Request req;
    return mpc_hang_leave(marked, YIELDING ? backoff_complete(MPI_Ibarrier(comm, &req), &req, NULL)
                                           : MPI_Barrier(comm));
}
int mpc_ibarrier(mpc_comm comm, mpc_request *req)
{
    mpc_hang_note_collective(MPC_HANG_BARRIER, comm);
    return MPI_Ibarrier(comm, req);
}

int mpc_bcast(void *buf, size_t bytes, int root, mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_BCAST, comm);
    MPI_Request req;
    if (YIELDING)
        return mpc_hang_leave(
            marked, backoff_complete(mpc_ibcast(buf, bytes, root, comm, &req), &req, NULL));
    if (MPC_FITS_INT(bytes))
        return mpc_hang_leave(marked, MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, comm));
    return mpc_hang_leave(marked, MPI_Bcast_c(buf, (MPI_Count)bytes, MPI_BYTE, root, comm));
}

int mpc_scatter(const void *sendbuf, void *recvbuf, size_t n, int root, mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_SCATTER, comm);
    MPI_Request req;
    if (YIELDING)
        return mpc_hang_leave(
            marked,
            backoff_complete(mpc_iscatter(sendbuf, recvbuf, n, root, comm, &req), &req, NULL));
    if (MPC_FITS_INT(n))
        return mpc_hang_leave(
            marked, MPI_Scatter(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, root, comm));
    return mpc_hang_leave(marked, MPI_Scatter_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf,
                                                (MPI_Count)n, MPI_BYTE, root, comm));
}

int mpc_gather(const void *sendbuf, void *recvbuf, size_t n, int root, mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_GATHER, comm);
    MPI_Request req;
    if (YIELDING)
        return mpc_hang_leave(
            marked,
            backoff_complete(mpc_igather(sendbuf, recvbuf, n, root, comm, &req), &req, NULL));
    if (MPC_FITS_INT(n))
        return mpc_hang_leave(
            marked, MPI_Gather(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, root, comm));
    return mpc_hang_leave(marked, MPI_Gather_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf,
                                               (MPI_Count)n, MPI_BYTE, root, comm));
}

int mpc_allgather(const void *sendbuf, void *recvbuf, size_t n, mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_ALLGATHER, comm);
    MPI_Request req;
    if (YIELDING)
        return mpc_hang_leave(
            marked, backoff_complete(mpc_iallgather(sendbuf, recvbuf, n, comm, &req), &req, NULL));
    if (MPC_FITS_INT(n))
        return mpc_hang_leave(
            marked, MPI_Allgather(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, comm));
    return mpc_hang_leave(marked, MPI_Allgather_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf,
                                                  (MPI_Count)n, MPI_BYTE, comm));
}

int mpc_alltoall(const void *sendbuf, void *recvbuf, size_t n, mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_ALLTOALL, comm);
    MPI_Request req;
    if (YIELDING)
        return mpc_hang_leave(
            marked, backoff_complete(mpc_ialltoall(sendbuf, recvbuf, n, comm, &req), &req, NULL));
    if (MPC_FITS_INT(n))
        return mpc_hang_leave(
            marked, MPI_Alltoall(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, comm));
    return mpc_hang_leave(marked, MPI_Alltoall_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf,
                                                 (MPI_Count)n, MPI_BYTE, comm));
}

int mpc_reduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
               int root, mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_REDUCE, comm);
    if (MPC_FITS_INT(count))
        return mpc_hang_leave(marked,
                              MPI_Reduce(sendbuf, recvbuf, (int)count, type, op, root, comm));
    return mpc_hang_leave(marked,
                          MPI_Reduce_c(sendbuf, recvbuf, (MPI_Count)count, type, op, root, comm));
}

int mpc_allreduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                  mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_ALLREDUCE, comm);
    if (MPC_FITS_INT(count))
        return mpc_hang_leave(marked, MPI_Allreduce(sendbuf, recvbuf, (int)count, type, op, comm));
    return mpc_hang_leave(marked,
                          MPI_Allreduce_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm));
}

int mpc_scan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
             mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_SCAN, comm);
    if (MPC_FITS_INT(count))
        return mpc_hang_leave(marked, MPI_Scan(sendbuf, recvbuf, (int)count, type, op, comm));
    return mpc_hang_leave(marked, MPI_Scan_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm));
}

int mpc_scatterv(const void *sendbuf, const MPI_Count *counts, const MPI_Count *displs,
                 void *recvbuf, size_t recvbytes, int root, mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_SCATTERV, comm);
    MPI_Request req;
    if (YIELDING)
        return mpc_hang_leave(
            marked,
            backoff_complete(MPI_Iscatterv_c(sendbuf, counts, displs, MPI_BYTE, recvbuf,
                                             (MPI_Count)recvbytes, MPI_BYTE, root, comm, &req),
                             &req, NULL));
    return mpc_hang_leave(marked, MPI_Scatterv_c(sendbuf, counts, displs, MPI_BYTE, recvbuf,
                                                 (MPI_Count)recvbytes, MPI_BYTE, root, comm));
}

int mpc_gatherv(const void *sendbuf, size_t sendbytes, void *recvbuf, const MPI_Count *counts,
                const MPI_Count *displs, int root, mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_GATHERV, comm);
    MPI_Request req;
    if (YIELDING)
        return mpc_hang_leave(
            marked,
            backoff_complete(MPI_Igatherv_c(sendbuf, (MPI_Count)sendbytes, MPI_BYTE, recvbuf,
                                            counts, displs, MPI_BYTE, root, comm, &req),
                             &req, NULL));
    return mpc_hang_leave(marked, MPI_Gatherv_c(sendbuf, (MPI_Count)sendbytes, MPI_BYTE, recvbuf,
                                                counts, displs, MPI_BYTE, root, comm));
}

int mpc_allgatherv(const void *sendbuf, size_t sendbytes, void *recvbuf, const MPI_Count *counts,
                   const MPI_Count *displs, mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_ALLGATHERV, comm);
    /* MPICH 4.0.2's ring Allgatherv_c counts its steps in int: with a piece past 2 GiB it fails
     * with "Invalid count". Then the pieces meet at rank 0 (Gatherv_c takes large counts) and
     * leave in one Bcast_c of the extent they fill. */
    int size, rc;
    if ((rc = MPI_Comm_size(comm, &size)) != MPI_SUCCESS)
        return mpc_hang_leave(marked, rc);
    MPI_Count extent = 0;
    int large = 0;
    for (int r = 0; r < size; r++) {
        large |= counts[r] > INT_MAX || displs[r] > INT_MAX;
        if (displs[r] + counts[r] > extent)
            extent = displs[r] + counts[r];
    }
    MPI_Request req;
    if (!large && extent <= INT_MAX && YIELDING)
        return mpc_hang_leave(
            marked,
            backoff_complete(MPI_Iallgatherv_c(sendbuf, (MPI_Count)sendbytes, MPI_BYTE, recvbuf,
                                               counts, displs, MPI_BYTE, comm, &req),
                             &req, NULL));
    if (!large && extent <= INT_MAX)
        return mpc_hang_leave(marked, MPI_Allgatherv_c(sendbuf, (MPI_Count)sendbytes, MPI_BYTE,
                                                       recvbuf, counts, displs, MPI_BYTE, comm));
    if ((rc = mpc_gatherv(sendbuf, sendbytes, recvbuf, counts, displs, 0, comm)) != MPI_SUCCESS)
        return mpc_hang_leave(marked, rc);
    return mpc_hang_leave(marked, mpc_bcast(recvbuf, (size_t)extent, 0, comm));
}

int mpc_exscan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
               mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_EXSCAN, comm);
    if (MPC_FITS_INT(count))
        return mpc_hang_leave(marked, MPI_Exscan(sendbuf, recvbuf, (int)count, type, op, comm));
    return mpc_hang_leave(marked, MPI_Exscan_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm));
}

int mpc_reduce_scatter_block(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type,
                             MPI_Op op, mpc_comm comm)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_REDUCE_SCATTER, comm);
    if (MPC_FITS_INT(count))
        return mpc_hang_leave(
            marked, MPI_Reduce_scatter_block(sendbuf, recvbuf, (int)count, type, op, comm));
    return mpc_hang_leave(
        marked, MPI_Reduce_scatter_block_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm));
}

/* ---- non-blocking collectives ---- */

int mpc_ibcast(void *buf, size_t bytes, int root, mpc_comm comm, mpc_request *req)
{
    mpc_hang_note_collective(MPC_HANG_BCAST, comm);
    if (MPC_FITS_INT(bytes))
        return MPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, comm, req);
    return MPI_Ibcast_c(buf, (MPI_Count)bytes, MPI_BYTE, root, comm, req);
}

int mpc_iallgather(const void *sendbuf, void *recvbuf, size_t n, mpc_comm comm, mpc_request *req)
{
    mpc_hang_note_collective(MPC_HANG_ALLGATHER, comm);
    if (MPC_FITS_INT(n))
        return MPI_Iallgather(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, comm, req);
    return MPI_Iallgather_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf, (MPI_Count)n, MPI_BYTE, comm,
                            req);
}

int mpc_ialltoall(const void *sendbuf, void *recvbuf, size_t n, mpc_comm comm, mpc_request *req)
{
    mpc_hang_note_collective(MPC_HANG_ALLTOALL, comm);
    if (MPC_FITS_INT(n))
        return MPI_Ialltoall(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, comm, req);
    return MPI_Ialltoall_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf, (MPI_Count)n, MPI_BYTE, comm,
                           req);
}

int mpc_ireduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                int root, mpc_comm comm, mpc_request *req)
{
    mpc_hang_note_collective(MPC_HANG_REDUCE, comm);
    if (MPC_FITS_INT(count))
        return MPI_Ireduce(sendbuf, recvbuf, (int)count, type, op, root, comm, req);
    return MPI_Ireduce_c(sendbuf, recvbuf, (MPI_Count)count, type, op, root, comm, req);
}

int mpc_iallreduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                   mpc_comm comm, mpc_request *req)
{
    mpc_hang_note_collective(MPC_HANG_ALLREDUCE, comm);
    if (MPC_FITS_INT(count))
        return MPI_Iallreduce(sendbuf, recvbuf, (int)count, type, op, comm, req);
    return MPI_Iallreduce_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm, req);
}

int mpc_iscatter(const void *sendbuf, void *recvbuf, size_t n, int root, mpc_comm comm,
                 mpc_request *req)
{
    mpc_hang_note_collective(MPC_HANG_SCATTER, comm);
    if (MPC_FITS_INT(n))
        return MPI_Iscatter(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, root, comm, req);
    return MPI_Iscatter_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf, (MPI_Count)n, MPI_BYTE, root,
                          comm, req);
}

int mpc_igather(const void *sendbuf, void *recvbuf, size_t n, int root, mpc_comm comm,
                mpc_request *req)
{
    mpc_hang_note_collective(MPC_HANG_GATHER, comm);
    if (MPC_FITS_INT(n))
        return MPI_Igather(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, root, comm, req);
    return MPI_Igather_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf, (MPI_Count)n, MPI_BYTE, root,
                         comm, req);
}

int mpc_iscan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
              mpc_comm comm, mpc_request *req)
{
    mpc_hang_note_collective(MPC_HANG_SCAN, comm);
    if (MPC_FITS_INT(count))
        return MPI_Iscan(sendbuf, recvbuf, (int)count, type, op, comm, req);
    return MPI_Iscan_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm, req);
}

int mpc_iexscan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                mpc_comm comm, mpc_request *req)
{
    mpc_hang_note_collective(MPC_HANG_EXSCAN, comm);
    if (MPC_FITS_INT(count))
        return MPI_Iexscan(sendbuf, recvbuf, (int)count, type, op, comm, req);
    return MPI_Iexscan_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm, req);
}

int mpc_ireduce_scatter_block(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type,
                              MPI_Op op, mpc_comm comm, mpc_request *req)
{
    mpc_hang_note_collective(MPC_HANG_REDUCE_SCATTER, comm);
    if (MPC_FITS_INT(count))
        return MPI_Ireduce_scatter_block(sendbuf, recvbuf, (int)count, type, op, comm, req);
    return MPI_Ireduce_scatter_block_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm, req);
}

/* p2p.c — point-to-point on contiguous bytes, requests, probes and the statuses they fill
 * (mpc.h; the status conversions are in mpc_internal.h). Starts note their call for the hang
 * report, blocking calls also mark their thread blocked in it (mpc_internal.h). */
#include "mpc_impl.h"

/* The envelope and size of a status, read from MPICH's fields (status_bytes, mpc_impl.h). */
static void status_fields(const MPI_Status *in, mpc_status *out)
{
    int64_t bytes = status_bytes(in);
    out->source = in->MPI_SOURCE;
    out->tag = in->MPI_TAG;
    out->bytes = bytes;
    out->count = bytes <= INT_MAX ? (int32_t)bytes : INT32_MAX;
}

/* For a cancelled request MPI defines only the cancel bit: the other fields hold whatever the
 * request (or the stack) held before, even another message's envelope. They are reported as
 * MPI's empty status (MPI_ANY_SOURCE, MPI_ANY_TAG, nothing received). */
void mpc_status_from_mpi(const MPI_Status *in, mpc_status *out)
{
    out->cancelled = in->count_hi_and_cancelled & 1;
    if (out->cancelled) {
        out->source = MPI_ANY_SOURCE;
        out->tag = MPI_ANY_TAG;
        out->bytes = 0;
        out->count = 0;
        return;
    }
    status_fields(in, out);
}

void mpc_status_from_probe(const MPI_Status *in, mpc_status *out)
{
    status_fields(in, out);
    out->cancelled = 0; /* a probe never sets MPICH's cancel bit: whatever it holds is stale */
}

/* The status of a receive that failed: MPI fills the envelope of a truncated message (its size
 * it does not report, not even in MPICH's error text); for any other failure nothing is known. */
static void failed_status(int rc, const MPI_Status *in, mpc_status *out)
{
    int truncated = mpc_error_class(rc) == MPI_ERR_TRUNCATE;
    out->source = truncated ? in->MPI_SOURCE : MPI_ANY_SOURCE;
    out->tag = truncated ? in->MPI_TAG : MPI_ANY_TAG;
    out->bytes = -1;
    out->count = -1;
    out->cancelled = 0;
}

/* MPI reports the error of a failed request in the status; return that, not MPI_ERR_IN_STATUS. */
static int request_error(int rc, const MPI_Status *st)
{
    if (rc == MPI_ERR_IN_STATUS || (rc != MPI_SUCCESS && st->MPI_ERROR != MPI_SUCCESS))
        return st->MPI_ERROR != MPI_SUCCESS ? st->MPI_ERROR : rc;
    return rc;
}

int mpc_send(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm)
{
    int marked = mpc_hang_enter(MPC_HANG_SEND, comm, dest, tag);
    if (MPC_FITS_INT(bytes))
        return mpc_hang_leave(marked, MPI_Send(buf, (int)bytes, MPI_BYTE, dest, tag, comm));
    return mpc_hang_leave(marked, MPI_Send_c(buf, (MPI_Count)bytes, MPI_BYTE, dest, tag, comm));
}

int mpc_ssend(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm)
{
    int marked = mpc_hang_enter(MPC_HANG_SSEND, comm, dest, tag);
    if (MPC_FITS_INT(bytes))
        return mpc_hang_leave(marked, MPI_Ssend(buf, (int)bytes, MPI_BYTE, dest, tag, comm));
    return mpc_hang_leave(marked, MPI_Ssend_c(buf, (MPI_Count)bytes, MPI_BYTE, dest, tag, comm));
}

int mpc_recv(void *buf, size_t bytes, int source, int tag, mpc_comm comm, mpc_status *status)
{
    int marked = mpc_hang_enter(MPC_HANG_RECV, comm, source, tag);
    MPI_Status st;
    int rc = MPC_FITS_INT(bytes)
                 ? MPI_Recv(buf, (int)bytes, MPI_BYTE, source, tag, comm, &st)
                 : MPI_Recv_c(buf, (MPI_Count)bytes, MPI_BYTE, source, tag, comm, &st);
    if (rc == MPI_SUCCESS && status)
        mpc_status_from_mpi(&st, status);
    else if (status)
        failed_status(rc, &st, status);
    return mpc_hang_leave(marked, rc);
}

int mpc_isend_typed(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                    mpc_comm comm, mpc_request *req)
{
    mpc_hang_note(MPC_HANG_SEND, comm, dest, tag);
    if (MPC_COUNT_FITS_INT(count))
        return MPI_Isend(buf, (int)count, type, dest, tag, comm, req);
    return MPI_Isend_c(buf, count, type, dest, tag, comm, req);
}

int mpc_issend_typed(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                     mpc_comm comm, mpc_request *req)
{
    mpc_hang_note(MPC_HANG_SSEND, comm, dest, tag);
    if (MPC_COUNT_FITS_INT(count))
        return MPI_Issend(buf, (int)count, type, dest, tag, comm, req);
    return MPI_Issend_c(buf, count, type, dest, tag, comm, req);
}

int mpc_irecv_typed(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag,
                    mpc_comm comm, mpc_request *req)
{
    mpc_hang_note(MPC_HANG_RECV, comm, source, tag);
    if (MPC_COUNT_FITS_INT(count))
        return MPI_Irecv(buf, (int)count, type, source, tag, comm, req);
    return MPI_Irecv_c(buf, count, type, source, tag, comm, req);
}

int mpc_isend(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm, mpc_request *req)
{
    return mpc_isend_typed(buf, (MPI_Count)bytes, MPI_BYTE, dest, tag, comm, req);
}

int mpc_issend(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm, mpc_request *req)
{
    return mpc_issend_typed(buf, (MPI_Count)bytes, MPI_BYTE, dest, tag, comm, req);
}

int mpc_irecv(void *buf, size_t bytes, int source, int tag, mpc_comm comm, mpc_request *req)
{
    return mpc_irecv_typed(buf, (MPI_Count)bytes, MPI_BYTE, source, tag, comm, req);
}

int mpc_sendrecv_typed(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                       int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                       int source, int recvtag, mpc_comm comm, mpc_status *status)
{
    int marked = mpc_hang_enter(MPC_HANG_SENDRECV, comm, source, recvtag);
    MPI_Status st;
    int rc;
    if (MPC_COUNT_FITS_INT(sendcount) && MPC_COUNT_FITS_INT(recvcount))
        rc = MPI_Sendrecv(sendbuf, (int)sendcount, sendtype, dest, sendtag, recvbuf, (int)recvcount,
                          recvtype, source, recvtag, comm, &st);
    else
        rc = MPI_Sendrecv_c(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                            recvtype, source, recvtag, comm, &st);
    if (rc == MPI_SUCCESS && status)
        mpc_status_from_mpi(&st, status);
    else if (status)
        failed_status(rc, &st, status);
    return mpc_hang_leave(marked, rc);
}

int mpc_pack_typed(const void *buf, MPI_Count count, MPI_Datatype type, void *out,
                   MPI_Count outsize, mpc_comm comm)
{
    MPI_Count position = 0;
    return MPI_Pack_c(buf, count, type, out, outsize, &position, comm);
}

int mpc_sendrecv(const void *sendbuf, size_t sendbytes, int dest, int sendtag, void *recvbuf,
                 size_t recvbytes, int source, int recvtag, mpc_comm comm, mpc_status *status)
{
    return mpc_sendrecv_typed(sendbuf, (MPI_Count)sendbytes, MPI_BYTE, dest, sendtag, recvbuf,
                              (MPI_Count)recvbytes, MPI_BYTE, source, recvtag, comm, status);
}

int mpc_test(mpc_request *req, int *done, mpc_status *status)
{
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    int rc = MPI_Test(req, done, &st);
    if (rc != MPI_SUCCESS) {
        rc = request_error(rc, &st);
        if (status)
            failed_status(rc, &st, status);
        return rc;
    }
    if (*done && status)
        mpc_status_from_mpi(&st, status);
    return MPC_OK;
}

int mpc_wait(mpc_request *req, mpc_status *status)
{
    int marked = mpc_hang_enter(MPC_HANG_WAIT, MPI_COMM_NULL, -1, -1);
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    int rc = MPI_Wait(req, &st);
    if (rc != MPI_SUCCESS) {
        rc = request_error(rc, &st);
        if (status)
            failed_status(rc, &st, status);
        return mpc_hang_leave(marked, rc);
    }
    if (status)
        mpc_status_from_mpi(&st, status);
    return mpc_hang_leave(marked, MPC_OK);
}

int mpc_cancel(mpc_request *req) { return MPI_Cancel(req); }

int mpc_request_done(mpc_request req, int *done)
{
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    int rc = MPI_Request_get_status(req, done, &st);
    if (rc != MPI_SUCCESS)
        *done = 1; /* a failed request has completed */
    return rc == MPI_SUCCESS ? MPC_OK : request_error(rc, &st);
}

int mpc_probe(int source, int tag, mpc_comm comm, mpc_status *status)
{
    int marked = mpc_hang_enter(MPC_HANG_PROBE, comm, source, tag);
    MPI_Status st = {0};
    int rc = MPI_Probe(source, tag, comm, &st);
    if (rc == MPI_SUCCESS && status)
        mpc_status_from_probe(&st, status);
    return mpc_hang_leave(marked, rc);
}

int mpc_iprobe(int source, int tag, mpc_comm comm, int *found, mpc_status *status)
{
    MPI_Status st = {0};
    int rc = MPI_Iprobe(source, tag, comm, found, &st);
    if (rc == MPI_SUCCESS && *found && status)
        mpc_status_from_probe(&st, status);
    return rc;
}

int mpc_improbe(int source, int tag, mpc_comm comm, int *found, mpc_message *msg,
                mpc_status *status)
{
    MPI_Status st = {0};
    int rc = MPI_Improbe(source, tag, comm, found, msg, &st);
    if (rc == MPI_SUCCESS && *found && status)
        mpc_status_from_probe(&st, status);
    return rc;
}

int mpc_mrecv(void *buf, size_t bytes, mpc_message *msg, mpc_status *status)
{
    return mpc_mrecv_typed(buf, (MPI_Count)bytes, MPI_BYTE, msg, status);
}

int mpc_imrecv(void *buf, size_t bytes, mpc_message *msg, mpc_request *req)
{
    return mpc_imrecv_typed(buf, (MPI_Count)bytes, MPI_BYTE, msg, req);
}

int mpc_mrecv_typed(void *data, MPI_Count count, MPI_Datatype type, mpc_message *msg,
                    mpc_status *status)
{
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    int rc = count <= INT_MAX ? MPI_Mrecv(data, (int)count, type, msg, &st)
                              : MPI_Mrecv_c(data, count, type, msg, &st);
    if (rc != MPI_SUCCESS) {
        rc = request_error(rc, &st);
        if (status)
            failed_status(rc, &st, status);
        return rc;
    }
    if (status)
        mpc_status_from_mpi(&st, status);
    return MPC_OK;
}

int mpc_imrecv_typed(void *data, MPI_Count count, MPI_Datatype type, mpc_message *msg,
                     mpc_request *req)
{
    return count <= INT_MAX ? MPI_Imrecv(data, (int)count, type, msg, req)
                            : MPI_Imrecv_c(data, count, type, msg, req);
}

/* ---- persistent requests: (data, count, type) as MPI takes them, large counts through the
 * MPI-4 _c functions ---- */

int mpc_send_init(const void *data, MPI_Count count, MPI_Datatype type, int dest, int tag,
                  mpc_comm comm, mpc_request *req)
{
    if (count <= INT_MAX)
        return MPI_Send_init(data, (int)count, type, dest, tag, comm, req);
    return MPI_Send_init_c(data, count, type, dest, tag, comm, req);
}

int mpc_recv_init(void *data, MPI_Count count, MPI_Datatype type, int source, int tag,
                  mpc_comm comm, mpc_request *req)
{
    if (count <= INT_MAX)
        return MPI_Recv_init(data, (int)count, type, source, tag, comm, req);
    return MPI_Recv_init_c(data, count, type, source, tag, comm, req);
}

int mpc_start(mpc_request *req) { return MPI_Start(req); }

int mpc_startall(int n, mpc_request *reqs) { return MPI_Startall(n, reqs); }

int mpc_request_free(mpc_request *req) { return MPI_Request_free(req); }

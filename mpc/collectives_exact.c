/* collectives_exact.c — the exact v-collectives (mpc.h): algorithms on point-to-point over
 * each communicator's private twin, so that every receiver learns the size of every block; and
 * the exchange behind their non-blocking forms (mpc_internal.h): one MPI_Ialltoallw_c whose
 * blocks carry their size in a header. */
#include "mpc_impl.h"

#include "error_record.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t private_keyval_once = PTHREAD_ONCE_INIT;
static int private_keyval = MPI_KEYVAL_INVALID;
static int private_keyval_rc = MPI_SUCCESS;

/* Frees the twin with its communicator (MPI_Comm_free, or MPI_Finalize for World and Self). */
static int free_private_twin(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    MPI_Comm twin = (MPI_Comm)(intptr_t)attr;
    return MPI_Comm_free(&twin);
}

static void create_private_keyval(void)
{
    private_keyval_rc =
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_private_twin, &private_keyval, NULL);
}

int mpc_comm_private(mpc_comm comm, mpc_comm *out)
{
    pthread_once(&private_keyval_once, create_private_keyval);
    if (private_keyval_rc != MPI_SUCCESS)
        return private_keyval_rc;
    void *attr = NULL;
    int found = 0, rc = MPI_Comm_get_attr(comm, private_keyval, &attr, &found);
    if (rc != MPI_SUCCESS)
        return rc;
    if (found) {
        *out = (MPI_Comm)(intptr_t)attr;
        return MPC_OK;
    }
    /* not an owned handle (owned_handles.h): freed by its communicator's attribute callback */
    MPI_Comm twin;
    if ((rc = MPI_Comm_dup(comm, &twin)) != MPI_SUCCESS)
        return rc;
    if ((rc = MPI_Comm_set_errhandler(twin, MPI_ERRORS_RETURN)) != MPI_SUCCESS ||
        (rc = MPI_Comm_set_attr(comm, private_keyval, (void *)(intptr_t)twin)) != MPI_SUCCESS) {
        MPI_Comm_free(&twin);
        return rc;
    }
    *out = twin;
    return MPC_OK;
}

/* One tag per call kind on the twin: calls made in different orders on different ranks then
 * wait for each other instead of matching the wrong blocks. */
enum { TAG_GATHERV = 1, TAG_SCATTERV = 2, TAG_ALLTOALLV = 3, TAG_NEIGHBORS = 16 };

/* Requests and statuses of one call: on the stack up to 2 * STACK_PEERS, else on the heap;
 * every request starts as MPI_REQUEST_NULL (never waited for until posted). */
#define STACK_PEERS 64
typedef struct peer_requests {
    MPI_Request stack_reqs[2 * STACK_PEERS];
    MPI_Status stack_st[2 * STACK_PEERS];
    MPI_Request *reqs;
    MPI_Status *st;
    int n;
} peer_requests;

static int peer_requests_init(peer_requests *p, int n)
{
    p->n = n;
    if (n <= 2 * STACK_PEERS) {
        p->reqs = p->stack_reqs;
        p->st = p->stack_st;
    } else {
        p->reqs = malloc((size_t)n * sizeof *p->reqs);
        p->st = malloc((size_t)n * sizeof *p->st);
        if (!p->reqs || !p->st) {
            free(p->reqs);
            free(p->st);
            return error_record(MPC_ERR_NO_MEMORY, NULL,
                                "out of memory for the requests of a collective over %d ranks", n);
        }
    }
    for (int i = 0; i < n; i++) {
        p->reqs[i] = MPI_REQUEST_NULL;
        p->st[i].MPI_ERROR = MPI_SUCCESS;
    }
    return MPC_OK;
}

/* Waits for every posted request; the statuses (MPI_ERROR included) are then valid. Returns
 * MPI_SUCCESS or an error that is not any one request's. */
static int peer_requests_wait(peer_requests *p)
{
    if (YIELDING) {
        /* MPI_Waitall busy-polls: wait here with the backoff, each request asked without being
         * freed, so the MPI_Waitall below only collects statuses and errors as before */
        mpc_backoff b = {0, 0};
        for (int i = 0; i < p->n;) {
            int done = 0;
            MPI_Status unused;
            if (MPI_Request_get_status(p->reqs[i], &done, &unused) != MPI_SUCCESS)
                break; /* MPI_Waitall reports it */
            if (done)
                i++;
            else
                mpc_backoff_pause(&b);
        }
    }
    int rc = MPI_Waitall(p->n, p->reqs, p->st);
    if (rc != MPI_ERR_IN_STATUS)
        return rc;
    /* MPICH stops at a failed request and marks the ones it left running MPI_ERR_PENDING */
    for (int i = 0; i < p->n; i++)
        if (p->st[i].MPI_ERROR == MPI_ERR_PENDING) {
            p->st[i].MPI_ERROR = MPI_SUCCESS;
            int one = MPI_Wait(&p->reqs[i], &p->st[i]);
            if (one != MPI_SUCCESS)
                p->st[i].MPI_ERROR = one;
        }
    return MPI_SUCCESS;
}

static void peer_requests_free(peer_requests *p)
{
    if (p->reqs != p->stack_reqs) {
        free(p->reqs);
        free(p->st);
    }
}

/* Posting failed with rc: the started requests still complete (their buffers are the
 * caller's), cancelled where MPI can. Frees p; returns rc. */
static int peer_requests_abandon(peer_requests *p, int rc)
{
    for (int i = 0; i < p->n; i++)
        if (p->reqs[i] != MPI_REQUEST_NULL)
            MPI_Cancel(&p->reqs[i]);
    MPI_Waitall(p->n, p->reqs, p->st);
    peer_requests_free(p);
    return rc;
}

/* The bytes a completed receive brought, or MPC_GOT_MORE for a truncated one; another error is
 * kept in *rc (the first one). */
static int64_t received(const MPI_Status *st, int *rc)
{
    int cls = MPI_SUCCESS;
    if (st->MPI_ERROR != MPI_SUCCESS && MPI_Error_class(st->MPI_ERROR, &cls) == MPI_SUCCESS &&
        cls == MPI_ERR_TRUNCATE)
        return MPC_GOT_MORE;
    if (st->MPI_ERROR != MPI_SUCCESS && *rc == MPI_SUCCESS)
        *rc = st->MPI_ERROR;
    return status_bytes(st);
}

/* The first send error among statuses [from, from+n) into *rc, if it holds none yet. */
static void send_errors(const MPI_Status *st, int from, int n, int skip, int *rc)
{
    for (int i = 0; i < n && *rc == MPI_SUCCESS; i++)
        if (i != skip && st[from + i].MPI_ERROR != MPI_SUCCESS)
            *rc = st[from + i].MPI_ERROR;
}

static int rank_size_twin(mpc_comm comm, int *rank, int *size, MPI_Comm *twin)
{
    int rc;
    if ((rc = MPI_Comm_rank(comm, rank)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(comm, size)) != MPI_SUCCESS)
        return rc;
    return mpc_comm_private(comm, twin);
}

int mpc_gatherv_exact(const void *sendbuf, size_t sendbytes, void *recvbuf, const mpc_block *blocks,
                      int root, mpc_comm comm, int64_t *got)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_GATHERV, comm);
    int rank, size, rc;
    MPI_Comm twin;
    if ((rc = rank_size_twin(comm, &rank, &size, &twin)) != MPC_OK)
        return mpc_hang_leave(marked, rc);
    if (rank != root)
        return mpc_hang_leave(marked, mpc_send(sendbuf, sendbytes, root, TAG_GATHERV, twin));
    peer_requests p;
    if ((rc = peer_requests_init(&p, size)) != MPC_OK)
        return mpc_hang_leave(marked, rc);
    for (int r = 0; r < size; r++)
        if (r != root && (rc = mpc_irecv((char *)recvbuf + blocks[r].offset, blocks[r].bytes, r,
                                         TAG_GATHERV, twin, &p.reqs[r])))
            return mpc_hang_leave(marked, peer_requests_abandon(&p, rc));
    if (sendbytes)
        memcpy((char *)recvbuf + blocks[root].offset, sendbuf, sendbytes);
    got[root] = (int64_t)sendbytes;
    if ((rc = peer_requests_wait(&p)) == MPI_SUCCESS)
        for (int r = 0; r < size; r++)
            if (r != root)
                got[r] = received(&p.st[r], &rc);
    peer_requests_free(&p);
    return mpc_hang_leave(marked, rc);
}

int mpc_scatterv_exact(const void *sendbuf, const mpc_block *blocks, void *recvbuf,
                       size_t recvbytes, int root, mpc_comm comm, int64_t *got)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_SCATTERV, comm);
    int rank, size, rc;
    MPI_Comm twin;
    if ((rc = rank_size_twin(comm, &rank, &size, &twin)) != MPC_OK)
        return mpc_hang_leave(marked, rc);
    if (rank != root) {
        MPI_Status st;
        st.MPI_ERROR = MPI_SUCCESS;
        MPI_Request req;
        if (YIELDING)
            rc = backoff_complete(mpc_irecv(recvbuf, recvbytes, root, TAG_SCATTERV, twin, &req),
                                  &req, &st);
        else
            rc = MPC_FITS_INT(recvbytes)
                     ? MPI_Recv(recvbuf, (int)recvbytes, MPI_BYTE, root, TAG_SCATTERV, twin, &st)
                     : MPI_Recv_c(recvbuf, (MPI_Count)recvbytes, MPI_BYTE, root, TAG_SCATTERV, twin,
                                  &st);
        if (rc != MPI_SUCCESS)
            st.MPI_ERROR = rc; /* a single receive reports its error in its return value */
        rc = MPI_SUCCESS;
        *got = received(&st, &rc);
        return mpc_hang_leave(marked, rc);
    }
    peer_requests p;
    if ((rc = peer_requests_init(&p, size)) != MPC_OK)
        return mpc_hang_leave(marked, rc);
    for (int r = 0; r < size; r++)
        if (r != root && (rc = mpc_isend((const char *)sendbuf + blocks[r].offset, blocks[r].bytes,
                                         r, TAG_SCATTERV, twin, &p.reqs[r])))
            return mpc_hang_leave(marked, peer_requests_abandon(&p, rc));
    if (recvbytes)
        memcpy(recvbuf, (const char *)sendbuf + blocks[root].offset, recvbytes);
    *got = (int64_t)recvbytes;
    if ((rc = peer_requests_wait(&p)) == MPI_SUCCESS)
        send_errors(p.st, 0, size, root, &rc);
    peer_requests_free(&p);
    return mpc_hang_leave(marked, rc);
}

int mpc_alltoallv_exact(const void *sendbuf, const mpc_block *send, void *recvbuf,
                        const mpc_block *recv, mpc_comm comm, int64_t *got)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_ALLTOALLV, comm);
    int rank, size, rc;
    MPI_Comm twin;
    if ((rc = rank_size_twin(comm, &rank, &size, &twin)) != MPC_OK)
        return mpc_hang_leave(marked, rc);
    peer_requests p;
    if ((rc = peer_requests_init(&p, 2 * size)) != MPC_OK)
        return mpc_hang_leave(marked, rc);
    /* receives first, from the next rank on; then sends, to the previous rank first: each rank
     * starts with a different peer (as MPICH's scattered algorithm does) */
    MPI_Request *rreq = p.reqs, *sreq = p.reqs + size;
    for (int i = 1; i < size; i++) {
        int r = (rank + i) % size;
        if ((rc = mpc_irecv((char *)recvbuf + recv[r].offset, recv[r].bytes, r, TAG_ALLTOALLV, twin,
                            &rreq[r])))
            return mpc_hang_leave(marked, peer_requests_abandon(&p, rc));
    }
    for (int i = 1; i < size; i++) {
        int r = (rank - i + size) % size;
        if ((rc = mpc_isend((const char *)sendbuf + send[r].offset, send[r].bytes, r, TAG_ALLTOALLV,
                            twin, &sreq[r])))
            return mpc_hang_leave(marked, peer_requests_abandon(&p, rc));
    }
    if (recv[rank].bytes)
        memcpy((char *)recvbuf + recv[rank].offset, (const char *)sendbuf + send[rank].offset,
               recv[rank].bytes);
    got[rank] = (int64_t)send[rank].bytes;
    if ((rc = peer_requests_wait(&p)) == MPI_SUCCESS) {
        for (int r = 0; r < size; r++)
            if (r != rank)
                got[r] = received(&p.st[r], &rc);
        send_errors(p.st, size, size, rank, &rc);
    }
    peer_requests_free(&p);
    return mpc_hang_leave(marked, rc);
}

/* ---- the blocking neighbourhood collectives ----
 * One receive per source and one send per destination on the twin, each block in place with its
 * own datatype: the receive's status gives the block's size (MPICH's neighbourhood collectives
 * give none, and drop a longer block with MPI_SUCCESS). The tags pair the blocks (the caller's
 * edge tags; allgather apart from the rest); a call kind per tag parity keeps an allgather from
 * matching an alltoall's blocks. */
int mpc_neighbor_exact(mpc_comm comm, int allgather, int out, const mpc_nb_block *send,
                       const int *dests, const int *stags, int in, const mpc_nb_block *recv,
                       const int *sources, const int *rtags, int64_t *got)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_NEIGHBOR, comm);
    MPI_Comm twin;
    int rc = mpc_comm_private(comm, &twin);
    if (rc != MPC_OK)
        return mpc_hang_leave(marked, rc);
    int top = (mpc_tag_ub() - TAG_NEIGHBORS - 1) / 2;
    for (int k = 0; k < out; k++)
        if (stags[k] < 0 || stags[k] > top)
            return mpc_hang_leave(
                marked, error_record(MPC_ERR_TAG, NULL,
                                     "a neighbourhood collective's edge %d needs tag %d, past this "
                                     "MPI's bound (%d edges between two processes at most)",
                                     k, stags[k], top));
    peer_requests p;
    if ((rc = peer_requests_init(&p, in + out)) != MPC_OK)
        return mpc_hang_leave(marked, rc);
    for (int j = 0; j < in; j++) {
        const mpc_nb_block *b = &recv[j];
        if ((rc = MPI_Irecv_c(b->data, b->count, b->type, sources[j],
                              TAG_NEIGHBORS + 2 * rtags[j] + (allgather != 0), twin, &p.reqs[j])))
            return mpc_hang_leave(marked, peer_requests_abandon(&p, rc));
    }
    for (int k = 0; k < out; k++) {
        const mpc_nb_block *b = &send[allgather ? 0 : k];
        if ((rc = MPI_Isend_c(b->data, b->count, b->type, dests[k],
                              TAG_NEIGHBORS + 2 * stags[k] + (allgather != 0), twin,
                              &p.reqs[in + k])))
            return mpc_hang_leave(marked, peer_requests_abandon(&p, rc));
    }
    if ((rc = peer_requests_wait(&p)) == MPI_SUCCESS) {
        for (int j = 0; j < in; j++)
            got[j] = sources[j] == MPI_PROC_NULL ? 0 : received(&p.st[j], &rc);
        send_errors(p.st, in, out, -1, &rc);
    }
    peer_requests_free(&p);
    return mpc_hang_leave(marked, rc);
}

/* ---- without blocking: one MPI_Ialltoallw_c with a header before every block ---- */

size_t mpc_vexchange_bytes(int size)
{
    size_t n = (size_t)size;
    return n * (2 * sizeof(mpc_block) + 2 * sizeof(int64_t) + 2 * sizeof(MPI_Count) +
                2 * sizeof(MPI_Aint) + 2 * sizeof(MPI_Datatype));
}

void mpc_vexchange_init(mpc_vexchange *x, void *storage, int size)
{
    size_t n = (size_t)size;
    char *p = storage; /* the 8-byte members first, MPI_Datatype (an int in MPICH) last */
    x->size = size;
    x->send = (mpc_block *)p;
    x->recv = x->send + n;
    p += 2 * n * sizeof(mpc_block);
    x->sent = (int64_t *)p;
    x->got = x->sent + n;
    p += 2 * n * sizeof(int64_t);
    x->counts = (MPI_Count *)p;
    p += 2 * n * sizeof(MPI_Count);
    x->displs = (MPI_Aint *)p;
    p += 2 * n * sizeof(MPI_Aint);
    x->types = (MPI_Datatype *)p;
    for (size_t r = 0; r < n; r++) {
        x->send[r] = x->recv[r] = (mpc_block){0, MPC_NO_BLOCK};
        x->got[r] = MPC_GOT_MORE;
    }
}

/* MPI's count, displacement and datatype for one block of an exchange: none (MPC_NO_BLOCK:
 * count 0), or the block at base + offset behind its header, from the cache of two-piece
 * datatypes (mpc_header_type; an empty block is its header alone). Under the cache's lock. */
static int block_type(const mpc_block *b, int64_t *header, char *base, MPI_Count *count,
                      MPI_Aint *displ, MPI_Datatype *type, mpc_type_lease *lease)
{
    lease->entry = NULL;
    lease->own = MPI_DATATYPE_NULL;
    *count = 0;
    *displ = 0;
    *type = MPI_BYTE;
    if (b->bytes == MPC_NO_BLOCK)
        return MPI_SUCCESS;
    mpc_nb_block block = {base + b->offset, (MPI_Count)b->bytes, MPI_BYTE};
    return mpc_header_type(&block, header, count, displ, type, lease);
}

int mpc_ivexchange(const void *sendbuf, void *recvbuf, mpc_vexchange *x, mpc_comm comm,
                   mpc_request *req)
{
    mpc_hang_note_collective(MPC_HANG_ALLTOALLV, comm); /* Igatherv, Iscatterv, ... */
    int n = x->size, rc = MPI_SUCCESS, taken = 0;
    MPI_Count *rcounts = x->counts + n;
    MPI_Aint *rdispls = x->displs + n;
    MPI_Datatype *rtypes = x->types + n;
    mpc_type_lease stack_leases[2 * STACK_PEERS],
        *leases = n <= STACK_PEERS ? stack_leases : malloc(2 * (size_t)n * sizeof *leases);
    if (!leases)
        return error_record(MPC_ERR_NO_MEMORY, NULL,
                            "out of memory for the datatypes of an exchange over %d ranks", n);
    mpc_header_types_lock();
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++) {
        x->sent[r] = x->send[r].bytes == MPC_NO_BLOCK ? 0 : (int64_t)x->send[r].bytes;
        x->got[r] = MPC_GOT_MORE;
        rc = block_type(&x->send[r], &x->sent[r], (char *)sendbuf, &x->counts[r], &x->displs[r],
                        &x->types[r], &leases[taken++]);
        if (rc == MPI_SUCCESS)
            rc = block_type(&x->recv[r], &x->got[r], recvbuf, &rcounts[r], &rdispls[r], &rtypes[r],
                            &leases[taken++]);
    }
    mpc_header_types_unlock();
    if (rc == MPI_SUCCESS)
        rc = MPI_Ialltoallw_c(MPI_BOTTOM, x->counts, x->displs, x->types, MPI_BOTTOM, rcounts,
                              rdispls, rtypes, comm, req);
    /* given back now, started or not: a started exchange completes normally on freed types */
    mpc_header_types_give_back(leases, taken);
    if (leases != stack_leases)
        free(leases);
    return rc;
}

int64_t mpc_vexchange_got(const mpc_vexchange *x, int r)
{
    int64_t got = x->got[r];
    if (got < 0 || x->recv[r].bytes == MPC_NO_BLOCK || (uint64_t)got > x->recv[r].bytes)
        return MPC_GOT_MORE;
    return got;
}

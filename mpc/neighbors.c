/* neighbors.c — distributed graph topologies and the neighbourhood collectives (mpc_internal.h),
 * and how this MPI pairs the two blocks of a periodic Cartesian dimension of one or two
 * processes. Blocking forms under MOTOR_WAIT's yield policy run as their non-blocking form,
 * completed with the backoff, as the other byte-carrying collectives do (collectives.c). */
#include "mpc_impl.h"

#include "error_record.h"
#include "owned_handles.h"

#include <stdatomic.h>

int mpc_dist_graph_create_adjacent(mpc_comm comm, int indegree, const int *sources, int outdegree,
                                   const int *destinations, int reorder, mpc_comm *out)
{
    int rc = MPI_Dist_graph_create_adjacent(comm, indegree, sources, MPI_UNWEIGHTED, outdegree,
                                            destinations, MPI_UNWEIGHTED, MPI_INFO_NULL, reorder,
                                            out); /* sequenced before *out is read */
    if (rc != MPI_SUCCESS || *out == MPI_COMM_NULL)
        return rc;
    return owned_add(MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN), OWNED_COMM, (int)*out);
}

int mpc_topo_test(mpc_comm comm, int *kind) { return MPI_Topo_test(comm, kind); }

int mpc_dist_graph_neighbors_count(mpc_comm comm, int *indegree, int *outdegree)
{
    int weighted = 0;
    return MPI_Dist_graph_neighbors_count(comm, indegree, outdegree, &weighted);
}

int mpc_dist_graph_neighbors(mpc_comm comm, int indegree, int *sources, int outdegree,
                             int *destinations)
{
    return MPI_Dist_graph_neighbors(comm, indegree, sources, MPI_UNWEIGHTED, outdegree,
                                    destinations, MPI_UNWEIGHTED);
}

/* ---- the collectives ---- */

int mpc_neighbor_allgather(const void *sendbuf, size_t bytes, void *recvbuf, mpc_comm comm,
                           mpc_request *req)
{
    MPI_Request own;
    if (!req && YIELDING)
        return backoff_complete(mpc_neighbor_allgather(sendbuf, bytes, recvbuf, comm, &own), &own,
                                NULL);
    if (MPC_FITS_INT(bytes))
        return req ? MPI_Ineighbor_allgather(sendbuf, (int)bytes, MPI_BYTE, recvbuf, (int)bytes,
                                             MPI_BYTE, comm, req)
                   : MPI_Neighbor_allgather(sendbuf, (int)bytes, MPI_BYTE, recvbuf, (int)bytes,
                                            MPI_BYTE, comm);
    MPI_Count n = (MPI_Count)bytes;
    return req ? MPI_Ineighbor_allgather_c(sendbuf, n, MPI_BYTE, recvbuf, n, MPI_BYTE, comm, req)
               : MPI_Neighbor_allgather_c(sendbuf, n, MPI_BYTE, recvbuf, n, MPI_BYTE, comm);
}

int mpc_neighbor_alltoall(const void *sendbuf, void *recvbuf, size_t bytes, mpc_comm comm,
                          mpc_request *req)
{
    MPI_Request own;
    if (!req && YIELDING)
        return backoff_complete(mpc_neighbor_alltoall(sendbuf, recvbuf, bytes, comm, &own), &own,
                                NULL);
    if (MPC_FITS_INT(bytes))
        return req ? MPI_Ineighbor_alltoall(sendbuf, (int)bytes, MPI_BYTE, recvbuf, (int)bytes,
                                            MPI_BYTE, comm, req)
                   : MPI_Neighbor_alltoall(sendbuf, (int)bytes, MPI_BYTE, recvbuf, (int)bytes,
                                           MPI_BYTE, comm);
    MPI_Count n = (MPI_Count)bytes;
    return req ? MPI_Ineighbor_alltoall_c(sendbuf, n, MPI_BYTE, recvbuf, n, MPI_BYTE, comm, req)
               : MPI_Neighbor_alltoall_c(sendbuf, n, MPI_BYTE, recvbuf, n, MPI_BYTE, comm);
}

int mpc_neighbor_alltoallv(const void *sendbuf, const MPI_Count *sendcounts,
                           const MPI_Aint *sdispls, void *recvbuf, const MPI_Count *recvcounts,
                           const MPI_Aint *rdispls, mpc_comm comm, mpc_request *req)
{
    MPI_Request own;
    if (!req && YIELDING)
        return backoff_complete(mpc_neighbor_alltoallv(sendbuf, sendcounts, sdispls, recvbuf,
                                                       recvcounts, rdispls, comm, &own),
                                &own, NULL);
    return req ? MPI_Ineighbor_alltoallv_c(sendbuf, sendcounts, sdispls, MPI_BYTE, recvbuf,
                                           recvcounts, rdispls, MPI_BYTE, comm, req)
               : MPI_Neighbor_alltoallv_c(sendbuf, sendcounts, sdispls, MPI_BYTE, recvbuf,
                                          recvcounts, rdispls, MPI_BYTE, comm);
}

/* Each location (a pointer as an integer) becomes its absolute address (MPI_Get_address). */
static int addresses(MPI_Aint *locations, int n)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = MPI_Get_address((const void *)(uintptr_t)locations[i], &locations[i]);
    return rc;
}

int mpc_neighbor_alltoallw(int outdegree, const MPI_Count *sendcounts, MPI_Aint *sdispls,
                           const MPI_Datatype *sendtypes, int indegree, const MPI_Count *recvcounts,
                           MPI_Aint *rdispls, const MPI_Datatype *recvtypes, mpc_comm comm,
                           mpc_request *req)
{
    int rc;
    if ((rc = addresses(sdispls, outdegree)) != MPI_SUCCESS ||
        (rc = addresses(rdispls, indegree)) != MPI_SUCCESS)
        return rc;
    MPI_Request own;
    if (!req && YIELDING)
        return backoff_complete(MPI_Ineighbor_alltoallw_c(MPI_BOTTOM, sendcounts, sdispls,
                                                          sendtypes, MPI_BOTTOM, recvcounts,
                                                          rdispls, recvtypes, comm, &own),
                                &own, NULL);
    return req ? MPI_Ineighbor_alltoallw_c(MPI_BOTTOM, sendcounts, sdispls, sendtypes, MPI_BOTTOM,
                                           recvcounts, rdispls, recvtypes, comm, req)
               : MPI_Neighbor_alltoallw_c(MPI_BOTTOM, sendcounts, sdispls, sendtypes, MPI_BOTTOM,
                                          recvcounts, rdispls, recvtypes, comm);
}

/* ---- how this MPI matches repeated edges ----
 * Where one process is a neighbour several times (a periodic grid dimension of one or two
 * processes; a graph's repeated or self edges), only the order in which MPI posts its receives
 * decides which block lands where. MPI-4.0 fixes the outcome: on a grid the block sent toward -1
 * arrives in the receiver's +1 block and the other way round (MPI-3.1 erratum,
 * mpi-forum/mpi-issues#153); on a graph the k-th edge from a process carries its k-th block to
 * that destination. MPICH 4.0.2 posts (I)neighbor_alltoall's receives in reverse list order, for
 * every topology (right for a grid dimension of two blocks, wrong for a graph's repeated edges),
 * and the v and w forms' in list order (wrong for grids, right for graphs); later MPICHs changed
 * both (pmodels/mpich#5777, #7945). Rather than trust a version number, each form is tried once
 * per process on MPI_COMM_SELF, on a grid of three periodic dimensions of one process and on a
 * graph of four self edges: every block comes back to the sender, and where each one lands gives
 * the order of posting. */

enum { PROBE_BLOCKS = 6, PROBED = 1u << 31 };
static atomic_uint postings; /* PROBED | a 2-bit mpc_posting per (kind, nonblocking, cart) */

static unsigned posting_shift(int kind, int nonblocking, int cart)
{
    return 2u * (unsigned)((kind * 2 + (nonblocking != 0)) * 2 + (cart != 0));
}

/* One form on topo (a topology over MPI_COMM_SELF with n self edges): the order it posts. */
static int probe_form(mpc_comm topo, int n, int kind, int nonblocking, mpc_posting *posting)
{
    int send[PROBE_BLOCKS], recv[PROBE_BLOCKS];
    MPI_Count bytes[PROBE_BLOCKS], ones[PROBE_BLOCKS];
    MPI_Aint displs[PROBE_BLOCKS], sa[PROBE_BLOCKS], ra[PROBE_BLOCKS];
    MPI_Datatype types[PROBE_BLOCKS];
    for (int i = 0; i < n; i++) {
        send[i] = i;
        recv[i] = -1;
        bytes[i] = sizeof(int);
        ones[i] = 1;
        displs[i] = (MPI_Aint)(i * sizeof(int));
        sa[i] = (MPI_Aint)(uintptr_t)&send[i];
        ra[i] = (MPI_Aint)(uintptr_t)&recv[i];
        types[i] = MPI_INT;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    mpc_request *r = nonblocking ? &req : NULL;
    int rc;
    switch (kind) {
    case MPC_NB_ALLTOALL: rc = mpc_neighbor_alltoall(send, recv, sizeof(int), topo, r); break;
    case MPC_NB_ALLTOALLV:
        rc = mpc_neighbor_alltoallv(send, bytes, displs, recv, bytes, displs, topo, r);
        break;
    default: rc = mpc_neighbor_alltoallw(n, ones, sa, types, n, ones, ra, types, topo, r); break;
    }
    if (rc == MPI_SUCCESS && nonblocking)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return rc;
    int same = 1, reversed = 1, swapped = 1;
    for (int i = 0; i < n; i++) {
        same &= recv[i] == i;
        reversed &= recv[i] == n - 1 - i;
        swapped &= recv[i] == (i ^ 1);
    }
    *posting = same       ? MPC_POSTING_LIST
               : reversed ? MPC_POSTING_REVERSED
               : swapped  ? MPC_POSTING_PAIRS_SWAPPED
                          : MPC_POSTING_UNKNOWN;
    return MPI_SUCCESS;
}

/* Makes the two probe topologies over MPI_COMM_SELF: a grid of three periodic dimensions of one
 * process (six self edges) and a graph of four self edges. */
static int probe_topologies(mpc_comm *cart, mpc_comm *graph)
{
    int dims[3] = {1, 1, 1}, periods[3] = {1, 1, 1}, self[4] = {0, 0, 0, 0};
    int rc = MPI_Cart_create(MPI_COMM_SELF, 3, dims, periods, 0, cart);
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Dist_graph_create_adjacent(MPI_COMM_SELF, 4, self, MPI_UNWEIGHTED, 4, self,
                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, graph);
}

int mpc_neighbor_posting_known(int kind, int nonblocking, int cart, mpc_posting *posting)
{
    unsigned known = atomic_load(&postings);
    if (!(known & PROBED))
        return 0;
    *posting = (mpc_posting)((known >> posting_shift(kind, nonblocking, cart)) & 3u);
    return 1;
}

int mpc_neighbor_posting(int kind, int nonblocking, int cart, mpc_posting *posting)
{
    unsigned known = atomic_load(&postings);
    if (!(known & PROBED)) {
        /* two threads may probe at once: each on its own communicators, to the same answer */
        mpc_comm topo[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
        int rc = probe_topologies(&topo[1], &topo[0]);
        unsigned bits = 0;
        for (int k = 0; k < MPC_NB_KINDS && rc == MPI_SUCCESS; k++)
            for (int nb = 0; nb < 2 && rc == MPI_SUCCESS; nb++)
                for (int c = 0; c < 2 && rc == MPI_SUCCESS; c++) {
                    mpc_posting p = MPC_POSTING_UNKNOWN;
                    rc = probe_form(topo[c], c ? 6 : 4, k, nb, &p);
                    bits |= (unsigned)p << posting_shift(k, nb, c);
                }
        for (int c = 0; c < 2; c++) {
            int frc = topo[c] == MPI_COMM_NULL ? MPI_SUCCESS : MPI_Comm_free(&topo[c]);
            if (rc == MPI_SUCCESS)
                rc = frc;
        }
        if (rc != MPI_SUCCESS)
            return rc;
        known = bits | PROBED;
        atomic_store(&postings, known);
    }
    *posting = (mpc_posting)((known >> posting_shift(kind, nonblocking, cart)) & 3u);
    return MPC_OK;
}

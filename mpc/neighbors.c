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

/* ---- the pairing of a periodic dimension of one or two processes ----
 * There both neighbours of a process along the dimension are one process (itself, or the
 * other), which gets two blocks from it. MPI-4.0 settled which is which (MPI-3.1 erratum,
 * mpi-forum/mpi-issues#153): the block sent toward -1 arrives in the receiver's +1 block and
 * the block sent toward +1 in its -1 block, as in a larger ring. MPICH 4.0.2 does so for
 * (I)neighbor_alltoall but not for the v and w forms, which post their receives in list order
 * and so deliver the -1 block into the -1 block (pmodels/mpich#5777 fixed them later). Rather
 * than trust a version number, each form is tried once on a one-process periodic grid over
 * MPI_COMM_SELF, where both blocks come back to the sender. */

enum { PROBED = 1u << MPC_NB_PAIRING_BITS };
static atomic_uint pairing; /* PROBED | the bits of the forms that pair list order to order */

/* One form (kind, blocking or not) on cart, a periodic grid of one process: *same_side is 1 when
 * the block sent toward -1 came back into the -1 block. */
static int probe_form(mpc_comm cart, int kind, int nonblocking, int *same_side)
{
    int send[2] = {10, 11}, recv[2] = {-1, -1};
    MPI_Count counts[2] = {sizeof(int), sizeof(int)}, ones[2] = {1, 1};
    MPI_Aint displs[2] = {0, sizeof(int)}, sa[2], ra[2];
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    MPI_Request req = MPI_REQUEST_NULL;
    mpc_request *r = nonblocking ? &req : NULL;
    int rc;
    switch (kind) {
    case MPC_NB_ALLTOALL: rc = mpc_neighbor_alltoall(send, recv, sizeof(int), cart, r); break;
    case MPC_NB_ALLTOALLV:
        rc = mpc_neighbor_alltoallv(send, counts, displs, recv, counts, displs, cart, r);
        break;
    default:
        sa[0] = (MPI_Aint)(uintptr_t)&send[0];
        sa[1] = (MPI_Aint)(uintptr_t)&send[1];
        ra[0] = (MPI_Aint)(uintptr_t)&recv[0];
        ra[1] = (MPI_Aint)(uintptr_t)&recv[1];
        rc = mpc_neighbor_alltoallw(2, ones, sa, types, 2, ones, ra, types, cart, r);
        break;
    }
    if (rc == MPI_SUCCESS && nonblocking)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!((recv[0] == 10 && recv[1] == 11) || (recv[0] == 11 && recv[1] == 10)))
        return error_record(MPI_ERR_INTERN, NULL,
                            "a neighbourhood collective on a one-process periodic grid returned "
                            "%d and %d for the blocks 10 and 11 it sent to itself",
                            recv[0], recv[1]);
    *same_side = recv[0] == 10;
    return MPI_SUCCESS;
}

int mpc_neighbor_pairing(unsigned *same_side)
{
    unsigned known = atomic_load(&pairing);
    if (known & PROBED) {
        *same_side = known & ~(unsigned)PROBED;
        return MPC_OK;
    }
    /* two threads may probe at once: each on its own grid, to the same answer */
    MPI_Comm cart = MPI_COMM_NULL;
    int dims[1] = {1}, periods[1] = {1};
    int rc = MPI_Cart_create(MPI_COMM_SELF, 1, dims, periods, 0, &cart);
    if (rc != MPI_SUCCESS)
        return rc;
    unsigned bits = 0;
    for (int kind = 0; kind < MPC_NB_KINDS && rc == MPI_SUCCESS; kind++)
        for (int nonblocking = 0; nonblocking < 2 && rc == MPI_SUCCESS; nonblocking++) {
            int same = 0;
            if ((rc = probe_form(cart, kind, nonblocking, &same)) == MPI_SUCCESS && same)
                bits |= MPC_NB_PAIRING_BIT(kind, nonblocking);
        }
    int frc = MPI_Comm_free(&cart);
    if (rc != MPI_SUCCESS)
        return rc;
    if (frc != MPI_SUCCESS)
        return frc;
    atomic_store(&pairing, bits | PROBED);
    *same_side = bits;
    return MPC_OK;
}

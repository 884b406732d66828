/* neighbors.c — distributed graph topologies and the neighbourhood collectives (mpc_internal.h),
 * and how this MPI pairs the two blocks of a periodic Cartesian dimension of one or two
 * processes. Blocking forms under MOTOR_WAIT's yield policy run as their non-blocking form,
 * completed with the backoff, as the other byte-carrying collectives do (collectives.c). */
#include "mpc_impl.h"

#include "error_record.h"
#include "owned_handles.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

int mpc_dist_graph_create_adjacent(mpc_comm comm, int indegree, const int *sources, int outdegree,
                                   const int *destinations, int reorder, mpc_comm *out)
{
    int marked = mpc_hang_enter_collective(MPC_HANG_GRAPH_CREATE, comm);
    int rc = MPI_Dist_graph_create_adjacent(comm, indegree, sources, MPI_UNWEIGHTED, outdegree,
                                            destinations, MPI_UNWEIGHTED, MPI_INFO_NULL, reorder,
                                            out); /* sequenced before *out is read */
    mpc_hang_unblock(marked);
    mpc_hang_derived(comm, rc == MPI_SUCCESS ? *out : MPI_COMM_NULL, 1);
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

/* ---- how this MPI matches repeated edges ----
 * Where one process is a neighbour several times (a periodic grid dimension of one or two
 * processes; a graph's repeated or self edges), only the order in which MPI posts its receives
 * decides which block lands where. MPI-4.0 fixes the outcome: on a grid the block sent toward -1
 * arrives in the receiver's +1 block and the other way round (MPI-3.1 erratum,
 * mpi-forum/mpi-issues#153); on a graph the k-th edge from a process carries its k-th block to
 * that destination. MPICH 4.0.2 posts (I)neighbor_alltoall's receives in reverse list order, for
 * every topology (right for a grid dimension of two blocks, wrong for a graph's repeated edges),
 * and the v and w forms' in list order (wrong for grids, right for graphs); later MPICHs changed
 * both (pmodels/mpich#5777, #7945). Rather than trust a version number, the one form that
 * needs it — MPI_Ineighbor_alltoallw, which the non-blocking neighbourhood collectives run as
 * (the blocking ones run as point-to-point, paired by tags) — is tried once per process on
 * MPI_COMM_SELF, on a grid of three periodic dimensions of one process and on a graph of four
 * self edges: every block comes back to the sender, and where each one lands gives the order of
 * posting. */

enum { PROBE_BLOCKS = 6, PROBED = 1u << 31 };
static atomic_uint postings; /* PROBED | a 2-bit mpc_posting for a graph, then one for a grid */

static unsigned posting_shift(int cart) { return cart ? 2u : 0u; }

/* MPI_Ineighbor_alltoallw on topo (a topology over MPI_COMM_SELF with n self edges): the order
 * it posts. */
static int probe_form(mpc_comm topo, int n, mpc_posting *posting)
{
    int send[PROBE_BLOCKS], recv[PROBE_BLOCKS];
    MPI_Count ones[PROBE_BLOCKS];
    MPI_Aint sa[PROBE_BLOCKS], ra[PROBE_BLOCKS];
    MPI_Datatype types[PROBE_BLOCKS];
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        send[i] = i;
        recv[i] = -1;
        ones[i] = 1;
        types[i] = MPI_INT;
        if ((rc = MPI_Get_address(&send[i], &sa[i])) == MPI_SUCCESS)
            rc = MPI_Get_address(&recv[i], &ra[i]);
    }
    MPI_Request req = MPI_REQUEST_NULL;
    if (rc == MPI_SUCCESS)
        rc = MPI_Ineighbor_alltoallw_c(MPI_BOTTOM, ones, sa, types, MPI_BOTTOM, ones, ra, types,
                                       topo, &req);
    if (rc == MPI_SUCCESS)
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

int mpc_neighbor_posting_known(int cart, mpc_posting *posting)
{
    unsigned known = atomic_load(&postings);
    if (!(known & PROBED))
        return 0;
    *posting = (mpc_posting)((known >> posting_shift(cart)) & 3u);
    return 1;
}

int mpc_neighbor_posting(int cart, mpc_posting *posting)
{
    unsigned known = atomic_load(&postings);
    if (!(known & PROBED)) {
        /* two threads may probe at once: each on its own communicators, to the same answer */
        mpc_comm topo[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
        int rc = probe_topologies(&topo[1], &topo[0]);
        unsigned bits = 0;
        for (int c = 0; c < 2 && rc == MPI_SUCCESS; c++) {
            mpc_posting p = MPC_POSTING_UNKNOWN;
            rc = probe_form(topo[c], c ? 6 : 4, &p);
            bits |= (unsigned)p << posting_shift(c);
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
    *posting = (mpc_posting)((known >> posting_shift(cart)) & 3u);
    return MPC_OK;
}

/* ---- the exchange with a size header before every block ----
 * A block's datatype is a struct of two pieces at absolute addresses: one MPI_INT64_T (the
 * header) and the block (count elements of its type; a run of bytes as one contiguous type —
 * MPICH packs a hindexed of MPI_BYTE byte by byte, 6x slower at 1 KiB). Made with
 * MPI_Type_create_struct + commit it costs about 0.5-1 us, several per call; so the types are
 * cached, keyed by (data, count, type, header): a halo exchange on long-lived arrays finds its
 * types on every call after the first. An entry is never freed while a call that took it runs
 * (busy): until a blocking call returns, until a non-blocking one has started (MPI completes a
 * started operation on freed datatypes normally). A full set with every entry busy gives a type
 * made for the one call. The cache lock is held while a type is made (MPI calls that never wait
 * for another process), never across the collective. */

enum { TYPE_SETS = 64, TYPE_WAYS = 4 };
typedef struct nb_type {
    const void *data;
    const int64_t *header;
    MPI_Count count;
    MPI_Datatype base, made; /* made MPI_DATATYPE_NULL: the entry is empty */
    uint64_t used;           /* the clock at its last use (the set's oldest goes first) */
    int busy;                /* calls that hold it */
} nb_type;

static pthread_mutex_t type_lock = PTHREAD_MUTEX_INITIALIZER;
static nb_type type_cache[TYPE_SETS][TYPE_WAYS];
static uint64_t type_clock;
static int type_cache_ready; /* every entry emptied (MPI_DATATYPE_NULL is not 0 in MPICH) */
static int64_t types_made;

static void type_cache_init(void) /* under type_lock */
{
    for (int s = 0; s < TYPE_SETS && !type_cache_ready; s++)
        for (int w = 0; w < TYPE_WAYS; w++)
            type_cache[s][w] = (nb_type){.made = MPI_DATATYPE_NULL};
    type_cache_ready = 1;
}

static unsigned type_set(const void *data, const int64_t *header, MPI_Count count,
                         MPI_Datatype base)
{
    uint64_t h = (uint64_t)(uintptr_t)data * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)(uintptr_t)header + (uint64_t)count * 0xff51afd7ed558ccdull) *
         0xc4ceb9fe1a85ec53ull;
    h ^= (uint64_t)(uint32_t)base * 0x2545f4914f6cdd1dull;
    return (unsigned)(h >> 58) % TYPE_SETS;
}

/* Makes the committed two-piece type of a block behind header. */
static int make_block_type(const mpc_nb_block *b, const int64_t *header, MPI_Datatype *out)
{
    MPI_Aint at[2];
    int rc;
    if ((rc = MPI_Get_address(header, &at[0])) != MPI_SUCCESS ||
        (rc = MPI_Get_address(b->data, &at[1])) != MPI_SUCCESS)
        return rc;
    MPI_Datatype piece = b->type;
    if (b->count != 1 && (rc = MPI_Type_contiguous_c(b->count, b->type, &piece)) != MPI_SUCCESS)
        return rc;
    MPI_Count lengths[2] = {1, 1}, displs[2] = {at[0], at[1]};
    MPI_Datatype types[2] = {MPI_INT64_T, piece};
    rc = MPI_Type_create_struct_c(2, lengths, displs, types, out);
    if (piece != b->type) {
        int frc = MPI_Type_free(&piece); /* the struct keeps what it needs of it */
        if (rc == MPI_SUCCESS && frc != MPI_SUCCESS) {
            MPI_Type_free(out);
            rc = frc;
        }
    }
    if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(out)) != MPI_SUCCESS)
        MPI_Type_free(out);
    return rc;
}

void mpc_header_types_lock(void)
{
    pthread_mutex_lock(&type_lock);
    type_cache_init();
}

void mpc_header_types_unlock(void) { pthread_mutex_unlock(&type_lock); }

int mpc_header_type(const mpc_nb_block *b, int64_t *header, MPI_Count *count, MPI_Aint *displ,
                    MPI_Datatype *type, mpc_type_lease *lease)
{
    lease->entry = NULL;
    lease->own = MPI_DATATYPE_NULL;
    if (b->count == 0) { /* the header alone */
        *count = 1;
        *type = MPI_INT64_T;
        return MPI_Get_address(header, displ);
    }
    *count = 1;
    *displ = 0;
    nb_type *set = type_cache[type_set(b->data, header, b->count, b->type)], *victim = NULL;
    for (int w = 0; w < TYPE_WAYS; w++) {
        nb_type *e = &set[w];
        if (e->made != MPI_DATATYPE_NULL && e->data == b->data && e->header == header &&
            e->count == b->count && e->base == b->type) {
            e->busy++;
            e->used = ++type_clock;
            lease->entry = e;
            *type = e->made;
            return MPI_SUCCESS;
        }
        if (!e->busy && (!victim || (victim->made != MPI_DATATYPE_NULL &&
                                     (e->made == MPI_DATATYPE_NULL || e->used < victim->used))))
            victim = e;
    }
    MPI_Datatype made;
    types_made++;
    int rc = make_block_type(b, header, &made);
    if (rc != MPI_SUCCESS)
        return rc;
    *type = made;
    if (!victim) { /* every entry of the set is held by a running call */
        lease->own = made;
        return MPI_SUCCESS;
    }
    if (victim->made != MPI_DATATYPE_NULL && (rc = MPI_Type_free(&victim->made)) != MPI_SUCCESS) {
        MPI_Type_free(&made);
        return rc;
    }
    *victim = (nb_type){b->data, header, b->count, b->type, made, ++type_clock, 1};
    lease->entry = victim;
    return MPI_SUCCESS;
}

void mpc_header_types_give_back(mpc_type_lease *leases, int n)
{
    pthread_mutex_lock(&type_lock);
    for (int i = 0; i < n; i++)
        if (leases[i].entry)
            leases[i].entry->busy--;
    pthread_mutex_unlock(&type_lock);
    for (int i = 0; i < n; i++)
        if (leases[i].own != MPI_DATATYPE_NULL)
            MPI_Type_free(&leases[i].own);
}

#define STACK_LEASES 64

int mpc_neighbor_exchange(const mpc_nb_exchange *x, mpc_comm comm, mpc_request *req)
{
    int marked = 0; /* with req it is started here and waited for by the caller */
    if (req)
        mpc_hang_note_collective(MPC_HANG_NEIGHBOR, comm);
    else
        marked = mpc_hang_enter_collective(MPC_HANG_NEIGHBOR, comm);
    int n = x->out + x->in, taken = 0, rc = MPI_SUCCESS;
    mpc_type_lease stack_leases[STACK_LEASES],
        *leases = n <= STACK_LEASES ? stack_leases : malloc((size_t)n * sizeof *leases);
    if (!leases)
        return mpc_hang_leave(
            marked, error_record(MPC_ERR_NO_MEMORY, NULL,
                                 "out of memory for the datatypes of %d neighbourhood blocks", n));
    mpc_header_types_lock();
    for (int k = 0; k < x->out && rc == MPI_SUCCESS; k++, taken++) {
        int b = x->send_one ? 0 : k;
        rc = mpc_header_type(&x->send[b], &x->sent[b], &x->counts[k], &x->displs[k], &x->types[k],
                             &leases[taken]);
    }
    for (int i = 0; i < x->in && rc == MPI_SUCCESS; i++, taken++) {
        int j = x->perm ? x->perm[i] : i, e = x->out + i;
        rc = mpc_header_type(&x->recv[j], &x->got[j], &x->counts[e], &x->displs[e], &x->types[e],
                             &leases[taken]);
    }
    mpc_header_types_unlock();
    if (rc == MPI_SUCCESS) {
        const MPI_Count *rcounts = x->counts + x->out;
        const MPI_Aint *rdispls = x->displs + x->out;
        const MPI_Datatype *rtypes = x->types + x->out;
        MPI_Request own;
        if (req)
            rc = MPI_Ineighbor_alltoallw_c(MPI_BOTTOM, x->counts, x->displs, x->types, MPI_BOTTOM,
                                           rcounts, rdispls, rtypes, comm, req);
        else if (YIELDING)
            rc = backoff_complete(MPI_Ineighbor_alltoallw_c(MPI_BOTTOM, x->counts, x->displs,
                                                            x->types, MPI_BOTTOM, rcounts, rdispls,
                                                            rtypes, comm, &own),
                                  &own, NULL);
        else
            rc = MPI_Neighbor_alltoallw_c(MPI_BOTTOM, x->counts, x->displs, x->types, MPI_BOTTOM,
                                          rcounts, rdispls, rtypes, comm);
    }
    mpc_header_types_give_back(leases, taken);
    if (leases != stack_leases)
        free(leases);
    return mpc_hang_leave(marked, rc);
}

int64_t mpc_neighbor_types_made(void)
{
    pthread_mutex_lock(&type_lock);
    int64_t n = types_made;
    pthread_mutex_unlock(&type_lock);
    return n;
}

int mpc_neighbor_types_free_all(void)
{
    int first = MPI_SUCCESS;
    pthread_mutex_lock(&type_lock);
    for (int s = 0; s < TYPE_SETS && type_cache_ready; s++)
        for (int w = 0; w < TYPE_WAYS; w++) {
            nb_type *e = &type_cache[s][w];
            if (e->made == MPI_DATATYPE_NULL)
                continue;
            int rc = mpi_running() ? MPI_Type_free(&e->made) : MPI_SUCCESS;
            if (first == MPI_SUCCESS)
                first = rc;
            *e = (nb_type){.made = MPI_DATATYPE_NULL};
        }
    pthread_mutex_unlock(&type_lock);
    return first;
}

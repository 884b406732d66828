/* opi_neighbors.c — distributed graph topologies and the neighbourhood collectives: the internal
 * calls behind Intracomm.CreateDistGraphAdjacent, DistGraphComm's neighbour lists, and
 * NeighborAllgather, NeighborAlltoall, NeighborAlltoallv (blocking and I-prefixed, arrays or
 * regions) of CartComm and DistGraphComm.
 *
 * The C# side describes a topology communicator once, as an int[] `topo` (topo_arg): its degrees,
 * whether it is a grid, and its sources when a process is one more than once (a periodic grid
 * dimension of one or two processes, a graph's repeated or self edges). Then only the order in
 * which MPI posts its receives decides which block lands where; MPI-4.0 fixes the outcome, and
 * where this MPI's order gives another (mpc_neighbor_posting: MPICH 4.0.2 differs by form and by
 * topology) the receive entries of the non-blocking forms' MPI_Ineighbor_alltoallw are permuted
 * so that they give MPI-4.0's (receive_order); the blocking forms pair blocks by tags.
 *
 * The array forms are MPI's own (blocks of bytes). The region forms are one
 * MPI_Neighbor_alltoallw: one (address, 1, region datatype) per neighbour, the addresses absolute
 * (MPI_BOTTOM), because the regions may lie in as many arrays as there are neighbours. Their
 * arrays are read from the managed lists again after every point where a collection may run
 * (validation builds class plans; holding takes GC handles): what validation keeps is each
 * region's offset from its array's start, and the addresses are computed last, with no Mono call
 * between them and MPI. Up to XFER_MAX_OBJECTS distinct arrays go into the bracket and the
 * registry as any collective's do; more are held by an xfer_hold (transfer.h). */
#include "opi_icalls.h"

#include "layout.h"
#include "names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arguments ---- */

/* Elements of a buffer, for messages. */
static size_t elements(const opi_buffer *b) { return b->elem_size ? b->bytes / b->elem_size : 0; }

static MonoObject *list_at(MonoObject *list, int32_t i)
{
    return ((MonoObject **)rt_array_data(list))[i];
}

/* The element type of a, an array (non-NULL): its class, for type checks. */
static int element_class(MonoObject *a, const char *name, MonoClass **out)
{
    const rt_class_plan *p = opi_plan_for(a);
    if (!p)
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a class plan");
    if (p->shape != RT_ARRAY)
        return error_record(OPI_ERR_NOT_TRANSPORTABLE, name, "%s must be an array", name);
    *out = p->elem_class;
    return MPC_OK;
}

static int type_mismatch(const char *a_name, MonoClass *a, const char *b_name, MonoClass *b)
{
    char *at = rt_class_name(a), *bt = rt_class_name(b);
    error_record(OPI_ERR_TYPE_MISMATCH, b_name,
                 "%s holds %s elements and %s %s: a neighbourhood collective moves one element "
                 "type",
                 a_name, at ? at : "?", b_name, bt ? bt : "?");
    free(at);
    free(bt);
    return OPI_ERR_TYPE_MISMATCH;
}

/* A whole array argument of an array form. */
static int array_arg(MonoObject *a, const char *name, opi_buffer *b, MonoClass **elem)
{
    int rc = opi_buffer_whole_as(a, name, b);
    return rc ? rc : element_class(a, name, elem);
}

/* The topology as C# describes it (Neighborhood.Describe): {indegree, outdegree, cart, repeated,
 * sources[indegree], destinations[outdegree], recvTags[indegree], sendTags[outdegree]}; repeated
 * is 1 when a process is a source more than once (then the order of MPI's receives matters to
 * the non-blocking forms, receive_order); the tags pair the blocking forms' point-to-point
 * blocks as MPI-4.0 does. The sources also tell the check which blocks come from MP.ProcNull (an
 * open grid edge), where nothing arrives. */
typedef struct nb_topo {
    int32_t in, out, cart, repeated;
} nb_topo;

static int topo_arg(MonoObject *topo, nb_topo *t)
{
    size_t n = topo ? rt_array_length(topo) : 0;
    const int32_t *v = topo ? (const int32_t *)rt_array_data(topo) : NULL;
    if (n < 4 || v[0] < 0 || v[1] < 0 || (v[3] != 0 && v[3] != 1) ||
        n - 4 != 2 * ((size_t)v[0] + (size_t)v[1]))
        return error_record(OPI_ERR_BAD_ARGUMENT, NULL, "the topology description is malformed");
    *t = (nb_topo){v[0], v[1], v[2] != 0, v[3]};
    return MPC_OK;
}

/* How this MPI posts MPI_Ineighbor_alltoallw's receives (mpc_neighbor_posting): probed the first
 * time, with collectives over MPI_COMM_SELF that never wait for another process. */
RT_HOLDS_STACK_MARK static int posting_of(int cart, mpc_posting *out)
{
    mpc_posting p = MPC_POSTING_UNKNOWN;
    if (mpc_neighbor_posting_known(cart, out))
        return MPC_OK; /* every call after the first: no MPI */
    int rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_neighbor_posting(cart, &p);
    XFER_BLOCKING_END;
    *out = p;
    return rc;
}

typedef struct edge {
    int32_t peer, at; /* a source and its position in the list */
} edge;

static int by_peer(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    return x->peer != y->peer ? (x->peer < y->peer ? -1 : 1) : x->at - y->at;
}

/* The rank of position i in the order receives are posted (n positions). */
static int32_t posted_rank(mpc_posting p, int32_t i, int32_t n)
{
    switch (p) {
    case MPC_POSTING_REVERSED: return n - 1 - i;
    case MPC_POSTING_PAIRS_SWAPPED: return (i ^ 1) < n ? i ^ 1 : i;
    default: return i;
    }
}

/* The receive entries of an MPI_Ineighbor_alltoallw so that this MPI's matching gives MPI-4.0's
 * outcome where a process is a source more than once: *perm (NULL when every entry keeps its own
 * block; else in entries, the caller frees it) says which block receive entry i carries. The o-th
 * message from a process lands in the entry posted o-th among its entries; it must land in its o-th
 * entry on a graph (the k-th edge carries the k-th block), and on a grid in the other entry of
 * its dimension (the block sent toward -1 arrives in the +1 block). */
static int receive_order(MonoObject *topo, const nb_topo *t, int32_t **perm)
{
    *perm = NULL;
    if (!t->repeated)
        return MPC_OK;
    mpc_posting posting;
    int rc = posting_of(t->cart, &posting);
    if (rc != MPC_OK)
        return rc;
    if (posting == MPC_POSTING_UNKNOWN)
        return error_record(OPI_ERR_NOT_SUPPORTED, NULL,
                            "this MPI posts the receives of a neighbourhood collective in an order "
                            "System.MP does not know, so where a process is a neighbour more than "
                            "once the blocks cannot be paired as MPI-4.0 says");
    int32_t n = t->in;
    const int32_t *sources = (const int32_t *)rt_array_data(topo) + 4; /* read now: no Mono call
                                                                        * from here on */
    edge *edges = malloc(((size_t)n + 1) * sizeof *edges);
    int32_t *order = malloc(((size_t)n + 1) * sizeof *order), *group = NULL;
    if (!edges || !order || !(group = malloc(((size_t)n + 1) * sizeof *group))) {
        free(edges);
        free(order);
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory ordering %d sources", n);
    }
    int32_t ne = 0;
    for (int32_t i = 0; i < n; i++) {
        order[i] = i;
        if (sources[i] != OPI_PROC_NULL)
            edges[ne++] = (edge){sources[i], i};
    }
    qsort(edges, (size_t)ne, sizeof *edges, by_peer);
    int moved = 0;
    for (int32_t g = 0; g < ne;) {
        int32_t m = 1;
        while (g + m < ne && edges[g + m].peer == edges[g].peer)
            m++;
        if (m > 1) {
            /* the group's positions in the order they are posted (insertion sort: m is small) */
            for (int32_t o = 0; o < m; o++) {
                int32_t at = edges[g + o].at, r = posted_rank(posting, at, n), k = o;
                while (k > 0 && posted_rank(posting, group[k - 1], n) > r) {
                    group[k] = group[k - 1];
                    k--;
                }
                group[k] = at;
            }
            for (int32_t o = 0; o < m; o++) {
                int32_t want = edges[g + o].at;
                if (t->cart) { /* the other entry of its dimension, when it is in the group */
                    for (int32_t q = 0; q < m; q++)
                        if (edges[g + q].at == (want ^ 1)) {
                            want ^= 1;
                            break;
                        }
                }
                order[group[o]] = want;
                moved |= group[o] != want;
            }
        }
        g += m;
    }
    free(edges);
    free(group);
    if (!moved)
        free(order);
    else
        *perm = order;
    return MPC_OK;
}

/* ---- running a prepared collective ----
 * MPICH 4.0.2's neighbourhood collectives drop a block longer than its receive block (the call
 * succeeds, the block is left as it was) and say nothing of a shorter one, so a receiver learns
 * each block's size another way. A blocking call runs as point-to-point on the communicator's
 * private twin (mpc_neighbor_exact): each receive's status gives its block's size, and MPICH's
 * neighbourhood collective is no faster (it posts the same receives and sends, through a
 * schedule). A non-blocking call, whose Request is one MPI request, sends each block behind an
 * 8-byte header in one MPI_Ineighbor_alltoallw (mpc_neighbor_exchange, its datatypes cached). A
 * block of another size than its receive block is OPI_ERR_BLOCK_MISMATCH (MPException) on the
 * receiver, when the call completes. */

/* How a message names block j of this rank's receive side. */
enum nb_naming { NAME_BLOCK, NAME_BLOCK_V, NAME_REGION, NAME_REGION_ARRAYS };

/* What the receiver checks once the blocks have arrived: block j, from Sources[j], holds
 * expected[j] bytes, and its sender sent got[j] (MPC_GOT_MORE: more than that, the block
 * dropped or cut; nothing comes from MP.ProcNull). A non-blocking call keeps it at the start of
 * its request's buffer. */
typedef struct nb_check {
    const char *call; /* "NeighborAlltoall", "INeighborAlltoall", ... */
    int naming;
    int32_t in;
    uint32_t elem_size;
    MonoClass *elem;
    const int64_t *expected, *got;
    const int32_t *sources; /* MPI's ranks (MPI_PROC_NULL) */
} nb_check;

/* The message of a block j whose sender sent got bytes. */
static int block_mismatch(const nb_check *k, int32_t j, int64_t got)
{
    char block[112];
    int64_t e = k->elem_size ? (int64_t)k->elem_size : 1, holds = k->expected[j] / e;
    int32_t from = k->sources[j];
    switch (k->naming) {
    case NAME_BLOCK:
        snprintf(block, sizeof block, "block %d of recvArray (elements [%lld, %lld))", j,
                 (long long)(j * holds), (long long)((j + 1) * holds));
        break;
    case NAME_BLOCK_V:
        snprintf(block, sizeof block, "block %d of recvArray (recvCounts[%d] = %lld)", j, j,
                 (long long)holds);
        break;
    case NAME_REGION: snprintf(block, sizeof block, "recvRegions[%d] (of recvArray)", j); break;
    default: snprintf(block, sizeof block, "recvRegions[%d] (of recvArrays[%d])", j, j); break;
    }
    char *type = rt_class_name(k->elem);
    const char *t = type ? type : "?";
    if (got < 0 || got > k->expected[j])
        error_record(OPI_ERR_BLOCK_MISMATCH, NULL,
                     "%s: %s, the block from Sources[%d] (rank %d), holds %lld %s elements, and "
                     "rank %d sent more: the neighbours disagree on the block's size (nothing was "
                     "written outside the block; its contents are not valid)",
                     k->call, block, j, from, (long long)holds, t, from);
    else if (got % e == 0)
        error_record(OPI_ERR_BLOCK_MISMATCH, NULL,
                     "%s: %s, the block from Sources[%d] (rank %d), holds %lld %s elements, but "
                     "rank %d sent %lld: the neighbours disagree on the block's size (only the "
                     "first %lld elements were written; the block's contents are not valid)",
                     k->call, block, j, from, (long long)holds, t, from, (long long)(got / e),
                     (long long)(got / e));
    else
        error_record(OPI_ERR_BLOCK_MISMATCH, NULL,
                     "%s: %s, the block from Sources[%d] (rank %d), holds %lld %s elements (%lld "
                     "bytes), but rank %d sent %lld bytes, not a whole number of %lld-byte "
                     "elements: the neighbours disagree on the block's size or element type "
                     "(nothing was written outside the block; its contents are not valid)",
                     k->call, block, j, from, (long long)holds, t, (long long)k->expected[j], from,
                     (long long)got, (long long)e);
    free(type);
    return OPI_ERR_BLOCK_MISMATCH;
}

/* The receiver's check of a completed call that returned rc: a block of another size is its
 * error (also where MPI reported a truncation); otherwise rc. */
static int check_blocks(const nb_check *k, int rc)
{
    if (rc != MPC_OK && (rc < 0 || mpc_error_class(rc) != MPI_ERR_TRUNCATE))
        return rc; /* not about sizes: MPI's own error */
    for (int32_t j = 0; j < k->in; j++)
        if (k->sources[j] != MPI_PROC_NULL && k->got[j] != k->expected[j])
            return block_mismatch(k, j, k->got[j]);
    return rc;
}

static int nb_verify(const xfer_info *info, int rc)
{
    return check_blocks((const nb_check *)(void *)info->buffer->data, rc);
}

/* A call's scratch, in one piece: its blocks (sends, then receives), the sizes expected and
 * got, the sources; blocking, the destinations and tags; non-blocking, the check first, the
 * headers sent, and MPI's arrays of counts, displacements and types. MPI's until the call
 * completes, so a non-blocking one's go with its registry record (xfer_info.buffer). */
typedef struct nb_parts {
    nb_check *check; /* non-blocking */
    MPI_Count *counts;
    MPI_Aint *displs;
    MPI_Datatype *types; /* non-blocking */
    int64_t *sent;       /* non-blocking */
    int64_t *got, *expected;
    int32_t *sources, *dests, *stags, *rtags; /* dests and tags: blocking */
    mpc_nb_block *blocks;
} nb_parts;

/* Lays the parts out from base (NULL: only counts); returns the bytes they take. */
static size_t lay_out(char *base, int32_t in, int32_t out, int nonblocking, nb_parts *p)
{
    size_t n = (size_t)in + (size_t)out, at = 0;
#define NB_PART(field, type, count)                              \
    do {                                                         \
        if (base)                                                \
            p->field = (type *)(void *)(base + at);              \
        at += ((size_t)(count) * sizeof(type) + 7) & ~(size_t)7; \
    } while (0)
    if (nonblocking)
        NB_PART(check, nb_check, 1);
    NB_PART(counts, MPI_Count, n);
    NB_PART(displs, MPI_Aint, n);
    NB_PART(got, int64_t, in);
    NB_PART(expected, int64_t, in);
    NB_PART(sources, int32_t, in);
    NB_PART(blocks, mpc_nb_block, n);
    if (nonblocking) {
        NB_PART(types, MPI_Datatype, n);
        NB_PART(sent, int64_t, out);
    } else {
        NB_PART(dests, int32_t, out);
        NB_PART(stags, int32_t, out);
        NB_PART(rtags, int32_t, in);
    }
#undef NB_PART
    return at;
}

/* Neighbours up to which a blocking call's parts fit in its frame. */
#define NB_STACK_NEIGHBOURS 16
typedef struct nb_scratch {
    xfer_buffer *pooled; /* non-blocking */
    void *heap;          /* blocking, past NB_STACK_NEIGHBOURS */
    int64_t stack[NB_STACK_NEIGHBOURS * 18];
} nb_scratch;

/* Takes the scratch of a call over in sources and out destinations and lays it out in p. */
static int scratch_take(nb_scratch *s, int32_t in, int32_t out, int nonblocking, nb_parts *p)
{
    s->pooled = NULL;
    s->heap = NULL;
    *p = (nb_parts){0};
    size_t bytes = lay_out(NULL, in, out, nonblocking, p) + 8;
    char *base = NULL;
    if (!nonblocking && bytes <= sizeof s->stack)
        base = (char *)s->stack;
    else if (nonblocking && (s->pooled = xfer_buffer_take(bytes)))
        base = (char *)s->pooled->data;
    else if (!nonblocking && (s->heap = malloc(bytes)))
        base = s->heap;
    if (!base)
        return error_record(MPC_ERR_NO_MEMORY, NULL,
                            "out of memory for the blocks of %d neighbours", in + out);
    lay_out(base, in, out, nonblocking, p);
    return MPC_OK;
}

static void scratch_give(nb_scratch *s)
{
    if (s->pooled)
        xfer_buffer_give(s->pooled);
    free(s->heap);
    s->pooled = NULL;
    s->heap = NULL;
}

_Static_assert(sizeof(MPI_Count) == 8 && sizeof(MPI_Aint) == 8,
               "counts and displacements are 8-byte entries");
_Static_assert(sizeof(int32_t) == sizeof(int), "ranks and tags are MPI's ints");

/* The check of a call (k: the parts' check, or the caller's for a blocking one) and what it needs
 * of topo (read now: no Mono call follows until MPI runs): the sources, and for a blocking call
 * the destinations and the tags that pair the blocks; every size still unknown. */
static void check_init(nb_check *k, const nb_parts *p, MonoObject *topo, const nb_topo *t,
                       const char *call, int naming, uint32_t elem_size, MonoClass *elem)
{
    const int32_t *v = (const int32_t *)rt_array_data(topo) + 4;
    size_t in = (size_t)t->in, out = (size_t)t->out;
    for (size_t j = 0; j < in; j++) { /* MP.ProcNull becomes MPI's */
        p->sources[j] = v[j] == OPI_PROC_NULL ? MPI_PROC_NULL : v[j];
        p->got[j] = MPC_GOT_MORE;
    }
    if (p->dests) {
        for (size_t k = 0; k < out; k++)
            p->dests[k] = v[in + k] == OPI_PROC_NULL ? MPI_PROC_NULL : v[in + k];
        memcpy(p->rtags, v + in + out, in * sizeof(int32_t));
        memcpy(p->stags, v + 2 * in + out, out * sizeof(int32_t));
    }
    *k = (nb_check){call, naming, t->in, elem_size, elem, p->expected, p->got, p->sources};
}

/* Runs a blocking call (its parts p, allgather: one send block) and checks it: its buffers lie
 * in objects a and b (either may be NULL; objects beyond them are held by the caller). */
RT_HOLDS_STACK_MARK static int run_blocking(MPI_Comm comm, int allgather, const nb_topo *t,
                                            const nb_parts *p, const nb_check *k, MonoObject *a,
                                            MonoObject *b)
{
    gch_count(GCH_OPERATIONS, 1);
    int rc;
    XFER_BLOCKING_BEGIN(a, b);
    rc = mpc_neighbor_exact(comm, allgather, t->out, p->blocks, p->dests, p->stags, t->in,
                            p->blocks + t->out, p->sources, p->rtags, p->got);
    XFER_BLOCKING_END;
    return check_blocks(k, rc);
}

/* Starts a non-blocking call (its parts p, the check first; allgather: one send block; perm:
 * receive_order's; p->sent filled: the headers, each send block's bytes) for the Request owner, its
 * buffers in objs[0..2) (early: their early pins) and in hold, this rank receiving `received` bytes
 * of elem_size elements. Whatever the registry does not take (a start that fails or finishes at
 * once) is released here. */
RT_HOLDS_STACK_MARK static int run_started(MPI_Comm comm, int allgather, const nb_topo *t,
                                           const int32_t *perm, nb_scratch *s, const nb_parts *p,
                                           MonoObject **objs, uint32_t *early, xfer_hold *hold,
                                           uint32_t elem_size, size_t received, MonoObject *owner,
                                           int64_t *id, opi_status *status)
{
    mpc_nb_exchange x = {t->out, t->in, p->blocks, p->blocks + t->out, allgather, p->sent,
                         p->got, perm,  p->counts, p->displs,          p->types};
    int32_t size = 0;
    int rc = mpc_comm_size(comm, &size); /* takes no lock in MPICH (transfer.h) */
    xfer_started st = {0};
    if (rc == MPC_OK) {
        XFER_MPI_BEGIN(objs[0], objs[1]);
        rc = mpc_neighbor_exchange(&x, comm, &st.req);
        /* a communicator of one rank has finished at once (as in opi_collectives.c) */
        if (rc == MPC_OK && size == 1)
            st.test_rc = mpc_test(&st.req, &st.done, &st.st);
        XFER_MPI_END;
    }
    if (rc != MPC_OK) {
        xfer_early_unpin(early, 2);
        xfer_hold_release(hold, GCH_PINS_RELEASED_BY_WAIT);
        scratch_give(s);
        return rc;
    }
    xfer_info info = {.elem_size = elem_size,
                      .is_send = 1,
                      .tag = OPI_ANY_TAG,
                      .bytes = (int64_t)received,
                      .buffer = s->pooled,
                      .hold = hold,
                      .verify = nb_verify};
    rc = opi_track_transfer(&st, objs, 2, early, owner, &info,
                            "this rank's receive block of a neighbour", id, status);
    if (*id < 0) { /* not registered: what it held is ours to release */
        xfer_hold_release(hold, GCH_PINS_RELEASED_BY_WAIT);
        scratch_give(s);
    }
    return rc;
}

/* ---- the array forms ---- */

/* An int[] of one entry per neighbour (n of them, the degree named `of`). */
static int per_neighbour_arg(MonoObject *a, const char *name, int32_t n, const char *of,
                             const int32_t **out)
{
    if (!a)
        return error_record(OPI_ERR_NULL_ARGUMENT, name, "%s must not be null", name);
    size_t len = rt_array_length(a);
    if (len != (size_t)n)
        return error_record(OPI_ERR_LENGTH, name,
                            "%s has %zu entries: one per %s (%d) was expected", name, len, of, n);
    *out = (const int32_t *)rt_array_data(a);
    return MPC_OK;
}

/* counts and displs (elements; C# names cn, dn) cut array b (C# name an) into n blocks, in bytes
 * into counts_out / displs_out: none negative, each inside the array, and with disjoint set
 * (a receive array) no two overlapping. */
static int blocks_arg(MonoObject *counts, const char *cn, MonoObject *displs, const char *dn,
                      int32_t n, const char *of, const opi_buffer *b, const char *an, int disjoint,
                      MPI_Count *counts_out, MPI_Aint *displs_out)
{
    const int32_t *c = NULL, *d = NULL;
    int rc;
    if ((rc = per_neighbour_arg(counts, cn, n, of, &c)) ||
        (rc = per_neighbour_arg(displs, dn, n, of, &d)))
        return rc;
    size_t length = elements(b);
    for (int32_t k = 0; k < n; k++) {
        if (c[k] < 0)
            return error_record(OPI_ERR_COUNT, cn, "%s[%d] is %d: a count cannot be negative", cn,
                                k, c[k]);
        if (d[k] < 0)
            return error_record(OPI_ERR_OFFSET, dn,
                                "%s[%d] is %d: a displacement cannot be negative", dn, k, d[k]);
        if ((size_t)d[k] > length || (size_t)c[k] > length - (size_t)d[k])
            return error_record(OPI_ERR_COUNT, cn,
                                "block %d, [%d, %lld) (%s[%d] %d, %s[%d] %d), passes the end of "
                                "%s (length %zu)",
                                k, d[k], (long long)d[k] + c[k], dn, k, d[k], cn, k, c[k], an,
                                length);
        counts_out[k] = (MPI_Count)c[k] * b->elem_size;
        displs_out[k] = (MPI_Aint)d[k] * b->elem_size;
    }
    for (int32_t k = 0; disjoint && k < n; k++) /* degrees are small: pairwise */
        for (int32_t j = k + 1; j < n; j++)
            if (c[k] && c[j] && d[k] < d[j] + c[j] && d[j] < d[k] + c[k])
                return error_record(OPI_ERR_BLOCKS_OVERLAP, dn,
                                    "blocks %d ([%d, %lld)) and %d ([%d, %lld)) of %s overlap "
                                    "(%s, %s): the blocks of a receive array must be disjoint",
                                    k, d[k], (long long)d[k] + c[k], j, d[j],
                                    (long long)d[j] + c[j], an, dn, cn);
    return MPC_OK;
}

/* A's blocks (n of them, the degree `of`) of equal size: *block, bytes; an empty array when
 * n is 0. */
static int equal_blocks(const opi_buffer *b, const char *name, int32_t n, const char *of,
                        size_t *block)
{
    size_t e = elements(b);
    if (n == 0 ? e != 0 : e % (size_t)n != 0)
        return error_record(OPI_ERR_LENGTH, name,
                            n == 0 ? "%s has %zu elements; with %s 0 it must be empty"
                                   : "%s's %zu elements do not split into %s (%d) equal blocks",
                            name, e, of, n);
    *block = n ? b->bytes / (size_t)n : 0;
    return MPC_OK;
}

enum { NBA_ALLGATHER, NBA_ALLTOALL, NBA_ALLTOALLV }; /* C#'s kinds of the array forms */

static const char *const array_form_names[2][3] = {
    {"NeighborAllgather", "NeighborAlltoall", "NeighborAlltoallv"},
    {"INeighborAllgather", "INeighborAlltoall", "INeighborAlltoallv"}};

/* The array forms' work once the receive order is known (perm: NULL or, non-blocking,
 * receive_order's for the alltoallw they run as). */
static int neighbor_arrays(int32_t comm, int32_t kind, MonoObject *topo, const nb_topo *t,
                           const int32_t *perm, MonoObject *send, MonoObject *send_counts,
                           MonoObject *send_displs, MonoObject *recv, MonoObject *recv_counts,
                           MonoObject *recv_displs, MonoObject *owner, int64_t *id,
                           opi_status *status)
{
    opi_buffer sb, rb;
    MonoClass *se = NULL, *re = NULL;
    int nonblocking = owner != NULL;
    int rc;
    if ((rc = array_arg(send, "sendArray", &sb, &se)) ||
        (rc = array_arg(recv, "recvArray", &rb, &re)))
        return rc;
    opi_buffer_rebase(&sb, send); /* computing rb may have let send move */
    if (se != re)
        return type_mismatch("sendArray", se, "recvArray", re);
    if (send == recv)
        return error_record(OPI_ERR_ALIAS, "recvArray",
                            "sendArray and recvArray are the same array: %s needs two (the region "
                            "forms take one array whose send and receive regions do not overlap)",
                            array_form_names[nonblocking][kind]);
    size_t block = 0; /* ALLGATHER, ALLTOALL: bytes per block */
    if (kind == NBA_ALLGATHER) {
        if (rb.bytes != sb.bytes * (size_t)t->in)
            return error_record(OPI_ERR_LENGTH, "recvArray",
                                "recvArray has %zu elements; the indegree (%d, the sources) times "
                                "sendArray's %zu = %zu were expected",
                                elements(&rb), t->in, elements(&sb), elements(&sb) * (size_t)t->in);
        block = sb.bytes;
    } else if (kind == NBA_ALLTOALL) {
        size_t sblock = 0, rblock = 0;
        if ((rc = equal_blocks(&sb, "sendArray", t->out, "the outdegree", &sblock)) ||
            (rc = equal_blocks(&rb, "recvArray", t->in, "the indegree", &rblock)))
            return rc;
        if (t->out && t->in && sblock != rblock)
            return error_record(OPI_ERR_LENGTH, "recvArray",
                                "sendArray's blocks hold %zu elements (%zu for outdegree %d) and "
                                "recvArray's %zu (%zu for indegree %d): they must be equal",
                                sblock / sb.elem_size, elements(&sb), t->out, rblock / rb.elem_size,
                                elements(&rb), t->in);
        block = t->out ? sblock : rblock;
    }
    nb_scratch s;
    nb_parts p;
    if ((rc = scratch_take(&s, t->in, t->out, nonblocking, &p)))
        return rc;
    MPI_Count *scounts = p.counts, *rcounts = p.counts + t->out; /* bytes, for now */
    MPI_Aint *sdispls = p.displs, *rdispls = p.displs + t->out;
    if (kind == NBA_ALLTOALLV) {
        if ((rc = blocks_arg(send_counts, "sendCounts", send_displs, "sendDispls", t->out,
                             "destination (outdegree)", &sb, "sendArray", 0, scounts, sdispls)) ||
            (rc = blocks_arg(recv_counts, "recvCounts", recv_displs, "recvDispls", t->in,
                             "source (indegree)", &rb, "recvArray", 1, rcounts, rdispls))) {
            scratch_give(&s);
            return rc;
        }
    } else { /* equal blocks: allgather sends the whole array to each destination */
        for (int32_t k = 0; k < t->out; k++) {
            scounts[k] = (MPI_Count)block;
            sdispls[k] = kind == NBA_ALLGATHER ? 0 : (MPI_Aint)(block * (size_t)k);
        }
        for (int32_t j = 0; j < t->in; j++) {
            rcounts[j] = (MPI_Count)block;
            rdispls[j] = (MPI_Aint)(block * (size_t)j);
        }
    }
    /* the blocks, in place (the addresses MPI gets: no Mono call from here until it runs) */
    for (int32_t k = 0; k < t->out; k++) {
        p.blocks[k] = (mpc_nb_block){(char *)sb.data + sdispls[k], scounts[k], MPI_BYTE};
        if (nonblocking)
            p.sent[k] = (int64_t)scounts[k];
    }
    for (int32_t j = 0; j < t->in; j++) {
        p.blocks[t->out + j] = (mpc_nb_block){(char *)rb.data + rdispls[j], rcounts[j], MPI_BYTE};
        p.expected[j] = (int64_t)rcounts[j];
    }
    const char *call = array_form_names[nonblocking][kind];
    int naming = kind == NBA_ALLTOALLV ? NAME_BLOCK_V : NAME_BLOCK;
    int allgather = kind == NBA_ALLGATHER;
    if (!nonblocking) {
        nb_check k;
        check_init(&k, &p, topo, t, call, naming, rb.elem_size, re);
        rc = run_blocking(comm, allgather, t, &p, &k, send, recv);
        scratch_give(&s);
        return opi_receive_failed(rc, NULL, "recvArray's block of a source", rb.bytes,
                                  rb.elem_size);
    }
    check_init(p.check, &p, topo, t, call, naming, rb.elem_size, re);
    MonoObject *objs[2] = {send, recv};
    uint32_t early[2];
    xfer_early_pins(objs, 2, early);
    return run_started(comm, allgather, t, perm, &s, &p, objs, early, NULL, rb.elem_size, rb.bytes,
                       owner, id, status);
}

int32_t opi_neighbor_arrays(int32_t comm, int32_t kind, MonoObject *topo, MonoObject *send,
                            MonoObject *send_counts, MonoObject *send_displs, MonoObject *recv,
                            MonoObject *recv_counts, MonoObject *recv_displs, MonoObject *owner,
                            int64_t *id, opi_status *status)
{
    nb_topo t;
    int rc;
    if ((rc = check_comm(comm)) || (rc = topo_arg(topo, &t)))
        return rc;
    if (kind < NBA_ALLGATHER || kind > NBA_ALLTOALLV)
        return error_record(OPI_ERR_BAD_ARGUMENT, NULL, "neighbourhood collective %d is unknown",
                            kind);
    /* first: the probe of the receive order may let collections run (no address is held yet).
     * Only a non-blocking call needs it (a blocking one pairs its blocks by tags), and not
     * allgather's, whose blocks from one process are all alike */
    int32_t *perm = NULL;
    if (owner && kind != NBA_ALLGATHER && (rc = receive_order(topo, &t, &perm)))
        return rc;
    rc = neighbor_arrays(comm, kind, topo, &t, perm, send, send_counts, send_displs, recv,
                         recv_counts, recv_displs, owner, id, status);
    free(perm);
    return rc;
}

/* ---- the region forms ---- */

/* The shapes of the region forms (C#'s form bits): the send side is an array per destination
 * (else one array), the receive side an array per source (else one array), one send region for
 * every destination (NeighborAllgather). */
enum { NB_SEND_ARRAYS = 1, NB_RECV_ARRAYS = 2, NB_SEND_ONE = 4, NB_FORMS = 8 };

/* One region of a region form, as validation leaves it: no address, only offsets. */
typedef struct nb_block {
    size_t offset; /* bytes from its array's start to its first element */
    size_t bytes;
    MPI_Count count;
    MPI_Datatype type;
    int obj; /* which distinct array (the identity pass) */
} nb_block;

typedef struct nb_regions {
    int form;
    MonoObject *send, *send_specs, *recv, *recv_specs; /* the call's arguments */
    int32_t nsend, nrecv;                              /* blocks: send ones first */
    nb_block *blocks;
    const char *send_name, *send_spec_name, *recv_name;
} nb_regions;

/* Block k's array, read from the call's arguments now (after any point where a collection may
 * have run, a C copy of an earlier reading would be stale). */
static MonoObject *block_array(void *ctx, int k)
{
    const nb_regions *r = ctx;
    if (k < r->nsend)
        return r->form & NB_SEND_ARRAYS ? list_at(r->send, k) : r->send;
    k -= r->nsend;
    return r->form & NB_RECV_ARRAYS ? list_at(r->recv, k) : r->recv;
}

static MonoObject *block_spec(const nb_regions *r, int k)
{
    return k < r->nsend ? list_at(r->send_specs, k) : list_at(r->recv_specs, k - r->nsend);
}

/* Names block k in messages: "sendRegions[2] (of sendArrays[2])". */
static void block_name(const nb_regions *r, int k, char *out, size_t size)
{
    if (k < r->nsend) {
        if (r->form & NB_SEND_ONE)
            snprintf(out, size, "sendRegion (of %s)", r->send_name);
        else if (r->form & NB_SEND_ARRAYS)
            snprintf(out, size, "sendRegions[%d] (of sendArrays[%d])", k, k);
        else
            snprintf(out, size, "sendRegions[%d] (of sendArray)", k);
    } else {
        k -= r->nsend;
        if (r->form & NB_RECV_ARRAYS)
            snprintf(out, size, "recvRegions[%d] (of recvArrays[%d])", k, k);
        else
            snprintf(out, size, "recvRegions[%d] (of recvArray)", k);
    }
}

/* A failed check of element `index` of a list: the record's text gets the index in front. */
static int with_index(int rc, const char *list, int index)
{
    const char *argument = NULL, *detail = NULL;
    if (!error_last(rc, &argument, &detail) || !detail)
        return rc;
    char copy[ERROR_DETAIL_BYTES];
    snprintf(copy, sizeof copy, "%s", detail);
    return error_record(rc, argument, "%s[%d]: %s", list, index, copy);
}

/* One side's list of arrays (form bit `arrays`) and of regions, against its degree n. */
static int side_args(MonoObject *list, int arrays, const char *list_name, MonoObject *specs,
                     const char *spec_name, int32_t want_specs, int32_t n, const char *of)
{
    if (!list)
        return error_record(OPI_ERR_NULL_ARGUMENT, list_name, "%s must not be null", list_name);
    if (!specs)
        return error_record(OPI_ERR_NULL_ARGUMENT, spec_name, "%s must not be null", spec_name);
    size_t ns = rt_array_length(specs);
    if (ns != (size_t)want_specs)
        return error_record(OPI_ERR_LENGTH, spec_name,
                            "%s has %zu regions: one per %s (%d) was expected", spec_name, ns, of,
                            want_specs);
    if (!arrays)
        return MPC_OK;
    size_t na = rt_array_length(list);
    if (na != (size_t)n)
        return error_record(OPI_ERR_LENGTH, list_name,
                            "%s has %zu arrays: one per %s (%d) was expected", list_name, na, of,
                            n);
    for (int32_t k = 0; k < n; k++)
        if (!list_at(list, k))
            return error_record(OPI_ERR_NULL_ARGUMENT, list_name, "%s[%d] is null", list_name, k);
    return MPC_OK;
}

/* Validates every block (region against array, one element type: *elem), keeping offsets
 * only. */
static int validate_blocks(nb_regions *r, MonoClass **elem)
{
    MonoClass *first = NULL;
    int rc;
    for (int k = 0; k < r->nsend + r->nrecv; k++) {
        int sending = k < r->nsend, index = sending ? k : k - r->nsend;
        int in_list = sending ? (r->form & NB_SEND_ONE) == 0 : 1;
        MonoObject *array = block_array(r, k), *spec = block_spec(r, k);
        const char *aname = sending ? r->send_name : r->recv_name,
                   *sname = sending ? r->send_spec_name : "recvRegions";
        opi_region_names names = {aname, sname};
        opi_buffer b;
        if (!spec)
            return error_record(OPI_ERR_NULL_ARGUMENT, sname, "%s[%d] is null", sname, index);
        if ((rc = opi_buffer_region_as(array, spec, &names, &b)) != MPC_OK)
            return in_list ? with_index(rc, sname, index) : rc;
        nb_block *bl = &r->blocks[k];
        bl->offset = b.offset; /* the address is computed last (address_pass) */
        bl->bytes = b.bytes;
        bl->count = b.count;
        bl->type = b.type;
        const rt_class_plan *p = opi_plan_for(array);
        if (!p)
            return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a class plan");
        if (!first) {
            first = p->elem_class;
        } else if (p->elem_class != first) {
            char here[96];
            block_name(r, k, here, sizeof here);
            char *ft = rt_class_name(first), *ht = rt_class_name(p->elem_class);
            error_record(OPI_ERR_TYPE_MISMATCH, aname,
                         "%s holds %s elements and the first region's array %s: a "
                         "neighbourhood collective moves one element type",
                         here, ht ? ht : "?", ft ? ft : "?");
            free(ft);
            free(ht);
            return OPI_ERR_TYPE_MISMATCH;
        }
    }
    *elem = first;
    return MPC_OK;
}

/* Numbers the distinct arrays of the blocks (blocks[k].obj; seen[id] is array id, when seen is
 * not NULL) and puts the first two in objs; returns how many there are. Makes no Mono call, so
 * nothing moves meanwhile: the arrays are read from the arguments as they are now. */
static int number_arrays(nb_regions *r, MonoObject **seen, MonoObject **objs)
{
    int n = r->nsend + r->nrecv, distinct = 0;
    objs[0] = objs[1] = NULL;
    for (int k = 0; k < n; k++) {
        MonoObject *a = block_array(r, k);
        int id = 0;
        if (seen) {
            while (id < distinct && seen[id] != a)
                id++;
        } else { /* numbered already: the same arrays */
            id = r->blocks[k].obj;
        }
        if (id == distinct) {
            if (seen)
                seen[id] = a;
            distinct++;
            if (id < 2)
                objs[id] = a;
        }
        r->blocks[k].obj = id;
    }
    return distinct;
}

/* The identity pass, with no point where a collection may run (the plans regions_disjoint reads
 * were built by validate_blocks): numbers the distinct arrays (*ndistinct), puts the first two in
 * objs, and refuses overlaps within one array: two receive regions, or a send and a receive
 * region. */
static int identity_pass(nb_regions *r, int *ndistinct, MonoObject **objs)
{
    int n = r->nsend + r->nrecv;
    MonoObject *stack_seen[NB_STACK_NEIGHBOURS],
        **seen = n <= NB_STACK_NEIGHBOURS ? stack_seen : malloc((size_t)n * sizeof *seen);
    if (!seen)
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for %d regions", n);
    int distinct = number_arrays(r, seen, objs);
    int rc = MPC_OK;
    for (int j = r->nsend; j < n && rc == MPC_OK; j++) { /* each receive region */
        for (int k = 0; k < j && rc == MPC_OK; k++) {    /* against every earlier region */
            if (r->blocks[k].obj != r->blocks[j].obj)
                continue;
            MonoObject *a = block_array(r, j); /* (read again: regions_disjoint reads plans) */
            char kname[96], jname[96];
            block_name(r, k, kname, sizeof kname);
            block_name(r, j, jname, sizeof jname);
            /* the names are for the message only: the record is replaced below */
            opi_region_names kn = {"array", kname}, jn = {"array", jname};
            int drc = opi_regions_disjoint(a, block_spec(r, k), &kn, a, block_spec(r, j), &jn);
            if (drc == MPC_OK)
                continue;
            const char *argument = NULL, *detail = NULL, *at = NULL;
            if (drc != OPI_ERR_SAME_OBJECT) { /* (checked already: not expected) */
                char copy[ERROR_DETAIL_BYTES] = "";
                if (error_last(drc, &argument, &detail) && detail)
                    snprintf(copy, sizeof copy, "%s", detail);
                rc = error_record(drc, "recvRegions", "%s", copy); /* no name on this stack */
                break;
            }
            /* regions_disjoint's text names an element of both: "(element [i, j] is in both)" */
            char element[128] = "";
            if (error_last(drc, &argument, &detail) && detail && (at = strstr(detail, "(element ")))
                snprintf(element, sizeof element, " %.*s", (int)(strcspn(at, ")") + 1), at);
            rc = k < r->nsend
                     ? error_record(OPI_ERR_SAME_OBJECT, "recvRegions",
                                    "%s and %s overlap%s: an array may be in both the send and "
                                    "the receive lists only where its regions do not overlap",
                                    kname, jname, element)
                     : error_record(OPI_ERR_BLOCKS_OVERLAP, "recvRegions",
                                    "%s and %s overlap%s: the receive regions of an array must be "
                                    "disjoint",
                                    kname, jname, element);
        }
    }
    if (seen != stack_seen)
        free(seen);
    *ndistinct = distinct;
    return rc;
}

/* A w call's receive entries in the order perm (receive_order) says; nothing with NULL. */
/* The addresses, last: the call's arguments read again, no Mono call until MPI runs; into p's
 * blocks (its send blocks, then its receive blocks: one send block with NB_SEND_ONE). */
static void address_pass(const nb_regions *r, const nb_topo *t, nb_parts *p)
{
    for (int b = 0; b < r->nsend + r->nrecv; b++) {
        const nb_block *bl = &r->blocks[b];
        char *at = (char *)block_array((void *)r, b) + bl->offset;
        if (b >= r->nsend)
            p->blocks[t->out + (b - r->nsend)] = (mpc_nb_block){at, bl->count, bl->type};
        else if (b < t->out)
            p->blocks[b] = (mpc_nb_block){at, bl->count, bl->type};
    }
}

static const char *const region_form_names[2][2] = {{"NeighborAlltoall", "NeighborAllgather"},
                                                    {"INeighborAlltoall", "INeighborAllgather"}};

int32_t opi_neighbor_regions(int32_t comm, int32_t form, MonoObject *topo, MonoObject *send,
                             MonoObject *send_specs, MonoObject *recv, MonoObject *recv_specs,
                             MonoObject *owner, int64_t *id, opi_status *status)
{
    nb_topo t;
    int nonblocking = owner != NULL;
    int rc;
    if ((rc = check_comm(comm)) || (rc = topo_arg(topo, &t)))
        return rc;
    if (form < 0 || form >= NB_FORMS)
        return error_record(OPI_ERR_BAD_ARGUMENT, NULL, "region form %d is unknown", form);
    nb_regions r = {.form = form,
                    .send = send,
                    .send_specs = send_specs,
                    .recv = recv,
                    .recv_specs = recv_specs,
                    .nsend = form & NB_SEND_ONE ? 1 : t.out,
                    .nrecv = t.in,
                    .send_name = form & NB_SEND_ARRAYS ? "sendArrays" : "sendArray",
                    .send_spec_name = form & NB_SEND_ONE ? "sendRegion" : "sendRegions",
                    .recv_name = form & NB_RECV_ARRAYS ? "recvArrays" : "recvArray"};
    if ((rc = side_args(send, form & NB_SEND_ARRAYS, r.send_name, send_specs, r.send_spec_name,
                        r.nsend, t.out, "destination (outdegree)")) ||
        (rc = side_args(recv, form & NB_RECV_ARRAYS, r.recv_name, recv_specs, "recvRegions", t.in,
                        t.in, "source (indegree)")))
        return rc;
    int nblocks = r.nsend + r.nrecv;
    int32_t *perm = NULL;
    nb_block stack_blocks[NB_STACK_NEIGHBOURS];
    r.blocks =
        nblocks <= NB_STACK_NEIGHBOURS ? stack_blocks : malloc((size_t)nblocks * sizeof *r.blocks);
    if (!r.blocks)
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for %d regions", nblocks);
    MonoObject *objs[2] = {NULL, NULL};
    MonoClass *elem = NULL;
    int distinct = 0;
    xfer_hold *hold = NULL;
    nb_scratch s = {NULL, NULL, {0}};
    nb_parts p;
    /* the receive order: a non-blocking call's (a blocking one pairs its blocks by tags), not
     * NeighborAllgather's (every block from one process is the same) */
    if ((rc = validate_blocks(&r, &elem)) || (rc = identity_pass(&r, &distinct, objs)) ||
        (nonblocking && !(form & NB_SEND_ONE) && (rc = receive_order(topo, &t, &perm))) ||
        (rc = scratch_take(&s, t.in, t.out, nonblocking, &p)))
        goto failed;
    size_t received = 0;
    for (int32_t j = 0; j < t.in; j++) {
        p.expected[j] = (int64_t)r.blocks[r.nsend + j].bytes;
        received += r.blocks[r.nsend + j].bytes;
    }
    for (int32_t k = 0; k < t.out && nonblocking; k++)
        p.sent[k] = (int64_t)r.blocks[form & NB_SEND_ONE ? 0 : k].bytes;
    uint32_t elem_size = 1;
    if (nblocks) { /* the element size, for a Status's Count */
        const rt_class_plan *pl = opi_plan_for(block_array(&r, 0));
        elem_size = pl && pl->data_size ? pl->data_size : 1;
    }
    if (distinct > XFER_MAX_OBJECTS) { /* more than the bracket and the registry hold */
        if ((rc = xfer_hold_take(block_array, &r, nblocks, nonblocking, &hold)))
            goto failed;
        objs[0] = objs[1] = NULL;
    }
    const char *call = region_form_names[nonblocking][(form & NB_SEND_ONE) != 0];
    int naming = form & NB_RECV_ARRAYS ? NAME_REGION_ARRAYS : NAME_REGION;
    int allgather = (form & NB_SEND_ONE) != 0;
    if (!nonblocking) {
        nb_check k;
        if (distinct <= XFER_MAX_OBJECTS)
            number_arrays(&r, NULL, objs); /* read again: a collection may have moved them */
        address_pass(&r, &t, &p);
        check_init(&k, &p, topo, &t, call, naming, elem_size, elem);
        rc = run_blocking(comm, allgather, &t, &p, &k, objs[0], objs[1]);
        xfer_hold_release(hold, GCH_PINS_RELEASED_BY_WAIT);
        scratch_give(&s);
        if (r.blocks != stack_blocks)
            free(r.blocks);
        return opi_receive_failed(rc, NULL, "the receive region of a source", received, elem_size);
    }
    uint32_t early[2];
    if (distinct <= XFER_MAX_OBJECTS) {
        number_arrays(&r, NULL, objs);   /* read again: a collection may have moved them */
        xfer_early_pins(objs, 2, early); /* then they cannot move: objs stays current */
    } else {
        early[0] = early[1] = 0;
    }
    address_pass(&r, &t, &p);
    check_init(p.check, &p, topo, &t, call, naming, elem_size, elem);
    if (r.blocks != stack_blocks)
        free(r.blocks);
    rc = run_started(comm, allgather, &t, perm, &s, &p, objs, early, hold, elem_size, received,
                     owner, id, status);
    free(perm);
    return rc;
failed:
    if (r.blocks != stack_blocks)
        free(r.blocks);
    xfer_hold_release(hold, GCH_PINS_RELEASED_BY_WAIT);
    scratch_give(&s);
    free(perm);
    return rc;
}

/* ---- distributed graphs ---- */

/* A native copy of an int[] of ranks (name), each inside 0..size-1; *copy (n + 1 entries) is the
 * caller's to free, also on failure. */
static int ranks_arg(MonoObject *a, const char *name, int32_t size, int **copy, int32_t *n)
{
    *copy = NULL;
    *n = 0;
    if (!a)
        return error_record(OPI_ERR_NULL_ARGUMENT, name, "%s must not be null", name);
    const rt_class_plan *p = opi_plan_for(a);
    if (!p || p->shape != RT_ARRAY || p->rank != 1 || p->data_size != 4)
        return error_record(OPI_ERR_NOT_TRANSPORTABLE, name, "%s must be an int[]", name);
    size_t len = rt_array_length(a);
    if (len > (size_t)INT32_MAX / 2)
        return error_record(OPI_ERR_LENGTH, name, "%s has %zu entries: too many", name, len);
    if (!(*copy = malloc((len + 1) * sizeof **copy)))
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a copy of %s", name);
    memcpy(*copy, rt_array_data(a), len * sizeof **copy);
    *n = (int32_t)len;
    for (int32_t i = 0; i < *n; i++)
        if ((*copy)[i] < 0 || (*copy)[i] >= size)
            return error_record(
                OPI_ERR_GROUP_RANK, name,
                "%s[%d] = %d is outside 0..%d of the communicator (size %d)%s", name, i, (*copy)[i],
                size - 1, size,
                (*copy)[i] == OPI_PROC_NULL ? ": MP.ProcNull is no neighbour of a graph" : "");
    return MPC_OK;
}

/* Every rank learns, before anyone creates the graph, whether some rank refused its arguments
 * and whether the edges agree: rank j lists this rank among its destinations as many times as
 * this rank lists j among its sources. A graph whose ends disagree would leave its collectives
 * waiting forever; a rank that refuses alone would leave the others waiting in the creation.
 * local: this rank's refusal (0: none). One Alltoall of Size ints and one Allreduce. */
RT_HOLDS_STACK_MARK static int agree_on_graph(int32_t comm, int32_t size, int32_t rank, int local,
                                              const int *src, int32_t nsrc, const int *dst,
                                              int32_t ndst)
{
    int *out_edges = calloc((size_t)size, sizeof(int)),
        *in_edges = calloc((size_t)size, sizeof(int)), *told = calloc((size_t)size, sizeof(int));
    int rc = MPC_OK, mismatch = -1;
    if (!out_edges || !in_edges || !told) {
        rc = error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory checking a graph of %d ranks",
                          size);
        goto done;
    }
    if (!local) {
        for (int32_t i = 0; i < ndst; i++)
            out_edges[dst[i]]++;
        for (int32_t i = 0; i < nsrc; i++)
            in_edges[src[i]]++;
    }
    XFER_BLOCKING_BEGIN();
    rc = mpc_alltoall(out_edges, told, sizeof(int), comm);
    XFER_BLOCKING_END;
    if (rc != MPC_OK)
        goto done;
    for (int32_t j = 0; j < size && !local && mismatch < 0; j++)
        if (told[j] != in_edges[j])
            mismatch = j;
    int verdict[2] = {local != 0, mismatch >= 0}, all[2] = {0, 0};
    XFER_BLOCKING_BEGIN();
    rc = mpc_allreduce(verdict, all, 2, MPI_INT, MPI_MAX, comm);
    XFER_BLOCKING_END;
    if (rc != MPC_OK)
        goto done;
    if (local)
        rc = local; /* its own record still describes it */
    else if (all[0])
        rc = error_record(OPI_ERR_BAD_ARGUMENT, NULL,
                          "CreateDistGraphAdjacent was refused on another rank (its sources or "
                          "destinations): every rank refuses, so that none waits in the creation");
    else if (mismatch >= 0)
        rc = error_record(OPI_ERR_BAD_ARGUMENT, "sources",
                          "sources lists rank %d %d time(s), but rank %d's destinations list this "
                          "rank (%d) %d time(s): every edge is named at both its ends",
                          mismatch, in_edges[mismatch], mismatch, rank, told[mismatch]);
    else if (all[1])
        rc = error_record(OPI_ERR_BAD_ARGUMENT, "destinations",
                          "the ranks' sources and destinations disagree (another rank found an "
                          "edge named at one end only): every edge is named at both its ends");
done:
    free(out_edges);
    free(in_edges);
    free(told);
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_dist_graph_create(int32_t comm, int32_t size, MonoObject *sources,
                                                  MonoObject *destinations, int32_t reorder,
                                                  int32_t *out)
{
    int *src = NULL, *dst = NULL;
    int32_t nsrc = 0, ndst = 0, rank = 0;
    int rc;
    if ((rc = check_comm(comm)) || (rc = mpc_comm_rank(comm, &rank)))
        return rc;
    int local = ranks_arg(sources, "sources", size, &src, &nsrc);
    if (!local)
        local = ranks_arg(destinations, "destinations", size, &dst, &ndst);
    if ((rc = agree_on_graph(comm, size, rank, local, src, nsrc, dst, ndst)) == MPC_OK) {
        MPI_Comm made = MPI_COMM_NULL;
        XFER_BLOCKING_BEGIN();
        rc = mpc_dist_graph_create_adjacent(comm, nsrc, src, ndst, dst, reorder != 0, &made);
        XFER_BLOCKING_END;
        if (rc == MPC_OK)
            *out = made;
    }
    free(src);
    free(dst);
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_dist_graph_neighbors_count(int32_t comm, int32_t *indegree,
                                                           int32_t *outdegree)
{
    int in = 0, out = 0;
    int rc = check_comm(comm);
    if (rc != MPC_OK)
        return rc;
    XFER_MPI_BEGIN();
    rc = mpc_dist_graph_neighbors_count(comm, &in, &out);
    XFER_MPI_END;
    if (rc == MPC_OK) {
        *indegree = in;
        *outdegree = out;
    }
    return rc;
}

/* sources, destinations: int[indegree], int[outdegree] (from opi_dist_graph_neighbors_count). */
RT_HOLDS_STACK_MARK int32_t opi_dist_graph_neighbors(int32_t comm, MonoObject *sources,
                                                     MonoObject *destinations)
{
    int32_t in = 0, out = 0;
    int rc = opi_dist_graph_neighbors_count(comm, &in, &out);
    if (rc != MPC_OK)
        return rc;
    if (!sources || !destinations || rt_array_length(sources) != (size_t)in ||
        rt_array_length(destinations) != (size_t)out)
        return error_record(OPI_ERR_LENGTH, NULL,
                            "the neighbour arrays do not hold the degrees %d and %d", in, out);
    int *buf = malloc(((size_t)in + (size_t)out + 1) * sizeof *buf);
    if (!buf)
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for %d neighbours", in + out);
    XFER_MPI_BEGIN(sources, destinations);
    rc = mpc_dist_graph_neighbors(comm, in, buf, out, buf + in);
    XFER_MPI_END;
    if (rc == MPC_OK) { /* the bracket's objects: where they were, or pinned */
        memcpy(rt_array_data(sources), buf, (size_t)in * sizeof *buf);
        memcpy(rt_array_data(destinations), buf + in, (size_t)out * sizeof *buf);
    }
    free(buf);
    return rc;
}

/* mpc_internal.h — the rest of mpc's API: what the layers above (and the C programs of tests/
 * and bench/, linked with the static library) use beyond mpc.h. Not installed, not exported:
 * the library is built with -fvisibility=hidden and nothing here is marked MPC_API.
 *
 * The conventions are mpc.h's: MPC_OK, a negative mpc_err code or a positive MPI code. */
#ifndef MPC_INTERNAL_H
#define MPC_INTERNAL_H

#include "mpc.h"
#include "mpc_config.h"
#include "thread_blocks.h"

#include <stdatomic.h>
#include <stdint.h>

/* ---- the wait policy ----
 * How blocking waits behave (MOTOR_WAIT, read by mpc_init). Busy polling answers fastest while
 * every rank has a core; when the ranks on a host outnumber the cores they may run on, a rank
 * that spins holds a core the rank it waits for needs, and every wait lasts scheduler time
 * slices. MOTOR_WAIT=auto (the default) yields then exactly then, spin never, yield always. */
typedef enum { MPC_WAIT_SPIN = 0, MPC_WAIT_YIELD = 1 } mpc_wait_policy;
/* The policy in force: MPC_WAIT_SPIN until mpc_init has run. */
mpc_wait_policy mpc_wait_mode(void);
/* A poll loop's pause under MPC_WAIT_YIELD: call mpc_backoff_pause after every poll that found
 * the wait unfinished. From the first call (or from `since`, a CLOCK_MONOTONIC time in ns when
 * set) it returns at once for 20 µs (most waits end by then), then sched_yield()s until 100 µs,
 * then naps with nanosleep from 1 µs, doubling to 100 µs (the kernel's timer slack, 50 µs by
 * default, lengthens the short ones). A pure sched_yield barely gives the core away under
 * Linux's CFS among busy pollers; the naps do. Not for MPC_WAIT_SPIN loops. */
typedef struct mpc_backoff {
    int64_t since, nap;
} mpc_backoff;
void mpc_backoff_pause(mpc_backoff *b);
int64_t mpc_monotonic_ns(void);
/* What auto decided from, measured once by the mpc_init that initialised MPI (collective
 * there): the ranks of World on this host (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED) and the
 * cores they may run on together (the union of their affinity masks, at most the online CPUs);
 * 0 and 0 when MPI was initialised by someone else (then auto spins, as before). */
void mpc_host_load(int *ranks, int *cores);

/* ---- statuses ----
 * Converts an MPI_Status of a completed request into an mpc_status (cancelled as
 * MPI_Test_cancelled says; a cancelled one reads as MPI's empty status: MPI_ANY_SOURCE,
 * MPI_ANY_TAG, 0 bytes, since MPI defines no other field of it). */
void mpc_status_from_mpi(const MPI_Status *in, mpc_status *out);
/* The same for a probe, which MPI defines no cancelled flag for: cancelled is 0. The caller
 * zero-initialises the MPI_Status before probing (MPICH leaves the cancel bit untouched). */
void mpc_status_from_probe(const MPI_Status *in, mpc_status *out);

/* ---- matched receives of (data, count, type): a whole object or a range is count bytes of
 * MPI_BYTE, a region one element of its derived datatype (counts past INT_MAX take MPI-4's large
 * count calls). The message *msg (from mpc_improbe) is MPI's from the call on, a truncated one
 * too, and *msg becomes MPI_MESSAGE_NULL; a failed receive's status is as mpc_recv's. mpc_mrecv
 * and mpc_imrecv (mpc.h) are these with MPI_BYTE. ---- */
int mpc_mrecv_typed(void *data, MPI_Count count, MPI_Datatype type, mpc_message *msg,
                    mpc_status *status);
int mpc_imrecv_typed(void *data, MPI_Count count, MPI_Datatype type, mpc_message *msg,
                     mpc_request *req);

/* ---- point-to-point on (data, count, type) ----
 * What mpc.h's byte-wise calls do, for any committed datatype: count elements of type from data
 * (count > INT_MAX goes through MPI-4's large-count functions). OPI gives a whole object or a
 * range as (bytes, MPI_BYTE) and a region as (1, its type from mpc_region_type). Statuses count
 * bytes, as mpc.h's. */
int mpc_isend_typed(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                    mpc_comm comm, mpc_request *req);
int mpc_issend_typed(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                     mpc_comm comm, mpc_request *req);
int mpc_irecv_typed(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag,
                    mpc_comm comm, mpc_request *req);
int mpc_sendrecv_typed(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                       int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                       int source, int recvtag, mpc_comm comm, mpc_status *status);
/* MPI_Pack of count elements of type from buf into out (outsize bytes): the elements end to end,
 * as a receiver of MPI_BYTE or of any type of the same bytes reads them. */
int mpc_pack_typed(const void *buf, MPI_Count count, MPI_Datatype type, void *out,
                   MPI_Count outsize, mpc_comm comm);

/* ---- the datatypes of regions (datatypes.c) ----
 * The committed datatype of a region of a row-major array of ndims dimensions of lengths
 * dims[], elem_size bytes per element: with stride 0 a box of sizes[] elements per dimension,
 * described from its first element (a subarray with starts 0, so the caller passes the address
 * of the box's first element, and one type serves a box at any position); with stride > 0
 * (ndims 1) sizes[0] elements stride elements apart (a vector). Every size at least 1 (an empty
 * region needs no type: send 0 bytes). Built once per shape, cached (thread-safe) and freed
 * just before MPI_Finalize: the caller never frees *type. */
#define MPC_REGION_MAX_DIMS 32 /* the CLI's limit on an array's rank */
int mpc_region_type(size_t elem_size, int ndims, const int *dims, const int *sizes, int stride,
                    MPI_Datatype *type);
/* The same when the shape's type is cached already (1, *type set), without calling MPI; 0
 * otherwise (then mpc_region_type builds it). */
int mpc_region_type_find(size_t elem_size, int ndims, const int *dims, const int *sizes, int stride,
                         MPI_Datatype *type);
/* The shapes cached so far (for tests and measurements). */
size_t mpc_region_types_cached(void);

/* ---- non-blocking collectives: as the blocking ones of mpc.h, starting a request that
 * mpc_test / mpc_wait complete. The buffers belong to MPI until then. ---- */
int mpc_ibarrier(mpc_comm comm, mpc_request *req);
int mpc_ibcast(void *buf, size_t bytes, int root, mpc_comm comm, mpc_request *req);
int mpc_iallgather(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, mpc_comm comm,
                   mpc_request *req);
int mpc_ialltoall(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, mpc_comm comm,
                  mpc_request *req);
int mpc_ireduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                int root, mpc_comm comm, mpc_request *req);
int mpc_iallreduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                   mpc_comm comm, mpc_request *req);
int mpc_iscatter(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, int root, mpc_comm comm,
                 mpc_request *req);
int mpc_igather(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, int root, mpc_comm comm,
                mpc_request *req);
int mpc_iexscan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                mpc_comm comm, mpc_request *req);
int mpc_ireduce_scatter_block(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type,
                              MPI_Op op, mpc_comm comm, mpc_request *req);
int mpc_iscan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
              mpc_comm comm, mpc_request *req);

/* ---- persistent requests (MPI_Send_init, MPI_Recv_init): the request is made once and
 * started any number of times (mpc_start, mpc_startall); mpc_test / mpc_wait complete a use and
 * leave the request inactive, not freed; mpc_request_free frees it (an inactive one: at once).
 * The buffer is MPI's from each start to that use's completion. ---- */
int mpc_send_init(const void *data, MPI_Count count, MPI_Datatype type, int dest, int tag,
                  mpc_comm comm, mpc_request *req);
int mpc_recv_init(void *data, MPI_Count count, MPI_Datatype type, int source, int tag,
                  mpc_comm comm, mpc_request *req);
int mpc_start(mpc_request *req);
int mpc_startall(int n, mpc_request *reqs);
int mpc_request_free(mpc_request *req);

/* ---- MPI's v-collectives, byte-wise; counts and displacements in bytes, per rank (large
 * counts). Past 2 GiB, mpc_allgatherv broadcasts the whole extent the pieces fill: gaps between
 * them are overwritten (lay the pieces end to end). ---- */
int mpc_scatterv(const void *sendbuf, const MPI_Count *counts, const MPI_Count *displs,
                 void *recvbuf, size_t recvbytes, int root, mpc_comm comm);
int mpc_gatherv(const void *sendbuf, size_t sendbytes, void *recvbuf, const MPI_Count *counts,
                const MPI_Count *displs, int root, mpc_comm comm);
int mpc_allgatherv(const void *sendbuf, size_t sendbytes, void *recvbuf, const MPI_Count *counts,
                   const MPI_Count *displs, mpc_comm comm);

/* ---- the exact v-collectives without blocking ----
 * MPICH 4.0.2 completes a non-blocking collective whose internal receive was truncated with
 * MPI_SUCCESS, the block left unwritten (an MPI_Igatherv with one block longer than the root's
 * count leaves it stale, silently), and no non-blocking v-collective reports what arrived. So
 * Igatherv, Iscatterv, Iallgatherv and Ialltoallv run as one MPI_Ialltoallw_c in which every
 * block that travels is preceded by 8 bytes: its size as its sender counts it. Each block goes
 * with a datatype of two pieces (the header, the data in place) at absolute addresses
 * (MPI_BOTTOM): no copy. After completion, got[r] tells the receiver what rank r sent; a block
 * MPI dropped as too long leaves got[r] at MPC_GOT_MORE, a longer one kept in part has a larger
 * header. The datatypes are freed as soon as the request is started (MPI completes pending
 * operations on freed datatypes normally); every array MPI reads stays in the caller's storage
 * until completion, as MPI requires of a non-blocking collective. */
#define MPC_NO_BLOCK SIZE_MAX /* an mpc_block's bytes: nothing goes to or comes from that rank */
typedef struct mpc_vexchange {
    int size;
    mpc_block *send, *recv; /* per rank: offsets into sendbuf / recvbuf, or bytes MPC_NO_BLOCK */
    int64_t *sent, *got;    /* the headers */
    MPI_Count *counts;      /* MPI's arguments: [0, size) sends, [size, 2 size) receives */
    MPI_Aint *displs;
    MPI_Datatype *types;
} mpc_vexchange;
/* Bytes of storage for an exchange over size ranks, and its layout there (8-byte aligned
 * storage): every block MPC_NO_BLOCK, every got MPC_GOT_MORE. */
size_t mpc_vexchange_bytes(int size);
void mpc_vexchange_init(mpc_vexchange *x, void *storage, int size);
/* Starts the exchange of x's blocks (every rank of comm calls it, the blocks of each pair
 * agreeing on who sends: a header travels even for an empty block). */
int mpc_ivexchange(const void *sendbuf, void *recvbuf, mpc_vexchange *x, mpc_comm comm,
                   mpc_request *req);
/* After completion: the bytes rank r's block brought, or MPC_GOT_MORE when r sent more than the
 * block holds (nothing past the block was written). */
int64_t mpc_vexchange_got(const mpc_vexchange *x, int r);

/* comm's private twin for the exact v-collectives (mpc.h): MPI_Comm_dup'ed at the first call on
 * comm (collective), cached as an attribute, freed with comm; a Dup of comm does not inherit
 * it. */
int mpc_comm_private(mpc_comm comm, mpc_comm *out);

/* ---- communicators: the ranks of one host, names, comparison ---- */
/* MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): the ranks of comm that share memory with this one
 * (one host), ordered by key, then by rank in comm. Collective; errors returned, freed at the
 * end of MPI if the caller never frees it (as mpc_comm_split's). */
int mpc_comm_split_shared(mpc_comm comm, int key, mpc_comm *out);
/* MPI_Comm_set_name / MPI_Comm_get_name: local. name holds MPI_MAX_OBJECT_NAME bytes for get;
 * MPI cuts a longer name to MPI_MAX_OBJECT_NAME - 1 characters silently (callers check). */
int mpc_comm_set_name(mpc_comm comm, const char *name);
int mpc_comm_get_name(mpc_comm comm, char *name, int *length);
/* MPI_Comm_compare: MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR or MPI_UNEQUAL. */
int mpc_comm_compare(mpc_comm a, mpc_comm b, int *result);

/* ---- groups, topologies, intercommunicators, processes (issue 13, part 4) ----
 * Ranks are MPI's: MPI_UNDEFINED where a rank has none, MPI_PROC_NULL at a Cartesian open edge.
 * New communicators get MPI_ERRORS_RETURN; out is MPI_COMM_NULL where MPI gives this rank
 * none. */
typedef MPI_Group mpc_group;
int mpc_comm_group(mpc_comm comm, mpc_group *group); /* an intercommunicator's local group */
int mpc_group_size(mpc_group group, int *size);
int mpc_group_rank(mpc_group group, int *rank); /* MPI_UNDEFINED when not a member */
int mpc_group_incl(mpc_group group, int n, const int *ranks, mpc_group *out);
int mpc_group_excl(mpc_group group, int n, const int *ranks, mpc_group *out);
int mpc_group_union(mpc_group a, mpc_group b, mpc_group *out);
int mpc_group_intersection(mpc_group a, mpc_group b, mpc_group *out);
int mpc_group_difference(mpc_group a, mpc_group b, mpc_group *out);
int mpc_group_translate_ranks(mpc_group a, int n, const int *ranks, mpc_group b, int *out);
int mpc_group_free(mpc_group *group);
int mpc_comm_create(mpc_comm comm, mpc_group group, mpc_comm *out);
int mpc_cart_create(mpc_comm comm, int ndims, const int *dims, const int *periods, int reorder,
                    mpc_comm *out);
int mpc_cartdim_get(mpc_comm comm, int *ndims);
int mpc_cart_get(mpc_comm comm, int maxdims, int *dims, int *periods, int *coords);
int mpc_cart_coords(mpc_comm comm, int rank, int maxdims, int *coords);
int mpc_cart_rank(mpc_comm comm, const int *coords, int *rank);
int mpc_cart_shift(mpc_comm comm, int direction, int displacement, int *source, int *dest);
int mpc_cart_sub(mpc_comm comm, const int *remain_dims, mpc_comm *out);
int mpc_dims_create(int nodes, int ndims, int *dims);
int mpc_intercomm_create(mpc_comm local, int local_leader, mpc_comm peer, int remote_leader,
                         int tag, mpc_comm *out);
int mpc_intercomm_merge(mpc_comm inter, int high, mpc_comm *out);
int mpc_comm_test_inter(mpc_comm comm, int *inter);
int mpc_comm_remote_size(mpc_comm comm, int *size);
/* Whether this MPI library can connect processes started apart (MPI_Open_port, which spawn
 * needs): MPC_OK, or MPI's error with its text in why (NUL-terminated, cut to size). */
int mpc_dynamic_processes(char *why, size_t size);
/* MPI_Comm_spawn of maxprocs copies of command with argv (NULL-terminated), started in wdir
 * (NULL: MPI's choice); command, argv, maxprocs and wdir are significant at root only. */
int mpc_comm_spawn(const char *command, char **argv, int maxprocs, const char *wdir, int root,
                   mpc_comm comm, mpc_comm *out);
int mpc_comm_get_parent(mpc_comm *parent); /* MPI_COMM_NULL unless spawned */

/* ---- distributed graphs and neighbourhood collectives (neighbors.c) ----
 * A graph is unweighted (MPI_UNWEIGHTED); its new communicator gets MPI_ERRORS_RETURN. */
int mpc_dist_graph_create_adjacent(mpc_comm comm, int indegree, const int *sources, int outdegree,
                                   const int *destinations, int reorder, mpc_comm *out);
int mpc_topo_test(mpc_comm comm,
                  int *kind); /* MPI_CART, MPI_DIST_GRAPH, MPI_GRAPH, MPI_UNDEFINED */
int mpc_dist_graph_neighbors_count(mpc_comm comm, int *indegree, int *outdegree);
int mpc_dist_graph_neighbors(mpc_comm comm, int indegree, int *sources, int outdegree,
                             int *destinations);
/* The neighbourhood collectives with a size header before every block: MPICH 4.0.2's neighbourhood
 * collectives drop a block longer than its receive block with MPI_SUCCESS (the block left as it
 * was) and say nothing of a shorter one, so a receiver learns what each neighbour sent only from
 * the 8 bytes that travel in front of the block: its size as the sender counts it. One
 * MPI_(I)neighbor_alltoallw from MPI_BOTTOM, every block that travels described by a datatype of
 * two pieces at absolute addresses (the header, then the block in place: no copy), made once and
 * cached (mpc_neighbor_exchange): a halo exchange repeated on long-lived arrays, with its headers
 * at the same place, makes no datatype after its first call. */
typedef struct mpc_nb_block {
    void *data;        /* the block's first byte */
    MPI_Count count;   /* elements of type (MPI_BYTE: bytes; a region's datatype: 1); 0: empty */
    MPI_Datatype type; /* MPI_BYTE, or a committed type that stays until MPI ends (a region's) */
} mpc_nb_block;
typedef struct mpc_nb_exchange {
    int out, in;                     /* the degrees */
    const mpc_nb_block *send, *recv; /* per destination / source; read during the call only */
    int send_one;                    /* every destination gets send[0] behind sent[0] */
    int64_t *sent, *got;             /* the headers (the caller fills both: got with
                                      * MPC_GOT_MORE), read and written until completion */
    const int32_t *perm;             /* receive entry i carries block perm[i] (NULL: i) */
    MPI_Count *counts;               /* MPI's arrays, out + in entries each, until completion */
    MPI_Aint *displs;
    MPI_Datatype *types;
} mpc_nb_exchange;
/* The exchange of x over comm: blocking with req NULL, else started. After completion got[j] is
 * what source j's header said, or still MPC_GOT_MORE when MPI dropped the block as too long (or
 * the source is MPI_PROC_NULL); a block MPI kept in part has a header larger than it. */
int mpc_neighbor_exchange(const mpc_nb_exchange *x, mpc_comm comm, mpc_request *req);
/* The blocking form, exact and without headers: one Irecv per source and one Isend per
 * destination on comm's private twin (mpc_comm_private), the blocks in place, waited for with
 * the wait policy's backoff. Block k goes to dests[k] (allgather: send[0] to every one), block j
 * comes from sources[j]; the tags pair them (a block sent with stags[k] lands where the receiver
 * expects rtags[j]: MPI-4.0's pairing is the caller's choice of tags). got[j]: the bytes block j
 * brought (0 from MPI_PROC_NULL), or MPC_GOT_MORE when its sender sent more than it holds
 * (nothing past the block written). */
int mpc_neighbor_exact(mpc_comm comm, int allgather, int out, const mpc_nb_block *send,
                       const int *dests, const int *stags, int in, const mpc_nb_block *recv,
                       const int *sources, const int *rtags, int64_t *got);
/* Datatypes mpc_neighbor_exchange has made so far (the cache's misses: for tests). */
int64_t mpc_neighbor_types_made(void);

/* Where one process is a neighbour several times (a periodic grid dimension of one or two
 * processes, a graph's repeated or self edges), the order in which this MPI posts the receives of
 * MPI_Ineighbor_alltoallw (what the non-blocking neighbourhood collectives run as; the blocking
 * ones run as point-to-point, paired by tags) decides which block lands where: in list order, in
 * reverse list order, in list order with each pair (2i, 2i+1) swapped, or in an order not known.
 * Probed once per process, on a grid (cart) and on a graph over MPI_COMM_SELF: two tiny
 * collectives. */
typedef enum {
    MPC_POSTING_LIST,
    MPC_POSTING_REVERSED,
    MPC_POSTING_PAIRS_SWAPPED,
    MPC_POSTING_UNKNOWN
} mpc_posting;
int mpc_neighbor_posting(int cart, mpc_posting *posting);
/* The same once probed, with no MPI call (1); 0 before the first mpc_neighbor_posting. */
int mpc_neighbor_posting_known(int cart, mpc_posting *posting);

/* ---- files: MPI-IO (io.c) ----
 * Errors are MPI's codes; the caller maps their classes to what its user expects. */
/* Collective MPI_File_open over comm with amode, then an allreduce of the outcome so that every
 * rank returns the same: MPC_OK and *fh (errors returned by its operations) on every rank, or on
 * every rank an error, *failed_class the worst MPI error class seen and *failed_rank the lowest
 * rank that saw it (a rank whose own open succeeded closes its file first). */
int mpc_file_open(mpc_comm comm, const char *path, int amode, MPI_File *fh, int *failed_class,
                  int *failed_rank);
int mpc_file_close(MPI_File *fh);
/* MPI_File_delete; *cls: the failure's MPI error class (MPI_SUCCESS when none). */
int mpc_file_delete(const char *path, int *cls);
int mpc_file_get_size(MPI_File fh, int64_t *bytes);
int mpc_file_set_size(MPI_File fh, int64_t bytes); /* collective */
int mpc_file_sync(MPI_File fh);                    /* collective */
/* What MPI is given for bytes of memory: count words of the widest unsigned word dividing bytes
 * (MPC_ERR_TOO_LARGE past INT_MAX words). */
int mpc_file_memory(size_t bytes, int *count, MPI_Datatype *type);
/* kind: what mpc_file_at does (or'ed); none: an independent read. */
#define MPC_FILE_WRITE 1
#define MPC_FILE_COLLECTIVE 2
/* MPI_File_read_at / write_at (_all with MPC_FILE_COLLECTIVE) of (buf, count, type) at offset
 * (bytes, or etypes of the view); status->bytes: the bytes moved. */
int mpc_file_at(MPI_File fh, int64_t offset, void *buf, int count, MPI_Datatype type, int kind,
                mpc_status *status);
/* MPI_File_iwrite_at (write) or MPI_File_iread_at: the buffer is MPI's until *req completes. */
int mpc_file_iat(MPI_File fh, int64_t offset, void *buf, int count, MPI_Datatype type, int write,
                 mpc_request *req);
/* The bytes of count elements of etype_size bytes from offset (the view's etypes; bytes without
 * one) that lie inside the file now: what a read of them can have read. ROMIO's collective reads
 * report the bytes asked for even past the end of the file; this corrects them. */
int mpc_file_readable(MPI_File fh, int64_t offset, int64_t count, size_t etype_size,
                      int64_t *bytes);
/* MPI_Test of a file access's request: *bytes, once *done, the bytes it moved. */
int mpc_file_test(mpc_request *req, int *done, int64_t *bytes);
/* The committed types of a view of this rank's box (sizes from starts) of a row-major global
 * array of gsizes elements of elem_size bytes: *etype one element (a contiguous run of its word),
 * *filetype the subarray of etype (an empty box: a type of no bytes). The caller frees both
 * with mpc_file_type_free. */
int mpc_file_view_types(size_t elem_size, int ndims, const int *gsizes, const int *sizes,
                        const int *starts, MPI_Datatype *etype, MPI_Datatype *filetype);
/* MPI_File_set_view(fh, disp, etype, filetype, "native"): collective. */
int mpc_file_set_view(MPI_File fh, int64_t disp, MPI_Datatype etype, MPI_Datatype filetype);
/* MPI_Type_free of a type mpc_file_view_types made (MPI_DATATYPE_NULL: nothing). */
int mpc_file_type_free(MPI_Datatype *type);

/* ---- one-sided communication: windows (rma.c) ----
 * A window over [base, base + bytes) with displacement unit 1 (displacements are bytes from
 * base), MPI_ERRORS_RETURN. FetchAndOp and CompareAndSwap flush the target before returning, so
 * the result is there. */
int mpc_win_create(void *base, size_t bytes, mpc_comm comm, MPI_Win *win);
int mpc_win_free(MPI_Win *win);
int mpc_win_fence(int assert_flags, MPI_Win win);
int mpc_win_lock(int exclusive, int rank, MPI_Win win);
int mpc_win_unlock(int rank, MPI_Win win);
int mpc_win_lock_all(MPI_Win win);
int mpc_win_unlock_all(MPI_Win win);
int mpc_win_flush(int rank, MPI_Win win);
int mpc_win_flush_all(MPI_Win win);
int mpc_put(const void *origin, size_t bytes, int rank, MPI_Aint disp, MPI_Win win);
int mpc_get(void *origin, size_t bytes, int rank, MPI_Aint disp, MPI_Win win);
int mpc_accumulate(const void *origin, MPI_Count count, MPI_Datatype type, int rank, MPI_Aint disp,
                   MPI_Op op, MPI_Win win);
int mpc_fetch_and_op(const void *value, void *result, MPI_Datatype type, int rank, MPI_Aint disp,
                     MPI_Op op, MPI_Win win);
int mpc_compare_and_swap(const void *value, const void *compare, void *result, MPI_Datatype type,
                         int rank, MPI_Aint disp, MPI_Win win);

/* ---- the hang report (hang_watch.c) ----
 * With MOTOR_HANG_REPORT=SECONDS, a thread blocked in one call longer than that is reported on
 * stderr by a watch thread: the call, its communicator, how long, and for a collective which
 * ranks of the communicator have not entered it (asked over the watch's own duplicate of World).
 * The hot path pays a few relaxed stores per call: a description of the call into the thread's
 * slot (mpc_hang_note), and a sequence number made odd while the thread blocks in it
 * (mpc_hang_block, mpc_hang_unblock) and even again after. The watch wakes on a timed condition
 * and reports a slot it has seen odd with one sequence number for longer than the bound. */
typedef enum mpc_hang_call {
    MPC_HANG_NONE,
    /* point-to-point: peer and tag */
    MPC_HANG_SEND,
    MPC_HANG_SSEND,
    MPC_HANG_RECV,
    MPC_HANG_SENDRECV,
    MPC_HANG_PROBE,
    /* requests started earlier */
    MPC_HANG_WAIT,
    /* collectives, counted per communicator (a communicator's creation is one of its parent) */
    MPC_HANG_BARRIER,
    MPC_HANG_BCAST,
    MPC_HANG_SCATTER,
    MPC_HANG_GATHER,
    MPC_HANG_ALLGATHER,
    MPC_HANG_ALLTOALL,
    MPC_HANG_REDUCE,
    MPC_HANG_ALLREDUCE,
    MPC_HANG_SCAN,
    MPC_HANG_EXSCAN,
    MPC_HANG_REDUCE_SCATTER,
    MPC_HANG_SCATTERV,
    MPC_HANG_GATHERV,
    MPC_HANG_ALLGATHERV,
    MPC_HANG_ALLTOALLV,
    MPC_HANG_NEIGHBOR,
    MPC_HANG_DUP,
    MPC_HANG_SPLIT,
    MPC_HANG_CREATE,
    MPC_HANG_CART_CREATE,
    MPC_HANG_CART_SUB,
    MPC_HANG_GRAPH_CREATE,
    MPC_HANG_INTERCOMM,
    /* the end: World's last barrier, before MPI_Finalize */
    MPC_HANG_FINALIZE,
    MPC_HANG_CALLS
} mpc_hang_call;

/* One thread's slot. Only its thread writes the first fields; the watch reads them. */
typedef struct mpc_hang_slot {
    thread_block link;                     /* first: the pool's (thread_blocks.h) */
    _Atomic uint32_t seq;                  /* odd while the thread blocks in the call noted */
    _Atomic int32_t call, comm, peer, tag; /* the call (mpc_hang_call) and its arguments */
    _Atomic int64_t index;                 /* a collective's number on comm (1: the first) */
    /* the watch's own */
    uint32_t seen_seq;
    int reported;
    double seen_at;
} mpc_hang_slot;

/* Set once by mpc_init, before other threads call MPI: 1 while the watch runs. */
extern _Atomic int mpc_hang_watching;
extern __thread mpc_hang_slot *mpc_hang_mine __attribute__((tls_model("initial-exec")));
mpc_hang_slot *mpc_hang_claim(void);
/* Counts a collective entered on comm; returns its number there, 0 when comm is not known. */
int64_t mpc_hang_count(mpc_comm comm);

static inline mpc_hang_slot *mpc_hang_slot_(void)
{
    return mpc_hang_mine ? mpc_hang_mine : mpc_hang_claim();
}
/* Describes the call the thread is about to make or wait for; nothing while it is blocked in
 * another (a call nested in a blocking one: the outer one is what the thread is in). */
static inline void mpc_hang_note(mpc_hang_call call, mpc_comm comm, int peer, int tag)
{
    if (!atomic_load_explicit(&mpc_hang_watching, memory_order_relaxed))
        return;
    mpc_hang_slot *s = mpc_hang_slot_();
    if (atomic_load_explicit(&s->seq, memory_order_relaxed) & 1)
        return;
    atomic_store_explicit(&s->call, (int32_t)call, memory_order_relaxed);
    atomic_store_explicit(&s->comm, (int32_t)comm, memory_order_relaxed);
    atomic_store_explicit(&s->peer, peer, memory_order_relaxed);
    atomic_store_explicit(&s->tag, tag, memory_order_relaxed);
    atomic_store_explicit(&s->index, 0, memory_order_relaxed);
}
/* The same for a collective (blocking or started), which it counts on comm: once, so not when
 * nested in a blocking call (a blocking collective made of others, or of its non-blocking form:
 * every rank counts it once whichever way its host waits). */
static inline void mpc_hang_note_collective(mpc_hang_call call, mpc_comm comm)
{
    if (!atomic_load_explicit(&mpc_hang_watching, memory_order_relaxed))
        return;
    mpc_hang_slot *s = mpc_hang_slot_();
    if (atomic_load_explicit(&s->seq, memory_order_relaxed) & 1)
        return;
    int64_t index = mpc_hang_count(comm);
    mpc_hang_note(call, comm, -1, -1);
    atomic_store_explicit(&s->index, index, memory_order_relaxed);
}
/* The thread blocks in the call noted last; returns 1 when this call marked it (0: off, or
 * nested in a blocking call), for mpc_hang_unblock. */
static inline int mpc_hang_block(void)
{
    if (!atomic_load_explicit(&mpc_hang_watching, memory_order_relaxed))
        return 0;
    mpc_hang_slot *s = mpc_hang_slot_();
    uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    if (seq & 1)
        return 0;
    /* release: the watch that reads it odd reads the description too */
    atomic_store_explicit(&s->seq, seq + 1, memory_order_release);
    return 1;
}
static inline void mpc_hang_unblock(int marked)
{
    if (!marked)
        return;
    mpc_hang_slot *s = mpc_hang_mine;
    atomic_store_explicit(&s->seq, atomic_load_explicit(&s->seq, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}
/* A blocking call's two ends in mpc: note and block; unblock and pass its code on. */
static inline int mpc_hang_enter(mpc_hang_call call, mpc_comm comm, int peer, int tag)
{
    mpc_hang_note(call, comm, peer, tag);
    return mpc_hang_block();
}
static inline int mpc_hang_enter_collective(mpc_hang_call call, mpc_comm comm)
{
    mpc_hang_note_collective(call, comm);
    return mpc_hang_block();
}
static inline int mpc_hang_leave(int marked, int rc)
{
    mpc_hang_unblock(marked);
    return rc;
}
/* A communicator made by a collective call on parent (child MPI_COMM_NULL where this rank got
 * none): its identity across ranks derives from parent's and the number of that creation there;
 * known is 0 where the creation does not give every member the same (intercommunicators). */
void mpc_hang_derived(mpc_comm parent, mpc_comm child, int known);
/* comm is being freed: its handle may come back for another communicator. */
void mpc_hang_forget(mpc_comm comm);

#endif

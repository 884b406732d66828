/* mpc.h — the Message Passing Core: a thin C layer over MPICH.
 *
 * Knows MPI, knows nothing of Mono; usable from plain C programs. Every function returns
 * MPC_OK (0), one of the negative mpc_err codes (mpc_errors.h), or a positive MPI error code
 * passed through unchanged (communicators use MPI_ERRORS_RETURN). mpc_strerror describes any of
 * them. */
#ifndef MPC_H
#define MPC_H

#include "mpc_errors.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library exports only what its public headers mark (built with -fvisibility=hidden). */
#ifndef MPC_API
#define MPC_API __attribute__((visibility("default")))
#endif

typedef MPI_Comm mpc_comm;
typedef MPI_Request mpc_request;
typedef MPI_Message mpc_message;

/* Outcome of a receive or probe. bytes is the size of the matched message. */
typedef struct mpc_status {
    int32_t source;
    int32_t tag;
    int32_t count;     /* filled by upper layers (elements); mpc sets it to bytes when it fits */
    int32_t cancelled;
    int64_t bytes;
} mpc_status;

/* Describes any code this layer or MPI returns. Thread-safe: MPI's text lives in a per-thread
 * buffer (no static TLS), valid until the thread's next call. */
MPC_API const char *mpc_strerror(int code);
/* The MPI error class of a positive code, 0 for MPC_OK, the code itself for mpc_err codes. */
MPC_API int mpc_error_class(int code);

/* Initialisation. mpc_init calls MPI_Init_thread unless MPI is already initialised, and sets
 * MPI_ERRORS_RETURN on World and Self either way. */
MPC_API int mpc_init(int *argc, char ***argv, int required, int *provided);
MPC_API int mpc_finalize(void);
/* For a program with nothing left to do once MPI ends: a barrier of World (every rank finished,
 * so no message of the job is pending), then MPI_Finalize. If that has not returned `seconds`
 * after the barrier, the process ends with `exit_status`, stdio flushed, after telling Hydra's
 * process manager what MPI_Finalize would have (its barrier and "finalize", which MPI_Finalize's
 * own talk with it is relayed through meanwhile), so the job still ends as a success. A job
 * spanning hosts under Hydra skips MPI_Finalize's teardown (MPICH 4.0 over UCX's TCP can hang in
 * it) and says only those words. seconds <= 0: plain MPI_Finalize. */
MPC_API int mpc_finalize_within(double seconds, int exit_status);
/* The bound a host gives mpc_finalize_within when MOTOR_FINALIZE_TIMEOUT is unset: generous, as
 * a busy machine can take seconds to finish MPI_Finalize and a hang is rare. */
#define MPC_FINALIZE_TIMEOUT_DEFAULT 30.0
/* The number of seconds (>= 0) in environment variable `variable`; `fallback` when it is unset or
 * empty, and when it is not such a number (then said on stderr). */
MPC_API double mpc_env_seconds(const char *variable, double fallback);
/* In a job spanning hosts each rank watches the nearest rank on another host in each direction of
 * the ring (a thread, while MPI runs with MPI_THREAD_MULTIPLE). One silent for
 * MOTOR_HEARTBEAT_TIMEOUT seconds (default 4; 0: no heartbeat) that a TCP connection cannot reach
 * either is named on stderr, and the rank kills itself (SIGKILL), so
 * Hydra ends the whole job at once; should the signal fail it exits with this status (sysexits'
 * EX_UNAVAILABLE). */
#define MPC_EXIT_PEER_LOST 69
/* How blocking waits behave (MOTOR_WAIT, read by mpc_init). Busy polling answers fastest while
 * every rank has a core; when the ranks on a host outnumber the cores they may run on, a rank
 * that spins holds a core the rank it waits for needs, and every wait lasts scheduler time
 * slices. MOTOR_WAIT=auto (the default) yields then exactly then, spin never, yield always. */
typedef enum { MPC_WAIT_SPIN = 0, MPC_WAIT_YIELD = 1 } mpc_wait_policy;
/* The policy in force: MPC_WAIT_SPIN until mpc_init has run. */
MPC_API mpc_wait_policy mpc_wait_mode(void);
/* A poll loop's pause under MPC_WAIT_YIELD: call mpc_backoff_pause after every poll that found
 * the wait unfinished. From the first call (or from `since`, a CLOCK_MONOTONIC time in ns when
 * set) it returns at once for 20 µs (most waits end by then), then sched_yield()s until 100 µs,
 * then naps with nanosleep from 1 µs, doubling to 100 µs (the kernel's timer slack, 50 µs by
 * default, lengthens the short ones). A pure sched_yield barely gives the core away under Linux's
 * CFS among busy pollers; the naps do. Not for MPC_WAIT_SPIN loops. */
typedef struct mpc_backoff {
    int64_t since, nap;
} mpc_backoff;
MPC_API void mpc_backoff_pause(mpc_backoff *b);
MPC_API int64_t mpc_monotonic_ns(void);
/* What auto decided from, measured once by the mpc_init that initialised MPI (collective there):
 * the ranks of World on this host (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED) and the cores
 * they may run on together (the union of their affinity masks, at most the online CPUs); 0 and 0
 * when MPI was initialised by someone else (then auto spins, as before). */
MPC_API void mpc_host_load(int *ranks, int *cores);
MPC_API int mpc_is_initialized(void);      /* initialised and not finalised */
MPC_API int mpc_thread_level(void);        /* the level MPI granted */
MPC_API int mpc_tag_ub(void);              /* MPI_TAG_UB of World */
MPC_API double mpc_wtime(void);
MPC_API int mpc_processor_name(char *buf, size_t size); /* NUL-terminated, truncated to size */
MPC_API int mpc_abort(mpc_comm comm, int code);

/* Communicators. New ones get MPI_ERRORS_RETURN. */
MPC_API mpc_comm mpc_comm_world(void);
MPC_API mpc_comm mpc_comm_self(void);
MPC_API int mpc_comm_rank(mpc_comm comm, int *rank);
MPC_API int mpc_comm_size(mpc_comm comm, int *size);
MPC_API int mpc_comm_dup(mpc_comm comm, mpc_comm *out);
/* color < 0 means MPI_UNDEFINED: *out becomes MPI_COMM_NULL. */
MPC_API int mpc_comm_split(mpc_comm comm, int color, int key, mpc_comm *out);
MPC_API int mpc_comm_free(mpc_comm *comm);

/* Point-to-point on contiguous bytes. Sources and tags take MPI's wildcards (MPI_ANY_SOURCE,
 * MPI_ANY_TAG). */
MPC_API int mpc_send(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm);
MPC_API int mpc_ssend(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm);
MPC_API int mpc_recv(void *buf, size_t bytes, int source, int tag, mpc_comm comm, mpc_status *status);
MPC_API int mpc_isend(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm, mpc_request *req);
MPC_API int mpc_issend(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm, mpc_request *req);
MPC_API int mpc_irecv(void *buf, size_t bytes, int source, int tag, mpc_comm comm, mpc_request *req);
MPC_API int mpc_sendrecv(const void *sendbuf, size_t sendbytes, int dest, int sendtag,
                 void *recvbuf, size_t recvbytes, int source, int recvtag,
                 mpc_comm comm, mpc_status *status);

/* Requests. status may be NULL. *done is 1 once the request completed (and was freed).
 * When a receive fails (here, in mpc_recv and mpc_sendrecv) status holds what MPI tells of it:
 * for a truncation the message's source and tag, otherwise MPI_ANY_SOURCE and MPI_ANY_TAG;
 * bytes and count are -1 (MPI does not report a truncated message's size). */
MPC_API int mpc_test(mpc_request *req, int *done, mpc_status *status);
MPC_API int mpc_wait(mpc_request *req, mpc_status *status);
MPC_API int mpc_cancel(mpc_request *req);
/* Whether the request has completed, without completing it (MPI_Request_get_status): a failed
 * request counts as completed. */
MPC_API int mpc_request_done(mpc_request req, int *done);

MPC_API int mpc_probe(int source, int tag, mpc_comm comm, mpc_status *status);
MPC_API int mpc_iprobe(int source, int tag, mpc_comm comm, int *found, mpc_status *status);
/* Matched probe: a found message is *msg's alone, received with mpc_mrecv (buf may be NULL and
 * bytes 0 to discard it: the truncation error is then expected). */
MPC_API int mpc_improbe(int source, int tag, mpc_comm comm, int *found, mpc_message *msg, mpc_status *status);
MPC_API int mpc_mrecv(void *buf, size_t bytes, mpc_message *msg, mpc_status *status);
/* The non-blocking receive of a matched message. */
MPC_API int mpc_imrecv(void *buf, size_t bytes, mpc_message *msg, mpc_request *req);

MPC_API int mpc_barrier(mpc_comm comm);
MPC_API int mpc_ibarrier(mpc_comm comm, mpc_request *req);

/* Collectives. Byte-wise ones move raw bytes (per rank for scatter/gather); reductions take
 * an element count, datatype and operator. sendbuf MPI_IN_PLACE works as in MPI. Counts
 * beyond INT_MAX use MPI-4's large-count entry points. They block like MPI's. */
MPC_API int mpc_bcast(void *buf, size_t bytes, int root, mpc_comm comm);
MPC_API int mpc_scatter(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, int root, mpc_comm comm);
MPC_API int mpc_gather(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, int root, mpc_comm comm);
MPC_API int mpc_allgather(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, mpc_comm comm);
MPC_API int mpc_alltoall(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, mpc_comm comm);
MPC_API int mpc_reduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
               int root, mpc_comm comm);
MPC_API int mpc_allreduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                  mpc_comm comm);
MPC_API int mpc_scan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
             mpc_comm comm);
/* Byte-wise v-collectives; counts and displacements in bytes, per rank (large counts). Past
 * 2 GiB, mpc_allgatherv broadcasts the whole extent the pieces fill: gaps between them are
 * overwritten (lay the pieces end to end). */
MPC_API int mpc_scatterv(const void *sendbuf, const MPI_Count *counts, const MPI_Count *displs, void *recvbuf,
                         size_t recvbytes, int root, mpc_comm comm);
MPC_API int mpc_gatherv(const void *sendbuf, size_t sendbytes, void *recvbuf, const MPI_Count *counts,
                        const MPI_Count *displs, int root, mpc_comm comm);
MPC_API int mpc_allgatherv(const void *sendbuf, size_t sendbytes, void *recvbuf, const MPI_Count *counts,
                           const MPI_Count *displs, mpc_comm comm);

/* ---- exact v-collectives, Exscan, Reduce_scatter_block (issue 13) ----
 * MPI's v-collectives return no status, so a receiver cannot tell a block shorter than it
 * expected from a full one. These run as point-to-point on the communicator's private twin
 * (mpc_comm_private): every receiver learns the size of every block it got, at no extra
 * message. Exactly one message (zero bytes included) goes from each sender to each receiver
 * per call, so a disagreement never leaves a message behind. Blocks are byte ranges. got[r]:
 * the bytes rank r's block brought, or MPC_GOT_MORE when r sent more than the block holds
 * (MPI's truncation, not returned as an error); the caller compares got with what it expected.
 * The return value is MPC_OK or the first other MPI error. */
typedef struct mpc_block {
    size_t offset, bytes;
} mpc_block;
#define MPC_GOT_MORE (-1)

/* comm's private twin for these calls: MPI_Comm_dup'ed at the first call on comm (collective:
 * every rank's first such call must be the same one), cached as an attribute, freed with comm;
 * a Dup of comm does not inherit it. */
MPC_API int mpc_comm_private(mpc_comm comm, mpc_comm *out);
/* Root: block r of recvbuf from rank r (its own copied from sendbuf, sendbytes == its block's
 * bytes), got[0..size) filled; others send sendbytes, got untouched. */
MPC_API int mpc_gatherv_exact(const void *sendbuf, size_t sendbytes, void *recvbuf, const mpc_block *blocks,
                              int root, mpc_comm comm, int64_t *got);
/* Root: block r of sendbuf to rank r (its own copied to recvbuf); every rank: *got = the bytes
 * its block brought. */
MPC_API int mpc_scatterv_exact(const void *sendbuf, const mpc_block *blocks, void *recvbuf, size_t recvbytes,
                               int root, mpc_comm comm, int64_t *got);
/* send[r] of sendbuf to rank r, recv[r] of recvbuf from rank r (this rank's own copied locally:
 * send[rank].bytes == recv[rank].bytes); got[0..size) filled. Allgatherv is this with every
 * send[r] the same block. */
MPC_API int mpc_alltoallv_exact(const void *sendbuf, const mpc_block *send, void *recvbuf, const mpc_block *recv,
                                mpc_comm comm, int64_t *got);
/* Exclusive prefix reduction (rank 0's recvbuf: MPI leaves it undefined) and the reduction
 * scattered in blocks of count elements. */
MPC_API int mpc_exscan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                       mpc_comm comm);
MPC_API int mpc_reduce_scatter_block(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type,
                                     MPI_Op op, mpc_comm comm);
/* ---- end of the v-collectives ---- */

/* User reduction operators and the datatype of their elements. */
MPC_API int mpc_op_create(MPI_User_function *fn, int commutative, MPI_Op *op);
MPC_API int mpc_op_free(MPI_Op *op);
/* A committed datatype of `bytes` contiguous bytes (a struct element), freed by mpc_type_free. */
MPC_API int mpc_type_bytes(size_t bytes, MPI_Datatype *type);
MPC_API int mpc_type_free(MPI_Datatype *type);

/* Converts an MPI_Status of a completed request into an mpc_status (cancelled as
 * MPI_Test_cancelled says; a cancelled one reads as MPI's empty status: MPI_ANY_SOURCE,
 * MPI_ANY_TAG, 0 bytes, since MPI defines no other field of it). */
MPC_API void mpc_status_from_mpi(const MPI_Status *in, mpc_status *out);
/* The same for a probe, which MPI defines no cancelled flag for: cancelled is 0. The caller
 * zero-initialises the MPI_Status before probing (MPICH leaves the cancel bit untouched). */
MPC_API void mpc_status_from_probe(const MPI_Status *in, mpc_status *out);


/* ---- groups, topologies, intercommunicators, processes (issue 13, part 4) ----
 * Ranks are MPI's: MPI_UNDEFINED where a rank has none, MPI_PROC_NULL at a Cartesian open edge.
 * New communicators get MPI_ERRORS_RETURN; out is MPI_COMM_NULL where MPI gives this rank none. */
typedef MPI_Group mpc_group;
MPC_API int mpc_comm_group(mpc_comm comm, mpc_group *group);          /* an intercommunicator's local group */
MPC_API int mpc_group_size(mpc_group group, int *size);
MPC_API int mpc_group_rank(mpc_group group, int *rank);               /* MPI_UNDEFINED when not a member */
MPC_API int mpc_group_incl(mpc_group group, int n, const int *ranks, mpc_group *out);
MPC_API int mpc_group_excl(mpc_group group, int n, const int *ranks, mpc_group *out);
MPC_API int mpc_group_union(mpc_group a, mpc_group b, mpc_group *out);
MPC_API int mpc_group_intersection(mpc_group a, mpc_group b, mpc_group *out);
MPC_API int mpc_group_difference(mpc_group a, mpc_group b, mpc_group *out);
MPC_API int mpc_group_translate_ranks(mpc_group a, int n, const int *ranks, mpc_group b, int *out);
MPC_API int mpc_group_free(mpc_group *group);
MPC_API int mpc_comm_create(mpc_comm comm, mpc_group group, mpc_comm *out);
MPC_API int mpc_cart_create(mpc_comm comm, int ndims, const int *dims, const int *periods, int reorder,
                            mpc_comm *out);
MPC_API int mpc_cartdim_get(mpc_comm comm, int *ndims);
MPC_API int mpc_cart_get(mpc_comm comm, int maxdims, int *dims, int *periods, int *coords);
MPC_API int mpc_cart_coords(mpc_comm comm, int rank, int maxdims, int *coords);
MPC_API int mpc_cart_rank(mpc_comm comm, const int *coords, int *rank);
MPC_API int mpc_cart_shift(mpc_comm comm, int direction, int displacement, int *source, int *dest);
MPC_API int mpc_cart_sub(mpc_comm comm, const int *remain_dims, mpc_comm *out);
MPC_API int mpc_dims_create(int nodes, int ndims, int *dims);
MPC_API int mpc_intercomm_create(mpc_comm local, int local_leader, mpc_comm peer, int remote_leader, int tag,
                                 mpc_comm *out);
MPC_API int mpc_intercomm_merge(mpc_comm inter, int high, mpc_comm *out);
MPC_API int mpc_comm_test_inter(mpc_comm comm, int *inter);
MPC_API int mpc_comm_remote_size(mpc_comm comm, int *size);
/* Whether this MPI library can connect processes started apart (MPI_Open_port, which spawn
 * needs): MPC_OK, or MPI's error with its text in why (NUL-terminated, cut to size). */
MPC_API int mpc_dynamic_processes(char *why, size_t size);
/* MPI_Comm_spawn of maxprocs copies of command with argv (NULL-terminated), started in wdir
 * (NULL: MPI's choice); command, argv, maxprocs and wdir are significant at root only. */
MPC_API int mpc_comm_spawn(const char *command, char **argv, int maxprocs, const char *wdir, int root,
                           mpc_comm comm, mpc_comm *out);
MPC_API int mpc_comm_get_parent(mpc_comm *parent);                    /* MPI_COMM_NULL unless spawned */

/* ---- non-blocking collectives: as the blocking ones above, starting a request that
 * mpc_test / mpc_wait complete. The buffers belong to MPI until then. ---- */
MPC_API int mpc_ibcast(void *buf, size_t bytes, int root, mpc_comm comm, mpc_request *req);
MPC_API int mpc_iallgather(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, mpc_comm comm,
                           mpc_request *req);
MPC_API int mpc_ialltoall(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, mpc_comm comm,
                          mpc_request *req);
MPC_API int mpc_ireduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op, int root,
                        mpc_comm comm, mpc_request *req);
MPC_API int mpc_iallreduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                           mpc_comm comm, mpc_request *req);
MPC_API int mpc_iscatter(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, int root, mpc_comm comm,
                         mpc_request *req);
MPC_API int mpc_igather(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, int root, mpc_comm comm,
                        mpc_request *req);
MPC_API int mpc_iexscan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                        mpc_comm comm, mpc_request *req);
MPC_API int mpc_ireduce_scatter_block(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type,
                                      MPI_Op op, mpc_comm comm, mpc_request *req);
MPC_API int mpc_iscan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                      mpc_comm comm, mpc_request *req);

#ifdef __cplusplus
}
#endif
#endif

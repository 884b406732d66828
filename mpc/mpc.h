/* mpc.h — the Message Passing Core: a thin C layer over MPICH, for C programs (docs/c-api.md).
 *
 * Knows MPI, knows nothing of Mono. Every function returns MPC_OK (0), one of the negative
 * mpc_err codes (mpc_errors.h), or a positive MPI error code passed through unchanged
 * (communicators use MPI_ERRORS_RETURN). mpc_strerror describes any of them.
 *
 * This is the installed API and all the library exports of mpc (tests/layering_test.sh checks
 * both). What else the layers above use of mpc is declared in mpc_internal.h, not installed.
 * Handles are MPI's own, so what mpc leaves out a program calls MPI for directly. */
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
    int32_t count; /* filled by upper layers (elements); mpc sets it to bytes when it fits */
    int32_t cancelled;
    int64_t bytes;
} mpc_status;

/* Describes any code this layer or MPI returns. Thread-safe: MPI's text lives in a per-thread
 * buffer (no static TLS), valid until the thread's next call. */
MPC_API const char *mpc_strerror(int code);
/* The MPI error class of a positive code, 0 for MPC_OK, the code itself for mpc_err codes. */
MPC_API int mpc_error_class(int code);

/* ---- starting and ending ---- */

/* mpc_init calls MPI_Init_thread unless MPI is already initialised, and sets
 * MPI_ERRORS_RETURN on World and Self either way. It reads MOTOR_WAIT (how blocking calls
 * wait) and, when it initialises MPI in a job spanning hosts with MPI_THREAD_MULTIPLE, starts
 * the heartbeat: each rank watches the nearest rank on another host in each direction of the
 * ring; one silent for MOTOR_HEARTBEAT_TIMEOUT seconds (default 4; 0: no heartbeat) that a TCP
 * connection cannot reach either is named on stderr, and the rank kills itself (SIGKILL), so
 * Hydra ends the whole job at once; should the signal fail it exits with MPC_EXIT_PEER_LOST.
 * With MOTOR_HANG_REPORT set on every rank (asked collectively, whatever the answer) and
 * MPI_THREAD_MULTIPLE, it starts the hang report's watch (docs/reference.md). */
MPC_API int mpc_init(int *argc, char ***argv, int required, int *provided);
/* sysexits' EX_UNAVAILABLE */
#define MPC_EXIT_PEER_LOST 69
/* A rank blocked in one call for MOTOR_HANG_EXIT seconds ends with this status (sysexits'
 * EX_SOFTWARE: the program's calls do not match), after its hang report. */
#define MPC_EXIT_HANG 70
MPC_API int mpc_finalize(void);
/* For a program with nothing left to do once MPI ends: a barrier of World (every rank finished,
 * so no message of the job is pending; on the hang report's duplicate of World while it runs,
 * so that it cannot match a collective other ranks are still in), then MPI_Finalize. If that has
 * not returned `seconds` after the barrier, the process ends with `exit_status`, stdio flushed,
 * after telling Hydra's process manager what MPI_Finalize would have (its barrier and "finalize",
 * which MPI_Finalize's own talk with it is relayed through meanwhile), so the job still ends as a
 * success. A job spanning hosts under Hydra skips MPI_Finalize's teardown (MPICH 4.0 over UCX's TCP
 * can hang in it) and says only those words. seconds <= 0: plain MPI_Finalize. */
MPC_API int mpc_finalize_within(double seconds, int exit_status);
MPC_API int mpc_abort(mpc_comm comm, int code);
MPC_API int mpc_is_initialized(void); /* initialised and not finalised */
MPC_API int mpc_thread_level(void);   /* the level MPI granted */
MPC_API int mpc_tag_ub(void);         /* MPI_TAG_UB of World */
MPC_API double mpc_wtime(void);
MPC_API int mpc_processor_name(char *buf, size_t size); /* NUL-terminated, cut to size */

/* ---- communicators. New ones get MPI_ERRORS_RETURN. ---- */
MPC_API mpc_comm mpc_comm_world(void);
MPC_API mpc_comm mpc_comm_self(void);
MPC_API int mpc_comm_rank(mpc_comm comm, int *rank);
MPC_API int mpc_comm_size(mpc_comm comm, int *size);
MPC_API int mpc_comm_dup(mpc_comm comm, mpc_comm *out);
/* color < 0 means MPI_UNDEFINED: *out becomes MPI_COMM_NULL. */
MPC_API int mpc_comm_split(mpc_comm comm, int color, int key, mpc_comm *out);
MPC_API int mpc_comm_free(mpc_comm *comm);

/* ---- point-to-point on contiguous bytes. Sources and tags take MPI's wildcards
 * (MPI_ANY_SOURCE, MPI_ANY_TAG). ---- */
MPC_API int mpc_send(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm);
MPC_API int mpc_ssend(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm);
MPC_API int mpc_recv(void *buf, size_t bytes, int source, int tag, mpc_comm comm,
                     mpc_status *status);
MPC_API int mpc_isend(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm,
                      mpc_request *req);
MPC_API int mpc_issend(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm,
                       mpc_request *req);
MPC_API int mpc_irecv(void *buf, size_t bytes, int source, int tag, mpc_comm comm,
                      mpc_request *req);
MPC_API int mpc_sendrecv(const void *sendbuf, size_t sendbytes, int dest, int sendtag,
                         void *recvbuf, size_t recvbytes, int source, int recvtag, mpc_comm comm,
                         mpc_status *status);

/* Requests. status may be NULL. *done is 1 once the request completed (and was freed).
 * When a receive fails (here, in mpc_recv, mpc_sendrecv and mpc_mrecv) status holds what MPI
 * tells of it: for a truncation the message's source and tag, otherwise MPI_ANY_SOURCE and
 * MPI_ANY_TAG; bytes and count are -1 (MPI does not report a truncated message's size). They
 * complete MPI's own requests too (a non-blocking collective a program started with MPI). */
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
MPC_API int mpc_improbe(int source, int tag, mpc_comm comm, int *found, mpc_message *msg,
                        mpc_status *status);
MPC_API int mpc_mrecv(void *buf, size_t bytes, mpc_message *msg, mpc_status *status);
/* The non-blocking receive of a matched message. */
MPC_API int mpc_imrecv(void *buf, size_t bytes, mpc_message *msg, mpc_request *req);

/* ---- collectives. Byte-wise ones move raw bytes (per rank for scatter/gather); reductions
 * take an element count, datatype and operator. sendbuf MPI_IN_PLACE works as in MPI. Counts
 * beyond INT_MAX use MPI-4's large-count entry points. They block like MPI's (waiting as
 * MOTOR_WAIT says). ---- */
MPC_API int mpc_barrier(mpc_comm comm);
MPC_API int mpc_bcast(void *buf, size_t bytes, int root, mpc_comm comm);
MPC_API int mpc_scatter(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, int root,
                        mpc_comm comm);
MPC_API int mpc_gather(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, int root,
                       mpc_comm comm);
MPC_API int mpc_allgather(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, mpc_comm comm);
MPC_API int mpc_alltoall(const void *sendbuf, void *recvbuf, size_t bytes_per_rank, mpc_comm comm);
MPC_API int mpc_reduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type,
                       MPI_Op op, int root, mpc_comm comm);
MPC_API int mpc_allreduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type,
                          MPI_Op op, mpc_comm comm);
MPC_API int mpc_scan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                     mpc_comm comm);
/* Exclusive prefix reduction (rank 0's recvbuf: MPI leaves it undefined) and the reduction
 * scattered in blocks of count elements. */
MPC_API int mpc_exscan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type,
                       MPI_Op op, mpc_comm comm);
MPC_API int mpc_reduce_scatter_block(const void *sendbuf, void *recvbuf, size_t count,
                                     MPI_Datatype type, MPI_Op op, mpc_comm comm);

/* ---- exact v-collectives (issue 13) ----
 * MPI's v-collectives return no status, so a receiver cannot tell a block shorter than it
 * expected from a full one. These run as point-to-point on the communicator's private twin
 * (MPI_Comm_dup'ed at the first such call on comm — collective: every rank's first such call
 * must be the same one — and freed with comm): every receiver learns the size of every block
 * it got, at no extra message. Exactly one message (zero bytes included) goes from each sender
 * to each receiver per call, so a disagreement never leaves a message behind. Blocks are byte
 * ranges. got[r]: the bytes rank r's block brought, or MPC_GOT_MORE when r sent more than the
 * block holds (MPI's truncation, not returned as an error); the caller compares got with what
 * it expected. The return value is MPC_OK or the first other MPI error. */
typedef struct mpc_block {
    size_t offset, bytes;
} mpc_block;
#define MPC_GOT_MORE (-1)

/* Root: block r of recvbuf from rank r (its own copied from sendbuf, sendbytes == its block's
 * bytes), got[0..size) filled; others send sendbytes, got untouched. */
MPC_API int mpc_gatherv_exact(const void *sendbuf, size_t sendbytes, void *recvbuf,
                              const mpc_block *blocks, int root, mpc_comm comm, int64_t *got);
/* Root: block r of sendbuf to rank r (its own copied to recvbuf); every rank: *got = the bytes
 * its block brought. */
MPC_API int mpc_scatterv_exact(const void *sendbuf, const mpc_block *blocks, void *recvbuf,
                               size_t recvbytes, int root, mpc_comm comm, int64_t *got);
/* send[r] of sendbuf to rank r, recv[r] of recvbuf from rank r (this rank's own copied locally:
 * send[rank].bytes == recv[rank].bytes); got[0..size) filled. Allgatherv is this with every
 * send[r] the same block. */
MPC_API int mpc_alltoallv_exact(const void *sendbuf, const mpc_block *send, void *recvbuf,
                                const mpc_block *recv, mpc_comm comm, int64_t *got);

/* ---- user reduction operators and the datatype of their elements ---- */
MPC_API int mpc_op_create(MPI_User_function *fn, int commutative, MPI_Op *op);
MPC_API int mpc_op_free(MPI_Op *op);
/* A committed datatype of `bytes` contiguous bytes (a struct element), freed by mpc_type_free. */
MPC_API int mpc_type_bytes(size_t bytes, MPI_Datatype *type);
MPC_API int mpc_type_free(MPI_Datatype *type);

#ifdef __cplusplus
}
#endif
#endif

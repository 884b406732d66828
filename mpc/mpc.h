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

/* Requests. status may be NULL. *done is 1 once the request completed (and was freed). */
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
/* Byte-wise v-collectives; counts and displacements in bytes, per rank (large counts). */
MPC_API int mpc_scatterv(const void *sendbuf, const MPI_Count *counts, const MPI_Count *displs, void *recvbuf,
                         size_t recvbytes, int root, mpc_comm comm);
MPC_API int mpc_gatherv(const void *sendbuf, size_t sendbytes, void *recvbuf, const MPI_Count *counts,
                        const MPI_Count *displs, int root, mpc_comm comm);
MPC_API int mpc_allgatherv(const void *sendbuf, size_t sendbytes, void *recvbuf, const MPI_Count *counts,
                           const MPI_Count *displs, mpc_comm comm);

/* User reduction operators and the datatype of their elements. */
MPC_API int mpc_op_create(MPI_User_function *fn, int commutative, MPI_Op *op);
MPC_API int mpc_op_free(MPI_Op *op);
/* A committed datatype of `bytes` contiguous bytes (a struct element), freed by mpc_type_free. */
MPC_API int mpc_type_bytes(size_t bytes, MPI_Datatype *type);
MPC_API int mpc_type_free(MPI_Datatype *type);

/* Converts an MPI_Status of a completed request into an mpc_status (cancelled as
 * MPI_Test_cancelled says). */
MPC_API void mpc_status_from_mpi(const MPI_Status *in, mpc_status *out);
/* The same for a probe, which MPI defines no cancelled flag for: cancelled is 0. The caller
 * zero-initialises the MPI_Status before probing (MPICH leaves the cancel bit untouched). */
MPC_API void mpc_status_from_probe(const MPI_Status *in, mpc_status *out);


/* ---- non-blocking collectives (nbc): as the blocking ones above, starting a request that
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

#ifdef __cplusplus
}
#endif
#endif

/* mpc.h — the Message Passing Core: a thin C layer over MPICH.
 *
 * Knows MPI, knows nothing of Mono; usable from plain C programs. Every function returns
 * MPC_OK (0), one of the negative mpc_err codes, or a positive MPI error code passed through
 * unchanged (communicators use MPI_ERRORS_RETURN). mpc_strerror describes any of them. */
#ifndef MPC_H
#define MPC_H

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

/* Wildcards as System.MP spells them; mpc translates to MPI's values. */
#define MPC_ANY_SOURCE (-1)
#define MPC_ANY_TAG (-1)

/* The one error enum. Positive values are MPI error codes, not listed here. */
typedef enum mpc_err {
    MPC_OK = 0,
    MPC_ERR_NOT_INITIALIZED = -1,   /* MPI not initialised, or already finalised */
    MPC_ERR_NULL_ARGUMENT = -2,     /* a required object is null */
    MPC_ERR_DEST = -3,              /* destination rank out of range */
    MPC_ERR_SOURCE = -4,            /* source rank out of range */
    MPC_ERR_TAG = -5,               /* tag out of range */
    MPC_ERR_OFFSET = -6,            /* offset outside the array */
    MPC_ERR_COUNT = -7,             /* count negative or past the end of the array */
    MPC_ERR_NOT_TRANSPORTABLE = -8, /* object holds references, or is not an object OPI sends */
    MPC_ERR_NOT_1D_ARRAY = -9,      /* offset/count given for something that is not a 1-D array */
    MPC_ERR_SAME_OBJECT = -10,      /* send and receive buffers are the same or overlap */
    MPC_ERR_COMM_NULL = -11,        /* communicator freed */
    MPC_ERR_ROOT = -12,             /* root rank out of range */
    MPC_ERR_TOO_LARGE = -13,        /* byte count beyond what MPI can address */
    MPC_ERR_NO_MEMORY = -14,
    MPC_ERR_RUNTIME = -15,          /* the managed runtime refused (e.g. handle allocation) */
    MPC_ERR_REQUEST = -16,          /* request unknown, completed, or in use by another thread */
    MPC_ERR_OP = -17,               /* reduction operator not defined for the element type */
    MPC_ERR_TYPE_MISMATCH = -18,    /* arrays of a collective differ in element type */
    MPC_ERR_LENGTH = -19,           /* array lengths do not fit the communicator size */
    MPC_ERR_ALIAS = -20,            /* the same array given as send and receive buffer */
    MPC_ERR_SERIALIZATION = -21,    /* bytes that are not a valid graph for the requested type */
    MPC_ERR_GRAPH = -22,            /* an object graph that cannot be serialized */
    MPC_ERR_PARTIAL_ELEMENT = -23,  /* received bytes are not a whole number of elements */
    MPC_ERR_LAST = -23
} mpc_err;

/* Outcome of a receive or probe. bytes is the size of the matched message. */
typedef struct mpc_status {
    int32_t source;
    int32_t tag;
    int32_t count;     /* filled by upper layers (elements); mpc sets it to bytes when it fits */
    int32_t cancelled;
    int64_t bytes;
} mpc_status;

/* Describes any code this layer or MPI returns. Thread-safe (thread-local buffer). */
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

/* Point-to-point on contiguous bytes. Ranks and tags use MPC_ANY_* wildcards. */
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

MPC_API int mpc_probe(int source, int tag, mpc_comm comm, mpc_status *status);
MPC_API int mpc_iprobe(int source, int tag, mpc_comm comm, int *found, mpc_status *status);

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

/* Converts an MPI_Status of a completed request into an mpc_status (cancelled as
 * MPI_Test_cancelled says). */
MPC_API void mpc_status_from_mpi(const MPI_Status *in, mpc_status *out);
/* The same for a probe, which MPI defines no cancelled flag for: cancelled is 0. The caller
 * zero-initialises the MPI_Status before probing (MPICH leaves the cancel bit untouched). */
MPC_API void mpc_status_from_probe(const MPI_Status *in, mpc_status *out);

#ifdef __cplusplus
}
#endif
#endif

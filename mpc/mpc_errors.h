/* mpc_errors.h — the Message Passing Core's error codes: MPI's vocabulary only.
 *
 * Dependency-free (no <mpi.h>), so that every layer may use the shared codes (MPC_OK,
 * MPC_ERR_NO_MEMORY) without compiling against MPI. Each layer owns its own list in a header
 * like this one, in a range of its own (mpc: -1 … -99; object_model/rt_errors.h: -100 …;
 * serializer/sd_errors.h: -200 …; opi/opi_errors.h: -300 …); opi_errors.h joins them into the
 * one error list the C# binding mirrors. Positive values are MPI error codes, passed through. */
#ifndef MPC_ERRORS_H
#define MPC_ERRORS_H

/* X(NAME, code, message) gives MPC_ERR_NAME. Codes run from -1 down without gaps (mpc_strerror
 * indexes its messages by them). */
#define MPC_ERRORS(X)                                                      \
    X(NOT_INITIALIZED, -1, "MPI is not initialised or has been finalised") \
    X(DEST, -2, "destination rank out of range")                           \
    X(SOURCE, -3, "source rank out of range")                              \
    X(TAG, -4, "tag out of range")                                         \
    X(ROOT, -5, "root rank out of range")                                  \
    X(COMM_NULL, -6, "communicator has been freed")                        \
    X(TOO_LARGE, -7, "message too large")                                  \
    X(NO_MEMORY, -8, "out of memory")                                      \
    X(REQUEST, -9, "request already completed, or in use by another thread")

#define MPC_ERR_FIRST (-1)
#define MPC_ERR_LIMIT (-99) /* the last code this layer may ever take */

typedef enum mpc_err {
    MPC_OK = 0,
#define MPC_ERR_ENUM(name, code, message) MPC_ERR_##name = code,
    MPC_ERRORS(MPC_ERR_ENUM)
#undef MPC_ERR_ENUM
#define MPC_ERR_ONE(name, code, message) +1
        MPC_ERR_LAST = -(0 MPC_ERRORS(MPC_ERR_ONE)) /* codes run from -1 down to this one, no gap */
#undef MPC_ERR_ONE
} mpc_err;

#endif

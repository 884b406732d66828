/* errors.c — describing the codes mpc returns: its own (mpc_errors.h) and MPI's. */
#include "mpc_impl.h"

#include "error_record.h"

#include <stdio.h>

/* (a table the X-macro fills: laid out by hand) */
/* clang-format off */
static const char *const mpc_messages[] = {
    [0] = "success",
#define MPC_ERR_MESSAGE(name, code, message) [-(code)] = message,
    MPC_ERRORS(MPC_ERR_MESSAGE)
#undef MPC_ERR_MESSAGE
};
/* clang-format on */

/* MPI's text goes to the thread's scratch buffer: no static TLS (see error_record.h). */
_Static_assert(ERROR_SCRATCH_BYTES >= MPI_MAX_ERROR_STRING,
               "MPI_Error_string needs MPI_MAX_ERROR_STRING bytes");

const char *mpc_strerror(int code)
{
    if (code <= 0 && code >= MPC_ERR_LAST)
        return mpc_messages[-code];
    char *buf = error_scratch();
    if (!buf)
        return code < 0 ? "unknown error (out of memory describing it)"
                        : "MPI error (out of memory describing it)";
    if (code < 0) {
        snprintf(buf, ERROR_SCRATCH_BYTES, "unknown mpc error %d", code);
        return buf;
    }
    int len = 0;
    if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS)
        snprintf(buf, ERROR_SCRATCH_BYTES, "MPI error %d", code);
    return buf;
}

int mpc_error_class(int code)
{
    if (code <= 0)
        return code;
    int cls = 0;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS)
        return MPI_ERR_UNKNOWN;
    return cls;
}

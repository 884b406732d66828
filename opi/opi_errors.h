/* opi_errors.h — OPI's error codes (the vocabulary of managed objects and arrays), and the one
 * error list: every layer's codes together, which the Contract internal call reports and
 * System.MP.Errors mirrors name by name. Dependency-free, like every layer's list. */
#ifndef OPI_ERRORS_H
#define OPI_ERRORS_H

#include "mpc_errors.h"
#include "rt_errors.h"
#include "sd_errors.h"

/* Files (MPFile, opi_file.c): -350 … -354, System.IO's exceptions (opi_constants.h). */
#define OPI_FILE_ERRORS(X)                                                        \
    X(FILE_NOT_FOUND, -350, "the file does not exist")                            \
    X(DIRECTORY_NOT_FOUND, -351, "a directory of the path does not exist")        \
    X(FILE_ACCESS, -352, "permission denied, or a read-only file or file system") \
    X(FILE_EXISTS, -353, "the file exists already")                               \
    X(FILE_IO, -354, "an input/output error (see the message)")

/* X(NAME, code, message) gives OPI_ERR_NAME; codes -300 … -399. */
#define OPI_ERRORS(X)                                                                              \
    X(NULL_ARGUMENT, -300, "a required object is null")                                            \
    X(OFFSET, -301, "offset outside the array")                                                    \
    X(COUNT, -302, "count negative or past the end of the array")                                  \
    X(NOT_TRANSPORTABLE, -303, "object is not transportable")                                      \
    X(NOT_1D_ARRAY, -304, "offset and count apply to one-dimensional arrays only")                 \
    X(SAME_OBJECT, -305,                                                                           \
      "send and receive buffers must not overlap (different objects or disjoint ranges)")          \
    X(OP, -306, "the reduction operator is not defined for this element type")                     \
    X(TYPE_MISMATCH, -307, "send and receive arrays must have the same element type")              \
    X(LENGTH, -308, "array lengths do not match the communicator size")                            \
    X(ALIAS, -309, "send and receive arrays must be different arrays here")                        \
    X(PARTIAL_ELEMENT, -310,                                                                       \
      "the message is not a whole number of elements of the receiving array (sender and receiver " \
      "element types differ)")                                                                     \
    OPI_FILE_ERRORS(X) /* files */                                                                 \
    /* the v-collectives */                                                                        \
    X(BLOCKS_OVERLAP, -311, "blocks of a receive array overlap")                                   \
    X(BLOCK_MISMATCH, -312, "a block's size differs between the sender and the receiver")          \
    /* groups, topologies, intercommunicators, processes */                                        \
    X(NOT_SUPPORTED, -319, "the MPI library cannot do this (see the message)")                     \
    X(GROUP_RANK, -320, "a rank outside the group")                                                \
    X(DUPLICATE_RANK, -321, "a rank appears more than once")                                       \
    X(OUT_OF_RANGE, -322, "an argument outside its valid range")                                   \
    X(DIMS, -323,                                                                                  \
      "the dimensions do not fit (lengths, or their product against the communicator size)")       \
    X(BAD_ARGUMENT, -324, "the argument does not fit the call (see the message)")                  \
    /* one-sided communication (windows, opi_window.c) */                                          \
    X(WIN_EPOCH, -355, "no epoch of the window allows this (Fence, Lock, LockAll)")                \
    X(WIN_DISPOSED, -356, "the window has been disposed")

#define OPI_ERR_FIRST (-300)
#define OPI_ERR_LIMIT (-399)

enum opi_err {
#define OPI_ERR_ENUM(name, code, message) OPI_ERR_##name = code,
    OPI_ERRORS(OPI_ERR_ENUM)
#undef OPI_ERR_ENUM
};

/* The one error list, layer by layer. Names are unique across layers (C# names its constants
 * after them), and so are codes: motor_core_strerror switches over the list, so a code taken
 * twice does not compile. */
#define MOTOR_ERRORS(X) MPC_ERRORS(X) RT_ERRORS(X) SD_ERRORS(X) OPI_ERRORS(X)

/* Each layer stays inside its own range. */
#define OPI_ERR_IN_MPC(name, code, message) &&(code) <= MPC_ERR_FIRST && (code) >= MPC_ERR_LIMIT
#define OPI_ERR_IN_RT(name, code, message) &&(code) <= RT_ERR_FIRST && (code) >= RT_ERR_LIMIT
#define OPI_ERR_IN_SD(name, code, message) &&(code) <= SD_ERR_FIRST && (code) >= SD_ERR_LIMIT
#define OPI_ERR_IN_OPI(name, code, message) &&(code) <= OPI_ERR_FIRST && (code) >= OPI_ERR_LIMIT
_Static_assert(1 MPC_ERRORS(OPI_ERR_IN_MPC), "an mpc code outside -1 … -99");
_Static_assert(1 RT_ERRORS(OPI_ERR_IN_RT), "a runtime code outside -100 … -199");
_Static_assert(1 SD_ERRORS(OPI_ERR_IN_SD), "a serializer code outside -200 … -299");
_Static_assert(1 OPI_ERRORS(OPI_ERR_IN_OPI), "an OPI code outside -300 … -399");
#undef OPI_ERR_IN_MPC
#undef OPI_ERR_IN_RT
#undef OPI_ERR_IN_SD
#undef OPI_ERR_IN_OPI

#endif

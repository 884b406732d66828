/* opi_constants.h — every value that System.MP writes too, written once here: the sentinels,
 * send modes, group-combine kinds and wait policies, and the exception each error code becomes.
 * The Contract internal call reports every row; ContractTest compares them with System.MP's
 * constants and with what Errors.Make throws, so a value changed on one side only fails it.
 * (Internal-call signatures, error codes, stats and operator codes have tables of their own.) */
#ifndef OPI_CONSTANTS_H
#define OPI_CONSTANTS_H

#include "mpc.h"
#include "opi_errors.h"

/* X(C# type, NAME, value). The C# type (a type of System.MP; Outer.Inner when nested) holds
 * exactly its table's rows as literal fields, named alike (ANY_SOURCE is AnySource), of the
 * same values. */

/* The wildcards, "no process" and "no rank" (MP.AnySource …): OPI_ANY_SOURCE …. MPICH numbers
 * them otherwise (its MPI_PROC_NULL is -1, our AnySource): opi_internal.h's argument checks and
 * opi_comms.c translate them. */
#define OPI_SENTINELS(X)  \
    X(MP, ANY_SOURCE, -1) \
    X(MP, ANY_TAG, -1)    \
    X(MP, PROC_NULL, -3)  \
    X(MP, UNDEFINED, -32766)

/* A send's mode, an argument of Send, SendRange, Isend and IsendRange: OPI_SEND_STANDARD …;
 * and the longest communicator name that round-trips (Comm.Name), OPI_COMM_MAX_NAME. */
#define OPI_SEND_MODES(X) \
    X(Comm, STANDARD, 0)  \
    X(Comm, SYNCHRONOUS, 1)
#define OPI_COMM_LIMITS(X) X(Comm, MAX_NAME, 127)

/* GroupCombine's kind (Group.Union, Intersection, Difference): OPI_GROUP_UNION …; from 0 with no
 * gap, as opi_group_combine indexes a table by it. */
#define OPI_GROUP_COMBINES(X)             \
    X(Group.Combination, UNION, 0)        \
    X(Group.Combination, INTERSECTION, 1) \
    X(Group.Combination, DIFFERENCE, 2)

/* What WaitPolicy reports (MP.WaitPolicy): mpc decides the policy, so the values are mpc's. */
#define OPI_WAIT_POLICIES(X)           \
    X(WaitPolicy, SPIN, MPC_WAIT_SPIN) \
    X(WaitPolicy, YIELD, MPC_WAIT_YIELD)

/* What Comm.Compare returns (System.MP.Comparison): OPI_COMPARE_IDENTICAL …, translated from
 * MPI's MPI_IDENT … (opi_comms.c), whose values are MPICH's own. */
#define OPI_COMPARISONS(X)      \
    X(Comparison, IDENTICAL, 0) \
    X(Comparison, CONGRUENT, 1) \
    X(Comparison, SIMILAR, 2)   \
    X(Comparison, UNEQUAL, 3)

/* The MPI error class of a window operation refused outside an epoch (OPI_ERR_WIN_EPOCH): the one
 * MPI itself reports for that misuse (MPI_ERR_RMA_SYNC), so System.MP's refusals and MPI's look
 * alike to a program that tests MPException.ErrorClass. */
#define OPI_WINDOW_CONSTANTS(X) X(Window, RMA_SYNC_CLASS, MPI_ERR_RMA_SYNC)

/* Every row above, for the contract. */
/* clang-format off */
#define OPI_MIRRORED_CONSTANTS(X)                                               \
    OPI_SENTINELS(X) OPI_SEND_MODES(X) OPI_COMM_LIMITS(X) OPI_GROUP_COMBINES(X) \
    OPI_WAIT_POLICIES(X) OPI_COMPARISONS(X) OPI_WINDOW_CONSTANTS(X)
/* clang-format on */

enum opi_sentinel {
#define OPI_SENTINEL_ENUM(type, name, value) OPI_##name = value,
    OPI_SENTINELS(OPI_SENTINEL_ENUM)
#undef OPI_SENTINEL_ENUM
};

enum opi_send_mode {
#define OPI_SEND_MODE_ENUM(type, name, value) OPI_SEND_##name = value,
    OPI_SEND_MODES(OPI_SEND_MODE_ENUM)
#undef OPI_SEND_MODE_ENUM
};

enum opi_group_combine {
#define OPI_GROUP_COMBINE_ENUM(type, name, value) OPI_GROUP_##name = value,
    OPI_GROUP_COMBINES(OPI_GROUP_COMBINE_ENUM)
#undef OPI_GROUP_COMBINE_ENUM
};

enum {
#define OPI_COMM_LIMIT_ENUM(type, name, value) OPI_COMM_##name = value,
    OPI_COMM_LIMITS(OPI_COMM_LIMIT_ENUM)
#undef OPI_COMM_LIMIT_ENUM
};

enum opi_comparison {
#define OPI_COMPARISON_ENUM(type, name, value) OPI_COMPARE_##name = value,
    OPI_COMPARISONS(OPI_COMPARISON_ENUM)
#undef OPI_COMPARISON_ENUM
};

#define OPI_CONSTANT_ONE(...) +1
#define OPI_GROUP_COMBINE_COUNT (0 OPI_GROUP_COMBINES(OPI_CONSTANT_ONE))

/* Files' codes (opi_errors.h, OPI_FILE_ERRORS): what FileStream raises. */
#define OPI_FILE_ERROR_EXCEPTIONS(X)                   \
    X(FILE_NOT_FOUND, FileNotFoundException)           \
    X(DIRECTORY_NOT_FOUND, DirectoryNotFoundException) \
    X(FILE_ACCESS, UnauthorizedAccessException)        \
    X(FILE_EXISTS, IOException)                        \
    X(FILE_IO, IOException)

/* The exception Errors.Make builds for each error code: X(NAME, C# exception type), every name
 * of MOTOR_ERRORS once (checked below, so a new code needs its row). MPI's own codes (> 0)
 * become an MPException. */
#define OPI_ERROR_EXCEPTIONS(X)                   \
    OPI_FILE_ERROR_EXCEPTIONS(X)                  \
    X(NOT_INITIALIZED, InvalidOperationException) \
    X(DEST, ArgumentOutOfRangeException)          \
    X(SOURCE, ArgumentOutOfRangeException)        \
    X(TAG, ArgumentOutOfRangeException)           \
    X(ROOT, ArgumentOutOfRangeException)          \
    X(COMM_NULL, ObjectDisposedException)         \
    X(TOO_LARGE, ArgumentException)               \
    X(NO_MEMORY, OutOfMemoryException)            \
    X(REQUEST, InvalidOperationException)         \
    X(RUNTIME, MPException)                       \
    X(SERIALIZATION, MPSerializationException)    \
    X(GRAPH, ArgumentException)                   \
    X(NULL_ARGUMENT, ArgumentNullException)       \
    X(OFFSET, ArgumentOutOfRangeException)        \
    X(COUNT, ArgumentOutOfRangeException)         \
    X(NOT_TRANSPORTABLE, ArgumentException)       \
    X(NOT_1D_ARRAY, ArgumentException)            \
    X(SAME_OBJECT, ArgumentException)             \
    X(OP, ArgumentException)                      \
    X(TYPE_MISMATCH, ArgumentException)           \
    X(LENGTH, ArgumentException)                  \
    X(ALIAS, ArgumentException)                   \
    X(PARTIAL_ELEMENT, MPException)               \
    X(BLOCKS_OVERLAP, ArgumentException)          \
    X(BLOCK_MISMATCH, MPException)                \
    X(NOT_SUPPORTED, NotSupportedException)       \
    X(GROUP_RANK, ArgumentOutOfRangeException)    \
    X(DUPLICATE_RANK, ArgumentException)          \
    X(OUT_OF_RANGE, ArgumentOutOfRangeException)  \
    X(DIMS, ArgumentException)                    \
    X(BAD_ARGUMENT, ArgumentException)            \
    X(WIN_EPOCH, MPException)                     \
    X(WIN_DISPOSED, ObjectDisposedException)

/* Every error code by its name alone (the layers' enums prefix it: MPC_ERR_, SD_ERR_, …). */
enum opi_error_code {
#define OPI_ERROR_CODE_ENUM(name, code, message) OPI_CODE_##name = code,
    MOTOR_ERRORS(OPI_ERROR_CODE_ENUM)
#undef OPI_ERROR_CODE_ENUM
};

/* Each row names an error code (else OPI_CODE_ is undeclared), none twice (else an enumerator is
 * declared twice), and there are as many rows as codes: every code has its exception. */
enum opi_error_exception_row {
#define OPI_ERROR_EXCEPTION_ROW(name, exception) OPI_EXCEPTION_ROW_##name = OPI_CODE_##name,
    OPI_ERROR_EXCEPTIONS(OPI_ERROR_EXCEPTION_ROW)
#undef OPI_ERROR_EXCEPTION_ROW
};
_Static_assert((0 MOTOR_ERRORS(OPI_CONSTANT_ONE)) == (0 OPI_ERROR_EXCEPTIONS(OPI_CONSTANT_ONE)),
               "every error code of MOTOR_ERRORS needs its row in OPI_ERROR_EXCEPTIONS");

#endif

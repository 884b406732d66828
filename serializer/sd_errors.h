/* sd_errors.h — the serializer's error codes. Dependency-free, like every layer's list (see
 * mpc_errors.h for the ranges): the serializer reports through these, mpc_errors.h's shared
 * codes (MPC_OK, MPC_ERR_NO_MEMORY) and rt_errors.h's, none of which needs MPI's headers. */
#ifndef SD_ERRORS_H
#define SD_ERRORS_H

/* X(NAME, code, message) gives SD_ERR_NAME; codes -200 … -299. */
#define SD_ERRORS(X)                                                     \
    X(SERIALIZATION, -200, "the bytes are not a valid serialized graph") \
    X(GRAPH, -201, "the object graph cannot be serialized")

#define SD_ERR_FIRST (-200)
#define SD_ERR_LIMIT (-299)

enum sd_err {
#define SD_ERR_ENUM(name, code, message) SD_ERR_##name = code,
    SD_ERRORS(SD_ERR_ENUM)
#undef SD_ERR_ENUM
};

#endif

/* rt_errors.h — the error code of the managed-runtime layer: Mono refused or could not do what
 * a layer above asked (a layout fact it cannot tell, a method it lacks, collections that never
 * let a walk finish). Here rather than in opi/ because the serializer, below opi, reports it too.
 * Dependency-free, like every layer's list (see mpc_errors.h for the ranges). */
#ifndef RT_ERRORS_H
#define RT_ERRORS_H

/* X(NAME, code, message) gives RT_ERR_NAME; codes -100 … -199. */
#define RT_ERRORS(X) X(RUNTIME, -100, "the managed runtime refused the operation")

#define RT_ERR_FIRST (-100)
#define RT_ERR_LIMIT (-199)

enum rt_err {
#define RT_ERR_ENUM(name, code, message) RT_ERR_##name = code,
    RT_ERRORS(RT_ERR_ENUM)
#undef RT_ERR_ENUM
};

#endif

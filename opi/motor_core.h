/* motor_core.h — install Motor's message-passing core into a Mono runtime.
 *
 * libmotorcore.so holds the core (mpc, object_model, gc_hooks, transfer, serializer, opi). It
 * links MPICH but not the Mono runtime, so it binds to whichever runtime loaded it: the `motor`
 * host, another embedding host, or stock `mono` (System.MP.dll then installs it itself through
 * P/Invoke). */
#ifndef MOTOR_CORE_H
#define MOTOR_CORE_H

#ifdef __cplusplus
extern "C" {
#endif

#define MOTOR_VERSION "0.1.0"

#ifndef MOTOR_CORE_API
#define MOTOR_CORE_API __attribute__((visibility("default")))
#endif

/* For a host, before mono_jit_init: the MONO_GC_PARAMS to set — the user's value with
 * evacuation-threshold=0 appended unless the user chose that option (old objects then never
 * move, so the pinning policy never pins them). Returns a malloc'd string. */
MOTOR_CORE_API char *motor_core_gc_params(const char *user_params);

/* For a host, after MPI_Init_thread (or mpc_init) and mono_jit_init, before running code:
 * registers the internal calls and the GC hooks, reads the effective GC parameters.
 * Returns 0 or an error code (motor_core_strerror describes it). Call once. */
MOTOR_CORE_API int motor_core_install(void);

/* Called by System.MP.dll (P/Invoke) before its first internal call. Returns 1 when a host
 * already installed the core; otherwise initialises MPI, installs the core and returns 0.
 * Negative or MPI codes on failure. */
MOTOR_CORE_API int motor_core_ensure(void);

/* For a host, at the end of a program that succeeded: mpc_finalize_within, bounded by
 * MOTOR_FINALIZE_TIMEOUT seconds (default 30; 0 waits as long as MPI_Finalize takes), ending the
 * process with status 0, the process manager told, when MPI's teardown hangs. Returns what
 * MPI_Finalize returned. */
MOTOR_CORE_API int motor_core_finalize(void);

/* 1 after motor_core_install / motor_core_ensure succeeded. */
MOTOR_CORE_API int motor_core_installed(void);

/* Describes any code the core returns: every layer's own (the one error list, opi_errors.h),
 * 0, and MPI's, as mpc_strerror does. The text stays valid until the thread's next call. */
MOTOR_CORE_API const char *motor_core_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif

/* error_record.h — the calling thread's error record: the last error a layer reported, the C#
 * argument it is about, and a text that carries the values involved ("dest 5 is outside 0..2 of
 * a communicator of size 3"). The layer that detects an error fills it; System.MP reads it
 * (the LastError internal call) right after the failing internal call returns, on the same
 * thread, and builds its exception from it.
 *
 * Dependency-free and MPI-free: it sits in mpc/, the lowest layer, so that every layer can
 * report through it. Internal to the core (not installed). It costs no static TLS, which
 * libmotorcore.so is short of under stock mono (dlopen leaves little room for initial-exec
 * thread-locals): each thread's record is a heap block found through a pthread key, made at the
 * thread's first error and freed when the thread exits. Only error paths touch it. */
#ifndef ERROR_RECORD_H
#define ERROR_RECORD_H

#include <stddef.h>

/* Bytes of a record's detail (longer texts are cut, ending in "...") and of the scratch text. */
#define ERROR_DETAIL_BYTES 1024
#define ERROR_SCRATCH_BYTES 1024

/* Records code for the calling thread, with the argument it is about (a C# parameter name,
 * a string literal; NULL: none) and a printf-style detail (NULL: none; readers then use the
 * code's own message). The detail's arguments must not point into the record itself. Returns
 * code, so that `return error_record(...)` reports and fails in one. Out of memory for the
 * record, it records nothing: readers then fall back to the code's message. */
int error_record(int code, const char *argument, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Names the argument when the layer that detected the error could not: sets the record's
 * argument if the record holds code. Returns code. */
int error_blame(int code, const char *argument);

/* 1 when the record holds code, with *argument and *detail (either may be NULL) valid until
 * the thread records again; 0 when it holds another code or none. */
int error_last(int code, const char **argument, const char **detail);

/* Empties the record: its error has been reported. */
void error_clear(void);

/* Several errors reported by one call (Request.WaitAll completing several failed requests),
 * each to become its own exception: error_keep sets code aside, with the record's argument and
 * detail when the record holds code (else none: readers use the code's own message); 0 when out
 * of memory. error_unkeep makes the oldest set aside the record again and returns its code (0:
 * none left); error_keep_clear drops what is set aside. */
int error_keep(int code);
int error_unkeep(void);
void error_keep_clear(void);

/* The thread's scratch text (ERROR_SCRATCH_BYTES), for a description that must outlive the
 * call making it (mpc_strerror); never the record's detail. NULL when out of memory. */
char *error_scratch(void);

/* Appends to out (a string of cap bytes) what printf would write, cut where out is full: for
 * texts made a piece at a time (a refusal naming a path, a hang report's line). */
void text_append(char *out, size_t cap, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

#endif

/* mono_private.h — Mono 6.8 functions that libmonosgen exports but whose headers Debian does
 * not install (mono/utils/mono-threads-api.h). Signatures as in the runtime's sources;
 * verified on this platform (MONO-FACTS "Runtime and headers"). */
#ifndef RT_MONO_PRIVATE_H
#define RT_MONO_PRIVATE_H

void *mono_threads_enter_gc_safe_region_unbalanced(void **stackpointer);
void mono_threads_exit_gc_safe_region_unbalanced(void *cookie, void **stackpointer);
/* Balanced pair: valid from either state; returns to the state the thread was in. */
void *mono_threads_enter_gc_unsafe_region(void **stackpointer);
void mono_threads_exit_gc_unsafe_region(void *cookie, void **stackpointer);

/* Entering a GC-safe region, Mono copies the stack between the region's mark and the stack
 * pointer (the part of the frame it will scan). Under AddressSanitizer a frame holding a mark
 * must therefore have no redzones for that copy to read. */
#if defined(__SANITIZE_ADDRESS__)
#define RT_HOLDS_STACK_MARK __attribute__((no_sanitize_address, noinline))
#else
#define RT_HOLDS_STACK_MARK
#endif

#endif

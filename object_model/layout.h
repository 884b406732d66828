/* layout.h (object_model/) — where Mono keeps array lengths and data and string lengths and
 * characters, learnt from the running runtime at start-up (MonoArray and MonoString are opaque).
 * Reading them directly matters beyond speed: every exported Mono function may be a safepoint,
 * where another thread's collection can move objects under a caller that keeps addresses outside
 * the stack (the serializer's work list). */
#ifndef RT_LAYOUT_H
#define RT_LAYOUT_H

#include <mono/metadata/class.h>
#include <mono/metadata/object.h>
#include <stddef.h>
#include <stdint.h>

extern size_t rt_array_data_offset, rt_array_length_offset;
extern size_t rt_string_length_offset, rt_string_chars_offset;
/* Multi-dimensional arrays (and T[*]): a pointer at rt_array_bounds_offset to one entry per
 * dimension, rt_array_bound_size bytes apart, each starting with the dimension's length (a
 * little-endian integer of at least 32 bits: Mono's MonoArrayBounds). NULL for T[]. */
extern size_t rt_array_bounds_offset, rt_array_bound_size;

/* Learns the offsets from sample objects; fails rather than guessing. 0 on success. */
int rt_layout_init(void);

/* The class of a vtable: MonoVTable starts with it (checked by rt_layout_init). Reading it is
 * no Mono call, so no safepoint, unlike mono_object_get_class. */
static inline MonoClass *rt_vtable_class(const MonoVTable *vtable)
{
    return *(MonoClass *const *)vtable;
}

/* Total element count (all dimensions). */
static inline size_t rt_array_length(const MonoObject *a)
{
    return *(const uint32_t *)((const char *)a + rt_array_length_offset);
}
/* The length of dimension d of an array of rank rank (its class's): the total length for a
 * one-dimensional array; no Mono call (exports have no per-dimension bounds). */
static inline size_t rt_array_dim_length(const MonoObject *a, int rank, int d)
{
    const char *bounds = *(const char *const *)((const char *)a + rt_array_bounds_offset);
    if (rank <= 1 || !bounds)
        return rt_array_length(a);
    return *(const uint32_t *)(bounds + (size_t)d * rt_array_bound_size);
}
static inline uint8_t *rt_array_data(MonoObject *a) { return (uint8_t *)a + rt_array_data_offset; }
static inline int32_t rt_string_length(const MonoObject *s)
{
    return *(const int32_t *)((const char *)s + rt_string_length_offset);
}
static inline const uint16_t *rt_string_chars(const MonoObject *s)
{
    return (const uint16_t *)((const char *)s + rt_string_chars_offset);
}

#endif

/* opi_buffers.c — where an OPI transfer's bytes are: a whole object or array, or a range of a
 * one-dimensional array, as the class plan (object_model/class_plan.h) allows. A refused argument
 * is recorded with the C# parameter it came from. */
#include "opi_internal.h"

#include "layout.h"
#include "names.h"
#include "ptr_map.h"
#include "rt_errors.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1 */
#endif

/* Arrays this large move faster in transparent huge pages: 2 MiB pages, so fewer TLB misses
 * for MPI's copies through shared memory (ping-pong of 16 MiB ~1.9x faster, 64 MiB ~1.5x).
 * Mono allocates them in the large-object space, which never moves them, but with 4 KiB pages
 * by then already touched; so the first transfer of such an array asks the kernel to collapse
 * its 2 MiB-aligned part into huge pages (MADV_COLLAPSE, synchronous, Linux >= 6.1; a kernel
 * that refuses — older, THP "never" — changes nothing), once per array address. */
#define HUGE_PAGE_ARRAY_MIN ((size_t)4 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

static ptr_map collapsed = PTR_MAP_INIT; /* data addresses of arrays already collapsed */

static void *mark_collapsed(const void *key, void *ctx)
{
    (void)key;
    (void)ctx;
    return (void *)1;
}

/* The huge-page advice for a large array's data (bytes of it from data), once. Runs GC-safe:
 * the copy into huge pages takes milliseconds for tens of MiB. The array lies in the
 * large-object space (it never moves) and is held by the caller's frames. */
RT_HOLDS_STACK_MARK static void prefer_huge_pages(const char *data, size_t bytes)
{
    if (bytes < HUGE_PAGE_ARRAY_MIN || ptr_map_get(&collapsed, data))
        return;
    uintptr_t start = ((uintptr_t)data + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t end = ((uintptr_t)data + bytes) & ~(HUGE_PAGE - 1);
    if (end > start) {
        XFER_BLOCKING_BEGIN();
        (void)madvise((void *)start, end - start, MADV_COLLAPSE); /* advice: refusal is fine */
        XFER_BLOCKING_END;
    }
    ptr_map_get_or_build(&collapsed, data, mark_collapsed, NULL);
}

int opi_layout_init(void)
{
    if (rt_layout_init())
        return error_record(RT_ERR_RUNTIME, NULL,
                            "the array layout of this Mono runtime could not be learned");
    return MPC_OK;
}

const rt_class_plan *opi_plan_for(MonoObject *obj)
{
    int built = 0;
    return rt_plan_of(obj, &built); /* OPI keeps no address across the build */
}

/* The plan of an argument named name (C#), or the recorded reason why there is none. */
static int argument_plan(MonoObject *obj, const char *name, const rt_class_plan **plan)
{
    if (!obj)
        return error_record(OPI_ERR_NULL_ARGUMENT, name, "%s must not be null", name);
    if (!(*plan = opi_plan_for(obj)))
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a class plan");
    if ((*plan)->raw_refusal)
        return error_record(OPI_ERR_NOT_TRANSPORTABLE, name, "%s", (*plan)->raw_refusal);
    return MPC_OK;
}

int opi_buffer_whole_as(MonoObject *obj, const char *name, opi_buffer *out)
{
    const rt_class_plan *p = NULL;
    int rc = argument_plan(obj, name, &p);
    if (rc != MPC_OK)
        return rc;
    if (p->shape == RT_ARRAY) {
        out->data = (char *)rt_array_data(obj);
        out->bytes = rt_array_length(obj) * (size_t)p->data_size;
        prefer_huge_pages(out->data, out->bytes);
    } else {
        out->data = (char *)obj + sizeof(MonoObject);
        out->bytes = p->data_size;
    }
    out->elem_size = p->data_size;
    out->count = (MPI_Count)out->bytes;
    out->type = MPI_BYTE;
    return MPC_OK;
}

int opi_buffer_range_as(MonoObject *array, int32_t offset, int32_t count,
                        const opi_range_names *names, opi_buffer *out)
{
    const rt_class_plan *p = NULL;
    int rc = argument_plan(array, names->array, &p);
    if (rc != MPC_OK)
        return rc;
    if (p->shape != RT_ARRAY || p->rank != 1) {
        char *type = rt_class_name(p->klass);
        error_record(OPI_ERR_NOT_1D_ARRAY, names->array,
                     "%s and %s apply to one-dimensional arrays only; %s is a %s", names->offset,
                     names->count, names->array, type ? type : "?");
        free(type);
        return OPI_ERR_NOT_1D_ARRAY;
    }
    size_t length = rt_array_length(array);
    if (offset < 0 || (size_t)offset > length)
        return error_record(OPI_ERR_OFFSET, names->offset,
                            "%s %d is outside 0..%zu, the length of %s", names->offset, offset,
                            length, names->array);
    if (count < 0)
        return error_record(OPI_ERR_COUNT, names->count, "%s %d is negative", names->count, count);
    if ((size_t)count > length - (size_t)offset)
        return error_record(OPI_ERR_COUNT, names->count,
                            "%s %d from %s %d passes the end of %s (length %zu: %zu fit)",
                            names->count, count, names->offset, offset, names->array, length,
                            length - (size_t)offset);
    prefer_huge_pages((const char *)rt_array_data(array), length * (size_t)p->data_size);
    out->data = (char *)rt_array_data(array) + (size_t)offset * p->data_size;
    out->bytes = (size_t)count * p->data_size;
    out->elem_size = p->data_size;
    out->count = (MPI_Count)out->bytes;
    out->type = MPI_BYTE;
    return MPC_OK;
}

int opi_buffer_region_as(MonoObject *array, MonoObject *region, const opi_region_names *names,
                         opi_buffer *out)
{
    (void)array;
    (void)region;
    (void)out;
    /* built by part A of issue 34 (mpc/datatypes.c) */
    return error_record(OPI_ERR_NOT_SUPPORTED, names->region, "regions are not built yet");
}

/* opi_buffers.c — where an OPI transfer's bytes are: a whole object or array, or a range of a
 * one-dimensional array, as the class plan (object_model/class_plan.h) allows. A refused argument
 * is recorded with the C# parameter it came from. */
#include "opi_internal.h"

#include "layout.h"
#include "names.h"
#include "rt_errors.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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
        xfer_huge_pages_stage(out->data, out->bytes);
    } else {
        out->data = (char *)obj + sizeof(MonoObject);
        out->bytes = p->data_size;
    }
    out->elem_size = p->data_size;
    out->count = (MPI_Count)out->bytes;
    out->type = MPI_BYTE;
    out->offset = (size_t)(out->data - (char *)obj);
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
    xfer_huge_pages_stage((const char *)rt_array_data(array), length * (size_t)p->data_size);
    out->data = (char *)rt_array_data(array) + (size_t)offset * p->data_size;
    out->bytes = (size_t)count * p->data_size;
    out->elem_size = p->data_size;
    out->count = (MPI_Count)out->bytes;
    out->type = MPI_BYTE;
    out->offset = (size_t)(out->data - (char *)array);
    return MPC_OK;
}

/* ---- regions ---- */

/* A region read from its spec and checked against its array: sizes of -1 resolved. */
typedef struct region_geom {
    int ndims, stride; /* stride 0: a box; > 0: Strided (ndims 1) */
    int dims[MPC_REGION_MAX_DIMS], starts[MPC_REGION_MAX_DIMS], sizes[MPC_REGION_MAX_DIMS];
    size_t elements;
} region_geom;

/* The spec's numbers: [stride, ndims, starts[ndims], sizes[ndims]] (System.MP.Region). */
static const int32_t *spec_numbers(MonoObject *spec, size_t *length)
{
    *length = rt_array_length(spec);
    return (const int32_t *)rt_array_data(spec);
}

/* Reads region (an int[] spec) and checks it against array: its plan in *plan, the geometry in
 * *g. Refusals name the C# parameters of names and the values. */
static int region_read(MonoObject *array, MonoObject *region, const opi_region_names *names,
                       const rt_class_plan **plan, region_geom *g)
{
    int rc = argument_plan(array, names->array, plan);
    if (rc != MPC_OK)
        return rc;
    const rt_class_plan *p = *plan;
    if (p->shape != RT_ARRAY) {
        char *type = rt_class_name(p->klass);
        error_record(OPI_ERR_BAD_ARGUMENT, names->array, "%s applies to arrays; %s is a %s",
                     names->region, names->array, type ? type : "?");
        free(type);
        return OPI_ERR_BAD_ARGUMENT;
    }
    if (!region)
        return error_record(OPI_ERR_BAD_ARGUMENT, names->region,
                            "%s is default(Region): make one with new Region(starts, sizes), "
                            "Region.Rows, Region.Columns or Region.Strided",
                            names->region);
    size_t n;
    const int32_t *spec = spec_numbers(region, &n);
    if (n < 4 || spec[1] < 1 || spec[1] > MPC_REGION_MAX_DIMS || n != 2 + 2 * (size_t)spec[1] ||
        spec[0] < 0 || (spec[0] > 0 && spec[1] != 1))
        return error_record(OPI_ERR_BAD_ARGUMENT, names->region,
                            "%s is not a region System.MP made (%zu numbers)", names->region, n);
    g->stride = spec[0];
    g->ndims = spec[1];
    if (g->ndims != p->rank)
        return error_record(OPI_ERR_BAD_ARGUMENT, names->region,
                            "%s has %d dimension%s and %s has %d%s", names->region, g->ndims,
                            g->ndims == 1 ? "" : "s", names->array, p->rank,
                            g->stride > 0 ? " (Region.Strided applies to one-dimensional arrays)"
                            : g->ndims == 2 && p->rank != 2
                                ? " (Region.Rows and Region.Columns apply to two-dimensional "
                                  "arrays)"
                                : "");
    g->elements = 1;
    for (int d = 0; d < g->ndims; d++) {
        int64_t length = (int64_t)rt_array_dim_length(array, p->rank, d);
        int32_t start = spec[2 + d], size = spec[2 + g->ndims + d];
        if (start < 0 || size < -1 || (size == -1 && g->stride > 0))
            return error_record(OPI_ERR_OUT_OF_RANGE, names->region,
                                "%s dimension %d: start %d, size %d (negative)", names->region, d,
                                start, size);
        if (size == -1) { /* the whole dimension (Rows, Columns) */
            if (start > length)
                return error_record(OPI_ERR_OUT_OF_RANGE, names->region,
                                    "%s dimension %d: start %d is past the length %" PRId64
                                    " of %s in that dimension",
                                    names->region, d, start, length, names->array);
            size = (int32_t)(length - start);
        }
        if (g->stride > 0) {
            /* Strided(first, count, stride): its last element first + (count - 1) * stride */
            int64_t last = size > 0 ? (int64_t)start + (int64_t)(size - 1) * g->stride : start;
            if (size > 0 ? last >= length : start > length)
                return error_record(OPI_ERR_OUT_OF_RANGE, names->region,
                                    "%s dimension 0: first %d, count %d, stride %d reach element "
                                    "%" PRId64 ", past the end of %s (length %" PRId64 ")",
                                    names->region, start, size, g->stride, last, names->array,
                                    length);
        } else if ((int64_t)start + size > length) {
            return error_record(OPI_ERR_OUT_OF_RANGE, names->region,
                                "%s dimension %d: start %d and size %d pass the end of %s, whose "
                                "length in that dimension is %" PRId64,
                                names->region, d, start, size, names->array, length);
        }
        g->dims[d] = (int)length;
        g->starts[d] = start;
        g->sizes[d] = size;
        g->elements *= (size_t)size;
    }
    return MPC_OK;
}

/* Whether the box's elements lie end to end in memory: every dimension before some k has size 1
 * and every one after k is whole. */
static bool box_contiguous(const region_geom *g)
{
    int k = 0;
    while (k < g->ndims - 1 && g->sizes[k] == 1)
        k++;
    for (int d = k + 1; d < g->ndims; d++)
        if (g->sizes[d] != g->dims[d])
            return false;
    return true;
}

/* The row-major index of the region's first element. */
static size_t region_first(const region_geom *g)
{
    size_t index = 0;
    for (int d = 0; d < g->ndims; d++)
        index = index * (size_t)g->dims[d] + (size_t)g->starts[d];
    return index;
}

RT_HOLDS_STACK_MARK int opi_buffer_region_as(MonoObject *array, MonoObject *region,
                                             const opi_region_names *names, opi_buffer *out)
{
    const rt_class_plan *p = NULL;
    region_geom g;
    int rc = region_read(array, region, names, &p, &g);
    if (rc != MPC_OK)
        return rc;
    size_t elem = p->data_size;
    out->elem_size = p->data_size;
    out->bytes = g.elements * elem;
    if (g.elements == 0 || (g.stride > 0 ? g.stride == 1 || g.elements == 1 : box_contiguous(&g))) {
        /* contiguous (or empty): plain bytes, as a range */
        out->count = (MPI_Count)out->bytes;
        out->type = MPI_BYTE;
    } else {
        MPI_Datatype type = MPI_DATATYPE_NULL;
        if (!mpc_region_type_find(elem, g.ndims, g.dims, g.sizes, g.stride, &type)) {
            XFER_MPI_BEGIN(array); /* built once per shape: MPI calls the first time */
            rc = mpc_region_type(elem, g.ndims, g.dims, g.sizes, g.stride, &type);
            XFER_MPI_END;
            if (rc != MPC_OK)
                return rc;
        }
        out->count = 1;
        out->type = type;
    }
    /* (after the bracket: a GC-safe one may have let the array move before it began) */
    size_t length = rt_array_length(array);
    xfer_huge_pages_stage((const char *)rt_array_data(array), length * elem);
    out->data = (char *)rt_array_data(array) + region_first(&g) * elem;
    out->offset = (size_t)(out->data - (char *)array);
    return MPC_OK;
}

/* The first element both arithmetic progressions {fa + i sa : 0 <= i < ca} and {fb + j sb :
 * 0 <= j < cb} hold (sa, sb >= 1), or -1: x = fa (mod sa) and x = fb (mod sb) by the Chinese
 * remainder theorem, the smallest such x from the later start, within both ends. */
static int64_t progressions_meet(int64_t fa, int64_t sa, int64_t ca, int64_t fb, int64_t sb,
                                 int64_t cb)
{
    if (ca == 0 || cb == 0)
        return -1;
    int64_t lo = fa > fb ? fa : fb, ea = fa + (ca - 1) * sa, eb = fb + (cb - 1) * sb;
    int64_t hi = ea < eb ? ea : eb;
    if (lo > hi)
        return -1;
    /* g = gcd(sa, sb) and p with sa p = g (mod sb), by the extended Euclid algorithm */
    int64_t r0 = sa, r1 = sb, p0 = 1, p1 = 0;
    while (r1 != 0) {
        int64_t q = r0 / r1, t = r0 - q * r1;
        r0 = r1;
        r1 = t;
        t = p0 - q * p1;
        p0 = p1;
        p1 = t;
    }
    int64_t g = r0, diff = fb - fa;
    if (diff % g != 0)
        return -1;
    __int128 m = sb / g; /* fa + sa i = fb (mod sb)  <=>  i = (diff / g) p (mod m) */
    __int128 i = ((__int128)(diff / g) % m) * ((__int128)p0 % m) % m;
    if (i < 0)
        i += m;
    __int128 x = (__int128)fa + (__int128)sa * i, period = (__int128)sa * m;
    if (x < lo)
        x += (lo - x + period - 1) / period * period;
    else
        x -= (x - lo) / period * period;
    return x <= hi ? (int64_t)x : -1;
}

/* A text for element index of a region's array (row-major index): "[i]" or "[i, j, ...]". */
static void element_text(const region_geom *g, const int64_t *coords, char *text, size_t size)
{
    size_t used = 0;
    for (int d = 0; d < g->ndims && used < size; d++)
        used += (size_t)snprintf(text + used, size - used, "%s%" PRId64, d ? ", " : "[", coords[d]);
    if (used < size)
        snprintf(text + used, size - used, "]");
}

int opi_regions_disjoint(MonoObject *array_a, MonoObject *region_a, const opi_region_names *a,
                         MonoObject *array_b, MonoObject *region_b, const opi_region_names *b)
{
    if (array_a != array_b)
        return MPC_OK; /* different objects never share an element */
    const rt_class_plan *p = NULL;
    region_geom ga, gb;
    int rc;
    if ((rc = region_read(array_a, region_a, a, &p, &ga)) ||
        (rc = region_read(array_b, region_b, b, &p, &gb)))
        return rc;
    if (ga.elements == 0 || gb.elements == 0)
        return MPC_OK;
    int64_t coords[MPC_REGION_MAX_DIMS];
    if (ga.ndims == 1) { /* both progressions: a box of one dimension has stride 1 */
        int64_t x = progressions_meet(ga.starts[0], ga.stride ? ga.stride : 1, ga.sizes[0],
                                      gb.starts[0], gb.stride ? gb.stride : 1, gb.sizes[0]);
        if (x < 0)
            return MPC_OK;
        coords[0] = x;
    } else { /* boxes meet when they meet in every dimension */
        for (int d = 0; d < ga.ndims; d++) {
            int64_t lo = ga.starts[d] > gb.starts[d] ? ga.starts[d] : gb.starts[d];
            int64_t ea = (int64_t)ga.starts[d] + ga.sizes[d],
                    eb = (int64_t)gb.starts[d] + gb.sizes[d];
            if (lo >= (ea < eb ? ea : eb))
                return MPC_OK;
            coords[d] = lo;
        }
    }
    char element[32 * MPC_REGION_MAX_DIMS];
    element_text(&ga, coords, element, sizeof element);
    return error_record(OPI_ERR_SAME_OBJECT, b->region,
                        "%s and %s are regions of one array that overlap (element %s is in both): "
                        "a transfer may not read and write the same elements",
                        a->region, b->region, element);
}

/* opi_buffers.c — where an OPI transfer's bytes are: a whole object or array, or a range of a
 * one-dimensional array, as the class plan (runtime/class_plan.h) allows. */
#include "opi_internal.h"

#include "layout.h"

int opi_layout_init(void) { return rt_layout_init() ? MPC_ERR_RUNTIME : MPC_OK; }

const rt_class_plan *opi_plan_for(MonoObject *obj)
{
    int built = 0;
    return rt_plan_of(obj, &built); /* OPI keeps no address across the build */
}

int opi_buffer_whole(MonoObject *obj, opi_buffer *out)
{
    if (!obj)
        return MPC_ERR_NULL_ARGUMENT;
    const rt_class_plan *p = opi_plan_for(obj);
    if (!p)
        return MPC_ERR_NO_MEMORY;
    if (p->raw_refusal)
        return MPC_ERR_NOT_TRANSPORTABLE;
    if (p->shape == RT_ARRAY) {
        out->data = (char *)rt_array_data(obj);
        out->bytes = rt_array_length(obj) * (size_t)p->data_size;
    } else {
        out->data = (char *)obj + sizeof(MonoObject);
        out->bytes = p->data_size;
    }
    out->elem_size = p->data_size;
    return MPC_OK;
}

int opi_buffer_range(MonoObject *array, int32_t offset, int32_t count, opi_buffer *out)
{
    if (!array)
        return MPC_ERR_NULL_ARGUMENT;
    const rt_class_plan *p = opi_plan_for(array);
    if (!p)
        return MPC_ERR_NO_MEMORY;
    if (p->raw_refusal)
        return MPC_ERR_NOT_TRANSPORTABLE;
    if (p->shape != RT_ARRAY || p->rank != 1)
        return MPC_ERR_NOT_1D_ARRAY;
    size_t length = rt_array_length(array);
    if (offset < 0 || (size_t)offset > length)
        return MPC_ERR_OFFSET;
    if (count < 0 || (size_t)count > length - (size_t)offset)
        return MPC_ERR_COUNT;
    out->data = (char *)rt_array_data(array) + (size_t)offset * p->data_size;
    out->bytes = (size_t)count * p->data_size;
    out->elem_size = p->data_size;
    return MPC_OK;
}

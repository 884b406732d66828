/* sd_wire.h — how a class plan (object_model/class_plan.h) is described in a message's type table
 * (FORMAT.md): the writer writes these, the reader compares them. Internal to serializer/. */
#ifndef SD_WIRE_H
#define SD_WIRE_H

#include "class_plan.h"
#include "sd_format.h"

static inline uint8_t sd_wire_kind(const rt_class_plan *p)
{
    return p->shape == RT_ARRAY        ? SD_ARRAY
           : p->shape == RT_STRING     ? SD_STRING
           : p->shape == RT_COLLECTION ? SD_COLLECTION
                                       : SD_OBJECT;
}

static inline uint8_t sd_wire_element(const rt_class_plan *p)
{
    if (p->shape != RT_ARRAY && p->shape != RT_COLLECTION)
        return SD_ELEM_RAW;
    return p->element == RT_ELEM_REFS      ? SD_ELEM_REFS
           : p->element == RT_ELEM_STRUCTS ? SD_ELEM_STRUCTS
                                           : SD_ELEM_RAW;
}

/* References per instance (per element of an array of structs; one per element of an array of
 * references). */
static inline uint32_t sd_wire_ref_count(const rt_class_plan *p)
{
    return (p->shape == RT_ARRAY || p->shape == RT_COLLECTION) && p->element == RT_ELEM_REFS
               ? 1
               : p->nslots;
}

#endif

/* transport_plan.c — per-class transport plans: may OPI move this object's data as raw bytes,
 * and where are they? Computed once per class (field scans cost ~0.2–2 µs per field, see
 * MONO-FACTS), then found in O(1): a thread-local last-hit, else a lock-free hash lookup. */
#include "opi_internal.h"

#include "ptr_map.h"
#include "layout.h"
#include "names.h"
#include "serializer.h"

#include <mono/metadata/appdomain.h>
#include <mono/metadata/attrdefs.h>
#include <mono/metadata/blob.h>
#include <mono/metadata/class.h>
#include <mono/metadata/metadata.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int opi_layout_init(void)
{
    if (rt_layout_init())
        return error_record(RT_ERR_RUNTIME, NULL,
                            "the array layout of this Mono runtime could not be learned");
    return MPC_OK;
}

static char *format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = malloc((size_t)n + 1);
    if (s) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return s;
}

/* NULL when instances of k (a class or a struct) hold no references in their instance fields,
 * inherited and nested-struct fields included; otherwise the path of the first field that
 * does, with its type: "inner.name (System.String)", and in *owner the class declaring it. */
static char *find_reference_field(MonoClass *k, MonoClass **owner)
{
    for (; k; k = mono_class_get_parent(k)) {
        void *iter = NULL;
        MonoClassField *f;
        while ((f = mono_class_get_fields(k, &iter))) {
            if (mono_field_get_flags(f) & MONO_FIELD_ATTR_STATIC)
                continue;
            MonoType *t = mono_field_get_type(f);
            if (mono_type_is_reference(t)) {
                char *tn = mono_type_get_name(t);
                char *path = format("%s (%s)", mono_field_get_name(f), tn ? tn : "?");
                mono_free(tn);
                *owner = k;
                return path ? path : strdup("?");
            }
            if (mono_type_is_struct(t)) {
                char *inner = find_reference_field(mono_class_from_mono_type(t), owner);
                if (inner) {
                    char *path = format("%s.%s", mono_field_get_name(f), inner);
                    free(inner);
                    return path ? path : strdup("?");
                }
            }
        }
    }
    return NULL;
}

char *opi_find_reference_field(MonoClass *k)
{
    MonoClass *owner;
    return find_reference_field(k, &owner);
}

int opi_element_type(MonoClass *k)
{
    if (mono_class_is_enum(k))
        k = mono_class_from_mono_type(mono_class_enum_basetype(k));
    return mono_type_get_type(mono_class_get_type(k));
}

static void reject(transport_plan *p, MonoClass *k, const char *fmt, const char *detail)
{
    char *name = rt_class_name(k);
    char *why = format(fmt, detail);
    p->kind = PLAN_REJECTED;
    p->reason = format("type '%s' cannot be passed to an OPI call: %s", name, why ? why : "?");
    free(name);
    free(why);
}

static transport_plan *build_plan(MonoObject *obj)
{
    transport_plan *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    MonoClass *k = mono_object_get_class(obj);
    p->vtable = obj->vtable;
    if (mono_class_get_rank(k) > 0) {
        MonoClass *elem = mono_class_get_element_class(k);
        MonoType *et = mono_class_get_type(elem);
        p->kind = PLAN_ARRAY;
        p->rank = (uint32_t)mono_class_get_rank(k);
        p->elem_size = (uint32_t)mono_array_element_size(k);
        p->elem_class = elem;
        p->elem_type = opi_element_type(elem);
        if (mono_type_is_reference(et)) {
            char *en = rt_class_name(elem);
            reject(p, k,
                   mono_class_get_rank(elem) > 0
                       ? "its elements are arrays (%s); send each inner array on its own, or use OSend"
                       : "its elements are references (%s); use OSend for object graphs",
                   en);
            free(en);
        } else if (mono_type_is_struct(et)) {
            MonoClass *owner = NULL;
            char *field = find_reference_field(elem, &owner);
            if (field && sd_is_framework_class(owner))
                reject(p, k,
                       "its element struct holds a reference in field %s, private state of a "
                       "framework type, which no transport carries: send its parts as arrays",
                       field);
            else if (field)
                reject(p, k, "its element struct holds a reference in field %s; use OSend", field);
            free(field);
        }
    } else if (k == mono_get_string_class()) {
        reject(p, k, "%s", "strings are immutable; send a char[] or use OSend");
    } else {
        p->kind = PLAN_OBJECT;
        p->elem_size = (uint32_t)(mono_class_instance_size(k) - (int32_t)sizeof(MonoObject));
        MonoClass *owner = NULL;
        char *field = find_reference_field(k, &owner);
        /* a framework type's private field cannot be marked by the user: no such advice */
        if (field && sd_is_framework_class(owner)) {
            char *on = rt_class_name(owner);
            char *detail = format("%s belongs to the framework type %s", field, on ? on : "?");
            reject(p, k,
                   "field %s, whose private state holds references: OPI cannot transport it. Send "
                   "its contents as an array (e.g. ToArray()), by OPI or in a graph for OSend",
                   detail ? detail : field);
            free(on);
            free(detail);
        } else if (field) {
            reject(p, k, "field %s is a reference; mark it [Transportable] and use OSend", field);
        }
        free(field);
    }
    return p;
}

static ptr_map plans = PTR_MAP_INIT; /* vtable -> transport_plan */
static __thread const transport_plan *last_plan __attribute__((tls_model("initial-exec")));

static void *build_for(const void *vtable, void *obj)
{
    (void)vtable;
    return build_plan(obj);
}

const transport_plan *opi_plan_for(MonoObject *obj)
{
    const transport_plan *p = last_plan;
    if (p && p->vtable == obj->vtable)
        return p;
    p = ptr_map_get_or_build(&plans, obj->vtable, build_for, obj);
    last_plan = p;
    return p;
}

/* The plan of an argument named name (C#), or the recorded reason why there is none. */
static int argument_plan(MonoObject *obj, const char *name, const transport_plan **plan)
{
    if (!obj)
        return error_record(OPI_ERR_NULL_ARGUMENT, name, "%s must not be null", name);
    if (!(*plan = opi_plan_for(obj)))
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a transport plan");
    if ((*plan)->kind == PLAN_REJECTED)
        return error_record(OPI_ERR_NOT_TRANSPORTABLE, name, "%s",
                            (*plan)->reason ? (*plan)->reason : "the type cannot be passed to an OPI call");
    return MPC_OK;
}

int opi_buffer_whole_as(MonoObject *obj, const char *name, opi_buffer *out)
{
    const transport_plan *p;
    int rc = argument_plan(obj, name, &p);
    if (rc != MPC_OK)
        return rc;
    if (p->kind == PLAN_ARRAY) {
        out->data = (char *)rt_array_data(obj);
        out->bytes = rt_array_length(obj) * (size_t)p->elem_size;
    } else {
        out->data = (char *)obj + sizeof(MonoObject);
        out->bytes = p->elem_size;
    }
    out->elem_size = p->elem_size;
    return MPC_OK;
}

int opi_buffer_range_as(MonoObject *array, int32_t offset, int32_t count, const opi_range_names *names,
                        opi_buffer *out)
{
    const transport_plan *p;
    int rc = argument_plan(array, names->array, &p);
    if (rc != MPC_OK)
        return rc;
    if (p->kind != PLAN_ARRAY || p->rank != 1) {
        char *type = rt_class_name(mono_object_get_class(array));
        error_record(OPI_ERR_NOT_1D_ARRAY, names->array,
                     "%s and %s apply to one-dimensional arrays only; %s is a %s", names->offset,
                     names->count, names->array, type ? type : "?");
        free(type);
        return OPI_ERR_NOT_1D_ARRAY;
    }
    size_t length = rt_array_length(array);
    if (offset < 0 || (size_t)offset > length)
        return error_record(OPI_ERR_OFFSET, names->offset, "%s %d is outside 0..%zu, the length of %s",
                            names->offset, offset, length, names->array);
    if (count < 0)
        return error_record(OPI_ERR_COUNT, names->count, "%s %d is negative", names->count, count);
    if ((size_t)count > length - (size_t)offset)
        return error_record(OPI_ERR_COUNT, names->count,
                            "%s %d from %s %d passes the end of %s (length %zu: %zu fit)", names->count,
                            count, names->offset, offset, names->array, length, length - (size_t)offset);
    out->data = (char *)rt_array_data(array) + (size_t)offset * p->elem_size;
    out->bytes = (size_t)count * p->elem_size;
    out->elem_size = p->elem_size;
    return MPC_OK;
}

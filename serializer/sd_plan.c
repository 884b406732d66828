/* sd_plan.c — per-class serialization plans: layout, reference slots, which of them carry
 * [Transportable] (the runtime-side equivalent of Motor's transportable bit). Computed once
 * per class; looked up without locks. */
#include "sd_plan.h"

#include "ptr_map.h"

#include <mono/metadata/appdomain.h>
#include <mono/metadata/attrdefs.h>
#include <mono/metadata/image.h>
#include <mono/metadata/metadata.h>
#include <mono/metadata/reflection.h>
#include <stdlib.h>
#include <string.h>

static MonoClass *transportable_attribute;
static ptr_map plans = PTR_MAP_INIT;

void sd_set_transportable_attribute(MonoClass *attribute) { transportable_attribute = attribute; }

int sd_has_transportable(MonoClass *k, MonoClassField *f)
{
    if (!transportable_attribute)
        return 0;
    MonoCustomAttrInfo *info = f ? mono_custom_attrs_from_field(k, f) : mono_custom_attrs_from_class(k);
    if (!info)
        return 0;
    int has = mono_custom_attrs_has_attr(info, transportable_attribute);
    mono_custom_attrs_free(info);
    return has;
}

typedef struct slot_lists {
    uint32_t nall, nslots, cap_all, cap_slots;
    uint32_t *all;
    sd_slot *slots;
} slot_lists;

static int add_slot(slot_lists *l, uint32_t offset, MonoClass *declared, int travels)
{
    if (l->nall == l->cap_all) {
        l->cap_all = l->cap_all ? 2 * l->cap_all : 8;
        uint32_t *a = realloc(l->all, l->cap_all * sizeof *a);
        if (!a)
            return -1;
        l->all = a;
    }
    l->all[l->nall++] = offset;
    if (!travels)
        return 0;
    if (l->nslots == l->cap_slots) {
        l->cap_slots = l->cap_slots ? 2 * l->cap_slots : 8;
        sd_slot *s = realloc(l->slots, l->cap_slots * sizeof *s);
        if (!s)
            return -1;
        l->slots = s;
    }
    l->slots[l->nslots++] = (sd_slot){offset, declared};
    return 0;
}

/* Reference slots of an instance of k whose data starts at base (nested structs flattened).
 * A value-type field always travels; a reference field only when marked [Transportable]. */
static int collect(MonoClass *k, uint32_t base, slot_lists *l)
{
    int value_type = mono_class_is_valuetype(k);
    for (MonoClass *c = k; c; c = value_type ? NULL : mono_class_get_parent(c)) {
        void *iter = NULL;
        MonoClassField *f;
        while ((f = mono_class_get_fields(c, &iter))) {
            if (mono_field_get_flags(f) & MONO_FIELD_ATTR_STATIC)
                continue;
            MonoType *t = mono_field_get_type(f);
            uint32_t off = base + (uint32_t)mono_field_get_offset(f) - (uint32_t)sizeof(MonoObject);
            if (mono_type_is_reference(t)) {
                if (add_slot(l, off, mono_class_from_mono_type(t), sd_has_transportable(c, f)))
                    return -1;
            } else if (mono_type_is_struct(t) && collect(mono_class_from_mono_type(t), off, l)) {
                return -1;
            }
        }
    }
    return 0;
}

static char *wire_name(MonoClass *k, uint32_t *len)
{
    char *name = mono_type_get_name(mono_class_get_type(k));
    const char *image = mono_image_get_name(mono_class_get_image(k));
    size_t n = strlen(name ? name : "?") + 2 + strlen(image ? image : "?");
    char *s = malloc(n + 1);
    if (s) {
        strcpy(s, name ? name : "?");
        strcat(s, ", ");
        strcat(s, image ? image : "?");
        *len = (uint32_t)n;
    }
    mono_free(name);
    return s;
}

/* Objects whose meaning is tied to this process: a received one could run or touch anything. */
static const char *denied(MonoClass *k)
{
    static const struct { const char *ns, *name, *why; } deny[] = {
        {"System", "Delegate", "delegates point at code"},
        {"System.Reflection", "MemberInfo", "reflection objects describe this process"},
        {"System.Runtime.ConstrainedExecution", "CriticalFinalizerObject", "it owns an OS handle"},
        {"System.Threading", "WaitHandle", "it owns an OS handle"},
        {"System", "IntPtr", "pointers are meaningless elsewhere"},
    };
    for (size_t i = 0; i < sizeof deny / sizeof deny[0]; i++) {
        MonoClass *d = mono_class_from_name(mono_get_corlib(), deny[i].ns, deny[i].name);
        if (d && (k == d || mono_class_is_subclass_of(k, d, 0)))
            return deny[i].why;
    }
    return NULL;
}

static void *build(const void *key, void *ctx)
{
    (void)ctx;
    MonoClass *k = (MonoClass *)key;
    sd_plan *p = calloc(1, sizeof *p);
    slot_lists l = {0};
    if (!p)
        return NULL;
    p->klass = k;
    p->polymorphic = sd_has_transportable(k, NULL);
    p->denied = denied(k);
    p->value_type = mono_class_is_valuetype(k);
    p->abstract = (mono_class_get_flags(k) & (MONO_TYPE_ATTR_ABSTRACT | MONO_TYPE_ATTR_INTERFACE)) != 0;
    p->vtable = p->abstract ? NULL : mono_class_vtable(mono_domain_get(), k);
    int rc = 0;
    if (k == mono_get_string_class()) {
        p->kind = SD_STRING;
        p->data_size = 2;
    } else if (mono_class_get_rank(k) > 0) {
        MonoClass *e = mono_class_get_element_class(k);
        p->kind = SD_ARRAY;
        p->rank = (uint8_t)mono_class_get_rank(k);
        p->elem_class = e;
        if (mono_type_is_reference(mono_class_get_type(e))) {
            p->element = SD_ELEM_REFS;
            p->data_size = 8;
            rc = add_slot(&l, 0, e, 1); /* arrays of objects travel with their elements */
        } else {
            p->data_size = (uint32_t)mono_array_element_size(k);
            rc = collect(e, 0, &l);
            /* on the wire: structs with travelling references, else raw (slots zeroed) */
            p->element = l.nslots ? SD_ELEM_STRUCTS : SD_ELEM_RAW;
        }
    } else {
        p->kind = SD_OBJECT;
        p->data_size = (uint32_t)(mono_class_instance_size(k) - (int32_t)sizeof(MonoObject));
        rc = collect(k, 0, &l);
    }
    p->wire_name = wire_name(k, &p->name_len);
    if (rc || !p->wire_name) {
        free(l.all);
        free(l.slots);
        free(p->wire_name);
        free(p);
        return NULL;
    }
    p->nall = l.nall;
    p->all = l.all;
    p->nslots = l.nslots;
    p->slots = l.slots;
    return p;
}

const sd_plan *sd_plan_for(MonoClass *k) { return ptr_map_get_or_build(&plans, k, build, NULL); }

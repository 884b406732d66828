/* sd_plan.c — per-class serialization plans: layout, reference slots, which of them carry
 * [Transportable] (the runtime-side equivalent of Motor's transportable bit). Computed once
 * per class; looked up without locks. */
#include "sd_plan.h"

#include "names.h"
#include "ptr_map.h"

#include <mono/metadata/appdomain.h>
#include <mono/metadata/attrdefs.h>
#include <mono/metadata/image.h>
#include <mono/metadata/metadata.h>
#include <mono/metadata/reflection.h>
#include <stdio.h>
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

int sd_is_framework_class(MonoClass *k)
{
    while (mono_class_get_rank(k) > 0)
        k = mono_class_get_element_class(k);
    const char *n = mono_image_get_name(mono_class_get_image(k));
    if (!n)
        return 0;
    if (!strcmp(n, "System.MP"))
        return 0;
    return !strcmp(n, "mscorlib") || !strcmp(n, "netstandard") || !strcmp(n, "System") ||
           !strncmp(n, "System.", 7) || !strncmp(n, "Mono.", 5);
}

typedef struct slot_lists {
    uint32_t nall, nslots, nhidden, cap_all, cap_slots, cap_hidden;
    uint32_t *all;
    sd_slot *slots;
    sd_hidden *hidden;
} slot_lists;

/* Room for one more of n items of `size` bytes in items (capacity *cap, the first growth to
 * `first`): items itself, or a larger copy; NULL when out of memory (items is then unchanged). */
static void *reserve(void *items, uint32_t n, uint32_t *cap, size_t size, uint32_t first)
{
    if (n < *cap)
        return items;
    uint32_t grown = *cap ? 2 * *cap : first;
    void *more = realloc(items, (size_t)grown * size);
    if (more)
        *cap = grown;
    return more;
}

/* prefix.name, or name alone at the top; NULL when out of memory. */
static char *join(const char *prefix, const char *name)
{
    size_t n = (prefix ? strlen(prefix) + 1 : 0) + strlen(name) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", name);
    return s;
}

/* Records a reference slot: every one in `all`; a travelling one in `slots`; one that a
 * framework type declares and that does not travel in `hidden` (owner: that type). */
static int add_slot(slot_lists *l, uint32_t offset, MonoClass *declared, int travels, const char *name,
                    MonoClass *owner)
{
    uint32_t *a = reserve(l->all, l->nall, &l->cap_all, sizeof *a, 8);
    if (!a)
        return -1;
    l->all = a;
    l->all[l->nall++] = offset;
    if (!travels && owner) {
        sd_hidden *h = reserve(l->hidden, l->nhidden, &l->cap_hidden, sizeof *h, 4);
        if (!h)
            return -1;
        l->hidden = h;
        char *n = strdup(name), *o = rt_class_name(owner);
        if (!n || !o) {
            free(n);
            free(o);
            return -1;
        }
        l->hidden[l->nhidden++] = (sd_hidden){offset, n, o};
    }
    if (!travels)
        return 0;
    sd_slot *s = reserve(l->slots, l->nslots, &l->cap_slots, sizeof *s, 8);
    if (!s)
        return -1;
    l->slots = s;
    char *n = strdup(name);
    if (!n)
        return -1;
    l->slots[l->nslots++] = (sd_slot){offset, declared, n};
    return 0;
}

/* Reference slots of an instance of k whose data starts at base (nested structs flattened,
 * their fields named prefix.field). A value-type field always travels; a reference field only
 * when marked [Transportable]. Plans live as long as the process: names are never freed. */
static int collect(MonoClass *k, uint32_t base, const char *prefix, slot_lists *l)
{
    int value_type = mono_class_is_valuetype(k);
    for (MonoClass *c = k; c; c = value_type ? NULL : mono_class_get_parent(c)) {
        int framework = sd_is_framework_class(c);
        void *iter = NULL;
        MonoClassField *f;
        while ((f = mono_class_get_fields(c, &iter))) {
            if (mono_field_get_flags(f) & MONO_FIELD_ATTR_STATIC)
                continue;
            MonoType *t = mono_field_get_type(f);
            uint32_t off = base + (uint32_t)mono_field_get_offset(f) - (uint32_t)sizeof(MonoObject);
            int rc = 0;
            if (mono_type_is_reference(t) || mono_type_is_struct(t)) {
                char *name = join(prefix, mono_field_get_name(f));
                if (!name)
                    return -1;
                if (mono_type_is_reference(t))
                    rc = add_slot(l, off, mono_class_from_mono_type(t), sd_has_transportable(c, f), name,
                                  framework ? c : NULL);
                else
                    rc = collect(mono_class_from_mono_type(t), off, name, l);
                free(name);
            }
            if (rc)
                return -1;
        }
    }
    return 0;
}

static int by_offset(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The ranges of [0, size) outside the reference slots at offsets all[0..n) (sorted in place).
 * *runs NULL with *nruns 0 when there is no data; -1 when out of memory. */
static int data_runs(uint32_t size, uint32_t *all, uint32_t n, sd_run **runs, uint32_t *nruns)
{
    qsort(all, n, sizeof *all, by_offset);
    *nruns = 0;
    *runs = malloc((n + 1) * sizeof **runs);
    if (!*runs)
        return -1;
    uint32_t at = 0;
    for (uint32_t i = 0; i <= n; i++) {
        uint32_t end = i < n ? all[i] : size;
        if (end > at)
            (*runs)[(*nruns)++] = (sd_run){at, end - at};
        if (i < n)
            at = all[i] + (uint32_t)sizeof(void *);
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
    p->framework = sd_is_framework_class(k);
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
            rc = add_slot(&l, 0, e, 1, "", NULL); /* arrays of objects travel with their elements */
        } else {
            p->data_size = (uint32_t)mono_array_element_size(k);
            rc = collect(e, 0, NULL, &l);
            /* on the wire: structs with travelling references, else raw (slots zeroed) */
            p->element = l.nslots ? SD_ELEM_STRUCTS : SD_ELEM_RAW;
        }
    } else {
        p->kind = SD_OBJECT;
        p->data_size = (uint32_t)(mono_class_instance_size(k) - (int32_t)sizeof(MonoObject));
        rc = collect(k, 0, NULL, &l);
    }
    p->wire_name = wire_name(k, &p->name_len);
    if (!rc && p->kind != SD_STRING)
        rc = data_runs(p->data_size, l.all, l.nall, &p->runs, &p->nruns);
    if (rc || !p->wire_name) {
        free(p->runs);
        free(l.all);
        free(l.slots); /* (with the few names made so far: out of memory only) */
        free(l.hidden);
        free(p->wire_name);
        free(p);
        return NULL;
    }
    p->nall = l.nall;
    p->all = l.all;
    p->nslots = l.nslots;
    p->slots = l.slots;
    p->nhidden = l.nhidden;
    p->hidden = l.hidden;
    return p;
}

const sd_plan *sd_plan_for(MonoClass *k) { return ptr_map_get_or_build(&plans, k, build, NULL); }

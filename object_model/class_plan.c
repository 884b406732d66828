/* class_plan.c — see class_plan.h. One build per class: the field walk records every reference
 * slot with its path and declaring class; the zero-copy path's refusal and the serializer's
 * travelling slots, data runs and framework-private slots all come from that one walk. */
#include "class_plan.h"

#include "layout.h"
#include "names.h"
#include "ptr_map.h"

#include <mono/metadata/appdomain.h>
#include <mono/metadata/attrdefs.h>
#include <mono/metadata/image.h>
#include <mono/metadata/metadata.h>
#include <mono/metadata/reflection.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MonoClass *transportable_attribute;
static rt_element_asker carried_element;
static ptr_map plans = PTR_MAP_INIT; /* MonoClass -> rt_class_plan: the one cache */
/* The plans this thread met last, by vtable: graphs alternate between a few classes (a node,
 * its array, the next node...), which one entry kept missing. */
#define RECENT_PLANS 8
static __thread const rt_class_plan *recent_plans[RECENT_PLANS]
    __attribute__((tls_model("initial-exec")));

void rt_set_binding(MonoClass *attribute, rt_element_asker ask)
{
    transportable_attribute = attribute;
    carried_element = ask;
}

int rt_has_transportable(MonoClass *k, MonoClassField *f)
{
    if (!transportable_attribute)
        return 0;
    MonoCustomAttrInfo *info =
        f ? mono_custom_attrs_from_field(k, f) : mono_custom_attrs_from_class(k);
    if (!info)
        return 0;
    int has = mono_custom_attrs_has_attr(info, transportable_attribute);
    mono_custom_attrs_free(info);
    return has;
}

int rt_is_framework_class(MonoClass *k)
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

static char *format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return s;
}

/* The first reference slot met in declaration order (most derived class first): the field a
 * refusal names. */
typedef struct first_reference {
    char *path;       /* "inner.name (System.String)" */
    MonoClass *owner; /* the class (or struct) declaring it */
} first_reference;

typedef struct slot_lists {
    uint32_t nall, nslots, nhidden, cap_all, cap_slots, cap_hidden;
    uint32_t *all;
    rt_slot *slots;
    rt_hidden_slot *hidden;
    first_reference first;
    uint32_t nvalues, cap_values; /* (not slots: the values the runtime constrains) */
    rt_value_check *values;
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

/* Records a reference slot declared by owner: every one in `all`; a travelling one in `slots`;
 * one that a framework type declares and that does not travel in `hidden`. */
static int add_slot(slot_lists *l, uint32_t offset, MonoClass *declared, int travels,
                    const char *name, MonoClass *owner, int framework, MonoClassField *field)
{
    if (!l->first.path) {
        char *type = rt_class_name(declared);
        l->first = (first_reference){format("%s (%s)", name, type ? type : "?"), owner};
        free(type);
        if (!l->first.path)
            return -1;
    }
    uint32_t *a = reserve(l->all, l->nall, &l->cap_all, sizeof *a, 8);
    if (!a)
        return -1;
    l->all = a;
    l->all[l->nall++] = offset;
    if (!travels && framework) {
        rt_hidden_slot *h = reserve(l->hidden, l->nhidden, &l->cap_hidden, sizeof *h, 4);
        if (!h)
            return -1;
        l->hidden = h;
        char *n = strdup(name), *o = rt_class_name(owner);
        if (!n || !o) {
            free(n);
            free(o);
            return -1;
        }
        l->hidden[l->nhidden++] = (rt_hidden_slot){offset, n, o};
    }
    if (!travels)
        return 0;
    rt_slot *s = reserve(l->slots, l->nslots, &l->cap_slots, sizeof *s, 8);
    if (!s)
        return -1;
    l->slots = s;
    char *n = strdup(name);
    if (!n)
        return -1;
    l->slots[l->nslots++] = (rt_slot){offset, declared, n, field, field ? owner : NULL};
    return 0;
}

/* KeyValuePair<K,V> carries its key and value wherever it appears (API.md): its fields travel
 * as if marked [Transportable]. */
static int carries_its_fields(MonoClass *c)
{
    const char *ns = mono_class_get_namespace(c), *name = mono_class_get_name(c);
    return ns && name && !strcmp(ns, "System.Collections.Generic") &&
           !strcmp(name, "KeyValuePair`2") && mono_class_get_image(c) == mono_get_corlib();
}

/* The corlib values whose bytes the runtime constrains (rt_value_kind), by name, and the fields
 * their check reads, as Mono 6.8's corlib names them (a corlib that names them otherwise gets no
 * check: SdtoValuesTest's refusals would show it). A bool is its own one byte (field NULL), so a
 * bool field never leads back here through System.Boolean's own field. */
static const struct constrained_value {
    const char *name, *field, *field2;
    rt_value_kind kind;
} constrained_values[] = {
    {"Boolean", NULL, NULL, RT_VALUE_BOOL},
    {"Decimal", "flags", NULL, RT_VALUE_DECIMAL},
    {"DateTime", "_dateData", NULL, RT_VALUE_DATETIME},
    {"DateTimeOffset", "_dateTime", "_offsetMinutes", RT_VALUE_DATETIME_OFFSET},
};

/* Is the struct k (its data at base, its path prefix) one of constrained_values? 1 when it is:
 * its check is recorded in l; 0 when it is not; -1 when out of memory. */
static int constrained(MonoClass *k, uint32_t base, const char *prefix, slot_lists *l)
{
    const char *ns = mono_class_get_namespace(k), *name = mono_class_get_name(k);
    if (mono_class_get_image(k) != mono_get_corlib() || !ns || strcmp(ns, "System") || !name)
        return 0;
    for (size_t i = 0; i < sizeof constrained_values / sizeof constrained_values[0]; i++) {
        const struct constrained_value *c = &constrained_values[i];
        if (strcmp(name, c->name))
            continue;
        MonoClassField *f = c->field ? mono_class_get_field_from_name(k, c->field) : NULL,
                       *f2 = c->field2 ? mono_class_get_field_from_name(k, c->field2) : NULL;
        if ((c->field && !f) || (c->field2 && !f2))
            return 0;
        rt_value_check *v = reserve(l->values, l->nvalues, &l->cap_values, sizeof *v, 4);
        char *copy = prefix ? strdup(prefix) : NULL;
        if (v)
            l->values = v;
        if (!v || (prefix && !copy)) {
            free(copy);
            return -1;
        }
        uint32_t off = f ? base + (uint32_t)mono_field_get_offset(f) - (uint32_t)sizeof(MonoObject)
                         : base,
                 off2 =
                     f2 ? base + (uint32_t)mono_field_get_offset(f2) - (uint32_t)sizeof(MonoObject)
                        : 0;
        l->values[l->nvalues++] = (rt_value_check){off, off2, c->kind, copy};
        return 1;
    }
    return 0;
}

/* Reference slots of an instance of k whose data starts at base (nested structs flattened,
 * their fields named prefix.field), and the values in it the runtime constrains. A value-type
 * field always travels; a reference field only when marked [Transportable]. Plans live as long
 * as the process: names are never freed. */
static int collect(MonoClass *k, uint32_t base, const char *prefix, slot_lists *l)
{
    int known = constrained(k, base, prefix, l);
    if (known)
        return known < 0 ? -1 : 0;
    int value_type = mono_class_is_valuetype(k);
    for (MonoClass *c = k; c; c = value_type ? NULL : mono_class_get_parent(c)) {
        int framework = rt_is_framework_class(c), carried = framework && carries_its_fields(c);
        void *iter = NULL;
        MonoClassField *f;
        while ((f = mono_class_get_fields(c, &iter))) {
            if (mono_field_get_flags(f) & MONO_FIELD_ATTR_STATIC)
                continue;
            MonoType *t = mono_field_get_type(f);
            uint32_t off = base + (uint32_t)mono_field_get_offset(f) - (uint32_t)sizeof(MonoObject);
            int rc = 0;
            if (mono_type_is_reference(t) || mono_type_is_struct(t) ||
                mono_type_get_type(t) == MONO_TYPE_BOOLEAN) { /* (a bool: as System.Boolean) */
                char *name = join(prefix, mono_field_get_name(f));
                if (!name)
                    return -1;
                if (mono_type_is_reference(t))
                    rc = add_slot(l, off, mono_class_from_mono_type(t),
                                  carried || rt_has_transportable(c, f), name, c, framework,
                                  prefix ? NULL : f);
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
 * -1 when out of memory. */
static int data_runs(uint32_t size, uint32_t *all, uint32_t n, rt_run **runs, uint32_t *nruns)
{
    if (n > 1) /* (qsort of no slots: all may be NULL) */
        qsort(all, n, sizeof *all, by_offset);
    *nruns = 0;
    *runs = malloc((n + 1) * sizeof **runs);
    if (!*runs)
        return -1;
    uint32_t at = 0;
    for (uint32_t i = 0; i <= n; i++) {
        uint32_t end = i < n ? all[i] : size;
        if (end > at)
            (*runs)[(*nruns)++] = (rt_run){at, end - at};
        if (i < n)
            at = all[i] + (uint32_t)sizeof(void *);
    }
    return 0;
}

static char *qualified_name(MonoClass *k, uint32_t *len)
{
    char *name = mono_type_get_name(mono_class_get_type(k));
    const char *image = mono_image_get_name(mono_class_get_image(k));
    char *s = format("%s, %s", name ? name : "?", image ? image : "?");
    if (s)
        *len = (uint32_t)strlen(s);
    mono_free(name);
    return s;
}

/* Objects whose meaning is tied to this process: a received one could run or touch anything. */
static const char *denied(MonoClass *k)
{
    static const struct {
        const char *ns, *name, *why;
    } deny[] = {
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

static int element_type(MonoClass *k)
{
    if (mono_class_is_enum(k))
        k = mono_class_from_mono_type(mono_class_enum_basetype(k));
    return mono_type_get_type(mono_class_get_type(k));
}

/* "type 'T' cannot be passed to an OPI call: <why>", why formatted from fmt and detail. */
static const char *refuse(MonoClass *k, const char *fmt, const char *detail)
{
    char *name = rt_class_name(k);
    char *why = format(fmt, detail ? detail : "?");
    char *text =
        format("type '%s' cannot be passed to an OPI call: %s", name ? name : "?", why ? why : "?");
    free(name);
    free(why);
    return text ? text : "out of memory describing the type";
}

/* Why OPI's zero-copy path cannot move instances of the planned class as raw bytes, or NULL.
 * first: the first reference slot of the instance or (arrays) of the element. */
static const char *raw_refusal(const rt_class_plan *p, const first_reference *first)
{
    MonoClass *k = p->klass;
    if (p->shape == RT_STRING)
        return refuse(k, "%s", "strings are immutable; send a char[] or use OSend");
    if (p->shape == RT_ARRAY && p->element == RT_ELEM_REFS) {
        char *en = rt_class_name(p->elem_class);
        const char *why = refuse(
            k,
            mono_class_get_rank(p->elem_class) > 0
                ? "its elements are arrays (%s); send each inner array on its own, or use OSend"
                : "its elements are references (%s); use OSend for object graphs",
            en);
        free(en);
        return why;
    }
    if (!first->path)
        return NULL;
    /* a framework type's private field cannot be marked by the user: no such advice; a
     * KeyValuePair's key and value travel in a graph as they are */
    int framework = rt_is_framework_class(first->owner),
        carried = framework && carries_its_fields(first->owner);
    framework &= !carried;
    if (carried)
        return refuse(k, "its field %s is a reference; use OSend", first->path);
    if (p->shape == RT_ARRAY)
        return refuse(k,
                      framework
                          ? "its element struct holds a reference in field %s, private state of a "
                            "framework type, which no transport carries: send its parts as arrays"
                          : "its element struct holds a reference in field %s; use OSend",
                      first->path);
    if (!framework)
        return refuse(k, "field %s is a reference; mark it [Transportable] and use OSend",
                      first->path);
    char *on = rt_class_name(first->owner);
    char *detail = format("%s belongs to the framework type %s", first->path, on ? on : "?");
    const char *why =
        refuse(k,
               "field %s, whose private state holds references: OPI cannot transport it. Send "
               "its contents as an array (e.g. ToArray()), by OPI or in a graph for OSend",
               detail ? detail : first->path);
    free(on);
    free(detail);
    return why;
}

/* ---- the standard collections carried by value ---- */

/* How each keeps its elements in this runtime (Mono 6.8's corefx sources). A class whose fields
 * differ is not carried: it is refused like any framework object with private references. */
static const struct known_collection {
    const char *name;
    rt_collection_kind kind;
    const char *store, *used, *live, *freed, *head, *comparer, *entry_hash, *entry_key,
        *entry_value;
} known_collections[] = {
    {"List`1", RT_LIST, "_items", "_size", "_size", NULL, NULL, NULL, NULL, NULL, NULL},
    {"Queue`1", RT_QUEUE, "_array", "_size", "_size", NULL, "_head", NULL, NULL, NULL, NULL},
    {"Stack`1", RT_STACK, "_array", "_size", "_size", NULL, NULL, NULL, NULL, NULL, NULL},
    {"HashSet`1", RT_HASHSET, "_slots", "_lastIndex", "_count", NULL, NULL, "_comparer", "hashCode",
     NULL, "value"},
    {"Dictionary`2", RT_DICTIONARY, "_entries", "_count", "_count", "_freeCount", NULL, "_comparer",
     "hashCode", "key", "value"},
};

/* How deep element and type-argument types may nest for rt_travels_as_base (List<int[]>[]: 3). */
#define BASE_SLOT_DEPTH 8

/* The framework values that travel anywhere: a primitive, decimal, a time, a Guid, a string. */
static int framework_value(MonoClass *k)
{
    static const char *const names[] = {
        "Boolean", "Char",   "SByte",    "Byte",     "Int16",          "UInt16",
        "Int32",   "UInt32", "Int64",    "UInt64",   "Single",         "Double",
        "Decimal", "String", "DateTime", "TimeSpan", "DateTimeOffset", "Guid"};
    const char *ns = mono_class_get_namespace(k), *name = mono_class_get_name(k);
    if (mono_class_get_image(k) != mono_get_corlib() || mono_class_get_nesting_type(k) || !ns ||
        !name || strcmp(ns, "System"))
        return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i]))
            return 1;
    return 0;
}

static int travels_as_base(MonoClass *k, int element, int depth);

/* Do the fields `names` (NULL ends; entries of a store when store is set) hold types that travel
 * as elements? */
static int fields_travel(MonoClass *k, const char *store, const char *const *names, int depth)
{
    if (store) {
        MonoClassField *f = mono_class_get_field_from_name(k, store);
        MonoClass *array = f ? mono_class_from_mono_type(mono_field_get_type(f)) : NULL;
        if (!array || mono_class_get_rank(array) != 1)
            return 0;
        k = mono_class_get_element_class(array);
        if (!names[0]) /* the store is an E[] */
            return travels_as_base(k, 1, depth + 1);
    }
    for (; *names; names++) {
        MonoClassField *f = mono_class_get_field_from_name(k, *names);
        if (!f || !travels_as_base(mono_class_from_mono_type(mono_field_get_type(f)), 1, depth + 1))
            return 0;
    }
    return 1;
}

static int travels_as_base(MonoClass *k, int element, int depth)
{
    if (depth > BASE_SLOT_DEPTH)
        return 0;
    if (framework_value(k) || rt_has_transportable(k, NULL))
        return 1;
    if (mono_class_get_rank(k) > 0)
        return travels_as_base(mono_class_get_element_class(k), 1, depth + 1);
    if (element && k == mono_get_object_class())
        return 1;
    const char *ns = mono_class_get_namespace(k), *name = mono_class_get_name(k);
    if (!ns || !name || !rt_is_framework_class(k))
        return 0;
    static const char *const value[] = {"value", NULL}, *const key_value[] = {"key", "value", NULL};
    if (element && mono_class_get_image(k) == mono_get_corlib()) {
        if (!strcmp(ns, "System") && !strcmp(name, "Nullable`1"))
            return fields_travel(k, NULL, value, depth);
        if (carries_its_fields(k)) /* KeyValuePair<K,V> */
            return fields_travel(k, NULL, key_value, depth);
    }
    if (strcmp(ns, "System.Collections.Generic") || mono_class_is_valuetype(k))
        return 0;
    for (size_t i = 0; i < sizeof known_collections / sizeof known_collections[0]; i++) {
        const struct known_collection *kc = &known_collections[i];
        if (!strcmp(name, kc->name)) {
            const char *const entry[] = {kc->entry_key ? kc->entry_key : kc->entry_value,
                                         kc->entry_key ? kc->entry_value : NULL, NULL};
            return fields_travel(k, kc->store, entry, depth);
        }
    }
    return 0;
}

int rt_travels_as_base(MonoClass *k, int element) { return travels_as_base(k, element, 0); }

/* The offset in instance data of k's field `name`, which must be an int (want_int) or a
 * reference; -1 when there is no such field. */
static int64_t field_offset(MonoClass *k, const char *name, int want_int)
{
    MonoClassField *f = name ? mono_class_get_field_from_name(k, name) : NULL;
    if (!f || (mono_field_get_flags(f) & MONO_FIELD_ATTR_STATIC))
        return -1;
    MonoType *t = mono_field_get_type(f);
    if (want_int ? mono_type_get_type(t) != MONO_TYPE_I4 : !mono_type_is_reference(t))
        return -1;
    return (int64_t)mono_field_get_offset(f) - (int64_t)sizeof(MonoObject);
}

/* A field of a struct (an entry, a KeyValuePair): its offset in the struct's data, its class and
 * the bytes it takes there. */
static int struct_field(MonoClass *k, const char *name, uint32_t *offset, MonoClass **type,
                        uint32_t *size)
{
    MonoClassField *f = mono_class_get_field_from_name(k, name);
    if (!f)
        return -1;
    MonoType *t = mono_field_get_type(f);
    *type = mono_class_from_mono_type(t);
    *offset = (uint32_t)mono_field_get_offset(f) - (uint32_t)sizeof(MonoObject);
    *size = mono_type_is_reference(t) ? (uint32_t)sizeof(void *)
                                      : (uint32_t)mono_class_value_size(*type, NULL);
    return 0;
}

/* What build() needs to plan a carried collection, found before the cache's lock is taken. */
typedef struct collection_found {
    rt_collection layout;
    const rt_class_plan *items; /* the plan of E[] */
} collection_found;

/* Is k a carried collection laid out as known_collections says? Fills *found. */
static int find_collection(MonoClass *k, collection_found *found)
{
    const char *ns = mono_class_get_namespace(k), *name = mono_class_get_name(k);
    const struct known_collection *kc = NULL;
    for (size_t i = 0; i < sizeof known_collections / sizeof known_collections[0]; i++)
        if (ns && name && !strcmp(ns, "System.Collections.Generic") &&
            !strcmp(name, known_collections[i].name))
            kc = &known_collections[i];
    if (!kc || !rt_is_framework_class(k) || mono_class_is_valuetype(k))
        return 0;
    rt_collection *c = &found->layout;
    *c =
        (rt_collection){.kind = kc->kind, .freed = -1, .head = -1, .comparer = -1, .hash_code = -1};
    int64_t store = field_offset(k, kc->store, 0), used = field_offset(k, kc->used, 1),
            live = field_offset(k, kc->live, 1);
    int64_t freed = kc->freed ? field_offset(k, kc->freed, 1) : 0,
            head = kc->head ? field_offset(k, kc->head, 1) : 0,
            comparer = kc->comparer ? field_offset(k, kc->comparer, 0) : 0;
    if (store < 0 || used < 0 || live < 0 || freed < 0 || head < 0 || comparer < 0)
        return 0;
    c->store = (uint32_t)store;
    c->used = (uint32_t)used;
    c->live = (uint32_t)live;
    if (kc->freed)
        c->freed = (int32_t)freed;
    if (kc->head)
        c->head = (int32_t)head;
    if (kc->comparer)
        c->comparer = (int32_t)comparer;
    MonoClass *store_class = mono_class_from_mono_type(
        mono_field_get_type(mono_class_get_field_from_name(k, kc->store)));
    if (mono_class_get_rank(store_class) != 1)
        return 0;
    MonoClass *entry = mono_class_get_element_class(store_class),
              *e = carried_element ? carried_element(k) : NULL;
    if (!e)
        return 0;
    c->stride = (uint32_t)mono_array_element_size(store_class);
    const rt_class_plan *items = rt_plan_for_class(mono_array_class_get(e, 1));
    if (!items)
        return 0;
    MonoClass *type;
    uint32_t offset, size;
    if (!kc->entry_hash) { /* the store is an E[] */
        if (entry != e)
            return 0;
        c->nparts = 1;
        c->parts[0].length = items->data_size;
    } else {
        if (struct_field(entry, kc->entry_hash, &offset, &type, &size) || size != 4)
            return 0;
        c->hash_code = (int32_t)offset;
        const char *names[2] = {kc->entry_key, kc->entry_value}, *kvp[2] = {"key", "value"};
        for (int part = kc->entry_key ? 0 : 1; part < 2; part++) {
            MonoClass *etype, *ktype;
            uint32_t eoff, esize, koff = 0, ksize = items->data_size;
            if (struct_field(entry, names[part], &eoff, &etype, &esize))
                return 0;
            /* E is KeyValuePair */
            if (kc->entry_key && struct_field(e, kvp[part], &koff, &ktype, &ksize))
                return 0;
            if (kc->entry_key ? ktype != etype || ksize != esize : etype != e || esize != ksize)
                return 0;
            c->parts[c->nparts++] = (struct rt_collection_part){koff, eoff, esize};
        }
    }
    found->items = items;
    return 1;
}

/* The plan of a carried collection class k (p: what build found of k itself): its elements are
 * planned as E[]'s are (found->items), the rest is k's own. NULL when out of memory (p freed). */
static rt_class_plan *build_collection(rt_class_plan *p, MonoClass *k,
                                       const collection_found *found)
{
    rt_collection *c = malloc(sizeof *c);
    p->qualified_name = qualified_name(k, &p->qualified_name_len);
    if (!c || !p->qualified_name) {
        free(c);
        free(p->qualified_name);
        free(p);
        return NULL;
    }
    *c = found->layout;
    /* E[]'s element fields (element, data_size, elem_class, slots, runs, hidden...), then what is
     * k's own */
    rt_class_plan own = *p;
    *p = *found->items;
    p->klass = own.klass;
    p->vtable = own.vtable;
    p->polymorphic = own.polymorphic;
    p->in_base_slot = own.in_base_slot;
    p->framework = own.framework;
    p->denied = own.denied;
    p->value_type = own.value_type;
    p->abstract = own.abstract;
    p->qualified_name = own.qualified_name;
    p->qualified_name_len = own.qualified_name_len;
    atomic_init(&p->type_initialized, 0);
    p->shape = RT_COLLECTION;
    p->collection = c;
    p->items = found->items;
    p->raw_refusal = refuse(k, "%s",
                            "it is a framework collection; send its contents as an array "
                            "(ToArray()), or the collection itself with OSend");
    return p;
}

/* The shape of k (a string, an array or another object) and the reference slots its fields
 * hold, into l; 0, or non-zero when out of memory. */
static int plan_shape(rt_class_plan *p, MonoClass *k, slot_lists *l)
{
    if (k == mono_get_string_class()) {
        p->shape = RT_STRING;
        p->data_size = 2;
        p->elem_type = element_type(k);
        return 0;
    }
    if (mono_class_get_rank(k) == 0) {
        p->shape = RT_OBJECT;
        p->data_size = (uint32_t)(mono_class_instance_size(k) - (int32_t)sizeof(MonoObject));
        p->elem_type = element_type(k);
        return collect(k, 0, NULL, l);
    }
    MonoClass *e = mono_class_get_element_class(k);
    p->shape = RT_ARRAY;
    p->rank = (uint8_t)mono_class_get_rank(k);
    p->vector = mono_type_get_type(mono_class_get_type(k)) == MONO_TYPE_SZARRAY;
    p->elem_class = e;
    p->elem_type = element_type(e);
    p->data_size = (uint32_t)mono_array_element_size(k);
    if (mono_type_is_reference(mono_class_get_type(e))) {
        /* arrays of objects travel with their elements */
        p->element = RT_ELEM_REFS;
        return add_slot(l, 0, e, 1, "", NULL, 0, NULL);
    }
    int rc = collect(e, 0, NULL, l);
    /* structs with travelling references, else raw (their reference slots read null) */
    p->element = l->nslots ? RT_ELEM_STRUCTS : RT_ELEM_RAW;
    return rc;
}

static void *build(const void *key, void *ctx)
{
    const collection_found *found = ctx;
    MonoClass *k = (MonoClass *)key;
    rt_class_plan *p = calloc(1, sizeof *p);
    slot_lists l = {0};
    if (!p)
        return NULL;
    p->klass = k;
    p->polymorphic = rt_has_transportable(k, NULL);
    p->in_base_slot = p->polymorphic || travels_as_base(k, 0, 0);
    p->framework = rt_is_framework_class(k);
    p->denied = denied(k);
    p->value_type = mono_class_is_valuetype(k);
    p->abstract =
        (mono_class_get_flags(k) & (MONO_TYPE_ATTR_ABSTRACT | MONO_TYPE_ATTR_INTERFACE)) != 0;
    p->vtable = p->abstract ? NULL : mono_class_vtable(mono_domain_get(), k);
    if (found)
        return build_collection(p, k, found);
    int rc = plan_shape(p, k, &l);
    p->qualified_name = qualified_name(k, &p->qualified_name_len);
    if (!rc && p->shape != RT_STRING)
        rc = data_runs(p->data_size, l.all, l.nall, &p->runs, &p->nruns);
    if (!rc)
        p->raw_refusal = raw_refusal(p, &l.first);
    p->first_reference = l.first.path; /* (kept for the plan's life, as the slot names are) */
    if (rc || !p->qualified_name) {
        for (uint32_t v = 0; v < l.nvalues; v++)
            free((char *)l.values[v].name);
        free(l.values);
        free(p->runs);
        free(l.all);
        free(l.slots); /* (with the few names made so far: out of memory only) */
        free(l.hidden);
        free(p->qualified_name);
        free(l.first.path);
        free(p);
        return NULL;
    }
    p->nall = l.nall;
    p->all = l.all;
    p->nslots = l.nslots;
    p->slots = l.slots;
    p->nhidden = l.nhidden;
    p->hidden = l.hidden;
    p->nvalues = l.nvalues;
    p->values = l.values;
    return p;
}

const rt_class_plan *rt_plan_known_for_class(MonoClass *k) { return ptr_map_get(&plans, k); }

const rt_class_plan *rt_plan_for_class(MonoClass *k)
{
    const rt_class_plan *p = ptr_map_get(&plans, k);
    if (p)
        return p;
    collection_found found; /* found outside the lock: it runs managed code and plans E[] */
    return ptr_map_get_or_build(&plans, k, build, find_collection(k, &found) ? &found : NULL);
}

const rt_class_plan *rt_plan_known(MonoObject *obj)
{
    const rt_class_plan **recent = &recent_plans[((uintptr_t)obj->vtable >> 6) % RECENT_PLANS];
    const rt_class_plan *p = *recent;
    if (p && p->vtable == obj->vtable)
        return p;
    /* MonoVTable starts with its class (checked by rt_layout_init): no Mono call, no safepoint */
    p = ptr_map_get(&plans, rt_vtable_class(obj->vtable));
    if (p && p->vtable == obj->vtable) /* (another domain's vtable would not match: not kept) */
        *recent = p;
    return p;
}

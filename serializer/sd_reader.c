/* sd_reader.c — reads a graph (FORMAT.md) safely: the pure-C validator checks the structure
 * first; then every type name is resolved only if API.md's allow-list for the expected type
 * admits it, and checked against this runtime's layout; type initializers run; objects are
 * created without running constructors, their data copied around the reference slots (never
 * wire bytes there), kept reachable in a pinned object[] while the rest are made, and linked
 * only to objects assignable to each slot's declared type. Anything else fails the whole read.
 * A large read gives way to other threads' collections every few hundred records and every
 * megabyte copied: it holds no object address but the pinned object[] across those points. */
#include "serializer.h"

#include "class_plan.h"
#include "error_record.h"
#include "gc_hooks.h"
#include "layout.h"
#include "names.h"
#include "sd_threads.h"
#include "sd_values.h"
#include "sd_wire.h"

#include <mono/metadata/metadata.h>

#include <mono/metadata/appdomain.h>
#include <mono/metadata/assembly.h>
#include <mono/metadata/attrdefs.h>
#include <mono/metadata/class.h>
#include <mono/metadata/image.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A holder's entries by address (mono_array_get and mono_array_setref each call into Mono). */
static inline MonoObject **entries(MonoArray *a)
{
    return (MonoObject **)rt_array_data((MonoObject *)a);
}
static inline MonoObject *entry_of(MonoArray *a, uint64_t i) { return entries(a)[i]; }
static inline void hold_at(MonoArray *a, uint64_t i, MonoObject *o)
{
    mono_gc_wbarrier_set_arrayref(a, &entries(a)[i], o);
}

/* Fails the read: the thread's error record says why. */
static int failf(const char *fmt, int n, const char *s)
{
    return error_record(SD_ERR_SERIALIZATION, NULL, fmt, n, s);
}

/* The allow-list R: grows from the expected type through travelling slots and array elements.
 * It starts in the reader's stack storage (on_stack) and moves to the heap if it outgrows it. */
typedef struct allowed {
    const rt_class_plan **plans;
    uint32_t n, cap;
    int on_stack;
} allowed;

/* Tables of a message this small live on the reader's stack. */
#define SMALL_TYPES 16
#define SMALL_RECORDS 64

static int in_allowed(const allowed *r, const rt_class_plan *p)
{
    for (uint32_t i = 0; i < r->n; i++)
        if (r->plans[i] == p)
            return 1;
    return 0;
}

static int allow(allowed *r, MonoClass *k)
{
    const rt_class_plan *p = rt_plan_for_class(k);
    if (!p)
        return -1;
    if (in_allowed(r, p))
        return 0;
    if (r->n == r->cap) {
        uint32_t cap = r->cap ? 2 * r->cap : 32;
        const rt_class_plan **g =
            r->on_stack ? malloc(cap * sizeof *g) : realloc(r->plans, cap * sizeof *g);
        if (!g)
            return -1;
        if (r->on_stack)
            memcpy(g, r->plans, r->n * sizeof *g);
        r->plans = g;
        r->cap = cap;
        r->on_stack = 0;
    }
    r->plans[r->n++] = p;
    for (uint32_t s = 0; s < p->nslots; s++)
        if (allow(r, p->slots[s].declared))
            return -1;
    if (p->elem_class && allow(r, p->elem_class))
        return -1;
    return 0;
}

/* ---- type names: a message names each type as class_plan's qualified_name writes it, Mono's
 * IL form plus the image ("Ns.Outer.Inner, img", "Ns.Box<System.Int32,Ns.P[]>, img"): nested
 * classes joined by '.', a generic without its arity, type arguments without their image. The
 * reader finds a class of that name only in images already loaded (it never loads one), and
 * keeps it only if its own qualified name is the wire's, byte for byte. */

/* How deep arrays and type arguments may nest in a name, and how many arguments a generic has. */
#define NAME_DEPTH 8
#define NAME_ARGS 16

/* k's nested class of that name, or NULL. */
static MonoClass *nested_named(MonoClass *k, const char *name, size_t n)
{
    void *iter = NULL;
    for (MonoClass *c; (c = mono_class_get_nested_types(k, &iter));) {
        const char *cn = mono_class_get_name(c);
        if (cn && strlen(cn) == n && !memcmp(cn, name, n))
            return c;
    }
    return NULL;
}

/* The class seg (n bytes) names: in namespace ns of image, or nested in outer when that is set.
 * A segment of a generic's name lost its arity ("Box" for Box`1, "G" for G`1 of G<T>.In): those
 * with arity up to `arity` are tried first, then seg itself. */
static MonoClass *segment_named(MonoImage *image, const char *ns, MonoClass *outer, const char *seg,
                                size_t n, uint32_t arity)
{
    char name[SD_MAX_NAME + 16];
    for (uint32_t a = arity + 1; a-- > 0;) {
        int len = a ? snprintf(name, sizeof name, "%.*s`%u", (int)n, seg, a)
                    : snprintf(name, sizeof name, "%.*s", (int)n, seg);
        MonoClass *k =
            outer ? nested_named(outer, name, (size_t)len) : mono_class_from_name(image, ns, name);
        if (k)
            return k;
    }
    return NULL;
}

/* The class a dotted name "A.B.C" (NUL-terminated; changed and restored) names in image: a
 * namespace, a class, then classes nested in it, each split of the dots tried from the right. */
static MonoClass *dotted_in(MonoImage *image, char *name, uint32_t arity)
{
    for (char *dot = name + strlen(name);; dot--) {
        if (dot > name && *dot != '.')
            continue;
        const char *first = dot > name ? dot + 1 : name;
        MonoClass *k;
        if (dot > name) {
            *dot = '\0';
            k = segment_named(image, name, NULL, first, strcspn(first, "."), arity);
            *dot = '.';
        } else {
            k = segment_named(image, "", NULL, first, strcspn(first, "."), arity);
        }
        for (const char *seg = first + strcspn(first, "."); k && *seg;
             seg += 1 + strcspn(seg + 1, "."))
            k = segment_named(image, NULL, k, seg + 1, strcspn(seg + 1, "."), arity);
        if (k || dot == name)
            return k;
    }
}

typedef struct image_search {
    char *name;
    uint32_t arity;
    MonoClass *found;
} image_search;

static void search_image(void *assembly, void *ctx)
{
    image_search *s = ctx;
    if (!s->found)
        s->found = dotted_in(mono_assembly_get_image(assembly), s->name, s->arity);
}

/* A dotted name in image, or (image NULL: a type argument, named without its image) in corlib,
 * then in the loaded assemblies; a generic's segments with arity up to `arity`. */
static MonoClass *plain_named(MonoImage *image, const char *s, size_t n, uint32_t arity)
{
    char name[SD_MAX_NAME + 1];
    if (n >= sizeof name)
        return NULL;
    memcpy(name, s, n);
    name[n] = '\0';
    if (image)
        return dotted_in(image, name, arity);
    image_search search = {name, arity, dotted_in(mono_get_corlib(), name, arity)};
    if (!search.found)
        mono_assembly_foreach(search_image, &search);
    return search.found;
}

static MonoClass *type_named(MonoImage *image, const char *s, size_t n, int depth);

/* Definition instantiated with the n classes of args, through SdtoTypes.Instantiate (which
 * checks its constraints); NULL when it cannot be. Runs managed code. */
static MonoClass *instantiate(MonoClass *definition, MonoClass **args, uint32_t n)
{
    MonoMethod *m = sd_managed(SD_TYPE_INSTANTIATE);
    MonoDomain *domain = mono_domain_get();
    MonoArray *types = m ? mono_array_new(domain, mono_get_object_class(), n) : NULL;
    void *call[2] = {mono_type_get_object(domain, mono_class_get_type(definition)), types};
    for (uint32_t i = 0; types && i < n; i++) {
        MonoReflectionType *t = mono_type_get_object(domain, mono_class_get_type(args[i]));
        if (!t)
            return NULL;
        mono_array_setref(types, i, (MonoObject *)t);
    }
    MonoObject *exc = NULL;
    MonoObject *k = types && call[0] ? mono_runtime_invoke(m, NULL, call, &exc) : NULL;
    return k && !exc
               ? mono_class_from_mono_type(mono_reflection_type_get_type((MonoReflectionType *)k))
               : NULL;
}

/* "G<A,B>": G`2 (or G.In of G`2, or G`1.In`1...) in image, instantiated with A and B,
 * each a type that may travel as an element (rt_travels_as_base) named in no image. Only a
 * definition marked [Transportable] or a framework one (a collection, KeyValuePair, Nullable) is
 * instantiated: a message makes no other class exist. */
static MonoClass *generic_named(MonoImage *image, const char *s, size_t n, int depth)
{
    size_t open = n - 1;
    for (int level = 0; open-- > 0;) {
        level += s[open] == '>' ? 1 : s[open] == '<' ? -1 : 0;
        if (level < 0)
            break;
    }
    if (open >= n || !open)
        return NULL;
    MonoClass *args[NAME_ARGS];
    uint32_t argc = 0;
    int level = 0; /* inside the outer <> */
    for (size_t from = open + 1, i = from; i < n; i++) {
        level += s[i] == '<' ? 1 : s[i] == '>' && i < n - 1 ? -1 : 0;
        if (i < n - 1 && !(s[i] == ',' && !level))
            continue;
        if (argc == NAME_ARGS || i == from ||
            !(args[argc] = type_named(NULL, s + from, i - from, depth + 1)) ||
            !rt_travels_as_base(args[argc], 1))
            return NULL;
        argc++;
        from = i + 1;
    }
    MonoClass *definition = plain_named(image, s, open, argc);
    const char *ns = definition ? mono_class_get_namespace(definition) : NULL;
    if (!definition ||
        !(rt_has_transportable(definition, NULL) ||
          (rt_is_framework_class(definition) && ns &&
           (!strcmp(ns, "System.Collections.Generic") ||
            (!strcmp(ns, "System") && !strcmp(mono_class_get_name(definition), "Nullable`1"))))))
        return NULL;
    return instantiate(definition, args, argc);
}

/* The class a type name (without its image) names in image (NULL: see plain_named); NULL when
 * none, or when the name nests deeper than NAME_DEPTH. An array is made only of an element that
 * may travel as one (rt_travels_as_base). Calls Mono, and managed code for a generic. */
static MonoClass *type_named(MonoImage *image, const char *s, size_t n, int depth)
{
    if (depth > NAME_DEPTH || !n)
        return NULL;
    if (s[n - 1] == '>')
        return generic_named(image, s, n, depth);
    if (s[n - 1] != ']')
        return plain_named(image, s, n, 0);
    size_t open = n - 1;
    while (open > 0 && s[open] != '[')
        open--;
    uint32_t rank = 1;
    int bounded = n - open == 3 && s[open + 1] == '*';
    for (size_t i = open + 1; !bounded && i < n - 1; i++)
        if (s[i] != ',' || ++rank > SD_MAX_RANK)
            return NULL;
    MonoClass *e = open ? type_named(image, s, open, depth + 1) : NULL;
    if (!e || !rt_travels_as_base(e, 1))
        return NULL;
    return rank == 1 && !bounded ? mono_array_class_get(e, 1)
                                 : mono_bounded_array_class_get(e, rank, bounded);
}

/* Names resolved before (a generic's costs a managed call): a small direct-mapped cache of
 * names whose class was found and checked. Taken only with trylock, and no Mono call is made
 * under its lock: a busy cache is simply not used. */
#define NAMES_KEPT 64
static struct {
    pthread_mutex_t lock;
    struct kept_name {
        char *name;
        uint32_t len;
        MonoClass *klass;
    } kept[NAMES_KEPT];
} names = {PTHREAD_MUTEX_INITIALIZER, {{0}}};

static struct kept_name *kept_name(const sd_type *t)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (uint32_t i = 0; i < t->name_len; i++)
        h = (h ^ (uint8_t)t->name[i]) * 16777619u;
    return &names.kept[h % NAMES_KEPT];
}

static MonoClass *name_kept(const sd_type *t)
{
    MonoClass *k = NULL;
    if (pthread_mutex_trylock(&names.lock))
        return NULL;
    struct kept_name *e = kept_name(t);
    if (e->name && e->len == t->name_len && !memcmp(e->name, t->name, t->name_len))
        k = e->klass;
    pthread_mutex_unlock(&names.lock);
    return k;
}

static void keep_name(const sd_type *t, MonoClass *k)
{
    char *copy = malloc(t->name_len);
    if (!copy || pthread_mutex_trylock(&names.lock)) {
        free(copy);
        return;
    }
    struct kept_name *e = kept_name(t);
    char *old = e->name;
    memcpy(copy, t->name, t->name_len);
    *e = (struct kept_name){copy, t->name_len, k};
    pthread_mutex_unlock(&names.lock);
    free(old);
}

/* The class a message's type names, as loaded here; NULL when its image is not loaded, no such
 * class is in it, or its name here is not the wire's. */
static MonoClass *class_named(const sd_type *t)
{
    MonoClass *kept = name_kept(t);
    if (kept)
        return kept;
    size_t comma = t->name_len;
    for (int level = 0; comma-- > 0;) { /* the last ", " outside type arguments */
        level += t->name[comma] == '>' ? 1 : t->name[comma] == '<' ? -1 : 0;
        if (!level && comma + 1 < t->name_len && t->name[comma] == ',' && t->name[comma + 1] == ' ')
            break;
    }
    if (comma >= t->name_len)
        return NULL;
    char image_name[SD_MAX_NAME + 1];
    memcpy(image_name, t->name + comma + 2, t->name_len - comma - 2);
    image_name[t->name_len - comma - 2] = '\0';
    MonoImage *image = mono_image_loaded(image_name);
    MonoClass *k = image ? type_named(image, (const char *)t->name, comma, 0) : NULL;
    const rt_class_plan *p = k ? rt_plan_for_class(k) : NULL;
    if (!p || p->qualified_name_len != t->name_len ||
        memcmp(p->qualified_name, t->name, t->name_len))
        return NULL;
    keep_name(t, k);
    return k;
}

/* A class named on the wire that is not in R may still come if it travels in a slot of a base
 * type (marked [Transportable] at class level, or a framework value: rt_travels_as_base) and is
 * assignable to a type in R (API.md). */
static const rt_class_plan *polymorphic(allowed *r, const sd_type *t)
{
    MonoClass *k = class_named(t);
    const rt_class_plan *p = k ? rt_plan_for_class(k) : NULL;
    if (!p || !p->in_base_slot)
        return NULL;
    for (uint32_t i = 0; i < r->n; i++)
        if (mono_class_is_assignable_from(r->plans[i]->klass, k))
            return allow(r, k) ? NULL : p;
    return NULL;
}

static const rt_class_plan *resolve(allowed *r, const sd_type *t)
{
    for (uint32_t i = 0; i < r->n; i++)
        if (r->plans[i]->qualified_name_len == t->name_len &&
            !memcmp(r->plans[i]->qualified_name, t->name, t->name_len))
            return r->plans[i];
    return polymorphic(r, t);
}

/* Does this runtime lay the type out as the message says? */
static int same_layout(const rt_class_plan *p, const sd_type *t)
{
    return sd_wire_kind(p) == t->kind && p->rank == t->rank && sd_wire_element(p) == t->element &&
           p->data_size == t->data_size && sd_wire_ref_count(p) == t->ref_count;
}

/* The first line of an exception's ToString ("System.X: message"), to be freed with mono_free;
 * NULL when it cannot be had. */
static char *exception_line(MonoObject *exc)
{
    MonoObject *exc2 = NULL;
    MonoString *text = mono_object_to_string(exc, &exc2);
    char *utf8 = text && !exc2 ? mono_string_to_utf8(text) : NULL;
    if (utf8)
        utf8[strcspn(utf8, "\r\n")] = '\0';
    return utf8;
}

/* Runs the type initializers of k and of its base classes, as `new` would (k's own first, then
 * each base's, as the constructor chain reaches them), before any received instance exists.
 * Through RuntimeHelpers.RunClassConstructor and mono_runtime_invoke: a throwing initializer
 * comes back as an exception object (mono_runtime_class_init would abort the process). Done
 * once per class; a failed one is tried again next time and fails the same way (the runtime
 * remembers). A Mono call that runs managed code: the caller holds no object address. */
static int run_type_initializers(const rt_class_plan *p)
{
    static _Atomic(MonoMethod *) run_method; /* found once; a race finds the same method */
    if (atomic_load_explicit(&p->type_initialized, memory_order_acquire))
        return MPC_OK;
    MonoMethod *run = atomic_load(&run_method);
    if (!run) {
        MonoClass *helpers = mono_class_from_name(
            mono_get_corlib(), "System.Runtime.CompilerServices", "RuntimeHelpers");
        run = helpers ? mono_class_get_method_from_name(helpers, "RunClassConstructor", 1) : NULL;
        if (!run)
            return error_record(
                RT_ERR_RUNTIME, NULL,
                "RuntimeHelpers.RunClassConstructor not found, so no type initializer can run");
        atomic_store(&run_method, run);
    }
    for (MonoClass *k = p->klass; k; k = mono_class_get_parent(k)) {
        MonoType *handle = mono_class_get_type(k); /* a RuntimeTypeHandle's only field */
        void *args[1] = {&handle};
        MonoObject *exc = NULL;
        mono_runtime_invoke(run, NULL, args, &exc);
        if (!exc)
            continue;
        /* "System.TypeInitializationException: The type initializer for 'X' threw an
         * exception. ---> Inner: message", the first line of its ToString */
        char *utf8 = exception_line(exc);
        char *name = mono_type_get_name(handle);
        error_record(SD_ERR_SERIALIZATION, NULL,
                     "the type initializer of %s failed, so no %s can be received: %s",
                     name ? name : "?", name ? name : "?", utf8 ? utf8 : "?");
        mono_free(name);
        mono_free(utf8);
        return SD_ERR_SERIALIZATION;
    }
    /* a cache bit */
    atomic_store_explicit(&((rt_class_plan *)p)->type_initialized, 1, memory_order_release);
    return MPC_OK;
}

/* Copies one instance or element from the wire, reference slots excepted: those stay as the
 * allocation left them (zero) until linking stores a checked object there, so no object is
 * ever visible to the GC with wire bytes in a reference slot. */
static void copy_data(uint8_t *to, const uint8_t *from, const rt_class_plan *p)
{
    for (uint32_t r = 0; r < p->nruns; r++)
        memcpy(to + p->runs[r].offset, from + p->runs[r].offset, p->runs[r].length);
}

/* Gives way to a collection another thread requested since *seen (the epoch), as every long
 * internal call must: the caller holds no object address outside the pinned object[]. */
static void give_way(uint64_t *seen)
{
    uint64_t now = gch_epoch();
    if (now == *seen)
        return;
    gch_yield_to_gc();
    *seen = gch_epoch();
}

/* Bytes copied between two looks at the collection epoch (about a millisecond of memcpy). */
#define COPY_CHUNK (1u << 20)
/* Records created or linked between two looks at the epoch. */
#define RECORDS_PER_GC_CHECK 256

static MonoObject *fill_array(MonoArray *objs, uint32_t i, const rt_class_plan *p,
                              const sd_record *rec, uint64_t *seen);

/* Copies a string record's characters into the string objs[i], in chunks that give way to
 * collections. */
static MonoObject *fill_string(MonoArray *objs, uint32_t i, const sd_record *rec, uint64_t *seen)
{
    size_t bytes = 2 * (size_t)rec->elements;
    for (size_t at = 0; at < bytes; at += COPY_CHUNK) {
        if (at)
            give_way(seen);
        MonoObject *o = entry_of(objs, i); /* afresh after a chance to collect */
        memcpy((uint8_t *)rt_string_chars(o) + at, rec->data + at,
               bytes - at < COPY_CHUNK ? bytes - at : COPY_CHUNK);
    }
    return entry_of(objs, i);
}

/* Is o, made by a managed factory for record rec, of the record's class and length? */
static int made_as(MonoObject *o, const rt_class_plan *p, const sd_record *rec)
{
    if (rt_plan_known(o) != p)
        return 0;
    if (p->shape == RT_STRING)
        return (uint64_t)rt_string_length(o) == rec->elements;
    return p->shape == RT_OBJECT || rt_array_length(o) == rec->elements;
}

/* Can an array of plan p have the record's bounds? A T[] is always zero-based (T[*] and T[,]
 * take any lower bound); *lower is the one it cannot have. Checked before anything is made. */
static int bounds_fit(const rt_class_plan *p, const sd_record *rec, int32_t *lower)
{
    *lower = rec->lower_bounds[0];
    return !(p->shape == RT_ARRAY && p->vector && rec->lower_bounds[0]);
}

/* Makes record i's object, without its data (no constructor runs), and stores it in objs[i] at
 * once: the pinned objs keeps it reachable while later ones allocate, and every address is
 * fetched from it afresh. A collection is made empty and uninitialised, and the E[] of its
 * elements in items[i]: it is rebuilt from them once every reference is linked. An object already
 * in objs[i] — made by a managed factory (made: checked here), or one of a graph reused — is
 * kept. NULL when it cannot be made (out of memory, or bounds_fit refuses). Everything a read
 * can fail at while making objects fails here, before any data is written (fill). */
static MonoObject *make_object(MonoArray *objs, MonoArray *items, uint32_t i,
                               const rt_class_plan *p, const sd_record *rec, MonoDomain *domain,
                               int made)
{
    MonoObject *o = entry_of(objs, i);
    if (o)
        return made && !made_as(o, p, rec) ? NULL : o;
    if (p->shape == RT_COLLECTION) {
        if (!(o = mono_object_new_specific(p->vtable)))
            return NULL;
        hold_at(objs, i, o);
        return make_object(items, NULL, i, p->items, rec, domain, 0) ? entry_of(objs, i) : NULL;
    }
    if (p->shape == RT_STRING)
        o = (MonoObject *)mono_string_new_size(domain, (int32_t)rec->elements);
    else if (p->shape == RT_OBJECT)
        o = mono_object_new_specific(p->vtable); /* a value type too: an empty box */
    else {                                       /* an array, or a collection's elements as E[] */
        uintptr_t lengths[SD_MAX_RANK];
        intptr_t lower[SD_MAX_RANK];
        int zero_based = 1;
        int32_t bad;
        for (uint32_t d = 0; d < p->rank; d++) {
            lengths[d] = rec->lengths[d];
            lower[d] = rec->lower_bounds[d];
            zero_based &= lower[d] == 0;
        }
        if (!bounds_fit(p, rec, &bad))
            return NULL;
        o = (MonoObject *)(p->rank == 1 && zero_based
                               ? mono_array_new_specific(p->vtable, lengths[0])
                               : mono_array_new_full(domain, p->klass, lengths,
                                                     zero_based ? NULL : lower));
    }
    if (!o)
        return NULL;
    hold_at(objs, i, o);
    return o;
}

/* Copies record i's data into its object (made or reused), around the reference slots: those
 * keep what allocation left (zero) or what a reused object holds until linking stores a checked
 * object there, so no object is ever visible to the GC with wire bytes in a reference slot. A
 * large array or string is copied in chunks that give way to collections. Cannot fail. */
static void fill(MonoArray *objs, MonoArray *items, uint32_t i, const rt_class_plan *p,
                 const sd_record *rec, uint64_t *seen)
{
    if (p->shape == RT_OBJECT)
        copy_data((uint8_t *)entry_of(objs, i) + sizeof(MonoObject), rec->data, p);
    else if (p->shape == RT_STRING)
        fill_string(objs, i, rec, seen);
    else if (p->shape == RT_COLLECTION)
        fill_array(items, i, p->items, rec, seen);
    else
        fill_array(objs, i, p, rec, seen);
}

/* Copies an array record's element data into the array objs[i] (references come later). */
static MonoObject *fill_array(MonoArray *objs, uint32_t i, const rt_class_plan *p,
                              const sd_record *rec, uint64_t *seen)
{
    if (p->element == RT_ELEM_REFS || !p->data_size)
        return entry_of(objs, i);
    if (p->element == RT_ELEM_RAW && !p->nall && rec->elements * p->data_size <= COPY_CHUNK) {
        /* the common small array: one copy (and no division per array) */
        memcpy(rt_array_data(entry_of(objs, i)), rec->data, rec->elements * p->data_size);
        return entry_of(objs, i);
    }
    size_t stride = p->element == RT_ELEM_STRUCTS ? p->data_size + 4u * p->nslots : p->data_size;
    size_t per_chunk = COPY_CHUNK / p->data_size ? COPY_CHUNK / p->data_size : 1;
    for (uint64_t e = 0; e < rec->elements;) {
        uint64_t n = rec->elements - e < per_chunk ? rec->elements - e : per_chunk;
        uint8_t *data = rt_array_data(entry_of(objs, i)) + e * p->data_size;
        if (p->element == RT_ELEM_RAW && !p->nall)
            memcpy(data, rec->data + e * p->data_size, n * p->data_size);
        else
            for (uint64_t k = 0; k < n; k++)
                copy_data(data + k * p->data_size, rec->data + (e + k) * stride, p);
        e += n;
        if (e < rec->elements)
            give_way(seen);
    }
    return entry_of(objs, i);
}

/* The address of reference slot s of element e (0 for objects) of record i, held in holder[i]
 * (a collection's elements are in its E[]). Computed afresh for every store: the assignability
 * check before it may let a collection move the objects. */
static void **slot_address(MonoArray *holder, const rt_class_plan *p, uint32_t i, uint64_t e,
                           uint32_t s)
{
    MonoObject *o = entry_of(holder, i);
    uint8_t *data = p->shape == RT_OBJECT ? (uint8_t *)o + sizeof(MonoObject) : rt_array_data(o);
    return (void **)(data + e * p->data_size + p->slots[s].offset);
}

/* Is an object of plan `actual` assignable to `declared`? Types are few, references many: one
 * class check per (record type, slot class) pair, remembered in a small cache. */
typedef struct fit_cache {
    uint64_t
        filled; /* bit h: entry h holds a pair (so a new cache needs one store, not a memset) */
    const rt_class_plan *actual[64];
    MonoClass *declared[64];
    int fits[64];
} fit_cache;

static int fits(fit_cache *c, const rt_class_plan *actual, MonoClass *declared)
{
    size_t h = (((uintptr_t)actual >> 4) ^ ((uintptr_t)declared >> 4)) & 63;
    if ((c->filled >> h & 1) && c->actual[h] == actual && c->declared[h] == declared)
        return c->fits[h];
    int ok = mono_class_is_assignable_from(declared, actual->klass);
    c->filled |= (uint64_t)1 << h;
    c->actual[h] = actual;
    c->declared[h] = declared;
    c->fits[h] = ok;
    return ok;
}

/* Where a record's references lie: *groups groups of nslots, *stride bytes apart (an object
 * has one group). 0 when it has none to link (strings, arrays of raw elements). */
static int reference_groups(const rt_class_plan *p, const sd_record *rec, uint64_t *groups,
                            size_t *stride)
{
    if (p->shape == RT_STRING || (p->shape != RT_OBJECT && p->element == RT_ELEM_RAW))
        return 0;
    *groups = p->shape == RT_OBJECT ? 1 : rec->elements;
    *stride = p->shape == RT_OBJECT        ? 0
              : p->element == RT_ELEM_REFS ? 4
                                           : p->data_size + 4u * p->nslots;
    return 1;
}

/* A record as validation placed it: an array's lengths and lower bounds precede its data. */
static void record_at(const sd_place *place, const sd_type *types, sd_record *rec)
{
    const sd_type *t = &types[place->type_index];
    rec->type_index = place->type_index;
    rec->data = place->data;
    rec->refs = place->refs;
    rec->elements = place->elements;
    if (t->kind == SD_ARRAY || t->kind == SD_COLLECTION) {
        const uint8_t *bounds = place->data - 8u * t->rank;
        for (uint32_t d = 0; d < t->rank; d++) {
            rec->lengths[d] = sd_u32(bounds + 4 * d);
            rec->lower_bounds[d] = sd_i32(bounds + 4 * t->rank + 4 * d);
        }
    }
}

/* ---- refusals: what the message holds, where, what was declared there, and the fix ----
 * Run only on the way out of a failed read: they may call Mono, allocate, and walk the message
 * again. */

/* What a refusal needs to know of the message. */
typedef struct message {
    const sd_place *places;
    const sd_type *types;
    const sd_header *h;
    const rt_class_plan *const *plans; /* by type index; NULL where a type is not resolved */
    MonoClass *expected;
} message;

/* The length of a qualified name ("Ns.Name, image") without its assembly. */
static int short_len(const char *name, uint32_t len)
{
    for (uint32_t i = len; i-- > 1;)
        if (name[i - 1] == ',' && name[i] == ' ')
            return (int)(i - 1);
    return (int)len;
}

/* A class's name for messages, without its assembly, into buf. */
static const char *class_text(MonoClass *k, char *buf, size_t cap)
{
    const rt_class_plan *p = k ? rt_plan_for_class(k) : NULL;
    if (p) {
        snprintf(buf, cap, "%.*s", short_len(p->qualified_name, p->qualified_name_len),
                 p->qualified_name);
    } else {
        char *name = k ? rt_class_name(k) : NULL;
        snprintf(buf, cap, "%s", name ? name : "?");
        free(name);
    }
    return buf;
}

/* Where a record's references lie on the wire, by its type entry (the plan may be unknown):
 * *groups groups of *per, *stride bytes apart. 0 when it has none. */
static int wire_references(const sd_type *t, const sd_place *place, uint64_t *groups, uint32_t *per,
                           size_t *stride)
{
    if (!place->refs)
        return 0;
    int array_like = t->kind == SD_ARRAY || t->kind == SD_COLLECTION;
    *groups = array_like ? place->elements : 1;
    *per = array_like && t->element == SD_ELEM_REFS ? 1 : t->ref_count;
    *stride = t->element == SD_ELEM_STRUCTS ? t->data_size + 4u * t->ref_count : 4u * *per;
    return 1;
}

/* Appends element e's indices in an array record: "[3]", "[1,2]" (with its lower bounds). */
static void append_index(const sd_record *rec, uint32_t rank, uint64_t e, char *out, size_t cap)
{
    int64_t index[SD_MAX_RANK];
    for (uint32_t d = rank; d-- > 0;) {
        index[d] = (int64_t)(rec->lengths[d] ? e % rec->lengths[d] : 0) + rec->lower_bounds[d];
        e = rec->lengths[d] ? e / rec->lengths[d] : 0;
    }
    text_append(out, cap, "[");
    for (uint32_t d = 0; d < rank; d++)
        text_append(out, cap, d ? ",%lld" : "%lld", (long long)index[d]);
    text_append(out, cap, "]");
}

/* Appends the step from record i to its reference s of group e: ".Next", "[3]", "[1,2].Label"
 * (an array's indices with its lower bounds). Sets *declared to the slot's declared class (NULL
 * when the record's type is not resolved here). */
static void step_text(const message *m, uint32_t i, uint64_t e, uint32_t s, char *out, size_t cap,
                      MonoClass **declared)
{
    sd_record rec;
    record_at(&m->places[i], m->types, &rec);
    const sd_type *t = &m->types[rec.type_index];
    const rt_class_plan *p = m->plans[rec.type_index];
    const char *name = p && s < p->nslots ? p->slots[s].name : NULL;
    *declared = p && s < p->nslots ? p->slots[s].declared : NULL;
    if (t->kind == SD_OBJECT) {
        if (name)
            text_append(out, cap, ".%s", name);
        else
            text_append(out, cap, ".(reference %u)", s);
        return;
    }
    append_index(&rec, t->rank, e, out, cap);
    if (t->element == SD_ELEM_STRUCTS) {
        if (name && *name)
            text_append(out, cap, ".%s", name);
        else if (!name)
            text_append(out, cap, ".(reference %u)", s);
    }
}

/* The path from the root to the first record, in breadth-first order of the message's
 * references, that is record `which` (by_type 0) or of type `which` (by_type 1): "root",
 * "root.Shapes[2].Next" (a long one keeps its first and last steps). *declared: the class
 * declared where it is held (the expected class for the root; NULL when not known). Returns the
 * record found, or -1 (out then says why). */
static int64_t path_text(const message *m, int by_type, uint32_t which, char *out, size_t cap,
                         MonoClass **declared)
{
    uint32_t n = m->h->record_count, root = (uint32_t)m->h->root;
    *declared = NULL;
    out[0] = '\0';
    int64_t found = -1;
    int32_t *parent = malloc((size_t)n * sizeof *parent);
    uint32_t *slot = malloc((size_t)n * sizeof *slot), *queue = malloc((size_t)n * sizeof *queue);
    uint64_t *group = malloc((size_t)n * sizeof *group);
    if (!parent || !slot || !queue || !group) {
        snprintf(out, cap, "(a record whose path could not be traced: out of memory)");
        goto done;
    }
    memset(parent, 0xff, (size_t)n * sizeof *parent); /* -1: not reached */
    parent[root] = (int32_t)root;
    queue[0] = root;
    for (uint32_t head = 0, tail = 1; head < tail && found < 0; head++) {
        uint32_t i = queue[head];
        if (by_type ? m->places[i].type_index == which : i == which) {
            found = i;
            break;
        }
        const sd_type *t = &m->types[m->places[i].type_index];
        uint64_t groups;
        uint32_t per;
        size_t stride;
        if (!wire_references(t, &m->places[i], &groups, &per, &stride))
            continue;
        for (uint64_t e = 0; e < groups; e++)
            for (uint32_t s = 0; s < per; s++) {
                int32_t to = sd_i32(m->places[i].refs + e * stride + 4 * s);
                if (to >= 0 && parent[to] < 0) {
                    parent[to] = (int32_t)i;
                    group[to] = e;
                    slot[to] = s;
                    queue[tail++] = (uint32_t)to;
                }
            }
    }
    if (found < 0) { /* not reached from the root (bytes no writer makes) */
        for (uint32_t i = 0; i < n && found < 0; i++)
            if (by_type ? m->places[i].type_index == which : i == which)
                found = i;
        if (found >= 0)
            snprintf(out, cap, "record %lld (not reached from the root)", (long long)found);
        else
            snprintf(out, cap, "the type table (no record of that type)");
        found = -1;
        goto done;
    }
    uint32_t depth = 0;
    for (uint32_t at = (uint32_t)found; at != root; at = (uint32_t)parent[at])
        queue[depth++] = at; /* the record found first, the root's child last */
    snprintf(out, cap, "root");
    *declared = m->expected;
    enum { HEAD = 6, TAIL = 8 };
    for (uint32_t d = depth; d-- > 0;) {
        uint32_t from_root = depth - 1 - d;
        if (depth > HEAD + TAIL && from_root == HEAD)
            text_append(out, cap, "(+%u steps)", depth - HEAD - TAIL);
        MonoClass *k = NULL;
        char step[256] = "";
        step_text(m, (uint32_t)parent[queue[d]], group[queue[d]], slot[queue[d]], step, sizeof step,
                  &k);
        *declared = k;
        if (!(depth > HEAD + TAIL && from_root >= HEAD && d >= TAIL))
            text_append(out, cap, "%s", step);
    }
done:
    free(parent);
    free(slot);
    free(queue);
    free(group);
    return found;
}

/* Fails the read: type entry `type` of the message (plan p, NULL when it is not allowed) cannot
 * be received. Names the expected class, the class found, where it is held and what to change. */
static int refuse_type(const message *m, uint32_t type, const rt_class_plan *p)
{
    char path[400], want[256], held[256];
    MonoClass *declared;
    const sd_type *t = &m->types[type];
    int found_len = short_len(t->name, t->name_len);
    path_text(m, 1, type, path, sizeof path, &declared);
    class_text(m->expected, want, sizeof want);
    char where[300] = ""; /* " where a D is declared", not at the root */
    if (declared && declared != m->expected)
        snprintf(where, sizeof where, " where a %s is declared",
                 class_text(declared, held, sizeof held));
    else if (declared && strcmp(path, "root"))
        snprintf(where, sizeof where, " where a %s is declared", want);
    const char *d = declared ? (declared == m->expected ? want : held) : want;
    if (p) {
        const char *why =
            p->denied     ? p->denied
            : p->abstract ? "it is abstract or an interface, so the bytes are corrupt or hostile"
            : !p->vtable  ? "it cannot be instantiated here"
                          : NULL;
        if (why)
            return error_record(
                SD_ERR_SERIALIZATION, NULL,
                "receiving a %s: %s holds a %.*s%s, which cannot be created from this message: %s",
                want, path, found_len, t->name, where, why);
        return error_record(
            SD_ERR_SERIALIZATION, NULL,
            "receiving a %s: %s holds a %.*s%s, whose layout here (%u data bytes, %u references) "
            "differs from the message's (%u, %u): both ends must run the same assemblies",
            want, path, found_len, t->name, where, p->data_size, sd_wire_ref_count(p), t->data_size,
            t->ref_count);
    }
    MonoClass *k = class_named(t);
    int at_root = !strcmp(path, "root");
    /* after ", " */
    int image_len = found_len + 2 <= (int)t->name_len ? (int)t->name_len - found_len - 2 : 0;
    if (!k && memchr(t->name, '<', (size_t)found_len))
        return error_record(
            SD_ERR_SERIALIZATION, NULL,
            "receiving a %s: %s holds a %.*s%s, which is not allowed: a generic class is received "
            "only if its definition is marked [Transportable] (or is a standard collection), its "
            "type arguments are each a framework value, object, a class marked [Transportable] or "
            "an array or collection of them, within its constraints, and it is loaded here "
            "(assembly %.*s)",
            want, path, found_len, t->name, where, image_len, t->name + t->name_len - image_len);
    if (!k)
        return error_record(SD_ERR_SERIALIZATION, NULL,
                            "receiving a %s: %s holds a %.*s%s, which is not allowed: no class of "
                            "that name that may be received is loaded here (assembly %.*s): both "
                            "ends must run the same assemblies",
                            want, path, found_len, t->name, where, image_len,
                            t->name + t->name_len - image_len);
    if (declared && rt_is_framework_class(k) && mono_class_is_assignable_from(declared, k))
        return error_record(
            SD_ERR_SERIALIZATION, NULL,
            "receiving a %s: %s holds a %.*s%s, which is not allowed: where a %s is declared, a "
            "framework type is received only if it is a value (a primitive, decimal, DateTime, "
            "TimeSpan, DateTimeOffset, Guid, string), an array or a standard collection of them",
            want, path, found_len, t->name, where, d);
    if (declared && mono_class_is_assignable_from(declared, k))
        return error_record(SD_ERR_SERIALIZATION, NULL,
                            "receiving a %s: %s holds a %.*s%s, which is not allowed: %.*s derives "
                            "from %s but is not "
                            "marked [Transportable]; mark class %.*s [Transportable] so that it "
                            "may be received as a "
                            "%s%s%.*s",
                            want, path, found_len, t->name, where, found_len, t->name, d, found_len,
                            t->name, d, at_root ? ", or receive it as a " : "",
                            at_root ? found_len : 0, t->name);
    if (at_root)
        return error_record(SD_ERR_SERIALIZATION, NULL,
                            "receiving a %s: root holds a %.*s, which is not allowed: %.*s is not "
                            "a %s; receive it as "
                            "a %.*s, or send a %s",
                            want, found_len, t->name, found_len, t->name, want, found_len, t->name,
                            want);
    return error_record(
        SD_ERR_SERIALIZATION, NULL,
        "receiving a %s: %s holds a %.*s%s, which is not allowed: %.*s is not a %s (the bytes are "
        "corrupt or hostile, or the two ends run different assemblies)",
        want, path, found_len, t->name, where, found_len, t->name, d);
}

/* Fails the read: reference s of group e of record i names record `to`, which is not of a class
 * the slot accepts (or, with i == -1, the root is not an expected). */
static int refuse_link(const message *m, int64_t i, uint64_t e, uint32_t s, uint32_t to)
{
    char path[400], want[256], held[256], found[256];
    MonoClass *declared = m->expected;
    const rt_class_plan *tp = m->plans[m->places[to].type_index];
    class_text(m->expected, want, sizeof want);
    class_text(tp->klass, found, sizeof found);
    if (i < 0)
        return error_record(
            SD_ERR_SERIALIZATION, NULL,
            "receiving a %s: root holds a %s, which is not a %s; receive it as a %s, or send a %s",
            want, found, want, found, want);
    path_text(m, 0, (uint32_t)i, path, sizeof path, &declared);
    step_text(m, (uint32_t)i, e, s, path + strlen(path), sizeof path - strlen(path), &declared);
    return error_record(
        SD_ERR_SERIALIZATION, NULL,
        "receiving a %s: %s holds a %s where a %s is declared, and %s is not a %s (the bytes are "
        "corrupt or hostile, or the two ends run different assemblies)",
        want, path, found, class_text(declared, held, sizeof held), found, held);
}

/* Fails the read: record i is a T[] (always zero-based) with another lower bound. */
static int refuse_bounds(const message *m, uint32_t i, int32_t lower)
{
    char path[400], want[256], found[256];
    MonoClass *declared;
    path_text(m, 0, i, path, sizeof path, &declared);
    class_text(m->expected, want, sizeof want);
    class_text(m->plans[m->places[i].type_index]->klass, found, sizeof found);
    return error_record(SD_ERR_SERIALIZATION, NULL,
                        "receiving a %s: %s holds a %s with lower bound %d, but a %s is always "
                        "zero-based (the bytes "
                        "are corrupt or hostile)",
                        want, path, found, lower, found);
}

/* Fails the read: value v of element e (an object: 0) of record i, whose bytes are data, is
 * not one the runtime can make (sd_values.c). Names the path to it and the value. */
static int refuse_value(const message *m, uint32_t i, uint64_t e, const rt_value_check *v,
                        const uint8_t *data)
{
    char path[400], want[256], what[200];
    MonoClass *declared;
    sd_record rec;
    record_at(&m->places[i], m->types, &rec);
    const sd_type *t = &m->types[rec.type_index];
    path_text(m, 0, i, path, sizeof path, &declared);
    if (t->kind != SD_OBJECT)
        append_index(&rec, t->rank, e, path, sizeof path);
    if (v->name)
        text_append(path, sizeof path, ".%s", v->name);
    sd_value_text(v, data, what, sizeof what);
    return error_record(SD_ERR_SERIALIZATION, NULL,
                        "receiving a %s: %s holds %s, which the runtime never makes (the bytes "
                        "are corrupt or hostile)",
                        class_text(m->expected, want, sizeof want), path, what);
}

/* Every value of the message whose bytes the runtime constrains (a bool, decimal, DateTime or
 * DateTimeOffset, wherever it lies: class_plan.c lists them per class) is checked in the wire
 * bytes before anything is allocated or written, so no object ever holds one no program could
 * make. A message none of whose types holds such a value pays one test per type. A long array
 * gives way to collections every megabyte, as a copy does (nothing is held yet). */
static int check_values(const message *m, uint64_t *seen)
{
    uint32_t t = 0;
    while (t < m->h->type_count && !m->plans[t]->nvalues)
        t++;
    if (t == m->h->type_count)
        return MPC_OK;
    *seen = gch_epoch();
    for (uint32_t i = 0; i < m->h->record_count; i++) {
        const sd_place *place = &m->places[i];
        const rt_class_plan *p = m->plans[place->type_index];
        if (!p->nvalues)
            continue;
        uint64_t n = p->shape == RT_OBJECT ? 1 : place->elements;
        size_t stride =
            p->element == RT_ELEM_STRUCTS ? p->data_size + 4u * p->nslots : p->data_size;
        uint64_t per_chunk = COPY_CHUNK / stride ? COPY_CHUNK / stride : 1;
        for (uint64_t e = 0; e < n;) {
            uint64_t chunk = n - e < per_chunk ? n - e : per_chunk;
            uint32_t bad;
            uint64_t at = sd_values_scan(p, place->data + e * stride, chunk, stride, &bad);
            if (at < chunk)
                return refuse_value(m, i, e + at, &p->values[bad], place->data + (e + at) * stride);
            if ((e += chunk) < n)
                give_way(seen);
        }
    }
    return MPC_OK;
}

/* Links record i's references. It fails only where a reference does not fit its slot, which
 * check_links, when it ran, has ruled out: then it cannot fail. */
static int link_record(MonoArray *objs, MonoArray *items, const rt_class_plan *p,
                       const sd_record *rec, uint32_t i, const sd_place *places,
                       const rt_class_plan **plans, fit_cache *cache, uint64_t *seen,
                       const message *m)
{
    uint64_t groups;
    size_t stride;
    if (!reference_groups(p, rec, &groups, &stride))
        return MPC_OK;
    MonoArray *holder = p->shape == RT_COLLECTION ? items : objs;
    for (uint64_t e = 0; e < groups; e++) {
        for (uint32_t s = 0; s < p->nslots; s++) {
            int32_t idx = sd_i32(rec->refs + e * stride + 4 * s);
            if (idx <
                0) { /* null: a new object's slot is null already, a reused one's is cleared */
                void **slot = slot_address(holder, p, i, e, s);
                if (*slot)
                    *slot = NULL; /* (storing null needs no write barrier) */
                continue;
            }
            if (!fits(cache, plans[places[idx].type_index], p->slots[s].declared))
                return refuse_link(m, i, e, s, (uint32_t)idx);
            /* computed after the check: the store gets current addresses */
            mono_gc_wbarrier_generic_store(slot_address(holder, p, i, e, s), entry_of(objs, idx));
        }
        if (e % (RECORDS_PER_GC_CHECK * 16) == RECORDS_PER_GC_CHECK * 16 - 1)
            give_way(seen); /* a large array of references: addresses are fetched per store */
    }
    return MPC_OK;
}

/* The pinned object[] that keeps a read's objects reachable while the rest are made. A thread
 * keeps one (up to HOLDER_KEPT entries) for its next reads: a new one per read cost ~10% of a
 * read of small objects, and one of more than ~1000 entries is a large object, whose memory is
 * fresh pages each time. A read nested in another on the thread (managed code that a read runs:
 * type initializers, collections' Equals/GetHashCode) makes its own. */
#define HOLDER_KEPT (1u << 16)
static __thread uint32_t kept_holder; /* pinned GC handle, 0: none */
static __thread uint32_t kept_holder_length;
static __thread int kept_holder_busy;

typedef struct holder {
    MonoArray *array;
    uint32_t handle, length;
    int kept; /* the thread's kept one */
} holder;

static int holder_take(holder *h, uint32_t n, MonoDomain *domain)
{
    *h = (holder){0};
    if (!kept_holder_busy && kept_holder && kept_holder_length >= n) {
        kept_holder_busy = h->kept = 1;
        h->handle = kept_holder;
        h->length = kept_holder_length;
        h->array = (MonoArray *)mono_gchandle_get_target(kept_holder);
        return 0;
    }
    uint32_t length = n;
    int keep = !kept_holder_busy && n <= HOLDER_KEPT;
    if (keep && length < 1024)
        length = 1024; /* small reads share one */
    if (!(h->array = mono_array_new(domain, mono_get_object_class(), length)))
        return -1;
    h->handle = mono_gchandle_new((MonoObject *)h->array, 1);
    h->length = length;
    if (keep) {
        if (kept_holder)
            mono_gchandle_free(kept_holder);
        kept_holder = h->handle;
        kept_holder_length = length;
        kept_holder_busy = h->kept = 1;
    }
    return 0;
}

/* A read's native work arrays (the validator's index of the records, the records' plans, the
 * numbers handed to the managed factories) are kept per thread for its next read too, up to
 * KEPT_WORK_BYTES each: freed after every read, glibc gave them back to the system each time
 * (they lie at the top of its heap), and the next read took them again as fresh pages — a read
 * of 8192 records faulted in 416 KiB. A read nested in another one on the thread (see the
 * holder) mallocs its own. */
#define KEPT_WORK_BYTES \
    ((size_t)2 << 20) /* the index of 65536 records: as many as the holder keeps */
typedef struct work_array {
    void *p;
    size_t bytes;
} work_array;
static __thread work_array kept_places, kept_numbers;
static __thread int kept_work_busy;

/* Memory for bytes: the thread's kept array when the read holds them (mine) and it is large
 * enough, else malloc'd. */
static void *work_take(const work_array *kept, size_t bytes, int mine)
{
    return mine && kept->p && kept->bytes >= bytes ? kept->p : malloc(bytes ? bytes : 1);
}

/* The read is done with p (bytes long, from work_take): kept for the thread's next read when the
 * read holds the kept arrays and p is not too large, freed otherwise. */
static void work_give(work_array *kept, void *p, size_t bytes, int mine)
{
    if (!p || p == kept->p)
        return;
    if (mine && bytes <= KEPT_WORK_BYTES && bytes > kept->bytes) {
        free(kept->p);
        *kept = (work_array){p, bytes};
    } else {
        free(p);
    }
}

void sd_thread_stopped(void)
{
    sd_writer_thread_stopped();
    if (kept_holder && !kept_holder_busy)
        mono_gchandle_free(kept_holder);
    kept_holder = 0;
    kept_holder_length = 0;
    if (!kept_work_busy) {
        work_array *all[] = {&kept_places, &kept_numbers};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
            free(all[i]->p);
            *all[i] = (work_array){0};
        }
    }
}

/* Gives the holder back; its first `used` entries are cleared (a kept one must not keep a read's
 * objects alive). */
static void holder_give(holder *h, uint32_t used)
{
    if (!h->handle)
        return;
    if (!h->kept) {
        mono_gchandle_free(h->handle);
        return;
    }
    MonoArray *a = (MonoArray *)mono_gchandle_get_target(h->handle); /* pinned: the same array */
    memset(rt_array_data((MonoObject *)a), 0,
           (size_t)(used < h->length ? used : h->length) * sizeof(void *));
    kept_holder_busy = 0;
}

/* Rebuilds every collection of the message from its elements, through the collections' public
 * API (System.MP's SdtoCollections.Rebuild, one managed call): duplicate keys, null keys, keys
 * that collide (hash flooding) and the like fail the read there, so no inconsistent collection
 * is ever made. Its RebuildFailure says which record failed (its int field Record): the refusal
 * names that collection's path. A Mono call that runs managed code: the caller holds no address
 * but the pinned arrays. */
static int rebuild_collections(MonoArray *objs, MonoArray *items, const message *m)
{
    MonoMethod *method = sd_managed(SD_COLLECTIONS_REBUILD);
    if (!method)
        return error_record(RT_ERR_RUNTIME, NULL,
                            "SdtoCollections.Rebuild not found: no collection can be received");
    void *args[2] = {objs, items};
    MonoObject *exc = NULL;
    mono_runtime_invoke(method, NULL, args, &exc);
    if (!exc)
        return MPC_OK;
    char *utf8 = exception_line(exc);
    MonoClassField *f = mono_class_get_field_from_name(mono_object_get_class(exc), "Record");
    int32_t record = -1;
    if (f)
        mono_field_get_value(exc, f, &record);
    if (record >= 0 && (uint32_t)record < m->h->record_count) {
        char path[400], want[256];
        MonoClass *declared;
        const sd_type *t = &m->types[m->places[record].type_index];
        path_text(m, 0, (uint32_t)record, path, sizeof path, &declared);
        error_record(SD_ERR_SERIALIZATION, NULL,
                     "receiving a %s: %s, a %.*s of %llu elements, cannot be rebuilt: %s",
                     class_text(m->expected, want, sizeof want), path,
                     short_len(t->name, t->name_len), t->name,
                     (unsigned long long)m->places[record].elements, utf8 ? utf8 : "?");
    } else {
        error_record(SD_ERR_SERIALIZATION, NULL,
                     "a collection in the message cannot be rebuilt: %s", utf8 ? utf8 : "?");
    }
    mono_free(utf8);
    return SD_ERR_SERIALIZATION;
}

/* ---- objects made and linked in JIT-compiled code (System.MP's SdtoFactories) ----
 * Through the embedding API each object costs an allocation call and a write-barrier call to
 * keep it in the holder, and each reference another barrier call; one managed call per message
 * makes them all with `new` and stores the references with the JIT's inline barrier instead.
 * The reader checks every reference first and copies the data afterwards, and links itself the
 * records whose class has no linker. The call costs a few hundred ns: from 8 records on it pays
 * (16 records: 3.34 -> 2.75 µs a read, 8: 2.58 -> 2.41). */
#define MANAGED_CREATE_RECORDS 8

/* Asks SdtoFactories' registrar (type of p[, fields]) once for a number > 0, kept in *cache (-1:
 * none); 0 when there is none. fields: a FieldInfo[] or NULL. A Mono call that runs managed
 * code: the caller holds no address but pinned ones. */
static int ask_number(atomic_int *cache, sd_managed_method registrar, const rt_class_plan *p,
                      MonoArray *fields, MonoArray *offsets, MonoDomain *domain)
{
    int n = -1;
    MonoMethod *m = sd_managed(registrar);
    MonoReflectionType *type =
        m ? mono_type_get_object(domain, mono_class_get_type(p->klass)) : NULL;
    if (type) {
        void *args[3] = {type, fields, offsets}; /* (RegisterLinker takes the first two) */
        MonoObject *exc = NULL, *number = mono_runtime_invoke(m, NULL, args, &exc);
        if (number && !exc && *(int32_t *)mono_object_unbox(number) > 0)
            n = *(int32_t *)mono_object_unbox(number);
    }
    atomic_store_explicit(cache, n, memory_order_release);
    return n > 0 ? n : 0;
}

/* System.Reflection.FieldInfo, found once; NULL if the corlib lacks it. */
static MonoClass *field_info_class(void)
{
    static _Atomic(MonoClass *) field_info;
    MonoClass *k = atomic_load(&field_info);
    if (!k && (k = mono_class_from_name(mono_get_corlib(), "System.Reflection", "FieldInfo")))
        atomic_store(&field_info, k);
    return k;
}

/* The FieldInfo[] and int[] of the value fields a compiled factory of class p copies from a record
 * (SdtoFactories.MakeFactory): every instance field of p and its bases that is not a reference,
 * with its offset in the instance data. *fields stays NULL when some value field overlaps a
 * reference slot (a struct holding a reference: the reader copies it around the slot), so that no
 * wire byte reaches a reference slot; or when out of memory. Mono calls that allocate: the
 * caller holds no address but pinned ones. */
static void value_fields(const rt_class_plan *p, MonoDomain *domain, MonoArray **fields,
                         MonoArray **offsets)
{
    MonoClass *fi = field_info_class(), *object = mono_get_object_class();
    *fields = *offsets = NULL;
    uint32_t n = 0;
    for (MonoClass *k = p->klass; k && k != object; k = mono_class_get_parent(k)) {
        void *iter = NULL;
        for (MonoClassField *f; (f = mono_class_get_fields(k, &iter));) {
            MonoType *type = mono_field_get_type(f);
            if ((mono_field_get_flags(f) & MONO_FIELD_ATTR_STATIC) || mono_type_is_reference(type))
                continue;
            int align;
            uint32_t at = (uint32_t)mono_field_get_offset(f) - (uint32_t)sizeof(MonoObject),
                     size = (uint32_t)mono_type_size(type, &align), r = 0;
            while (r < p->nruns && p->runs[r].offset + p->runs[r].length <= at)
                r++;
            if (r == p->nruns || p->runs[r].offset > at ||
                p->runs[r].offset + p->runs[r].length < at + size)
                return; /* (part of it is a reference slot) */
            n++;
        }
    }
    MonoArray *f_array = fi ? mono_array_new(domain, fi, n) : NULL;
    uint32_t pin_f = f_array ? mono_gchandle_new((MonoObject *)f_array, 1) : 0;
    MonoArray *o_array = f_array ? mono_array_new(domain, mono_get_int32_class(), n) : NULL;
    uint32_t pin_o = o_array ? mono_gchandle_new((MonoObject *)o_array, 1) : 0, k_at = 0;
    for (MonoClass *k = p->klass; o_array && k && k != object; k = mono_class_get_parent(k)) {
        void *iter = NULL;
        for (MonoClassField *f; (f = mono_class_get_fields(k, &iter));) {
            if ((mono_field_get_flags(f) & MONO_FIELD_ATTR_STATIC) ||
                mono_type_is_reference(mono_field_get_type(f)))
                continue;
            MonoReflectionField *info = mono_field_get_object(domain, k, f);
            if (!info || k_at == n) {
                o_array = NULL;
                break;
            }
            mono_array_setref(f_array, k_at, (MonoObject *)info);
            mono_array_set(o_array, int32_t, k_at,
                           (int32_t)(mono_field_get_offset(f) - (int)sizeof(MonoObject)));
            k_at++;
        }
    }
    if (o_array && k_at == n) {
        *fields = f_array;
        *offsets = o_array;
    }
    if (pin_f)
        mono_gchandle_free(pin_f); /* (the caller's arguments keep them alive: it pins them) */
    if (pin_o)
        mono_gchandle_free(pin_o);
}

/* What a record's compiled factory copies: nothing (the reader fills the object), every value
 * field (a class whose value fields value_fields names), or a string's characters or the elements
 * of a T[] whose T holds no reference when they take at most SD_PLACE_COPY_BYTES (element by
 * element: a larger copy is the reader's memcpy, in chunks that give way to collections). */
enum { FILLS_NONE, FILLS_ALL, FILLS_SMALL };
#define SD_PLACE_COPY_BYTES 64u

static inline int filled_in_managed(int32_t fills, const rt_class_plan *p, const sd_place *place)
{
    return fills == FILLS_ALL ||
           (fills == FILLS_SMALL && place->elements * p->data_size <= SD_PLACE_COPY_BYTES);
}

/* The number of p's managed factory, 0 when it has none; *fills: what it copies (FILLS_*). */
static int factory_of(const rt_class_plan *p, MonoDomain *domain, int32_t *fills)
{
    int n = atomic_load_explicit(&p->factory, memory_order_acquire);
    *fills = atomic_load_explicit(&p->factory_fills, memory_order_relaxed);
    if (n)
        return n > 0 ? n : 0;
    atomic_int *cache = &((rt_class_plan *)p)->factory;
    if (p->shape == RT_OBJECT && !p->value_type) {
        MonoArray *fields, *offsets;
        value_fields(p, domain, &fields, &offsets);
        uint32_t pin_f = fields ? mono_gchandle_new((MonoObject *)fields, 1) : 0;
        uint32_t pin_o = offsets ? mono_gchandle_new((MonoObject *)offsets, 1) : 0;
        *fills = fields ? FILLS_ALL : FILLS_NONE;
        atomic_store_explicit(&((rt_class_plan *)p)->factory_fills, *fills, memory_order_relaxed);
        n = ask_number(cache, SD_FACTORY_REGISTER, p, fields, offsets, domain);
        if (pin_f)
            mono_gchandle_free(pin_f);
        if (pin_o)
            mono_gchandle_free(pin_o);
        return n;
    }
    *fills = FILLS_NONE;
    if (p->shape == RT_STRING) {
        *fills = FILLS_SMALL;
        atomic_store_explicit(&((rt_class_plan *)p)->factory_fills, *fills, memory_order_relaxed);
        return ask_number(cache, SD_FACTORY_REGISTER, p, NULL, NULL, domain);
    }
    if (p->shape == RT_ARRAY && p->vector) {
        /* elements without any reference: copied raw (an empty FieldInfo[] says so) */
        MonoClass *fi = p->element == RT_ELEM_RAW && !p->nall ? field_info_class() : NULL;
        MonoArray *raw = fi ? mono_array_new(domain, fi, 0) : NULL;
        uint32_t pin = raw ? mono_gchandle_new((MonoObject *)raw, 1) : 0;
        *fills = raw ? FILLS_SMALL : FILLS_NONE;
        atomic_store_explicit(&((rt_class_plan *)p)->factory_fills, *fills, memory_order_relaxed);
        n = ask_number(cache, SD_FACTORY_REGISTER, p, raw, NULL, domain);
        if (pin)
            mono_gchandle_free(pin);
        return n;
    }
    atomic_store_explicit(cache, -1, memory_order_release);
    return 0;
}

/* The number of p's managed filler, 0 when it has none: what overwrites the data of a reused
 * object (ORecvInto) in compiled code, the value fields or small elements its factory would copy
 * (*fills says which, as for factory_of). */
static int filler_of(const rt_class_plan *p, MonoDomain *domain, int32_t *fills)
{
    int n = atomic_load_explicit(&p->filler, memory_order_acquire);
    if (n) {
        *fills = n > 0 ? atomic_load_explicit(&p->factory_fills, memory_order_relaxed) : FILLS_NONE;
        return n > 0 ? n : 0;
    }
    atomic_int *cache = &((rt_class_plan *)p)->filler;
    MonoArray *fields = NULL, *offsets = NULL;
    *fills = FILLS_NONE;
    if (p->shape == RT_OBJECT && !p->value_type) {
        value_fields(p, domain, &fields, &offsets);
        *fills = fields ? FILLS_ALL : FILLS_NONE;
    } else if (p->shape == RT_ARRAY && p->vector && p->element == RT_ELEM_RAW && !p->nall) {
        MonoClass *fi = field_info_class(); /* (an empty FieldInfo[]: copied raw) */
        fields = fi ? mono_array_new(domain, fi, 0) : NULL;
        *fills = fields ? FILLS_SMALL : FILLS_NONE;
    }
    if (!fields) {
        atomic_store_explicit(cache, -1, memory_order_release);
        return 0;
    }
    uint32_t pin_f = mono_gchandle_new((MonoObject *)fields, 1);
    uint32_t pin_o = offsets ? mono_gchandle_new((MonoObject *)offsets, 1) : 0;
    /* (the same kind as the factory's: value_fields decides both) */
    atomic_store_explicit(&((rt_class_plan *)p)->factory_fills, *fills, memory_order_relaxed);
    n = ask_number(cache, SD_FILLER_REGISTER, p, fields, offsets, domain);
    mono_gchandle_free(pin_f);
    if (pin_o)
        mono_gchandle_free(pin_o);
    if (!n)
        *fills = FILLS_NONE;
    return n;
}

/* The number of p's managed linker, 0 when it has none: a class whose travelling references are
 * all its own fields, or T[] of references. */
static int linker_of(const rt_class_plan *p, MonoDomain *domain)
{
    int n = atomic_load_explicit(&p->linker, memory_order_acquire);
    if (n)
        return n > 0 ? n : 0;
    atomic_int *cache = &((rt_class_plan *)p)->linker;
    if (p->shape == RT_ARRAY && p->vector && p->element == RT_ELEM_REFS)
        return ask_number(cache, SD_LINKER_REGISTER, p, NULL, NULL, domain);
    int own = p->shape == RT_OBJECT && !p->value_type && p->nslots;
    for (uint32_t s = 0; own && s < p->nslots; s++)
        own = p->slots[s].field != NULL;
    MonoClass *k = own ? field_info_class() : NULL;
    MonoArray *fields = own && k ? mono_array_new(domain, k, p->nslots) : NULL;
    if (!fields) {
        atomic_store_explicit(cache, -1, memory_order_release);
        return 0;
    }
    uint32_t pin = mono_gchandle_new((MonoObject *)fields, 1); /* the calls below allocate */
    for (uint32_t s = 0; s < p->nslots && fields; s++) {
        MonoReflectionField *f =
            mono_field_get_object(domain, p->slots[s].owner, p->slots[s].field);
        if (f)
            mono_array_setref(fields, s, (MonoObject *)f);
        else
            fields = NULL;
    }
    n = fields ? ask_number(cache, SD_LINKER_REGISTER, p, fields, NULL, domain)
               : (atomic_store_explicit(cache, -1, memory_order_release), 0);
    mono_gchandle_free(pin);
    return n;
}

static _Atomic(sd_maker) maker;

#define SD_PLACE_ASSERT(home, name, value)     \
    _Static_assert(SD_PLACE_##name == (value), \
                   "sd_place's layout is not SD_PLACE_LAYOUT's: " #name);
#define SD_PLACE_SIZE sizeof(sd_place)
#define SD_PLACE_DATA offsetof(sd_place, data)
#define SD_PLACE_REFS offsetof(sd_place, refs)
#define SD_PLACE_ELEMENTS offsetof(sd_place, elements)
#define SD_PLACE_TYPE_INDEX offsetof(sd_place, type_index)
SD_PLACE_LAYOUT(SD_PLACE_ASSERT)
#undef SD_PLACE_ASSERT

void sd_set_maker(sd_maker m) { atomic_store(&maker, m); }

/* What a managed creation leaves for the reader, by type: the linker that linked its records (0:
 * the reader links them) and what its factory or filler copied of their data. */
typedef struct managed {
    int32_t *factory; /* one allocation (bytes long): factory, linker, fills, filler, by type */
    size_t bytes;
    const int32_t *linker, *fills;
    int all_filled, all_linked; /* every record's data copied, every reference linked */
} managed;

/* Does a record of plan p have references for link_record to store? */
static int has_links(const rt_class_plan *p)
{
    return p->shape != RT_STRING && (p->shape == RT_OBJECT || p->element != RT_ELEM_RAW) &&
           p->nslots;
}

/* Makes every record's object with its class's managed factory into the holder (its pinned GC
 * handle) at [0, count), copies the data of those whose factory is compiled to, and links those
 * whose class has a linker: 1 when made, 0 when there is no maker, some class has no factory or a
 * length does not fit an int (the reader makes them itself), or the error (recorded). link_only:
 * the objects exist (a graph reused), only fill (where a compiled filler can) and link; then a
 * failure is 0 too, not an error: the reader fills and links every record, each again. Every
 * reference and value must have been checked (check_links, check_values). Runs managed code: the
 * caller holds no address but the pinned holder. */
static int managed_create(uint32_t holder, const sd_place *places, uint32_t count,
                          const rt_class_plan **plans, uint32_t type_count, MonoDomain *domain,
                          int link_only, int mine, managed *out)
{
    sd_maker make = atomic_load(&maker);
    size_t bytes = 4 * (size_t)type_count * sizeof(int32_t);
    int32_t *factory = make ? work_take(&kept_numbers, bytes, mine) : NULL;
    if (!factory)
        return 0; /* (not an error: the reader makes them) */
    int32_t *linker = factory + type_count, *fills = linker + type_count,
            *filler = fills + type_count;
    int all_filled = 1, all_linked = 1, usable = 1, objects = 1;
    for (uint32_t t = 0; t < type_count; t++) {
        factory[t] = link_only ? 0 : factory_of(plans[t], domain, &fills[t]);
        filler[t] = link_only ? filler_of(plans[t], domain, &fills[t]) : 0;
        linker[t] = factory[t] || link_only ? linker_of(plans[t], domain) : 0;
        usable &= link_only || factory[t] != 0;
        all_filled &= fills[t] != FILLS_NONE;
        all_linked &= linker[t] != 0 || !has_links(plans[t]);
        objects &= plans[t]->shape == RT_OBJECT && fills[t] == FILLS_ALL;
    }
    for (uint32_t i = 0; usable && !objects && i < count; i++) { /* (an object: 1 element) */
        usable = link_only || places[i].elements <= INT32_MAX;
        all_filled &=
            filled_in_managed(fills[places[i].type_index], plans[places[i].type_index], &places[i]);
    }
    if (usable &&
        make((intptr_t)holder, (intptr_t)places, (int32_t)count, link_only ? 0 : (intptr_t)factory,
             (intptr_t)linker, link_only ? (intptr_t)filler : 0) == 0) {
        *out = (managed){factory, bytes, linker, fills, all_filled, all_linked};
        return 1;
    }
    work_give(&kept_numbers, factory, bytes, mine);
    if (link_only || !usable)
        return 0; /* (a graph reused is partly linked: the reader links every record again) */
    return error_record(MPC_ERR_NO_MEMORY, NULL,
                        "making the %u objects of a message failed (out of memory?)", count);
}

/* May record i's object be taken from the graph to reuse (candidate o, already at objs[i])? Same
 * class, not a string, a box or a collection; an array with the record's bounds. */
static int reusable(MonoObject *o, const rt_class_plan *p, const sd_record *rec)
{
    if (rt_plan_known(o) != p || (p->shape != RT_OBJECT && p->shape != RT_ARRAY) || p->value_type)
        return 0;
    if (p->shape == RT_OBJECT)
        return 1;
    if (rt_array_length(o) != rec->elements)
        return 0;
    const uint32_t *bounds = *(const uint32_t **)((uint8_t *)o + sizeof(MonoObject));
    for (uint32_t d = 0; bounds && d < p->rank; d++) /* (one-dimensional zero-based: no bounds) */
        if (bounds[2 * d] != rec->lengths[d] || (int32_t)bounds[2 * d + 1] != rec->lower_bounds[d])
            return 0;
    return bounds || (p->rank == 1 && rec->lower_bounds[0] == 0);
}

/* Which record types fit each slot of each type of a message of at most SLOT_FIT_TYPES types
 * and SLOT_FIT_SLOTS slots in all: a bit per type, found when first asked (a class check per
 * pair a message uses), then one bit test per reference. */
#define SLOT_FIT_TYPES 64
#define SLOT_FIT_SLOTS 256
typedef struct slot_fits {
    uint32_t first[SLOT_FIT_TYPES]; /* type t's slots are [first[t], first[t] + nslots) */
    uint32_t slots;                 /* in all */
    uint64_t known[SLOT_FIT_SLOTS], fit[SLOT_FIT_SLOTS];
} slot_fits;

/* Sets up f for the message's types; 0 when it has too many types or slots. */
static int slot_fits_begin(slot_fits *f, const rt_class_plan **plans, uint32_t type_count)
{
    uint32_t n = 0;
    if (type_count > SLOT_FIT_TYPES)
        return 0;
    for (uint32_t t = 0; t < type_count; t++) {
        f->first[t] = n;
        if ((n += plans[t]->nslots) > SLOT_FIT_SLOTS)
            return 0;
    }
    f->slots = n;
    memset(f->known, 0, n * sizeof *f->known);
    return 1;
}

/* The bits of types [0, n). */
static inline uint64_t all_types(uint32_t n)
{
    return n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
}

/* Does a record of type u fit slot s of type t? */
static inline int slot_fits_test(slot_fits *f, fit_cache *cache, const rt_class_plan **plans,
                                 uint32_t t, uint32_t s, uint32_t u)
{
    uint32_t k = f->first[t] + s;
    uint64_t bit = (uint64_t)1 << u;
    if (!(f->known[k] & bit)) {
        f->known[k] |= bit;
        if (fits(cache, plans[u], plans[t]->slots[s].declared))
            f->fit[k] |= bit;
        else
            f->fit[k] &= ~bit;
    }
    return (f->fit[k] & bit) != 0;
}

/* Before anything is created or overwritten: every reference fits its slot, the root fits T.
 * (A record's pieces are read from its place: the bounds record_at would parse are not needed.) */
static int check_links(const sd_place *places, const sd_header *h, const rt_class_plan **plans,
                       MonoClass *expected, fit_cache *cache, const message *m)
{
    slot_fits by_type;
    int masks = slot_fits_begin(&by_type, plans, h->type_count);
    /* types every slot of which any record of the message fits (bit t): nothing to check in
     * their records. Worked out when the pairs are few (a class check each). */
    uint64_t open = 0;
    if (masks && h->type_count * (uint64_t)by_type.slots <= SLOT_FIT_SLOTS) {
        open = all_types(h->type_count);
        for (uint32_t t = 0; t < h->type_count; t++)
            for (uint32_t s = 0; s < plans[t]->nslots; s++)
                for (uint32_t u = 0; u < h->type_count; u++)
                    if (!slot_fits_test(&by_type, cache, plans, t, s, u))
                        open &= ~((uint64_t)1 << t);
    }
    for (uint32_t i = 0; i < h->record_count && open != all_types(h->type_count); i++) {
        uint32_t t = places[i].type_index;
        const rt_class_plan *p = plans[t];
        if (!p->nslots || p->shape == RT_STRING ||
            (p->shape != RT_OBJECT && p->element == RT_ELEM_RAW) || (open >> t & 1))
            continue; /* (nothing to check: no references, or any record fits every slot) */
        uint64_t groups = p->shape == RT_OBJECT ? 1 : places[i].elements;
        size_t stride = p->shape == RT_OBJECT        ? 0
                        : p->element == RT_ELEM_REFS ? 4
                                                     : p->data_size + 4u * p->nslots;
        const uint8_t *refs = places[i].refs;
        for (uint64_t e = 0; e < groups; e++)
            for (uint32_t s = 0; s < p->nslots; s++) {
                int32_t idx = sd_i32(refs + e * stride + 4 * s);
                if (idx < 0)
                    continue;
                uint32_t u = places[idx].type_index;
                if (masks ? !slot_fits_test(&by_type, cache, plans, t, s, u)
                          : !fits(cache, plans[u], p->slots[s].declared))
                    return refuse_link(m, i, e, s, (uint32_t)idx);
            }
    }
    return fits(cache, plans[places[h->root].type_index], expected)
               ? MPC_OK
               : refuse_link(m, -1, 0, 0, (uint32_t)h->root);
}

static int read_message(const uint8_t *buf, size_t len, MonoClass *expected, MonoObject *reuse,
                        MonoObject **result);

int sd_read(const uint8_t *buf, size_t len, MonoClass *expected, MonoObject **result)
{
    return read_message(buf, len, expected, NULL, result);
}

int sd_read_into(const uint8_t *buf, size_t len, MonoClass *expected, MonoObject *reuse,
                 MonoObject **result)
{
    return read_message(buf, len, expected, reuse, result);
}

/* ---- the receive budget: what a read will allocate, refused past the thread's budget ----
 * The managed heap a read takes, estimated from the validated records and this runtime's layout
 * before anything is allocated: every object, array and string of the graph at its size in the
 * heap (header, data, 8-byte alignment); a collection, the collection, the E[] its elements
 * arrive in, and its own storage: a T[n] for a List, Queue or Stack, int[n] buckets and n
 * entries of 8 bytes (hash code, next) plus the element for a HashSet or Dictionary (the runtime
 * rounds n up to a prime: up to ~20% more buckets). The reader's own holder arrays (8 bytes per
 * record, kept per thread) are not counted. */
static __thread int64_t budget_bytes;
static __thread double budget_multiple;

void sd_set_budget(int64_t bytes, double multiple)
{
    budget_bytes = bytes > 0 ? bytes : 0;
    budget_multiple = multiple > 0 ? multiple : 0;
}

#define HEAP_ALIGNED(b) (((b) + 7) & ~(uint64_t)7)
/* a one-dimensional array's header: the object header, bounds and length */
#define ARRAY_HEADER ((uint64_t)sizeof(MonoObject) + 2 * sizeof(void *))

/* The heap bytes record `place`, of plan p, makes its receiver allocate (see above). */
static uint64_t record_heap_bytes(const rt_class_plan *p, const sd_place *place)
{
    uint64_t n = place->elements;
    switch (p->shape) {
    case RT_OBJECT: return HEAP_ALIGNED(sizeof(MonoObject) + (uint64_t)p->data_size);
    case RT_STRING: /* header, length, the characters and a terminating 0 */
        return HEAP_ALIGNED(sizeof(MonoObject) + 4 + 2 * (n + 1));
    case RT_ARRAY: /* T[*] and T[,] carry a length and lower bound per dimension */
        return HEAP_ALIGNED(ARRAY_HEADER + (p->vector ? 0 : 16u * p->rank) + n * p->data_size);
    case RT_COLLECTION: break;
    }
    uint64_t items = HEAP_ALIGNED(ARRAY_HEADER + n * p->data_size);
    int hashed = p->collection->kind == RT_HASHSET || p->collection->kind == RT_DICTIONARY;
    uint64_t storage = hashed ? HEAP_ALIGNED(ARRAY_HEADER + 4 * n) +
                                    HEAP_ALIGNED(ARRAY_HEADER + n * HEAP_ALIGNED(8 + p->data_size))
                              : items;
    return HEAP_ALIGNED((uint64_t)mono_class_instance_size(p->klass)) + items + storage;
}

/* "12.3 MiB": bytes for a refusal's text, into buf. */
static const char *mib_text(double bytes, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.1f MiB", bytes / (1 << 20));
    return buf;
}

/* ---- a read, phase by phase: tables, types, holders, checks, objects, links, root ----
 * Each phase returns MPC_OK or the error (a failed allocation: MPC_ERR_NO_MEMORY, which
 * read_end records); read_end is the one way out, and gives back whatever the read took. The
 * phases run once per read and are static, so the compiler inlines them into read_message;
 * their loops work on locals, as the calls in them may write through pointers. */

/* Tables of a small message (most are), on the reader's stack: such a read needs no heap
 * allocation but the validator's index. (glibc's malloc_consolidate ran on every read once the
 * fit cache, 1280 bytes, came from calloc.) Not cleared: each entry is written before it is
 * read, and the cache says which of its entries are filled. */
typedef struct small_tables {
    const rt_class_plan *allowed[SMALL_TYPES], *plans[SMALL_TYPES];
    sd_type types[SMALL_TYPES];
    fit_cache cache;
} small_tables;

/* What the phases of one read share, and what read_end gives back. */
typedef struct reading {
    const uint8_t *buf;
    size_t len;
    MonoClass *expected;
    MonoObject *reuse;
    sd_header h;
    int mine;         /* this read uses the thread's kept work arrays */
    sd_place *places; /* where each record lies: the message is parsed once */
    small_tables *small;
    allowed r;
    const rt_class_plan **plans; /* by type index */
    sd_type *types;
    fit_cache *cache;
    message m;       /* for refusals */
    int collections; /* some type is a collection: rebuilt once linked */
    MonoDomain *domain;
    holder held;
    uint32_t used;    /* the holder's entries this read may have filled */
    MonoArray *items; /* the elements of the collections, by record */
    uint32_t items_pin;
    managed by_jit;
    int made;          /* every object made by a managed factory, some linked there */
    uint32_t made_new; /* a graph reused: records it has no object for (prepare_reuse) */
    uint64_t seen;     /* the collection epoch last given way to */
} reading;

static size_t places_bytes(const reading *rd)
{
    return (size_t)rd->h.record_count * sizeof *rd->places;
}

/* The type tables, the allow-list and the fit cache. */
static int take_tables(reading *rd)
{
    uint32_t n = rd->h.type_count;
    small_tables *small = rd->small;
    small->cache.filled = 0;
    rd->cache = &small->cache;
    rd->r = (allowed){small->allowed, 0, SMALL_TYPES, 1};
    rd->plans = n <= SMALL_TYPES ? small->plans : calloc(n, sizeof *rd->plans);
    rd->types = n <= SMALL_TYPES ? small->types : calloc(n, sizeof *rd->types);
    if (!rd->plans || !rd->types || allow(&rd->r, rd->expected))
        return MPC_ERR_NO_MEMORY;
    rd->m = (message){rd->places, rd->types, &rd->h, rd->plans, rd->expected};
    return MPC_OK;
}

/* Resolves every type the message names (only those the allow-list admits, laid out here as
 * there) and refuses the first that cannot be received; then runs the type initializers before
 * the first instance exists, as `new` would. */
static int resolve_types(reading *rd)
{
    const rt_class_plan **plans = rd->plans;
    sd_type *types = rd->types;
    sd_cursor cur = {rd->buf + SD_HEADER_BYTES, rd->buf + rd->len, NULL};
    uint32_t n = rd->h.type_count, refused = n; /* the first type that cannot be received */
    for (uint32_t t = 0; t < n; t++) {
        sd_parse_type(&cur, &types[t]); /* cannot fail: validated */
        plans[t] = NULL;
    }
    /* until the allowed set stops growing: a class that travels as another type brings in the
     * types its fields declare, which the table may name before it (the order of the sender's
     * walk must not decide what is received). Each pass that grows it resolves a type more. (After
     * a refusal the rest are still resolved where they can be: refuse_type names the fields on
     * the path to the refused record.) */
    for (uint32_t known = UINT32_MAX; known != rd->r.n;) {
        known = rd->r.n;
        for (uint32_t t = 0; t < n; t++)
            if (!plans[t])
                plans[t] = resolve(&rd->r, &types[t]);
    }
    for (uint32_t t = 0; t < n; t++)
        if (refused == n && (!plans[t] || plans[t]->denied || !same_layout(plans[t], &types[t]) ||
                             plans[t]->abstract || !plans[t]->vtable))
            refused = t;
    if (refused < n)
        return refuse_type(&rd->m, refused, plans[refused]);
    for (uint32_t t = 0; t < n; t++) {
        int rc;
        rd->collections |= plans[t]->shape == RT_COLLECTION;
        if ((plans[t]->shape == RT_OBJECT || plans[t]->shape == RT_COLLECTION) &&
            (rc = run_type_initializers(plans[t])) != MPC_OK)
            return rc;
    }
    return MPC_OK;
}

/* With a receive budget on the thread (sd_set_budget): the heap bytes the graph will take,
 * refused past the budget before the first allocation. Nothing to do without one. */
static int within_budget(const reading *rd)
{
    if (!budget_bytes && !budget_multiple)
        return MPC_OK;
    double by_size = budget_multiple * (double)rd->len;
    double limit = budget_bytes ? (double)budget_bytes : by_size;
    if (budget_multiple && by_size < limit)
        limit = by_size;
    uint64_t total = 0;
    for (uint32_t i = 0; i < rd->h.record_count; i++)
        total += record_heap_bytes(rd->plans[rd->places[i].type_index], &rd->places[i]);
    if ((double)total <= limit)
        return MPC_OK;
    char want[256], need[32], size[32], by[32], cap[32], lim[32];
    char budget[256];
    mib_text((double)total, need, sizeof need);
    mib_text(limit, lim, sizeof lim);
    if (budget_multiple && budget_bytes)
        snprintf(budget, sizeof budget, "%s, the smaller of %g x %s = %s and %s", lim,
                 budget_multiple, mib_text((double)rd->len, size, sizeof size),
                 mib_text(by_size, by, sizeof by), mib_text((double)budget_bytes, cap, sizeof cap));
    else if (budget_multiple)
        snprintf(budget, sizeof budget, "%g x %s = %s", budget_multiple,
                 mib_text((double)rd->len, size, sizeof size), lim);
    else
        snprintf(budget, sizeof budget, "%s", lim);
    return error_record(
        SD_ERR_SERIALIZATION, NULL,
        "receiving a %s: this message of %zu bytes would allocate %s (%llu bytes "
        "for a graph of %u objects), more than the receive budget of %s; nothing was "
        "allocated",
        class_text(rd->expected, want, sizeof want), rd->len, need, (unsigned long long)total,
        rd->h.record_count, budget);
}

/* The records' plans, and the pinned object[] that keeps every object reachable while later
 * ones allocate (and one for the collections' elements). */
static int take_holders(reading *rd)
{
    uint32_t n = rd->h.record_count;
    rd->domain = mono_domain_get();
    if (holder_take(&rd->held, n, rd->domain))
        return MPC_ERR_NO_MEMORY;
    rd->used = n;
    if (rd->collections) {
        if (!(rd->items = mono_array_new(rd->domain, mono_get_object_class(), n)))
            return MPC_ERR_NO_MEMORY;
        rd->items_pin = mono_gchandle_new((MonoObject *)rd->items, 1);
    }
    return MPC_OK;
}

/* Every reference fits its slot, the root fits T (check_links). */
static int check_all_links(reading *rd)
{
    return check_links(rd->places, &rd->h, rd->plans, rd->expected, rd->cache, &rd->m);
}

/* A graph reused (ORecvInto): reuse's objects in record order, kept where they fit the records'
 * types; then every check that can fail, before any object of reuse is written. */
static int prepare_reuse(reading *rd)
{
    MonoArray *objs = rd->held.array;
    size_t found; /* (a graph that cannot be walked stores nothing: nothing is reused) */
    sd_record_order(rd->reuse, objs, &found);
    if (found > rd->used) /* what it stored */
        rd->used = found > rd->held.length ? rd->held.length : (uint32_t)found;
    for (uint32_t i = 0; i < rd->h.record_count; i++) {
        sd_record rec;
        record_at(&rd->places[i], rd->types, &rec);
        const rt_class_plan *p = rd->plans[rec.type_index];
        MonoObject *o = entry_of(objs, i);
        if (o && !reusable(o, p, &rec))
            hold_at(objs, i, (o = NULL));
        rd->made_new += !o;
        int32_t lower; /* (make would refuse it, but only after the first write: say so now) */
        if (!bounds_fit(p, &rec, &lower))
            return refuse_bounds(&rd->m, i, lower);
    }
    return check_all_links(rd);
}

/* New objects of a large message: every reference checked, then every object made (and most
 * linked) in managed code, which pays from MANAGED_CREATE_RECORDS records on. */
static int create_in_managed(reading *rd)
{
    uint32_t n = rd->h.record_count;
    int rc = check_all_links(rd);
    if (rc != MPC_OK)
        return rc;
    rd->made = managed_create(rd->held.handle, rd->places, n, rd->plans, rd->h.type_count,
                              rd->domain, 0, rd->mine, &rd->by_jit);
    return rd->made < 0 ? rd->made : MPC_OK;
}

/* Makes every object, and copies the data in. A graph reused (ORecvInto) is written only once
 * every object is made: making is what can still fail (memory; bounds_fit, already checked),
 * and a failed read must leave the graph as it was. After the first write nothing fails: the
 * data copies cannot, links were all checked (check_links), a failed managed linking is redone
 * by link_objects, and the root was checked against expected. Reading into new objects, each
 * is made and filled in turn (still in cache). */
static int make_objects(reading *rd, int reused)
{
    MonoArray *objs = rd->held.array, *items = rd->items;
    const sd_place *places = rd->places;
    const sd_type *types = rd->types;
    const rt_class_plan **plans = rd->plans;
    uint32_t n = rd->h.record_count;
    MonoDomain *domain = rd->domain;
    int made = rd->made;
    const int32_t *filled = made ? rd->by_jit.fills : NULL; /* by a compiled factory */
    rd->seen = gch_epoch();
    if (reused && !rd->made_new)
        return MPC_OK; /* (every object exists: a graph reused is filled as it is linked) */
    for (uint32_t i = 0; i < n && !(made && rd->by_jit.all_filled); i++) {
        if (filled && filled_in_managed(filled[places[i].type_index], plans[places[i].type_index],
                                        &places[i]))
            continue; /* (made by `new`, of its class and length: nothing to check) */
        sd_record rec;
        record_at(&places[i], types, &rec);
        const rt_class_plan *p = plans[rec.type_index];
        if (!make_object(objs, items, i, p, &rec, domain, made)) {
            int32_t lower;
            if (!bounds_fit(p, &rec, &lower))
                return refuse_bounds(&rd->m, i, lower);
            return failf("cannot create an object of type %.*s (out of memory?)",
                         short_len(p->qualified_name, p->qualified_name_len), p->qualified_name);
        }
        if (!reused)
            fill(objs, items, i, p, &rec, &rd->seen);
        if (i % RECORDS_PER_GC_CHECK == 0)
            give_way(&rd->seen);
    }
    return MPC_OK; /* (a graph reused is filled as it is linked: link_objects) */
}

/* Copies the data of a graph reused into its objects, every record the managed call did not
 * (all of them when there was none). Cannot fail. */
static void fill_reused(reading *rd)
{
    MonoArray *objs = rd->held.array, *items = rd->items;
    const sd_place *places = rd->places;
    const rt_class_plan **plans = rd->plans;
    const int32_t *filled = rd->made ? rd->by_jit.fills : NULL; /* by a compiled filler */
    for (uint32_t i = 0; i < rd->h.record_count && !(rd->made && rd->by_jit.all_filled); i++) {
        uint32_t t = places[i].type_index;
        if (filled && filled_in_managed(filled[t], plans[t], &places[i]))
            continue;
        sd_record rec;
        record_at(&places[i], rd->types, &rec);
        fill(objs, items, i, plans[t], &rec, &rd->seen);
        if (i % RECORDS_PER_GC_CHECK == 0)
            give_way(&rd->seen);
    }
}

/* Links the references (every target's type is known from its record), then rebuilds the
 * collections. A graph reused: its objects, and those made new, are filled and linked in managed
 * code where their class has a filler and a linker (every check ran before anything is written),
 * the rest here; if that fails (out of memory compiling one), the reader fills and links every
 * record itself, each again, so the read still succeeds and nothing is left half written. */
static int link_objects(reading *rd, int reused)
{
    uint32_t n = rd->h.record_count;
    if (reused && n >= MANAGED_CREATE_RECORDS)
        rd->made = managed_create(rd->held.handle, rd->places, n, rd->plans, rd->h.type_count,
                                  rd->domain, 1, rd->mine, &rd->by_jit);
    if (reused)
        fill_reused(rd);
    MonoArray *objs = rd->held.array, *items = rd->items;
    const sd_place *places = rd->places;
    const sd_type *types = rd->types;
    const rt_class_plan **plans = rd->plans;
    const int32_t *linked = rd->made ? rd->by_jit.linker : NULL; /* by a managed linker */
    for (uint32_t i = 0; i < n && !(rd->made && rd->by_jit.all_linked); i++) {
        if (linked && linked[places[i].type_index])
            continue;
        sd_record rec;
        record_at(&places[i], types, &rec);
        int rc = link_record(objs, items, plans[rec.type_index], &rec, i, places, plans, rd->cache,
                             &rd->seen, &rd->m);
        if (rc != MPC_OK)
            return rc;
        if (i % RECORDS_PER_GC_CHECK == 0)
            give_way(&rd->seen);
    }
    return rd->collections ? rebuild_collections(objs, items, &rd->m) : MPC_OK;
}

/* The root, once it is known to be an expected. */
static int take_root(reading *rd, MonoObject **result)
{
    MonoArray *objs = rd->held.array;
    if (!mono_object_isinst(entry_of(objs, (uint32_t)rd->h.root), rd->expected))
        return refuse_link(&rd->m, -1, 0, 0, (uint32_t)rd->h.root);
    *result = entry_of(objs, (uint32_t)rd->h.root); /* fetched after the check: it may move */
    return MPC_OK;
}

/* The one way out of a read that got past validation: records an allocation failure, and gives
 * back every holder, pin, work array and table the read took. */
static int read_end(reading *rd, int rc)
{
    if (rc == MPC_ERR_NO_MEMORY)
        error_record(rc, NULL, "out of memory reading a graph of %u objects of %u types",
                     rd->h.record_count, rd->h.type_count);
    holder_give(&rd->held, rd->used);
    if (rd->items_pin)
        mono_gchandle_free(rd->items_pin);
    work_give(&kept_places, rd->places, places_bytes(rd), rd->mine);
    work_give(&kept_numbers, rd->by_jit.factory, rd->by_jit.bytes, rd->mine);
    if (rd->mine)
        kept_work_busy = 0;
    if (!rd->r.on_stack)
        free(rd->r.plans);
    if (rd->plans != rd->small->plans)
        free(rd->plans);
    if (rd->types != rd->small->types)
        free(rd->types);
    return rc;
}

/* A read before its first phase: its inputs, and nothing taken yet. Field by field: clearing
 * the whole struct (~300 bytes, a `rep stos`) would cost every message; the other fields are
 * written before they are read. */
static void read_begin(reading *rd, const uint8_t *buf, size_t len, MonoClass *expected,
                       MonoObject *reuse, small_tables *small)
{
    rd->buf = buf;
    rd->len = len;
    rd->expected = expected;
    rd->reuse = reuse;
    rd->small = small;
    rd->mine = !kept_work_busy;
    rd->places = rd->mine ? kept_places.p : NULL;
    rd->collections = rd->made = 0;
    rd->made_new = 0;
    rd->held = (holder){0};
    rd->used = rd->items_pin = 0;
    rd->items = NULL;
    rd->by_jit = (managed){0};
}

static int read_message(const uint8_t *buf, size_t len, MonoClass *expected, MonoObject *reuse,
                        MonoObject **result)
{
    small_tables small;
    reading rd;
    const char *why;
    read_begin(&rd, buf, len, expected, reuse, &small);
    *result = NULL;
    size_t room = rd.mine ? kept_places.bytes / sizeof *rd.places : 0;
    if (sd_validate(buf, len, &rd.h, &rd.places, room, &why))
        return error_record(SD_ERR_SERIALIZATION, NULL, "%s", why);
    if (rd.h.root < 0) {
        work_give(&kept_places, rd.places, places_bytes(&rd), rd.mine);
        return MPC_OK; /* the null graph */
    }
    kept_work_busy = 1; /* (from here on managed code may run, and read a graph of its own) */
    int rc;
    if ((rc = take_tables(&rd)) != MPC_OK || (rc = resolve_types(&rd)) != MPC_OK ||
        (rc = check_values(&rd.m, &rd.seen)) != MPC_OK || (rc = within_budget(&rd)) != MPC_OK ||
        (rc = take_holders(&rd)) != MPC_OK)
        goto end;
    int reused = reuse && !rd.collections; /* (a graph of collections is made new) */
    if (reused)
        rc = prepare_reuse(&rd);
    else if (!reuse && !rd.collections && rd.h.record_count >= MANAGED_CREATE_RECORDS)
        rc = create_in_managed(&rd);
    if (rc != MPC_OK || (rc = make_objects(&rd, reused)) != MPC_OK ||
        (rc = link_objects(&rd, reused)) != MPC_OK)
        goto end;
    rc = take_root(&rd, result);
end:
    return read_end(&rd, rc);
}

/* class_plan.h (object_model/) — the one plan of a class: its shape, its element, every reference
 * slot, which of them carry [Transportable], and why instances cannot travel. Built once per
 * class (field scans cost ~0.2–2 µs per field, see MONO-FACTS) into one lock-free cache, and
 * used alike by OPI's zero-copy path (raw bytes: no reference slot at all) and by the
 * serializer (graphs: the transportable slots). */
#ifndef RT_CLASS_PLAN_H
#define RT_CLASS_PLAN_H

#include <mono/metadata/class.h>
#include <mono/metadata/object.h>
#include <stdatomic.h>
#include <stdint.h>

/* RT_COLLECTION: a standard collection carried by value (rt_collection): it travels like a
 * one-dimensional array of its elements, and its plan describes those elements as an array
 * plan does. */
typedef enum rt_shape { RT_OBJECT, RT_ARRAY, RT_STRING, RT_COLLECTION } rt_shape;

/* What an array's elements are, as the serializer carries them. */
typedef enum rt_elements {
    RT_ELEM_RAW,     /* values without travelling references (their reference slots read null) */
    RT_ELEM_REFS,    /* references to objects */
    RT_ELEM_STRUCTS, /* structs with travelling references */
} rt_elements;

/* A reference slot of an instance (or of an array element): its offset in the instance data
 * (or in the element), the field's declared class and its path: "Inline.Label". */
typedef struct rt_slot {
    uint32_t offset;
    MonoClass *declared;
    const char *name;
    MonoClassField *field; /* the field, when the slot is one of the instance's own (not inside a
                              struct field), and the class that declares it */
    MonoClass *owner;
} rt_slot;

/* A reference slot declared by a framework type (rt_is_framework_class): no user can mark it
 * [Transportable], so a graph in which it holds a reference cannot travel whole. */
typedef struct rt_hidden_slot {
    uint32_t offset;
    const char *name;  /* its path in the instance or element: "_items", "Entry.key" */
    const char *owner; /* the framework type that declares it */
} rt_hidden_slot;

/* A byte range of an instance or element that holds no reference. */
typedef struct rt_run {
    uint32_t offset, length;
} rt_run;

/* The standard collections carried by value, with their default comparer. */
typedef enum rt_collection_kind {
    RT_LIST = 1,
    RT_QUEUE,
    RT_STACK,
    RT_HASHSET,
    RT_DICTIONARY
} rt_collection_kind;

/* Where a standard collection keeps its elements, read in place by the serializer's writer (the
 * reader rebuilds the collection through its public API instead). Its elements travel as an
 * E[] would: E is T, or KeyValuePair<K,V> for a Dictionary. Offsets are in instance data (no
 * object header); an entry is one element of the internal array (the store). */
typedef struct rt_collection {
    rt_collection_kind kind;
    uint32_t store;    /* the store field: _items, _array, _slots, _entries */
    uint32_t used;     /* int: entries of the store in use (_size, _lastIndex, _count) */
    uint32_t live;     /* int: elements (_size, _count) */
    int32_t freed;     /* int subtracted from live (Dictionary's _freeCount), or -1 */
    int32_t head;      /* int: the Queue's first entry, or -1 */
    int32_t comparer;  /* the _comparer field, or -1 */
    int32_t hash_code; /* int in an entry: negative when the entry is free, or -1 (none) */
    uint32_t stride;   /* bytes per entry */
    uint32_t nparts;   /* an element's bytes, copied from an entry's in up to two parts */
    struct rt_collection_part {
        uint32_t to, from, length; /* offset in E, offset in the entry, bytes */
    } parts[2];
} rt_collection;

/* A value whose bytes the runtime constrains (only some bit patterns are values a program can
 * make): a received one is checked before it is copied (serializer/sd_values.c says how). Any
 * bytes are a valid TimeSpan, char (lone surrogates included), enum (values outside the declared
 * ones included: C# casts any), integer or floating-point number. */
typedef enum rt_value_kind {
    RT_VALUE_BOOL = 1,        /* a byte: 0 or 1 */
    RT_VALUE_DECIMAL,         /* its flags word: scale <= 28, only the sign and scale bits */
    RT_VALUE_DATETIME,        /* its 64-bit word: ticks <= MaxValue's, any of the 4 kinds */
    RT_VALUE_DATETIME_OFFSET, /* its UTC DateTime, then its short offset in minutes */
} rt_value_kind;

/* Where such a value lies in an instance (or an array element): its offset in the data (for a
 * decimal: of its flags word; for a DateTimeOffset: of its DateTime, the offset at +offset2), its
 * kind and its path there ("Inner.On"; NULL: the instance or element itself). */
typedef struct rt_value_check {
    uint32_t offset, offset2;
    rt_value_kind kind;
    const char *name;
} rt_value_check;

typedef struct rt_class_plan {
    MonoClass *klass;
    MonoVTable *vtable; /* NULL for abstract classes and interfaces (one domain) */
    rt_shape shape;
    uint8_t rank;          /* arrays: number of dimensions */
    uint8_t vector;        /* T[]: one dimension, always zero-based (not T[*], which has bounds) */
    rt_elements element;   /* arrays */
    uint32_t data_size;    /* objects: instance data bytes; arrays: bytes per element; strings: 2 */
    MonoClass *elem_class; /* arrays: the element class */
    int elem_type;         /* MONO_TYPE_* of the element (arrays) or of the class, enums as their
                              base type; MONO_TYPE_VALUETYPE for structs */
    uint32_t nall;         /* every reference slot, sorted by offset */
    uint32_t *all;
    uint32_t nslots; /* the travelling ones, in layout order */
    rt_slot *slots;
    uint32_t nruns; /* the data minus every reference slot, in order */
    rt_run *runs;
    uint32_t nvalues; /* values the runtime constrains (rt_value_check), in the data or (arrays)
                         in an element; 0 for most classes */
    rt_value_check *values;
    uint32_t nhidden; /* framework-private reference slots */
    rt_hidden_slot *hidden;
    int polymorphic;  /* class-level [Transportable] */
    int in_base_slot; /* travels in a slot declared as another type (rt_travels_as_base) */
    int value_type;
    int abstract;                /* abstract class or interface: never instantiated */
    int framework;               /* rt_is_framework_class */
    const char *denied;          /* why instances never travel in a graph (delegates, reflection, OS
                                    handles), or NULL */
    const char *first_reference; /* the first reference slot in declaration order, for messages:
                                    "inner.name (System.String)"; NULL when there is none */
    const char *raw_refusal;     /* why OPI cannot move instances as raw bytes (naming the type and
                                    the offending field), or NULL when it can */
    char *qualified_name;        /* "Full.Name, image" */
    uint32_t qualified_name_len;
    atomic_int type_initialized;     /* the serializer's reader ran its type initializers */
    atomic_int factory;              /* the reader's managed factory and linker (System.MP's */
    atomic_int linker;               /* SdtoFactories): 0 not asked yet, -1 none, else its number */
    atomic_int factory_fills;        /* what the factory copies of a record (sd_reader.c) */
    atomic_int filler;               /* the reader's managed filler of a reused object, as above */
    const rt_collection *collection; /* RT_COLLECTION: where the elements are */
    const struct rt_class_plan *items; /* RT_COLLECTION: the plan of E[], whose element fields
                                          (element, data_size, elem_class, slots...) this plan
                                          shares */
} rt_class_plan;

/* Tells the plans which attribute class marks travelling references ([Transportable]), and
 * who knows the element class of a carried collection class (E of List<E>, KeyValuePair<K,V> of
 * Dictionary<K,V>; NULL when k is none): the binding's managed half, asked by the layer above
 * (it runs managed code; called outside the plan cache's lock). Once, before plans are built. */
typedef MonoClass *(*rt_element_asker)(MonoClass *k);
void rt_set_binding(MonoClass *transportable_attribute, rt_element_asker carried_element);

/* Does field f of k (or k itself when f is NULL) carry [Transportable]? Calls Mono. */
int rt_has_transportable(MonoClass *k, MonoClassField *f);

/* Is k (or, for an array, its element class) defined by the framework: an assembly named
 * mscorlib, netstandard, System, System.* (but not System.MP) or Mono.*? Users cannot mark such
 * a type's fields [Transportable], so its private references can never travel. */
int rt_is_framework_class(MonoClass *k);

/* May an instance of k travel in a slot declared as another type (`object`, a base class, an
 * interface), at the root too? Classes marked [Transportable] at class level, and the framework
 * values: the primitives, decimal, DateTime, TimeSpan, DateTimeOffset, Guid, string, arrays of
 * such elements and the carried collections of them (FORMAT.md). As an element or a type argument
 * of such a value (element 1), `object`, Nullable<T> and KeyValuePair<K,V> of such types are
 * allowed too. Decided from the class alone (no plan is built); calls Mono. */
int rt_travels_as_base(MonoClass *k, int element);

/* The plan of k, built the first time (which calls Mono: a safepoint); NULL when out of
 * memory. */
const rt_class_plan *rt_plan_for_class(MonoClass *k);

/* The plan of k when it is already built, found without calling Mono; NULL otherwise. */
const rt_class_plan *rt_plan_known_for_class(MonoClass *k);

/* The plan of obj's class when it is already built, found without calling Mono; NULL
 * otherwise. A per-thread last hit, then the cache. */
const rt_class_plan *rt_plan_known(MonoObject *obj);

/* The plan of obj's class (non-NULL obj); *built is set to 1 when it had to be built (a Mono
 * call, so a collection may have run). NULL only when out of memory. */
static inline const rt_class_plan *rt_plan_of(MonoObject *obj, int *built)
{
    const rt_class_plan *p = rt_plan_known(obj);
    if (p)
        return p;
    *built = 1;
    return rt_plan_for_class(mono_object_get_class(obj));
}

#endif

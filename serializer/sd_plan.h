/* sd_plan.h — per-class serialization plans (internal to serializer/). */
#ifndef SD_PLAN_H
#define SD_PLAN_H

#include "sd_format.h"

#include <mono/metadata/class.h>
#include <mono/metadata/object.h>
#include <stdatomic.h>

/* A reference slot that travels: its offset in the instance data (or element) and the
 * declared type of the field. */
typedef struct sd_slot {
    uint32_t offset;
    MonoClass *declared;
    const char *name; /* the field's path in the instance or element: "Inline.Label" */
} sd_slot;

/* A reference slot declared by a framework type (sd_is_framework_class): no user can mark it
 * [Transportable], so a value there would silently arrive null. The writer refuses a graph in
 * which such a slot holds a reference. */
typedef struct sd_hidden {
    uint32_t offset;
    const char *name;  /* its path in the instance or element: "_items", "Entry.key" */
    const char *owner; /* the framework type that declares it */
} sd_hidden;

/* A byte range of an instance or element that holds no reference. */
typedef struct sd_run {
    uint32_t offset, length;
} sd_run;

typedef struct sd_plan {
    MonoClass *klass;
    uint8_t kind;       /* SD_OBJECT, SD_ARRAY, SD_STRING */
    uint8_t rank;
    uint8_t element;    /* arrays: SD_ELEM_* */
    uint32_t data_size; /* OBJECT: instance data bytes; ARRAY: bytes per element */
    uint32_t nall;      /* every reference slot (zeroed when read) */
    uint32_t *all;
    uint32_t nslots;    /* the transportable ones, in layout order */
    sd_slot *slots;
    uint32_t nruns;     /* the data minus every reference slot, in order: what the reader */
    sd_run *runs;       /* copies from the wire (reference slots never hold wire bytes) */
    uint32_t nhidden;   /* framework-private reference slots (of the instance or element) */
    sd_hidden *hidden;
    MonoClass *elem_class;
    int polymorphic;    /* class-level [Transportable] */
    int value_type;
    int abstract;       /* abstract class or interface: never instantiated */
    int framework;      /* sd_is_framework_class */
    MonoVTable *vtable; /* for allocation (one domain) */
    atomic_int type_initialized; /* the reader ran its type initializers (sd_reader.c) */
    const char *denied; /* why instances never travel (delegates, reflection, OS handles), or NULL */
    char *wire_name;    /* "Full.Name, image" */
    uint32_t name_len;
} sd_plan;

/* The plan of k; NULL when out of memory. */
const sd_plan *sd_plan_for(MonoClass *k);
int sd_has_transportable(MonoClass *k, MonoClassField *f);

#endif

/* sd_binding.c — the structured transport's managed half (System.MP's SdtoCollections and
 * SdtoFactories), as the C half calls it: the one list of those methods, found by name once, and
 * the question the class plans ask of it (which elements a carried collection holds). */
#include "serializer.h"

#include "class_plan.h"

#include <mono/metadata/appdomain.h>
#include <mono/metadata/class.h>
#include <mono/metadata/image.h>
#include <mono/metadata/reflection.h>
#include <stdatomic.h>

static MonoClass *transportable_attribute;

/* A class of System.MP (the assembly of TransportableAttribute) by name, or NULL. */
static MonoClass *binding_class(const char *name)
{
    return transportable_attribute
               ? mono_class_from_name(mono_class_get_image(transportable_attribute), "System.MP",
                                      name)
               : NULL;
}

MonoMethod *sd_managed(sd_managed_method which)
{
    static const struct {
        const char *klass, *method;
        int nargs;
    } named[SD_MANAGED_COUNT] = {
#define SD_MANAGED_NAMED(id, klass, method, nargs) {#klass, #method, nargs},
        SD_MANAGED_METHODS(SD_MANAGED_NAMED)
#undef SD_MANAGED_NAMED
    };
    static _Atomic(MonoMethod *) found[SD_MANAGED_COUNT];
    MonoMethod *m = atomic_load(&found[which]);
    if (!m) {
        MonoClass *c = binding_class(named[which].klass);
        if (!c ||
            !(m = mono_class_get_method_from_name(c, named[which].method, named[which].nargs)))
            return NULL;
        atomic_store(&found[which], m);
    }
    return m;
}

/* E for a carried collection class (T, or KeyValuePair<K,V>), asked of SdtoCollections.ElementType,
 * which names the carried collections; NULL otherwise. Runs managed code. */
static MonoClass *carried_element(MonoClass *k)
{
    MonoMethod *m = sd_managed(SD_COLLECTION_ELEMENT_TYPE);
    if (!m)
        return NULL;
    void *args[1] = {mono_type_get_object(mono_domain_get(), mono_class_get_type(k))};
    MonoObject *exc = NULL;
    MonoObject *e = args[0] ? mono_runtime_invoke(m, NULL, args, &exc) : NULL;
    return e && !exc
               ? mono_class_from_mono_type(mono_reflection_type_get_type((MonoReflectionType *)e))
               : NULL;
}

void sd_install(MonoClass *attribute)
{
    transportable_attribute = attribute;
    rt_set_binding(attribute, carried_element);
}

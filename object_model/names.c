/* names.c — see names.h. */
#include "names.h"

#include <mono/metadata/metadata.h>
#include <mono/metadata/object.h>
#include <stdlib.h>
#include <string.h>

char *rt_class_name(MonoClass *k)
{
    char *mono_name = mono_type_get_name(mono_class_get_type(k));
    char *name = strdup(mono_name ? mono_name : "?");
    mono_free(mono_name);
    return name;
}

/* names.h (object_model/) — how a class is named in messages to the user. */
#ifndef RT_NAMES_H
#define RT_NAMES_H

#include <mono/metadata/class.h>

/* The class's full name as Mono spells it ("System.Collections.Generic.List`1<System.Int32>"),
 * "?" when Mono gives none; malloc'd (free it), NULL only when out of memory. */
char *rt_class_name(MonoClass *k);

#endif

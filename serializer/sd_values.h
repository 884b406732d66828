/* sd_values.h — the values whose bytes the runtime constrains (rt_value_kind, found per class by
 * object_model/class_plan.c): which bytes are values a program can make, and how a refusal
 * describes the others. The reader checks every such value of a message before it allocates
 * anything. Internal to serializer/. */
#ifndef SD_VALUES_H
#define SD_VALUES_H

#include "class_plan.h"

#include <stddef.h>
#include <stdint.h>

/* The first of n instances or elements of plan p, stride bytes apart from data (the wire's
 * bytes), that holds a value the runtime could not make: its index, and in *check the index of
 * that value in p->values; n when every value is valid. */
uint64_t sd_values_scan(const rt_class_plan *p, const uint8_t *data, uint64_t n, size_t stride,
                        uint32_t *check);

/* What value v of data holds, for a refusal: "a decimal with scale 31 (at most 28)". */
void sd_value_text(const rt_value_check *v, const uint8_t *data, char *out, size_t cap);

#endif

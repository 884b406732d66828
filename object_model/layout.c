/* layout.c — see layout.h. */
#include "layout.h"

#include <mono/metadata/appdomain.h>
#include <mono/metadata/class.h>

size_t rt_array_data_offset, rt_array_length_offset;
size_t rt_string_length_offset, rt_string_chars_offset;

int rt_layout_init(void)
{
    MonoDomain *domain = mono_domain_get();
    MonoArray *a = mono_array_new(domain, mono_get_byte_class(), 77);
    MonoArray *b = mono_array_new(domain, mono_get_byte_class(), 1234);
    uintptr_t lengths[2] = {3, 4};
    MonoArray *m = mono_array_new_full(domain, mono_array_class_get(mono_get_double_class(), 2),
                                       lengths, NULL);
    MonoString *s = mono_string_new(domain, "layout probe");
    if (!a || !b || !m || !s)
        return -1;
    if (rt_vtable_class(((MonoObject *)m)->vtable) != mono_object_get_class((MonoObject *)m) ||
        rt_vtable_class(((MonoObject *)s)->vtable) != mono_get_string_class())
        return -1;
    rt_array_data_offset = (size_t)(mono_array_addr_with_size(a, 1, 0) - (char *)a);
    if ((size_t)(mono_array_addr_with_size(m, 8, 0) - (char *)m) != rt_array_data_offset)
        return -1;
    rt_string_chars_offset = (size_t)((char *)mono_string_chars(s) - (char *)s);
    rt_string_length_offset = rt_string_chars_offset - sizeof(int32_t);
    if (rt_string_length((MonoObject *)s) != mono_string_length(s) ||
        rt_string_chars((MonoObject *)s)[0] != 'l')
        return -1;
    for (size_t off = sizeof(MonoObject); off + sizeof(uint32_t) <= rt_array_data_offset;
         off += 4) {
        rt_array_length_offset = off;
        if (rt_array_length((MonoObject *)a) == 77 && rt_array_length((MonoObject *)b) == 1234 &&
            rt_array_length((MonoObject *)m) == 12 && mono_array_length(m) == 12)
            return 0;
    }
    return -1;
}

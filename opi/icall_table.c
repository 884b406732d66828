/* icall_table.c — the one table of internal calls, expanded from icall_table.h. */
#include "opi_icalls.h"

#define OPI_TABLE_ENTRY(name, fn, ret, params) \
    {"System.MP.MPDirect::" #name, #ret " " #params, (const void *)fn},
const opi_icall opi_icall_table[] = {MOTOR_ICALLS(OPI_TABLE_ENTRY)};
#undef OPI_TABLE_ENTRY
const size_t opi_icall_count = sizeof opi_icall_table / sizeof opi_icall_table[0];

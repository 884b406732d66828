/* opi_icalls.h — prototypes of the internal calls, declared from icall_table.h. Internal to opi/.
 * Raw registration: they run GC-unsafe and must never block in place (waits go through
 * xfer_complete or xfer_probe_wait, blocking MPI calls through XFER_BLOCKING_BEGIN). */
#ifndef OPI_ICALLS_H
#define OPI_ICALLS_H

#include "opi_internal.h"

#include <mono/metadata/reflection.h>

#define OPI_DECLARE_ICALL(name, fn, ret, params) ret fn params;
MOTOR_ICALLS(OPI_DECLARE_ICALL)
#undef OPI_DECLARE_ICALL

#endif

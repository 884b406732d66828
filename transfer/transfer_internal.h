/* transfer_internal.h — what the files of transfer/ share and nobody else calls. */
#ifndef TRANSFER_INTERNAL_H
#define TRANSFER_INTERNAL_H

#include "transfer.h"

/* The GC event's bracket around its MPI calls (mpi_rule.c): true when no reduction with a user
 * operator is in flight and MPI is not closing, and none starts before xfer_hook_mpi_end;
 * false: no MPI now. */
bool xfer_hook_mpi_begin(void);
void xfer_hook_mpi_end(void);
/* From the return on, no GC event calls MPI (one inside MPI is waited for): MPI_Finalize frees
 * what a sweep's MPI calls would read, and a collection started by another thread may run its
 * event at any moment of it. */
void xfer_close_mpi(void);

/* Adds a record (registry.c): objs[0..nobjs) held from then on, early[i] a GC handle already
 * pinning objs[i] or 0, pinned[i] whether objs[i] counts as a pin, owner a weak handle or 0. */
int xfer_registry_add(mpc_request req, MonoObject *const *objs, const uint32_t *early,
                      const int *pinned, int nobjs, uint32_t owner, const xfer_info *info,
                      int64_t *id);

/* The sweeps the GC event runs before the world stops (xfer_install registers them). */
void xfer_registry_sweep(void);
void xfer_buffers_sweep(void);

/* Dropped matched messages (dropped.c): the GC event's step (inside its xfer_hook_mpi_begin),
 * and xfer_close's, which waits for their receives before MPI_Finalize. */
void xfer_dropped_sweep(void);
void xfer_close_dropped(void);

/* Huge pages (huge_pages.c): how many arrays this thread staged, read by every bracket, which
 * then hands them over; xfer_close stops the thread (within one 2 MiB page). */
extern __thread int xfer_huge_pages_staged_ __attribute__((tls_model("initial-exec")));
void xfer_huge_pages_submit(void);
void xfer_huge_pages_stop(void);

#endif

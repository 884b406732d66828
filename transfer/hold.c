/* hold.c — the objects of a transfer that has more of them than a bracket, a wait or a registry
 * record can hold (XFER_MAX_OBJECTS): one GC handle per object that needs one, taken before the
 * transfer's addresses are computed and released when it has completed (transfer.h).
 *
 * The generation-aware rule of the brackets holds here too: a pinned handle only where the GC
 * could move the object (a nursery array; an old one where the old generation moves), a plain
 * handle (alive, not pinned) for the others only when the transfer outlives its call, and
 * nothing for an object that cannot move while its call's own arguments keep it alive. A handle
 * costs ~50 ns taken and freed, which only transfers of three or more arrays pay. */
#include "transfer_internal.h"

#include "error_record.h"
#include "gc_hooks.h"

#include <mono/metadata/object.h>
#include <stdlib.h>

struct xfer_hold {
    int n;
    struct {
        uint32_t handle;
        int pinned;
    } held[];
};

int xfer_hold_take(xfer_object_at at, void *ctx, int n, bool keep_alive, xfer_hold **out)
{
    *out = NULL;
    if (n <= 0)
        return MPC_OK;
    xfer_hold *h = malloc(sizeof *h + (size_t)n * sizeof h->held[0]);
    /* the objects met so far: none of them moves any more (held, or unmovable), so their
     * addresses identify them for the rest of the walk */
    MonoObject **seen = malloc((size_t)n * sizeof *seen);
    if (!h || !seen) {
        free(h);
        free(seen);
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory holding %d objects", n);
    }
    int nseen = 0;
    h->n = 0;
    for (int i = 0; i < n; i++) {
        MonoObject *o = at(ctx, i);
        if (!o)
            continue;
        int again = 0;
        for (int k = 0; k < nseen && !again; k++)
            again = seen[k] == o;
        if (again)
            continue;
        seen[nseen++] = o;
        int pin = xfer_pin_every() || xfer_may_move(o);
        if (!pin && !keep_alive) {
            gch_count(GCH_PINS_AVOIDED, 1);
            continue;
        }
        h->held[h->n].handle = mono_gchandle_new(o, pin);
        h->held[h->n].pinned = pin;
        h->n++;
        gch_count(pin ? GCH_PINS_TAKEN : GCH_PINS_AVOIDED, 1);
    }
    free(seen);
    if (h->n == 0) {
        free(h);
        return MPC_OK;
    }
    *out = h;
    return MPC_OK;
}

void xfer_hold_release(xfer_hold *h, int reason)
{
    if (!h)
        return;
    for (int i = 0; i < h->n; i++) {
        mono_gchandle_free(h->held[i].handle);
        if (h->held[i].pinned)
            gch_count((gch_counter)reason, 1);
    }
    free(h);
}

uint32_t xfer_pin_for_life(MonoObject *obj)
{
    gch_count(GCH_PINS_TAKEN, 1);
    return mono_gchandle_new(obj, 1);
}

void xfer_unpin_for_life(uint32_t handle)
{
    if (!handle)
        return;
    mono_gchandle_free(handle);
    gch_count(GCH_PINS_RELEASED_BY_WAIT, 1);
}

uint32_t xfer_keep_alive(MonoObject *obj) { return mono_gchandle_new(obj, 0); }

void xfer_let_go(uint32_t handle)
{
    if (handle)
        mono_gchandle_free(handle);
}

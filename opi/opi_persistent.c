/* opi_persistent.c — persistent requests: Comm.SendInit and RecvInit (MPI_Send_init,
 * MPI_Recv_init of a range or a region), Prequest.Start and StartAll (MPI_Start, MPI_Startall),
 * Prequest.Dispose (MPI_Request_free). Wait, Test, Cancel and await go through the request calls
 * of opi_icalls.c, on the persistent request's registry record (transfer.h).
 *
 * The buffer MPI was given stays valid from each start to that use's completion, however the GC
 * moves the array between uses (docs/design.md, "Persistent requests"): a start takes the record
 * with the array held in its slot, so that from here on to the completion the array stays in
 * place, then compares the array's data address with the one MPI's request was made with; when
 * the array has moved since, it makes a new MPI request with the new address and frees the old
 * one (inactive, so MPI holds nothing of it) before MPI_Start. Between uses nothing is pinned. */
#include "opi_icalls.h"

#include "gc_hooks.h"
#include "layout.h"

#include <stdlib.h>

/* MPI_Send_init / MPI_Recv_init of p's (data, count, type) to or from p's peer. */
static int make_request(const xfer_persist *p, int is_send, mpc_request *req)
{
    return is_send ? mpc_send_init(p->data, p->count, p->type, p->peer, p->tag, p->comm, req)
                   : mpc_recv_init(p->data, p->count, p->type, p->peer, p->tag, p->comm, req);
}

/* Makes the persistent request of b (in array) and registers it, INACTIVE, owned by owner. With
 * MPI_PROC_NULL no MPI request is made: each start finishes at once with ProcNull's status, as
 * MPI's would (filled by OPI: MPICH 4.0 gets it wrong, see opi_proc_null_status). */
RT_HOLDS_STACK_MARK static int init_request(int32_t comm, const opi_buffer *b, MonoObject *array,
                                            int32_t peer, int32_t tag, int is_send,
                                            MonoObject *owner, int64_t *id)
{
    xfer_persist p = {.req = MPI_REQUEST_NULL,
                      .data = b->data,
                      .data_offset = b->data - (char *)array,
                      .count = b->count,
                      .type = b->type,
                      .peer = peer,
                      .tag = tag,
                      .comm = comm};
    xfer_info info = {
        .elem_size = b->elem_size, .is_send = is_send, .tag = tag, .bytes = (int64_t)b->bytes};
    mpc_request req = MPI_REQUEST_NULL;
    int rc = MPC_OK;
    if (peer != MPI_PROC_NULL) {
        /* MPI does not touch the buffer before a start; should the array move meanwhile (the
         * bracket went GC-safe), the first start sees it and makes the request anew */
        XFER_MPI_BEGIN(array);
        rc = make_request(&p, is_send, &req);
        XFER_MPI_END;
        if (rc != MPC_OK)
            return rc;
    } else {
        xfer_huge_pages_unstage(); /* no MPI request: the array never reaches MPI */
    }
    p.req = req;
    int64_t made;
    rc = xfer_persist_add(&p, owner, &info, &made);
    if (rc != MPC_OK) {
        if (req != MPI_REQUEST_NULL) {
            XFER_MPI_BEGIN();
            mpc_request_free(&req);
            XFER_MPI_END;
        }
        return error_record(rc, NULL, "out of memory registering the persistent request");
    }
    *id = made;
    return MPC_OK;
}

int32_t opi_send_init(int32_t comm, int32_t size, MonoObject *array, int32_t offset, int32_t count,
                      int32_t dest, int32_t tag, MonoObject *owner, int64_t *id)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_range(array, offset, count, &b)) ||
        (rc = check_dest(size, &dest, tag)))
        return rc;
    return init_request(comm, &b, array, dest, tag, 1, owner, id);
}

int32_t opi_send_init_region(int32_t comm, int32_t size, MonoObject *array, MonoObject *region,
                             int32_t dest, int32_t tag, MonoObject *owner, int64_t *id)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) ||
        (rc = opi_buffer_region_as(array, region, &(opi_region_names){"array", "region"}, &b)) ||
        (rc = check_dest(size, &dest, tag)))
        return rc;
    return init_request(comm, &b, array, dest, tag, 1, owner, id);
}

int32_t opi_recv_init(int32_t comm, int32_t size, MonoObject *array, int32_t offset, int32_t count,
                      int32_t source, int32_t tag, MonoObject *owner, int64_t *id)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_range(array, offset, count, &b)) ||
        (rc = check_source(size, &source, &tag)))
        return rc;
    return init_request(comm, &b, array, source, tag, 0, owner, id);
}

int32_t opi_recv_init_region(int32_t comm, int32_t size, MonoObject *array, MonoObject *region,
                             int32_t source, int32_t tag, MonoObject *owner, int64_t *id)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) ||
        (rc = opi_buffer_region_as(array, region, &(opi_region_names){"array", "region"}, &b)) ||
        (rc = check_source(size, &source, &tag)))
        return rc;
    return init_request(comm, &b, array, source, tag, 0, owner, id);
}

/* ---- starts ---- */

/* One request of a start. No object address is kept here (this may be malloc'ed memory, which
 * no collection scans): the array is held by the record's slot once taken, and `now`, an
 * address inside it, stays valid from then on. */
struct use {
    int64_t id;
    xfer_persist p;
    xfer_info info;
    char *now;      /* where the array's data is now */
    uint32_t early; /* MOTOR_PIN_POLICY=every: a GC handle taken before the start */
    int pinned;     /* the GC could move the array: a running use counts as a pin */
    int started;    /* MPI_Start was called on it */
    int test_rc, done;
    mpc_status st;
};

/* Uses on the stack up to this many; a larger StartAll allocates. */
#define STACK_USES 8

/* Makes the MPI requests of the uses whose arrays moved since their request was made anew with
 * the new address, freeing the old ones (inactive: MPI holds nothing of them). Inside a bracket.
 * Returns the first error; then the requests made so far are kept (each is a valid request for
 * its array's current address) and nothing is started. */
static int remake_moved(struct use *u, int n)
{
    for (int k = 0; k < n; k++) {
        if (u[k].p.peer == MPI_PROC_NULL || u[k].now == u[k].p.data)
            continue;
        xfer_persist fresh = u[k].p;
        fresh.data = u[k].now;
        int rc = make_request(&fresh, u[k].info.is_send, &fresh.req);
        if (rc != MPC_OK)
            return rc;
        mpc_request_free(&u[k].p.req); /* an inactive request: cannot fail but on a bad handle */
        u[k].p = fresh;
    }
    return MPC_OK;
}

/* MPI_Start (one) or MPI_Startall (several) of the uses with an MPI request, then one test of
 * each, all in the caller's bracket. reqs: room for n handles. Returns the start's error: then
 * every use counts as started (MPI does not say which it started; a test of one it did not start
 * finds it inactive, complete at once, so nothing is let go that MPI may still use). */
static int start_and_test_all(struct use *u, int n, mpc_request *reqs)
{
    int m = 0;
    for (int k = 0; k < n; k++)
        if (u[k].p.peer != MPI_PROC_NULL)
            reqs[m++] = u[k].p.req;
    int rc = m == 0 ? MPC_OK : m == 1 ? mpc_start(&reqs[0]) : mpc_startall(m, reqs);
    for (int k = 0; k < n; k++) {
        if (u[k].p.peer == MPI_PROC_NULL)
            continue;
        u[k].started = 1;
        mpc_request req = u[k].p.req; /* a persistent request's handle stays as it is */
        u[k].test_rc =
            mpc_test(&req, &u[k].done, u[k].info.is_send ? NULL : &u[k].st); /* failed: done */
    }
    return rc;
}

/* The status of a use that finished at once (or ProcNull's), as opi_track_transfer fills it. */
static void finished_status(const struct use *u, opi_status *status)
{
    status->error = MPC_OK;
    if (u->p.peer == MPI_PROC_NULL) {
        opi_proc_null_status(status);
        return;
    }
    status->error = u->test_rc != MPC_OK
                        ? opi_receive_failed(u->test_rc, &u->st, "the receive buffer",
                                             (size_t)u->info.bytes, u->info.elem_size)
                        : opi_request_status(status, &u->st, &u->info);
}

/* Where the objects of a start come from: one array, or the elements of an Array[]. */
struct start_source {
    MonoObject *single;
    MonoObject *arrays; /* Array[]: element k read when it is taken (it may have moved before) */
};

static MonoObject *array_at(const struct start_source *src, int k)
{
    return src->single ? src->single : ((MonoObject **)rt_array_data(src->arrays))[k];
}

/* Takes uses 0..n) (ids filled in), starts them, and gives each back: running ones ACTIVE with
 * their arrays held, the others INACTIVE. use_ids[k]: ids[k] while running, -1 when finished at
 * once (statuses[k] then filled, an error in its error field). keep0, keep1: managed objects the
 * caller reads after (held in place by a GC-safe bracket). *started: 1 when the uses started (and
 * use_ids, statuses say how each is), also when MPI's start failed (its error is returned; see
 * start_and_test_all); 0 when nothing started: refused (one is active, held by another thread,
 * or freed) or its MPI request could not be made anew, that error returned. */
RT_HOLDS_STACK_MARK static int start_uses(struct use *u, int n, const struct start_source *src,
                                          mpc_request *reqs, MonoObject *keep0, MonoObject *keep1,
                                          int64_t *use_ids, opi_status *statuses, int32_t *started)
{
    *started = 0;
    int rc;
    for (int k = 0; k < n; k++) {
        MonoObject *obj = array_at(src, k);
        u[k].pinned = xfer_may_move(obj);
        xfer_early_pins(&obj, 1, &u[k].early);
        rc = xfer_persist_take(u[k].id, obj, u[k].early, &u[k].p, &u[k].info);
        if (rc != MPC_OK) {
            xfer_early_unpin(&u[k].early, 1);
            for (int j = 0; j < k; j++)
                xfer_persist_give(u[j].id, &u[j].p, 0, 0);
            return rc;
        }
        u[k].now = (char *)obj + u[k].p.data_offset; /* obj is held in place from the take on */
        u[k].started = u[k].done = 0;
        u[k].test_rc = MPC_OK;
        u[k].st = (mpc_status){0}; /* a send's status: only its cancelled flag is read */
    }
    int start_rc;
    XFER_MPI_BEGIN(keep0, keep1);
    rc = remake_moved(u, n);
    start_rc = rc == MPC_OK ? start_and_test_all(u, n, reqs) : MPC_OK;
    XFER_MPI_END;
    *started = rc == MPC_OK;
    for (int k = 0; k < n; k++) {
        int running = u[k].started && !u[k].done && u[k].test_rc == MPC_OK;
        if (u[k].started)
            gch_count(GCH_OPERATIONS, 1);
        if (u[k].started && !running && !u[k].early)
            gch_count(GCH_PINS_AVOIDED, 1);
        xfer_persist_give(u[k].id, &u[k].p, running, u[k].pinned || u[k].early);
        use_ids[k] = running ? u[k].id : -1;
        if (!running)
            finished_status(&u[k], &statuses[k]);
    }
    return rc != MPC_OK ? rc : start_rc;
}

int32_t opi_prequest_start(int64_t id, MonoObject *array, int64_t *use_id, opi_status *status,
                           int32_t *started)
{
    struct use u = {.id = id};
    struct start_source src = {array, NULL};
    mpc_request req;
    int64_t made = id;
    opi_status st = {0};
    int32_t began;
    int rc = start_uses(&u, 1, &src, &req, NULL, NULL, &made, &st, &began);
    *use_id = made;
    *status = st;
    *started = began;
    return rc;
}

/* ids (long[]): the requests' registry ids, replaced by their use ids (-1: finished at once, its
 * status in statuses, a StatusData[]); arrays (Array[]): their arrays; the first n entries.
 * *started as start_uses says. */
RT_HOLDS_STACK_MARK int32_t opi_prequest_start_all(MonoObject *ids, MonoObject *arrays, int32_t n,
                                                   MonoObject *statuses, int32_t *started)
{
    *started = 0;
    if (n <= 0)
        return MPC_OK;
    if (rt_array_length(ids) < (size_t)n || rt_array_length(arrays) < (size_t)n ||
        rt_array_length(statuses) < (size_t)n)
        return error_record(OPI_ERR_LENGTH, "requests", "%d requests, arrays too short", n);
    struct use stack_uses[STACK_USES];
    mpc_request stack_reqs[STACK_USES];
    int64_t stack_made[STACK_USES];
    opi_status stack_st[STACK_USES];
    struct use *u = stack_uses;
    mpc_request *reqs = stack_reqs;
    int64_t *made = stack_made;
    opi_status *st = stack_st;
    if (n > STACK_USES) {
        u = calloc((size_t)n, sizeof *u);
        reqs = calloc((size_t)n, sizeof *reqs);
        made = calloc((size_t)n, sizeof *made);
        st = calloc((size_t)n, sizeof *st);
        if (!u || !reqs || !made || !st) {
            free(u);
            free(reqs);
            free(made);
            free(st);
            return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory starting %d requests", n);
        }
    }
    for (int k = 0; k < n; k++) {
        u[k].id = ((int64_t *)rt_array_data(ids))[k];
        made[k] = u[k].id; /* as they were, should the start be refused */
        st[k] = (opi_status){0};
    }
    struct start_source src = {NULL, arrays};
    int32_t began;
    int rc = start_uses(u, n, &src, reqs, ids, statuses, made, st, &began);
    /* ids and statuses were in the bracket's mark: still where they were */
    int64_t *out_ids = (int64_t *)rt_array_data(ids);
    opi_status *out_st = (opi_status *)rt_array_data(statuses);
    for (int k = 0; k < n; k++) {
        out_ids[k] = made[k];
        out_st[k] = st[k];
    }
    if (u != stack_uses) {
        free(u);
        free(reqs);
        free(made);
        free(st);
    }
    *started = began;
    return rc;
}

/* ---- Dispose ---- */

/* Frees the persistent request id. Inactive: MPI_Request_free at once. Active: a receive is
 * cancelled, then tested once; finished: completed and freed; still running (a send waiting for
 * its receiver, a receive matched already): abandoned to the registry, which holds its array until
 * the GC event finds it finished and frees it. Never waits. Freed already, or held by another
 * thread this moment (then that thread abandons it as it lets go): nothing to do here. */
RT_HOLDS_STACK_MARK int32_t opi_prequest_free(int64_t id)
{
    xfer_persist p;
    xfer_info info;
    int active = 0;
    if (!xfer_persist_take_for_free(id, &p, &info, &active))
        return MPC_OK;
    int done = !active, rc = MPC_OK;
    XFER_MPI_BEGIN(); /* no object: the record's slot holds a running use's */
    if (active && p.req != MPI_REQUEST_NULL) {
        mpc_request req = p.req;
        if (!info.is_send)
            mpc_cancel(&req); /* no effect once a message matched it */
        if (mpc_test(&req, &done, NULL) != MPC_OK)
            done = 1; /* failed: completed */
    }
    if (done && p.req != MPI_REQUEST_NULL)
        rc = mpc_request_free(&p.req);
    XFER_MPI_END;
    xfer_persist_drop(id, done);
    return rc;
}

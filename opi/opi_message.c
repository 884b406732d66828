/* opi_message.c — matched probes and the receives of the message they match (System.MP.Message:
 * Comm.Mprobe, Comm.Improbe, Message.Recv and Irecv; Message.ORecv is opi_sdto.c's), a Message
 * dropped unreceived (recorded for transfer/dropped.c to discard), and the size of an array
 * element (Status.GetCount<T>).
 *
 * A matched message is its Message's alone: no other receive can take it, and MPI takes it off
 * the queue with the receive MPI starts (MPI_Mrecv, MPI_Imrecv), a truncated one too. *used tells
 * System.MP whether that happened: 1 once MPI was given the message (whatever it reported), 0
 * when an argument was refused before, which leaves the Message to be received. The message
 * handle is MPI's int; MP.ProcNull's matched probe gives MPI_MESSAGE_NO_PROC, whose receives
 * complete at once with ProcNull's status, filled here (opi_proc_null_status) as for every other
 * ProcNull transfer. */
#include "opi_icalls.h"

/* ---- matched probes ---- */

int32_t opi_mprobe(int32_t comm, int32_t size, int32_t source, int32_t tag, opi_status *status,
                   int32_t *message)
{
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_source(size, &source, &tag)))
        return rc;
    xfer_discard_dropped();        /* a safe point for messages dropped earlier */
    if (source == MPI_PROC_NULL) { /* at once, as in MPI (MPI_MESSAGE_NO_PROC) */
        opi_proc_null_status(status);
        *message = MPI_MESSAGE_NO_PROC;
        return MPC_OK;
    }
    mpc_status st; /* a probe's: Count == Bytes == the message's size, never cancelled */
    mpc_message msg = MPI_MESSAGE_NULL;
    mpc_hang_note(MPC_HANG_PROBE, comm, source, tag); /* Mprobe */
    if ((rc = xfer_probe_wait(source, tag, comm, &st, &msg)) != MPC_OK)
        return rc;
    opi_fill_status(status, &st, 1);
    *message = msg;
    return MPC_OK;
}

RT_HOLDS_STACK_MARK int32_t opi_improbe(int32_t comm, int32_t size, int32_t source, int32_t tag,
                                        opi_status *status, int32_t *message, int32_t *found)
{
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_source(size, &source, &tag)))
        return rc;
    xfer_discard_dropped();
    if (source == MPI_PROC_NULL) { /* found at once, as in MPI */
        opi_proc_null_status(status);
        *message = MPI_MESSAGE_NO_PROC;
        *found = 1;
        return MPC_OK;
    }
    int matched = 0;
    mpc_status st;
    mpc_message msg = MPI_MESSAGE_NULL;
    XFER_MPI_BEGIN();
    rc = mpc_improbe(source, tag, comm, &matched, &msg, &st);
    XFER_MPI_END;
    if (rc != MPC_OK)
        return rc;
    *found = matched;
    if (matched) {
        opi_fill_status(status, &st, 1);
        *message = msg;
    }
    return MPC_OK;
}

/* ---- the receives of a matched message ---- */

/* Starts receiving msg into b (lying in obj) and tests it once: one entry into MPI, in which a
 * message that has arrived whole (eager) completes. */
RT_HOLDS_STACK_MARK static int start_matched(mpc_message msg, const opi_buffer *b, MonoObject *obj,
                                             xfer_started *s)
{
    int rc;
    *s = (xfer_started){.req = MPI_REQUEST_NULL};
    XFER_MPI_BEGIN(obj);
    rc = mpc_imrecv_typed(b->data, b->count, b->type, &msg, &s->req);
    if (rc == MPC_OK)
        s->test_rc = mpc_test(&s->req, &s->done, &s->st);
    XFER_MPI_END;
    return rc;
}

/* Receives the matched message into b (lying in obj), as a blocking receive does (run_blocking in
 * opi_icalls.c): the first test in the start's own entry into MPI, then xfer_complete, which pins
 * obj only if a collection comes. */
static int receive_matched_into(int32_t message, const opi_buffer *b, MonoObject *obj,
                                opi_status *status, int32_t *used)
{
    *used = 1;
    if (message == MPI_MESSAGE_NO_PROC) {
        xfer_huge_pages_unstage();
        opi_proc_null_status(status);
        return MPC_OK;
    }
    xfer_started s;
    int rc = start_matched(message, b, obj, &s);
    if (rc != MPC_OK)
        return rc;
    gch_count(GCH_OPERATIONS, 1);
    if (s.done || s.test_rc != MPC_OK) {
        gch_count(GCH_PINS_AVOIDED, 1);
        rc = s.test_rc;
    } else {
        rc = xfer_complete(&s.req, 1, &obj, 1, &s.st);
    }
    return rc == MPC_OK
               ? opi_fill_status(status, &s.st, b->elem_size)
               : opi_receive_failed(rc, &s.st, "the receive buffer", b->bytes, b->elem_size);
}

int32_t opi_message_recv_range(int32_t message, MonoObject *array, int32_t offset, int32_t count,
                               opi_status *status, int32_t *used)
{
    opi_buffer b;
    int rc;
    *used = 0;
    if ((rc = opi_buffer_range(array, offset, count, &b)))
        return rc;
    return receive_matched_into(message, &b, array, status, used);
}

int32_t opi_message_recv_region(int32_t message, MonoObject *array, MonoObject *region,
                                opi_status *status, int32_t *used)
{
    opi_buffer b;
    int rc;
    *used = 0;
    if ((rc = opi_buffer_region_as(array, region, &(opi_region_names){"array", "region"}, &b)))
        return rc;
    return receive_matched_into(message, &b, array, status, used);
}

int32_t opi_message_irecv_range(int32_t message, MonoObject *array, int32_t offset, int32_t count,
                                MonoObject *owner, int64_t *id, opi_status *status, int32_t *used)
{
    opi_buffer b;
    int rc;
    *used = 0;
    *id = -1;
    if ((rc = opi_buffer_range(array, offset, count, &b)))
        return rc;
    *used = 1;
    if (message == MPI_MESSAGE_NO_PROC) { /* finished at once, without MPI */
        xfer_huge_pages_unstage();
        opi_proc_null_status(status);
        status->error = MPC_OK;
        return MPC_OK;
    }
    uint32_t early_pin; /* MOTOR_PIN_POLICY=every: pinned before the transfer starts */
    xfer_early_pins(&array, 1, &early_pin);
    xfer_started s;
    if ((rc = start_matched(message, &b, array, &s)) != MPC_OK) {
        xfer_early_unpin(&early_pin, 1);
        return rc;
    }
    xfer_info info = {.elem_size = b.elem_size, .is_send = 0, .bytes = (int64_t)b.bytes};
    return opi_track_transfer(&s, &array, 1, &early_pin, owner, &info, "the receive buffer", id,
                              status);
}

/* ---- a Message dropped unreceived ---- */

/* Its finalizer's call: records the message for the core to receive and discard (no MPI here,
 * which a finalizer may not be allowed to call), then discards what is recorded at once when MPI
 * lets this thread call it (MPI_THREAD_MULTIPLE) and is not closing. */
int32_t opi_message_drop(int32_t message, int64_t bytes)
{
    if (message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC)
        return MPC_OK;
    int rc = xfer_message_drop(message, bytes);
    if (rc != MPC_OK)
        return error_record(rc, NULL, "out of memory recording a dropped message");
    if (mpc_is_initialized() && mpc_thread_level() == MPI_THREAD_MULTIPLE)
        xfer_discard_dropped();
    return MPC_OK;
}

/* ---- typed counts ---- */

/* The bytes of one element of array (a T[], any length) as OPI moves it: what a receive's Count
 * divides by. A T that is not transportable is refused, as a transfer would refuse it. */
int32_t opi_element_size(MonoObject *array, int32_t *size)
{
    opi_buffer b;
    int rc = opi_buffer_whole_as(array, "T", &b);
    if (rc == MPC_OK)
        *size = (int32_t)b.elem_size;
    return rc;
}

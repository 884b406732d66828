/* opi_status.c — what a C# caller sees of a transfer's end: the Status filled from MPI's (or
 * from what was sent), ProcNull's status, and the error records of refused ranks and tags and of
 * truncated receives. Below the internal-call files: each of them uses these, none is used here. */
#include "opi_internal.h"

#include <stdio.h>

/* elem_size: bytes per element of the receiving object, for Count (clamped at INT32_MAX;
 * Bytes stays exact). A message that is not a whole number of elements fills the status but
 * is an error: the last element arrived in part (the sender's element type differs). */
int opi_fill_status(opi_status *out, const mpc_status *s, uint32_t elem_size)
{
    out->source = s->source;
    out->tag = s->tag;
    out->bytes = s->bytes;
    out->cancelled = s->cancelled;
    if (s->cancelled) { /* nothing arrived: System.MP's empty status, no element check */
        out->source = OPI_ANY_SOURCE;
        out->tag = OPI_ANY_TAG;
        out->count = 0;
        out->bytes = 0;
        return MPC_OK;
    }
    if (elem_size == 0) { /* an object with no fields: one arrived if the message matched */
        out->count = s->bytes == 0;
        return MPC_OK;
    }
    int64_t n = s->bytes / elem_size;
    out->count = n > INT32_MAX ? INT32_MAX : (int32_t)n;
    if (s->bytes % elem_size == 0)
        return MPC_OK;
    return error_record(
        OPI_ERR_PARTIAL_ELEMENT, NULL,
        "the message of %lld bytes is not a whole number of the receive buffer's %u-byte "
        "elements (%lld = %lld x %u + %lld): the sender's element type differs",
        (long long)s->bytes, elem_size, (long long)s->bytes, (long long)n, elem_size,
        (long long)(s->bytes % elem_size));
}

void opi_proc_null_status(opi_status *out)
{
    out->source = OPI_PROC_NULL;
    out->tag = OPI_ANY_TAG;
    out->count = 0;
    out->cancelled = 0;
    out->bytes = 0;
}

int opi_rank_error(int code, const char *argument, int32_t rank, int32_t size)
{
    const char *also = code == MPC_ERR_SOURCE
                           ? ", and is neither MP.AnySource (-1) nor MP.ProcNull (-3)"
                       : code == MPC_ERR_DEST ? ", and is not MP.ProcNull (-3)"
                                              : "";
    return error_record(code, argument, "%s %d is outside 0..%d of a communicator of size %d%s",
                        argument, rank, size - 1, size, also);
}

int opi_tag_error(const char *argument, int32_t tag, int wildcard_allowed)
{
    return error_record(MPC_ERR_TAG, argument, "%s %d is outside 0..%d (0..MP.TagUpperBound)%s",
                        argument, tag, mpc_tag_ub(),
                        wildcard_allowed ? ", and is not MP.AnyTag (-1)" : "");
}

/* MPI does not report a truncated message's size (MPICH 4.0's status holds no count and its
 * text none either), and the message is consumed: what is known is the envelope MPI filled
 * (st, NULL for a collective) and the buffer's size, so those and the way to learn the size are
 * reported. MPICH's error stack (pointer values of its internal calls) tells a user nothing. */
int opi_receive_failed(int rc, const mpc_status *st, const char *what, size_t bytes,
                       uint32_t elem_size)
{
    if (rc <= 0 || mpc_error_class(rc) != MPI_ERR_TRUNCATE)
        return rc;
    char from[64] = "the message";
    if (st && st->source >= 0)
        snprintf(from, sizeof from, "the message from rank %d with tag %d", st->source, st->tag);
    char elements[64] = "";
    if (elem_size > 1 && bytes != elem_size) /* an array: in elements too */
        snprintf(elements, sizeof elements, " (%zu elements of %u bytes)", bytes / elem_size,
                 elem_size);
    return error_record(
        rc, NULL,
        "message truncated: %s is longer than the %zu bytes%s %s holds, and was consumed; "
        "MPI does not report a truncated message's size (Probe first to learn it)",
        from, bytes, elements, what);
}

/* Status of a completed send: what was sent (MPI defines no source or count for sends). */
static void fill_send_status(opi_status *out, const mpc_status *s, const xfer_info *info)
{
    out->source = -1;
    out->tag = info->tag;
    out->cancelled = s->cancelled;
    if (s->cancelled) { /* nothing was sent: the empty status */
        out->tag = OPI_ANY_TAG;
        out->bytes = 0;
        out->count = 0;
        return;
    }
    out->bytes = info->bytes;
    out->count = info->elem_size ? (int32_t)(info->bytes / info->elem_size) : 1;
}

int opi_request_status(opi_status *out, const mpc_status *st, const xfer_info *info)
{
    if (info->is_send == XFER_FILE_ACCESS) { /* the bytes moved, no envelope (opi_file.c) */
        int64_t n = info->elem_size ? st->bytes / info->elem_size : 0;
        *out = (opi_status){.source = OPI_ANY_SOURCE,
                            .tag = OPI_ANY_TAG,
                            .count = n > INT32_MAX ? INT32_MAX : (int32_t)n,
                            .bytes = st->bytes};
        return MPC_OK;
    }
    if (!info->is_send)
        return opi_fill_status(out, st, info->elem_size);
    fill_send_status(out, st, info);
    return MPC_OK;
}

int opi_track_transfer(const xfer_started *s, MonoObject *const *objs, int nobjs,
                       const uint32_t *early_pins, MonoObject *owner, const xfer_info *info,
                       const char *what, int64_t *id, opi_status *status)
{
    int rc;
    mpc_status st;
    xfer_track(s, objs, nobjs, early_pins, owner, info, id, &rc, &st);
    if (*id >= 0)
        return MPC_OK;
    rc = opi_completed(info, rc); /* info->buffer is still the caller's */
    status->error = rc != MPC_OK
                        ? opi_receive_failed(rc, &st, what, (size_t)info->bytes, info->elem_size)
                        : opi_request_status(status, &st, info);
    return MPC_OK;
}

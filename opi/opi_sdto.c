/* opi_sdto.c — the structured data transport's internal calls: Serializer, OSend/ORecv, OBcast,
 * OScatter/OGather/OAllgather. A graph is written into a native buffer from the pool (no
 * managed allocation, so nothing moves while it is written) and sent from there: no pin, no
 * managed copy. A received graph is one message, exactly the Serializer's bytes: ORecv
 * matched-probes it for its size (no size pre-announcement), OIrecv posts a receive into reserved
 * address space; either is validated, then read. */
#include "opi_icalls.h"

#include "gc_hooks.h"
#include "serializer.h"

#include <mono/metadata/class.h>
#include <stdlib.h>
#include <string.h>

static __thread xfer_buffer *written;  /* SdWrite's result, until SdCopy */
static __thread xfer_buffer *received; /* pieces of a split collective, until SdRelease */

/* Swaps a thread's held buffer for b (NULL: none), giving the old one back to the pool. */
static void hold(xfer_buffer **slot, xfer_buffer *b)
{
    xfer_buffer_give(*slot);
    *slot = b;
}

/* Writes the graph, or a piece of it, appended to the pooled buffer *b (taken when NULL). On
 * failure the serializer's record says why; the graph came from the C# argument `argument`. */
static int write_into(xfer_buffer **b, MonoObject *root, size_t first, size_t count,
                      const char *argument)
{
    if (!*b && !(*b = xfer_buffer_take(4096)))
        return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a serialization buffer");
    sd_buffer out = {(*b)->data, (*b)->length, (*b)->capacity};
    int rc = count == SIZE_MAX && out.len == 0 ? sd_write(root, &out)
                                               : sd_write_piece(root, first, count, &out);
    (*b)->data = out.data;
    (*b)->length = out.len;
    (*b)->capacity = out.cap;
    return error_blame(rc, argument);
}

static MonoClass *class_of(MonoReflectionType *t)
{
    return t ? mono_class_from_mono_type(mono_reflection_type_get_type(t)) : NULL;
}

/* maker: System.MP's SdtoFactories.Make as a function pointer (0: none, large reads then make
 * their objects through the embedding API). */
int32_t opi_sd_init(MonoReflectionType *attribute, int64_t maker)
{
    MonoClass *k = class_of(attribute);
    if (!k)
        return error_record(OPI_ERR_NULL_ARGUMENT, "transportableAttribute",
                            "transportableAttribute is null");
    sd_install(k);
    sd_set_maker((sd_maker)(intptr_t)maker);
    return MPC_OK;
}

/* keep: hold the bytes for SdCopy (Serialize); 0 only measures them (Measure). */
int32_t opi_sd_write(MonoObject *graph, int32_t keep, int32_t *size)
{
    hold(&written, NULL);
    size_t length = 0;
    int rc = keep ? write_into(&written, graph, 0, SIZE_MAX, "graph")
                  : error_blame(sd_measure(graph, &length), "graph");
    if (keep && written)
        length = written->length;
    if (rc != MPC_OK)
        hold(&written, NULL);
    if (rc == MPC_OK && length > INT32_MAX)
        return error_record(
            MPC_ERR_TOO_LARGE, "graph",
            "the serialized graph takes %zu bytes; a byte[] holds at most %d: OSend, OBcast and "
            "the other O-calls carry graphs this large",
            length, INT32_MAX);
    *size = rc == MPC_OK ? (int32_t)length : 0;
    return rc;
}

/* Bytes copied between two looks at the collection epoch (about a millisecond of memcpy). */
#define COPY_CHUNK ((size_t)1 << 20)

/* Copies n bytes between native memory and the data of a managed array, a chunk at a time,
 * giving way between chunks to a collection another thread requested (a long raw call must
 * not stall it). The array's address is fetched afresh after each chance to collect. */
static int copy_giving_way(MonoObject *array, size_t offset, uint8_t *native, size_t n,
                           int to_array)
{
    uint64_t seen = gch_epoch();
    for (size_t at = 0; at < n; at += COPY_CHUNK) {
        if (at && gch_epoch() != seen) {
            gch_yield_to_gc();
            seen = gch_epoch();
        }
        opi_buffer b;
        int rc = opi_buffer_whole(array, &b); /* succeeded before the copy: the same array */
        if (rc != MPC_OK)
            return rc;
        size_t len = n - at < COPY_CHUNK ? n - at : COPY_CHUNK;
        if (to_array)
            memcpy(b.data + offset + at, native + at, len);
        else
            memcpy(native + at, b.data + offset + at, len);
    }
    return MPC_OK;
}

int32_t opi_sd_copy(MonoObject *dest, int32_t offset)
{
    opi_buffer b;
    int rc = opi_buffer_whole_as(dest, "buffer", &b);
    if (rc != MPC_OK)
        return rc;
    if (offset < 0 || (size_t)offset > b.bytes)
        return error_record(OPI_ERR_OFFSET, "offset",
                            "offset %d is outside 0..%zu, the length of buffer", offset, b.bytes);
    if (!written)
        return error_record(OPI_ERR_COUNT, "buffer", "no serialized graph is waiting to be copied");
    if (written->length > b.bytes - (size_t)offset)
        return error_record(OPI_ERR_COUNT, "buffer",
                            "the graph needs %zu bytes; %zu are left in buffer after offset %d",
                            written->length, b.bytes - (size_t)offset, offset);
    rc = copy_giving_way(dest, (size_t)offset, written->data, written->length, 1);
    hold(&written, NULL);
    return rc;
}

/* The calling thread's receive budget for the reads that follow (0, 0: none): System.MP sets it
 * around the reads of a communicator or process that has one (ReceiveBudget). */
int32_t opi_sd_budget(int64_t bytes, double multiple)
{
    sd_set_budget(bytes, multiple);
    return MPC_OK;
}

/* Reads bytes[0..len) as a graph whose root must be a `expected`, reusing the objects of the
 * graph under reuse where they fit (NULL: none). */
static int read_graph_into(const uint8_t *bytes, size_t len, MonoReflectionType *expected,
                           MonoObject *reuse, MonoObject **result)
{
    MonoClass *k = class_of(expected);
    if (!k)
        return error_record(OPI_ERR_NULL_ARGUMENT, "expected", "the expected type is null");
    return reuse ? sd_read_into(bytes, len, k, reuse, result) : sd_read(bytes, len, k, result);
}

static int read_graph(const uint8_t *bytes, size_t len, MonoReflectionType *expected,
                      MonoObject **result)
{
    return read_graph_into(bytes, len, expected, NULL, result);
}

int32_t opi_sd_read(MonoObject *src, int32_t offset, int32_t count, MonoReflectionType *expected,
                    MonoObject **result)
{
    opi_buffer b;
    int rc = opi_buffer_range_as(src, offset, count,
                                 &(opi_range_names){"buffer", "offset", "count"}, &b);
    if (rc != MPC_OK)
        return rc;
    /* the reader allocates, and the byte[] could move: read from a native copy */
    xfer_buffer *copy = xfer_buffer_take(b.bytes);
    if (!copy)
        return error_record(MPC_ERR_NO_MEMORY, NULL,
                            "out of memory for a copy of %zu serialized bytes", b.bytes);
    if ((rc = copy_giving_way(src, (size_t)offset, copy->data, b.bytes, 0)) == MPC_OK)
        rc = read_graph(copy->data, b.bytes, expected, result);
    xfer_buffer_give(copy);
    return rc;
}

/* Starts sending b's bytes, tested once (s): an eager send often ends there. */
RT_HOLDS_STACK_MARK static int start_send(int32_t comm, const xfer_buffer *b, int32_t dest,
                                          int32_t tag, xfer_started *s)
{
    int rc;
    *s = (xfer_started){.req = MPI_REQUEST_NULL};
    XFER_MPI_BEGIN();
    rc = mpc_isend(b->data, b->length, dest, tag, comm, &s->req);
    if (rc == MPC_OK)
        s->test_rc = mpc_test(&s->req, &s->done, NULL);
    XFER_MPI_END;
    return rc;
}

/* Takes a matched message off the queue into buf (NULL, 0: discards it, truncated — expected). */
RT_HOLDS_STACK_MARK static int receive_matched(void *buf, size_t bytes, mpc_message *msg,
                                               mpc_status *st)
{
    int rc;
    XFER_MPI_BEGIN();
    rc = mpc_mrecv(buf, bytes, msg, st);
    XFER_MPI_END;
    return rc;
}

/* Writes header's bytes (NULL: none), then the graph, into a pooled buffer (*b) and starts
 * sending it, tested once (s). On failure the buffer is given back (*b NULL) and the code
 * returned. */
static int start_graph_send(int32_t comm, const opi_buffer *header, MonoObject *graph, int32_t dest,
                            int32_t tag, xfer_buffer **b, xfer_started *s)
{
    if (header) { /* copied before the write, which may let a collection move the header */
        if (!(*b = xfer_buffer_take(header->bytes + 4096)))
            return error_record(MPC_ERR_NO_MEMORY, NULL,
                                "out of memory for a serialization buffer");
        memcpy((*b)->data, header->data, header->bytes);
        (*b)->length = header->bytes;
    }
    int rc = write_into(b, graph, 0, SIZE_MAX, "graph");
    if (rc == MPC_OK)
        rc = start_send(comm, *b, dest, tag, s);
    if (rc != MPC_OK) {
        xfer_buffer_give(*b);
        *b = NULL;
    }
    return rc;
}

/* Bytes of OSend's sends that may run on after it returned (buffered): beyond, OSend waits. */
#define OSEND_BUFFERED_BYTES ((int64_t)256 << 20)

/* The end of a send started from the pooled buffer b (tested once, s). Still running (the
 * receiver has not matched it): the bytes are ours, not the caller's, so the send goes on
 * buffered and the call returns, as a standard-mode send may; the core frees b when MPI is done.
 * Past `cap` bytes of such sends it waits, as MPI_Send does, and so it does when the registry
 * cannot take it. */
RT_HOLDS_STACK_MARK static int run_on_buffered(xfer_buffer *b, xfer_started *s, int32_t tag,
                                               int64_t cap)
{
    gch_count(GCH_OPERATIONS, 1);
    if (s->test_rc != MPC_OK || s->done) {
        xfer_buffer_give(b);
        return s->test_rc;
    }
    xfer_info info = {
        .elem_size = 1, .is_send = 1, .tag = tag, .bytes = (int64_t)b->length, .buffer = b};
    int64_t id;
    if (xfer_unowned_bytes() > 0) { /* earlier buffered sends that have finished go first */
        XFER_MPI_BEGIN();
        xfer_reap_unowned();
        XFER_MPI_END;
    }
    if (xfer_unowned_bytes() <= cap - (int64_t)b->length &&
        xfer_track_native(s->req, NULL, &info, &id) == MPC_OK)
        return MPC_OK;
    int rc = xfer_complete(&s->req, 1, NULL, 0, NULL); /* native memory: nothing to pin */
    xfer_buffer_give(b);
    return rc;
}

int32_t opi_osend(int32_t comm, int32_t size, MonoObject *graph, int32_t dest, int32_t tag)
{
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_dest(size, &dest, tag)))
        return rc;
    if (dest == MPI_PROC_NULL) /* MP.ProcNull: nothing to send, nothing to serialize */
        return MPC_OK;
    xfer_buffer *b = NULL;
    xfer_started s;
    if ((rc = start_graph_send(comm, NULL, graph, dest, tag, &b, &s)) != MPC_OK)
        return rc;
    /* no OSend waits for a receiver that matches lazily (OIrecv) or is itself in OSend */
    return run_on_buffered(b, &s, tag, OSEND_BUFFERED_BYTES);
}

static int receive_graph(mpc_message *msg, int64_t bytes, MonoReflectionType *expected,
                         MonoObject *reuse, MonoObject **result, opi_status *status);

int32_t opi_orecv(int32_t comm, int32_t size, int32_t source, int32_t tag,
                  MonoReflectionType *expected, MonoObject **result, opi_status *status)
{
    return opi_orecv_into(comm, size, source, tag, expected, NULL, result, status);
}

RT_HOLDS_STACK_MARK int32_t opi_orecv_into(int32_t comm, int32_t size, int32_t source, int32_t tag,
                                           MonoReflectionType *expected, MonoObject *reuse,
                                           MonoObject **result, opi_status *status)
{
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_source(size, &source, &tag)))
        return rc;
    if (!expected)
        return error_record(OPI_ERR_NULL_ARGUMENT, "expected", "the expected type is null");
    if (source == MPI_PROC_NULL) { /* MP.ProcNull: completes at once with no graph */
        *result = NULL;
        opi_proc_null_status(status);
        return MPC_OK;
    }
    mpc_status s;
    mpc_message msg;
    mpc_hang_note(MPC_HANG_RECV, comm, source, tag); /* an ORecv waits in its probe */
    if ((rc = xfer_probe_wait(source, tag, comm, &s, &msg)) != MPC_OK)
        return rc;
    return receive_graph(&msg, s.bytes, expected, reuse, result, status);
}

/* Receives the matched message msg of bytes bytes (its probe's size) into a pooled buffer and
 * reads it as a graph whose root must be an expected (reusing the graph under reuse, NULL: none).
 * The message is taken off the queue whatever fails. */
RT_HOLDS_STACK_MARK static int receive_graph(mpc_message *msg, int64_t bytes,
                                             MonoReflectionType *expected, MonoObject *reuse,
                                             MonoObject **result, opi_status *status)
{
    int rc;
    mpc_status st;
    xfer_buffer *b = xfer_buffer_take(bytes > 0 ? (size_t)bytes : 1);
    if (!b) { /* the matched message must still be taken off the queue (truncated: expected) */
        receive_matched(NULL, 0, msg, NULL);
        return error_record(MPC_ERR_NO_MEMORY, NULL,
                            "out of memory for a received graph of %lld bytes", (long long)bytes);
    }
    gch_count(GCH_OPERATIONS, 1);
    XFER_BLOCKING_BEGIN(); /* native buffer: nothing to pin */
    rc = mpc_mrecv(b->data, (size_t)bytes, msg, &st);
    XFER_BLOCKING_END;
    if (rc == MPC_OK) {
        opi_fill_status(status, &st, 1);
        rc = read_graph_into(b->data, (size_t)bytes, expected, reuse, result);
    }
    xfer_buffer_give(b);
    return rc;
}

/* Message.ORecv: the graph of a message a matched probe (Comm.Mprobe, Improbe) took, of bytes
 * bytes. *used: the message was received (or, from MP.ProcNull, completed); 0 when an argument was
 * refused first. */
int32_t opi_message_orecv(int32_t message, int64_t bytes, MonoReflectionType *expected,
                          MonoObject **result, opi_status *status, int32_t *used)
{
    *used = 0;
    if (!expected)
        return error_record(OPI_ERR_NULL_ARGUMENT, "expected", "the expected type is null");
    *used = 1;
    if (message == MPI_MESSAGE_NO_PROC) { /* MP.ProcNull: completes at once with no graph */
        *result = NULL;
        opi_proc_null_status(status);
        return MPC_OK;
    }
    mpc_message msg = message;
    return receive_graph(&msg, bytes, expected, NULL, result, status);
}

/* ---- non-blocking graphs: OIsend, OIrecv ----
 * A sent graph is written during the call into a pooled native buffer that the pin registry
 * owns until the send completes (nothing to pin). A receive needs no size guess: a real MPI
 * receive is posted as the ORequest starts, into a region of reserved address space (see
 * opi_oirecv_post) the registry owns like a send's buffer; the completion reads the graph from
 * it. A dropped request is finished by the GC hook, which gives the region back. */

int32_t opi_oisend(int32_t comm, int32_t size, MonoObject *graph, int32_t dest, int32_t tag,
                   MonoObject *owner, int64_t *id, opi_status *status)
{
    int rc;
    *id = -1;
    if ((rc = check_comm(comm)) || (rc = check_dest(size, &dest, tag)))
        return rc;
    if (dest == MPI_PROC_NULL) { /* finished at once: nothing to send, nothing to serialize */
        opi_proc_null_status(status);
        status->error = MPC_OK;
        return MPC_OK;
    }
    xfer_buffer *b = NULL;
    xfer_started s;
    if ((rc = start_graph_send(comm, NULL, graph, dest, tag, &b, &s)) != MPC_OK)
        return rc;
    xfer_info info = {
        .elem_size = 1, .is_send = 1, .tag = tag, .bytes = (int64_t)b->length, .buffer = b};
    rc = opi_track_transfer(&s, NULL, 0, NULL, owner, &info, "the graph", id, status);
    if (*id < 0) /* finished at once: the registry never took the buffer */
        xfer_buffer_give(b);
    return rc;
}

struct match {
    int source, tag;
    mpc_comm comm;
    int found;
    mpc_message msg;
    mpc_status st;
    void *buf;
    size_t bytes;
    mpc_request req;
};

/* Matches the next message (m->source, m->tag) with one probe and, when there is one, starts
 * receiving it into a pooled buffer of its size (*b, m->req). *matched says whether a message was
 * matched: it is then taken off the queue whatever else fails (*b NULL on failure). */
RT_HOLDS_STACK_MARK static int match_and_start(struct match *m, int32_t *matched, xfer_buffer **b)
{
    int rc;
    *b = NULL;
    XFER_MPI_BEGIN();
    rc = mpc_improbe(m->source, m->tag, m->comm, &m->found, &m->msg, &m->st);
    XFER_MPI_END;
    if (rc != MPC_OK || !m->found)
        return rc;
    *matched = 1;
    if (!(*b = xfer_buffer_take((size_t)m->st.bytes))) { /* truncated to nothing: expected */
        receive_matched(NULL, 0, &m->msg, NULL);
        return error_record(MPC_ERR_NO_MEMORY, NULL,
                            "out of memory for a received message of %lld bytes",
                            (long long)m->st.bytes);
    }
    (*b)->length = (size_t)m->st.bytes;
    m->buf = (*b)->data;
    m->bytes = (*b)->length;
    XFER_MPI_BEGIN();
    rc = mpc_imrecv(m->buf, m->bytes, &m->msg, &m->req);
    XFER_MPI_END;
    if (rc != MPC_OK) {
        xfer_buffer_give(*b);
        *b = NULL;
    }
    return rc;
}

/* A real MPI receive, posted now so that it takes its place in MPI's matching order (a receive
 * matched later by probes let a plain receive posted after it take its message), into a region
 * of reserved address space the registry owns: any message up to its size fits, and only what
 * the message fills is memory. owner is the ORequest; one it drops is finished by the GC hook
 * like a dropped Irecv. */
RT_HOLDS_STACK_MARK int32_t opi_oirecv_post(int32_t comm, int32_t size, int32_t source, int32_t tag,
                                            MonoObject *owner, int64_t *id, opi_status *status)
{
    int rc;
    *id = -1;
    if ((rc = check_comm(comm)) || (rc = check_source(size, &source, &tag)))
        return rc;
    if (source == MPI_PROC_NULL) { /* complete at once, with no graph */
        opi_proc_null_status(status);
        status->error = MPC_OK;
        return MPC_OK;
    }
    xfer_buffer *b = xfer_region_take();
    if (!b)
        return error_record(
            MPC_ERR_NO_MEMORY, NULL,
            "no address space left to reserve a receive buffer for OIrecv (each receive in flight "
            "reserves up to %zu GiB)",
            XFER_REGION_BYTES >> 30);
    mpc_request req = MPI_REQUEST_NULL;
    XFER_MPI_BEGIN();
    rc = mpc_irecv(b->data, b->capacity, source, tag, comm, &req);
    XFER_MPI_END;
    if (rc != MPC_OK) {
        xfer_buffer_give(b);
        return rc;
    }
    gch_count(GCH_OPERATIONS, 1);
    xfer_info info = {.elem_size = 1, .is_send = 0, .bytes = (int64_t)b->capacity, .buffer = b};
    if (xfer_track_native(req, owner, &info, id) != MPC_OK) {
        /* cannot track it: take it back (a message matched meanwhile is received first) */
        XFER_BLOCKING_BEGIN();
        if (mpc_cancel(&req) == MPC_OK)
            (void)mpc_wait(&req, NULL);
        XFER_BLOCKING_END;
        xfer_buffer_give(b);
        *id = -1;
        return error_record(MPC_ERR_NO_MEMORY, NULL,
                            "out of memory for the registry of transfers in flight");
    }
    return MPC_OK;
}

RT_HOLDS_STACK_MARK int32_t opi_oirecv_complete(int64_t id, int32_t block,
                                                MonoReflectionType *expected, MonoObject **result,
                                                int32_t *completed, opi_status *status)
{
    xfer_started t = {.done = 0};
    xfer_info info;
    *completed = 0;
    *result = NULL;
    int rc = xfer_acquire(id, &t.req, &info);
    if (rc != MPC_OK)
        return rc;
    if (block) {
        mpc_hang_note(MPC_HANG_WAIT, MPI_COMM_NULL, -1, -1);
        rc = xfer_complete(&t.req, 1, NULL, 0, &t.st); /* native buffer: nothing to pin */
        t.done = 1;
    } else {
        XFER_MPI_BEGIN();
        rc = mpc_test(&t.req, &t.done, &t.st);
        XFER_MPI_END;
        if (rc != MPC_OK)
            t.done = 1; /* a failed request is complete */
    }
    if (!t.done) {
        xfer_release(id, 0);
        return MPC_OK;
    }
    *completed = 1;
    if (rc == MPC_OK) {
        info.buffer->length = (size_t)t.st.bytes;
        if ((rc = opi_fill_status(status, &t.st, 1)) == MPC_OK && !t.st.cancelled)
            rc = read_graph(info.buffer->data, (size_t)t.st.bytes, expected, result);
    } else if (mpc_error_class(rc) == MPI_ERR_TRUNCATE) {
        rc = error_record(rc, NULL,
                          "the message from rank %d with tag %d is larger than the %lld bytes "
                          "OIrecv could reserve "
                          "for it, and was consumed; receive graphs that large with ORecv",
                          t.st.source, t.st.tag, (long long)info.bytes);
    }
    xfer_release(id, 1); /* gives the buffer back */
    return rc;
}

/* ---- a graph after a header of raw bytes, for System.MP.Arrays' scheduler ----
 * A message to an element carries routing fields (sender, number, origin, index) that are no
 * objects: written as a graph record they cost ~0.2 µs a message. OPost writes them as raw bytes
 * before the graph and starts a send that never waits: one that does not finish at once runs on
 * buffered, like OSend's, but with no cap (a scheduler that blocked in a send while its peers
 * send to it would deadlock). OTake receives the next matching message into the thread's
 * incoming buffer after one matched probe (ORecv after an Iprobe probes twice), where
 * SdReadIncoming and SdReadIncomingAfter read it. */

/* The header of the incoming message, hb's size: the bytes it holds (*have), or a failure when it
 * is shorter. */
static int incoming_header(const opi_buffer *hb, size_t *have)
{
    *have = received ? received->length : 0;
    if (*have < hb->bytes)
        return error_record(SD_ERR_SERIALIZATION, NULL,
                            "a message of %zu bytes is shorter than its %zu-byte header", *have,
                            hb->bytes);
    return MPC_OK;
}

int32_t opi_opost(int32_t comm, int32_t size, MonoObject *header, MonoObject *graph, int32_t dest,
                  int32_t tag)
{
    int rc;
    opi_buffer hb;
    if ((rc = check_comm(comm)) || (rc = check_dest(size, &dest, tag)) ||
        (header && (rc = opi_buffer_whole_as(header, "header", &hb))))
        return rc;
    if (dest == MPI_PROC_NULL)
        return MPC_OK;
    xfer_buffer *b = NULL;
    xfer_started s;
    if ((rc = start_graph_send(comm, header ? &hb : NULL, graph, dest, tag, &b, &s)) != MPC_OK)
        return rc;
    return run_on_buffered(b, &s, tag, INT64_MAX);
}

/* Passes the incoming message on to dest, its header replaced by header's bytes and the rest
 * sent as it came (a message to an element that is elsewhere: its graph is neither read nor
 * written again; the rank that delivers it checks it). */
RT_HOLDS_STACK_MARK int32_t opi_oforward(int32_t comm, int32_t size, MonoObject *header,
                                         int32_t dest, int32_t tag)
{
    int rc;
    opi_buffer hb;
    size_t have;
    if ((rc = check_comm(comm)) || (rc = check_dest(size, &dest, tag)) ||
        (rc = opi_buffer_whole_as(header, "header", &hb)) || (rc = incoming_header(&hb, &have)))
        return rc;
    if (dest == MPI_PROC_NULL)
        return MPC_OK;
    xfer_buffer *b = xfer_buffer_take(have);
    if (!b)
        return error_record(MPC_ERR_NO_MEMORY, NULL,
                            "out of memory for a forwarded message of %zu bytes", have);
    memcpy(b->data, hb.data, hb.bytes);
    memcpy(b->data + hb.bytes, received->data + hb.bytes, have - hb.bytes);
    b->length = have;
    xfer_started s;
    if ((rc = start_send(comm, b, dest, tag, &s)) != MPC_OK) {
        xfer_buffer_give(b);
        return rc;
    }
    return run_on_buffered(b, &s, tag, INT64_MAX);
}

RT_HOLDS_STACK_MARK int32_t opi_otake(int32_t comm, int32_t size, int32_t source, int32_t tag,
                                      MonoObject *header, int32_t *found, opi_status *status)
{
    int rc;
    opi_buffer hb = {0};
    *found = 0;
    if ((rc = check_comm(comm)) || (rc = check_source(size, &source, &tag)) ||
        (header && (rc = opi_buffer_whole_as(header, "header", &hb))))
        return rc;
    hold(&received, NULL);
    if (source == MPI_PROC_NULL) { /* found at once, with no bytes, as in MPI */
        *found = 1;
        opi_proc_null_status(status);
        return MPC_OK;
    }
    struct match m = {.source = source, .tag = tag, .comm = comm};
    xfer_buffer *b;
    if ((rc = match_and_start(&m, found, &b)) != MPC_OK || !b)
        return rc;
    xfer_started t = {.req = m.req, .done = 0};
    XFER_MPI_BEGIN();
    rc = mpc_test(&t.req, &t.done, &t.st);
    XFER_MPI_END;
    if (rc == MPC_OK && !t.done) /* a large message: native buffer, nothing to pin */
        rc = xfer_complete(&t.req, 1, NULL, 0, &t.st);
    if (rc == MPC_OK)
        rc = opi_fill_status(status, &t.st, 1);
    if (rc != MPC_OK) {
        xfer_buffer_give(b);
        return rc;
    }
    gch_count(GCH_OPERATIONS, 1);
    received = b;
    if (header) { /* its first bytes, as far as both go (the rest of header is zeroed) */
        size_t n = b->length < hb.bytes ? b->length : hb.bytes;
        memcpy(hb.data, b->data, n);
        memset(hb.data + n, 0, hb.bytes - n);
    }
    return MPC_OK;
}

/* Copies the first bytes of the incoming message into header (as many as it holds), then reads
 * the graph after them. */
int32_t opi_sd_read_incoming_after(MonoObject *header, MonoReflectionType *expected,
                                   MonoObject **result)
{
    opi_buffer hb;
    size_t have;
    int rc;
    if ((rc = opi_buffer_whole_as(header, "header", &hb)) || (rc = incoming_header(&hb, &have)))
        return rc;
    memcpy(hb.data, received->data, hb.bytes); /* before the read, which may move header */
    return read_graph(received->data + hb.bytes, have - hb.bytes, expected, result);
}

int32_t opi_obcast(int32_t comm, int32_t size, int32_t rank, MonoObject *graph, int32_t root,
                   MonoReflectionType *expected, MonoObject **result)
{
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_root(size, root)))
        return rc;
    if (!expected)
        return error_record(OPI_ERR_NULL_ARGUMENT, "expected", "the expected type is null");
    /* the root's write may fail; the others must still learn that: size -1 tells them */
    uint64_t bytes = (uint64_t)-1;
    int wrote = MPC_OK;
    xfer_buffer *b = NULL;
    if (rank == root && (wrote = write_into(&b, graph, 0, SIZE_MAX, "graph")) == MPC_OK)
        bytes = b->length;
    gch_count(GCH_OPERATIONS, 1);
    if ((rc = opi_native_bcast(&bytes, sizeof bytes, root, comm)) != MPC_OK)
        goto done;
    if (bytes == (uint64_t)-1) { /* the root's own record still says why */
        rc = rank == root ? wrote
                          : error_record(SD_ERR_GRAPH, NULL,
                                         "the root (rank %d) could not serialize the graph", root);
        goto done;
    }
    if (!b && !(b = xfer_buffer_take((size_t)bytes))) {
        /* (the root's data broadcast then fails on this rank only) */
        rc = error_record(MPC_ERR_NO_MEMORY, NULL,
                          "out of memory for a broadcast graph of %llu bytes",
                          (unsigned long long)bytes);
        goto done;
    }
    /* every rank returns its own copy */
    if ((rc = opi_native_bcast(b->data, (size_t)bytes, root, comm)) == MPC_OK)
        rc = read_graph(b->data, (size_t)bytes, expected, result);
done:
    xfer_buffer_give(b);
    return rc;
}

/* ---- split representation: OScatter, OGather, OAllgather ----
 * The pieces travel as raw bytes with MPI's v-collectives; each rank then reads its pieces
 * from the thread's received buffer with SdReadIncoming (managed code joins gathered pieces into
 * one array), then give it back with SdRelease. */

int32_t opi_sd_read_incoming(int64_t offset, int64_t count, MonoReflectionType *expected,
                             MonoObject **result)
{
    if (!received || offset < 0 || count < 0 ||
        (uint64_t)offset + (uint64_t)count > received->length)
        return error_record(OPI_ERR_COUNT, "count",
                            "the piece at %lld of %lld bytes lies outside the %zu bytes received",
                            (long long)offset, (long long)count, received ? received->length : 0);
    return read_graph(received->data + offset, (size_t)count, expected, result);
}

int32_t opi_sd_release(void)
{
    hold(&received, NULL);
    return MPC_OK;
}

struct v_args {
    int kind; /* 0 scatter, 1 gather, 2 allgather */
    const void *send;
    void *recv;
    MPI_Count count; /* this rank's piece */
    MPI_Count *counts, *displs;
    int root;
    MPI_Comm comm;
};

/* The pieces' v-collective: inside a bracket. */
static int call_pieces(const struct v_args *a)
{
    switch (a->kind) {
    case 0:
        return mpc_scatterv(a->send, a->counts, a->displs, a->recv, (size_t)a->count, a->root,
                            a->comm);
    case 1:
        return mpc_gatherv(a->send, (size_t)a->count, a->recv, a->counts, a->displs, a->root,
                           a->comm);
    default:
        return mpc_allgatherv(a->send, (size_t)a->count, a->recv, a->counts, a->displs, a->comm);
    }
}

struct sizes_args {
    int kind; /* 0 scatter, 1 gather, 2 allgather */
    int64_t *all;
    int64_t mine;
    int root;
    MPI_Comm comm;
};

/* The pieces' sizes, one int64 per rank: inside a bracket. */
static int exchange_sizes(struct sizes_args *a)
{
    switch (a->kind) {
    case 0: return mpc_scatter(a->all, &a->mine, sizeof a->mine, a->root, a->comm);
    case 1: return mpc_gather(&a->mine, a->all, sizeof a->mine, a->root, a->comm);
    default: return mpc_allgather(&a->mine, a->all, sizeof a->mine, a->comm);
    }
}

/* Per-rank piece sizes and the byte counts and displacements of the v-collectives. */
typedef struct piece_table {
    int64_t *all;
    MPI_Count *counts, *displs;
} piece_table;

static int pieces_alloc(piece_table *t, int32_t size)
{
    t->all = calloc((size_t)size, sizeof *t->all);
    t->counts = calloc((size_t)size, sizeof *t->counts);
    t->displs = calloc((size_t)size, sizeof *t->displs);
    if (t->all && t->counts && t->displs)
        return MPC_OK;
    return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for the piece sizes of %d ranks",
                        size);
}

/* The sizes array the caller reads the pieces' sizes from: one long per rank. */
static int check_sizes(const opi_buffer *sizes, int32_t size)
{
    if (sizes->bytes >= (size_t)size * sizeof(int64_t))
        return MPC_OK;
    return error_record(OPI_ERR_COUNT, "sizes", "sizes holds %zu bytes; %d ranks need %zu",
                        sizes->bytes, size, (size_t)size * sizeof(int64_t));
}

static void pieces_free(piece_table *t)
{
    free(t->all);
    free(t->counts);
    free(t->displs);
}

/* sizes: a long[Size] the caller reads afterwards (scatter: this rank's piece in [0]). A piece
 * the writer could not write travels as size -1, so that no rank waits for it. */
RT_HOLDS_STACK_MARK int32_t opi_oscatter(int32_t comm, int32_t size, int32_t rank,
                                         MonoObject *array, int32_t root, MonoObject *sizes_out)
{
    opi_buffer sb;
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_root(size, root)) ||
        (rc = opi_buffer_whole_as(sizes_out, "sizes", &sb)) || (rc = check_sizes(&sb, size)))
        return rc;
    piece_table pt;
    int wrote = MPC_OK;
    xfer_buffer *out = NULL;
    hold(&received, NULL);
    if ((rc = pieces_alloc(&pt, size)) != MPC_OK)
        goto done;
    int64_t *all = pt.all;
    MPI_Count *counts = pt.counts, *displs = pt.displs;
    if (rank == root) {
        size_t n = array ? mono_array_length((MonoArray *)array) : 0;
        for (int32_t r = 0; r < size && wrote == MPC_OK; r++) {
            /* sizes differ by at most one; lower ranks take the extra */
            size_t base = n / (size_t)size, extra = n % (size_t)size;
            size_t first = (size_t)r * base + ((size_t)r < extra ? (size_t)r : extra);
            size_t count = base + ((size_t)r < extra);
            size_t before = out ? out->length : 0;
            wrote = array
                        ? write_into(&out, array, first, count, "array")
                        : error_record(OPI_ERR_NULL_ARGUMENT, "array", "the root's array is null");
            all[r] = wrote == MPC_OK ? (int64_t)(out->length - before) : -1;
            displs[r] = (MPI_Count)before;
            counts[r] = (MPI_Count)all[r];
        }
        if (wrote != MPC_OK)
            for (int32_t r = 0; r < size; r++)
                all[r] = -1;
    }
    gch_count(GCH_OPERATIONS, 1);
    struct sizes_args s = {0, all, 0, root, comm};
    XFER_BLOCKING_BEGIN();
    rc = exchange_sizes(&s);
    XFER_BLOCKING_END;
    if (rc != MPC_OK)
        goto done;
    if (s.mine < 0) { /* the root's own record still says why */
        rc = rank == root ? wrote
                          : error_record(SD_ERR_GRAPH, NULL,
                                         "the root (rank %d) could not serialize the array", root);
        goto done;
    }
    if (!(received = xfer_buffer_take((size_t)s.mine))) {
        rc = error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for a piece of %lld bytes",
                          (long long)s.mine);
        goto done;
    }
    struct v_args v = {
        0, out ? out->data : NULL, received->data, (MPI_Count)s.mine, counts, displs, root, comm};
    XFER_BLOCKING_BEGIN();
    rc = call_pieces(&v);
    XFER_BLOCKING_END;
    if (rc != MPC_OK)
        goto done;
    received->length = (size_t)s.mine;
    opi_buffer_whole(sizes_out, &sb); /* afresh: a collection may have run during MPI */
    ((int64_t *)sb.data)[0] = s.mine;
done:
    xfer_buffer_give(out);
    pieces_free(&pt);
    return rc;
}

/* Gather (all = 0: only the root receives) or allgather of every rank's piece. */
RT_HOLDS_STACK_MARK static int gather_pieces(int all_ranks, int32_t comm, int32_t size,
                                             int32_t rank, MonoObject *piece, int32_t root,
                                             MonoObject *sizes_out)
{
    opi_buffer sb;
    int rc;
    if ((rc = check_comm(comm)) || (!all_ranks && (rc = check_root(size, root))) ||
        (rc = opi_buffer_whole_as(sizes_out, "sizes", &sb)) || (rc = check_sizes(&sb, size)))
        return rc;
    xfer_buffer *out = NULL;
    hold(&received, NULL);
    int wrote = piece ? write_into(&out, piece, 0, SIZE_MAX, "piece")
                      : error_record(OPI_ERR_NULL_ARGUMENT, "piece", "piece is null");
    int64_t mine = wrote == MPC_OK ? (int64_t)out->length : -1;
    piece_table pt;
    if ((rc = pieces_alloc(&pt, size)) != MPC_OK)
        goto done;
    int64_t *all = pt.all;
    MPI_Count *counts = pt.counts, *displs = pt.displs;
    gch_count(GCH_OPERATIONS, 1);
    struct sizes_args s = {all_ranks ? 2 : 1, all, mine, root, comm};
    XFER_BLOCKING_BEGIN();
    rc = exchange_sizes(&s);
    XFER_BLOCKING_END;
    if (rc != MPC_OK)
        goto done;
    int receives = all_ranks || rank == root, failed = 0;
    size_t total = 0;
    for (int32_t r = 0; r < size && receives; r++) {
        failed |= all[r] < 0;
        counts[r] = all[r] < 0 ? 0 : (MPI_Count)all[r];
        displs[r] = (MPI_Count)total;
        total += (size_t)counts[r];
    }
    if (receives && !(received = xfer_buffer_take(total))) {
        rc = error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for %zu bytes of pieces", total);
        goto done;
    }
    struct v_args v = {all_ranks ? 2 : 1,
                       out ? out->data : NULL,
                       received ? received->data : NULL,
                       mine < 0 ? 0 : (MPI_Count)mine,
                       counts,
                       displs,
                       root,
                       comm};
    XFER_BLOCKING_BEGIN();
    rc = call_pieces(&v);
    XFER_BLOCKING_END;
    if (rc != MPC_OK)
        goto done;
    if (wrote != MPC_OK) { /* the serializer's record still says why */
        rc = wrote;
        goto done;
    }
    if (receives && failed) {
        rc = error_record(SD_ERR_GRAPH, NULL, "another rank could not serialize its piece");
        goto done;
    }
    if (receives) {
        received->length = total;
        opi_buffer_whole(sizes_out, &sb); /* afresh: a collection may have run during MPI */
        memcpy(sb.data, all, (size_t)size * sizeof *all);
    }
    rc = MPC_OK;
done:
    xfer_buffer_give(out);
    pieces_free(&pt);
    return rc;
}

int32_t opi_ogather(int32_t comm, int32_t size, int32_t rank, MonoObject *piece, int32_t root,
                    MonoObject *sizes_out)
{
    return gather_pieces(0, comm, size, rank, piece, root, sizes_out);
}

int32_t opi_oallgather(int32_t comm, int32_t size, int32_t rank, MonoObject *piece,
                       MonoObject *sizes_out)
{
    return gather_pieces(1, comm, size, rank, piece, 0, sizes_out);
}

/* opi_sdto.c — the structured data transport's internal calls: Serializer, OSend/ORecv, OBcast.
 * A graph is written into a thread's native scratch buffer (no managed allocation, so the graph
 * cannot move meanwhile) and sent from there: no pin, no managed copy. A received graph is one
 * message, matched-probed for its size (no size pre-announcement), received into native memory,
 * validated, then read. */
#include "opi_icalls.h"

#include "../gc_hooks/gc_hooks.h"
#include "../serializer/serializer.h"

#include <mono/metadata/class.h>
#include <stdlib.h>
#include <string.h>

static __thread sd_buffer scratch;                  /* what this thread wrote last */
static __thread sd_buffer incoming;                 /* what this thread received last */
static __thread const char *last_why;

static int keep_why(int rc, const char *why)
{
    last_why = why;
    return rc;
}

static MonoClass *class_of(MonoReflectionType *t)
{
    return t ? mono_class_from_mono_type(mono_reflection_type_get_type(t)) : NULL;
}

static int reserve(sd_buffer *b, size_t n)
{
    if (b->cap >= n)
        return MPC_OK;
    uint8_t *d = realloc(b->data, n ? n : 1);
    if (!d)
        return MPC_ERR_NO_MEMORY;
    b->data = d;
    b->cap = n;
    return MPC_OK;
}

int32_t opi_sd_init(MonoReflectionType *attribute)
{
    MonoClass *k = class_of(attribute);
    if (!k)
        return MPC_ERR_NULL_ARGUMENT;
    sd_set_transportable_attribute(k);
    return MPC_OK;
}

int32_t opi_sd_error(MonoObject *buffer)
{
    opi_buffer b;
    const char *text = last_why ? last_why : "";
    size_t len = strlen(text);
    if (buffer && opi_buffer_whole(buffer, &b) == MPC_OK)
        memcpy(b.data, text, len < b.bytes ? len : b.bytes);
    return (int32_t)len;
}

int32_t opi_sd_write(MonoObject *graph, int32_t *size)
{
    const char *why = NULL;
    int rc = sd_write(graph, &scratch, &why);
    if (rc == MPC_OK && scratch.len > INT32_MAX)
        return keep_why(MPC_ERR_TOO_LARGE, "the serialized graph exceeds 2 GiB");
    *size = (int32_t)scratch.len;
    return keep_why(rc, why);
}

int32_t opi_sd_copy(MonoObject *dest, int32_t offset)
{
    opi_buffer b;
    int rc = opi_buffer_whole(dest, &b);
    if (rc != MPC_OK)
        return rc;
    if (offset < 0 || (size_t)offset > b.bytes)
        return MPC_ERR_OFFSET;
    if (scratch.len > b.bytes - (size_t)offset)
        return MPC_ERR_COUNT;
    memcpy(b.data + offset, scratch.data, scratch.len);
    return MPC_OK;
}

/* Reads incoming[0..len) as a graph whose root must be a `expected`. */
static int read_incoming(size_t len, MonoReflectionType *expected, MonoObject **result)
{
    MonoClass *k = class_of(expected);
    if (!k)
        return MPC_ERR_NULL_ARGUMENT;
    const char *why = NULL;
    int rc = sd_read(incoming.data, len, k, result, &why);
    return keep_why(rc, why);
}

int32_t opi_sd_read(MonoObject *src, int32_t offset, int32_t count, MonoReflectionType *expected,
                    MonoObject **result)
{
    opi_buffer b;
    int rc = opi_buffer_range(src, offset, count, &b);
    if (rc != MPC_OK)
        return rc;
    /* the reader allocates, and the byte[] could move: read from a native copy */
    if ((rc = reserve(&incoming, b.bytes)) != MPC_OK)
        return rc;
    memcpy(incoming.data, b.data, b.bytes);
    return read_incoming(b.bytes, expected, result);
}

struct native_transfer {
    void *buf;
    size_t bytes;
    int peer, tag;
    MPI_Comm comm;
    MPI_Message *msg;
    MPI_Status *st;
};

static int do_send(void *arg)
{
    struct native_transfer *t = arg;
    return mpc_send(t->buf, t->bytes, t->peer, t->tag, t->comm);
}

static int do_mrecv(void *arg)
{
    struct native_transfer *t = arg;
    int n = t->bytes <= INT32_MAX ? (int)t->bytes : 0;
    return t->bytes <= INT32_MAX ? MPI_Mrecv(t->buf, n, MPI_BYTE, t->msg, t->st)
                                 : MPI_Mrecv_c(t->buf, (MPI_Count)t->bytes, MPI_BYTE, t->msg, t->st);
}

int32_t opi_osend(int32_t comm, int32_t size, MonoObject *graph, int32_t dest, int32_t tag)
{
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_dest(size, dest, tag)))
        return rc;
    const char *why = NULL;
    if ((rc = sd_write(graph, &scratch, &why)) != MPC_OK)
        return keep_why(rc, why);
    gch_count(GCH_OPERATIONS, 1);
    struct native_transfer t = {scratch.data, scratch.len, dest, tag, comm, NULL, NULL};
    return opi_run_gc_safe(do_send, &t, NULL, 0); /* native memory: nothing to pin */
}

int32_t opi_orecv(int32_t comm, int32_t size, int32_t source, int32_t tag,
                  MonoReflectionType *expected, MonoObject **result, opi_status *status)
{
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_source(size, source, tag)))
        return rc;
    if (!expected)
        return MPC_ERR_NULL_ARGUMENT;
    MPI_Status st;
    MPI_Message msg;
    if ((rc = opi_probe_wait(mpi_source(source), mpi_tag(tag), comm, &st, &msg)) != MPC_OK)
        return rc;
    mpc_status s;
    mpc_status_from_mpi(&st, &s);
    if ((rc = reserve(&incoming, (size_t)s.bytes)) != MPC_OK) {
        /* the matched message must still be taken off the queue */
        MPI_Mrecv(NULL, 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        return rc;
    }
    gch_count(GCH_OPERATIONS, 1);
    struct native_transfer t = {incoming.data, (size_t)s.bytes, 0, 0, comm, &msg, &st};
    if ((rc = opi_run_gc_safe(do_mrecv, &t, NULL, 0)) != MPC_OK)
        return rc;
    opi_fill_status(status, &st, 1);
    return read_incoming((size_t)s.bytes, expected, result);
}

struct bcast_args {
    void *buf;
    size_t bytes;
    int root;
    MPI_Comm comm;
};

static int do_bcast(void *arg)
{
    struct bcast_args *a = arg;
    return mpc_bcast(a->buf, a->bytes, a->root, a->comm);
}

int32_t opi_obcast(int32_t comm, int32_t size, int32_t rank, MonoObject *graph, int32_t root,
                   MonoReflectionType *expected, MonoObject **result)
{
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_root(size, root)))
        return rc;
    if (!expected)
        return MPC_ERR_NULL_ARGUMENT;
    /* the root's write may fail; the others must still learn that: size -1 tells them */
    uint64_t bytes = (uint64_t)-1;
    const char *why = NULL;
    int wrote = MPC_OK;
    if (rank == root && (wrote = sd_write(graph, &scratch, &why)) == MPC_OK)
        bytes = scratch.len;
    gch_count(GCH_OPERATIONS, 1);
    struct bcast_args a = {&bytes, sizeof bytes, root, comm};
    if ((rc = opi_run_gc_safe(do_bcast, &a, NULL, 0)) != MPC_OK)
        return rc;
    if (bytes == (uint64_t)-1)
        return rank == root ? keep_why(wrote, why)
                            : keep_why(MPC_ERR_GRAPH, "the root could not serialize the graph");
    if ((rc = reserve(&incoming, (size_t)bytes)) != MPC_OK)
        return rc; /* (the root's data broadcast then fails on this rank only) */
    if (rank == root)
        memcpy(incoming.data, scratch.data, (size_t)bytes);
    a = (struct bcast_args){incoming.data, (size_t)bytes, root, comm};
    if ((rc = opi_run_gc_safe(do_bcast, &a, NULL, 0)) != MPC_OK)
        return rc;
    return read_incoming((size_t)bytes, expected, result); /* every rank returns its own copy */
}

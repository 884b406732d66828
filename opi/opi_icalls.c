/* opi_icalls.c — the internal calls behind System.MP.MPDirect, and the table that registers
 * them. Each returns MPC_OK or an error code; System.MP turns codes into exceptions in one
 * place (Errors.Make). Raw registration: these run GC-unsafe and never block here — waits go
 * through xfer_complete / xfer_probe_wait, and every MPI call is made in a bracket
 * (XFER_MPI_BEGIN or XFER_BLOCKING_BEGIN, transfer.h). */
#include "opi_icalls.h"

#include "class_plan.h"
#include "gc_hooks.h"
#include "layout.h"
#include "motor_core.h"
#include "serializer.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

/* ---- helpers ---- */

/* Copies text into a byte[] (as much as fits); returns the full length. */
static int32_t put_text(MonoObject *buffer, const char *text)
{
    size_t len = strlen(text);
    opi_buffer b;
    if (buffer && opi_buffer_whole(buffer, &b) == MPC_OK)
        memcpy(b.data, text, len < b.bytes ? len : b.bytes);
    return (int32_t)len;
}

/* ---- runtime, errors, introspection ---- */

/* Appends a formatted line to a growing text; returns 0, or -1 when out of memory. */
static int append(char **text, size_t *length, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *grown = n < 0 ? NULL : realloc(*text, *length + (size_t)n + 1);
    if (!grown)
        return -1;
    va_start(ap, fmt);
    vsnprintf(grown + *length, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *text = grown;
    *length += (size_t)n;
    return 0;
}

/* Everything C and C# must agree on, one fact a line, for the contract test: internal calls
 * with their table signatures, error codes, stats positions, built-in operator codes, the
 * managed methods the core calls, the layout of opi_status, and opi_constants.h's constants
 * and exception per error code. */
int32_t opi_contract(MonoObject *buffer)
{
    char *text = NULL;
    size_t length = 0;
    int bad = 0;
    for (size_t i = 0; i < opi_icall_count; i++)
        bad |= append(&text, &length, "icall %s %s\n", opi_icall_table[i].name,
                      opi_icall_table[i].signature);
#define LINE_ERROR(name, code, message) bad |= append(&text, &length, "error %s %d\n", #name, code);
    MOTOR_ERRORS(LINE_ERROR);
#undef LINE_ERROR
#define LINE_STAT(name) bad |= append(&text, &length, "stat %s %d\n", #name, STAT_##name);
    OPI_STATS(LINE_STAT);
#undef LINE_STAT
#define LINE_OP(name, mpi_op, family) bad |= append(&text, &length, "op %s %d\n", #name, OP_##name);
    OPI_BUILTIN_OPS(LINE_OP);
#undef LINE_OP
#define LINE_MANAGED(id, klass, method, nargs) \
    bad |= append(&text, &length, "managed %s %s %d\n", #klass, #method, nargs);
    SD_MANAGED_METHODS(LINE_MANAGED);
#undef LINE_MANAGED
    bad |= append(&text, &length, "layout StatusData %zu\n", sizeof(opi_status));
#define LINE_FIELD(field) \
    bad |= append(&text, &length, "field StatusData %s %zu\n", #field, offsetof(opi_status, field))
    LINE_FIELD(source);
    LINE_FIELD(tag);
    LINE_FIELD(count);
    LINE_FIELD(cancelled);
    LINE_FIELD(bytes);
    LINE_FIELD(error);
    LINE_FIELD(reserved);
#undef LINE_FIELD
#define LINE_CONSTANT(type, name, value) \
    bad |= append(&text, &length, "constant %s %s %d\n", #type, #name, (int)(value));
    OPI_MIRRORED_CONSTANTS(LINE_CONSTANT);
    SD_PLACE_LAYOUT(LINE_CONSTANT);
#undef LINE_CONSTANT
#define LINE_EXCEPTION(name, exception) \
    bad |= append(&text, &length, "exception %s %d %s\n", #name, OPI_CODE_##name, #exception);
    OPI_ERROR_EXCEPTIONS(LINE_EXCEPTION);
#undef LINE_EXCEPTION
    int32_t rc = bad ? error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory writing the contract")
                     : put_text(buffer, text);
    free(text);
    return rc;
}

/* What System.MP builds the exception of a failed call from, called right after that call
 * returned code on this thread: "argument\ndetail", from the thread's error record when it
 * holds code (argument may be empty), else "\n" and the code's own message (MPI's text for
 * MPI's codes). The record is emptied once its text fits the buffer, so that it is reported
 * once; a buffer too small (the full length returned) leaves it for a second call. */
int32_t opi_last_error(int32_t code, MonoObject *buffer)
{
    const char *argument = NULL, *detail = NULL;
    int recorded = error_last(code, &argument, &detail);
    if (!argument)
        argument = "";
    if (!detail)
        detail = motor_core_strerror(code);
    size_t a = strlen(argument), d = strlen(detail), len = a + 1 + d;
    opi_buffer b;
    if (buffer && opi_buffer_whole(buffer, &b) == MPC_OK && b.bytes >= len) {
        memcpy(b.data, argument, a);
        b.data[a] = '\n';
        memcpy(b.data + a + 1, detail, d);
        if (recorded)
            error_clear();
    }
    return (int32_t)len;
}

int32_t opi_error_class(int32_t code) { return mpc_error_class(code); }

int32_t opi_thread_level(void) { return mpc_thread_level(); }
int32_t opi_world_handle(void) { return mpc_comm_world(); }
int32_t opi_self_handle(void) { return mpc_comm_self(); }
int32_t opi_tag_upper_bound(void) { return mpc_tag_ub(); }
double opi_wtime(void) { return mpc_wtime(); }

/* A cheap clock for System.MP.Arrays' per-entry loads, read twice per message: the TSC where the
 * CPU says it is invariant (~10 ns, against ~25 for clock_gettime on a VM), else CLOCK_MONOTONIC in
 * ns. TickSeconds converts, calibrated once against CLOCK_MONOTONIC over a millisecond. */
static int use_tsc;
static double tick_seconds = 1e-9;
static pthread_once_t ticks_once = PTHREAD_ONCE_INIT;

static int64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void init_ticks(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8))) /* invariant TSC */
        return;
    int64_t t0 = monotonic_ns(), c0 = (int64_t)__rdtsc(), t1, c1;
    do {
        t1 = monotonic_ns();
        c1 = (int64_t)__rdtsc();
    } while (t1 - t0 < 1000000);
    if (c1 <= c0)
        return;
    tick_seconds = (double)(t1 - t0) * 1e-9 / (double)(c1 - c0);
    use_tsc = 1;
#endif
}

int64_t opi_ticks(void)
{
    pthread_once(&ticks_once, init_ticks);
#if defined(__x86_64__)
    if (use_tsc)
        return (int64_t)__rdtsc();
#endif
    return monotonic_ns();
}

double opi_tick_seconds(void)
{
    pthread_once(&ticks_once, init_ticks);
    return tick_seconds;
}
int32_t opi_icall_old_generation_moves(void) { return xfer_old_generation_moves(); }

/* The wait policy in force (mpc_wait_mode) and what auto decided from: World's ranks on this host
 * and the cores they may run on (0 and 0 when not measured). */
int32_t opi_wait_policy(int32_t *host_ranks, int32_t *host_cores)
{
    mpc_host_load(host_ranks, host_cores);
    return mpc_wait_mode();
}

RT_HOLDS_STACK_MARK int32_t opi_processor_name(MonoObject *buffer)
{
    char name[MPI_MAX_PROCESSOR_NAME + 1];
    int rc;
    XFER_MPI_BEGIN();
    rc = mpc_processor_name(name, sizeof name);
    XFER_MPI_END;
    return rc == MPC_OK ? put_text(buffer, name) : 0;
}

RT_HOLDS_STACK_MARK int32_t opi_abort(int32_t comm, int32_t code)
{
    int rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_abort(comm, code);
    XFER_BLOCKING_END;
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_finalize(void)
{
    int rc;
    XFER_BLOCKING_BEGIN();
    rc = motor_core_finalize();
    XFER_BLOCKING_END;
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_huge_pages_wait(void)
{
    XFER_BLOCKING_BEGIN();
    xfer_huge_pages_wait();
    XFER_BLOCKING_END;
    return MPC_OK;
}

int32_t opi_stats(MonoObject *values)
{
    opi_buffer b;
    int rc = opi_buffer_whole_as(values, "values", &b);
    if (rc != MPC_OK)
        return rc;
    if (b.bytes < STAT_COUNT * sizeof(int64_t))
        return error_record(OPI_ERR_COUNT, "values",
                            "values holds %zu bytes; the %d counters need %zu", b.bytes, STAT_COUNT,
                            STAT_COUNT * sizeof(int64_t));
    int64_t c[GCH_COUNTER_COUNT];
    gch_snapshot(c);
    int64_t *v = (int64_t *)b.data;
    v[STAT_OPERATIONS] = c[GCH_OPERATIONS];
    v[STAT_PINS_TAKEN] = c[GCH_PINS_TAKEN];
    v[STAT_PINS_AVOIDED] = c[GCH_PINS_AVOIDED];
    v[STAT_PINS_RELEASED_BY_WAIT] = c[GCH_PINS_RELEASED_BY_WAIT];
    v[STAT_PINS_RELEASED_BY_GC] = c[GCH_PINS_RELEASED_BY_GC];
    v[STAT_PINS_LIVE] =
        c[GCH_PINS_TAKEN] - c[GCH_PINS_RELEASED_BY_WAIT] - c[GCH_PINS_RELEASED_BY_GC];
    v[STAT_COLLECTIONS] = (int64_t)gch_epoch();
    v[STAT_POOLED_BUFFERS] = xfer_pooled_buffers();
    v[STAT_POOLED_BUFFERS_FREED_BY_GC] = c[GCH_POOLED_BUFFERS_FREED_BY_GC];
    v[STAT_PENDING_REQUESTS] = xfer_live();
    v[STAT_HUGE_PAGE_ARRAYS] = xfer_huge_page_arrays();
    return MPC_OK;
}

/* ---- communicators ---- */

int32_t opi_comm_null_handle(void) { return MPI_COMM_NULL; }

int32_t opi_comm_rank(int32_t comm, int32_t *rank)
{
    int rc = check_comm(comm);
    return rc ? rc : mpc_comm_rank(comm, rank);
}

int32_t opi_comm_size(int32_t comm, int32_t *size)
{
    int rc = check_comm(comm);
    return rc ? rc : mpc_comm_size(comm, size);
}

/* (*out may lie in a managed object, which may move in a GC-safe region: written after it) */
RT_HOLDS_STACK_MARK int32_t opi_comm_dup(int32_t comm, int32_t *out)
{
    MPI_Comm made = MPI_COMM_NULL;
    int rc = check_comm(comm);
    if (rc != MPC_OK)
        return rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_comm_dup(comm, &made);
    XFER_BLOCKING_END;
    if (rc == MPC_OK)
        *out = made;
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_comm_split(int32_t comm, int32_t color, int32_t key, int32_t *out)
{
    MPI_Comm made = MPI_COMM_NULL;
    int rc = check_comm(comm);
    if (rc != MPC_OK)
        return rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_comm_split(comm, color, key, &made);
    XFER_BLOCKING_END;
    if (rc == MPC_OK)
        *out = made;
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_comm_free(int32_t *comm)
{
    MPI_Comm freed = *comm;
    int rc;
    XFER_BLOCKING_BEGIN();
    rc = mpc_comm_free(&freed);
    XFER_BLOCKING_END;
    if (rc == MPC_OK)
        *comm = freed;
    return rc;
}

/* ---- point-to-point ---- */

enum start_kind { START_RECV, START_SEND, START_SSEND };

/* What a point-to-point transfer moves: the bytes, the peer (receives: MPI wildcards, as
 * check_source translated them), the tag. */
struct transfer_args {
    enum start_kind kind;
    const opi_buffer *b;
    int32_t peer, tag;
    MPI_Comm comm;
};

/* Starts the transfer and tests it once: called inside a bracket, one entry into MPI. A send's
 * status says nothing MPI would fill in (opi fills it from what was sent). */
static int start_and_test(const struct transfer_args *t, xfer_started *s)
{
    const opi_buffer *b = t->b;
    int rc = t->kind == START_RECV
                 ? mpc_irecv_typed(b->data, b->count, b->type, t->peer, t->tag, t->comm, &s->req)
             : t->kind == START_SSEND
                 ? mpc_issend_typed(b->data, b->count, b->type, t->peer, t->tag, t->comm, &s->req)
                 : mpc_isend_typed(b->data, b->count, b->type, t->peer, t->tag, t->comm, &s->req);
    if (rc == MPC_OK)
        s->test_rc = mpc_test(&s->req, &s->done, t->kind == START_RECV ? &s->st : NULL);
    return rc;
}

static enum start_kind send_kind(int32_t mode)
{
    return mode == OPI_SEND_SYNCHRONOUS ? START_SSEND : START_SEND;
}

/* Starts a blocking transfer and completes it. The first test runs in the start's own entry
 * into MPI: a small send, or a receive whose message is already waiting, ends there, with no
 * wait set up (no pin, no epoch to watch). The rest wait in xfer_complete. Returns the
 * completion's error; s->st holds a receive's status. */
RT_HOLDS_STACK_MARK static int run_blocking(const struct transfer_args *t, MonoObject *obj,
                                            xfer_started *s)
{
    int rc;
    XFER_MPI_BEGIN(obj);
    rc = start_and_test(t, s);
    XFER_MPI_END;
    if (rc != MPC_OK)
        return rc;
    gch_count(GCH_OPERATIONS, 1);
    if (s->done || s->test_rc != MPC_OK) { /* a failed test completed the request too */
        gch_count(GCH_PINS_AVOIDED, 1);
        return s->test_rc;
    }
    return xfer_complete(&s->req, 1, &obj, 1, t->kind == START_RECV ? &s->st : NULL);
}

static int send_buffer(int32_t comm, const opi_buffer *b, MonoObject *obj, int32_t dest,
                       int32_t tag, int32_t mode)
{
    if (dest == MPI_PROC_NULL) {
        xfer_huge_pages_unstage(); /* nothing moves: no huge pages wanted */
        return MPC_OK;             /* a no-op in MPI too: nothing to start */
    }
    struct transfer_args t = {send_kind(mode), b, dest, tag, comm};
    xfer_started s = {0};
    return run_blocking(&t, obj, &s);
}

static int recv_buffer(int32_t comm, const opi_buffer *b, MonoObject *obj, int32_t source,
                       int32_t tag, opi_status *status)
{
    if (source == MPI_PROC_NULL) {
        xfer_huge_pages_unstage();
        /* MPI completes it at once too, but MPICH 4.0's status of such a receive reads source
         * 0, tag 0: the status MPI defines is filled here instead. */
        opi_proc_null_status(status);
        return MPC_OK;
    }
    struct transfer_args t = {START_RECV, b, source, tag, comm};
    xfer_started s = {0};
    int rc = run_blocking(&t, obj, &s);
    return rc == MPC_OK
               ? opi_fill_status(status, &s.st, b->elem_size)
               : opi_receive_failed(rc, &s.st, "the receive buffer", b->bytes, b->elem_size);
}

int32_t opi_send(int32_t comm, int32_t size, MonoObject *obj, int32_t dest, int32_t tag,
                 int32_t mode)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_whole(obj, &b)) ||
        (rc = check_dest(size, &dest, tag)))
        return rc;
    return send_buffer(comm, &b, obj, dest, tag, mode);
}

int32_t opi_send_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset, int32_t count,
                       int32_t dest, int32_t tag, int32_t mode)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_range(array, offset, count, &b)) ||
        (rc = check_dest(size, &dest, tag)))
        return rc;
    return send_buffer(comm, &b, array, dest, tag, mode);
}

int32_t opi_recv(int32_t comm, int32_t size, MonoObject *obj, int32_t source, int32_t tag,
                 opi_status *status)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_whole(obj, &b)) ||
        (rc = check_source(size, &source, &tag)))
        return rc;
    return recv_buffer(comm, &b, obj, source, tag, status);
}

int32_t opi_recv_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset, int32_t count,
                       int32_t source, int32_t tag, opi_status *status)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_range(array, offset, count, &b)) ||
        (rc = check_source(size, &source, &tag)))
        return rc;
    return recv_buffer(comm, &b, array, source, tag, status);
}

/* A Sendrecv's status: MPI's, or ProcNull's when it received from MPI_PROC_NULL (see recv_buffer).
 */
static int sendrecv_status(opi_status *out, const mpc_status *st, int32_t source,
                           uint32_t elem_size)
{
    if (source != MPI_PROC_NULL)
        return opi_fill_status(out, st, elem_size);
    opi_proc_null_status(out);
    return MPC_OK;
}

/* The receive, then the send, in one entry into MPI; a send that fails to start takes the
 * receive back (cancelled: it is posted into the receive buffer, and must not outlive the
 * call). Returns the receive's start error; *send_rc is the send's. */
static int start_pair(const struct transfer_args *recv, const struct transfer_args *send,
                      mpc_request req[2], int *send_rc)
{
    const opi_buffer *r = recv->b, *s = send->b;
    int rc =
        mpc_irecv_typed(r->data, r->count, r->type, recv->peer, recv->tag, recv->comm, &req[0]);
    if (rc == MPC_OK && (*send_rc = mpc_isend_typed(s->data, s->count, s->type, send->peer,
                                                    send->tag, send->comm, &req[1])) != MPC_OK)
        mpc_cancel(&req[0]);
    mpc_hang_note(MPC_HANG_SENDRECV, recv->comm, recv->peer, recv->tag); /* what it waits for */
    return rc;
}

/* Both transfers started, then one deferred-pinning wait for the pair; the buffers may be
 * ranges or regions of one array when they do not overlap (a halo exchange sends from and
 * receives into the same field): contiguous bytes are checked here, regions by the caller
 * (opi_regions_disjoint). */
RT_HOLDS_STACK_MARK static int32_t sendrecv_buffers(int32_t comm, opi_buffer *sb,
                                                    MonoObject *send_obj, int32_t dest,
                                                    int32_t send_tag, opi_buffer *rb,
                                                    MonoObject *recv_obj, int32_t source,
                                                    int32_t recv_tag, opi_status *status)
{
    opi_buffer_rebase(sb, send_obj); /* computing rb may have let send_obj move */
    opi_buffer_rebase(rb, recv_obj);
    const char *s = sb->data, *r = rb->data;
    if (sb->type == MPI_BYTE && rb->type == MPI_BYTE && sb->bytes > 0 && rb->bytes > 0 &&
        s < r + rb->bytes && r < s + sb->bytes) {
        /* ranges of one array (different objects never overlap): say which elements */
        const char *base = (const char *)rt_array_data(send_obj);
        size_t e = sb->elem_size ? sb->elem_size : 1;
        return error_record(
            OPI_ERR_SAME_OBJECT, "recvOffset",
            "the send range [%zu, %zu) and the receive range [%zu, %zu) of one array overlap",
            (size_t)(s - base) / e, (size_t)(s - base + sb->bytes) / e, (size_t)(r - base) / e,
            (size_t)(r - base + rb->bytes) / e);
    }
    mpc_request req[2];
    mpc_status st[2];
    MonoObject *objs[2] = {recv_obj, send_obj};
    int nobjs = send_obj == recv_obj ? 1 : 2;
    int rc;
    /* (not when waits yield: MPI_Sendrecv busy-polls inside MPICH) */
    if (!xfer_pin_every() && mpc_wait_mode() != MPC_WAIT_YIELD && !xfer_may_move(recv_obj) &&
        !xfer_may_move(send_obj)) {
        /* Nothing the GC could move, so no pin to defer: MPI's own MPI_Sendrecv runs in a
         * GC-safe region — one entry into MPICH instead of four lock-taking calls and a poll
         * loop. Measured on the shallow-water halo exchange (4 KiB rows, cold caches): 6–16%
         * less communication time, A/B-interleaved medians on a noisy VM. */
        mpc_status received;
        gch_count(GCH_OPERATIONS, 2);
        XFER_BLOCKING_BEGIN(recv_obj, nobjs == 2 ? send_obj : NULL);
        rc = mpc_sendrecv_typed(sb->data, sb->count, sb->type, dest, send_tag, rb->data, rb->count,
                                rb->type, source, recv_tag, comm, &received);
        XFER_BLOCKING_END;
        return rc == MPC_OK ? sendrecv_status(status, &received, source, rb->elem_size)
                            : opi_receive_failed(rc, &received, "the receive buffer", rb->bytes,
                                                 rb->elem_size);
    }
    struct transfer_args recv = {START_RECV, rb, source, recv_tag, comm};
    struct transfer_args send = {START_SEND, sb, dest, send_tag, comm};
    int send_rc = MPC_OK;
    XFER_MPI_BEGIN(recv_obj, nobjs == 2 ? send_obj : NULL);
    rc = start_pair(&recv, &send, req, &send_rc);
    XFER_MPI_END;
    if (rc != MPC_OK)
        return rc;
    if (send_rc != MPC_OK) {
        xfer_complete(req, 1, objs, 1, st); /* the cancelled receive */
        return send_rc;
    }
    gch_count(GCH_OPERATIONS, 2);
    rc = xfer_complete(req, 2, objs, nobjs, st);
    return rc == MPC_OK
               ? sendrecv_status(status, &st[0], source, rb->elem_size)
               : opi_receive_failed(rc, &st[0], "the receive buffer", rb->bytes, rb->elem_size);
}

int32_t opi_sendrecv(int32_t comm, int32_t size, MonoObject *send_obj, int32_t dest,
                     int32_t send_tag, MonoObject *recv_obj, int32_t source, int32_t recv_tag,
                     opi_status *status)
{
    opi_buffer sb, rb;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_whole_as(send_obj, "sendObj", &sb)) ||
        (rc = opi_buffer_whole_as(recv_obj, "recvObj", &rb)) ||
        (rc = check_dest_as(size, &dest, send_tag, "sendTag")) ||
        (rc = check_source_as(size, &source, &recv_tag, "recvTag")))
        return rc;
    if (send_obj == recv_obj)
        return error_record(
            OPI_ERR_SAME_OBJECT, "recvObj",
            "sendObj and recvObj are the same object; Sendrecv needs two (or disjoint ranges of "
            "one array)");
    return sendrecv_buffers(comm, &sb, send_obj, dest, send_tag, &rb, recv_obj, source, recv_tag,
                            status);
}

int32_t opi_sendrecv_range(int32_t comm, int32_t size, MonoObject *send_array, int32_t send_offset,
                           int32_t send_count, int32_t dest, int32_t send_tag,
                           MonoObject *recv_array, int32_t recv_offset, int32_t recv_count,
                           int32_t source, int32_t recv_tag, opi_status *status)
{
    opi_buffer sb, rb;
    int rc;
    if ((rc = check_comm(comm)) ||
        (rc = opi_buffer_range_as(send_array, send_offset, send_count,
                                  &(opi_range_names){"sendArray", "sendOffset", "sendCount"},
                                  &sb)) ||
        (rc = opi_buffer_range_as(recv_array, recv_offset, recv_count,
                                  &(opi_range_names){"recvArray", "recvOffset", "recvCount"},
                                  &rb)) ||
        (rc = check_dest_as(size, &dest, send_tag, "sendTag")) ||
        (rc = check_source_as(size, &source, &recv_tag, "recvTag")))
        return rc;
    return sendrecv_buffers(comm, &sb, send_array, dest, send_tag, &rb, recv_array, source,
                            recv_tag, status);
}

/* ---- regions (System.MP.Region: a box of an array, or every stride-th element) ---- */

static const opi_region_names region_names = {"array", "region"};

int32_t opi_send_region(int32_t comm, int32_t size, MonoObject *array, MonoObject *region,
                        int32_t dest, int32_t tag, int32_t mode)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_region_as(array, region, &region_names, &b)) ||
        (rc = check_dest(size, &dest, tag)))
        return rc;
    return send_buffer(comm, &b, array, dest, tag, mode);
}

int32_t opi_recv_region(int32_t comm, int32_t size, MonoObject *array, MonoObject *region,
                        int32_t source, int32_t tag, opi_status *status)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_region_as(array, region, &region_names, &b)) ||
        (rc = check_source(size, &source, &tag)))
        return rc;
    return recv_buffer(comm, &b, array, source, tag, status);
}

/* The send and the receive regions may be of one array when they share no element: the edges
 * of a field go out while its halo comes in. */
int32_t opi_sendrecv_region(int32_t comm, int32_t size, MonoObject *send_array,
                            MonoObject *send_region, int32_t dest, int32_t send_tag,
                            MonoObject *recv_array, MonoObject *recv_region, int32_t source,
                            int32_t recv_tag, opi_status *status)
{
    static const opi_region_names send = {"sendArray", "sendRegion"},
                                  recv = {"recvArray", "recvRegion"};
    opi_buffer sb, rb;
    int rc;
    if ((rc = check_comm(comm)) ||
        (rc = opi_buffer_region_as(send_array, send_region, &send, &sb)) ||
        (rc = opi_buffer_region_as(recv_array, recv_region, &recv, &rb)) ||
        (rc = opi_regions_disjoint(send_array, send_region, &send, recv_array, recv_region,
                                   &recv)) ||
        (rc = check_dest_as(size, &dest, send_tag, "sendTag")) ||
        (rc = check_source_as(size, &source, &recv_tag, "recvTag")))
        return rc;
    return sendrecv_buffers(comm, &sb, send_array, dest, send_tag, &rb, recv_array, source,
                            recv_tag, status);
}

/* MPI_Sendrecv_replace as MPI itself does it — the elements copied out (packed, for a region)
 * into a native buffer, then the receive into them and the send from the copy started together —
 * but waited for as every transfer is (xfer_complete: deferred pinning, the wait policy). Not
 * MPICH's own: its blocking MPI_Sendrecv_replace never returns at one rank when another thread
 * sends the message (neither does its MPI_Recv: it waits without polling for the sending
 * thread), and its MPI_Isendrecv_replace (4.0.2) completes with an empty status. */
RT_HOLDS_STACK_MARK static int sendrecv_replace_buffer(int32_t comm, const opi_buffer *b,
                                                       MonoObject *obj, int32_t dest,
                                                       int32_t send_tag, int32_t source,
                                                       int32_t recv_tag, opi_status *status)
{
    if (dest == MPI_PROC_NULL && source == MPI_PROC_NULL) {
        xfer_huge_pages_unstage();
        opi_proc_null_status(status); /* nothing to send or receive (see recv_buffer) */
        return MPC_OK;
    }
    size_t sent = dest == MPI_PROC_NULL ? 0 : b->bytes;
    xfer_buffer *copy = NULL;
    if (sent > 0 && !(copy = xfer_buffer_take(sent)))
        return error_record(MPC_ERR_NO_MEMORY, NULL,
                            "out of memory for a copy of the %zu bytes SendrecvReplace sends",
                            sent);
    opi_buffer out = {.data = copy ? (char *)copy->data : NULL,
                      .bytes = sent,
                      .elem_size = b->elem_size,
                      .count = (MPI_Count)sent,
                      .type = MPI_BYTE};
    struct transfer_args recv = {START_RECV, b, source, recv_tag, comm};
    struct transfer_args send = {START_SEND, &out, dest, send_tag, comm};
    mpc_request req[2];
    mpc_status st[2];
    int send_rc = MPC_OK, rc = MPC_OK;
    XFER_MPI_BEGIN(obj);
    if (sent > 0 && b->type == MPI_BYTE)
        memcpy(out.data, b->data, sent);
    else if (sent > 0)
        rc = mpc_pack_typed(b->data, b->count, b->type, out.data, (MPI_Count)sent, comm);
    if (rc == MPC_OK)
        rc = start_pair(&recv, &send, req, &send_rc);
    XFER_MPI_END;
    if (rc == MPC_OK && send_rc != MPC_OK) {
        xfer_complete(req, 1, &obj, 1, st); /* the cancelled receive */
        rc = send_rc;
    } else if (rc == MPC_OK) {
        gch_count(GCH_OPERATIONS, 2);
        rc = xfer_complete(req, 2, &obj, 1, st);
        rc = rc == MPC_OK ? sendrecv_status(status, &st[0], source, b->elem_size)
                          : opi_receive_failed(rc, &st[0], "the buffer", b->bytes, b->elem_size);
    }
    if (copy)
        xfer_buffer_give(copy);
    return rc;
}

int32_t opi_sendrecv_replace_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset,
                                   int32_t count, int32_t dest, int32_t send_tag, int32_t source,
                                   int32_t recv_tag, opi_status *status)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_range(array, offset, count, &b)) ||
        (rc = check_dest_as(size, &dest, send_tag, "sendTag")) ||
        (rc = check_source_as(size, &source, &recv_tag, "recvTag")))
        return rc;
    return sendrecv_replace_buffer(comm, &b, array, dest, send_tag, source, recv_tag, status);
}

int32_t opi_sendrecv_replace_region(int32_t comm, int32_t size, MonoObject *array,
                                    MonoObject *region, int32_t dest, int32_t send_tag,
                                    int32_t source, int32_t recv_tag, opi_status *status)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_region_as(array, region, &region_names, &b)) ||
        (rc = check_dest_as(size, &dest, send_tag, "sendTag")) ||
        (rc = check_source_as(size, &source, &recv_tag, "recvTag")))
        return rc;
    return sendrecv_replace_buffer(comm, &b, array, dest, send_tag, source, recv_tag, status);
}

int32_t opi_probe(int32_t comm, int32_t size, int32_t source, int32_t tag, opi_status *status)
{
    mpc_status st; /* a probe's: Count == Bytes == the message's size, never cancelled */
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_source(size, &source, &tag)))
        return rc;
    if (source == MPI_PROC_NULL) { /* at once, as in MPI (see recv_buffer) */
        opi_proc_null_status(status);
        return MPC_OK;
    }
    mpc_hang_note(MPC_HANG_PROBE, comm, source, tag);
    rc = xfer_probe_wait(source, tag, comm, &st, NULL);
    if (rc == MPC_OK)
        opi_fill_status(status, &st, 1);
    return rc;
}

RT_HOLDS_STACK_MARK int32_t opi_iprobe(int32_t comm, int32_t size, int32_t source, int32_t tag,
                                       opi_status *status, int32_t *found)
{
    int rc;
    if ((rc = check_comm(comm)) || (rc = check_source(size, &source, &tag)))
        return rc;
    if (source == MPI_PROC_NULL) { /* found at once, as in MPI (see recv_buffer) */
        *found = 1;
        opi_proc_null_status(status);
        return MPC_OK;
    }
    int matched = 0;
    mpc_status st;
    XFER_MPI_BEGIN();
    rc = mpc_iprobe(source, tag, comm, &matched, &st);
    XFER_MPI_END;
    if (rc != MPC_OK)
        return rc;
    *found = matched;
    if (matched)
        opi_fill_status(status, &st, 1);
    return MPC_OK;
}

/* ---- non-blocking point-to-point and requests ---- */

/* Starts a transfer and tests it once, then tracks it (opi_track_transfer). */
RT_HOLDS_STACK_MARK static int start_transfer(int32_t comm, const opi_buffer *b, MonoObject *obj,
                                              int32_t peer, int32_t tag, int is_send, int32_t mode,
                                              MonoObject *owner, int64_t *id, opi_status *status)
{
    if (peer == MPI_PROC_NULL) { /* finished at once, without MPI (see recv_buffer) */
        xfer_huge_pages_unstage();
        *id = -1;
        opi_proc_null_status(status);
        status->error = MPC_OK;
        return MPC_OK;
    }
    uint32_t early_pin; /* MOTOR_PIN_POLICY=every: pinned before the transfer starts */
    xfer_early_pins(&obj, 1, &early_pin);
    struct transfer_args t = {is_send ? send_kind(mode) : START_RECV, b, peer, tag, comm};
    xfer_started s = {0};
    int rc;
    XFER_MPI_BEGIN(obj);
    rc = start_and_test(&t, &s);
    XFER_MPI_END;
    if (rc != MPC_OK) {
        xfer_early_unpin(&early_pin, 1);
        return rc;
    }
    xfer_info info = {
        .elem_size = b->elem_size, .is_send = is_send, .tag = tag, .bytes = (int64_t)b->bytes};
    return opi_track_transfer(&s, &obj, 1, &early_pin, owner, &info, "the receive buffer", id,
                              status);
}

int32_t opi_isend(int32_t comm, int32_t size, MonoObject *obj, int32_t dest, int32_t tag,
                  int32_t mode, MonoObject *owner, int64_t *id, opi_status *status)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_whole(obj, &b)) ||
        (rc = check_dest(size, &dest, tag)))
        return rc;
    return start_transfer(comm, &b, obj, dest, tag, 1, mode, owner, id, status);
}

int32_t opi_isend_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset,
                        int32_t count, int32_t dest, int32_t tag, int32_t mode, MonoObject *owner,
                        int64_t *id, opi_status *status)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_range(array, offset, count, &b)) ||
        (rc = check_dest(size, &dest, tag)))
        return rc;
    return start_transfer(comm, &b, array, dest, tag, 1, mode, owner, id, status);
}

int32_t opi_irecv(int32_t comm, int32_t size, MonoObject *obj, int32_t source, int32_t tag,
                  MonoObject *owner, int64_t *id, opi_status *status)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_whole(obj, &b)) ||
        (rc = check_source(size, &source, &tag)))
        return rc;
    return start_transfer(comm, &b, obj, source, tag, 0, 0, owner, id, status);
}

int32_t opi_irecv_range(int32_t comm, int32_t size, MonoObject *array, int32_t offset,
                        int32_t count, int32_t source, int32_t tag, MonoObject *owner, int64_t *id,
                        opi_status *status)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_range(array, offset, count, &b)) ||
        (rc = check_source(size, &source, &tag)))
        return rc;
    return start_transfer(comm, &b, array, source, tag, 0, 0, owner, id, status);
}

int32_t opi_isend_region(int32_t comm, int32_t size, MonoObject *array, MonoObject *region,
                         int32_t dest, int32_t tag, int32_t mode, MonoObject *owner, int64_t *id,
                         opi_status *status)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_region_as(array, region, &region_names, &b)) ||
        (rc = check_dest(size, &dest, tag)))
        return rc;
    return start_transfer(comm, &b, array, dest, tag, 1, mode, owner, id, status);
}

int32_t opi_irecv_region(int32_t comm, int32_t size, MonoObject *array, MonoObject *region,
                         int32_t source, int32_t tag, MonoObject *owner, int64_t *id,
                         opi_status *status)
{
    opi_buffer b;
    int rc;
    if ((rc = check_comm(comm)) || (rc = opi_buffer_region_as(array, region, &region_names, &b)) ||
        (rc = check_source(size, &source, &tag)))
        return rc;
    return start_transfer(comm, &b, array, source, tag, 0, 0, owner, id, status);
}

int32_t opi_request_wait(int64_t id, opi_status *status)
{
    mpc_request req;
    mpc_status st;
    xfer_info info;
    int rc = xfer_acquire(id, &req, &info);
    if (rc != MPC_OK)
        return rc;
    /* No object to pin here: the registry's slot already holds it. */
    mpc_hang_note(MPC_HANG_WAIT, MPI_COMM_NULL, -1, -1);
    rc = xfer_complete(&req, 1, NULL, 0, &st);
    rc = opi_completed(&info, rc);
    xfer_release(id, 1);
    return rc == MPC_OK ? opi_request_status(status, &st, &info)
                        : opi_receive_failed(rc, &st, "the receive buffer", (size_t)info.bytes,
                                             info.elem_size);
}

enum request_op { REQUEST_TEST, REQUEST_CANCEL, REQUEST_DONE };

/* Acquires request id, makes op's MPI call on it and gives it back: a test that completed the
 * request — *done, or a failure, which completes it too (then *done is set) — frees its record.
 * REQUEST_DONE asks whether it finished without completing it (MPI_Request_get_status). Returns
 * the acquire's error; otherwise MPC_OK, with the call's code in *call_rc. */
RT_HOLDS_STACK_MARK static int call_on_request(int64_t id, enum request_op op, int *done,
                                               mpc_status *st, xfer_info *info, int *call_rc)
{
    mpc_request req;
    xfer_discard_dropped(); /* a safe point: a Test loop may wait for a dropped message's sender */
    int rc = xfer_acquire(id, &req, info);
    if (rc != MPC_OK)
        return rc;
    XFER_MPI_BEGIN(); /* no object: the registry's slot holds the transfer's */
    *call_rc = op == REQUEST_TEST     ? mpc_test(&req, done, st)
               : op == REQUEST_CANCEL ? mpc_cancel(&req)
                                      : mpc_request_done(req, done);
    XFER_MPI_END;
    if (*call_rc != MPC_OK)
        *done = 1;
    if (op == REQUEST_TEST && *done)
        *call_rc = opi_completed(info, *call_rc);
    xfer_release(id, op == REQUEST_TEST && *done);
    return MPC_OK;
}

int32_t opi_request_test(int64_t id, opi_status *status, int32_t *completed)
{
    int done = 0, rc, call_rc;
    mpc_status st;
    xfer_info info;
    if ((rc = call_on_request(id, REQUEST_TEST, &done, &st, &info, &call_rc)) != MPC_OK)
        return rc;
    *completed = done;
    if (call_rc != MPC_OK)
        return opi_receive_failed(call_rc, &st, "the receive buffer", (size_t)info.bytes,
                                  info.elem_size);
    return done ? opi_request_status(status, &st, &info) : MPC_OK;
}

int32_t opi_request_cancel(int64_t id)
{
    int done = 0, rc, call_rc;
    xfer_info info;
    return (rc = call_on_request(id, REQUEST_CANCEL, &done, NULL, &info, &call_rc)) != MPC_OK
               ? rc
               : call_rc;
}

/* ---- many requests at once: the progress engine of `await` ---- */

/* Tests the requests ids[start..) (a long[]; negative entries are skipped), one MPI test each.
 * A completed one gets ids[i] = -1 and statuses[i] (a StatusData[] as long as ids) filled. The
 * first that fails stops the pass: its id becomes -1 too, *stopped = i and its code is
 * returned, with the thread's error record describing it (the caller makes its exception,
 * then calls again from i + 1). Otherwise *stopped = the length and MPC_OK. */
RT_HOLDS_STACK_MARK int32_t opi_request_test_many(MonoObject *ids, int32_t start,
                                                  MonoObject *statuses, int32_t *stopped)
{
    opi_buffer ib, sb;
    int rc;
    if ((rc = opi_buffer_whole_as(ids, "ids", &ib)) ||
        (rc = opi_buffer_whole_as(statuses, "statuses", &sb)))
        return rc;
    int32_t n = (int32_t)(ib.bytes / sizeof(int64_t));
    if (sb.bytes < (size_t)n * sizeof(opi_status))
        return error_record(OPI_ERR_LENGTH, "statuses",
                            "statuses holds %zu bytes; %d statuses need %zu", sb.bytes, n,
                            (size_t)n * sizeof(opi_status));
    *stopped = n;
    xfer_discard_dropped(); /* once per pass of the progress engine */
    for (int32_t i = start < 0 ? 0 : start; i < n; i++) {
        /* the arrays' data, read again after each MPI call: one that went GC-safe (a C#
         * operator exists) pinned them only for its duration */
        int64_t id = ((int64_t *)rt_array_data(ids))[i];
        if (id < 0)
            continue;
        mpc_request req;
        mpc_status st;
        int done = 0;
        xfer_info info;
        bool busy = false;
        /* Another thread holds it for a moment (Request.Cancel: tested next pass) or has just
         * completed it (a Wait begun before the await): System.MP settles the task from what
         * that thread reported, never from a status this call did not fill. */
        if (xfer_acquire_or_busy(id, &req, &info, &busy) != MPC_OK)
            continue;
        XFER_MPI_BEGIN(ids, statuses);
        rc = mpc_test(&req, &done, &st);
        XFER_MPI_END;
        if (rc != MPC_OK)
            done = 1; /* the request failed, and so completed */
        if (done)
            rc = opi_completed(&info, rc);
        xfer_release(id, done);
        if (done) {
            opi_status *out = (opi_status *)rt_array_data(statuses) + i;
            if (rc != MPC_OK)
                rc = opi_receive_failed(rc, &st, "the receive buffer", (size_t)info.bytes,
                                        info.elem_size);
            else
                rc = opi_request_status(out, &st, &info);
        }
        if (rc != MPC_OK || done)
            ((int64_t *)rt_array_data(ids))[i] = -1;
        if (rc != MPC_OK) {
            *stopped = i;
            return rc;
        }
    }
    return MPC_OK;
}

/* ---- Request.WaitAll: several running requests in one call ---- */

/* Requests on the stack up to this many; more allocate. */
#define STACK_WAITS 8

/* Waits for the requests ids[0..n) (a long[]) in one wait, as Request.Wait does for one: takes
 * every record (one registry lock), completes every MPI request in one deferred-pinning wait
 * (xfer_complete_each), checks each (opi_completed) and fills its status while its buffer is
 * still the record's, then gives all back (one lock: persistent requests INACTIVE, the others
 * freed). A request completed gets ids[k] = -1 and statuses[k] (a StatusData[]); a failed one
 * has its code in statuses[k].error and its error record set aside (error_keep) in the order of
 * the ids, each taken back by the RequestFailure call (statuses[k].reserved = 1: out of memory
 * for that, the code's own message then). A request this call could not take (another thread
 * holds it, or it completed already) keeps its id: the caller waits for it on its own, as
 * Request.Wait does. *failures: how many failed. */
RT_HOLDS_STACK_MARK int32_t opi_request_wait_all(MonoObject *ids, int32_t n, MonoObject *statuses,
                                                 int32_t *failures)
{
    *failures = 0;
    if (n <= 0)
        return MPC_OK;
    if (rt_array_length(ids) < (size_t)n || rt_array_length(statuses) < (size_t)n)
        return error_record(OPI_ERR_LENGTH, "requests", "%d requests, arrays too short", n);
    /* no object address in these (they may be malloc'ed): the records' slots hold the objects */
    int64_t stack_ids[STACK_WAITS];
    mpc_request stack_reqs[STACK_WAITS];
    xfer_info stack_infos[STACK_WAITS];
    mpc_status stack_st[STACK_WAITS];
    int stack_rcs[STACK_WAITS], stack_acq[STACK_WAITS];
    int64_t *id = stack_ids;
    mpc_request *reqs = stack_reqs;
    xfer_info *infos = stack_infos;
    mpc_status *st = stack_st;
    int *rcs = stack_rcs, *acquired = stack_acq;
    void *block = NULL;
    if (n > STACK_WAITS) {
        size_t each = sizeof *infos + sizeof *id + sizeof *st + sizeof *reqs + 2 * sizeof(int);
        block = malloc((size_t)n * each);
        if (!block)
            return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory waiting for %d requests",
                                n);
        infos = block; /* the most aligned first */
        id = (int64_t *)(infos + n);
        st = (mpc_status *)(id + n);
        reqs = (mpc_request *)(st + n);
        rcs = (int *)(reqs + n);
        acquired = rcs + n;
    }
    for (int k = 0; k < n; k++)
        id[k] = ((int64_t *)rt_array_data(ids))[k];
    int m = xfer_acquire_many(id, n, reqs, infos, acquired, NULL);
    int kept = 0;
    if (m > 0) {
        /* the requests taken, at the front in order: the wait tests every entry it is given */
        for (int k = 0, j = 0; k < n; k++)
            if (acquired[k])
                reqs[j++] = reqs[k];
        /* ids and statuses are written after the wait: held in place while it waits GC-safe */
        mpc_hang_note(MPC_HANG_WAIT, MPI_COMM_NULL, -1, -1);
        xfer_complete_each(reqs, m, (MonoObject *const[]){ids, statuses}, 2, st, rcs);
        for (int k = n - 1, j = m - 1; k >= 0; k--) { /* each result to its request's place */
            if (!acquired[k])
                continue;
            st[k] = st[j];
            rcs[k] = rcs[j--];
        }
        int64_t *out_ids = (int64_t *)rt_array_data(ids);
        opi_status *out = (opi_status *)rt_array_data(statuses);
        for (int k = 0; k < n; k++) {
            if (!acquired[k])
                continue;
            out[k] = (opi_status){0};
            int rc = opi_completed(&infos[k], rcs[k]); /* its buffer still the record's */
            rc = rc != MPC_OK ? opi_receive_failed(rc, &st[k], "the receive buffer",
                                                   (size_t)infos[k].bytes, infos[k].elem_size)
                              : opi_request_status(&out[k], &st[k], &infos[k]);
            out_ids[k] = -1;
            if (rc == MPC_OK)
                continue;
            out[k].error = rc;
            if (kept++ == 0)
                error_keep_clear(); /* what an earlier call left unclaimed */
            out[k].reserved = !error_keep(rc);
        }
        xfer_release_completed(id, n, acquired);
    }
    free(block);
    *failures = kept;
    return MPC_OK;
}

/* The next failure Request.WaitAll's call set aside, made this thread's error record again (for
 * its exception): its code, or 0 when none is left. */
int32_t opi_request_failure(void) { return error_unkeep(); }

/* Whether the request has finished, without completing it: what Request.TestAll asks of each
 * request before it completes any. */
int32_t opi_request_done(int64_t id, int32_t *done)
{
    int finished = 0, rc, call_rc;
    xfer_info info;
    if ((rc = call_on_request(id, REQUEST_DONE, &finished, NULL, &info, &call_rc)) != MPC_OK)
        return rc;
    *done = finished; /* a failed request counts as finished: its Wait raises the error */
    return MPC_OK;
}

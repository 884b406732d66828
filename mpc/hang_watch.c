/* hang_watch.c — the hang report (MOTOR_HANG_REPORT): a rank blocked in one call longer than
 * the bound says where, and for a collective which ranks of the communicator have not entered it.
 *
 * What each thread is in: a slot per thread (mpc_internal.h), written by the thread itself with
 * relaxed stores — the call and its arguments when it starts or makes a call, a sequence number
 * made odd while it blocks and even after. Nothing else on the hot path: no clock, no lock, no
 * message. The watch thread wakes on a timed condition (a fraction of the bound, at most 1 s)
 * and keeps, per slot, the odd number it saw and since when; a slot with the same odd number
 * for the bound is stuck in one call.
 *
 * Which ranks have not entered: each rank counts the collectives it enters per communicator (a
 * table keyed by MPI handle, read lock-free). A communicator is known across ranks by an
 * identity derived from its parent's and the number of that creation on the parent (World is 1):
 * every member of the parent makes the same creations in the same order (MPI's rule for
 * collectives), so they derive the same identity, and of the communicators a Split makes with one
 * identity each rank holds only its own. The stuck rank's watch sends the identity to every
 * member's watch over its own duplicate of World (MPI, so across hosts too); each answers with
 * the number of collectives it has entered there, whether it is finishing, and the call it is
 * blocked in, if any. A member whose count is below the stuck collective's number has not entered
 * it. Intercommunicators (whose two sides derive from different parents) are not identified. */
#include "hang_watch.h"

#include "error_record.h"
#include "finalize_watch.h"
#include "mpc_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

_Atomic int mpc_hang_watching;
__thread mpc_hang_slot *mpc_hang_mine __attribute__((tls_model("initial-exec")));

/* ---- the slots: one per thread, adopted by the next new thread when its thread ends ---- */

static thread_blocks slots;

/* Every thread's slot, in turn. */
#define EACH_SLOT(s)                                                     \
    for (mpc_hang_slot *s = (mpc_hang_slot *)atomic_load(&slots.all); s; \
         s = (mpc_hang_slot *)s->link.next)

mpc_hang_slot *mpc_hang_claim(void)
{
    mpc_hang_slot *s = (mpc_hang_slot *)thread_block_claim(&slots, sizeof *s);
    /* an adopted slot may be odd if its thread ended inside a call: not this thread's */
    uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    if (seq & 1)
        atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
    mpc_hang_mine = s;
    return s;
}

/* ---- communicators: collectives entered, and identities across ranks ----
 * MPICH allows about 2048 communicators at once (its context ids), so the table never fills in
 * practice; if it does, the newest communicators are not identified. Records are never removed
 * (a freed handle's record is reset, and MPICH gives the handle out again), so a lock-free
 * lookup's probe sequence stays valid. */
enum { COMMS = 4096 };
#define WORLD_ID 1u

static struct comm_record {
    _Atomic int32_t key;      /* the MPI handle; 0: an empty record */
    _Atomic uint64_t id;      /* the identity across ranks; 0: not known */
    _Atomic int64_t entered;  /* collectives this rank entered on it */
    _Atomic uint64_t derived; /* communicators made from it (by every member alike) */
} comms[COMMS];
static pthread_mutex_t comms_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned comm_hash(int32_t key) { return ((uint32_t)key * 2654435761u) >> 20; }

static struct comm_record *comm_find(mpc_comm comm)
{
    int32_t key = (int32_t)comm;
    for (unsigned i = 0, at = comm_hash(key); i < COMMS; i++, at = (at + 1) % COMMS) {
        int32_t k = atomic_load_explicit(&comms[at].key, memory_order_acquire);
        if (k == key)
            return &comms[at];
        if (k == 0)
            return NULL;
    }
    return NULL;
}

/* Caller holds comms_lock. */
static void comm_set(mpc_comm comm, uint64_t id)
{
    int32_t key = (int32_t)comm;
    for (unsigned i = 0, at = comm_hash(key); i < COMMS; i++, at = (at + 1) % COMMS) {
        struct comm_record *r = &comms[at];
        int32_t k = atomic_load_explicit(&r->key, memory_order_relaxed);
        if (k != key && k != 0)
            continue;
        atomic_store_explicit(&r->id, id, memory_order_relaxed);
        atomic_store_explicit(&r->entered, 0, memory_order_relaxed);
        atomic_store_explicit(&r->derived, 0, memory_order_relaxed);
        if (k == 0) /* published last: a lookup that finds the key sees the rest */
            atomic_store_explicit(&r->key, key, memory_order_release);
        return;
    }
}

int64_t mpc_hang_count(mpc_comm comm)
{
    struct comm_record *r = comm_find(comm);
    if (!r)
        return 0;
    /* one thread at a time makes collectives on a communicator (MPI's rule): no read-modify-write
     * needed, and the watch reads whole values */
    int64_t n = atomic_load_explicit(&r->entered, memory_order_relaxed) + 1;
    atomic_store_explicit(&r->entered, n, memory_order_relaxed);
    return n;
}

static uint64_t mix(uint64_t x) /* splitmix64's finaliser */
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void mpc_hang_derived(mpc_comm parent, mpc_comm child, int known)
{
    if (!atomic_load_explicit(&mpc_hang_watching, memory_order_relaxed))
        return;
    pthread_mutex_lock(&comms_lock);
    struct comm_record *p = comm_find(parent);
    uint64_t id = 0;
    if (p) {
        uint64_t n = atomic_load_explicit(&p->derived, memory_order_relaxed) + 1;
        atomic_store_explicit(&p->derived, n, memory_order_relaxed);
        uint64_t parent_id = atomic_load_explicit(&p->id, memory_order_relaxed);
        if (known && parent_id)
            id = mix(parent_id * 0x9e3779b97f4a7c15ull + n) | 1; /* never 0 */
    }
    if (child != MPI_COMM_NULL)
        comm_set(child, id);
    pthread_mutex_unlock(&comms_lock);
}

void mpc_hang_forget(mpc_comm comm)
{
    if (!atomic_load_explicit(&mpc_hang_watching, memory_order_relaxed))
        return;
    pthread_mutex_lock(&comms_lock);
    if (comm_find(comm))
        comm_set(comm, 0);
    pthread_mutex_unlock(&comms_lock);
}

/* The number of collectives entered on the communicator of identity id here; -1: none here. */
static int64_t entered_on(uint64_t id)
{
    int64_t n = -1;
    pthread_mutex_lock(&comms_lock);
    for (unsigned i = 0; i < COMMS && n < 0; i++)
        if (atomic_load_explicit(&comms[i].key, memory_order_relaxed) != 0 &&
            atomic_load_explicit(&comms[i].id, memory_order_relaxed) == id)
            n = atomic_load_explicit(&comms[i].entered, memory_order_relaxed);
    pthread_mutex_unlock(&comms_lock);
    return n;
}

/* ---- the watch ---- */

enum { TAG_QUERY = 1, TAG_ANSWER = 2, LINE = 1536, LISTED = 16 };

struct query {
    uint64_t id; /* the communicator asked about; 0: only what the rank is doing */
    uint32_t serial;
    int32_t unused;
};

struct answer {
    uint32_t serial;
    int32_t finishing; /* at the end: in World's last barrier before MPI_Finalize */
    int64_t entered;   /* collectives entered on the communicator asked about; -1: none here */
    int32_t call, peer, tag; /* the call it is blocked in (MPC_HANG_NONE: none) */
    int32_t on_world;        /* its communicator: 1 World, 0 another, -1 none (a Wait) */
    int32_t seconds, unused;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* stop requested */
    int running, stop;
    _Atomic int finishing;
    pthread_t thread;
    MPI_Comm comm; /* a duplicate of World: queries never match the program's receives */
    int rank, size;
    double bound, exit_bound, period; /* seconds */
    MPI_Request query_req, answer_req;
    struct query query_in, query_out;
    struct answer answer_in, answer_out;
    uint32_t serial;
    /* while asking: the World ranks asked and what they answered */
    int asking, *ranks, *got;
    struct answer *answers;
} watch = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Waits up to `seconds` for a stop request; returns 1 when asked to stop. */
static int wait_for_stop(double seconds)
{
    return mpc_wait_for_stop(&watch.lock, &watch.changed, &watch.stop, seconds);
}

static const char *const call_names[MPC_HANG_CALLS] = {
    [MPC_HANG_NONE] = "?",
    [MPC_HANG_SEND] = "Send",
    [MPC_HANG_SSEND] = "Ssend",
    [MPC_HANG_RECV] = "Recv",
    [MPC_HANG_SENDRECV] = "Sendrecv",
    [MPC_HANG_PROBE] = "Probe",
    [MPC_HANG_WAIT] = "Wait",
    [MPC_HANG_BARRIER] = "Barrier",
    [MPC_HANG_BCAST] = "Bcast",
    [MPC_HANG_SCATTER] = "Scatter",
    [MPC_HANG_GATHER] = "Gather",
    [MPC_HANG_ALLGATHER] = "Allgather",
    [MPC_HANG_ALLTOALL] = "Alltoall",
    [MPC_HANG_REDUCE] = "Reduce",
    [MPC_HANG_ALLREDUCE] = "Allreduce",
    [MPC_HANG_SCAN] = "Scan",
    [MPC_HANG_EXSCAN] = "Exscan",
    [MPC_HANG_REDUCE_SCATTER] = "ReduceScatter",
    [MPC_HANG_SCATTERV] = "Scatterv",
    [MPC_HANG_GATHERV] = "Gatherv",
    [MPC_HANG_ALLGATHERV] = "Allgatherv",
    [MPC_HANG_ALLTOALLV] = "Alltoallv",
    [MPC_HANG_NEIGHBOR] = "a neighbourhood collective",
    [MPC_HANG_DUP] = "Dup",
    [MPC_HANG_SPLIT] = "Split",
    [MPC_HANG_CREATE] = "Create",
    [MPC_HANG_CART_CREATE] = "CreateCart",
    [MPC_HANG_CART_SUB] = "CartComm.Sub",
    [MPC_HANG_GRAPH_CREATE] = "CreateDistGraphAdjacent",
    [MPC_HANG_INTERCOMM] = "an intercommunicator's creation",
    [MPC_HANG_FINALIZE] = "MPI_Finalize (World's last barrier, every rank finished)",
};

static int is_collective(int call) { return call >= MPC_HANG_BARRIER && call < MPC_HANG_FINALIZE; }
static int is_p2p(int call) { return call >= MPC_HANG_SEND && call <= MPC_HANG_PROBE; }

/* "Recv(source 3, tag 7)", "Barrier", … */
static void add_call(char *line, int call, int peer, int tag)
{
    text_append(line, LINE, "%s", call >= 0 && call < MPC_HANG_CALLS ? call_names[call] : "?");
    if (!is_p2p(call))
        return;
    const char *role = call == MPC_HANG_SEND || call == MPC_HANG_SSEND ? "dest" : "source";
    if (peer == MPI_ANY_SOURCE)
        text_append(line, LINE, "(any source, ");
    else
        text_append(line, LINE, "(%s %d, ", role, peer);
    if (tag == MPI_ANY_TAG)
        text_append(line, LINE, "any tag)");
    else
        text_append(line, LINE, "tag %d)", tag);
}

/* "World (3 ranks)", "communicator \"rows\" (4 ranks, rank 1 here)". */
static void add_comm(char *line, MPI_Comm comm)
{
    int size = 0, rank = 0, length = 0;
    char name[MPI_MAX_OBJECT_NAME] = "";
    if (comm == MPI_COMM_WORLD) {
        text_append(line, LINE, "World (%d ranks)", watch.size);
        return;
    }
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) {
        text_append(line, LINE, "a communicator");
        return;
    }
    if (MPI_Comm_get_name(comm, name, &length) == MPI_SUCCESS && length > 0)
        text_append(line, LINE, "communicator \"%.*s\" (%d ranks, rank %d here)", length, name,
                    size, rank);
    else
        text_append(line, LINE, "a communicator of %d ranks (rank %d here)", size, rank);
}

/* What an answer says its rank is doing. */
static void add_state(char *line, const struct answer *a)
{
    if (a->finishing) {
        text_append(line, LINE, "finishing: at MPI_Finalize");
        return;
    }
    if (a->call == MPC_HANG_NONE) {
        text_append(line, LINE, "not blocked in a call");
        return;
    }
    text_append(line, LINE, "in ");
    add_call(line, a->call, a->peer, a->tag);
    if (a->on_world >= 0) /* not for a Wait: its requests may be on several */
        text_append(line, LINE, " on %s", a->on_world ? "World" : "another communicator");
    text_append(line, LINE, ", %d s", a->seconds);
}

/* The call this rank's longest-blocked thread is in, for an answer. */
static void own_state(struct answer *a, double now)
{
    a->finishing = atomic_load(&watch.finishing);
    a->call = MPC_HANG_NONE;
    double longest = -1;
    EACH_SLOT(s)
    {
        uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (!(seq & 1) || seq != s->seen_seq || now - s->seen_at <= longest)
            continue;
        longest = now - s->seen_at;
        a->call = atomic_load_explicit(&s->call, memory_order_relaxed);
        a->peer = atomic_load_explicit(&s->peer, memory_order_relaxed);
        a->tag = atomic_load_explicit(&s->tag, memory_order_relaxed);
        MPI_Comm comm = (MPI_Comm)atomic_load_explicit(&s->comm, memory_order_relaxed);
        a->on_world = comm == MPI_COMM_WORLD ? 1 : comm == MPI_COMM_NULL ? -1 : 0;
        a->seconds = (int)longest;
    }
}

static __attribute__((noreturn)) void end_process(void)
{
    fflush(stdout);
    fflush(stderr);
    _exit(MPC_EXIT_HANG);
}

/* Answers the queries that arrived and takes the answers that came back; every MPI call the
 * watch makes on its communicator goes through here or ask(). */
static void serve(void)
{
    int done = 0;
    MPI_Status st;
    /* (a receive that could not be posted again is MPI_REQUEST_NULL: no longer tested) */
    while (watch.query_req != MPI_REQUEST_NULL &&
           MPI_Test(&watch.query_req, &done, &st) == MPI_SUCCESS && done) {
        struct answer *a = &watch.answer_out;
        memset(a, 0, sizeof *a);
        a->serial = watch.query_in.serial;
        a->entered = watch.query_in.id ? entered_on(watch.query_in.id) : -1;
        own_state(a, now_seconds());
        /* small: MPI sends it eagerly, so the blocking send returns at once */
        if (MPI_Send(a, (int)sizeof *a, MPI_BYTE, st.MPI_SOURCE, TAG_ANSWER, watch.comm) !=
            MPI_SUCCESS) {
            /* nothing more to do: the asker reports this rank's answer as missing */
        }
        if (MPI_Irecv(&watch.query_in, (int)sizeof watch.query_in, MPI_BYTE, MPI_ANY_SOURCE,
                      TAG_QUERY, watch.comm, &watch.query_req) != MPI_SUCCESS)
            watch.query_req = MPI_REQUEST_NULL;
    }
    while (watch.answer_req != MPI_REQUEST_NULL &&
           MPI_Test(&watch.answer_req, &done, &st) == MPI_SUCCESS && done) {
        for (int i = 0; watch.asking && watch.answer_in.serial == watch.serial && i < watch.asking;
             i++)
            if (watch.ranks[i] == st.MPI_SOURCE) {
                watch.answers[i] = watch.answer_in;
                watch.got[i] = 1;
            }
        if (MPI_Irecv(&watch.answer_in, (int)sizeof watch.answer_in, MPI_BYTE, MPI_ANY_SOURCE,
                      TAG_ANSWER, watch.comm, &watch.answer_req) != MPI_SUCCESS)
            watch.answer_req = MPI_REQUEST_NULL;
    }
}

/* Asks the World ranks ranks[0..n) about the communicator of identity id (0: only what they
 * do), answers[i] and got[i] filled as they answer; gives up after a few periods, when stopped,
 * or when the slot's call ended (seq changed). Returns 0 when the call still blocks. */
static int ask(const int *ranks, int n, uint64_t id, struct answer *answers, int *got,
               const mpc_hang_slot *s, uint32_t seq)
{
    watch.serial++;
    watch.query_out.id = id;
    watch.query_out.serial = watch.serial;
    watch.ranks = (int *)ranks;
    watch.answers = answers;
    watch.got = got;
    watch.asking = n;
    for (int i = 0; i < n; i++) /* a rank not asked stays without an answer: said so */
        if (!got[i] && MPI_Send(&watch.query_out, (int)sizeof watch.query_out, MPI_BYTE, ranks[i],
                                TAG_QUERY, watch.comm) != MPI_SUCCESS)
            break;
    /* every watch answers at its next wake: within a period, later on a starved machine */
    double until = now_seconds() + 4 * watch.period + 5.0;
    int left = n, stopped = 0;
    while (left > 0 && now_seconds() < until &&
           atomic_load_explicit(&s->seq, memory_order_acquire) == seq &&
           !(stopped = wait_for_stop(0.01))) {
        serve();
        left = 0;
        for (int i = 0; i < n; i++)
            left += !got[i];
    }
    watch.asking = 0;
    return stopped || atomic_load_explicit(&s->seq, memory_order_acquire) != seq;
}

/* The World ranks of comm's ranks into world[0..size). */
static int world_ranks(MPI_Comm comm, int size, int *world)
{
    MPI_Group group = MPI_GROUP_NULL, world_group;
    int *ranks = malloc((size_t)size * sizeof *ranks);
    if (!ranks)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < size; i++)
        ranks[i] = i;
    int rc = MPI_Comm_group(comm, &group);
    if (rc == MPI_SUCCESS && (rc = MPI_Comm_group(MPI_COMM_WORLD, &world_group)) == MPI_SUCCESS) {
        rc = MPI_Group_translate_ranks(group, size, ranks, world_group, world);
        int freed = MPI_Group_free(&world_group);
        rc = rc != MPI_SUCCESS ? rc : freed;
    }
    if (group != MPI_GROUP_NULL) {
        int freed = MPI_Group_free(&group);
        rc = rc != MPI_SUCCESS ? rc : freed;
    }
    free(ranks);
    return rc;
}

/* " rank 2" or " rank 2 = World rank 5". */
static void add_rank(char *line, MPI_Comm comm, int rank, int world)
{
    if (comm == MPI_COMM_WORLD)
        text_append(line, LINE, " rank %d", rank);
    else
        text_append(line, LINE, " rank %d = World rank %d", rank, world);
}

/* One more rank of a list headed by heading (its first): the rank and its state, after a comma;
 * past LISTED, counted only. */
static void add_listed(char *line, int *listed, const char *heading, MPI_Comm comm, int rank,
                       int world, const struct answer *a)
{
    text_append(line, LINE, "%s", (*listed)++ == 0 ? heading : ",");
    if (*listed > LISTED)
        return;
    add_rank(line, comm, rank, world);
    text_append(line, LINE, " (");
    add_state(line, a);
    text_append(line, LINE, ")");
}

/* The report of a slot blocked for `seconds` in the call it describes: one line on stderr. */
static void report(mpc_hang_slot *s, uint32_t seq, double seconds)
{
    int call = atomic_load_explicit(&s->call, memory_order_relaxed);
    MPI_Comm comm = (MPI_Comm)atomic_load_explicit(&s->comm, memory_order_relaxed);
    int peer = atomic_load_explicit(&s->peer, memory_order_relaxed);
    int tag = atomic_load_explicit(&s->tag, memory_order_relaxed);
    int64_t index = atomic_load_explicit(&s->index, memory_order_relaxed);
    if (atomic_load_explicit(&s->seq, memory_order_acquire) != seq)
        return; /* the call ended meanwhile */
    char line[LINE] = "";
    text_append(line, LINE, "motor: hang: rank %d blocked %.0f s in ", watch.rank, seconds);
    add_call(line, call, peer, tag);
    if (call != MPC_HANG_WAIT && call != MPC_HANG_FINALIZE) {
        text_append(line, LINE, " on ");
        add_comm(line, comm);
    }
    int inter = 0, size = 0;
    if (call == MPC_HANG_FINALIZE)
        comm = MPI_COMM_WORLD;
    if (comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD &&
        (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter))
        comm = MPI_COMM_NULL;
    if (comm != MPI_COMM_NULL && MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        size = 0;
    struct comm_record *r = comm != MPI_COMM_NULL ? comm_find(comm) : NULL;
    uint64_t id = r ? atomic_load_explicit(&r->id, memory_order_relaxed) : 0;
    int *world = size > 0 ? calloc((size_t)size, 2 * sizeof *world) : NULL;
    struct answer *answers = size > 0 ? calloc((size_t)size, sizeof *answers) : NULL;
    int me = -1;
    if (world && answers && world_ranks(comm, size, world) == MPI_SUCCESS) {
        int *got = world + size;
        for (int i = 0; i < size; i++)
            if (world[i] == watch.rank)
                got[me = i] = 1;
        if ((call == MPC_HANG_FINALIZE || is_collective(call)) &&
            (id || call == MPC_HANG_FINALIZE)) {
            if (ask(world, size, id, answers, got, s, seq) != 0)
                goto out;
            int missing = 0, silent = 0;
            for (int i = 0; i < size; i++) {
                int entered =
                    call == MPC_HANG_FINALIZE ? answers[i].finishing : answers[i].entered >= index;
                if (!got[i] || i == me || entered)
                    continue;
                add_listed(line, &missing,
                           call == MPC_HANG_FINALIZE ? "; not finished:" : "; not entered by", comm,
                           i, world[i], &answers[i]);
            }
            if (missing > LISTED)
                text_append(line, LINE, " ... %d ranks in all", missing);
            for (int i = 0; i < size; i++)
                if (!got[i] && silent++ < LISTED)
                    text_append(line, LINE, "%s%d", silent == 1 ? "; no answer from rank " : ", ",
                                i);
            /* entered as many collectives, but blocked in another kind: calls that do not match
             * (a Bcast where the others are in a Barrier) */
            int other = 0;
            for (int i = 0; call != MPC_HANG_FINALIZE && i < size; i++) {
                if (!got[i] || i == me || answers[i].entered < index || answers[i].finishing ||
                    !is_collective(answers[i].call) || answers[i].call == call)
                    continue;
                add_listed(line, &other,
                           missing || silent ? "; in another collective:"
                                             : "; every rank is at this collective, but not in "
                                               "the same call:",
                           comm, i, world[i], &answers[i]);
            }
            if (missing == 0 && silent == 0 && other == 0)
                text_append(line, LINE, "; every rank has entered it");
        } else if (is_p2p(call) && peer >= 0 && peer < size && peer != me) {
            if (ask(&world[peer], 1, 0, &answers[peer], &got[peer], s, seq) != 0)
                goto out;
            text_append(line, LINE, ";");
            add_rank(line, comm, peer, world[peer]);
            text_append(line, LINE, " is ");
            if (got[peer])
                add_state(line, &answers[peer]);
            else
                text_append(line, LINE, "silent (no answer)");
        } else if (is_collective(call)) {
            text_append(line, LINE, "; which ranks have not entered it is not known (%s)",
                        r ? "the communicator was not made by Motor from World"
                          : "a communicator Motor did not make");
        }
    } else if (is_collective(call) && inter) {
        text_append(line, LINE,
                    "; which ranks have not entered it is not known (an intercommunicator)");
    }
    if (atomic_load_explicit(&s->seq, memory_order_acquire) == seq) {
        fprintf(stderr, "%s\n", line);
        fflush(stderr);
    }
out:
    free(world);
    free(answers);
}

/* Ends the job with MPC_EXIT_HANG. Under Hydra, by asking the process manager to abort the job
 * with that status (PMI-1's abort, as MPI_Abort does) and waiting to be ended with the rest:
 * Hydra returns the bitwise or of the ranks' wait statuses, so a rank that exits first, even
 * through MPI_Abort (which exits at once), races the launcher's SIGKILL of the others, and the
 * job's status was then 9 in one run of six. Elsewhere, MPI_Abort. */
static __attribute__((noreturn)) void end_job(void)
{
    int pmi = hydra_pmi_socket();
    char line[64];
    int length = snprintf(line, sizeof line, "cmd=abort exitcode=%d\n", MPC_EXIT_HANG);
    fflush(stdout);
    fflush(stderr);
    /* a moment for the launcher to forward the last line: the abort ends its forwarding too */
    struct timespec moment = {0, 200000000};
    nanosleep(&moment, NULL);
    if (pmi >= 0 && write(pmi, line, (size_t)length) == length) {
        struct timespec nap = {30, 0}; /* the process manager ends every rank meanwhile */
        nanosleep(&nap, NULL);
        end_process();
    }
    MPI_Abort(watch.comm, MPC_EXIT_HANG); /* returns only if it failed: then this rank alone */
    end_process();
}

/* The call a slot is blocked in, for the last line. */
static void add_slot_call(char *line, const mpc_hang_slot *s)
{
    add_call(line, atomic_load_explicit(&s->call, memory_order_relaxed),
             atomic_load_explicit(&s->peer, memory_order_relaxed),
             atomic_load_explicit(&s->tag, memory_order_relaxed));
}

/* Looks at every slot: a call blocked past the bound is reported once; past the exit bound the
 * process ends. */
static void look(void)
{
    double now = now_seconds();
    EACH_SLOT(s)
    {
        uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (seq != s->seen_seq) { /* a new call since the last look (or none) */
            s->seen_seq = seq;
            s->seen_at = now;
            s->reported = 0;
            continue;
        }
        if (!(seq & 1))
            continue;
        double blocked = now - s->seen_at; /* at least this long: it began before seen_at */
        int ending = watch.exit_bound > 0 && blocked >= watch.exit_bound;
        if (!s->reported && (blocked >= watch.bound || ending)) {
            s->reported = 1;
            report(s, seq, blocked);
        }
        if (ending && atomic_load_explicit(&s->seq, memory_order_acquire) == seq) {
            char line[LINE] = "";
            text_append(line, LINE, "motor: hang: rank %d still blocked after %.0f s in ",
                        watch.rank, blocked);
            add_slot_call(line, s);
            text_append(line, LINE, " (%s); ending the job with status %d",
                        mpc_config_name(MPC_CONFIG_HANG_EXIT), MPC_EXIT_HANG);
            fprintf(stderr, "%s\n", line);
            end_job();
        }
    }
}

static void *watch_thread(void *arg)
{
    (void)arg;
    while (!wait_for_stop(watch.period)) {
        serve();
        look();
    }
    return NULL;
}

int hang_watch_start(int thread_level)
{
    double bound = mpc_config_seconds(MPC_CONFIG_HANG_REPORT);
    int rc, on = bound > 0, all[2] = {on, !on};
    /* collective whatever this rank decided: a duplicate of World made by some ranks only would
     * hang here */
    if ((rc = MPI_Allreduce(MPI_IN_PLACE, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD)) != MPI_SUCCESS)
        return rc;
    if (!all[0])
        return MPI_SUCCESS;
    if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, &watch.rank)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(MPI_COMM_WORLD, &watch.size)) != MPI_SUCCESS)
        return rc;
    if (all[1]) {
        if (on)
            fprintf(stderr,
                    "motor: rank %d: %s is set on some ranks only (it must be the same on every "
                    "rank); no hang report\n",
                    watch.rank, mpc_config_name(MPC_CONFIG_HANG_REPORT));
        return MPI_SUCCESS;
    }
    if (thread_level != MPI_THREAD_MULTIPLE) {
        if (watch.rank == 0)
            fprintf(stderr, "motor: %s needs MPI_THREAD_MULTIPLE (granted: %d); no hang report\n",
                    mpc_config_name(MPC_CONFIG_HANG_REPORT), thread_level);
        return MPI_SUCCESS;
    }
    if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &watch.comm)) != MPI_SUCCESS ||
        (rc = MPI_Comm_set_errhandler(watch.comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
        return rc;
    watch.bound = bound;
    watch.exit_bound = mpc_config_seconds(MPC_CONFIG_HANG_EXIT);
    double first = watch.exit_bound > 0 && watch.exit_bound < bound ? watch.exit_bound : bound;
    watch.period = first / 8 < 0.05 ? 0.05 : first / 8 > 1.0 ? 1.0 : first / 8;
    if ((rc = MPI_Irecv(&watch.query_in, (int)sizeof watch.query_in, MPI_BYTE, MPI_ANY_SOURCE,
                        TAG_QUERY, watch.comm, &watch.query_req)) != MPI_SUCCESS ||
        (rc = MPI_Irecv(&watch.answer_in, (int)sizeof watch.answer_in, MPI_BYTE, MPI_ANY_SOURCE,
                        TAG_ANSWER, watch.comm, &watch.answer_req)) != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&comms_lock);
    comm_set(MPI_COMM_WORLD, WORLD_ID);
    pthread_mutex_unlock(&comms_lock);
    atomic_store(&mpc_hang_watching, 1);
    if (pthread_create(&watch.thread, NULL, watch_thread, NULL) != 0) {
        atomic_store(&mpc_hang_watching, 0);
        return MPI_ERR_OTHER;
    }
    watch.running = 1;
    return MPI_SUCCESS;
}

int hang_watch_final_barrier(void)
{
    if (!watch.running)
        return MPI_Barrier(MPI_COMM_WORLD);
    atomic_store(&watch.finishing, 1);
    int marked = mpc_hang_enter(MPC_HANG_FINALIZE, MPI_COMM_WORLD, -1, -1);
    int rc = mpc_hang_leave(marked, MPI_Barrier(watch.comm));
    hang_watch_stop();
    return rc;
}

void hang_watch_stop(void)
{
    atomic_store(&watch.finishing, 1);
    if (!watch.running)
        return;
    mpc_request_stop(&watch.lock, &watch.changed, &watch.stop);
    pthread_join(watch.thread, NULL);
    watch.running = 0;
    atomic_store(&mpc_hang_watching, 0);
    MPI_Request *reqs[2] = {&watch.query_req, &watch.answer_req};
    for (int i = 0; i < 2; i++) {
        if (*reqs[i] == MPI_REQUEST_NULL)
            continue;
        /* a receive not cancelled is one MPI_Finalize finds pending: said, not fatal */
        int rc = MPI_Cancel(reqs[i]);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(reqs[i], MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            fprintf(stderr,
                    "motor: rank %d: the hang report's receive could not be cancelled: %s\n",
                    watch.rank, mpc_strerror(rc));
    }
}

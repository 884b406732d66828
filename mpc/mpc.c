/* mpc.c — the Message Passing Core over MPICH. See mpc.h. */
#include "mpc.h"

#include "error_record.h"
#include "liveness.h"
#include "owned_handles.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int granted_thread_level = -1;
static int tag_upper_bound = 32767; /* MPI guarantees at least this; replaced at init */
static mpc_wait_policy wait_policy = MPC_WAIT_SPIN;
static int host_ranks, host_cores; /* 0 until measured */


/* Byte counts above INT_MAX go through the MPI-4 large-count (_c) entry points. */
#define MPC_FITS_INT(bytes) ((bytes) <= (size_t)INT_MAX)

static const char *const mpc_messages[] = {
    [0] = "success",
#define MPC_ERR_MESSAGE(name, code, message) [-(code)] = message,
    MPC_ERRORS(MPC_ERR_MESSAGE)
#undef MPC_ERR_MESSAGE
};

/* MPI's text goes to the thread's scratch buffer: no static TLS (see error_record.h). */
_Static_assert(ERROR_SCRATCH_BYTES >= MPI_MAX_ERROR_STRING,
               "MPI_Error_string needs MPI_MAX_ERROR_STRING bytes");

const char *mpc_strerror(int code)
{
    if (code <= 0 && code >= MPC_ERR_LAST)
        return mpc_messages[-code];
    char *buf = error_scratch();
    if (!buf)
        return code < 0 ? "unknown error (out of memory describing it)"
                        : "MPI error (out of memory describing it)";
    if (code < 0) {
        snprintf(buf, ERROR_SCRATCH_BYTES, "unknown mpc error %d", code);
        return buf;
    }
    int len = 0;
    if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS)
        snprintf(buf, ERROR_SCRATCH_BYTES, "MPI error %d", code);
    return buf;
}

int mpc_error_class(int code)
{
    if (code <= 0)
        return code;
    int cls = 0;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS)
        return MPI_ERR_UNKNOWN;
    return cls;
}

int mpc_is_initialized(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    return init && !fin;
}

/* The ranks of World on this host, and the cores they may run on together: the union of their
 * affinity masks (ranks pinned to distinct cores have one core each and are not oversubscribed;
 * `taskset -c 0 mpiexec -n 3` gives all three the same core), at most the CPUs online. */
static int measure_host_load(void)
{
    enum { WORDS = sizeof(cpu_set_t) / sizeof(unsigned long) };
    union {
        cpu_set_t set;
        unsigned long words[WORDS];
    } mine, all;
    CPU_ZERO(&mine.set);
    if (sched_getaffinity(0, sizeof mine.set, &mine.set) != 0) /* more CPUs than a cpu_set_t holds */
        memset(mine.words, 0xff, sizeof mine.words);
    MPI_Comm host;
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = MPI_Comm_size(host, &host_ranks)) == MPI_SUCCESS)
        rc = MPI_Allreduce(mine.words, all.words, WORDS, MPI_UNSIGNED_LONG, MPI_BOR, host);
    int freed = MPI_Comm_free(&host);
    if (rc != MPI_SUCCESS || (rc = freed) != MPI_SUCCESS)
        return rc;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    host_cores = CPU_COUNT(&all.set);
    if (online > 0 && online < host_cores)
        host_cores = (int)online;
    return MPI_SUCCESS;
}

static mpc_wait_policy choose_wait_policy(const char *setting)
{
    int oversubscribed = host_cores > 0 && host_ranks > host_cores;
    if (!setting || !*setting || strcmp(setting, "auto") == 0)
        return oversubscribed ? MPC_WAIT_YIELD : MPC_WAIT_SPIN;
    if (strcmp(setting, "spin") == 0)
        return MPC_WAIT_SPIN;
    if (strcmp(setting, "yield") == 0)
        return MPC_WAIT_YIELD;
    fprintf(stderr, "motor: MOTOR_WAIT='%s' is not auto, spin or yield; using auto\n", setting);
    return oversubscribed ? MPC_WAIT_YIELD : MPC_WAIT_SPIN;
}

mpc_wait_policy mpc_wait_mode(void) { return wait_policy; }

/* The backoff's steps (mpc.h). Measured with bench/jacobi.py at 3 and 4 ranks on 2 cores (a
 * loaded machine, load average 11-16): every variant with naps — naps at once, after 20 µs or
 * after 100 µs of yields, capped at 20 µs, 100 µs or 1 ms — took 2-5x less time per step than
 * spinning and did not differ beyond the noise; yields alone were up to 2x slower than naps. The
 * 100 µs of yields keep a wait that ends soon off the timer's slack; the 100 µs cap bounds what a
 * message that finds its receiver napping waits. */
#define BACKOFF_SPIN_NS 20000
#define BACKOFF_YIELD_NS 100000
#define BACKOFF_NAP_MIN_NS 1000
#define BACKOFF_NAP_MAX_NS 100000

int64_t mpc_monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t); /* cannot fail for CLOCK_MONOTONIC with a valid pointer */
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void mpc_backoff_pause(mpc_backoff *b)
{
    int64_t now = mpc_monotonic_ns();
    if (b->since == 0)
        b->since = now;
    if (now - b->since < BACKOFF_SPIN_NS)
        return;
    if (now - b->since < BACKOFF_YIELD_NS) {
        sched_yield();
        return;
    }
    if (b->nap < BACKOFF_NAP_MIN_NS)
        b->nap = BACKOFF_NAP_MIN_NS;
    struct timespec t = {b->nap / 1000000000, b->nap % 1000000000};
    nanosleep(&t, NULL); /* EINTR: the next poll comes sooner, which is harmless */
    b->nap = b->nap * 2 > BACKOFF_NAP_MAX_NS ? BACKOFF_NAP_MAX_NS : b->nap * 2;
}

/* Under MPC_WAIT_YIELD the blocking calls below that carry bytes (no operator) run as their
 * non-blocking form completed here, with the backoff: MPICH's blocking calls busy-poll, and ch4
 * has no setting that makes them yield. rc is the start's. (Reductions stay MPI's: a C# operator
 * must run in the calling thread, and a non-blocking one runs in whichever thread progresses.) */
static int complete_backing_off(int rc, MPI_Request *req, MPI_Status *status)
{
    MPI_Status ignored;
    mpc_backoff b = {0, 0};
    while (rc == MPI_SUCCESS) {
        int done = 0;
        if ((rc = MPI_Test(req, &done, status ? status : &ignored)) != MPI_SUCCESS || done)
            break;
        mpc_backoff_pause(&b);
    }
    return rc;
}
#define YIELDING (wait_policy == MPC_WAIT_YIELD)

void mpc_host_load(int *ranks, int *cores)
{
    *ranks = host_ranks;
    *cores = host_cores;
}

int mpc_init(int *argc, char ***argv, int required, int *provided)
{
    int init = 0, fin = 0, rc;
    MPI_Finalized(&fin);
    if (fin)
        return error_record(MPC_ERR_NOT_INITIALIZED, NULL,
                            "MPI has been finalised: it cannot be initialised again");
    MPI_Initialized(&init);
    if (!init) {
        rc = MPI_Init_thread(argc, argv, required, &granted_thread_level);
        if (rc != MPI_SUCCESS)
            return rc;
    } else if ((rc = MPI_Query_thread(&granted_thread_level)) != MPI_SUCCESS) {
        return rc;
    }
    if ((rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)) != MPI_SUCCESS ||
        (rc = MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
        return rc;
    void *attr = NULL;
    int found = 0;
    if ((rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &attr, &found)) != MPI_SUCCESS)
        return rc;
    if (found)
        tag_upper_bound = *(int *)attr;
    /* Collective, so only when this call initialised MPI: every rank then runs it. */
    if (!init && (rc = measure_host_load()) != MPI_SUCCESS)
        return rc;
    if (!init && (rc = liveness_start(granted_thread_level)) != MPI_SUCCESS)
        return rc;
    wait_policy = choose_wait_policy(getenv("MOTOR_WAIT"));
    if (provided)
        *provided = granted_thread_level;
    return MPC_OK;
}

/* Frees what callers made and never freed (a program's undisposed communicators and
 * operators), which MPI_Finalize would otherwise report as leaks on every rank. */
static void free_what_callers_left(void)
{
    int rc = owned_free_all();
    if (rc != MPI_SUCCESS)
        fprintf(stderr, "motor: freeing the MPI objects left at the end (communicators, groups, datatypes, "
                        "operators) failed: %s\n", mpc_strerror(rc));
}

int mpc_finalize(void)
{
    if (!mpc_is_initialized())
        return error_record(MPC_ERR_NOT_INITIALIZED, NULL,
                            "MPI is not initialised, or has been finalised already");
    free_what_callers_left();
    liveness_stop();
    return MPI_Finalize();
}

/* The watch over a bounded MPI_Finalize (mpc_finalize_within).
 *
 * Under Hydra, MPI_Finalize's last words go to the process manager over the PMI socket: a
 * barrier, then "finalize". A process that ends without them makes Hydra's proxy kill the job
 * and report BAD TERMINATION, whatever its exit status. So while MPI_Finalize runs, MPI talks to
 * the process manager through the watch: MPI's descriptor of the socket is swapped for one end
 * of a socket pair, and the watch relays every line between that pair and the real socket,
 * noting where the barrier and the finalize stand. When the bound passes, the watch stops
 * relaying and finishes that conversation itself — the barrier (if MPI had not entered it),
 * then "finalize" (if MPI had not sent it) — and only then ends the process. No line can cross
 * its own: MPI reaches the process manager only through the watch. */
enum { PMI_LINE = 1024 };

struct pmi_line { /* the line being read in one direction */
    char text[PMI_LINE];
    size_t length; /* PMI_LINE: too long to matter, skipped to its end */
};

static struct {
    double seconds;
    int exit_status;
    int rank;
    struct timespec deadline; /* CLOCK_MONOTONIC */
    int done_pipe[2];         /* MPI_Finalize returned: a byte on [1] */
    int pm;                   /* our descriptor of the socket to the process manager, or -1 */
    int mpi;                  /* our end of the pair MPI talks PMI through, or -1 */
    struct pmi_line from_mpi, from_pm;
    int barrier_in, barrier_out, finalize, finalize_ack; /* lines seen so far */
} finalize_watch = {0.0, 0, 0, {0, 0}, {-1, -1}, -1, -1, {{0}, 0}, {{0}, 0}, 0, 0, 0, 0};

static double seconds_until(const struct timespec *when)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(when->tv_sec - now.tv_sec) + (double)(when->tv_nsec - now.tv_nsec) * 1e-9;
}

static int poll_millis(double seconds)
{
    return seconds <= 0 ? 0 : seconds > 3600 ? 3600000 : (int)(seconds * 1000) + 1;
}

static int write_all(int fd, const char *bytes, size_t length)
{
    while (length > 0) {
        ssize_t n = write(fd, bytes, length);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        bytes += n;
        length -= (size_t)n;
    }
    return 0;
}

/* Notes each whole line of `bytes` that is one of the end's commands. */
static void note_lines(struct pmi_line *line, const char *bytes, size_t length, int from_mpi)
{
    for (size_t i = 0; i < length; i++) {
        if (bytes[i] != '\n') {
            if (line->length < PMI_LINE - 1)
                line->text[line->length++] = bytes[i];
            else
                line->length = PMI_LINE;
            continue;
        }
        if (line->length < PMI_LINE) {
            line->text[line->length] = '\0';
            if (from_mpi && strcmp(line->text, "cmd=barrier_in") == 0)
                finalize_watch.barrier_in = 1;
            else if (from_mpi && strcmp(line->text, "cmd=finalize") == 0)
                finalize_watch.finalize = 1;
            else if (!from_mpi && strcmp(line->text, "cmd=barrier_out") == 0)
                finalize_watch.barrier_out = 1;
            else if (!from_mpi && strcmp(line->text, "cmd=finalize_ack") == 0)
                finalize_watch.finalize_ack = 1;
        }
        line->length = 0;
    }
}

/* Moves what is readable on `from` to `to` (when `to` >= 0), noting the end's commands. Returns
 * 0, or -1 when `from` closed or failed (then it is no longer read). */
static int relay(int *from, int to, struct pmi_line *line, int from_mpi)
{
    char bytes[4096];
    ssize_t n = read(*from, bytes, sizeof bytes);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0) {
        close(*from);
        *from = -1;
        return -1;
    }
    note_lines(line, bytes, (size_t)n, from_mpi);
    if (to >= 0 && write_all(to, bytes, (size_t)n) != 0)
        return -1;
    return 0;
}

/* Relays MPI's talk with the process manager until MPI_Finalize returns (0) or the bound
 * passes (-1). */
static int relay_until_deadline(void)
{
    for (;;) {
        struct pollfd fds[3] = {{finalize_watch.done_pipe[0], POLLIN, 0},
                                {finalize_watch.mpi, POLLIN, 0},
                                {finalize_watch.pm, POLLIN, 0}};
        double left = seconds_until(&finalize_watch.deadline);
        int rc = poll(fds, 3, poll_millis(left));
        if (rc < 0 && errno != EINTR)
            return -1;
        if (rc > 0 && (fds[0].revents & (POLLIN | POLLHUP)))
            return 0;
        if (rc > 0 && fds[1].revents)
            relay(&finalize_watch.mpi, finalize_watch.pm, &finalize_watch.from_mpi, 1);
        if (rc > 0 && fds[2].revents)
            relay(&finalize_watch.pm, finalize_watch.mpi, &finalize_watch.from_pm, 0);
        if (rc == 0 && left <= 0)
            return -1;
    }
}

/* Reads the process manager until `*seen` is set, for up to `seconds`. */
static int await_pm(const int *seen, double seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)seconds;
    while (!*seen && finalize_watch.pm >= 0) {
        struct pollfd readable = {finalize_watch.pm, POLLIN, 0};
        double left = seconds_until(&until);
        int rc = poll(&readable, 1, poll_millis(left));
        if (rc < 0 && errno != EINTR)
            return -1;
        if (rc == 0 && left <= 0)
            return -1;
        if (rc > 0)
            relay(&finalize_watch.pm, -1, &finalize_watch.from_pm, 0);
    }
    return *seen ? 0 : -1;
}

/* The bound passed: takes the conversation with the process manager over from MPI and ends it
 * as MPI_Finalize would. Returns 0 when the process manager acknowledged the finalize. */
static int finish_with_pm(void)
{
    /* what MPI wrote before the bound passed still counts; after it, MPI is not heard */
    struct pollfd pending = {finalize_watch.mpi, POLLIN, 0};
    while (finalize_watch.mpi >= 0 && poll(&pending, 1, 0) == 1 &&
           relay(&finalize_watch.mpi, finalize_watch.pm, &finalize_watch.from_mpi, 1) == 0)
        pending.fd = finalize_watch.mpi;
    if (finalize_watch.finalize_ack) /* MPI said it itself; the process manager closed its end */
        return 0;
    if (finalize_watch.pm < 0)
        return -1;
    /* every rank reaches its bound: a barrier MPI has not entered here is entered by this rank's
     * watch, one entered elsewhere by theirs */
    const double patience = finalize_watch.seconds > 60 ? finalize_watch.seconds : 60;
    if (!finalize_watch.barrier_in) {
        if (write_all(finalize_watch.pm, "cmd=barrier_in\n", 15) != 0)
            return -1;
        finalize_watch.barrier_in = 1;
    }
    if (!finalize_watch.finalize && await_pm(&finalize_watch.barrier_out, patience) != 0)
        return -1;
    if (!finalize_watch.finalize) {
        if (write_all(finalize_watch.pm, "cmd=finalize\n", 13) != 0)
            return -1;
        finalize_watch.finalize = 1;
    }
    return await_pm(&finalize_watch.finalize_ack, patience);
}

static void *watch_finalize(void *arg)
{
    (void)arg;
    if (relay_until_deadline() == 0)
        return NULL;
    /* Every rank passed the barrier, so the job's work is complete: only MPI's teardown is
     * stuck (or the machine so busy that it has not finished). */
    int told = finish_with_pm() == 0;
    fprintf(stderr,
            "motor: rank %d: MPI_Finalize still running %.1f s after every rank finished; "
            "ending with status %d%s\n",
            finalize_watch.rank, finalize_watch.seconds, finalize_watch.exit_status,
            told ? " (the process manager was told, as MPI_Finalize would)"
                 : finalize_watch.pm >= 0 ? " (the process manager did not answer)" : "");
    fflush(stdout);
    fflush(stderr);
    _exit(finalize_watch.exit_status);
}

/* Swaps MPI's descriptor of the socket to Hydra (`pmi`) for one end of a socket pair whose other
 * end the watch holds; returns 0, or -1 with nothing changed. */
static int interpose_pmi(int pmi)
{
    int pair[2];
    int flags = fcntl(pmi, F_GETFD);
    if (flags < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return -1;
    int pm = fcntl(pmi, F_DUPFD_CLOEXEC, 3);
    /* dup2 replaces MPI's descriptor at once: MPI never sees it closed */
    if (pm < 0 || dup2(pair[0], pmi) < 0 || fcntl(pmi, F_SETFD, flags) != 0) {
        if (pm >= 0)
            close(pm);
        close(pair[0]);
        close(pair[1]);
        return -1;
    }
    close(pair[0]);
    finalize_watch.pm = pm;
    finalize_watch.mpi = pair[1];
    return 0;
}

/* MPI_Finalize, ending the process with `exit_status` if it has not returned after `seconds`;
 * `pmi` is the socket to Hydra, or -1. */
static int finalize_bounded(double seconds, int exit_status, int rank, int pmi)
{
    finalize_watch.exit_status = exit_status;
    finalize_watch.seconds = seconds;
    finalize_watch.rank = rank;
    clock_gettime(CLOCK_MONOTONIC, &finalize_watch.deadline);
    double whole = (double)(long)seconds;
    long nanos = finalize_watch.deadline.tv_nsec + (long)((seconds - whole) * 1e9);
    finalize_watch.deadline.tv_sec += (time_t)whole + nanos / 1000000000L;
    finalize_watch.deadline.tv_nsec = nanos % 1000000000L;
    pthread_t watcher;
    int watching = pipe2(finalize_watch.done_pipe, O_CLOEXEC) == 0;
    /* without a relay the watch still bounds MPI_Finalize, but cannot tell the process manager */
    int relaying = watching && pmi >= 0 && interpose_pmi(pmi) == 0;
    if (watching && pthread_create(&watcher, NULL, watch_finalize, NULL) != 0) {
        watching = 0;
        if (relaying) { /* MPI talks to the process manager directly again */
            if (dup2(finalize_watch.pm, pmi) < 0)
                fprintf(stderr, "motor: rank %d: the socket to the process manager could not be "
                                "given back to MPI: %s\n", rank, strerror(errno));
        }
    }
    /* Without a watcher MPI_Finalize runs unbounded, as it would without this call. */
    int rc = MPI_Finalize();
    if (watching) {
        if (write_all(finalize_watch.done_pipe[1], "", 1) != 0) {
            pthread_detach(watcher); /* it ends the process at the bound, as asked */
            return rc;
        }
        pthread_join(watcher, NULL);
    }
    if (finalize_watch.pm >= 0)
        close(finalize_watch.pm);
    if (finalize_watch.mpi >= 0)
        close(finalize_watch.mpi);
    finalize_watch.pm = finalize_watch.mpi = -1;
    for (int i = 0; i < 2; i++)
        if (finalize_watch.done_pipe[i] >= 0)
            close(finalize_watch.done_pipe[i]);
    return rc;
}

/* Sends one PMI-1 command line on `fd` and waits up to `millis` for the reply line `answer`. */
static int pmi_exchange(int fd, const char *command, const char *answer, int millis)
{
    size_t length = strlen(command);
    if (write(fd, command, length) != (ssize_t)length)
        return -1;
    char reply[256];
    size_t have = 0;
    struct pollfd readable = {fd, POLLIN, 0};
    while (have < sizeof reply - 1 && poll(&readable, 1, millis) == 1) {
        ssize_t n = read(fd, reply + have, sizeof reply - 1 - have);
        if (n <= 0)
            return -1;
        have += (size_t)n;
        reply[have] = '\0';
        if (strstr(reply, answer))
            return 0;
    }
    return -1;
}

/* The socket to Hydra's process manager (PMI-1 over PMI_FD), or -1 under another launcher. */
static int hydra_pmi_socket(void)
{
    const char *value = getenv("PMI_FD");
    if (!value || !*value)
        return -1;
    int fd = atoi(value);
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) ? fd : -1;
}

int mpc_finalize_within(double seconds, int exit_status)
{
    if (!mpc_is_initialized())
        return error_record(MPC_ERR_NOT_INITIALIZED, NULL,
                            "MPI is not initialised, or has been finalised already");
    free_what_callers_left();
    if (seconds <= 0) {
        liveness_stop();
        return MPI_Finalize();
    }
    /* the heartbeat runs on through the barrier: a host lost now still ends the job */
    int rank = 0, rc = MPI_Barrier(MPI_COMM_WORLD);
    liveness_stop();
    if (rc != MPI_SUCCESS || (rc = MPI_Comm_rank(MPI_COMM_WORLD, &rank)) != MPI_SUCCESS)
        return rc;
    int pmi = hydra_pmi_socket();
    if (liveness_spans_hosts() == 1 && pmi >= 0) {
        /* MPICH 4.0.2 disconnects every UCX endpoint before its last process-manager barrier,
         * and over TCP a disconnect can wait forever for a peer already in that barrier. The
         * barrier above proved no message of the job is pending, so every rank ends as
         * MPI_Finalize ends toward the process manager, without the transport's teardown: its
         * barrier, then "finalize" (without which Hydra's proxy kills the job); the kernel
         * frees the rest. */
        fflush(stdout);
        fflush(stderr);
        if (pmi_exchange(pmi, "cmd=barrier_in\n", "cmd=barrier_out\n", 60000) == 0 &&
            pmi_exchange(pmi, "cmd=finalize\n", "cmd=finalize_ack\n", 60000) == 0)
            _exit(exit_status);
        fprintf(stderr, "motor: rank %d: the process manager did not answer at the end; "
                        "finalizing MPI instead\n", rank);
    }
    return finalize_bounded(seconds, exit_status, rank, pmi);
}

double mpc_env_seconds(const char *variable, double fallback)
{
    const char *value = getenv(variable);
    if (!value || !*value)
        return fallback;
    char *end = NULL;
    double parsed = strtod(value, &end);
    if (end && *end == '\0' && parsed >= 0)
        return parsed;
    fprintf(stderr, "motor: %s='%s' is not a number of seconds >= 0; using %.1f\n", variable, value,
            fallback);
    return fallback;
}

int mpc_thread_level(void) { return granted_thread_level; }
int mpc_tag_ub(void) { return tag_upper_bound; }
double mpc_wtime(void) { return MPI_Wtime(); }

int mpc_processor_name(char *buf, size_t size)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    if (!buf || size == 0)
        return MPI_ERR_ARG; /* MPI's own code for a bad argument: mpc speaks MPI's vocabulary */
    int rc = MPI_Get_processor_name(name, &len);
    if (rc != MPI_SUCCESS)
        return rc;
    snprintf(buf, size, "%.*s", len, name);
    return MPC_OK;
}

int mpc_abort(mpc_comm comm, int code) { return MPI_Abort(comm, code); }

mpc_comm mpc_comm_world(void) { return MPI_COMM_WORLD; }
mpc_comm mpc_comm_self(void) { return MPI_COMM_SELF; }
int mpc_comm_rank(mpc_comm comm, int *rank) { return MPI_Comm_rank(comm, rank); }
int mpc_comm_size(mpc_comm comm, int *size) { return MPI_Comm_size(comm, size); }

/* A communicator MPI just made for a caller: errors returned, and freed at the end of MPI if the
 * caller never frees it (owned_handles.h). */
static int adopt_new_comm(int rc, mpc_comm *out)
{
    if (rc != MPI_SUCCESS || *out == MPI_COMM_NULL)
        return rc;
    return owned_add(MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN), OWNED_COMM, (int)*out);
}

int mpc_comm_dup(mpc_comm comm, mpc_comm *out) { return adopt_new_comm(MPI_Comm_dup(comm, out), out); }

int mpc_comm_split(mpc_comm comm, int color, int key, mpc_comm *out)
{
    return adopt_new_comm(MPI_Comm_split(comm, color < 0 ? MPI_UNDEFINED : color, key, out), out);
}

int mpc_comm_free(mpc_comm *comm)
{
    if (*comm == MPI_COMM_NULL)
        return error_record(MPC_ERR_COMM_NULL, NULL, "the communicator has been freed already");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return MPC_OK; /* predefined communicators are never freed */
    return owned_free(OWNED_COMM, comm);
}

int mpc_send(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm)
{
    if (MPC_FITS_INT(bytes))
        return MPI_Send(buf, (int)bytes, MPI_BYTE, dest, tag, comm);
    return MPI_Send_c(buf, (MPI_Count)bytes, MPI_BYTE, dest, tag, comm);
}

int mpc_ssend(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm)
{
    if (MPC_FITS_INT(bytes))
        return MPI_Ssend(buf, (int)bytes, MPI_BYTE, dest, tag, comm);
    return MPI_Ssend_c(buf, (MPI_Count)bytes, MPI_BYTE, dest, tag, comm);
}

static void failed_status(int rc, const MPI_Status *in, mpc_status *out);

int mpc_recv(void *buf, size_t bytes, int source, int tag, mpc_comm comm, mpc_status *status)
{
    MPI_Status st;
    int rc = MPC_FITS_INT(bytes)
        ? MPI_Recv(buf, (int)bytes, MPI_BYTE, source, tag, comm, &st)
        : MPI_Recv_c(buf, (MPI_Count)bytes, MPI_BYTE, source, tag, comm, &st);
    if (rc == MPI_SUCCESS && status)
        mpc_status_from_mpi(&st, status);
    else if (status)
        failed_status(rc, &st, status);
    return rc;
}

int mpc_isend(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm, mpc_request *req)
{
    if (MPC_FITS_INT(bytes))
        return MPI_Isend(buf, (int)bytes, MPI_BYTE, dest, tag, comm, req);
    return MPI_Isend_c(buf, (MPI_Count)bytes, MPI_BYTE, dest, tag, comm, req);
}

int mpc_issend(const void *buf, size_t bytes, int dest, int tag, mpc_comm comm, mpc_request *req)
{
    if (MPC_FITS_INT(bytes))
        return MPI_Issend(buf, (int)bytes, MPI_BYTE, dest, tag, comm, req);
    return MPI_Issend_c(buf, (MPI_Count)bytes, MPI_BYTE, dest, tag, comm, req);
}

int mpc_irecv(void *buf, size_t bytes, int source, int tag, mpc_comm comm, mpc_request *req)
{
    if (MPC_FITS_INT(bytes))
        return MPI_Irecv(buf, (int)bytes, MPI_BYTE, source, tag, comm, req);
    return MPI_Irecv_c(buf, (MPI_Count)bytes, MPI_BYTE, source, tag, comm, req);
}

int mpc_sendrecv(const void *sendbuf, size_t sendbytes, int dest, int sendtag,
                 void *recvbuf, size_t recvbytes, int source, int recvtag,
                 mpc_comm comm, mpc_status *status)
{
    MPI_Status st;
    int rc;
    if (MPC_FITS_INT(sendbytes) && MPC_FITS_INT(recvbytes))
        rc = MPI_Sendrecv(sendbuf, (int)sendbytes, MPI_BYTE, dest, sendtag, recvbuf, (int)recvbytes,
                          MPI_BYTE, source, recvtag, comm, &st);
    else
        rc = MPI_Sendrecv_c(sendbuf, (MPI_Count)sendbytes, MPI_BYTE, dest, sendtag, recvbuf,
                            (MPI_Count)recvbytes, MPI_BYTE, source,
                            recvtag, comm, &st);
    if (rc == MPI_SUCCESS && status)
        mpc_status_from_mpi(&st, status);
    else if (status)
        failed_status(rc, &st, status);
    return rc;
}

/* MPICH keeps the byte count and the cancel bit in the status itself (mpi.h,
 * MPIR_STATUS_GET_COUNT and _GET_CANCEL_BIT); reading them saves two library calls on every
 * receive (MPI_Get_count takes MPICH's global lock under MPI_THREAD_MULTIPLE). test_mpc checks
 * both against MPI_Get_count and MPI_Test_cancelled. */
static void status_fields(const MPI_Status *in, mpc_status *out)
{
    int64_t bytes = (int64_t)(((uint64_t)((unsigned)in->count_hi_and_cancelled >> 1) << 32) +
                              (unsigned)in->count_lo);
    out->source = in->MPI_SOURCE;
    out->tag = in->MPI_TAG;
    out->bytes = bytes;
    out->count = bytes <= INT_MAX ? (int32_t)bytes : INT32_MAX;
}

/* For a cancelled request MPI defines only the cancel bit: the other fields hold whatever the
 * request (or the stack) held before, even another message's envelope. They are reported as
 * MPI's empty status (MPI_ANY_SOURCE, MPI_ANY_TAG, nothing received). */
void mpc_status_from_mpi(const MPI_Status *in, mpc_status *out)
{
    out->cancelled = in->count_hi_and_cancelled & 1;
    if (out->cancelled) {
        out->source = MPI_ANY_SOURCE;
        out->tag = MPI_ANY_TAG;
        out->bytes = 0;
        out->count = 0;
        return;
    }
    status_fields(in, out);
}

void mpc_status_from_probe(const MPI_Status *in, mpc_status *out)
{
    status_fields(in, out);
    out->cancelled = 0; /* a probe never sets MPICH's cancel bit: whatever it holds is stale */
}

/* The status of a receive that failed: MPI fills the envelope of a truncated message (its size
 * it does not report, not even in MPICH's error text); for any other failure nothing is known. */
static void failed_status(int rc, const MPI_Status *in, mpc_status *out)
{
    int truncated = mpc_error_class(rc) == MPI_ERR_TRUNCATE;
    out->source = truncated ? in->MPI_SOURCE : MPI_ANY_SOURCE;
    out->tag = truncated ? in->MPI_TAG : MPI_ANY_TAG;
    out->bytes = -1;
    out->count = -1;
    out->cancelled = 0;
}

/* MPI reports the error of a failed request in the status; return that, not MPI_ERR_IN_STATUS. */
static int request_error(int rc, const MPI_Status *st)
{
    if (rc == MPI_ERR_IN_STATUS || (rc != MPI_SUCCESS && st->MPI_ERROR != MPI_SUCCESS))
        return st->MPI_ERROR != MPI_SUCCESS ? st->MPI_ERROR : rc;
    return rc;
}

int mpc_test(mpc_request *req, int *done, mpc_status *status)
{
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    int rc = MPI_Test(req, done, &st);
    if (rc != MPI_SUCCESS) {
        rc = request_error(rc, &st);
        if (status)
            failed_status(rc, &st, status);
        return rc;
    }
    if (*done && status)
        mpc_status_from_mpi(&st, status);
    return MPC_OK;
}

int mpc_wait(mpc_request *req, mpc_status *status)
{
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    int rc = MPI_Wait(req, &st);
    if (rc != MPI_SUCCESS) {
        rc = request_error(rc, &st);
        if (status)
            failed_status(rc, &st, status);
        return rc;
    }
    if (status)
        mpc_status_from_mpi(&st, status);
    return MPC_OK;
}

int mpc_cancel(mpc_request *req) { return MPI_Cancel(req); }

int mpc_request_done(mpc_request req, int *done)
{
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    int rc = MPI_Request_get_status(req, done, &st);
    if (rc != MPI_SUCCESS)
        *done = 1; /* a failed request has completed */
    return rc == MPI_SUCCESS ? MPC_OK : request_error(rc, &st);
}

int mpc_probe(int source, int tag, mpc_comm comm, mpc_status *status)
{
    MPI_Status st = {0};
    int rc = MPI_Probe(source, tag, comm, &st);
    if (rc == MPI_SUCCESS && status)
        mpc_status_from_probe(&st, status);
    return rc;
}

int mpc_iprobe(int source, int tag, mpc_comm comm, int *found, mpc_status *status)
{
    MPI_Status st = {0};
    int rc = MPI_Iprobe(source, tag, comm, found, &st);
    if (rc == MPI_SUCCESS && *found && status)
        mpc_status_from_probe(&st, status);
    return rc;
}

int mpc_improbe(int source, int tag, mpc_comm comm, int *found, mpc_message *msg, mpc_status *status)
{
    MPI_Status st = {0};
    int rc = MPI_Improbe(source, tag, comm, found, msg, &st);
    if (rc == MPI_SUCCESS && *found && status)
        mpc_status_from_probe(&st, status);
    return rc;
}

int mpc_mrecv(void *buf, size_t bytes, mpc_message *msg, mpc_status *status)
{
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    int rc = MPC_FITS_INT(bytes) ? MPI_Mrecv(buf, (int)bytes, MPI_BYTE, msg, &st)
                                 : MPI_Mrecv_c(buf, (MPI_Count)bytes, MPI_BYTE, msg, &st);
    if (rc != MPI_SUCCESS)
        return request_error(rc, &st);
    if (status)
        mpc_status_from_mpi(&st, status);
    return MPC_OK;
}

int mpc_imrecv(void *buf, size_t bytes, mpc_message *msg, mpc_request *req)
{
    return MPC_FITS_INT(bytes) ? MPI_Imrecv(buf, (int)bytes, MPI_BYTE, msg, req)
                               : MPI_Imrecv_c(buf, (MPI_Count)bytes, MPI_BYTE, msg, req);
}

int mpc_barrier(mpc_comm comm)
{
    MPI_Request req;
    return YIELDING ? complete_backing_off(MPI_Ibarrier(comm, &req), &req, NULL) : MPI_Barrier(comm);
}
int mpc_ibarrier(mpc_comm comm, mpc_request *req) { return MPI_Ibarrier(comm, req); }

/* ---- collectives ---- */

int mpc_bcast(void *buf, size_t bytes, int root, mpc_comm comm)
{
    MPI_Request req;
    if (YIELDING)
        return complete_backing_off(mpc_ibcast(buf, bytes, root, comm, &req), &req, NULL);
    if (MPC_FITS_INT(bytes))
        return MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, comm);
    return MPI_Bcast_c(buf, (MPI_Count)bytes, MPI_BYTE, root, comm);
}

int mpc_scatter(const void *sendbuf, void *recvbuf, size_t n, int root, mpc_comm comm)
{
    MPI_Request req;
    if (YIELDING)
        return complete_backing_off(mpc_iscatter(sendbuf, recvbuf, n, root, comm, &req), &req, NULL);
    if (MPC_FITS_INT(n))
        return MPI_Scatter(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, root, comm);
    return MPI_Scatter_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf, (MPI_Count)n, MPI_BYTE, root, comm);
}

int mpc_gather(const void *sendbuf, void *recvbuf, size_t n, int root, mpc_comm comm)
{
    MPI_Request req;
    if (YIELDING)
        return complete_backing_off(mpc_igather(sendbuf, recvbuf, n, root, comm, &req), &req, NULL);
    if (MPC_FITS_INT(n))
        return MPI_Gather(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, root, comm);
    return MPI_Gather_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf, (MPI_Count)n, MPI_BYTE, root, comm);
}

int mpc_allgather(const void *sendbuf, void *recvbuf, size_t n, mpc_comm comm)
{
    MPI_Request req;
    if (YIELDING)
        return complete_backing_off(mpc_iallgather(sendbuf, recvbuf, n, comm, &req), &req, NULL);
    if (MPC_FITS_INT(n))
        return MPI_Allgather(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, comm);
    return MPI_Allgather_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf, (MPI_Count)n, MPI_BYTE, comm);
}

int mpc_alltoall(const void *sendbuf, void *recvbuf, size_t n, mpc_comm comm)
{
    MPI_Request req;
    if (YIELDING)
        return complete_backing_off(mpc_ialltoall(sendbuf, recvbuf, n, comm, &req), &req, NULL);
    if (MPC_FITS_INT(n))
        return MPI_Alltoall(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, comm);
    return MPI_Alltoall_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf, (MPI_Count)n, MPI_BYTE, comm);
}

int mpc_reduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
               int root, mpc_comm comm)
{
    if (MPC_FITS_INT(count))
        return MPI_Reduce(sendbuf, recvbuf, (int)count, type, op, root, comm);
    return MPI_Reduce_c(sendbuf, recvbuf, (MPI_Count)count, type, op, root, comm);
}

int mpc_allreduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                  mpc_comm comm)
{
    if (MPC_FITS_INT(count))
        return MPI_Allreduce(sendbuf, recvbuf, (int)count, type, op, comm);
    return MPI_Allreduce_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm);
}

int mpc_scan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
             mpc_comm comm)
{
    if (MPC_FITS_INT(count))
        return MPI_Scan(sendbuf, recvbuf, (int)count, type, op, comm);
    return MPI_Scan_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm);
}

int mpc_scatterv(const void *sendbuf, const MPI_Count *counts, const MPI_Count *displs, void *recvbuf,
                 size_t recvbytes, int root, mpc_comm comm)
{
    MPI_Request req;
    if (YIELDING)
        return complete_backing_off(MPI_Iscatterv_c(sendbuf, counts, displs, MPI_BYTE, recvbuf, (MPI_Count)recvbytes,
                                                    MPI_BYTE, root, comm, &req),
                                    &req, NULL);
    return MPI_Scatterv_c(sendbuf, counts, displs, MPI_BYTE, recvbuf, (MPI_Count)recvbytes, MPI_BYTE, root, comm);
}

int mpc_gatherv(const void *sendbuf, size_t sendbytes, void *recvbuf, const MPI_Count *counts,
                const MPI_Count *displs, int root, mpc_comm comm)
{
    MPI_Request req;
    if (YIELDING)
        return complete_backing_off(MPI_Igatherv_c(sendbuf, (MPI_Count)sendbytes, MPI_BYTE, recvbuf, counts, displs,
                                                   MPI_BYTE, root, comm, &req),
                                    &req, NULL);
    return MPI_Gatherv_c(sendbuf, (MPI_Count)sendbytes, MPI_BYTE, recvbuf, counts, displs, MPI_BYTE, root, comm);
}

int mpc_allgatherv(const void *sendbuf, size_t sendbytes, void *recvbuf, const MPI_Count *counts,
                   const MPI_Count *displs, mpc_comm comm)
{
    /* MPICH 4.0.2's ring Allgatherv_c counts its steps in int: with a piece past 2 GiB it fails
     * with "Invalid count". Then the pieces meet at rank 0 (Gatherv_c takes large counts) and
     * leave in one Bcast_c of the extent they fill. */
    int size, rc;
    if ((rc = MPI_Comm_size(comm, &size)) != MPI_SUCCESS)
        return rc;
    MPI_Count extent = 0;
    int large = 0;
    for (int r = 0; r < size; r++) {
        large |= counts[r] > INT_MAX || displs[r] > INT_MAX;
        if (displs[r] + counts[r] > extent)
            extent = displs[r] + counts[r];
    }
    MPI_Request req;
    if (!large && extent <= INT_MAX && YIELDING)
        return complete_backing_off(MPI_Iallgatherv_c(sendbuf, (MPI_Count)sendbytes, MPI_BYTE, recvbuf, counts, displs,
                                                      MPI_BYTE, comm, &req),
                                    &req, NULL);
    if (!large && extent <= INT_MAX)
        return MPI_Allgatherv_c(sendbuf, (MPI_Count)sendbytes, MPI_BYTE, recvbuf, counts, displs, MPI_BYTE, comm);
    if ((rc = mpc_gatherv(sendbuf, sendbytes, recvbuf, counts, displs, 0, comm)) != MPI_SUCCESS)
        return rc;
    return mpc_bcast(recvbuf, (size_t)extent, 0, comm);
}

/* ---- user operators ---- */

int mpc_op_create(MPI_User_function *fn, int commutative, MPI_Op *op)
{
    int rc = MPI_Op_create(fn, commutative, op); /* sequenced before *op is read */
    return owned_add(rc, OWNED_OP, (int)*op);
}

int mpc_op_free(MPI_Op *op) { return owned_free(OWNED_OP, op); }

int mpc_type_bytes(size_t bytes, MPI_Datatype *type)
{
    if (!MPC_FITS_INT(bytes))
        return error_record(MPC_ERR_TOO_LARGE, NULL,
                            "an element of %zu bytes is more than MPI's int count can describe", bytes);
    int rc = MPI_Type_contiguous((int)bytes, MPI_BYTE, type);
    if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(type)) != MPI_SUCCESS)
        MPI_Type_free(type); /* the commit's error is the one to report */
    return owned_add(rc, OWNED_TYPE, (int)*type);
}

int mpc_type_free(MPI_Datatype *type) { return owned_free(OWNED_TYPE, type); }

/* ---- exact v-collectives, Exscan, Reduce_scatter_block (issue 13) ---- */

static pthread_once_t private_keyval_once = PTHREAD_ONCE_INIT;
static int private_keyval = MPI_KEYVAL_INVALID;
static int private_keyval_rc = MPI_SUCCESS;

/* Frees the twin with its communicator (MPI_Comm_free, or MPI_Finalize for World and Self). */
static int free_private_twin(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    MPI_Comm twin = (MPI_Comm)(intptr_t)attr;
    return MPI_Comm_free(&twin);
}

static void create_private_keyval(void)
{
    private_keyval_rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_private_twin, &private_keyval, NULL);
}

int mpc_comm_private(mpc_comm comm, mpc_comm *out)
{
    pthread_once(&private_keyval_once, create_private_keyval);
    if (private_keyval_rc != MPI_SUCCESS)
        return private_keyval_rc;
    void *attr = NULL;
    int found = 0, rc = MPI_Comm_get_attr(comm, private_keyval, &attr, &found);
    if (rc != MPI_SUCCESS)
        return rc;
    if (found) {
        *out = (MPI_Comm)(intptr_t)attr;
        return MPC_OK;
    }
    /* not an owned handle (owned_handles.h): freed by its communicator's attribute callback */
    MPI_Comm twin;
    if ((rc = MPI_Comm_dup(comm, &twin)) != MPI_SUCCESS)
        return rc;
    if ((rc = MPI_Comm_set_errhandler(twin, MPI_ERRORS_RETURN)) != MPI_SUCCESS ||
        (rc = MPI_Comm_set_attr(comm, private_keyval, (void *)(intptr_t)twin)) != MPI_SUCCESS) {
        MPI_Comm_free(&twin);
        return rc;
    }
    *out = twin;
    return MPC_OK;
}

/* One tag per call kind on the twin: calls made in different orders on different ranks then
 * wait for each other instead of matching the wrong blocks. */
enum { TAG_GATHERV = 1, TAG_SCATTERV = 2, TAG_ALLTOALLV = 3 };

/* Requests and statuses of one call: on the stack up to 2 * STACK_PEERS, else on the heap;
 * every request starts as MPI_REQUEST_NULL (never waited for until posted). */
#define STACK_PEERS 64
typedef struct peer_requests {
    MPI_Request stack_reqs[2 * STACK_PEERS];
    MPI_Status stack_st[2 * STACK_PEERS];
    MPI_Request *reqs;
    MPI_Status *st;
    int n;
} peer_requests;

static int peer_requests_init(peer_requests *p, int n)
{
    p->n = n;
    if (n <= 2 * STACK_PEERS) {
        p->reqs = p->stack_reqs;
        p->st = p->stack_st;
    } else {
        p->reqs = malloc((size_t)n * sizeof *p->reqs);
        p->st = malloc((size_t)n * sizeof *p->st);
        if (!p->reqs || !p->st) {
            free(p->reqs);
            free(p->st);
            return error_record(MPC_ERR_NO_MEMORY, NULL, "out of memory for the requests of a collective over %d ranks",
                                n);
        }
    }
    for (int i = 0; i < n; i++) {
        p->reqs[i] = MPI_REQUEST_NULL;
        p->st[i].MPI_ERROR = MPI_SUCCESS;
    }
    return MPC_OK;
}

/* Waits for every posted request; the statuses (MPI_ERROR included) are then valid. Returns
 * MPI_SUCCESS or an error that is not any one request's. */
static int peer_requests_wait(peer_requests *p)
{
    if (wait_policy == MPC_WAIT_YIELD) {
        /* MPI_Waitall busy-polls: wait here with the backoff, each request asked without being
         * freed, so the MPI_Waitall below only collects statuses and errors as before */
        mpc_backoff b = {0, 0};
        for (int i = 0; i < p->n;) {
            int done = 0;
            MPI_Status unused;
            if (MPI_Request_get_status(p->reqs[i], &done, &unused) != MPI_SUCCESS)
                break; /* MPI_Waitall reports it */
            if (done)
                i++;
            else
                mpc_backoff_pause(&b);
        }
    }
    int rc = MPI_Waitall(p->n, p->reqs, p->st);
    if (rc != MPI_ERR_IN_STATUS)
        return rc;
    /* MPICH stops at a failed request and marks the ones it left running MPI_ERR_PENDING */
    for (int i = 0; i < p->n; i++)
        if (p->st[i].MPI_ERROR == MPI_ERR_PENDING) {
            p->st[i].MPI_ERROR = MPI_SUCCESS;
            int one = MPI_Wait(&p->reqs[i], &p->st[i]);
            if (one != MPI_SUCCESS)
                p->st[i].MPI_ERROR = one;
        }
    return MPI_SUCCESS;
}

static void peer_requests_free(peer_requests *p)
{
    if (p->reqs != p->stack_reqs) {
        free(p->reqs);
        free(p->st);
    }
}

/* Posting failed with rc: the started requests still complete (their buffers are the
 * caller's), cancelled where MPI can. Frees p; returns rc. */
static int peer_requests_abandon(peer_requests *p, int rc)
{
    for (int i = 0; i < p->n; i++)
        if (p->reqs[i] != MPI_REQUEST_NULL)
            MPI_Cancel(&p->reqs[i]);
    MPI_Waitall(p->n, p->reqs, p->st);
    peer_requests_free(p);
    return rc;
}

/* The bytes a completed receive brought, or MPC_GOT_MORE for a truncated one; another error is
 * kept in *rc (the first one). */
static int64_t received(const MPI_Status *st, int *rc)
{
    int cls = MPI_SUCCESS;
    if (st->MPI_ERROR != MPI_SUCCESS && MPI_Error_class(st->MPI_ERROR, &cls) == MPI_SUCCESS &&
        cls == MPI_ERR_TRUNCATE)
        return MPC_GOT_MORE;
    if (st->MPI_ERROR != MPI_SUCCESS && *rc == MPI_SUCCESS)
        *rc = st->MPI_ERROR;
    mpc_status s;
    status_fields(st, &s);
    return s.bytes;
}

/* The first send error among statuses [from, from+n) into *rc, if it holds none yet. */
static void send_errors(const MPI_Status *st, int from, int n, int skip, int *rc)
{
    for (int i = 0; i < n && *rc == MPI_SUCCESS; i++)
        if (i != skip && st[from + i].MPI_ERROR != MPI_SUCCESS)
            *rc = st[from + i].MPI_ERROR;
}

static int rank_size_twin(mpc_comm comm, int *rank, int *size, MPI_Comm *twin)
{
    int rc;
    if ((rc = MPI_Comm_rank(comm, rank)) != MPI_SUCCESS || (rc = MPI_Comm_size(comm, size)) != MPI_SUCCESS)
        return rc;
    return mpc_comm_private(comm, twin);
}

int mpc_gatherv_exact(const void *sendbuf, size_t sendbytes, void *recvbuf, const mpc_block *blocks,
                      int root, mpc_comm comm, int64_t *got)
{
    int rank, size, rc;
    MPI_Comm twin;
    if ((rc = rank_size_twin(comm, &rank, &size, &twin)) != MPC_OK)
        return rc;
    if (rank != root)
        return mpc_send(sendbuf, sendbytes, root, TAG_GATHERV, twin);
    peer_requests p;
    if ((rc = peer_requests_init(&p, size)) != MPC_OK)
        return rc;
    for (int r = 0; r < size; r++)
        if (r != root &&
            (rc = mpc_irecv((char *)recvbuf + blocks[r].offset, blocks[r].bytes, r, TAG_GATHERV, twin, &p.reqs[r])))
            return peer_requests_abandon(&p, rc);
    if (sendbytes)
        memcpy((char *)recvbuf + blocks[root].offset, sendbuf, sendbytes);
    got[root] = (int64_t)sendbytes;
    if ((rc = peer_requests_wait(&p)) == MPI_SUCCESS)
        for (int r = 0; r < size; r++)
            if (r != root)
                got[r] = received(&p.st[r], &rc);
    peer_requests_free(&p);
    return rc;
}

int mpc_scatterv_exact(const void *sendbuf, const mpc_block *blocks, void *recvbuf, size_t recvbytes,
                       int root, mpc_comm comm, int64_t *got)
{
    int rank, size, rc;
    MPI_Comm twin;
    if ((rc = rank_size_twin(comm, &rank, &size, &twin)) != MPC_OK)
        return rc;
    if (rank != root) {
        MPI_Status st;
        st.MPI_ERROR = MPI_SUCCESS;
        MPI_Request req;
        if (YIELDING)
            rc = complete_backing_off(mpc_irecv(recvbuf, recvbytes, root, TAG_SCATTERV, twin, &req), &req, &st);
        else
            rc = MPC_FITS_INT(recvbytes)
                ? MPI_Recv(recvbuf, (int)recvbytes, MPI_BYTE, root, TAG_SCATTERV, twin, &st)
                : MPI_Recv_c(recvbuf, (MPI_Count)recvbytes, MPI_BYTE, root, TAG_SCATTERV, twin, &st);
        if (rc != MPI_SUCCESS)
            st.MPI_ERROR = rc; /* a single receive reports its error in its return value */
        rc = MPI_SUCCESS;
        *got = received(&st, &rc);
        return rc;
    }
    peer_requests p;
    if ((rc = peer_requests_init(&p, size)) != MPC_OK)
        return rc;
    for (int r = 0; r < size; r++)
        if (r != root && (rc = mpc_isend((const char *)sendbuf + blocks[r].offset, blocks[r].bytes, r, TAG_SCATTERV,
                                         twin, &p.reqs[r])))
            return peer_requests_abandon(&p, rc);
    if (recvbytes)
        memcpy(recvbuf, (const char *)sendbuf + blocks[root].offset, recvbytes);
    *got = (int64_t)recvbytes;
    if ((rc = peer_requests_wait(&p)) == MPI_SUCCESS)
        send_errors(p.st, 0, size, root, &rc);
    peer_requests_free(&p);
    return rc;
}

int mpc_alltoallv_exact(const void *sendbuf, const mpc_block *send, void *recvbuf, const mpc_block *recv,
                        mpc_comm comm, int64_t *got)
{
    int rank, size, rc;
    MPI_Comm twin;
    if ((rc = rank_size_twin(comm, &rank, &size, &twin)) != MPC_OK)
        return rc;
    peer_requests p;
    if ((rc = peer_requests_init(&p, 2 * size)) != MPC_OK)
        return rc;
    /* receives first, from the next rank on; then sends, to the previous rank first: each rank
     * starts with a different peer (as MPICH's scattered algorithm does) */
    MPI_Request *rreq = p.reqs, *sreq = p.reqs + size;
    for (int i = 1; i < size; i++) {
        int r = (rank + i) % size;
        if ((rc = mpc_irecv((char *)recvbuf + recv[r].offset, recv[r].bytes, r, TAG_ALLTOALLV, twin, &rreq[r])))
            return peer_requests_abandon(&p, rc);
    }
    for (int i = 1; i < size; i++) {
        int r = (rank - i + size) % size;
        if ((rc = mpc_isend((const char *)sendbuf + send[r].offset, send[r].bytes, r, TAG_ALLTOALLV, twin, &sreq[r])))
            return peer_requests_abandon(&p, rc);
    }
    if (recv[rank].bytes)
        memcpy((char *)recvbuf + recv[rank].offset, (const char *)sendbuf + send[rank].offset, recv[rank].bytes);
    got[rank] = (int64_t)send[rank].bytes;
    if ((rc = peer_requests_wait(&p)) == MPI_SUCCESS) {
        for (int r = 0; r < size; r++)
            if (r != rank)
                got[r] = received(&p.st[r], &rc);
        send_errors(p.st, size, size, rank, &rc);
    }
    peer_requests_free(&p);
    return rc;
}

int mpc_exscan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op, mpc_comm comm)
{
    if (MPC_FITS_INT(count))
        return MPI_Exscan(sendbuf, recvbuf, (int)count, type, op, comm);
    return MPI_Exscan_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm);
}

int mpc_reduce_scatter_block(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                             mpc_comm comm)
{
    if (MPC_FITS_INT(count))
        return MPI_Reduce_scatter_block(sendbuf, recvbuf, (int)count, type, op, comm);
    return MPI_Reduce_scatter_block_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm);
}
/* ---- end of the v-collectives ---- */

/* ---- groups, topologies, intercommunicators, processes ---- */

int mpc_comm_group(mpc_comm comm, mpc_group *group)
{
    int rc = MPI_Comm_group(comm, group); /* sequenced before *group is read */
    return owned_add(rc, OWNED_GROUP, (int)*group);
}
int mpc_group_size(mpc_group group, int *size) { return MPI_Group_size(group, size); }
int mpc_group_rank(mpc_group group, int *rank) { return MPI_Group_rank(group, rank); }

int mpc_group_incl(mpc_group group, int n, const int *ranks, mpc_group *out)
{
    int rc = MPI_Group_incl(group, n, ranks, out); /* sequenced before *out is read */
    return owned_add(rc, OWNED_GROUP, (int)*out);
}

int mpc_group_excl(mpc_group group, int n, const int *ranks, mpc_group *out)
{
    int rc = MPI_Group_excl(group, n, ranks, out); /* sequenced before *out is read */
    return owned_add(rc, OWNED_GROUP, (int)*out);
}

int mpc_group_union(mpc_group a, mpc_group b, mpc_group *out)
{
    int rc = MPI_Group_union(a, b, out); /* sequenced before *out is read */
    return owned_add(rc, OWNED_GROUP, (int)*out);
}
int mpc_group_intersection(mpc_group a, mpc_group b, mpc_group *out)
{
    int rc = MPI_Group_intersection(a, b, out); /* sequenced before *out is read */
    return owned_add(rc, OWNED_GROUP, (int)*out);
}
int mpc_group_difference(mpc_group a, mpc_group b, mpc_group *out)
{
    int rc = MPI_Group_difference(a, b, out); /* sequenced before *out is read */
    return owned_add(rc, OWNED_GROUP, (int)*out);
}

int mpc_group_translate_ranks(mpc_group a, int n, const int *ranks, mpc_group b, int *out)
{
    return MPI_Group_translate_ranks(a, n, ranks, b, out);
}

int mpc_group_free(mpc_group *group)
{
    if (*group == MPI_GROUP_NULL || *group == MPI_GROUP_EMPTY)
        return MPC_OK; /* MPI_GROUP_EMPTY is predefined: nothing to free */
    return owned_free(OWNED_GROUP, group);
}

int mpc_comm_create(mpc_comm comm, mpc_group group, mpc_comm *out)
{
    return adopt_new_comm(MPI_Comm_create(comm, group, out), out);
}

int mpc_cart_create(mpc_comm comm, int ndims, const int *dims, const int *periods, int reorder, mpc_comm *out)
{
    return adopt_new_comm(MPI_Cart_create(comm, ndims, dims, periods, reorder, out), out);
}

int mpc_cartdim_get(mpc_comm comm, int *ndims) { return MPI_Cartdim_get(comm, ndims); }

int mpc_cart_get(mpc_comm comm, int maxdims, int *dims, int *periods, int *coords)
{
    return MPI_Cart_get(comm, maxdims, dims, periods, coords);
}

int mpc_cart_coords(mpc_comm comm, int rank, int maxdims, int *coords)
{
    return MPI_Cart_coords(comm, rank, maxdims, coords);
}

int mpc_cart_rank(mpc_comm comm, const int *coords, int *rank) { return MPI_Cart_rank(comm, coords, rank); }

int mpc_cart_shift(mpc_comm comm, int direction, int displacement, int *source, int *dest)
{
    return MPI_Cart_shift(comm, direction, displacement, source, dest);
}

int mpc_cart_sub(mpc_comm comm, const int *remain_dims, mpc_comm *out)
{
    return adopt_new_comm(MPI_Cart_sub(comm, remain_dims, out), out);
}

int mpc_dims_create(int nodes, int ndims, int *dims) { return MPI_Dims_create(nodes, ndims, dims); }

int mpc_intercomm_create(mpc_comm local, int local_leader, mpc_comm peer, int remote_leader, int tag,
                         mpc_comm *out)
{
    return adopt_new_comm(MPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, out), out);
}

int mpc_intercomm_merge(mpc_comm inter, int high, mpc_comm *out)
{
    return adopt_new_comm(MPI_Intercomm_merge(inter, high, out), out);
}

int mpc_comm_test_inter(mpc_comm comm, int *inter) { return MPI_Comm_test_inter(comm, inter); }
int mpc_comm_remote_size(mpc_comm comm, int *size) { return MPI_Comm_remote_size(comm, size); }

int mpc_dynamic_processes(char *why, size_t size)
{
    char port[MPI_MAX_PORT_NAME];
    int rc = MPI_Open_port(MPI_INFO_NULL, port);
    if (rc == MPI_SUCCESS)
        return MPI_Close_port(port);
    if (why && size) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
            len = snprintf(text, sizeof text, "MPI error %d", rc);
        snprintf(why, size, "%.*s", len, text);
    }
    return rc;
}

int mpc_comm_spawn(const char *command, char **argv, int maxprocs, const char *wdir, int root, mpc_comm comm,
                   mpc_comm *out)
{
    MPI_Info info = MPI_INFO_NULL;
    int rc, rank = 0;
    if ((rc = MPI_Comm_rank(comm, &rank)) != MPI_SUCCESS)
        return rc;
    if (rank == root && wdir) {
        if ((rc = MPI_Info_create(&info)) != MPI_SUCCESS)
            return rc;
        if ((rc = MPI_Info_set(info, "wdir", wdir)) != MPI_SUCCESS) {
            MPI_Info_free(&info);
            return rc;
        }
    }
    rc = MPI_Comm_spawn(command, argv, maxprocs, info, root, comm, out, MPI_ERRCODES_IGNORE);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return adopt_new_comm(rc, out);
}

/* MPI's own handle, the same at every call: errors returned, never freed by mpc. */
int mpc_comm_get_parent(mpc_comm *parent)
{
    int rc = MPI_Comm_get_parent(parent);
    if (rc != MPI_SUCCESS || *parent == MPI_COMM_NULL)
        return rc;
    return MPI_Comm_set_errhandler(*parent, MPI_ERRORS_RETURN);
}

/* ---- non-blocking collectives ---- */

int mpc_ibcast(void *buf, size_t bytes, int root, mpc_comm comm, mpc_request *req)
{
    if (MPC_FITS_INT(bytes))
        return MPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, comm, req);
    return MPI_Ibcast_c(buf, (MPI_Count)bytes, MPI_BYTE, root, comm, req);
}

int mpc_iallgather(const void *sendbuf, void *recvbuf, size_t n, mpc_comm comm, mpc_request *req)
{
    if (MPC_FITS_INT(n))
        return MPI_Iallgather(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, comm, req);
    return MPI_Iallgather_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf, (MPI_Count)n, MPI_BYTE, comm, req);
}

int mpc_ialltoall(const void *sendbuf, void *recvbuf, size_t n, mpc_comm comm, mpc_request *req)
{
    if (MPC_FITS_INT(n))
        return MPI_Ialltoall(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, comm, req);
    return MPI_Ialltoall_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf, (MPI_Count)n, MPI_BYTE, comm, req);
}

int mpc_ireduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op, int root,
                mpc_comm comm, mpc_request *req)
{
    if (MPC_FITS_INT(count))
        return MPI_Ireduce(sendbuf, recvbuf, (int)count, type, op, root, comm, req);
    return MPI_Ireduce_c(sendbuf, recvbuf, (MPI_Count)count, type, op, root, comm, req);
}

int mpc_iallreduce(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op, mpc_comm comm,
                   mpc_request *req)
{
    if (MPC_FITS_INT(count))
        return MPI_Iallreduce(sendbuf, recvbuf, (int)count, type, op, comm, req);
    return MPI_Iallreduce_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm, req);
}

int mpc_iscatter(const void *sendbuf, void *recvbuf, size_t n, int root, mpc_comm comm, mpc_request *req)
{
    if (MPC_FITS_INT(n))
        return MPI_Iscatter(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, root, comm, req);
    return MPI_Iscatter_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf, (MPI_Count)n, MPI_BYTE, root, comm, req);
}

int mpc_igather(const void *sendbuf, void *recvbuf, size_t n, int root, mpc_comm comm, mpc_request *req)
{
    if (MPC_FITS_INT(n))
        return MPI_Igather(sendbuf, (int)n, MPI_BYTE, recvbuf, (int)n, MPI_BYTE, root, comm, req);
    return MPI_Igather_c(sendbuf, (MPI_Count)n, MPI_BYTE, recvbuf, (MPI_Count)n, MPI_BYTE, root, comm, req);
}

int mpc_iscan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op, mpc_comm comm,
              mpc_request *req)
{
    if (MPC_FITS_INT(count))
        return MPI_Iscan(sendbuf, recvbuf, (int)count, type, op, comm, req);
    return MPI_Iscan_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm, req);
}

int mpc_iexscan(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op, mpc_comm comm,
                mpc_request *req)
{
    if (MPC_FITS_INT(count))
        return MPI_Iexscan(sendbuf, recvbuf, (int)count, type, op, comm, req);
    return MPI_Iexscan_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm, req);
}

int mpc_ireduce_scatter_block(const void *sendbuf, void *recvbuf, size_t count, MPI_Datatype type, MPI_Op op,
                              mpc_comm comm, mpc_request *req)
{
    if (MPC_FITS_INT(count))
        return MPI_Ireduce_scatter_block(sendbuf, recvbuf, (int)count, type, op, comm, req);
    return MPI_Ireduce_scatter_block_c(sendbuf, recvbuf, (MPI_Count)count, type, op, comm, req);
}

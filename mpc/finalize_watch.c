/* finalize_watch.c — the end of MPI under Hydra's process manager (finalize_watch.h): a
 * bounded MPI_Finalize whose PMI-1 talk is relayed through a watch thread, and the words a job
 * spanning hosts ends with instead of MPI's teardown. */
#include "finalize_watch.h"

#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
            told                     ? " (the process manager was told, as MPI_Finalize would)"
            : finalize_watch.pm >= 0 ? " (the process manager did not answer)"
                                     : "");
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
int finalize_bounded(double seconds, int exit_status, int rank, int pmi)
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
                fprintf(stderr,
                        "motor: rank %d: the socket to the process manager could not be "
                        "given back to MPI: %s\n",
                        rank, strerror(errno));
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

int hydra_pmi_socket(void)
{
    const char *value = getenv("PMI_FD"); /* Hydra's, not Motor's: not in mpc_config.h */
    if (!value || !*value)
        return -1;
    int fd = atoi(value);
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) ? fd : -1;
}

void hydra_end_without_teardown(int pmi, int exit_status, int rank)
{
    fflush(stdout);
    fflush(stderr);
    if (pmi_exchange(pmi, "cmd=barrier_in\n", "cmd=barrier_out\n", 60000) == 0 &&
        pmi_exchange(pmi, "cmd=finalize\n", "cmd=finalize_ack\n", 60000) == 0)
        _exit(exit_status);
    fprintf(stderr,
            "motor: rank %d: the process manager did not answer at the end; "
            "finalizing MPI instead\n",
            rank);
}

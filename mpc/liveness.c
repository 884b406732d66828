/* liveness.c — ends a job spanning hosts when one host falls silent.
 *
 * Hydra notices a process that dies (its proxy sees the exit) but not a host cut off from the
 * network: every rank then waits forever for messages that cannot come, and mpiexec for a proxy
 * that cannot answer. So each rank of a job on several hosts runs a thread that sends a small
 * message every interval to the ranks that watch it, and watches the nearest rank on another host
 * in each direction of the ring of World's ranks. Ranks on the same host never watch each other:
 * a local process that dies is Hydra's to notice, and one merely starved of CPU is alive.
 *
 * Silence alone does not prove a host lost: on a busy machine a peer's heartbeat thread (or
 * MPI's lock under it) can be starved for seconds. So each rank also listens on a TCP port that
 * it never reads (the kernel completes a connection without the process running), and when a
 * watched peer has been silent for the timeout the watcher tries to connect to it, at every
 * address the peer has: a connection proves the host is up and the process alive, and the watch
 * goes on; only a peer that stays silent and cannot be reached is declared lost. The rank then
 * names it and kills its own process, without another MPI call (MPI may wait on the lost host
 * too). On the reachable side Hydra sees a process killed and ends the job; on the cut-off side
 * each rank sees its peers beyond the cut fall silent and unreachable, and ends, and so its
 * proxy ends. Where a peer could not open its port, its silence alone decides, as before. */
#include "liveness.h"

#include "mpc_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { NAME_SIZE = 64, NEIGHBOURS = 2, ADDRESSES = 8 };

/* Where a rank can be reached over TCP: its listening port (0: none) and its host's IPv4
 * addresses (network byte order), loopback left out. */
struct contact {
    uint32_t port, count;
    uint32_t address[ADDRESSES];
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* stop requested */
    int running, stop;
    pthread_t thread;
    MPI_Comm comm; /* a duplicate of World: heartbeats never match the program's receives */
    int rank, size;
    double timeout, interval; /* seconds */
    char *names;              /* size * NAME_SIZE host names */
    int *host;                /* size: the lowest World rank on each rank's host */
    struct contact *contacts; /* size */
    int listener;             /* the port this rank is reached at, or -1 */
    int spans;                /* World spans hosts: 1, 0, or -1 before the start */
} live = {PTHREAD_MUTEX_INITIALIZER,
          PTHREAD_COND_INITIALIZER,
          0,
          0,
          0,
          MPI_COMM_NULL,
          0,
          0,
          0,
          0,
          NULL,
          NULL,
          NULL,
          -1,
          -1};

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static __attribute__((noreturn)) void peer_lost(int peer, double silent)
{
    fprintf(stderr,
            "motor: rank %d on host %s: rank %d on host %s has been silent for %.1f s and cannot "
            "be reached (the host is down or cut off from the network); ending the job\n",
            live.rank, live.names + (size_t)live.rank * NAME_SIZE, peer,
            live.names + (size_t)peer * NAME_SIZE, silent);
    fflush(stdout);
    fflush(stderr);
    /* Killed by a signal, the process makes Hydra end the whole job at once; after a plain exit
     * status mpiexec would wait for the lost host's proxy, which cannot answer. */
    kill(getpid(), SIGKILL);
    _exit(MPC_EXIT_PEER_LOST); /* not reached */
}

/* Waits up to `seconds` for a stop request; returns 1 when asked to stop. */
static int wait_for_stop(double seconds)
{
    return mpc_wait_for_stop(&live.lock, &live.changed, &live.stop, seconds);
}

/* The nearest rank on another host than `rank`, going round the ring by `step` (+1 or -1). */
static int nearest_other_host(int rank, int step)
{
    for (int i = 1; i < live.size; i++) {
        int other = ((rank + step * i) % live.size + live.size) % live.size;
        if (live.host[other] != live.host[rank])
            return other;
    }
    return rank; /* one host: never, as the heartbeat runs only across hosts */
}

/* The peers `rank` watches: 1 or 2 ranks into `peers`. */
static int watched_by(int rank, int peers[NEIGHBOURS])
{
    peers[0] = nearest_other_host(rank, -1);
    peers[1] = nearest_other_host(rank, +1);
    return peers[0] == peers[1] ? 1 : NEIGHBOURS;
}

/* Lets the connections of peers that probed this rank go (the kernel made them; no one reads). */
static void drop_probes(void)
{
    int fd;
    while (live.listener >= 0 && (fd = accept4(live.listener, NULL, NULL, SOCK_CLOEXEC)) >= 0)
        close(fd);
}

static int is_own_address(uint32_t address)
{
    const struct contact *mine = &live.contacts[live.rank];
    for (uint32_t i = 0; i < mine->count && i < ADDRESSES; i++)
        if (mine->address[i] == address)
            return 1;
    return 0;
}

/* 1 when a TCP connection to `peer`'s port completes within `seconds` at one of its addresses
 * (that is not also this host's), 0 when none does, -1 when the peer has no port to try. */
static int reachable(int peer, double seconds)
{
    const struct contact *c = &live.contacts[peer];
    struct pollfd fds[ADDRESSES];
    int n = 0, reached = 0;
    for (uint32_t i = 0; i < c->count && i < ADDRESSES && c->port != 0; i++) {
        if (is_own_address(c->address[i]))
            continue; /* the same address here would reach this host, not the peer's */
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        struct sockaddr_in to = {0};
        to.sin_family = AF_INET;
        to.sin_port = htons((uint16_t)c->port);
        to.sin_addr.s_addr = c->address[i];
        if (connect(fd, (struct sockaddr *)&to, sizeof to) == 0) {
            reached = 1;
            close(fd);
            break;
        }
        if (errno != EINPROGRESS) {
            close(fd);
            continue;
        }
        fds[n].fd = fd;
        fds[n].events = POLLOUT;
        fds[n].revents = 0;
        n++;
    }
    if (n == 0 && !reached)
        return c->port == 0 ? -1 : 0;
    double until = now_seconds() + seconds;
    while (!reached && n > 0) {
        double left = until - now_seconds();
        /* a last look with no wait even when this thread ran late */
        int rc = poll(fds, (nfds_t)n, left > 0 ? (int)(left * 1000) + 1 : 0);
        if (rc < 0 && errno == EINTR)
            continue;
        for (int i = 0; rc > 0 && i < n; i++) {
            int error = 0;
            socklen_t length = sizeof error;
            if (fds[i].revents &&
                getsockopt(fds[i].fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0)
                reached = 1;
        }
        if (rc <= 0 || left <= 0)
            break;
        /* refused or unreachable addresses stay in the set and answer again at once: they
         * prove nothing, so the wait goes on for the others until the time is up */
        int pending = 0;
        for (int i = 0; i < n; i++) {
            if (fds[i].revents)
                close(fds[i].fd);
            else
                fds[pending++] = fds[i];
        }
        n = pending;
    }
    for (int i = 0; i < n; i++)
        close(fds[i].fd);
    return reached;
}

static void *watch(void *arg)
{
    (void)arg;
    int peers[NEIGHBOURS], count = watched_by(live.rank, peers);
    int *watchers = calloc((size_t)live.size, sizeof *watchers), nwatchers = 0;
    if (!watchers)
        return NULL; /* no watch rather than a false alarm */
    for (int r = 0; r < live.size; r++) {
        int theirs[NEIGHBOURS], n = watched_by(r, theirs);
        for (int i = 0; i < n && r != live.rank; i++)
            if (theirs[i] == live.rank) {
                watchers[nwatchers++] = r;
                break;
            }
    }
    MPI_Request recvs[NEIGHBOURS];
    static const int beat = 0; /* outlives a send that never completes */
    int beats[NEIGHBOURS];
    double heard[NEIGHBOURS];
    const double probe_wait = live.timeout / 4 < 1.0 ? live.timeout / 4 : 1.0;
    for (int i = 0; i < count; i++) {
        heard[i] = now_seconds();
        if (MPI_Irecv(&beats[i], 1, MPI_INT, peers[i], 0, live.comm, &recvs[i]) != MPI_SUCCESS) {
            free(watchers);
            return NULL;
        }
    }
    do {
        drop_probes();
        for (int i = 0; i < nwatchers; i++) {
            MPI_Request send;
            /* a beat to a lost host may never complete: the request is let go */
            if (MPI_Isend(&beat, 1, MPI_INT, watchers[i], 0, live.comm, &send) == MPI_SUCCESS)
                MPI_Request_free(&send);
        }
        double t = now_seconds();
        for (int i = 0; i < count; i++) {
            int arrived = 0;
            while (MPI_Test(&recvs[i], &arrived, MPI_STATUS_IGNORE) == MPI_SUCCESS && arrived) {
                heard[i] = t;
                if (MPI_Irecv(&beats[i], 1, MPI_INT, peers[i], 0, live.comm, &recvs[i]) !=
                    MPI_SUCCESS) {
                    free(watchers);
                    return NULL;
                }
            }
            /* silent: lost only if it cannot be reached either (a starved peer can) */
            if (t - heard[i] > live.timeout && reachable(peers[i], probe_wait) != 1)
                peer_lost(peers[i], now_seconds() - heard[i]);
        }
    } while (!wait_for_stop(live.interval));
    for (int i = 0; i < count; i++) {
        MPI_Cancel(&recvs[i]);
        MPI_Wait(&recvs[i], MPI_STATUS_IGNORE);
    }
    free(watchers);
    return NULL;
}

/* This rank's contact: a listening TCP port (any address, never read) and the host's IPv4
 * addresses. Without a port the peers rely on the heartbeat alone. */
static void open_contact(struct contact *mine)
{
    memset(mine, 0, sizeof *mine);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in at = {0};
    socklen_t length = sizeof at;
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_ANY);
    if (fd < 0 || bind(fd, (struct sockaddr *)&at, sizeof at) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&at, &length) != 0) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct ifaddrs *all = NULL;
    if (getifaddrs(&all) != 0) {
        close(fd);
        return;
    }
    for (struct ifaddrs *a = all; a && mine->count < ADDRESSES; a = a->ifa_next)
        if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET && (a->ifa_flags & IFF_UP) &&
            !(a->ifa_flags & IFF_LOOPBACK))
            mine->address[mine->count++] = ((struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr;
    freeifaddrs(all);
    live.listener = fd;
    mine->port = ntohs(at.sin_port);
}

/* 1 on every rank when World's ranks are on more than one host; `host` (World's size) gets the
 * lowest World rank of each rank's host. -1 on every rank when that is not known. */
static int spans_hosts(int **host)
{
    MPI_Comm local;
    int local_size = 0, world_size = 0, world_rank = 0, leader = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) !=
        MPI_SUCCESS)
        return -1;
    int rc = MPI_Comm_size(local, &local_size);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Allreduce(&world_rank, &leader, 1, MPI_INT, MPI_MIN, local);
    *host = rc == MPI_SUCCESS ? calloc((size_t)world_size, sizeof **host) : NULL;
    /* {spans, any rank failed} agreed by every rank before the gather */
    int facts[2] = {local_size < world_size, rc != MPI_SUCCESS || !*host};
    int agreed = MPI_Allreduce(MPI_IN_PLACE, facts, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (agreed == MPI_SUCCESS && !facts[1])
        agreed = MPI_Allgather(&leader, 1, MPI_INT, *host, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Comm_free(&local);
    if (agreed != MPI_SUCCESS || facts[1]) {
        free(*host);
        *host = NULL;
        return -1;
    }
    return facts[0];
}

int liveness_spans_hosts(void) { return live.spans; }

int liveness_start(int thread_level)
{
    double timeout = mpc_config_seconds(MPC_CONFIG_HEARTBEAT_TIMEOUT);
    live.spans = spans_hosts(&live.host); /* collective: every rank asks, whatever it decides */
    if (timeout == 0 || live.spans != 1 || thread_level != MPI_THREAD_MULTIPLE)
        return 0;
    int rc;
    if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, &live.rank)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(MPI_COMM_WORLD, &live.size)) != MPI_SUCCESS ||
        (rc = MPI_Comm_dup(MPI_COMM_WORLD, &live.comm)) != MPI_SUCCESS)
        return rc;
    MPI_Comm_set_errhandler(live.comm, MPI_ERRORS_RETURN);
    live.names = calloc((size_t)live.size, NAME_SIZE);
    live.contacts = calloc((size_t)live.size, sizeof *live.contacts);
    if (!live.names || !live.contacts)
        return MPI_ERR_NO_MEM;
    char mine[MPI_MAX_PROCESSOR_NAME] = {0};
    int length = 0;
    if ((rc = MPI_Get_processor_name(mine, &length)) != MPI_SUCCESS)
        return rc;
    mine[NAME_SIZE - 1] = '\0';
    if ((rc = MPI_Allgather(mine, NAME_SIZE, MPI_CHAR, live.names, NAME_SIZE, MPI_CHAR,
                            live.comm)) != MPI_SUCCESS)
        return rc;
    struct contact contact;
    open_contact(&contact);
    if ((rc = MPI_Allgather(&contact, (int)sizeof contact, MPI_BYTE, live.contacts,
                            (int)sizeof contact, MPI_BYTE, live.comm)) != MPI_SUCCESS)
        return rc;
    live.timeout = timeout;
    live.interval = timeout / 8;
    if (pthread_create(&live.thread, NULL, watch, NULL) != 0)
        return MPI_ERR_OTHER;
    live.running = 1;
    return MPI_SUCCESS;
}

void liveness_stop(void)
{
    if (!live.running)
        return;
    mpc_request_stop(&live.lock, &live.changed, &live.stop);
    pthread_join(live.thread, NULL);
    live.running = 0;
    if (live.listener >= 0)
        close(live.listener);
    live.listener = -1;
}

/* wait_policy.c — how blocking waits behave (MOTOR_WAIT; mpc_internal.h): the host's load that
 * `auto` decides from, the policy, and the backoff a yielding wait pauses with. */
#include "mpc_impl.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static mpc_wait_policy wait_policy = MPC_WAIT_SPIN;
static int host_ranks, host_cores; /* 0 until measured */

/* The ranks of World on this host, and the cores they may run on together: the union of their
 * affinity masks (ranks pinned to distinct cores have one core each and are not oversubscribed;
 * `taskset -c 0 mpiexec -n 3` gives all three the same core), at most the CPUs online. */
int wait_policy_measure(void)
{
    enum { WORDS = sizeof(cpu_set_t) / sizeof(unsigned long) };
    union {
        cpu_set_t set;
        unsigned long words[WORDS];
    } mine, all;
    CPU_ZERO(&mine.set);
    if (sched_getaffinity(0, sizeof mine.set, &mine.set) != 0) /* more CPUs than a cpu_set_t */
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

void wait_policy_choose(void)
{
    const char *setting = mpc_config_string(MPC_CONFIG_WAIT); /* "auto" when unset */
    int oversubscribed = host_cores > 0 && host_ranks > host_cores;
    if (strcmp(setting, "spin") == 0)
        wait_policy = MPC_WAIT_SPIN;
    else if (strcmp(setting, "yield") == 0)
        wait_policy = MPC_WAIT_YIELD;
    else {
        if (strcmp(setting, "auto") != 0)
            fprintf(stderr, "motor: %s='%s' is not auto, spin or yield; using auto\n",
                    mpc_config_name(MPC_CONFIG_WAIT), setting);
        wait_policy = oversubscribed ? MPC_WAIT_YIELD : MPC_WAIT_SPIN;
    }
}

mpc_wait_policy mpc_wait_mode(void) { return wait_policy; }

void mpc_host_load(int *ranks, int *cores)
{
    *ranks = host_ranks;
    *cores = host_cores;
}

/* The backoff's steps (mpc_internal.h). Measured with bench/jacobi.py at 3 and 4 ranks on 2
 * cores (a loaded machine, load average 11-16): every variant with naps — naps at once, after
 * 20 µs or after 100 µs of yields, capped at 20 µs, 100 µs or 1 ms — took 2-5x less time per
 * step than spinning and did not differ beyond the noise; yields alone were up to 2x slower than
 * naps. The 100 µs of yields keep a wait that ends soon off the timer's slack; the 100 µs cap
 * bounds what a message that finds its receiver napping waits. */
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

/* (Reductions stay MPI's blocking calls: a C# operator must run in the calling thread, and a
 * non-blocking one runs in whichever thread progresses.) */
int backoff_complete(int rc, MPI_Request *req, MPI_Status *status)
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

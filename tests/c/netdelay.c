/* netdelay — a link delay and loss for kernels without netem: holds every packet that iptables
 * queues to it (NFQUEUE) for a fixed time, then lets it go; drops a given share at random.
 *
 *   netdelay --queue N --delay-us D [--loss-percent P] [--pidfile FILE]
 *
 * Run in the network namespace whose packets it delays (scripts/hosts.sh does). With a fixed delay
 * packets leave in the order they came, so a first-in-first-out ring is the whole schedule. It
 * writes FILE once the queue is bound (so a script knows when packets are held) and runs until
 * killed. */
#include <arpa/inet.h> /* before the netfilter headers, which would pull linux/in.h first */

#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h> /* NF_ACCEPT, NF_DROP */

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { RING = 1 << 16 };

static struct {
    uint32_t id[RING];
    uint64_t due[RING];  /* CLOCK_MONOTONIC, ns */
    unsigned head, tail; /* head: next to release; tail: next free */
} held;

static uint64_t delay_ns;
static double loss;
static unsigned long passed_at_once, dropped;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int on_packet(struct nfq_q_handle *queue, struct nfgenmsg *message, struct nfq_data *packet,
                     void *data)
{
    (void)message;
    (void)data;
    struct nfqnl_msg_packet_hdr *header = nfq_get_msg_packet_hdr(packet);
    if (!header)
        return 0;
    uint32_t id = ntohl(header->packet_id);
    if (loss > 0 && drand48() * 100.0 < loss) {
        dropped++;
        return nfq_set_verdict(queue, id, NF_DROP, 0, NULL);
    }
    if (held.tail - held.head == RING) { /* full: let it go rather than stall the link */
        passed_at_once++;
        return nfq_set_verdict(queue, id, NF_ACCEPT, 0, NULL);
    }
    held.id[held.tail % RING] = id;
    held.due[held.tail % RING] = now_ns() + delay_ns;
    held.tail++;
    return 0;
}

static void release_due(struct nfq_q_handle *queue)
{
    uint64_t now = now_ns();
    while (held.head != held.tail && held.due[held.head % RING] <= now) {
        nfq_set_verdict(queue, held.id[held.head % RING], NF_ACCEPT, 0, NULL);
        held.head++;
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: netdelay --queue N --delay-us D [--loss-percent P] [--pidfile FILE]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int queue_number = -1;
    const char *pidfile = NULL;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--queue"))
            queue_number = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--delay-us"))
            delay_ns = (uint64_t)(strtod(argv[++i], NULL) * 1000.0);
        else if (!strcmp(argv[i], "--loss-percent"))
            loss = strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--pidfile"))
            pidfile = argv[++i];
        else
            usage();
    }
    if (queue_number < 0 || loss < 0 || loss > 100)
        usage();
    srand48((long)getpid() ^ (long)now_ns());

    struct nfq_handle *handle = nfq_open();
    if (!handle) {
        perror("netdelay: nfq_open");
        return 1;
    }
    struct nfq_q_handle *queue = nfq_create_queue(handle, (uint16_t)queue_number, on_packet, NULL);
    if (!queue) {
        perror("netdelay: nfq_create_queue");
        return 1;
    }
    /* only the packet's id is needed: no payload copied to user space */
    if (nfq_set_mode(queue, NFQNL_COPY_META, 0) < 0 || nfq_set_queue_maxlen(queue, RING) < 0) {
        perror("netdelay: configuring the queue");
        return 1;
    }
    /* should the kernel's queue fill, packets pass instead of being dropped */
    nfq_set_queue_flags(queue, NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_FAIL_OPEN);
    /* The ranks whose packets wait here busy-poll every core: at normal priority this program
     * would wake milliseconds late. A real-time priority lets it run the moment a packet is due. */
    struct sched_param priority = {.sched_priority = 10};
    if (sched_setscheduler(0, SCHED_FIFO, &priority) != 0)
        perror("netdelay: no real-time priority (delays will stretch under load)");
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* wake at the due time, not up to 50 µs later */
    int fd = nfq_fd(handle);
    if (pidfile) {
        FILE *f = fopen(pidfile, "w");
        if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0) {
            perror("netdelay: writing the pid file");
            return 1;
        }
    }
    char buffer[65536] __attribute__((aligned));
    for (;;) {
        struct timespec wait = {1, 0};
        if (held.head != held.tail) {
            uint64_t now = now_ns(), due = held.due[held.head % RING];
            uint64_t ns = due > now ? due - now : 0;
            wait.tv_sec = (time_t)(ns / 1000000000u);
            wait.tv_nsec = (long)(ns % 1000000000u);
        }
        struct pollfd readable = {fd, POLLIN, 0};
        int ready = ppoll(&readable, 1, &wait, NULL);
        if (ready < 0 && errno != EINTR) {
            perror("netdelay: ppoll");
            return 1;
        }
        if (ready > 0) {
            ssize_t n = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
            if (n > 0)
                nfq_handle_packet(handle, buffer, (int)n);
            else if (n < 0 && errno == ENOBUFS)
                fprintf(stderr, "netdelay: the kernel dropped queue messages (ENOBUFS)\n");
        }
        release_due(queue);
    }
}

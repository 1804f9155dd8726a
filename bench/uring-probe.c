// uring-probe.c: the floor of bench/run (sender CPU per 200-byte write to 1,000 loopback TCP sockets, round-robin,
// a poll reader draining them) measured two ways: one writev per write, or batches of B IORING_OP_SEND submitted
// with one io_uring_enter. Not part of bench/run: it answers whether io_uring would lower the floor (bench/HISTORY.md,
// session 25). Needs liburing-dev:
//   gcc -O2 -o /tmp/uring-probe bench/uring-probe.c -luring -lpthread
//   nice -n -10 /tmp/uring-probe writev 2; nice -n -10 /tmp/uring-probe uring 2 64
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#define N 1000
static int senders[N], receivers[N];
static atomic_int phase;

static double now(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static void *drain(void *arg) {
    (void)arg;
    struct pollfd p[N];
    for (int i = 0; i < N; i++) { p[i].fd = receivers[i]; p[i].events = POLLIN; }
    static char buf[65536];
    while (atomic_load(&phase) == 0) {
        if (poll(p, N, 50) <= 0) continue;
        for (int i = 0; i < N; i++) if (p[i].revents) while (read(p[i].fd, buf, sizeof buf) > 0) {}
    }
    atomic_store(&phase, 2);
    return NULL;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "writev";
    double seconds = argc > 2 ? atof(argv[2]) : 2;
    int batch = argc > 3 ? atoi(argv[3]) : 64;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = inet_addr("127.0.0.1")};
    socklen_t len = sizeof a;
    if (bind(l, (void *)&a, len) || listen(l, 1024) || getsockname(l, (void *)&a, &len)) { perror("listen"); return 1; }
    for (int i = 0; i < N; i++) {
        senders[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(senders[i], (void *)&a, len)) { perror("connect"); return 1; }
        int on = 1; setsockopt(senders[i], IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        receivers[i] = accept(l, NULL, NULL);
        fcntl(receivers[i], F_SETFL, fcntl(receivers[i], F_GETFL) | O_NONBLOCK);
    }
    pthread_t reader; pthread_create(&reader, NULL, drain, NULL);
    static char frame[200]; memset(frame, 'a', sizeof frame);
    long writes = 0;
    double end = now(CLOCK_MONOTONIC) + seconds, cpu0 = now(CLOCK_THREAD_CPUTIME_ID), wall0 = now(CLOCK_MONOTONIC);
    if (strcmp(mode, "writev") == 0) {
        struct iovec v = {frame, sizeof frame};
        for (int i = 0;; i = (i + 1) % N) {
            if (i == 0 && now(CLOCK_MONOTONIC) >= end) break;
            if (writev(senders[i], &v, 1) == (ssize_t)sizeof frame) writes++;
        }
    } else {
        struct io_uring ring;
        if (io_uring_queue_init(batch * 2, &ring, 0)) { perror("io_uring_queue_init"); return 1; }
        int i = 0;
        while (now(CLOCK_MONOTONIC) < end) {
            for (int k = 0; k < batch; k++) {
                struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
                io_uring_prep_send(sqe, senders[i], frame, sizeof frame, MSG_DONTWAIT);
                i = (i + 1) % N;
            }
            io_uring_submit_and_wait(&ring, batch);
            struct io_uring_cqe *cqe; unsigned head, seen = 0;
            io_uring_for_each_cqe(&ring, head, cqe) { if (cqe->res == (int)sizeof frame) writes++; seen++; }
            io_uring_cq_advance(&ring, seen);
        }
    }
    double cpu = now(CLOCK_THREAD_CPUTIME_ID) - cpu0, wall = now(CLOCK_MONOTONIC) - wall0;
    atomic_store(&phase, 1);
    while (atomic_load(&phase) != 2) usleep(1000);
    printf("%s batch=%d writes=%ld wall=%.2fs sender_cpu=%.3fs us_per_write=%.3f\n", mode, strcmp(mode, "writev") ? batch : 1,
           writes, wall, cpu, cpu / writes * 1e6);
    return 0;
}

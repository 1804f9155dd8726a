// paced-floor-probe.c: what one delivery costs the sender when the receiver sleeps between events, as the load
// generator's threads do, against bench/run's floor (a poll reader that always has data and is rarely woken).
// The same 200-byte writev to 1,000 loopback TCP sockets; the reader is one thread in epoll_wait over all of them
// (as parlor-bench's worker is); the sender writes bursts of B frames to B consecutive sockets (one event to a room of
// B) at R bursts per second, sleeping between bursts. Sender CPU (CLOCK_THREAD_CPUTIME_ID) is read around each
// burst only, so the pacing sleeps are not counted. Not part of bench/run: it answers how much of the server's
// writev time above the floor is the receiver's wake-up (bench/README.md, "Why the numbers are").
//   gcc -O2 -o /tmp/paced-floor-probe bench/paced-floor-probe.c -lpthread
//   nice -n -10 /tmp/paced-floor-probe 2 10 2000     # seconds, burst size, bursts per second; 0 bursts/s: no pacing
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define N 1000
static int senders[N], receivers[N];
static atomic_int done;
static atomic_long wakeups;

static double seconds_of(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *drain(void *arg) {
    (void)arg;
    int ep = epoll_create1(0);
    for (int i = 0; i < N; i++) {
        struct epoll_event e = {.events = EPOLLIN, .data.fd = receivers[i]};
        epoll_ctl(ep, EPOLL_CTL_ADD, receivers[i], &e);
    }
    static char buf[65536];
    struct epoll_event ready[256];
    while (!atomic_load(&done)) {
        int n = epoll_wait(ep, ready, 256, 50);
        if (n > 0) atomic_fetch_add(&wakeups, 1);
        for (int i = 0; i < n; i++) while (read(ready[i].data.fd, buf, sizeof buf) > 0) {}
    }
    return NULL;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 2;
    int burst = argc > 2 ? atoi(argv[2]) : 10;
    double rate = argc > 3 ? atof(argv[3]) : 2000;
    if (burst < 1 || burst > N) { fprintf(stderr, "burst must be 1..%d\n", N); return 1; }
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = inet_addr("127.0.0.1")};
    socklen_t length = sizeof address;
    if (bind(listener, (void *)&address, length) || listen(listener, 1024) || getsockname(listener, (void *)&address, &length)) {
        perror("listen");
        return 1;
    }
    for (int i = 0; i < N; i++) {
        senders[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(senders[i], (void *)&address, length)) { perror("connect"); return 1; }
        int on = 1;
        setsockopt(senders[i], IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        receivers[i] = accept(listener, NULL, NULL);
        fcntl(receivers[i], F_SETFL, fcntl(receivers[i], F_GETFL) | O_NONBLOCK);
    }
    pthread_t reader;
    pthread_create(&reader, NULL, drain, NULL);
    static char frame[200];
    memset(frame, 'a', sizeof frame);
    struct iovec vector = {.iov_base = frame, .iov_len = sizeof frame};

    long writes = 0;
    double cpu = 0;
    int next = 0;
    double start = seconds_of(CLOCK_MONOTONIC), due = start;
    while (seconds_of(CLOCK_MONOTONIC) - start < seconds) {
        if (rate > 0) {
            due += 1 / rate;
            double wait = due - seconds_of(CLOCK_MONOTONIC);
            if (wait > 0) {
                struct timespec pause = {.tv_sec = (time_t)wait, .tv_nsec = (long)((wait - (time_t)wait) * 1e9)};
                nanosleep(&pause, NULL);
            }
        }
        double before = seconds_of(CLOCK_THREAD_CPUTIME_ID);
        for (int i = 0; i < burst; i++) {
            if (writev(senders[next], &vector, 1) != (ssize_t)sizeof frame) { perror("writev"); return 1; }
            next = (next + 1) % N;
        }
        cpu += seconds_of(CLOCK_THREAD_CPUTIME_ID) - before;
        writes += burst;
    }
    atomic_store(&done, 1);
    pthread_join(reader, NULL);
    printf("paced floor: %.2f us of sender CPU per writev of %zu bytes (%ld writes in bursts of %d at %.0f bursts/s; "
           "the reader woke %ld times)\n", cpu / writes * 1e6, sizeof frame, writes, burst, rate, atomic_load(&wakeups));
    return 0;
}

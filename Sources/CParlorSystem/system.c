#define _GNU_SOURCE
#include "CParlorSystem.h"
#include <malloc.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>

int parlor_accept4(int fd, struct sockaddr *addr, socklen_t *len) {
    return accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

void parlor_ignore_sigpipe(void) { signal(SIGPIPE, SIG_IGN); }

// Raises the soft RLIMIT_NOFILE to the hard limit; returns the new soft limit, or -1.
int parlor_raise_nofile_limit(void) {
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return -1;
    lim.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) return -1;
    return (int)lim.rlim_cur;
}

// glibc raises its mmap and trim thresholds as large blocks are freed, and then keeps freed heap for good: a burst
// of big buffers (a flood of queued responses) would stay resident after the connections close. Fixed thresholds
// keep large blocks in their own mappings and give freed heap tops back.
void parlor_tune_malloc(void) {
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
}

// Bytes of a socket's output the peer has not acknowledged yet (SIOCOUTQ), or -1.
int parlor_unacknowledged_output(int fd) {
    int bytes = 0;
    return ioctl(fd, SIOCOUTQ, &bytes) == 0 ? bytes : -1;
}

#ifndef C_PARLOR_SYSTEM_H
#define C_PARLOR_SYSTEM_H

// Linux facilities that Glibc's Swift overlay does not expose: epoll, eventfd, timerfd, accept4.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdint.h>
#include "CParlorSystemUDP.h"

// epoll_event is packed on x86_64; Swift cannot read its union reliably, so these helpers do.
static inline struct epoll_event parlor_epoll_event(uint32_t events, uint64_t data) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = data;
    return ev;
}
static inline uint64_t parlor_epoll_event_data(const struct epoll_event *ev) { return ev->data.u64; }
static inline uint32_t parlor_epoll_event_events(const struct epoll_event *ev) { return ev->events; }

int parlor_accept4(int fd, struct sockaddr *addr, socklen_t *len);
void parlor_ignore_sigpipe(void);
int parlor_raise_nofile_limit(void);
void parlor_release_free_memory(void);
// mallopt(M_ARENA_MAX, count): 1 when glibc took it.
int parlor_limit_malloc_arenas(int count);
// Returns free heap memory to the system (glibc malloc_trim(0)); 1 if some was released.
int parlor_malloc_trim(void);

// Names the calling thread for `top -H`, perf and /proc (at most 15 bytes are kept); 0 on success.
int parlor_name_current_thread(const char *name);
int parlor_unacknowledged_output(int fd);

#endif

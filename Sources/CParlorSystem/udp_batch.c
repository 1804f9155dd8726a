#define _GNU_SOURCE
#include "CParlorSystemUDP.h"
#include <errno.h>
#include <string.h>
#include <linux/filter.h>

// One batch at most this large: the callers' buffers are sized to it (and the arrays below live on the stack).
#define PARLOR_UDP_MAX_BATCH 64

int parlor_udp_receive_batch(int fd, uint8_t *buffer, size_t slot_size, unsigned count,
                             uint32_t *lengths, uint8_t *truncated, struct sockaddr_storage *sources) {
    if (count > PARLOR_UDP_MAX_BATCH) count = PARLOR_UDP_MAX_BATCH;
    struct mmsghdr messages[PARLOR_UDP_MAX_BATCH];
    struct iovec vectors[PARLOR_UDP_MAX_BATCH];
    memset(messages, 0, sizeof(struct mmsghdr) * count);
    for (unsigned i = 0; i < count; i++) {
        vectors[i].iov_base = buffer + (size_t)i * slot_size;
        vectors[i].iov_len = slot_size;
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
        messages[i].msg_hdr.msg_name = &sources[i];
        messages[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_storage);
    }
    int received;
    do {
        received = recvmmsg(fd, messages, count, MSG_DONTWAIT, NULL);
    } while (received < 0 && errno == EINTR);
    if (received < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
    for (int i = 0; i < received; i++) {
        lengths[i] = messages[i].msg_len;
        truncated[i] = (messages[i].msg_hdr.msg_flags & MSG_TRUNC) ? 1 : 0;
    }
    return received;
}

int parlor_udp_send_batch(int fd, const uint8_t *buffer, const uint32_t *offsets, const uint32_t *lengths,
                          const struct sockaddr_storage *destinations, const socklen_t *destination_lengths, unsigned count) {
    if (count > PARLOR_UDP_MAX_BATCH) count = PARLOR_UDP_MAX_BATCH;
    struct mmsghdr messages[PARLOR_UDP_MAX_BATCH];
    struct iovec vectors[PARLOR_UDP_MAX_BATCH];
    memset(messages, 0, sizeof(struct mmsghdr) * count);
    for (unsigned i = 0; i < count; i++) {
        vectors[i].iov_base = (void *)(buffer + offsets[i]);
        vectors[i].iov_len = lengths[i];
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
        messages[i].msg_hdr.msg_name = (void *)&destinations[i];
        messages[i].msg_hdr.msg_namelen = destination_lengths[i];
    }
    int sent;
    do {
        sent = sendmmsg(fd, messages, count, MSG_DONTWAIT);
    } while (sent < 0 && errno == EINTR);
    return sent;
}

int parlor_udp_reuse_port(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on);
}

int parlor_udp_steer_to_first(int fd) {
    struct sock_filter code[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
    struct sock_fprog program = { .len = 1, .filter = code };
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &program, sizeof program);
}

#ifndef C_PARLOR_SYSTEM_UDP_H
#define C_PARLOR_SYSTEM_UDP_H

// Batched UDP for the media port: recvmmsg/sendmmsg, which Glibc's Swift overlay does not expose.
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

// Receives up to `count` datagrams without blocking. Datagram i goes to buffer + i * slot_size (at most slot_size
// bytes; longer ones are cut and flagged in truncated[i]), its length to lengths[i], its source to sources[i].
// Returns how many arrived (0 if none were waiting), or -1 with errno.
int parlor_udp_receive_batch(int fd, uint8_t *buffer, size_t slot_size, unsigned count,
                             uint32_t *lengths, uint8_t *truncated, struct sockaddr_storage *sources);

// Sends `count` datagrams without blocking: datagram i is lengths[i] bytes at buffer + offsets[i], to
// destinations[i] (destination_lengths[i] bytes of address). Returns how many the kernel took (it may be fewer
// when the socket buffer fills), or -1 with errno if not even the first was.
int parlor_udp_send_batch(int fd, const uint8_t *buffer, const uint32_t *offsets, const uint32_t *lengths,
                          const struct sockaddr_storage *destinations, const socklen_t *destination_lengths, unsigned count);

// SO_REUSEPORT on a socket not yet bound, so the media workers' send sockets can bind the announced port too.
// Returns 0, or -1 with errno.
int parlor_udp_reuse_port(int fd);

// Attaches to the socket's SO_REUSEPORT group a classic BPF program that steers every datagram to the group's first
// socket (index 0: the first one bound), so the kernel never hashes a datagram to a send-only socket that nobody
// reads. Returns 0, or -1 with errno.
int parlor_udp_steer_to_first(int fd);

#endif

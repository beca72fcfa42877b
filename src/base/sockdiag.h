/* sockdiag.h: the unix and TCP sockets of a network namespace, as the kernel's sock_diag netlink interface
 * (NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY) lists them: every socket of every type and state, with
 * its name's exact bytes, the socket file it is bound to (device and inode), its peer's inode, the
 * user that made it, what waits in its receive queue and, for a listener, the connecting sockets of
 * the connections it has not accepted yet.
 * Unlike /proc/net/unix, nothing here is text a socket's owner can shape: a name holding a newline
 * is one name. Internal to the library. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KB_SOCKDIAG_NAME_MAX 108       /* sizeof sun_path */
#define KB_SOCKDIAG_SOCKETS_MAX 200000 /* sockets listed from one namespace */
#define KB_SOCKDIAG_PENDING_MAX 16     /* a listener's waiting connections kept by inode (all counted) */

typedef struct kb_sockdiag_unix {
        uint32_t inode;                            /* the socket's inode ("socket:[N]" in a descriptor table) */
        uint32_t peer;                             /* the connected peer's inode; 0: none, or the peer is closed */
        uint8_t type;                              /* SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET */
        uint8_t state;                             /* TCP_LISTEN, TCP_ESTABLISHED, TCP_CLOSE (unconnected) ... */
        uint8_t name_len;                          /* 0: not bound */
        char name[KB_SOCKDIAG_NAME_MAX];           /* as bound: name[0] == '\0' for an abstract name; a
                                                    * pathname's terminating NUL is not counted */
        bool has_file;                             /* a pathname socket's file (an accepted socket shares its
                                                    * listener's) */
        dev_t file_dev;                            /* in stat(2)'s encoding */
        uint32_t file_ino;                         /* the file's inode, cut to 32 bits by the kernel */
        bool has_uid;                              /* the kernel said whose it is (Linux 5.3 and later) */
        uint32_t uid;                              /* the user that made it, as the user namespace of whoever
                                                    * made the sock_diag socket sees it */
        bool has_rqueue;                           /* the kernel said what waits in its receive queue */
        uint32_t rqueue;                           /* a listener: connections not accepted yet; a stream or
                                                    * seqpacket socket: the bytes queued; a datagram socket: the
                                                    * first message's bytes. A message of no bytes (which may
                                                    * carry descriptors) counts for nothing here. */
        uint32_t n_pending;                        /* a listener: connections not accepted yet, as listed */
        uint32_t pending[KB_SOCKDIAG_PENDING_MAX]; /* the first of them: each one's connecting
                                                    * socket (0: it has closed) */
} kb_sockdiag_unix;

/* A NETLINK_SOCK_DIAG socket (O_CLOEXEC). It answers for the network namespace of the process that
 * made it, wherever it is used later. Returns the descriptor, or -errno. */
int kb_sockdiag_open(void);

/* Every unix socket of the network namespace fd answers for (fd: kb_sockdiag_open's, made here or
 * in another namespace; -1: a new one in the caller's namespace). *ret is malloc'd (NULL when there
 * are none) and written only on success.
 * Returns 0, -E2BIG past KB_SOCKDIAG_SOCKETS_MAX sockets, -EPROTO for a reply kbound cannot read,
 * -EAGAIN when the kernel said the table changed during every try, -ENOMEM, or the error the
 * kernel answered with (-errno). Never a partial list. After an error, fd may still hold the rest of
 * the abandoned dump: close it. */
int kb_sockdiag_unix_list(int fd, kb_sockdiag_unix **ret, size_t *ret_n);

/* The entry of list (sorted by inode with kb_sockdiag_sort) for inode, or NULL. */
const kb_sockdiag_unix *kb_sockdiag_find(const kb_sockdiag_unix *list, size_t n, uint32_t inode);

/* Sorts list by inode, for kb_sockdiag_find. kb_sockdiag_unix_list returns it sorted. */
void kb_sockdiag_sort(kb_sockdiag_unix *list, size_t n);

/* True for a pathname socket (bound to a name that is not abstract). */
bool kb_sockdiag_is_path(const kb_sockdiag_unix *u);

/* A TCP socket (IPv4 or IPv6) of a network namespace, as inet_diag lists it. */
typedef struct kb_sockdiag_tcp {
        uint32_t inode; /* "socket:[N]" in a descriptor table; 0: held by no file (a connection in
                         * its listener's queue, or one closing: TIME_WAIT, ...) */
        uint32_t uid;   /* the user that made it */
        uint8_t family; /* AF_INET, AF_INET6 */
        uint8_t state;  /* TCP_ESTABLISHED, TCP_LISTEN, ... (netinet/tcp.h's numbering) */
        uint16_t local_port, remote_port;
        uint8_t local[16]; /* network byte order: 4 bytes for AF_INET, 16 for AF_INET6 */
        uint8_t remote[16];
} kb_sockdiag_tcp;

/* Every TCP socket, IPv4 and IPv6, in every state, of the network namespace fd answers for (as
 * kb_sockdiag_unix_list: -1 makes one in the caller's namespace; both families from one try of
 * each, taken again when the kernel says either changed). *ret is malloc'd (NULL when there are
 * none), unsorted. Returns 0 or -errno as kb_sockdiag_unix_list. */
int kb_sockdiag_tcp_list(int fd, kb_sockdiag_tcp **ret, size_t *ret_n);

/* The other end of connection t in list: the socket of the same family whose local address and
 * port are t's remote ones and whose remote ones are t's local ones (on one host's loopback both
 * ends are in the same namespace's table). NULL when the table has none. */
const kb_sockdiag_tcp *kb_sockdiag_tcp_peer(const kb_sockdiag_tcp *list, size_t n, const kb_sockdiag_tcp *t);

/* True when t's local (remote: its remote) address is a loopback one (127.0.0.0/8, ::1). */
bool kb_sockdiag_tcp_loopback(const kb_sockdiag_tcp *t, bool remote);

/* "127.0.0.1:9001" or "[::1]:9001": t's local (remote: its remote) address and port. */
void kb_sockdiag_tcp_address(const kb_sockdiag_tcp *t, bool remote, char *buf, size_t size);

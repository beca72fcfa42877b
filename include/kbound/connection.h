/* connection.h: Jupyter connection files: generate (tcp or ipc), write 0600, read, endpoints. */
#pragma once

#include <stddef.h>
#include "kbound/common.h"

typedef enum kb_channel {
        KB_CHANNEL_SHELL,
        KB_CHANNEL_IOPUB,
        KB_CHANNEL_STDIN,
        KB_CHANNEL_CONTROL,
        KB_CHANNEL_HB,
        _KB_CHANNEL_MAX,
} kb_channel;

/* "shell", "iopub", "stdin", "control", "hb". */
KB_EXPORT const char *kb_channel_name(kb_channel ch);

typedef enum kb_transport {
        KB_TRANSPORT_TCP,
        KB_TRANSPORT_IPC,
} kb_transport;

#define KB_CONNECTION_MAX_BYTES (64 * 1024)
/* sizeof(((struct sockaddr_un *) 0)->sun_path): an ipc endpoint path must be shorter. */
#define KB_SUN_PATH_MAX 108

typedef struct kb_connection {
        kb_transport transport;
        char *ip;                      /* tcp: an address; ipc: the socket path prefix */
        int ports[_KB_CHANNEL_MAX];    /* indexed by kb_channel */
        char *key;                     /* NUL-terminated; its bytes are the HMAC key ("" = unsigned) */
        char *signature_scheme;        /* "hmac-sha256" is the only one accepted */
        char *kernel_name;             /* may be NULL */
        int held_fds[_KB_CHANNEL_MAX]; /* tcp: bound sockets keeping the ports ours; -1 otherwise */
} kb_connection;

/* Generates a tcp connection on ip (e.g. "127.0.0.1") with a fresh 256-bit random key. Each port
 * comes from binding a socket to port 0; the sockets stay open (held_fds) so no other process can
 * take the ports until kb_connection_release_ports() is called right before the kernel starts.
 * Returns 0, -EINVAL (ip is not an IPv4 literal), -ENOMEM, or -errno from socket/bind. */
KB_EXPORT int kb_connection_new_tcp(const char *ip, kb_connection **ret);

/* Generates an ipc connection whose endpoints are ipc://{path_prefix}-{port} with ports 1..5 and a
 * fresh random key. Returns -ENAMETOOLONG if "{path_prefix}-N" would not fit in sun_path. */
KB_EXPORT int kb_connection_new_ipc(const char *path_prefix, kb_connection **ret);

/* Closes the sockets holding tcp ports. Idempotent; a no-op for ipc. */
KB_EXPORT void kb_connection_release_ports(kb_connection *c);

/* Writes the ZeroMQ endpoint for ch into buf: "tcp://ip:port" or "ipc://prefix-port". If
 * ip_override is not NULL it replaces c->ip (the host path of a socket the kernel created under
 * another path inside the sandbox). Returns 0, or -ENAMETOOLONG if it does not fit in size (or, for
 * ipc, in sun_path). */
KB_EXPORT int kb_connection_endpoint(const kb_connection *c, kb_channel ch, const char *ip_override, char *buf,
                                     size_t size);

/* Writes c as a connection file at path, created with O_EXCL|O_NOFOLLOW and mode 0600; refuses a
 * parent directory that group or others may write or enter (must be 0700-like). ip_override as in
 * kb_connection_endpoint. Returns 0, -EEXIST, -EPERM (unsafe directory), or -errno. */
KB_EXPORT int kb_connection_write(const kb_connection *c, const char *ip_override, const char *path);

/* Parses connection-file JSON (untrusted). Requires transport "tcp" or "ipc", ip, the five ports
 * (integers in 1..65535), key (string), signature_scheme "hmac-sha256" (missing means that).
 * Returns 0, -EPROTO (malformed or a field wrong), -EMSGSIZE (over KB_CONNECTION_MAX_BYTES),
 * -ENOTSUP (another signature scheme or transport), -ENOMEM. */
KB_EXPORT int kb_connection_parse(const char *text, size_t len, kb_connection **ret);

/* Reads and parses the file at path. Returns kb_connection_parse's errors or -errno from open/read. */
KB_EXPORT int kb_connection_read(const char *path, kb_connection **ret);

/* Frees c, closing held ports; sets *cp to NULL. Accepts NULL. */
KB_EXPORT void kb_connection_destroy(kb_connection **cp);

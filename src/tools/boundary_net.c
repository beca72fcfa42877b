/* boundary_net.c: kbound-probe's network attempts: what the sandbox's network namespace shows, and
 * whether kbound's host canaries are reachable. Only 127.0.0.1 and abstract unix names the
 * parameters give are ever contacted; nothing is sent, each connection is closed at once, and every
 * connect has a deadline (timeout_ms). */
#include "boundary_probe.h"
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* A /proc table's lines from skip on (probe_read_lines) and a new array for what is made of them;
 * 0, or -errno and nothing to free. */
static int read_table(const char *path, size_t skip, json_object **ret_lines, json_object **ret_out) {
        json_object *lines = probe_read_lines(path, skip), *out = json_object_new_array();
        if (!lines || !out) {
                int e = lines ? ENOMEM : errno;
                json_object_put(lines);
                json_object_put(out);
                return -e;
        }
        *ret_lines = lines;
        *ret_out = out;
        return 0;
}

int probe_interfaces(probe_ctx *c, json_object **ret, char *why, size_t n) {
        json_object *lines = NULL, *out = NULL;
        int r = read_table("/proc/net/dev", 2, &lines, &out);
        if (r < 0)
                return r;
        for (size_t i = 0; i < json_object_array_length(lines); i++) {
                const char *line = json_object_get_string(json_object_array_get_idx(lines, i));
                const char *colon = strchr(line, ':');
                if (!colon)
                        continue;
                const char *start = line + strspn(line, " \t");
                const char *end = colon;
                while (end > start && strchr(" \t", end[-1]))
                        end--;
                json_object_array_add(out, json_object_new_string_len(start, (int) (end - start)));
        }
        json_object_put(lines);
        *ret = out;
        return 0;
}

int probe_routes_v4(probe_ctx *c, json_object **ret, char *why, size_t n) {
        *ret = probe_read_lines("/proc/net/route", 1);
        return *ret ? 0 : -errno;
}

int probe_routes_v6(probe_ctx *c, json_object **ret, char *why, size_t n) {
        *ret = probe_read_lines("/proc/net/ipv6_route", 0);
        return *ret ? 0 : -errno;
}

/* The connect deadline: timeout_ms, 1000 when missing, at least 1 ms. */
static int timeout_ms(const probe_ctx *c) {
        double ms = probe_param_number(c, "timeout_ms", 1000);
        return ms < 1 ? 1 : ms > 600000 ? 600000 : (int) ms;
}

/* Connects a fresh stream socket of family to addr within timeout ms and closes it at once.
 * Returns 0 when connected, else -errno (-ETIMEDOUT when the deadline passed). Making the socket
 * is part of the attempt: a seccomp filter refuses IP sockets outright (EAFNOSUPPORT), which is a
 * failed attempt, not a failed probe. */
static int attempt_connect(int family, const struct sockaddr *addr, socklen_t len, int timeout) {
        int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        int r = connect(fd, addr, len) == 0 ? 0 : -errno;
        if (r == -EINPROGRESS) {
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                int got;
                do
                        got = poll(&p, 1, timeout);
                while (got < 0 && errno == EINTR);
                int err = 0;
                socklen_t err_len = sizeof err;
                if (got == 0)
                        r = -ETIMEDOUT;
                else if (got < 0)
                        r = -errno;
                else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) < 0)
                        r = -errno;
                else
                        r = -err;
        }
        close(fd);
        return r;
}

/* A port as Python's int() reads a JSON value: an integer, or a string of one; -1 otherwise. */
static long port_of(json_object *v) {
        if (json_object_is_type(v, json_type_int))
                return json_object_get_int64(v) >= 0 && json_object_get_int64(v) <= 65535 ? json_object_get_int(v) : -1;
        if (!json_object_is_type(v, json_type_string) && !json_object_is_type(v, json_type_double))
                return -1;
        const char *s = json_object_get_string(v);
        char *end = NULL;
        errno = 0;
        long p = strtol(s, &end, 10);
        return errno || end == s || *end || p < 0 || p > 65535 ? -1 : p;
}

static int tcp_one(probe_ctx *c, json_object *item, json_object *out, char *why, size_t n) {
        long port = port_of(item);
        if (port < 0) {
                snprintf(why, n, "invalid port: %.40s", json_object_to_json_string(item));
                return -EINVAL;
        }
        /* 127.0.0.1 and nothing else: the canary listens there, and no other host is contacted. */
        struct sockaddr_in a = {
                .sin_family = AF_INET, .sin_port = htons((uint16_t) port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int e = attempt_connect(AF_INET, (const struct sockaddr *) &a, sizeof a, timeout_ms(c));
        json_object *o = json_object_new_object();
        if (kb_fact_set_int(o, FACT_PROBE_TCP_PORT, port) < 0 ||
            kb_fact_set_bool(o, FACT_PROBE_TCP_CONNECTED, e == 0) < 0 ||
            probe_set_errno(o, FACT_PROBE_TCP_ERROR, -e) < 0 || json_object_array_add(out, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        return 0;
}

int probe_tcp(probe_ctx *c, json_object **ret, char *why, size_t n) {
        return probe_each(c, "tcp_ports", false, tcp_one, ret, why, n);
}

static int abstract_one(probe_ctx *c, json_object *item, json_object *out, char *why, size_t n) {
        const char *name = json_object_get_string(item);
        size_t len = strlen(name);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        int e = -ENAMETOOLONG;
        if (len + 1 <= sizeof a.sun_path) {
                /* "\0" + name, of exactly that length: the abstract name, no trailing NULs */
                memcpy(a.sun_path + 1, name, len);
                e = attempt_connect(AF_UNIX, (const struct sockaddr *) &a,
                                    (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + len), timeout_ms(c));
        }
        json_object *o = json_object_new_object();
        if (probe_set_str(o, FACT_PROBE_ABSTRACT_NAME, name) < 0 ||
            kb_fact_set_bool(o, FACT_PROBE_ABSTRACT_TESTED, true) < 0 ||
            kb_fact_set_bool(o, FACT_PROBE_ABSTRACT_CONNECTED, e == 0) < 0 ||
            probe_set_errno(o, FACT_PROBE_ABSTRACT_ERROR, -e) < 0 || json_object_array_add(out, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        return 0;
}

int probe_abstract(probe_ctx *c, json_object **ret, char *why, size_t n) {
        return probe_each(c, "abstract_sockets", true, abstract_one, ret, why, n);
}

/* The requested names that /proc/net/unix lists as "@name" (its eighth field on, joined by a
 * space: the same network namespace as this program's). */
int probe_unix_visible(probe_ctx *c, json_object **ret, char *why, size_t n) {
        json_object *names = NULL;
        int r = probe_param_list(c, "abstract_sockets", true, &names, why, n);
        if (r < 0)
                return r;
        json_object *lines = NULL, *out = NULL;
        if ((r = read_table("/proc/net/unix", 1, &lines, &out)) < 0)
                return r;
        for (size_t k = 0; names && k < json_object_array_length(names); k++) {
                const char *name = json_object_get_string(json_object_array_get_idx(names, k));
                bool seen = false;
                for (size_t i = 0; !seen && i < json_object_array_length(lines); i++) {
                        const char *p = json_object_get_string(json_object_array_get_idx(lines, i));
                        for (int field = 0; field < 7 && *p; field++) {
                                p += strspn(p, " \t");
                                p += strcspn(p, " \t");
                        }
                        p += strspn(p, " \t");
                        seen = p[0] == '@' && strcmp(p + 1, name) == 0;
                }
                if (seen)
                        json_object_array_add(out, probe_str(name));
        }
        json_object_put(lines);
        *ret = out;
        return 0;
}

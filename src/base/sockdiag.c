/* sockdiag.c: the unix and TCP sockets of a network namespace from NETLINK_SOCK_DIAG (sockdiag.h). */
#include "base/sockdiag.h"
#include "base/cleanup.h"
#include "kbound/common.h"
#include <errno.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <linux/inet_diag.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <unistd.h>

#define RECV_BUF (64 * 1024) /* the kernel fills at most a page or so per message batch */
#define DUMP_TRIES 3         /* a dump the kernel marks interrupted is taken again */
#define RECV_TIMEOUT_S 5     /* a dump is answered at once; this only bounds a broken kernel */

int kb_sockdiag_open(void) {
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
        if (fd < 0)
                return -errno;
        struct timeval tv = {.tv_sec = RECV_TIMEOUT_S};
        if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0) {
                int e = errno;
                close(fd);
                return -e;
        }
        return fd;
}

bool kb_sockdiag_is_path(const kb_sockdiag_unix *u) {
        return u->name_len > 0 && u->name[0] != '\0';
}

static int by_inode(const void *a, const void *b) {
        uint32_t x = ((const kb_sockdiag_unix *) a)->inode, y = ((const kb_sockdiag_unix *) b)->inode;
        return x < y ? -1 : x > y;
}

void kb_sockdiag_sort(kb_sockdiag_unix *list, size_t n) {
        if (list && n > 1)
                qsort(list, n, sizeof *list, by_inode);
}

const kb_sockdiag_unix *kb_sockdiag_find(const kb_sockdiag_unix *list, size_t n, uint32_t inode) {
        kb_sockdiag_unix key = {.inode = inode};
        return list && n ? bsearch(&key, list, n, sizeof *list, by_inode) : NULL;
}

/* One unix_diag_msg and its attributes into *u. -EPROTO when it does not have the shape the
 * kernel's uapi gives it. */
static int parse_msg(const struct nlmsghdr *h, kb_sockdiag_unix *u) {
        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
                return -EPROTO;
        const struct unix_diag_msg *m = NLMSG_DATA(h);
        if (m->udiag_family != AF_UNIX)
                return -EPROTO;
        *u = (kb_sockdiag_unix){.inode = m->udiag_ino, .type = m->udiag_type, .state = m->udiag_state};
        const char *p = (const char *) m + NLMSG_ALIGN(sizeof *m);
        size_t left = h->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof *m));
        if (h->nlmsg_len < NLMSG_LENGTH(NLMSG_ALIGN(sizeof *m)))
                return -EPROTO;
        while (left >= NLA_HDRLEN) {
                const struct nlattr *a = (const struct nlattr *) p;
                if (a->nla_len < NLA_HDRLEN || a->nla_len > left)
                        return -EPROTO;
                size_t len = a->nla_len - NLA_HDRLEN;
                const void *data = p + NLA_HDRLEN;
                switch (a->nla_type & NLA_TYPE_MASK) {
                case UNIX_DIAG_NAME:
                        if (len == 0 || len > KB_SOCKDIAG_NAME_MAX)
                                return -EPROTO;
                        memcpy(u->name, data, len);
                        /* A pathname is reported with its terminating NUL (and only the bytes up
                         * to it name the file); an abstract name is every byte, NULs included. */
                        if (u->name[0] != '\0')
                                len = strnlen(u->name, len);
                        u->name_len = (uint8_t) len;
                        break;
                case UNIX_DIAG_VFS: {
                        struct unix_diag_vfs v;
                        if (len < sizeof v)
                                return -EPROTO;
                        memcpy(&v, data, sizeof v);
                        /* The kernel's own dev_t: 12 bits of major above 20 of minor. */
                        u->file_dev = makedev(v.udiag_vfs_dev >> 20, v.udiag_vfs_dev & 0xfffff);
                        u->file_ino = v.udiag_vfs_ino;
                        u->has_file = true;
                        break;
                }
                case UNIX_DIAG_UID: {
                        uint32_t uid;
                        if (len < sizeof uid)
                                return -EPROTO;
                        memcpy(&uid, data, sizeof uid);
                        u->uid = uid;
                        u->has_uid = true;
                        break;
                }
                case UNIX_DIAG_RQLEN: {
                        struct unix_diag_rqlen q;
                        if (len < sizeof q)
                                return -EPROTO;
                        memcpy(&q, data, sizeof q);
                        u->rqueue = q.udiag_rqueue;
                        u->has_rqueue = true;
                        break;
                }
                case UNIX_DIAG_ICONS: {
                        /* A listener's queue, each waiting connection by its connecting socket. */
                        if (len % sizeof(uint32_t) != 0)
                                return -EPROTO;
                        u->n_pending = (uint32_t) (len / sizeof(uint32_t));
                        size_t keep = u->n_pending < KB_SOCKDIAG_PENDING_MAX ? u->n_pending : KB_SOCKDIAG_PENDING_MAX;
                        memcpy(u->pending, data, keep * sizeof(uint32_t));
                        break;
                }
                case UNIX_DIAG_PEER: {
                        uint32_t peer;
                        if (len < sizeof peer)
                                return -EPROTO;
                        memcpy(&peer, data, sizeof peer);
                        u->peer = peer;
                        break;
                }
                default:
                        break; /* attributes kbound did not ask for */
                }
                size_t step = NLA_ALIGN(a->nla_len);
                if (step >= left)
                        break;
                p += step;
                left -= step;
        }
        return 0;
}

/* A growing array of entries of size bytes each, at most KB_SOCKDIAG_SOCKETS_MAX. */
typedef struct dump {
        void *list;
        size_t n, cap, size;
} dump;

static int dump_add(dump *d, const void *entry) {
        if (d->n == d->cap) {
                if (d->cap >= KB_SOCKDIAG_SOCKETS_MAX)
                        return -E2BIG;
                size_t cap = d->cap ? d->cap * 2 : 256;
                if (cap > KB_SOCKDIAG_SOCKETS_MAX)
                        cap = KB_SOCKDIAG_SOCKETS_MAX;
                void *nl = realloc(d->list, cap * d->size);
                if (!nl)
                        return -ENOMEM;
                d->list = nl;
                d->cap = cap;
        }
        memcpy((char *) d->list + d->n * d->size, entry, d->size);
        d->n++;
        return 0;
}

/* One family's reply message into d: 0, or -errno (-EPROTO: not the shape its uapi gives it). */
typedef int (*parse_fn)(const struct nlmsghdr *h, dump *d);

static int parse_unix(const struct nlmsghdr *h, dump *d) {
        kb_sockdiag_unix u;
        int r = parse_msg(h, &u);
        return r < 0 ? r : dump_add(d, &u);
}

/* One dump of request (len bytes, its nlmsghdr first, whose nlmsg_seq is set here) over fd into d.
 * Returns 1 when complete, 0 when the kernel marked it interrupted (the table changed meanwhile:
 * take it again), -errno. */
static int dump_once(int fd, uint32_t seq, void *request, size_t len, parse_fn parse, dump *d, void *buf) {
        ((struct nlmsghdr *) request)->nlmsg_seq = seq;
        struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
        ssize_t sent;
        do
                sent = sendto(fd, request, len, 0, (struct sockaddr *) &kernel, sizeof kernel);
        while (sent < 0 && errno == EINTR);
        if (sent < 0)
                return -errno;
        if ((size_t) sent != len)
                return -EPROTO;
        bool interrupted = false;
        for (;;) {
                struct sockaddr_nl from;
                struct iovec iov = {.iov_base = buf, .iov_len = RECV_BUF};
                struct msghdr mh = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1};
                ssize_t got = recvmsg(fd, &mh, 0);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
                if (mh.msg_flags & MSG_TRUNC)
                        return -EPROTO;
                if (from.nl_pid != 0)
                        continue; /* not from the kernel */
                size_t left = (size_t) got;
                for (struct nlmsghdr *h = buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
                        if (h->nlmsg_seq != seq)
                                continue; /* what is left of an earlier, abandoned dump */
                        if (h->nlmsg_flags & NLM_F_DUMP_INTR)
                                interrupted = true;
                        if (h->nlmsg_type == NLMSG_DONE) {
                                int err = 0;
                                if (h->nlmsg_len >= NLMSG_LENGTH(sizeof err))
                                        memcpy(&err, NLMSG_DATA(h), sizeof err);
                                if (err < 0)
                                        return err;
                                return interrupted ? 0 : 1;
                        }
                        if (h->nlmsg_type == NLMSG_ERROR) {
                                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
                                        return -EPROTO;
                                const struct nlmsgerr *e = NLMSG_DATA(h);
                                return e->error < 0 ? e->error : -EPROTO;
                        }
                        if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
                                return -EPROTO;
                        int r = parse(h, d);
                        if (r < 0)
                                return r;
                }
                if (left != 0)
                        return -EPROTO; /* a message cut in the middle */
        }
}

/* Every request of requests (n, len bytes each) dumped over fd (-1: a new socket of the caller's
 * namespace) into one list of entries of size bytes: all complete in the same try, else again.
 * Returns 0 with *ret (malloc'd, NULL when empty) and *ret_n, or -errno as kb_sockdiag_unix_list. */
static int dump_all(int fd, void *requests, size_t n, size_t len, parse_fn parse, size_t size, void **ret,
                    size_t *ret_n) {
        _cleanup_close_ int own = -1;
        if (fd < 0) {
                own = kb_sockdiag_open();
                if (own < 0)
                        return own;
                fd = own;
        }
        _cleanup_free_ void *buf = malloc(RECV_BUF);
        if (!buf)
                return -ENOMEM;
        uint32_t seq = (uint32_t) kb_now_ms();
        for (int attempt = 0; attempt < DUMP_TRIES; attempt++) {
                dump d = {.size = size};
                int r = 1;
                for (size_t i = 0; i < n && r == 1; i++)
                        r = dump_once(fd, seq + (uint32_t) (attempt * n + i), (char *) requests + i * len, len, parse,
                                      &d, buf);
                if (r == 1) {
                        *ret = d.list;
                        *ret_n = d.n;
                        return 0;
                }
                free(d.list);
                if (r < 0)
                        return r;
        }
        return -EAGAIN;
}

int kb_sockdiag_unix_list(int fd, kb_sockdiag_unix **ret, size_t *ret_n) {
        if (!ret || !ret_n)
                return -EINVAL;
        struct {
                struct nlmsghdr nlh;
                struct unix_diag_req req;
        } request = {
                .nlh = {.nlmsg_len = sizeof request,
                        .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                        .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
                .req = {.sdiag_family = AF_UNIX,
                        .udiag_states = ~0U,
                        .udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_VFS | UDIAG_SHOW_PEER | UDIAG_SHOW_UID |
                                      UDIAG_SHOW_RQLEN | UDIAG_SHOW_ICONS},
        };
        void *list = NULL;
        size_t n = 0;
        int r = dump_all(fd, &request, 1, sizeof request, parse_unix, sizeof(kb_sockdiag_unix), &list, &n);
        if (r < 0)
                return r;
        kb_sockdiag_sort(list, n);
        *ret = list;
        *ret_n = n;
        return 0;
}

/* One inet_diag_msg into a kb_sockdiag_tcp. */
static int parse_tcp(const struct nlmsghdr *h, dump *d) {
        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
                return -EPROTO;
        const struct inet_diag_msg *m = NLMSG_DATA(h);
        if (m->idiag_family != AF_INET && m->idiag_family != AF_INET6)
                return -EPROTO;
        kb_sockdiag_tcp t = {.inode = m->idiag_inode,
                             .uid = m->idiag_uid,
                             .family = m->idiag_family,
                             .state = m->idiag_state,
                             .local_port = ntohs(m->id.idiag_sport),
                             .remote_port = ntohs(m->id.idiag_dport)};
        size_t alen = m->idiag_family == AF_INET ? 4 : 16;
        memcpy(t.local, m->id.idiag_src, alen);
        memcpy(t.remote, m->id.idiag_dst, alen);
        return dump_add(d, &t);
}

int kb_sockdiag_tcp_list(int fd, kb_sockdiag_tcp **ret, size_t *ret_n) {
        if (!ret || !ret_n)
                return -EINVAL;
        struct tcp_request {
                struct nlmsghdr nlh;
                struct inet_diag_req_v2 req;
        } requests[2];
        const uint8_t families[2] = {AF_INET, AF_INET6};
        for (size_t i = 0; i < 2; i++)
                requests[i] = (struct tcp_request){
                        .nlh = {.nlmsg_len = sizeof requests[i],
                                .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                                .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
                        .req = {.sdiag_family = families[i], .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0U},
                };
        void *list = NULL;
        size_t n = 0;
        int r = dump_all(fd, requests, 2, sizeof requests[0], parse_tcp, sizeof(kb_sockdiag_tcp), &list, &n);
        if (r < 0)
                return r;
        *ret = list;
        *ret_n = n;
        return 0;
}

bool kb_sockdiag_tcp_loopback(const kb_sockdiag_tcp *t, bool remote) {
        const uint8_t *a = remote ? t->remote : t->local;
        static const uint8_t v6_loopback[16] = {[15] = 1};
        return t->family == AF_INET ? a[0] == 127 : memcmp(a, v6_loopback, 16) == 0;
}

const kb_sockdiag_tcp *kb_sockdiag_tcp_peer(const kb_sockdiag_tcp *list, size_t n, const kb_sockdiag_tcp *t) {
        size_t alen = t->family == AF_INET ? 4 : 16;
        for (size_t i = 0; i < n; i++) {
                const kb_sockdiag_tcp *o = &list[i];
                if (o != t && o->family == t->family && o->local_port == t->remote_port &&
                    o->remote_port == t->local_port && memcmp(o->local, t->remote, alen) == 0 &&
                    memcmp(o->remote, t->local, alen) == 0)
                        return o;
        }
        return NULL;
}

void kb_sockdiag_tcp_address(const kb_sockdiag_tcp *t, bool remote, char *buf, size_t size) {
        char ip[INET6_ADDRSTRLEN];
        if (!inet_ntop(t->family, remote ? t->remote : t->local, ip, sizeof ip))
                snprintf(ip, sizeof ip, "?");
        snprintf(buf, size, t->family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip,
                 (unsigned) (remote ? t->remote_port : t->local_port));
}

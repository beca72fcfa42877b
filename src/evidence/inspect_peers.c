/* inspect_peers.c: every unix socket a sandbox process holds, traced by sock_diag to its other ends. */
#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "base/cleanup.h"
#include "evidence/inspect-internal.h"

#define CONNECTED_FROM_MAX 8 /* other senders kept per socket (one is enough to fail it) */
#define SANDBOX_NETNS_MAX 8  /* the sandbox's network namespaces listed by sock_diag (the rest noted) */

#define FOUND_NONE KB_PEERS_FOUND_NONE
#define FOUND_SANDBOX KB_PEERS_FOUND_SANDBOX
#define FOUND_KBOUND KB_PEERS_FOUND_KBOUND
#define FOUND_HOST KB_PEERS_FOUND_HOST
static const char *const found_names[] = {"none", "sandbox", "kbound", "host"};

/* One of the sandbox's network namespaces, as sock_diag listed it. */
typedef struct netns_list {
        kb_sockdiag_unix *list;
        size_t n;
} netns_list;

/* An other end, where the dumps found it. */
typedef struct end {
        uint32_t inode;
        int found;
        pid_t netns_pid; /* FOUND_HOST: a process of its namespace */
} end;

/* A socket a sandbox process holds (its descriptors, as the look read them). */
typedef struct held {
        uint32_t inode;
        int found;
        pid_t netns_pid;
        kb_sockdiag_unix u; /* when found */
        end peer;           /* u.peer, once found */
        bool has_listener;
        end listener; /* the listener whose queue its connection waits in */
        end pending[KB_SOCKDIAG_PENDING_MAX];
        end connected_from[CONNECTED_FROM_MAX];
        size_t n_connected_from;
} held;

struct peer_trace {
        held *held; /* sorted by inode */
        size_t n_held;
        bool ready;       /* held is built */
        bool own_reread;  /* kbound's descriptors were read again for an end no one held */
        bool userns_read; /* allowed is read */
        ns_set allowed;   /* the user namespaces of the sandbox's own tree */
        netns_list netns[SANDBOX_NETNS_MAX];
        size_t n_netns; /* the sandbox's network namespaces listed */
};

static int by_held_inode(const void *a, const void *b) {
        uint32_t x = ((const held *) a)->inode, y = ((const held *) b)->inode;
        return x < y ? -1 : x > y;
}

static held *held_find(peer_trace *pt, uint32_t inode) {
        held key = {.inode = inode};
        return inode && pt->n_held ? bsearch(&key, pt->held, pt->n_held, sizeof *pt->held, by_held_inode) : NULL;
}

void kb_inspect_peers_free(peer_trace **pt) {
        if (*pt) {
                free((*pt)->held);
                for (size_t i = 0; i < (*pt)->n_netns; i++)
                        free((*pt)->netns[i].list);
        }
        free(*pt);
        *pt = NULL;
}

/* s->peers, made when first needed, with the sockets the look's sandbox processes hold (s->members). */
static int trace_of(sockets *s, peer_trace **ret) {
        if (!s->peers && !(s->peers = calloc(1, sizeof *s->peers)))
                return -ENOMEM;
        peer_trace *pt = s->peers;
        if (!pt->ready) {
                size_t n = 0;
                json_object_object_foreach(s->members, key, pids) {
                        (void) key;
                        (void) pids;
                        n++;
                }
                if (n && !(pt->held = calloc(n, sizeof *pt->held)))
                        return -ENOMEM;
                json_object_object_foreach(s->members, target, holders) {
                        (void) holders;
                        unsigned long long inode = strtoull(target + strlen("socket:["), NULL, 10);
                        if (inode > 0 && inode <= UINT32_MAX)
                                pt->held[pt->n_held++] = (held){.inode = (uint32_t) inode};
                }
                if (pt->n_held > 1)
                        qsort(pt->held, pt->n_held, sizeof *pt->held, by_held_inode);
                pt->ready = true;
        }
        *ret = pt;
        return 0;
}

/* Where e is, if list (found where, rep its namespace's process) has it. */
static void place_end(end *e, const kb_sockdiag_unix *list, size_t n, int found, pid_t rep) {
        if (e->inode && e->found == FOUND_NONE && kb_sockdiag_find(list, n, e->inode)) {
                e->found = found;
                e->netns_pid = rep;
        }
}

int kb_inspect_peers_offer(sockets *s, const kb_sockdiag_unix *list, size_t n, int found, pid_t rep) {
        peer_trace *pt;
        if (trace_of(s, &pt) < 0)
                return -ENOMEM;
        if (!list || n == 0 || pt->n_held == 0)
                return 0;
        /* What this list says of the held sockets: the sockets themselves, the listener each one's
         * connection waits in, and any other socket whose peer one of them is. */
        for (size_t i = 0; i < n; i++) {
                const kb_sockdiag_unix *u = &list[i];
                held *h = held_find(pt, u->inode);
                if (h && h->found == FOUND_NONE) {
                        h->found = found;
                        h->netns_pid = rep;
                        h->u = *u;
                        h->peer = (end){.inode = u->peer};
                        size_t keep = u->n_pending < KB_SOCKDIAG_PENDING_MAX ? u->n_pending : KB_SOCKDIAG_PENDING_MAX;
                        for (size_t k = 0; k < keep; k++)
                                h->pending[k] = (end){.inode = u->pending[k]};
                }
                size_t keep = u->n_pending < KB_SOCKDIAG_PENDING_MAX ? u->n_pending : KB_SOCKDIAG_PENDING_MAX;
                for (size_t k = 0; k < keep; k++) {
                        held *waiting = held_find(pt, u->pending[k]);
                        if (waiting && !waiting->has_listener) {
                                waiting->has_listener = true;
                                waiting->listener = (end){.inode = u->inode, .found = found, .netns_pid = rep};
                        }
                }
                held *sender = held_find(pt, u->peer);
                if (sender && sender->n_connected_from < CONNECTED_FROM_MAX && u->inode != sender->inode) {
                        bool known = false;
                        for (size_t k = 0; k < sender->n_connected_from && !known; k++)
                                known = sender->connected_from[k].inode == u->inode;
                        if (!known)
                                sender->connected_from[sender->n_connected_from++] =
                                        (end){.inode = u->inode, .found = found, .netns_pid = rep};
                }
        }
        /* The other ends of the held sockets found so far, by inode. */
        for (size_t i = 0; i < pt->n_held; i++) {
                held *h = &pt->held[i];
                if (h->found == FOUND_NONE)
                        continue;
                place_end(&h->peer, list, n, found, rep);
                for (size_t k = 0; k < KB_SOCKDIAG_PENDING_MAX; k++)
                        place_end(&h->pending[k], list, n, found, rep);
        }
        return 0;
}

/* The user namespaces of the sandbox's own tree into pt->allowed: bwrap's init's (or else the
 * kernel's) and those above it, below kbound's own. A network namespace owned by none of them is
 * not this sandbox's: kbound never enters one (another run's sandbox, a container). */
static void read_allowed(peer_trace *pt, const sockets *s) {
        if (pt->userns_read)
                return;
        pt->userns_read = true;
        json_object *own_ino = json_object_object_get(kb_fact_map_of(s->t->host, FACT_HOST_NS), "user");
        int64_t own = json_object_is_type(own_ino, json_type_int) ? json_object_get_int64(own_ino) : -1;
        json_object *init = NULL, *kernel = NULL;
        for (size_t i = 0; i < json_object_array_length(s->processes); i++) {
                json_object *p = json_object_array_get_idx(s->processes, i);
                int64_t pid = kb_fact_int_or(p, FACT_PROCESS_PID, -1);
                if (pid == s->t->init_pid)
                        init = p;
                if (pid == s->t->kernel_pid)
                        kernel = p;
        }
        json_object *p = init ? init : kernel;
        int64_t user = kb_inspect_process_ns(p, NS_USER);
        if (!p || user <= 0 || user == own)
                return;
        (void) kb_inspect_ns_set_add(&pt->allowed, (uint64_t) user, NULL);
        json_object *chain = json_object_object_get(kb_fact_map_of(p, FACT_PROCESS_NS_OWNERS), "user");
        for (size_t i = 0; json_object_is_type(chain, json_type_array) && i < json_object_array_length(chain); i++) {
                int64_t ino = json_object_get_int64(json_object_array_get_idx(chain, i));
                if (ino == own)
                        break;
                (void) kb_inspect_ns_set_add(&pt->allowed, (uint64_t) ino, NULL);
        }
}

/* Whether the namespace open at fd is owned by a user namespace of the sandbox's own tree (its
 * owner, or one above the owner, in pt->allowed) or by kbound's own: 0 when it is, -EPERM when it
 * is not (kbound does not enter it), -errno when its owners cannot be read. */
static int sandbox_owned(const peer_trace *pt, const sockets *s, int fd) {
        _cleanup_json_ json_object *chain = json_object_new_array();
        if (!chain)
                return -ENOMEM;
        int r = kb_inspect_owner_chain(fd, false, chain);
        if (r < 0)
                return r;
        /* One of kbound's own user namespace (a sandbox kbound did not build, made by root:
         * kbound audit): root joins it from a thread, as it lists every such namespace's
         * sockets for boundary.sockets (inspect_host_sockets.c); it is no other run's sandbox,
         * whose namespaces a user namespace of its own owns. */
        json_object *own = json_object_object_get(kb_fact_map_of(s->t->host, FACT_HOST_NS), "user");
        if (json_object_array_length(chain) > 0 && json_object_is_type(own, json_type_int) &&
            json_object_get_int64(json_object_array_get_idx(chain, 0)) == json_object_get_int64(own))
                return 0;
        for (size_t i = 0; i < json_object_array_length(chain); i++)
                if (kb_inspect_ns_set_has(&pt->allowed,
                                          (uint64_t) json_object_get_int64(json_object_array_get_idx(chain, i))))
                        return 0;
        return -EPERM;
}

int kb_inspect_peers_namespace(sockets *s, pid_t pid, int64_t netns, json_object *errors, json_object **ret_unix) {
        peer_trace *pt;
        char path[PATH_MAX], key[32];
        *ret_unix = NULL;
        if (trace_of(s, &pt) < 0)
                return -ENOMEM;
        read_allowed(pt, s);
        snprintf(key, sizeof key, "%lld", (long long) netns);
        snprintf(path, sizeof path, "%s/%d/ns/net", s->t->proc_root, (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        uint64_t pidns = 0;
        /* The namespace the look read for pid, opened while pid is still a process of the
         * sandbox's pid namespace: never one a stranger given that pid since has. One that is gone
         * has no sockets left to trace. */
        if (fd < 0 || fstat(fd, &st) < 0 || (int64_t) st.st_ino != netns ||
            kb_inspect_ns_inode(s->t->proc_root, pid, "pid", &pidns) < 0 || pidns != s->t->pidns_ino)
                return 0;
        _cleanup_close_ int userns = -1;
        int r = sandbox_owned(pt, s, fd); /* -EPERM: not the sandbox's own, kbound does not enter it */
        if (r >= 0 && pt->n_netns == SANDBOX_NETNS_MAX)
                r = -E2BIG;
        if (r >= 0) {
                userns = ioctl(fd, NS_GET_USERNS);
                r = userns < 0 ? -errno : kb_inspect_diag_socket(fd, userns);
        }
        kb_sockdiag_unix *list = NULL;
        size_t n = 0;
        if (r >= 0) {
                int diag = r;
                r = kb_sockdiag_unix_list(diag, &list, &n);
                close(diag);
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return kb_inspect_note(errors, WHAT_SANDBOX_SOCKETS, key, r);
        pt->netns[pt->n_netns++] = (netns_list){.list = list, .n = n};
        if (kb_inspect_peers_offer(s, list, n, FOUND_SANDBOX, 0) < 0 || !(*ret_unix = kb_inspect_unix_table(list, n)))
                return -ENOMEM;
        return 0;
}

/* A SOCKET_END of e; its holders are looked for (kb_inspect_holders_of), a peer of the sandbox's
 * network held by none of its processes after its tables are read again (a connection the
 * sandbox accepted since they were read). NULL if out of memory. */
static json_object *end_facts(sockets *s, const end *e, bool peer) {
        json_object *o = json_object_new_object(), *holders = NULL;
        if (!o || kb_fact_set_int(o, FACT_SOCKET_END_INODE, e->inode) < 0 ||
            kb_fact_set_str(o, FACT_SOCKET_END_FOUND, found_names[e->found]) < 0 ||
            (e->found == FOUND_HOST && kb_fact_set_int(o, FACT_SOCKET_END_NETNS_PID, e->netns_pid) < 0))
                goto oom;
        if (e->inode == 0)
                holders = json_object_new_array();
        else {
                char key[32];
                kb_inspect_socket_key(key, sizeof key, e->inode);
                if (peer && e->found == FOUND_SANDBOX && !json_object_object_get_ex(s->own, key, NULL) &&
                    kb_inspect_resolve_unheld(s, e->inode) < 0)
                        goto oom;
                holders = kb_inspect_holders_of(s, e->inode);
                /* No one: kbound's own descriptors once more, read before its sockets were listed
                 * (a connection libzmq made since, waiting in the kernel's listener). */
                if (holders && json_object_array_length(holders) == 0 && !s->peers->own_reread) {
                        s->peers->own_reread = true;
                        json_object_put(holders);
                        holders = NULL;
                        if (kb_inspect_own_reread(s) < 0)
                                goto oom;
                        holders = kb_inspect_holders_of(s, e->inode);
                }
        }
        if (kb_fact_set_arr(o, FACT_SOCKET_END_HELD_BY, holders) < 0)
                goto oom;
        return o;
oom:
        json_object_put(o);
        return NULL;
}

/* The SANDBOX_SOCKET of h. NULL if out of memory. */
static json_object *held_facts(sockets *s, const held *h) {
        json_object *o = json_object_new_object();
        if (!o || kb_fact_set_int(o, FACT_SANDBOX_SOCKET_INODE, h->inode) < 0 ||
            kb_fact_set_str(o, FACT_SANDBOX_SOCKET_FOUND, found_names[h->found]) < 0)
                goto oom;
        if (h->found == FOUND_NONE) {
                /* Listed nowhere: not a unix socket, one of a namespace no one listed, or one closed
                 * since its holders' tables were read (a socket that still exists, even one in a
                 * message in flight, is listed in its namespace). */
                int r = kb_inspect_still_held(s, h->inode);
                if (r < 0 || (r == 0 && kb_fact_set_bool(o, FACT_SANDBOX_SOCKET_CLOSED, true) < 0))
                        goto oom;
                return o;
        }
        if ((h->found == FOUND_HOST && kb_fact_set_int(o, FACT_SANDBOX_SOCKET_NETNS_PID, h->netns_pid) < 0) ||
            kb_fact_set_obj(o, FACT_SANDBOX_SOCKET_SOCKET, kb_inspect_socket_facts(&h->u)) < 0 ||
            (h->u.peer && kb_fact_set_obj(o, FACT_SANDBOX_SOCKET_PEER, end_facts(s, &h->peer, true)) < 0) ||
            (h->has_listener &&
             kb_fact_set_obj(o, FACT_SANDBOX_SOCKET_LISTENER, end_facts(s, &h->listener, false)) < 0))
                goto oom;
        if (h->u.n_pending) {
                json_object *pending = json_object_new_array();
                if (kb_fact_set_arr(o, FACT_SANDBOX_SOCKET_PENDING, pending) < 0 ||
                    kb_fact_set_int(o, FACT_SANDBOX_SOCKET_PENDING_COUNT, h->u.n_pending) < 0)
                        goto oom;
                for (size_t k = 0; k < h->u.n_pending && k < KB_SOCKDIAG_PENDING_MAX; k++)
                        if (kb_inspect_push(pending, end_facts(s, &h->pending[k], false)) < 0)
                                goto oom;
        }
        size_t n_from = 0;
        for (size_t k = 0; k < h->n_connected_from; k++)
                n_from += h->connected_from[k].inode != h->u.peer;
        if (n_from) {
                json_object *from = json_object_new_array();
                if (kb_fact_set_arr(o, FACT_SANDBOX_SOCKET_CONNECTED_FROM, from) < 0)
                        goto oom;
                for (size_t k = 0; k < h->n_connected_from; k++)
                        if (h->connected_from[k].inode != h->u.peer &&
                            kb_inspect_push(from, end_facts(s, &h->connected_from[k], false)) < 0)
                                goto oom;
        }
        return o;
oom:
        json_object_put(o);
        return NULL;
}

/* Whether an end of a socket found was found nowhere. */
static bool end_missing(const peer_trace *pt) {
        for (size_t i = 0; i < pt->n_held; i++) {
                const held *h = &pt->held[i];
                if (h->found == FOUND_NONE)
                        continue;
                if (h->peer.inode && h->peer.found == FOUND_NONE)
                        return true;
                for (size_t k = 0; k < KB_SOCKDIAG_PENDING_MAX; k++)
                        if (h->pending[k].inode && h->pending[k].found == FOUND_NONE)
                                return true;
        }
        return false;
}

int kb_inspect_peers_facts(sockets *s, json_object *snap) {
        peer_trace *pt;
        if (trace_of(s, &pt) < 0)
                return -ENOMEM;
        /* An end in a namespace listed before the socket whose end it is was found. */
        for (size_t k = 0; k < pt->n_netns; k++)
                if (kb_inspect_peers_offer(s, pt->netns[k].list, pt->netns[k].n, FOUND_SANDBOX, 0) < 0)
                        return -ENOMEM;
        if (kb_inspect_peers_offer(s, s->list, s->n, FOUND_KBOUND, 0) < 0)
                return -ENOMEM;
        /* An end found nowhere may be a socket kbound made after its network was listed (libzmq's
         * I/O thread retrying a channel's connect, the connection waiting in the kernel's
         * listener): kbound's network listed once more. */
        if (end_missing(pt)) {
                kb_sockdiag_unix *again = NULL;
                size_t n = 0;
                int r = kb_sockdiag_unix_list(-1, &again, &n);
                if (r == -ENOMEM || (r == 0 && kb_inspect_peers_offer(s, again, n, FOUND_KBOUND, 0) < 0)) {
                        free(again);
                        return -ENOMEM;
                }
                free(again);
        }
        json_object *all = json_object_new_array();
        if (kb_fact_set_arr(snap, FACT_LOOK_SANDBOX_SOCKETS, all) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < pt->n_held; i++)
                if (kb_inspect_push(all, held_facts(s, &pt->held[i])) < 0)
                        return -ENOMEM;
        return 0;
}

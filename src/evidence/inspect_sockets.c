/* inspect_sockets.c: the unix sockets of kbound's network (sock_diag): who holds which, by inode; and
 * kbound's TCP connections to a kernel on the host's loopback, traced the same way. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "kbound/sandbox.h"
#include "base/cleanup.h"
#include "evidence/inspect-internal.h"
#include "base/procfs.h"

void kb_inspect_socket_key(char *buf, size_t size, uint32_t inode) {
        snprintf(buf, size, "socket:[%u]", inode);
}

/* Appends pid to map[key] (an array). */
static int map_add(json_object *map, const char *key, pid_t pid) {
        json_object *pids = NULL;
        if (!json_object_object_get_ex(map, key, &pids)) {
                pids = json_object_new_array();
                if (kb_inspect_map_add(map, key, pids) < 0)
                        return -ENOMEM;
        }
        return kb_inspect_push(pids, json_object_new_int(pid));
}

typedef struct socket_owner {
        json_object *map;
        pid_t pid;
} socket_owner;

static int add_socket(int fd, const char *target, void *userdata) {
        (void) fd;
        const socket_owner *o = userdata;
        return strncmp(target, "socket:[", 8) == 0 ? map_add(o->map, target, o->pid) : 0;
}

/* The sockets in pid's descriptor table, into map ("socket:[N]" → [pid]). 0 when the process is
 * gone, -errno when its table cannot be read. */
static int fd_sockets(const char *proc_root, pid_t pid, json_object *map) {
        socket_owner o = {.map = map, .pid = pid};
        return kb_inspect_fd_targets(proc_root, pid, add_socket, &o);
}

/* The sockets in every descriptor table the look read of the sandbox process proc (a PROCESS): the
 * one its facts were read through (its main thread's, or a live thread's of a zombie leader) and
 * each thread's own (its FDs' tids), into map under the process's pid. 0, -ENOMEM, or -errno when
 * one cannot be read. */
static int process_sockets(sockets *s, json_object *proc, json_object *map) {
        pid_t pid = (pid_t) kb_fact_int_or(proc, FACT_PROCESS_PID, -1), via = kb_inspect_process_via(proc);
        char task_root[PATH_MAX], dir[PATH_MAX + 32];
        snprintf(task_root, sizeof task_root, "%s/%d/task", s->t->proc_root, (int) pid);
        socket_owner o = {.map = map, .pid = pid};
        int r = fd_sockets(via == pid ? s->t->proc_root : task_root, via, map);
        if (r < 0)
                return r;
        /* each thread table once: their descriptors are listed together, by tid */
        json_object *fds = kb_fact_arr_of(proc, FACT_PROCESS_FDS);
        int64_t last = 0;
        for (size_t i = 0; fds && i < json_object_array_length(fds); i++) {
                int64_t tid = kb_fact_int_or(json_object_array_get_idx(fds, i), FACT_FD_TID, 0);
                if (tid <= 0 || tid == last)
                        continue;
                last = tid;
                snprintf(dir, sizeof dir, "%s/%lld/fd", task_root, (long long) tid);
                r = kb_inspect_fd_targets_at(dir, add_socket, &o);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The look's sandbox process whose pid is pid, or NULL. */
static json_object *sandbox_process(sockets *s, pid_t pid) {
        for (size_t i = 0; i < json_object_array_length(s->processes); i++) {
                json_object *p = json_object_array_get_idx(s->processes, i);
                if (kb_fact_int_or(p, FACT_PROCESS_PID, -1) == pid)
                        return p;
        }
        return NULL;
}

/* The short name of a process ("?" when it cannot be read). */
static void process_name(const char *proc_root, pid_t pid, char *buf, size_t size) {
        _cleanup_free_ char *text = NULL;
        kb_procfs_stat st;
        if (kb_inspect_read_proc(proc_root, pid, "stat", KB_PROCFS_STAT_MAX, &text, NULL) == 0 &&
            kb_procfs_stat_parse(text, &st) == 0)
                snprintf(buf, size, "%s", st.comm);
        else
                snprintf(buf, size, "?");
}

/* Who holds which socket among the processes outside the sandbox other than kbound, read once:
 * kbound's other descendants (the launch side: other sandboxes of this run, a launcher's helpers)
 * into s->launch; the rest of the host, listed afresh (a process started since the look's walk
 * may hold a socket sock_diag listed since), into s->others. A table kbound may not read (another
 * user's, when kbound is not root) is left out: such a holder is then "no process the host
 * found". */
static int holders_scan(sockets *s, bool launch_side) {
        json_object **map = launch_side ? &s->launch : &s->others;
        if (*map)
                return 0;
        if (!(*map = json_object_new_object()))
                return -ENOMEM;
        if (launch_side) {
                for (size_t i = 0; i < s->n_procs; i++) {
                        if (!s->procs[i].launch || s->procs[i].member || s->procs[i].pid == getpid())
                                continue;
                        if (fd_sockets(s->t->proc_root, s->procs[i].pid, *map) == -ENOMEM)
                                return -ENOMEM;
                }
                return 0;
        }
        /* Looked at already: kbound, the sandbox, the launch side. */
        _cleanup_json_ json_object *skip = json_object_new_object();
        if (!skip)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_procs; i++)
                if (s->procs[i].member || s->procs[i].launch) {
                        char key[16];
                        snprintf(key, sizeof key, "%d", (int) s->procs[i].pid);
                        if (kb_inspect_map_add(skip, key, json_object_new_boolean(true)) < 0)
                                return -ENOMEM;
                }
        DIR *d = opendir(s->t->proc_root);
        if (!d)
                return errno == ENOMEM ? -ENOMEM : 0;
        int r = 0;
        struct dirent *de;
        while (r >= 0 && (de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0 || pid > INT_MAX || pid == getpid() ||
                    json_object_object_get_ex(skip, de->d_name, NULL))
                        continue;
                r = fd_sockets(s->t->proc_root, (pid_t) pid, *map);
                if (r != -ENOMEM)
                        r = 0; /* gone, or another user's that kbound may not read */
        }
        closedir(d);
        return r;
}

json_object *kb_inspect_holders_of(sockets *s, uint32_t inode) {
        char key[32];
        kb_inspect_socket_key(key, sizeof key, inode);
        json_object *out = json_object_new_array(), *pids = NULL;
        if (!out)
                return NULL;
        static const char *const sides[] = {"kbound", "sandbox", "launch", "host"};
        bool found = false;
        for (int pass = 0; pass < 4 && !found; pass++) {
                if (pass >= 2 && holders_scan(s, pass == 2) < 0)
                        goto oom;
                json_object *map = pass == 0 ? s->own : pass == 1 ? s->members : pass == 2 ? s->launch : s->others;
                if (!map || !json_object_object_get_ex(map, key, &pids))
                        continue;
                for (size_t i = 0; i < json_object_array_length(pids); i++) {
                        pid_t pid = (pid_t) json_object_get_int(json_object_array_get_idx(pids, i));
                        char name[64] = "kbound";
                        if (pass == 1) {
                                for (size_t p = 0; p < json_object_array_length(s->processes); p++) {
                                        json_object *proc = json_object_array_get_idx(s->processes, p);
                                        const char *pname = kb_fact_str_of(proc, FACT_PROCESS_NAME);
                                        if (kb_fact_int_or(proc, FACT_PROCESS_PID, -1) == pid && pname)
                                                snprintf(name, sizeof name, "%s", pname);
                                }
                        } else if (pass >= 2)
                                process_name(s->t->proc_root, pid, name, sizeof name);
                        json_object *h = json_object_new_object();
                        if (!h || kb_fact_set_int(h, FACT_HOLDER_PID, pid) < 0 ||
                            kb_fact_set_str(h, FACT_HOLDER_NAME, name) < 0 ||
                            kb_fact_set_str(h, FACT_HOLDER_SIDE, sides[pass]) < 0) {
                                json_object_put(h);
                                goto oom;
                        }
                        if (kb_inspect_push(out, h) < 0) /* push put h */
                                goto oom;
                        found = true;
                }
        }
        return out;
oom:
        json_object_put(out);
        return NULL;
}

const char *kb_inspect_socket_type_name(uint8_t type) {
        return type == SOCK_STREAM      ? "stream"
               : type == SOCK_DGRAM     ? "dgram"
               : type == SOCK_SEQPACKET ? "seqpacket"
                                        : "other";
}

const char *kb_inspect_socket_state_name(uint8_t state) {
        /* The TCP state numbers, as unix sockets use them. */
        return state == 10  ? "listening"
               : state == 1 ? "connected"
               : state == 7 ? "unconnected"
               : state == 2 ? "connecting"
                            : "other";
}

/* A socket's name as /proc/net/unix shows it, into buf (KB_SOCKDIAG_NAME_MAX bytes): a path, or
 * "@" and an abstract name's bytes with each NUL shown as "@". Returns its length, 0 when it is not
 * bound. */
static size_t socket_name(const kb_sockdiag_unix *u, char buf[static KB_SOCKDIAG_NAME_MAX]) {
        memcpy(buf, u->name, u->name_len);
        for (size_t i = 0; i < u->name_len; i++)
                if (buf[i] == '\0')
                        buf[i] = '@';
        return u->name_len;
}

json_object *kb_inspect_socket_facts(const kb_sockdiag_unix *u) {
        char name[KB_SOCKDIAG_NAME_MAX];
        size_t name_len = socket_name(u, name);
        json_object *o = json_object_new_object();
        if (!o || kb_fact_set_int(o, FACT_SOCKET_INODE, u->inode) < 0 ||
            kb_fact_set_str(o, FACT_SOCKET_TYPE, kb_inspect_socket_type_name(u->type)) < 0 ||
            kb_fact_set_str(o, FACT_SOCKET_STATE, kb_inspect_socket_state_name(u->state)) < 0 ||
            (name_len > 0 && kb_fact_set_strn(o, FACT_SOCKET_PATH, name, name_len) < 0) ||
            kb_fact_set_int(o, FACT_SOCKET_PEER, u->peer) < 0 ||
            (u->has_rqueue && kb_fact_set_int(o, FACT_SOCKET_RQUEUE, u->rqueue) < 0)) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

json_object *kb_inspect_unix_table(const kb_sockdiag_unix *list, size_t n) {
        json_object *a = json_object_new_array();
        for (size_t i = 0; a && i < n; i++) {
                char name[KB_SOCKDIAG_NAME_MAX];
                size_t name_len = socket_name(&list[i], name);
                json_object *o = json_object_new_object();
                if (!o || kb_fact_set_int(o, FACT_UNIX_ENTRY_INODE, list[i].inode) < 0 ||
                    kb_fact_set_bool(o, FACT_UNIX_ENTRY_LISTENING, list[i].state == 10) < 0 ||
                    (name_len > 0 && kb_fact_set_strn(o, FACT_UNIX_ENTRY_PATH, name, name_len) < 0) ||
                    kb_inspect_push(a, TAKE_PTR(o)) < 0) {
                        json_object_put(o);
                        json_object_put(a);
                        return NULL;
                }
        }
        return a;
}

int kb_inspect_sockets_init(sockets *s, json_object *errors) {
        s->members = json_object_new_object();
        s->own = json_object_new_object();
        if (!s->members || !s->own)
                return -ENOMEM;
        for (size_t i = 0; i < json_object_array_length(s->processes); i++) {
                json_object *p = json_object_array_get_idx(s->processes, i), *fds = kb_fact_arr_of(p, FACT_PROCESS_FDS);
                for (size_t f = 0; fds && f < json_object_array_length(fds); f++) {
                        const char *target = kb_fact_str_of(json_object_array_get_idx(fds, f), FACT_FD_TARGET);
                        if (target && strncmp(target, "socket:[", 8) == 0 &&
                            map_add(s->members, target, (pid_t) kb_fact_int_or(p, FACT_PROCESS_PID, -1)) < 0)
                                return -ENOMEM;
                }
        }
        /* The list first, kbound's own descriptors after it: every socket of kbound's that the list
         * shows was open before its descriptors are read, so each is found among them (kbound
         * closes no connection to the kernel while its thread looks). Read the other way round, a
         * connection libzmq's I/O thread made in between (a channel's connect retried after the
         * kernel bound its socket) was listed with a peer in no one's descriptors, and the kernel's
         * end of it, carrying the sandbox's own socket file, was judged a host socket reachable in
         * the sandbox (boundary.sockets failed about one run in 25). */
        int r = kb_sockdiag_unix_list(-1, &s->list, &s->n);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return kb_inspect_note(errors, WHAT_KBOUND_SOCKETS, NULL, r);
        r = fd_sockets(s->t->proc_root, getpid(), s->own);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return kb_inspect_note(errors, WHAT_KBOUND_SOCKETS, NULL, r);
        return 0;
}

/* A socket none of the look's sandbox processes held when their descriptors were read: the kernel
 * may have accepted it since (sock_diag lists after the descriptor tables are read), or may still
 * have it in its listener's queue. */
int kb_inspect_resolve_unheld(sockets *s, uint32_t inode) {
        char key[32];
        kb_inspect_socket_key(key, sizeof key, inode);
        for (int attempt = 0; attempt < 20; attempt++) {
                if (json_object_object_get_ex(s->members, key, NULL))
                        return 1;
                if (attempt > 0)
                        poll(NULL, 0, 10);
                for (size_t i = 0; i < json_object_array_length(s->processes); i++) {
                        json_object *proc = json_object_array_get_idx(s->processes, i);
                        pid_t pid = (pid_t) kb_fact_int_or(proc, FACT_PROCESS_PID, -1);
                        _cleanup_json_ json_object *now = json_object_new_object();
                        if (!now)
                                return -ENOMEM;
                        int r = process_sockets(s, proc, now);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                continue;
                        json_object *pids = NULL;
                        if (json_object_object_get_ex(now, key, &pids) && map_add(s->members, key, pid) < 0)
                                return -ENOMEM;
                }
        }
        return json_object_object_get_ex(s->members, key, NULL) ? 1 : 0;
}

int kb_inspect_own_reread(sockets *s) {
        int r = fd_sockets(s->t->proc_root, getpid(), s->own);
        return r == -ENOMEM ? r : 0;
}

int kb_inspect_still_held(sockets *s, uint32_t inode) {
        char key[32];
        json_object *pids = NULL;
        kb_inspect_socket_key(key, sizeof key, inode);
        if (!json_object_object_get_ex(s->members, key, &pids))
                return 0;
        for (size_t i = 0; i < json_object_array_length(pids); i++) {
                _cleanup_json_ json_object *now = json_object_new_object();
                if (!now)
                        return -ENOMEM;
                pid_t pid = (pid_t) json_object_get_int(json_object_array_get_idx(pids, i));
                json_object *proc = sandbox_process(s, pid);
                int r = proc ? process_sockets(s, proc, now) : fd_sockets(s->t->proc_root, pid, now);
                if (r == -ENOMEM)
                        return r;
                /* a table that cannot be read now proves nothing was closed */
                if (r < 0 || json_object_object_get_ex(now, key, NULL))
                        return 1;
        }
        return 0;
}

void kb_inspect_sockets_done(sockets *s) {
        free(s->list);
        json_object_put(s->members);
        json_object_put(s->own);
        json_object_put(s->launch);
        json_object_put(s->others);
}

int kb_inspect_kbound_side_sockets(sockets *s, json_object *snap) {
        if (!s->list)
                return 0;
        _cleanup_json_ json_object *mine = json_object_new_array(), *held = json_object_new_array();
        if (!mine || !held)
                return -ENOMEM;
        for (size_t i = 0; i < s->n; i++) {
                const kb_sockdiag_unix *u = &s->list[i];
                char key[32];
                kb_inspect_socket_key(key, sizeof key, u->inode);
                if (json_object_object_get_ex(s->own, key, NULL) &&
                    kb_inspect_push(mine, json_object_new_int64(u->inode)) < 0)
                        return -ENOMEM;
                if (!json_object_object_get_ex(s->members, key, NULL))
                        continue;
                json_object *o = kb_inspect_socket_facts(u);
                if (!o || kb_inspect_push(held, o) < 0)
                        return -ENOMEM;
                if (u->peer && kb_fact_set_arr(o, FACT_SOCKET_PEER_HELD_BY, kb_inspect_holders_of(s, u->peer)) < 0)
                        return -ENOMEM;
        }
        if (kb_fact_set_arr(snap, FACT_LOOK_KBOUND_SOCKETS, TAKE_PTR(mine)) < 0 ||
            kb_fact_set_arr(snap, FACT_LOOK_KBOUND_NET_SOCKETS, TAKE_PTR(held)) < 0)
                return -ENOMEM;
        return 0;
}

#define TCP_ENDPOINT "tcp://"

/* kbound's TCP connections to the kernel's endpoints given as "tcp://127.0.0.1:P" (a kernel kbound
 * reaches on the host's loopback: `kbound audit --transport tcp`), into conns: each one's other end
 * found in kbound's network namespace's TCP table by the addresses crossed (sock_diag inet), and
 * who holds it. An end not found, or not accepted by any process yet, is recorded as socket 0 with
 * no holder: the judge names it. Returns 0, -ENOMEM; a table that cannot be listed is noted. */
static int tcp_connection_facts(sockets *s, json_object *conns, json_object *errors) {
        bool any = false;
        for (const char *const *ep = s->t->endpoints; ep && *ep; ep++)
                any |= strncmp(*ep, TCP_ENDPOINT, strlen(TCP_ENDPOINT)) == 0;
        if (!any)
                return 0;
        _cleanup_free_ kb_sockdiag_tcp *list = NULL;
        size_t n = 0;
        int r = kb_sockdiag_tcp_list(-1, &list, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return kb_inspect_note(errors, WHAT_KBOUND_TCP, NULL, r);
        for (size_t i = 0; i < n; i++) {
                const kb_sockdiag_tcp *c = &list[i];
                char key[32], endpoint[96], address[80];
                kb_inspect_socket_key(key, sizeof key, c->inode);
                if (!c->inode || c->state != TCP_ESTABLISHED || !json_object_object_get_ex(s->own, key, NULL))
                        continue;
                kb_sockdiag_tcp_address(c, true, address, sizeof address);
                snprintf(endpoint, sizeof endpoint, TCP_ENDPOINT "%s", address);
                bool listed = false;
                for (const char *const *ep = s->t->endpoints; ep && *ep && !listed; ep++)
                        listed = strcmp(*ep, endpoint) == 0;
                if (!listed)
                        continue;
                const kb_sockdiag_tcp *peer = kb_sockdiag_tcp_peer(list, n, c);
                uint32_t far = peer ? peer->inode : 0;
                if (far && kb_inspect_resolve_unheld(s, far) < 0)
                        return -ENOMEM;
                json_object *o = json_object_new_object();
                if (!o || kb_inspect_push(conns, o) < 0 || kb_fact_set_str(o, FACT_CONNECTION_ENDPOINT, endpoint) < 0 ||
                    kb_fact_set_int(o, FACT_CONNECTION_KBOUND_SOCKET, c->inode) < 0 ||
                    kb_fact_set_int(o, FACT_CONNECTION_PEER, far) < 0 ||
                    kb_fact_set_arr(o, FACT_CONNECTION_HOLDERS,
                                    far ? kb_inspect_holders_of(s, far) : json_object_new_array()) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int kb_inspect_connection_facts(sockets *s, json_object *snap) {
        const kb_inspect_target *t = s->t;
        _cleanup_json_ json_object *endpoints = json_object_new_array(), *conns = json_object_new_array();
        if (!endpoints || !conns)
                return -ENOMEM;
        const char *prefix = KB_SANDBOX_RUNTIME "/";
        for (const char *const *ep = t->endpoints; ep && *ep; ep++) {
                json_object *e = json_object_new_object();
                if (!e || kb_inspect_push(endpoints, e) < 0 || kb_fact_set_str(e, FACT_ENDPOINT_PATH, *ep) < 0)
                        return -ENOMEM;
                if (strncmp(*ep, TCP_ENDPOINT, strlen(TCP_ENDPOINT)) == 0)
                        continue; /* an address, not a file: tcp_connection_facts traces it */
                char host[PATH_MAX];
                struct stat st;
                if (!t->own_runtime || strncmp(*ep, prefix, strlen(prefix)) != 0 ||
                    snprintf(host, sizeof host, "%s/%s", t->own_runtime, *ep + strlen(prefix)) >= (int) sizeof host) {
                        if (kb_fact_set_str(e, FACT_ENDPOINT_ERROR, "not in the team's runtime folder") < 0)
                                return -ENOMEM;
                } else if (lstat(host, &st) < 0) {
                        if (kb_fact_set_str(e, FACT_ENDPOINT_ERROR, strerror(errno)) < 0)
                                return -ENOMEM;
                } else if (!S_ISSOCK(st.st_mode)) {
                        if (kb_fact_set_str(e, FACT_ENDPOINT_ERROR, "not a socket") < 0)
                                return -ENOMEM;
                } else if (kb_fact_set_obj(e, FACT_ENDPOINT_FILE, kb_inspect_stat_facts(&st)) < 0)
                        return -ENOMEM;
        }
        DIR *d = t->own_runtime && s->list ? opendir(t->own_runtime) : NULL;
        int r = 0;
        struct dirent *de;
        while (d && r >= 0 && (de = readdir(d))) {
                struct stat st;
                if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISSOCK(st.st_mode))
                        continue;
                for (size_t i = 0; r >= 0 && i < s->n; i++) {
                        const kb_sockdiag_unix *u = &s->list[i], *peer = NULL;
                        char key[32], endpoint[PATH_MAX];
                        kb_inspect_socket_key(key, sizeof key, u->inode);
                        if (!u->peer || !json_object_object_get_ex(s->own, key, NULL))
                                continue;
                        peer = kb_sockdiag_find(s->list, s->n, u->peer);
                        if (!peer || !peer->has_file || peer->file_dev != st.st_dev ||
                            peer->file_ino != (uint32_t) st.st_ino)
                                continue;
                        snprintf(endpoint, sizeof endpoint, "%s%s", prefix, de->d_name);
                        if (kb_inspect_resolve_unheld(s, u->peer) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                        json_object *c = json_object_new_object();
                        if (!c || kb_inspect_push(conns, c) < 0 ||
                            kb_fact_set_str(c, FACT_CONNECTION_ENDPOINT, endpoint) < 0 ||
                            kb_fact_set_int(c, FACT_CONNECTION_KBOUND_SOCKET, u->inode) < 0 ||
                            kb_fact_set_int(c, FACT_CONNECTION_PEER, u->peer) < 0 ||
                            kb_fact_set_arr(c, FACT_CONNECTION_HOLDERS, kb_inspect_holders_of(s, u->peer)) < 0)
                                r = -ENOMEM;
                }
        }
        if (d)
                closedir(d);
        if (r >= 0)
                r = tcp_connection_facts(s, conns, kb_fact_arr_of(snap, FACT_LOOK_ERRORS));
        if (r < 0 || kb_fact_set_arr(snap, FACT_LOOK_ENDPOINTS, TAKE_PTR(endpoints)) < 0 ||
            kb_fact_set_arr(snap, FACT_LOOK_CONNECTIONS, TAKE_PTR(conns)) < 0)
                return -ENOMEM;
        return 0;
}

/* inspect_audit.c: which process is the kernel of a sandbox kbound did not build: the holder of the
 * kernel end of kbound's connections, found from the host as identity.pid2 finds it (sock_diag for
 * the other end of each of kbound's sockets, unix or TCP on the loopback, every descriptor table
 * for who holds it), a descendant of the wrapper kbound started. */
#include "kbound/inspect.h"
#include "base/cleanup.h"
#include "base/sockdiag.h"
#include "evidence/inspect-internal.h"
#include "base/procfs.h"
#include <stdlib.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define HOLDERS_MAX 64
#define TUN_DEVICE "/dev/net/tun"

/* A socket file of the kernel's folder, by device and inode. */
typedef struct sock_file {
        dev_t dev;
        uint32_t ino;
} sock_file;

/* The far end of one of kbound's connections: its socket's inode, the words for the connection
 * ("127.0.0.1:9001", "the ipc socket kernel-1"), and who holds it (0: none found, else the first
 * holder, with second another one when there is one). */
typedef struct far_end {
        uint32_t inode;
        char what[80];
        pid_t holder, second;
} far_end;

typedef struct seen {
        far_end *ends;
        size_t n;
        pid_t pid;
} seen;

static int own_socket(int fd, const char *target, void *userdata) {
        json_object *own = userdata;
        (void) fd;
        if (strncmp(target, "socket:[", 8) == 0 || strcmp(target, TUN_DEVICE) == 0)
                return kb_inspect_map_add(own, target, json_object_new_boolean(true));
        return 0;
}

/* Whether pid's network namespace is kbound's (by the inode /proc names; false when unreadable). */
static bool in_own_netns(const char *proc_root, pid_t pid) {
        char path[PATH_MAX], theirs[64], mine[64];
        ssize_t a, b;
        snprintf(path, sizeof path, "%s/%d/ns/net", proc_root, (int) pid);
        a = readlink(path, theirs, sizeof theirs - 1);
        snprintf(path, sizeof path, "%s/self/ns/net", proc_root);
        b = readlink(path, mine, sizeof mine - 1);
        return a > 0 && a == b && memcmp(theirs, mine, (size_t) a) == 0;
}

/* The first socket of held (a map of "socket:[N]") listed in neither table: its inode, or 0. */
static uint32_t unlisted_socket(json_object *held, const kb_sockdiag_tcp *tcp, size_t n_tcp,
                                const kb_sockdiag_unix *unix_list, size_t n_unix) {
        json_object_object_foreach(held, key, v) {
                (void) v;
                unsigned inode;
                if (sscanf(key, "socket:[%u]", &inode) != 1 || kb_sockdiag_find(unix_list, n_unix, inode))
                        continue;
                bool found = false;
                for (size_t i = 0; i < n_tcp && !found; i++)
                        found = tcp[i].inode == inode;
                if (!found)
                        return inode;
        }
        return 0;
}

static int end_seen(int fd, const char *target, void *userdata) {
        seen *s = userdata;
        (void) fd;
        for (size_t i = 0; i < s->n; i++) {
                char key[32];
                kb_inspect_socket_key(key, sizeof key, s->ends[i].inode);
                if (strcmp(key, target) != 0)
                        continue;
                if (s->ends[i].holder == 0)
                        s->ends[i].holder = s->pid;
                else if (s->ends[i].holder != s->pid && s->ends[i].second == 0)
                        s->ends[i].second = s->pid;
        }
        return 0;
}

/* The sockets pid holds ("socket:[N]" → true) into *ret. 0, or -errno. */
static int own_sockets_of(const char *proc_root, pid_t pid, json_object **ret) {
        _cleanup_json_ json_object *own = json_object_new_object();
        if (!own)
                return -ENOMEM;
        int r = kb_inspect_fd_targets(proc_root, pid, own_socket, own);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(own);
        return 0;
}

/* kbound's own sockets into *ret. 0, or -errno with why. */
static int own_sockets(const char *proc_root, json_object **ret, char *why, size_t why_size) {
        int r = own_sockets_of(proc_root, getpid(), ret);
        if (r < 0)
                snprintf(why, why_size, "cannot read kbound's own descriptors: %s", strerror(-r));
        return r;
}

static bool is_end(const far_end *ends, size_t n, uint32_t inode) {
        for (size_t i = 0; i < n; i++)
                if (ends[i].inode == inode)
                        return true;
        return false;
}

static bool is_own(json_object *own, uint32_t inode) {
        char key[32];
        kb_inspect_socket_key(key, sizeof key, inode);
        return json_object_object_get_ex(own, key, NULL);
}

/* The short name and parent of pid ("?" and 0 when it cannot be read). */
static void process_of(const char *proc_root, pid_t pid, char *name, size_t size, pid_t *ret_ppid) {
        _cleanup_free_ char *text = NULL;
        kb_procfs_stat st;
        if (kb_inspect_read_proc(proc_root, pid, "stat", KB_PROCFS_STAT_MAX, &text, NULL) == 0 &&
            kb_procfs_stat_parse(text, &st) == 0) {
                snprintf(name, size, "%s", st.comm);
                *ret_ppid = st.ppid;
        } else {
                snprintf(name, size, "?");
                *ret_ppid = 0;
        }
}

bool kb_inspect_descends_from(const char *proc_root, pid_t pid, pid_t ancestor) {
        char name[32];
        /* A chain longer than any pid table is a loop (a pid reused while it was walked). */
        for (int depth = 0; pid > 0 && depth < 4096; depth++) {
                if (pid == ancestor)
                        return true;
                process_of(proc_root, pid, name, sizeof name, &pid);
        }
        return false;
}

/* Whether the holder of kbound's connections passes them on, so is no kernel: it holds a TUN/TAP
 * device (packets into another network namespace: slirp4netns); it holds a connection of its own
 * (TCP, or a unix stream) to another process (a forwarder: socat, a proxy in the wrapper's argv in
 * front of the real kernel), or one whose other end is in no table of kbound's network namespace;
 * it is in another network namespace than kbound's TCP connections (tcp_ends); or, in kbound's,
 * it holds a socket neither table lists (another namespace's, or UDP, raw, netlink). Its own
 * socket pairs, the far ends of kbound's connections, listeners and connections to kbound are
 * fine. Called once it answered, before any cell ran. Returns 0, -EPERM (a TUN/TAP device, another
 * network namespace: why names it), -ESRCH (a socket that passes the connections on, or one not
 * accepted yet: the caller asks again until its deadline, since a socket made or closed while the
 * tables and descriptors were read looks the same for a moment), -errno. */
static int passes_on(const char *proc_root, pid_t holder, bool tcp_ends, const far_end *ends, size_t n, char *why,
                     size_t why_size) {
        /* The tables first, then what the holder and kbound hold: a socket listed is then either
         * held now or closed, never one made after its table was read (ipykernel connects to its own
         * shell port while it starts). */
        _cleanup_free_ kb_sockdiag_tcp *tcp = NULL;
        _cleanup_free_ kb_sockdiag_unix *unix_list = NULL;
        size_t n_tcp = 0, n_unix = 0;
        int r = kb_sockdiag_tcp_list(-1, &tcp, &n_tcp);
        if (r >= 0)
                r = kb_sockdiag_unix_list(-1, &unix_list, &n_unix);
        if (r < 0) {
                snprintf(why, why_size, "cannot list the sockets of kbound's network namespace: %s", strerror(-r));
                return r;
        }
        _cleanup_json_ json_object *held = NULL, *own = NULL;
        r = own_sockets_of(proc_root, holder, &held);
        if (r >= 0)
                r = own_sockets_of(proc_root, getpid(), &own);
        if (r < 0) {
                snprintf(why, why_size, "cannot read the descriptors of pid %d: %s", (int) holder, strerror(-r));
                return r;
        }
        char name[32];
        pid_t ppid;
        process_of(proc_root, holder, name, sizeof name, &ppid);
        /* Packets carried into another network namespace through a TUN/TAP device (slirp4netns). */
        if (json_object_object_get_ex(held, TUN_DEVICE, NULL)) {
                snprintf(
                        why, why_size,
                        "the far end of kbound's connection to %s is held by pid %d (%s), which holds a TUN/TAP device "
                        "(" TUN_DEVICE "): it carries kbound's connections into another network namespace (a port "
                        "forward), it is not the kernel",
                        ends[0].what, (int) holder, name);
                return -EPERM;
        }
        /* kbound's TCP connections end in its own network namespace: a holder in another one holds a
         * socket made outside it (a proxy that entered it, or one handed in). */
        bool same_net = in_own_netns(proc_root, holder);
        if (tcp_ends && !same_net) {
                snprintf(why, why_size,
                         "the far end of kbound's connection to %s is held by pid %d (%s), which is in another network "
                         "namespace than kbound's: a socket of kbound's network made outside it or handed in (a "
                         "proxy), not a kernel that shares the host's network",
                         ends[0].what, (int) holder, name);
                return -EPERM;
        }
        for (size_t i = 0; i < n_tcp; i++) {
                const kb_sockdiag_tcp *t = &tcp[i];
                if (!t->inode || t->state != TCP_ESTABLISHED || !is_own(held, t->inode) || is_end(ends, n, t->inode))
                        continue;
                const kb_sockdiag_tcp *peer = kb_sockdiag_tcp_peer(tcp, n_tcp, t);
                if (peer && peer->inode && (is_own(held, peer->inode) || is_own(own, peer->inode)))
                        continue;
                char from[80], to[80];
                kb_sockdiag_tcp_address(t, false, from, sizeof from);
                kb_sockdiag_tcp_address(t, true, to, sizeof to);
                if (peer && !peer->inode) {
                        /* Its other end waits in a listener's queue: who accepts it is not known yet. */
                        snprintf(why, why_size,
                                 "pid %d (%s), which holds the far end of kbound's connection to %s, holds a TCP "
                                 "connection from %s to %s that no process has accepted yet",
                                 (int) holder, name, ends[0].what, from, to);
                        return -ESRCH;
                }
                snprintf(
                        why, why_size,
                        "the far end of kbound's connection to %s is held by pid %d (%s), which holds a TCP connection "
                        "from %s to %s %s: it passes kbound's connections on (a forwarder), it is not the kernel",
                        ends[0].what, (int) holder, name, from, to,
                        peer ? "that another process answers"
                             : "whose other end is outside kbound's network namespace");
                return -ESRCH;
        }
        for (size_t i = 0; i < n_unix; i++) {
                const kb_sockdiag_unix *u = &unix_list[i];
                if (!u->peer || u->type == SOCK_DGRAM || !is_own(held, u->inode) || is_end(ends, n, u->inode) ||
                    is_own(held, u->peer) || is_own(own, u->peer))
                        continue;
                const kb_sockdiag_unix *peer = kb_sockdiag_find(unix_list, n_unix, u->peer);
                snprintf(why, why_size,
                         "the far end of kbound's connection to %s is held by pid %d (%s), which holds a unix "
                         "connection (socket:[%u]) to socket:[%u]%s%.*s, held by another process: it passes kbound's "
                         "connections on (a forwarder), it is not the kernel",
                         ends[0].what, (int) holder, name, u->inode, u->peer,
                         peer && kb_sockdiag_is_path(peer) ? " at " : "",
                         peer && kb_sockdiag_is_path(peer) ? (int) peer->name_len : 0, peer ? peer->name : "");
                return -ESRCH;
        }
        /* In kbound's network namespace every socket it holds is in these tables; one that is not is
         * another namespace's (made there, or handed in: a way through to it), or of a kind kbound
         * does not trace here (UDP, raw, netlink): either may carry the connections on. */
        uint32_t other = same_net ? unlisted_socket(held, tcp, n_tcp, unix_list, n_unix) : 0;
        if (other) {
                snprintf(why, why_size,
                         "the far end of kbound's connection to %s is held by pid %d (%s), which also holds "
                         "socket:[%u], in neither the TCP nor the unix table of kbound's network namespace (a socket "
                         "of another namespace, or of a kind not traced here): it may carry the connections on, so it "
                         "is not taken for the kernel",
                         ends[0].what, (int) holder, name, other);
                return -ESRCH;
        }
        return 0;
}

/* Who holds each end (every descriptor table of proc_root kbound may read), then the one holder of
 * them all, a descendant of launcher (launcher itself included; 0: not asked). Returns 0 with
 * *ret_pid, -ESRCH (an end held by none, or by two), -EPERM (ends held by different processes, or a
 * holder outside the launcher's tree), -errno; why says which, naming what was found. */
static int one_holder(const char *proc_root, far_end *ends, size_t n, bool tcp_ends, pid_t launcher, pid_t *ret_pid,
                      char *why, size_t why_size) {
        seen s = {.ends = ends, .n = n};
        DIR *d = opendir(proc_root);
        if (!d)
                return -errno;
        struct dirent *de;
        while ((de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0 || pid > INT_MAX || pid == getpid())
                        continue;
                s.pid = (pid_t) pid;
                /* Gone, or a table kbound may not read: such a holder is "none found" below. */
                (void) kb_inspect_fd_targets(proc_root, s.pid, end_seen, &s);
        }
        closedir(d);
        pid_t kernel = 0;
        for (size_t i = 0; i < n; i++) {
                char name[32], other[32];
                pid_t ppid;
                far_end *e = &ends[i];
                if (e->holder == 0) {
                        snprintf(why, why_size,
                                 "the far end of kbound's connection to %s (socket:[%u]) is held by no process the "
                                 "host can read",
                                 e->what, e->inode);
                        return -ESRCH;
                }
                process_of(proc_root, e->holder, name, sizeof name, &ppid);
                if (e->second) {
                        process_of(proc_root, e->second, other, sizeof other, &ppid);
                        snprintf(why, why_size,
                                 "the far end of kbound's connection to %s is held by more than one process (pid %d "
                                 "(%s) and pid %d (%s))",
                                 e->what, (int) e->holder, name, (int) e->second, other);
                        return -ESRCH;
                }
                if (launcher > 0 && !kb_inspect_descends_from(proc_root, e->holder, launcher)) {
                        snprintf(why, why_size,
                                 "the far end of kbound's connection to %s is held by pid %d (%s), not by a process "
                                 "of the wrapper's tree (kbound started pid %d)",
                                 e->what, (int) e->holder, name, (int) launcher);
                        return -EPERM;
                }
                if (kernel && e->holder != kernel) {
                        process_of(proc_root, kernel, other, sizeof other, &ppid);
                        snprintf(why, why_size,
                                 "the far ends of kbound's connections are held by different processes (pid %d (%s) "
                                 "and pid %d (%s), the latter for %s)",
                                 (int) kernel, other, (int) e->holder, name, e->what);
                        return -EPERM;
                }
                kernel = e->holder;
        }
        int r = passes_on(proc_root, kernel, tcp_ends, ends, n, why, why_size);
        if (r < 0)
                return r;
        *ret_pid = kernel;
        return 0;
}

/* The socket files in dir (at most max), into files. Returns how many, or -errno. */
static int socket_files(const char *dir, sock_file *files, size_t max) {
        DIR *d = opendir(dir);
        if (!d)
                return -errno;
        size_t n = 0;
        struct dirent *de;
        while (n < max && (de = readdir(d))) {
                struct stat st;
                if (de->d_name[0] != '.' && fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISSOCK(st.st_mode))
                        files[n++] = (sock_file){st.st_dev, (uint32_t) st.st_ino};
        }
        closedir(d);
        return (int) n;
}

int kb_inspect_kernel_holder(const char *proc_root, const char *socket_dir, pid_t launcher, pid_t *ret_pid,
                             size_t *ret_connections, char *why, size_t why_size) {
        sock_file files[16];
        int nf = socket_files(socket_dir, files, 16);
        if (nf < 0) {
                snprintf(why, why_size, "cannot read the kernel's socket folder %s: %s", socket_dir, strerror(-nf));
                return nf;
        }
        _cleanup_free_ kb_sockdiag_unix *list = NULL;
        size_t n = 0;
        int r = kb_sockdiag_unix_list(-1, &list, &n);
        if (r < 0) {
                snprintf(why, why_size, "cannot list kbound's unix sockets (sock_diag): %s", strerror(-r));
                return r;
        }
        _cleanup_json_ json_object *own = NULL;
        r = own_sockets(proc_root, &own, why, why_size);
        if (r < 0)
                return r;
        /* The other end of each of kbound's sockets that is bound to a file of the kernel's folder. */
        far_end ends[HOLDERS_MAX];
        size_t n_ends = 0;
        for (size_t i = 0; i < n && n_ends < HOLDERS_MAX; i++) {
                if (!list[i].peer || !is_own(own, list[i].inode))
                        continue;
                const kb_sockdiag_unix *peer = kb_sockdiag_find(list, n, list[i].peer);
                for (int f = 0; peer && peer->has_file && f < nf; f++)
                        if (peer->file_dev == files[f].dev && peer->file_ino == files[f].ino) {
                                ends[n_ends] = (far_end){.inode = peer->inode};
                                snprintf(ends[n_ends].what, sizeof ends[n_ends].what, "%.*s", (int) peer->name_len,
                                         peer->name);
                                n_ends++;
                                break;
                        }
        }
        *ret_connections = n_ends;
        if (n_ends == 0) {
                snprintf(why, why_size, "kbound has no connection to a socket of %s", socket_dir);
                return -ENOENT;
        }
        return one_holder(proc_root, ends, n_ends, false, launcher, ret_pid, why, why_size);
}

static bool port_in(const int *ports, size_t n, unsigned port) {
        for (size_t i = 0; i < n; i++)
                if (ports[i] > 0 && (unsigned) ports[i] == port)
                        return true;
        return false;
}

int kb_inspect_kernel_holder_tcp(const char *proc_root, const int *ports, size_t n_ports, pid_t launcher,
                                 pid_t *ret_pid, size_t *ret_connections, char *why, size_t why_size) {
        _cleanup_free_ kb_sockdiag_tcp *list = NULL;
        size_t n = 0;
        int r = kb_sockdiag_tcp_list(-1, &list, &n);
        if (r < 0) {
                snprintf(why, why_size, "cannot list the TCP sockets of kbound's network namespace (sock_diag): %s",
                         strerror(-r));
                return r;
        }
        _cleanup_json_ json_object *own = NULL;
        r = own_sockets(proc_root, &own, why, why_size);
        if (r < 0)
                return r;
        /* Each of kbound's connections to one of the kernel's ports on the loopback, and the socket
         * of the same table whose addresses are its own crossed: the end the kernel accepted. */
        far_end ends[HOLDERS_MAX];
        size_t n_ends = 0;
        for (size_t i = 0; i < n && n_ends < HOLDERS_MAX; i++) {
                const kb_sockdiag_tcp *t = &list[i];
                if (!t->inode || t->state != TCP_ESTABLISHED || !kb_sockdiag_tcp_loopback(t, true) ||
                    !port_in(ports, n_ports, t->remote_port) || !is_own(own, t->inode))
                        continue;
                const kb_sockdiag_tcp *peer = kb_sockdiag_tcp_peer(list, n, t);
                far_end *e = &ends[n_ends++];
                *e = (far_end){.inode = peer ? peer->inode : 0};
                kb_sockdiag_tcp_address(t, true, e->what, sizeof e->what);
                if (!peer) {
                        snprintf(why, why_size,
                                 "kbound's connection to %s has no other end in the TCP table of kbound's network "
                                 "namespace",
                                 e->what);
                        return -ESRCH;
                }
                if (!peer->inode) {
                        /* Not accepted yet (in its listener's queue): no process holds it so far. */
                        snprintf(why, why_size,
                                 "the far end of kbound's connection to %s is not accepted by any process yet",
                                 e->what);
                        return -ESRCH;
                }
        }
        *ret_connections = n_ends;
        if (n_ends == 0) {
                snprintf(why, why_size,
                         "kbound has no established TCP connection to the kernel's ports on the loopback");
                return -ENOENT;
        }
        return one_holder(proc_root, ends, n_ends, true, launcher, ret_pid, why, why_size);
}

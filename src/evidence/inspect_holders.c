/* inspect_holders.c: the sandbox's namespaces, pipes and sockets as held from outside it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"

/* Whether pid runs the program whose inode self is (stat through /proc/<pid>/exe). */
static bool same_exe(const char *proc_root, pid_t pid, const struct stat *self) {
        char path[PATH_MAX];
        struct stat st;
        snprintf(path, sizeof path, "%s/%d/exe", proc_root, (int) pid);
        return stat(path, &st) == 0 && st.st_dev == self->st_dev && st.st_ino == self->st_ino;
}

/* Whether pid is a fork of another kbound: named so, and running the very program its parent
 * runs (a look's helper of a second kbound on the host, an installed or another build: two CI
 * jobs on one machine). Such a helper is confirmed like one of this kbound's own; one that stays
 * is a holder all the same. When kbound is not root, another user's kbound (root's, whose look
 * enters every sandbox) cannot have its program read: the helper and its parent are then known
 * by their names, both "kbound", which only shortens what the confirmation forgives to the same
 * moments it forgives this kbound's own helpers. */
static bool other_kbound_fork(const char *proc_root, const proc_entry *e) {
        if (strcmp(e->comm, "kbound") != 0 || e->ppid <= 1)
                return false;
        char path[PATH_MAX];
        struct stat mine, theirs;
        snprintf(path, sizeof path, "%s/%d/exe", proc_root, (int) e->pid);
        bool child_read = stat(path, &mine) == 0;
        int child_errno = errno;
        snprintf(path, sizeof path, "%s/%d/exe", proc_root, (int) e->ppid);
        bool parent_read = stat(path, &theirs) == 0;
        int parent_errno = errno;
        if (child_read && parent_read)
                return mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
        if ((!child_read && child_errno != EACCES && child_errno != EPERM) ||
            (!parent_read && parent_errno != EACCES && parent_errno != EPERM))
                return false; /* gone, or not readable for a reason other than being another user's */
        snprintf(path, sizeof path, "%s/%d/comm", proc_root, (int) e->ppid);
        char comm[32] = "";
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, comm, sizeof comm - 1) : -1;
        if (n <= 0)
                return false;
        comm[n] = '\0';
        comm[strcspn(comm, "\n")] = '\0';
        return strcmp(comm, "kbound") == 0;
}

/* Something outside seen holding one of the sandbox's namespaces in a way a kbound look also does
 * for a moment (a look enters every network namespace of the host: its thread holds a descriptor
 * of it, or, unprivileged, a short-lived fork of kbound is in it): counted only if a second read,
 * at least NS_CONFIRM_MS later, finds it still there. */
#define NS_CONFIRM_MS 20
/* A fork of kbound's own program (a look's sock_diag helper, the launch's mount helper) lives a
 * few milliseconds, longer on a loaded machine or in a sanitizer build: it is read again until
 * it is gone, for up to this long, before it counts as a holder. */
#define NS_HELPER_CONFIRM_MS KB_INSPECT_REREAD_MS
#define NS_CANDIDATES_MAX 256
typedef struct ns_candidate {
        size_t proc;      /* index into the look's process list */
        pid_t tid;        /* the thread whose link or table it is (the process's own pid: the main one) */
        int fd;           /* the descriptor; -1: the thread is in the namespace */
        const char *type; /* namespaces[] name, or kb_inspect_nsfs_target's */
        uint64_t ino;
        bool helper; /* a fork of kbound's program in the namespace (a look's or a launch's helper) */
} ns_candidate;

typedef struct ns_fd_walk {
        const ns_set *sandbox;
        size_t proc;
        const proc_entry *entry;
        pid_t tid;
        ns_candidate *candidates;
        size_t n_candidates;
        int64_t dropped;              /* candidates past NS_CANDIDATES_MAX: judged as holders at once */
        json_object *channels_wanted; /* the sandbox's "pipe:[N]" and "socket:[N]" targets (keys) */
        json_object *netns_sockets;   /* every "socket:[N]" of the sandbox's network namespaces (keys) */
        json_object *channels;        /* those a process outside holds too */
        shared_set *shared;           /* what the sandbox shares through memory or its own files */
        const char *proc_root;
        bool entry_helper; /* entry is a fork of kbound's program or another kbound's:
                            * what it holds is confirmed like a look's helper's */
        size_t *retry;     /* indexes of processes whose tables were not all read */
        size_t n_retry;
} ns_fd_walk;
#define NS_RETRY_MAX 64

/* ns_candidate.type of a socket of the sandbox's network namespace held outside. */
static const char candidate_socket[] = "socket";

/* An OUTSIDE_CHANNEL of the look's outside_channels: target, held as fd by process e (thread tid
 * when not its main one); netns: a socket of the sandbox's network that no sandbox process holds. */
static int push_outside_channel(json_object *channels, const proc_entry *e, pid_t tid, int fd, const char *target,
                                bool netns) {
        json_object *c = json_object_new_object();
        if (!c || kb_fact_set_str(c, FACT_OUTSIDE_CHANNEL_TARGET, target) < 0 ||
            kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_PID, e->pid) < 0 ||
            kb_fact_set_str(c, FACT_OUTSIDE_CHANNEL_NAME, e->comm) < 0 ||
            kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_FD, fd) < 0 ||
            (tid != e->pid && kb_fact_set_int(c, FACT_OUTSIDE_CHANNEL_THREAD, tid) < 0) ||
            (netns && kb_fact_set_bool(c, FACT_OUTSIDE_CHANNEL_NETNS, true) < 0)) {
                json_object_put(c);
                return -ENOMEM;
        }
        return kb_inspect_push(channels, c);
}

/* A candidate of w: thread w->tid (fd -1: in it, as link says) or its descriptor fd holds the
 * sandbox's object ino. */
static void add_candidate(ns_fd_walk *w, int fd, const char *type, uint64_t ino) {
        if (w->n_candidates == NS_CANDIDATES_MAX) {
                w->dropped++;
                return;
        }
        w->candidates[w->n_candidates++] = (ns_candidate){
                .proc = w->proc, .tid = w->tid, .fd = fd, .type = type, .ino = ino, .helper = w->entry_helper};
}

/* One descriptor of a process outside: an nsfs file of one of the sandbox's namespaces holds that
 * namespace alive and lets whoever has it join it (setns), whether or not the process is in it (a
 * candidate, confirmed later); a pipe or socket a sandbox process holds too is a channel between
 * them (the launch side's are the launcher facts' "outside_inodes", judged with what kbound handed
 * bwrap; no look ever holds one). */
static int ns_fd_seen(int fd, const char *target, void *userdata) {
        ns_fd_walk *w = userdata;
        if (target[0] == '/' || strncmp(target, "anon_inode:", 11) == 0)
                /* An anonymous object (the same open file) or a file (its device and inode) the
                 * sandbox shares (inspect_shared.c); kbound's own side's are the launcher facts'
                 * (another sandbox of the run is looked at as any host process). */
                return w->entry->launch && !w->entry->run_sandbox
                               ? 0
                               : kb_inspect_shared_fd(w->shared, w->proc_root, w->entry, w->tid, fd, target,
                                                      w->channels);
        if (!w->entry->launch && json_object_object_get_ex(w->channels_wanted, target, NULL)) {
                if (json_object_array_length(w->channels) >= NS_HOLDERS_MAX)
                        return 0;
                return push_outside_channel(w->channels, w->entry, w->tid, fd, target, false);
        }
        uint64_t ino = 0;
        const char *type = kb_inspect_nsfs_target(target, &ino);
        if (json_object_object_get_ex(w->netns_sockets, target, NULL)) {
                /* A socket of the sandbox's network namespace in a process outside (made there by a
                 * process that entered it, then left): a way in. A look's sock_diag socket is
                 * one for a moment: confirmed later. */
                type = candidate_socket;
                ino = strtoull(target + 8, NULL, 10);
        } else if (!type || !kb_inspect_ns_set_has(w->sandbox, ino))
                return 0;
        add_candidate(w, fd, type, ino);
        return 0;
}

/* An NS_HOLDER: pid, name, ppid, ns, inode; fd when held by a descriptor, thread when it is a
 * thread's (other than the main one). */
static int push_holder(json_object *holders, const proc_entry *e, pid_t tid, int fd, const char *type, uint64_t ino) {
        json_object *h = json_object_new_object();
        if (!h || kb_fact_set_int(h, FACT_NS_HOLDER_PID, e->pid) < 0 ||
            kb_fact_set_str(h, FACT_NS_HOLDER_NAME, e->comm) < 0 ||
            kb_fact_set_int(h, FACT_NS_HOLDER_PPID, e->ppid) < 0 || kb_fact_set_str(h, FACT_NS_HOLDER_NS, type) < 0 ||
            kb_fact_set_int(h, FACT_NS_HOLDER_INODE, (int64_t) ino) < 0 ||
            (fd >= 0 && kb_fact_set_int(h, FACT_NS_HOLDER_FD, fd) < 0) ||
            (tid != e->pid && kb_fact_set_int(h, FACT_NS_HOLDER_THREAD, tid) < 0)) {
                json_object_put(h);
                return -ENOMEM;
        }
        return kb_inspect_push(holders, h);
}

/* A namespace link of thread w->tid (another thread's every link; the main thread's
 * *_for_children: after setns(CLONE_NEWPID) each child it starts is born in the sandbox's pid
 * namespace): one of the sandbox's is a candidate (a kbound look's thread is in a network
 * namespace for a moment). */
static int thread_link_seen(const char *link, uint64_t ino, void *userdata) {
        ns_fd_walk *w = userdata;
        if (kb_inspect_ns_set_has(w->sandbox, ino))
                add_candidate(w, -1, link, ino);
        return 0;
}

/* The other threads of a process outside: each one's namespace links (a thread may setns on its
 * own: /proc/<pid>/ns shows the main thread's only; its *_for_children too) as candidates, and each
 * descriptor table it does not share with the main thread (unshare(CLONE_FILES); kcmp tells)
 * walked like the main one. Also for a zombie main thread, whose links and table are gone while
 * other threads live on. Returns 0, -ENOMEM, or -errno when a table could not be read (counted by
 * the caller). */
static int other_threads(const kb_inspect_target *t, ns_fd_walk *w, bool *ret_unreadable) {
        const proc_entry *e = w->entry;
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%d/task", t->proc_root, (int) e->pid);
        DIR *d = opendir(dir);
        if (!d) {
                if (errno != ENOENT) /* not gone meanwhile: unread */
                        *ret_unreadable = true;
                return 0;
        }
        int r = 0;
        struct dirent *de;
        while (r >= 0 && (de = readdir(d))) {
                char *end;
                long tid = strtol(de->d_name, &end, 10);
                if (*end || tid <= 0 || tid == e->pid)
                        continue;
                w->tid = (pid_t) tid;
                if (kb_inspect_ns_links(t->proc_root, e->pid, (pid_t) tid, false, thread_link_seen, w) < 0)
                        *ret_unreadable = true;
                /* a working directory or root of its own (unshare(CLONE_FS)) in the sandbox's files */
                if (!e->launch && syscall(SYS_kcmp, e->pid, (pid_t) tid, KCMP_FS, 0, 0) != 0 &&
                    kb_inspect_shared_links(w->shared, t->proc_root, e, (pid_t) tid, w->channels) < 0)
                        return -ENOMEM;
                if (syscall(SYS_kcmp, e->pid, (pid_t) tid, KCMP_FILES, 0, 0) == 0) {
                        w->tid = e->pid;
                        continue; /* the main thread's table, walked already */
                }
                char fds[PATH_MAX + 32];
                snprintf(fds, sizeof fds, "%s/%ld/fd", dir, tid);
                r = kb_inspect_fd_targets_at(fds, ns_fd_seen, w);
                w->tid = e->pid;
                if (r < 0 && r != -ENOMEM) {
                        *ret_unreadable = true;
                        r = 0;
                }
        }
        closedir(d);
        return r;
}

/* What the walk of the processes outside counts (the look's NS_OUTSIDE). */
typedef struct holder_counts {
        int64_t read, unreadable, found, own_helpers, fd_read, fd_unreadable, transient;
        int64_t reread; /* of fd_read: read in full only on a second try (reread_unreadable) */
} holder_counts;

/* kbound's own namespaces and the user namespaces above its own, into own: every host process
 * shares those above kbound's user namespace. Returns 0, -ENOMEM, or -errno when they cannot be
 * read. */
static int own_namespaces(const kb_inspect_target *t, ns_set *own) {
        _cleanup_json_ json_object *own_chain = json_object_new_array();
        if (!own_chain)
                return -ENOMEM;
        uint64_t mine[NS_TYPES];
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%d/ns/user", t->proc_root, (int) getpid());
        _cleanup_close_ int user_fd = open(path, O_RDONLY | O_CLOEXEC);
        int r = kb_inspect_ns_inodes_all(t->proc_root, getpid(), mine);
        if (r >= 0)
                r = user_fd < 0 ? -errno : kb_inspect_owner_chain(user_fd, true, own_chain);
        if (r < 0)
                return r;
        for (size_t i = 0; i < NS_TYPES; i++)
                (void) kb_inspect_ns_set_add(own, mine[i], NULL);
        for (size_t i = 0; i < json_object_array_length(own_chain); i++)
                (void) kb_inspect_ns_set_add(
                        own, (uint64_t) json_object_get_int64(json_object_array_get_idx(own_chain, i)), NULL);
        return 0;
}

/* The sandbox's namespaces into sandbox and snap's sandbox_namespaces: those of its processes and
 * the user namespaces above them, less own. Too many is noted in errors. -ENOMEM only. */
static int sandbox_namespaces(json_object *processes, const ns_set *own, ns_set *sandbox, json_object *snap,
                              json_object *errors) {
        int r = 0;
        for (size_t p = 0; r >= 0 && p < json_object_array_length(processes); p++) {
                json_object *proc = json_object_array_get_idx(processes, p),
                            *ns = kb_fact_map_of(proc, FACT_PROCESS_NS),
                            *owners = kb_fact_map_of(proc, FACT_PROCESS_NS_OWNERS);
                if (ns) {
                        json_object_object_foreach(ns, name, ino) {
                                (void) name;
                                r = r < 0 ? r
                                          : kb_inspect_ns_set_add(sandbox, (uint64_t) json_object_get_int64(ino), own);
                        }
                }
                if (owners) {
                        json_object_object_foreach(owners, oname, chain) {
                                (void) oname;
                                for (size_t c = 0; r >= 0 && c < json_object_array_length(chain); c++)
                                        r = kb_inspect_ns_set_add(
                                                sandbox,
                                                (uint64_t) json_object_get_int64(json_object_array_get_idx(chain, c)),
                                                own);
                        }
                }
        }
        if (r < 0 && kb_inspect_note(errors, WHAT_TOO_MANY_NAMESPACES, NULL, r) < 0)
                return -ENOMEM;
        json_object *listed = json_object_new_array();
        if (kb_fact_set_arr(snap, FACT_LOOK_SANDBOX_NAMESPACES, listed) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < sandbox->n; i++)
                if (kb_inspect_push(listed, json_object_new_int64((int64_t) sandbox->ino[i])) < 0)
                        return -ENOMEM;
        return 0;
}

/* The "pipe:[N]" and "socket:[N]" targets of the sandbox processes' descriptors, as keys of wanted.
 * -ENOMEM only. */
static int channels_wanted(json_object *processes, json_object *wanted) {
        for (size_t p = 0; p < json_object_array_length(processes); p++) {
                json_object *fds = kb_fact_arr_of(json_object_array_get_idx(processes, p), FACT_PROCESS_FDS);
                for (size_t i = 0; fds && i < json_object_array_length(fds); i++) {
                        const char *target = kb_fact_str_of(json_object_array_get_idx(fds, i), FACT_FD_TARGET);
                        if (target && (strncmp(target, "pipe:[", 6) == 0 || strncmp(target, "socket:[", 8) == 0) &&
                            json_object_object_add(wanted, target, NULL) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* Every socket of the sandbox's network namespaces, when this look read their tables (snap's
 * net), as "socket:[N]" keys of netns_sockets. -ENOMEM only. */
static int netns_socket_targets(json_object *snap, json_object *netns_sockets) {
        json_object *nets = kb_fact_map_of(snap, FACT_LOOK_NET);
        if (nets) {
                json_object_object_foreach(nets, netns, table) {
                        (void) netns;
                        json_object *unix_list = kb_fact_arr_of(table, FACT_NET_UNIX),
                                    *inodes = kb_fact_arr_of(table, FACT_NET_SOCKET_INODES);
                        char key[40];
                        for (size_t i = 0; unix_list && i < json_object_array_length(unix_list); i++) {
                                snprintf(key, sizeof key, "socket:[%lld]",
                                         (long long) kb_fact_int_or(json_object_array_get_idx(unix_list, i),
                                                                    FACT_UNIX_ENTRY_INODE, -1));
                                if (json_object_object_add(netns_sockets, key, NULL) < 0)
                                        return -ENOMEM;
                        }
                        for (size_t i = 0; inodes && i < json_object_array_length(inodes); i++) {
                                snprintf(key, sizeof key, "socket:[%lld]",
                                         (long long) json_object_get_int64(json_object_array_get_idx(inodes, i)));
                                if (json_object_object_add(netns_sockets, key, NULL) < 0)
                                        return -ENOMEM;
                        }
                }
        }
        return 0;
}

/* The descriptor tables of w->entry: its main thread's (ns_fd_seen), and its other threads'
 * (other_threads). *ret_unreadable: some were not read. -ENOMEM only. */
static int read_tables(const kb_inspect_target *t, ns_fd_walk *w, bool *ret_unreadable) {
        const proc_entry *e = w->entry;
        if (e->state != 'Z') {
                w->tid = e->pid;
                if (kb_inspect_ns_links(t->proc_root, e->pid, e->pid, true, thread_link_seen, w) < 0)
                        *ret_unreadable = true;
                int r = kb_inspect_fd_targets(t->proc_root, e->pid, ns_fd_seen, w);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        *ret_unreadable = true;
        }
        /* threads 0: the count could not be parsed, so the threads are read too */
        if ((e->threads != 1 || e->state == 'Z') && other_threads(t, w, ret_unreadable) < 0)
                return -ENOMEM;
        return 0;
}

/* Whether e is a fork of kbound's program (its parent runs it too: only kbound starts one, a look's
 * helper) or of another kbound's (other_kbound_fork): what it holds, its descriptors and threads
 * as much as its main thread, is confirmed like a look's moments and counts if it stays. */
static bool kbound_fork(const kb_inspect_target *t, const proc_entry *e) {
        struct stat self_exe;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%d/exe", t->proc_root, (int) getpid());
        if (stat(path, &self_exe) == 0 && same_exe(t->proc_root, e->pid, &self_exe) &&
            same_exe(t->proc_root, e->ppid, &self_exe))
                return true;
        return other_kbound_fork(t->proc_root, e);
}

/* The processes outside whose namespaces were read but not all of whose descriptors were, read
 * again for up to NS_HELPER_CONFIRM_MS in all: a process of the same user is unreadable for a
 * moment while it changes its credentials (another bwrap setting up its sandbox is not dumpable
 * until its program runs), or it exited between the two reads. One read in full then counts as
 * read, one gone as transient; one still unreadable stays so (it may hold anything). -ENOMEM
 * only; *last_seen moves to now if the reads found candidates. */
static int reread_unreadable(const kb_inspect_target *t, const proc_entry *procs, ns_fd_walk *w, holder_counts *c,
                             int64_t *last_seen) {
        size_t candidates_from = w->n_candidates;
        int64_t until = kb_now_ms() + NS_HELPER_CONFIRM_MS;
        for (size_t k = 0; k < w->n_retry; k++) {
                const proc_entry *e = &procs[w->retry[k]];
                w->proc = w->retry[k];
                w->entry = e;
                w->entry_helper = kbound_fork(t, e);
                w->tid = e->pid;
                for (;;) {
                        char path[PATH_MAX];
                        snprintf(path, sizeof path, "%s/%d", t->proc_root, (int) e->pid);
                        if (access(path, F_OK) < 0 && errno == ENOENT) {
                                c->transient++;
                                break;
                        }
                        bool unreadable = false;
                        if (read_tables(t, w, &unreadable) < 0)
                                return -ENOMEM;
                        if (!unreadable) {
                                c->fd_read++;
                                c->reread++;
                                break;
                        }
                        if (kb_now_ms() >= until) {
                                c->fd_unreadable++;
                                break;
                        }
                        (void) poll(NULL, 0, 10);
                }
        }
        if (w->n_candidates > candidates_from)
                *last_seen = kb_now_ms(); /* confirmed NS_CONFIRM_MS later, as the walk's */
        return 0;
}

/* Walks every process outside the sandbox but kbound's own: its descriptor tables and threads
 * (ns_fd_seen, other_threads), and the namespaces of its main thread. A holder seen for sure goes
 * to holders at once; what a look also does for a moment becomes a candidate of w, and
 * *ret_last_seen the time the last one was seen. -ENOMEM only. */
static int walk_outside(const kb_inspect_target *t, const proc_entry *procs, size_t n, ns_fd_walk *w,
                        json_object *holders, holder_counts *c, int64_t *ret_last_seen) {
        const char *const *ns_names = kb_inspect_namespaces();
        int64_t last_seen = 0;
        for (size_t i = 0; i < n; i++) {
                const proc_entry *e = &procs[i];
                if (e->member || e->ns_read == 0 || e->pid == getpid())
                        continue;
                if (e->ns_read < 0) {
                        c->unreadable++;
                        continue;
                }
                c->read++;
                size_t candidates_from = w->n_candidates;
                w->proc = i;
                w->entry = e;
                /* Only a process named kbound can be one: the others cost no exe reads. */
                bool helper = strcmp(e->comm, "kbound") == 0 && kbound_fork(t, e);
                w->entry_helper = helper;
                w->tid = e->pid;
                bool table_unreadable = false;
                if (read_tables(t, w, &table_unreadable) < 0 ||
                    ((!e->launch || e->run_sandbox) &&
                     (kb_inspect_shared_maps(w->shared, t->proc_root, e, w->channels) < 0 ||
                      kb_inspect_shared_links(w->shared, t->proc_root, e, e->pid, w->channels) < 0)))
                        return -ENOMEM;
                if (!table_unreadable)
                        c->fd_read++;
                else if (w->n_retry < NS_RETRY_MAX)
                        w->retry[w->n_retry++] = i;
                else
                        c->fd_unreadable++;
                /* The main thread in one of the sandbox's namespaces: a holder, unless it is a fork of
                 * kbound's program (its parent runs it too: only kbound starts one, a look's helper
                 * when kbound is not root) or of another kbound's (other_kbound_fork), which is
                 * confirmed like a look's moments: it counts if it stays. */
                for (size_t k = 0; k < NS_TYPES; k++) {
                        if (!e->ns[k] || !kb_inspect_ns_set_has(w->sandbox, e->ns[k]))
                                continue;
                        /* This kbound's own fork (a look or a launch of another of its kernels, in
                         * another thread): its own code, never a holder. */
                        if (helper && e->ppid == getpid())
                                continue;
                        if (helper) {
                                w->tid = e->pid;
                                add_candidate(w, -1, ns_names[k], e->ns[k]); /* past its room: a holder */
                                continue;
                        }
                        if (c->found++ < NS_HOLDERS_MAX &&
                            push_holder(holders, e, e->pid, -1, ns_names[k], e->ns[k]) < 0)
                                return -ENOMEM;
                }
                if (helper)
                        c->own_helpers++;
                if (w->n_candidates > candidates_from)
                        last_seen = kb_now_ms();
        }
        *ret_last_seen = last_seen;
        return 0;
}

/* The objects process e's candidates (from first on) were seen holding, each once, into objects
 * (room for NS_CANDIDATES_MAX); *ret_helper: one is a fork of kbound's. Returns how many. */
static size_t objects_of(const ns_fd_walk *w, size_t first, kb_held *objects, bool *ret_helper) {
        size_t n = 0;
        *ret_helper = false;
        for (size_t j = first; j < w->n_candidates; j++) {
                const ns_candidate *cand = &w->candidates[j];
                if (cand->proc != w->candidates[first].proc)
                        continue;
                *ret_helper = *ret_helper || cand->helper;
                bool socket = cand->type == candidate_socket, known = false;
                for (size_t k = 0; k < n && !known; k++)
                        known = objects[k].socket == socket && objects[k].ino == cand->ino;
                if (!known)
                        objects[n++] = (kb_held){.socket = socket, .ino = cand->ino};
        }
        return n;
}

/* The candidates of w read again, at least NS_CONFIRM_MS after the last was seen, by the object:
 * a process that still holds what it was seen holding, at any descriptor number, through any
 * descriptor table or thread (kb_inspect_still_holds), is a holder (into holders) or, for a socket
 * of the sandbox's network, an outside channel (into w->channels), named where it holds it now;
 * only one that let go of it, or is gone, is counted as transient (each candidate). A fork of
 * kbound's is read again until it lets go, for up to NS_HELPER_CONFIRM_MS. A process that cannot
 * be read again in full is proven nothing: each of its objects counts where it was seen. One read
 * of each process that holds candidates: the cost is bounded by the first walk's. -ENOMEM only. */
static int confirm_candidates(const kb_inspect_target *t, const proc_entry *procs, const ns_fd_walk *w,
                              int64_t last_seen, json_object *holders, holder_counts *c) {
        /* Candidates past the table's room are holders at once: no pass rests on their number. */
        c->found += w->dropped;
        if (w->n_candidates == 0)
                return 0;
        int64_t wait = last_seen + NS_CONFIRM_MS - kb_now_ms();
        if (wait > 0)
                (void) poll(NULL, 0, (int) wait);
        _cleanup_free_ kb_held *objects = calloc(NS_CANDIDATES_MAX, sizeof *objects);
        _cleanup_free_ bool *done = calloc(w->n_candidates, sizeof *done);
        if (!objects || !done)
                return -ENOMEM;
        for (size_t i = 0; i < w->n_candidates; i++) {
                if (done[i])
                        continue;
                const proc_entry *e = &procs[w->candidates[i].proc];
                bool helper;
                size_t n = objects_of(w, i, objects, &helper);
                int r = kb_inspect_still_holds(t->proc_root, e->pid, objects, n);
                for (int64_t until = kb_now_ms() + NS_HELPER_CONFIRM_MS; helper && r == 0 && kb_now_ms() < until;) {
                        bool any = false;
                        for (size_t k = 0; k < n && !any; k++)
                                any = objects[k].found;
                        if (!any)
                                break;
                        (void) poll(NULL, 0, 5);
                        r = kb_inspect_still_holds(t->proc_root, e->pid, objects, n);
                }
                for (size_t j = i; j < w->n_candidates; j++) {
                        const ns_candidate *cand = &w->candidates[j];
                        if (done[j] || cand->proc != w->candidates[i].proc)
                                continue;
                        done[j] = true;
                        bool socket = cand->type == candidate_socket;
                        kb_held *o = NULL;
                        for (size_t k = 0; k < n && !o; k++)
                                if (objects[k].socket == socket && objects[k].ino == cand->ino)
                                        o = &objects[k];
                        if (r == -ESRCH || (r == 0 && !o->found)) {
                                c->transient++;
                                continue;
                        }
                        if (r == 0 && o->type == NULL)
                                continue; /* this object's holder is named already */
                        /* Where it holds it now, or, unread, where it was seen. */
                        pid_t tid = r == 0 ? o->tid : cand->tid;
                        int fd = r == 0 ? o->fd : cand->fd;
                        const char *type = r == 0 ? o->type : cand->type;
                        if (r == 0)
                                o->type = NULL; /* named once per process and object */
                        if (socket) {
                                /* never dropped (the candidates are bounded): boundary.network sees each one */
                                char target[40];
                                snprintf(target, sizeof target, "socket:[%llu]", (unsigned long long) cand->ino);
                                if (fd < 0)
                                        continue; /* a socket is held by a descriptor, never a link */
                                if (push_outside_channel(w->channels, e, tid, fd, target, true) < 0)
                                        return -ENOMEM;
                                continue;
                        }
                        if (c->found++ < NS_HOLDERS_MAX && push_holder(holders, e, tid, fd, type, cand->ino) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* The NS_OUTSIDE of the counts c; NULL if out of memory. */
static json_object *outside_counts(const holder_counts *c) {
        json_object *outside = json_object_new_object();
        if (!outside || kb_fact_set_int(outside, FACT_NS_OUTSIDE_READ, c->read) < 0 ||
            kb_fact_set_int(outside, FACT_NS_OUTSIDE_UNREADABLE, c->unreadable) < 0 ||
            kb_fact_set_int(outside, FACT_NS_OUTSIDE_KBOUND_HELPERS, c->own_helpers) < 0 ||
            kb_fact_set_int(outside, FACT_NS_OUTSIDE_TRANSIENT, c->transient) < 0 ||
            kb_fact_set_int(outside, FACT_NS_OUTSIDE_HOLDERS, c->found) < 0 ||
            kb_fact_set_int(outside, FACT_NS_OUTSIDE_FD_TABLES_READ, c->fd_read) < 0 ||
            kb_fact_set_int(outside, FACT_NS_OUTSIDE_FD_TABLES_UNREADABLE, c->fd_unreadable) < 0 ||
            kb_fact_set_int(outside, FACT_NS_OUTSIDE_FD_TABLES_READ_AGAIN, c->reread) < 0) {
                json_object_put(outside);
                return NULL;
        }
        return outside;
}

int kb_inspect_sandbox_ns_facts(const kb_inspect_target *t, json_object *processes, json_object *snap,
                                json_object *errors) {
        _cleanup_free_ ns_set *own = calloc(1, sizeof *own), *sandbox = calloc(1, sizeof *sandbox);
        if (!own || !sandbox)
                return -ENOMEM;
        int r = own_namespaces(t, own);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return kb_inspect_note(errors, WHAT_OWN_NAMESPACES, NULL, r);
        return sandbox_namespaces(processes, own, sandbox, snap, errors);
}

int kb_inspect_ns_holder_facts(const kb_inspect_target *t, const proc_entry *procs, size_t n, json_object *processes,
                               json_object *snap, json_object *errors) {
        _cleanup_free_ ns_set *sandbox = calloc(1, sizeof *sandbox);
        _cleanup_json_ json_object *holders = json_object_new_array();
        if (!sandbox || !holders)
                return -ENOMEM;
        /* the sandbox's namespaces as kb_inspect_sandbox_ns_facts listed them; none listed: kbound's
         * own could not be told apart, noted in errors already */
        json_object *listed = kb_fact_arr_of(snap, FACT_LOOK_SANDBOX_NAMESPACES);
        if (!listed)
                return 0;
        for (size_t i = 0; i < json_object_array_length(listed); i++)
                (void) kb_inspect_ns_set_add(
                        sandbox, (uint64_t) json_object_get_int64(json_object_array_get_idx(listed, i)), NULL);
        _cleanup_json_ json_object *wanted = json_object_new_object(), *netns_sockets = NULL;
        json_object *channels = json_object_new_array();
        _cleanup_free_ ns_candidate *candidates = calloc(NS_CANDIDATES_MAX, sizeof *candidates);
        _cleanup_free_ size_t *retry = calloc(NS_RETRY_MAX, sizeof *retry);
        if (!wanted || !candidates || !retry || kb_fact_set_arr(snap, FACT_LOOK_OUTSIDE_CHANNELS, channels) < 0 ||
            channels_wanted(processes, wanted) < 0)
                return -ENOMEM;
        netns_sockets = json_object_new_object();
        if (!netns_sockets || netns_socket_targets(snap, netns_sockets) < 0)
                return -ENOMEM;
        _cleanup_(kb_inspect_shared_free) shared_set *shared = NULL;
        if (kb_inspect_shared_new(processes, kb_fact_str_of(t->host, FACT_HOST_MEMFD_DEV), &shared) < 0 ||
            kb_inspect_shared_own(shared, snap) < 0 ||
            (kb_inspect_shared_truncated(shared) && kb_inspect_note(errors, WHAT_TOO_MANY_SHARED, NULL, E2BIG) < 0))
                return -ENOMEM;
        ns_fd_walk walk = {.sandbox = sandbox,
                           .candidates = candidates,
                           .channels_wanted = wanted,
                           .netns_sockets = netns_sockets,
                           .channels = channels,
                           .shared = shared,
                           .proc_root = t->proc_root,
                           .retry = retry};
        holder_counts counts = {0};
        int64_t last_seen = 0;
        if (walk_outside(t, procs, n, &walk, holders, &counts, &last_seen) < 0 ||
            reread_unreadable(t, procs, &walk, &counts, &last_seen) < 0 ||
            confirm_candidates(t, procs, &walk, last_seen, holders, &counts) < 0)
                return -ENOMEM;
        int64_t shared_transient = 0;
        if (kb_inspect_shared_confirm(shared, t->proc_root, channels, &shared_transient) < 0)
                return -ENOMEM;
        counts.transient += shared_transient;
        if (kb_fact_set_obj(snap, FACT_LOOK_NS_OUTSIDE, outside_counts(&counts)) < 0 ||
            kb_fact_set_arr(snap, FACT_LOOK_NS_HOLDERS, TAKE_PTR(holders)) < 0)
                return -ENOMEM;
        return 0;
}

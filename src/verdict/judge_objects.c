/* judge_objects.c: what a sandbox process holds that no path names (anonymous inodes, memory files),
 * and what the sandbox shares through memory or its own filesystems held outside it, for
 * boundary.descriptors: each passes only once the host has found its other ends and every one is
 * the sandbox's own; no kind is let through by its name. */
#include <inttypes.h>
#include <stdio.h>
#include "verdict/judge-internal.h"

static bool starts(const char *s, const char *prefix) {
        return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Whether ch (an OUTSIDE_CHANNEL) is the same open file as fd of p (kcmp's word: the same process,
 * the same descriptor table, the process's or the same thread's own, and the same number; a memory
 * object found by its device and inode is judge_shared_problems'). */
static bool same_descriptor(json_object *ch, json_object *p, json_object *fd) {
        int64_t spid, sfd;
        return !kb_fact_bool_of(ch, FACT_OUTSIDE_CHANNEL_OBJECT) &&
               kb_fact_int_of(ch, FACT_OUTSIDE_CHANNEL_SANDBOX_PID, &spid) &&
               kb_fact_int_of(ch, FACT_OUTSIDE_CHANNEL_SANDBOX_FD, &sfd) && judge_is_pid(p, spid) &&
               sfd == kb_fact_int_or(fd, FACT_FD_FD, -2) &&
               kb_fact_int_or(ch, FACT_OUTSIDE_CHANNEL_SANDBOX_TID, 0) == kb_fact_int_or(fd, FACT_FD_TID, 0);
}

/* Whether ch is bwrap's own status channel: the one eventfd its init (PID 1) reports PID 2's exit
 * through to the bwrap outside, which kbound spawned. A second such object shared with that
 * process is not bwrap's, and then neither is told apart: none is let through. */
static bool status_channel_like(json_object *launcher, json_object *ch) {
        int64_t holder, spawned;
        const char *target = kb_fact_str_of(ch, FACT_OUTSIDE_CHANNEL_TARGET);
        return target && strcmp(target, "anon_inode:[eventfd]") == 0 &&
               kb_fact_int_of(ch, FACT_OUTSIDE_CHANNEL_PID, &holder) &&
               kb_fact_int_of(launcher, FACT_LAUNCHER_SPAWNED, &spawned) && holder == spawned;
}

static bool bwrap_status_channel(json_object *launcher, json_object *p, json_object *ch) {
        if (judge_inner_pid(p) != 1 || !status_channel_like(launcher, ch))
                return false;
        json_object *shared = kb_fact_arr_of(launcher, FACT_LAUNCHER_SHARED_FILES);
        int64_t fd = kb_fact_int_or(ch, FACT_OUTSIDE_CHANNEL_SANDBOX_FD, -1);
        for (size_t i = 0; i < arr_len(shared); i++) {
                json_object *other = at(shared, i);
                if (status_channel_like(launcher, other) &&
                    (kb_fact_int_or(other, FACT_OUTSIDE_CHANNEL_SANDBOX_FD, -1) != fd ||
                     kb_fact_int_or(other, FACT_OUTSIDE_CHANNEL_SANDBOX_PID, -1) !=
                             kb_fact_int_or(ch, FACT_OUTSIDE_CHANNEL_SANDBOX_PID, -1)))
                        return false;
        }
        return true;
}

/* Why the same open file as fd is held outside the sandbox (the look's outside channels, or the
 * launch side's, kcmp), or NULL. */
static const char *held_outside(json_object *snap, json_object *p, json_object *fd, char *buf, size_t size) {
        json_object *launcher = kb_fact_obj_of(snap, FACT_LOOK_LAUNCHER);
        json_object *lists[] = {kb_fact_arr_of(snap, FACT_LOOK_OUTSIDE_CHANNELS),
                                kb_fact_arr_of(launcher, FACT_LAUNCHER_SHARED_FILES)};
        for (size_t l = 0; l < KB_ELEMENTSOF(lists); l++)
                for (size_t i = 0; i < arr_len(lists[l]); i++) {
                        json_object *ch = at(lists[l], i);
                        if (!same_descriptor(ch, p, fd) || (l == 1 && bwrap_status_channel(launcher, p, ch)))
                                continue;
                        snprintf(buf, size,
                                 "%s is the very open file pid %" PRId64 " (%s, its fd %" PRId64 ") holds, %s (a "
                                 "channel out)",
                                 kb_fact_str_or(fd, FACT_FD_TARGET, "?"),
                                 kb_fact_int_or(ch, FACT_OUTSIDE_CHANNEL_PID, -1),
                                 kb_fact_str_or(ch, FACT_OUTSIDE_CHANNEL_NAME, "?"),
                                 kb_fact_int_or(ch, FACT_OUTSIDE_CHANNEL_FD, -1),
                                 l == 0 ? "a process outside the sandbox" : "on kbound's side of it");
                        return buf;
                }
        return NULL;
}

static bool same(json_object *o, kb_fact_str dev_fact, kb_fact_int ino_fact, const char *dev, int64_t ino) {
        const char *d = kb_fact_str_of(o, dev_fact);
        int64_t n;
        return d && strcmp(d, dev) == 0 && kb_fact_int_of(o, ino_fact, &n) && n == ino;
}

/* Whether a process of the look holds a descriptor of the file dev:ino. *ret_anonymous (if given)
 * says whether each such descriptor is an anonymous object's ("anon_inode:..."), whose device and
 * inode every anonymous object shares: then they name no one file. */
static bool held_in_sandbox_as(json_object *snap, const char *dev, int64_t ino, bool *ret_anonymous) {
        json_object *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
        bool held = false, anonymous = true;
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *fds = kb_fact_arr_of(at(procs, i), FACT_PROCESS_FDS);
                for (size_t f = 0; f < arr_len(fds); f++)
                        if (same(at(fds, f), FACT_FD_DEV, FACT_FD_INO, dev, ino)) {
                                held = true;
                                anonymous &=
                                        strncmp(kb_fact_str_or(at(fds, f), FACT_FD_TARGET, ""), "anon_inode:", 11) == 0;
                        }
        }
        if (ret_anonymous)
                *ret_anonymous = held && anonymous;
        return held;
}

static bool held_in_sandbox(json_object *snap, const char *dev, int64_t ino) {
        return held_in_sandbox_as(snap, dev, ino, NULL);
}

/* Whether the file dev:ino is one the sandbox shows: on a mount of p's own table that holds its
 * whole filesystem (its root is the filesystem's), the root of one of p's mounts, or a file a
 * process of the look holds (a descriptor, a working directory, a root, a program, a mapping).
 * An inode of a filesystem bound in part is not placed by its device alone. */
static bool in_view(json_object *snap, json_object *p, const char *dev, int64_t ino) {
        if (!dev || ino < 0)
                return false;
        json_object *mounts = judge_mounts_of(snap, p);
        for (size_t i = 0; i < arr_len(mounts); i++) {
                json_object *m = at(mounts, i);
                const char *d = kb_fact_str_of(m, FACT_MOUNT_DEV), *root = kb_fact_str_of(m, FACT_MOUNT_ROOT);
                if ((d && strcmp(d, dev) == 0 && root && strcmp(root, "/") == 0) ||
                    same(kb_fact_obj_of(m, FACT_MOUNT_TARGET), FACT_STAT_DEV, FACT_STAT_INO, dev, ino))
                        return true;
        }
        if (held_in_sandbox(snap, dev, ino))
                return true;
        json_object *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *refs = kb_fact_obj_of(at(procs, i), FACT_PROCESS_REFS);
                kb_fact_obj links[] = {FACT_REFS_CWD, FACT_REFS_ROOT, FACT_REFS_EXE};
                for (size_t l = 0; l < KB_ELEMENTSOF(links); l++)
                        if (same(kb_fact_obj_of(refs, links[l]), FACT_REF_LINK_DEV, FACT_REF_LINK_INO, dev, ino))
                                return true;
                json_object *maps = kb_fact_arr_of(refs, FACT_REFS_MAPS);
                for (size_t m = 0; m < arr_len(maps); m++)
                        if (same(at(maps, m), FACT_MAPPING_DEV, FACT_MAPPING_INO, dev, ino))
                                return true;
        }
        return false;
}

/* Whether p's mount table holds the mount mnt_id, or a mount of the whole filesystem dev. */
static bool own_mount(json_object *snap, json_object *p, int64_t mnt_id, const char *dev) {
        json_object *mounts = judge_mounts_of(snap, p);
        for (size_t i = 0; i < arr_len(mounts); i++) {
                json_object *m = at(mounts, i);
                const char *d = kb_fact_str_of(m, FACT_MOUNT_DEV), *root = kb_fact_str_of(m, FACT_MOUNT_ROOT);
                int64_t id;
                if (mnt_id >= 0 ? kb_fact_int_of(m, FACT_MOUNT_ID, &id) && id == mnt_id
                                : d && dev && strcmp(d, dev) == 0 && root && strcmp(root, "/") == 0)
                        return true;
        }
        return false;
}

/* Why what an epoll, inotify or fanotify instance watches is not the sandbox's, or NULL: an epoll
 * only files a sandbox process holds; an inotify or fanotify inode mark only a file the sandbox
 * shows: one the host found at a path of the holder's view by its handle (the watch's "at": a
 * folder under a bind of part of a filesystem, as /usr's), or one in_view places; a fanotify mount
 * mark only one of the process's mounts, a filesystem mark only a filesystem it holds whole. */
static const char *watch_problem(json_object *snap, json_object *p, json_object *fd, char *buf, size_t size) {
        json_object *watches = kb_fact_arr_of(fd, FACT_FD_WATCHES);
        const char *target = kb_fact_str_or(fd, FACT_FD_TARGET, "?");
        for (size_t i = 0; i < arr_len(watches); i++) {
                json_object *w = at(watches, i);
                const char *dev = kb_fact_str_of(w, FACT_WATCH_DEV), *kind = kb_fact_str_or(w, FACT_WATCH_KIND, "?");
                int64_t ino = kb_fact_int_or(w, FACT_WATCH_INO, -1), mnt_id = kb_fact_int_or(w, FACT_WATCH_MNT_ID, -1);
                if (strcmp(kind, "epoll") == 0) {
                        /* the very file, in the holder's own table (kcmp); else a file whose device
                         * and inode are its own, held in the sandbox */
                        bool anonymous = false;
                        if (kb_fact_has(w, FACT_WATCH_HELD_AT) ||
                            (dev && ino >= 0 && held_in_sandbox_as(snap, dev, ino, &anonymous) && !anonymous))
                                continue;
                        if (anonymous) {
                                snprintf(buf, size,
                                         "%s watches an anonymous object (device %s, inode %" PRId64
                                         ", every such object's; added as fd %" PRId64
                                         ") that is none of its holder's descriptors (kcmp): an eventfd or timer "
                                         "held outside the sandbox would be",
                                         target, dev, ino, kb_fact_int_or(w, FACT_WATCH_FD, -1));
                                return buf;
                        }
                        snprintf(buf, size,
                                 "%s watches a file no process of the sandbox holds (device %s, inode %" PRId64
                                 ", added as fd %" PRId64 ")",
                                 target, dev ? dev : "?", ino, kb_fact_int_or(w, FACT_WATCH_FD, -1));
                        return buf;
                }
                if (strcmp(kind, "fanotify-mount") == 0        ? mnt_id >= 0 && own_mount(snap, p, mnt_id, NULL)
                    : strcmp(kind, "fanotify-filesystem") == 0 ? own_mount(snap, p, -1, dev)
                    : strcmp(kind, "inotify") == 0 || strcmp(kind, "fanotify-inode") == 0
                            ? kb_fact_str_of(w, FACT_WATCH_AT) || in_view(snap, p, dev, ino)
                            : false)
                        continue;
                if (strcmp(kind, "fanotify-mount") == 0)
                        snprintf(buf, size, "%s has a fanotify mark on mount %" PRId64 ", not one of the process's own",
                                 target, mnt_id);
                else if (strcmp(kind, "fanotify-filesystem") == 0)
                        snprintf(buf, size,
                                 "%s has a fanotify mark on the filesystem %s, which the process's mounts do not hold "
                                 "whole",
                                 target, dev ? dev : "?");
                else
                        snprintf(buf, size,
                                 "%s has a %s mark on device %s, inode %" PRId64
                                 ", a file the host cannot place in the sandbox's view (by its handle: %s)",
                                 target, kind, dev ? dev : "?", ino,
                                 kb_fact_str_or(w, FACT_WATCH_PLACE_ERROR, "not looked for"));
                return buf;
        }
        return NULL;
}

/* Why a pidfd's process or thread is not one of the sandbox's, or NULL: the pid fdinfo names must be
 * a process of the look, or a thread of one (a PIDFD_THREAD pidfd names the thread), with the same
 * id in its own namespace (NSpid's last). */
static const char *pidfd_problem(json_object *snap, json_object *fd, char *buf, size_t size) {
        int64_t pid;
        if (!kb_fact_int_of(fd, FACT_FD_PID, &pid))
                return "a pidfd the host could not place (its fdinfo was not read)";
        if (pid == -1)
                return NULL; /* a process that has exited: it reaches nothing */
        if (pid == 0)
                return "a pidfd of a process outside kbound's pid namespace";
        json_object *task = NULL, *proc = judge_find_task(snap, pid, &task), *nspid = kb_fact_arr_of(fd, FACT_FD_NSPID);
        if (proc) {
                json_object *last = arr_len(nspid) ? at(nspid, arr_len(nspid) - 1) : NULL,
                            *ids = task ? kb_fact_arr_of(task, FACT_TASK_NSPID) : NULL,
                            *inner = task ? at(ids, arr_len(ids) - 1) : NULL;
                int64_t want =
                        task ? (inner && json_object_is_type(inner, json_type_int) ? json_object_get_int64(inner) : -1)
                             : judge_inner_pid(proc);
                if (last && want >= 0 && json_object_get_int64(last) == want)
                        return NULL;
                if (task)
                        snprintf(buf, size,
                                 "a pidfd of thread %" PRId64 " of pid %" PRId64
                                 ", whose id in its own namespace is not its sandbox id",
                                 pid, judge_pid_of(proc));
                else
                        snprintf(buf, size,
                                 "a pidfd of pid %" PRId64 ", whose pid in its own namespace is not its sandbox pid",
                                 pid);
                return buf;
        }
        snprintf(buf, size, "a pidfd of pid %" PRId64 ", a process outside the sandbox", pid);
        return buf;
}

const char *judge_object_problem(json_object *snap, json_object *p, json_object *fd, char *buf, size_t size) {
        const char *target = kb_fact_str_of(fd, FACT_FD_TARGET);
        const char *outside = held_outside(snap, p, fd, buf, size);
        if (outside)
                return outside;
        if (starts(target, "/memfd:"))
                return NULL; /* anonymous memory held by no one else (above); its mappings are judged
                              * with the process's references */
        bool fdinfo = !kb_fact_has(fd, FACT_FD_FDINFO_ERROR);
        if (strcmp(target, "anon_inode:[eventfd]") == 0 || strcmp(target, "anon_inode:[timerfd]") == 0 ||
            strcmp(target, "anon_inode:[signalfd]") == 0)
                return NULL; /* its other ends are its holders, each traced to the sandbox (held_outside) */
        if (!fdinfo) {
                snprintf(buf, size, "%s: the host could not read what it reaches (its fdinfo: %s)", target,
                         kb_fact_str_or(fd, FACT_FD_FDINFO_ERROR, "?"));
                return buf;
        }
        if (strcmp(target, "anon_inode:[eventpoll]") == 0 || strcmp(target, "anon_inode:inotify") == 0 ||
            strcmp(target, "anon_inode:[fanotify]") == 0)
                return watch_problem(snap, p, fd, buf, size);
        if (strcmp(target, "anon_inode:[pidfd]") == 0)
                return pidfd_problem(snap, fd, buf, size);
        int64_t registered;
        if (strcmp(target, "anon_inode:[io_uring]") == 0 && kb_fact_int_of(fd, FACT_FD_REGISTERED_FILES, &registered)) {
                if (registered == 0)
                        return NULL;
                snprintf(buf, size,
                         "%s has %" PRId64 " registered files, which its fdinfo names by path only: the host cannot "
                         "trace them to their objects",
                         target, registered);
                return buf;
        }
        snprintf(buf, size, "%s is an object the host cannot trace to its other end", target);
        return buf;
}

/* ---- what the sandbox shares through memory or its own filesystems, held outside ---- */

/* How an OUTSIDE_CHANNEL's holder holds it: "as fd 5", "mapped", "as its working directory", with
 * its thread when not the main one. */
static const char *held_words(json_object *ch, char *buf, size_t size) {
        const char *link = kb_fact_str_of(ch, FACT_OUTSIDE_CHANNEL_LINK);
        int64_t thread;
        int n = link ? snprintf(buf, size, "as its %s", strcmp(link, "cwd") == 0 ? "working directory" : link)
                : kb_fact_bool_of(ch, FACT_OUTSIDE_CHANNEL_MAPPED)
                        ? snprintf(buf, size, "mapped")
                        : snprintf(buf, size, "as fd %" PRId64, kb_fact_int_or(ch, FACT_OUTSIDE_CHANNEL_FD, -1));
        if (n > 0 && (size_t) n < size && kb_fact_int_of(ch, FACT_OUTSIDE_CHANNEL_THREAD, &thread))
                snprintf(buf + n, size - (size_t) n, " (its thread %" PRId64 ")", thread);
        return buf;
}

/* Which filesystem of the sandbox's own dev is: its message queues, or the mount of its tables. */
static const char *own_fs_words(json_object *snap, const char *dev, char *buf, size_t size) {
        const char *mq = kb_fact_str_of(kb_fact_obj_of(snap, FACT_LOOK_IPC), FACT_IPC_MQUEUE_DEV);
        if (dev && mq && strcmp(dev, mq) == 0)
                return "the message-queue filesystem of the sandbox's IPC namespace";
        json_object *tables[16];
        size_t n = judge_look_tables(snap, tables, KB_ELEMENTSOF(tables));
        for (size_t t = 0; dev && t < n; t++)
                for (size_t i = 0; i < arr_len(tables[t]); i++) {
                        json_object *m = at(tables[t], i);
                        const char *d = kb_fact_str_of(m, FACT_MOUNT_DEV);
                        if (!d || strcmp(d, dev) != 0)
                                continue;
                        snprintf(buf, size, "the sandbox's own %s at %s", kb_fact_str_or(m, FACT_MOUNT_FSTYPE, "?"),
                                 kb_fact_str_or(m, FACT_MOUNT_MOUNTPOINT, "?"));
                        return buf;
                }
        snprintf(buf, size, "a filesystem of the sandbox's own (device %s)", dev ? dev : "?");
        return buf;
}

/* The SysV segments of the sandbox's IPC namespace mapped outside it: each one's attachments
 * beyond its mappings in the sandbox's processes, with the processes outside whose maps show it. */
static void sysv_problems(verdict *v, json_object *snap, json_object *ipc) {
        json_object *segs = kb_fact_arr_of(ipc, FACT_IPC_SHM),
                    *channels = kb_fact_arr_of(snap, FACT_LOOK_OUTSIDE_CHANNELS);
        const char *label = kb_fact_str_or(snap, FACT_LOOK_LABEL, "?");
        if (!segs) {
                verdict_problem(
                        v,
                        "the host could not read the SysV shared memory segments of the sandbox's IPC namespace, "
                        "nor so who maps them (%s): %s",
                        label, kb_fact_str_or(ipc, FACT_IPC_SHM_ERROR, "not read"));
                return;
        }
        for (size_t i = 0; i < arr_len(segs); i++) {
                json_object *g = at(segs, i);
                int64_t id = kb_fact_int_or(g, FACT_SYSV_SHM_ID, -1), key = kb_fact_int_or(g, FACT_SYSV_SHM_KEY, 0),
                        nattch = kb_fact_int_or(g, FACT_SYSV_SHM_NATTCH, -1),
                        mine = kb_fact_int_or(g, FACT_SYSV_SHM_SANDBOX, -1);
                if (nattch >= 0 && mine >= 0 && nattch == mine)
                        continue;
                char holders[DETAIL_MAX] = "";
                size_t used = 0;
                for (size_t c = 0; c < arr_len(channels) && used < sizeof holders; c++) {
                        json_object *ch = at(channels, c);
                        if (!kb_fact_bool_of(ch, FACT_OUTSIDE_CHANNEL_SYSV) ||
                            kb_fact_int_or(ch, FACT_OUTSIDE_CHANNEL_INO, -2) != id)
                                continue;
                        int w = snprintf(holders + used, sizeof holders - used, "%spid %" PRId64 " (%s)",
                                         used ? ", " : "", kb_fact_int_or(ch, FACT_OUTSIDE_CHANNEL_PID, -1),
                                         kb_fact_str_or(ch, FACT_OUTSIDE_CHANNEL_NAME, "?"));
                        used += w > 0 ? (size_t) w : 0;
                }
                if (nattch > mine && mine >= 0)
                        verdict_problem(v,
                                        "the SysV shared memory segment %" PRId64 " (key 0x%08" PRIx64
                                        ") of the sandbox's IPC namespace is attached %" PRId64
                                        " time(s) outside the sandbox's processes (%s): %s (shared memory out)",
                                        id, (uint64_t) key & 0xffffffffu, nattch - mine, label,
                                        holders[0] ? holders
                                                   : "by a process the host did not find; its maps show it as "
                                                     "/SYSV<key>");
                else
                        verdict_problem(v,
                                        "the SysV shared memory segment %" PRId64 " (key 0x%08" PRIx64
                                        ") of the sandbox's IPC namespace has %" PRId64
                                        " attachments, and the sandbox's processes map it %" PRId64
                                        " times (%s): a mapping of the sandbox's is another namespace's segment",
                                        id, (uint64_t) key & 0xffffffffu, nattch, mine, label);
        }
        int64_t foreign = kb_fact_int_or(ipc, FACT_IPC_SHM_FOREIGN, 0);
        if (foreign > 0)
                verdict_problem(v,
                                "processes of the sandbox map %" PRId64
                                " SysV shared memory segment(s) of no segment of its IPC namespace (%s): another "
                                "namespace's memory",
                                foreign, label);
}

void judge_shared_problems(verdict *v, const kb_judge_input *in, json_object *snap) {
        (void) in;
        json_object *channels = kb_fact_arr_of(snap, FACT_LOOK_OUTSIDE_CHANNELS);
        char how[96], fs[256], inside[128];
        for (size_t i = 0; i < arr_len(channels); i++) {
                json_object *ch = at(channels, i);
                const char *dev = kb_fact_str_of(ch, FACT_OUTSIDE_CHANNEL_DEV);
                int64_t pid = kb_fact_int_or(ch, FACT_OUTSIDE_CHANNEL_PID, -1),
                        ino = kb_fact_int_or(ch, FACT_OUTSIDE_CHANNEL_INO, -1);
                const char *name = kb_fact_str_or(ch, FACT_OUTSIDE_CHANNEL_NAME, "?"),
                           *target = kb_fact_str_or(ch, FACT_OUTSIDE_CHANNEL_TARGET, "?");
                if (kb_fact_bool_of(ch, FACT_OUTSIDE_CHANNEL_OBJECT)) {
                        int64_t spid = kb_fact_int_or(ch, FACT_OUTSIDE_CHANNEL_SANDBOX_PID, -1), sfd;
                        json_object *sp = judge_find_pid(snap, spid);
                        const char *shows = kb_fact_str_or(ch, FACT_OUTSIDE_CHANNEL_SANDBOX_HOW, "?");
                        if (kb_fact_int_of(ch, FACT_OUTSIDE_CHANNEL_SANDBOX_FD, &sfd))
                                snprintf(inside, sizeof inside, "as fd %" PRId64, sfd);
                        else
                                snprintf(inside, sizeof inside, "%s",
                                         strcmp(shows, "exe") == 0 ? "as its program" : "mapped");
                        verdict_problem(v,
                                        "pid %" PRId64 " (%s), a process outside the sandbox, holds %s %s (device %s, "
                                        "inode %" PRId64 "), the very memory object pid %" PRId64
                                        " (%s) of the sandbox holds %s (shared memory out)",
                                        pid, name, target, held_words(ch, how, sizeof how), dev ? dev : "?", ino, spid,
                                        sp ? judge_name_of(sp) : "?", inside);
                } else if (kb_fact_bool_of(ch, FACT_OUTSIDE_CHANNEL_SANDBOX_FS))
                        verdict_problem(v,
                                        "pid %" PRId64 " (%s), a process outside the sandbox, holds %s %s (device %s, "
                                        "inode %" PRId64 "), a file of %s (a channel into the sandbox)",
                                        pid, name, target, held_words(ch, how, sizeof how), dev ? dev : "?", ino,
                                        own_fs_words(snap, dev, fs, sizeof fs));
        }
        json_object *ipc = kb_fact_obj_of(snap, FACT_LOOK_IPC);
        if (!ipc) {
                verdict_problem(v,
                                "the host did not read the kernel's IPC namespace (%s): its SysV segments and message "
                                "queues held outside could not be looked for",
                                kb_fact_str_or(snap, FACT_LOOK_LABEL, "?"));
                return;
        }
        if (!kb_fact_has(ipc, FACT_IPC_MQUEUE_DEV))
                verdict_problem(v,
                                "the host could not learn the message-queue filesystem of the sandbox's IPC namespace "
                                "(%s), so its queues held outside could not be looked for: %s",
                                kb_fact_str_or(snap, FACT_LOOK_LABEL, "?"),
                                kb_fact_str_or(ipc, FACT_IPC_MQUEUE_ERROR, "not read"));
        sysv_problems(v, snap, ipc);
}

/* judge_descriptors.c: boundary.descriptors, every open descriptor refers to the sandbox's own. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "verdict/judge-internal.h"

/* ---- descriptors ---- */

static bool starts(const char *s, const char *prefix) {
        return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The number in "pipe:[N]" / "socket:[N]", or -1. */
static int64_t bracket_inode(const char *target) {
        const char *b = target ? strchr(target, '[') : NULL;
        if (!b)
                return -1;
        char *end;
        long long v = strtoll(b + 1, &end, 10);
        return *end == ']' ? v : -1;
}

static json_object *mount_by_id(json_object *mounts, int64_t id) {
        for (size_t i = 0; i < arr_len(mounts); i++)
                if (int_or(at(mounts, i), "id", -2) == id)
                        return at(mounts, i);
        return NULL;
}

/* True if inode is a socket of the network namespace p is in. */
static bool socket_of_namespace(json_object *snap, json_object *p, int64_t inode) {
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long) int_or(kb_json_get(p, "ns"), "net", -1));
        json_object *net = kb_json_get(kb_json_get(snap, "net"), key);
        if (int_in(kb_json_get(net, "socket_inodes"), inode))
                return true;
        json_object *unix_list = kb_json_get(net, "unix");
        for (size_t i = 0; i < arr_len(unix_list); i++)
                if (int_or(at(unix_list, i), "inode", -1) == inode)
                        return true;
        return false;
}

/* Why a socket of kbound's network namespace that p holds (k: its kbound_net_sockets entry) is a
 * channel out, or NULL. A unix socket lives in the namespace of the side that connected, so the
 * kernel's end of each of kbound's connections is one; any other, whatever name it carries, joins
 * the host's network: its peer must be one of kbound's own sockets, found by inode. */
static const char *host_net_socket_problem(json_object *snap, json_object *k, char *buf, size_t size) {
        int64_t inode = int_or(k, "inode", -1), peer = int_or(k, "peer", 0);
        const char *state = str_or(k, "state", "?"), *type = str_or(k, "type", "?"), *path = kb_json_str(k, "path");
        if (peer > 0 && int_in(kb_json_get(snap, "kbound_sockets"), peer))
                return NULL;
        char named[300] = "";
        if (path)
                snprintf(named, sizeof named, ", named %s", path);
        if (peer <= 0) {
                snprintf(buf, size,
                         "socket:[%" PRId64
                         "] (a %s %s unix socket of kbound's network namespace%s) is connected to no "
                         "socket of kbound's (a channel out)",
                         inode, state, type, named);
                return buf;
        }
        json_object *holders = kb_json_get(k, "peer_held_by");
        char who[256] = "no process the host found";
        if (arr_len(holders) > 0)
                judge_holder_words(snap, at(holders, 0), who, sizeof who);
        snprintf(buf, size,
                 "socket:[%" PRId64 "] is a unix %s socket of kbound's network namespace%s, whose peer socket:[%" PRId64
                 "] is held by %s, not by kbound (a channel out)",
                 inode, type, named, peer, who);
        return buf;
}

/* Why fd (of process p in snap) refers to something outside the sandbox, or NULL. */
static const char *fd_problem(const kb_judge_input *in, json_object *snap, json_object *p, json_object *fd, char *buf,
                              size_t size) {
        const char *target = kb_json_str(fd, "target"), *type = kb_json_str(fd, "type"), *dev = kb_json_str(fd, "dev");
        int64_t mnt_id = int_or(fd, "mnt_id", -1);
        json_object *outside = kb_json_get(kb_json_get(judge_last_look(in), "launcher"), "outside_inodes");
        if (!target)
                return "the host could not read what it refers to";
        if (starts(target, "pipe:[") || starts(target, "socket:[")) {
                /* The kernel's log pipe, written: its reader is kbound's keeper, which only writes
                 * it to a bounded file, and bwrap's outer process holds it as its own stdout. Any
                 * other process outside that holds it is still a channel (below). */
                const char *log_pipe = kb_json_str(kb_json_get(in->expect, "kernel_log"), "pipe");
                int64_t flags = int_or(fd, "flags", -1);
                bool log_written = log_pipe && strcmp(target, log_pipe) == 0 && flags >= 0 && (flags & 03) == 01;
                if (!log_written && str_in(outside, target)) {
                        snprintf(buf, size, "%s is shared with kbound's side of the sandbox (a channel out)", target);
                        return buf;
                }
                json_object *shared = kb_json_get(snap, "outside_channels");
                for (size_t i = 0; i < arr_len(shared); i++)
                        if (strcmp(str_or(at(shared, i), "target", ""), target) == 0) {
                                snprintf(buf, size,
                                         "%s is shared with pid %" PRId64 " (%s, its fd %" PRId64
                                         "), a process outside the sandbox (a channel out)",
                                         target, int_or(at(shared, i), "pid", -1), str_or(at(shared, i), "name", "?"),
                                         int_or(at(shared, i), "fd", -1));
                                return buf;
                        }
                int64_t inode = bracket_inode(target);
                if (!starts(target, "socket:[") || socket_of_namespace(snap, p, inode))
                        return NULL;
                json_object *host_net = kb_json_get(snap, "kbound_net_sockets");
                for (size_t i = 0; i < arr_len(host_net); i++)
                        if (int_or(at(host_net, i), "inode", -1) == inode)
                                return host_net_socket_problem(snap, at(host_net, i), buf, size);
                snprintf(buf, size, "%s is not a socket of the sandbox's network namespace", target);
                return buf;
        }
        if (starts(target, "anon_inode:")) {
                static const char *const ok[] = {"anon_inode:[eventfd]", "anon_inode:[eventpoll]",
                                                 "anon_inode:[timerfd]", "anon_inode:[signalfd]", "anon_inode:inotify"};
                for (size_t i = 0; i < KB_ELEMENTSOF(ok); i++)
                        if (strcmp(target, ok[i]) == 0)
                                return NULL;
                if (strcmp(target, "anon_inode:[pidfd]") == 0) {
                        int64_t pid;
                        if (!kb_json_int(fd, "pid", &pid))
                                return "a pidfd the host could not place (its fdinfo was not read)";
                        json_object *procs = kb_json_get(snap, "processes");
                        for (size_t i = 0; i < arr_len(procs); i++)
                                if (int_or(at(procs, i), "pid", -2) == pid)
                                        return NULL;
                        if (pid == -1)
                                return NULL; /* a pidfd of a process that has exited */
                        if (pid == 0)        /* visible in no pid namespace kbound sees: not the sandbox's */
                                return "a pidfd of a process outside kbound's pid namespace";
                        snprintf(buf, size, "a pidfd of pid %" PRId64 ", a process outside the sandbox", pid);
                        return buf;
                }
                snprintf(buf, size, "%s is a kind of descriptor kbound does not let through", target);
                return buf;
        }
        if (starts(target, "/memfd:") && dev && kb_json_str(in->host, "memfd_dev") &&
            strcmp(dev, kb_json_str(in->host, "memfd_dev")) == 0)
                return NULL; /* anonymous memory */
        if (target[0] != '/') {
                snprintf(buf, size, "%s is a kind of descriptor kbound does not let through", target);
                return buf;
        }
        json_object *through = mnt_id >= 0 ? mount_by_id(judge_mounts_of(snap, p), mnt_id) : NULL;
        if (through && type && (strcmp(type, "chr") == 0 || strcmp(type, "blk") == 0)) {
                /* A device opened through one of the process's own mounts: only one of kbound's own
                 * /dev nodes (the node bound there itself) or a pty of the sandbox's own devpts. */
                json_object *node_target = kb_json_get(through, "target");
                const char *rdev = kb_json_str(fd, "rdev"), *node = kb_json_str(node_target, "rdev"),
                           *ntype = kb_json_str(node_target, "type");
                kb_judge_mount_facts f = judge_mount_facts(in, snap);
                char why[256];
                if (judge_harmless_char(rdev, false) && strcmp(type, "chr") == 0)
                        return NULL;
                if (rdev && node && ntype && strcmp(ntype, type) == 0 && strcmp(node, rdev) == 0 &&
                    judge_harmless_char(node, true))
                        return NULL;
                if (judge_mount_is(through, "devpts") && !judge_not_own(through, &f, why, sizeof why))
                        return NULL;
                snprintf(buf, size,
                         "%s is a device (%s %s) opened through the mount at %s (mount id %" PRId64 "), which is "
                         "not one of kbound's own /dev nodes",
                         target, type, rdev ? rdev : "?", str_or(through, "mountpoint", "?"), mnt_id);
                return buf;
        }
        if (through)
                return NULL; /* opened through one of the process's own mounts */
        if (type && strcmp(type, "chr") == 0 && judge_harmless_char(kb_json_str(fd, "rdev"), false))
                return NULL;
        json_object *log = kb_json_get(in->expect, "kernel_log");
        int64_t flags = int_or(fd, "flags", -1);
        if (type && strcmp(type, "reg") == 0 && dev && kb_json_str(log, "dev") &&
            strcmp(dev, kb_json_str(log, "dev")) == 0 && int_or(fd, "ino", -1) == int_or(log, "ino", -2) &&
            flags >= 0 && (flags & 03) == 01 && (flags & 02000))
                return NULL; /* the kernel's log: write-only, append-only */
        snprintf(buf, size, "%s is on a host mount (mount id %" PRId64 ") outside the sandbox", target, mnt_id);
        return buf;
}

/* What each of a process's working directory, root and program is called in problems. */
static const char *ref_words(const char *name) {
        return strcmp(name, "cwd") == 0 ? "working directory" : strcmp(name, "root") == 0 ? "root" : "program";
}

static bool same_file(json_object *a, json_object *b) {
        const char *da = kb_json_str(a, "dev"), *db = kb_json_str(b, "dev");
        return da && db && strcmp(da, db) == 0 && int_or(a, "ino", -1) == int_or(b, "ino", -2);
}

/* bwrap's init is a fork of the bwrap kbound launched, mapped on the host before it entered the
 * sandbox: its program and the files the launcher maps too (its libraries), privately, are its own
 * image, not a reach into the host. True for such a reference of p. */
static bool launcher_image(const kb_judge_input *in, json_object *snap, json_object *p, json_object *ref) {
        json_object *launcher = kb_json_get(snap, "launcher");
        if (!launcher)
                launcher = kb_json_get(judge_last_look(in), "launcher");
        if (judge_inner_pid(p) != 1 || !same_file(kb_json_get(p, "exe"), kb_json_get(launcher, "exe")))
                return false;
        if (kb_json_true(ref, "shared") && kb_json_true(ref, "writable"))
                return false;
        char key[64];
        snprintf(key, sizeof key, "%s:%" PRId64, str_or(ref, "dev", "?"), int_or(ref, "ino", -1));
        return same_file(ref, kb_json_get(launcher, "exe")) || str_in(kb_json_get(launcher, "map_files"), key);
}

/* Why the working directory, root or program ref (of process p in snap) is outside the sandbox, or
 * NULL: it must lie on one of the mounts of the process's own table, like a descriptor. */
static const char *link_problem(json_object *snap, json_object *p, json_object *ref, char *buf, size_t size) {
        int64_t mnt_id = int_or(ref, "mnt_id", -1);
        if (mnt_id >= 0 && mount_by_id(judge_mounts_of(snap, p), mnt_id))
                return NULL;
        snprintf(buf, size,
                 "%s (dev %s, inode %" PRId64 "), is on mount %" PRId64 ", which is not one of the sandbox's",
                 str_or(ref, "target", "?"), str_or(ref, "dev", "?"), int_or(ref, "ino", -1), mnt_id);
        return buf;
}

/* Why a mapped file (of process p in snap) reaches outside the sandbox, or NULL: it must be the
 * file the sandbox itself reaches at that path, on one of the process's mounts, and a shared,
 * writable mapping (writes go back to the file, also through /proc/<pid>/mem) only of a file on a
 * writable mount; a deleted one must be anonymous memory or on one of the sandbox's filesystems. */
static const char *map_problem(const kb_judge_input *in, json_object *snap, json_object *p, json_object *m, char *buf,
                               size_t size) {
        json_object *mounts = judge_mounts_of(snap, p);
        if (launcher_image(in, snap, p, m))
                return NULL;
        const char *path = str_or(m, "path", "?"), *dev = kb_json_str(m, "dev"), *reach = kb_json_str(m, "reach");
        bool shared_rw = kb_json_true(m, "shared") && kb_json_true(m, "writable");
        const char *kind = shared_rw ? "a shared, writable mapping of" : "a mapping of";
        if (kb_json_true(m, "deleted")) {
                const char *memfd = kb_json_str(in->host, "memfd_dev");
                if (dev && memfd && strcmp(dev, memfd) == 0)
                        return NULL;
                for (size_t i = 0; dev && i < arr_len(mounts); i++)
                        if (strcmp(str_or(at(mounts, i), "dev", ""), dev) == 0 &&
                            judge_mount_is(at(mounts, i), "tmpfs"))
                                return NULL;
                snprintf(buf, size, "%s a deleted file %s (dev %s) the host cannot place on the sandbox's filesystems",
                         kind, path, dev ? dev : "?");
                return buf;
        }
        if (!reach) {
                snprintf(buf, size, "%s %s: the host could not place it (%s)", kind, path,
                         str_or(m, "reach_error", "not looked up"));
                return buf;
        }
        json_object *through = strcmp(reach, "same") == 0 ? mount_by_id(mounts, int_or(m, "mnt_id", -1)) : NULL;
        if (!through) {
                snprintf(buf, size,
                         "%s %s (dev %s, inode %" PRId64 "), a file the sandbox does not reach at that path (%s): "
                         "a host file, open to the sandbox through /proc/%" PRId64 "/mem",
                         kind, path, dev ? dev : "?", int_or(m, "ino", -1),
                         strcmp(reach, "other") == 0 ? "another file is there" : "nothing is there",
                         int_or(p, "pid", -1));
                return buf;
        }
        if (shared_rw && !judge_mount_writable(through)) {
                snprintf(buf, size,
                         "%s %s, on the read-only mount at %s: writes to it go back to the file, past the mount", kind,
                         path, str_or(through, "mountpoint", "?"));
                return buf;
        }
        return NULL;
}

/* The list key of p's refs (its threads, its maps), after a problem when the host could not read
 * it (words: what it is) from a process that is not a zombie. */
static json_object *refs_read(verdict *v, json_object *p, json_object *refs, const char *key, const char *words) {
        char buf[DETAIL_MAX];
        json_object *list = kb_json_get(refs, key);
        const char *unread = judge_fact_error(p, key, buf, sizeof buf);
        if ((!list || unread) && strcmp(str_or(p, "state", "?"), "Z") != 0)
                verdict_problem(v, "the host could not read the %s of pid %" PRId64 " (%s): %s", words,
                                int_or(p, "pid", -1), str_or(p, "name", "?"), unread ? unread : "not read");
        return list;
}

/* Every reference of process p but its descriptors (inspect_refs.c), judged: its working directory,
 * root and program, each thread's own, and its mapped files. Unread ones never pass; a zombie holds
 * none of its own. Returns how many were judged. */
static size_t ref_problems(verdict *v, const kb_judge_input *in, json_object *snap, json_object *p) {
        json_object *refs = kb_json_get(p, "refs");
        int64_t pid = int_or(p, "pid", -1);
        const char *name = str_or(p, "name", "?"), *state = str_or(p, "state", "?");
        char why_buf[DETAIL_MAX];
        if (!refs) {
                verdict_problem(v, "the host did not read what pid %" PRId64 " (%s) holds besides its descriptors", pid,
                                name);
                return 0;
        }
        size_t n = 0;
        static const char *const links[] = {"cwd", "root", "exe"};
        for (size_t i = 0; i < KB_ELEMENTSOF(links); i++) {
                char key[32];
                snprintf(key, sizeof key, "%s_error", links[i]);
                json_object *ref = kb_json_get(refs, links[i]);
                n++;
                if (!ref && strcmp(state, "Z") != 0)
                        verdict_problem(v, "the host could not read the %s of pid %" PRId64 " (%s): %s",
                                        ref_words(links[i]), pid, name, str_or(refs, key, "not read"));
                else if (ref && !(i == 2 && launcher_image(in, snap, p, ref)) &&
                         link_problem(snap, p, ref, why_buf, sizeof why_buf))
                        verdict_problem(v, "the %s of pid %" PRId64 " (%s), %s", ref_words(links[i]), pid, name,
                                        why_buf);
        }
        json_object *threads = refs_read(v, p, refs, "threads", "threads");
        for (size_t t = 0; t < arr_len(threads); t++) {
                json_object *th = at(threads, t);
                for (size_t i = 0; i < 2; i++) {
                        char key[32];
                        snprintf(key, sizeof key, "%s_error", links[i]);
                        json_object *ref = kb_json_get(th, links[i]);
                        n++;
                        if (!ref)
                                verdict_problem(v,
                                                "the host could not read the %s of thread %" PRId64 " of pid %" PRId64
                                                " (%s): %s",
                                                ref_words(links[i]), int_or(th, "tid", -1), pid, name,
                                                str_or(th, key, "not read"));
                        else if (link_problem(snap, p, ref, why_buf, sizeof why_buf))
                                verdict_problem(v, "the %s of thread %" PRId64 " of pid %" PRId64 " (%s), %s",
                                                ref_words(links[i]), int_or(th, "tid", -1), pid, name, why_buf);
                }
        }
        json_object *maps = refs_read(v, p, refs, "maps", "memory mappings");
        for (size_t i = 0; i < arr_len(maps); i++) {
                n++;
                if (map_problem(in, snap, p, at(maps, i), why_buf, sizeof why_buf))
                        verdict_problem(v, "pid %" PRId64 " (%s) holds %s", pid, name, why_buf);
        }
        return n;
}

/* The value of bwrap option opt (one argument) in argv, read with bwrap's grammar, or NULL (not
 * there, or the command line cannot be read that way). */
static const char *bwrap_option_value(json_object *argv, const char *opt) {
        const char *found = NULL;
        for (size_t i = 1; i < arr_len(argv); i++) {
                const char *a = json_object_get_string(at(argv, i));
                if (!a || strcmp(a, "--") == 0 || strncmp(a, "--", 2) != 0)
                        return found;
                int arity = judge_bwrap_arity(a);
                if (arity < 0 || strcmp(a, "--args") == 0 || i + (size_t) arity >= arr_len(argv))
                        return NULL;
                if (strcmp(a, opt) == 0 && arity == 1)
                        found = json_object_get_string(at(argv, i + 1));
                i += (size_t) arity;
        }
        return NULL;
}

/* The look before the kernel's program ran: bwrap's init alone in the sandbox, blocked reading
 * kbound's block channel, still the program the bwrap outside runs, holding only what kbound
 * handed it (each descriptor by number and object) and bwrap 0.8's own two: an O_PATH descriptor of the host's /proc
 * (opened before the namespaces were made) and the eventfd that carries PID 2's exit status to bwrap. Anything else was
 * inherited from elsewhere, and everything PID 1 holds then, the kernel inherits. Returns how many descriptors were
 * judged. */
static size_t pre_exec_problems(verdict *v, const kb_judge_input *in, size_t *ret_refs) {
        json_object *pe = in->pre_exec, *plan = kb_json_get(in->expect, "launch");
        char buf[DETAIL_MAX];
        if (!plan) {
                verdict_problem(v, "kbound kept no record of the descriptors it handed bwrap");
                return 0;
        }
        if (!pe) {
                verdict_problem(v, "the host took no look at the sandbox before the kernel's program ran");
                return 0;
        }
        int64_t block_fd = int_or(plan, "block_fd", -1);
        if (judge_fact_error(pe, "the process list", buf, sizeof buf))
                verdict_problem(v, "the host could not list processes before the kernel ran (%s)", buf);
        const char *value = bwrap_option_value(kb_json_get(kb_json_get(pe, "launcher"), "argv"), "--block-fd");
        char want[32];
        snprintf(want, sizeof want, "%" PRId64, block_fd);
        if (!value || strcmp(value, want) != 0)
                verdict_problem(v,
                                "the running bwrap was not started with --block-fd %" PRId64
                                ": nothing made the sandbox wait for "
                                "the host's look before the kernel ran",
                                block_fd);
        json_object *init = kb_json_get(pe, "init");
        if (!init)
                verdict_problem(v, "the host could not see whether bwrap's init waited before the kernel ran%s%s",
                                judge_fact_error(pe, "bwrap's init's system call", buf, sizeof buf) ? ": " : "",
                                judge_fact_error(pe, "bwrap's init's system call", buf, sizeof buf) ? buf : "");
        else if (int_or(init, "reads_fd", -1) != block_fd)
                verdict_problem(v,
                                "bwrap's init was not waiting on kbound's block channel (fd %" PRId64
                                ") when the host looked (it was in: %s): "
                                "the kernel's program may already have run",
                                block_fd, str_or(init, "syscall", "?"));
        json_object *procs = kb_json_get(pe, "processes"), *planned = kb_json_get(plan, "fds");
        if (arr_len(procs) == 0)
                verdict_problem(v, "the host found no process in the sandbox before the kernel ran");
        size_t n = 0;
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *p = at(procs, i), *fds = kb_json_get(p, "fds");
                int64_t pid = int_or(p, "pid", -1), inner = judge_inner_pid(p);
                if (inner != 1) {
                        verdict_problem(v,
                                        "the sandbox did not wait for kbound: pid %" PRId64 " (%s, PID %" PRId64
                                        " in the sandbox) ran "
                                        "before kbound let the kernel start",
                                        pid, str_or(p, "name", "?"), inner);
                        continue;
                }
                /* PID 1 is a fork of the bwrap outside: the same program, unless it has exec'd another. */
                json_object *bwrap_exe = kb_json_get(kb_json_get(pe, "launcher"), "exe");
                if (!same_file(kb_json_get(p, "exe"), bwrap_exe))
                        verdict_problem(v,
                                        "before the kernel ran, the sandbox's PID 1 (pid %" PRId64
                                        ") was already %s, not the bwrap "
                                        "outside (%s)",
                                        pid, str_or(kb_json_get(p, "exe"), "path", str_or(p, "exe_error", "?")),
                                        str_or(bwrap_exe, "path", "unknown"));
                const char *unread = judge_fact_error(p, "fd", buf, sizeof buf);
                if (!fds || unread)
                        verdict_problem(v,
                                        "the host could not read the descriptors of PID 1 before the kernel ran (%s)",
                                        unread ? unread : "no table");
                bool block_held = false;
                size_t proc_fds = 0, eventfds = 0;
                for (size_t f = 0; f < arr_len(fds); f++) {
                        json_object *fd = at(fds, f), *match = NULL;
                        int64_t num = int_or(fd, "fd", -1);
                        const char *target = str_or(fd, "target", "?");
                        n++;
                        for (size_t k = 0; k < arr_len(planned) && !match; k++)
                                if (int_or(at(planned, k), "fd", -2) == num && same_file(at(planned, k), fd))
                                        match = at(planned, k);
                        if (match) {
                                block_held |= num == block_fd;
                                continue;
                        }
                        /* bwrap's own: O_PATH (010000000) of the host's /proc root, and its eventfd */
                        if ((int_or(fd, "flags", 0) & 010000000) && same_file(fd, kb_json_get(plan, "proc")) &&
                            proc_fds++ == 0)
                                continue;
                        if (strcmp(target, "anon_inode:[eventfd]") == 0 && eventfds++ == 0)
                                continue;
                        verdict_problem(v,
                                        "before the kernel ran, fd %" PRId64 " of the sandbox's PID 1 (pid %" PRId64
                                        ") was %s, which "
                                        "kbound did not hand in",
                                        num, pid, target);
                }
                *ret_refs += ref_problems(v, in, pe, p);
                if (fds && !unread && !block_held)
                        verdict_problem(v,
                                        "before the kernel ran, the sandbox's PID 1 (pid %" PRId64
                                        ") did not hold kbound's block channel "
                                        "as fd %" PRId64,
                                        pid, block_fd);
        }
        return n;
}

char *kb_judge_pre_exec_reason(json_object *pre_exec) {
        kb_judge_input in = {.pre_exec = pre_exec};
        json_object *procs = kb_json_get(pre_exec, "processes");
        verdict v;
        verdict_init(&v);
        for (size_t i = 0; i < arr_len(procs); i++)
                (void) ref_problems(&v, &in, pre_exec, at(procs, i));
        const char *first = v.n && !v.oom ? json_object_get_string(at(v.problems, 0)) : NULL;
        char *reason = first ? strdup(first) : NULL;
        json_object_put(v.ev);
        return reason;
}

json_object *kb_judge_descriptors(const kb_judge_input *in) {
        verdict v;
        verdict_begin(&v, in);
        char buf[DETAIL_MAX], why_buf[DETAIL_MAX];
        size_t n_fds = 0, n_refs = 0;
        /* First what the kernel started with, then what the looks after saw. */
        size_t n_pre = pre_exec_problems(&v, in, &n_refs);
        if (judge_fact_error(judge_last_look(in), "the launch side's descriptors", buf, sizeof buf))
                verdict_problem(&v, "the host could not read %s", buf);
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                if (judge_fact_error(at(in->snapshots, s), "kbound's unix sockets", buf, sizeof buf))
                        verdict_problem(&v, "the host could not list %s", buf);
                if (!kb_json_get(at(in->snapshots, s), "outside_channels"))
                        verdict_problem(&v,
                                        "the host did not check which processes outside the sandbox hold its pipes and "
                                        "sockets (%s)",
                                        str_or(at(in->snapshots, s), "label", "?"));
        }
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s), *procs = kb_json_get(snap, "processes");
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i), *fds = kb_json_get(p, "fds");
                        int64_t pid = int_or(p, "pid", -1);
                        const char *unread = judge_fact_error(p, "fd", buf, sizeof buf);
                        if (!fds || unread)
                                verdict_problem(&v, "the host could not read the descriptors of pid %" PRId64 " (%s)",
                                                pid, unread ? unread : "no table");
                        for (size_t f = 0; f < arr_len(fds); f++) {
                                json_object *fd = at(fds, f);
                                n_fds++;
                                const char *why = fd_problem(in, snap, p, fd, why_buf, sizeof why_buf);
                                if (why)
                                        verdict_problem(&v, "fd %" PRId64 " of pid %" PRId64 " (%s): %s",
                                                        int_or(fd, "fd", -1), pid, str_or(p, "name", "?"), why);
                        }
                        n_refs += ref_problems(&v, in, snap, p);
                }
        }
        verdict_evidence(&v, "descriptors_checked", json_object_new_int64((int64_t) n_fds));
        verdict_evidence(&v, "references_checked", json_object_new_int64((int64_t) n_refs));
        verdict_evidence(&v, "descriptors_before_exec", json_object_new_int64((int64_t) n_pre));
        char pass[512];
        snprintf(pass, sizeof pass,
                 "all %zu open descriptors of the sandbox's processes (read by the host) refer to the sandbox's own "
                 "mounts, sockets, pipes or anonymous objects, the kernel's write-only log, or /dev/null-like devices, "
                 "and all %zu other references (working directories, roots and programs of every process and thread, "
                 "mapped files) to the sandbox's own mounts; "
                 "before the kernel's program ran, bwrap's init waited on kbound's block channel holding only the "
                 "descriptors "
                 "kbound handed it and bwrap's own (%zu)",
                 n_fds, n_refs, n_pre);
        return verdict_end(&v, KB_CHECK_DESCRIPTORS, pass);
}

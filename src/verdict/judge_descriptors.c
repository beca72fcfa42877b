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

/* The mount of mounts whose id is id, or NULL (a mount whose id was not read is none). */
static json_object *mount_by_id(json_object *mounts, int64_t id) {
        for (size_t i = 0; i < arr_len(mounts); i++) {
                int64_t mine;
                if (kb_fact_int_of(at(mounts, i), FACT_MOUNT_ID, &mine) && mine == id)
                        return at(mounts, i);
        }
        return NULL;
}

/* A file's identity, read from its own object's facts. */
static judge_file ref_file(json_object *ref) {
        int64_t ino = -1;
        bool known = kb_fact_int_of(ref, FACT_REF_LINK_INO, &ino);
        return judge_file_of(kb_fact_str_of(ref, FACT_REF_LINK_DEV), known, ino);
}

static judge_file map_file(json_object *m) {
        int64_t ino = -1;
        bool known = kb_fact_int_of(m, FACT_MAPPING_INO, &ino);
        return judge_file_of(kb_fact_str_of(m, FACT_MAPPING_DEV), known, ino);
}

/* Unknown when stat failed. */
static judge_file fd_file(json_object *fd) {
        int64_t ino = -1;
        bool known = kb_fact_int_of(fd, FACT_FD_INO, &ino);
        return judge_file_of(kb_fact_str_of(fd, FACT_FD_DEV), known, ino);
}

static judge_file launch_fd_file(json_object *planned) {
        int64_t ino = -1;
        bool known = kb_fact_int_of(planned, FACT_LAUNCH_FD_INO, &ino);
        return judge_file_of(kb_fact_str_of(planned, FACT_LAUNCH_FD_DEV), known, ino);
}

/* Why the other end of pipe target, held as fd (open flags: read end 0, write end 1) by a sandbox
 * process, is not shown to be the sandbox's, or NULL: a process of the look holds that end too (a
 * descriptor of the same pipe opened the other way), or the host's poll of a copy of this end
 * found none left anywhere (pipe_other_end "none": the writers or readers all closed; the pipe
 * reaches nothing). An end held nowhere the host can list (a descriptor in flight in a socket's
 * queue, an io_uring's files) cannot be traced, so it fails. */
static const char *pipe_problem(json_object *snap, json_object *fd, const char *target, int64_t flags, char *buf,
                                size_t size) {
        if (flags < 0) {
                snprintf(buf, size, "%s: the host could not read which end of the pipe it is", target);
                return buf;
        }
        int64_t mode = flags & 03;
        if (mode == 02)
                return NULL; /* both ends in one open file (a FIFO opened for both) */
        json_object *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *fds = kb_fact_arr_of(at(procs, i), FACT_PROCESS_FDS);
                for (size_t k = 0; k < arr_len(fds); k++) {
                        const char *t = kb_fact_str_of(at(fds, k), FACT_FD_TARGET);
                        int64_t other = kb_fact_int_or(at(fds, k), FACT_FD_FLAGS, -1);
                        if (t && strcmp(t, target) == 0 && other >= 0 && (other & 03) != mode)
                                return NULL;
                }
        }
        const char *other_end = kb_fact_str_of(fd, FACT_FD_PIPE_OTHER_END);
        if (other_end && strcmp(other_end, "none") == 0)
                return NULL;
        snprintf(buf, size, "%s (its %s end): its %s end is held by no process the host found (%s)", target,
                 mode == 0 ? "read" : "write", mode == 0 ? "write" : "read",
                 other_end ? "it is open: in flight in a socket's queue, or held where no descriptor table shows it"
                           : kb_fact_str_or(fd, FACT_FD_PIPE_ERROR, "the host did not poll it"));
        return buf;
}

/* "thread T (its own descriptor table) of " for a descriptor of thread T's own table (FD's tid), else "". */
static const char *fd_thread(json_object *fd, char *buf, size_t size) {
        int64_t tid = kb_fact_int_or(fd, FACT_FD_TID, 0);
        if (tid <= 0)
                return "";
        snprintf(buf, size, "thread %" PRId64 " (its own descriptor table) of ", tid);
        return buf;
}

/* Why fd (of process p in snap) refers to something outside the sandbox, or NULL. */
static const char *fd_problem(const kb_judge_input *in, json_object *snap, json_object *p, json_object *fd, char *buf,
                              size_t size) {
        const char *target = kb_fact_str_of(fd, FACT_FD_TARGET), *type = kb_fact_str_of(fd, FACT_FD_TYPE),
                   *rdev = kb_fact_str_of(fd, FACT_FD_RDEV);
        /* Flags and mount not read (fdinfo): not write-only, on no mount. */
        int64_t mnt_id = kb_fact_int_or(fd, FACT_FD_MNT_ID, -1), flags = kb_fact_int_or(fd, FACT_FD_FLAGS, -1);
        json_object *outside =
                kb_fact_arr_of(kb_fact_obj_of(judge_last_look(in), FACT_LOOK_LAUNCHER), FACT_LAUNCHER_OUTSIDE_INODES);
        if (!target)
                return "the host could not read what it refers to";
        if (starts(target, "pipe:[") || starts(target, "socket:[")) {
                /* The kernel's log pipe, written: its reader is kbound's keeper, which only writes
                 * it to a bounded file, and bwrap's outer process holds it as its own stdout. Any
                 * other process outside that holds it is still a channel (below). */
                const char *log_pipe =
                        kb_fact_str_of(kb_fact_obj_of(in->expect, FACT_EXPECT_KERNEL_LOG), FACT_LOG_KEEPER_PIPE);
                bool log_written = log_pipe && strcmp(target, log_pipe) == 0 && flags >= 0 && (flags & 03) == 01;
                if (!log_written && str_in(outside, target)) {
                        snprintf(buf, size, "%s is shared with kbound's side of the sandbox (a channel out)", target);
                        return buf;
                }
                json_object *shared = kb_fact_arr_of(snap, FACT_LOOK_OUTSIDE_CHANNELS);
                for (size_t i = 0; i < arr_len(shared); i++) {
                        json_object *c = at(shared, i);
                        const char *held = kb_fact_str_of(c, FACT_OUTSIDE_CHANNEL_TARGET);
                        if (!held || strcmp(held, target) != 0)
                                continue;
                        snprintf(buf, size,
                                 "%s is shared with pid %" PRId64 " (%s, its fd %" PRId64
                                 "), a process outside the sandbox (a channel out)",
                                 target, kb_fact_int_or(c, FACT_OUTSIDE_CHANNEL_PID, -1),
                                 kb_fact_str_or(c, FACT_OUTSIDE_CHANNEL_NAME, "?"),
                                 kb_fact_int_or(c, FACT_OUTSIDE_CHANNEL_FD, -1));
                        return buf;
                }
                /* A pipe held by no one outside: its other end must be held in the sandbox too, or
                 * be proven gone; a socket is traced to its other ends (judge_socket_ends.c). */
                if (!starts(target, "socket:["))
                        return log_written ? NULL : pipe_problem(snap, fd, target, flags, buf, size);
                return judge_socket_problem(snap, p, target, bracket_inode(target), buf, size);
        }
        /* An object no path names: passed only once its other holders are found and are the
         * sandbox's own (judge_objects.c). */
        const char *dev = kb_fact_str_of(fd, FACT_FD_DEV), *memfd = kb_fact_str_of(in->host, FACT_HOST_MEMFD_DEV);
        if (starts(target, "anon_inode:") || (starts(target, "/memfd:") && dev && memfd && strcmp(dev, memfd) == 0))
                return judge_object_problem(snap, p, fd, buf, size);
        /* A message queue of the kernel's own IPC namespace (mq_open: its filesystem is in no mount
         * table), known by the device of that namespace's message-queue filesystem; its holders
         * outside are the look's (judge_shared_problems). */
        const char *mq = kb_fact_str_of(kb_fact_obj_of(snap, FACT_LOOK_IPC), FACT_IPC_MQUEUE_DEV);
        if (dev && mq && strcmp(dev, mq) == 0 && strcmp(kb_fact_str_or(fd, FACT_FD_TYPE, "?"), "reg") == 0)
                return NULL;
        if (target[0] != '/') {
                snprintf(buf, size, "%s is a kind of descriptor kbound does not let through", target);
                return buf;
        }
        json_object *through = mnt_id >= 0 ? mount_by_id(judge_mounts_of(snap, p), mnt_id) : NULL;
        if (through && type && (strcmp(type, "chr") == 0 || strcmp(type, "blk") == 0)) {
                /* A device opened through one of the process's own mounts: only one of kbound's own
                 * /dev nodes (the node bound there itself) or a pty of the sandbox's own devpts. */
                json_object *node_target = kb_fact_obj_of(through, FACT_MOUNT_TARGET);
                const char *node = kb_fact_str_of(node_target, FACT_STAT_RDEV),
                           *ntype = kb_fact_str_of(node_target, FACT_STAT_TYPE);
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
                         target, type, rdev ? rdev : "?", kb_fact_str_or(through, FACT_MOUNT_MOUNTPOINT, "?"), mnt_id);
                return buf;
        }
        if (through)
                return NULL; /* opened through one of the process's own mounts */
        if (type && strcmp(type, "chr") == 0 && judge_harmless_char(rdev, false))
                return NULL;
        judge_file log = judge_file_id(kb_fact_obj_of(in->expect, FACT_EXPECT_KERNEL_LOG_FILE));
        if (type && strcmp(type, "reg") == 0 && judge_same_file(fd_file(fd), log) && flags >= 0 && (flags & 03) == 01 &&
            (flags & 02000))
                return NULL; /* the kernel's log file (no keeper): write-only, append-only */
        snprintf(buf, size, "%s is on a host mount (mount id %" PRId64 ") outside the sandbox", target, mnt_id);
        return buf;
}

/* bwrap's init is a fork of the bwrap kbound launched, mapped on the host before it entered the
 * sandbox: its program and the files the launcher maps too (its libraries) are its own image, not a
 * reach into the host. True for such a file f of p (its program, or a file it maps privately). */
static bool launcher_image(const kb_judge_input *in, json_object *snap, json_object *p, judge_file f) {
        json_object *launcher = kb_fact_obj_of(snap, FACT_LOOK_LAUNCHER);
        if (!launcher)
                launcher = kb_fact_obj_of(judge_last_look(in), FACT_LOOK_LAUNCHER);
        judge_file bwrap = judge_file_id(kb_fact_obj_of(launcher, FACT_LAUNCHER_EXE));
        if (judge_inner_pid(p) != 1 || !f.known ||
            !judge_same_file(judge_file_id(kb_fact_obj_of(p, FACT_PROCESS_EXE)), bwrap))
                return false;
        char key[64];
        snprintf(key, sizeof key, "%s:%" PRId64, f.dev, f.ino);
        return judge_same_file(f, bwrap) || str_in(kb_fact_arr_of(launcher, FACT_LAUNCHER_MAP_FILES), key);
}

/* Whether the program ref is a memory file (on the memory file device: no mount shows it), which is
 * the sandbox's own as a memory file's descriptor is: its holders outside, by its device and inode,
 * are the look's (judge_objects.c's judge_shared_problems). */
static bool memory_program(const kb_judge_input *in, json_object *ref) {
        const char *dev = kb_fact_str_of(ref, FACT_REF_LINK_DEV),
                   *memfd = kb_fact_str_of(in->host, FACT_HOST_MEMFD_DEV);
        return dev && memfd && strcmp(dev, memfd) == 0;
}

/* Why the working directory, root or program ref (of process p in snap) is outside the sandbox, or
 * NULL: it must lie on one of the mounts of the process's own table, like a descriptor. */
static const char *link_problem(json_object *snap, json_object *p, json_object *ref, char *buf, size_t size) {
        int64_t mnt_id = kb_fact_int_or(ref, FACT_REF_LINK_MNT_ID, -1);
        if (mnt_id >= 0 && mount_by_id(judge_mounts_of(snap, p), mnt_id))
                return NULL;
        snprintf(buf, size,
                 "%s (dev %s, inode %" PRId64 "), is on mount %" PRId64 ", which is not one of the sandbox's",
                 kb_fact_str_or(ref, FACT_REF_LINK_TARGET, "?"), kb_fact_str_or(ref, FACT_REF_LINK_DEV, "?"),
                 kb_fact_int_or(ref, FACT_REF_LINK_INO, -1), mnt_id);
        return buf;
}

/* Why a mapped file (of process p in snap) reaches outside the sandbox, or NULL: it must be the
 * file the sandbox itself reaches at that path, on one of the process's mounts, and a shared,
 * writable mapping (writes go back to the file, also through /proc/<pid>/mem) only of a file on a
 * writable mount; a deleted one must be anonymous memory or on one of the sandbox's filesystems. */
static const char *map_problem(const kb_judge_input *in, json_object *snap, json_object *p, json_object *m, char *buf,
                               size_t size) {
        json_object *mounts = judge_mounts_of(snap, p);
        /* (A memory object a process outside holds too is the look's problem: judge_shared_problems.)
         * Shared and writable unless proven not (facts.def: REQUIRED_TRUE), or that may be made
         * writable (VmFlags mw: mprotect on a file opened for writing; unknown reads as may): writes
         * go back to the file. */
        bool shared = kb_fact_bool_of(m, FACT_MAPPING_SHARED), writable = kb_fact_bool_of(m, FACT_MAPPING_WRITABLE);
        bool shared_rw = shared && (writable || kb_fact_bool_of(m, FACT_MAPPING_MAY_WRITE));
        if (!shared_rw && launcher_image(in, snap, p, map_file(m)))
                return NULL;
        const char *path = kb_fact_str_or(m, FACT_MAPPING_PATH, "?"), *dev = kb_fact_str_of(m, FACT_MAPPING_DEV),
                   *reach = kb_fact_str_of(m, FACT_MAPPING_REACH);
        const char *kind = !shared_rw ? "a mapping of"
                           : writable
                                   ? "a shared, writable mapping of"
                                   : "a shared mapping that may be made writable (its file was opened for writing) of";
        if (kb_fact_bool_of(m, FACT_MAPPING_DELETED)) {
                const char *memfd = kb_fact_str_of(in->host, FACT_HOST_MEMFD_DEV);
                if (dev && memfd && strcmp(dev, memfd) == 0)
                        return NULL;
                for (size_t i = 0; dev && i < arr_len(mounts); i++) {
                        const char *mdev = kb_fact_str_of(at(mounts, i), FACT_MOUNT_DEV);
                        if (mdev && strcmp(mdev, dev) == 0 && judge_mount_is(at(mounts, i), "tmpfs"))
                                return NULL;
                }
                snprintf(buf, size, "%s a deleted file %s (dev %s) the host cannot place on the sandbox's filesystems",
                         kind, path, dev ? dev : "?");
                return buf;
        }
        if (!reach) {
                snprintf(buf, size, "%s %s: the host could not place it (%s)", kind, path,
                         kb_fact_str_or(m, FACT_MAPPING_REACH_ERROR, "not looked up"));
                return buf;
        }
        int64_t mnt_id;
        json_object *through = strcmp(reach, "same") == 0 && kb_fact_int_of(m, FACT_MAPPING_MNT_ID, &mnt_id)
                                       ? mount_by_id(mounts, mnt_id)
                                       : NULL;
        if (!through) {
                snprintf(buf, size,
                         "%s %s (dev %s, inode %" PRId64 "), a file the sandbox does not reach at that path (%s): "
                         "a host file, open to the sandbox through /proc/%" PRId64 "/mem",
                         kind, path, dev ? dev : "?", kb_fact_int_or(m, FACT_MAPPING_INO, -1),
                         strcmp(reach, "other") == 0 ? "another file is there" : "nothing is there", judge_pid_of(p));
                return buf;
        }
        if (shared_rw && !judge_mount_writable(through)) {
                snprintf(buf, size,
                         "%s %s, on the read-only mount at %s: writes to it go back to the file, past the mount", kind,
                         path, kb_fact_str_or(through, FACT_MOUNT_MOUNTPOINT, "?"));
                return buf;
        }
        return NULL;
}

/* The list of p's refs (its threads, its maps), after a problem when the host could not read it
 * (what: the error it notes then; words: what it is) from a process that is not a zombie. */
static json_object *refs_read(verdict *v, json_object *p, json_object *refs, kb_fact_arr list_fact, kb_fact_what what,
                              const char *words) {
        char buf[DETAIL_MAX];
        json_object *list = kb_fact_arr_of(refs, list_fact);
        const char *unread = judge_process_error(p, what, NULL, buf, sizeof buf);
        if ((!list || unread) && !judge_zombie(p))
                verdict_problem(v, "the host could not read the %s of pid %" PRId64 " (%s): %s", words, judge_pid_of(p),
                                judge_name_of(p), unread ? unread : "not read");
        return list;
}

/* Why the tracer of a thread (its TracerPid; 0 for none) is not the sandbox's, or NULL: a thread
 * attached with ptrace has its memory and registers read and written by the tracer (one thread is
 * enough: they share the memory), so a tracer outside the sandbox is a way in. A tracer is a
 * thread: it passes when it is one of a sandbox process of the look. */
static const char *tracer_problem(json_object *snap, int64_t tracer, char *buf, size_t size) {
        json_object *task = NULL;
        if (tracer == 0 || judge_find_task(snap, tracer, &task))
                return NULL;
        snprintf(buf, size,
                 "is traced by pid %" PRId64
                 ", a process outside the sandbox (ptrace reaches its memory and registers)",
                 tracer);
        return buf;
}

/* The tracers of process p's every thread (its status's TracerPid and each TASK's: PTRACE_SEIZE
 * takes one thread), judged; unread is not none. Returns how many were judged. */
static size_t tracer_problems(verdict *v, json_object *snap, json_object *p) {
        char who[160], buf[256];
        int64_t tracer;
        size_t n = 1;
        if (!kb_fact_int_of(p, FACT_PROCESS_TRACER_PID, &tracer))
                verdict_problem(v, "the host could not read whether %s is traced (TracerPid)",
                                judge_task_words(NULL, p, who, sizeof who));
        else if (tracer_problem(snap, tracer, buf, sizeof buf))
                verdict_problem(v, "%s %s", judge_task_words(NULL, p, who, sizeof who), buf);
        json_object *tasks = kb_fact_arr_of(p, FACT_PROCESS_TASKS);
        if (!tasks && !judge_zombie(p))
                verdict_problem(v,
                                "the host could not list the threads of %s: whether one is traced, runs with other "
                                "credentials or holds a descriptor table of its own is not known",
                                judge_task_words(NULL, p, who, sizeof who));
        for (size_t i = 0; i < arr_len(tasks); i++) {
                json_object *task = at(tasks, i);
                n++;
                if (judge_task_exited(task))
                        continue; /* exited: it is traced by no one now */
                if (!kb_fact_int_of(task, FACT_TASK_TRACER_PID, &tracer))
                        verdict_problem(v, "the host could not read whether %s is traced (TracerPid)",
                                        judge_task_words(task, p, who, sizeof who));
                else if (tracer_problem(snap, tracer, buf, sizeof buf))
                        verdict_problem(v, "%s %s", judge_task_words(task, p, who, sizeof who), buf);
        }
        return n;
}

/* Every reference of process p but its descriptors (inspect_refs.c), judged: its working directory,
 * root and program, each thread's own, and its mapped files. Unread ones never pass; a zombie holds
 * none of its own. Returns how many were judged. */
static size_t ref_problems(verdict *v, const kb_judge_input *in, json_object *snap, json_object *p) {
        json_object *refs = kb_fact_obj_of(p, FACT_PROCESS_REFS);
        int64_t pid = judge_pid_of(p);
        const char *name = judge_name_of(p);
        char why_buf[DETAIL_MAX];
        if (!refs) {
                verdict_problem(v, "the host did not read what pid %" PRId64 " (%s) holds besides its descriptors", pid,
                                name);
                return 0;
        }
        size_t n = 1 + tracer_problems(v, snap, p);
        /* Each reference, by the facts of its own object: a process's (REFS) and a thread's
         * (THREAD_REF, no program of its own). */
        const struct {
                kb_fact_obj link;
                kb_fact_str error;
                const char *words;
        } links[] = {{FACT_REFS_CWD, FACT_REFS_CWD_ERROR, "working directory"},
                     {FACT_REFS_ROOT, FACT_REFS_ROOT_ERROR, "root"},
                     {FACT_REFS_EXE, FACT_REFS_EXE_ERROR, "program"}},
          thread_links[] = {{FACT_THREAD_REF_CWD, FACT_THREAD_REF_CWD_ERROR, "working directory"},
                            {FACT_THREAD_REF_ROOT, FACT_THREAD_REF_ROOT_ERROR, "root"}};
        for (size_t i = 0; i < KB_ELEMENTSOF(links); i++) {
                json_object *ref = kb_fact_obj_of(refs, links[i].link);
                n++;
                if (!ref && !judge_zombie(p))
                        verdict_problem(v, "the host could not read the %s of pid %" PRId64 " (%s): %s", links[i].words,
                                        pid, name, kb_fact_str_or(refs, links[i].error, "not read"));
                else if (ref && !(links[i].link.id == FACT_REFS_EXE.id && launcher_image(in, snap, p, ref_file(ref))) &&
                         !(links[i].link.id == FACT_REFS_EXE.id && memory_program(in, ref)) &&
                         link_problem(snap, p, ref, why_buf, sizeof why_buf))
                        verdict_problem(v, "the %s of pid %" PRId64 " (%s), %s", links[i].words, pid, name, why_buf);
        }
        json_object *threads = refs_read(v, p, refs, FACT_REFS_THREADS, WHAT_THREADS, "threads");
        for (size_t t = 0; t < arr_len(threads); t++) {
                json_object *th = at(threads, t);
                int64_t tid = kb_fact_int_or(th, FACT_THREAD_REF_TID, -1);
                for (size_t i = 0; i < KB_ELEMENTSOF(thread_links); i++) {
                        json_object *ref = kb_fact_obj_of(th, thread_links[i].link);
                        n++;
                        if (!ref)
                                verdict_problem(v,
                                                "the host could not read the %s of thread %" PRId64 " of pid %" PRId64
                                                " (%s): %s",
                                                thread_links[i].words, tid, pid, name,
                                                kb_fact_str_or(th, thread_links[i].error, "not read"));
                        else if (link_problem(snap, p, ref, why_buf, sizeof why_buf))
                                verdict_problem(v, "the %s of thread %" PRId64 " of pid %" PRId64 " (%s), %s",
                                                thread_links[i].words, tid, pid, name, why_buf);
                }
        }
        json_object *maps = refs_read(v, p, refs, FACT_REFS_MAPS, WHAT_MAPS, "memory mappings");
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
 * handed it (each descriptor by number and object) and bwrap 0.8's own: an O_PATH descriptor of the host's /proc
 * (opened before the namespaces were made) and anonymous objects the host traced to the sandbox alone (the eventfd
 * that carries PID 2's exit status to the bwrap outside, judge_objects.c). Anything else was inherited from
 * elsewhere, and everything PID 1 holds then, the kernel inherits. Returns how many descriptors were judged. */
static size_t pre_exec_problems(verdict *v, const kb_judge_input *in, size_t *ret_refs) {
        json_object *pe = in->pre_exec, *plan = kb_fact_obj_of(in->expect, FACT_EXPECT_LAUNCH);
        char buf[DETAIL_MAX];
        if (!plan && judge_audited(in)) {
                verdict_not_applicable(v, "the look before the kernel's program ran, holding what kbound handed "
                                          "bwrap: the deployment's launcher does not wait for kbound's");
                return 0;
        }
        if (!plan) {
                verdict_problem(v, "kbound kept no record of the descriptors it handed bwrap");
                return 0;
        }
        if (!pe) {
                verdict_problem(v, "the host took no look at the sandbox before the kernel's program ran");
                return 0;
        }
        int64_t block_fd = -1;
        if (!kb_fact_int_of(plan, FACT_LAUNCH_BLOCK_FD, &block_fd) || block_fd < 0) {
                verdict_problem(v, "kbound kept no record of the block channel it handed bwrap");
                block_fd = -1; /* matches no descriptor and no read */
        }
        json_object *launcher = kb_fact_obj_of(pe, FACT_LOOK_LAUNCHER);
        if (judge_look_error(pe, WHAT_PROCESS_LIST, buf, sizeof buf))
                verdict_problem(v, "the host could not list processes before the kernel ran (%s)", buf);
        const char *value = bwrap_option_value(kb_fact_arr_of(launcher, FACT_LAUNCHER_ARGV), "--block-fd");
        char want[32];
        snprintf(want, sizeof want, "%" PRId64, block_fd);
        if (!value || strcmp(value, want) != 0)
                verdict_problem(v,
                                "the running bwrap was not started with --block-fd %" PRId64
                                ": nothing made the sandbox wait for "
                                "the host's look before the kernel ran",
                                block_fd);
        json_object *init = kb_fact_obj_of(pe, FACT_LOOK_INIT);
        const char *init_error = judge_look_error(pe, WHAT_INIT_SYSCALL, buf, sizeof buf);
        int64_t reads_fd;
        if (!init)
                verdict_problem(v, "the host could not see whether bwrap's init waited before the kernel ran%s%s",
                                init_error ? ": " : "", init_error ? init_error : "");
        else if (!kb_fact_int_of(init, FACT_INIT_READS_FD, &reads_fd) || reads_fd != block_fd || block_fd < 0)
                verdict_problem(v,
                                "bwrap's init was not waiting on kbound's block channel (fd %" PRId64
                                ") when the host looked (it was in: %s): "
                                "the kernel's program may already have run",
                                block_fd, kb_fact_str_or(init, FACT_INIT_SYSCALL, "?"));
        json_object *procs = kb_fact_arr_of(pe, FACT_LOOK_PROCESSES), *planned = kb_fact_arr_of(plan, FACT_LAUNCH_FDS);
        judge_file proc = judge_file_id(kb_fact_obj_of(plan, FACT_LAUNCH_PROC));
        if (arr_len(procs) == 0)
                verdict_problem(v, "the host found no process in the sandbox before the kernel ran");
        size_t n = 0;
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *p = at(procs, i), *fds = kb_fact_arr_of(p, FACT_PROCESS_FDS);
                int64_t pid = judge_pid_of(p), inner = judge_inner_pid(p);
                if (inner != 1) {
                        verdict_problem(v,
                                        "the sandbox did not wait for kbound: pid %" PRId64 " (%s, PID %" PRId64
                                        " in the sandbox) ran "
                                        "before kbound let the kernel start",
                                        pid, judge_name_of(p), inner);
                        continue;
                }
                /* PID 1 is a fork of the bwrap outside: the same program, unless it has exec'd another. */
                json_object *bwrap_exe = kb_fact_obj_of(launcher, FACT_LAUNCHER_EXE),
                            *exe = kb_fact_obj_of(p, FACT_PROCESS_EXE);
                if (!judge_same_file(judge_file_id(exe), judge_file_id(bwrap_exe)))
                        verdict_problem(
                                v,
                                "before the kernel ran, the sandbox's PID 1 (pid %" PRId64
                                ") was already %s, not the bwrap "
                                "outside (%s)",
                                pid,
                                kb_fact_str_or(exe, FACT_FILE_ID_PATH, kb_fact_str_or(p, FACT_PROCESS_EXE_ERROR, "?")),
                                kb_fact_str_or(bwrap_exe, FACT_FILE_ID_PATH, "unknown"));
                const char *unread = judge_process_error(p, WHAT_FD, NULL, buf, sizeof buf);
                if (!fds || unread)
                        verdict_problem(v,
                                        "the host could not read the descriptors of PID 1 before the kernel ran (%s)",
                                        unread ? unread : "no table");
                bool block_held = false;
                size_t proc_fds = 0;
                for (size_t f = 0; f < arr_len(fds); f++) {
                        json_object *fd = at(fds, f), *match = NULL;
                        int64_t num = kb_fact_int_or(fd, FACT_FD_FD, -1), planned_num;
                        const char *target = kb_fact_str_or(fd, FACT_FD_TARGET, "?");
                        n++;
                        /* kbound handed descriptors to PID 1's own table; another thread's is none of them */
                        for (size_t k = 0; k < arr_len(planned) && !match && !kb_fact_has(fd, FACT_FD_TID); k++)
                                if (kb_fact_int_of(at(planned, k), FACT_LAUNCH_FD_FD, &planned_num) &&
                                    planned_num == num && judge_same_file(launch_fd_file(at(planned, k)), fd_file(fd)))
                                        match = at(planned, k);
                        if (match) {
                                block_held |= block_fd >= 0 && num == block_fd;
                                continue;
                        }
                        /* bwrap's own: O_PATH (010000000) of the host's /proc root, and its eventfd */
                        int64_t flags = kb_fact_int_or(fd, FACT_FD_FLAGS, -1); /* -1: not read, not O_PATH */
                        if (flags >= 0 && (flags & 010000000) && judge_same_file(fd_file(fd), proc) && proc_fds++ == 0)
                                continue;
                        /* bwrap's own eventfd, its status channel to the bwrap outside, or any
                         * other anonymous object the host traced to the sandbox's own holders */
                        char why[256];
                        if (starts(target, "anon_inode:") && !judge_object_problem(pe, p, fd, why, sizeof why))
                                continue;
                        char thread[72];
                        verdict_problem(v,
                                        "before the kernel ran, fd %" PRId64 " of %sthe sandbox's PID 1 (pid %" PRId64
                                        ") was %s, which "
                                        "kbound did not hand in",
                                        num, fd_thread(fd, thread, sizeof thread), pid, target);
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

json_object *kb_judge_descriptors(const kb_judge_input *in) {
        verdict v;
        verdict_begin(&v, in);
        char buf[DETAIL_MAX], why_buf[DETAIL_MAX];
        size_t n_fds = 0, n_refs = 0;
        /* First what the kernel started with, then what the looks after saw. */
        size_t n_pre = pre_exec_problems(&v, in, &n_refs);
        json_object *last = judge_last_look(in);
        if (judge_look_error(last, WHAT_LAUNCH_SIDE_FDS, buf, sizeof buf))
                verdict_problem(&v, "the host could not read %s", buf);
        else if (last && !kb_fact_arr_of(kb_fact_obj_of(last, FACT_LOOK_LAUNCHER), FACT_LAUNCHER_OUTSIDE_INODES))
                verdict_problem(&v, "the host did not read which pipes and sockets the launch side holds");
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s);
                if (judge_look_error(snap, WHAT_KBOUND_SOCKETS, buf, sizeof buf))
                        verdict_problem(&v, "the host could not list %s", buf);
                judge_socket_look_problems(&v, snap);
                if (!kb_fact_arr_of(at(in->snapshots, s), FACT_LOOK_OUTSIDE_CHANNELS))
                        verdict_problem(&v,
                                        "the host did not check which processes outside the sandbox hold its pipes and "
                                        "sockets (%s)",
                                        kb_fact_str_or(at(in->snapshots, s), FACT_LOOK_LABEL, "?"));
        }
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s), *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i), *fds = kb_fact_arr_of(p, FACT_PROCESS_FDS);
                        int64_t pid = judge_pid_of(p);
                        const char *unread = judge_process_error(p, WHAT_FD, NULL, buf, sizeof buf);
                        if ((!fds || unread) && !judge_zombie(p)) /* a zombie holds none */
                                verdict_problem(&v, "the host could not read the descriptors of pid %" PRId64 " (%s)",
                                                pid, unread ? unread : "no table");
                        if (judge_process_error(p, WHAT_FD_CHURN, NULL, buf, sizeof buf))
                                verdict_problem(&v,
                                                "the descriptors of pid %" PRId64 " (%s) kept closing or moving to "
                                                "other numbers while the host read them, reading after reading: a "
                                                "descriptor moved from number to number is not seen",
                                                pid, judge_name_of(p));
                        for (size_t f = 0; f < arr_len(fds); f++) {
                                json_object *fd = at(fds, f);
                                n_fds++;
                                const char *why = fd_problem(in, snap, p, fd, why_buf, sizeof why_buf);
                                char thread[72];
                                if (why)
                                        verdict_problem(&v, "fd %" PRId64 " of %spid %" PRId64 " (%s): %s",
                                                        kb_fact_int_or(fd, FACT_FD_FD, -1),
                                                        fd_thread(fd, thread, sizeof thread), pid, judge_name_of(p),
                                                        why);
                        }
                        n_refs += ref_problems(&v, in, snap, p);
                }
                judge_shared_problems(&v, in, snap);
        }
        verdict_evidence(&v, "descriptors_checked", json_object_new_int64((int64_t) n_fds));
        verdict_evidence(&v, "references_checked", json_object_new_int64((int64_t) n_refs));
        verdict_evidence(&v, "descriptors_before_exec", json_object_new_int64((int64_t) n_pre));
        char pass[640];
        snprintf(pass, sizeof pass,
                 "all %zu open descriptors of the sandbox's processes (read by the host) refer to the sandbox's own "
                 "mounts, sockets (each traced to its other ends), pipes or anonymous objects, the kernel's write-only "
                 "log, or /dev/null-like devices, "
                 "and all %zu other references (tracers, working directories, roots and programs of every process and "
                 "thread, mapped files) to the sandbox's own processes and mounts; "
                 "before the kernel's program ran, bwrap's init waited on kbound's block channel holding only the "
                 "descriptors "
                 "kbound handed it and bwrap's own (%zu)",
                 n_fds, n_refs, n_pre);
        return verdict_end(&v, KB_CHECK_DESCRIPTORS, pass);
}

json_object *kb_judge_descriptors_before_start(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        size_t n_refs = 0, n_pre = pre_exec_problems(&v, in, &n_refs);
        verdict_evidence(&v, "descriptors_before_exec", json_object_new_int64((int64_t) n_pre));
        verdict_evidence(&v, "references_checked", json_object_new_int64((int64_t) n_refs));
        return verdict_end_before_start(&v, KB_CHECK_DESCRIPTORS,
                                        "what bwrap's init held (its descriptors, working directory, root, program "
                                        "and mapped files), all of which the kernel inherits");
}

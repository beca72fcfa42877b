/* inspect_threads.c: every thread of a sandbox process, for what a thread holds apart from its
 * process. The kernel keeps per thread, not per process: the descriptor table (a thread made
 * without CLONE_FILES, or after unshare(CLONE_FILES), has one /proc/<pid>/fd never shows), the
 * working directory and root (CLONE_FS), the credentials (a raw setuid changes one thread; glibc's
 * broadcast is a library's courtesy), the tracer (PTRACE_SEIZE takes one thread), the seccomp
 * filters (seccomp(2) without TSYNC filters one thread), and the namespaces (setns and unshare
 * move one thread). A process whose main thread exited alone (SYS_exit) is a zombie leader whose
 * links, maps and table are gone while its other threads live on: it is read through one of those. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"
#include "base/procfs.h"

#define THREADS_MAX 1024 /* threads read per process */
#define TABLES_MAX 64    /* distinct descriptor tables read per process */

/* Whether the thread's state letter says it has exited (a zombie or dead task holds nothing). */
static bool exited(char state) {
        return state == 'Z' || state == 'X' || state == 'x';
}

/* The state letter of <task_root>/<tid>/stat, '?' when it cannot be read. */
static char task_state(const char *task_root, pid_t tid) {
        _cleanup_free_ char *text = NULL;
        kb_procfs_stat st;
        if (kb_inspect_read_proc(task_root, tid, "stat", KB_PROCFS_STAT_MAX, &text, NULL) < 0 ||
            kb_procfs_stat_parse(text, &st) < 0)
                return '?';
        return st.state;
}

pid_t kb_inspect_read_through(const char *proc_root, pid_t pid, const char *state) {
        if (!state || !exited(state[0]))
                return pid;
        char task_root[PATH_MAX];
        snprintf(task_root, sizeof task_root, "%s/%d/task", proc_root, (int) pid);
        DIR *d = opendir(task_root);
        pid_t live = pid;
        struct dirent *de;
        while (d && live == pid && (de = readdir(d))) {
                char *end;
                long tid = strtol(de->d_name, &end, 10);
                if (*end || tid <= 0 || tid == pid)
                        continue;
                char s = task_state(task_root, (pid_t) tid);
                if (s != '?' && !exited(s))
                        live = (pid_t) tid;
        }
        if (d)
                closedir(d);
        return live;
}

bool kb_inspect_all_exited(const char *proc_root, pid_t pid) {
        /* One reading of stat gives both, so a thread cannot be missed the way a listing of task/
         * can miss one while others exit: the process's count of threads still counts its exited
         * main thread until the zombie is reaped, and any thread not yet released. */
        _cleanup_free_ char *text = NULL;
        kb_procfs_stat st;
        return kb_inspect_read_proc(proc_root, pid, "stat", KB_PROCFS_STAT_MAX, &text, NULL) >= 0 &&
               kb_procfs_stat_parse(text, &st) == 0 && exited(st.state) && st.threads == 1;
}

pid_t kb_inspect_process_via(json_object *proc) {
        int64_t via = kb_fact_int_or(proc, FACT_PROCESS_READ_THROUGH, 0);
        return via > 0 ? (pid_t) via : (pid_t) kb_fact_int_or(proc, FACT_PROCESS_PID, -1);
}

/* What of the thread could not be read (a file of <task_root>/<tid> missing: -ESRCH from
 * kb_inspect_read_proc) is the thread gone (-ESRCH) unless its folder is still there: then it is
 * noted as not read (what), never taken as an end. */
static int missing(const char *task_root, pid_t tid, kb_fact_what what, json_object *errors) {
        if (!kb_inspect_process_exists(task_root, tid))
                return -ESRCH;
        return kb_inspect_note(errors, what, NULL, ENOENT);
}

/* ---- one thread's status: what the kernel keeps in its credentials, tracer and seccomp ---- */

/* The TASK facts of the thread's status (read and parsed as a process's, then copied under the
 * TASK's names), or an error of it. -ESRCH when it is gone, -ENOMEM. */
static int task_status(const char *task_root, pid_t tid, json_object *task, json_object *errors) {
        const struct {
                kb_fact_arr from, to;
        } arrs[] = {{FACT_PROCESS_NSPID, FACT_TASK_NSPID},
                    {FACT_PROCESS_UID, FACT_TASK_UID},
                    {FACT_PROCESS_GID, FACT_TASK_GID},
                    {FACT_PROCESS_GROUPS, FACT_TASK_GROUPS}};
        const struct {
                kb_fact_str from, to;
        } strs[] = {{FACT_PROCESS_STATE, FACT_TASK_STATE},     {FACT_PROCESS_CAP_INH, FACT_TASK_CAP_INH},
                    {FACT_PROCESS_CAP_PRM, FACT_TASK_CAP_PRM}, {FACT_PROCESS_CAP_EFF, FACT_TASK_CAP_EFF},
                    {FACT_PROCESS_CAP_BND, FACT_TASK_CAP_BND}, {FACT_PROCESS_CAP_AMB, FACT_TASK_CAP_AMB}};
        const struct {
                kb_fact_int from, to;
        } ints[] = {{FACT_PROCESS_NO_NEW_PRIVS, FACT_TASK_NO_NEW_PRIVS},
                    {FACT_PROCESS_SECCOMP, FACT_TASK_SECCOMP},
                    {FACT_PROCESS_SECCOMP_FILTERS, FACT_TASK_SECCOMP_FILTERS},
                    {FACT_PROCESS_TRACER_PID, FACT_TASK_TRACER_PID}};
        _cleanup_free_ char *text = NULL;
        int r = kb_inspect_read_proc(task_root, tid, "status", KB_PROCFS_STATUS_MAX, &text, NULL);
        if (r == -ESRCH)
                return missing(task_root, tid, WHAT_STATUS, errors);
        _cleanup_json_ json_object *status = NULL;
        if (r >= 0)
                r = kb_procfs_status_parse(text, &status);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return kb_inspect_note(errors, WHAT_STATUS, NULL, r);
        for (size_t i = 0; i < KB_ELEMENTSOF(arrs); i++) {
                json_object *v = kb_fact_arr_of(status, arrs[i].from);
                if (v && kb_fact_set_arr(task, arrs[i].to, json_object_get(v)) < 0)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < KB_ELEMENTSOF(strs); i++) {
                const char *v = kb_fact_str_of(status, strs[i].from);
                if (v && kb_fact_set_str(task, strs[i].to, v) < 0)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < KB_ELEMENTSOF(ints); i++) {
                int64_t v;
                if (kb_fact_int_of(status, ints[i].from, &v) && kb_fact_set_int(task, ints[i].to, v) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* ---- one thread's namespaces, where they are not its process's ---- */

/* TASK's ns and ns_owners: the namespaces the thread is in that the process (proc's ns, read
 * through its main or read-through thread) is not. -ESRCH when it is gone, -ENOMEM. */
static int task_namespaces(const char *task_root, pid_t tid, json_object *proc, json_object *task,
                           json_object *errors) {
        const char *const *names = kb_inspect_namespaces();
        uint64_t ino[NS_TYPES];
        int r = kb_inspect_ns_inodes_all(task_root, tid, ino);
        if (r == -ESRCH)
                return missing(task_root, tid, WHAT_NS, errors);
        if (r < 0)
                return kb_inspect_note(errors, WHAT_NS, NULL, r);
        json_object *process_ns = kb_fact_map_of(proc, FACT_PROCESS_NS);
        _cleanup_json_ json_object *own = json_object_new_object();
        if (!own)
                return -ENOMEM;
        for (size_t i = 0; i < NS_TYPES; i++) {
                json_object *theirs = NULL;
                if (!ino[i] || (json_object_object_get_ex(process_ns, names[i], &theirs) &&
                                (uint64_t) json_object_get_int64(theirs) == ino[i]))
                        continue;
                if (kb_inspect_map_add(own, names[i], json_object_new_int64((int64_t) ino[i])) < 0)
                        return -ENOMEM;
        }
        if (json_object_object_length(own) == 0)
                return 0;
        /* Rare (a thread that moved alone): who owns each of those, as for a process. */
        json_object *owners = NULL;
        _cleanup_json_ json_object *owner_errors = json_object_new_array(), *kept = json_object_new_object();
        if (!owner_errors || !kept)
                return -ENOMEM;
        r = kb_inspect_ns_owners_object(task_root, tid, owner_errors, &owners);
        if (r == -ESRCH)
                return missing(task_root, tid, WHAT_NS_OWNERS, errors);
        if (r < 0)
                return r;
        json_object_object_foreach(owners, name, chain) {
                if (json_object_object_get_ex(own, name, NULL) &&
                    kb_inspect_map_add(kept, name, json_object_get(chain)) < 0) {
                        json_object_put(owners);
                        return -ENOMEM;
                }
        }
        json_object_put(owners);
        /* what could not be asked of those namespaces only: the others are the process's */
        for (size_t i = 0; i < json_object_array_length(owner_errors); i++) {
                json_object *e = json_object_array_get_idx(owner_errors, i);
                const char *what = kb_fact_str_of(e, FACT_ERROR_WHAT), *slash = what ? strchr(what, '/') : NULL;
                if (slash && json_object_object_get_ex(own, slash + 1, NULL) &&
                    kb_inspect_push(errors, json_object_get(e)) < 0)
                        return -ENOMEM;
        }
        if (kb_fact_set_map(task, FACT_TASK_NS, TAKE_PTR(own)) < 0)
                return -ENOMEM;
        return kb_fact_set_map(task, FACT_TASK_NS_OWNERS, TAKE_PTR(kept));
}

/* ---- one thread's working directory and root (CLONE_FS) ---- */

/* Whether two REF_LINKs name the same directory on the same mount. */
static bool same_ref(json_object *a, json_object *b) {
        const char *da = kb_fact_str_of(a, FACT_REF_LINK_DEV), *db = kb_fact_str_of(b, FACT_REF_LINK_DEV);
        return a && b && da && db && strcmp(da, db) == 0 &&
               kb_fact_int_or(a, FACT_REF_LINK_INO, -1) == kb_fact_int_or(b, FACT_REF_LINK_INO, -1) &&
               kb_fact_int_or(a, FACT_REF_LINK_MNT_ID, -1) == kb_fact_int_or(b, FACT_REF_LINK_MNT_ID, -1);
}

/* A THREAD_REF of the thread at tdir appended to threads when its working directory or root is not
 * the process's (refs) or cannot be read. -ENOMEM only. */
static int thread_ref(const char *tdir, pid_t tid, json_object *refs, json_object *threads) {
        _cleanup_json_ json_object *t = json_object_new_object();
        if (!t || kb_fact_set_int(t, FACT_THREAD_REF_TID, tid) < 0)
                return -ENOMEM;
        const struct {
                const char *name;
                kb_fact_obj link;
                kb_fact_str error;
        } links[] = {{"cwd", FACT_THREAD_REF_CWD, FACT_THREAD_REF_CWD_ERROR},
                     {"root", FACT_THREAD_REF_ROOT, FACT_THREAD_REF_ROOT_ERROR}};
        for (size_t i = 0; i < KB_ELEMENTSOF(links); i++) {
                char path[PATH_MAX + 32];
                snprintf(path, sizeof path, "%s/%s", tdir, links[i].name);
                int err = 0;
                json_object *f = kb_inspect_link_facts(path, &err);
                if (!f && err == ENOMEM)
                        return -ENOMEM;
                if (f ? kb_fact_set_obj(t, links[i].link, f) < 0
                      : kb_fact_set_str(t, links[i].error, strerror(err)) < 0)
                        return -ENOMEM;
        }
        if (access(tdir, F_OK) < 0)
                return 0; /* ended meanwhile */
        json_object *tc = kb_fact_obj_of(t, FACT_THREAD_REF_CWD), *tr = kb_fact_obj_of(t, FACT_THREAD_REF_ROOT);
        if (tc && tr && same_ref(tc, kb_fact_obj_of(refs, FACT_REFS_CWD)) &&
            same_ref(tr, kb_fact_obj_of(refs, FACT_REFS_ROOT)))
                return 0; /* shares the process's */
        return kb_inspect_push(threads, TAKE_PTR(t));
}

/* ---- one thread's descriptor table (CLONE_FILES) ---- */

/* The tables read so far: the process's (that of the thread it was read through) first. */
typedef struct tables {
        pid_t tid[TABLES_MAX];
        size_t n;
} tables;

/* Whether tid's descriptor table is one of those read: kcmp(KCMP_FILES) answers 0 for the same
 * table. One kcmp cannot compare (gone, refused, a kernel without kcmp) is not the same: the table
 * is read then, at worst twice. */
static bool table_read(const tables *tb, pid_t tid) {
        for (size_t i = 0; i < tb->n; i++)
                if (tb->tid[i] == tid || syscall(SYS_kcmp, tb->tid[i], tid, KCMP_FILES, 0, 0) == 0)
                        return true;
        return false;
}

/* The descriptors of the thread's own table (tdir/fd), each with its tid, appended to the
 * process's fds. 0, -ESRCH when the thread is gone, -ENOMEM; one that cannot be read is noted. */
static int task_table(const char *task_root, pid_t tid, json_object *fds, json_object *errors) {
        json_object *own = NULL;
        int r = kb_inspect_fd_facts(task_root, tid, errors, &own);
        if (r == -ESRCH)
                return missing(task_root, tid, WHAT_FD, errors);
        if (r < 0)
                return r;
        int ret = 0;
        for (size_t i = 0; ret >= 0 && i < json_object_array_length(own); i++) {
                json_object *fd = json_object_get(json_object_array_get_idx(own, i));
                if (kb_fact_set_int(fd, FACT_FD_TID, tid) < 0 || kb_inspect_push(fds, fd) < 0)
                        ret = -ENOMEM;
        }
        json_object_put(own);
        return ret;
}

/* ---- the walk ---- */

/* One thread other than the main one into task (and threads, fds): its status, and unless it has
 * exited, its namespaces, working directory and root, and its descriptor table when it is not one
 * read already. -ESRCH when it is gone, -ENOMEM. */
static int one_task(const char *task_root, pid_t tid, json_object *proc, tables *tb, json_object *task,
                    json_object *threads, json_object *errors) {
        json_object *task_errors = json_object_new_array();
        if (kb_fact_set_int(task, FACT_TASK_TID, tid) < 0 || kb_fact_set_arr(task, FACT_TASK_ERRORS, task_errors) < 0)
                return -ENOMEM;
        int r = task_status(task_root, tid, task, task_errors);
        if (r < 0)
                return r;
        const char *state = kb_fact_str_of(task, FACT_TASK_STATE);
        if (state && exited(state[0]))
                return 0; /* it holds nothing now */
        r = task_namespaces(task_root, tid, proc, task, task_errors);
        if (r < 0)
                return r;
        char tdir[PATH_MAX + 16];
        snprintf(tdir, sizeof tdir, "%s/%d", task_root, (int) tid);
        r = thread_ref(tdir, tid, kb_fact_obj_of(proc, FACT_PROCESS_REFS), threads);
        if (r < 0)
                return r;
        if (table_read(tb, tid))
                return 0;
        if (kb_fact_set_bool(task, FACT_TASK_OWN_FILES, true) < 0)
                return -ENOMEM;
        if (tb->n == TABLES_MAX)
                return kb_inspect_note(errors, WHAT_FD, NULL, E2BIG); /* more tables than kbound reads */
        r = task_table(task_root, tid, kb_fact_arr_of(proc, FACT_PROCESS_FDS), errors);
        if (r < 0)
                return r;
        tb->tid[tb->n++] = tid;
        return 0;
}

int kb_inspect_thread_facts(const kb_inspect_target *t, pid_t pid, pid_t via, json_object *errors, json_object *proc) {
        char task_root[PATH_MAX];
        snprintf(task_root, sizeof task_root, "%s/%d/task", t->proc_root, (int) pid);
        DIR *d = opendir(task_root);
        if (!d)
                return errno == ENOENT ? -ESRCH : kb_inspect_note(errors, WHAT_THREADS, NULL, -errno);
        _cleanup_json_ json_object *tasks = json_object_new_array(), *threads = json_object_new_array();
        tables tb = {.tid = {via}, .n = 1};
        int r = tasks && threads ? 0 : -ENOMEM;
        size_t n = 0;
        struct dirent *de;
        while (r >= 0 && (de = readdir(d))) {
                char *end;
                long tid = strtol(de->d_name, &end, 10);
                if (*end || tid <= 0 || tid == pid)
                        continue; /* the main thread's are the process's own facts */
                if (++n > THREADS_MAX) {
                        r = kb_inspect_note(errors, WHAT_THREADS, NULL, E2BIG);
                        break;
                }
                _cleanup_json_ json_object *task = json_object_new_object();
                if (!task) {
                        r = -ENOMEM;
                        break;
                }
                r = one_task(task_root, (pid_t) tid, proc, &tb, task, threads, errors);
                if (r == -ESRCH) {
                        r = 0; /* ended meanwhile */
                        continue;
                }
                if (r >= 0)
                        r = kb_inspect_push(tasks, TAKE_PTR(task));
        }
        closedir(d);
        if (r < 0)
                return r;
        if (kb_fact_set_arr(proc, FACT_PROCESS_TASKS, TAKE_PTR(tasks)) < 0)
                return -ENOMEM;
        json_object *refs = kb_fact_obj_of(proc, FACT_PROCESS_REFS);
        return refs ? kb_fact_set_arr(refs, FACT_REFS_THREADS, TAKE_PTR(threads)) : 0;
}

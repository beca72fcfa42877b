/* inspect_process.c: the walk of the host's processes, which are the sandbox's, and each of those. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"
#include "base/procfs.h"

#define PROCS_MAX 65536 /* host processes looked at in one walk */
#define SANDBOX_PROCS_MAX 4096
#define MAP_MAX 4096
#define CMDLINE_SHOWN 256
#define MAP_SHOWN 256 /* bytes of a uid_map or gid_map kept, squeezed */

/* The first lines of a uid_map/gid_map, squeezed ("999 999 1"; several joined by "; "), into out
 * (MAP_SHOWN bytes); returns out. */
static const char *map_text(const char *text, char out[static MAP_SHOWN]) {
        size_t n = 0;
        bool space = true;
        for (const char *p = text; *p && n + 3 < MAP_SHOWN; p++) {
                char c = *p == '\n' ? ';' : *p;
                if (c == ' ' || c == '\t') {
                        if (!space)
                                out[n++] = ' ';
                        space = true;
                        continue;
                }
                if (c == ';') {
                        while (n > 0 && out[n - 1] == ' ')
                                n--;
                        if (p[1]) {
                                out[n++] = ';';
                                out[n++] = ' ';
                        }
                        space = true;
                        continue;
                }
                out[n++] = c;
                space = false;
        }
        while (n > 0 && out[n - 1] == ' ')
                n--;
        out[n] = '\0';
        return out;
}

/* Names of the secrets of t found in buf[0..len) (NULs count as separators). */
static int secrets_in(const kb_inspect_target *t, char *buf, size_t len, json_object **ret) {
        for (size_t i = 0; i < len; i++)
                if (buf[i] == '\0')
                        buf[i] = '\n';
        _cleanup_json_ json_object *s = json_object_new_string_len(buf, (int) len), *names = json_object_new_array();
        if (!s || !names)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_secrets; i++) {
                if (!t->secrets || !t->secrets[i])
                        continue;
                json_object *found = kb_secrets_scan(t->secrets[i], s);
                if (!found)
                        return -ENOMEM;
                for (size_t j = 0; j < json_object_array_length(found); j++)
                        if (kb_inspect_push(names, json_object_get(json_object_array_get_idx(found, j))) < 0) {
                                json_object_put(found);
                                return -ENOMEM;
                        }
                json_object_put(found);
        }
        *ret = TAKE_PTR(names);
        return 0;
}

/* environ and cmdline of pid (read at root): secret names found in each, and the start of the
 * command line. */
static int scan_texts(const kb_inspect_target *t, const char *root, pid_t pid, json_object *proc, json_object *errors) {
        const struct {
                const char *file;
                kb_fact_what what;
                kb_fact_arr secrets;
                size_t max;
        } texts[] = {{"environ", WHAT_ENVIRON, FACT_PROCESS_ENVIRON_SECRETS, ENVIRON_MAX},
                     {"cmdline", WHAT_CMDLINE, FACT_PROCESS_CMDLINE_SECRETS, CMDLINE_MAX}};
        for (size_t i = 0; i < KB_ELEMENTSOF(texts); i++) {
                _cleanup_free_ char *buf = NULL;
                size_t len = 0;
                int r = kb_inspect_read_proc(root, pid, texts[i].file, texts[i].max, &buf, &len);
                if (r == -ESRCH)
                        return r;
                if (r < 0) {
                        if (kb_inspect_note(errors, texts[i].what, NULL, r) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (i == 1) {
                        size_t shown = len < CMDLINE_SHOWN ? len : CMDLINE_SHOWN;
                        char line[CMDLINE_SHOWN + 1];
                        for (size_t j = 0; j < shown; j++)
                                line[j] = buf[j] == '\0' ? ' ' : buf[j];
                        while (shown > 0 && line[shown - 1] == ' ')
                                shown--;
                        if (kb_fact_set_strn(proc, FACT_PROCESS_CMDLINE, line, shown) < 0)
                                return -ENOMEM;
                }
                json_object *names = NULL;
                if (secrets_in(t, buf, len, &names) < 0 || kb_fact_set_arr(proc, texts[i].secrets, names) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* uid_map and gid_map of pid (read at root), squeezed (map_text). */
static int id_maps(const char *root, pid_t pid, json_object *proc, json_object *errors) {
        const struct {
                const char *file;
                kb_fact_what what;
                kb_fact_str fact;
        } maps[] = {{"uid_map", WHAT_UID_MAP, FACT_PROCESS_UID_MAP}, {"gid_map", WHAT_GID_MAP, FACT_PROCESS_GID_MAP}};
        for (size_t i = 0; i < KB_ELEMENTSOF(maps); i++) {
                _cleanup_free_ char *text = NULL;
                int r = kb_inspect_read_proc(root, pid, maps[i].file, MAP_MAX, &text, NULL);
                if (r == -ESRCH)
                        return r;
                char squeezed[MAP_SHOWN];
                if (r >= 0 ? kb_fact_set_str(proc, maps[i].fact, map_text(text, squeezed)) < 0
                           : kb_inspect_note(errors, maps[i].what, NULL, r) < 0)
                        return -ENOMEM;
        }
        return 0;
}

#define THREAD_RETRIES 3 /* reads of a zombie leader through another thread, after one ended */

/* Everything about one sandbox process. -ESRCH if it ended meanwhile (or, *ret_via != pid, if the
 * thread it was read through did). */
/* The start time of pid now (stat's field 22), or 0 when it cannot be read (gone). */
static unsigned long long start_of(const char *proc_root, pid_t pid) {
        _cleanup_free_ char *text = NULL;
        kb_procfs_stat st;
        if (kb_inspect_read_proc(proc_root, pid, "stat", KB_PROCFS_STAT_MAX, &text, NULL) < 0 ||
            kb_procfs_stat_parse(text, &st) < 0)
                return 0;
        return st.starttime;
}

/* Everything about the process listed as e, read by its pid: -ESRCH when it ended meanwhile,
 * before the read or during it, including when its pid names another process by then (its start
 * time differs at the first read or at the last: what was read between may be the other's). */
static int inspect_process(const kb_inspect_target *t, const proc_entry *e, json_object **ret, pid_t *ret_via) {
        pid_t pid = e->pid;
        _cleanup_json_ json_object *errors = json_object_new_array();
        _cleanup_free_ char *status_text = NULL, *stat_text = NULL;
        json_object *p = NULL;
        if (!errors)
                return -ENOMEM;
        int r = kb_inspect_read_proc(t->proc_root, pid, "status", KB_PROCFS_STATUS_MAX, &status_text, NULL);
        if (r == -ESRCH)
                return r;
        if (r >= 0)
                r = kb_procfs_status_parse(status_text, &p);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* Unreadable status: the process is still listed, with only the error. */
                p = json_object_new_object();
                if (!p || kb_inspect_note(errors, WHAT_STATUS, NULL, r) < 0) {
                        json_object_put(p);
                        return -ENOMEM;
                }
        }
        _cleanup_json_ json_object *proc = p;
        if (kb_fact_set_int(proc, FACT_PROCESS_PID, pid) < 0)
                return -ENOMEM;
        kb_procfs_stat st;
        r = kb_inspect_read_proc(t->proc_root, pid, "stat", KB_PROCFS_STAT_MAX, &stat_text, NULL);
        if (r == -ESRCH)
                return r;
        if (r >= 0)
                r = kb_procfs_stat_parse(stat_text, &st);
        if (r >= 0 && e->starttime && st.starttime != e->starttime)
                return -ESRCH; /* its pid names a process started since the listing */
        if (r >= 0) {
                if (kb_fact_set_int(proc, FACT_PROCESS_SESSION, st.session) < 0 ||
                    kb_fact_set_int(proc, FACT_PROCESS_PGRP, st.pgrp) < 0 ||
                    kb_fact_set_int(proc, FACT_PROCESS_TTY_NR, st.tty_nr) < 0 ||
                    kb_fact_set_obj(proc, FACT_PROCESS_IMAGE, kb_inspect_image_of(t->proc_root, pid, &st)) < 0)
                        return -ENOMEM;
        } else if (kb_inspect_note(errors, WHAT_STAT, NULL, r) < 0)
                return -ENOMEM;
        /* What a process holds is read through its main thread, or, when that one has exited
         * alone while others live on (a zombie leader: its links, maps and table are gone), through
         * a live one: never passed as a zombie that holds nothing. */
        pid_t via = kb_inspect_read_through(t->proc_root, pid, kb_fact_str_of(proc, FACT_PROCESS_STATE));
        *ret_via = via;
        char via_root[PATH_MAX];
        snprintf(via_root, sizeof via_root, "%s/%d/task", t->proc_root, (int) pid);
        const char *root = via == pid ? t->proc_root : via_root;
        if (via != pid && kb_fact_set_int(proc, FACT_PROCESS_READ_THROUGH, via) < 0)
                return -ENOMEM;
        json_object *ns = NULL;
        r = kb_inspect_ns_object(root, via, errors, &ns);
        if (r < 0)
                return r;
        if (kb_fact_set_map(proc, FACT_PROCESS_NS, ns) < 0)
                return -ENOMEM;
        json_object *owners = NULL;
        r = kb_inspect_ns_owners_object(root, via, errors, &owners);
        if (r < 0)
                return r;
        if (kb_fact_set_map(proc, FACT_PROCESS_NS_OWNERS, owners) < 0)
                return -ENOMEM;
        r = kb_inspect_exe_facts(root, via, proc, FACT_PROCESS_EXE, FACT_PROCESS_EXE_ERROR);
        if (r >= 0)
                r = id_maps(root, via, proc, errors);
        if (r >= 0)
                r = scan_texts(t, root, via, proc, errors);
        if (r < 0)
                return r;
        r = kb_inspect_ref_facts(t, root, via, errors, proc);
        if (r < 0)
                return r;
        r = kb_inspect_resource_facts(root, via, errors, proc);
        if (r < 0)
                return r;
        r = kb_inspect_filter_facts(t, pid, proc);
        if (r < 0)
                return r;
        json_object *fds = NULL;
        r = kb_inspect_fd_facts(root, via, errors, &fds);
        if (r < 0)
                return r;
        if (kb_fact_set_arr(proc, FACT_PROCESS_FDS, fds) < 0)
                return -ENOMEM;
        /* Every other thread: what the kernel keeps per thread (its table among them). */
        r = kb_inspect_thread_facts(t, pid, via, errors, proc);
        if (r < 0)
                return r;
        if (e->starttime && start_of(t->proc_root, pid) != e->starttime)
                return -ESRCH; /* ended during the read, its pid perhaps another's already */
        if (kb_fact_set_arr(proc, FACT_PROCESS_ERRORS, TAKE_PTR(errors)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(proc);
        return 0;
}

/* Every process of proc_root with its parent; *ret is malloc'd. */
static int list_processes(const char *proc_root, proc_entry **ret, size_t *ret_n) {
        DIR *d = opendir(proc_root);
        if (!d)
                return -errno;
        size_t n = 0, cap = 256;
        proc_entry *v = malloc(cap * sizeof *v);
        int r = v ? 0 : -ENOMEM;
        struct dirent *de;
        while (r >= 0 && (de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0 || pid > INT_MAX)
                        continue;
                _cleanup_free_ char *text = NULL;
                kb_procfs_stat st;
                if (kb_inspect_read_proc(proc_root, (pid_t) pid, "stat", KB_PROCFS_STAT_MAX, &text, NULL) < 0 ||
                    kb_procfs_stat_parse(text, &st) < 0)
                        continue; /* gone meanwhile */
                if (n == cap) {
                        if (cap >= PROCS_MAX) {
                                r = -E2BIG;
                                break;
                        }
                        proc_entry *nv = realloc(v, 2 * cap * sizeof *v);
                        if (!nv) {
                                r = -ENOMEM;
                                break;
                        }
                        v = nv;
                        cap *= 2;
                }
                v[n] = (proc_entry){.pid = (pid_t) pid,
                                    .ppid = st.ppid,
                                    .state = st.state,
                                    .threads = st.threads,
                                    .starttime = st.starttime};
                memcpy(v[n].comm, st.comm, sizeof v[n].comm);
                n++;
        }
        closedir(d);
        if (r < 0) {
                free(v);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

/* Orders entries by pid, so a pid is found by binary search. */
static int by_pid(const void *a, const void *b) {
        pid_t x = ((const proc_entry *) a)->pid, y = ((const proc_entry *) b)->pid;
        return (x > y) - (x < y);
}

#define NO_ENTRY SIZE_MAX

/* Index of pid in procs (sorted by pid), or NO_ENTRY. */
static size_t entry_of(const proc_entry *procs, size_t n, pid_t pid) {
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (procs[mid].pid == pid)
                        return mid;
                if (procs[mid].pid < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NO_ENTRY;
}

/* Who is whose child, as index lists: the children of entry i are child[first[i] .. first[i + 1]). */
typedef struct proc_tree {
        size_t *first, *child, *queue;
} proc_tree;

static void proc_tree_free(proc_tree *tree) {
        free(tree->first);
        free(tree->child);
        free(tree->queue);
}

/* Built in two passes over procs (sorted by pid): count each parent's children, then place them. */
static int proc_tree_build(const proc_entry *procs, size_t n, proc_tree *tree) {
        tree->first = calloc(n + 1, sizeof(size_t));
        tree->child = malloc((n ? n : 1) * sizeof(size_t));
        tree->queue = malloc((n ? n : 1) * sizeof(size_t));
        _cleanup_free_ size_t *parent = malloc((n ? n : 1) * sizeof(size_t)), *next = NULL;
        if (!tree->first || !tree->child || !tree->queue || !parent)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                parent[i] = procs[i].ppid > 0 && procs[i].ppid != procs[i].pid ? entry_of(procs, n, procs[i].ppid)
                                                                               : NO_ENTRY;
                if (parent[i] != NO_ENTRY)
                        tree->first[parent[i] + 1]++;
        }
        for (size_t i = 0; i < n; i++)
                tree->first[i + 1] += tree->first[i];
        next = malloc((n ? n : 1) * sizeof(size_t));
        if (!next)
                return -ENOMEM;
        memcpy(next, tree->first, n * sizeof(size_t));
        for (size_t i = 0; i < n; i++)
                if (parent[i] != NO_ENTRY)
                        tree->child[next[parent[i]]++] = i;
        return 0;
}

enum { MARK_MEMBER, MARK_LAUNCH };

static bool *mark_of(proc_entry *e, int mark) {
        return mark == MARK_MEMBER ? &e->member : &e->launch;
}

/* Gives every descendant of an entry that has the mark the mark too, never entering a sandbox
 * member when marking the launch side. Each entry is queued at most once: linear in n. */
static void mark_descendants(proc_entry *procs, size_t n, const proc_tree *tree, int mark) {
        size_t head = 0, tail = 0;
        for (size_t i = 0; i < n; i++)
                if (*mark_of(&procs[i], mark))
                        tree->queue[tail++] = i;
        while (head < tail) {
                size_t i = tree->queue[head++];
                for (size_t c = tree->first[i]; c < tree->first[i + 1]; c++) {
                        proc_entry *e = &procs[tree->child[c]];
                        if (*mark_of(e, mark) || (mark == MARK_LAUNCH && e->member))
                                continue;
                        *mark_of(e, mark) = true;
                        tree->queue[tail++] = tree->child[c];
                }
        }
}

/* The sandbox: init_pid, its descendants, whatever else is in its pid namespace and their
 * descendants; and the launch side: kbound and its descendants outside the sandbox. procs is
 * sorted by pid here, and the parent links indexed once, so the cost is linear in the number of
 * host processes (plus the sort). Returns 0 or -ENOMEM. */
static int classify(const kb_inspect_target *t, proc_entry *procs, size_t n) {
        pid_t self = getpid();
        qsort(procs, n, sizeof *procs, by_pid);
        proc_tree tree = {0};
        int r = proc_tree_build(procs, n, &tree);
        if (r < 0) {
                proc_tree_free(&tree);
                return r;
        }
        for (size_t i = 0; i < n; i++) {
                procs[i].member = procs[i].pid == t->init_pid;
                procs[i].launch = procs[i].pid == self;
        }
        mark_descendants(procs, n, &tree, MARK_MEMBER);
        /* A process of the sandbox's pid namespace, or of one nested in it, that is not a
         * descendant (reparented past init, or started into it from outside) is still the
         * sandbox's, and so are its children: every process a sandbox process can name, and so
         * trace, is one of the look's. Every namespace of the others is read here once:
         * kb_inspect_ns_holder_facts compares them. */
        uint64_t own_pidns = 0;
        (void) kb_inspect_ns_inode(t->proc_root, self, "pid", &own_pidns);
        for (size_t i = 0; i < n; i++) {
                if (procs[i].member)
                        continue;
                int nr = kb_inspect_ns_inodes_all(t->proc_root, procs[i].pid, procs[i].ns);
                procs[i].ns_read = nr == 0 ? 1 : nr == -ESRCH ? 0 : -1;
                uint64_t pidns = procs[i].ns[NS_PID];
                if (nr == 0 &&
                    (pidns == t->pidns_ino || (pidns != own_pidns && t->pidns_ino &&
                                               kb_inspect_pidns_below(t->proc_root, procs[i].pid, t->pidns_ino))))
                        procs[i].member = true;
        }
        mark_descendants(procs, n, &tree, MARK_MEMBER);
        mark_descendants(procs, n, &tree, MARK_LAUNCH);
        /* kbound's descent is no licence: another kernel's sandbox of this run runs code kbound does
         * not trust either. What kbound's own side legitimately holds (its launchers, its forks) is in
         * its own pid namespace. */
        for (size_t i = 0; i < n; i++)
                procs[i].run_sandbox =
                        procs[i].launch && procs[i].ns_read == 1 && own_pidns && procs[i].ns[NS_PID] != own_pidns;
        proc_tree_free(&tree);
        return 0;
}

/* One sandbox process (inspect_process). A zombie leader read through a thread that ended
 * meanwhile, before or during the read (what it read may be cut short), is still there, and so may
 * its other threads be: it is read again through another, and past a few tries it is -EAGAIN (the
 * look says it could not read it), never counted as gone. -ESRCH when the process is gone. */
static int read_process(const kb_inspect_target *t, const proc_entry *e, json_object **ret) {
        pid_t pid = e->pid;
        char task_root[PATH_MAX];
        snprintf(task_root, sizeof task_root, "%s/%d/task", t->proc_root, (int) pid);
        for (int i = 0;; i++) {
                pid_t via = pid;
                json_object *p = NULL;
                int r = inspect_process(t, e, &p, &via);
                bool ended = via != pid && !kb_inspect_process_exists(task_root, via);
                if (via == pid || (r == 0 && !ended)) {
                        *ret = p;
                        return r;
                }
                json_object_put(p);
                if (r < 0 && r != -ESRCH)
                        return r;
                if (!kb_inspect_process_exists(t->proc_root, pid))
                        return -ESRCH;
                if (i == THREAD_RETRIES)
                        return -EAGAIN;
        }
}

#define RELIST_ROUNDS 4 /* listings after the first, while sandbox processes end before they are read */

typedef struct pid_set {
        pid_t *v;
        size_t n, cap;
} pid_set;

static bool pid_set_has(const pid_set *s, pid_t pid) {
        for (size_t i = 0; i < s->n; i++)
                if (s->v[i] == pid)
                        return true;
        return false;
}

static int pid_set_add(pid_set *s, pid_t pid) {
        if (s->n == s->cap) {
                size_t cap = s->cap ? 2 * s->cap : 32;
                pid_t *nv = realloc(s->v, cap * sizeof *nv);
                if (!nv)
                        return -ENOMEM;
                s->v = nv;
                s->cap = cap;
        }
        s->v[s->n++] = pid;
        return 0;
}

/* Whether pid, not in the first listing, is a process of the sandbox: in its pid namespace or one
 * nested in it (as classify says), or, gone before its namespace was read, a child of one of the
 * sandbox's (-ESRCH: the sandbox's, gone). A process gone whose parent is not known to be the
 * sandbox's is not counted: the host's own processes come and go too (a compiler's, another run's). */
static int newcomer_member(const kb_inspect_target *t, const proc_entry *e, uint64_t own_pidns, const proc_entry *procs,
                           size_t n, const pid_set *read) {
        uint64_t pidns = 0;
        if (kb_inspect_ns_inode(t->proc_root, e->pid, "pid", &pidns) == 0)
                return pidns == t->pidns_ino || (pidns != own_pidns && t->pidns_ino &&
                                                 kb_inspect_pidns_below(t->proc_root, e->pid, t->pidns_ino));
        proc_entry key = {.pid = e->ppid};
        const proc_entry *parent = bsearch(&key, procs, n, sizeof *procs, by_pid);
        return (parent && parent->member) || pid_set_has(read, e->ppid) ? -ESRCH : 0;
}

/* After the first listing's sandbox processes were read, while some of them had ended before the
 * host read them: the processes are listed again and the sandbox's that the first listing did not
 * have are read, for up to RELIST_ROUNDS listings. A process of the sandbox that ends before it is
 * read holds nothing any more, but its children hold what it held: a chain of processes that each
 * fork and exit at once would carry a reference past every look, each of its members gone before
 * the host reads it. A look whose last listing still found sandbox processes ending unread says so
 * (PROCESS_CHURN), which fails every host-judged check; a child that ends during a look is read on
 * the next listing, or is not followed by another. *vanished counts every one that ended unread. */
static int read_newcomers(const kb_inspect_target *t, const proc_entry *procs, size_t n, int ended_unread,
                          json_object *processes, json_object *errors, size_t *kept, int *vanished) {
        pid_set read = {0};
        uint64_t own_pidns = 0;
        int r = 0;
        (void) kb_inspect_ns_inode(t->proc_root, getpid(), "pid", &own_pidns);
        for (int round = 0; r >= 0 && ended_unread > 0 && round < RELIST_ROUNDS; round++) {
                _cleanup_free_ proc_entry *again = NULL;
                size_t m = 0;
                ended_unread = 0;
                r = list_processes(t->proc_root, &again, &m);
                if (r < 0)
                        break;
                for (size_t i = 0; r >= 0 && i < m; i++) {
                        proc_entry key = {.pid = again[i].pid};
                        const proc_entry *before = bsearch(&key, procs, n, sizeof *procs, by_pid);
                        if ((before && before->starttime == again[i].starttime) || pid_set_has(&read, again[i].pid))
                                continue; /* listed before: read then, or not the sandbox's (a pid
                                           * reused since is another process: a newcomer) */
                        int member = newcomer_member(t, &again[i], own_pidns, procs, n, &read);
                        if (member == 0)
                                continue;
                        if ((r = pid_set_add(&read, again[i].pid)) < 0)
                                break;
                        json_object *p = NULL;
                        int rr = member < 0 ? -ESRCH : read_process(t, &again[i], &p);
                        if (rr == -ESRCH) {
                                ended_unread++;
                                continue;
                        }
                        if (rr == -EAGAIN) {
                                r = kb_inspect_note(errors, WHAT_PROCESS_UNREAD, NULL, ESRCH);
                                continue;
                        }
                        if (*kept == SANDBOX_PROCS_MAX) {
                                json_object_put(p);
                                r = kb_inspect_note(errors, WHAT_TOO_MANY_PROCESSES, NULL, E2BIG);
                                ended_unread = 0;
                                break;
                        }
                        if (rr < 0 || kb_inspect_push(processes, p) < 0)
                                r = -ENOMEM;
                        else
                                ++*kept;
                }
                *vanished += ended_unread;
        }
        free(read.v);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return kb_inspect_note(errors, WHAT_PROCESS_LIST, NULL, r) < 0 ? -ENOMEM : 0;
        if (ended_unread > 0 && kb_inspect_note(errors, WHAT_PROCESS_CHURN, NULL, ESRCH) < 0)
                return -ENOMEM;
        return 0;
}

int kb_inspect_look_at_processes(const kb_inspect_target *t, const char *label, json_object *snap,
                                 proc_entry **ret_procs, size_t *ret_n, bool *ret_kernel_seen) {
        json_object *processes = json_object_new_array(), *errors = json_object_new_array();
        if (kb_fact_set_str(snap, FACT_LOOK_LABEL, label ? label : "") < 0 ||
            kb_fact_set_int(snap, FACT_LOOK_TAKEN_MS, kb_now_ms()) < 0) {
                json_object_put(processes);
                json_object_put(errors);
                return -ENOMEM;
        }
        if (kb_fact_set_arr(snap, FACT_LOOK_PROCESSES, processes) < 0) {
                json_object_put(errors);
                return -ENOMEM;
        }
        if (kb_fact_set_arr(snap, FACT_LOOK_ERRORS, errors) < 0)
                return -ENOMEM;
        _cleanup_free_ proc_entry *procs = NULL;
        size_t n = 0;
        int r = list_processes(t->proc_root, &procs, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && kb_inspect_note(errors, WHAT_PROCESS_LIST, NULL, r) < 0)
                return -ENOMEM;
        if (classify(t, procs, n) < 0)
                return -ENOMEM;
        int vanished = 0;
        bool kernel_seen = false;
        size_t kept = 0;
        for (size_t i = 0; i < n; i++) {
                if (!procs[i].member)
                        continue;
                if (kept == SANDBOX_PROCS_MAX) {
                        if (kb_inspect_note(errors, WHAT_TOO_MANY_PROCESSES, NULL, E2BIG) < 0)
                                return -ENOMEM;
                        break;
                }
                json_object *p = NULL;
                r = read_process(t, &procs[i], &p);
                if (r == -EAGAIN) {
                        if (kb_inspect_note(errors, WHAT_PROCESS_UNREAD, NULL, ESRCH) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (r == -ESRCH) {
                        vanished++;
                        continue;
                }
                if (r < 0 || kb_inspect_push(processes, p) < 0)
                        return -ENOMEM;
                kept++;
                kernel_seen |= procs[i].pid == t->kernel_pid;
        }
        if (read_newcomers(t, procs, n, vanished, processes, errors, &kept, &vanished) < 0 ||
            kb_fact_set_int(snap, FACT_LOOK_VANISHED, vanished) < 0)
                return -ENOMEM;
        *ret_procs = TAKE_PTR(procs);
        *ret_n = n;
        *ret_kernel_seen = kernel_seen;
        return 0;
}

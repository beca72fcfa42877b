/* inspect_launcher.c: the process running bwrap (program, argv, environment) and bwrap's init. */
#include <limits.h>
#include <openssl/evp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"

#define ARGV_MAX 4096

/* "NAME=sha256:<hex>" for one environment entry of len bytes: the name in clear (at most 256 bytes
 * of it), the whole entry only as a digest, so the launcher's environment can be compared with
 * the one kbound passed without the facts holding a value: a daemon's secret never reaches a
 * report. An entry without '=' has an empty name. NULL if out of memory. */
static json_object *env_digest(const char *entry, size_t len) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int md_len = 0;
        if (!EVP_Digest(entry, len, md, &md_len, EVP_sha256(), NULL))
                return NULL;
        const char *eq = memchr(entry, '=', len);
        size_t name_len = eq ? (size_t) (eq - entry) : 0;
        if (name_len > 256)
                name_len = 256;
        char out[256 + sizeof "=sha256:" + 2 * EVP_MAX_MD_SIZE];
        memcpy(out, entry, name_len);
        size_t n = name_len + (size_t) snprintf(out + name_len, sizeof out - name_len, "=sha256:");
        for (unsigned int i = 0; i < md_len; i++)
                n += (size_t) snprintf(out + n, sizeof out - n, "%02x", md[i]);
        return json_object_new_string_len(out, (int) n);
}

json_object *kb_inspect_env_digests(char *const *env) {
        _cleanup_json_ json_object *out = json_object_new_array();
        for (char *const *e = env; out && e && *e; e++)
                if (kb_inspect_push(out, env_digest(*e, strlen(*e))) < 0)
                        return NULL;
        return TAKE_PTR(out);
}

/* The launcher's environment as env_digest entries, in order (its environ), and the program it runs
 * (its exe); what cannot be read is noted in errors. -ENOMEM only. */
static int launcher_identity(const kb_inspect_target *t, pid_t launcher, json_object *l, json_object *errors) {
        _cleanup_free_ char *env = NULL;
        size_t len = 0;
        int r = launcher > 0 ? kb_inspect_read_proc(t->proc_root, launcher, "environ", ENVIRON_MAX, &env, &len)
                             : -ESRCH;
        if (r < 0)
                return kb_inspect_note(errors, WHAT_LAUNCHER_ENVIRON, NULL, r);
        _cleanup_json_ json_object *digests = json_object_new_array();
        if (!digests)
                return -ENOMEM;
        for (size_t i = 0; i < len;) {
                size_t elen = strnlen(env + i, len - i);
                if (kb_inspect_push(digests, env_digest(env + i, elen)) < 0)
                        return -ENOMEM;
                i += elen + 1;
        }
        if (kb_fact_set_arr(l, FACT_LAUNCHER_ENVIRON, TAKE_PTR(digests)) < 0)
                return -ENOMEM;
        return kb_inspect_exe_facts(t->proc_root, launcher, l, FACT_LAUNCHER_EXE, FACT_LAUNCHER_EXE_ERROR);
}

/* The pipes and sockets the launch side holds (kbound's other descendants: the launcher, the
 * sandboxes of the run's other kernels), into inodes. A process of kbound's own user is unreadable
 * for a moment while it changes its credentials: another bwrap setting up its sandbox is not
 * dumpable from its unshare until its program runs, longer on a loaded machine. Such a table is
 * read again, every 10 ms, until it is readable or its process is gone, for up to
 * KB_INSPECT_REREAD_MS; one still unreadable then is an error of the look (it may hold anything),
 * but for a zombie whose every thread has exited (whose table an unprivileged reader is refused),
 * which holds nothing.
 * Read once, a look that met another kernel's set-up failed boundary.descriptors, unprivileged and
 * under load. -ENOMEM only. */
typedef struct shared_walk {
        const shared_set *shared;
        const proc_entry *entry;
        json_object *found;
} shared_walk;

static int shared_seen(int fd, const char *target, void *userdata) {
        shared_walk *w = userdata;
        return kb_inspect_shared_wants(w->shared, target)
                       ? kb_inspect_shared_match(w->shared, w->entry, w->entry->pid, fd, target, w->found)
                       : 0;
}

/* The anonymous objects and memory files of the sandbox that kbound or a process of the launch
 * side holds too (the same open file, kcmp), into found: bwrap's own status channel to its init
 * is one, anything else a channel out. A table that cannot be read is the launch side's
 * descriptors' error, said once. -ENOMEM only. */
static int launch_side_shared(const kb_inspect_target *t, const proc_entry *procs, size_t n, json_object *processes,
                              json_object *found) {
        _cleanup_(kb_inspect_shared_free) shared_set *shared = NULL;
        if (kb_inspect_shared_new(processes, kb_fact_str_of(t->host, FACT_HOST_MEMFD_DEV), &shared) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (!procs[i].launch)
                        continue;
                shared_walk w = {.shared = shared, .entry = &procs[i], .found = found};
                if (kb_inspect_fd_targets(t->proc_root, procs[i].pid, shared_seen, &w) == -ENOMEM)
                        return -ENOMEM;
        }
        return 0;
}

static int launch_side_channels(const kb_inspect_target *t, const proc_entry *procs, size_t n, json_object *inodes,
                                json_object *errors) {
        int64_t until = kb_now_ms() + KB_INSPECT_REREAD_MS;
        for (size_t i = 0; i < n; i++) {
                if (!procs[i].launch)
                        continue;
                int r;
                bool zombie = false;
                for (;;) {
                        r = kb_inspect_channel_inodes(t->proc_root, procs[i].pid, inodes);
                        if (r == -EACCES || r == -EPERM)
                                zombie = kb_inspect_all_exited(t->proc_root, procs[i].pid);
                        if ((r != -EACCES && r != -EPERM) || zombie || kb_now_ms() >= until)
                                break;
                        (void) poll(NULL, 0, 10);
                }
                if (r == -ENOMEM)
                        return r;
                if (r == -ENOENT || r == -ESRCH || zombie)
                        continue; /* gone, or a zombie (a killed bwrap not reaped yet): it holds nothing */
                if (r < 0 && kb_inspect_note(errors, WHAT_LAUNCH_SIDE_FDS, NULL, r) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int kb_inspect_launcher_facts(const kb_inspect_target *t, const proc_entry *procs, size_t n, json_object *processes,
                              json_object *errors, json_object **ret) {
        _cleanup_json_ json_object *l = json_object_new_object(), *argv = json_object_new_array(),
                                   *inodes = json_object_new_array(), *shared = json_object_new_array();
        if (!l || !argv || !inodes || !shared)
                return -ENOMEM;
        pid_t launcher = -1, launcher_parent = -1;
        for (size_t i = 0; i < n; i++)
                if (procs[i].pid == t->init_pid)
                        launcher = procs[i].ppid;
        for (size_t i = 0; i < n; i++)
                if (procs[i].pid == launcher)
                        launcher_parent = procs[i].ppid;
        if (kb_fact_set_int(l, FACT_LAUNCHER_PID, launcher) < 0 ||
            kb_fact_set_int(l, FACT_LAUNCHER_PPID, launcher_parent) < 0 ||
            kb_fact_set_int(l, FACT_LAUNCHER_SPAWNED, t->launcher_pid) < 0 ||
            kb_fact_set_int(l, FACT_LAUNCHER_KBOUND, getpid()) < 0)
                return -ENOMEM;
        _cleanup_free_ char *cmd = NULL;
        size_t len = 0;
        int r = launcher > 0 ? kb_inspect_read_proc(t->proc_root, launcher, "cmdline", CMDLINE_MAX, &cmd, &len)
                             : -ESRCH;
        if (r < 0) {
                if (kb_inspect_note(errors, WHAT_LAUNCHER_CMDLINE, NULL, r) < 0)
                        return -ENOMEM;
        } else {
                size_t count = 0;
                for (size_t i = 0; i < len && count < ARGV_MAX; count++) {
                        size_t alen = strnlen(cmd + i, len - i);
                        if (kb_inspect_push(argv, json_object_new_string_len(cmd + i, (int) alen)) < 0)
                                return -ENOMEM;
                        i += alen + 1;
                }
                if (count == ARGV_MAX && kb_inspect_note(errors, WHAT_LAUNCHER_ARGV_MAX, NULL, E2BIG) < 0)
                        return -ENOMEM;
        }
        if (kb_fact_set_arr(l, FACT_LAUNCHER_ARGV, TAKE_PTR(argv)) < 0 || launcher_identity(t, launcher, l, errors) < 0)
                return -ENOMEM;
        /* What bwrap's init is a fork of: the files it mapped before entering the sandbox. */
        json_object *map_files = NULL;
        r = launcher > 0 ? kb_inspect_map_files(t->proc_root, launcher, &map_files) : -ESRCH;
        if (r == -ENOMEM || (r < 0 && kb_inspect_note(errors, WHAT_LAUNCHER_MAPS, NULL, r) < 0) ||
            (r >= 0 && kb_fact_set_arr(l, FACT_LAUNCHER_MAP_FILES, map_files) < 0))
                return -ENOMEM;
        if (launch_side_channels(t, procs, n, inodes, errors) < 0 ||
            launch_side_shared(t, procs, n, processes, shared) < 0 ||
            kb_fact_set_arr(l, FACT_LAUNCHER_SHARED_FILES, TAKE_PTR(shared)) < 0 ||
            kb_fact_set_arr(l, FACT_LAUNCHER_OUTSIDE_INODES, TAKE_PTR(inodes)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

int kb_inspect_init_facts(const kb_inspect_target *t, json_object *snap, json_object *errors) {
        _cleanup_free_ char *text = NULL;
        int r = kb_inspect_read_proc(t->proc_root, t->init_pid, "syscall", 4096, &text, NULL);
        if (r < 0)
                return kb_inspect_note(errors, WHAT_INIT_SYSCALL, NULL, r);
        size_t cut = strcspn(text, "\n");
        const char *second = strchr(text, ' ');
        if (second && (size_t) (second - text) < cut) {
                const char *third = strchr(second + 1, ' ');
                if (third && (size_t) (third - text) < cut)
                        cut = (size_t) (third - text); /* the call and its first argument, no addresses */
        }
        char *end;
        errno = 0;
        long nr = strtol(text, &end, 10);
        int64_t fd = -1;
        if (!errno && end != text && *end == ' ' && nr == SYS_read) {
                unsigned long long v = strtoull(end + 1, &end, 16);
                fd = v <= INT_MAX ? (int64_t) v : -1;
        }
        json_object *init = json_object_new_object();
        if (!init || kb_fact_set_int(init, FACT_INIT_PID, t->init_pid) < 0 ||
            kb_fact_set_strn(init, FACT_INIT_SYSCALL, text, cut) < 0 ||
            kb_fact_set_int(init, FACT_INIT_READS_FD, fd) < 0) {
                json_object_put(init);
                return -ENOMEM;
        }
        return kb_fact_set_obj(snap, FACT_LOOK_INIT, init);
}

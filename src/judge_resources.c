/* judge_resources.c: sandbox.resources: every limit kbound asked is in force, as the host reads it
 * for every sandbox process at every look (cgroups along each process's own path, its rlimits,
 * the sizes of the kernel's writable in-memory filesystems); and what the sandbox used. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "judge-internal.h"
#include "kbound/limits.h"
#include "kbound/sandbox.h"
#include "procfs.h"

/* The smallest value of key among the cgroups of process p that this look read, for the
 * controllers given (a v1 hierarchy and v2's "unified"), counting only the cgroups kbound made
 * for this sandbox (own: their folders): an enclosing one (a container's, a login's) is shared
 * with whatever else runs there, so neither its limit nor its peak is the sandbox's. -1 if none. */
static int64_t cgroup_limit(json_object *snap, json_object *own, json_object *p, const char *v1, const char *key) {
        json_object *cgs = kb_json_get(kb_json_get(snap, "resources"), "cgroups"), *mine = kb_json_get(p, "cgroups");
        const char *controllers[] = {v1, "unified"};
        int64_t best = -1;
        for (size_t i = 0; i < KB_ELEMENTSOF(controllers); i++) {
                const char *path = kb_json_str(mine, controllers[i]);
                if (!path)
                        continue;
                char name[4096];
                snprintf(name, sizeof name, "%s:%s", controllers[i], path);
                json_object *facts = kb_json_get(cgs, name);
                if (!str_in(own, kb_json_str(facts, "dir")))
                        continue;
                int64_t v = int_or(facts, key, -1);
                if (v >= 0 && (best < 0 || v < best))
                        best = v;
        }
        return best;
}

/* A size from a tmpfs superblock option list ("size=524288k"), in bytes; -1 if it has none. */
static int64_t tmpfs_size(json_object *super) {
        for (size_t i = 0; i < arr_len(super); i++) {
                const char *o = json_object_get_string(at(super, i));
                if (!o || strncmp(o, "size=", 5) != 0)
                        continue;
                char *end;
                long long n = strtoll(o + 5, &end, 10);
                int64_t mult = *end == 'k' ? 1024 : *end == 'm' ? 1024 * 1024 : *end == 'g' ? 1024 * 1024 * 1024 : 1;
                return n > 0 ? (int64_t) n * mult : -1;
        }
        return -1;
}

typedef struct tally {
        size_t cgroup, rlimit; /* processes bounded by each */
} tally;

/* One limit for one process: by its cgroups (cg, the smallest in force on its path), else by its
 * rlimit (rl, soft value, -1 unlimited): in force if one is at most max. */
static void judge_one(verdict *v, tally *t, json_object *p, kb_limit_id id, int64_t max, int64_t cg, int64_t rl,
                      const char *rl_name) {
        const char *what = kb_limit_get(id)->id;
        /* CPU: a cgroup's limit is read in thousandths of a CPU */
        int64_t cg_max = id == KB_LIMIT_CPU ? max * 1000 : max;
        if (cg >= 0 && cg <= cg_max)
                t->cgroup++;
        else if (rl >= 0 && rl <= max)
                t->rlimit++;
        else {
                char want[40];
                kb_limit_format(id, (uint64_t) max, want, sizeof want);
                if (id == KB_LIMIT_CPU)
                        strncat(want, " CPU(s)", sizeof want - strlen(want) - 1);
                verdict_problem(
                        v, "pid %" PRId64 " (%s) runs with no %s limit of at most %s in force (cgroup: %s; %s: %s)",
                        int_or(p, "pid", -1), str_or(p, "name", "?"), what, want, cg == -1 ? "none" : "above it",
                        rl_name,
                        rl == -1   ? "unlimited"
                        : rl == -2 ? "unread"
                                   : "above it");
        }
}

static const char *mechanism(const tally *t, const char *cgroup_words, const char *rlimit_words) {
        return t->rlimit ? rlimit_words : cgroup_words;
}

json_object *kb_judge_resources(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        judge_look_problems(&v, in);
        json_object *limits = kb_json_get(in->expect, "limits");
        if (!limits)
                verdict_problem(&v, "kbound did not record which limits it asked");
        int64_t mem = int_or(limits, "memory", 0), tasks = int_or(limits, "tasks", 0), tmp = int_or(limits, "tmp", 0),
                ws = int_or(limits, "workspace", 0), cpu = int_or(limits, "cpu", 0);
        tally tm = {0}, tt = {0}, tc = {0};
        json_object *own = kb_json_get(kb_json_get(in->expect, "cgroup"), "dirs");
        int64_t rss_peak = 0, tasks_peak = 0, used_peak = 0, ws_peak = 0, mem_peak = -1, pids_peak = -1, oom = 0;
        size_t seen = 0;
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s), *res = kb_json_get(snap, "resources");
                json_object *procs = kb_json_get(snap, "processes");
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i), *l = kb_json_get(p, "limits");
                        seen++;
                        if (!l) {
                                verdict_problem(&v, "the host could not read the limits of pid %" PRId64 " (%s)",
                                                int_or(p, "pid", -1), str_or(p, "name", "?"));
                                continue;
                        }
                        if (mem)
                                judge_one(&v, &tm, p, KB_LIMIT_MEMORY, mem,
                                          cgroup_limit(snap, own, p, "memory", "memory_max"), int_or(l, "as", -2),
                                          "address space");
                        /* bwrap's init (PID 1) forks PID 2 once and then only reaps: every process that
                         * can fork on the kernel's behalf descends from PID 2 and has its RLIMIT_NPROC,
                         * which counts init too (one user namespace). Set on init, it would count the
                         * user's processes on the whole host. */
                        bool init = judge_inner_pid(p) == 1;
                        if (tasks && !(init && cgroup_limit(snap, own, p, "pids", "pids_max") < 0))
                                judge_one(&v, &tt, p, KB_LIMIT_TASKS, tasks,
                                          cgroup_limit(snap, own, p, "pids", "pids_max"), int_or(l, "nproc", -2),
                                          "RLIMIT_NPROC");
                        /* CPU: only a cgroup bounds it (no rlimit does: RLIMIT_CPU ends a process) */
                        if (cpu)
                                judge_one(&v, &tc, p, KB_LIMIT_CPU, cpu,
                                          cgroup_limit(snap, own, p, "cpu", "cpu_max_milli"), -1, "rlimit");
                        int64_t mp = cgroup_limit(snap, own, p, "memory", "memory_peak"),
                                pp = cgroup_limit(snap, own, p, "pids", "pids_peak"),
                                ok = cgroup_limit(snap, own, p, "memory", "oom_kill");
                        mem_peak = mp > mem_peak ? mp : mem_peak;
                        pids_peak = pp > pids_peak ? pp : pids_peak;
                        oom = ok > oom ? ok : oom;
                }
                int64_t rss = int_or(res, "rss_bytes", 0), tk = int_or(res, "tasks", 0);
                rss_peak = rss > rss_peak ? rss : rss_peak;
                tasks_peak = tk > tasks_peak ? tk : tasks_peak;
                json_object *used = kb_json_get(res, "used");
                int64_t ut = int_or(used, "/tmp", 0), us = int_or(used, "/dev/shm", 0);
                int64_t u = (ut > 0 ? ut : 0) + (us > 0 ? us : 0);
                used_peak = u > used_peak ? u : used_peak;
                int64_t w = int_or(used, KB_SANDBOX_WORKSPACE, 0);
                ws_peak = w > ws_peak ? w : ws_peak;
        }
        if (seen == 0 && (mem || tasks || cpu))
                verdict_problem(&v, "no look read any sandbox process's limits");
        /* Every writable in-memory filesystem of the kernel's mount table has a size of at most the
         * limit (bwrap's own are /tmp and /dev/shm; any other one a bwrap makes counts too), but the
         * workspace, which has a limit of its own and must be such a tmpfs when one is asked. */
        size_t tmpfs_n = 0;
        json_object *mounts = kb_json_get(judge_last_look(in), "mounts");
        bool ws_bounded = false, run_host = false;
        for (size_t i = 0; i < arr_len(mounts); i++) {
                json_object *m = at(mounts, i);
                /* The kernel's socket folder: a tmpfs of its own (judged below with the others), or
                 * the team's host folder, which nothing bounds (a bwrap with no --size). */
                if (judge_same_path(str_or(m, "mountpoint", ""), KB_SANDBOX_RUNTIME) &&
                    strcmp(str_or(m, "fstype", ""), "tmpfs") != 0 && kb_json_true(m, "writable"))
                        run_host = true;
                if (!tmp && !ws)
                        continue;
                if (strcmp(str_or(m, "fstype", ""), "tmpfs") != 0 || !kb_json_true(m, "writable"))
                        continue;
                if (judge_same_path(str_or(m, "mountpoint", ""), KB_SANDBOX_WORKSPACE)) {
                        int64_t size = tmpfs_size(kb_json_get(m, "super"));
                        ws_bounded |= ws && size > 0 && size <= ws;
                        continue;
                }
                if (!tmp)
                        continue;
                tmpfs_n++;
                int64_t size = tmpfs_size(kb_json_get(m, "super"));
                char want[32];
                kb_limit_format(KB_LIMIT_TMP, (uint64_t) tmp, want, sizeof want);
                if (size < 0 || size > tmp)
                        verdict_problem(&v, "the sandbox's %s is a writable tmpfs %s (the limit is %s each%s)",
                                        str_or(m, "mountpoint", "?"),
                                        size < 0 ? "of no size of its own" : "larger than asked", want,
                                        kb_json_true(limits, "tmpfs_size") ? "" : "; this bwrap has no --size");
        }
        if (tmp && run_host)
                verdict_problem(&v,
                                "the sandbox's %s (the kernel's sockets) is the team's folder on the host's disk: "
                                "nothing bounds what it writes there%s",
                                KB_SANDBOX_RUNTIME,
                                kb_json_true(limits, "tmpfs_size") ? "" : " (this bwrap has no --size)");
        if ((tmp || ws) && !mounts)
                verdict_problem(&v, "the host could not read the kernel's mount table");
        char wz[32];
        kb_limit_format(KB_LIMIT_WORKSPACE, (uint64_t) ws, wz, sizeof wz);
        if (ws && mounts && !ws_bounded)
                verdict_problem(&v,
                                "the sandbox's %s is not a tmpfs of at most %s: nothing bounds what it writes there%s",
                                KB_SANDBOX_WORKSPACE, wz,
                                kb_json_true(limits, "tmpfs_size") ? "" : " (this bwrap has no --size)");
        if (oom > 0)
                verdict_problem(&v, "the sandbox's memory cgroup killed %" PRId64 " process(es) at its limit", oom);
        /* The kernel's log: a pipe to kbound's keeper, and no more on disk than asked (the host's
         * stat of the files when judged). A log bwrap writes itself has no bound at all. */
        int64_t log_max = int_or(limits, "log", 0);
        json_object *klog = kb_json_get(in->expect, "kernel_log");
        int64_t log_kept = int_or(klog, "kept", -1), log_written = int_or(klog, "written", -1),
                log_dropped = int_or(klog, "dropped", 0);
        char lm[32];
        kb_limit_format(KB_LIMIT_LOG, (uint64_t) log_max, lm, sizeof lm);
        if (log_max && !kb_json_str(klog, "pipe"))
                verdict_problem(
                        &v, "the kernel's log is a file the sandbox writes itself: nothing bounds it (asked %s)", lm);
        else if (log_max && (log_kept < 0 || log_kept > log_max))
                verdict_problem(&v, "%" PRId64 " bytes of the kernel's log are on disk, more than the %s asked",
                                log_kept, lm);
        json_object *figures = json_object_new_object();
        json_object_object_add(figures, "memory_peak_bytes",
                               json_object_new_int64(mem_peak >= 0 ? mem_peak : rss_peak));
        json_object_object_add(figures, "memory_peak_from",
                               json_object_new_string(mem_peak >= 0 ? "cgroup" : "the largest RSS sum of a look"));
        json_object_object_add(figures, "tasks_peak", json_object_new_int64(pids_peak >= 0 ? pids_peak : tasks_peak));
        json_object_object_add(figures, "tmp_used_peak_bytes", json_object_new_int64(used_peak));
        json_object_object_add(figures, "workspace_used_peak_bytes", json_object_new_int64(ws_peak));
        json_object_object_add(figures, "oom_kills", json_object_new_int64(oom));
        json_object_object_add(figures, "log_written_bytes", json_object_new_int64(log_written));
        json_object_object_add(figures, "log_dropped_bytes", json_object_new_int64(log_dropped));
        json_object_object_add(figures, "log_kept_bytes", json_object_new_int64(log_kept));
        verdict_evidence(&v, "used", figures);
        verdict_evidence(&v, "limits", json_object_get(limits));
        verdict_evidence(&v, "cgroup", json_object_get(kb_json_get(in->expect, "cgroup")));

        char m[32], t[32], z[32], mp[32], detail[DETAIL_MAX], unclaimed[256] = "";
        kb_limit_format(KB_LIMIT_MEMORY, (uint64_t) mem, m, sizeof m);
        kb_limit_format(KB_LIMIT_TASKS, (uint64_t) tasks, t, sizeof t);
        kb_limit_format(KB_LIMIT_TMP, (uint64_t) tmp, z, sizeof z);
        kb_limit_format(KB_LIMIT_MEMORY, (uint64_t) (mem_peak >= 0 ? mem_peak : rss_peak), mp, sizeof mp);
        const char *cg_error = kb_json_str(kb_json_get(in->expect, "cgroup"), "error");
        const char *given_up[7];
        size_t n_given_up = 0;
        if (!mem)
                given_up[n_given_up++] = "memory";
        if (!tasks)
                given_up[n_given_up++] = "tasks";
        if (!tmp)
                given_up[n_given_up++] = "/tmp size";
        if (!tmp && run_host)
                given_up[n_given_up++] = "the socket folder's size (host disk)";
        if (!ws)
                given_up[n_given_up++] = "workspace size";
        if (!log_max)
                given_up[n_given_up++] = "log size";
        if (!cpu)
                given_up[n_given_up++] = "processor time (--cpu-max)";
        for (size_t i = 0; i < n_given_up; i++) {
                size_t len = strlen(unclaimed);
                snprintf(unclaimed + len, sizeof unclaimed - len, "%s%s",
                         i ? ", " : "; NOT claimed (none asked): ", given_up[i]);
        }
        char cpu_words[96] = "";
        if (cpu)
                snprintf(cpu_words, sizeof cpu_words,
                         ", processor time at most %" PRId64 " CPU(s) for the whole sandbox (its cpu cgroup)", cpu);
        char ws_words[160] = "";
        if (ws)
                snprintf(ws_words, sizeof ws_words,
                         ", %s at most %s (a tmpfs of its own; %" PRId64 " bytes used at most)", KB_SANDBOX_WORKSPACE,
                         wz, ws_peak);
        char log_words[160] = "";
        if (log_max)
                snprintf(log_words, sizeof log_words,
                         ", the kernel's log at most %s on disk (%" PRId64 " bytes written, %" PRId64 " rotated away)",
                         lm, log_written, log_dropped);
        char why_rlimits[160] = "";
        if ((tm.rlimit || tt.rlimit) && cg_error)
                snprintf(why_rlimits, sizeof why_rlimits, "; no cgroup of its own could be made (%s)", cg_error);
        /* Past DETAIL_MAX the words are cut, and end in "..." (the evidence keeps every figure). */
        if (snprintf(detail, sizeof detail,
                     "read by the host at every look (%zu process readings): memory at most %s %s (peak %s), tasks at "
                     "most "
                     "%s %s (peak %" PRId64 "), each of its %zu writable in-memory folders at most %s (tmpfs size; "
                     "%" PRId64 " bytes used at most)%s%s%s%s%s",
                     seen, m,
                     mechanism(&tm, "for the whole sandbox (its memory cgroup, swap included)",
                               "per process (RLIMIT_AS)"),
                     mp, t,
                     mechanism(&tt, "for the whole sandbox (its pids cgroup)",
                               "in the sandbox's user namespace (RLIMIT_NPROC)"),
                     pids_peak >= 0 ? pids_peak : tasks_peak, tmpfs_n, z, used_peak, ws_words, cpu_words, log_words,
                     why_rlimits, unclaimed) >= (int) sizeof detail)
                memcpy(detail + sizeof detail - 4, "...", 4);
        return verdict_end(&v, kb_check_id(KB_CHECK_RESOURCES), detail);
}

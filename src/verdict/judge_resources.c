/* judge_resources.c: sandbox.resources: every limit kbound asked is in force, as the host reads it
 * for every sandbox process at every look (cgroups along each process's own path, its rlimits,
 * the sizes of the kernel's writable in-memory filesystems); and what the sandbox used. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "verdict/judge-internal.h"
#include "kbound/limits.h"
#include "kbound/sandbox.h"
#include "base/procfs.h"

/* The smallest value of fact among the cgroups of process p that this look read, for the
 * controllers given (its v1 hierarchy's, and v2's "unified"), counting only the cgroups kbound made
 * for this sandbox (own: their folders): an enclosing one (a container's, a login's) is shared
 * with whatever else runs there, so neither its limit nor its peak is the sandbox's. -1 if none.
 * The look keys each cgroup "controller:path", the controller as p's cgroups name it. */
static int64_t cgroup_limit(json_object *snap, json_object *own, json_object *p, kb_fact_str v1, kb_fact_int fact) {
        json_object *cgs = kb_fact_map_of(kb_fact_obj_of(snap, FACT_LOOK_RESOURCES), FACT_RESOURCES_CGROUPS),
                    *mine = kb_fact_obj_of(p, FACT_PROCESS_CGROUPS);
        const kb_fact_str controllers[] = {v1, FACT_PROC_CGROUPS_UNIFIED};
        int64_t best = -1;
        for (size_t i = 0; i < KB_ELEMENTSOF(controllers); i++) {
                const char *path = kb_fact_str_of(mine, controllers[i]);
                if (!path)
                        continue;
                char name[4096];
                snprintf(name, sizeof name, "%s:%s", kb_fact_row(controllers[i].id)->key, path);
                json_object *facts = judge_map_at(cgs, name);
                if (!str_in(own, kb_fact_str_of(facts, FACT_CGROUP_DIR)))
                        continue;
                int64_t v = kb_fact_int_or(facts, fact, -1);
                if (v >= 0 && (best < 0 || v < best))
                        best = v;
        }
        return best;
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
                        judge_pid_of(p), judge_name_of(p), what, want, cg == -1 ? "none" : "above it", rl_name,
                        rl == -1   ? "unlimited"
                        : rl == -2 ? "unread"
                                   : "above it");
        }
}

static const char *mechanism(const tally *t, const char *cgroup_words, const char *rlimit_words) {
        return t->rlimit ? rlimit_words : cgroup_words;
}

/* The limits kbound asked (0: not asked), as expect "limits" records them. */
typedef struct asked {
        json_object *limits;
        int64_t mem, tasks, tmp, ws, cpu, log;
} asked;

/* What the host's looks saw: by what each limit was in force, and the sandbox's use. */
typedef struct resource_use {
        size_t seen;                  /* process readings, over every look */
        tally tm, tt, tc;             /* memory, tasks, CPU: the processes each mechanism bounded */
        int64_t rss_peak, tasks_peak; /* the largest sums of one look */
        int64_t mem_peak, pids_peak;  /* from the sandbox's own cgroups; -1: none read */
        int64_t oom;                  /* processes its memory cgroup killed */
        int64_t used_peak, ws_peak;   /* bytes used in /tmp and /dev/shm, and in the workspace */
        json_object *mounts;          /* the last look's mount table */
        size_t tmpfs_n;               /* the writable in-memory folders judged against the tmp limit */
        bool ws_bounded, run_host;    /* the workspace is a tmpfs within its limit; the socket folder is on disk */
        int64_t log_kept, log_written, log_dropped;
} resource_use;

static asked asked_read(verdict *v, const kb_judge_input *in) {
        asked a = {.limits = kb_fact_obj_of(in->expect, FACT_EXPECT_LIMITS)};
        const struct {
                kb_fact_int fact;
                int64_t *value;
        } each[] = {{FACT_LIMITS_MEMORY, &a.mem},   {FACT_LIMITS_TASKS, &a.tasks}, {FACT_LIMITS_TMP, &a.tmp},
                    {FACT_LIMITS_WORKSPACE, &a.ws}, {FACT_LIMITS_CPU, &a.cpu},     {FACT_LIMITS_LOG, &a.log}};
        if (!a.limits) {
                verdict_problem(v, "kbound did not record which limits it asked");
                return a;
        }
        /* Each is required (0: not asked): one not recorded is not "not asked". */
        for (size_t i = 0; i < KB_ELEMENTSOF(each); i++)
                if (!kb_fact_int_of(a.limits, each[i].fact, each[i].value))
                        verdict_problem(v, "kbound did not record whether it asked a %s limit",
                                        kb_fact_row(each[i].fact.id)->key);
        return a;
}

/* One process p of the look snap: each limit asked in force for it (judge_one), and the peaks its
 * cgroups (own: the sandbox's, as cgroup_limit) read. */
static void judge_process_limits(verdict *v, const asked *a, resource_use *u, json_object *snap, json_object *own,
                                 json_object *p) {
        json_object *l = kb_fact_obj_of(p, FACT_PROCESS_LIMITS);
        u->seen++;
        if (!l) {
                verdict_problem(v, "the host could not read the limits of pid %" PRId64 " (%s)", judge_pid_of(p),
                                judge_name_of(p));
                return;
        }
        /* A limit not read is -2, as one the kernel did not say. */
        if (a->mem)
                judge_one(v, &u->tm, p, KB_LIMIT_MEMORY, a->mem,
                          cgroup_limit(snap, own, p, FACT_PROC_CGROUPS_MEMORY, FACT_CGROUP_MEMORY_MAX),
                          kb_fact_int_or(l, FACT_PROC_LIMITS_AS, -2), "address space");
        /* bwrap's init (PID 1) forks PID 2 once and then only reaps: every process that
         * can fork on the kernel's behalf descends from PID 2 and has its RLIMIT_NPROC,
         * which counts init too (one user namespace). Set on init, it would count the
         * user's processes on the whole host. */
        bool init = judge_inner_pid(p) == 1;
        int64_t pids_max = cgroup_limit(snap, own, p, FACT_PROC_CGROUPS_PIDS, FACT_CGROUP_PIDS_MAX);
        if (a->tasks && !(init && pids_max < 0))
                judge_one(v, &u->tt, p, KB_LIMIT_TASKS, a->tasks, pids_max,
                          kb_fact_int_or(l, FACT_PROC_LIMITS_NPROC, -2), "RLIMIT_NPROC");
        /* CPU: only a cgroup bounds it (no rlimit does: RLIMIT_CPU ends a process) */
        if (a->cpu)
                judge_one(v, &u->tc, p, KB_LIMIT_CPU, a->cpu,
                          cgroup_limit(snap, own, p, FACT_PROC_CGROUPS_CPU, FACT_CGROUP_CPU_MAX_MILLI), -1, "rlimit");
        int64_t mp = cgroup_limit(snap, own, p, FACT_PROC_CGROUPS_MEMORY, FACT_CGROUP_MEMORY_PEAK),
                pp = cgroup_limit(snap, own, p, FACT_PROC_CGROUPS_PIDS, FACT_CGROUP_PIDS_PEAK),
                ok = cgroup_limit(snap, own, p, FACT_PROC_CGROUPS_MEMORY, FACT_CGROUP_OOM_KILL);
        u->mem_peak = mp > u->mem_peak ? mp : u->mem_peak;
        u->pids_peak = pp > u->pids_peak ? pp : u->pids_peak;
        u->oom = ok > u->oom ? ok : u->oom;
}

/* The sums one look read of the sandbox's use (res: its "resources"), the largest kept. */
static void use_of_look(resource_use *u, json_object *res) {
        int64_t rss = kb_fact_int_or(res, FACT_RESOURCES_RSS_BYTES, 0),
                tk = kb_fact_int_or(res, FACT_RESOURCES_TASKS, 0);
        u->rss_peak = rss > u->rss_peak ? rss : u->rss_peak;
        u->tasks_peak = tk > u->tasks_peak ? tk : u->tasks_peak;
        /* Bytes used by folder (its path, data), -errno when not read: counted as none. */
        json_object *used = kb_fact_map_of(res, FACT_RESOURCES_USED);
        int64_t ut = 0, us = 0, w = 0;
        judge_map_int(used, "/tmp", &ut);
        judge_map_int(used, "/dev/shm", &us);
        judge_map_int(used, KB_SANDBOX_WORKSPACE, &w);
        int64_t sum = (ut > 0 ? ut : 0) + (us > 0 ? us : 0);
        u->used_peak = sum > u->used_peak ? sum : u->used_peak;
        u->ws_peak = w > u->ws_peak ? w : u->ws_peak;
}

/* Every process of every look, and what each look read of the sandbox's use. */
static void judge_looks(verdict *v, const kb_judge_input *in, const asked *a, resource_use *u) {
        json_object *own = kb_fact_arr_of(kb_fact_obj_of(in->expect, FACT_EXPECT_CGROUP), FACT_CGROUP_SETUP_DIRS);
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s), *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
                for (size_t i = 0; i < arr_len(procs); i++)
                        judge_process_limits(v, a, u, snap, own, at(procs, i));
                use_of_look(u, kb_fact_obj_of(snap, FACT_LOOK_RESOURCES));
        }
        if (u->seen == 0 && (a->mem || a->tasks || a->cpu))
                verdict_problem(v, "no look read any sandbox process's limits");
}

/* Every writable in-memory filesystem of the kernel's mount table has a size of at most the
 * limit (bwrap's own are /tmp and /dev/shm; any other one a bwrap makes counts too), but the
 * workspace, which has a limit of its own and must be such a tmpfs when one is asked. */
static void judge_tmpfs(verdict *v, const kb_judge_input *in, const asked *a, resource_use *u) {
        bool sized = kb_fact_bool_of(a->limits, FACT_LIMITS_TMPFS_SIZE);
        const char *no_size = sized ? "" : " (this bwrap has no --size)";
        u->mounts = kb_fact_arr_of(judge_last_look(in), FACT_LOOK_MOUNTS);
        for (size_t i = 0; i < arr_len(u->mounts); i++) {
                json_object *m = at(u->mounts, i);
                const char *mp = kb_fact_str_or(m, FACT_MOUNT_MOUNTPOINT, "");
                /* Unknown writability is writable (judge_mount_writable), as in every check. */
                bool tmpfs = judge_mount_is(m, "tmpfs"), writable = judge_mount_writable(m);
                /* The kernel's socket folder: a tmpfs of its own (judged below with the others), or
                 * the team's host folder, which nothing bounds (a bwrap with no --size). */
                if (judge_same_path(mp, KB_SANDBOX_RUNTIME) && !tmpfs && writable)
                        u->run_host = true;
                if (!a->tmp && !a->ws)
                        continue;
                if (!tmpfs || !writable)
                        continue;
                if (judge_same_path(mp, KB_SANDBOX_WORKSPACE)) {
                        int64_t size = kb_procfs_tmpfs_size(kb_fact_arr_of(m, FACT_MOUNT_SUPER));
                        u->ws_bounded |= a->ws && size > 0 && size <= a->ws;
                        continue;
                }
                if (!a->tmp)
                        continue;
                u->tmpfs_n++;
                int64_t size = kb_procfs_tmpfs_size(kb_fact_arr_of(m, FACT_MOUNT_SUPER));
                char want[32];
                kb_limit_format(KB_LIMIT_TMP, (uint64_t) a->tmp, want, sizeof want);
                if (size < 0 || size > a->tmp)
                        verdict_problem(v, "the sandbox's %s is a writable tmpfs %s (the limit is %s each%s)",
                                        kb_fact_str_or(m, FACT_MOUNT_MOUNTPOINT, "?"),
                                        size < 0 ? "of no size of its own" : "larger than asked", want,
                                        sized ? "" : "; this bwrap has no --size");
        }
        if (a->tmp && u->run_host)
                verdict_problem(v,
                                "the sandbox's %s (the kernel's sockets) is the team's folder on the host's disk: "
                                "nothing bounds what it writes there%s",
                                KB_SANDBOX_RUNTIME, no_size);
        if ((a->tmp || a->ws) && !u->mounts)
                verdict_problem(v, "the host could not read the kernel's mount table");
        char wz[32];
        kb_limit_format(KB_LIMIT_WORKSPACE, (uint64_t) a->ws, wz, sizeof wz);
        if (a->ws && u->mounts && !u->ws_bounded)
                verdict_problem(v,
                                "the sandbox's %s is not a tmpfs of at most %s: nothing bounds what it writes there%s",
                                KB_SANDBOX_WORKSPACE, wz, no_size);
}

/* The kernel's log: a pipe to kbound's keeper, and no more on disk than asked (the host's stat of
 * the files when judged). A log bwrap writes itself has no bound at all. */
static void judge_log(verdict *v, const kb_judge_input *in, const asked *a, resource_use *u) {
        /* The keeper's (expect "kernel_log"); a log without one (expect "kernel_log_file") has no
         * figures. -1: not known. */
        json_object *klog = kb_fact_obj_of(in->expect, FACT_EXPECT_KERNEL_LOG);
        u->log_kept = kb_fact_int_or(klog, FACT_LOG_KEEPER_KEPT, -1);
        u->log_written = kb_fact_int_or(klog, FACT_LOG_KEEPER_WRITTEN, -1);
        u->log_dropped = kb_fact_int_or(klog, FACT_LOG_KEEPER_DROPPED, -1);
        char lm[32];
        kb_limit_format(KB_LIMIT_LOG, (uint64_t) a->log, lm, sizeof lm);
        if (a->log && !kb_fact_str_of(klog, FACT_LOG_KEEPER_PIPE))
                verdict_problem(v, "the kernel's log is a file the sandbox writes itself: nothing bounds it (asked %s)",
                                lm);
        else if (a->log && (u->log_kept < 0 || u->log_kept > a->log))
                verdict_problem(v, "%" PRId64 " bytes of the kernel's log are on disk, more than the %s asked",
                                u->log_kept, lm);
}

/* The evidence's "used": the peaks and counts, each from the best source the looks had. */
static json_object *use_figures(const resource_use *u) {
        json_object *figures = json_object_new_object();
        json_object_object_add(figures, "memory_peak_bytes",
                               json_object_new_int64(u->mem_peak >= 0 ? u->mem_peak : u->rss_peak));
        json_object_object_add(figures, "memory_peak_from",
                               json_object_new_string(u->mem_peak >= 0 ? "cgroup" : "the largest RSS sum of a look"));
        json_object_object_add(figures, "tasks_peak",
                               json_object_new_int64(u->pids_peak >= 0 ? u->pids_peak : u->tasks_peak));
        json_object_object_add(figures, "tmp_used_peak_bytes", json_object_new_int64(u->used_peak));
        json_object_object_add(figures, "workspace_used_peak_bytes", json_object_new_int64(u->ws_peak));
        json_object_object_add(figures, "oom_kills", json_object_new_int64(u->oom));
        json_object_object_add(figures, "log_written_bytes", json_object_new_int64(u->log_written));
        json_object_object_add(figures, "log_dropped_bytes", json_object_new_int64(u->log_dropped));
        json_object_object_add(figures, "log_kept_bytes", json_object_new_int64(u->log_kept));
        return figures;
}

/* "; NOT claimed (none asked): ..." naming every limit not asked, or "" (into buf). */
static void unclaimed_words(const asked *a, const resource_use *u, char *buf, size_t size) {
        const char *given_up[7];
        size_t n_given_up = 0;
        if (!a->mem)
                given_up[n_given_up++] = "memory";
        if (!a->tasks)
                given_up[n_given_up++] = "tasks";
        if (!a->tmp)
                given_up[n_given_up++] = "/tmp size";
        if (!a->tmp && u->run_host)
                given_up[n_given_up++] = "the socket folder's size (host disk)";
        if (!a->ws)
                given_up[n_given_up++] = "workspace size";
        if (!a->log)
                given_up[n_given_up++] = "log size";
        if (!a->cpu)
                given_up[n_given_up++] = "processor time (--cpu-max)";
        buf[0] = '\0';
        for (size_t i = 0; i < n_given_up; i++) {
                size_t len = strlen(buf);
                snprintf(buf + len, size - len, "%s%s", i ? ", " : "; NOT claimed (none asked): ", given_up[i]);
        }
}

/* The check's detail: each limit, how it was in force and what was used (into detail). */
static void resources_detail(const kb_judge_input *in, const asked *a, const resource_use *u, char *detail,
                             size_t size) {
        char m[32], t[32], z[32], mp[32], wz[32], lm[32], unclaimed[256];
        kb_limit_format(KB_LIMIT_MEMORY, (uint64_t) a->mem, m, sizeof m);
        kb_limit_format(KB_LIMIT_TASKS, (uint64_t) a->tasks, t, sizeof t);
        kb_limit_format(KB_LIMIT_TMP, (uint64_t) a->tmp, z, sizeof z);
        kb_limit_format(KB_LIMIT_MEMORY, (uint64_t) (u->mem_peak >= 0 ? u->mem_peak : u->rss_peak), mp, sizeof mp);
        kb_limit_format(KB_LIMIT_WORKSPACE, (uint64_t) a->ws, wz, sizeof wz);
        kb_limit_format(KB_LIMIT_LOG, (uint64_t) a->log, lm, sizeof lm);
        const char *cg_error = kb_fact_str_of(kb_fact_obj_of(in->expect, FACT_EXPECT_CGROUP), FACT_CGROUP_SETUP_ERROR);
        unclaimed_words(a, u, unclaimed, sizeof unclaimed);
        char cpu_words[96] = "";
        if (a->cpu)
                snprintf(cpu_words, sizeof cpu_words,
                         ", processor time at most %" PRId64 " CPU(s) for the whole sandbox (its cpu cgroup)", a->cpu);
        char ws_words[160] = "";
        if (a->ws)
                snprintf(ws_words, sizeof ws_words,
                         ", %s at most %s (a tmpfs of its own; %" PRId64 " bytes used at most)", KB_SANDBOX_WORKSPACE,
                         wz, u->ws_peak);
        char log_words[160] = "";
        if (a->log)
                snprintf(log_words, sizeof log_words,
                         ", the kernel's log at most %s on disk (%" PRId64 " bytes written, %" PRId64 " rotated away)",
                         lm, u->log_written, u->log_dropped);
        char why_rlimits[160] = "";
        if ((u->tm.rlimit || u->tt.rlimit) && cg_error)
                snprintf(why_rlimits, sizeof why_rlimits, "; no cgroup of its own could be made (%s)", cg_error);
        /* Past size the words are cut, and end in "..." (the evidence keeps every figure). */
        if (snprintf(detail, size,
                     "read by the host at every look (%zu process readings): memory at most %s %s (peak %s), tasks at "
                     "most "
                     "%s %s (peak %" PRId64 "), each of its %zu writable in-memory folders at most %s (tmpfs size; "
                     "%" PRId64 " bytes used at most)%s%s%s%s%s",
                     u->seen, m,
                     mechanism(&u->tm, "for the whole sandbox (its memory cgroup, swap included)",
                               "per process (RLIMIT_AS)"),
                     mp, t,
                     mechanism(&u->tt, "for the whole sandbox (its pids cgroup)",
                               "in the sandbox's user namespace (RLIMIT_NPROC)"),
                     u->pids_peak >= 0 ? u->pids_peak : u->tasks_peak, u->tmpfs_n, z, u->used_peak, ws_words, cpu_words,
                     log_words, why_rlimits, unclaimed) >= (int) size)
                memcpy(detail + size - 4, "...", 4);
}

json_object *kb_judge_resources(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        judge_look_problems(&v, in);
        asked a = asked_read(&v, in);
        resource_use u = {.mem_peak = -1, .pids_peak = -1};
        judge_looks(&v, in, &a, &u);
        judge_tmpfs(&v, in, &a, &u);
        if (u.oom > 0)
                verdict_problem(&v, "the sandbox's memory cgroup killed %" PRId64 " process(es) at its limit", u.oom);
        judge_log(&v, in, &a, &u);
        verdict_evidence(&v, "used", use_figures(&u));
        verdict_evidence_fact(&v, EVIDENCE_RESOURCES_LIMITS, json_object_get(a.limits));
        verdict_evidence_fact(&v, EVIDENCE_RESOURCES_CGROUP,
                              json_object_get(kb_fact_get(in->expect, FACT_EXPECT_CGROUP)));
        char detail[DETAIL_MAX];
        resources_detail(in, &a, &u, detail, sizeof detail);
        return verdict_end(&v, KB_CHECK_RESOURCES, detail);
}

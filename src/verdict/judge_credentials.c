/* judge_credentials.c: boundary.credentials and boundary.cross_team, secrets and other teams' files. */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "kbound/inspect.h"
#include "verdict/judge-internal.h"
#include "base/procfs.h"

/* ---- credentials ---- */

/* The daemon secrets and canaries the host found in the environment and command line of each
 * process of look (names only), and those it could not read. Returns how many processes it read. */
static size_t secret_problems(verdict *v, json_object *look) {
        const struct { /* automatic: facts are not constant expressions (clang) */
                kb_fact_arr found;
                kb_fact_what unread;
                const char *words;
        } texts[] = {{FACT_PROCESS_ENVIRON_SECRETS, WHAT_ENVIRON, "environment"},
                     {FACT_PROCESS_CMDLINE_SECRETS, WHAT_CMDLINE, "command line"}};
        char buf[DETAIL_MAX];
        json_object *procs = kb_fact_arr_of(look, FACT_LOOK_PROCESSES);
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *p = at(procs, i);
                int64_t pid = judge_pid_of(p);
                for (size_t t = 0; t < KB_ELEMENTSOF(texts); t++) {
                        json_object *names = kb_fact_arr_of(p, texts[t].found);
                        const char *error = judge_process_error(p, texts[t].unread, NULL, buf, sizeof buf);
                        if (!names && !judge_zombie(p)) /* a zombie has no memory, so no environment */
                                verdict_problem(v, "the host could not read the %s of pid %" PRId64 " (%s)%s%s",
                                                texts[t].words, pid, judge_name_of(p), error ? ": " : "",
                                                error ? error : "");
                        for (size_t k = 0; k < arr_len(names); k++)
                                verdict_problem(v, "%s is in the %s of pid %" PRId64 " (%s) (value never shown)",
                                                json_object_get_string(at(names, k)), texts[t].words, pid,
                                                judge_name_of(p));
                }
        }
        return arr_len(procs);
}

json_object *kb_judge_credentials(const kb_judge_input *in) {
        static const char *const subprobes[] = {"credentials", NULL};
        verdict v;
        verdict_begin(&v, in);
        char buf[DETAIL_MAX];
        /* The host's read of every environment and command line, in every look. */
        size_t n_proc = 0;
        for (size_t s = 0; s < arr_len(in->snapshots); s++)
                n_proc += secret_problems(&v, at(in->snapshots, s));
        judge_reach_problems(&v, in, "canary", KB_CHECK_CREDENTIALS, NULL);
        /* The child the cell spawned, seen alive by the host. */
        json_object *creds = kb_fact_obj_of(in->probe, FACT_PROBE_CREDENTIALS),
                    *sub = kb_fact_obj_of(creds, FACT_PROBE_CREDENTIALS_SUBPROCESS);
        int64_t child = kb_fact_int_or(sub, FACT_PROBE_SUBPROCESS_PID, -1), kernel_pid = judge_kernel_pid(&v, in);
        json_object *alive = judge_look_labelled(in, "child alive"),
                    *alive_procs = kb_fact_arr_of(alive, FACT_LOOK_PROCESSES);
        bool child_seen = false;
        for (size_t i = 0; i < arr_len(alive_procs); i++) {
                json_object *p = at(alive_procs, i);
                /* PID 1 is bwrap's init and PID 2's host pid the kernel's: neither is a child it spawned
                 * (and one of unknown pid may be the kernel). */
                child_seen |= child > 1 && judge_inner_pid(p) == child && kb_fact_has(p, FACT_PROCESS_PID) &&
                              kernel_pid > 0 && !judge_is_pid(p, kernel_pid);
        }
        if (in->cells_absent)
                ; /* no cell spawned anything: the host's looks at what is there carry the check */
        else if (!alive || !child_seen) {
                /* What a pack writer needs: why the look on the marker came too late or never. */
                const char *marker = kb_fact_str_of(in->expect, FACT_EXPECT_CHILD_MARKER);
                const char *why =
                        marker && strcmp(marker, "unended") == 0
                                ? ": the cell's child marker line came without its line end, which the kernel sent "
                                  "only "
                                  "with later output, after the child stopped waiting (a metakernel kernel sends a "
                                  "line's end only with the next output: print an empty line after every line the "
                                  "host waits for; docs/probes-cells.md, \"What a pack writer meets\")"
                        : marker && strcmp(marker, "absent") == 0
                                ? ": the cell never relayed the child marker line kbound-probe prints first (relay "
                                  "every line the program prints as it comes; docs/probes-cells.md)"
                                : "";
                if (!alive)
                        verdict_problem(&v,
                                        "the host never looked at the sandbox while a process the kernel spawned "
                                        "was alive%s",
                                        why);
                else
                        verdict_problem(&v,
                                        "the child the cell spawned (pid %" PRId64
                                        " in the sandbox) is not among the processes the host sees in the sandbox%s",
                                        child, why);
        }
        /* The cell's word: fails only. */
        judge_no_probe(&v, in);
        if (judge_cell_error(kb_fact_arr_of(in->probe, FACT_PROBE_ERRORS), subprobes, buf, sizeof buf))
                verdict_problem(&v, "%s", buf);
        json_object *found = kb_fact_arr_of(in->expect, FACT_EXPECT_SECRETS_IN_PROBE);
        for (size_t i = 0; i < arr_len(found); i++)
                verdict_problem(&v, "%s reached the sandbox (found in what the cell saw; value never shown)",
                                json_object_get_string(at(found, i)));
        size_t n_read = arr_len(kb_fact_arr_of(sub, FACT_PROBE_SUBPROCESS_PROC));
        const char *sub_error = kb_fact_str_of(sub, FACT_PROBE_SUBPROCESS_ERROR);
        bool spawned = kb_fact_bool_of(sub, FACT_PROBE_SUBPROCESS_SPAWNED);
        if (in->probe) {
                if (!spawned)
                        verdict_problem(&v, "the cell could not spawn a subprocess (%s)",
                                        sub_error ? sub_error : "no reason given");
                else if (sub_error)
                        verdict_problem(&v, "the cell's subprocess failed: %s", sub_error);
                else if (n_read == 0)
                        verdict_problem(&v, "the cell's subprocess read no process's environment");
                if (spawned && !kb_fact_bool_of(sub, FACT_PROBE_SUBPROCESS_GO))
                        verdict_problem(&v, "the cell's subprocess did not wait for the host's look");
        }
        json_object *files = kb_fact_arr_of(creds, FACT_PROBE_CREDENTIALS_FILES);
        for (size_t i = 0; i < arr_len(files); i++)
                if (kb_fact_bool_of(at(files, i), FACT_PROBE_CRED_FILE_EXISTS))
                        verdict_problem(&v, "the cell sees the host credential file %s",
                                        kb_fact_str_or(at(files, i), FACT_PROBE_CRED_FILE_PATH, "?"));
        json_object *keys = kb_fact_obj_of(creds, FACT_PROBE_CREDENTIALS_KEYS);
        if (kb_fact_bool_of(keys, FACT_PROBE_KEYS_FOUND))
                verdict_problem(&v, "the cell found kbound's canary key by name in the keyrings it possesses");
        verdict_evidence_fact(&v, EVIDENCE_CREDENTIALS_SECRETS_CHECKED,
                              json_object_get(kb_fact_get(in->expect, FACT_EXPECT_SECRETS_GUARDED)));
        verdict_evidence_fact(&v, EVIDENCE_CREDENTIALS_FOUND, json_object_get(found));
        verdict_evidence(&v, "processes_read_by_host", json_object_new_int64((int64_t) n_proc));
        verdict_evidence(&v, "processes_read_by_cell", json_object_new_int64((int64_t) n_read));
        verdict_evidence(&v, "child_seen_by_host", json_object_new_boolean(child_seen));
        verdict_evidence_fact(&v, EVIDENCE_CREDENTIALS_KEYRING_CANARY,
                              json_object_get(kb_fact_get(in->expect, FACT_EXPECT_KEYRING)));
        verdict_evidence_fact(&v, EVIDENCE_CREDENTIALS_KEYS, json_object_get(keys));
        char pass[DETAIL_MAX];
        snprintf(pass, sizeof pass,
                 "%" PRId64 " daemon secrets and canaries: none in the environment or command line of %zu sandbox "
                 "process%s read by the host%s; no credential canary reachable through the mounts; kbound's keyring "
                 "canary %s",
                 kb_fact_int_or(in->expect, FACT_EXPECT_SECRETS_GUARDED, -1), n_proc, n_proc == 1 ? "" : "es",
                 in->cells_absent ? "" : " (a spawned child included)",
                 kb_fact_bool_of(keys, FACT_PROBE_KEYS_TESTED) ? "not found by the cell"
                                                               : "beyond the sandbox's fresh, empty session keyring");
        if (!in->cells_absent) {
                char more[96];
                snprintf(more, sizeof more, ", nor in what the cell's subprocess read from %zu", n_read);
                char *semi = strstr(pass, "; no credential canary");
                if (semi && strlen(pass) + strlen(more) < sizeof pass) {
                        memmove(semi + strlen(more), semi, strlen(semi) + 1);
                        memcpy(semi, more, strlen(more));
                }
        }
        /* A canary that could not be planted (a home kbound cannot write to) narrows the claim: said
         * first. */
        char untested[DETAIL_MAX], said[2 * DETAIL_MAX];
        judge_not_tested(&v, in, KB_CHECK_CREDENTIALS, untested, sizeof untested);
        snprintf(said, sizeof said, "%s%s", untested, pass);
        return verdict_end(&v, KB_CHECK_CREDENTIALS, said);
}

/* ---- cross_team ---- */

/* Whether a lookup of path in mounts ends on m (a table without a root hides nothing). */
static bool reached_through(json_object *mounts, const char *path, json_object *m) {
        json_object *top = kb_procfs_mount_of(mounts, path);
        return !top || top == m;
}

/* Whether mount m of table, whose root is root, shows the whole host folder fs_folder (a path in
 * m's filesystem) in the sandbox: the folder lies in m and a lookup of where it shows (where, size
 * bytes) ends on m. */
static bool shows_folder(json_object *table, json_object *m, const char *root, const char *fs_folder, char *where,
                         size_t size) {
        return kb_procfs_path_under(fs_folder, root) && kb_procfs_path_in_mount(m, fs_folder, where, size) &&
               reached_through(table, where, m);
}

/* Whether name is a base folder's name as kbound's CLI makes it (mkdtemp of "kbound-XXXXXX"). */
static bool base_folder_name(const char *name, size_t len) {
        static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        if (len != 13 || strncmp(name, "kbound-", 7) != 0)
                return false;
        for (size_t i = 7; i < len; i++)
                if (!strchr(alnum, name[i]) || name[i] == '\0')
                        return false;
        return true;
}

/* Where the host path lies on the host: its host mount's device and the path inside that
 * filesystem (fs, size bytes). False if no host mount holds it. */
static bool place_of(json_object *host_mounts, const char *path, const char **ret_dev, char *fs, size_t size) {
        json_object *hm = kb_procfs_mount_of(host_mounts, path);
        *ret_dev = kb_fact_str_of(hm, FACT_MOUNT_DEV);
        return hm && *ret_dev && kb_procfs_fs_path(hm, path, fs, size);
}

/* host_prefix + what of fs_path lies below fs_prefix (fs_path is under it). */
static void host_path_of(const char *host_prefix, const char *fs_prefix, const char *fs_path, char *out, size_t size) {
        const char *rest = strcmp(fs_prefix, "/") == 0 ? fs_path : fs_path + strlen(fs_prefix);
        snprintf(out, size, "%s%s", strcmp(host_prefix, "/") == 0 && *rest ? "" : host_prefix, rest);
}

/* The problem fmt says, formatted, added to found unless it is there already. */
static void __attribute__((format(printf, 2, 3))) found_add(json_object *found, const char *fmt, ...) {
        char text[3 * PATH_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        judge_add_unique(found, text);
}

/* "the sandbox's mount at mp shows PATH" and why, added to found: PATH the host path of root (a
 * path in a filesystem whose fs_prefix lies at host_prefix on the host). */
static void found_shown(json_object *found, const char *mp, const char *host_prefix, const char *fs_prefix,
                        const char *root, const char *why) {
        char shown[PATH_MAX];
        host_path_of(host_prefix, fs_prefix, root, shown, sizeof shown);
        found_add(found, "the sandbox's mount at %s shows %s%s", mp, shown, why);
}

/* Mounts of every mount table of every look that show another team's folders: anything under the
 * run's teams/ folder but the team's own binds, anything of another kbound run's base folder
 * (a kbound-XXXXXX sibling of base_dir), or a folder holding either where no other mount covers
 * it. Found from each mount's filesystem and root, against where the host's own table places
 * those folders: no canary needs to lie there. Each problem once, into found. looks: the array of
 * looks to read. */
static void team_folder_problems(const kb_judge_input *in, json_object *looks, json_object *found) {
        const char *base = kb_fact_str_of(in->expect, FACT_EXPECT_BASE_DIR);
        json_object *host_mounts = kb_fact_arr_of(in->host, FACT_HOST_MOUNTS),
                    *binds = kb_fact_arr_of(in->expect, FACT_EXPECT_TEAM_BINDS);
        char teams[PATH_MAX], parent[PATH_MAX], fs_teams[PATH_MAX], fs_parent[PATH_MAX];
        const char *dev_teams = NULL, *dev_parent = NULL, *slash = base ? strrchr(base, '/') : NULL;
        if (!base || base[0] != '/' || !slash || !slash[1]) {
                judge_add_unique(found, "kbound did not say where the run's team folders are");
                return;
        }
        const char *own = slash + 1;
        snprintf(teams, sizeof teams, "%s/teams", base);
        snprintf(parent, sizeof parent, "%.*s", slash == base ? 1 : (int) (slash - base), base);
        if (!place_of(host_mounts, teams, &dev_teams, fs_teams, sizeof fs_teams) ||
            !place_of(host_mounts, parent, &dev_parent, fs_parent, sizeof fs_parent)) {
                found_add(found, "the host could not place the run's team folders (%s) on its filesystems", teams);
                return;
        }
        /* The team's own binds, on their filesystems. */
        const char *dev_own[4] = {NULL};
        char fs_own[4][PATH_MAX];
        size_t n_own = 0;
        for (size_t i = 0; i < arr_len(binds) && n_own < 4; i++) {
                const char *path = kb_fact_str_of(at(binds, i), FACT_TEAM_BIND_PATH);
                if (path && place_of(host_mounts, path, &dev_own[n_own], fs_own[n_own], sizeof fs_own[n_own]))
                        n_own++;
        }
        for (size_t s = 0; s < arr_len(looks); s++) {
                json_object *tables[KB_INSPECT_MOUNT_TABLES_MAX];
                size_t n_tables = judge_look_tables(at(looks, s), tables, KB_INSPECT_MOUNT_TABLES_MAX);
                for (size_t t = 0; t < n_tables; t++) {
                        for (size_t i = 0; i < arr_len(tables[t]); i++) {
                                json_object *m = at(tables[t], i);
                                const char *dev = kb_fact_str_of(m, FACT_MOUNT_DEV),
                                           *root = kb_fact_str_of(m, FACT_MOUNT_ROOT),
                                           *mp = kb_fact_str_or(m, FACT_MOUNT_MOUNTPOINT, "?");
                                char where[PATH_MAX];
                                json_object *top = kb_procfs_mount_of(tables[t], mp);
                                if (top && top != m)
                                        continue; /* hidden under a later mount */
                                if (!dev || !root) {
                                        /* Not placed is never "shows nothing": facts.def requires both. */
                                        found_add(found, "the host could not tell what the sandbox's mount at %s shows",
                                                  mp);
                                        continue;
                                }
                                if (strcmp(dev, dev_teams) == 0 && kb_procfs_path_under(root, fs_teams)) {
                                        bool mine = false;
                                        for (size_t b = 0; b < n_own && !mine; b++)
                                                mine = strcmp(dev, dev_own[b]) == 0 &&
                                                       kb_procfs_path_under(root, fs_own[b]);
                                        if (mine)
                                                continue;
                                        found_shown(found, mp, teams, fs_teams, root,
                                                    ": a team folder that is not the kernel's own workspace or "
                                                    "runtime folder");
                                        continue;
                                }
                                if (strcmp(dev, dev_teams) == 0 &&
                                    shows_folder(tables[t], m, root, fs_teams, where, sizeof where)) {
                                        found_add(found,
                                                  "the sandbox's mount at %s shows every team's folders (%s) at %s", mp,
                                                  teams, where);
                                }
                                if (strcmp(dev, dev_parent) != 0)
                                        continue;
                                if (kb_procfs_path_under(root, fs_parent) && !judge_same_path(root, fs_parent)) {
                                        const char *rest = root + (strcmp(fs_parent, "/") == 0 ? 0 : strlen(fs_parent));
                                        while (*rest == '/')
                                                rest++;
                                        size_t len = strcspn(rest, "/");
                                        if (!base_folder_name(rest, len) ||
                                            (len == strlen(own) && strncmp(rest, own, len) == 0))
                                                continue;
                                        found_shown(found, mp, parent, fs_parent, root,
                                                    ", in another kbound run's folder");
                                } else if (shows_folder(tables[t], m, root, fs_parent, where, sizeof where)) {
                                        found_add(found,
                                                  "the sandbox's mount at %s shows %s (where every kbound run keeps "
                                                  "its team folders) at %s",
                                                  mp, parent, where);
                                }
                        }
                }
        }
}

json_object *kb_judge_cross_team(const kb_judge_input *in) {
        static const char *const subprobes[] = {"cross_team", NULL};
        verdict v;
        verdict_begin(&v, in);
        char buf[DETAIL_MAX];
        size_t canaries = judge_reach_problems(&v, in, "canary", KB_CHECK_CROSS_TEAM, NULL);
        if (canaries == 0)
                verdict_problem(&v, "the host was given no other team's canary to look for");
        json_object *folders = json_object_new_array();
        if (!folders)
                v.oom = true;
        team_folder_problems(in, in->snapshots, folders);
        for (size_t i = 0; i < arr_len(folders); i++)
                verdict_problem(&v, "%s", json_object_get_string(at(folders, i)));
        json_object_put(folders);
        judge_no_probe(&v, in);
        if (judge_cell_error(kb_fact_arr_of(in->probe, FACT_PROBE_ERRORS), subprobes, buf, sizeof buf))
                verdict_problem(&v, "%s", buf);
        json_object *found = kb_fact_arr_of(in->expect, FACT_EXPECT_SIBLING_IN_PROBE);
        if (arr_len(found) > 0)
                verdict_problem(&v, "another team's canary was readable in the sandbox");
        json_object *cross = kb_fact_arr_of(in->probe, FACT_PROBE_CROSS_TEAM);
        size_t n = arr_len(cross);
        if (in->probe && n == 0)
                verdict_problem(&v, "the cell reported no cross-team attempts");
        json_object *cell = json_object_new_array();
        for (size_t i = 0; i < n; i++) {
                json_object *e = at(cross, i);
                if (!json_object_is_type(e, json_type_object)) {
                        verdict_problem(&v, "the cell's cross-team entry %zu is not an object", i);
                        continue; /* json_object_object_foreach cannot walk it */
                }
                if (kb_fact_bool_of(e, FACT_PROBE_CROSS_TEAM_EXISTS) ||
                    kb_fact_bool_of(e, FACT_PROBE_CROSS_TEAM_READABLE))
                        verdict_problem(&v, "another team's path %s is visible in the sandbox",
                                        kb_fact_str_or(e, FACT_PROBE_CROSS_TEAM_PATH, "?"));
                /* What the cell saw of each path, without what it read. */
                json_object *copy = json_object_new_object();
                if (!copy || !cell)
                        continue;
                json_object_object_foreach(e, key, value) {
                        if (strcmp(key, kb_fact_row(FACT_PROBE_CROSS_TEAM_CONTENT.id)->key) == 0)
                                json_object_object_add(
                                        copy, "content_read",
                                        json_object_new_boolean(value && !json_object_is_type(value, json_type_null)));
                        else
                                json_object_object_add(copy, key, json_object_get(value));
                }
                json_object_array_add(cell, copy);
        }
        verdict_evidence(&v, "cell", cell);
        verdict_evidence_fact(&v, EVIDENCE_CROSS_TEAM_CANARIES_FOUND, json_object_get(found));
        verdict_evidence_fact(&v, EVIDENCE_CROSS_TEAM_BASE_DIR,
                              json_object_get(kb_fact_get(in->expect, FACT_EXPECT_BASE_DIR)));
        char pass[2 * DETAIL_MAX], untested[DETAIL_MAX];
        judge_not_tested(&v, in, KB_CHECK_CROSS_TEAM, untested, sizeof untested);
        snprintf(pass, sizeof pass,
                 "%sanother team's folder and canary (%zu paths) are neither reachable through the sandbox's mounts "
                 "(host)%s; "
                 "no mount of the sandbox shows a team folder but the kernel's own, nor another kbound run's folder",
                 untested, canaries, in->cells_absent ? "" : " nor visible to the cell");
        return verdict_end(&v, KB_CHECK_CROSS_TEAM, pass);
}

json_object *kb_judge_credentials_before_start(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        size_t n_proc = secret_problems(&v, in->pre_exec);
        verdict_evidence_fact(&v, EVIDENCE_CREDENTIALS_SECRETS_CHECKED,
                              json_object_get(kb_fact_get(in->expect, FACT_EXPECT_SECRETS_GUARDED)));
        verdict_evidence(&v, "processes_read_by_host", json_object_new_int64((int64_t) n_proc));
        return verdict_end_before_start(&v, KB_CHECK_CREDENTIALS,
                                        "the environment and command line of bwrap's init (the canaries' reach "
                                        "needs a look at the running kernel)");
}

json_object *kb_judge_cross_team_before_start(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        json_object *folders = json_object_new_array(), *looks = json_object_new_array();
        if (!folders || !looks || json_object_array_add(looks, json_object_get(in->pre_exec)) < 0)
                v.oom = true;
        team_folder_problems(in, looks, folders);
        json_object_put(looks);
        for (size_t i = 0; i < arr_len(folders); i++)
                verdict_problem(&v, "%s", json_object_get_string(at(folders, i)));
        json_object_put(folders);
        verdict_evidence_fact(&v, EVIDENCE_CROSS_TEAM_BASE_DIR,
                              json_object_get(kb_fact_get(in->expect, FACT_EXPECT_BASE_DIR)));
        return verdict_end_before_start(&v, KB_CHECK_CROSS_TEAM,
                                        "the mount table of bwrap's init (the other team's canaries' reach needs a "
                                        "look at the running kernel)");
}

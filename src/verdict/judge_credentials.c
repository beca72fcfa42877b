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

json_object *kb_judge_credentials(const kb_judge_input *in) {
        static const char *const subprobes[] = {"credentials", NULL};
        verdict v;
        verdict_begin(&v, in);
        char buf[DETAIL_MAX];
        /* The host's read of every environment and command line, in every look. */
        size_t n_proc = 0;
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *procs = kb_json_get(at(in->snapshots, s), "processes");
                for (size_t i = 0; i < arr_len(procs); i++) {
                        json_object *p = at(procs, i);
                        int64_t pid = int_or(p, "pid", -1);
                        n_proc++;
                        static const struct {
                                const char *key, *file, *words;
                        } texts[] = {{"environ_secrets", "environ", "environment"},
                                     {"cmdline_secrets", "cmdline", "command line"}};
                        for (size_t t = 0; t < KB_ELEMENTSOF(texts); t++) {
                                json_object *names = kb_json_get(p, texts[t].key);
                                if (!names)
                                        verdict_problem(&v,
                                                        "the host could not read the %s of pid %" PRId64 " (%s)%s%s",
                                                        texts[t].words, pid, str_or(p, "name", "?"),
                                                        judge_fact_error(p, texts[t].file, buf, sizeof buf) ? ": " : "",
                                                        judge_fact_error(p, texts[t].file, buf, sizeof buf) ? buf : "");
                                for (size_t k = 0; k < arr_len(names); k++)
                                        verdict_problem(&v,
                                                        "%s is in the %s of pid %" PRId64 " (%s) (value never shown)",
                                                        json_object_get_string(at(names, k)), texts[t].words, pid,
                                                        str_or(p, "name", "?"));
                        }
                }
        }
        judge_reach_problems(&v, in, "canary", KB_CHECK_CREDENTIALS, NULL);
        /* The child the cell spawned, seen alive by the host. */
        json_object *sub = kb_json_get(kb_json_get(in->probe, "credentials"), "subprocess");
        int64_t child = int_or(sub, "pid", -1);
        json_object *alive = judge_look_labelled(in, "child alive");
        bool child_seen = false;
        for (size_t i = 0; i < arr_len(kb_json_get(alive, "processes")); i++) {
                json_object *p = at(kb_json_get(alive, "processes"), i);
                /* PID 1 is bwrap's init and PID 2's host pid the kernel's: neither is a child it spawned. */
                child_seen |= child > 1 && judge_inner_pid(p) == child &&
                              int_or(p, "pid", -1) != int_or(in->expect, "kernel_pid", -2);
        }
        if (in->cells_absent)
                ; /* no cell spawned anything: the host's looks at what is there carry the check */
        else if (!alive)
                verdict_problem(&v,
                                "the host never looked at the sandbox while a process the kernel spawned was alive");
        else if (!child_seen)
                verdict_problem(&v,
                                "the child the cell spawned (pid %" PRId64
                                " in the sandbox) is not among the processes the host "
                                "sees in the sandbox",
                                child);
        /* The cell's word: fails only. */
        judge_no_probe(&v, in);
        if (judge_cell_error(kb_fact_arr_of(in->probe, FACT_PROBE_ERRORS), subprobes, buf, sizeof buf))
                verdict_problem(&v, "%s", buf);
        json_object *found = kb_json_get(in->expect, "secrets_in_probe");
        for (size_t i = 0; i < arr_len(found); i++)
                verdict_problem(&v, "%s reached the sandbox (found in what the cell saw; value never shown)",
                                json_object_get_string(at(found, i)));
        size_t n_read = arr_len(kb_json_get(sub, "proc"));
        if (in->probe) {
                if (!kb_json_true(sub, "spawned"))
                        verdict_problem(&v, "the cell could not spawn a subprocess (%s)",
                                        str_or(sub, "error", "no reason given"));
                else if (kb_json_str(sub, "error"))
                        verdict_problem(&v, "the cell's subprocess failed: %s", kb_json_str(sub, "error"));
                else if (n_read == 0)
                        verdict_problem(&v, "the cell's subprocess read no process's environment");
                if (kb_json_true(sub, "spawned") && !kb_json_true(sub, "go"))
                        verdict_problem(&v, "the cell's subprocess did not wait for the host's look");
        }
        json_object *files = kb_json_get(kb_json_get(in->probe, "credentials"), "files");
        for (size_t i = 0; i < arr_len(files); i++)
                if (kb_json_true(at(files, i), "exists"))
                        verdict_problem(&v, "the cell sees the host credential file %s",
                                        str_or(at(files, i), "path", "?"));
        json_object *keys = kb_json_get(kb_json_get(in->probe, "credentials"), "keys");
        if (kb_json_true(keys, "found"))
                verdict_problem(&v, "the cell found kbound's canary key by name in the keyrings it possesses");
        verdict_evidence(&v, "secrets_checked", json_object_get(kb_json_get(in->expect, "secrets_guarded")));
        verdict_evidence(&v, "found", json_object_get(found));
        verdict_evidence(&v, "processes_read_by_host", json_object_new_int64((int64_t) n_proc));
        verdict_evidence(&v, "processes_read_by_cell", json_object_new_int64((int64_t) n_read));
        verdict_evidence(&v, "child_seen_by_host", json_object_new_boolean(child_seen));
        verdict_evidence(&v, "keyring_canary", json_object_get(kb_json_get(in->expect, "keyring")));
        verdict_evidence(&v, "keys", json_object_get(keys));
        char pass[512];
        snprintf(pass, sizeof pass,
                 "%" PRId64 " daemon secrets and canaries: none in the environment or command line of %zu sandbox "
                 "process%s read by the host%s; no credential canary reachable through the mounts; kbound's keyring "
                 "canary %s",
                 int_or(in->expect, "secrets_guarded", 0), n_proc, n_proc == 1 ? "" : "es",
                 in->cells_absent ? "" : " (a spawned child included)",
                 kb_json_true(keys, "tested") ? "not found by the cell"
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
        return verdict_end(&v, KB_CHECK_CREDENTIALS, pass);
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
        *ret_dev = kb_json_str(hm, "dev");
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
 * those folders: no canary needs to lie there. Each problem once, into found. */
static void team_folder_problems(const kb_judge_input *in, json_object *found) {
        const char *base = kb_json_str(in->expect, "base_dir");
        json_object *host_mounts = kb_json_get(in->host, "mounts"), *binds = kb_json_get(in->expect, "team_binds");
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
                const char *path = kb_json_str(at(binds, i), "path");
                if (path && place_of(host_mounts, path, &dev_own[n_own], fs_own[n_own], sizeof fs_own[n_own]))
                        n_own++;
        }
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *tables[KB_INSPECT_MOUNT_TABLES_MAX];
                size_t n_tables = judge_look_tables(at(in->snapshots, s), tables, KB_INSPECT_MOUNT_TABLES_MAX);
                for (size_t t = 0; t < n_tables; t++) {
                        for (size_t i = 0; i < arr_len(tables[t]); i++) {
                                json_object *m = at(tables[t], i);
                                const char *dev = kb_json_str(m, "dev"), *root = kb_json_str(m, "root"),
                                           *mp = str_or(m, "mountpoint", "?");
                                char where[PATH_MAX];
                                json_object *top = kb_procfs_mount_of(tables[t], mp);
                                if (!dev || !root || (top && top != m))
                                        continue; /* hidden under a later mount */
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
        team_folder_problems(in, folders);
        for (size_t i = 0; i < arr_len(folders); i++)
                verdict_problem(&v, "%s", json_object_get_string(at(folders, i)));
        json_object_put(folders);
        judge_no_probe(&v, in);
        if (judge_cell_error(kb_fact_arr_of(in->probe, FACT_PROBE_ERRORS), subprobes, buf, sizeof buf))
                verdict_problem(&v, "%s", buf);
        json_object *found = kb_json_get(in->expect, "sibling_in_probe");
        if (arr_len(found) > 0)
                verdict_problem(&v, "another team's canary was readable in the sandbox");
        json_object *cross = kb_json_get(in->probe, "cross_team");
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
                if (kb_json_true(e, "exists") || kb_json_true(e, "readable"))
                        verdict_problem(&v, "another team's path %s is visible in the sandbox", str_or(e, "path", "?"));
                /* What the cell saw of each path, without what it read. */
                json_object *copy = json_object_new_object();
                if (!copy || !cell)
                        continue;
                json_object_object_foreach(e, key, value) {
                        if (strcmp(key, "content") == 0)
                                json_object_object_add(
                                        copy, "content_read",
                                        json_object_new_boolean(value && !json_object_is_type(value, json_type_null)));
                        else
                                json_object_object_add(copy, key, json_object_get(value));
                }
                json_object_array_add(cell, copy);
        }
        verdict_evidence(&v, "cell", cell);
        verdict_evidence(&v, "canaries_found", json_object_get(found));
        verdict_evidence(&v, "base_dir", json_object_get(kb_json_get(in->expect, "base_dir")));
        char pass[512];
        snprintf(pass, sizeof pass,
                 "another team's folder and canary (%zu paths) are neither reachable through the sandbox's mounts "
                 "(host)%s; "
                 "no mount of the sandbox shows a team folder but the kernel's own, nor another kbound run's folder",
                 canaries, in->cells_absent ? "" : " nor visible to the cell");
        return verdict_end(&v, KB_CHECK_CROSS_TEAM, pass);
}

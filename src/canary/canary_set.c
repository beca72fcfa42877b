/* canary_set.c: the canaries and secret sets of one check run (canary_set.h). */
#include "kbound/canary_set.h"
#include "base/cleanup.h"
#include "base/facts.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kbound/canary.h"
#include "kbound/check.h"
#include "kbound/sandbox.h"

/* The most legitimate strings (environment entries, argv, handed paths) weighed against the
 * daemon secrets; past it the rest are not looked at (a host value is then guarded, not skipped). */
#define LEGIT_MAX 4096

/* Returns 0 or -errno (a short write to a regular file is the disk filling up: -ENOSPC). */
static int write_secret_file(const char *path, const char *value) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        size_t len = strlen(value);
        ssize_t n = write(fd, value, len);
        if (n < 0)
                return -errno;
        if ((size_t) n < len)
                return -ENOSPC;
        int closing = TAKE_FD(fd);
        return close(closing) < 0 ? -errno : 0;
}

/* "dir/namesuffix", malloc'd; NULL if out of memory (asprintf's pointer is undefined then, so it
 * never reaches a field that is freed). */
static char *path_join(const char *dir, const char *name, const char *suffix) {
        char *p;
        return asprintf(&p, "%s/%s%s", dir, name, suffix) < 0 ? NULL : p;
}

static int mkdir_errno(const char *path) {
        return mkdir(path, 0700) < 0 ? -errno : 0;
}

static int add_path(json_object *array, const char *path) {
        json_object *s = json_object_new_string(path);
        if (!s || json_object_array_add(array, s) < 0) {
                json_object_put(s);
                return -ENOMEM;
        }
        return 0;
}

/* The credential file (kbound's own: root's when kbound is root) and another team's folder with
 * a canary, laid out and owned exactly like a real team's (kb_kernel_start). */
static int plant_files(kb_canary_set *s, const kb_canary_set_options *o, const char *cred_value,
                       const char *sibling_value) {
        int r;
        if ((r = mkdir_errno(s->secrets_dir)) < 0 || (r = write_secret_file(s->credential_file, cred_value)) < 0 ||
            (r = mkdir_errno(s->teams_dir)) < 0 || (r = kb_sandbox_user_pass_through(o->user, s->teams_dir)) < 0 ||
            (r = mkdir_errno(s->sibling_dir)) < 0 || (r = kb_sandbox_user_pass_through(o->user, s->sibling_dir)) < 0 ||
            (r = mkdir_errno(s->sibling_workspace)) < 0 ||
            (r = write_secret_file(s->sibling_file, sibling_value)) < 0 ||
            (r = kb_sandbox_user_give(o->user, s->sibling_file)) < 0 ||
            (r = kb_sandbox_user_give(o->user, s->sibling_workspace)) < 0)
                return r;
        return 0;
}

/* A canary where a user keeps credentials: a dot-file in the invoking user's home. A home kbound
 * cannot write to is said (through o->log) and recorded, not a failure: the credential file stays. */
static void plant_home(kb_canary_set *s, const kb_canary_set_options *o, char *value) {
        if (!s->home_dir || s->home_dir[0] != '/')
                return; /* no home to plant in: said as such by plant_record */
        if (kb_random_hex(value, 32) < 0 ||
            !(s->home_canary = path_join(s->home_dir, KB_CANARY_SET_HOME_PREFIX "XXXXXX", ""))) {
                s->home_error = -ENOMEM;
                return;
        }
        _cleanup_free_ char *record = path_join(o->base_dir, KB_CANARY_SET_HOME_RECORD, "");
        _cleanup_close_ int fd = record ? mkostemp(s->home_canary, O_CLOEXEC) : -1;
        size_t len = strlen(value);
        int r = fd < 0 ? (record ? -errno : -ENOMEM) : 0;
        if (r == 0 && write(fd, value, len) != (ssize_t) len)
                r = -EIO;
        /* Recorded in the base folder first, or a killed run would leave it in HOME for good. */
        if (r == 0 && (r = write_secret_file(record, s->home_canary)) == 0)
                return;
        s->home_error = r;
        if (fd >= 0)
                unlink(s->home_canary);
        free(s->home_canary);
        s->home_canary = NULL;
        if (o->log) {
                char *line;
                if (asprintf(&line, "no canary in %s (%s): the home folder is not checked", s->home_dir,
                             s->home_error == -EIO ? "short write" : strerror(-s->home_error)) >= 0) {
                        o->log(o->log_userdata, KB_LOG_WARN, line);
                        free(line);
                }
        }
}

int kb_canary_set_remove_home(const char *path, uid_t uid) {
        if (!path || path[0] != '/')
                return -EINVAL;
        const char *name = strrchr(path, '/') + 1;
        size_t n = strlen(KB_CANARY_SET_HOME_PREFIX);
        if (strncmp(name, KB_CANARY_SET_HOME_PREFIX, n) != 0 || strlen(name + n) != 6 ||
            strspn(name + n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != 6)
                return 0;
        struct stat st;
        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISREG(st.st_mode) || st.st_uid != uid)
                return 0;
        return unlink(path) < 0 ? -errno : 1;
}

/* The folders a write from a sandbox must not reach: the run's own, the user's home, the shared
 * temporary folders and kbound's working folder. */
static int add_escape_dirs(kb_canary_set *s, const kb_canary_set_options *o) {
        char cwd[PATH_MAX];
        const char *escape[] = {o->base_dir, s->teams_dir, s->secrets_dir, s->home_dir,
                                "/tmp",      "/var/tmp",   "/dev/shm",     getcwd(cwd, sizeof(cwd))};
        for (size_t i = 0; i < KB_ELEMENTSOF(escape); i++)
                if (escape[i] && escape[i][0] == '/' && add_path(s->escape_dirs, escape[i]) < 0)
                        return -ENOMEM;
        return 0;
}

/* Daemon secrets: every value of host_env the sandbox must not pass on, except values every
 * sandbox of this run legitimately shows (each kernel's environment and argv), and the host paths
 * kbound itself hands the cell to try (its home, the canaries' folders), which name the user: a
 * user name in them is not a leak; nor is the name of the user the kernels run as. */
static int add_env_secrets(kb_canary_set *s, const kb_canary_set_options *o) {
        char *legit[LEGIT_MAX + 1];
        char ***envs = calloc(o->n_specs + 1, sizeof(*envs));
        size_t n_legit = 0;
        int r = 0;
        if (!envs)
                return -ENOMEM;
        for (size_t i = 0; i < o->n_specs; i++) {
                r = kb_sandbox_env(o->host_env, o->specs[i]->env, &envs[i]);
                if (r < 0)
                        break;
                for (char **e = envs[i]; *e && n_legit < LEGIT_MAX; e++)
                        legit[n_legit++] = *e;
                for (char **a = o->specs[i]->argv; *a && n_legit < LEGIT_MAX; a++)
                        legit[n_legit++] = *a;
        }
        /* the user the kernels run as: its name is every sandbox's to see (its uid's, in /etc/passwd) */
        if (o->user && o->user->name[0] && n_legit < LEGIT_MAX)
                legit[n_legit++] = (char *) o->user->name;
        json_object *handed[] = {s->escape_dirs, s->credential_paths, s->sibling_paths};
        for (size_t i = 0; r >= 0 && i < KB_ELEMENTSOF(handed); i++)
                for (size_t j = 0; j < json_object_array_length(handed[i]) && n_legit < LEGIT_MAX; j++)
                        legit[n_legit++] = (char *) json_object_get_string(json_object_array_get_idx(handed[i], j));
        legit[n_legit] = NULL;
        if (r >= 0)
                r = kb_secrets_add_env(s->secrets, o->host_env, kb_sandbox_env_allowed, legit, &s->env_values_skipped);
        for (size_t i = 0; i < o->n_specs; i++)
                kb_strv_free(envs[i]);
        free(envs);
        return r;
}

/* One CANARY_PLANT of facts.def into s->planted: the canary named name (the host's look names it
 * so too) that check's claim rests on, at path; planted, or why not. 0 or -ENOMEM. */
static int plant_record(kb_canary_set *s, const char *name, kb_check check, const char *path, const char *why) {
        json_object *o = json_object_new_object();
        if (!o || kb_fact_set_str(o, FACT_CANARY_PLANT_NAME, name) < 0 ||
            kb_fact_set_str(o, FACT_CANARY_PLANT_CHECK, kb_check_id(check)) < 0 ||
            kb_fact_set_bool(o, FACT_CANARY_PLANT_PLANTED, why == NULL) < 0 ||
            (path && kb_fact_set_str(o, FACT_CANARY_PLANT_PATH, path) < 0) ||
            (why && kb_fact_set_str(o, FACT_CANARY_PLANT_WHY, why) < 0) || json_object_array_add(s->planted, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        return 0;
}

/* Why the home canary is not there, in words, into buf; NULL when it is. */
static const char *home_missing(const kb_canary_set *s, char *buf, size_t size) {
        if (s->home_canary)
                return NULL;
        if (!s->home_dir)
                snprintf(buf, size, "HOME is not set");
        else if (s->home_dir[0] != '/')
                snprintf(buf, size, "HOME (%s) is not an absolute path", s->home_dir);
        else
                snprintf(buf, size, "kbound cannot write to %s: %s", s->home_dir,
                         s->home_error == -EIO ? "short write" : strerror(-s->home_error));
        return buf;
}

/* What the run planted for the checks' claims, and what it could not (s->planted): the files
 * the credential and cross-team checks look for. The keyring canary is recorded apart (its state,
 * kb_check_env.keyring_canary): where kbound cannot plant one, no key can be made or reached in its
 * whole process tree. */
static int record_planted(kb_canary_set *s) {
        char why[PATH_MAX + 64];
        const char *home = home_missing(s, why, sizeof why);
        if (!(s->planted = json_object_new_array()) ||
            plant_record(s, "credential file", KB_CHECK_CREDENTIALS, s->credential_file, NULL) < 0 ||
            plant_record(s, "credential canary in the user's home", KB_CHECK_CREDENTIALS,
                         s->home_canary ? s->home_canary : s->home_dir, home) < 0 ||
            plant_record(s, "another team's workspace", KB_CHECK_CROSS_TEAM, s->sibling_workspace, NULL) < 0 ||
            plant_record(s, "another team's canary", KB_CHECK_CROSS_TEAM, s->sibling_file, NULL) < 0)
                return -ENOMEM;
        return 0;
}

static bool options_valid(const kb_canary_set_options *o) {
        if (!o || !o->base_dir || o->base_dir[0] != '/' || !o->team || !kb_team_name_valid(o->team) || !o->user ||
            (o->n_specs > 0 && !o->specs))
                return false;
        for (size_t i = 0; i < o->n_specs; i++)
                if (!o->specs[i] || !o->specs[i]->argv)
                        return false;
        return true;
}

int kb_canary_set_plant(const kb_canary_set_options *o, kb_canary_set **ret, kb_canary_set_step *ret_failed_step) {
        if (!options_valid(o) || !ret)
                return -EINVAL;
        kb_canary_set_step step = KB_CANARY_SET_MEMORY;
        int r = -ENOMEM;
        char cred_value[65], sibling_value[65], home_value[65], key_value[65];
        kb_canary_set *s = calloc(1, sizeof(*s));
        if (!s)
                goto fail;
        s->keyring_canary = -EIO;
        s->home_dir = kb_env_get(o->host_env, "HOME");
        if ((r = kb_random_hex(cred_value, 32)) < 0 || (r = kb_random_hex(sibling_value, 32)) < 0)
                goto fail;
        r = -ENOMEM;
        if (!(s->secrets_dir = path_join(o->base_dir, "host-secrets", "")) ||
            !(s->credential_file = path_join(s->secrets_dir, "credentials", "")) ||
            !(s->teams_dir = path_join(o->base_dir, "teams", "")) ||
            !(s->sibling_dir = path_join(s->teams_dir, o->team, "-sibling")) ||
            !(s->sibling_workspace = path_join(s->sibling_dir, "workspace", "")) ||
            !(s->sibling_file = path_join(s->sibling_workspace, "canary.txt", "")))
                goto fail;
        if (!(s->escape_dirs = json_object_new_array()) || !(s->credential_paths = json_object_new_array()) ||
            !(s->sibling_paths = json_object_new_array()))
                goto fail;

        step = KB_CANARY_SET_FILES;
        if ((r = plant_files(s, o, cred_value, sibling_value)) < 0)
                goto fail;
        plant_home(s, o, home_value);

        step = KB_CANARY_SET_MEMORY;
        r = -ENOMEM;
        if (add_path(s->credential_paths, s->credential_file) < 0 ||
            (s->home_canary && add_path(s->credential_paths, s->home_canary) < 0) ||
            add_path(s->sibling_paths, s->sibling_workspace) < 0 || add_path(s->sibling_paths, s->sibling_file) < 0 ||
            add_escape_dirs(s, o) < 0)
                goto fail;
        if (record_planted(s) < 0)
                goto fail;
        const char *credentials = kb_check_id(KB_CHECK_CREDENTIALS), *cross_team = kb_check_id(KB_CHECK_CROSS_TEAM);
        s->canaries[0] = (kb_inspect_canary){"credential file", s->credential_file, credentials};
        s->canaries[1] = (kb_inspect_canary){"another team's workspace", s->sibling_workspace, cross_team};
        s->canaries[2] = (kb_inspect_canary){"another team's canary", s->sibling_file, cross_team};
        s->n_canaries = 3;
        if (s->home_canary)
                s->canaries[s->n_canaries++] =
                        (kb_inspect_canary){"credential canary in the user's home", s->home_canary, credentials};

        /* A key in kbound's session keyring (a fresh one of its own, before any thread starts): no
         * sandbox may possess it. Its name is no secret (the cell looks for it by name); its value
         * is a token, so a cell that could read it shows it to the secrets scan. */
        char key_desc[64];
        if (kb_random_hex(key_value, 32) == 0 && kb_random_hex(key_desc + 14, 24) == 0) {
                memcpy(key_desc, "kbound-canary-", 14);
                s->keyring_canary = kb_canary_keyring_plant(key_desc, key_value, NULL);
        }
        if (s->keyring_canary < 0 && s->keyring_canary != -ENOSYS && s->keyring_canary != -EPERM) {
                step = KB_CANARY_SET_KEYRING;
                r = s->keyring_canary;
                goto fail;
        }
        if (s->keyring_canary == 0)
                memcpy(s->keyring_canary_name, key_desc, sizeof(key_desc));

        if ((r = kb_secrets_new(&s->secrets)) < 0 || (r = kb_secrets_new(&s->sibling_secrets)) < 0 ||
            (r = kb_secrets_add_token(s->secrets, "canary:credential-file", cred_value)) < 0 ||
            (r = kb_secrets_add_token(s->sibling_secrets, "canary:sibling-team-file", sibling_value)) < 0 ||
            (s->home_canary && (r = kb_secrets_add_token(s->secrets, "canary:home-file", home_value)) < 0) ||
            (s->keyring_canary == 0 && (r = kb_secrets_add_token(s->secrets, "canary:keyring-key", key_value)) < 0))
                goto fail;
        step = KB_CANARY_SET_SECRETS;
        if ((r = add_env_secrets(s, o)) < 0)
                goto fail;
        explicit_bzero(cred_value, sizeof(cred_value));
        explicit_bzero(sibling_value, sizeof(sibling_value));
        explicit_bzero(home_value, sizeof(home_value));
        explicit_bzero(key_value, sizeof(key_value));
        *ret = s;
        return 0;
fail:
        explicit_bzero(cred_value, sizeof(cred_value));
        explicit_bzero(sibling_value, sizeof(sibling_value));
        explicit_bzero(home_value, sizeof(home_value));
        explicit_bzero(key_value, sizeof(key_value));
        kb_canary_set_destroy(&s);
        if (ret_failed_step)
                *ret_failed_step = step;
        return r;
}

void kb_canary_set_destroy(kb_canary_set **sp) {
        if (!sp || !*sp)
                return;
        kb_canary_set *s = *sp;
        if (s->home_canary)
                unlink(s->home_canary);
        free(s->home_canary);
        kb_secrets_destroy(&s->secrets);
        kb_secrets_destroy(&s->sibling_secrets);
        json_object_put(s->escape_dirs);
        json_object_put(s->credential_paths);
        json_object_put(s->sibling_paths);
        json_object_put(s->planted);
        free(s->secrets_dir);
        free(s->credential_file);
        free(s->teams_dir);
        free(s->sibling_dir);
        free(s->sibling_workspace);
        free(s->sibling_file);
        free(s);
        *sp = NULL;
}

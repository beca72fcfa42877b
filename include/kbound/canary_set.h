/* canary_set.h: the canaries and secret sets of one check run, planted before any kernel starts and
 * handed to every kernel's checks (kb_check_env): a credential file, another team's folder and
 * canary, a dot-file in the user's home, a keyring canary (canary.h), and the daemon secrets of
 * kbound's environment less what the sandboxes legitimately show. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <json-c/json.h>
#include "kbound/common.h"
#include "kbound/inspect.h"
#include "kbound/kernelspec.h"
#include "kbound/sandbox.h"
#include "kbound/secrets.h"

/* In the base folder: the path of the run's home canary, so that the next run, sweeping the base
 * folder of a run that was killed (a SIGKILL removes nothing), removes that canary too. */
#define KB_CANARY_SET_HOME_RECORD ".home-canary"
/* What mkostemp makes of it in HOME: this prefix and 6 letters or digits. */
#define KB_CANARY_SET_HOME_PREFIX ".kbound-canary-"

/* Whether path is a home canary a run of this user planted: an absolute path whose last part is
 * KB_CANARY_SET_HOME_PREFIX and 6 letters or digits, a regular file (not followed) owned by uid.
 * Then it is unlinked: 1; 0 when it is not one (nothing touched); -errno. */
KB_EXPORT int kb_canary_set_remove_home(const char *path, uid_t uid);

typedef struct kb_canary_set_options {
        const char *base_dir;              /* the run's private base folder (absolute); host-secrets/
                                            * and teams/ are made in it and must not exist yet */
        const char *team;                  /* the team prefix: the other team is "<team>-sibling" */
        const kb_sandbox_user *user;       /* the other team's folders are laid out for it exactly as a
                                            * real team's (kb_kernel_start) */
        const kb_kernelspec *const *specs; /* the run's kernels: each one's sandbox environment and argv
                                            * are what a sandbox shows by design, not leaks */
        size_t n_specs;
        char *const *host_env; /* kbound's own environment: its daemon secrets, and HOME */
        kb_log_fn log;         /* the progress line for a home folder that gets no canary;
                                * may be NULL */
        void *log_userdata;
} kb_canary_set_options;

#define KB_CANARY_SET_CANARIES_MAX 4

/* What kb_canary_set_plant made; everything in it is owned by the set and read-only for callers
 * (kb_check_env borrows it for the run). */
typedef struct kb_canary_set {
        kb_secrets *secrets;           /* daemon secrets and the credential, home and keyring canaries */
        kb_secrets *sibling_secrets;   /* the other team's canary */
        json_object *escape_dirs;      /* host folders a write must not reach (array of strings) */
        json_object *credential_paths; /* the credential file, then the home canary if planted */
        json_object *sibling_paths;    /* the other team's workspace and canary file */
        kb_inspect_canary canaries[KB_CANARY_SET_CANARIES_MAX]; /* for the host's look at the mounts */
        size_t n_canaries;
        int keyring_canary;           /* 0: planted; -ENOSYS/-EPERM: no keys here, nothing planted */
        char keyring_canary_name[64]; /* the planted key's name (no secret), "" when none */
        size_t env_values_skipped;    /* environment values not distinctive enough to guard */
        const char *home_dir;         /* HOME, borrowed from host_env (NULL when unset) */
        char *home_canary;            /* the dot-file in HOME, NULL when none was planted */
        int home_error;               /* why none was: -errno of making it, -EIO for a failed write;
                                       * 0 when planted, or when HOME is unset or relative */
        json_object *planted;         /* every canary file a check's claim rests on, planted or not and
                                       * why: an array of facts.def's CANARY_PLANT (name, check,
                                       * planted, path, why), kbound's expectation "canaries" */
        char *secrets_dir, *credential_file, *teams_dir, *sibling_dir, *sibling_workspace, *sibling_file;
} kb_canary_set;

/* Which step kb_canary_set_plant failed at (for the caller's message). */
typedef enum kb_canary_set_step {
        KB_CANARY_SET_MEMORY,  /* out of memory (or no randomness for a canary value) */
        KB_CANARY_SET_FILES,   /* the credential file or the other team's folders, under base_dir */
        KB_CANARY_SET_KEYRING, /* the keyring canary, other than -ENOSYS/-EPERM */
        KB_CANARY_SET_SECRETS, /* the daemon secrets of host_env (or a kernel's sandbox environment) */
} kb_canary_set_step;

/* Plants the run's canaries and collects its secret sets. Call before any thread starts: the
 * keyring canary joins a fresh session keyring for the calling thread (kb_canary_keyring_plant).
 * The files are 0600 and hold fresh random tokens; the home canary is ~/.kbound-canary-XXXXXX,
 * and a home kbound cannot write to (or no HOME) is no failure: planted records it, with why, and
 * the credential check then says what it did not test (home_error is the errno, and o->log gets
 * "no canary in HOME (why): the home folder is not checked"). Returns 0 and *ret; -EINVAL for bad arguments
 * (nothing done); else -errno and *ret_failed_step (may be NULL) names the step. On failure the
 * home canary is removed again; what was made under base_dir stays for the caller to remove with
 * the base folder. */
KB_EXPORT int kb_canary_set_plant(const kb_canary_set_options *o, kb_canary_set **ret,
                                  kb_canary_set_step *ret_failed_step);

/* Removes the home canary and frees the set (secret values wiped). What lives under base_dir is
 * the caller's (removed with the base folder, or kept with it). Accepts NULL and *sp NULL; sets
 * *sp to NULL. */
KB_EXPORT void kb_canary_set_destroy(kb_canary_set **sp);

/* scenario.h: the check sequence for one kernel (identity, boundary probes, both interrupt paths,
 * persistence) and its verdicts, as a kernel object of the run report (docs/report-format.md). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "kbound/client.h"
#include "kbound/harness.h"
#include "kbound/kernelspec.h"
#include "kbound/inspect.h"
#include "kbound/secrets.h"
#include "kbound/sandbox.h"

/* What every kernel of one run shares. Read-only while kernels are checked concurrently. */
typedef struct kb_check_env {
        const char *kernels_dir; /* language packs */
        const char *base_dir;    /* this run's private folder (teams/ lives here) */
        const char *bwrap;       /* absolute path */
        const char *bwrap_version;
        bool allow_network; /* raw-network override: boundary.network is not_claimed */
        const char *rootfs;
        char *const *ro_paths;
        char *const *host_env;                 /* kbound's own environment (for the sandbox allowlist) */
        const kb_sandbox_user *user;           /* who the kernels run as (never root) */
        const kb_sandbox_hardening *hardening; /* seccomp policy, nested user namespaces */
        const char *syscall_probe;             /* host path of kbound-syscall-probe (sandbox.attack_surface) */
        const kb_secrets *secrets;             /* daemon secrets and canaries no cell may reach */
        int keyring_canary;                    /* 0: a key was planted in kbound's session keyring (its value is
                                                * in secrets); -ENOSYS/-EPERM: keys unavailable here */
        const char *keyring_canary_name;       /* the planted key's name (no secret), or NULL */
        const kb_secrets *sibling_secrets;     /* another team's canaries */
        json_object *escape_dirs;              /* host folders a write must not reach (array of strings) */
        json_object *credential_paths;         /* host credential files holding canaries */
        json_object *sibling_paths;            /* another team's folder and canary file */
        const kb_inspect_canary *canaries;     /* host objects no sandbox may reach (credential file,
                                                * a canary in the user's home, another team's folder and
                                                * canary), each naming the check it belongs to */
        size_t n_canaries;
        int long_cell_seconds;    /* how long the long cell runs if nobody stops it */
        int interrupt_timeout_ms; /* how long an interrupt path gets to stop the cell */
        int cancel_fd;            /* readable → stop everything (signal) */
        int64_t deadline_ms;      /* the whole run's deadline */
        bool keep;                /* keep the team folders */
        kb_client_msg_fn on_msg;  /* transcript hook, may be NULL */
        void *on_msg_userdata;
        kb_log_fn log; /* progress, may be NULL */
        void *log_userdata;
} kb_check_env;

/* The id of every check kb_scenario_run reports, in order; NULL-terminated. */
KB_EXPORT const char *const *kb_scenario_checks(void);

/* Checks one kernel: launches it in the sandbox as team, runs every check, stops it and removes
 * its folders (unless env->keep). Always returns a kernel object in *ret (see the report format):
 * a kernel that could not be started or checked has "error" set and a failing check, so no
 * report can read as a pass for it. *ret_outcome says how it ended. Returns 0 or -ENOMEM. */
KB_EXPORT int kb_scenario_run(const kb_check_env *env, const kb_kernelspec *spec, const char *team, json_object **ret,
                              kb_check_outcome *ret_outcome);

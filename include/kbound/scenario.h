/* scenario.h: the check sequence for one kernel (identity, boundary probes, both interrupt paths,
 * persistence) and its verdicts, as a kernel object of the run report (docs/report-format.md). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "kbound/audit.h"
#include "kbound/client.h"
#include "kbound/harness.h"
#include "kbound/kernelspec.h"
#include "kbound/inspect.h"
#include "kbound/secrets.h"
#include "kbound/sandbox.h"

/* What every kernel of one run shares. Read-only while kernels are checked concurrently. */
typedef struct kb_check_env {
        kb_harness_env harness; /* the sandbox and the run, as conformance has them */
        const char *bwrap_version;
        bool allow_network;                /* raw-network override: boundary.network is not_claimed */
        const char *syscall_probe;         /* host path of kbound-syscall-probe (sandbox.attack_surface) */
        const kb_secrets *secrets;         /* daemon secrets and canaries no cell may reach */
        int keyring_canary;                /* 0: a key was planted in kbound's session keyring (its value is
                                            * in secrets); -ENOSYS/-EPERM: keys unavailable here */
        const char *keyring_canary_name;   /* the planted key's name (no secret), or NULL */
        const kb_secrets *sibling_secrets; /* another team's canaries */
        json_object *escape_dirs;          /* host folders a write must not reach (array of strings) */
        json_object *credential_paths;     /* host credential files holding canaries */
        json_object *sibling_paths;        /* another team's folder and canary file */
        json_object *canaries_planted;     /* every canary file a check's claim rests on, planted or
                                            * not and why (kb_canary_set.planted; read-only) */
        const kb_inspect_canary *canaries; /* host objects no sandbox may reach (credential file,
                                            * a canary in the user's home, another team's folder and
                                            * canary), each naming the check it belongs to */
        size_t n_canaries;
        int long_cell_seconds;    /* how long the long cell runs if nobody stops it */
        int interrupt_timeout_ms; /* how long an interrupt path gets to stop the cell */
        /* `kbound audit`: the kernelspec started as it is, in its own wrapper, and each claim held to
         * the auditor's expectations (audit.h); NULL: `check`, in kbound's own sandbox. */
        const kb_audit_env *audit;
} kb_check_env;

/* Checks one kernel: launches it in the sandbox as team, runs every check of the table (check.h), stops it and removes
 * its folders (unless env->harness.keep). Always returns a kernel object in *ret (see the report format):
 * a kernel that could not be started or checked has "error" set and a failing check, so no
 * report can read as a pass for it. *ret_outcome says how it ended. Returns 0 or -ENOMEM. */
KB_EXPORT int kb_scenario_run(const kb_check_env *env, const kb_kernelspec *spec, const char *team, json_object **ret,
                              kb_check_outcome *ret_outcome);

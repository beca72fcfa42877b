/* harness.h: the kernel under test, as `check` (scenario.h) and `conformance` (conformance.h)
 * share it: the sandbox and run its kernels share, and how the run of one kernel ended. The
 * harness itself (starting the kernel with its language pack, recording checks, the long cell,
 * wait errors) is internal (src/run/harness-internal.h). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "kbound/client.h"
#include "kbound/common.h"
#include "kbound/sandbox.h"

/* The sandbox every kernel of one run starts in, and the run around it: what kb_check_env
 * (scenario.h) and kb_conformance_env (conformance.h) share, one home for both. Read-only while
 * kernels run concurrently. */
typedef struct kb_harness_env {
        const char *kernels_dir;               /* language packs (kbound's) */
        const char *user_kernels_dir;          /* --kernels-dir: a user's packs, searched first; NULL: none */
        const char *base_dir;                  /* this run's private folder (teams/ lives here) */
        const char *bwrap;                     /* absolute path */
        const char *rootfs;                    /* an unpacked image's root; NULL: the host's */
        char *const *ro_paths;                 /* extra read-only binds, NULL-terminated; may be NULL */
        char *const *host_env;                 /* kbound's own environment (for the sandbox allowlist) */
        const kb_sandbox_user *user;           /* who the kernels run as (never root) */
        const kb_sandbox_hardening *hardening; /* seccomp policy, nested user namespaces, limits */
        bool tcp;                              /* every kernel speaks TCP through kbound's relay (--transport
                                                * tcp); else only those whose kernelspec says so */
        const char *syscall_probe;             /* kbound-syscall-probe on the host; NULL: none */
        const char *boundary_probe;            /* kbound-probe on the host; NULL: none */
        int cancel_fd;                         /* readable → stop everything (signal) */
        int64_t deadline_ms;                   /* the whole run's deadline */
        bool keep;                             /* keep the team folders */
        kb_client_msg_fn on_msg;               /* transcript hook, may be NULL */
        void *on_msg_userdata;
        kb_log_fn log; /* progress, may be NULL */
        void *log_userdata;
} kb_harness_env;

/* How a kernel's check or conformance run ended, for the exit code. */
typedef enum kb_check_outcome {
        KB_CHECK_DONE,         /* every check ran; statuses say pass or fail */
        KB_CHECK_NOT_ENFORCED, /* the sandbox or the probes could not be set up (exit 3) */
        KB_CHECK_CANCELLED,    /* a signal or the deadline ended it early */
} kb_check_outcome;

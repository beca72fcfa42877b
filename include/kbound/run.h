/* run.h: what a command does across kernels (check, conformance): a team per kernel, one thread
 * per kernel, the run object around their kernel objects (docs/report-format.md) and its exit
 * code. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include "kbound/common.h"
#include "kbound/conformance.h"
#include "kbound/kernelspec.h"
#include "kbound/scenario.h"
#include "kbound/transcript.h"

/* Kernels one run checks at once, and the longest team prefix (a team name is the prefix, '-',
 * the kernel's name cut to 20 characters, and its number when two kernels share a name: at most
 * KB_TEAM_NAME_MAX). */
#define KB_RUN_KERNELS_MAX 32
#define KB_RUN_TEAM_PREFIX_MAX 40

/* A run's exit code, also its report's "exit_code". */
enum {
        KB_RUN_EXIT_PASS = 0,         /* every claim tested and held */
        KB_RUN_EXIT_FAIL = 1,         /* a check failed, or the run was cut short */
        KB_RUN_EXIT_NOT_ENFORCED = 3, /* a sandbox could not be set up */
};

typedef struct kb_run kb_run;

/* One kernel's work, on its own thread: the kernel object in *ret (the run owns it then; NULL
 * counts as cut short) and how it ended in *ret_outcome. on_msg is this kernel's transcript writer
 * (NULL without a transcript). Returns 0 or -errno (the kernel object, if any, is still taken). */
typedef int (*kb_run_kernel_fn)(void *userdata, const kb_kernelspec *spec, const char *team, kb_client_msg_fn on_msg,
                                void *on_msg_userdata, json_object **ret, kb_check_outcome *ret_outcome);

/* A run of specs[0..n) (borrowed: they outlive the run), each named team_prefix-<kernel name>, or
 * team_prefix-<name>-<i+1> when two specs share a name; transcript (may be NULL, borrowed) gets a
 * writer per kernel. Returns 0 and *ret, -EINVAL (n is 0 or past KB_RUN_KERNELS_MAX, the prefix
 * is empty or past KB_RUN_TEAM_PREFIX_MAX) or -ENOMEM. */
KB_EXPORT int kb_run_new(const char *team_prefix, kb_kernelspec *const *specs, size_t n, kb_transcript *transcript,
                         kb_run **ret);

/* The team of kernel i (i < n), or NULL. */
KB_EXPORT const char *kb_run_team(const kb_run *run, size_t i);

/* Runs fn for every kernel, each on its own thread, all at once, and waits for them all; then
 * every transcript writer is closed (the transcript itself is the caller's). A kernel whose writer
 * or thread cannot be made is not started, nor any after it; the run is then incomplete.
 * Returns 0, or -ENOMEM (a transcript writer) or the -errno of pthread_create, with
 * *ret_failed (may be NULL) the index of the kernel not started. Call once. */
KB_EXPORT int kb_run_kernels(kb_run *run, kb_run_kernel_fn fn, void *userdata, size_t *ret_failed);

/* kb_run_kernels with kb_scenario_run (check) or kb_conformance_run, each kernel getting a copy
 * of env with its transcript writer as on_msg. */
KB_EXPORT int kb_run_check(kb_run *run, const kb_check_env *env, size_t *ret_failed);
KB_EXPORT int kb_run_conformance(kb_run *run, const kb_conformance_env *env, size_t *ret_failed);

typedef enum kb_run_kind {
        KB_RUN_CHECK,
        KB_RUN_CONFORMANCE, /* "kind": "conformance", and "allow_untested" */
} kb_run_kind;

/* What the report says besides the kernels. */
typedef struct kb_run_facts {
        kb_run_kind kind;
        const char *started_at;    /* "YYYY-MM-DDTHH:MM:SSZ"; NULL: "" */
        int64_t started_ms;        /* kb_now_ms() when the run began (for duration_ms) */
        int signal;                /* the signal that cut the run short, else 0 */
        const char *timeout;       /* the run's deadline in seconds, as the user wrote it ("300") */
        bool raw_network_override; /* claims.raw_network_override */
        bool allow_untested;       /* conformance: untested items accepted */
        bool transcript_failed;    /* the transcript lost messages: the run cannot pass */
        json_object *sandbox;      /* the report's "sandbox" (kb_run_sandbox_new, then the
                                    * command's own facts); taken in every case */
} kb_run_facts;

/* The sandbox object's head: backend, bwrap, bwrap_version, uid (kbound's). NULL if out of memory. */
KB_EXPORT json_object *kb_run_sandbox_new(const char *bwrap, const char *bwrap_version);

/* The run object (kind, kbound_version, started_at, duration_ms, complete, allow_untested,
 * incomplete_reason, claims, sandbox, kernels; then kb_report_finish's verdict and exit_code) with
 * the kernel objects of kb_run_kernels, which it takes. Incomplete when a signal came, a kernel
 * was not started, ended cancelled or returned no object. The exit code: KB_RUN_EXIT_NOT_ENFORCED
 * if a kernel's sandbox could not be set up, else KB_RUN_EXIT_FAIL for a failing verdict, an
 * incomplete run or a failed transcript, else KB_RUN_EXIT_PASS. Returns 0 with *ret and
 * *ret_exit_code, or -ENOMEM. */
KB_EXPORT int kb_run_report(kb_run *run, const kb_run_facts *facts, json_object **ret, int *ret_exit_code);

/* The kernel object of a run refused before any kernel started (a kernel not found or broken, a
 * bwrap that is not bubblewrap, no sandbox user...), so that the refused run's JSON and JUnit list
 * what a run would have: spec's facts (NULL for a kernel not found: name stands for it, language ""
 * and interrupt_mode null), team team_prefix-<name>, error why, and every check in the table's
 * order (KB_RUN_CHECK) or every conformance item, each not run, saying why. NULL if out of memory
 * or an argument is NULL. */
KB_EXPORT json_object *kb_run_refused_kernel(kb_run_kind kind, const char *name, const kb_kernelspec *spec,
                                             const char *team_prefix, const char *why);

/* Frees the run (kernel objects not taken by kb_run_report with it) and sets *runp to NULL. Safe
 * on NULL. Joins nothing: call after kb_run_kernels returned. */
KB_EXPORT void kb_run_destroy(kb_run **runp);

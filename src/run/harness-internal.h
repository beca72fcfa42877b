/* harness-internal.h: the kernel under test, as check (scenario.c) and conformance
 * (conformance.c) share it: the kernel object being built and its checks, progress lines and
 * results redacted with the kernel's key (and the run's secrets), the start in the sandbox, the
 * deadlines, the words for a failed wait, the long cell's start, the teardown's counts. What a
 * check means stays with its caller. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "kbound/client.h"
#include "kbound/harness.h"
#include "kbound/kernel.h"
#include "kbound/langpack.h"
#include "kbound/secrets.h"

/* How long the long cell has to print its start marker. */
#define KB_HARNESS_MARKER_TIMEOUT_MS 30000

typedef struct kb_harness {
        const kb_kernelspec *spec;
        kb_kernel *kernel;            /* NULL until started */
        json_object *k;               /* the kernel object of the report being built */
        json_object *checks;          /* k["checks"], borrowed */
        const kb_secrets *secrets[2]; /* redacted from progress and results besides the kernel's key
                                       * (NULL: none) */
        kb_log_fn log;                /* progress, may be NULL */
        void *log_userdata;
        int64_t deadline_ms; /* the whole run's deadline (< 0: none) */
        int64_t started_ms;  /* when this kernel's run began: phases say how long so far (0: not said) */
        bool diagnose_death; /* a dead kernel's wait error says how it died (exit status,
                              * log tail) rather than only that it died */
        bool cancelled;      /* a wait was cancelled (signal): stop */
        bool dead;           /* a wait saw the kernel process die */
        bool wedged;         /* a long cell could not be stopped */
} kb_harness;

/* Progress through h->log as "kernel 'NAME': ...", redacted with the kernel's key and every
 * secret set; a line that cannot be redacted is not sent. */
void kb_harness_log(const kb_harness *h, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A phase of the run begun, through kb_harness_log as "kernel 'NAME': [1.2 s] ...": what is
 * happening and how long this kernel's run has taken so far. */
void kb_harness_phase(const kb_harness *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends a check {id, status, detail, duration_ms (since t0; 0 if t0 is 0), evidence (ev taken;
 * NULL → {})} to h->checks, and logs it at KB_LOG_DEBUG (results are the report's: progress shows
 * them only when asked for, so a CI log does not carry every result twice). */
void kb_harness_add_check(kb_harness *h, const char *id, const char *status, int64_t t0, json_object *ev,
                          const char *detail);

/* Now + ms, but never past the run's deadline. */
int64_t kb_harness_deadline_in(const kb_harness *h, int64_t ms);
/* Whether the run's own deadline has passed: whatever it cut short, start-up included, makes the
 * run incomplete (exit 1), not a kernel that cannot be checked (docs/faults.md). */
bool kb_harness_deadline_passed(const kb_harness *h);

/* The kb_kernel_options of h's kernel as team, sandboxed as env says (base folder, bwrap, image,
 * binds, environment, user, hardening), with the run's cancel fd and transcript hook, ready within
 * startup_ms but never past the run's deadline (kb_harness_deadline_in). The network stays
 * unshared; what only one caller sets (the network override, the syscall probe, before_exec, a
 * hook of its own in front of env's) it adds to the copy. One place, so check and conformance
 * start their kernels in the same sandbox. */
/* The language pack for language: the user's folder first (user_kernels_dir), then kbound's
 * (kb_langpack_find's returns, from the first folder that does not answer -ENOENT). where gets the
 * folders searched, for messages. */
int kb_harness_find_pack(const kb_harness_env *env, const char *language, kb_langpack **ret, char *where,
                         size_t where_size);

kb_kernel_options kb_harness_kernel_options(const kb_harness *h, const kb_harness_env *env, const char *team,
                                            int64_t startup_ms);

/* Starts the kernel (kb_kernel_start with o) into h->kernel and records "startup_ms" and
 * "kernel_info" in h->k. Returns as kb_kernel_start (*ret_error as it says). */
int kb_harness_start(kb_harness *h, const kb_kernel_options *o, kb_error **ret_error);

/* Words for a failed wait (r < 0), for a check's detail; marks h cancelled (-ECANCELED) or dead
 * (-ESRCH). The words stay valid until the next call on this thread. */
const char *kb_harness_wait_error(kb_harness *h, int r);

/* Starts the rendered long cell (no history, not stopping on error: its interrupt must not abort
 * the next request) and waits up to KB_HARNESS_MARKER_TIMEOUT_MS for marker on its stdout. Returns
 * 1 and the running execution in *ret_ex; else 0 (it finished first) or a wait error, with the
 * execution destroyed and h wedged when the wait timed out. */
int kb_harness_long_start(kb_harness *h, const char *code, const char *marker, kb_execution **ret_ex);
/* The iopub hook the long cell's wait uses: true once the stdout holds the marker (userdata). */
int kb_harness_marker_seen(void *userdata, kb_execution *ex, const kb_msg *msg);

/* How a kernel's exit after its shutdown_reply went (kb_harness_wait_exit). */
typedef struct kb_harness_exit {
        int64_t exit_ms; /* after the reply; -1: not gone (nor after the SIGTERM), or the run's deadline came */
        bool late;       /* still running KB_SHUTDOWN_PROMPT_MS after the reply */
        bool terminated; /* and so sent SIGTERM, as a kernel manager does (rules.h) */
        char held[256];  /* its child processes at that moment, in words ("none") */
} kb_harness_exit;

/* Waits on the pinned pidfd for h's kernel to exit after replied_ms (the moment its shutdown_reply
 * came), never past the run's deadline (rules.h): a kernel still there after KB_SHUTDOWN_PROMPT_MS
 * has what the host sees it hold then added to ev ("still_running": {after_ms, children [{pid,
 * comm, state}], threads [{tid, comm, state, wchan}]}) and is sent SIGTERM through the pidfd, as
 * jupyter_client ends a kernel that does not go, and waited for KB_SHUTDOWN_TERM_MS more. ev also
 * gets "exit_ms" (null when it did not go), "late" and "sigterm_ms" (when the SIGTERM was sent,
 * after the reply; null when none was). Returns 1 exited, 0 not, -errno from poll or the signal;
 * *ret says the rest either way. */
int kb_harness_wait_exit(kb_harness *h, int64_t replied_ms, json_object *ev, kb_harness_exit *ret);

/* Records in h->k what the client took in ("messages": {received, dropped}), so a transcript can
 * be checked against it. Call after the kernel has stopped. */
void kb_harness_record_messages(kb_harness *h);

/* Replaces *o by its copy redacted with the kernel's key and every secret set. On failure *o
 * becomes NULL: nothing unredacted is handed out. */
void kb_harness_redact(const kb_harness *h, json_object **o);

/* scenario-internal.h: what the files of one kernel's check sequence share: scenario.c (the
 * sequence), scenario_interrupt.c (the interrupt checks), scenario_end.c (persistence, shutdown,
 * the lifetime twin). */
#pragma once

#include "base/facts.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "kbound/check.h"
#include "kbound/langpack.h"
#include "kbound/sandbox.h"
#include "kbound/scenario.h"
#include "run/harness-internal.h"

#define CELL_TIMEOUT_MS 60000
#define CONTROL_REPLY_TIMEOUT_MS 2000
/* After no interrupt_reply: only for an execute_reply already in flight. The cell is watched
 * during the whole reply wait (its reply is recorded as it arrives), so a longer grace would only
 * add idle time for kernels that ignore the request (IRkernel: it cost 1 s of every check). */
#define CONTROL_GRACE_MS 100
/* After the long cell's marker kbound waits a random 0..HOLD_MAX_MS before interrupting: a cell
 * that ends then ended on its own, and a kernel cannot time a fake stop to an interrupt it cannot
 * predict. */
#define HOLD_MAX_MS 200

/* The twin sandbox of kb_sandbox_lifetime, tried in a thread of its own (lifetime_start). */
typedef struct lifetime_job {
        const kb_sandbox *sb;
        char log[PATH_MAX];
        json_object *ev;
        int r;
        pthread_t thread;
        bool started;
} lifetime_job;

typedef struct ctx {
        const kb_check_env *env;
        const kb_kernelspec *spec;
        kb_langpack *lp;
        kb_result_transport transport; /* how the pack's cells return results */
        bool shut_down;                /* lifecycle.shutdown sent shutdown_request */
        bool no_pack;                  /* no probe set for the language: host-only checks */
        char *died_on_sigint;          /* how the kernel died on the SIGINT that was to unblock a cell */
        kb_harness h;                  /* the kernel, its report object and checks; cancelled, wedged */
        char nonce[33];
        json_object *host;               /* kb_inspect_host: kbound's own namespaces, the host's /proc */
        json_object *snapshots;          /* kb_inspect_snapshot of the sandbox, in the order taken */
        json_object *pre_exec;           /* kb_inspect_pre_exec: the look before the kernel's program ran */
        json_object *malformed;          /* kb_judge_malformed of the evidence, once it is all in */
        int64_t pre_exec_ms;             /* what it cost (part of the start-up) */
        int64_t inspect_ms;              /* what the host's looks cost, in total */
        json_object *expect;             /* what kbound arranged and saw outside the cell (judge.h) */
        json_object *probe;              /* the probe cell's result, or NULL */
        kb_error *probe_error;           /* why there is none */
        struct pending_stop *pending[2]; /* interrupt checks waiting for the host to see the cell stop */
        struct lifetime_job lifetime;    /* the twin sandbox tried beside the interrupt cells */
        int mountinfo_fd;                /* the kernel's mountinfo, polled for changes between the looks */
        int mount_looks;                 /* looks taken because it changed */
} ctx;

typedef enum { PATH_CONTROL, PATH_PIDFD } interrupt_path;

/* The kernel's log facts set again for the judge (scenario.c). */
void scenario_expect_log(ctx *x);
/* The checks each kernel is given (scenario_checks.c): how many; x's checks put in their order; each
 * one no step reported added as not_run, with why (never run is never a pass; started false: the
 * kernel never started, so every check but those its start decided is listed as not run). */
size_t scenario_n_checks(void);
void scenario_sort_checks(ctx *x);
void scenario_fill_missing(ctx *x, bool started);

/* ---- what every step does with the kernel (scenario_cell.c) ---- */

/* A check of the run, its detail formatted. */
void scenario_add_check(ctx *x, const char *id, const char *status, int64_t started_ms, json_object *evidence,
                        const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* One look at the whole sandbox from the host, kept for the judge; again when the kernel's mount
 * table changed since the last (polled between a cell's messages, once scenario_watch_mounts opened
 * it); and the look while bwrap's init waits, before anything of the kernel runs
 * (kb_kernel_options.before_exec, userdata x). */
void scenario_host_look(ctx *x, const char *label);
void scenario_watch_mounts(ctx *x);
void scenario_look_if_mounts_changed(ctx *x);
void scenario_pre_exec_look(void *userdata, const kb_sandbox *sb);
/* The marker a stdout-transport cell prints before its result, and a cell's result by either
 * transport. */
void scenario_result_marker(const ctx *x, char *buf, size_t size);
int scenario_cell_result(const ctx *x, const kb_execution *ex, json_object **ret);
/* Something to do while a cell runs, once: when fn says so (it sees every iopub message of the
 * cell), then is called and the wait goes on. */
typedef struct cell_hook {
        kb_iopub_fn fn;
        void *userdata;
        void (*then)(ctx *x, void *userdata);
} cell_hook;
/* Runs one probe cell (with a hook, or none) and returns its result. Returns 0, or -errno with an
 * error saying what went wrong (the cell's name first, and the kernel's own words when it raised):
 * -EPROTO (it ended with another status than ok), -ENOMSG (no result), the wait's errors. */
int scenario_run_cell_hooked(ctx *x, const char *cell, json_object *params, int64_t timeout_ms, const cell_hook *hook,
                             json_object **ret, kb_error **ret_error);
int scenario_run_cell(ctx *x, const char *cell, json_object *params, int64_t timeout_ms, json_object **ret,
                      kb_error **ret_error);
/* Sets expect[key] (owned). */
/* Whether the pinned kernel is still in the process image the first look saw
 * (kb_rules_image_change against a fresh kb_inspect_image): NULL when proven, else words in buf. */
const char *scenario_image_change(ctx *x, char *buf, size_t size);

/* kbound's expectations for the judges, one fact of EXPECT (facts.def) at a time (values taken). */
void scenario_expect_int(ctx *x, kb_fact_int f, int64_t v);
void scenario_expect_str(ctx *x, kb_fact_str f, const char *v);
void scenario_expect_bool(ctx *x, kb_fact_bool f, bool v);
void scenario_expect_obj(ctx *x, kb_fact_obj f, json_object *v);
void scenario_expect_arr(ctx *x, kb_fact_arr f, json_object *v);
void scenario_expect_drop(ctx *x, kb_fact_id id);

/* interrupt.control or interrupt.pidfd: a long cell interrupted through path and seen, by the host,
 * to stop (scenario_interrupt.c). A reply that says the cell stopped leaves the check pending until
 * scenario_settle_stop, which decides it once the host's watch of the cell's progress is over. */
void scenario_check_interrupt(ctx *x, interrupt_path path);
void scenario_settle_stop(ctx *x, interrupt_path path);

/* The end of the run (scenario_end.c): persistence.namespace, lifecycle.shutdown, and the twin
 * sandbox of sandbox.session's lifetime proof, started beside the interrupt cells and joined
 * (its evidence into expect "lifetime") after the shutdown. */
void scenario_check_persistence(ctx *x);
void scenario_check_shutdown(ctx *x);
void scenario_lifetime_start(ctx *x);
void scenario_lifetime_end(ctx *x);

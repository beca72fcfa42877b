/* scenario-internal.h: what the files of one kernel's check sequence share: scenario.c (the
 * sequence), scenario_interrupt.c (the interrupt checks), scenario_end.c (persistence, shutdown,
 * the lifetime twin), scenario_start.c (a kernel that did not start). */
#pragma once

#include "base/facts.h"
#include "base/jsonpool.h"

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
/* How long a kernel whose interrupt_mode makes interrupt_request optional (signal, the default) is
 * watched for an answer to it before the host, having seen the cell keep running past that,
 * goes on to SIGINT (still listening on control): the longest a kernel that honours the request
 * took to answer it or stop the cell, measured under load, with margin (docs/performance.md).
 * A kernel that declares interrupt_mode message is watched as before: its control path is
 * required, and a failure needs the fuller proof. */
#define CONTROL_WINDOW_MS 250
/* After no interrupt_reply: only for an execute_reply already in flight. The cell is watched
 * during the whole reply wait (its reply is recorded as it arrives), so a longer grace would only
 * add idle time for kernels that ignore the request (IRkernel: it cost 1 s of every check). */
#define CONTROL_GRACE_MS 100
/* After the long cell's marker kbound waits a random 0..HOLD_MAX_MS before interrupting: a cell
 * that ends then ended on its own, and a kernel cannot time a fake stop to an interrupt it cannot
 * predict. */
#define HOLD_MAX_MS 200

/* interrupt.control's request when its check was decided before any interrupt_reply: listened for
 * until the shutdown (scenario_control_late). */
typedef struct late_reply {
        char *interrupt_id;
        int64_t sent;    /* when the request was sent */
        json_object *ev; /* the check's evidence (a reference), where a late reply is recorded */
} late_reply;

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
        /* The evidence kept until the judges read it (the looks, the cells' results): each part
         * held once however often it repeats (jsonpool.h), so none of it may change once in. */
        kb_json_pool *pool;
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
        late_reply control_late;         /* interrupt.control's request, still unanswered */
        struct lifetime_job lifetime;    /* the twin sandbox tried beside the interrupt cells */
        int mountinfo_fd;                /* the kernel's mountinfo, polled for changes between the looks */
        int mount_looks;                 /* looks taken because it changed */
        /* Where the kernel finds what kbound hands it: kbound's sandbox's paths, or an audited one's
         * (scenario_audit.c), and the kernel's pid as it sees itself (2 in kbound's sandbox). */
        struct scenario_inside {
                char workspace[PATH_MAX], program[PATH_MAX], handoff[PATH_MAX];
                int64_t kernel_pid;
        } inside;
        json_object *audit; /* an audited sandbox's facts (kb_check_env.audit), NULL for check's */
} ctx;

typedef enum { PATH_CONTROL, PATH_PIDFD } interrupt_path;

/* The kernel's log facts set again for the judge (scenario.c). */
void scenario_expect_log(ctx *x);
/* ---- the kernel's start (scenario_start.c) ---- */

/* The dev and ino (FILE_ID's, TEAM_BIND's: dev_fact, ino_fact) of path, no symlink followed, into a
 * new object; NULL when path is not there or out of memory. */
json_object *scenario_file_id(const char *path, kb_fact_str dev_fact, kb_fact_int ino_fact);
/* What kbound arranged for the sandbox sb and knows before the kernel's program runs, into
 * x->expect (made when there is none): the override, bwrap, the pid namespace, the launch, the
 * cgroups, the limits, the secrets and canaries, the team's binds and the base folder. */
void scenario_expect_sandbox(ctx *x, const kb_sandbox *sb);
/* The host's look while bwrap's init waits on kbound's --block-fd pipe, before anything of the
 * kernel runs (kb_kernel_options.before_exec, userdata x), and what it is judged against. */
void scenario_pre_exec_look(void *userdata, const kb_sandbox *sb);
/* A kernel whose start failed (why: the error's words) after the look before exec: every check the table can judge on
 * that look alone is judged (kb_check_info.judge_before_start). When one found something wrong with the sandbox, the
 * kernel's report gets every check (sandbox.backend failed, naming the first finding and why, the
 * judged ones failed or not run, the rest not run; one the start already reported stays as it
 * is), in the table's order, and its error, and it returns true: a finding about the sandbox,
 * not a machine that cannot enforce. Otherwise nothing is added: false. */
bool scenario_judge_before_start(ctx *x, const char *why);
/* The checks each kernel is given (scenario_checks.c): how many; x's checks put in their order; each
 * one no step reported added as not_run, with why (never run is never a pass; started false: the
 * kernel never started, so every check but those its start decided is listed as not run). */
size_t scenario_n_checks(void);
void scenario_sort_checks(ctx *x);
/* Whether x's report already has a check of that id. */
bool scenario_has_check(const ctx *x, const char *id);
void scenario_fill_missing(ctx *x, bool started);

/* ---- what every step does with the kernel (scenario_cell.c) ---- */

/* A check of the run, its detail formatted. */
void scenario_add_check(ctx *x, const char *id, const char *status, int64_t started_ms, json_object *evidence,
                        const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* One look at the whole sandbox from the host, kept for the judge; again when the kernel's mount
 * table changed since the last (polled between a cell's messages, once scenario_watch_mounts opened
 * it). */
void scenario_host_look(ctx *x, const char *label);
void scenario_final_look(ctx *x);
void scenario_watch_mounts(ctx *x);
void scenario_look_if_mounts_changed(ctx *x);
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

/* ---- a sandbox kbound did not build (scenario_audit.c) ---- */

/* x->inside for kbound's own sandbox, or for the audited one once its kernel is pinned. */
void scenario_inside_default(ctx *x);
/* o made an audit's (scenario_audit_launch): no sandbox, hardening or pre-exec look of kbound's, the
 * team's folders handed to whoever the launcher runs as. */
void scenario_audit_options(ctx *x, kb_kernel_options *o);
/* The kernel_options' launch for an audit (kb_kernel_options.launch; userdata x). */
int scenario_audit_launch(void *userdata, const kb_kernel *k, char *const *argv, char *const *env, kb_sandbox **ret,
                          kb_error **ret_error);
/* After readiness: the audited kernel found (the holder of the kernel end of kbound's connections)
 * and pinned, x->inside and x->audit set. Returns 0, or < 0 with identity.pid2 failed saying why. */
int scenario_audit_adopt(ctx *x);
/* The audited sandbox's lifetime: a twin started as the kernelspec says, its launcher killed, its
 * kernel and init watched (expect "lifetime"). */
void scenario_audit_lifetime(ctx *x);
/* The folders the expect file says the deployment lets the kernel write, appended to binds (TEAM_BIND
 * facts, named "expected"): held as the team's own. */
void scenario_audit_binds(ctx *x, json_object *binds);
/* Every check held to its expectation (kb_audit_hold), and the report's "audit". */
void scenario_audit_end(ctx *x);

/* interrupt.control or interrupt.pidfd: a long cell interrupted through path and seen, by the host,
 * to stop (scenario_interrupt.c). A reply that says the cell stopped leaves the check pending until
 * scenario_settle_stop, which decides it once the host's watch of the cell's progress is over. */
void scenario_check_interrupt(ctx *x, interrupt_path path);
void scenario_settle_stop(ctx *x, interrupt_path path);
/* Takes interrupt.control's interrupt_reply if it came after its check was decided and the client
 * has read it since (it reads the kernel's messages while it waits for anything), into that check's
 * evidence ("interrupt_reply_late"); with done, stops listening for it. */
void scenario_control_late(ctx *x, bool done);

/* The end of the run (scenario_end.c): persistence.namespace, lifecycle.shutdown, and the twin
 * sandbox of sandbox.session's lifetime proof, started beside the interrupt cells and joined
 * (its evidence into expect "lifetime") after the shutdown. */
void scenario_check_persistence(ctx *x);
void scenario_check_shutdown(ctx *x);
void scenario_lifetime_start(ctx *x);
void scenario_lifetime_end(ctx *x);

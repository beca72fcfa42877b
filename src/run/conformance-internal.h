/* conformance-internal.h: what the conformance items share: the run's state and the helpers that
 * record an item and make its requests (conformance_record.c), for the items of conformance.c and
 * conformance_features.c. */
#pragma once

#include "verdict/rules.h"
#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "kbound/client.h"
#include "kbound/conformance.h"
#include "kbound/kernel.h"
#include "kbound/langpack.h"
#include "run/harness-internal.h"
#include "base/jsonget.h"

#define ITEM_TIMEOUT_MS 10000
#define CONTROL_REPLY_TIMEOUT_MS 2000
#define CONTROL_GRACE_MS 1000
#define HEARTBEAT_TIMEOUT_MS 2000
#define HISTORY_TAIL 50
#define SEQ_MAX 256        /* iopub messages kept per execution: a flooding kernel is not buffered */
#define WATCH_MAX 8        /* requests without a reply (comm_*) whose iopub is kept */
#define SHAPE_CODES_MAX 64 /* distinct shape problems kept (each with a count) */

struct cx {
        const kb_conformance_env *env;
        const kb_kernelspec *spec;
        kb_langpack *lp;         /* NULL: no pack for this language */
        json_object *snippets;   /* the pack's "conformance", borrowed; NULL if none */
        json_object *deviations; /* the pack's deviations for this implementation, borrowed */
        char implementation[128];
        char no_snippets[768]; /* why language items are untested */
        kb_harness h;          /* the kernel, its report object and checks; cancelled, dead, wedged */
        /* What execute.stdout saw, for execute.ordering and the history items. */
        json_object *stdout_seq;
        int64_t stdout_count;
        bool stdout_ran;
        /* Where history.tail found the stdout cell, for history.range. */
        int64_t hist_session, hist_line;
        bool hist_found;
        /* Every message received, as the on_msg hook saw it (messages.shape): message types and
         * how many of each ({type: n}), the problems ({code: {count, detail}}), totals. */
        json_object *shape_types, *shape_problems;
        uint64_t shape_checked, shape_unknown;
        /* iopub messages whose parent is a watched request ({parent, msg_type, content}): the
         * replies to comm_open/comm_msg/comm_close come only on iopub, which no execution
         * collects. stdin messages of any parent ({parent, msg_type, content}). */
        char watch_ids[WATCH_MAX][64];
        size_t n_watch;
        json_object *watched, *stdin_msgs;
        /* The comm comm.open opened, for comm.msg, comm_info.target and comm.close. */
        char comm_id[40];
        bool comm_opened;
        /* The ids of the item step running (its row of steps[], conformance.c): the one place an
         * item's id is spelled. */
        const char *const *step_ids;
};

typedef struct cx cx;

/* What an item found wrong: every problem code observed, and their details joined. An item
 * collects all of them before it is judged, so that a known deviation never hides another
 * problem of the same item. */
#define MAX_PROBLEMS 16
typedef struct findings {
        const char *codes[MAX_PROBLEMS];
        size_t n;
        bool overflow; /* more problems than codes kept */
        char detail[1024];
} findings;

/* Small JSON helpers: the kernel's replies are untrusted, so every type is checked; a missing
 * member or one of another type is NULL / false. */
json_object *cx_jstring_or_null(const char *s);
bool cx_string_array(json_object *a);
/* a is an array of strings (cx_string_array) and one of them is s. */
bool cx_in_string_array(json_object *a, const char *s);
int cx_code_points(const char *s);

void cx_pass(cx *x, const char *id, int64_t t0, json_object *ev, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
void cx_untested(cx *x, const char *id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "unsupported": an optional feature the kernel lacks, with the reason. */
void cx_unsupported(cx *x, const char *id, int64_t t0, json_object *ev, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
void cx_found(findings *f, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Records id with the problems in f (at least one): "deviation" when the pack lists every
 * observed code for this implementation and item, else "fail" naming them all. */
void cx_judge(cx *x, const char *id, int64_t t0, json_object *ev, const findings *f);
void cx_problem(cx *x, const char *id, int64_t t0, json_object *ev, const char *observed, const char *fmt, ...)
        __attribute__((format(printf, 6, 7)));
/* cx_judge when f has problems, else cx_pass with the words in fmt. */
void cx_verdict(cx *x, const char *id, int64_t t0, json_object *ev, const findings *f, const char *fmt, ...)
        __attribute__((format(printf, 6, 7)));

/* An interrupt_request the kernel ignored (every problem in f is no_reply or not_stopped) on a
 * kernel whose kernelspec does not make interrupt_request the way to interrupt it: "unsupported"
 * by the rule check shares (rules.c), recorded, and true. Otherwise false and nothing recorded. */
bool cx_ignored_control_interrupt(cx *x, const char *id, int64_t t0, json_object *ev, const findings *f);

/* A request (what: "history_request", "no complete execute_reply") that got no answer, r the
 * wait's error: the item recorded failed, "no_reply" when the deadline passed, else "wait". */
void cx_request_failed(cx *x, const char *id, int64_t t0, json_object *ev, int r, const char *what);

/* False (and the item recorded as failed) when an earlier step left nothing to test with. */
bool cx_can_run(cx *x, const char *id);
/* The id of the running step's (first) item. */
static inline const char *cx_item_id(const cx *x) {
        return x->step_ids[0];
}
/* The language pack's snippet object for name, or NULL (and the item recorded untested). When
 * optional, a snippet {"unsupported": "why"} records the item unsupported with the pack's reason
 * (a feature of the protocol this kernel's language has no way to use) and returns NULL. */
json_object *cx_snippet(cx *x, const char *id, const char *name, bool optional);

int cx_item_ms(const cx *x);

/* A request on shell (content taken) and its reply's content (new reference). */
int cx_request(cx *x, const char *msg_type, json_object *content, json_object **ret);
/* The same on control, waiting at most ms. */
int cx_control_request(cx *x, const char *msg_type, json_object *content, int ms, json_object **ret);
/* Runs code to completion, its iopub messages in order in *ret_seq ({msg_type, content}). */
int cx_execute(cx *x, const char *code, bool silent, bool store_history, kb_execution **ret_ex, json_object **ret_seq);
/* What an item running one snippet judges once it ran: s the pack's snippet, t0 when its code was
 * sent, ex its execution, seq its iopub messages in order ({msg_type, content}); all borrowed, and
 * freed when judge returns. */
typedef void cx_snippet_judge(cx *x, const char *id, json_object *s, int64_t t0, kb_execution *ex, json_object *seq);
/* Item id on the pack's snippet name: the start every such item shares (cx_can_run, the snippet,
 * its "code", run to completion; the item recorded when one fails), then judge, then the run freed. */
void cx_snippet_item(cx *x, const char *id, const char *name, bool optional, cx_snippet_judge *judge);
size_t cx_seq_count(json_object *seq, const char *msg_type);
json_object *cx_seq_find(json_object *seq, const char *msg_type);
json_object *cx_seq_types(json_object *seq);

/* Sends msg_type (content taken) on shell without a reply to wait for, and keeps its iopub
 * messages in x->watched; *ret_id (64 bytes) gets its msg_id. */
int cx_send_watched(cx *x, const char *msg_type, json_object *content, char ret_id[64]);
/* Polls until the kernel published idle for parent (or deadline): 0, -ETIMEDOUT, or a wait error. */
int cx_wait_idle(cx *x, const char *parent, int64_t deadline_ms);
/* The watched iopub messages of parent, in order (a new array of borrowed-then-referenced entries). */
json_object *cx_watched(cx *x, const char *parent);

/* The on_msg hook conformance installs: messages.shape, the watched iopub, stdin; then the
 * caller's transcript hook. */
void cx_on_msg(void *userdata, kb_channel channel, const char *direction, const kb_msg *msg);
/* messages.shape from what the hook saw. */
void cx_check_shape(cx *x);

/* conformance_features.c: the protocol's optional features. */
void cx_check_update_display(cx *x);
void cx_check_clear_output(cx *x);
void cx_check_pager(cx *x);
void cx_check_stdin(cx *x);
void cx_check_stdin_not_allowed(cx *x);
void cx_check_history_tail(cx *x);
void cx_check_history_output(cx *x);
void cx_check_history_range(cx *x);
void cx_check_history_search(cx *x);
void cx_check_comm_open(cx *x);
void cx_check_comm_msg(cx *x);
void cx_check_comm_info_target(cx *x);
void cx_check_comm_close(cx *x);
void cx_check_comm_unknown_target(cx *x);
void cx_check_debug(cx *x);
void cx_check_subshells(cx *x);
/* conformance_interrupt.c: interrupt.idle; interrupt.control (by_signal false) or interrupt.signal;
 * shutdown. */
void cx_check_interrupt_idle(cx *x);
void cx_check_interrupt_busy(cx *x, bool by_signal);
void cx_check_shutdown(cx *x);

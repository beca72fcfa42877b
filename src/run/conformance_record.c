/* conformance_record.c: what every conformance item shares: recording an item's result (pass,
 * untested, unsupported, or judged from its findings against the pack's known deviations), the
 * requests it makes (shell, control, an execution with its iopub kept), the message hook that
 * watches every message (messages.shape, comms, stdin), and small helpers on the kernel's
 * untrusted replies. The items themselves are in conformance.c and conformance_features.c. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "kbound/conformance.h"
#include "base/cleanup.h"
#include "kbound/report.h"
#include "kbound/kernel.h"
#include "kbound/langpack.h"
#include "run/conformance-internal.h"
#include "protocol/msgspec.h"
#include "verdict/rules.h"

/* ---- small JSON helpers (the kernel's replies are untrusted: jsonget.h checks every type) ---- */

json_object *cx_jstring_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

/* ---- items ---- */

static void add_item_v(cx *x, const char *id, const char *status, int64_t t0, json_object *ev, const char *fmt,
                       va_list ap) __attribute__((format(printf, 6, 0)));
static void add_item_v(cx *x, const char *id, const char *status, int64_t t0, json_object *ev, const char *fmt,
                       va_list ap) {
        char detail[1024];
        vsnprintf(detail, sizeof(detail), fmt, ap);
        kb_harness_add_check(&x->h, id, status, t0, ev, detail);
}

void cx_pass(cx *x, const char *id, int64_t t0, json_object *ev, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        add_item_v(x, id, "pass", t0, ev, fmt, ap);
        va_end(ap);
}

void cx_untested(cx *x, const char *id, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        add_item_v(x, id, "untested", 0, NULL, fmt, ap);
        va_end(ap);
}

void cx_unsupported(cx *x, const char *id, int64_t t0, json_object *ev, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        add_item_v(x, id, "unsupported", t0, ev, fmt, ap);
        va_end(ap);
}

void cx_found(findings *f, const char *code, const char *fmt, ...) {
        /* A problem already named (the same code from a second request) is said once. */
        for (size_t i = 0; i < f->n; i++)
                if (strcmp(f->codes[i], code) == 0)
                        return;
        size_t used = strlen(f->detail);
        if (f->n < MAX_PROBLEMS)
                f->codes[f->n++] = code;
        else
                f->overflow = true; /* a problem without its code: never a known deviation */
        if (used > 0 && used + 2 < sizeof(f->detail)) {
                memcpy(f->detail + used, "; ", 3);
                used += 2;
        }
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->detail + used, sizeof(f->detail) - used, fmt, ap);
        va_end(ap);
}

/* Whether the pack lists code as a known deviation dev ({"observed": "code" or ["code", ...]}). */
static bool listed(json_object *dev, const char *code) {
        json_object *o = kb_json_get(dev, "observed");
        if (o && json_object_is_type(o, json_type_string))
                return strcmp(json_object_get_string(o), code) == 0;
        for (size_t i = 0; o && json_object_is_type(o, json_type_array) && i < json_object_array_length(o); i++) {
                json_object *e = json_object_array_get_idx(o, i);
                if (json_object_is_type(e, json_type_string) && strcmp(json_object_get_string(e), code) == 0)
                        return true;
        }
        return false;
}

/* Records item id with the problems in f (at least one). The item is a "deviation" (named, with
 * the pack's note) only when the pack lists every observed code as a known deviation of this
 * implementation for this item; otherwise it is a "fail" naming every problem. A deviation that
 * is listed but not observed changes nothing. evidence.observed is the first code,
 * evidence.problems all of them. */
void cx_judge(cx *x, const char *id, int64_t t0, json_object *ev, const findings *f) {
        if (!ev)
                ev = json_object_new_object();
        json_object *dev = kb_json_get(x->deviations, id);
        const char *note = kb_json_str(dev, "note");
        json_object *codes = json_object_new_array();
        char names[256] = "";
        bool covered = note != NULL && !f->overflow, any_known = false;
        for (size_t i = 0; i < f->n; i++) {
                bool known = note && listed(dev, f->codes[i]);
                covered &= known;
                any_known |= known;
                json_object_array_add(codes, json_object_new_string(f->codes[i]));
                size_t used = strlen(names);
                snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "", f->codes[i]);
        }
        json_object_object_add(ev, "observed", json_object_new_string(f->n ? f->codes[0] : "unknown"));
        json_object_object_add(ev, "problems", codes);
        char text[2048]; /* detail (1024) + names (256) + implementation (128) + the words */
        if (covered && f->n > 0) {
                json_object_object_add(ev, "deviation", json_object_new_string(note));
                snprintf(text, sizeof(text), "known deviation of %s (%s): %s; observed: %s", x->implementation, names,
                         note, f->detail);
                kb_harness_add_check(&x->h, id, "deviation", t0, ev, text);
        } else if (any_known) {
                snprintf(text, sizeof(text),
                         "%s [problems: %s; only part of this is the known deviation of %s, "
                         "so it fails]",
                         f->detail, names, x->implementation);
                kb_harness_add_check(&x->h, id, "fail", t0, ev, text);
        } else if (f->n > 1) {
                snprintf(text, sizeof(text), "%s [problems: %s]", f->detail, names);
                kb_harness_add_check(&x->h, id, "fail", t0, ev, text);
        } else
                kb_harness_add_check(&x->h, id, "fail", t0, ev, f->detail);
}

/* A single problem with item id, judged as cx_judge() does. */
void cx_problem(cx *x, const char *id, int64_t t0, json_object *ev, const char *observed, const char *fmt, ...) {
        findings f = {.n = 0};
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f.detail, sizeof(f.detail), fmt, ap);
        va_end(ap);
        f.codes[f.n++] = observed;
        cx_judge(x, id, t0, ev, &f);
}

void cx_verdict(cx *x, const char *id, int64_t t0, json_object *ev, const findings *f, const char *fmt, ...) {
        if (f->n > 0) {
                cx_judge(x, id, t0, ev, f);
                return;
        }
        va_list ap;
        va_start(ap, fmt);
        add_item_v(x, id, "pass", t0, ev, fmt, ap);
        va_end(ap);
}

/* An interrupt_request the kernel ignored (every problem in f is no_reply or not_stopped) on a
 * kernel whose kernelspec does not make interrupt_request the way to interrupt it: "unsupported"
 * by the rule check shares (rules.c), recorded, and true. Otherwise false and nothing recorded. */
bool cx_ignored_control_interrupt(cx *x, const char *id, int64_t t0, json_object *ev, const findings *f) {
        for (size_t i = 0; i < f->n; i++)
                if (strcmp(f->codes[i], "no_reply") != 0 && strcmp(f->codes[i], "not_stopped") != 0)
                        return false;
        char rule[256];
        if (f->n == 0 ||
            strcmp(kb_rules_ignored_control_interrupt(x->spec->interrupt_mode, rule, sizeof(rule)), "unsupported") != 0)
                return false;
        json_object *codes = json_object_new_array();
        for (size_t i = 0; i < f->n; i++)
                json_object_array_add(codes, json_object_new_string(f->codes[i]));
        json_object_object_add(ev, "problems", codes);
        char text[sizeof(f->detail) + sizeof(rule) + 2];
        snprintf(text, sizeof(text), "%s; %s", f->detail, rule);
        kb_harness_add_check(&x->h, id, "unsupported", t0, ev, text);
        return true;
}

/* False (and the item recorded as failed) when an earlier step left nothing to test with. */
void cx_request_failed(cx *x, const char *id, int64_t t0, json_object *ev, int r, const char *what) {
        cx_problem(x, id, t0, ev, r == -ETIMEDOUT ? "no_reply" : "wait", "%s: %s", what,
                   kb_harness_wait_error(&x->h, r));
}

bool cx_can_run(cx *x, const char *id) {
        if (x->h.cancelled)
                cx_problem(x, id, 0, NULL, "cancelled", "not run: the run was cancelled");
        else if (x->h.dead)
                cx_problem(x, id, 0, NULL, "kernel_dead", "not run: the kernel process died earlier");
        else if (x->h.wedged)
                cx_problem(x, id, 0, NULL, "kernel_wedged", "not run: an earlier cell could not be stopped");
        else
                return true;
        return false;
}

/* The language pack's snippet object for name, or NULL (and the item recorded untested). */
json_object *cx_snippet(cx *x, const char *id, const char *name, bool optional) {
        json_object *s = kb_json_get(x->snippets, name);
        const char *why = kb_json_str(s, "unsupported");
        if (optional && why && *why) {
                cx_unsupported(x, id, 0, NULL,
                               "the language pack %s says this kernel's language has no way to use "
                               "it: %s",
                               kb_langpack_dir(x->lp), why);
                return NULL;
        }
        if (s && json_object_is_type(s, json_type_object))
                return s;
        if (!x->snippets)
                cx_untested(x, id, "%s", x->no_snippets);
        else
                cx_untested(x, id, "the language pack %s has no conformance snippet '%s'", kb_langpack_dir(x->lp),
                            name);
        return NULL;
}

int cx_item_ms(const cx *x) {
        return x->env->item_timeout_ms > 0 ? x->env->item_timeout_ms : ITEM_TIMEOUT_MS;
}

/* ---- requests ---- */

/* A request on shell (content taken) and its reply's content (new reference) in *ret. */
int cx_request(cx *x, const char *msg_type, json_object *content, json_object **ret) {
        kb_msg *reply = NULL;
        int r = kb_client_request(kb_kernel_client(x->h.kernel), KB_CHANNEL_SHELL, msg_type, content,
                                  kb_harness_deadline_in(&x->h, cx_item_ms(x)), &reply);
        if (r < 0)
                return r;
        *ret = json_object_get(reply->content);
        kb_msg_destroy(&reply);
        return 0;
}

int cx_control_request(cx *x, const char *msg_type, json_object *content, int ms, json_object **ret) {
        kb_msg *reply = NULL;
        int r = kb_client_request(kb_kernel_client(x->h.kernel), KB_CHANNEL_CONTROL, msg_type, content,
                                  kb_harness_deadline_in(&x->h, ms), &reply);
        if (r < 0)
                return r;
        *ret = json_object_get(reply->content);
        kb_msg_destroy(&reply);
        return 0;
}

static int record_iopub(void *userdata, kb_execution *ex, const kb_msg *msg) {
        json_object *seq = userdata;
        if (json_object_array_length(seq) >= SEQ_MAX)
                return 0; /* the order of what was kept still shows; the last message is then not idle */
        json_object *e = json_object_new_object();
        if (!e)
                return 0;
        json_object_object_add(e, "msg_type", json_object_new_string(msg->msg_type));
        json_object_object_add(e, "content", json_object_get(msg->content));
        json_object_array_add(seq, e);
        return 0;
}

/* Runs code to completion, recording its iopub messages in order in *ret_seq. Returns the wait's
 * result; on success *ret_ex is the execution (caller destroys). */
int cx_execute(cx *x, const char *code, bool silent, bool store_history, kb_execution **ret_ex, json_object **ret_seq) {
        kb_client *c = kb_kernel_client(x->h.kernel);
        kb_execute_options eo = {.silent = silent, .store_history = store_history, .stop_on_error = false};
        kb_execution *ex = NULL;
        json_object *seq = json_object_new_array();
        if (!seq)
                return -ENOMEM;
        int r = kb_client_execute_start(c, code, &eo, &ex);
        if (r >= 0)
                r = kb_client_execute_wait(c, ex, kb_harness_deadline_in(&x->h, cx_item_ms(x)), record_iopub, seq);
        if (r >= 0 && !ex->got_reply)
                r = -ETIMEDOUT;
        if (r < 0) {
                kb_execution_destroy(c, &ex);
                json_object_put(seq);
                return r;
        }
        *ret_ex = ex;
        *ret_seq = seq;
        return 0;
}

size_t cx_seq_count(json_object *seq, const char *msg_type) {
        size_t n = 0;
        for (size_t i = 0; i < json_object_array_length(seq); i++)
                if (strcmp(kb_json_str(json_object_array_get_idx(seq, i), "msg_type"), msg_type) == 0)
                        n++;
        return n;
}

/* The first message of msg_type in seq (its content), or NULL. */
json_object *cx_seq_find(json_object *seq, const char *msg_type) {
        for (size_t i = 0; i < json_object_array_length(seq); i++) {
                json_object *e = json_object_array_get_idx(seq, i);
                if (strcmp(kb_json_str(e, "msg_type"), msg_type) == 0)
                        return kb_json_get(e, "content");
        }
        return NULL;
}

json_object *cx_seq_types(json_object *seq) {
        json_object *types = json_object_new_array();
        for (size_t i = 0; types && i < json_object_array_length(seq); i++) {
                json_object *e = json_object_array_get_idx(seq, i);
                const char *t = kb_json_str(e, "msg_type");
                const char *state = kb_json_str(kb_json_get(e, "content"), "execution_state");
                char buf[96];
                snprintf(buf, sizeof(buf), "%s%s%s", t, state ? ":" : "", state ? state : "");
                json_object_array_add(types, json_object_new_string(buf));
        }
        return types;
}

/* ---- what the hook sees: every message (messages.shape), watched iopub, stdin ---- */

#define SHAPE_TYPES_MAX 64 /* message types counted by name; the rest under "(other)" */

static void shape_problem(void *userdata, const char *code, const char *detail) {
        cx *x = userdata;
        json_object *p = kb_json_get(x->shape_problems, code);
        if (!p) {
                /* The codes are bounded (the header's fields and the spec's types: msgspec.c),
                 * but a ceiling costs nothing; past it, the overflow is itself a problem. */
                const char *key = json_object_object_length(x->shape_problems) < SHAPE_CODES_MAX ? code : "overflow";
                p = kb_json_get(x->shape_problems, key);
                if (!p) {
                        p = json_object_new_object();
                        if (!p)
                                return;
                        json_object_object_add(p, "count", json_object_new_int64(0));
                        json_object_object_add(
                                p, "detail",
                                json_object_new_string(strcmp(key, "overflow") == 0
                                                               ? "more distinct problems than kbound keeps"
                                                               : detail));
                        json_object_object_add(x->shape_problems, key, p);
                }
        }
        json_object *n = kb_json_get(p, "count");
        if (n)
                json_object_set_int64(n, json_object_get_int64(n) + 1);
}

static bool watched_parent(const cx *x, const char *parent) {
        for (size_t i = 0; i < x->n_watch && i < WATCH_MAX; i++)
                if (strcmp(x->watch_ids[i], parent) == 0)
                        return true;
        return false;
}

static void keep(json_object *list, const kb_msg *msg) {
        if (!list || json_object_array_length(list) >= SEQ_MAX)
                return;
        json_object *e = json_object_new_object();
        if (!e)
                return;
        json_object_object_add(e, "parent", json_object_new_string(msg->parent_msg_id));
        json_object_object_add(e, "msg_type", json_object_new_string(msg->msg_type));
        json_object_object_add(e, "content", json_object_get(msg->content));
        json_object_array_add(list, e);
}

void cx_on_msg(void *userdata, kb_channel channel, const char *direction, const kb_msg *msg) {
        cx *x = userdata;
        /* msg is NULL when it could not be redacted: nothing to look at, the transcript counts it. */
        if (msg && strcmp(direction, "in") == 0 && x->shape_types && x->shape_problems) {
                x->shape_checked++;
                char type[65];
                snprintf(type, sizeof(type), "%s", msg->msg_type);
                if (!kb_msgspec_known(msg->msg_type))
                        x->shape_unknown++;
                if (!kb_json_get(x->shape_types, type) && json_object_object_length(x->shape_types) >= SHAPE_TYPES_MAX)
                        snprintf(type, sizeof(type), "(other)");
                json_object *n = kb_json_get(x->shape_types, type);
                if (n)
                        json_object_set_int64(n, json_object_get_int64(n) + 1);
                else
                        json_object_object_add(x->shape_types, type, json_object_new_int64(1));
                kb_msgspec_check(msg->msg_type, msg->header, msg->content, shape_problem, x);
                if (channel == KB_CHANNEL_IOPUB && watched_parent(x, msg->parent_msg_id))
                        keep(x->watched, msg);
                else if (channel == KB_CHANNEL_STDIN)
                        keep(x->stdin_msgs, msg);
        }
        if (x->env->harness.on_msg)
                x->env->harness.on_msg(x->env->harness.on_msg_userdata, channel, direction, msg);
}

int cx_send_watched(cx *x, const char *msg_type, json_object *content, char ret_id[64]) {
        _cleanup_free_ char *id = NULL;
        int r = kb_client_request_send(kb_kernel_client(x->h.kernel), KB_CHANNEL_SHELL, msg_type, content, &id);
        if (r < 0)
                return r;
        /* A ring: the oldest watched request is forgotten first. */
        snprintf(x->watch_ids[x->n_watch % WATCH_MAX], sizeof(x->watch_ids[0]), "%s", id);
        x->n_watch++;
        snprintf(ret_id, 64, "%s", id);
        return 0;
}

json_object *cx_watched(cx *x, const char *parent) {
        json_object *list = json_object_new_array();
        for (size_t i = 0; list && i < json_object_array_length(x->watched); i++) {
                json_object *e = json_object_array_get_idx(x->watched, i);
                if (strcmp(kb_json_str(e, "parent") ?: "", parent) == 0)
                        json_object_array_add(list, json_object_get(e));
        }
        return list;
}

static bool idle_seen(cx *x, const char *parent) {
        for (size_t i = 0; i < json_object_array_length(x->watched); i++) {
                json_object *e = json_object_array_get_idx(x->watched, i);
                if (strcmp(kb_json_str(e, "parent") ?: "", parent) == 0 &&
                    strcmp(kb_json_str(e, "msg_type") ?: "", "status") == 0 &&
                    strcmp(kb_json_str(kb_json_get(e, "content"), "execution_state") ?: "", "idle") == 0)
                        return true;
        }
        return false;
}

int cx_wait_idle(cx *x, const char *parent, int64_t deadline_ms) {
        while (!idle_seen(x, parent)) {
                if (kb_ms_left(deadline_ms) == 0)
                        return -ETIMEDOUT;
                int r = kb_client_poll(kb_kernel_client(x->h.kernel), deadline_ms);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Every message the run received, against the messaging spec as data (msgspec.c). */
void cx_check_shape(cx *x) {
        const char *id = cx_item_id(x);
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "messages", json_object_new_int64((int64_t) x->shape_checked));
        json_object_object_add(ev, "unknown_types", json_object_new_int64((int64_t) x->shape_unknown));
        json_object_object_add(ev, "types", json_object_get(x->shape_types));
        json_object_object_add(ev, "shape_problems", json_object_get(x->shape_problems));
        findings f = {.n = 0};
        if (x->shape_problems) {
                json_object_object_foreach(x->shape_problems, code, p) {
                        int64_t count = json_object_get_int64(kb_json_get(p, "count"));
                        cx_found(&f, code, "%s%s", kb_json_str(p, "detail") ?: code,
                                 count > 1 ? " (and again in other messages)" : "");
                }
        }
        if (x->shape_checked == 0)
                cx_found(&f, "no_messages", "no message was received to check");
        cx_verdict(x, id, 0, ev, &f,
                   "%llu message(s) of %d type(s) received in this run: every header and every "
                   "content the messaging spec describes has its required fields with the right types (%llu of "
                   "types the spec does not describe: header only)",
                   (unsigned long long) x->shape_checked, json_object_object_length(x->shape_types),
                   (unsigned long long) x->shape_unknown);
}

/* The start every item running one snippet shares: the item can run, the language pack has its
 * snippet `name` with a "code" string, and the code ran (stored in history, not silent) to a
 * complete execute_reply; *ret_t0 is when it started. Otherwise the item is recorded (untested,
 * or failed) and < 0 returned. */
static int start_snippet(cx *x, const char *id, const char *name, bool optional, json_object **ret_s, int64_t *ret_t0,
                         kb_execution **ret_ex, json_object **ret_seq) {
        if (!cx_can_run(x, id))
                return -ECANCELED;
        json_object *s = cx_snippet(x, id, name, optional);
        if (!s)
                return -ENOENT;
        const char *code = kb_json_str(s, "code");
        int64_t t0 = kb_now_ms();
        if (!code) {
                cx_untested(x, id, "the language pack's snippet for %s has no \"code\" string", id);
                return -EINVAL;
        }
        int r = cx_execute(x, code, false, true, ret_ex, ret_seq);
        if (r < 0) {
                cx_request_failed(x, id, t0, NULL, r, "no complete execute_reply");
                return r;
        }
        *ret_s = s;
        *ret_t0 = t0;
        return 0;
}

void cx_snippet_item(cx *x, const char *id, const char *name, bool optional, cx_snippet_judge *judge) {
        json_object *s = NULL, *seq = NULL;
        kb_execution *ex = NULL;
        int64_t t0 = 0;
        if (start_snippet(x, id, name, optional, &s, &t0, &ex, &seq) < 0)
                return;
        judge(x, id, s, t0, ex, seq);
        json_object_put(seq);
        kb_execution_destroy(kb_kernel_client(x->h.kernel), &ex);
}

bool cx_string_array(json_object *a) {
        if (!a || !json_object_is_type(a, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(a); i++)
                if (!json_object_is_type(json_object_array_get_idx(a, i), json_type_string))
                        return false;
        return true;
}

bool cx_in_string_array(json_object *a, const char *s) {
        for (size_t i = 0; cx_string_array(a) && i < json_object_array_length(a); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(a, i)), s) == 0)
                        return true;
        return false;
}

/* Cursor positions count unicode code points. */
int cx_code_points(const char *s) {
        int n = 0;
        for (; *s; s++)
                if (((unsigned char) *s & 0xC0) != 0x80)
                        n++;
        return n;
}

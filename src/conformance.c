/* conformance.c: does the kernel speak the Jupyter protocol as specified? One item at a time,
 * each a check with evidence; snippets and known deviations are language-pack data. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "kbound/conformance.h"
#include "kbound/report.h"
#include "kbound/kernel.h"
#include "kbound/langpack.h"
#include "conformance-internal.h"
#include "msgspec.h"
#include "rules.h"

static const char *const items[] = {
        "kernel_info.reply",
        "kernel_info.protocol_version",
        "kernel_info.implementation",
        "kernel_info.language_info",
        "kernel_info.banner",
        "heartbeat",
        "execute.stdout",
        "execute.ordering",
        "execute.stderr",
        "execute.result",
        "execute.display_data",
        "execute.update_display_data",
        "execute.clear_output",
        "execute.pager",
        "execute.error",
        "execute.count",
        "execute.silent",
        "stdin.input",
        "stdin.not_allowed",
        "is_complete.complete",
        "is_complete.incomplete",
        "is_complete.invalid",
        "complete",
        "inspect",
        "history.tail",
        "history.output",
        "history.range",
        "history.search",
        "comm_info",
        "comm.open",
        "comm.msg",
        "comm_info.target",
        "comm.close",
        "comm.unknown_target",
        "debug.initialize",
        "subshells",
        "interrupt.idle",
        "interrupt.control",
        "interrupt.signal",
        "shutdown",
        "messages.shape",
        NULL,
};

const char *const *kb_conformance_items(void) {
        return items;
}

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
static bool ignored_control_interrupt(cx *x, const char *id, int64_t t0, json_object *ev, const findings *f) {
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
        const char *id = "messages.shape";
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

/* ---- kernel_info ---- */

/* "5.3" / "5.3.1": 1 and the major version; 0 if not parseable. */
static int parse_version(const char *v, long *ret_major) {
        char *end = NULL;
        if (!v || !*v || *v < '0' || *v > '9')
                return 0;
        long major = strtol(v, &end, 10);
        if (*end != '.' || end[1] < '0' || end[1] > '9')
                return 0;
        strtol(end + 1, &end, 10);
        if (*end == '.') {
                if (end[1] < '0' || end[1] > '9')
                        return 0;
                strtol(end + 1, &end, 10);
        }
        if (*end)
                return 0;
        *ret_major = major;
        return 1;
}

static void check_kernel_info(cx *x) {
        json_object *info = kb_kernel_info(x->h.kernel);
        const char *status = kb_json_str(info, "status");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "status", cx_jstring_or_null(status));
        if (status && strcmp(status, "ok") == 0)
                cx_pass(x, "kernel_info.reply", 0, ev, "kernel_info_reply arrived with status 'ok'");
        else
                cx_problem(x, "kernel_info.reply", 0, ev, "status", "kernel_info_reply status is %s%s%s",
                           status ? "'" : "", status ? status : "missing", status ? "'" : "");

        const char *pv = kb_json_str(info, "protocol_version");
        long major = 0;
        ev = json_object_new_object();
        json_object_object_add(ev, "protocol_version", cx_jstring_or_null(pv));
        if (!parse_version(pv, &major))
                cx_problem(x, "kernel_info.protocol_version", 0, ev, "unparseable",
                           "protocol_version %s is not a version X.Y[.Z]", pv ? pv : "is missing or not a string:");
        else if (major < 5)
                cx_problem(x, "kernel_info.protocol_version", 0, ev, "too_old", "protocol_version %s is older than 5.0",
                           pv);
        else
                cx_pass(x, "kernel_info.protocol_version", 0, ev, "protocol_version %s (>= 5.0)", pv);

        const char *impl = kb_json_str(info, "implementation"), *impl_v = kb_json_str(info, "implementation_version");
        ev = json_object_new_object();
        json_object_object_add(ev, "implementation", cx_jstring_or_null(impl));
        json_object_object_add(ev, "implementation_version", cx_jstring_or_null(impl_v));
        if (impl && *impl && impl_v && *impl_v)
                cx_pass(x, "kernel_info.implementation", 0, ev, "%s %s", impl, impl_v);
        else
                cx_problem(x, "kernel_info.implementation", 0, ev, "missing",
                           "implementation and implementation_version must be non-empty strings");

        json_object *li = kb_json_get(info, "language_info");
        const char *fields[] = {"name", "version", "file_extension", "mimetype"};
        char missing[128] = "";
        ev = json_object_new_object();
        for (size_t i = 0; i < KB_ELEMENTSOF(fields); i++) {
                const char *v = kb_json_str(li, fields[i]);
                json_object_object_add(ev, fields[i], cx_jstring_or_null(v));
                if (!v || !*v)
                        snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
                                 *missing ? ", " : "", fields[i]);
        }
        const char *name = kb_json_str(li, "name"), *ext = kb_json_str(li, "file_extension");
        const char *lang = x->spec->language ? x->spec->language : "";
        findings f = {.n = 0};
        if (*missing)
                cx_found(&f, "missing", "language_info lacks %s", missing);
        if (ext && *ext && ext[0] != '.')
                cx_found(&f, "extension", "file_extension '%s' does not start with '.'", ext);
        /* The same rule as the report's kernel warnings for check (rules.c): a warning, not a problem. */
        char warning[256];
        bool mismatch = kb_rules_language_mismatch(name, lang, warning, sizeof(warning));
        if (mismatch)
                json_object_object_add(ev, "warning", json_object_new_string(warning));
        if (f.n > 0)
                cx_judge(x, "kernel_info.language_info", 0, ev, &f);
        else
                cx_pass(x, "kernel_info.language_info", 0, ev, "%s %s (%s, %s)%s%s", name, kb_json_str(li, "version"),
                        ext, kb_json_str(li, "mimetype"), mismatch ? "; warning: " : "", mismatch ? warning : "");

        json_object *banner = kb_json_get(info, "banner");
        if (banner && json_object_is_type(banner, json_type_string))
                cx_pass(x, "kernel_info.banner", 0, NULL, "banner is a string of %d bytes",
                        json_object_get_string_len(banner));
        else
                cx_problem(x, "kernel_info.banner", 0, NULL, "missing", "banner is missing or not a string");
}

static void check_heartbeat(cx *x) {
        if (!cx_can_run(x, "heartbeat"))
                return;
        int64_t t0 = kb_now_ms();
        int r = kb_client_heartbeat(kb_kernel_client(x->h.kernel), kb_harness_deadline_in(&x->h, HEARTBEAT_TIMEOUT_MS));
        if (r == 1)
                cx_pass(x, "heartbeat", t0, NULL, "an idle kernel echoed a heartbeat ping");
        else
                cx_problem(x, "heartbeat", t0, NULL, "no_echo", "no heartbeat echo within %d ms while idle%s",
                           HEARTBEAT_TIMEOUT_MS, r < 0 ? " (socket error)" : "");
}

/* ---- execute ---- */

/* The start every item running one snippet shares: the item can run, the language pack has its
 * snippet `name` with a "code" string, and the code ran (stored in history, not silent) to a
 * complete execute_reply; *ret_t0 is when it started. Otherwise the item is recorded (untested,
 * or failed) and < 0 returned. */
int cx_start_snippet(cx *x, const char *id, const char *name, bool optional, json_object **ret_s, int64_t *ret_t0,
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
                cx_problem(x, id, t0, NULL, r == -ETIMEDOUT ? "no_reply" : "wait", "no complete execute_reply: %s",
                           kb_harness_wait_error(&x->h, r));
                return r;
        }
        *ret_s = s;
        *ret_t0 = t0;
        return 0;
}

static void check_stream(cx *x, const char *id, const char *name) {
        json_object *s = NULL, *seq = NULL;
        kb_execution *ex = NULL;
        int64_t t0 = 0;
        if (cx_start_snippet(x, id, name, false, &s, &t0, &ex, &seq) < 0)
                return;
        const char *want = kb_json_str(s, "text");
        const char *got = strcmp(name, "stdout") == 0 ? ex->stdout_text : ex->stderr_text;
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "iopub", cx_seq_types(seq));
        json_object_object_add(ev, "execute_reply_status", json_object_new_string(ex->status));
        findings f = {.n = 0};
        if (strcmp(ex->status, "ok") != 0)
                cx_found(&f, "status", "execute_reply status '%s', expected 'ok'", ex->status);
        if (!want || !got || !strstr(got, want))
                cx_found(&f, "missing_output", "no %s stream containing '%s' on iopub", name,
                         want ? want : "(snippet lacks \"text\")");
        if (f.n > 0)
                cx_judge(x, id, t0, ev, &f);
        else
                cx_pass(x, id, t0, ev, "'%s' arrived as a %s stream", want, name);
        if (strcmp(name, "stdout") == 0) {
                x->stdout_seq = json_object_get(seq);
                x->stdout_count = ex->execution_count;
                x->stdout_ran = true;
        }
        json_object_put(seq);
        kb_execution_destroy(kb_kernel_client(x->h.kernel), &ex);
}

/* busy → execute_input (the code, the reply's execution_count) → outputs → idle, from the stdout
 * run (whose messages all carried its msg_id as parent: only those are collected). */
static void check_ordering(cx *x) {
        const char *id = "execute.ordering";
        json_object *s = kb_json_get(x->snippets, "stdout");
        if (!x->stdout_ran) {
                if (!s)
                        cx_untested(x, id, "%s",
                                    x->snippets ? "the language pack has no conformance snippet 'stdout'"
                                                : x->no_snippets);
                else
                        cx_problem(x, id, 0, NULL, "not_run", "not run: execute.stdout produced no complete execution");
                return;
        }
        json_object *seq = x->stdout_seq;
        size_t n = json_object_array_length(seq);
        const char *code = kb_json_str(s, "code");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "iopub", cx_seq_types(seq));
        char why[256] = "";
        json_object *first = n > 0 ? json_object_array_get_idx(seq, 0) : NULL;
        json_object *second = n > 1 ? json_object_array_get_idx(seq, 1) : NULL;
        json_object *last = n > 0 ? json_object_array_get_idx(seq, n - 1) : NULL;
        json_object *input = kb_json_get(second, "content");
        int64_t input_count = -1;
        if (!first || strcmp(kb_json_str(first, "msg_type"), "status") != 0 ||
            strcmp(kb_json_str(kb_json_get(first, "content"), "execution_state") ?: "", "busy") != 0)
                snprintf(why, sizeof(why), "the first iopub message is not status busy");
        else if (!second || strcmp(kb_json_str(second, "msg_type"), "execute_input") != 0)
                snprintf(why, sizeof(why), "execute_input does not follow busy");
        else if (!kb_json_str(input, "code") || strcmp(kb_json_str(input, "code"), code) != 0)
                snprintf(why, sizeof(why), "execute_input does not echo the code sent");
        else if (!kb_json_int(input, "execution_count", &input_count) || input_count != x->stdout_count)
                snprintf(why, sizeof(why), "execute_input's execution_count %lld differs from the reply's %lld",
                         (long long) input_count, (long long) x->stdout_count);
        else if (n < 4)
                snprintf(why, sizeof(why), "no output between execute_input and idle");
        else if (strcmp(kb_json_str(last, "msg_type"), "status") != 0 ||
                 strcmp(kb_json_str(kb_json_get(last, "content"), "execution_state") ?: "", "idle") != 0)
                snprintf(why, sizeof(why), "the last iopub message is not status idle");
        else if (cx_seq_count(seq, "status") != 2)
                snprintf(why, sizeof(why), "%zu status messages, expected busy and idle only",
                         cx_seq_count(seq, "status"));
        if (*why)
                cx_problem(x, id, 0, ev, "order", "%s", why);
        else
                cx_pass(x, id, 0, ev,
                        "busy, execute_input (code and execution_count %lld), %zu output(s), idle; all with "
                        "the request as parent",
                        (long long) input_count, n - 3);
}

static void check_result(cx *x) {
        const char *id = "execute.result";
        json_object *s = NULL, *seq = NULL;
        kb_execution *ex = NULL;
        int64_t t0 = 0;
        if (cx_start_snippet(x, id, "execute_result", false, &s, &t0, &ex, &seq) < 0)
                return;
        const char *want = kb_json_str(s, "text_plain");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "iopub", cx_seq_types(seq));
        json_object *result = cx_seq_find(seq, "execute_result");
        const char *plain = kb_json_str(kb_json_get(result, "data"), "text/plain");
        int64_t count = -1;
        json_object *display = cx_seq_find(seq, "display_data");
        const char *display_plain = kb_json_str(kb_json_get(display, "data"), "text/plain");
        if (plain)
                json_object_object_add(ev, "text_plain", json_object_new_string(plain));
        findings f = {.n = 0};
        if (!want) {
                cx_untested(x, id, "the execute_result snippet has no \"text_plain\"");
                json_object_put(ev);
                goto out;
        }
        if (strcmp(ex->status, "ok") != 0)
                cx_found(&f, "status", "execute_reply status '%s', expected 'ok'", ex->status);
        if (!result && display_plain && strstr(display_plain, want))
                cx_found(&f, "display_data_instead", "the value arrived as display_data ('%s'), no execute_result",
                         display_plain);
        else if (!result)
                cx_found(&f, "missing", "no execute_result on iopub");
        else {
                if (!plain || !strstr(plain, want))
                        cx_found(&f, "text_plain", "execute_result text/plain is not '%s'", want);
                if (!kb_json_int(result, "execution_count", &count) || count != ex->execution_count)
                        cx_found(&f, "count", "execute_result execution_count %lld differs from the reply's %lld",
                                 (long long) count, (long long) ex->execution_count);
        }
        if (f.n > 0)
                cx_judge(x, id, t0, ev, &f);
        else
                cx_pass(x, id, t0, ev, "execute_result text/plain '%s', execution_count %lld", plain,
                        (long long) count);
out:
        json_object_put(seq);
        kb_execution_destroy(kb_kernel_client(x->h.kernel), &ex);
}

static void check_display(cx *x) {
        const char *id = "execute.display_data";
        json_object *s = NULL, *seq = NULL;
        kb_execution *ex = NULL;
        int64_t t0 = 0;
        if (cx_start_snippet(x, id, "display_data", false, &s, &t0, &ex, &seq) < 0)
                return;
        const char *mime = kb_json_str(s, "mime");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "iopub", cx_seq_types(seq));
        json_object *shown = NULL;
        for (size_t i = 0; mime && i < json_object_array_length(seq); i++) {
                json_object *e = json_object_array_get_idx(seq, i);
                if (strcmp(kb_json_str(e, "msg_type"), "display_data") == 0 &&
                    kb_json_get(kb_json_get(kb_json_get(e, "content"), "data"), mime))
                        shown = kb_json_get(e, "content");
        }
        json_object *md = kb_json_get(shown, "metadata");
        findings f = {.n = 0};
        if (mime) {
                if (strcmp(ex->status, "ok") != 0)
                        cx_found(&f, "status", "execute_reply status '%s', expected 'ok'", ex->status);
                if (!shown)
                        cx_found(&f, "missing", "no display_data carrying %s", mime);
                else if (!md || !json_object_is_type(md, json_type_object))
                        cx_found(&f, "metadata", "display_data without a metadata object");
        }
        if (!mime) {
                cx_untested(x, id, "the display_data snippet has no \"mime\"");
                json_object_put(ev);
        } else if (f.n > 0)
                cx_judge(x, id, t0, ev, &f);
        else
                cx_pass(x, id, t0, ev, "display_data carrying %s with a metadata object", mime);
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

static void check_error(cx *x) {
        const char *id = "execute.error";
        json_object *s = NULL, *seq = NULL;
        kb_execution *ex = NULL;
        int64_t t0 = 0;
        if (cx_start_snippet(x, id, "error", false, &s, &t0, &ex, &seq) < 0)
                return;
        const char *want = kb_json_str(s, "evalue");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "iopub", cx_seq_types(seq));
        json_object_object_add(ev, "execute_reply_status", json_object_new_string(ex->status));
        json_object_object_add(ev, "ename", cx_jstring_or_null(ex->ename));
        json_object *err = cx_seq_find(seq, "error");
        findings f = {.n = 0};
        if (strcmp(ex->status, "error") != 0)
                cx_found(&f, "status", "execute_reply status '%s', expected 'error'", ex->status);
        else if (!ex->ename || !ex->evalue || !cx_string_array(kb_json_get(ex->reply, "traceback")))
                cx_found(&f, "fields", "the error reply lacks ename, evalue or a traceback list of strings");
        else if (want && !strstr(ex->evalue, want))
                cx_found(&f, "evalue", "evalue does not contain '%s'", want);
        if (!err || !kb_json_str(err, "ename") || !kb_json_str(err, "evalue") ||
            !cx_string_array(kb_json_get(err, "traceback")))
                cx_found(&f, "no_iopub_error", "no iopub error message with ename, evalue and traceback");
        /* The cell only raises: between execute_input and idle the error is the one output
         * (jupyter_kernel_test's test_error asks the same). */
        size_t outputs =
                json_object_array_length(seq) - cx_seq_count(seq, "status") - cx_seq_count(seq, "execute_input");
        if (err && outputs != 1)
                cx_found(&f, "extra_output", "%zu iopub outputs for a cell that only raises, expected the error alone",
                         outputs);
        if (f.n > 0)
                cx_judge(x, id, t0, ev, &f);
        else
                cx_pass(x, id, t0, ev, "status 'error', ename %s, evalue and traceback in the reply and on iopub",
                        ex->ename);
        json_object_put(seq);
        kb_execution_destroy(kb_kernel_client(x->h.kernel), &ex);
}

/* Runs the quiet snippet; *ret_count gets the reply's execution_count. */
static int quiet(cx *x, const char *code, bool silent, bool store, int64_t *ret_count, json_object **ret_seq) {
        kb_execution *ex = NULL;
        json_object *seq = NULL;
        int r = cx_execute(x, code, silent, store, &ex, &seq);
        if (r < 0)
                return r;
        *ret_count = ex->execution_count;
        r = strcmp(ex->status, "ok") == 0 ? 0 : -EPROTO;
        kb_execution_destroy(kb_kernel_client(x->h.kernel), &ex);
        if (ret_seq)
                *ret_seq = seq;
        else
                json_object_put(seq);
        return r;
}

static void check_counts(cx *x) {
        const char *id = "execute.count";
        if (!cx_can_run(x, id))
                return;
        json_object *s = cx_snippet(x, id, "quiet", false);
        if (!s)
                return;
        const char *code = kb_json_str(s, "code");
        int64_t t0 = kb_now_ms(), a = -1, b = -1, c = -1;
        int r;
        if (!code) {
                cx_untested(x, id, "the quiet snippet has no \"code\"");
                return;
        }
        json_object *seq = NULL;
        if ((r = quiet(x, code, false, true, &a, NULL)) < 0 || (r = quiet(x, code, false, false, &b, NULL)) < 0 ||
            (r = quiet(x, code, false, true, &c, &seq)) < 0) {
                cx_problem(x, id, t0, NULL, "wait", "a quiet cell did not complete with status ok: %s",
                           r == -EPROTO ? "status not ok" : kb_harness_wait_error(&x->h, r));
                return;
        }
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "store_history", json_object_new_int64(a));
        json_object_object_add(ev, "no_store_history", json_object_new_int64(b));
        json_object_object_add(ev, "store_history_again", json_object_new_int64(c));
        int64_t input_count = -1;
        json_object *input = cx_seq_find(seq, "execute_input");
        bool have_input = input && kb_json_int(input, "execution_count", &input_count);
        json_object_put(seq);
        findings f = {.n = 0};
        if (a < 1 || c != a + 1)
                cx_found(&f, "count", "execution_count went %lld → (store_history false) → %lld, expected %lld → %lld",
                         (long long) a, (long long) c, (long long) a, (long long) a + 1);
        /* The protocol: a request that stores no history replies with the counter's current value. */
        if (b != a)
                cx_found(&f, "count_without_store",
                         "the store_history false reply says %lld instead of the current "
                         "counter %lld",
                         (long long) b, (long long) a);
        if (!have_input || input_count != c)
                cx_found(&f, "input_count", "execute_input's execution_count is not the reply's %lld", (long long) c);
        if (f.n > 0)
                cx_judge(x, id, t0, ev, &f);
        else
                cx_pass(x, id, t0, ev,
                        "execution_count %lld → %lld: +1 with store_history; a request without it "
                        "replies with the current %lld and does not count",
                        (long long) a, (long long) c, (long long) b);
}

static void check_silent(cx *x) {
        const char *id = "execute.silent";
        if (!cx_can_run(x, id))
                return;
        json_object *s = cx_snippet(x, id, "stdout", false);
        json_object *q = s ? cx_snippet(x, id, "quiet", false) : NULL;
        if (!s || !q)
                return;
        const char *code = kb_json_str(s, "code"), *quiet_code = kb_json_str(q, "code");
        if (!code || !quiet_code) {
                cx_untested(x, id, "the stdout or quiet snippet has no \"code\"");
                return;
        }
        int64_t t0 = kb_now_ms(), before = -1, silent_count = -1, after = -1;
        json_object *seq = NULL;
        int r = quiet(x, quiet_code, false, true, &before, NULL);
        if (r >= 0)
                r = quiet(x, code, true, false, &silent_count, &seq);
        if (r >= 0)
                r = quiet(x, quiet_code, false, true, &after, NULL);
        if (r < 0) {
                json_object_put(seq);
                cx_problem(x, id, t0, NULL, "wait", "a cell did not complete with status ok: %s",
                           r == -EPROTO ? "status not ok" : kb_harness_wait_error(&x->h, r));
                return;
        }
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "iopub", cx_seq_types(seq));
        json_object_object_add(ev, "count_before", json_object_new_int64(before));
        json_object_object_add(ev, "count_after", json_object_new_int64(after));
        size_t streams = cx_seq_count(seq, "stream");
        size_t rich =
                cx_seq_count(seq, "display_data") + cx_seq_count(seq, "execute_result") + cx_seq_count(seq, "error");
        size_t inputs = cx_seq_count(seq, "execute_input");
        json_object_put(seq);
        /* The protocol: silent requests broadcast nothing on iopub (and have no execute_result).
         * Each is checked on its own: a known deviation must not hide another. */
        findings f = {.n = 0};
        if (rich > 0)
                cx_found(&f, "output_when_silent", "a silent request published %zu display, result or error message(s)",
                         rich);
        if (streams > 0)
                cx_found(&f, "stream_when_silent",
                         "a silent request published %zu stream message(s) of what the code "
                         "printed",
                         streams);
        if (after != before + 1)
                cx_found(&f, "count_when_silent",
                         "execution_count went %lld → %lld around a silent request, expected +1 "
                         "(the silent one must not count)",
                         (long long) before, (long long) after);
        if (inputs > 0)
                cx_found(&f, "execute_input_when_silent", "a silent request broadcast execute_input");
        if (f.n > 0)
                cx_judge(x, id, t0, ev, &f);
        else
                cx_pass(x, id, t0, ev,
                        "a silent request (code that prints) published no execute_input and no output, "
                        "and did not count");
}

/* ---- is_complete, complete, inspect, history, comm_info ---- */

static void check_is_complete(cx *x, const char *expect) {
        char id[64];
        snprintf(id, sizeof(id), "is_complete.%s", expect);
        if (!cx_can_run(x, id))
                return;
        json_object *s = cx_snippet(x, id, "is_complete", false);
        if (!s)
                return;
        json_object *samples = kb_json_get(s, expect);
        if (!samples || !json_object_is_type(samples, json_type_array) || json_object_array_length(samples) == 0) {
                cx_untested(x, id, "the is_complete snippet has no \"%s\" samples", expect);
                return;
        }
        int64_t t0 = kb_now_ms();
        json_object *ev = json_object_new_array();
        char wrong[256] = "";
        for (size_t i = 0; i < json_object_array_length(samples); i++) {
                json_object *sample = json_object_array_get_idx(samples, i);
                if (!json_object_is_type(sample, json_type_string))
                        continue;
                json_object *content = json_object_new_object(), *reply = NULL;
                json_object_object_add(content, "code", json_object_get(sample));
                int r = cx_request(x, "is_complete_request", content, &reply);
                if (r < 0) {
                        json_object_put(ev);
                        cx_problem(x, id, t0, NULL, r == -ETIMEDOUT ? "no_reply" : "wait", "is_complete_request: %s",
                                   kb_harness_wait_error(&x->h, r));
                        return;
                }
                const char *status = kb_json_str(reply, "status");
                json_object *e = json_object_new_object();
                json_object_object_add(e, "code", json_object_get(sample));
                json_object_object_add(e, "status", cx_jstring_or_null(status));
                if (kb_json_get(reply, "indent"))
                        json_object_object_add(e, "indent", json_object_get(kb_json_get(reply, "indent")));
                json_object_array_add(ev, e);
                if ((!status || strcmp(status, expect) != 0) && !*wrong)
                        snprintf(wrong, sizeof(wrong), "sample %zu answered '%s'", i + 1,
                                 status ? status : "(no status)");
                json_object_put(reply);
        }
        json_object *wrapped = json_object_new_object();
        json_object_object_add(wrapped, "samples", ev);
        if (*wrong)
                cx_problem(x, id, t0, wrapped, "wrong_status", "expected '%s': %s", expect, wrong);
        else
                cx_pass(x, id, t0, wrapped, "%zu sample(s) answered '%s'", json_object_array_length(ev), expect);
}

/* Cursor positions count unicode code points. */
int cx_code_points(const char *s) {
        int n = 0;
        for (; *s; s++)
                if (((unsigned char) *s & 0xC0) != 0x80)
                        n++;
        return n;
}

/* Whether two lists of strings hold the same set (duplicates aside). */
static bool same_set(json_object *a, json_object *b) {
        for (int pass_no = 0; pass_no < 2; pass_no++) {
                json_object *from = pass_no ? b : a, *in = pass_no ? a : b;
                for (size_t i = 0; i < json_object_array_length(from); i++) {
                        const char *v = json_object_get_string(json_object_array_get_idx(from, i));
                        bool there = false;
                        for (size_t j = 0; !there && j < json_object_array_length(in); j++)
                                there = strcmp(v, json_object_get_string(json_object_array_get_idx(in, j))) == 0;
                        if (!there)
                                return false;
                }
        }
        return true;
}

static void check_complete(cx *x) {
        const char *id = "complete";
        if (!cx_can_run(x, id))
                return;
        json_object *s = cx_snippet(x, id, "complete", false);
        if (!s)
                return;
        const char *code = kb_json_str(s, "code"), *match = kb_json_str(s, "match");
        if (!code || !match) {
                cx_untested(x, id, "the complete snippet needs \"code\" and \"match\"");
                return;
        }
        int64_t t0 = kb_now_ms(), start = -1, end = -1;
        int pos = cx_code_points(code);
        json_object *content = json_object_new_object(), *reply = NULL;
        json_object_object_add(content, "code", json_object_new_string(code));
        json_object_object_add(content, "cursor_pos", json_object_new_int(pos));
        int r = cx_request(x, "complete_request", content, &reply);
        if (r < 0) {
                cx_problem(x, id, t0, NULL, r == -ETIMEDOUT ? "no_reply" : "wait", "complete_request: %s",
                           kb_harness_wait_error(&x->h, r));
                return;
        }
        json_object *matches = kb_json_get(reply, "matches");
        bool in_matches = false;
        for (size_t i = 0; cx_string_array(matches) && i < json_object_array_length(matches); i++)
                in_matches |= strcmp(json_object_get_string(json_object_array_get_idx(matches, i)), match) == 0;
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "matches", matches ? json_object_get(matches) : NULL);
        bool cursors = kb_json_int(reply, "cursor_start", &start) && kb_json_int(reply, "cursor_end", &end);
        json_object_object_add(ev, "cursor_start", json_object_new_int64(start));
        json_object_object_add(ev, "cursor_end", json_object_new_int64(end));
        const char *status = kb_json_str(reply, "status");
        findings f = {.n = 0};
        if (!status || strcmp(status, "ok") != 0)
                cx_found(&f, "status", "complete_reply status is not 'ok'");
        if (!cx_string_array(matches))
                cx_found(&f, "matches", "matches is not a list of strings");
        else if (!in_matches)
                cx_found(&f, "no_match", "'%s' is not among the %zu matches", match, json_object_array_length(matches));
        /* Optionally the whole set, as jupyter_kernel_test's completion_samples compare it. */
        json_object *want_set = kb_json_get(s, "matches");
        if (cx_string_array(want_set) && cx_string_array(matches) && !same_set(want_set, matches))
                cx_found(&f, "match_set", "the matches are not exactly the pack's set of %zu",
                         json_object_array_length(want_set));
        if (!cursors || start < 0 || start > end || end > pos)
                cx_found(&f, "cursor", "cursor_start/cursor_end (%lld, %lld) not within 0..%d", (long long) start,
                         (long long) end, pos);
        if (f.n > 0)
                cx_judge(x, id, t0, ev, &f);
        else
                cx_pass(x, id, t0, ev, "'%s' among %zu matches, cursor %lld..%lld of %d", match,
                        json_object_array_length(matches), (long long) start, (long long) end, pos);
        json_object_put(reply);
}

static void check_inspect(cx *x) {
        const char *id = "inspect";
        if (!cx_can_run(x, id))
                return;
        json_object *s = cx_snippet(x, id, "inspect", false);
        if (!s)
                return;
        const char *code = kb_json_str(s, "code");
        if (!code) {
                cx_untested(x, id, "the inspect snippet has no \"code\"");
                return;
        }
        int64_t t0 = kb_now_ms();
        json_object *content = json_object_new_object(), *reply = NULL;
        json_object_object_add(content, "code", json_object_new_string(code));
        json_object_object_add(content, "cursor_pos", json_object_new_int(cx_code_points(code)));
        json_object_object_add(content, "detail_level", json_object_new_int(0));
        int r = cx_request(x, "inspect_request", content, &reply);
        if (r < 0) {
                cx_problem(x, id, t0, NULL, r == -ETIMEDOUT ? "no_reply" : "wait", "inspect_request: %s",
                           kb_harness_wait_error(&x->h, r));
                return;
        }
        json_object *is_found = kb_json_get(reply, "found"), *data = kb_json_get(reply, "data");
        const char *plain = kb_json_str(data, "text/plain"), *status = kb_json_str(reply, "status");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "found", is_found ? json_object_get(is_found) : NULL);
        json_object_object_add(ev, "text_plain_bytes", json_object_new_int(plain ? (int) strlen(plain) : -1));
        findings f = {.n = 0};
        if (!status || strcmp(status, "ok") != 0)
                cx_found(&f, "status", "inspect_reply status is not 'ok'");
        if (!is_found || !json_object_is_type(is_found, json_type_boolean) || !json_object_get_boolean(is_found))
                cx_found(&f, "not_found", "'%s' was not found", code);
        else if (!plain || !*plain)
                cx_found(&f, "no_data", "found, but data has no text/plain");
        if (f.n > 0)
                cx_judge(x, id, t0, ev, &f);
        else
                cx_pass(x, id, t0, ev, "'%s' found, %zu bytes of text/plain", code, strlen(plain));
        json_object_put(reply);
}

static void check_comm_info(cx *x) {
        const char *id = "comm_info";
        if (!cx_can_run(x, id))
                return;
        int64_t t0 = kb_now_ms();
        json_object *reply = NULL;
        int r = cx_request(x, "comm_info_request", json_object_new_object(), &reply);
        if (r < 0) {
                cx_problem(x, id, t0, NULL, r == -ETIMEDOUT ? "no_reply" : "wait", "comm_info_request: %s",
                           kb_harness_wait_error(&x->h, r));
                return;
        }
        json_object *comms = kb_json_get(reply, "comms");
        const char *status = kb_json_str(reply, "status");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "reply_keys", json_object_new_array());
        json_object_object_foreach(reply, key, value) {
                (void) value;
                json_object_array_add(kb_json_get(ev, "reply_keys"), json_object_new_string(key));
        }
        findings f = {.n = 0};
        if (!status || strcmp(status, "ok") != 0)
                cx_found(&f, "status", "comm_info_reply status is not 'ok'");
        if (!comms || !json_object_is_type(comms, json_type_object))
                cx_found(&f, "comms_shape", "comm_info_reply has no top-level \"comms\" object");
        if (f.n > 0)
                cx_judge(x, id, t0, ev, &f);
        else
                cx_pass(x, id, t0, ev, "comms object with %d open comm(s)", json_object_object_length(comms));
        json_object_put(reply);
}

/* ---- interrupts ---- */

static void check_interrupt_idle(cx *x) {
        const char *id = "interrupt.idle";
        if (!cx_can_run(x, id))
                return;
        int64_t t0 = kb_now_ms();
        _cleanup_free_ char *status = NULL;
        int r = kb_client_interrupt(kb_kernel_client(x->h.kernel),
                                    kb_harness_deadline_in(&x->h, CONTROL_REPLY_TIMEOUT_MS), &status);
        json_object *after = NULL;
        /* Whatever the kernel did with it, it must still answer. */
        int a = r == 0 || r == -ETIMEDOUT ? cx_request(x, "kernel_info_request", NULL, &after) : r;
        json_object_put(after);
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "interrupt_reply", r == 0 ? json_object_new_string(status) : NULL);
        json_object_object_add(ev, "answers_afterwards", json_object_new_boolean(a == 0));
        findings f = {.n = 0};
        if (r < 0 && r != -ETIMEDOUT)
                cx_found(&f, "wait", "interrupt_request: %s", kb_harness_wait_error(&x->h, r));
        else {
                if (r == -ETIMEDOUT)
                        cx_found(&f, "no_reply", "no interrupt_reply on control within %d ms",
                                 CONTROL_REPLY_TIMEOUT_MS);
                else if (*status && strcmp(status, "ok") != 0)
                        cx_found(&f, "status", "interrupt_reply status '%s'", status);
                if (a < 0)
                        cx_found(&f, "dead_after", "after interrupt_request while idle, kernel_info_request: %s",
                                 kb_harness_wait_error(&x->h, a));
        }
        if (f.n > 0) {
                if (!ignored_control_interrupt(x, id, t0, ev, &f))
                        cx_judge(x, id, t0, ev, &f);
        } else
                cx_pass(x, id, t0, ev,
                        "interrupt_reply on control while idle (status %s); the kernel answers afterwards",
                        *status ? status : "absent");
}

static bool cell_completed(const kb_execution *ex) {
        json_object *result = NULL;
        if (kb_probe_result(ex, &result) < 0)
                return false;
        json_object *done = kb_json_get(result, "completed");
        bool completed = done && json_object_is_type(done, json_type_boolean) && json_object_get_boolean(done);
        json_object_put(result);
        return completed;
}

/* Starts the language pack's long cell and waits for its marker. Returns 0 and *ret_ex, or records
 * the item and returns < 0. */
static int start_long(cx *x, const char *id, int64_t t0, kb_execution **ret_ex) {
        if (!x->lp) {
                cx_untested(x, id, "%s", x->no_snippets);
                return -ENOENT;
        }
        char marker[64], nonce[17];
        if (kb_random_hex(nonce, 8) < 0)
                return -EIO;
        snprintf(marker, sizeof(marker), "kbound-conformance-%s", nonce);
        json_object *params = json_object_new_object();
        json_object_object_add(params, "marker", json_object_new_string(marker));
        json_object_object_add(params, "seconds",
                               json_object_new_int(x->env->long_cell_seconds > 0 ? x->env->long_cell_seconds : 60));
        _cleanup_free_ char *code = NULL;
        int r = kb_langpack_render(x->lp, "long", params, &code);
        json_object_put(params);
        if (r < 0) {
                cx_untested(x, id, "the language pack %s has no usable \"long\" cell (%s)", kb_langpack_dir(x->lp),
                            strerror(-r));
                return r;
        }
        kb_execution *ex = NULL;
        r = kb_harness_long_start(&x->h, code, marker, &ex);
        if (r != 1) {
                cx_problem(x, id, t0, NULL, "no_marker", "the long cell never printed its start marker (%s)",
                           r == 0 ? "it finished first" : kb_harness_wait_error(&x->h, r));
                return r < 0 ? r : -EPROTO;
        }
        *ret_ex = ex;
        return 0;
}

/* Waits for an interrupted cell's reply; 0 when it came. */
static int wait_stopped(cx *x, kb_execution *ex, int ms) {
        int r = kb_client_execute_wait(kb_kernel_client(x->h.kernel), ex, kb_harness_deadline_in(&x->h, ms), NULL,
                                       NULL);
        return r == 0 && ex->got_reply ? 0 : r == 0 ? -ETIMEDOUT : r;
}

/* A cell that the interrupt did not stop is stopped through the other path, so the remaining
 * items can run; if nothing stops it, the kernel is wedged. */
static void unblock(cx *x, kb_execution *ex, bool by_signal, json_object *ev) {
        if (by_signal)
                (void) kb_kernel_signal(x->h.kernel, SIGINT);
        else
                (void) kb_client_interrupt(kb_kernel_client(x->h.kernel),
                                           kb_harness_deadline_in(&x->h, CONTROL_REPLY_TIMEOUT_MS), NULL);
        int u = wait_stopped(x, ex, cx_item_ms(x));
        json_object_object_add(ev, "unblocked_by_other_path", json_object_new_boolean(u == 0));
        if (u == -ESRCH || u == -ECANCELED)
                (void) kb_harness_wait_error(&x->h, u);
        else if (u != 0)
                x->h.wedged = true;
}

static void check_interrupt_busy(cx *x, bool by_signal) {
        const char *id = by_signal ? "interrupt.signal" : "interrupt.control";
        if (!cx_can_run(x, id))
                return;
        int64_t t0 = kb_now_ms();
        kb_execution *ex = NULL;
        if (start_long(x, id, t0, &ex) < 0)
                return;
        kb_client *c = kb_kernel_client(x->h.kernel);
        json_object *ev = json_object_new_object();
        int64_t sent = kb_now_ms();
        _cleanup_free_ char *reply_status = NULL;
        int sr = by_signal ? kb_kernel_signal(x->h.kernel, SIGINT)
                           : kb_client_interrupt(c, kb_harness_deadline_in(&x->h, CONTROL_REPLY_TIMEOUT_MS),
                                                 &reply_status);
        if (!by_signal)
                json_object_object_add(ev, "interrupt_reply", sr == 0 ? json_object_new_string(reply_status) : NULL);
        int wait_ms = !by_signal && sr == -ETIMEDOUT ? CONTROL_GRACE_MS : cx_item_ms(x);
        int r = sr == 0 || sr == -ETIMEDOUT ? wait_stopped(x, ex, wait_ms) : sr;
        bool stopped = r == 0 && !cell_completed(ex);
        if (r == 0) {
                json_object_object_add(ev, "execute_reply_status", json_object_new_string(ex->status));
                json_object_object_add(ev, "latency_ms", json_object_new_int64(ex->reply_ms - sent));
                json_object_object_add(ev, "iopub_error",
                                       json_object_new_boolean(json_object_array_length(ex->errors) > 0));
        }
        /* Every problem is named on its own, so a known deviation (IRkernel: no reply on control,
         * the cell runs on) never hides another (the cell could not be stopped at all). */
        findings f = {.n = 0};
        if (r == -ESRCH || r == -ECANCELED) {
                cx_found(&f, "wait", "while waiting for the interrupted cell: %s", kb_harness_wait_error(&x->h, r));
        } else {
                if (!by_signal && sr == -ETIMEDOUT)
                        cx_found(&f, "no_reply", "no interrupt_reply within %d ms", CONTROL_REPLY_TIMEOUT_MS);
                if (!stopped) {
                        if (r != 0)
                                unblock(x, ex, !by_signal, ev);
                        if (r == 0)
                                cx_found(&f, "not_stopped", "the cell ran to completion");
                        else
                                cx_found(&f, "not_stopped", "the cell kept running %d ms after the interrupt", wait_ms);
                        if (x->h.wedged)
                                cx_found(&f, "unstoppable", "the other path did not stop it either");
                } else if (strcmp(ex->status, "error") != 0) {
                        cx_found(&f, strcmp(ex->status, "abort") == 0 ? "abort_status" : "status",
                                 "the interrupted cell's execute_reply status is '%s', expected 'error'", ex->status);
                } else if (json_object_array_length(ex->errors) == 0) {
                        /* Only asked of an 'error' reply: an aborted cell has no error to publish. */
                        cx_found(&f, "no_iopub_error", "execute_reply status 'error' but no iopub error message");
                }
        }
        if (f.n > 0) {
                if (by_signal || !ignored_control_interrupt(x, id, t0, ev, &f))
                        cx_judge(x, id, t0, ev, &f);
        } else {
                cx_pass(x, id, t0, ev, "%s stopped the running cell: status 'error'%s%s after %lld ms",
                        by_signal ? "SIGINT through the pinned pidfd" : "interrupt_request on control",
                        ex->ename ? ", " : "", ex->ename ? ex->ename : "", (long long) (ex->reply_ms - sent));
        }
        kb_execution_destroy(c, &ex);
}

/* ---- shutdown ---- */

static void check_shutdown(cx *x) {
        const char *id = "shutdown";
        if (!cx_can_run(x, id))
                return;
        int64_t t0 = kb_now_ms();
        json_object *content = json_object_new_object();
        json_object_object_add(content, "restart", json_object_new_boolean(0));
        kb_msg *reply = NULL;
        int r = kb_client_request(kb_kernel_client(x->h.kernel), KB_CHANNEL_CONTROL, "shutdown_request", content,
                                  kb_harness_deadline_in(&x->h, cx_item_ms(x)), &reply);
        if (r < 0) {
                cx_problem(x, id, t0, NULL, r == -ETIMEDOUT ? "no_reply" : "wait", "shutdown_request on control: %s",
                           kb_harness_wait_error(&x->h, r));
                return;
        }
        json_object *restart = kb_json_get(reply->content, "restart");
        const char *status = kb_msg_content_string(reply, "status");
        struct pollfd p = {.fd = kb_kernel_pidfd(x->h.kernel), .events = POLLIN};
        int exited = poll(&p, 1, SHUTDOWN_EXIT_MS) > 0;
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "restart", restart ? json_object_get(restart) : NULL);
        json_object_object_add(ev, "status", cx_jstring_or_null(status));
        json_object_object_add(ev, "exited", json_object_new_boolean(exited));
        findings f = {.n = 0};
        if (!restart || !json_object_is_type(restart, json_type_boolean) || json_object_get_boolean(restart))
                cx_found(&f, "restart", "shutdown_reply does not echo restart: false");
        if (status && strcmp(status, "ok") != 0)
                cx_found(&f, "status", "shutdown_reply status '%s'", status);
        if (!exited)
                cx_found(&f, "no_exit", "the kernel process did not exit within %d ms of its shutdown_reply",
                         SHUTDOWN_EXIT_MS);
        if (f.n > 0)
                cx_judge(x, id, t0, ev, &f);
        else
                cx_pass(x, id, t0, ev, "shutdown_reply echoes restart: false (status %s) and the process exited",
                        status ? status : "absent");
        kb_msg_destroy(&reply);
}

/* ---- the sequence ---- */

/* Every item not run yet gets a failing check naming why, so no report is missing one. */
static void fill_missing(cx *x, const char *why) {
        for (size_t i = 0; items[i]; i++) {
                bool have = false;
                for (size_t j = 0; j < json_object_array_length(x->h.checks) && !have; j++)
                        have = strcmp(kb_json_str(json_object_array_get_idx(x->h.checks, j), "id"), items[i]) == 0;
                if (!have)
                        cx_problem(x, items[i], 0, NULL, "not_run", "not run: %s", why);
        }
}

int kb_conformance_run(const kb_conformance_env *env, const kb_kernelspec *spec, const char *team, json_object **ret,
                       kb_check_outcome *ret_outcome) {
        cx x = {
                .env = env,
                .spec = spec,
                .h =
                        {
                                .spec = spec,
                                .log = env->harness.log,
                                .log_userdata = env->harness.log_userdata,
                                .deadline_ms = env->harness.deadline_ms,
                                .started_ms = kb_now_ms(),
                        },
        };
        kb_check_outcome outcome = KB_CHECK_DONE;
        _cleanup_free_ char *diagnosis = NULL;
        x.h.k = kb_report_kernel_new(spec, team);
        x.shape_types = json_object_new_object();
        x.shape_problems = json_object_new_object();
        x.watched = json_object_new_array();
        x.stdin_msgs = json_object_new_array();
        if (!x.h.k || !x.shape_types || !x.shape_problems || !x.watched || !x.stdin_msgs) {
                json_object_put(x.h.k);
                json_object_put(x.shape_types);
                json_object_put(x.shape_problems);
                json_object_put(x.watched);
                json_object_put(x.stdin_msgs);
                return -ENOMEM;
        }
        json_object_object_get_ex(x.h.k, "checks", &x.h.checks);

        /* Snippets are data: a language without them still gets every language-independent item. */
        const char *lang = spec->language ? spec->language : "";
        int r = kb_langpack_find(env->harness.kernels_dir, lang, &x.lp);
        if (r < 0)
                snprintf(x.no_snippets, sizeof(x.no_snippets),
                         "no language pack for '%s' in %s (%s): add kernels/<language>/kbound.json with a "
                         "\"conformance\" member to test this item",
                         lang, env->harness.kernels_dir, r == -ENOENT ? "none matches" : strerror(-r));
        else if (!(x.snippets = kb_langpack_get(x.lp, "conformance")) ||
                 !json_object_is_type(x.snippets, json_type_object)) {
                x.snippets = NULL;
                snprintf(x.no_snippets, sizeof(x.no_snippets), "the language pack %s has no \"conformance\" snippets",
                         kb_langpack_dir(x.lp));
        }

        kb_harness_phase(&x.h, "starting in bubblewrap as team %s", team);
        kb_kernel_options ko = kb_harness_kernel_options(&x.h, &env->harness, team, 60000);
        /* Every message passes conformance's hook (messages.shape, comms, stdin), which hands it
         * on to the caller's. */
        ko.on_msg = cx_on_msg;
        ko.on_msg_userdata = &x;
        r = kb_harness_start(&x.h, &ko, &diagnosis);
        if (r < 0) {
                const char *why = diagnosis ? diagnosis : strerror(-r);
                char buf[1024];
                snprintf(buf, sizeof(buf), "cannot start in the sandbox: %s", why);
                json_object_object_add(x.h.k, "error", json_object_new_string(buf));
                kb_harness_log(&x.h, KB_LOG_ERROR, "%s", buf);
                /* The run's own deadline ending start-up makes the run incomplete (exit 1), not a
                 * kernel that cannot be tested (docs/faults.md). */
                bool deadline = kb_harness_deadline_passed(&x.h);
                outcome = r == -ECANCELED || deadline  ? KB_CHECK_CANCELLED
                          : r == -EPERM || r == -EXDEV ? KB_CHECK_DONE
                                                       : KB_CHECK_NOT_ENFORCED;
                fill_missing(&x, "the kernel could not be started");
                goto done;
        }
        json_object *info = kb_kernel_info(x.h.kernel);
        snprintf(x.implementation, sizeof(x.implementation), "%s", kb_json_str(info, "implementation") ?: "?");
        json_object *devs = x.lp ? kb_langpack_get(x.lp, "deviations") : NULL;
        x.deviations = kb_json_get(devs, x.implementation);

        check_kernel_info(&x);
        check_heartbeat(&x);
        check_stream(&x, "execute.stdout", "stdout");
        check_ordering(&x);
        check_stream(&x, "execute.stderr", "stderr");
        check_result(&x);
        check_display(&x);
        cx_check_update_display(&x);
        cx_check_clear_output(&x);
        cx_check_pager(&x);
        check_error(&x);
        check_counts(&x);
        check_silent(&x);
        cx_check_stdin(&x);
        cx_check_stdin_not_allowed(&x);
        check_is_complete(&x, "complete");
        check_is_complete(&x, "incomplete");
        check_is_complete(&x, "invalid");
        check_complete(&x);
        check_inspect(&x);
        cx_check_history_tail(&x);
        cx_check_history_output(&x);
        cx_check_history_range(&x);
        cx_check_history_search(&x);
        check_comm_info(&x);
        cx_check_comm_open(&x);
        cx_check_comm_msg(&x);
        cx_check_comm_info_target(&x);
        cx_check_comm_close(&x);
        cx_check_comm_unknown_target(&x);
        cx_check_debug(&x);
        cx_check_subshells(&x);
        check_interrupt_idle(&x);
        check_interrupt_busy(&x, false);
        check_interrupt_busy(&x, true);
        check_shutdown(&x);
        cx_check_shape(&x);
        if (x.h.cancelled)
                outcome = KB_CHECK_CANCELLED;
        /* Items cut short by the run's deadline failed as timeouts; the run must also say it is
         * incomplete. */
        if (outcome == KB_CHECK_DONE && kb_harness_deadline_passed(&x.h))
                outcome = KB_CHECK_CANCELLED;

done:
        if (x.h.kernel) {
                kb_kernel_stop(x.h.kernel, 0, kb_now_ms() + 5000, NULL);
                kb_harness_record_messages(&x.h);
        }
        /* Last, while the key is still known: the whole kernel object is redacted. */
        kb_harness_redact(&x.h, &x.h.k);
        kb_kernel_destroy(&x.h.kernel, env->harness.keep);
        kb_langpack_destroy(&x.lp);
        json_object_put(x.stdout_seq);
        json_object_put(x.shape_types);
        json_object_put(x.shape_problems);
        json_object_put(x.watched);
        json_object_put(x.stdin_msgs);
        if (!x.h.k)
                return -ENOMEM;
        *ret = x.h.k;
        if (ret_outcome)
                *ret_outcome = outcome;
        return 0;
}

/* conformance_features.c: the protocol's features beyond execute and kernel_info, as conformance
 * items: display updates, clear_output, pager payloads, stdin, the history access types, comms, the
 * debugger and subshells. Each item checks what the messaging spec says; the code it runs is
 * language-pack data, and a feature the spec makes optional is "unsupported" (with the reason)
 * when the kernel or its language lacks it, never a failure for that alone. */
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "run/conformance-internal.h"
#include "base/cleanup.h"

#define HISTORY_SCAN_MAX 1000 /* entries searched for duplicates */

/* ---- outputs ---- */

/* display_data whose transient.display_id is D, then update_display_data for D (protocol 5.1). */
static void judge_update_display(cx *x, const char *id, json_object *s, int64_t t0, kb_execution *ex,
                                 json_object *seq) {
        (void) s;
        const char *display_id = NULL, *update_id = NULL;
        bool display = false, update = false, update_first = false;
        for (size_t i = 0; i < json_object_array_length(seq); i++) {
                json_object *e = json_object_array_get_idx(seq, i);
                const char *type = kb_json_str(e, "msg_type");
                const char *did = kb_json_str(kb_json_get(kb_json_get(e, "content"), "transient"), "display_id");
                if (strcmp(type, "display_data") == 0) {
                        display = true;
                        if (!display_id)
                                display_id = did;
                } else if (strcmp(type, "update_display_data") == 0) {
                        update_first |= !display;
                        if (!update)
                                update_id = did;
                        update = true;
                }
        }
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "iopub", cx_seq_types(seq));
        json_object_object_add(ev, "display_id", cx_jstring_or_null(display_id));
        json_object_object_add(ev, "update_display_id", cx_jstring_or_null(update_id));
        findings f = {.n = 0};
        if (strcmp(ex->status, "ok") != 0)
                cx_found(&f, "status", "execute_reply status '%s', expected 'ok'", ex->status);
        if (!display)
                cx_found(&f, "no_display", "no display_data on iopub");
        else if (!display_id)
                cx_found(&f, "no_display_id", "the display_data has no transient.display_id");
        if (!update)
                cx_found(&f, "missing", "no update_display_data on iopub");
        else if (!update_id)
                cx_found(&f, "display_id", "the update_display_data has no transient.display_id (the spec: it must)");
        else if (display_id && strcmp(display_id, update_id) != 0)
                cx_found(&f, "display_id", "update_display_data names display_id '%s', the display was '%s'", update_id,
                         display_id);
        if (update_first)
                cx_found(&f, "order", "update_display_data came before the display_data it updates");
        cx_verdict(x, id, t0, ev, &f, "display_data named '%s' (transient.display_id), then update_display_data for it",
                   display_id ?: "");
}

void cx_check_update_display(cx *x) {
        cx_snippet_item(x, cx_item_id(x), "update_display_data", true, judge_update_display);
}

static void judge_clear_output(cx *x, const char *id, json_object *s, int64_t t0, kb_execution *ex, json_object *seq) {
        (void) s;
        json_object *clear = cx_seq_find(seq, "clear_output");
        json_object *wait = kb_json_get(clear, "wait");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "iopub", cx_seq_types(seq));
        findings f = {.n = 0};
        if (strcmp(ex->status, "ok") != 0)
                cx_found(&f, "status", "execute_reply status '%s', expected 'ok'", ex->status);
        if (!clear)
                cx_found(&f, "missing", "no clear_output on iopub");
        else if (!wait || !json_object_is_type(wait, json_type_boolean))
                cx_found(&f, "wait", "clear_output's wait is not a boolean");
        cx_verdict(x, id, t0, ev, &f, "clear_output (wait: %s) on iopub",
                   wait && json_object_get_boolean(wait) ? "true" : "false");
}

void cx_check_clear_output(cx *x) {
        cx_snippet_item(x, cx_item_id(x), "clear_output", true, judge_clear_output);
}

/* A page payload (deprecated, still in the spec): exactly one payload, source "page", its data a
 * MIME bundle that "must include text/plain" (jupyter_kernel_test's test_pager asks the same). */
static void judge_pager(cx *x, const char *id, json_object *s, int64_t t0, kb_execution *ex, json_object *seq) {
        (void) s;
        json_object *payload = kb_json_get(ex->reply, "payload");
        json_object *page = NULL, *sources = json_object_new_array(), *mimes = json_object_new_array();
        size_t n = payload && json_object_is_type(payload, json_type_array) ? json_object_array_length(payload) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *p = json_object_array_get_idx(payload, i);
                json_object_array_add(sources, cx_jstring_or_null(kb_json_str(p, "source")));
                if (!page && strcmp(kb_json_str(p, "source") ?: "", "page") == 0)
                        page = p;
        }
        json_object *data = kb_json_get(page, "data");
        if (data && json_object_is_type(data, json_type_object)) {
                json_object_object_foreach(data, mime, v) {
                        (void) v;
                        json_object_array_add(mimes, json_object_new_string(mime));
                }
        }
        const char *plain = kb_json_str(data, "text/plain");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "payload_sources", sources);
        json_object_object_add(ev, "page_mime_types", mimes);
        findings f = {.n = 0};
        if (strcmp(ex->status, "ok") != 0)
                cx_found(&f, "status", "execute_reply status '%s', expected 'ok'", ex->status);
        if (!payload || !json_object_is_type(payload, json_type_array))
                cx_found(&f, "no_payload", "execute_reply has no payload list");
        else if (n != 1)
                cx_found(&f, "payload_count", "%zu payload entries, expected exactly one (the page)", n);
        if (n > 0 && !page)
                cx_found(&f, "source", "no payload entry has source 'page'");
        else if (page && (!plain || !*plain))
                cx_found(&f, "no_text_plain", "the page's data has no text/plain (the spec: it must)");
        cx_verdict(x, id, t0, ev, &f,
                   "execute_reply carries one page payload with text/plain (%zu bytes) among %zu "
                   "MIME type(s)",
                   plain ? strlen(plain) : 0, json_object_array_length(mimes));
}

void cx_check_pager(cx *x) {
        cx_snippet_item(x, cx_item_id(x), "pager", true, judge_pager);
}

/* ---- stdin ---- */

/* Runs code with allow_stdin as asked, without storing history, and answers the first
 * input_request that arrives while it runs with value (so that a kernel asking although it was
 * not allowed to still finishes the cell). *ret_request gets that input_request (a new reference:
 * {parent, msg_type, content}) or NULL, *ret_parent_ok whether its parent is the execute_request.
 * Returns the wait's result; on 0, *ret_ex. */
static int run_with_stdin(cx *x, const char *code, bool allow, const char *value, kb_execution **ret_ex,
                          json_object **ret_request, bool *ret_parent_ok) {
        kb_client *c = kb_kernel_client(x->h.kernel);
        kb_execute_options eo = {.store_history = false, .stop_on_error = false, .allow_stdin = allow};
        kb_execution *ex = NULL;
        size_t before = json_object_array_length(x->stdin_msgs);
        int64_t deadline = kb_harness_deadline_in(&x->h, cx_item_ms(x));
        json_object *request = NULL;
        int r = kb_client_execute_start(c, code, &eo, &ex);
        while (r >= 0 && !request && !ex->got_reply) {
                for (size_t i = before; !request && i < json_object_array_length(x->stdin_msgs); i++) {
                        json_object *e = json_object_array_get_idx(x->stdin_msgs, i);
                        if (strcmp(kb_json_str(e, "msg_type") ?: "", "input_request") == 0)
                                request = json_object_get(e);
                }
                if (request)
                        break;
                if (kb_ms_left(deadline) == 0) {
                        r = -ETIMEDOUT;
                        break;
                }
                r = kb_client_poll(c, deadline);
        }
        *ret_parent_ok = request && ex && strcmp(kb_json_str(request, "parent") ?: "", ex->msg_id) == 0;
        if (r >= 0 && request) {
                json_object *reply = json_object_new_object();
                json_object_object_add(reply, "value", json_object_new_string(value));
                _cleanup_free_ char *reply_id = NULL;
                r = kb_client_request_send(c, KB_CHANNEL_STDIN, "input_reply", reply, &reply_id);
        }
        if (r >= 0)
                r = kb_client_execute_wait(c, ex, deadline, NULL, NULL);
        if (r >= 0 && !ex->got_reply)
                r = -ETIMEDOUT;
        if (r == -ETIMEDOUT && ex) {
                /* A cell waiting for input nobody sends blocks every later item: SIGINT through the
                 * pidfd ends it, or the kernel is wedged. The item still fails as timed out. */
                (void) kb_kernel_signal(x->h.kernel, SIGINT);
                int u = kb_client_execute_wait(c, ex, kb_harness_deadline_in(&x->h, cx_item_ms(x)), NULL, NULL);
                if (u == -ESRCH || u == -ECANCELED)
                        (void) kb_harness_wait_error(&x->h, u);
                else if (u != 0 || !ex->got_reply)
                        x->h.wedged = true;
        }
        if (r < 0)
                kb_execution_destroy(c, &ex);
        else
                *ret_ex = ex;
        *ret_request = request;
        return r;
}

static json_object *input_snippet(cx *x, const char *id, const char **ret_code, const char **ret_prompt) {
        json_object *s = cx_snippet(x, id, "input", true);
        if (!s)
                return NULL;
        *ret_code = kb_json_str(s, "code");
        *ret_prompt = kb_json_str(s, "prompt");
        if (!*ret_code || !*ret_prompt) {
                cx_untested(x, id, "the language pack's input snippet needs \"code\" and \"prompt\"");
                return NULL;
        }
        return s;
}

/* With allow_stdin true, input() in the kernel's language sends input_request (prompt, password
 * false) on stdin with the execute_request as parent, and the value kbound answers with
 * input_reply reaches the cell. */
void cx_check_stdin(cx *x) {
        const char *id = cx_item_id(x);
        const char *code = NULL, *prompt = NULL;
        if (!cx_can_run(x, id) || !input_snippet(x, id, &code, &prompt))
                return;
        char nonce[17], value[40];
        if (kb_random_hex(nonce, 8) < 0) {
                cx_problem(x, id, 0, NULL, "random", "no randomness for the answer");
                return;
        }
        snprintf(value, sizeof(value), "kbound-answer-%s", nonce);
        int64_t t0 = kb_now_ms();
        kb_execution *ex = NULL;
        json_object *request = NULL;
        bool parent_ok = false;
        int r = run_with_stdin(x, code, true, value, &ex, &request, &parent_ok);
        json_object *content = kb_json_get(request, "content");
        const char *got_prompt = kb_json_str(content, "prompt");
        json_object *password = kb_json_get(content, "password");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "input_request", content ? json_object_get(content) : NULL);
        findings f = {.n = 0};
        if (!request)
                cx_found(&f, "no_request", "no input_request on stdin although allow_stdin was true");
        else {
                if (!parent_ok)
                        cx_found(&f, "parent", "the input_request's parent is not the execute_request");
                if (!got_prompt || strcmp(got_prompt, prompt) != 0)
                        cx_found(&f, "prompt", "input_request prompt is '%s', expected '%s'", got_prompt ?: "(none)",
                                 prompt);
                if (!password || !json_object_is_type(password, json_type_boolean) || json_object_get_boolean(password))
                        cx_found(&f, "password", "input_request password is not false");
        }
        if (r < 0)
                cx_found(&f, r == -ETIMEDOUT ? "no_reply" : "wait", "no complete execute_reply: %s",
                         kb_harness_wait_error(&x->h, r));
        else {
                json_object_object_add(ev, "execute_reply_status", json_object_new_string(ex->status));
                if (strcmp(ex->status, "ok") != 0)
                        cx_found(&f, "status", "execute_reply status '%s', expected 'ok'", ex->status);
                if (!ex->stdout_text || !strstr(ex->stdout_text, value))
                        cx_found(&f, "value_not_used", "the cell's output does not show the value kbound answered");
        }
        cx_verdict(x, id, t0, ev, &f,
                   "input_request (prompt '%s', password false) on stdin for the execute_request; "
                   "the value of kbound's input_reply reached the cell",
                   prompt);
        json_object_put(request);
        kb_execution_destroy(kb_kernel_client(x->h.kernel), &ex);
}

/* "If allow_stdin is False, the kernel must not send stdin_request." */
void cx_check_stdin_not_allowed(cx *x) {
        const char *id = cx_item_id(x);
        const char *code = NULL, *prompt = NULL;
        if (!cx_can_run(x, id) || !input_snippet(x, id, &code, &prompt))
                return;
        int64_t t0 = kb_now_ms();
        kb_execution *ex = NULL;
        json_object *request = NULL;
        bool parent_ok = false;
        int r = run_with_stdin(x, code, false, "", &ex, &request, &parent_ok);
        json_object *ev = json_object_new_object();
        findings f = {.n = 0};
        if (request)
                cx_found(&f, "input_request_when_not_allowed",
                         "the kernel sent input_request although the "
                         "execute_request said allow_stdin: false (kbound answered an empty line so the cell could "
                         "end)");
        if (r < 0)
                cx_found(&f, r == -ETIMEDOUT ? "no_reply" : "wait", "no complete execute_reply: %s",
                         kb_harness_wait_error(&x->h, r));
        else {
                json_object_object_add(ev, "execute_reply_status", json_object_new_string(ex->status));
                json_object_object_add(ev, "ename", cx_jstring_or_null(ex->ename));
        }
        cx_verdict(x, id, t0, ev, &f, "no input_request with allow_stdin false; the cell ended with status '%s'%s%s",
                   ex ? ex->status : "", ex && ex->ename ? " " : "", ex && ex->ename ? ex->ename : "");
        json_object_put(request);
        kb_execution_destroy(kb_kernel_client(x->h.kernel), &ex);
}

/* ---- history ---- */

/* One history entry: (session, line, input), or with output (session, line, (input, output)):
 * session and line integers, input a string, output a string or null (IPython keeps no output
 * unless told to). */
static bool entry_shape(json_object *e, bool with_output, int64_t *ret_session, int64_t *ret_line,
                        const char **ret_input) {
        if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 3)
                return false;
        json_object *session = json_object_array_get_idx(e, 0), *line = json_object_array_get_idx(e, 1);
        json_object *last = json_object_array_get_idx(e, 2), *input = last;
        if (!json_object_is_type(session, json_type_int) || !json_object_is_type(line, json_type_int))
                return false;
        if (with_output) {
                if (!json_object_is_type(last, json_type_array) || json_object_array_length(last) != 2)
                        return false;
                input = json_object_array_get_idx(last, 0);
                json_object *output = json_object_array_get_idx(last, 1);
                if (output && !json_object_is_type(output, json_type_string))
                        return false;
        }
        if (!json_object_is_type(input, json_type_string))
                return false;
        *ret_session = json_object_get_int64(session);
        *ret_line = json_object_get_int64(line);
        *ret_input = json_object_get_string(input);
        return true;
}

typedef struct history_read {
        json_object *history; /* borrowed from the reply */
        size_t n, bad;
        bool has_cell;         /* an entry's input is the stdout cell's code */
        int64_t session, line; /* that entry's */
} history_read;

/* Item id (started at t0) sends a history_request (content taken) and reads the reply into *h,
 * adding the problems every history item shares (status, shape, empty) to f. Returns 0 and the
 * reply (new reference), or the request's error with the item recorded as failed ("history_request
 * (pass)" when pass names one of several requests) and nothing added to f. */
static int ask_history(cx *x, const char *id, int64_t t0, const char *pass, json_object *content, bool with_output,
                       const char *code, history_read *h, findings *f, json_object **ret_reply) {
        const char *kind = kb_json_str(content, "hist_access_type") ?: "?";
        char what[32];
        snprintf(what, sizeof(what), "%s", kind);
        json_object *reply = NULL;
        int r = cx_request(x, "history_request", content, &reply);
        if (r < 0) {
                char request[64];
                snprintf(request, sizeof request, pass ? "history_request (%s)" : "history_request", pass);
                cx_request_failed(x, id, t0, NULL, r, request);
                return r;
        }
        *h = (history_read){.history = kb_json_get(reply, "history")};
        const char *status = kb_json_str(reply, "status");
        if (!status || strcmp(status, "ok") != 0)
                cx_found(f, "status", "history_reply (%s) status is not 'ok'", what);
        if (!h->history || !json_object_is_type(h->history, json_type_array)) {
                cx_found(f, "shape", "history_reply (%s) has no history list", what);
                *ret_reply = reply;
                return 0;
        }
        h->n = json_object_array_length(h->history);
        size_t first_bad = 0;
        for (size_t i = 0; i < h->n; i++) {
                int64_t session = 0, line = 0;
                const char *input = NULL;
                if (!entry_shape(json_object_array_get_idx(h->history, i), with_output, &session, &line, &input)) {
                        if (h->bad++ == 0)
                                first_bad = i;
                } else if (code && !h->has_cell && strcmp(input, code) == 0) {
                        h->has_cell = true;
                        h->session = session;
                        h->line = line;
                }
        }
        if (h->bad > 0)
                cx_found(f, "shape",
                         "%zu of %zu history entries (%s) are not (session, line, %s) with integer session "
                         "and line (entry %zu: %.80s)",
                         h->bad, h->n, what, with_output ? "(input, output)" : "input", first_bad + 1,
                         json_object_to_json_string_ext(json_object_array_get_idx(h->history, first_bad),
                                                        JSON_C_TO_STRING_PLAIN));
        else if (h->n == 0)
                cx_found(f, "empty_history", "history_reply (%s) is empty after cells that stored history", what);
        *ret_reply = reply;
        return 0;
}

static json_object *history_content(const char *kind, bool output) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "output", json_object_new_boolean(output));
        json_object_object_add(c, "raw", json_object_new_boolean(1));
        json_object_object_add(c, "hist_access_type", json_object_new_string(kind));
        return c;
}

/* The start of every history item: it can run and execute.stdout stored its cell. */
static const char *history_cell(cx *x, const char *id) {
        if (!cx_can_run(x, id))
                return NULL;
        json_object *s = cx_snippet(x, id, "stdout", false);
        if (!s)
                return NULL;
        const char *code = kb_json_str(s, "code");
        if (!x->stdout_ran || !code) {
                cx_problem(x, id, 0, NULL, "not_run", "not run: execute.stdout stored nothing to look for");
                return NULL;
        }
        return code;
}

static void history_tail(cx *x, const char *id, bool with_output) {
        const char *code = history_cell(x, id);
        if (!code)
                return;
        int64_t t0 = kb_now_ms();
        json_object *content = history_content("tail", with_output), *reply = NULL;
        json_object_object_add(content, "n", json_object_new_int(HISTORY_TAIL));
        history_read h;
        findings f = {.n = 0};
        if (ask_history(x, id, t0, NULL, content, with_output, code, &h, &f, &reply) < 0)
                return;
        if (h.n > 0 && h.bad == 0 && !h.has_cell)
                cx_found(&f, "missing_entry", "the stdout cell (stored in history) is not in the last %zu entries",
                         h.n);
        if (!with_output && h.has_cell) {
                x->hist_found = true;
                x->hist_session = h.session;
                x->hist_line = h.line;
        }
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "entries", json_object_new_int64((int64_t) h.n));
        if (h.has_cell) {
                json_object_object_add(ev, "session", json_object_new_int64(h.session));
                json_object_object_add(ev, "line", json_object_new_int64(h.line));
        }
        cx_verdict(x, id, t0, ev, &f,
                   "tail of %zu entries, each (session, line, %s) with integer session and line, "
                   "includes the stdout cell (session %lld, line %lld)",
                   h.n, with_output ? "(input, output)" : "input", (long long) h.session, (long long) h.line);
        json_object_put(reply);
}

void cx_check_history_tail(cx *x) {
        history_tail(x, cx_item_id(x), false);
}

void cx_check_history_output(cx *x) {
        history_tail(x, cx_item_id(x), true);
}

/* The cell history.tail found, asked for by range: exactly that one entry. Without it (an empty
 * or broken tail), session 0 (IPython's current session; the spec gives 0 no meaning) from line 1
 * on, which must hold the cell. */
void cx_check_history_range(cx *x) {
        const char *id = cx_item_id(x);
        const char *code = history_cell(x, id);
        if (!code)
                return;
        int64_t t0 = kb_now_ms();
        int64_t session = x->hist_found ? x->hist_session : 0, start = x->hist_found ? x->hist_line : 1;
        int64_t stop = x->hist_found ? start + 1 : start + HISTORY_TAIL;
        json_object *content = history_content("range", false), *reply = NULL;
        json_object_object_add(content, "session", json_object_new_int64(session));
        json_object_object_add(content, "start", json_object_new_int64(start));
        json_object_object_add(content, "stop", json_object_new_int64(stop));
        history_read h;
        findings f = {.n = 0};
        if (ask_history(x, id, t0, NULL, content, false, code, &h, &f, &reply) < 0)
                return;
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "session", json_object_new_int64(session));
        json_object_object_add(ev, "start", json_object_new_int64(start));
        json_object_object_add(ev, "stop", json_object_new_int64(stop));
        json_object_object_add(ev, "entries", json_object_new_int64((int64_t) h.n));
        if (h.n > 0 && h.bad == 0) {
                if (x->hist_found && h.n != 1)
                        cx_found(&f, "count", "range [%lld, %lld) of session %lld gave %zu entries, expected 1",
                                 (long long) start, (long long) stop, (long long) session, h.n);
                if (!h.has_cell)
                        cx_found(&f, "missing_entry", "the range does not hold the stdout cell");
                else if (x->hist_found && (h.session != session || h.line != start))
                        cx_found(&f, "entry", "the entry is (%lld, %lld), expected (%lld, %lld)", (long long) h.session,
                                 (long long) h.line, (long long) session, (long long) start);
        }
        cx_verdict(x, id, t0, ev, &f, "range [%lld, %lld) of session %lld gave the stdout cell%s", (long long) start,
                   (long long) stop, (long long) session, x->hist_found ? " alone, as history.tail placed it" : "");
        json_object_put(reply);
}

/* The stdout cell's code up to its first glob character, then "*": a pattern that matches it. */
static void glob_for(const char *code, char *buf, size_t size) {
        size_t n = strcspn(code, "*?[");
        snprintf(buf, size, "%.*s*", (int) (n < size - 2 ? n : size - 2), code);
}

/* search: every entry matches the pattern (a glob, * and ?), the stdout cell is among them;
 * with unique no input twice; with n at most n entries. */
void cx_check_history_search(cx *x) {
        const char *id = cx_item_id(x);
        const char *code = history_cell(x, id);
        if (!code)
                return;
        char pattern[128];
        glob_for(code, pattern, sizeof(pattern));
        int64_t t0 = kb_now_ms();
        findings f = {.n = 0};
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "pattern", json_object_new_string(pattern));
        const char *names[] = {"search", "search_unique", "search_n1"};
        bool empty = false;
        for (int pass_no = 0; pass_no < 3 && !empty; pass_no++) {
                json_object *content = history_content("search", false), *reply = NULL;
                json_object_object_add(content, "pattern", json_object_new_string(pattern));
                if (pass_no == 1)
                        json_object_object_add(content, "unique", json_object_new_boolean(1));
                if (pass_no == 2)
                        json_object_object_add(content, "n", json_object_new_int(1));
                history_read h;
                size_t before = f.n;
                if (ask_history(x, id, t0, names[pass_no], content, false, code, &h, &f, &reply) < 0) {
                        json_object_put(ev);
                        return;
                }
                json_object_object_add(ev, names[pass_no], json_object_new_int64((int64_t) h.n));
                empty = h.n == 0 || f.n > before; /* the shared problems are said once */
                for (size_t i = 0; !empty && i < h.n; i++) {
                        json_object *e = json_object_array_get_idx(h.history, i);
                        const char *input = json_object_get_string(json_object_array_get_idx(e, 2));
                        /* No escapes: like a glob in IPython's history search (SQLite GLOB), a
                         * backslash is itself (R code has them). */
                        if (fnmatch(pattern, input, FNM_NOESCAPE) != 0) {
                                cx_found(&f, "no_match", "search for '%s' returned an entry that does not match it",
                                         pattern);
                                break;
                        }
                        /* Pairs compared only among the first entries: a kernel's list may be long. */
                        for (size_t j = 0; pass_no == 1 && i < HISTORY_SCAN_MAX && j < i; j++)
                                if (strcmp(input, json_object_get_string(json_object_array_get_idx(
                                                          json_object_array_get_idx(h.history, j), 2))) == 0) {
                                        cx_found(&f, "duplicates",
                                                 "search with unique: true returned the same input twice");
                                        i = h.n;
                                        break;
                                }
                }
                if (!empty && pass_no == 0 && !h.has_cell)
                        cx_found(&f, "missing_entry", "search for '%s' did not return the stdout cell", pattern);
                if (!empty && pass_no == 2 && h.n > 1)
                        cx_found(&f, "n_ignored", "search with n: 1 returned %zu entries", h.n);
                json_object_put(reply);
        }
        cx_verdict(x, id, t0, ev, &f,
                   "search for '%s' returned the stdout cell, only matching entries; unique: true "
                   "no input twice; n: 1 at most one entry",
                   pattern);
}

/* ---- comms ---- */

/* The pack's comm snippet: code that registers target "target", whose handler answers the
 * comm_open and every comm_msg with a comm_msg {"echo": <the data it got>}. Optional items: a
 * language without comms says so in the pack. */
static const char *comm_target(cx *x, const char *id, const char **ret_code) {
        json_object *s = cx_snippet(x, id, "comm", true);
        if (!s)
                return NULL;
        const char *target = kb_json_str(s, "target");
        *ret_code = kb_json_str(s, "code");
        if (!target || !*ret_code) {
                cx_untested(x, id, "the language pack's comm snippet needs \"code\" and \"target\"");
                return NULL;
        }
        return target;
}

/* The comm_msg in msgs for comm_id echoing {"kbound": nonce}. */
static bool echoed(json_object *msgs, const char *comm_id, const char *nonce) {
        for (size_t i = 0; i < json_object_array_length(msgs); i++) {
                json_object *e = json_object_array_get_idx(msgs, i), *c = kb_json_get(e, "content");
                if (strcmp(kb_json_str(e, "msg_type") ?: "", "comm_msg") == 0 &&
                    strcmp(kb_json_str(c, "comm_id") ?: "", comm_id) == 0 &&
                    strcmp(kb_json_str(kb_json_get(kb_json_get(c, "data"), "echo"), "kbound") ?: "", nonce) == 0)
                        return true;
        }
        return false;
}

static bool sent_for(json_object *msgs, const char *msg_type, const char *comm_id) {
        for (size_t i = 0; i < json_object_array_length(msgs); i++) {
                json_object *e = json_object_array_get_idx(msgs, i);
                if (strcmp(kb_json_str(e, "msg_type") ?: "", msg_type) == 0 &&
                    (!comm_id || strcmp(kb_json_str(kb_json_get(e, "content"), "comm_id") ?: "", comm_id) == 0))
                        return true;
        }
        return false;
}

static bool status_seen(json_object *msgs, const char *state) {
        for (size_t i = 0; i < json_object_array_length(msgs); i++) {
                json_object *e = json_object_array_get_idx(msgs, i);
                if (strcmp(kb_json_str(e, "msg_type") ?: "", "status") == 0 &&
                    strcmp(kb_json_str(kb_json_get(e, "content"), "execution_state") ?: "", state) == 0)
                        return true;
        }
        return false;
}

/* Sends a comm message (content taken) and waits for its idle; *ret_msgs gets what the kernel
 * published for it (new array). Adds no_idle / no_busy to f; returns the wait's result. */
static int comm_send(cx *x, const char *msg_type, json_object *content, findings *f, json_object **ret_msgs) {
        char mid[64] = "";
        int r = cx_send_watched(x, msg_type, content, mid);
        if (r >= 0)
                r = cx_wait_idle(x, mid, kb_harness_deadline_in(&x->h, cx_item_ms(x)));
        *ret_msgs = cx_watched(x, mid);
        if (r < 0)
                cx_found(f, r == -ETIMEDOUT ? "no_idle" : "wait", "no idle status for the %s: %s", msg_type,
                         kb_harness_wait_error(&x->h, r));
        else if (!status_seen(*ret_msgs, "busy"))
                cx_found(f, "no_busy",
                         "no busy status for the %s (the spec: comm handlers publish busy and idle "
                         "like an execute_request)",
                         msg_type);
        return r;
}

static json_object *comm_content(const char *comm_id, const char *target, const char *nonce) {
        json_object *c = json_object_new_object(), *data = json_object_new_object();
        json_object_object_add(c, "comm_id", json_object_new_string(comm_id));
        if (target)
                json_object_object_add(c, "target_name", json_object_new_string(target));
        if (nonce)
                json_object_object_add(data, "kbound", json_object_new_string(nonce));
        json_object_object_add(c, "data", data);
        return c;
}

/* comm_open to the pack's target runs its handler (which answers with a comm_msg echoing the
 * open's data), with busy and idle around it. */
void cx_check_comm_open(cx *x) {
        const char *id = cx_item_id(x);
        const char *code = NULL, *target = NULL;
        if (!cx_can_run(x, id) || !(target = comm_target(x, id, &code)))
                return;
        int64_t t0 = kb_now_ms();
        kb_execution *ex = NULL;
        json_object *seq = NULL;
        int r = cx_execute(x, code, false, false, &ex, &seq);
        if (r < 0 || strcmp(ex->status, "ok") != 0) {
                cx_problem(x, id, t0, NULL, "register", "the comm snippet (registering target '%s') did not run: %s",
                           target, r < 0 ? kb_harness_wait_error(&x->h, r) : ex->status);
                json_object_put(seq);
                kb_execution_destroy(kb_kernel_client(x->h.kernel), &ex);
                return;
        }
        json_object_put(seq);
        kb_execution_destroy(kb_kernel_client(x->h.kernel), &ex);
        char nonce[17];
        if (kb_random_hex(x->comm_id, 16) < 0 || kb_random_hex(nonce, 8) < 0) {
                cx_problem(x, id, t0, NULL, "random", "no randomness for the comm id");
                return;
        }
        findings f = {.n = 0};
        json_object *msgs = NULL;
        r = comm_send(x, "comm_open", comm_content(x->comm_id, target, nonce), &f, &msgs);
        bool echo = echoed(msgs, x->comm_id, nonce), closed = sent_for(msgs, "comm_close", x->comm_id);
        if (r == -ESRCH || r == -ECANCELED) {
                /* nothing more to ask */
        } else if (closed)
                cx_found(&f, "closed", "the kernel answered with comm_close: it does not know target '%s'", target);
        else if (!echo)
                cx_found(&f, "no_echo",
                         "the target's handler did not answer (no comm_msg for the comm echoing the "
                         "open's data)");
        x->comm_opened = !closed && r >= 0;
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "target", json_object_new_string(target));
        json_object_object_add(ev, "iopub", cx_seq_types(msgs));
        json_object_put(msgs);
        cx_verdict(x, id, t0, ev, &f,
                   "comm_open to target '%s' ran its handler: busy, a comm_msg echoing the open's "
                   "data, idle",
                   target);
}

/* The comm snippet's target when id can run on the comm comm.open opened; else NULL, with the item
 * recorded as not run (untested, or not_run when no comm is open). */
static const char *open_comm_target(cx *x, const char *id) {
        const char *code = NULL, *target = NULL;
        if (!cx_can_run(x, id) || !(target = comm_target(x, id, &code)))
                return NULL;
        if (!x->comm_opened) {
                cx_problem(x, id, 0, NULL, "not_run", "not run: comm.open opened no comm");
                return NULL;
        }
        return target;
}

/* A comm_msg to the open comm reaches its handler, which echoes it. */
void cx_check_comm_msg(cx *x) {
        const char *id = cx_item_id(x);
        if (!open_comm_target(x, id))
                return;
        int64_t t0 = kb_now_ms();
        char nonce[17];
        if (kb_random_hex(nonce, 8) < 0) {
                cx_problem(x, id, t0, NULL, "random", "no randomness");
                return;
        }
        findings f = {.n = 0};
        json_object *msgs = NULL;
        int r = comm_send(x, "comm_msg", comm_content(x->comm_id, NULL, nonce), &f, &msgs);
        if (r != -ESRCH && r != -ECANCELED && !echoed(msgs, x->comm_id, nonce))
                cx_found(&f, "no_echo",
                         "the comm's handler did not answer the comm_msg (no comm_msg echoing its data)");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "iopub", cx_seq_types(msgs));
        json_object_put(msgs);
        cx_verdict(x, id, t0, ev, &f, "comm_msg reached the comm's handler, which echoed it: busy, comm_msg, idle");
}

/* comm_info_reply's comms: the spec's top-level object, else where IRkernel 1.3.2 puts it
 * (content.comms, an empty list when there are none), with *ret_misplaced set. NULL if neither. */
static json_object *located_comms(json_object *reply, bool *ret_misplaced) {
        json_object *comms = kb_json_get(reply, "comms");
        *ret_misplaced = false;
        if (comms && json_object_is_type(comms, json_type_object))
                return comms;
        *ret_misplaced = true;
        comms = kb_json_get(kb_json_get(reply, "content"), "comms");
        if (comms && (json_object_is_type(comms, json_type_object) ||
                      (json_object_is_type(comms, json_type_array) && json_object_array_length(comms) == 0)))
                return comms;
        return NULL;
}

/* comm_info_request (with target_name when target is not NULL): the comms as located_comms finds
 * them, adding status and comms_shape to f. Returns the reply (new reference) or NULL (error in *ret_r). */
static json_object *comm_info(cx *x, const char *target, findings *f, json_object **ret_comms, int *ret_r) {
        json_object *content = json_object_new_object(), *reply = NULL;
        if (target)
                json_object_object_add(content, "target_name", json_object_new_string(target));
        *ret_r = cx_request(x, "comm_info_request", content, &reply);
        if (*ret_r < 0)
                return NULL;
        bool misplaced = false;
        const char *status = kb_json_str(reply, "status");
        *ret_comms = located_comms(reply, &misplaced);
        if (!status || strcmp(status, "ok") != 0)
                cx_found(f, "status", "comm_info_reply status is not 'ok'");
        if (misplaced)
                cx_found(f, "comms_shape", "comm_info_reply has no top-level \"comms\" object%s",
                         *ret_comms ? " (kbound read content.comms instead)" : "");
        return reply;
}

static bool listed_as(json_object *comms, const char *comm_id, const char *target) {
        json_object *entry = json_object_is_type(comms, json_type_object) ? kb_json_get(comms, comm_id) : NULL;
        return entry && (!target || strcmp(kb_json_str(entry, "target_name") ?: "", target) == 0);
}

/* comm_info_request with target_name lists the open comm (with that target_name) and only comms of
 * that target; with another target_name it does not list it. */
void cx_check_comm_info_target(cx *x) {
        const char *id = cx_item_id(x);
        const char *target = open_comm_target(x, id);
        if (!target)
                return;
        int64_t t0 = kb_now_ms();
        findings f = {.n = 0};
        json_object *comms = NULL, *other_comms = NULL;
        int r = 0;
        json_object *reply = comm_info(x, target, &f, &comms, &r);
        json_object *other = reply ? comm_info(x, "kbound.no-such-target", &f, &other_comms, &r) : NULL;
        if (r < 0) {
                json_object_put(reply);
                cx_request_failed(x, id, t0, NULL, r, "comm_info_request");
                return;
        }
        if (comms && !listed_as(comms, x->comm_id, target))
                cx_found(&f, "not_listed",
                         "comm_info_request for target '%s' does not list the open comm with that "
                         "target_name",
                         target);
        bool foreign = false;
        if (comms && json_object_is_type(comms, json_type_object)) {
                json_object_object_foreach(comms, cid, entry) {
                        (void) cid;
                        foreign |= strcmp(kb_json_str(entry, "target_name") ?: "", target) != 0;
                }
        }
        if (foreign || (other_comms && listed_as(other_comms, x->comm_id, NULL)))
                cx_found(&f, "not_filtered", "comm_info_request with target_name lists comms of another target");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "comms", comms ? json_object_get(comms) : NULL);
        json_object_put(reply);
        json_object_put(other);
        cx_verdict(x, id, t0, ev, &f,
                   "comm_info_request for target '%s' lists the open comm, and for another target "
                   "does not",
                   target);
}

/* comm_close reaches the kernel and the comm is gone from comm_info. */
void cx_check_comm_close(cx *x) {
        const char *id = cx_item_id(x);
        if (!open_comm_target(x, id))
                return;
        int64_t t0 = kb_now_ms();
        findings f = {.n = 0};
        json_object *msgs = NULL, *comms = NULL;
        int r = comm_send(x, "comm_close", comm_content(x->comm_id, NULL, NULL), &f, &msgs);
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "iopub", cx_seq_types(msgs));
        json_object_put(msgs);
        json_object *reply = r == -ESRCH || r == -ECANCELED ? NULL : comm_info(x, NULL, &f, &comms, &r);
        if (r < 0 && !reply)
                cx_found(&f, r == -ETIMEDOUT ? "no_reply" : "wait", "comm_info_request: %s",
                         kb_harness_wait_error(&x->h, r));
        else if (comms && listed_as(comms, x->comm_id, NULL))
                cx_found(&f, "still_listed", "comm_info still lists the comm after comm_close");
        json_object_put(reply);
        x->comm_opened = false;
        cx_verdict(x, id, t0, ev, &f,
                   "comm_close reached the kernel (busy, idle) and comm_info no longer lists the comm");
}

/* "If the target_name key is not found on the receiving side, then it should immediately reply
 * with a comm_close message." Needs no language pack. */
void cx_check_comm_unknown_target(cx *x) {
        const char *id = cx_item_id(x);
        if (!cx_can_run(x, id))
                return;
        int64_t t0 = kb_now_ms();
        char comm_id[33], nonce[17], target[64];
        if (kb_random_hex(comm_id, 16) < 0 || kb_random_hex(nonce, 8) < 0) {
                cx_problem(x, id, t0, NULL, "random", "no randomness for the comm id");
                return;
        }
        snprintf(target, sizeof(target), "kbound.no-such-target-%s", nonce);
        findings f = {.n = 0};
        json_object *msgs = NULL;
        int r = comm_send(x, "comm_open", comm_content(comm_id, target, NULL), &f, &msgs);
        if (r != -ESRCH && r != -ECANCELED && !sent_for(msgs, "comm_close", comm_id))
                cx_found(&f, "no_close",
                         "no comm_close answered a comm_open for an unknown target (the spec: the kernel "
                         "should reply with comm_close at once)");
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "iopub", cx_seq_types(msgs));
        json_object_put(msgs);
        cx_verdict(x, id, t0, ev, &f, "a comm_open for an unknown target was answered with comm_close");
}

/* ---- optional features: the debugger, subshells ---- */

static bool info_true(cx *x, const char *key) {
        json_object *v = kb_json_get(kb_kernel_info(x->h.kernel), key);
        return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

/* A debug_request's content: the Debug Adapter Protocol request {type, seq, command, arguments}
 * (arguments taken), or NULL when out of memory. */
static json_object *dap_request(int seq, const char *command, json_object *arguments) {
        json_object *content = json_object_new_object();
        if (!content) {
                json_object_put(arguments);
                return NULL;
        }
        json_object_object_add(content, "type", json_object_new_string("request"));
        json_object_object_add(content, "seq", json_object_new_int(seq));
        json_object_object_add(content, "command", json_object_new_string(command));
        json_object_object_add(content, "arguments", arguments);
        return content;
}

/* debug_request "initialize" (the Debug Adapter Protocol over control, protocol 5.2). Optional: a
 * kernel that does not claim a debugger (kernel_info_reply "debugger": true) and does not answer
 * is unsupported; one that claims it must answer. After a successful initialize, "disconnect"
 * leaves the debugger as it was. */
void cx_check_debug(cx *x) {
        const char *id = cx_item_id(x);
        if (!cx_can_run(x, id))
                return;
        bool claimed = info_true(x, "debugger");
        int64_t t0 = kb_now_ms();
        json_object *args = json_object_new_object(), *reply = NULL;
        json_object_object_add(args, "clientID", json_object_new_string("kbound"));
        json_object_object_add(args, "adapterID", json_object_new_string(x->spec->language ?: ""));
        json_object_object_add(args, "pathFormat", json_object_new_string("path"));
        json_object_object_add(args, "linesStartAt1", json_object_new_boolean(1));
        json_object_object_add(args, "columnsStartAt1", json_object_new_boolean(1));
        int r = cx_control_request(x, "debug_request", dap_request(1, "initialize", args), CONTROL_REPLY_TIMEOUT_MS,
                                   &reply);
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "claimed_in_kernel_info", json_object_new_boolean(claimed));
        if (r == -ETIMEDOUT && !claimed) {
                cx_unsupported(x, id, t0, ev,
                               "optional: no debug_reply within %d ms, and kernel_info_reply does not "
                               "claim a debugger (\"debugger\": true)",
                               CONTROL_REPLY_TIMEOUT_MS);
                return;
        }
        if (r < 0) {
                cx_problem(x, id, t0, ev, r == -ETIMEDOUT ? "no_reply" : "wait", "debug_request initialize%s: %s",
                           claimed ? " (kernel_info_reply claims a debugger)" : "", kb_harness_wait_error(&x->h, r));
                return;
        }
        json_object *success = kb_json_get(reply, "success");
        const char *message = kb_json_str(reply, "message");
        bool ok = success && json_object_is_type(success, json_type_boolean) && json_object_get_boolean(success);
        json_object_object_add(ev, "success", json_object_new_boolean(ok));
        json_object_object_add(ev, "message", cx_jstring_or_null(message));
        if (ok) {
                /* Leave the debugger as it was found; its answer does not change the verdict. */
                json_object *bye_args = json_object_new_object(), *bye_reply = NULL;
                json_object_object_add(bye_args, "restart", json_object_new_boolean(0));
                json_object_object_add(bye_args, "terminateDebuggee", json_object_new_boolean(1));
                int d = cx_control_request(x, "debug_request", dap_request(2, "disconnect", bye_args),
                                           CONTROL_REPLY_TIMEOUT_MS, &bye_reply);
                json_object_object_add(ev, "disconnected", json_object_new_boolean(d == 0));
                json_object_put(bye_reply);
        }
        findings f = {.n = 0};
        if (!ok && !claimed) {
                cx_unsupported(x, id, t0, ev,
                               "optional: debug_reply says success: false%s%s (kernel_info_reply does not "
                               "claim a debugger)",
                               message ? ": " : "", message ? message : "");
                json_object_put(reply);
                return;
        }
        if (strcmp(kb_json_str(reply, "type") ?: "", "response") != 0 ||
            strcmp(kb_json_str(reply, "command") ?: "", "initialize") != 0)
                cx_found(&f, "dap", "debug_reply is not a DAP response to 'initialize'");
        if (!ok)
                cx_found(&f, "not_success",
                         "debug_reply says success: false%s%s although kernel_info_reply claims a "
                         "debugger",
                         message ? ": " : "", message ? message : "");
        cx_verdict(x, id, t0, ev, &f, "debug_request initialize answered with success%s",
                   claimed ? "" : " (kernel_info_reply does not claim a debugger, the kernelspec may)");
        json_object_put(reply);
}

/* Kernel subshells (JEP 91): create, list, delete on control, when kernel_info_reply lists
 * "kernel subshells" in supported_features; otherwise unsupported (nothing is sent: a kernel that
 * does not know the messages need not answer them). */
void cx_check_subshells(cx *x) {
        const char *id = cx_item_id(x);
        if (!cx_can_run(x, id))
                return;
        json_object *features = kb_json_get(kb_kernel_info(x->h.kernel), "supported_features");
        if (!cx_in_string_array(features, "kernel subshells")) {
                cx_unsupported(x, id, 0, NULL,
                               "optional (JEP 91): kernel_info_reply lists no \"kernel subshells\" in "
                               "supported_features");
                return;
        }
        int64_t t0 = kb_now_ms();
        findings f = {.n = 0};
        json_object *created = NULL, *listed = NULL, *deleted = NULL, *after = NULL;
        int r = cx_control_request(x, "create_subshell_request", NULL, cx_item_ms(x), &created);
        const char *subshell = kb_json_str(created, "subshell_id");
        if (r >= 0 && (!subshell || strcmp(kb_json_str(created, "status") ?: "", "ok") != 0))
                cx_found(&f, "create", "create_subshell_reply has no status 'ok' with a subshell_id");
        if (r >= 0 && subshell) {
                r = cx_control_request(x, "list_subshell_request", NULL, cx_item_ms(x), &listed);
                if (r >= 0 && !cx_in_string_array(kb_json_get(listed, "subshell_id"), subshell))
                        cx_found(&f, "list", "list_subshell_reply does not list the subshell just created");
                json_object *del = json_object_new_object();
                json_object_object_add(del, "subshell_id", json_object_new_string(subshell));
                if (r >= 0)
                        r = cx_control_request(x, "delete_subshell_request", del, cx_item_ms(x), &deleted);
                else
                        json_object_put(del);
                if (r >= 0 && strcmp(kb_json_str(deleted, "status") ?: "", "ok") != 0)
                        cx_found(&f, "delete", "delete_subshell_reply status is not 'ok'");
                if (r >= 0)
                        r = cx_control_request(x, "list_subshell_request", NULL, cx_item_ms(x), &after);
                if (r >= 0 && cx_in_string_array(kb_json_get(after, "subshell_id"), subshell))
                        cx_found(&f, "still_listed", "list_subshell_reply still lists the deleted subshell");
        }
        if (r < 0)
                cx_found(&f, r == -ETIMEDOUT ? "no_reply" : "wait", "a subshell request on control: %s",
                         kb_harness_wait_error(&x->h, r));
        json_object *ev = json_object_new_object();
        json_object_object_add(ev, "subshell_id", cx_jstring_or_null(subshell));
        cx_verdict(x, id, t0, ev, &f, "create_subshell_request made subshell '%s', list showed it, delete removed it",
                   subshell ?: "");
        json_object_put(created);
        json_object_put(listed);
        json_object_put(deleted);
        json_object_put(after);
}

/* conformance.c: does the kernel speak the Jupyter protocol as specified? One item at a time,
 * each a check with evidence; snippets and known deviations are language-pack data. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "kbound/check.h"
#include "base/cleanup.h"
#include "kbound/conformance.h"
#include "kbound/report.h"
#include "kbound/kernel.h"
#include "kbound/langpack.h"
#include "run/conformance-internal.h"
#include "protocol/msgspec.h"
#include "verdict/rules.h"

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
        cx_verdict(x, "kernel_info.language_info", 0, ev, &f, "%s %s (%s, %s)%s%s", name, kb_json_str(li, "version"),
                   ext, kb_json_str(li, "mimetype"), mismatch ? "; warning: " : "", mismatch ? warning : "");

        json_object *banner = kb_json_get(info, "banner");
        if (banner && json_object_is_type(banner, json_type_string))
                cx_pass(x, "kernel_info.banner", 0, NULL, "banner is a string of %d bytes",
                        json_object_get_string_len(banner));
        else
                cx_problem(x, "kernel_info.banner", 0, NULL, "missing", "banner is missing or not a string");
}

static void check_heartbeat(cx *x) {
        const char *id = cx_item_id(x);
        if (!cx_can_run(x, id))
                return;
        int64_t t0 = kb_now_ms();
        int r = kb_client_heartbeat(kb_kernel_client(x->h.kernel), kb_harness_deadline_in(&x->h, HEARTBEAT_TIMEOUT_MS));
        if (r == 1)
                cx_pass(x, id, t0, NULL, "an idle kernel echoed a heartbeat ping");
        else
                cx_problem(x, id, t0, NULL, "no_echo", "no heartbeat echo within %d ms while idle%s",
                           HEARTBEAT_TIMEOUT_MS, r < 0 ? " (socket error)" : "");
}

/* ---- execute ---- */

/* execute.stdout and execute.stderr, on the snippets of those names. */
static void judge_stream(cx *x, const char *id, json_object *s, int64_t t0, kb_execution *ex, json_object *seq) {
        const char *name = strcmp(id, "execute.stdout") == 0 ? "stdout" : "stderr";
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
        cx_verdict(x, id, t0, ev, &f, "'%s' arrived as a %s stream", want, name);
        if (strcmp(name, "stdout") == 0) {
                x->stdout_seq = json_object_get(seq);
                x->stdout_count = ex->execution_count;
                x->stdout_ran = true;
        }
}

/* busy → execute_input (the code, the reply's execution_count) → outputs → idle, from the stdout
 * run (whose messages all carried its msg_id as parent: only those are collected). */
static void check_ordering(cx *x) {
        const char *id = cx_item_id(x);
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

static void judge_result(cx *x, const char *id, json_object *s, int64_t t0, kb_execution *ex, json_object *seq) {
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
                return;
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
        cx_verdict(x, id, t0, ev, &f, "execute_result text/plain '%s', execution_count %lld", plain, (long long) count);
}

static void judge_display(cx *x, const char *id, json_object *s, int64_t t0, kb_execution *ex, json_object *seq) {
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
}

static void judge_error(cx *x, const char *id, json_object *s, int64_t t0, kb_execution *ex, json_object *seq) {
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
        cx_verdict(x, id, t0, ev, &f, "status 'error', ename %s, evalue and traceback in the reply and on iopub",
                   ex->ename);
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
        const char *id = cx_item_id(x);
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
        cx_verdict(x, id, t0, ev, &f,
                   "execution_count %lld → %lld: +1 with store_history; a request without it "
                   "replies with the current %lld and does not count",
                   (long long) a, (long long) c, (long long) b);
}

static void check_silent(cx *x) {
        const char *id = cx_item_id(x);
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
        cx_verdict(x, id, t0, ev, &f,
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
                        cx_request_failed(x, id, t0, NULL, r, "is_complete_request");
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
                cx_request_failed(x, id, t0, NULL, r, "complete_request");
                return;
        }
        json_object *matches = kb_json_get(reply, "matches");
        bool in_matches = cx_in_string_array(matches, match);
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
                cx_request_failed(x, id, t0, NULL, r, "inspect_request");
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
        const char *id = cx_item_id(x);
        if (!cx_can_run(x, id))
                return;
        int64_t t0 = kb_now_ms();
        json_object *reply = NULL;
        int r = cx_request(x, "comm_info_request", json_object_new_object(), &reply);
        if (r < 0) {
                cx_request_failed(x, id, t0, NULL, r, "comm_info_request");
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

/* ---- the sequence: every item, in the order they run, a row per step ---- */

/* One step of the run: the items it records (in order) and what runs it. A step that is one of
 * kbound check's checks tried the conformance way (interrupt.control) has no ids of its own: its
 * one item takes the check's id from the check table (check.h), so the two never drift apart. */
typedef struct item_step {
        const char *ids[6]; /* NULL-terminated */
        void (*run)(cx *x);
        bool is_check; /* the item is check's, named by the table */
        kb_check check;
} item_step;

/* The ids step records: its own, or the check table's name of its check in storage. */
static const char *const *step_ids(const item_step *step, const char *storage[2]) {
        if (!step->is_check)
                return step->ids;
        storage[0] = kb_check_id(step->check);
        storage[1] = NULL;
        return storage;
}

static void check_stdout(cx *x) {
        cx_snippet_item(x, cx_item_id(x), "stdout", false, judge_stream);
}
static void check_stderr(cx *x) {
        cx_snippet_item(x, cx_item_id(x), "stderr", false, judge_stream);
}
static void check_result(cx *x) {
        cx_snippet_item(x, cx_item_id(x), "execute_result", false, judge_result);
}
static void check_display(cx *x) {
        cx_snippet_item(x, cx_item_id(x), "display_data", false, judge_display);
}
static void check_error(cx *x) {
        cx_snippet_item(x, cx_item_id(x), "error", false, judge_error);
}
static void check_complete_code(cx *x) {
        check_is_complete(x, "complete");
}
static void check_incomplete_code(cx *x) {
        check_is_complete(x, "incomplete");
}
static void check_invalid_code(cx *x) {
        check_is_complete(x, "invalid");
}
static void check_interrupt_control(cx *x) {
        cx_check_interrupt_busy(x, false);
}
static void check_interrupt_signal(cx *x) {
        cx_check_interrupt_busy(x, true);
}

static const item_step steps[] = {
        {.ids = {"kernel_info.reply", "kernel_info.protocol_version", "kernel_info.implementation",
                 "kernel_info.language_info", "kernel_info.banner"},
         .run = check_kernel_info},
        {.ids = {"heartbeat"}, .run = check_heartbeat},
        {.ids = {"execute.stdout"}, .run = check_stdout},
        {.ids = {"execute.ordering"}, .run = check_ordering},
        {.ids = {"execute.stderr"}, .run = check_stderr},
        {.ids = {"execute.result"}, .run = check_result},
        {.ids = {"execute.display_data"}, .run = check_display},
        {.ids = {"execute.update_display_data"}, .run = cx_check_update_display},
        {.ids = {"execute.clear_output"}, .run = cx_check_clear_output},
        {.ids = {"execute.pager"}, .run = cx_check_pager},
        {.ids = {"execute.error"}, .run = check_error},
        {.ids = {"execute.count"}, .run = check_counts},
        {.ids = {"execute.silent"}, .run = check_silent},
        {.ids = {"stdin.input"}, .run = cx_check_stdin},
        {.ids = {"stdin.not_allowed"}, .run = cx_check_stdin_not_allowed},
        {.ids = {"is_complete.complete"}, .run = check_complete_code},
        {.ids = {"is_complete.incomplete"}, .run = check_incomplete_code},
        {.ids = {"is_complete.invalid"}, .run = check_invalid_code},
        {.ids = {"complete"}, .run = check_complete},
        {.ids = {"inspect"}, .run = check_inspect},
        {.ids = {"history.tail"}, .run = cx_check_history_tail},
        {.ids = {"history.output"}, .run = cx_check_history_output},
        {.ids = {"history.range"}, .run = cx_check_history_range},
        {.ids = {"history.search"}, .run = cx_check_history_search},
        {.ids = {"comm_info"}, .run = check_comm_info},
        {.ids = {"comm.open"}, .run = cx_check_comm_open},
        {.ids = {"comm.msg"}, .run = cx_check_comm_msg},
        {.ids = {"comm_info.target"}, .run = cx_check_comm_info_target},
        {.ids = {"comm.close"}, .run = cx_check_comm_close},
        {.ids = {"comm.unknown_target"}, .run = cx_check_comm_unknown_target},
        {.ids = {"debug.initialize"}, .run = cx_check_debug},
        {.ids = {"subshells"}, .run = cx_check_subshells},
        {.ids = {"interrupt.idle"}, .run = cx_check_interrupt_idle},
        {.run = check_interrupt_control, .is_check = true, .check = KB_CHECK_INTERRUPT_CONTROL},
        {.ids = {"interrupt.signal"}, .run = check_interrupt_signal},
        {.ids = {"shutdown"}, .run = cx_check_shutdown},
        {.ids = {"messages.shape"}, .run = cx_check_shape},
};

/* Every item's id, in order, from the table (made once). */
#define ITEMS_MAX 64
static const char *items[ITEMS_MAX + 1];
static pthread_once_t items_once = PTHREAD_ONCE_INIT;

static void items_flatten(void) {
        size_t n = 0;
        for (size_t i = 0; i < KB_ELEMENTSOF(steps); i++) {
                const char *storage[2], *const *ids = step_ids(&steps[i], storage);
                for (size_t k = 0; k < KB_ELEMENTSOF(steps[i].ids) && ids[k] && n < ITEMS_MAX; k++)
                        items[n++] = ids[k];
        }
        items[n] = NULL;
}

const char *const *kb_conformance_items(void) {
        (void) pthread_once(&items_once, items_flatten);
        return items;
}

/* Every item not run yet gets a failing check naming why, so no report is missing one. */
static void fill_missing(cx *x, const char *why) {
        const char *const *ids = kb_conformance_items();
        for (size_t i = 0; ids[i]; i++) {
                bool have = false;
                for (size_t j = 0; j < json_object_array_length(x->h.checks) && !have; j++)
                        have = strcmp(kb_json_str(json_object_array_get_idx(x->h.checks, j), "id"), ids[i]) == 0;
                if (!have)
                        cx_problem(x, ids[i], 0, NULL, "not_run", "not run: %s", why);
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
        _cleanup_error_ kb_error *error = NULL;
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
        char where[2 * PATH_MAX + 16];
        int r = kb_harness_find_pack(&env->harness, lang, &x.lp, where, sizeof where);
        if (r < 0)
                snprintf(x.no_snippets, sizeof(x.no_snippets),
                         "no language pack for '%s' in %.300s (%s): add a pack, a folder <language>/ with "
                         "kbound.json and a \"conformance\" member, in a folder of yours given with --kernels-dir "
                         "DIR (or in kbound's kernels/), to test this item",
                         lang, where, r == -ENOENT ? "none matches" : strerror(-r));
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
        r = kb_harness_start(&x.h, &ko, &error);
        if (r < 0) {
                const char *why = kb_error_text(error, r);
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

        const char *storage[2]; /* a check's step's ids: x.step_ids may point here all run long */
        for (size_t i = 0; i < KB_ELEMENTSOF(steps); i++) {
                x.step_ids = step_ids(&steps[i], storage);
                steps[i].run(&x);
        }
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

/* report_markdown.c: a check run for a CI page: a markdown summary (GitHub's job summary) and one
 * workflow annotation per failing check. Every string of the run may quote a kernel, so each is
 * cleaned to one line and escaped for where it lands: nothing a kernel says becomes markup, a
 * link, an image or a workflow command. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "kbound/report.h"
#include "base/cleanup.h"
#include "kbound/sanitize.h"
#include "report/report-internal.h"

#define MD_MAX_CELL 400
#define MD_MAX_SUMMARY 3200
#define MD_MAX_EVIDENCE (16u << 10)
#define MD_MAX_FAILURES 64
#define ANNOTATION_MAX 1000

/* Markdown text, in a table cell or a paragraph: HTML's specials as entities, and every other
 * ASCII punctuation mark backslash-escaped (CommonMark lets any be), so no emphasis, link, image,
 * code span, cell break or raw HTML can start in it. */
static void put_md(FILE *out, const char *text, size_t max) {
        _cleanup_free_ char *s = report_clean_line(text, max);
        if (!s)
                return;
        for (const char *p = s; *p; p++) {
                switch (*p) {
                case '<':
                        fputs("&lt;", out);
                        break;
                case '>':
                        fputs("&gt;", out);
                        break;
                case '&':
                        fputs("&amp;", out);
                        break;
                default:
                        if (strchr("\\`*_{}[]()#+-.!|~:\"'$%^=/;,?@", *p))
                                fputc('\\', out);
                        fputc(*p, out);
                }
        }
}

static const char *status_mark(check_status s) {
        switch (s) {
        case STATUS_PASS:
                return "✅";
        case STATUS_UNSUPPORTED:
        case STATUS_NOT_CLAIMED:
        case STATUS_DEVIATION:
        case STATUS_UNTESTED:
                return "➖";
        case STATUS_NOT_RUN:
                return "⏹️";
        default:
                return "❌";
        }
}

/* The longest run of backticks in s: a fence one longer cannot be closed by it. */
static size_t longest_backticks(const char *s) {
        size_t best = 0, run = 0;
        for (; *s; s++) {
                run = *s == '`' ? run + 1 : 0;
                if (run > best)
                        best = run;
        }
        return best;
}

/* A failing check's evidence, folded: a <details> whose body is a fenced JSON block. */
static void put_evidence(FILE *out, json_object *kernel, json_object *check) {
        json_object *evidence = kb_json_get(check, "evidence");
        const char *json = evidence ? json_object_to_json_string_ext(evidence, JSON_C_TO_STRING_PRETTY |
                                                                                       JSON_C_TO_STRING_NOSLASHESCAPE)
                                    : NULL;
        fputs("<details><summary>", out);
        put_md(out, kernel_name(kernel), MD_MAX_CELL);
        fputs(" ", out);
        put_md(out, or_unknown(kb_json_str(check, "id")), MD_MAX_CELL);
        fputs(": ", out);
        put_md(out, or_unknown(kb_json_str(check, "detail")), MD_MAX_CELL);
        fputs("</summary>\n\n", out);
        if (json) {
                /* Cleaned as a terminal would show it (newlines kept), then fenced. */
                char *body = NULL;
                size_t size = 0;
                FILE *m = open_memstream(&body, &size);
                if (m) {
                        report_put_clean(m, json, MD_MAX_EVIDENCE, KB_SANITIZE_TERMINAL);
                        if (fclose(m) == 0 && body) {
                                size_t fence = longest_backticks(body) + 1;
                                if (fence < 3)
                                        fence = 3;
                                for (size_t i = 0; i < fence; i++)
                                        fputc('`', out);
                                fputs("json\n", out);
                                fputs(body, out);
                                fputc('\n', out);
                                for (size_t i = 0; i < fence; i++)
                                        fputc('`', out);
                                fputc('\n', out);
                        }
                        free(body);
                }
        }
        fputs("\n</details>\n\n", out);
}

int kb_report_markdown(json_object *run, FILE *out) {
        json_object *kernels = run_kernels(run);
        if (!out)
                return -EINVAL;
        const char *verdict = kb_json_str(run, "verdict");
        bool pass = verdict && strcmp(verdict, "pass") == 0;
        const char *kind = kb_json_str(run, "kind");
        fprintf(out, "## %s kbound %s: %s\n\n", pass ? "✅" : "❌",
                kind && strcmp(kind, "conformance") == 0 ? "conformance" : "check", pass ? "PASS" : "FAIL");
        put_md(out, or_unknown(kb_json_str(kb_json_get(run, "claims"), "summary")), MD_MAX_SUMMARY);
        fputs("\n\n", out);

        fputs("| kernel | check | status | detail |\n|---|---|---|---|\n", out);
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                json_object *checks = member_array(kernel, "checks");
                if (kernel_has_error(kernel)) {
                        fputs("| ", out);
                        put_md(out, kernel_name(kernel), MD_MAX_CELL);
                        fputs(" | kernel.start | ❌ FAIL | ", out);
                        put_md(out, kernel_error_text(kernel), MD_MAX_CELL);
                        fputs(" |\n", out);
                }
                for (size_t j = 0; j < array_len(checks); j++) {
                        json_object *check = json_object_array_get_idx(checks, j);
                        check_status s = report_status_of(check);
                        fputs("| ", out);
                        put_md(out, kernel_name(kernel), MD_MAX_CELL);
                        fputs(" | ", out);
                        put_md(out, or_unknown(kb_json_str(check, "id")), MD_MAX_CELL);
                        /* A pass that did not test all it claims (its detail says what first) is marked so. */
                        bool in_part = s == STATUS_PASS && report_not_tested(check);
                        fprintf(out, " | %s %s | ", in_part ? "⚠️" : status_mark(s), report_status_label(s));
                        put_md(out, or_unknown(kb_json_str(check, "detail")), MD_MAX_CELL);
                        fputs(" |\n", out);
                }
        }
        fputc('\n', out);

        /* The evidence of what failed, folded, so the page stays a page. */
        size_t shown = 0, more = 0;
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                json_object *checks = member_array(kernel, "checks");
                for (size_t j = 0; j < array_len(checks); j++) {
                        json_object *check = json_object_array_get_idx(checks, j);
                        if (report_outcome(run, check, NULL) != OUTCOME_FAIL)
                                continue;
                        if (shown == MD_MAX_FAILURES) {
                                more++;
                                continue;
                        }
                        if (shown++ == 0)
                                fputs("### What failed\n\n", out);
                        put_evidence(out, kernel, check);
                }
        }
        if (more)
                fprintf(out, "and %zu more failing checks: the JSON report has them all.\n\n", more);
        return report_flush(out);
}

/* A workflow command's data: '%', CR and LF escaped as the runner unescapes them; in a property
 * also ':' and ','. Cleaned first, so no control character is left to escape. */
static void put_command_text(FILE *out, const char *text, bool property) {
        _cleanup_free_ char *s = report_clean_line(text, ANNOTATION_MAX);
        if (!s)
                return;
        for (const char *p = s; *p; p++) {
                if (*p == '%')
                        fputs("%25", out);
                else if (property && *p == ':')
                        fputs("%3A", out);
                else if (property && *p == ',')
                        fputs("%2C", out);
                else
                        fputc(*p, out);
        }
}

static void put_annotation(FILE *out, const char *kernel, const char *id, const char *message) {
        fputs("::error title=", out);
        _cleanup_free_ char *title = NULL;
        if (asprintf(&title, "kbound %s %s", kernel, id) >= 0)
                put_command_text(out, title, true);
        fputs("::", out);
        put_command_text(out, message, false);
        fputc('\n', out);
}

int kb_report_github_annotations(json_object *run, FILE *out) {
        json_object *kernels = run_kernels(run);
        if (!out)
                return -EINVAL;
        if (!kb_json_true(run, "complete"))
                put_annotation(out, "run", "run.complete",
                               or_unknown(kb_json_str(run, "incomplete_reason") ? kb_json_str(run, "incomplete_reason")
                                                                                : "the run did not complete"));
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                json_object *checks = member_array(kernel, "checks");
                if (kernel_has_error(kernel))
                        put_annotation(out, kernel_name(kernel), "kernel.start", kernel_error_text(kernel));
                for (size_t j = 0; j < array_len(checks); j++) {
                        json_object *check = json_object_array_get_idx(checks, j);
                        const char *why = NULL;
                        if (report_outcome(run, check, &why) != OUTCOME_FAIL)
                                continue;
                        /* A kernel that could not be checked has said why once (kernel.start):
                         * GitHub shows only the first ten errors of a step, so its checks not run
                         * must not push the reasons out (the table has them). */
                        if (kernel_has_error(kernel) && report_status_of(check) == STATUS_NOT_RUN)
                                continue;
                        _cleanup_free_ char *message = NULL;
                        const char *detail = or_unknown(kb_json_str(check, "detail"));
                        if (why && asprintf(&message, "%s: %s", why, detail) < 0)
                                message = NULL;
                        put_annotation(out, kernel_name(kernel), or_unknown(kb_json_str(check, "id")),
                                       message ? message : detail);
                }
        }
        return report_flush(out);
}

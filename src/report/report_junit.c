/* report_junit.c: a check run as JUnit XML, in the form the common readers accept (Jenkins'
 * xunit junit-10.xsd, GitLab, GitHub's test reporters): one <testsuite> per kernel, one
 * <testcase> per check. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "kbound/report.h"
#include "base/cleanup.h"
#include "kbound/sanitize.h"
#include "report/report-internal.h"

#define JUNIT_MAX_MESSAGE 1000
#define JUNIT_MAX_BODY (64u << 10)

/* Seconds with three decimals from integer milliseconds: no floating point, so no locale can
 * turn the decimal point into a comma. */
static void put_seconds(FILE *out, int64_t ms) {
        if (ms < 0)
                ms = 0;
        fprintf(out, "%" PRId64 ".%03" PRId64, ms / 1000, ms % 1000);
}

typedef struct junit_counts {
        size_t tests, failures, errors, skipped;
        int64_t ms;
} junit_counts;

/* Counts what junit_kernel will emit, so the suite's attributes match its test cases. */
static junit_counts count_kernel(json_object *run, json_object *kernel) {
        junit_counts c = {0};
        json_object *checks = member_array(kernel, "checks");
        if (kernel_has_error(kernel) || array_len(checks) == 0) {
                c.tests++;
                c.failures++;
                c.ms += member_ms(kernel, "startup_ms") > 0 ? member_ms(kernel, "startup_ms") : 0;
        }
        for (size_t j = 0; j < array_len(checks); j++) {
                json_object *check = json_object_array_get_idx(checks, j);
                int64_t ms = member_ms(check, "duration_ms");
                c.tests++;
                c.ms += ms > 0 ? ms : 0;
                switch (report_outcome(run, check, NULL)) {
                case OUTCOME_FAIL:
                        /* A check the run never got to is an error of the run, not a failed
                         * assertion: CI counts both as red, and tells them apart. */
                        if (report_status_of(check) == STATUS_NOT_RUN)
                                c.errors++;
                        else
                                c.failures++;
                        break;
                case OUTCOME_SKIP:
                        c.skipped++;
                        break;
                default:
                        break;
                }
        }
        return c;
}

static bool run_level_failure(json_object *run) {
        return !kb_json_true(run, "complete") || array_len(run_kernels(run)) == 0;
}

static void junit_properties(FILE *out, json_object *run) {
        json_object *claims = kb_json_get(run, "claims");
        json_object *full = kb_json_get(claims, "full_boundary");

        fputs("    <properties>\n", out);
        fputs("      <property name=\"verdict\" value=\"", out);
        report_put_clean(out, or_unknown(kb_json_str(run, "verdict")), JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fputs("\"/>\n      <property name=\"summary\" value=\"", out);
        report_put_clean(out, or_unknown(kb_json_str(claims, "summary")), JUNIT_MAX_BODY, KB_SANITIZE_XML_ATTR);
        fprintf(out, "\"/>\n      <property name=\"raw_network_override\" value=\"%s\"/>\n",
                report_run_override(run) ? "true" : "false");
        fputs("      <property name=\"network\" value=\"", out);
        report_put_clean(out, or_unknown(kb_json_str(claims, "network")), JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fprintf(out, "\"/>\n      <property name=\"full_boundary\" value=\"%s\"/>\n",
                full && json_object_is_type(full, json_type_boolean) && json_object_get_boolean(full) ? "true"
                                                                                                      : "false");
        const char *rootfs = kb_json_str(kb_json_get(run, "sandbox"), "rootfs");
        fputs("      <property name=\"rootfs\" value=\"", out);
        report_put_clean(out, rootfs ? rootfs : "", JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fputs("\"/>\n", out);
        json_object *image = kb_json_get(kb_json_get(run, "sandbox"), "image");
        if (image) {
                static const char *const fields[] = {"path", "tag", "manifest_digest"};
                for (size_t i = 0; i < KB_ELEMENTSOF(fields); i++) {
                        const char *v = kb_json_str(image, fields[i]);
                        fprintf(out, "      <property name=\"image_%s\" value=\"", fields[i]);
                        report_put_clean(out, v ? v : "", JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
                        fputs("\"/>\n", out);
                }
        }
        fputs("    </properties>\n", out);
}

static void junit_suite_open(FILE *out, json_object *run, const char *name, const junit_counts *c) {
        fputs("  <testsuite name=\"kbound.", out);
        report_put_clean(out, name, JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"", c->tests, c->failures,
                c->errors, c->skipped);
        put_seconds(out, c->ms);
        fputs("\">\n", out);
        junit_properties(out, run);
}

static void junit_case_open(FILE *out, const char *suite, const char *id, int64_t ms) {
        fputs("    <testcase classname=\"kbound.", out);
        report_put_clean(out, suite, JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fputs("\" name=\"", out);
        report_put_clean(out, id, JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fputs("\" time=\"", out);
        put_seconds(out, ms);
        fputs("\">\n", out);
}

/* <failure> (element "failure") or <error> ("error"): a message, a type and a body. */
static void junit_problem(FILE *out, const char *element, const char *type, const char *message, const char *body) {
        fprintf(out, "      <%s message=\"", element);
        report_put_clean(out, message, JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fputs("\" type=\"", out);
        report_put_clean(out, type, JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fputs("\">", out);
        report_put_clean(out, body, JUNIT_MAX_BODY, KB_SANITIZE_XML_TEXT);
        fprintf(out, "</%s>\n", element);
}

static void junit_check(FILE *out, json_object *run, const char *kernel, json_object *check) {
        const char *id = or_unknown(kb_json_str(check, "id"));
        const char *detail = or_unknown(kb_json_str(check, "detail"));
        const char *why = NULL;
        outcome o = report_outcome(run, check, &why);

        junit_case_open(out, kernel, id, member_ms(check, "duration_ms"));
        if (o == OUTCOME_SKIP) {
                fputs("      <skipped message=\"", out);
                report_put_clean(out, or_unknown(kb_json_str(check, "status")), JUNIT_MAX_MESSAGE,
                                 KB_SANITIZE_XML_ATTR);
                fputs(": ", out);
                report_put_clean(out, detail, JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
                fputs("\"/>\n", out);
        } else if (o == OUTCOME_FAIL) {
                _cleanup_free_ char *message = NULL;
                _cleanup_free_ char *body = NULL;
                json_object *evidence = kb_json_get(check, "evidence");
                const char *evidence_text =
                        evidence ? json_object_to_json_string_ext(evidence, JSON_C_TO_STRING_PRETTY |
                                                                                    JSON_C_TO_STRING_NOSLASHESCAPE)
                                 : NULL;
                if (why && asprintf(&message, "%s: %s", why, detail) < 0)
                        message = NULL;
                if (asprintf(&body, "%s%s%s", message ? message : detail, evidence_text ? "\n" : "",
                             evidence_text ? evidence_text : "") < 0)
                        body = NULL;
                junit_problem(out, report_status_of(check) == STATUS_NOT_RUN ? "error" : "failure", id,
                              message ? message : detail, body ? body : detail);
        }
        /* A pass that did not test all it claims says what it left out (the summary does too). */
        json_object *not_tested = o == OUTCOME_PASS ? report_not_tested(check) : NULL;
        for (size_t i = 0; i < array_len(not_tested); i++) {
                fputs("      <system-out>", out);
                report_put_clean(out, or_unknown(json_object_get_string(json_object_array_get_idx(not_tested, i))),
                                 JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_TEXT);
                fputs("</system-out>\n", out);
        }
        fputs("    </testcase>\n", out);
}

/* A kernel that could not be checked, or ran nothing, is a failing test case of its own: CI must
 * never count it as green by its absence. */
static void junit_kernel(FILE *out, json_object *run, json_object *kernel) {
        const char *name = kernel_name(kernel);
        json_object *checks = member_array(kernel, "checks");
        junit_counts c = count_kernel(run, kernel);

        junit_suite_open(out, run, name, &c);
        if (kernel_has_error(kernel) || array_len(checks) == 0) {
                const char *message = kernel_has_error(kernel) ? kernel_error_text(kernel) : "no checks were run";
                junit_case_open(out, name, "kernel.start", member_ms(kernel, "startup_ms"));
                junit_problem(out, "failure", "kernel.start", message, message);
                fputs("    </testcase>\n", out);
        }
        for (size_t j = 0; j < array_len(checks); j++)
                junit_check(out, run, name, json_object_array_get_idx(checks, j));
        fputs("  </testsuite>\n", out);
}

/* The run itself failing (cut short, or nothing to check) gets a suite "kbound.run", or a CI
 * dashboard would show an incomplete run as fewer, all-green tests. */
static void junit_run_suite(FILE *out, json_object *run) {
        junit_counts c = {.tests = 1, .failures = 1};
        const char *message;
        if (!kb_json_true(run, "complete"))
                message = kb_json_str(run, "incomplete_reason") ? kb_json_str(run, "incomplete_reason")
                                                                : "the run did not complete";
        else
                message = "no kernel was checked";
        junit_suite_open(out, run, "run", &c);
        junit_case_open(out, "run", "run.complete", 0);
        junit_problem(out, "failure", "run.complete", message, message);
        fputs("    </testcase>\n  </testsuite>\n", out);
}

int kb_report_junit(json_object *run, FILE *out) {
        json_object *kernels = run_kernels(run);
        junit_counts total = {0};

        if (!out)
                return -EINVAL;
        for (size_t i = 0; i < array_len(kernels); i++) {
                junit_counts c = count_kernel(run, json_object_array_get_idx(kernels, i));
                total.tests += c.tests;
                total.failures += c.failures;
                total.errors += c.errors;
                total.ms += c.ms;
        }
        if (run_level_failure(run)) {
                total.tests++;
                total.failures++;
        }
        if (member_ms(run, "duration_ms") >= 0)
                total.ms = member_ms(run, "duration_ms");

        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
        /* junit-10.xsd allows <testsuites> only name, time, tests, failures and errors: the skipped
         * count is on each <testsuite>. */
        fprintf(out, "<testsuites name=\"kbound\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"", total.tests,
                total.failures, total.errors);
        put_seconds(out, total.ms);
        fputs("\">\n", out);
        if (run_level_failure(run))
                junit_run_suite(out, run);
        for (size_t i = 0; i < array_len(kernels); i++)
                junit_kernel(out, run, json_object_array_get_idx(kernels, i));
        fputs("</testsuites>\n", out);
        return report_flush(out);
}

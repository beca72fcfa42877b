/* report.c: the verdict of a check run and its renderings: human text, pretty JSON and JUnit XML. */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include "kbound/report.h"
#include "kbound/sanitize.h"
#include "rules.h"
#include "jsonget.h"

/* The run object is ours, but its strings carry kernel names, error texts and check details that
 * may quote what a kernel printed. Every rendering bounds them so one runaway detail cannot turn
 * a summary line or a CI report into megabytes. */
#define SUMMARY_MAX_ITEMS 16
#define SUMMARY_MAX_TEXT 200
#define HUMAN_MAX_DETAIL 400
#define HUMAN_MAX_NAME_WIDTH 24
#define HUMAN_MAX_ID_WIDTH 32
#define JUNIT_MAX_MESSAGE 1000
#define JUNIT_MAX_BODY (64u << 10)
#define MAX_GROUPS 16

#define NETWORK_CHECK "boundary.network"

/* The checks that together make "the full boundary", with the words the summary uses. */
static const struct {
        const char *id;
        const char *words;
} boundary_checks[] = {
        {"boundary.write_outside", "write outside"},  {NETWORK_CHECK, "network"},
        {"boundary.workspace_writable", "workspace"}, {"boundary.credentials", "credentials"},
        {"boundary.cross_team", "cross-team"},        {"boundary.descriptors", "descriptors"},
        {"boundary.sockets", "host sockets"},
};

/* Summary order differs from table order on purpose: it reads as the probes run. */
static const size_t boundary_summary_order[] = {5, 0, 2, 1, 6, 3, 4};

typedef enum check_status {
        STATUS_ABSENT = 0, /* ordered by badness: combining duplicates keeps the worst */
        STATUS_PASS,
        STATUS_UNSUPPORTED,
        STATUS_NOT_CLAIMED,
        STATUS_DEVIATION, /* conformance: a known deviation of the implementation, observed */
        STATUS_UNTESTED,  /* conformance: no snippet for the language, with the reason */
        STATUS_FAIL,
        STATUS_INVALID,
} check_status;

typedef enum outcome {
        OUTCOME_PASS,
        OUTCOME_SKIP,
        OUTCOME_FAIL,
} outcome;

/* ---- tolerant accessors: the object may be partial or hold wrong types; nothing here crashes ---- */

static const char *or_unknown(const char *s) {
        return s ? s : "?";
}

static json_object *member_array(json_object *obj, const char *key) {
        json_object *value = kb_json_get(obj, key);
        if (!value || !json_object_is_type(value, json_type_array))
                return NULL;
        return value;
}

static size_t array_len(json_object *array) {
        return array ? json_object_array_length(array) : 0;
}

/* A non-negative millisecond count, or -1 when absent, negative or not a number. */
static int64_t member_ms(json_object *obj, const char *key) {
        json_object *value = kb_json_get(obj, key);
        if (!value)
                return -1;
        if (json_object_is_type(value, json_type_int)) {
                int64_t ms = json_object_get_int64(value);
                return ms >= 0 ? ms : -1;
        }
        if (json_object_is_type(value, json_type_double)) {
                double ms = json_object_get_double(value);
                if (!(ms >= 0.0) || ms > (double) INT64_MAX / 2)
                        return -1;
                return (int64_t) ms;
        }
        return -1;
}

static json_object *run_kernels(json_object *run) {
        return member_array(run, "kernels");
}

static const char *kernel_name(json_object *kernel) {
        return or_unknown(kb_json_str(kernel, "name"));
}

static bool kernel_has_error(json_object *kernel) {
        return kb_json_get(kernel, "error") != NULL;
}

/* The error as text; a non-string error still marks the kernel as broken. */
static const char *kernel_error_text(json_object *kernel) {
        return or_unknown(kb_json_str(kernel, "error"));
}

/* The kernel's warning, if any (the rule conformance's kernel_info.language_info shares, rules.c):
 * its kernelspec's language against what kernel_info said. False when there is none. */
static bool kernel_warning(json_object *kernel, char *buf, size_t size) {
        return kb_rules_language_mismatch(kb_json_str(kb_json_get(kernel, "kernel_info"), "language"),
                                          kb_json_str(kernel, "language"), buf, size);
}

/* Fail closed: when the object cannot show the override was off, network isolation is not claimed. */
static bool run_override(json_object *run) {
        json_object *value = kb_json_get(kb_json_get(run, "claims"), "raw_network_override");
        if (!value || !json_object_is_type(value, json_type_boolean))
                return true;
        return json_object_get_boolean(value);
}

/* A check's "status" as the report format spells it; anything else is STATUS_INVALID. */
static const struct {
        const char *name;
        check_status status;
} check_statuses[] = {
        {"pass", STATUS_PASS},
        {"fail", STATUS_FAIL},
        {"unsupported", STATUS_UNSUPPORTED},
        {"not_claimed", STATUS_NOT_CLAIMED},
        {"deviation", STATUS_DEVIATION},
        {"untested", STATUS_UNTESTED},
};

static check_status check_status_of(json_object *check) {
        const char *status = kb_json_str(check, "status");
        for (size_t i = 0; status && i < sizeof check_statuses / sizeof check_statuses[0]; i++)
                if (strcmp(status, check_statuses[i].name) == 0)
                        return check_statuses[i].status;
        return STATUS_INVALID;
}

/* Whether the run accepts untested conformance items (run["allow_untested"] is JSON true). */
static bool run_allows_untested(json_object *run) {
        return kb_json_true(run, "allow_untested");
}

/* A skip when detail explains it; else a failure, with *ret_why set to unexplained. */
static outcome explained(const char *detail, const char *unexplained, const char **ret_why) {
        if (detail && detail[0])
                return OUTCOME_SKIP;
        *ret_why = unexplained;
        return OUTCOME_FAIL;
}

/* Whether a check of run keeps the run green. Only pass and *explained* unsupported/not_claimed/
 * deviation do (DESIGN.md: a silent skip must never look like a pass); an explained untested item
 * does only when the run allows untested items, since an item nobody tested proves nothing.
 * ret_why, for failures other than a plain "fail", says what was wrong with the check itself. */
static outcome check_outcome(json_object *run, json_object *check, const char **ret_why) {
        const char *why = NULL;
        outcome result = OUTCOME_FAIL;
        const char *detail = kb_json_str(check, "detail");

        if (!kb_json_str(check, "id"))
                why = "check without an id";
        else
                switch (check_status_of(check)) {
                case STATUS_PASS:
                        result = OUTCOME_PASS;
                        break;
                case STATUS_FAIL:
                        break;
                case STATUS_UNSUPPORTED:
                        result = explained(detail, "unsupported without a reason", &why);
                        break;
                case STATUS_NOT_CLAIMED:
                        result = explained(detail, "not claimed without a reason", &why);
                        break;
                case STATUS_DEVIATION:
                        result = explained(detail, "deviation without a name", &why);
                        break;
                case STATUS_UNTESTED:
                        if (!detail || !detail[0])
                                why = "untested without a reason";
                        else if (!run_allows_untested(run))
                                why = "untested, not accepted without --allow-untested";
                        else
                                result = OUTCOME_SKIP;
                        break;
                default:
                        why = "no valid status";
                        break;
                }
        if (ret_why)
                *ret_why = why;
        return result;
}

/* The combined status of every check of kernel named id (the worst wins), ABSENT if none. */
static check_status kernel_id_status(json_object *kernel, const char *id) {
        json_object *checks = member_array(kernel, "checks");
        check_status worst = STATUS_ABSENT;
        for (size_t i = 0; i < array_len(checks); i++) {
                json_object *check = json_object_array_get_idx(checks, i);
                const char *check_id = kb_json_str(check, "id");
                if (!check_id || strcmp(check_id, id) != 0)
                        continue;
                check_status s = check_status_of(check);
                if (s > worst)
                        worst = s;
        }
        return worst;
}

static const char *status_words(check_status s) {
        switch (s) {
        case STATUS_ABSENT:
                return "not run";
        case STATUS_PASS:
                return "passed";
        case STATUS_UNSUPPORTED:
                return "unsupported";
        case STATUS_NOT_CLAIMED:
                return "not claimed";
        case STATUS_DEVIATION:
                return "known deviation";
        case STATUS_UNTESTED:
                return "untested";
        case STATUS_FAIL:
                return "failed";
        default:
                return "invalid";
        }
}

static bool is_boundary_check(const char *id) {
        for (size_t i = 0; i < KB_ELEMENTSOF(boundary_checks); i++)
                if (strcmp(boundary_checks[i].id, id) == 0)
                        return true;
        return false;
}

/* ---- the verdict ---- */

static bool kernel_passes(json_object *run, json_object *kernel) {
        json_object *checks = member_array(kernel, "checks");
        if (!json_object_is_type(kernel, json_type_object) || kernel_has_error(kernel) || array_len(checks) == 0)
                return false;
        for (size_t i = 0; i < array_len(checks); i++)
                if (check_outcome(run, json_object_array_get_idx(checks, i), NULL) == OUTCOME_FAIL)
                        return false;
        return true;
}

/* A run with no kernel proved nothing, so it cannot pass. */
static bool run_passes(json_object *run) {
        json_object *kernels = run_kernels(run);
        if (!kb_json_true(run, "complete") || array_len(kernels) == 0)
                return false;
        for (size_t i = 0; i < array_len(kernels); i++)
                if (!kernel_passes(run, json_object_array_get_idx(kernels, i)))
                        return false;
        return true;
}

/* Network isolation is claimed only when it was really tested (pass or fail) for every kernel. */
static bool network_claimed(json_object *run) {
        json_object *kernels = run_kernels(run);
        if (run_override(run) || array_len(kernels) == 0)
                return false;
        for (size_t i = 0; i < array_len(kernels); i++) {
                check_status s = kernel_id_status(json_object_array_get_idx(kernels, i), NETWORK_CHECK);
                if (s != STATUS_PASS && s != STATUS_FAIL)
                        return false;
        }
        return true;
}

static bool all_kernels_pass_check(json_object *run, const char *id) {
        json_object *kernels = run_kernels(run);
        if (array_len(kernels) == 0)
                return false;
        for (size_t i = 0; i < array_len(kernels); i++)
                if (kernel_id_status(json_object_array_get_idx(kernels, i), id) != STATUS_PASS)
                        return false;
        return true;
}

static bool full_boundary_held(json_object *run) {
        for (size_t i = 0; i < KB_ELEMENTSOF(boundary_checks); i++)
                if (!all_kernels_pass_check(run, boundary_checks[i].id))
                        return false;
        return true;
}

/* ---- the summary sentence ---- */

/* A comma-separated list that stops after SUMMARY_MAX_ITEMS and says how many it left out. */
typedef struct item_list {
        FILE *out;
        size_t shown;
        size_t omitted;
} item_list;

static bool list_next(item_list *l) {
        if (l->shown >= SUMMARY_MAX_ITEMS) {
                l->omitted++;
                return false;
        }
        if (l->shown > 0)
                fputs(", ", l->out);
        l->shown++;
        return true;
}

static void list_end(item_list *l) {
        if (l->omitted > 0)
                fprintf(l->out, " and %zu more", l->omitted);
}

/* Writes at most max bytes of s, cut on a UTF-8 character boundary, with "..." when cut. */
static void put_bounded(FILE *out, const char *s, size_t max) {
        size_t len = strlen(s);
        if (len <= max) {
                fputs(s, out);
                return;
        }
        while (max > 0 && ((unsigned char) s[max] & 0xC0) == 0x80)
                max--;
        fwrite(s, 1, max, out);
        fputs("...", out);
}

static void put_kernel_names(FILE *out, json_object *run) {
        json_object *kernels = run_kernels(run);
        item_list l = {.out = out};
        for (size_t i = 0; i < array_len(kernels); i++)
                if (list_next(&l))
                        put_bounded(out, kernel_name(json_object_array_get_idx(kernels, i)), SUMMARY_MAX_TEXT);
        list_end(&l);
}

/* The fail sentence: every reason, in the order a reader needs them. */
static void write_fail_summary(FILE *out, json_object *run) {
        json_object *kernels = run_kernels(run);
        bool first = true;

        fputs("FAIL: ", out);
        if (!kb_json_true(run, "complete")) {
                const char *reason = kb_json_str(run, "incomplete_reason");
                json_object *complete = kb_json_get(run, "complete");
                if (!reason)
                        reason = complete && json_object_is_type(complete, json_type_boolean)
                                         ? "no reason given"
                                         : "completion not recorded";
                fputs("incomplete run (", out);
                put_bounded(out, reason, SUMMARY_MAX_TEXT);
                fputs(")", out);
                first = false;
        }
        if (array_len(kernels) == 0) {
                fputs(first ? "" : "; ", out);
                fputs("no kernel was checked", out);
                first = false;
        }
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                if (kernel_has_error(kernel)) {
                        fputs(first ? "" : "; ", out);
                        put_bounded(out, kernel_name(kernel), SUMMARY_MAX_TEXT);
                        fputs(" could not be checked (", out);
                        put_bounded(out, kernel_error_text(kernel), SUMMARY_MAX_TEXT);
                        fputs(")", out);
                        first = false;
                } else if (array_len(member_array(kernel, "checks")) == 0) {
                        fputs(first ? "" : "; ", out);
                        put_bounded(out, kernel_name(kernel), SUMMARY_MAX_TEXT);
                        fputs(" ran no checks", out);
                        first = false;
                }
        }

        item_list failed = {.out = out};
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                json_object *checks = member_array(kernel, "checks");
                for (size_t j = 0; j < array_len(checks); j++) {
                        json_object *check = json_object_array_get_idx(checks, j);
                        const char *why = NULL;
                        if (check_outcome(run, check, &why) != OUTCOME_FAIL)
                                continue;
                        if (failed.shown == 0 && failed.omitted == 0)
                                fputs(first ? "" : "; ", out);
                        if (!list_next(&failed))
                                continue;
                        put_bounded(out, kernel_name(kernel), SUMMARY_MAX_TEXT);
                        fputc(' ', out);
                        put_bounded(out, or_unknown(kb_json_str(check, "id")), SUMMARY_MAX_TEXT);
                        if (why)
                                fprintf(out, " (%s)", why);
                }
        }
        list_end(&failed);
        if (failed.shown > 0)
                fputs(" failed", out);
        else if (first)
                fputs("the run did not pass", out); /* unreachable by construction; never an empty sentence */
        fputs(".", out);
}

/* " and "-joined group names of the non-boundary checks that passed ("identity and interrupt"). */
static void write_pass_groups(FILE *out, json_object *run, bool *ret_any, bool *ret_where_supported) {
        struct group {
                const char *name;
                size_t len;
        } groups[MAX_GROUPS];
        size_t n_groups = 0;
        bool where_supported = false;
        json_object *kernels = run_kernels(run);

        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *checks = member_array(json_object_array_get_idx(kernels, i), "checks");
                for (size_t j = 0; j < array_len(checks); j++) {
                        json_object *check = json_object_array_get_idx(checks, j);
                        const char *id = kb_json_str(check, "id");
                        if (!id || is_boundary_check(id))
                                continue;
                        outcome o = check_outcome(run, check, NULL);
                        if (o == OUTCOME_SKIP)
                                where_supported = true;
                        if (o != OUTCOME_PASS)
                                continue;
                        const char *dot = strchr(id, '.');
                        size_t len = dot ? (size_t) (dot - id) : strlen(id);
                        bool seen = false;
                        for (size_t g = 0; g < n_groups && !seen; g++)
                                seen = groups[g].len == len && memcmp(groups[g].name, id, len) == 0;
                        if (!seen && n_groups < MAX_GROUPS && len > 0 && len <= SUMMARY_MAX_TEXT)
                                groups[n_groups++] = (struct group){id, len};
                }
        }
        for (size_t g = 0; g < n_groups; g++) {
                if (g > 0)
                        fputs(g + 1 == n_groups ? " and " : ", ", out);
                fwrite(groups[g].name, 1, groups[g].len, out);
        }
        if (n_groups > 0)
                fputs(" checks passed", out);
        *ret_any = n_groups > 0;
        *ret_where_supported = where_supported;
}

/* Which checks a summary list names: filter(run, check, status) says whether check is one. */
typedef bool check_filter(json_object *run, json_object *check, check_status status);

/* head, then "KERNEL ID" (and " (status)" when with_status) for every check of every kernel that
 * filter keeps, through an item_list; nothing at all when it keeps none. */
static void write_check_list(FILE *out, json_object *run, const char *head, check_filter *filter, check_status status,
                             bool with_status) {
        json_object *kernels = run_kernels(run);
        item_list l = {.out = out};
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                json_object *checks = member_array(kernel, "checks");
                for (size_t j = 0; j < array_len(checks); j++) {
                        json_object *check = json_object_array_get_idx(checks, j);
                        if (!filter(run, check, status))
                                continue;
                        if (l.shown == 0 && l.omitted == 0)
                                fputs(head, out);
                        if (!list_next(&l))
                                continue;
                        put_bounded(out, kernel_name(kernel), SUMMARY_MAX_TEXT);
                        fputc(' ', out);
                        put_bounded(out, or_unknown(kb_json_str(check, "id")), SUMMARY_MAX_TEXT);
                        if (with_status)
                                fprintf(out, " (%s)", status_words(check_status_of(check)));
                }
        }
        list_end(&l);
}

/* An explained skip outside the boundary (status unused). */
static bool skipped_outside_boundary(json_object *run, json_object *check, check_status status) {
        (void) status;
        const char *id = kb_json_str(check, "id");
        return id && !is_boundary_check(id) && check_outcome(run, check, NULL) == OUTCOME_SKIP;
}

/* "; not tested: ir interrupt.control (unsupported)" for every explained skip outside the boundary. */
static void write_not_tested(FILE *out, json_object *run) {
        write_check_list(out, run, "; not tested: ", skipped_outside_boundary, STATUS_ABSENT, true);
}

/* For a pass that is not a full-boundary pass: which boundaries held everywhere, which did not
 * (network is left out: the sentence's head already says what happened to it). */
static void write_partial_boundaries(FILE *out, json_object *run) {
        json_object *kernels = run_kernels(run);
        item_list held = {.out = out};
        item_list missing = {.out = out};

        for (size_t b = 0; b < KB_ELEMENTSOF(boundary_summary_order); b++) {
                size_t i = boundary_summary_order[b];
                if (strcmp(boundary_checks[i].id, NETWORK_CHECK) == 0 ||
                    !all_kernels_pass_check(run, boundary_checks[i].id))
                        continue;
                if (held.shown == 0)
                        fputs("; other boundaries held: ", out);
                if (list_next(&held))
                        fputs(boundary_checks[i].words, out);
        }
        if (held.shown == 0)
                fputs("; no other boundary held for every kernel", out);

        for (size_t k = 0; k < array_len(kernels); k++) {
                json_object *kernel = json_object_array_get_idx(kernels, k);
                for (size_t b = 0; b < KB_ELEMENTSOF(boundary_summary_order); b++) {
                        const char *id = boundary_checks[boundary_summary_order[b]].id;
                        check_status s = kernel_id_status(kernel, id);
                        if (strcmp(id, NETWORK_CHECK) == 0 || s == STATUS_PASS)
                                continue;
                        if (missing.shown == 0 && missing.omitted == 0)
                                fputs("; boundaries not established: ", out);
                        if (!list_next(&missing))
                                continue;
                        put_bounded(out, kernel_name(kernel), SUMMARY_MAX_TEXT);
                        fprintf(out, " %s (%s)", id, status_words(s));
                }
        }
        list_end(&missing);
}

/* Why network isolation is not claimed: the override, or what each kernel's network check said. */
static void write_network_reason(FILE *out, json_object *run) {
        if (run_override(run)) {
                fputs("raw-network override", out);
                return;
        }
        json_object *kernels = run_kernels(run);
        item_list l = {.out = out};
        fputs(NETWORK_CHECK " ", out);
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                check_status s = kernel_id_status(kernel, NETWORK_CHECK);
                if (s == STATUS_PASS || s == STATUS_FAIL || !list_next(&l))
                        continue;
                fprintf(out, "%s for ", status_words(s));
                put_bounded(out, kernel_name(kernel), SUMMARY_MAX_TEXT);
        }
        list_end(&l);
}

static void write_pass_summary(FILE *out, json_object *run, bool claimed, bool full) {
        bool any_groups, where_supported;

        if (full) {
                fputs("PASS: full boundary held for ", out);
                put_kernel_names(out, run);
                fputs(" (", out);
                for (size_t b = 0; b < KB_ELEMENTSOF(boundary_summary_order); b++)
                        fprintf(out, "%s%s", b ? ", " : "", boundary_checks[boundary_summary_order[b]].words);
                fputs(")", out);
        } else if (!claimed) {
                fputs("PASS WITHOUT NETWORK CLAIM: network isolation was NOT claimed (", out);
                write_network_reason(out, run);
                fputs(")", out);
        } else {
                fputs("PASS WITH PARTIAL BOUNDARY: network isolation held, but not every boundary check "
                      "was claimed and passed",
                      out);
        }

        fputs("; ", out);
        write_pass_groups(out, run, &any_groups, &where_supported);
        if (any_groups && where_supported)
                fputs(" where supported", out);
        if (!full) {
                fputs(any_groups ? " for " : "checks ran for ", out);
                put_kernel_names(out, run);
                write_partial_boundaries(out, run);
        } else if (!any_groups) {
                fputs("no other checks ran", out);
        }
        write_not_tested(out, run);
        fputs(".", out);
}

static bool run_is_conformance(json_object *run) {
        const char *kind = kb_json_str(run, "kind");
        return kind && strcmp(kind, "conformance") == 0;
}

/* A check of that status that does not fail the run. */
static bool of_status(json_object *run, json_object *check, check_status status) {
        return check_status_of(check) == status && check_outcome(run, check, NULL) != OUTCOME_FAIL;
}

/* "; known deviations: ir interrupt.control, ..." for every check of status s. */
static void write_status_list(FILE *out, json_object *run, check_status s, const char *head) {
        write_check_list(out, run, head, of_status, s, false);
}

/* A conformance run claims no boundary: its sentence says how the protocol items went. */
static void write_conformance_pass(FILE *out, json_object *run) {
        json_object *kernels = run_kernels(run);
        size_t passed = 0;
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *checks = member_array(json_object_array_get_idx(kernels, i), "checks");
                for (size_t j = 0; j < array_len(checks); j++)
                        passed += check_outcome(run, json_object_array_get_idx(checks, j), NULL) == OUTCOME_PASS;
        }
        fputs("PASS: protocol conformance of ", out);
        put_kernel_names(out, run);
        fprintf(out, ": %zu item(s) passed", passed);
        write_status_list(out, run, STATUS_DEVIATION, "; known deviations: ");
        write_status_list(out, run, STATUS_UNSUPPORTED, "; unsupported: ");
        write_status_list(out, run, STATUS_UNTESTED, "; untested: ");
        fputs(" (no sandbox boundary is claimed by a conformance run).", out);
}

/* Builds the summary into a new string. Returns 0 or -ENOMEM. */
static int build_summary(json_object *run, bool pass, bool claimed, bool full, char **ret) {
        char *text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);
        if (!out)
                return -ENOMEM;
        if (pass && run_is_conformance(run))
                write_conformance_pass(out, run);
        else if (pass)
                write_pass_summary(out, run, claimed, full);
        else
                write_fail_summary(out, run);
        bool failed = ferror(out);
        if (fclose(out) != 0 || failed) {
                free(text);
                return -ENOMEM;
        }
        /* The promise that matters most: without a network claim, no reader may see "full boundary",
         * whatever a kernel happens to be named. */
        if (!claimed && strcasestr(text, "full boundary")) {
                free(text);
                text = strdup(pass ? "PASS WITHOUT NETWORK CLAIM: network isolation was NOT claimed; "
                                     "see the per-check results."
                                   : "FAIL: see the per-check results (network isolation was NOT claimed).");
                if (!text)
                        return -ENOMEM;
        }
        *ret = text;
        return 0;
}

static int set_member(json_object *obj, const char *key, json_object *value) {
        if (!value)
                return -ENOMEM;
        if (json_object_object_add(obj, key, value) < 0) {
                json_object_put(value);
                return -ENOMEM;
        }
        return 0;
}

int kb_report_finish(json_object *run) {
        _cleanup_free_ char *summary = NULL;
        int r = 0;

        if (!run || !json_object_is_type(run, json_type_object))
                return 1;

        bool pass = run_passes(run);
        bool claimed = network_claimed(run);
        bool full = pass && claimed && full_boundary_held(run);

        if (build_summary(run, pass, claimed, full, &summary) < 0) {
                /* Without the sentence the verdict cannot be explained, so it cannot be a pass. */
                pass = full = false;
                summary = strdup("FAIL: the report summary could not be built (out of memory).");
        }

        /* Each kernel's warnings (never part of the verdict): rebuilt, so finishing twice is the same. */
        json_object *kernels = run_kernels(run);
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                char warning[256];
                if (!json_object_is_type(kernel, json_type_object))
                        continue;
                json_object *warnings = json_object_new_array();
                if (set_member(kernel, "warnings", warnings) < 0) {
                        r = -ENOMEM;
                        continue;
                }
                if (kernel_warning(kernel, warning, sizeof(warning))) {
                        json_object *w = json_object_new_string(warning);
                        if (!w || json_object_array_add(warnings, w) < 0) {
                                json_object_put(w);
                                r = -ENOMEM;
                        }
                }
        }

        json_object *claims = kb_json_get(run, "claims");
        if (!claims || !json_object_is_type(claims, json_type_object)) {
                claims = json_object_new_object();
                if (set_member(run, "claims", claims) < 0)
                        return 1;
        }
        r |= set_member(run, "verdict", json_object_new_string(pass ? "pass" : "fail"));
        r |= set_member(claims, "network", json_object_new_string(claimed ? "claimed" : "not_claimed"));
        r |= set_member(claims, "full_boundary", json_object_new_boolean(full));
        r |= summary ? set_member(claims, "summary", json_object_new_string(summary)) : -ENOMEM;
        if (r != 0) {
                /* A half-written verdict must not read as a pass. */
                (void) set_member(run, "verdict", json_object_new_string("fail"));
                return 1;
        }
        return pass ? 0 : 1;
}

/* ---- text sanitizing (sanitize.c): every string of a run may quote a kernel ---- */

static void put_clean(FILE *out, const char *text, size_t max, kb_sanitize_mode mode) {
        kb_sanitize_put(out, text, strlen(text), max, mode);
}

static int finish_output(FILE *out) {
        if (fflush(out) != 0 || ferror(out))
                return -EIO;
        return 0;
}

/* ---- human ---- */

static const char *status_label(check_status s) {
        switch (s) {
        case STATUS_PASS:
                return "PASS";
        case STATUS_UNSUPPORTED:
                return "UNSUPPORTED";
        case STATUS_NOT_CLAIMED:
                return "NOT CLAIMED";
        case STATUS_DEVIATION:
                return "DEVIATION";
        case STATUS_UNTESTED:
                return "UNTESTED";
        default:
                return "FAIL"; /* anything unrecognized counts as a failure in the verdict too */
        }
}

static void put_padded(FILE *out, const char *s, size_t width) {
        put_clean(out, s, HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
        for (size_t len = strlen(s); len < width; len++)
                fputc(' ', out);
}

static void human_kernel_header(FILE *out, json_object *kernel) {
        json_object *info = kb_json_get(kernel, "kernel_info");
        int64_t startup = member_ms(kernel, "startup_ms");

        fputs("kernel ", out);
        put_clean(out, kernel_name(kernel), HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
        fputs(": language ", out);
        put_clean(out, or_unknown(kb_json_str(kernel, "language")), HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
        fputs(", team ", out);
        put_clean(out, or_unknown(kb_json_str(kernel, "team")), HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
        if (startup >= 0)
                fprintf(out, ", startup %" PRId64 " ms", startup);
        else
                fputs(", startup ? ms", out);
        fputs(", implementation ", out);
        put_clean(out, or_unknown(kb_json_str(info, "implementation")), HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
        fputc(' ', out);
        put_clean(out, or_unknown(kb_json_str(info, "implementation_version")), HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
        fputc('\n', out);
        if (kernel_has_error(kernel)) {
                fputs("  error: ", out);
                put_clean(out, kernel_error_text(kernel), HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
                fputc('\n', out);
        }
        char warning[256];
        if (kernel_warning(kernel, warning, sizeof(warning))) {
                fputs("  warning: ", out);
                put_clean(out, warning, HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
                fputc('\n', out);
        }
}

int kb_report_human(json_object *run, FILE *out) {
        json_object *kernels = run_kernels(run);
        size_t name_width = 1, id_width = 1;

        if (!out)
                return -EINVAL;

        /* Columns line up across kernels; a freak long name only widens its own line. */
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                json_object *checks = member_array(kernel, "checks");
                size_t len = strlen(kernel_name(kernel));
                if (len > name_width && len <= HUMAN_MAX_NAME_WIDTH)
                        name_width = len;
                for (size_t j = 0; j < array_len(checks); j++) {
                        len = strlen(or_unknown(kb_json_str(json_object_array_get_idx(checks, j), "id")));
                        if (len > id_width && len <= HUMAN_MAX_ID_WIDTH)
                                id_width = len;
                }
        }

        json_object *sandbox = kb_json_get(run, "sandbox");
        if (sandbox) {
                fputs("sandbox: ", out);
                put_clean(out, or_unknown(kb_json_str(sandbox, "backend")), HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
                fputc(' ', out);
                put_clean(out, or_unknown(kb_json_str(sandbox, "bwrap_version")), HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
                fputs(" (", out);
                put_clean(out, or_unknown(kb_json_str(sandbox, "bwrap")), HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
                fputs(")\n", out);
                /* Which root the kernels ran on: an image's, or the host's own system paths. */
                const char *rootfs = kb_json_str(sandbox, "rootfs");
                json_object *image = kb_json_get(sandbox, "image");
                fputs("root:    ", out);
                if (rootfs && image) {
                        /* An image given with --image: named as the user has it, by tag and digest. */
                        const char *tag = kb_json_str(image, "tag");
                        fputs("image ", out);
                        put_clean(out, or_unknown(kb_json_str(image, "path")), HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
                        if (tag) {
                                fputs(" tag ", out);
                                put_clean(out, tag, HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
                        }
                        fputs(" (", out);
                        put_clean(out, or_unknown(kb_json_str(image, "format")), HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
                        fputs(", manifest ", out);
                        put_clean(out, or_unknown(kb_json_str(image, "manifest_digest")), HUMAN_MAX_DETAIL,
                                  KB_SANITIZE_LINE);
                        fputs("), unpacked to ", out);
                        put_clean(out, rootfs, HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
                        fputs(" (read-only; kernelspecs found inside it; removed when kbound ends)\n", out);
                } else if (rootfs) {
                        fputs("image ", out);
                        put_clean(out, rootfs, HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
                        fputs(" (read-only; kernelspecs found inside it)\n", out);
                } else {
                        fputs("the host's system paths (read-only)\n", out);
                }
        }

        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                json_object *checks = member_array(kernel, "checks");
                human_kernel_header(out, kernel);
                for (size_t j = 0; j < array_len(checks); j++) {
                        json_object *check = json_object_array_get_idx(checks, j);
                        fprintf(out, "%-11s  ", status_label(check_status_of(check)));
                        put_padded(out, kernel_name(kernel), name_width);
                        fputs("  ", out);
                        put_padded(out, or_unknown(kb_json_str(check, "id")), id_width);
                        fputs("  ", out);
                        put_clean(out, or_unknown(kb_json_str(check, "detail")), HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
                        fputc('\n', out);
                }
        }

        const char *summary = kb_json_str(kb_json_get(run, "claims"), "summary");
        if (summary) {
                put_clean(out, summary, HUMAN_MAX_DETAIL * 8, KB_SANITIZE_LINE);
        } else {
                fputs("verdict: ", out);
                put_clean(out, or_unknown(kb_json_str(run, "verdict")), HUMAN_MAX_DETAIL, KB_SANITIZE_LINE);
        }
        fputc('\n', out);
        return finish_output(out);
}

/* ---- JSON ---- */

int kb_report_json(json_object *run, FILE *out) {
        if (!out)
                return -EINVAL;
        /* json-c writes a string's bytes as they are: one a kernel sent raw (its log) would make
         * the report no UTF-8 JSON, which a strict reader refuses, verdict and all. */
        if (kb_sanitize_json_utf8(run) < 0)
                return -ENOMEM;
        const char *text =
                json_object_to_json_string_ext(run, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!text)
                return -ENOMEM;
        if (fputs(text, out) < 0 || fputc('\n', out) == EOF)
                return -EIO;
        return finish_output(out);
}

/* ---- JUnit ---- */

/* Seconds with three decimals from integer milliseconds: no floating point, so no locale can
 * turn the decimal point into a comma. */
static void put_seconds(FILE *out, int64_t ms) {
        if (ms < 0)
                ms = 0;
        fprintf(out, "%" PRId64 ".%03" PRId64, ms / 1000, ms % 1000);
}

typedef struct junit_counts {
        size_t tests, failures, skipped;
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
                switch (check_outcome(run, check, NULL)) {
                case OUTCOME_FAIL:
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
        put_clean(out, or_unknown(kb_json_str(run, "verdict")), JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fputs("\"/>\n      <property name=\"summary\" value=\"", out);
        put_clean(out, or_unknown(kb_json_str(claims, "summary")), JUNIT_MAX_BODY, KB_SANITIZE_XML_ATTR);
        fprintf(out, "\"/>\n      <property name=\"raw_network_override\" value=\"%s\"/>\n",
                run_override(run) ? "true" : "false");
        fputs("      <property name=\"network\" value=\"", out);
        put_clean(out, or_unknown(kb_json_str(claims, "network")), JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fprintf(out, "\"/>\n      <property name=\"full_boundary\" value=\"%s\"/>\n",
                full && json_object_is_type(full, json_type_boolean) && json_object_get_boolean(full) ? "true"
                                                                                                      : "false");
        const char *rootfs = kb_json_str(kb_json_get(run, "sandbox"), "rootfs");
        fputs("      <property name=\"rootfs\" value=\"", out);
        put_clean(out, rootfs ? rootfs : "", JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fputs("\"/>\n", out);
        json_object *image = kb_json_get(kb_json_get(run, "sandbox"), "image");
        if (image) {
                static const char *const fields[] = {"path", "tag", "manifest_digest"};
                for (size_t i = 0; i < KB_ELEMENTSOF(fields); i++) {
                        const char *v = kb_json_str(image, fields[i]);
                        fprintf(out, "      <property name=\"image_%s\" value=\"", fields[i]);
                        put_clean(out, v ? v : "", JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
                        fputs("\"/>\n", out);
                }
        }
        fputs("    </properties>\n", out);
}

static void junit_suite_open(FILE *out, json_object *run, const char *name, const junit_counts *c) {
        fputs("  <testsuite name=\"kbound.", out);
        put_clean(out, name, JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"", c->tests, c->failures,
                c->skipped);
        put_seconds(out, c->ms);
        fputs("\">\n", out);
        junit_properties(out, run);
}

static void junit_case_open(FILE *out, const char *suite, const char *id, int64_t ms) {
        fputs("    <testcase classname=\"kbound.", out);
        put_clean(out, suite, JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fputs("\" name=\"", out);
        put_clean(out, id, JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fputs("\" time=\"", out);
        put_seconds(out, ms);
        fputs("\">\n", out);
}

static void junit_failure(FILE *out, const char *type, const char *message, const char *body) {
        fputs("      <failure message=\"", out);
        put_clean(out, message, JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fputs("\" type=\"", out);
        put_clean(out, type, JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
        fputs("\">", out);
        put_clean(out, body, JUNIT_MAX_BODY, KB_SANITIZE_XML_TEXT);
        fputs("</failure>\n", out);
}

static void junit_check(FILE *out, json_object *run, const char *kernel, json_object *check) {
        const char *id = or_unknown(kb_json_str(check, "id"));
        const char *detail = or_unknown(kb_json_str(check, "detail"));
        const char *why = NULL;
        outcome o = check_outcome(run, check, &why);

        junit_case_open(out, kernel, id, member_ms(check, "duration_ms"));
        if (o == OUTCOME_SKIP) {
                fputs("      <skipped message=\"", out);
                put_clean(out, or_unknown(kb_json_str(check, "status")), JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
                fputs(": ", out);
                put_clean(out, detail, JUNIT_MAX_MESSAGE, KB_SANITIZE_XML_ATTR);
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
                junit_failure(out, id, message ? message : detail, body ? body : detail);
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
                junit_failure(out, "kernel.start", message, message);
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
        junit_failure(out, "run.complete", message, message);
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
                total.skipped += c.skipped;
                total.ms += c.ms;
        }
        if (run_level_failure(run)) {
                total.tests++;
                total.failures++;
        }
        if (member_ms(run, "duration_ms") >= 0)
                total.ms = member_ms(run, "duration_ms");

        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
        fprintf(out, "<testsuites name=\"kbound\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"",
                total.tests, total.failures, total.skipped);
        put_seconds(out, total.ms);
        fputs("\">\n", out);
        if (run_level_failure(run))
                junit_run_suite(out, run);
        for (size_t i = 0; i < array_len(kernels); i++)
                junit_kernel(out, run, json_object_array_get_idx(kernels, i));
        fputs("</testsuites>\n", out);
        return finish_output(out);
}

/* ---- atomic file write ---- */

/* Best effort: the rename is already visible; this only makes it survive a crash. */
/* The folder part of path ("." for a bare name), malloc'd; NULL if out of memory. */
static char *dir_of(const char *path) {
        char *copy = strdup(path);
        if (!copy)
                return NULL;
        char *slash = strrchr(copy, '/');
        if (!slash) {
                free(copy);
                return strdup(".");
        }
        if (slash == copy)
                slash[1] = '\0';
        else
                *slash = '\0';
        return copy;
}

static void fsync_parent_dir(const char *path) {
        _cleanup_free_ char *dir = dir_of(path);
        if (!dir)
                return;
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0)
                (void) fsync(fd);
}

/* Whether we may create and rename entries in path's folder. */
static int dir_writable(const char *path) {
        _cleanup_free_ char *dir = dir_of(path);
        if (!dir)
                return -ENOMEM;
        struct stat st;
        if (stat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0)
                return -errno;
        return 0;
}

/* kb_report_check_path, and for KB_REPORT_REPLACE the path to replace: the file a symlink leads
 * to (the link stays a link), or path itself when nothing is there yet (malloc'd). */
static int classify(const char *path, kb_report_target *ret_target, char **ret_real) {
        struct stat st;
        if (!path || !path[0])
                return -EINVAL;
        if (stat(path, &st) < 0) {
                if (errno != ENOENT)
                        return -errno;
                /* Nothing there, or a symlink to nothing: only the first is a new path (renaming
                 * over a dangling link would replace the link, not create what it names). */
                if (lstat(path, &st) == 0)
                        return -ENOENT;
                int r = dir_writable(path);
                if (r < 0)
                        return r;
                if (ret_real && !(*ret_real = strdup(path)))
                        return -ENOMEM;
                *ret_target = KB_REPORT_REPLACE;
                return 0;
        }
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
                /* Never replaced: renaming over /dev/null would destroy it for the whole machine. */
                if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) < 0)
                        return -errno;
                *ret_target = KB_REPORT_STREAM;
                return 0;
        }
        if (!S_ISREG(st.st_mode))
                return -EINVAL; /* a block device or a socket: no place for a report */
        _cleanup_free_ char *real = realpath(path, NULL);
        if (!real)
                return -errno;
        /* A read-only report is refused as a shell redirection would refuse it, though a rename
         * could replace it. */
        if (faccessat(AT_FDCWD, real, W_OK, AT_EACCESS) < 0)
                return -errno;
        int r = dir_writable(real);
        if (r < 0)
                return r;
        if (ret_real)
                *ret_real = TAKE_PTR(real);
        *ret_target = KB_REPORT_REPLACE;
        return 0;
}

int kb_report_check_path(const char *path, kb_report_target *ret_target) {
        kb_report_target target;
        int r = classify(path, &target, NULL);
        if (r < 0)
                return r;
        if (ret_target)
                *ret_target = target;
        return 0;
}

/* A rendering held in memory with a ceiling: the render callbacks write through stdio, and a
 * stream that refuses past KB_REPORT_MAX_BYTES keeps a runaway run object from becoming a
 * runaway allocation. */
typedef struct membuf {
        char *data;
        size_t len, cap;
        bool too_big;
} membuf;

static ssize_t membuf_write(void *cookie, const char *data, size_t n) {
        membuf *m = cookie;
        if (n > KB_REPORT_MAX_BYTES - m->len) {
                m->too_big = true;
                errno = EFBIG;
                return -1;
        }
        if (m->len + n > m->cap) {
                size_t cap = m->cap ? m->cap : 64 * 1024;
                while (cap < m->len + n)
                        cap *= 2;
                char *grown = realloc(m->data, cap);
                if (!grown) {
                        errno = ENOMEM;
                        return -1;
                }
                m->data = grown;
                m->cap = cap;
        }
        memcpy(m->data + m->len, data, n);
        m->len += n;
        return (ssize_t) n;
}

static void membuf_clear(membuf *m) {
        free(m->data);
        *m = (membuf){0};
}

/* Renders run into *m. Returns 0, render's error, -EFBIG past the ceiling, or -ENOMEM. */
static int render_to_memory(json_object *run, int (*render)(json_object *, FILE *), membuf *m) {
        FILE *f = fopencookie(m, "w", (cookie_io_functions_t){.write = membuf_write});
        if (!f)
                return -ENOMEM;
        int r = render(run, f);
        if (fclose(f) != 0 && r >= 0)
                r = -EIO;
        if (m->too_big)
                return -EFBIG;
        return r < 0 ? r : 0;
}

int kb_report_write_fd(json_object *run, int fd, int (*render)(json_object *, FILE *)) {
        if (fd < 0 || !render)
                return -EINVAL;
        _cleanup_(membuf_clear) membuf m = {0};
        int r = render_to_memory(run, render, &m);
        if (r < 0)
                return r;
        return kb_write_all(fd, m.data, m.len);
}

/* Written in place: a character device or a FIFO (a reader must be there: O_NONBLOCK makes
 * opening a FIFO without one fail with -ENXIO instead of waiting forever). Returns 1 if path turned
 * out to be a regular file by now (replace it instead), 0, or -errno. */
static int write_stream(const char *path, const membuf *m) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISREG(st.st_mode))
                return 1; /* swapped since it was checked: opened without O_TRUNC, never written */
        if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
                return -EINVAL;
        /* Blocking writes from here: a slow reader is waited for, not taken for a full pipe. */
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
                return -errno;
        int r = kb_write_all(fd, m->data, m->len);
        if (r < 0)
                return r;
        int closing = TAKE_FD(fd);
        return close(closing) < 0 ? -errno : 0;
}

/* Written beside real and renamed over it: a CI job never reads half a report, and a failed run
 * never leaves a stale-but-valid one. */
static int write_replace(const char *real, const membuf *m) {
        char tmp[PATH_MAX];
        int r = snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", real);
        if (r < 0 || (size_t) r >= sizeof(tmp))
                return -ENAMETOOLONG;
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* mkstemp makes 0600; a report holds no secrets and CI collectors often run as another user. */
        r = fchmod(fd, 0644) < 0 ? -errno : 0;
        if (r >= 0)
                r = kb_write_all(fd, m->data, m->len);
        if (r >= 0 && fsync(fd) < 0)
                r = -errno; /* a full disk may only say so here */
        if (close(fd) < 0 && r >= 0)
                r = -errno;
        if (r >= 0 && rename(tmp, real) < 0)
                r = -errno;
        if (r < 0) {
                unlink(tmp);
                return r;
        }
        fsync_parent_dir(real);
        return 0;
}

int kb_report_write_file(json_object *run, const char *path, int (*render)(json_object *, FILE *)) {
        if (!path || !path[0] || !render)
                return -EINVAL;
        /* Rendered first, so nothing is opened, created or replaced for a report that cannot be
         * made. */
        _cleanup_(membuf_clear) membuf m = {0};
        int r = render_to_memory(run, render, &m);
        if (r < 0)
                return r;
        kb_report_target target;
        _cleanup_free_ char *real = NULL;
        r = classify(path, &target, &real);
        if (r < 0)
                return r;
        if (target == KB_REPORT_STREAM) {
                r = write_stream(path, &m);
                if (r <= 0)
                        return r;
                r = classify(path, &target, &real);
                if (r < 0)
                        return r;
                if (target != KB_REPORT_REPLACE)
                        return -EAGAIN; /* it keeps changing under us */
        }
        return write_replace(real, &m);
}

json_object *kb_report_kernel_new(const kb_kernelspec *spec, const char *team) {
        json_object *k = json_object_new_object();
        if (!k)
                return NULL;
        json_object_object_add(k, "name", json_object_new_string(spec->name));
        json_object_object_add(k, "display_name", json_object_new_string(spec->display_name ? spec->display_name : ""));
        json_object_object_add(k, "language", json_object_new_string(spec->language ? spec->language : ""));
        json_object_object_add(k, "interrupt_mode", json_object_new_string(spec->interrupt_mode));
        json_object_object_add(k, "resource_dir", json_object_new_string(spec->resource_dir));
        json_object_object_add(k, "team", json_object_new_string(team));
        json_object_object_add(k, "error", NULL);
        json_object_object_add(k, "checks", json_object_new_array());
        return k;
}

/* A string member of an object, as a new json string, or NULL (JSON null). */
static json_object *string_member_or_null(json_object *o, const char *key) {
        json_object *v = NULL;
        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
            !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_new_string(json_object_get_string(v));
}

json_object *kb_report_kernel_info(json_object *info) {
        json_object *o = json_object_new_object(), *li = NULL;
        if (!o)
                return NULL;
        const char *fields[] = {"implementation", "implementation_version", "protocol_version"};
        for (size_t i = 0; i < KB_ELEMENTSOF(fields); i++)
                json_object_object_add(o, fields[i], string_member_or_null(info, fields[i]));
        if (info && json_object_is_type(info, json_type_object))
                json_object_object_get_ex(info, "language_info", &li);
        json_object_object_add(o, "language", string_member_or_null(li, "name"));
        json_object_object_add(o, "language_version", string_member_or_null(li, "version"));
        return o;
}

/* report.c: the verdict of a check run (its summary sentence, the claims) and the run object as
 * JSON; the other renderings are report_human.c, report_junit.c and report_markdown.c. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "kbound/report.h"
#include "base/cleanup.h"
#include "kbound/sanitize.h"
#include "verdict/rules.h"
#include "base/jsonget.h"
#include "kbound/check.h"
#include "report/report-internal.h"

/* The run object is ours, but its strings carry kernel names, error texts and check details that
 * may quote what a kernel printed. The summary bounds them so one runaway detail cannot turn it
 * into megabytes. */
#define SUMMARY_MAX_ITEMS 16
#define SUMMARY_MAX_TEXT 200
#define MAX_GROUPS 16

/* The network check: the summary's sentence says what became of it on its own (check.h). */
#define NETWORK_CHECK kb_check_id(KB_CHECK_NETWORK)

/* Each check of the full boundary, in the table's order (check.c), which is also the summary's: it
 * reads as the probes run. `continue` goes to the next; there is no `break`. */
#define FOREACH_BOUNDARY(b)                                                                                            \
        for (kb_check b##_c = 0; b##_c < _KB_CHECK_MAX; b##_c++)                                                       \
                for (const kb_check_info *b = kb_check_get(b##_c); b && b->phase == KB_CHECK_PHASE_BOUNDARY; b = NULL)

/* ---- what the renderings share (report-internal.h) ---- */

/* The rule conformance's kernel_info.language_info shares (rules.c): the kernel's warning, if any,
 * its kernelspec's language against what kernel_info said. False when there is none. */
bool report_kernel_warning(json_object *kernel, char *buf, size_t size) {
        return kb_rules_language_mismatch(kb_json_str(kb_json_get(kernel, "kernel_info"), "language"),
                                          kb_json_str(kernel, "language"), buf, size);
}

/* Fail closed: when the object cannot show the override was off, network isolation is not claimed. */
bool report_run_override(json_object *run) {
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
        {"not_run", STATUS_NOT_RUN},
};

check_status report_status_of(json_object *check) {
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

/* A skip when detail explains it; else a failure, with *ret_reason set to unexplained. */
static outcome explained(const char *detail, const char *unexplained, const char **ret_reason) {
        if (detail && detail[0])
                return OUTCOME_SKIP;
        *ret_reason = unexplained;
        return OUTCOME_FAIL;
}

outcome report_outcome(json_object *run, json_object *check, const char **ret_reason) {
        const char *reason = NULL;
        outcome result = OUTCOME_FAIL;
        const char *detail = kb_json_str(check, "detail");

        if (!kb_json_str(check, "id"))
                reason = "check without an id";
        else
                switch (report_status_of(check)) {
                case STATUS_PASS:
                        result = OUTCOME_PASS;
                        break;
                case STATUS_FAIL:
                case STATUS_NOT_RUN: /* a check nobody ran proves nothing: never green */
                        break;
                case STATUS_UNSUPPORTED:
                        result = explained(detail, "unsupported without a reason", &reason);
                        break;
                case STATUS_NOT_CLAIMED:
                        result = explained(detail, "not claimed without a reason", &reason);
                        break;
                case STATUS_DEVIATION:
                        result = explained(detail, "deviation without a name", &reason);
                        break;
                case STATUS_UNTESTED:
                        if (!detail || !detail[0])
                                reason = "untested without a reason";
                        else if (!run_allows_untested(run))
                                /* Only conformance takes --allow-untested: check has no such option, and
                                 * a check that went untested needs its cell (a pack), never a waiver. */
                                reason =
                                        kb_json_str(run, "kind") && strcmp(kb_json_str(run, "kind"), "conformance") == 0
                                                ? "untested, not accepted without --allow-untested"
                                                : "untested: a check passes only when tested";
                        else
                                result = OUTCOME_SKIP;
                        break;
                default:
                        reason = "no valid status";
                        break;
                }
        if (ret_reason)
                *ret_reason = reason;
        return result;
}

/* ---- text sanitizing (sanitize.c): every string of a run may quote a kernel ---- */

void report_put_clean(FILE *out, const char *text, size_t max, kb_sanitize_mode mode) {
        kb_sanitize_put(out, text, strlen(text), max, mode);
}

char *report_clean_line(const char *text, size_t max) {
        char *buf = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&buf, &size);
        if (!m)
                return NULL;
        report_put_clean(m, text ? text : "?", max, KB_SANITIZE_LINE);
        if (fclose(m) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

int report_flush(FILE *out) {
        if (fflush(out) != 0 || ferror(out))
                return -EIO;
        return 0;
}

const char *report_status_label(check_status s) {
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
        case STATUS_NOT_RUN:
                return "NOT RUN";
        default:
                return "FAIL"; /* anything unrecognized counts as a failure in the verdict too */
        }
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
                check_status s = report_status_of(check);
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
        case STATUS_NOT_RUN:
                return "not run";
        case STATUS_FAIL:
                return "failed";
        default:
                return "invalid";
        }
}

/* ---- the verdict ---- */

static bool kernel_passes(json_object *run, json_object *kernel) {
        json_object *checks = member_array(kernel, "checks");
        if (!json_object_is_type(kernel, json_type_object) || kernel_has_error(kernel) || array_len(checks) == 0)
                return false;
        for (size_t i = 0; i < array_len(checks); i++)
                if (report_outcome(run, json_object_array_get_idx(checks, i), NULL) == OUTCOME_FAIL)
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
        if (report_run_override(run) || array_len(kernels) == 0)
                return false;
        for (size_t i = 0; i < array_len(kernels); i++) {
                check_status s = kernel_id_status(json_object_array_get_idx(kernels, i), NETWORK_CHECK);
                if (s != STATUS_PASS && s != STATUS_FAIL)
                        return false;
        }
        return true;
}

json_object *report_not_tested(json_object *check) {
        json_object *list = member_array(kb_json_get(check, "evidence"), "not_tested");
        return array_len(list) ? list : NULL;
}

/* Whether a check of kernel named id says it did not test all it claims. */
static bool kernel_id_in_part(json_object *kernel, const char *id) {
        json_object *checks = member_array(kernel, "checks");
        for (size_t i = 0; i < array_len(checks); i++) {
                json_object *check = json_object_array_get_idx(checks, i);
                const char *check_id = kb_json_str(check, "id");
                if (check_id && strcmp(check_id, id) == 0 && report_not_tested(check))
                        return true;
        }
        return false;
}

/* Whether check id passed for every kernel; in_full: and each tested all it claims. */
static bool all_kernels_pass_check(json_object *run, const char *id, bool in_full) {
        json_object *kernels = run_kernels(run);
        if (array_len(kernels) == 0)
                return false;
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                if (kernel_id_status(kernel, id) != STATUS_PASS || (in_full && kernel_id_in_part(kernel, id)))
                        return false;
        }
        return true;
}

/* A claim is only as wide as what was proven: a boundary check that passed with a part of its
 * claim not proven (its evidence's not_tested: a canary not planted, a socket not placed) held in
 * part, never in full; so did any other check with such a part (a call left allowed by
 * --allow-syscall widens what every boundary rests on). */
static bool full_boundary_held(json_object *run) {
        FOREACH_BOUNDARY(b) {
                if (!all_kernels_pass_check(run, b->id, true))
                        return false;
        }
        json_object *kernels = run_kernels(run);
        for (size_t k = 0; k < array_len(kernels); k++) {
                json_object *checks = member_array(json_object_array_get_idx(kernels, k), "checks");
                for (size_t i = 0; i < array_len(checks); i++)
                        if (report_not_tested(json_object_array_get_idx(checks, i)))
                                return false;
        }
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

/* Which checks a summary list names: filter(run, check, status, &note) says whether check is one,
 * and may set note (NULL before the call) to what is said of it in parentheses. */
typedef bool check_filter(json_object *run, json_object *check, check_status status, const char **ret_note);

/* head, then "KERNEL ID" (and " (note)") for every check of every kernel that filter keeps,
 * through an item_list; nothing at all when it keeps none. Returns whether it named any. */
static bool write_check_list(FILE *out, json_object *run, const char *head, check_filter *filter, check_status status) {
        json_object *kernels = run_kernels(run);
        item_list l = {.out = out};
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                json_object *checks = member_array(kernel, "checks");
                for (size_t j = 0; j < array_len(checks); j++) {
                        json_object *check = json_object_array_get_idx(checks, j);
                        const char *note = NULL;
                        if (!filter(run, check, status, &note))
                                continue;
                        if (l.shown == 0 && l.omitted == 0)
                                fputs(head, out);
                        if (!list_next(&l))
                                continue;
                        put_bounded(out, kernel_name(kernel), SUMMARY_MAX_TEXT);
                        fputc(' ', out);
                        put_bounded(out, or_unknown(kb_json_str(check, "id")), SUMMARY_MAX_TEXT);
                        if (note)
                                fprintf(out, " (%s)", note);
                }
        }
        list_end(&l);
        return l.shown > 0;
}

/* A failing check: with status STATUS_NOT_RUN one the run never got to, else any other; the note
 * is why it fails, when report_outcome says more than its status. */
static bool failing(json_object *run, json_object *check, check_status status, const char **ret_note) {
        return report_outcome(run, check, ret_note) == OUTCOME_FAIL &&
               (report_status_of(check) == STATUS_NOT_RUN) == (status == STATUS_NOT_RUN);
}

/* "; KERNEL ID, KERNEL ID failed" (or "not run", for not_run): the failing checks of one kind, the
 * separator only when first is false. Returns whether it named any. */
static bool write_failing(FILE *out, json_object *run, bool not_run, bool first) {
        bool any = write_check_list(out, run, first ? "" : "; ", failing, not_run ? STATUS_NOT_RUN : STATUS_FAIL);
        if (any)
                fputs(not_run ? " not run" : " failed", out);
        return any;
}

/* "; boundaries held in part: python3 boundary.credentials (not tested: ...; ...)": every check that
 * did not test all it claims (its evidence's not_tested), passed or not (any: else passed only). */
static void write_held_in_part(FILE *out, json_object *run, bool any) {
        json_object *kernels = run_kernels(run);
        item_list l = {.out = out};
        for (size_t k = 0; k < array_len(kernels); k++) {
                json_object *kernel = json_object_array_get_idx(kernels, k), *checks = member_array(kernel, "checks");
                for (size_t i = 0; i < array_len(checks); i++) {
                        json_object *check = json_object_array_get_idx(checks, i), *list = report_not_tested(check);
                        if (!list || (!any && report_status_of(check) != STATUS_PASS))
                                continue;
                        if (l.shown == 0 && l.omitted == 0)
                                fputs(any ? "; not tested in full: " : "; boundaries held in part: ", out);
                        if (!list_next(&l))
                                continue;
                        put_bounded(out, kernel_name(kernel), SUMMARY_MAX_TEXT);
                        fputc(' ', out);
                        put_bounded(out, or_unknown(kb_json_str(check, "id")), SUMMARY_MAX_TEXT);
                        fputs(" (", out);
                        for (size_t j = 0; j < array_len(list) && j < SUMMARY_MAX_ITEMS; j++) {
                                const char *text = json_object_get_string(json_object_array_get_idx(list, j));
                                fputs(j ? "; " : "", out);
                                put_bounded(out, or_unknown(text), SUMMARY_MAX_TEXT);
                        }
                        fputs(")", out);
                }
        }
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

        /* Checks that failed, then those the run never got to: a cut-short run is not a broken
         * boundary, and the sentence must not say it is. */
        bool any = write_failing(out, run, false, first);
        any |= write_failing(out, run, true, first && !any);
        if (!any && first)
                fputs("the run did not pass", out); /* unreachable by construction; never an empty sentence */
        write_held_in_part(out, run, true);
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
                        if (!id || kb_check_is_boundary(id))
                                continue;
                        outcome o = report_outcome(run, check, NULL);
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

/* An explained skip outside the boundary (status unused), noted with its status. */
static bool skipped_outside_boundary(json_object *run, json_object *check, check_status status, const char **ret_note) {
        (void) status;
        const char *id = kb_json_str(check, "id");
        if (!id || kb_check_is_boundary(id) || report_outcome(run, check, NULL) != OUTCOME_SKIP)
                return false;
        *ret_note = status_words(report_status_of(check));
        return true;
}

/* "; not tested: ir interrupt.control (unsupported)" for every explained skip outside the boundary. */
static void write_not_tested(FILE *out, json_object *run) {
        (void) write_check_list(out, run, "; not tested: ", skipped_outside_boundary, STATUS_ABSENT);
}

/* For a pass that is not a full-boundary pass: which boundaries held everywhere, which did not
 * (network is left out: the sentence's head already says what happened to it). */
static void write_partial_boundaries(FILE *out, json_object *run) {
        json_object *kernels = run_kernels(run);
        item_list held = {.out = out};
        item_list missing = {.out = out};

        FOREACH_BOUNDARY(b) {
                if (strcmp(b->id, NETWORK_CHECK) == 0 || !all_kernels_pass_check(run, b->id, true))
                        continue;
                if (held.shown == 0)
                        fputs("; other boundaries held: ", out);
                if (list_next(&held))
                        fputs(b->summary, out);
        }
        if (held.shown == 0)
                fputs("; no other boundary held in full for every kernel", out);
        write_held_in_part(out, run, false);

        for (size_t k = 0; k < array_len(kernels); k++) {
                json_object *kernel = json_object_array_get_idx(kernels, k);
                FOREACH_BOUNDARY(b) {
                        const char *id = b->id;
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
        if (report_run_override(run)) {
                fputs("raw-network override", out);
                return;
        }
        json_object *kernels = run_kernels(run);
        item_list l = {.out = out};
        fprintf(out, "%s ", NETWORK_CHECK);
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
                const char *sep = "";
                FOREACH_BOUNDARY(b) {
                        fprintf(out, "%s%s", sep, b->summary);
                        sep = ", ";
                }
                fputs(")", out);
        } else if (!claimed) {
                fputs("PASS WITHOUT NETWORK CLAIM: network isolation was NOT claimed (", out);
                write_network_reason(out, run);
                fputs(")", out);
        } else {
                fputs("PASS WITH PARTIAL BOUNDARY: network isolation held, but not every boundary check "
                      "was claimed, tested in full and passed",
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

/* A check of that status that does not fail the run (no note). */
static bool of_status(json_object *run, json_object *check, check_status status, const char **ret_note) {
        (void) ret_note;
        return report_status_of(check) == status && report_outcome(run, check, NULL) != OUTCOME_FAIL;
}

/* "; known deviations: ir interrupt.control, ..." for every check of status s. */
static void write_status_list(FILE *out, json_object *run, check_status s, const char *head) {
        (void) write_check_list(out, run, head, of_status, s);
}

/* A conformance run claims no boundary: its sentence says how the protocol items went. */
static void write_conformance_pass(FILE *out, json_object *run) {
        json_object *kernels = run_kernels(run);
        size_t passed = 0;
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *checks = member_array(json_object_array_get_idx(kernels, i), "checks");
                for (size_t j = 0; j < array_len(checks); j++)
                        passed += report_outcome(run, json_object_array_get_idx(checks, j), NULL) == OUTCOME_PASS;
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

/* The kernel's start as a check of its own, "kernel.start", as the JUnit file has it: failed when
 * the kernel could not be checked (it has an error, or ran no check), with the error; else passed,
 * with its start-up time. NULL without memory. */
static json_object *kernel_start(json_object *kernel) {
        bool failed = kernel_has_error(kernel) || array_len(member_array(kernel, "checks")) == 0;
        const char *detail = !failed                    ? "the kernel started in the sandbox and answered kernel_info"
                             : kernel_has_error(kernel) ? kernel_error_text(kernel)
                                                        : "no checks were run";
        int64_t ms = member_ms(kernel, "startup_ms");
        json_object *start = json_object_new_object(), *evidence = json_object_new_object(),
                    *problems = json_object_new_array();
        if (!start || !evidence || !problems) {
                json_object_put(start);
                json_object_put(evidence);
                json_object_put(problems);
                return NULL;
        }
        json_object_object_add(start, "id", json_object_new_string("kernel.start"));
        json_object_object_add(start, "status", json_object_new_string(failed ? "fail" : "pass"));
        json_object_object_add(start, "detail", json_object_new_string(detail));
        json_object_object_add(start, "duration_ms", json_object_new_int64(ms > 0 ? ms : 0));
        if (failed)
                json_object_array_add(problems, json_object_new_string(detail));
        json_object_object_add(evidence, "problems", problems);
        json_object_object_add(start, "evidence", evidence);
        return start;
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
                if (set_member(kernel, "start", kernel_start(kernel)) < 0)
                        r = -ENOMEM;
                if (report_kernel_warning(kernel, warning, sizeof(warning))) {
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
        return report_flush(out);
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

/* report-internal.h: what the report's renderings (report_*.c) share: a check's status and outcome,
 * and tolerant accessors of the run object, which may be partial or hold wrong types. */
#pragma once

#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>
#include "kbound/sanitize.h"
#include "base/jsonget.h"

typedef enum check_status {
        STATUS_ABSENT = 0, /* ordered by badness: combining duplicates keeps the worst */
        STATUS_PASS,
        STATUS_UNSUPPORTED,
        STATUS_NOT_CLAIMED,
        STATUS_DEVIATION, /* conformance: a known deviation of the implementation, observed */
        STATUS_UNTESTED,  /* conformance: no snippet for the language, with the reason */
        STATUS_NOT_RUN,   /* the run never got to it (cut short, or a step it needs failed) */
        STATUS_FAIL,
        STATUS_INVALID,
} check_status;

typedef enum outcome {
        OUTCOME_PASS,
        OUTCOME_SKIP,
        OUTCOME_FAIL,
} outcome;

/* ---- tolerant accessors: nothing here crashes on a partial object ---- */

static inline const char *or_unknown(const char *s) {
        return s ? s : "?";
}

static inline json_object *member_array(json_object *obj, const char *key) {
        json_object *value = kb_json_get(obj, key);
        if (!value || !json_object_is_type(value, json_type_array))
                return NULL;
        return value;
}

static inline size_t array_len(json_object *array) {
        return array ? json_object_array_length(array) : 0;
}

/* A non-negative millisecond count, or -1 when absent, negative or not a number. */
static inline int64_t member_ms(json_object *obj, const char *key) {
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

static inline json_object *run_kernels(json_object *run) {
        return member_array(run, "kernels");
}

static inline const char *kernel_name(json_object *kernel) {
        return or_unknown(kb_json_str(kernel, "name"));
}

static inline bool kernel_has_error(json_object *kernel) {
        return kb_json_get(kernel, "error") != NULL;
}

/* The error as text; a non-string error still marks the kernel as broken. */
static inline const char *kernel_error_text(json_object *kernel) {
        return or_unknown(kb_json_str(kernel, "error"));
}

/* ---- shared by the renderings (report.c) ---- */

/* A check's "status" as the report format spells it; anything else is STATUS_INVALID. */
check_status report_status_of(json_object *check);
/* What a check says it did not test (its evidence's "not_tested": a canary its claim rests on that
 * could not be planted; strings), or NULL when it tested all it claims. A boundary check that
 * passed so held in part: never a full boundary. Borrowed. */
json_object *report_not_tested(json_object *check);

/* The status as the table shows it ("PASS", "NOT RUN"); anything unrecognized is "FAIL". */
const char *report_status_label(check_status s);

/* Whether a check of run keeps the run green. Only pass and *explained* unsupported/not_claimed/
 * deviation do (DESIGN.md: a silent skip must never look like a pass); an explained untested item
 * does only when the run allows untested items, since an item nobody tested proves nothing; a
 * check that was not run never does. *ret_reason (ret_reason may be NULL), for failures other
 * than a plain "fail", says what was wrong with the check itself (a static string; NULL
 * otherwise). That reason is not an error: report_outcome cannot fail, and the reason is part of
 * its answer, a finding about the check that the reports print beside it. */
outcome report_outcome(json_object *run, json_object *check, const char **ret_reason);

/* Fail closed: when the object cannot show the override was off, network isolation is not claimed. */
bool report_run_override(json_object *run);

/* The kernel's warning, if any: its kernelspec's language against what kernel_info said. */
bool report_kernel_warning(json_object *kernel, char *buf, size_t size);

/* Writes text through sanitize.c (every string of a run may quote a kernel), at most max bytes. */
void report_put_clean(FILE *out, const char *text, size_t max, kb_sanitize_mode mode);

/* text as one clean line (KB_SANITIZE_LINE, at most max bytes), malloc'd; NULL if out of memory. */
char *report_clean_line(const char *text, size_t max);

/* Flushes out: 0, or -EIO if anything written to it failed. */
int report_flush(FILE *out);

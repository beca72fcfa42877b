/* report_human.c: a check run as a table for people: a header per kernel, a row per check, the
 * verdict sentence. Piped, one result per line (greppable); on a terminal, fitted to its width and
 * coloured, as the caller's kb_report_style says. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "kbound/report.h"
#include "base/cleanup.h"
#include "kbound/sanitize.h"
#include "kbound/textwidth.h"
#include "report/report-internal.h"

#define HUMAN_MAX_DETAIL 400
#define HUMAN_MAX_NAME_WIDTH 24
#define HUMAN_MAX_ID_WIDTH 32
#define HUMAN_MAX_SUMMARY (HUMAN_MAX_DETAIL * 8)
#define STATUS_WIDTH 11    /* "UNSUPPORTED" */
#define DETAIL_MIN_COLS 24 /* narrower than this beside the columns, a detail gets lines of its own */
#define DETAIL_INDENT 4    /* ... indented so much */

static void put_spaces(FILE *out, size_t n) {
        while (n-- > 0)
                fputc(' ', out);
}

/* s (clean) in at most cols columns: whole if it fits, else cut with "..." at the end. Returns the
 * columns written, and sets *ret_cut if it cut. */
static size_t put_fitted(FILE *out, const char *s, size_t cols, bool *ret_cut) {
        size_t len = strlen(s), have = kb_text_columns(s, len);
        if (have <= cols) {
                fputs(s, out);
                return have;
        }
        if (ret_cut)
                *ret_cut = true;
        if (cols < 3) {
                fwrite("...", 1, cols, out);
                return cols;
        }
        size_t n = kb_text_fit(s, len, cols - 3);
        fwrite(s, 1, n, out);
        fputs("...", out);
        return kb_text_columns(s, n) + 3;
}

/* One line of text (untrusted: cleaned here) as a block: piped, whole (up to max bytes); on a
 * terminal, wrapped to its width with continuation lines indented by indent. */
static void put_line(FILE *out, const char *text, size_t max, size_t indent, const kb_report_style *st) {
        _cleanup_free_ char *clean = report_clean_line(text, max);
        if (!clean)
                return;
        if (st->width == 0 || kb_text_columns(clean, strlen(clean)) <= st->width) {
                fputs(clean, out);
                fputc('\n', out);
                return;
        }
        kb_text_wrap(out, clean, st->width, indent, st->width);
}

/* ---- colour: only kbound's own SGR sequences, around words kbound chose ---- */

static const char *status_sgr(check_status s) {
        switch (s) {
        case STATUS_PASS:
                return "\033[32m"; /* green */
        case STATUS_UNSUPPORTED:
        case STATUS_NOT_CLAIMED:
        case STATUS_DEVIATION:
        case STATUS_UNTESTED:
                return "\033[33m"; /* yellow: explained, not proven */
        case STATUS_NOT_RUN:
                return "\033[1;33m"; /* bold yellow: the run never got there */
        default:
                return "\033[1;31m"; /* bold red */
        }
}

static void put_label(FILE *out, check_status s, const kb_report_style *st) {
        const char *label = report_status_label(s);
        if (st->color)
                fprintf(out, "%s%s\033[0m", status_sgr(s), label);
        else
                fputs(label, out);
        put_spaces(out, strlen(label) < STATUS_WIDTH ? STATUS_WIDTH - strlen(label) : 0);
}

/* ---- the parts of the table ---- */

/* The header of a kernel as text: name, language, team, startup, implementation; then its error
 * and warning, each on a line of its own. Returns a malloc'd string, NULL if out of memory. */
static char *kernel_header(json_object *kernel) {
        json_object *info = kb_json_get(kernel, "kernel_info");
        int64_t startup = member_ms(kernel, "startup_ms");
        char *text = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&text, &size);
        if (!m)
                return NULL;
        fprintf(m, "kernel %s: language %s, team %s, startup ", kernel_name(kernel),
                or_unknown(kb_json_str(kernel, "language")), or_unknown(kb_json_str(kernel, "team")));
        if (startup >= 0)
                fprintf(m, "%" PRId64 " ms", startup);
        else
                fputs("? ms", m);
        fprintf(m, ", implementation %s %s", or_unknown(kb_json_str(info, "implementation")),
                or_unknown(kb_json_str(info, "implementation_version")));
        if (fclose(m) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

static void put_kernel_header(FILE *out, json_object *kernel, const kb_report_style *st) {
        _cleanup_free_ char *head = kernel_header(kernel);
        if (head)
                put_line(out, head, HUMAN_MAX_DETAIL * 4, 2, st);
        if (kernel_has_error(kernel)) {
                _cleanup_free_ char *line = NULL;
                if (asprintf(&line, "  error: %s", kernel_error_text(kernel)) >= 0)
                        put_line(out, line, HUMAN_MAX_DETAIL, 4, st);
        }
        char warning[256];
        if (report_kernel_warning(kernel, warning, sizeof(warning))) {
                _cleanup_free_ char *line = NULL;
                if (asprintf(&line, "  warning: %s", warning) >= 0)
                        put_line(out, line, HUMAN_MAX_DETAIL, 4, st);
        }
}

/* The sandbox and root lines. */
static void put_sandbox(FILE *out, json_object *sandbox, const kb_report_style *st) {
        _cleanup_free_ char *line = NULL;
        if (asprintf(&line, "sandbox: %s %s (%s)", or_unknown(kb_json_str(sandbox, "backend")),
                     or_unknown(kb_json_str(sandbox, "bwrap_version")), or_unknown(kb_json_str(sandbox, "bwrap"))) >= 0)
                put_line(out, line, HUMAN_MAX_DETAIL * 2, 9, st);
        /* Which root the kernels ran on: an image's, or the host's own system paths. */
        const char *rootfs = kb_json_str(sandbox, "rootfs");
        json_object *image = kb_json_get(sandbox, "image");
        _cleanup_free_ char *root = NULL;
        int r;
        if (rootfs && image) {
                /* An image given with --image: named as the user has it, by tag and digest. */
                const char *tag = kb_json_str(image, "tag");
                r = asprintf(&root,
                             "root:    image %s%s%s (%s, manifest %s), unpacked to %s (read-only; kernelspecs found "
                             "inside it; removed when kbound ends)",
                             or_unknown(kb_json_str(image, "path")), tag ? " tag " : "", tag ? tag : "",
                             or_unknown(kb_json_str(image, "format")),
                             or_unknown(kb_json_str(image, "manifest_digest")), rootfs);
        } else if (rootfs) {
                r = asprintf(&root, "root:    image %s (read-only; kernelspecs found inside it)", rootfs);
        } else {
                r = asprintf(&root, "root:    the host's system paths (read-only)");
        }
        if (r >= 0)
                put_line(out, root, HUMAN_MAX_DETAIL * 4, 9, st);
}

typedef struct columns {
        size_t name, id;
} columns;

/* Columns line up across kernels; a freak long name only widens its own line (piped), or is cut to
 * the column (on a terminal). */
static columns table_columns(json_object *kernels) {
        columns c = {1, 1};
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                json_object *checks = member_array(kernel, "checks");
                size_t len = strlen(kernel_name(kernel));
                if (len > c.name && len <= HUMAN_MAX_NAME_WIDTH)
                        c.name = len;
                for (size_t j = 0; j < array_len(checks); j++) {
                        len = strlen(or_unknown(kb_json_str(json_object_array_get_idx(checks, j), "id")));
                        if (len > c.id && len <= HUMAN_MAX_ID_WIDTH)
                                c.id = len;
                }
        }
        return c;
}

/* A column's cell: piped, the whole (clean) text padded; on a terminal, fitted to the column. */
static void put_cell(FILE *out, const char *text, size_t width, const kb_report_style *st) {
        _cleanup_free_ char *clean = report_clean_line(text, HUMAN_MAX_DETAIL);
        if (!clean)
                return;
        size_t used = st->width ? put_fitted(out, clean, width, NULL)
                                : (fputs(clean, out), kb_text_columns(clean, strlen(clean)));
        put_spaces(out, used < width ? width - used : 0);
}

/* One row: status, kernel, check id, detail. On a terminal a detail other than a pass's is wrapped
 * whole under its own column (or on lines of its own when the columns leave too little room);
 * another's is cut to the line unless st->whole, and *ret_cut says one was. */
static void put_row(FILE *out, json_object *run, json_object *kernel, json_object *check, columns c,
                    const kb_report_style *st, bool *ret_cut) {
        check_status s = report_status_of(check);
        put_label(out, s, st);
        fputs("  ", out);
        size_t prefix = STATUS_WIDTH + 2 + c.name + 2 + c.id + 2;
        bool narrow = st->width && prefix + DETAIL_MIN_COLS > st->width;
        if (narrow) {
                /* The kernel and id as far as they fit, the detail below. */
                size_t room = st->width > STATUS_WIDTH + 2 ? st->width - STATUS_WIDTH - 2 : 1;
                _cleanup_free_ char *ids = NULL;
                if (asprintf(&ids, "%s %s", kernel_name(kernel), or_unknown(kb_json_str(check, "id"))) >= 0) {
                        _cleanup_free_ char *clean = report_clean_line(ids, HUMAN_MAX_DETAIL);
                        if (clean)
                                put_fitted(out, clean, room, NULL); /* a column fitted: no detail lost */
                }
                fputc('\n', out);
                put_spaces(out, DETAIL_INDENT);
                prefix = DETAIL_INDENT;
        } else {
                put_cell(out, kernel_name(kernel), c.name, st);
                fputs("  ", out);
                put_cell(out, or_unknown(kb_json_str(check, "id")), c.id, st);
                fputs("  ", out);
        }
        _cleanup_free_ char *detail = report_clean_line(or_unknown(kb_json_str(check, "detail")), HUMAN_MAX_DETAIL);
        if (!detail) {
                fputc('\n', out);
                return;
        }
        if (st->width == 0) {
                fputs(detail, out);
                fputc('\n', out);
        } else if (st->whole || report_status_of(check) != STATUS_PASS) {
                kb_text_wrap(out, detail, st->width - prefix, prefix, st->width);
        } else {
                put_fitted(out, detail, st->width - prefix, ret_cut);
                fputc('\n', out);
        }
}

/* The verdict sentence, its head ("PASS:", "FAIL:") coloured by the verdict. */
static void put_summary(FILE *out, json_object *run, const kb_report_style *st) {
        const char *summary = kb_json_str(kb_json_get(run, "claims"), "summary");
        _cleanup_free_ char *fallback = NULL;
        if (!summary) {
                if (asprintf(&fallback, "verdict: %s", or_unknown(kb_json_str(run, "verdict"))) < 0)
                        return;
                summary = fallback;
        }
        _cleanup_free_ char *clean = report_clean_line(summary, HUMAN_MAX_SUMMARY);
        if (!clean)
                return;
        const char *verdict = kb_json_str(run, "verdict");
        const char *colon = strchr(clean, ':');
        size_t head = colon ? (size_t) (colon - clean) + 1 : 0;
        if (st->color && head > 0) {
                bool pass = verdict && strcmp(verdict, "pass") == 0;
                fprintf(out, "%s%.*s\033[0m", pass ? "\033[1;32m" : "\033[1;31m", (int) head, clean);
        } else {
                fwrite(clean, 1, head, out);
        }
        const char *rest = clean + head;
        if (st->width == 0) {
                fputs(rest, out);
                fputc('\n', out);
                return;
        }
        size_t used = kb_text_columns(clean, head);
        if (used + kb_text_columns(rest, strlen(rest)) <= st->width) {
                fputs(rest, out);
                fputc('\n', out);
                return;
        }
        fputc(' ', out);
        kb_text_wrap(out, rest, st->width > used + 1 ? st->width - used - 1 : 1, 2, st->width);
}

int kb_report_human_styled(json_object *run, FILE *out, const kb_report_style *style) {
        static const kb_report_style plain = {0};
        const kb_report_style *st = style ? style : &plain;
        json_object *kernels = run_kernels(run);

        if (!out)
                return -EINVAL;
        columns c = table_columns(kernels);
        json_object *sandbox = kb_json_get(run, "sandbox");
        if (sandbox)
                put_sandbox(out, sandbox, st);
        bool cut = false;
        for (size_t i = 0; i < array_len(kernels); i++) {
                json_object *kernel = json_object_array_get_idx(kernels, i);
                json_object *checks = member_array(kernel, "checks");
                put_kernel_header(out, kernel, st);
                for (size_t j = 0; j < array_len(checks); j++)
                        put_row(out, run, kernel, json_object_array_get_idx(checks, j), c, st, &cut);
        }
        put_summary(out, run, st);
        if (cut && st->cut_hint)
                put_line(out, st->cut_hint, HUMAN_MAX_DETAIL, 2, st);
        return report_flush(out);
}

int kb_report_human(json_object *run, FILE *out) {
        return kb_report_human_styled(run, out, NULL);
}

/* scenario_checks.c: the report's list of checks kept whole: in the table's order (check.c), with
 * each check no step reported added as not run. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "base/jsonget.h"
#include "run/scenario-internal.h"

size_t scenario_n_checks(void) {
        return _KB_CHECK_MAX;
}

/* Where the check stands in the table (check.c; past the end for an id not there). */
static size_t check_rank(json_object *check) {
        kb_check c = kb_check_from_id(kb_json_str(check, "id"));
        return c < 0 ? (size_t) _KB_CHECK_MAX : (size_t) c;
}

static int cmp_checks(const void *a, const void *b) {
        size_t ra = check_rank(*(json_object *const *) a), rb = check_rank(*(json_object *const *) b);
        return ra < rb ? -1 : ra > rb;
}

void scenario_sort_checks(ctx *x) {
        json_object_array_sort(x->h.checks, cmp_checks);
}

bool scenario_has_check(const ctx *x, const char *id) {
        for (size_t i = 0; i < json_object_array_length(x->h.checks); i++) {
                json_object *c = json_object_array_get_idx(x->h.checks, i), *v = NULL;
                if (json_object_object_get_ex(c, "id", &v) && strcmp(json_object_get_string(v), id) == 0)
                        return true;
        }
        return false;
}

void scenario_fill_missing(ctx *x, bool started) {
        char earlier[128];
        snprintf(earlier, sizeof(earlier), "an earlier step failed (see %s and the checks before it)",
                 kb_check_id(KB_CHECK_PERSISTENCE));
        const char *why = x->h.cancelled ? "the run was cancelled first"
                          : !started     ? "the kernel did not start in the sandbox (see the kernel's error)"
                          : x->h.wedged  ? "a long cell could not be stopped, so the kernel cannot answer"
                                         : earlier;
        for (kb_check c = 0; c < _KB_CHECK_MAX; c++)
                if (!scenario_has_check(x, kb_check_id(c)))
                        scenario_add_check(x, kb_check_id(c), "not_run", kb_now_ms(), NULL, "not run: %s", why);
}

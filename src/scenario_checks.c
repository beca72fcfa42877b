/* scenario_checks.c: the checks every kernel gets, in the order they run (docs/probes.md), and the
 * report's list kept whole: in that order, with each check no step reported added as not run. */
#include <string.h>
#include <json-c/json.h>
#include "jsonget.h"
#include "scenario-internal.h"

/* Every check a kernel gets, in the order they run (docs/probes.md). */
static const char *const check_ids[] = {
        "sandbox.backend",
        "sandbox.privileges",
        "sandbox.session",
        "sandbox.attack_surface",
        "sandbox.resources",
        "identity.pid2",
        "identity.pidfd",
        "boundary.descriptors",
        "boundary.write_outside",
        "boundary.workspace_writable",
        "boundary.network",
        "boundary.sockets",
        "boundary.credentials",
        "boundary.cross_team",
        "interrupt.control",
        "interrupt.pidfd",
        "persistence.namespace",
        "lifecycle.shutdown",
        NULL,
};

const char *const *kb_scenario_checks(void) {
        return check_ids;
}

size_t scenario_n_checks(void) {
        return KB_ELEMENTSOF(check_ids) - 1;
}

/* Where id stands in check_ids (past the end for an id not there). */
static size_t check_rank(json_object *check) {
        const char *id = kb_json_str(check, "id");
        size_t i = 0;
        for (; check_ids[i]; i++)
                if (id && strcmp(id, check_ids[i]) == 0)
                        break;
        return i;
}

static int cmp_checks(const void *a, const void *b) {
        size_t ra = check_rank(*(json_object *const *) a), rb = check_rank(*(json_object *const *) b);
        return ra < rb ? -1 : ra > rb;
}

void scenario_sort_checks(ctx *x) {
        json_object_array_sort(x->h.checks, cmp_checks);
}

static bool has_check(const ctx *x, const char *id) {
        for (size_t i = 0; i < json_object_array_length(x->h.checks); i++) {
                json_object *c = json_object_array_get_idx(x->h.checks, i), *v = NULL;
                if (json_object_object_get_ex(c, "id", &v) && strcmp(json_object_get_string(v), id) == 0)
                        return true;
        }
        return false;
}

void scenario_fill_missing(ctx *x) {
        for (const char *const *id = check_ids; *id; id++)
                if (!has_check(x, *id))
                        scenario_add_check(x, *id, "not_run", kb_now_ms(), NULL, "not run: %s",
                                           x->h.cancelled ? "the run was cancelled first"
                                           : x->h.wedged
                                                   ? "a long cell could not be stopped, so the kernel cannot answer"
                                                   : "an earlier step failed (see persistence.namespace and the checks "
                                                     "before it)");
}

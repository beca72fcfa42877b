/* scenario_start.c: the kernel's start: what kbound arranged for the sandbox and the host's look
 * before exec, and, for a kernel that did not start, what that look shows of each check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "base/cleanup.h"
#include "base/procfs.h"
#include "base/jsonget.h"
#include "kbound/inspect.h"
#include "kbound/judge.h"
#include "base/jsonpool.h"
#include "run/scenario-internal.h"
#include "sandbox/sandbox-internal.h"

/* ---- before exec: what kbound arranged, and the look ---- */

/* The dev and ino (FILE_ID's, TEAM_BIND's: dev_fact, ino_fact) of path, no symlink followed, into a
 * new object; NULL when path is not there or out of memory. */
json_object *scenario_file_id(const char *path, kb_fact_str dev_fact, kb_fact_int ino_fact) {
        struct stat st;
        if (!path || lstat(path, &st) < 0)
                return NULL;
        json_object *o = json_object_new_object();
        char dev[KB_PROCFS_DEV_MAX];
        kb_procfs_dev(major(st.st_dev), minor(st.st_dev), dev);
        if (!o || kb_fact_set_str(o, dev_fact, dev) < 0 || kb_fact_set_int(o, ino_fact, (int64_t) st.st_ino) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* The limits asked (LIMITS in facts.def: every limit of limits.h's table, 0 when not asked), or NULL
 * when out of memory (then not known). */
static json_object *limits_asked(const kb_sandbox_hardening *hard) {
        const kb_fact_int facts[KB_LIMIT_MAX_ID] = {
                /* automatic: facts are not constant expressions */
                [KB_LIMIT_MEMORY] = FACT_LIMITS_MEMORY, [KB_LIMIT_TASKS] = FACT_LIMITS_TASKS,
                [KB_LIMIT_TMP] = FACT_LIMITS_TMP,       [KB_LIMIT_WORKSPACE] = FACT_LIMITS_WORKSPACE,
                [KB_LIMIT_LOG] = FACT_LIMITS_LOG,       [KB_LIMIT_CPU] = FACT_LIMITS_CPU,
        };
        json_object *limits = json_object_new_object();
        bool ok = limits != NULL;
        /* A limit limits.h gained without its fact here is a record kbound cannot make: not known. */
        for (size_t i = 0; ok && i < KB_LIMIT_MAX_ID; i++)
                ok = kb_fact_row(facts[i].id)->object == KB_FACT_OBJECT_LIMITS &&
                     kb_fact_set_int(limits, facts[i], hard ? (int64_t) hard->limits.max[i] : 0) == 0;
        if (ok && hard)
                ok = kb_fact_set_bool(limits, FACT_LIMITS_TMPFS_SIZE, hard->tmpfs_size) == 0;
        if (!ok) {
                json_object_put(limits);
                return NULL;
        }
        return limits;
}

/* What kbound arranged for the sandbox, known before the kernel's program runs (scenario-internal.h):
 * set at the look before exec, so that a kernel that does not start is judged against it, and
 * again once the kernel answers. */
void scenario_expect_sandbox(ctx *x, const kb_sandbox *sb) {
        if (!x->expect && !(x->expect = json_object_new_object()))
                return; /* every judge then fails for the lack of it */
        scenario_expect_bool(x, FACT_EXPECT_ALLOW_NETWORK, x->env->allow_network);
        scenario_expect_str(x, FACT_EXPECT_BWRAP, x->env->harness.bwrap);
        scenario_expect_str(x, FACT_EXPECT_BWRAP_VERSION, x->env->bwrap_version ? x->env->bwrap_version : "?");
        scenario_expect_int(x, FACT_EXPECT_PIDNS, (int64_t) kb_sandbox_pidns(sb));
        /* What kbound launched: the running bwrap must be exactly this (sandbox.backend), and hold
         * nothing else before the kernel runs (boundary.descriptors). */
        json_object *launch = NULL;
        if (kb_sandbox_launch_facts(sb) && json_object_deep_copy(kb_sandbox_launch_facts(sb), &launch, NULL) == 0 &&
            kb_fact_set_arr(launch, FACT_LAUNCH_ENV, kb_inspect_env_digests(kb_sandbox_planned_env(sb))) < 0) {
                json_object_put(launch); /* no record, rather than one without the environment */
                launch = NULL;
        }
        scenario_expect_obj(x, FACT_EXPECT_LAUNCH, launch);
        scenario_expect_obj(x, FACT_EXPECT_CGROUP, kb_sandbox_cgroup_facts(sb));
        scenario_expect_obj(x, FACT_EXPECT_LIMITS, limits_asked(x->env->harness.hardening));
        scenario_expect_int(x, FACT_EXPECT_SECRETS_GUARDED, (int64_t) kb_secrets_count(x->env->secrets));
        /* What was planted for the checks' claims, and what could not be (each kernel its own copy:
         * the kernels' threads share the run's). */
        json_object *canaries = NULL;
        if (x->env->canaries_planted && json_object_deep_copy(x->env->canaries_planted, &canaries, NULL) < 0)
                canaries = NULL; /* not known: every check fails for the lack (facts.def requires it) */
        scenario_expect_arr(x, FACT_EXPECT_CANARIES, canaries);
        scenario_expect_str(x, FACT_EXPECT_KEYRING,
                            x->env->keyring_canary == 0 ? "planted in kbound's session keyring"
                                                        : strerror(-x->env->keyring_canary));
        /* The team's own read-write folders, as the sandbox was launched with them. */
        const kb_sandbox_policy *policy = kb_sandbox_launched_policy(sb);
        json_object *binds = json_object_new_array();
        /* An audited sandbox's launcher was handed the team's folders by path (scenario_audit.c). */
        bool audited = kb_sandbox_audited(sb) && x->h.kernel;
        const char *dirs[][2] = {{"workspace", policy    ? policy->workspace
                                               : audited ? kb_kernel_workspace(x->h.kernel)
                                                         : NULL},
                                 {"runtime", policy    ? policy->runtime_dir
                                             : audited ? kb_kernel_runtime_dir(x->h.kernel)
                                                       : NULL}};
        for (size_t i = 0; i < KB_ELEMENTSOF(dirs); i++) {
                json_object *id = scenario_file_id(dirs[i][1], FACT_TEAM_BIND_DEV, FACT_TEAM_BIND_INO);
                if (!id)
                        continue; /* unknown: the bind then counts as foreign, never as the team's */
                _cleanup_free_ char *real = realpath(dirs[i][1], NULL);
                if (kb_fact_set_str(id, FACT_TEAM_BIND_NAME, dirs[i][0]) < 0 ||
                    (real ? kb_fact_set_str(id, FACT_TEAM_BIND_PATH, real)
                          : kb_fact_set_null(id, FACT_TEAM_BIND_PATH)) < 0 ||
                    json_object_array_add(binds, id) < 0)
                        json_object_put(id);
        }
        scenario_expect_arr(x, FACT_EXPECT_TEAM_BINDS, binds);
        /* Where every team's folders are (teams/), and every kbound run's (its parent): as the
         * mount tables name folders, with no link or doubled slash (none found fails closed). */
        _cleanup_free_ char *base = x->env->harness.base_dir ? realpath(x->env->harness.base_dir, NULL) : NULL;
        scenario_expect_str(x, FACT_EXPECT_BASE_DIR, base);
}

/* The host's look while bwrap's init waits on kbound's --block-fd pipe, before anything of the
 * kernel runs (kb_kernel_options.before_exec): every descriptor then must be one kbound handed
 * in, and nothing the kernel does later can hide one (boundary.descriptors). */
void scenario_pre_exec_look(void *userdata, const kb_sandbox *sb) {
        ctx *x = userdata;
        int64_t t0 = kb_now_ms();
        const kb_secrets *sets[] = {x->env->secrets, x->env->sibling_secrets};
        kb_inspect_target t = {
                .proc_root = "/proc",
                .init_pid = kb_sandbox_init_pid(sb),
                .kernel_pid = 0, /* not started yet */
                .launcher_pid = kb_sandbox_bwrap_pid(sb),
                .pidns_ino = kb_sandbox_pidns(sb),
                .secrets = sets,
                .n_secrets = KB_ELEMENTSOF(sets),
        };
        json_object *look = NULL;
        if (kb_inspect_pre_exec(&t, &look) == 0) {
                kb_json_pool_intern(x->pool, &look);
                json_object_put(x->pre_exec);
                x->pre_exec = look;
        }
        x->pre_exec_ms = kb_now_ms() - t0;
        x->inspect_ms += x->pre_exec_ms;
        /* What that look is judged against, should the kernel not start. */
        scenario_expect_sandbox(x, sb);
}

/* ---- a kernel that did not start ---- */

/* How a finding reads after "the host saw": the judges' words, without their own "before the
 * kernel ran, " (the sentence says it once). */
static const char *finding_words(const char *detail) {
        static const char seen[] = "before the kernel ran, ";
        return strncmp(detail, seen, strlen(seen)) == 0 ? detail + strlen(seen) : detail;
}

/* The first problem a check found (its detail says how many more), or NULL. */
static const char *first_problem(json_object *check) {
        json_object *problems = kb_json_get(kb_json_get(check, "evidence"), "problems");
        return problems && json_object_is_type(problems, json_type_array) && json_object_array_length(problems)
                       ? json_object_get_string(json_object_array_get_idx(problems, 0))
                       : NULL;
}

static bool failed(json_object *check) {
        const char *status = kb_json_str(check, "status");
        return status && strcmp(status, "fail") == 0;
}

/* sandbox.backend for a kernel that did not start: always failed (the kernel never ran in it),
 * its detail the first finding (seen, in check c's words) and why the start failed; its own
 * findings, if any, stay in its evidence's problems, why last. The check judged (own) is taken. */
static json_object *backend_check(json_object *own, const char *seen, kb_check c, const char *why) {
        char *detail = NULL;
        if (asprintf(&detail, "before the kernel ran, the host saw %s (%s); %s", finding_words(seen), kb_check_id(c),
                     why) < 0)
                detail = NULL;
        json_object *ev = NULL, *problems = NULL;
        if (!own || !detail || !json_object_object_get_ex(own, "evidence", &ev) ||
            !json_object_object_get_ex(ev, "problems", &problems)) {
                free(detail);
                json_object_put(own);
                return NULL;
        }
        json_object_array_add(problems, json_object_new_string(why));
        json_object_object_add(own, "status", json_object_new_string("fail"));
        json_object_object_add(own, "detail", json_object_new_string(detail));
        free(detail);
        return own;
}

/* The check into the kernel's list (NULL: out of memory, a failure). */
static void add(ctx *x, kb_check c, json_object *check) {
        if (!check) {
                scenario_add_check(x, kb_check_id(c), "fail", 0, NULL, "out of memory while judging");
                return;
        }
        json_object_object_add(check, "duration_ms", json_object_new_int64(0));
        json_object_array_add(x->h.checks, check);
        kb_harness_log(&x->h, KB_LOG_DEBUG, "%s %s: %s", kb_check_id(c), kb_json_str(check, "status"),
                       kb_json_str(check, "detail"));
}

bool scenario_judge_before_start(ctx *x, const char *why) {
        if (!x->pre_exec)
                return false;
        /* kbound's own facts, which every look is compared with; kbound's, so still true now. */
        _cleanup_json_ json_object *host = NULL;
        if (kb_inspect_host("/proc", &host) < 0)
                host = NULL; /* the checks that need them fail for the lack */
        kb_judge_input in = {.host = host, .pre_exec = x->pre_exec, .expect = x->expect};
        json_object *checks[_KB_CHECK_MAX] = {NULL};
        kb_check first = _KB_CHECK_INVALID;
        for (kb_check c = 0; c < _KB_CHECK_MAX; c++) {
                const kb_check_info *info = kb_check_get(c);
                if (!info->judge_before_start)
                        continue;
                checks[c] = info->judge_before_start(&in);
                /* The boundary a finding breaks names it best; the backend's own (a bwrap not kbound's)
                 * says who made the sandbox, so it comes first only when it is the only one. */
                if (failed(checks[c]) && (first < 0 || first == KB_CHECK_BACKEND))
                        first = c;
        }
        if (first < 0) {
                for (kb_check c = 0; c < _KB_CHECK_MAX; c++)
                        json_object_put(checks[c]);
                return false;
        }
        const char *seen = first_problem(checks[first]);
        checks[KB_CHECK_BACKEND] = backend_check(checks[KB_CHECK_BACKEND], seen ? seen : "?", first, why);
        const char *error = kb_json_str(checks[KB_CHECK_BACKEND], "detail");
        char line[2048];
        snprintf(line, sizeof line, "cannot start in the sandbox: %s", error ? error : why);
        json_object_object_add(x->h.k, "error", json_object_new_string(line));
        kb_harness_log(&x->h, KB_LOG_ERROR, "%s", line);
        for (kb_check c = 0; c < _KB_CHECK_MAX; c++) {
                if (scenario_has_check(x, kb_check_id(c)))
                        json_object_put(checks[c]); /* the start decided it already */
                else if (kb_check_get(c)->judge_before_start)
                        add(x, c, checks[c]);
                else
                        scenario_add_check(x, kb_check_id(c), "not_run", 0, NULL,
                                           "not run: the kernel did not start (%s says why), and this check needs "
                                           "it running",
                                           kb_check_id(KB_CHECK_BACKEND));
        }
        scenario_sort_checks(x);
        return true;
}

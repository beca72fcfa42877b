/* run.c: a run across kernels: team names, a thread per kernel, the run object and its exit code. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "kbound/check.h"
#include "kbound/conformance.h"
#include "kbound/report.h"
#include "kbound/run.h"
#include "kbound/sandbox.h"

typedef struct run_kernel {
        kb_run *run;
        const kb_kernelspec *spec;
        char team[KB_TEAM_NAME_MAX + 1];
        kb_transcript_source *source;
        pthread_t thread;
        json_object *result;
        kb_check_outcome outcome;
} run_kernel;

struct kb_run {
        kb_transcript *transcript;
        kb_run_kernel_fn fn;
        void *userdata;
        size_t n, n_started;
        run_kernel kernels[KB_RUN_KERNELS_MAX];
};

int kb_run_new(const char *team_prefix, kb_kernelspec *const *specs, size_t n, kb_transcript *transcript,
               kb_run **ret) {
        if (!team_prefix || !*team_prefix || strlen(team_prefix) > KB_RUN_TEAM_PREFIX_MAX || n == 0 ||
            n > KB_RUN_KERNELS_MAX || !specs || !ret)
                return -EINVAL;
        kb_run *run = calloc(1, sizeof(*run));
        if (!run)
                return -ENOMEM;
        run->transcript = transcript;
        run->n = n;
        for (size_t i = 0; i < n; i++) {
                run_kernel *k = &run->kernels[i];
                k->run = run;
                k->spec = specs[i];
                /* Two kernels of one name (two folders of one kernelspec) still get a team each. */
                bool repeated = false;
                for (size_t j = 0; j < n; j++)
                        if (j != i && strcmp(specs[j]->name, specs[i]->name) == 0)
                                repeated = true;
                if (repeated)
                        snprintf(k->team, sizeof(k->team), "%s-%.16s-%zu", team_prefix, specs[i]->name, i + 1);
                else
                        snprintf(k->team, sizeof(k->team), "%s-%.20s", team_prefix, specs[i]->name);
        }
        *ret = run;
        return 0;
}

const char *kb_run_team(const kb_run *run, size_t i) {
        return run && i < run->n ? run->kernels[i].team : NULL;
}

static void *kernel_main(void *arg) {
        run_kernel *k = arg;
        kb_client_msg_fn on_msg = k->source ? kb_transcript_on_msg : NULL;
        (void) k->run->fn(k->run->userdata, k->spec, k->team, on_msg, k->source, &k->result, &k->outcome);
        return NULL;
}

int kb_run_kernels(kb_run *run, kb_run_kernel_fn fn, void *userdata, size_t *ret_failed) {
        if (!run || !fn || run->n_started)
                return -EINVAL;
        run->fn = fn;
        run->userdata = userdata;
        int r = 0;
        for (size_t i = 0; i < run->n; i++) {
                run_kernel *k = &run->kernels[i];
                if (run->transcript &&
                    kb_transcript_source_new(run->transcript, k->spec->name, k->team, &k->source) < 0)
                        r = -ENOMEM;
                else if ((r = -pthread_create(&k->thread, NULL, kernel_main, k)) < 0)
                        kb_transcript_source_destroy(&k->source);
                if (r < 0) {
                        if (ret_failed)
                                *ret_failed = i;
                        break;
                }
                run->n_started++;
        }
        for (size_t i = 0; i < run->n_started; i++)
                pthread_join(run->kernels[i].thread, NULL);
        for (size_t i = 0; i < run->n; i++)
                kb_transcript_source_destroy(&run->kernels[i].source);
        return r;
}

static int check_one(void *userdata, const kb_kernelspec *spec, const char *team, kb_client_msg_fn on_msg,
                     void *on_msg_userdata, json_object **ret, kb_check_outcome *ret_outcome) {
        kb_check_env env = *(const kb_check_env *) userdata;
        env.harness.on_msg = on_msg;
        env.harness.on_msg_userdata = on_msg_userdata;
        return kb_scenario_run(&env, spec, team, ret, ret_outcome);
}

static int conformance_one(void *userdata, const kb_kernelspec *spec, const char *team, kb_client_msg_fn on_msg,
                           void *on_msg_userdata, json_object **ret, kb_check_outcome *ret_outcome) {
        kb_conformance_env env = *(const kb_conformance_env *) userdata;
        env.harness.on_msg = on_msg;
        env.harness.on_msg_userdata = on_msg_userdata;
        int r = kb_conformance_run(&env, spec, team, ret, ret_outcome);
        /* A kernel object from a run that failed is not trusted to be whole: the kernel counts as
         * cut short. */
        if (r < 0) {
                json_object_put(*ret);
                *ret = NULL;
        }
        return r;
}

int kb_run_check(kb_run *run, const kb_check_env *env, size_t *ret_failed) {
        return kb_run_kernels(run, check_one, (void *) env, ret_failed);
}

int kb_run_conformance(kb_run *run, const kb_conformance_env *env, size_t *ret_failed) {
        return kb_run_kernels(run, conformance_one, (void *) env, ret_failed);
}

json_object *kb_run_sandbox_new(const char *bwrap, const char *bwrap_version) {
        json_object *sandbox = json_object_new_object();
        if (!sandbox)
                return NULL;
        json_object_object_add(sandbox, "backend", json_object_new_string("bubblewrap"));
        json_object_object_add(sandbox, "bwrap", json_object_new_string(bwrap ? bwrap : ""));
        json_object_object_add(sandbox, "bwrap_version", json_object_new_string(bwrap_version ? bwrap_version : ""));
        json_object_object_add(sandbox, "uid", json_object_new_int((int) getuid()));
        return sandbox;
}

int kb_run_report(kb_run *run, const kb_run_facts *facts, json_object **ret, int *ret_exit_code) {
        json_object *sandbox = facts ? facts->sandbox : NULL;
        if (!run || !facts || !ret || !ret_exit_code) {
                json_object_put(sandbox);
                return -EINVAL;
        }
        json_object *out = json_object_new_object();
        json_object *kernels = json_object_new_array();
        json_object *claims = json_object_new_object();
        if (!out || !kernels || !claims || !sandbox) {
                json_object_put(out);
                json_object_put(kernels);
                json_object_put(claims);
                json_object_put(sandbox);
                return -ENOMEM;
        }
        bool conformance = facts->kind == KB_RUN_CONFORMANCE;
        if (conformance)
                json_object_object_add(out, "kind", json_object_new_string("conformance"));
        json_object_object_add(out, "kbound_version", json_object_new_string(KBOUND_VERSION));
        json_object_object_add(out, "started_at", json_object_new_string(facts->started_at ? facts->started_at : ""));
        json_object_object_add(out, "duration_ms", json_object_new_int64(kb_now_ms() - facts->started_ms));
        bool not_enforced = false, cancelled = facts->signal != 0 || run->n_started < run->n;
        for (size_t i = 0; i < run->n_started; i++) {
                run_kernel *k = &run->kernels[i];
                if (k->result)
                        json_object_array_add(kernels, k->result);
                not_enforced |= k->outcome == KB_CHECK_NOT_ENFORCED;
                cancelled |= k->outcome == KB_CHECK_CANCELLED || !k->result;
                k->result = NULL;
        }
        json_object_object_add(out, "complete", json_object_new_boolean(!cancelled));
        /* An untested item proves nothing: it fails the run unless the caller accepted that. */
        if (conformance)
                json_object_object_add(out, "allow_untested", json_object_new_boolean(facts->allow_untested));
        char reason[128] = "";
        if (facts->signal)
                snprintf(reason, sizeof(reason), "interrupted by signal %d", facts->signal);
        else if (cancelled)
                snprintf(reason, sizeof(reason), "the %.40s s deadline passed (--timeout)",
                         facts->timeout ? facts->timeout : "?");
        json_object_object_add(out, "incomplete_reason", *reason ? json_object_new_string(reason) : NULL);
        json_object_object_add(claims, "raw_network_override", json_object_new_boolean(facts->raw_network_override));
        json_object_object_add(out, "claims", claims);
        json_object_object_add(out, "sandbox", sandbox);
        json_object_object_add(out, "kernels", kernels);

        int verdict = kb_report_finish(out);
        int exit_code = not_enforced                                              ? KB_RUN_EXIT_NOT_ENFORCED
                        : (verdict != 0 || cancelled || facts->transcript_failed) ? KB_RUN_EXIT_FAIL
                                                                                  : KB_RUN_EXIT_PASS;
        json_object_object_add(out, "exit_code", json_object_new_int(exit_code));
        *ret = out;
        *ret_exit_code = exit_code;
        return 0;
}

void kb_run_destroy(kb_run **runp) {
        if (!runp || !*runp)
                return;
        kb_run *run = *runp;
        for (size_t i = 0; i < run->n; i++) {
                json_object_put(run->kernels[i].result);
                kb_transcript_source_destroy(&run->kernels[i].source);
        }
        free(run);
        *runp = NULL;
}

json_object *kb_run_refused_kernel(kb_run_kind kind, const char *name, const kb_kernelspec *spec,
                                   const char *team_prefix, const char *why) {
        if (!name || !team_prefix || !why)
                return NULL;
        char team[KB_TEAM_NAME_MAX + 1];
        snprintf(team, sizeof team, "%s-%.20s", team_prefix, spec ? spec->name : name);
        /* A kernel not found has only the name it was asked by. */
        kb_kernelspec unknown = {.name = (char *) name,
                                 .display_name = (char *) name,
                                 .language = (char *) "",
                                 .interrupt_mode = (char *) "",
                                 .resource_dir = (char *) ""};
        json_object *k = kb_report_kernel_new(spec ? spec : &unknown, team), *checks = NULL;
        if (!k)
                return NULL;
        if (!spec)
                json_object_object_add(k, "interrupt_mode", NULL);
        char error[1100], detail[1100];
        snprintf(error, sizeof error, "not started: the run was refused before any kernel started: %s", why);
        snprintf(detail, sizeof detail, "not run: the run was refused before any kernel started: %s", why);
        json_object_object_add(k, "error", json_object_new_string(error));
        json_object_object_get_ex(k, "checks", &checks);
        const char *const *items = kind == KB_RUN_CONFORMANCE ? kb_conformance_items() : NULL;
        size_t n = kind == KB_RUN_CONFORMANCE ? 0 : (size_t) _KB_CHECK_MAX;
        while (items && items[n])
                n++;
        for (size_t i = 0; i < n; i++) {
                json_object *c = json_object_new_object(), *ev = json_object_new_object(),
                            *problems = json_object_new_array();
                if (!c || !ev || !problems) {
                        json_object_put(c);
                        json_object_put(ev);
                        json_object_put(problems);
                        json_object_put(k);
                        return NULL;
                }
                json_object_object_add(c, "id", json_object_new_string(items ? items[i] : kb_check_id((kb_check) i)));
                json_object_object_add(c, "status", json_object_new_string("not_run"));
                json_object_object_add(c, "detail", json_object_new_string(detail));
                json_object_object_add(c, "duration_ms", json_object_new_int64(0));
                json_object_array_add(problems, json_object_new_string(detail));
                json_object_object_add(ev, "problems", problems);
                json_object_object_add(c, "evidence", ev);
                if (json_object_array_add(checks, c) < 0) {
                        json_object_put(c);
                        json_object_put(k);
                        return NULL;
                }
        }
        return k;
}

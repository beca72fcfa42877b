/* harness.c: the kernel under test, as check and conformance share it (harness-internal.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "kbound/report.h"
#include "base/cleanup.h"
#include "run/harness-internal.h"

void kb_harness_log(const kb_harness *h, int level, const char *fmt, ...) {
        if (!h->log)
                return;
        char buf[600], line[700];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        snprintf(line, sizeof(line), "kernel '%s': %s", h->spec->name, buf);
        /* Details quote the kernel (its log, kernel_info, error values, stream text): redacted
         * before anyone sees them, with its key and every secret set. */
        _cleanup_free_ char *clean = h->kernel ? kb_kernel_redact_text(h->kernel, line) : strdup(line);
        for (size_t i = 0; clean && i < KB_ELEMENTSOF(h->secrets); i++) {
                if (!h->secrets[i])
                        continue;
                char *r = kb_secrets_redact_text(h->secrets[i], clean, strlen(clean), NULL);
                free(clean);
                clean = r;
        }
        if (clean)
                h->log(h->log_userdata, level, clean);
}

void kb_harness_phase(const kb_harness *h, const char *fmt, ...) {
        char buf[500];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (h->started_ms > 0) {
                int64_t ms = kb_now_ms() - h->started_ms;
                kb_harness_log(h, KB_LOG_INFO, "[%" PRId64 ".%" PRId64 " s] %s", ms / 1000, ms % 1000 / 100, buf);
        } else {
                kb_harness_log(h, KB_LOG_INFO, "%s", buf);
        }
}

void kb_harness_add_check(kb_harness *h, const char *id, const char *status, int64_t t0, json_object *ev,
                          const char *detail) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "id", json_object_new_string(id));
        json_object_object_add(c, "status", json_object_new_string(status));
        json_object_object_add(c, "detail", json_object_new_string(detail));
        json_object_object_add(c, "duration_ms", json_object_new_int64(t0 ? kb_now_ms() - t0 : 0));
        if (!ev)
                ev = json_object_new_object();
        /* Every check lists the problems it found, as the judge's do: none for a pass, else the
         * detail, so a reader finds them in one place whichever part of kbound made the check. */
        if (ev && !json_object_object_get_ex(ev, "problems", NULL)) {
                json_object *problems = json_object_new_array();
                if (problems && strcmp(status, "pass") != 0)
                        json_object_array_add(problems, json_object_new_string(detail));
                json_object_object_add(ev, "problems", problems);
        }
        json_object_object_add(c, "evidence", ev);
        json_object_array_add(h->checks, c);
        kb_harness_log(h, KB_LOG_DEBUG, "%s %s: %s", id, status, detail);
}

int64_t kb_harness_deadline_in(const kb_harness *h, int64_t ms) {
        int64_t d = kb_now_ms() + ms;
        return h->deadline_ms >= 0 && h->deadline_ms < d ? h->deadline_ms : d;
}

bool kb_harness_deadline_passed(const kb_harness *h) {
        return h->deadline_ms >= 0 && kb_ms_left(h->deadline_ms) == 0;
}

int kb_harness_find_pack(const kb_harness_env *env, const char *language, kb_langpack **ret, char *where,
                         size_t where_size) {
        if (env->user_kernels_dir)
                snprintf(where, where_size, "%s, then %s", env->user_kernels_dir, env->kernels_dir);
        else
                snprintf(where, where_size, "%s", env->kernels_dir);
        int r = env->user_kernels_dir ? kb_langpack_find(env->user_kernels_dir, language, ret) : -ENOENT;
        return r == -ENOENT ? kb_langpack_find(env->kernels_dir, language, ret) : r;
}

kb_kernel_options kb_harness_kernel_options(const kb_harness *h, const kb_harness_env *env, const char *team,
                                            int64_t startup_ms) {
        return (kb_kernel_options){
                .spec = h->spec,
                .base_dir = env->base_dir,
                .team = team,
                .sandbox = true,
                .bwrap = env->bwrap,
                .rootfs = env->rootfs,
                .ro_paths = env->ro_paths,
                .host_env = env->host_env,
                .user = env->user,
                .hardening = env->hardening,
                .tcp = env->tcp,
                .syscall_probe = env->syscall_probe,
                .boundary_probe = env->boundary_probe,
                .on_msg = env->on_msg,
                .on_msg_userdata = env->on_msg_userdata,
                .cancel_fd = env->cancel_fd,
                .deadline_ms = kb_harness_deadline_in(h, startup_ms),
        };
}

int kb_harness_start(kb_harness *h, const kb_kernel_options *o, kb_error **ret_error) {
        int r = kb_kernel_start(o, &h->kernel, ret_error);
        if (r < 0)
                return r;
        json_object_object_add(h->k, "startup_ms", json_object_new_int64(kb_kernel_startup_ms(h->kernel)));
        json_object_object_add(h->k, "kernel_info", kb_report_kernel_info(kb_kernel_info(h->kernel)));
        return r;
}

const char *kb_harness_wait_error(kb_harness *h, int r) {
        switch (r) {
        case -ETIMEDOUT:
                return "timed out";
        case -ESRCH: {
                h->dead = true;
                if (!h->diagnose_death)
                        return "the kernel process died";
                /* Say how it died: the exit status (bwrap passes the kernel's on; the pidfd fires
                 * first, so allow bwrap a moment to follow) and the end of the kernel's log. */
                static __thread char died[400];
                _cleanup_free_ char *d = kb_kernel_death_diagnosis(h->kernel, 200, kb_now_ms() + 1000);
                snprintf(died, sizeof(died), "%s", d ? d : "the kernel process died");
                return died;
        }
        case -ECANCELED:
                h->cancelled = true;
                return "cancelled";
        default: {
                static __thread char buf[256];
                _cleanup_error_ kb_error *error = NULL;
                kb_client_error(kb_kernel_client(h->kernel), r, &error);
                snprintf(buf, sizeof(buf), "%s", kb_error_text(error, r));
                return buf;
        }
        }
}

int kb_harness_marker_seen(void *userdata, kb_execution *ex, const kb_msg *msg) {
        return ex->stdout_text && strstr(ex->stdout_text, (const char *) userdata) != NULL;
}

int kb_harness_long_start(kb_harness *h, const char *code, const char *marker, kb_execution **ret_ex) {
        kb_client *c = kb_kernel_client(h->kernel);
        kb_execute_options eo = {.store_history = false, .stop_on_error = false};
        kb_execution *ex = NULL;
        int r = kb_client_execute_start(c, code, &eo, &ex);
        if (r >= 0)
                r = kb_client_execute_wait(c, ex, kb_harness_deadline_in(h, KB_HARNESS_MARKER_TIMEOUT_MS),
                                           kb_harness_marker_seen, (void *) marker);
        if (r != 1) {
                if (r == -ETIMEDOUT)
                        h->wedged = true;
                kb_execution_destroy(c, &ex);
                return r;
        }
        *ret_ex = ex;
        return 1;
}

void kb_harness_record_messages(kb_harness *h) {
        uint64_t received = 0, dropped = 0;
        kb_client_stats(kb_kernel_client(h->kernel), &received, &dropped);
        json_object *messages = json_object_new_object();
        json_object_object_add(messages, "received", json_object_new_int64((int64_t) received));
        json_object_object_add(messages, "dropped", json_object_new_int64((int64_t) dropped));
        json_object_object_add(messages, "unfinished",
                               json_object_new_int64((int64_t) kb_client_unfinished(kb_kernel_client(h->kernel))));
        json_object_object_add(h->k, "messages", messages);
}

void kb_harness_redact(const kb_harness *h, json_object **o) {
        json_object *cur = *o;
        if (h->kernel && cur) {
                json_object *r = kb_kernel_redact(h->kernel, cur);
                json_object_put(cur);
                cur = r;
        }
        for (size_t i = 0; cur && i < KB_ELEMENTSOF(h->secrets); i++) {
                if (!h->secrets[i])
                        continue;
                json_object *r = kb_secrets_redact(h->secrets[i], cur);
                json_object_put(cur);
                cur = r;
        }
        *o = cur;
}

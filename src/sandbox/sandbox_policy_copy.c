/* sandbox_policy_copy.c: an owned deep copy of a sandbox policy, kept by a launched sandbox so
 * that a twin of it (sandbox_lifetime.c) can be started long after the caller's policy is gone. */
#include "sandbox/sandbox-internal.h"
#include "base/strv.h"
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct kb_sandbox_policy_copy {
        kb_sandbox_policy policy;
        kb_sandbox_user user;
        kb_sandbox_hardening hardening;
        char *team, *workspace, *runtime_dir, *rootfs, *bwrap, *syscall_probe;
        char **ro_paths, **env, **allow;
};

void kb_sandbox_policy_copy_free(kb_sandbox_policy_copy *c) {
        if (!c)
                return;
        free(c->team);
        free(c->workspace);
        free(c->runtime_dir);
        free(c->rootfs);
        free(c->bwrap);
        free(c->syscall_probe);
        kb_strv_free(c->ro_paths);
        kb_strv_free(c->env);
        kb_strv_free(c->allow);
        free(c);
}

const kb_sandbox_policy *kb_sandbox_policy_copy_get(const kb_sandbox_policy_copy *c) {
        return c ? &c->policy : NULL;
}

/* strdup that keeps NULL; false only when a copy was needed and failed. */
static bool dup_or_null(const char *s, char **ret) {
        *ret = s ? strdup(s) : NULL;
        return !s || *ret;
}

static bool strv_dup_or_null(char *const *v, char ***ret) {
        *ret = v ? kb_strv_copy(v) : NULL;
        return !v || *ret;
}

int kb_sandbox_policy_copy_new(const kb_sandbox_policy *p, kb_sandbox_policy_copy **ret) {
        kb_sandbox_policy_copy *c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        if (p->user)
                c->user = *p->user;
        if (p->hardening)
                c->hardening = *p->hardening;
        if (!dup_or_null(p->team, &c->team) || !dup_or_null(p->workspace, &c->workspace) ||
            !dup_or_null(p->runtime_dir, &c->runtime_dir) || !dup_or_null(p->rootfs, &c->rootfs) ||
            !dup_or_null(p->bwrap, &c->bwrap) || !dup_or_null(p->syscall_probe, &c->syscall_probe) ||
            !strv_dup_or_null(p->ro_paths, &c->ro_paths) || !strv_dup_or_null(p->env, &c->env) ||
            !strv_dup_or_null(p->hardening ? p->hardening->seccomp.allow : NULL, &c->allow)) {
                kb_sandbox_policy_copy_free(c);
                return -ENOMEM;
        }
        c->hardening.seccomp.allow = c->allow;
        c->policy = (kb_sandbox_policy){
                .team = c->team,
                .workspace = c->workspace,
                .runtime_dir = c->runtime_dir,
                .rootfs = c->rootfs,
                .allow_network = p->allow_network,
                .ro_paths = c->ro_paths,
                .env = c->env,
                .bwrap = c->bwrap,
                .user = p->user ? &c->user : NULL,
                .hardening = p->hardening ? &c->hardening : NULL,
                .syscall_probe = c->syscall_probe,
        };
        *ret = c;
        return 0;
}

/* launch_fixture.h: the fixture of the unit tests that launch real sandboxes (a scratch folder with
 * the team's workspace and runtime folders given to the sandbox user, bwrap found, a daemon secret
 * in the environment) and their helpers: small files, processes, the host's look before exec, the
 * planned bind of a path. Include after cmocka.h. */
#pragma once

#include "kbound/inspect.h"
#include "kbound/sandbox.h"
#include "sandbox/sandbox-internal.h"
#include "tmp_tree.h"
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

#define SECRET_NAME "KBOUND_TEST_DAEMON_SECRET"
#define SECRET_VALUE "canary-7f3e9b1c-do-not-leak"

typedef struct fixture {
        char base[64];
        char workspace[128];
        char runtime[128];
        char log[128];
        char bwrap[PATH_MAX];
        char **env;
        kb_sandbox_user user;
        kb_sandbox_policy policy;
} fixture;

static inline void write_file(const char *path, const char *content, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        assert_true(fd >= 0);
        size_t len = strlen(content);
        assert_int_equal(write(fd, content, len), (ssize_t) len);
        close(fd);
}

/* Reads a whole small file; NULL if missing. */
static inline char *slurp(const char *path, size_t *ret_len) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        char *buf = calloc(1, 65537);
        ssize_t n = read(fd, buf, 65536);
        close(fd);
        if (n < 0)
                n = 0;
        if (ret_len)
                *ret_len = (size_t) n;
        return buf;
}

/* Waits up to ms for path to exist with non-empty content. */
static inline char *wait_file(const char *path, int ms, size_t *ret_len) {
        for (int waited = 0; waited <= ms; waited += 20) {
                size_t len = 0;
                char *s = slurp(path, &len);
                if (s && len > 0 && s[len - 1] == '\n') {
                        if (ret_len)
                                *ret_len = len;
                        return s;
                }
                free(s);
                usleep(20 * 1000);
        }
        return NULL;
}

static inline bool proc_exists(pid_t pid) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d", (int) pid);
        return access(path, F_OK) == 0;
}

/* A process may take a moment to be reaped by whoever inherited it; "gone" within 3 s. */
static inline bool proc_gone_soon(pid_t pid) {
        for (int i = 0; i < 150; i++) {
                if (!proc_exists(pid))
                        return true;
                usleep(20 * 1000);
        }
        return false;
}

static inline int setup(void **state) {
        fixture *f = calloc(1, sizeof *f);
        snprintf(f->base, sizeof f->base, "/tmp/kb-launch-XXXXXX");
        assert_non_null(mkdtemp(f->base));
        snprintf(f->workspace, sizeof f->workspace, "%s/ws", f->base);
        snprintf(f->runtime, sizeof f->runtime, "%s/run", f->base);
        snprintf(f->log, sizeof f->log, "%s/kernel.log", f->base);
        /* As root the sandbox runs as the unprivileged sandbox user (kb_sandbox_user), who must
         * reach and own the team folders exactly as kb_kernel_start arranges them. */
        if (kb_sandbox_user_resolve(getenv("KBOUND_SANDBOX_USER"), &f->user) < 0)
                fail_msg("no sandbox user: run scripts/setup (it creates %s)", KB_SANDBOX_USER_DEFAULT);
        assert_int_equal(kb_sandbox_user_pass_through(&f->user, f->base), 0);
        assert_int_equal(mkdir(f->workspace, 0700), 0);
        assert_int_equal(mkdir(f->runtime, 0700), 0);
        assert_int_equal(kb_sandbox_user_give(&f->user, f->workspace), 0);
        assert_int_equal(kb_sandbox_user_give(&f->user, f->runtime), 0);
        char *found = NULL;
        char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};
        if (kb_sandbox_find_bwrap(NULL, envp, &found) < 0)
                fail_msg("bubblewrap is required for these tests: apt-get install bubblewrap");
        snprintf(f->bwrap, sizeof f->bwrap, "%s", found);
        free(found);
        /* The launching process carries a daemon secret; the sandbox must never see it. */
        setenv(SECRET_NAME, SECRET_VALUE, 1);
        assert_int_equal(kb_sandbox_env(environ, NULL, &f->env), 0);
        f->policy = (kb_sandbox_policy){
                .team = "unit_team",
                .workspace = f->workspace,
                .runtime_dir = f->runtime,
                .env = f->env,
                .bwrap = f->bwrap,
                .user = &f->user,
        };
        *state = f;
        return 0;
}

static inline int teardown(void **state) {
        fixture *f = *state;
        tmp_tree_remove(f->base);
        kb_strv_free(f->env);
        free(f);
        unsetenv(SECRET_NAME);
        return 0;
}

/* The host's look at sb (no secrets to search for); kernel_pid 0 before the kernel exists. */
static inline kb_inspect_target look_target(const kb_sandbox *sb, pid_t kernel_pid) {
        static const kb_secrets *none[] = {NULL};
        return (kb_inspect_target){.proc_root = "/proc",
                                   /* as the scenario names it: a host socket this machine has within reach is
                                    * recorded, not malformed */
                                   .socket_claim = "boundary.sockets",
                                   .init_pid = kb_sandbox_init_pid(sb),
                                   .kernel_pid = kernel_pid,
                                   .pidns_ino = kb_sandbox_pidns(sb),
                                   .secrets = none,
                                   .n_secrets = 0};
}

typedef struct pre_exec_seen {
        int calls;
        int reads_fd; /* the descriptor bwrap's init was blocked reading */
        bool child;   /* init had a child (the kernel) already */
        bool marker;  /* the kernel's program had run */
        char marker_path[256];
        json_object *look; /* kb_inspect_pre_exec */
} pre_exec_seen;

static inline void seen_before_exec(void *userdata, const kb_sandbox *sb) {
        pre_exec_seen *seen = userdata;
        seen->calls++;
        (void) kb_sandbox_waits_on("/proc", kb_sandbox_init_pid(sb), &seen->reads_fd);
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int) kb_sandbox_init_pid(sb),
                 (int) kb_sandbox_init_pid(sb));
        char *children = slurp(path, NULL);
        seen->child = children && children[0];
        free(children);
        seen->marker = access(seen->marker_path, F_OK) == 0;
        kb_inspect_target t = look_target(sb, 0);
        t.launcher_pid = kb_sandbox_bwrap_pid(sb);
        assert_int_equal(kb_inspect_pre_exec(&t, &seen->look), 0);
}

/* The planned mount whose source is path, from the sandbox's launch facts; fails the test if none. */
static inline json_object *planned_bind_of(const kb_sandbox *sb, const char *path) {
        json_object *mounts = NULL;
        assert_true(json_object_object_get_ex(kb_sandbox_launch_facts(sb), "mounts", &mounts));
        for (size_t i = 0; i < json_object_array_length(mounts); i++) {
                json_object *m = json_object_array_get_idx(mounts, i), *src = NULL, *p = NULL;
                if (json_object_object_get_ex(m, "source", &src) && json_object_object_get_ex(src, "path", &p) &&
                    strcmp(json_object_get_string(p), path) == 0)
                        return m;
        }
        fail_msg("no planned bind of %s", path);
        return NULL;
}

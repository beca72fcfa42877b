/* test_sandbox_relaunch.c: a launch abandoned before anything of the kernel runs and made again,
 * when the host changed what bwrap binds while it bound it: a bound file replaced by a rename, a
 * mount made below a bound folder. Real bwrap, started through wrappers that change the host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kbound/judge.h"
#include "launch_fixture.h"
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>

/* Launches a kernel that marks its start and sleeps, with ro bound read-only, through bwrap's
 * wrapper, looking before exec into seen. Returns kb_sandbox_launch's result. */
static int launch_through(fixture *f, const char *wrapper, char *ro, pre_exec_seen *seen, kb_sandbox **sb,
                          kb_error **error) {
        char *ro_paths[] = {ro, NULL};
        *seen = (pre_exec_seen){.reads_fd = -1};
        snprintf(seen->marker_path, sizeof seen->marker_path, "%s/started", f->runtime);
        char *argv[] = {"/bin/sh", "-c", "echo > /run/kbound/started; sleep 30", NULL};
        kb_sandbox_policy p = f->policy;
        p.bwrap = wrapper;
        p.ro_paths = ro_paths;
        p.before_exec = seen_before_exec;
        p.before_exec_userdata = seen;
        return kb_sandbox_launch(&p, argv, f->log, kb_now_ms() + 20000, sb, error);
}

/* sandbox.backend judged on sb's launch facts and the look before exec: its problems, as a new
 * array (empty when none). */
static json_object *backend_problems(const kb_sandbox *sb, json_object *look) {
        json_object *expect = json_object_new_object(), *launch = NULL, *ev = NULL, *problems = NULL;
        assert_int_equal(json_object_deep_copy(kb_sandbox_launch_facts(sb), &launch, NULL), 0);
        json_object_object_add(expect, "launch", launch);
        kb_judge_input in = {.expect = expect, .pre_exec = look};
        json_object *c = kb_judge_backend(&in);
        assert_true(json_object_object_get_ex(c, "evidence", &ev));
        if (!json_object_object_get_ex(ev, "problems", &problems))
                problems = NULL;
        json_object *ret = problems ? json_object_get(problems) : json_object_new_array();
        json_object_put(c);
        json_object_put(expect);
        return ret;
}

/* A bound host file replaced by a rename between kbound's plan (its stat) and bwrap's bind, as
 * useradd rewrites /etc/passwd while a run starts. bwrap is started through a wrapper that renames
 * it first: once (the launch is abandoned before anything of the kernel runs and made again, and
 * the facts say so), or at every launch (the last keeps both objects the path named, and the bind
 * showing the second is the one planned). sandbox.backend's look before exec names no problem of
 * the file either way. */
static void source_replaced(fixture *f, bool every_launch) {
        char dir[192], bound[256], fresh[256], spare[256], wrapper[256], script[2 * PATH_MAX + 2048];
        snprintf(dir, sizeof dir, "%s/src", f->base);
        snprintf(bound, sizeof bound, "%s/bound", dir);
        snprintf(fresh, sizeof fresh, "%s/fresh", dir);
        snprintf(spare, sizeof spare, "%s/spare", dir);
        snprintf(wrapper, sizeof wrapper, "%s/bwrap-renaming", f->base);
        assert_int_equal(mkdir(dir, 0755), 0);
        write_file(bound, "before\n", 0644);
        write_file(fresh, "after\n", 0644);
        assert_int_equal(kb_sandbox_user_give(&f->user, dir), 0);
        assert_int_equal(kb_sandbox_user_give(&f->user, bound), 0);
        assert_int_equal(kb_sandbox_user_give(&f->user, fresh), 0);
        /* after kbound's plan, as bwrap starts (never for --version or --help): fresh renamed over
         * bound once, or the two swapped every time */
        if (every_launch)
                snprintf(script, sizeof script,
                         "#!/bin/sh\ncase \"$1\" in --version|--help) ;; *) mv -f '%s' '%s' && mv -f '%s' '%s' && "
                         "mv -f '%s' '%s' ;; esac\nexec '%s' \"$@\"\n",
                         bound, spare, fresh, bound, spare, fresh, f->bwrap);
        else
                snprintf(script, sizeof script,
                         "#!/bin/sh\ncase \"$1\" in --version|--help) ;; *) [ -e '%s' ] && mv -f '%s' '%s' ;; esac\n"
                         "exec '%s' \"$@\"\n",
                         fresh, fresh, bound, f->bwrap);
        write_file(wrapper, script, 0755);
        pre_exec_seen seen;
        kb_sandbox *sb = NULL;
        kb_error *error = NULL;
        int r = launch_through(f, wrapper, bound, &seen, &sb, &error);
        if (r < 0)
                fail_msg("launch failed: %d %s", r, kb_error_text(error, r));
        /* one look before exec: the kernel's program ran once, in the launch that was kept */
        assert_int_equal(seen.calls, 1);
        json_object *changed = NULL, *after = NULL, *ino = NULL, *src = NULL;
        assert_true(json_object_object_get_ex(kb_sandbox_launch_facts(sb), "sources_changed", &changed));
        assert_int_equal(json_object_array_length(changed), every_launch ? 2 : 1);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(changed, 0)), bound);
        json_object *planned = planned_bind_of(sb, bound);
        struct stat now;
        assert_int_equal(stat(bound, &now), 0);
        if (every_launch) {
                /* the last launch: the file first stat'd, and the one its path named once bound */
                assert_true(json_object_object_get_ex(planned, "source_after", &after));
                assert_true(json_object_object_get_ex(after, "ino", &ino));
                assert_int_equal(json_object_get_int64(ino), (int64_t) now.st_ino);
                assert_true(json_object_object_get_ex(planned, "source", &src));
                assert_true(json_object_object_get_ex(src, "ino", &ino));
                assert_true(json_object_get_int64(ino) != (int64_t) now.st_ino);
        } else
                assert_false(json_object_object_get_ex(planned, "source_after", &after));
        /* what bwrap bound is the host's file at that path: no problem names it */
        json_object *problems = backend_problems(sb, seen.look);
        for (size_t i = 0; i < json_object_array_length(problems); i++) {
                const char *text = json_object_get_string(json_object_array_get_idx(problems, i));
                if (strstr(text, bound))
                        fail_msg("%s", text);
        }
        json_object_put(problems);
        json_object_put(seen.look);
        kb_sandbox_destroy(&sb);
}

static void test_source_replaced_once(void **state) {
        source_replaced(*state, false);
}

static void test_source_replaced_every_launch(void **state) {
        source_replaced(*state, true);
}

/* A host mount made below a bound folder between kbound's plan (its read of the mount table) and
 * bwrap's bind, which bwrap's recursive bind takes along. bwrap is started through a wrapper that
 * asks a helper of the test (root: the mount is made in the host's namespace) to mount a tmpfs
 * below the folder first: at the first launch only (the launch is abandoned before anything of the
 * kernel runs and made again, and its plan has the mount), or at every launch (the last keeps its
 * plan, and the look before exec names the mount unplanned: it fails closed). */
static void submount_added(fixture *f, int mounts) {
        if (geteuid() != 0) {
                print_message("NOT run: it mounts below a folder of the host's mount namespace, which needs root\n");
                skip();
        }
        char dir[192], req[256], ack[256], wrapper[256], script[2 * PATH_MAX + 1024], sub[256];
        snprintf(dir, sizeof dir, "%s/tree", f->base);
        snprintf(req, sizeof req, "%s/mount-req", f->base);
        snprintf(ack, sizeof ack, "%s/mount-ack", f->base);
        snprintf(wrapper, sizeof wrapper, "%s/bwrap-mounting", f->base);
        assert_int_equal(mkdir(dir, 0755), 0);
        for (int i = 1; i <= 3; i++) {
                snprintf(sub, sizeof sub, "%s/sub%d", dir, i);
                assert_int_equal(mkdir(sub, 0755), 0);
        }
        assert_int_equal(mkfifo(req, 0666), 0);
        assert_int_equal(mkfifo(ack, 0666), 0);
        assert_int_equal(chmod(req, 0666) | chmod(ack, 0666), 0);
        /* after kbound's plan, as bwrap starts (never for --version or --help) */
        snprintf(script, sizeof script,
                 "#!/bin/sh\ncase \"$1\" in --version|--help) ;; *) echo m > '%s' && read x < '%s' ;; esac\n"
                 "exec '%s' \"$@\"\n",
                 req, ack, f->bwrap);
        write_file(wrapper, script, 0755);
        pid_t helper = fork();
        assert_true(helper >= 0);
        if (helper == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (int i = 1;; i++) {
                        char line[8];
                        FILE *in = fopen(req, "re");
                        if (!in || !fgets(line, sizeof line, in))
                                _exit(1);
                        fclose(in);
                        snprintf(sub, sizeof sub, "%s/sub%d", dir, i);
                        if (i <= mounts && mount("kbtest", sub, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") < 0)
                                _exit(2);
                        FILE *out = fopen(ack, "we");
                        if (!out || fputs("ok\n", out) < 0 || fclose(out) != 0)
                                _exit(3);
                }
        }
        pre_exec_seen seen;
        kb_sandbox *sb = NULL;
        kb_error *error = NULL;
        int r = launch_through(f, wrapper, dir, &seen, &sb, &error);
        kill(helper, SIGKILL);
        waitpid(helper, NULL, 0);
        for (int i = 1; i <= 3; i++) {
                snprintf(sub, sizeof sub, "%s/sub%d", dir, i);
                (void) umount2(sub, MNT_DETACH);
        }
        if (r < 0)
                fail_msg("launch failed: %d %s", r, kb_error_text(error, r));
        /* one look before exec: the kernel's program ran once, in the launch that was kept */
        assert_int_equal(seen.calls, 1);
        json_object *changed = NULL;
        assert_true(json_object_object_get_ex(kb_sandbox_launch_facts(sb), "sources_changed", &changed));
        assert_int_equal(json_object_array_length(changed), mounts == 1 ? 1 : 2);
        snprintf(sub, sizeof sub, "%s/sub1", dir);
        assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(changed, 0)), sub));
        /* the problems the look finds below the folder: none once the plan has the mount; the
         * third mount, made at the last launch, named when every launch gets one */
        json_object *problems = backend_problems(sb, seen.look);
        int named = 0;
        snprintf(sub, sizeof sub, "%s/sub3", dir);
        for (size_t i = 0; i < json_object_array_length(problems); i++) {
                const char *text = json_object_get_string(json_object_array_get_idx(problems, i));
                if (mounts > 1 && strstr(text, sub))
                        named++;
                else if (strstr(text, dir))
                        fail_msg("%s", text);
        }
        assert_int_equal(named, mounts > 1 ? 1 : 0);
        json_object_put(problems);
        json_object_put(seen.look);
        kb_sandbox_destroy(&sb);
}

static void test_submount_added_once(void **state) {
        submount_added(*state, 1);
}

static void test_submount_added_every_launch(void **state) {
        submount_added(*state, 3);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_source_replaced_once, setup, teardown),
                cmocka_unit_test_setup_teardown(test_source_replaced_every_launch, setup, teardown),
                cmocka_unit_test_setup_teardown(test_submount_added_once, setup, teardown),
                cmocka_unit_test_setup_teardown(test_submount_added_every_launch, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

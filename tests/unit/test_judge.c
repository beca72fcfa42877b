/* test_judge.c: the judge over canned host facts: every branch that fails a check, and the one
 * that passes. Facts are written as JSON, as inspect.c produces them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include "kbound/judge.h"
#include "procfs.h"

static json_object *parse(const char *text) {
        json_object *o = json_tokener_parse(text);
        if (!o)
                fail_msg("bad test JSON: %s", text);
        return o;
}

static const char *status_of(json_object *check) {
        json_object *v = NULL;
        assert_non_null(check);
        assert_true(json_object_object_get_ex(check, "status", &v));
        return json_object_get_string(v);
}

static const char *detail_of(json_object *check) {
        json_object *v = NULL;
        assert_true(json_object_object_get_ex(check, "detail", &v));
        return json_object_get_string(v);
}

/* A process as inspect.c reports it; fields replaced by the caller's JSON text. */
#define GOOD_PROC                                                                                             \
        "\"pid\": 100, \"nspid\": [100, 2], \"name\": \"python3\", \"ppid\": 99, \"uid\": [999, 999, 999, 999], " \
        "\"gid\": [995, 995, 995, 995], \"groups\": [], \"cap_eff\": \"0000000000000000\", "                       \
        "\"cap_prm\": \"0000000000000000\", \"cap_amb\": \"0000000000000000\", \"cap_bnd\": "                       \
        "\"0000000000000000\", \"no_new_privs\": 1, \"seccomp\": 0, \"uid_map\": \"999 999 1\", \"errors\": []"

static json_object *snapshots_with(const char *proc_json) {
        char text[4096];
        snprintf(text, sizeof text,
                 "[{\"label\": \"ready\", \"errors\": [], \"processes\": [{" GOOD_PROC "}, {%s}]}]", proc_json);
        return parse(text);
}

/* Overrides one field of GOOD_PROC: JSON objects keep the last duplicate key. */
static void expect_privileges_fail(const char *override, const char *words) {
        char proc[2048];
        snprintf(proc, sizeof proc, GOOD_PROC ", %s", override);
        json_object *snaps = snapshots_with(proc);
        json_object *c = kb_judge_privileges(snaps);
        if (strcmp(status_of(c), "fail") != 0)
                fail_msg("'%s' passed: %s", override, detail_of(c));
        if (!strstr(detail_of(c), words))
                fail_msg("'%s': detail '%s' lacks '%s'", override, detail_of(c), words);
        json_object_put(c);
        json_object_put(snaps);
}

static void test_privileges_pass(void **state) {
        json_object *snaps = snapshots_with(GOOD_PROC);
        json_object *c = kb_judge_privileges(snaps);
        assert_string_equal(status_of(c), "pass");
        assert_non_null(strstr(detail_of(c), "host uid 999"));
        assert_non_null(strstr(detail_of(c), "uid map 999 999 1"));
        json_object_put(c);
        json_object_put(snaps);
}

static void test_privileges_fail(void **state) {
        expect_privileges_fail("\"uid\": [0, 0, 0, 0]", "uid 0");
        expect_privileges_fail("\"uid\": [999, 0, 999, 999]", "uid 0");
        expect_privileges_fail("\"uid\": [999, 999, 999, 0]", "uid 0");
        expect_privileges_fail("\"uid\": []", "uid 0");
        expect_privileges_fail("\"uid\": [\"999\", 999, 999, 999]", "uid 0");
        expect_privileges_fail("\"gid\": [995, 995, 0, 995]", "gid 0");
        expect_privileges_fail("\"groups\": [995, 0]", "group 0");
        expect_privileges_fail("\"cap_eff\": \"0000000000200000\"", "capabilities");
        expect_privileges_fail("\"cap_prm\": \"0000000000000001\"", "capabilities");
        expect_privileges_fail("\"cap_amb\": \"0000000000000001\"", "capabilities");
        expect_privileges_fail("\"cap_eff\": \"\"", "capabilities");
        expect_privileges_fail("\"no_new_privs\": 0", "no_new_privs");
        expect_privileges_fail("\"no_new_privs\": \"1\"", "no_new_privs");
        expect_privileges_fail("\"errors\": [{\"what\": \"status\", \"error\": \"Permission denied\"}]",
                               "could not read pid 100's status");

        /* a process without uid at all (status unreadable) */
        json_object *snaps = parse("[{\"label\": \"ready\", \"errors\": [], \"processes\": [{\"pid\": 5, \"errors\": []}]}]");
        json_object *c = kb_judge_privileges(snaps);
        assert_string_equal(status_of(c), "fail");
        json_object_put(c);
        json_object_put(snaps);
}

static void test_privileges_missing_evidence(void **state) {
        const char *cases[][2] = {
                {"[]", "no look"},
                {"[{\"label\": \"ready\", \"errors\": [], \"processes\": []}]", "no process"},
                {"[{\"label\": \"ready\", \"processes\": [{" GOOD_PROC "}], \"errors\": [{\"what\": \"the pinned kernel "
                 "among the sandbox's processes\", \"error\": \"No such process\"}]}]",
                 "pinned kernel"},
                {"[{\"label\": \"ready\", \"processes\": [{" GOOD_PROC "}], \"errors\": [{\"what\": \"the process "
                 "list\", \"error\": \"Permission denied\"}]}]",
                 "could not list"},
                {"[{\"label\": \"ready\", \"errors\": []}]", "no process"},
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(cases); i++) {
                json_object *snaps = parse(cases[i][0]);
                json_object *c = kb_judge_privileges(snaps);
                if (strcmp(status_of(c), "fail") != 0 || !strstr(detail_of(c), cases[i][1]))
                        fail_msg("case %zu: %s: %s", i, status_of(c), detail_of(c));
                json_object_put(c);
                json_object_put(snaps);
        }
        json_object *c = kb_judge_privileges(NULL);
        assert_string_equal(status_of(c), "fail");
        json_object_put(c);
}

/* ---- mounts ---- */

static int problems_for(const char *mountinfo, const char *entries_json, json_object **ret_problems) {
        json_object *mounts = NULL;
        assert_int_equal(kb_procfs_mountinfo_parse(mountinfo, &mounts), 0);
        json_object *entries = parse(entries_json);
        json_object *problems = json_object_new_array();
        int n = kb_judge_mount_problems(mounts, NULL, entries, NULL, problems);
        json_object_put(mounts);
        json_object_put(entries);
        if (ret_problems)
                *ret_problems = problems;
        else
                json_object_put(problems);
        return n;
}

#define ROOT_LINE "1 0 0:40 /newroot / ro - tmpfs tmpfs rw\n"
#define PROC_LINE "2 1 0:41 / /proc rw,nosuid - proc proc rw\n"
#define ENTRIES "[\"sys\", \"sysrq-trigger\", \"irq\"]"

static void test_proc_covered(void **state) {
        /* every entry covered: by a read-only proc bind, a read-only /dev/null, a writable tmpfs mask */
        assert_int_equal(problems_for(ROOT_LINE PROC_LINE "3 2 0:21 /sys /proc/sys ro - proc proc rw\n"
                                                          "4 2 0:6 /null /proc/sysrq-trigger ro - devtmpfs d rw\n"
                                                          "5 2 0:44 / /proc/irq rw - tmpfs tmpfs rw\n",
                                      ENTRIES, NULL),
                         0);
        /* entries this host lacks need no cover */
        assert_int_equal(problems_for(ROOT_LINE PROC_LINE, "[]", NULL), 0);
        /* a read-only proc needs no cover */
        assert_int_equal(problems_for(ROOT_LINE "2 1 0:41 / /proc ro - proc proc rw\n", ENTRIES, NULL), 0);
        /* a writable proc hidden under a later mount is not reachable */
        assert_int_equal(problems_for(ROOT_LINE "2 1 0:41 / /mnt rw - proc proc rw\n"
                                                "3 1 0:44 / /mnt ro - tmpfs tmpfs rw\n",
                                      ENTRIES, NULL),
                         0);
}

static void test_proc_exposed(void **state) {
        json_object *p = NULL;
        /* bwrap's old behaviour for a uid-0 sandbox: nothing covered */
        assert_int_equal(problems_for(ROOT_LINE PROC_LINE, ENTRIES, &p), 3);
        assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(p, 0)), "/proc/sys"));
        json_object_put(p);
        /* one cover missing */
        assert_int_equal(problems_for(ROOT_LINE PROC_LINE "3 2 0:21 /sys /proc/sys ro - proc proc rw\n"
                                                          "4 2 0:21 /irq /proc/irq ro - proc proc rw\n",
                                      ENTRIES, &p),
                         1);
        assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(p, 0)), "sysrq-trigger"));
        json_object_put(p);
        /* a cover that is itself a writable proc mount: named as the uncovered entry of /proc and as
         * a writable mount of the entry itself */
        assert_int_equal(problems_for(ROOT_LINE PROC_LINE "3 2 0:21 /sys /proc/sys rw - proc proc rw\n", "[\"sys\"]", NULL), 2);
        /* a cover that is read-only per mount but a proc bind made writable below it */
        assert_int_equal(problems_for(ROOT_LINE PROC_LINE "3 2 0:21 /sys /proc/sys ro - proc proc rw\n"
                                                          "4 3 0:21 /sys/kernel /proc/sys/kernel rw - proc proc rw\n",
                                      "[\"sys\"]", &p),
                         1);
        assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(p, 0)), "exposes /proc/sys"));
        json_object_put(p);
        /* the host's proc bound writable somewhere else entirely */
        assert_int_equal(problems_for(ROOT_LINE "2 1 0:21 / /hostproc rw - proc proc rw\n", "[\"sys\"]", NULL), 1);
        /* a second proc mounted writable over the cover */
        assert_int_equal(problems_for(ROOT_LINE PROC_LINE "3 2 0:21 /sys /proc/sys ro - proc proc rw\n"
                                                          "4 3 0:41 /sys /proc/sys rw - proc proc rw\n",
                                      "[\"sys\"]", NULL),
                         2);
}

static void test_mounts_missing(void **state) {
        json_object *problems = json_object_new_array();
        assert_int_equal(kb_judge_mount_problems(NULL, NULL, NULL, NULL, problems), 1);
        assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(problems, 0)), "could not read"));
        json_object *empty = json_object_new_array();
        assert_int_equal(kb_judge_mount_problems(empty, NULL, NULL, NULL, problems), 1);
        json_object_put(empty);
        json_object_put(problems);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_privileges_pass),
                cmocka_unit_test(test_privileges_fail),
                cmocka_unit_test(test_privileges_missing_evidence),
                cmocka_unit_test(test_proc_covered),
                cmocka_unit_test(test_proc_exposed),
                cmocka_unit_test(test_mounts_missing),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

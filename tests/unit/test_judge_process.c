/* test_judge_process.c: sandbox.privileges and sandbox.session, on the good run and on small looks. */
#include "judge_fixture.h"

/* ---- sandbox.privileges, on the good run ---- */

static void test_privileges_in_second_look(void **state) {
        static const breakage fails[] = {
                B1("/snapshots/1/processes/2/cap_eff", "'0000000000200000'", "pid 1003 (python3) holds capabilities"),
                B1("/snapshots/1/processes/2/uid", "[1000, 0, 1000, 1000]",
                   "pid 1003 (python3) runs as the host's uid 0"),
                B1("/snapshots/1/processes/0/no_new_privs", NULL,
                   "pid 1001 (bwrap) can gain privileges (no_new_privs unknown)"),
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(fails); i++) {
                json_object *run = good_run();
                apply(run, &fails[i]);
                json_object *check = kb_judge_privileges(member(run, "snapshots"));
                assert_status_naming(check, "fail", fails[i].words, fails[i].edits[0].pointer);
                json_object_put(check);
                json_object_put(run);
        }
}

/* ---- sandbox.session ---- */

/* fd 0 on /dev/pts/0 (136:0), opened through mount id m. */
#define PTY_FD(m)                                                                                                      \
        "{'fd': 0, 'target': '/dev/pts/0', 'type': 'chr', 'dev': '0:43', 'ino': 3, 'rdev': '136:0', 'flags': 2, "      \
        "'mnt_id': " m "}"

static void test_session_processes(void **state) {
        static const breakage fails[] = {
                B1("/host/session", NULL, "the host could not read kbound's own session"),
                B1("/snapshots/0/processes/0/tty_nr", NULL, "could not read pid 1001's session and terminal"),
                B1("/snapshots/1/processes/2/session", NULL, "could not read pid 1003's session and terminal"),
                /* /dev/pts/3: major 136, minor 3 */
                B1("/snapshots/1/processes/2/tty_nr", "34819",
                   "pid 1003 (python3) has a controlling terminal (device 136:3)"),
                B1("/snapshots/0/processes/1/session", "4990", "the kernel is in kbound's own session (4990)"),
                B1("/snapshots/0/processes/1/session", "1000",
                   "the kernel's session is led by pid 1000, outside the sandbox"),
                B1("/snapshots/1/processes/1/session", "0",
                   "the kernel's session is led by pid 0, outside the sandbox"),
                /* the kernel's session unchecked: never a pass */
                B1("/expect/kernel_pid", NULL, "no look shows the kernel"),
                B1("/expect/kernel_pid", "1009", "no look shows the kernel (host pid 1009)"),
        };
        EXPECT_FAILS(kb_judge_session, fails);
        static const breakage passes[] = {
                /* led by bwrap's init, inside the sandbox */
                B2("/snapshots/0/processes/1/session", "1001", "/snapshots/1/processes/1/session", "1001",
                   "the kernel's session is the sandbox's own"),
                /* a shell kernel's shell on a pty of the sandbox's own devpts (mount 308, 0:43) */
                B2("/snapshots/1/processes/2/tty_nr", "34816", "/snapshots/1/processes/2/fds/0", PTY_FD("308"),
                   "but a pty of the sandbox's own devpts"),
        };
        EXPECT_PASSES(kb_judge_session, passes);
        static const breakage not_own[] = {
                /* the same pty number, but the devpts it was opened through is the host's (0:24) */
                B3("/snapshots/1/processes/2/tty_nr", "34816", "/snapshots/1/processes/2/fds/0", PTY_FD("308"),
                   "/snapshots/1/mounts/8/dev", "'0:24'", "(device 136:0) that is not a pty of the sandbox's own"),
                /* a terminal no sandbox process holds open: nothing says whose it is */
                B1("/snapshots/1/processes/2/tty_nr", "34816", "(device 136:0) that is not a pty of the sandbox's own"),
                /* open through a mount that is not devpts */
                B2("/snapshots/1/processes/2/tty_nr", "34816", "/snapshots/1/processes/2/fds/0", PTY_FD("309"),
                   "(device 136:0) that is not a pty of the sandbox's own"),
        };
        EXPECT_FAILS(kb_judge_session, not_own);
}

/* That the sandbox dies with kbound is shown by effect, on a twin whose bwrap kbound kills. */
static void test_session_lifetime(void **state) {
        static const breakage fails[] = {
                B2("/expect/lifetime/survived", "true", "/expect/lifetime/init_gone_ms", NULL,
                   "a sandbox started as this one was outlived its bwrap: its init still ran 2000 ms after kbound "
                   "killed bwrap's outer process (kbound then stopped it)"),
                B1("/expect/lifetime/pid2_gone_ms", NULL, "its PID 2 still ran 2000 ms after"),
                /* what the survivor was, said with it */
                B2("/expect/lifetime/pid2_gone_ms", NULL, "/expect/lifetime/survivors",
                   "'PID 2 4242: State:\\tS (sleeping), PPid:\\t4241, ShdPnd:\\t0000000000000000'",
                   "the sandbox can outlive kbound (PID 2 4242: State:\tS (sleeping), PPid:\t4241, ShdPnd:"),
                B1("/expect/lifetime", NULL, "the host did not try whether the sandbox dies with kbound"),
                /* survival not said is survival (facts.def: TRUE) */
                B1("/expect/lifetime/survived", NULL, "a sandbox started as this one was outlived its bwrap"),
                B1("/expect/lifetime/error", "'bwrap exited before reporting the sandbox'",
                   "the host could not try whether the sandbox dies with kbound: bwrap exited before reporting"),
        };
        EXPECT_FAILS(kb_judge_session, fails);
        static const breakage passes[] = {
                B1("/expect/lifetime/init_gone_ms", "1999", "a sandbox started as this one died with its bwrap"),
        };
        EXPECT_PASSES(kb_judge_session, passes);
}

static void test_session_launcher(void **state) {
        static const breakage fails[] = {
                B1("/snapshots/1/launcher", NULL, "the host did not find the process that runs bwrap"),
                /* the first look's launcher does not count: the last one does */
                B1("/snapshots/1/launcher/pid", "999",
                   "the sandbox's bwrap (pid 999) is not the process kbound started (pid 1000)"),
                B1("/snapshots/1/launcher/ppid", "1", "the sandbox's bwrap (pid 1000) is not kbound's child"),
                B1("/snapshots/1/launcher/kbound", NULL, "the sandbox's bwrap (pid 1000) is not kbound's child"),
                /* two pids not read are not the same pid */
                B2("/snapshots/1/launcher/pid", NULL, "/snapshots/1/launcher/spawned", NULL,
                   "the sandbox's bwrap (pid -1) is not the process kbound started (pid -1)"),
        };
        EXPECT_FAILS(kb_judge_session, fails);
}

/* The command line is read with bwrap's grammar, never searched for a word. */
static void test_session_bwrap_grammar(void **state) {
#define ARGV "/snapshots/1/launcher/argv"
        static const breakage fails[] = {
                B1(ARGV, "['bwrap', '--unshare-all', '--setenv', 'X', '--die-with-parent', 'python3']",
                   "the running bwrap was started without --die-with-parent"),
                B1(ARGV, "['bwrap', '--chdir', '--die-with-parent', 'python3']", "started without --die-with-parent"),
                B1(ARGV, "['bwrap', '--unshare-all', '--', 'python3', '--die-with-parent']",
                   "started without --die-with-parent"),
                B1(ARGV, "['bwrap', '--unshare-all', 'python3', '--die-with-parent']",
                   "started without --die-with-parent"),
                B1(ARGV, "['bwrap', '--die-with-parent', '--frobnicate', 'python3']",
                   "cannot tell what the running bwrap was started with: it has an option bwrap 0.8 does not have "
                   "(--frobnicate)"),
                B1(ARGV, "['bwrap', '--args', '3', '--die-with-parent', 'python3']",
                   "options come from a file descriptor (--args) the host cannot see"),
                B1(ARGV, "['bwrap', '--die-with-parent', '--bind', '/a']", "--bind lacks its argument"),
                B1(ARGV, "['bwrap', '--die-with-parent', '--setenv']", "--setenv lacks its argument"),
                B1(ARGV, "['bwrap', '--die-with-parent', '--unshare-all']", "it has no command"),
                B1(ARGV, "[]", "cannot tell what the running bwrap was started with: the host could not read it"),
                B1(ARGV, NULL, "the host could not read it"),
        };
        EXPECT_FAILS(kb_judge_session, fails);
        static const breakage passes[] = {
                B1(ARGV, "['bwrap', '--setenv', 'A', '--die-with-parent', '--die-with-parent', 'python3']", NULL),
                B1(ARGV, "['bwrap', '--bind', '/a', '/b', '--die-with-parent', '--', '--x']", NULL),
                B1(ARGV, "['bwrap', '--die-with-parent', 'python3']", NULL),
        };
        EXPECT_PASSES(kb_judge_session, passes);
#undef ARGV
}

/* ---- sandbox.privileges, on small looks ---- */

/* A thread of it but the main one, as inspect_threads.c reports it. */
#define GOOD_TASK                                                                                                      \
        "{\"tid\": 101, \"state\": \"S\", \"uid\": [999, 999, 999, 999], \"gid\": [995, 995, 995, 995], "              \
        "\"groups\": [], \"cap_eff\": \"0000000000000000\", \"cap_prm\": \"0000000000000000\", "                       \
        "\"cap_amb\": \"0000000000000000\", \"no_new_privs\": 1, \"errors\": []}"

/* A process as inspect.c reports it, with what facts.def requires of it and nothing that
 * sandbox.privileges does not read; fields replaced by the caller's JSON text. */
#define GOOD_PROC                                                                                                      \
        "\"pid\": 100, \"nspid\": [100, 2], \"name\": \"python3\", \"ppid\": 99, \"uid\": [999, 999, 999, 999], "      \
        "\"gid\": [995, 995, 995, 995], \"groups\": [], \"cap_eff\": \"0000000000000000\", "                           \
        "\"cap_prm\": \"0000000000000000\", \"cap_amb\": \"0000000000000000\", \"cap_bnd\": "                          \
        "\"0000000000000000\", \"no_new_privs\": 1, \"seccomp\": 0, \"uid_map\": \"999 999 1\", \"ns\": {}, "          \
        "\"ns_owners\": {}, \"refs\": {}, \"fds\": [], \"tasks\": [" GOOD_TASK "], \"errors\": []"

/* A look of the two, whole as facts.def declares a look (a launcher the privileges do not read). */
static json_object *snapshots_with(const char *proc_json) {
        char text[4096];
        snprintf(text, sizeof text,
                 "[{\"label\": \"ready\", \"taken_ms\": 1, \"vanished\": 0, \"errors\": [], \"launcher\": "
                 "{\"pid\": 90, \"ppid\": 80, \"spawned\": 90, \"kbound\": 80, \"argv\": [], \"outside_inodes\": [], "
                 "\"shared_files\": []}, "
                 "\"processes\": [{" GOOD_PROC "}, {%s}]}]",
                 proc_json);
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
        /* the kernel keeps credentials per thread: a raw setuid or capset changes one */
        expect_privileges_fail(
                "\"tasks\": [{\"tid\": 101, \"state\": \"S\", \"uid\": [999, 0, 999, 999], \"gid\": [995, "
                "995, 995, 995], \"no_new_privs\": 1, \"errors\": []}]",
                "thread 101 of pid 100 (python3) runs as the host's uid 0");
        expect_privileges_fail("\"tasks\": [{\"tid\": 101, \"state\": \"S\", \"uid\": [999, 999, 999, 999], \"gid\": "
                               "[995, 995, 995, 995], \"cap_eff\": \"0000000000200000\", \"no_new_privs\": 1, "
                               "\"errors\": []}]",
                               "thread 101 of pid 100 (python3) holds capabilities");
        expect_privileges_fail("\"tasks\": [{\"tid\": 101, \"errors\": [{\"what\": \"status\", \"error\": "
                               "\"Permission denied\"}]}]",
                               "could not read the status of thread 101 of pid 100 (python3)");
        expect_privileges_fail("\"tasks\": null", "could not list the threads of pid 100 (python3)");

        /* a process without uid at all (status unreadable) */
        json_object *snaps =
                parse("[{\"label\": \"ready\", \"errors\": [], \"processes\": [{\"pid\": 5, \"errors\": []}]}]");
        json_object *c = kb_judge_privileges(snaps);
        assert_string_equal(status_of(c), "fail");
        json_object_put(c);
        json_object_put(snaps);
}

static void test_privileges_missing_evidence(void **state) {
        const char *cases[][2] = {
                {"[]", "no look"},
                {"[{\"label\": \"ready\", \"errors\": [], \"processes\": []}]", "no process"},
                {"[{\"label\": \"ready\", \"processes\": [{" GOOD_PROC
                 "}], \"errors\": [{\"what\": \"the pinned kernel "
                 "among the sandbox\\u0027s processes\", \"error\": \"No such process\"}]}]",
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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_privileges_pass),
                cmocka_unit_test(test_privileges_fail),
                cmocka_unit_test(test_privileges_missing_evidence),
                cmocka_unit_test(test_privileges_in_second_look),
                cmocka_unit_test(test_session_processes),
                cmocka_unit_test(test_session_launcher),
                cmocka_unit_test(test_session_lifetime),
                cmocka_unit_test(test_session_bwrap_grammar),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_judge_before_start.c: a kernel that did not start: each check the look before exec alone can
 * judge (check.c's judge_before_start) fails naming what that look shows wrong, and is not_run,
 * never a pass, when it shows nothing; none reads a look at the running kernel, the probe or the
 * kernel's pid, which such a kernel does not have. */
#include "judge_fixture.h"
#include "kbound/check.h"

/* The good run as a kernel that died at start-up leaves it: the look before exec, kbound's own
 * facts and what it arranged before exec; no look at the running kernel, no cell, no kernel pid. */
static json_object *died_run(void) {
        json_object *run = good_run();
        drop(run, "/snapshots");
        drop(run, "/probe");
        drop(run, "/expect/kernel_pid");
        return run;
}

/* Each case, applied to died_run, gives status and names its words; the evidence says how it was
 * judged, and a not_run says what the look showed nothing wrong with. */
static void expect_before_start(kb_check c, const char *status, const breakage *cases, size_t n) {
        judge_fn judge = kb_check_get(c)->judge_before_start;
        assert_non_null(judge);
        for (size_t i = 0; i < n; i++) {
                json_object *run = died_run();
                apply(run, &cases[i]);
                json_object *check = judge_run(judge, run);
                char what[256];
                snprintf(what, sizeof what, "%s, case %zu (%s)", kb_check_id(c), i,
                         cases[i].edits[0].pointer ? cases[i].edits[0].pointer : "none");
                assert_status_naming(check, status, cases[i].words, what);
                assert_string_equal(str_member(check, "id"), kb_check_id(c));
                assert_true(json_object_get_boolean(member(member(check, "evidence"), "before_start")));
                if (strcmp(status, "fail") == 0 && strncmp(detail_of(check), "before the kernel ran", 21) != 0)
                        fail_msg("%s: the detail does not say when it was seen: %s", what, detail_of(check));
                json_object_put(check);
                json_object_put(run);
        }
}

#define FAILS(c, cases) expect_before_start(c, "fail", cases, KB_ELEMENTSOF(cases))
#define NOT_RUN(c, cases) expect_before_start(c, "not_run", cases, KB_ELEMENTSOF(cases))

/* A look before exec that shows nothing wrong passes no check: each is not run, naming what it
 * looked at, and sandbox.backend says why. */
static void test_nothing_found_is_not_run(void **state) {
        static const breakage none[] = {
                {{{NULL, NULL}}, "not run: the kernel did not start (sandbox.backend says why)"}};
        size_t judged = 0;
        for (kb_check c = 0; c < _KB_CHECK_MAX; c++) {
                if (!kb_check_get(c)->judge_before_start)
                        continue;
                judged++;
                expect_before_start(c, "not_run", none, 1);
        }
        /* backend, privileges, session, descriptors, write_outside, credentials, cross_team */
        assert_int_equal(judged, 7);
        /* The checks that need the running kernel have none. */
        assert_null(kb_check_get(KB_CHECK_PID2)->judge_before_start);
        assert_null(kb_check_get(KB_CHECK_NETWORK)->judge_before_start);
        assert_null(kb_check_get(KB_CHECK_ATTACK_SURFACE)->judge_before_start);
}

/* boundary.write_outside on init's table: the kernel met it as it is. */
static void test_write_outside(void **state) {
#define PRE_MOUNT "/pre_exec/mounts/-"
        /* bwrap's --bind /dev /dev: the host's devtmpfs, read-write, nodev (ipykernel dies opening
         * /dev/null there); and the same with devices allowed (--dev-bind) */
#define HOST_DEV(nodev)                                                                                                \
        "{'id': 320, 'nodev': " nodev ", 'parent': 300, 'dev': '0:5', 'root': '/', 'mountpoint': '/dev', 'fstype': "   \
        "'devtmpfs', 'source': 'udev', 'writable': true, 'options': ['rw', 'nosuid'], 'super': [], 'target': "         \
        "{'type': 'dir', 'dev': '0:5', 'ino': 1}}"
        static const breakage fails[] = {
                B1(PRE_MOUNT, HOST_DEV("true"),
                   "a writable mount at /dev (devtmpfs udev, root /) is backed by the host"),
                B1(PRE_MOUNT, HOST_DEV("false"),
                   "a writable mount at /dev (devtmpfs udev, root /) is backed by the host"),
                /* a tmpfs bwrap was not told to make there: no namespace outside is read before exec */
                B1(PRE_MOUNT,
                   "{'id': 321, 'nodev': true, 'parent': 300, 'dev': '0:77', 'root': '/', 'mountpoint': '/mnt/shared', "
                   "'fstype': 'tmpfs', 'source': 'tmpfs', 'writable': true, 'options': ['rw'], 'super': [], 'target': "
                   "{'type': 'dir', 'dev': '0:77', 'ino': 1}}",
                   "a writable mount at /mnt/shared (tmpfs tmpfs, root /) is not the sandbox's own: the host reads no "
                   "mount namespace outside the sandbox before the kernel runs, and bwrap was not told to make it "
                   "there"),
                /* kbound's own tmpfs, bound in */
                B1("/pre_exec/mounts/9/dev", "'0:26'", "a writable mount at /tmp (tmpfs tmpfs, root /) is backed by"),
                B1("/pre_exec/mounts/3/writable", "true",
                   "/proc/sys (the host's /proc/sys) is writable in the sandbox"),
                B1("/pre_exec/mounts/11/target/ino", "6000", "a writable mount at /workspace (ext4 /dev/sda1, root"),
                B1("/pre_exec/mounts/1/master", "7", "the sandbox's mount at /usr is a slave of peer group 7"),
                B1("/pre_exec/mounts", NULL, "the host could not read the sandbox's mount table"),
                B1("/pre_exec/errors/-", "{'what': 'bwrap\\u0027s init\\u0027s mount table', 'error': 'ESRCH'}",
                   "the host could not read the mount table of bwrap's init"),
                B1("/host/mounts", "[]", "the host could not read its own mounts"),
        };
        FAILS(KB_CHECK_WRITE_OUTSIDE, fails);
        static const breakage not_run[] = {
                /* what bwrap was told to make is the sandbox's own: --tmpfs /tmp, --proc, --dev */
                B1("/pre_exec/mounts/9/dev", "'0:99'", "the mount table of bwrap's init"),
                /* the team's binds, by what their mount points are */
                B1("/pre_exec/mounts/11/fstype", "'xfs'", NULL),
        };
        NOT_RUN(KB_CHECK_WRITE_OUTSIDE, not_run);
#undef HOST_DEV
#undef PRE_MOUNT
}

/* boundary.descriptors: what bwrap's init held, the kernel inherits. */
static void test_descriptors(void **state) {
        static const breakage fails[] = {
                B1("/pre_exec/processes/0/fds/-",
                   "{'fd': 9, 'target': '/etc/shadow', 'type': 'reg', 'dev': '8:1', 'ino': 9999, 'flags': 2, "
                   "'mnt_id': 20}",
                   "before the kernel ran, fd 9 of the sandbox's PID 1 (pid 1001) was /etc/shadow, which kbound did "
                   "not hand in"),
                B2("/pre_exec/processes/0/refs/cwd/mnt_id", "20", "/pre_exec/processes/0/refs/cwd/target", "'/root'",
                   "the working directory of pid 1001 (bwrap), /root"),
                B1("/expect/launch", NULL, "kbound kept no record of the descriptors it handed bwrap"),
        };
        FAILS(KB_CHECK_DESCRIPTORS, fails);
}

/* sandbox.backend, sandbox.privileges, sandbox.session: init's namespaces, credentials and terminal,
 * and the bwrap that runs it. */
static void test_sandbox(void **state) {
        static const breakage backend[] = {
                B1("/pre_exec/processes/0/ns/net", "4026531840", "pid 1001 (bwrap) shares kbound's net namespace"),
                B1("/pre_exec/launcher/argv/4", "'--share-net'",
                   "the running bwrap's command line is not the one kbound built"),
                B1("/pre_exec/ns_holders/-", "{'pid': 778, 'name': 'sleep', 'ns': 'user', 'inode': 4026532200}",
                   "pid 778 (sleep), outside the sandbox, is in the sandbox's user namespace (pre-exec)"),
        };
        FAILS(KB_CHECK_BACKEND, backend);
        static const breakage privileges[] = {
                B1("/pre_exec/processes/0/cap_eff", "'000001ffffffffff'", "pid 1001 (bwrap) holds capabilities"),
                B1("/pre_exec/processes/0/uid/0", "0", "pid 1001 (bwrap) runs as the host's uid 0"),
        };
        FAILS(KB_CHECK_PRIVILEGES, privileges);
        /* bwrap sets no_new_privs with the filter, after the block channel: not a finding then */
        static const breakage nnp[] = {B1("/pre_exec/processes/0/no_new_privs", "0", "the host uid, gid, groups")};
        NOT_RUN(KB_CHECK_PRIVILEGES, nnp);
        static const breakage session[] = {
                B1("/pre_exec/launcher/argv/3", "'--as-pid-1'",
                   "the running bwrap was started without --die-with-parent"),
                B1("/pre_exec/launcher/ppid", "1", "the sandbox's bwrap (pid 1000) is not kbound's child"),
                B1("/pre_exec/processes/0/tty_nr", "34817", "has a controlling terminal (device 136:1)"),
        };
        FAILS(KB_CHECK_SESSION, session);
}

/* boundary.credentials and boundary.cross_team: a secret in init's environment, another team's
 * folder in its mount table. */
static void test_credentials_cross_team(void **state) {
        static const breakage credentials[] = {
                B1("/pre_exec/processes/0/environ_secrets", "['env:KBOUND_TEST_DAEMON_TOKEN']",
                   "env:KBOUND_TEST_DAEMON_TOKEN is in the environment of pid 1001 (bwrap) (value never shown)"),
        };
        FAILS(KB_CHECK_CREDENTIALS, credentials);
        static const breakage cross_team[] = {
                B1("/pre_exec/mounts/-",
                   "{'id': 330, 'parent': 300, 'nodev': true, 'dev': '8:1', 'root': '" BASE "/teams/team-b/run', "
                   "'mountpoint': '/mnt/teams/b', 'fstype': 'ext4', 'source': '/dev/sda1', 'writable': false, "
                   "'options': ['ro'], 'super': [], 'target': {'type': 'dir', 'dev': '8:1', 'ino': 330}}",
                   "the sandbox's mount at /mnt/teams/b shows " BASE "/teams/team-b/run: a team folder"),
                B1("/expect/base_dir", NULL, "kbound did not say where the run's team folders are"),
        };
        FAILS(KB_CHECK_CROSS_TEAM, cross_team);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_nothing_found_is_not_run),
                cmocka_unit_test(test_write_outside),
                cmocka_unit_test(test_descriptors),
                cmocka_unit_test(test_sandbox),
                cmocka_unit_test(test_credentials_cross_team),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

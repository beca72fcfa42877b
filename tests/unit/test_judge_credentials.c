/* test_judge_credentials.c: boundary.credentials, boundary.cross_team and what the mounts reach. */
#include "judge_fixture.h"

/* ---- boundary.credentials ---- */

#define SUB "/probe/credentials/subprocess"

static void test_credentials_host(void **state) {
        static const breakage fails[] = {
                B1("/snapshots/1/processes/2/environ_secrets", "['OPENAI_API_KEY']",
                   "OPENAI_API_KEY is in the environment of pid 1003 (python3) (value never shown)"),
                B1("/snapshots/0/processes/0/cmdline_secrets", "['KBOUND_DAEMON_TOKEN']",
                   "KBOUND_DAEMON_TOKEN is in the command line of pid 1001 (bwrap) (value never shown)"),
                B2("/snapshots/0/processes/0/environ_secrets", NULL, "/snapshots/0/processes/0/errors",
                   "[{'what': 'environ', 'error': 'Permission denied'}]",
                   "the host could not read the environment of pid 1001 (bwrap): environ: Permission denied"),
                B1("/snapshots/1/processes/2/cmdline_secrets", NULL,
                   "the host could not read the command line of pid 1003 (python3)"),
                B1("/snapshots/0/reach/0/exposed", "[{'at': '" CREDENTIAL_CANARY "', 'confirmed': true}]",
                   "the credential file " CREDENTIAL_CANARY " is reachable in the sandbox at " CREDENTIAL_CANARY),
                B1("/snapshots/1/reach/0/exposed",
                   "[{'at': '/h/.ssh/id_ed25519', 'confirmed': false, 'error': 'Permission denied'}]",
                   "the credential file " CREDENTIAL_CANARY
                   " is exposed at /h/.ssh/id_ed25519 by the sandbox's mounts (the "
                   "host could not confirm: Permission denied)"),
                B1("/snapshots/0/reach/0/error", "'Permission denied'",
                   "the host could not place the credential file (" CREDENTIAL_CANARY "): Permission denied"),
                /* the child the cell spawned, seen alive by the host */
                B1("/snapshots/1/label", "'later'",
                   "the host never looked at the sandbox while a process the kernel spawned was alive"),
                B1("/snapshots/1", NULL,
                   "the host never looked at the sandbox while a process the kernel spawned was alive"),
                /* why, for a pack writer: the marker line held back by the kernel, or never relayed */
                B2("/snapshots/1/label", "'later'", "/expect/child_marker", "'unended'",
                   "was alive: the cell's child marker line came without its line end, which the kernel sent only "
                   "with later output"),
                B2("/snapshots/1", NULL, "/expect/child_marker", "'absent'",
                   "was alive: the cell never relayed the child marker line kbound-probe prints first"),
                B2(SUB "/pid", "8", "/expect/child_marker", "'unended'",
                   "is not among the processes the host sees in the sandbox: the cell's child marker line came "
                   "without its line end"),
                B1(SUB "/pid", "8",
                   "the child the cell spawned (pid 8 in the sandbox) is not among the processes the host sees in the "
                   "sandbox"),
                B1(SUB "/pid", "2", "the child the cell spawned (pid 2 in the sandbox) is not among the processes"),
                /* bwrap's init is always alive, and never the kernel's child */
                B1(SUB "/pid", "1", "the child the cell spawned (pid 1 in the sandbox) is not among the processes"),
                B1(SUB "/pid", NULL, "the child the cell spawned (pid -1 in the sandbox) is not among the processes"),
                B1("/snapshots/1/processes/2", NULL, "the child the cell spawned (pid 7 in the sandbox) is not among"),
        };
        EXPECT_FAILS(kb_judge_credentials, fails);
        static const breakage passes[] = {
                /* another team's canary is the cross-team check's */
                B1("/snapshots/0/reach/1/exposed", "[{'at': '/x', 'confirmed': true}]", NULL),
                B1("/snapshots/0/reach/0/exposed",
                   "[{'at': '/x', 'confirmed': false, 'error': 'No such file or directory'}]", NULL),
        };
        EXPECT_PASSES(kb_judge_credentials, passes);
}

static void test_credentials_cell(void **state) {
        static const breakage fails[] = {
                B2(SUB "/spawned", "false", SUB "/error", "'EAGAIN'", "the cell could not spawn a subprocess (EAGAIN)"),
                B1(SUB, NULL, "the cell could not spawn a subprocess (no reason given)"),
                B1(SUB "/error", "'ETIMEDOUT'", "the cell's subprocess failed: ETIMEDOUT"),
                B1(SUB "/proc", "[]", "the cell's subprocess read no process's environment"),
                B1(SUB "/proc", NULL, "the cell's subprocess read no process's environment"),
                B1(SUB "/go", "false", "the cell's subprocess did not wait for the host's look"),
                B1(SUB "/go", NULL, "the cell's subprocess did not wait for the host's look"),
                B1("/expect/secrets_in_probe", "['OPENAI_API_KEY']",
                   "OPENAI_API_KEY reached the sandbox (found in what the cell saw; value never shown)"),
                B1("/probe/credentials/files/0/exists", "true",
                   "the cell sees the host credential file " CREDENTIAL_CANARY),
                B1("/probe/credentials/keys/found", "true",
                   "the cell found kbound's canary key by name in the keyrings it possesses"),
                B1("/probe/errors/-", "{'probe': 'credentials.files', 'error': 'EACCES'}",
                   "the cell's credentials.files sub-probe failed: EACCES"),
        };
        EXPECT_FAILS(kb_judge_credentials, fails);
        static const breakage passes[] = {
                B1("/probe/credentials/keys",
                   "{'tested': false, 'found': false, 'error': 'untested: no syscall numbers'}",
                   "kbound's keyring canary beyond the sandbox's fresh, empty session keyring"),
                B1("/probe/credentials/files/0/content", "'ignored when the file does not exist'", NULL),
        };
        EXPECT_PASSES(kb_judge_credentials, passes);
}

#undef SUB

/* ---- boundary.cross_team ---- */

static void test_cross_team(void **state) {
        static const breakage fails[] = {
                B1("/snapshots/0/reach/1", NULL, "the host was given no other team's canary to look for"),
                B1("/snapshots/1/reach/1/exposed", "[{'at': '/teams/b/canary.txt', 'confirmed': true}]",
                   "the sibling team canary " TEAM_B_CANARY " is reachable in the sandbox at /teams/b/canary.txt"),
                B1("/snapshots/0/reach/1/error", "'No such file or directory'",
                   "the host could not place the sibling team canary (" TEAM_B_CANARY "): No such file or directory"),
                B1("/expect/sibling_in_probe", "['TEAM_B_TOKEN']", "another team's canary was readable in the sandbox"),
                B1("/probe/cross_team/0/exists", "true",
                   "another team's path " TEAM_B_CANARY " is visible in the sandbox"),
                B1("/probe/cross_team/0/readable", "true",
                   "another team's path " TEAM_B_CANARY " is visible in the sandbox"),
                B1("/probe/cross_team", "[]", "the cell reported no cross-team attempts"),
                B1("/probe/cross_team", NULL, "the cell reported no cross-team attempts"),
                B1("/probe/errors/-", "{'probe': 'cross_team', 'error': 'PermissionError'}",
                   "the cell's cross_team sub-probe failed: PermissionError"),
                /* the cell's report is kernel output: malformed entries fail, they never crash the judge */
                B1("/probe/cross_team", "['/teams/b', 5, null]", "the cell's cross-team entry 0 is not an object"),
        };
        EXPECT_FAILS(kb_judge_cross_team, fails);
        static const breakage passes[] = {
                /* the credential canary is the credentials check's */
                B1("/snapshots/0/reach/0/exposed", "[{'at': '/x', 'confirmed': true}]", "(1 paths)"),
        };
        EXPECT_PASSES(kb_judge_cross_team, passes);
}

/* What the cell read of another team's path never reaches the evidence. */
static void test_cross_team_evidence(void **state) {
        json_object *run = good_run();
        set(run, "/probe/cross_team/0",
            "{'path': '/teams/b/canary.txt', 'exists': true, 'readable': true, 'content': 'TOKEN'}");
        json_object *check = judge_run(kb_judge_cross_team, run);
        assert_string_equal(status_of(check), "fail");
        json_object *seen = NULL;
        assert_int_equal(json_pointer_get(check, "/evidence/cell/0", &seen), 0);
        assert_null(member(seen, "content"));
        assert_true(json_object_get_boolean(member(seen, "content_read")));
        assert_string_equal(str_member(seen, "path"), "/teams/b/canary.txt");
        assert_null(strstr(text_of(check), "TOKEN"));
        json_object_put(check);
        json_object_put(run);
}

/* Mounts that show another team's folders, found from the mount table: no canary needs to lie there. */
static void test_cross_team_folders(void **state) {
#define MOUNT_OF(id, root, mp)                                                                                         \
        "{'id': " #id ", 'parent': 300, 'nodev': true, 'dev': '8:1', 'root': '" root "', 'mountpoint': '" mp "', "     \
        "'fstype': 'ext4', 'source': '/dev/sda1', 'writable': false, 'options': ['ro'], 'super': [], 'target': "       \
        "{'type': 'dir', 'dev': '8:1', "                                                                               \
        "'ino': " #id "}}"
#define NEW_MOUNT "/snapshots/1/mounts/-"
        static const breakage fails[] = {
                B1(NEW_MOUNT, MOUNT_OF(330, BASE "/teams/team-b/run", "/mnt/teams/b"),
                   "the sandbox's mount at /mnt/teams/b shows " BASE "/teams/team-b/run: a team folder that is not the "
                   "kernel's own workspace or runtime folder"),
                /* the team's own folder, beyond its two binds (its log lives there) */
                B1(NEW_MOUNT, MOUNT_OF(330, TEAM_A "/host", "/mnt/host"),
                   "shows " TEAM_A "/host: a team folder that is not"),
                B1(NEW_MOUNT, MOUNT_OF(330, BASE "/teams", "/mnt/teams"), "shows " BASE "/teams: a team folder"),
                /* a folder that holds every team's */
                B1(NEW_MOUNT, MOUNT_OF(330, BASE, "/mnt/base"),
                   "the sandbox's mount at /mnt/base shows every team's folders (" BASE "/teams) at /mnt/base/teams"),
                /* another kbound run's base folder, and the folder that holds every run's */
                B1(NEW_MOUNT, MOUNT_OF(330, "/tmp/kbound-Zz9999/teams/t/run", "/mnt/other"),
                   "the sandbox's mount at /mnt/other shows /tmp/kbound-Zz9999/teams/t/run, in another kbound run's "
                   "folder"),
                B1(NEW_MOUNT, MOUNT_OF(330, "/tmp", "/mnt/tmp"),
                   "the sandbox's mount at /mnt/tmp shows /tmp (where every kbound run keeps its team folders) at "
                   "/mnt/tmp"),
                /* in another mount namespace of the sandbox, and in the first look only */
                B2("/snapshots/1/mount_tables", "{'4026532299': [" MOUNT_OF(330, BASE "/teams/team-b", "/mnt/b") "]}",
                   "/snapshots/1/processes/2/ns/mnt", "4026532299", "shows " BASE "/teams/team-b: a team folder"),
                B1("/snapshots/0/mounts/-", MOUNT_OF(330, BASE "/teams/team-b/run", "/mnt/teams/b"),
                   "a team folder that"),
                /* where the folders are must be known, and placed */
                B1("/expect/base_dir", NULL, "kbound did not say where the run's team folders are"),
                B1("/expect/base_dir", "'kbound-AbC123'", "kbound did not say where the run's team folders are"),
                B1("/host/mounts", "[]", "the host could not place the run's team folders (" BASE "/teams) on its"),
                /* the team's binds unknown: its own folders are another team's */
                B1("/expect/team_binds", "[]", "shows " TEAM_A "/workspace: a team folder that is not"),
                /* a mount whose root was not read could show anything */
                B1("/snapshots/1/mounts/11/root", NULL,
                   "the host could not tell what the sandbox's mount at /workspace shows"),
                /* a look at a canary that names no check could be this check's */
                B1("/snapshots/0/reach/1/claim", NULL,
                   "the host's look at the sibling team canary (" TEAM_B_CANARY ") names no check it belongs to"),
        };
        EXPECT_FAILS(kb_judge_cross_team, fails);
        static const breakage passes[] = {
                /* the team's own binds, and a folder inside one */
                B1(NEW_MOUNT, MOUNT_OF(330, TEAM_A "/workspace/data", "/mnt/data"),
                   "no mount of the sandbox shows a team"),
                /* this run's other folders are the credentials check's */
                B1(NEW_MOUNT, MOUNT_OF(330, BASE "/host-secrets", "/mnt/secrets"), NULL),
                /* a folder beside the runs' that is no base folder */
                B1(NEW_MOUNT, MOUNT_OF(330, "/tmp/kbound-data/x", "/mnt/x"), NULL),
                B1(NEW_MOUNT, MOUNT_OF(330, "/tmp/other", "/mnt/x"), NULL),
                /* another filesystem's folder of the same name */
                B2(NEW_MOUNT, MOUNT_OF(330, BASE "/teams/team-b", "/mnt/b"), "/snapshots/1/mounts/12/dev", "'0:70'",
                   NULL),
                /* the whole filesystem, with /tmp covered by a tmpfs of the sandbox's own */
                B2(NEW_MOUNT, MOUNT_OF(330, "/", "/host"), NEW_MOUNT,
                   "{'id': 331, 'parent': 330, 'nodev': true, 'dev': '0:71', 'root': '/', 'mountpoint': '/host/tmp', "
                   "'fstype': 'tmpfs', 'source': 'tmpfs', 'writable': false, 'options': ['ro'], 'super': []}",
                   NULL),
        };
        EXPECT_PASSES(kb_judge_cross_team, passes);
#undef NEW_MOUNT
}

/* A canary with several names: any of them could be under a mount of its filesystem. */
static void test_reach_hard_links(void **state) {
        static const breakage cred_fails[] = {
                B2("/snapshots/0/reach/0/links", "2", "/snapshots/0/reach/0/dev", "'8:1'",
                   "the credential file " CREDENTIAL_CANARY
                   " has 2 names (hard links) and the sandbox's mount at /usr is on "
                   "its filesystem (8:1): another of its names could be inside the sandbox"),
        };
        EXPECT_FAILS(kb_judge_credentials, cred_fails);
        /* a mount of another mount namespace of the sandbox on that filesystem */
        json_object *run = good_run();
        set(run, "/snapshots/1/reach/0/links", "3");
        set(run, "/snapshots/1/reach/0/dev", "'0:77'");
        set(run, "/snapshots/1/mount_tables", "{'4026532299': [" MOUNT_OF(330, "/", "/") "]}");
        set(run, "/snapshots/1/mount_tables/4026532299/0/dev", "'0:77'");
        json_object *check = judge_run(kb_judge_credentials, run);
        assert_status_naming(check, "fail",
                             "has 3 names (hard links) and the sandbox's mount at / is on its filesystem (0:77)",
                             "links in another table");
        json_object_put(check);
        json_object_put(run);
        static const breakage fails[] = {
                B2("/snapshots/1/reach/2/links", "2", "/snapshots/1/reach/2/dev", "'8:1'",
                   "unix stream socket " HOST_SOCKET " has 2 names (hard links)"),
        };
        EXPECT_FAILS(kb_judge_sockets, fails);
        static const breakage cross_fails[] = {
                B2("/snapshots/0/reach/1/links", "2", "/snapshots/0/reach/1/dev", "'8:1'",
                   "the sibling team canary " TEAM_B_CANARY " has 2 names"),
        };
        EXPECT_FAILS(kb_judge_cross_team, cross_fails);
        static const breakage passes[] = {
                /* one name; or no sandbox mount on its filesystem */
                B2("/snapshots/0/reach/0/links", "1", "/snapshots/0/reach/0/dev", "'8:1'", NULL),
                B2("/snapshots/0/reach/0/links", "2", "/snapshots/0/reach/0/dev", "'0:99'", NULL),
        };
        EXPECT_PASSES(kb_judge_credentials, passes);
#undef MOUNT_OF
}

/* What a reach confirmation that could not look says is never a disproof. */
static void test_reach_lookups(void **state) {
        static const breakage fails[] = {
                B1("/snapshots/0/reach/0/exposed",
                   "[{'at': '/mnt/c/credentials', 'confirmed': false, 'error': 'its mount point: a symbolic link is on "
                   "the path'}]",
                   "exposed at /mnt/c/credentials by the sandbox's mounts (the host could not confirm: its mount "
                   "point: a "
                   "symbolic link is on the path)"),
                B1("/snapshots/0/reach/0/exposed",
                   "[{'at': '/mnt/c/credentials', 'confirmed': false, 'error': 'its mount point: No such file or "
                   "directory'}]",
                   "(the host could not confirm: its mount point: No such file or directory)"),
                B1("/snapshots/0/reach/0/exposed",
                   "[{'at': '/mnt/c/credentials', 'confirmed': false, 'error': 'not there at the host\\u0027s look, "
                   "but the "
                   "sandbox can write to that filesystem (it can be moved away and back)'}]",
                   "but the sandbox can write to that filesystem"),
                /* found through another mount namespace of the sandbox */
                B1("/snapshots/1/reach/0/exposed", "[{'at': '/mnt/c/credentials', 'confirmed': true, 'pid': 1003}]",
                   "is reachable in the sandbox at /mnt/c/credentials (in the mount namespace of pid 1003)"),
        };
        EXPECT_FAILS(kb_judge_credentials, fails);
}

/* A canary that could not be planted (a home kbound cannot write to) narrows the claim: the check
 * still passes on what was tested, and its detail and evidence say what was not; kbound's record of
 * what it planted is required. */
static void test_not_planted(void **state) {
        static const struct {
                judge_fn judge;
                const char *pointer, *why, *said;
        } cases[] = {
                {kb_judge_credentials, "/expect/canaries/1", "kbound cannot write to /home/u: Permission denied",
                 "not tested: credential canary in the user's home (kbound cannot write to /home/u: Permission "
                 "denied)"},
                {kb_judge_cross_team, "/expect/canaries/3", "the disk was full",
                 "not tested: another team's canary (the disk was full)"},
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(cases); i++) {
                json_object *run = good_run();
                char pointer[128], why[256];
                snprintf(pointer, sizeof pointer, "%s/planted", cases[i].pointer);
                set(run, pointer, "false");
                snprintf(pointer, sizeof pointer, "%s/why", cases[i].pointer);
                snprintf(why, sizeof why, "'%s'", cases[i].why);
                set(run, pointer, why);
                json_object *check = judge_run(cases[i].judge, run);
                assert_status_naming(check, "pass", NULL, cases[i].said);
                char detail[512];
                snprintf(detail, sizeof detail, "%s; ", cases[i].said);
                if (strncmp(detail_of(check), detail, strlen(detail)) != 0)
                        fail_msg("the pass does not say first what was not tested: %s", detail_of(check));
                json_object *not_tested = member(member(check, "evidence"), "not_tested");
                assert_int_equal(json_object_array_length(not_tested), 1);
                assert_string_equal(json_object_get_string(json_object_array_get_idx(not_tested, 0)), cases[i].said);
                json_object_put(check);
                json_object_put(run);
        }
        /* Everything planted: nothing said, an empty list. */
        json_object *run = good_run(), *check = judge_run(kb_judge_credentials, run);
        assert_status_naming(check, "pass", NULL, "all planted");
        assert_null(strstr(detail_of(check), "not tested"));
        assert_int_equal(json_object_array_length(member(member(check, "evidence"), "not_tested")), 0);
        json_object_put(check);
        json_object_put(run);
        static const breakage fails[] = {
                B1("/expect/canaries", NULL, "canaries: required, absent"),
                B1("/expect/canaries/0/planted", NULL, "planted: required, absent"),
        };
        EXPECT_FAILS(kb_judge_credentials, fails);
        EXPECT_FAILS(kb_judge_cross_team, fails);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_credentials_host),   cmocka_unit_test(test_credentials_cell),
                cmocka_unit_test(test_cross_team),         cmocka_unit_test(test_cross_team_evidence),
                cmocka_unit_test(test_cross_team_folders), cmocka_unit_test(test_reach_hard_links),
                cmocka_unit_test(test_reach_lookups),      cmocka_unit_test(test_not_planted),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

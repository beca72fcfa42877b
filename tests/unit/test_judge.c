/* test_judge.c: what every check shares: kb_judge_check, the good run, missing looks and probe. */
#include "judge_fixture.h"

/* ---- the whole good run ---- */

static void test_good_run_passes_every_check(void **state) {
        json_object *run = good_run();
        for (size_t i = 0; i < KB_ELEMENTSOF(judges); i++) {
                json_object *check = judge_run(judges[i].judge, run);
                assert_string_equal(str_member(check, "id"), judges[i].id);
                assert_status_naming(check, "pass", NULL, judges[i].id);
                json_object_put(check);
        }
        json_object *check = kb_judge_privileges(member(run, "snapshots"));
        assert_status_naming(check, "pass", "5 processes in 2 host looks: host uid 1000", "sandbox.privileges");
        json_object_put(check);
        json_object_put(run);
}

/* The good run is evidence as inspection writes it: it breaks nothing facts.def declares, so every
 * failure a test breaks into it is the judge's own, not the fixture's. */
static void test_good_run_is_well_formed(void **state) {
        json_object *run = good_run();
        kb_judge_input in = input_of(run);
        json_object *malformed = kb_judge_malformed(&in);
        assert_non_null(malformed);
        for (size_t i = 0; i < json_object_array_length(malformed); i++)
                print_message("malformed: %s\n", json_object_get_string(json_object_array_get_idx(malformed, i)));
        if (json_object_array_length(malformed) != 0)
                fail_msg("the good run breaks facts.def (%zu places, each printed above)",
                         json_object_array_length(malformed));
        json_object_put(malformed);
        json_object_put(run);
}

/* A required fact missing, or a key facts.def does not declare in what the host made, fails every
 * check judged from the host's looks, naming where ("malformed" in the evidence); a check that
 * reads the fact names its own problem too, first. */
static void test_malformed_fails_every_check(void **state) {
        static const struct {
                breakage b;
                const char *where; /* what the malformed problem names */
        } cases[] = {
                {B1("/snapshots/0/processes/1/pid", NULL, NULL), "look 'ready': processes[1].pid: required, absent"},
                {B1("/snapshots/1/mounts/1/writable", NULL, NULL),
                 "look 'child alive': mounts[1].writable: required, absent"},
                {B1("/expect/kernel_pid", NULL, NULL), "what kbound arranged (expect): kernel_pid: required, absent"},
                {B1("/pre_exec/launcher/outside_inodes", NULL, NULL),
                 "the look before exec: launcher.outside_inodes: required, absent"},
                {B1("/snapshots/1/mounts/1/writeable", "true", NULL),
                 "look 'child alive': mounts[1].writeable: not a declared fact of MOUNT"},
                {B1("/host/mounts/0/writeable", "false", NULL),
                 "the host's own facts: mounts[0].writeable: not a declared fact of MOUNT"},
                {B1("/expect/limits/memory", "'2G'", NULL),
                 "what kbound arranged (expect): limits.memory: string, not an integer"},
        };
        for (size_t c = 0; c < KB_ELEMENTSOF(cases); c++)
                for (size_t j = 0; j < KB_ELEMENTSOF(judges); j++) {
                        if (!judges[j].host_looks)
                                continue;
                        json_object *run = good_run();
                        apply(run, &cases[c].b);
                        json_object *check = judge_run(judges[j].judge, run);
                        char what[256];
                        snprintf(what, sizeof what, "%s, %s", judges[j].id, cases[c].b.edits[0].pointer);
                        assert_status_naming(check, "fail", "the host's evidence is not what facts.def declares", what);
                        json_object *malformed = member(member(check, "evidence"), "malformed");
                        bool named = false;
                        for (size_t i = 0; malformed && i < json_object_array_length(malformed); i++)
                                named |= strcmp(json_object_get_string(json_object_array_get_idx(malformed, i)),
                                                cases[c].where) == 0;
                        if (!named)
                                fail_msg("%s: the evidence's malformed does not name '%s': %s", what, cases[c].where,
                                         text_of(check));
                        json_object_put(check);
                        json_object_put(run);
                }
}

/* Where a judge reads the missing fact it says so itself, and that stays the detail: the malformed
 * problem comes last. */
static void test_malformed_after_own_problem(void **state) {
        static const struct {
                breakage b;
                judge_fn judge;
        } cases[] = {
                /* unknown writability is writable */
                {B1("/snapshots/1/mounts/1/writable", NULL,
                    "a writable mount at /usr (ext4 /dev/sda1, root /usr) is backed by the host"),
                 kb_judge_write_outside},
                /* a kernel kbound did not record is never matched by a default */
                {B1("/expect/kernel_pid", NULL, "kbound did not record the pinned kernel's host pid"),
                 kb_judge_session},
                {B1("/expect/kernel_pid", NULL, "kbound did not record the pinned kernel's host pid"),
                 kb_judge_identity},
                {B1("/expect/kernel_pid", NULL, "kbound did not record the pinned kernel's host pid"),
                 kb_judge_network},
                {B1("/expect/kernel_pid", NULL, "kbound did not record the pinned kernel's host pid"),
                 kb_judge_credentials},
                {B1("/expect/kernel_pid", NULL, "kbound did not record the pinned kernel's host pid"),
                 kb_judge_backend},
                /* a process whose pid was not read is never the kernel */
                {B2("/snapshots/0/processes/1/pid", NULL, "/snapshots/1/processes/1/pid", NULL,
                    "the kernel's session was not checked: no look shows the kernel (host pid 1002)"),
                 kb_judge_session},
                /* the launch side's channels not read are not "none" */
                {B1("/snapshots/1/launcher/outside_inodes", NULL,
                    "the host did not read which pipes and sockets the launch side holds"),
                 kb_judge_descriptors},
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(cases); i++) {
                json_object *run = good_run();
                apply(run, &cases[i].b);
                json_object *check = judge_run(cases[i].judge, run);
                assert_status_naming(check, "fail", cases[i].b.words, cases[i].b.edits[0].pointer);
                if (strncmp(detail_of(check), cases[i].b.words, strlen(cases[i].b.words)) != 0)
                        fail_msg("case %zu: the detail is not the judge's own problem: %s", i, detail_of(check));
                json_object *problems = member(member(check, "evidence"), "problems");
                size_t n = json_object_array_length(problems);
                assert_true(n >= 2);
                assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(problems, n - 1)),
                                       "the host's evidence is not what facts.def declares"));
                json_object_put(check);
                json_object_put(run);
        }
}

/* What the passes say they rest on. */
static void test_good_run_details(void **state) {
        static const struct {
                judge_fn judge;
                const char *words;
        } details[] = {
                {kb_judge_backend,
                 "bubblewrap 0.8.0 (/usr/bin/bwrap); user, mnt, pid, net, ipc, uts, cgroup namespaces "
                 "differ from kbound's for all 5 processes"},
                {kb_judge_identity,
                 "the other end of each of kbound's 2 connections to the kernel (found by inode, not "
                 "by path) is held by the pinned PID 2 (host pid 1002) alone"},
                {kb_judge_descriptors, "all 35 open descriptors"},
                {kb_judge_write_outside,
                 "the cell tried 4 places (2 writes stayed private), nothing appeared in 4 host "
                 "folders; 2 host settings refused"},
                {kb_judge_network, "2 canary connection attempts failed"},
                {kb_judge_sockets, "none of the host's 4 bound pathname unix sockets (any type; 2 network namespaces "
                                   "listed) is reachable through the sandbox's mounts (1 on filesystems the sandbox "
                                   "mounts, each placed by its file's device and inode)"},
                {kb_judge_credentials, "5 daemon secrets and canaries: none in the environment or command line of 5 "
                                       "sandbox processes"},
                {kb_judge_credentials, "kbound's keyring canary not found by the cell"},
                {kb_judge_cross_team, "(1 paths)"},
        };
        json_object *run = good_run();
        for (size_t i = 0; i < KB_ELEMENTSOF(details); i++) {
                json_object *check = judge_run(details[i].judge, run);
                assert_status_naming(check, "pass", details[i].words, str_member(check, "id"));
                json_object_put(check);
        }
        json_object_put(run);
}

/* Shared by every check on the host's looks: no look, a look without the kernel, an unreadable or
 * truncated process list, a look with no process. */
static void test_missing_looks_fail_every_check(void **state) {
        static const breakage cases[] = {
                B1("/snapshots", "[]", "the host took no look at the sandbox"),
                B1("/snapshots", NULL, "the host took no look at the sandbox"),
                B1("/snapshots/1/errors/-",
                   "{'what': 'the pinned kernel among the sandbox\\u0027s processes', 'error': 'No such process'}",
                   "did not find the pinned kernel among the sandbox's processes (child alive)"),
                B1("/snapshots/0/errors/-", "{'what': 'the process list', 'error': 'Permission denied'}",
                   "could not list processes (the process list: Permission denied)"),
                B1("/snapshots/0/processes", "[]", "the host found no process in the sandbox (ready)"),
                B1("/snapshots/1/errors/-",
                   "{'what': 'more sandbox processes than kbound inspects', 'error': 'Argument list too long'}",
                   "the host did not inspect every process of the sandbox (child alive)"),
                /* a zombie leader whose threads each ended while the host read it through them */
                B1("/snapshots/1/errors/-",
                   "{'what': 'a zombie leader whose threads each ended while the host read it through them', "
                   "'error': 'No such process'}",
                   "the host could not read a process of the sandbox whose main thread has exited"),
        };
        for (size_t j = 0; j < KB_ELEMENTSOF(judges); j++)
                if (judges[j].host_looks)
                        expect_each(judges[j].judge, "fail", cases, KB_ELEMENTSOF(cases));
        for (size_t i = 0; i < KB_ELEMENTSOF(cases); i++) {
                json_object *run = good_run();
                apply(run, &cases[i]);
                json_object *check = kb_judge_privileges(member(run, "snapshots"));
                assert_status_naming(check, "fail", cases[i].words, "sandbox.privileges");
                json_object_put(check);
                json_object_put(run);
        }
}

/* Shared by every check that needs the probe cell: none came back. */
static void test_missing_probe_fails_every_check(void **state) {
        static const breakage cases[] = {
                B2("/probe", NULL, "/probe_error", "'no execute_reply within 60 s'",
                   "the probe cell gave no result: no execute_reply within 60 s"),
                B1("/probe", NULL, "the probe cell gave no result: unknown"),
        };
        for (size_t j = 0; j < KB_ELEMENTSOF(judges); j++)
                if (judges[j].needs_probe)
                        expect_each(judges[j].judge, "fail", cases, KB_ELEMENTSOF(cases));
}

static void test_check_object(void **state) {
        json_object *check = kb_judge_check("x.y", "untested", NULL, "because %d", 7);
        assert_string_equal(status_of(check), "untested");
        assert_string_equal(detail_of(check), "because 7");
        assert_true(json_object_is_type(member(check, "evidence"), json_type_object));
        json_object_put(check);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_check_object),
                cmocka_unit_test(test_good_run_is_well_formed),
                cmocka_unit_test(test_good_run_passes_every_check),
                cmocka_unit_test(test_good_run_details),
                cmocka_unit_test(test_malformed_fails_every_check),
                cmocka_unit_test(test_malformed_after_own_problem),
                cmocka_unit_test(test_missing_looks_fail_every_check),
                cmocka_unit_test(test_missing_probe_fails_every_check),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

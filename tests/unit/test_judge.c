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
                cmocka_unit_test(test_missing_looks_fail_every_check),
                cmocka_unit_test(test_missing_probe_fails_every_check),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

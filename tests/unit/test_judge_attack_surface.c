/* test_judge_attack_surface.c: sandbox.attack_surface: the seccomp filter, from the host and inside. */
#include "judge_fixture.h"

/* ---- sandbox.attack_surface ---- */

static void test_attack_surface(void **state) {
        static const breakage passes[] = {
                /* a kernel that adds filters of its own only refuses more */
                B2("/snapshots/0/processes/1/seccomp_filters", "3", "/snapshots/1/processes/1/seccomp_filters", "3",
                   NULL),
                /* a language that cannot make raw calls tries nothing in its own process */
                B1("/expect/surface/in_process", NULL, NULL),
        };
        static const breakage fails[] = {
                B1("/snapshots/1/processes/2/seccomp", "0",
                   "pid 1003 (python3) runs without a seccomp filter (mode 0)"),
                B1("/snapshots/0/processes/0/seccomp", NULL,
                   "pid 1001 (bwrap) runs without a seccomp filter (mode unknown)"),
                B1("/snapshots/0/processes/1/seccomp_filters", "0",
                   "pid 1002 (python3) runs under 0 seccomp filters, fewer"),
                B1("/snapshots/1/processes/1/seccomp_filters", NULL, "an unknown number of seccomp filters"),
                /* the kernel keeps filters per thread: seccomp(2) without TSYNC filters one thread */
                B1("/snapshots/1/processes/1/tasks/1/seccomp", "0",
                   "thread 1011 of pid 1002 (python3) runs without a seccomp filter (mode 0)"),
                B1("/snapshots/0/processes/1/tasks/0/seccomp_filters", "0",
                   "thread 1010 of pid 1002 (python3) runs under 0 seccomp filters, fewer"),
                B1("/snapshots/0/processes/1/tasks", NULL,
                   "the host could not list the threads of pid 1002 (python3): the seccomp state of each"),
                B1("/host/seccomp_filters", "1", "runs under 1 seccomp filters, fewer than kbound's 2"),
                B1("/expect/surface/child/results/0/errno", NULL,
                   "the sandbox lets ptrace through (the spawned program's call succeeded"),
                B1("/expect/surface/in_process/results/1/errno", "'EACCES'",
                   "socket:AF_PACKET answers EACCES in the kernel process, not the filter's EAFNOSUPPORT"),
                B1("/expect/surface/child/results/1", NULL, "the spawned program did not try add_key"),
                B1("/expect/surface/child", NULL, "the spawned program gave no result"),
                B1("/expect/surface", NULL, "the attack-surface cell gave no result: none"),
                B2("/expect/surface", NULL, "/expect/surface_error", "'syscall probe program was not found'",
                   "the attack-surface cell gave no result: syscall probe program was not found"),
                /* an error said where the result goes is a result without tries */
                B1("/expect/surface", "{'error': 'syscall probe program was not found'}",
                   "the spawned program gave no result"),
                B1("/expect/seccomp/blocked", "{}", "kbound has no list of what its filter refuses"),
                B1("/expect/seccomp", NULL, "kbound has no list of what its filter refuses"),
                B1("/expect/seccomp/blocked", "['ptrace']", "kbound has no list of what its filter refuses"),
                B1("/expect/surface/child", "'lies'", "the spawned program gave no result"),
                B1("/expect/surface/child/results", "{'ptrace': 'EPERM'}", "the spawned program did not try ptrace"),
                /* a family by another way in: socketpair(2), i386's socketcall(2) */
                B1("/expect/surface/child/results/3/socketpair", "{'errno': null, 'ret': 0, 'tested': true}",
                   "the sandbox lets socket:AF_PACKET through socketpair through (the spawned program's"),
                B1("/expect/surface/child/compat/0/results/3/socketcall",
                   "{'errno': 'EINVAL', 'ret': -1, 'tested': true}",
                   "socket:AF_PACKET through socketcall(SOCKET) answers EINVAL in the spawned program on i386 (int "
                   "0x80), not the filter's EAFNOSUPPORT"),
                /* every ABI the kernel accepts: each refused call refused there too */
                B1("/expect/surface/child/compat/0/results/0/errno", NULL,
                   "the sandbox lets ptrace through on i386 (int 0x80) (the spawned program's call succeeded; the "
                   "filter refuses it with EPERM)"),
                B1("/expect/surface/child/compat/0/results/4/errno", "'ENOSYS'",
                   "vm86 answers ENOSYS in the spawned program on i386 (int 0x80), not the filter's EPERM"),
                B2("/expect/surface/child/compat/0/results/1/tested", "false",
                   "/expect/surface/child/compat/0/results/1/signal", "31",
                   "add_key on i386 (int 0x80) kills the spawned program's process (SIGSYS), where kbound's filter "
                   "answers EPERM"),
                /* ... and killed natively too: kbound's filter never kills a refused call */
                B2("/expect/surface/child/results/0/tested", "false", "/expect/surface/child/results/0/signal", "31",
                   "ptrace kills the spawned program's process (SIGSYS), where kbound's filter answers EPERM"),
                B1("/expect/surface/child/compat/0/results/1", NULL,
                   "the spawned program did not try add_key on i386 (int 0x80)"),
                B1("/expect/surface/child/compat/0/results", NULL,
                   "the spawned program did not try ptrace on i386 (int 0x80)"),
                B1("/expect/surface/child/compat", NULL,
                   "the spawned program made no tries on i386 (int 0x80), which this kernel accepts (getpid through "
                   "int 0x80 answered 5002)"),
                B2("/expect/surface/child/compat/0/accepted", "false", "/expect/surface/child/compat/0/why",
                   "'getpid through int 0x80 killed the process that made it with SIGSYS'",
                   "the spawned program found i386 closed (getpid through int 0x80 killed the process that made it "
                   "with SIGSYS), where the host's getpid through it answered"),
                /* the host finds x32 running: the program must have tried it */
                B1("/host/abis/x32/accepted", "true", "the spawned program found x32 closed"),
                B1("/host/abis", "{}", "the host did not find which system-call ABIs the kernel accepts"),
                B1("/host/abis", NULL, "the host did not find which system-call ABIs the kernel accepts"),
                /* the host can read the filters in force (root): every process must have been read */
                B1("/host/filter_read", "true", "pid 1001 (bwrap): the host did not read the seccomp filters in force"),
        };
        EXPECT_PASSES(kb_judge_attack_surface, passes);
        EXPECT_FAILS(kb_judge_attack_surface, fails);

        /* kbound itself runs under a filter: every sandbox process has one more */
        json_object *run = good_run();
        set(run, "/host/seccomp_filters", "1");
        json_object *snapshots = member(run, "snapshots");
        for (size_t i = 0; i < json_object_array_length(snapshots); i++) {
                json_object *procs = member(json_object_array_get_idx(snapshots, i), "processes");
                for (size_t j = 0; j < json_object_array_length(procs); j++) {
                        json_object *p = json_object_array_get_idx(procs, j), *tasks = member(p, "tasks");
                        json_object_object_add(p, "seccomp_filters", json_object_new_int(2));
                        for (size_t k = 0; k < json_object_array_length(tasks); k++)
                                json_object_object_add(json_object_array_get_idx(tasks, k), "seccomp_filters",
                                                       json_object_new_int(2));
                }
        }
        json_object *check = judge_run(kb_judge_attack_surface, run);
        assert_status_naming(check, "pass", "(mode 2, 2 filters)", "kbound under a filter of its own");
        json_object_put(check);
        json_object_put(run);
}

/* The good run as root: the host read every process's filters at every look and found kbound's
 * program among them (as value says, for each). */
static json_object *root_run(const char *value) {
        json_object *run = good_run();
        set(run, "/host/filter_read", "true");
        drop(run, "/host/filter_read_why");
        json_object *snapshots = member(run, "snapshots");
        for (size_t i = 0; i < json_object_array_length(snapshots); i++) {
                json_object *procs = member(json_object_array_get_idx(snapshots, i), "processes");
                for (size_t j = 0; j < json_object_array_length(procs); j++)
                        json_object_object_add(json_object_array_get_idx(procs, j), "filter", parse(value));
        }
        return run;
}

#define READ_KBOUND "{'tid': 1, 'built': 415, 'lengths': [415], 'kbound': 0}"
#define DIFF_I386 "{'abi': 'i386', 'call': 'keyctl', 'nr': 288, 'built': 'errno EPERM', 'in_force': 'allow'}"

/* As root the host's read of the filters in force decides, whatever the tries said: kbound's program
 * must be among them, instruction for instruction, in every process at every look. */
static void test_attack_surface_read(void **state) {
        json_object *run = root_run(READ_KBOUND);
        json_object *check = judge_run(kb_judge_attack_surface, run);
        assert_status_naming(check, "pass",
                             "the host read the filters in force of every sandbox process at every look (5 reads): "
                             "each holds kbound's program, instruction for instruction",
                             "as root");
        json_object_put(check);
        /* a filter of the kernel's own on top of kbound's only refuses more */
        set(run, "/snapshots/1/processes/1/filter", "{'built': 415, 'lengths': [415, 3], 'kbound': 0}");
        check = judge_run(kb_judge_attack_surface, run);
        assert_status_naming(check, "pass", "(5 reads)", "a filter stacked on kbound's");
        json_object_put(check);
        /* a zombie with nothing read makes no calls */
        set(run, "/snapshots/1/processes/2/state", "'Z'");
        drop(run, "/snapshots/1/processes/2/filter");
        check = judge_run(kb_judge_attack_surface, run);
        assert_status_naming(check, "pass", "(4 reads)", "a zombie");
        json_object_put(check);
        json_object_put(run);

        static const struct {
                const char *path, *value, *words;
        } fails[] = {
                {"/snapshots/1/processes/2/filter",
                 "{'built': 415, 'lengths': [420], 'first_difference': 1, 'differences': [" DIFF_I386 "]}",
                 "pid 1003 (python3) runs under 1 seccomp filter, none of them the program kbound built (415 "
                 "instructions); the first differs from it at instruction 1: on i386, keyctl (nr 288) answers allow, "
                 "where kbound's program answers errno EPERM"},
                {"/snapshots/0/processes/0/filter", "{'built': 415, 'lengths': [416], 'first_difference': 0}",
                 "pid 1001 (bwrap) runs under 1 seccomp filter, none of them the program kbound built (415 "
                 "instructions); the first differs from it at instruction 0: no call of kbound's table answers "
                 "otherwise on any ABI, yet the program differs"},
                {"/snapshots/0/processes/1/filter",
                 "{'built': 415, 'lengths': [420], 'differences': [" DIFF_I386 ", " DIFF_I386 ", " DIFF_I386
                 ", " DIFF_I386 "], 'differences_more': 2}",
                 "where kbound's program answers errno EPERM; 3 more"},
                {"/snapshots/0/processes/1/filter", "{'built': 415, 'error': 'ptrace refused'}",
                 "pid 1002 (python3): the host could not read the seccomp filters in force: ptrace refused"},
                {"/snapshots/1/processes/1/filter", NULL,
                 "pid 1002 (python3): the host did not read the seccomp filters in force"},
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(fails); i++) {
                run = root_run(READ_KBOUND);
                if (fails[i].value)
                        set(run, fails[i].path, fails[i].value);
                else
                        drop(run, fails[i].path);
                check = judge_run(kb_judge_attack_surface, run);
                assert_status_naming(check, "fail", fails[i].words, fails[i].path);
                json_object_put(check);
                json_object_put(run);
        }
        /* a process whose filters differ is named once, whatever the number of looks */
        run = root_run("{'built': 415, 'lengths': [416], 'first_difference': 0}");
        check = judge_run(kb_judge_attack_surface, run);
        assert_int_equal(json_object_array_length(member(member(check, "evidence"), "problems")), 3);
        json_object_put(check);
        json_object_put(run);
}

/* The evidence: each call with the filter's answer and each side's; what was not claimed. */
static void test_attack_surface_evidence(void **state) {
        json_object *run = good_run();
        set(run, "/expect/seccomp/not_claimed", "['add_key']");
        drop(run, "/expect/seccomp/blocked/add_key");
        json_object *check = judge_run(kb_judge_attack_surface, run);
        assert_status_naming(check, "pass",
                             "NOT claimed: add_key; every sandbox process runs under kbound's seccomp filter (mode "
                             "2, 1 filter); 3 refused calls and socket families tried from a spawned program and the "
                             "kernel itself, each refused as the filter says; ABIs: x86_64; i386 (int 0x80): 4 "
                             "tried; x32 not accepted by this kernel (getpid through syscall with "
                             "__X32_SYSCALL_BIT answered ENOSYS: this kernel does not run the ABI); the host could "
                             "not read the filters in force (the kernel refuses the read (PTRACE_SECCOMP_GET_FILTER "
                             "needs CAP_SYS_ADMIN and a reader under no seccomp filter)): the proof is the tries on "
                             "every ABI the kernel accepts",
                             "sandbox.attack_surface");
        json_object *calls = member(member(check, "evidence"), "calls");
        assert_string_equal(str_member(member(calls, "ptrace"), "spawned program"), "EPERM");
        assert_string_equal(str_member(member(calls, "ptrace"), "kernel process"), "EPERM");
        assert_string_equal(str_member(member(calls, "vm86"), "spawned program"), "untested");
        assert_null(member(member(calls, "vm86"), "kernel process"));
        assert_string_equal(str_member(member(calls, "add_key"), "expected"), "not_claimed");
        /* i386 has vm86, and kbound's filter refuses it there */
        assert_string_equal(str_member(member(calls, "vm86"), "spawned program on i386"), "EPERM");
        assert_string_equal(str_member(member(calls, "ptrace"), "spawned program on i386"), "EPERM");
        json_object_put(check);
        json_object_put(run);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_attack_surface),
                cmocka_unit_test(test_attack_surface_read),
                cmocka_unit_test(test_attack_surface_evidence),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

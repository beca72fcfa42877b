/* test_judge_identity.c: identity.pid2: who holds the other end of kbound's connections. */
#include "judge_fixture.h"

/* ---- identity.pid2 ---- */

#define CONN0 "/snapshots/0/connections/0"

static void test_identity(void **state) {
        static const breakage fails[] = {
                B1("/snapshots/0/endpoints", "[]", "the host was given no kernel endpoint to look for"),
                B1("/snapshots/0/endpoints", NULL, "the host was given no kernel endpoint to look for"),
                /* kbound talks to control over no connection the host found, in any look */
                B2("/snapshots/0/connections/1", NULL, "/snapshots/1/connections/1", NULL,
                   "the host found no connection of kbound's to the kernel's endpoint /run/kbound/kernel-control"),
                B1("/snapshots/0/endpoints/1/error", "'No such file or directory'",
                   "the host could not find the socket file of the kernel's endpoint /run/kbound/kernel-control: No "
                   "such "
                   "file or directory"),
                /* the decoy: kbound's connection answered by a process outside the sandbox, whatever
                 * listens at the endpoint's path inside it */
                B1(CONN0 "/holders", HOST_HOLDER,
                   "PID 2 is not the kernel: kbound's connection to /run/kbound/kernel-shell is answered by host pid "
                   "6001 "
                   "(python3), outside the sandbox (started by kbound's launcher), not by the pinned PID 2 (host pid "
                   "1002)"),
                B1(CONN0 "/holders", "[]",
                   "PID 2 is not the kernel: kbound's connection to /run/kbound/kernel-shell (socket:[9101]) is "
                   "answered "
                   "by socket:[7101], which no process the host found holds"),
                /* a forwarder's child answering: PID 7 in the sandbox */
                B1("/snapshots/1/connections/0/holders", "[{'pid': 1003, 'name': 'python3', 'side': 'sandbox'}]",
                   "answered by pid 1003 (PID 7 in the sandbox), python3, not by the pinned PID 2"),
                B1(CONN0 "/holders/-", "{'pid': 1001, 'name': 'bwrap', 'side': 'sandbox'}",
                   "kbound's connection to /run/kbound/kernel-shell is held by pid 1001 (PID 1 in the sandbox), bwrap, "
                   "not "
                   "only by the pinned kernel"),
                /* the pinned pid, but not as a sandbox process */
                B1(CONN0 "/holders/0/side", "'host'", "PID 2 is not the kernel"),
                /* a connection only the second look saw counts as much */
                B1("/snapshots/1/connections/-",
                   "{'endpoint': '" SHELL "', 'kbound_socket': 9103, 'peer': 7103, 'holders': " HOST_HOLDER "}",
                   "is answered by host pid 6001 (python3), outside the sandbox"),
                B2("/expect/identity", NULL, "/expect/identity_error", "'no execute_reply within 10 s'",
                   "the identity cell gave no answer: no execute_reply within 10 s"),
                /* an error said where the result goes is a result without a pid */
                B1("/expect/identity", "{'error': 'no execute_reply within 10 s'}",
                   "the kernel reports pid -1 (NSpid ends in -1), expected 2"),
                B1("/expect/identity", NULL, "the identity cell gave no answer: no result"),
                B2("/expect/identity/pid", "3", "/expect/identity/nspid", "[3]",
                   "the kernel reports pid 3 (NSpid ends in 3), expected 2"),
                /* a pack whose cell runs in a child and reports its own pid: told which pid is the kernel */
                B2("/expect/identity/pid", "7", "/expect/identity/nspid", "[7]",
                   "expected 2: a cell that runs in a child of the kernel (a shell, octave-cli) reports the kernel "
                   "process, its parent ($PPID, getppid())"),
                B1("/expect/identity/nspid", "[2, 5]", "the kernel reports pid 2 (NSpid ends in 5), expected 2"),
                B1("/expect/identity/nspid", "[]", "the kernel reports pid 2 (NSpid ends in -1), expected 2"),
                B1("/expect/identity/nspid", "['2']", "the kernel reports pid 2 (NSpid ends in -1), expected 2"),
                B1("/expect/kernel_pid", "1001", "not by the pinned PID 2"),
                /* a kernel kbound did not record is no process's: nothing answers as it */
                B1("/expect/kernel_pid", NULL, "kbound did not record the pinned kernel's host pid"),
                B1("/expect/kernel_pid", NULL, "not by the pinned PID 2 (host pid -1)"),
        };
        EXPECT_FAILS(kb_judge_identity, fails);
        static const breakage passes[] = {
                /* the same connection in both looks is one connection; more channels, more connections */
                B1("/snapshots/1/connections/-",
                   "{'endpoint': '/run/kbound/kernel-iopub', 'kbound_socket': 9104, 'peer': 7104, "
                   "'holders': [{'pid': 1002, 'name': 'python3', 'side': 'sandbox'}]}",
                   "each of kbound's 3 connections"),
        };
        EXPECT_PASSES(kb_judge_identity, passes);
}

#undef CONN0

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_identity),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

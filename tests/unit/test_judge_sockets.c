/* test_judge_sockets.c: boundary.sockets: host unix sockets reachable through the sandbox's mounts. */
#include "judge_fixture.h"

/* ---- boundary.sockets ---- */

#define SOCKET_EXPOSED "/snapshots/0/reach/2/exposed"

static void test_sockets(void **state) {
        static const breakage fails[] = {
                B1(SOCKET_EXPOSED, "[{'at': '" HOST_SOCKET "', 'confirmed': true}]",
                   "the listening unix stream socket " HOST_SOCKET " is reachable in the sandbox at " HOST_SOCKET),
                B1("/snapshots/1/reach/2/exposed", "[{'at': '/var" HOST_SOCKET "', 'confirmed': true}]",
                   "is reachable in the sandbox at /var" HOST_SOCKET),
                /* not disproved is not cleared */
                B1(SOCKET_EXPOSED, "[{'at': '" HOST_SOCKET "', 'confirmed': false, 'error': 'Permission denied'}]",
                   "the listening unix stream socket " HOST_SOCKET " is exposed at " HOST_SOCKET
                   " by the sandbox's mounts "
                   "(the host could not confirm: Permission denied)"),
                B1(SOCKET_EXPOSED, "[{'at': '/x', 'confirmed': false, 'error': 'a different object is there'}]",
                   "exposed at /x by the sandbox's mounts (the host could not confirm: a different object is there)"),
                B1(SOCKET_EXPOSED, "[{'at': '/x', 'confirmed': false}]", "(the host could not confirm: ?)"),
                /* placed, but on a filesystem no mount of the host's table holds: not out of reach */
                B1("/snapshots/0/reach/2/error", "'no host mount holds it'",
                   "the host could not place the listening unix stream socket (" HOST_SOCKET
                   "): no host mount holds it"),
                /* found in the sandbox, not by its name: bound by a relative name in a folder bound in */
                B1("/snapshots/1/reach/-",
                   "{'name': 'listening unix stream socket', 'path': 'ctl.sock (not found by that name on the host)', "
                   "'kind': 'socket', 'claim': 'boundary.sockets', 'exposed': [{'at': '/mnt/rel/ctl.sock', "
                   "'confirmed': true}]}",
                   "the listening unix stream socket ctl.sock (not found by that name on the host) is reachable in the "
                   "sandbox at /mnt/rel/ctl.sock"),
                B1("/snapshots/0/socket_namespaces", "0", "the host read no network namespace's socket table"),
                B1("/snapshots/0/socket_namespaces", NULL, "the host read no network namespace's socket table"),
                /* more network namespaces than one look lists: counted and failed, never skipped */
                B1("/snapshots/1/socket_namespaces_skipped", "3",
                   "the host did not list the sockets of 3 network namespaces (more than kbound reads in one look)"),
                B1("/snapshots/0/host_sockets", NULL, "the host did not list the host's unix sockets (ready)"),
                B1("/snapshots/1/socket_namespaces_not_entered", NULL,
                   "the host did not list the host's unix sockets (child alive)"),
                B1("/snapshots/1/errors/-", "{'what': 'kbound\\u0027s unix sockets', 'error': 'Permission denied'}",
                   "the host could not list kbound's unix sockets: Permission denied"),
                B1("/snapshots/0/mounts", "[]", "the host could not read the sandbox's mount table (ready)"),
                /* a look at a host object that names no check could be this one's: never skipped */
                B1("/snapshots/1/reach/2/claim", NULL,
                   "the host's look at the listening unix stream socket (" HOST_SOCKET
                   ") names no check it belongs to"),
                B1("/snapshots/1/reach/0/kind", NULL,
                   "the host's look at the credential file (" CREDENTIAL_CANARY ") names no kind it belongs to"),
        };
        EXPECT_FAILS(kb_judge_sockets, fails);
        static const breakage passes[] = {
                /* only "no such file there" clears what the mount table shows */
                B1(SOCKET_EXPOSED,
                   "[{'at': '" HOST_SOCKET "', 'confirmed': false, 'error': 'No such file or directory'}]", NULL),
                /* what kbound could not look at is named, not passed silently */
                B1("/snapshots/0/socket_namespaces_not_entered",
                   "[{'pid': 4321, 'error': 'Operation not permitted', 'table_error': 'Protocol error'}]",
                   "NOT claimed: the sockets of 1 network namespace kbound does not enter, some not found by the "
                   "paths their tables show (a table not read as such): network namespace of pid 4321 (Operation not "
                   "permitted; its table: Protocol error)"),
                B1("/snapshots/0/socket_namespaces_not_entered",
                   "[{'pid': 4321, 'error': 'Operation not permitted', 'placed_by_path': 2, 'unplaced': 1}]",
                   "NOT claimed: the sockets of 1 network namespace kbound does not enter, some not found by the "
                   "paths their tables show: network namespace of pid 4321 (Operation not permitted)"),
                /* another sandbox's namespace, each of its named sockets placed where its process sees it:
                 * claimed, and said so */
                B1("/snapshots/0/socket_namespaces_not_entered",
                   "[{'pid': 4321, 'error': 'Operation not permitted', 'placed_by_path': 2, 'unplaced': 0}]",
                   "; the sockets of 1 network namespace kbound does not enter (another sandbox's or container's) "
                   "each found by the path its table shows"),
                /* a socket whose file cannot be found (removed while bound): named, not passed silently */
                B1("/snapshots/0/host_sockets/not_claimed",
                   "[{'inode': 5005, 'type': 'stream', 'state': 'listening', 'path': '/run/x.sock', 'peer': 0, 'uid': "
                   "0, "
                   "'why': 'its file (device 8:1, inode 77) was not found by its name', "
                   "'held_by': [{'pid': 777, 'name': 'sshd', 'side': 'host'}]}]",
                   "NOT claimed: 1 socket on filesystems the sandbox mounts whose files the host could not find "
                   "(removed or moved to another folder since bound, a relative name, another user's): first "
                   "/run/x.sock, socket:[5005], held by pid 777 (sshd)"),
                /* a kernel sharing kbound's network reaches its abstract sockets: said, not passed over */
                B1("/expect/allow_network", "true",
                   "NOT claimed: the 3 abstract unix sockets of kbound's network namespace, which the kernel shares "
                   "(raw-network override)"),
                /* ... and said first, whatever else is not claimed (the detail has a ceiling) */
                B3("/expect/allow_network", "true", "/snapshots/0/socket_namespaces_not_entered",
                   "[{'pid': 1, 'error': 'Operation not permitted'}, {'pid': 2, 'error': 'Operation not permitted'}, "
                   "{'pid': 3, 'error': 'Operation not permitted'}, {'pid': 4, 'error': 'Operation not permitted'}]",
                   "/snapshots/0/host_sockets/not_claimed",
                   "[{'inode': 5005, 'type': 'stream', 'state': 'listening', 'peer': 0, 'held_by': [], 'path': "
                   "'/a/very/long/path/of/a/socket/file/that/was/removed/while/bound/x.sock'}]",
                   "is reachable through the sandbox's mounts (1 on filesystems the sandbox mounts, each placed by its "
                   "file's device and inode); NOT claimed: the 3 abstract unix sockets"),
        };
        EXPECT_PASSES(kb_judge_sockets, passes);
}

/* The evidence lists what is exposed, once, and nothing that was cleared. */
static void test_sockets_evidence(void **state) {
        json_object *run = good_run();
        set(run, SOCKET_EXPOSED, "[{'at': '/a', 'confirmed': false, 'error': 'No such file or directory'}]");
        json_object *check = judge_run(kb_judge_sockets, run);
        assert_string_equal(status_of(check), "pass");
        assert_int_equal(json_object_array_length(member(member(check, "evidence"), "exposed")), 0);
        json_object_put(check);
        set(run, SOCKET_EXPOSED, "[{'at': '/a', 'confirmed': true}, {'at': '/b', 'confirmed': true}]");
        check = judge_run(kb_judge_sockets, run);
        assert_string_equal(status_of(check), "fail");
        assert_true(check_names(check, "reachable in the sandbox at /a"));
        assert_true(check_names(check, "reachable in the sandbox at /b"));
        assert_int_equal(json_object_array_length(member(member(check, "evidence"), "exposed")), 1);
        json_object_put(check);
        json_object_put(run);
}

#undef SOCKET_EXPOSED

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sockets),
                cmocka_unit_test(test_sockets_evidence),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

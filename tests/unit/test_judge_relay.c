/* test_judge_relay.c: identity.pid2 for a kernel that speaks only TCP: kbound's connections are
 * answered by kbound's relay (docs/transports.md), which the judge follows to the pinned kernel
 * only when the relay is what kbound started (its program, PID 2's child) and every socket it
 * holds is one of kbound's connections, its listeners, or a TCP connection to the kernel's ports
 * whose other end PID 2 alone holds. Each case breaks one thing of a passing relayed run. */
#include "judge_fixture.h"

/* The relay (host pid 1004, PID 3 inside, the kernel's child): stdio, its listener at the shell's
 * port (7501), the other ends of kbound's two connections (7101, 7102), and its TCP connections to
 * the kernel's ports (7601, 7603), whose other ends (7602, 7604) the kernel holds. */
#define RELAY_PROC                                                                                                     \
        PROC(1004, 3, "kbound-relay", 1002, 1002,                                                                      \
             "[" FD_HOST_NULL ", " FD_LOG(1) ", " FD_LOG(2) ", "                                                       \
                                                            "{'fd': 3, 'target': 'socket:[7501]', 'type': 'sock', "    \
                                                            "'dev': '0:8', 'ino': 7501, 'flags': 2}, "                 \
                                                            "{'fd': 4, 'target': 'socket:[7101]', 'type': 'sock', "    \
                                                            "'dev': '0:8', 'ino': 7101, 'flags': 2}, "                 \
                                                            "{'fd': 5, 'target': 'socket:[7601]', 'type': 'sock', "    \
                                                            "'dev': '0:8', 'ino': 7601, 'flags': 2}, "                 \
                                                            "{'fd': 6, 'target': 'socket:[7102]', 'type': 'sock', "    \
                                                            "'dev': '0:8', 'ino': 7102, 'flags': 2}, "                 \
                                                            "{'fd': 7, 'target': 'socket:[7603]', 'type': 'sock', "    \
                                                            "'dev': '0:8', 'ino': 7603, 'flags': 2}]")
#define RELAY_TCP                                                                                                      \
        "[{'inode': 7600, 'local': '127.0.0.1:9001', 'remote': '0.0.0.0:0', 'state': 10}, "                            \
        "{'inode': 7601, 'local': '127.0.0.1:40000', 'remote': '127.0.0.1:9001', 'state': 1}, "                        \
        "{'inode': 7602, 'local': '127.0.0.1:9001', 'remote': '127.0.0.1:40000', 'state': 1}, "                        \
        "{'inode': 7603, 'local': '127.0.0.1:40001', 'remote': '127.0.0.1:9004', 'state': 1}, "                        \
        "{'inode': 7604, 'local': '127.0.0.1:9004', 'remote': '127.0.0.1:40001', 'state': 1}]"
#define RELAY_HOLDER "[{'pid': 1004, 'name': 'kbound-relay', 'side': 'sandbox'}]"
#define RELAY_EXPECT "{'program': {'dev': '8:1', 'ino': 999}, 'ports': [9001, 9004], 'prefix': '/run/kbound/kernel'}"

/* The good run with the kernel's connections answered by kbound's relay, in both looks. */
static json_object *relayed_run(void) {
        json_object *run = good_run();
        set(run, "/expect/relay", RELAY_EXPECT);
        for (int s = 0; s < 2; s++) {
                char p[128];
                snprintf(p, sizeof p, "/snapshots/%d/processes/-", s);
                set(run, p, RELAY_PROC);
                json_object *procs = NULL;
                snprintf(p, sizeof p, "/snapshots/%d/processes", s);
                assert_int_equal(json_pointer_get(run, p, &procs), 0);
                size_t last = json_object_array_length(procs) - 1;
                snprintf(p, sizeof p, "/snapshots/%d/processes/%zu/exe", s, last);
                set(run, p, "{'path': '/run/kbound-tools/syscall-probe', 'dev': '8:1', 'ino': 999}");
                /* the kernel holds the other ends of the relay's TCP connections */
                snprintf(p, sizeof p, "/snapshots/%d/processes/1/fds/-", s);
                set(run, p,
                    "{'fd': 40, 'target': 'socket:[7602]', 'type': 'sock', 'dev': '0:8', 'ino': 7602, 'flags': 2}");
                set(run, p,
                    "{'fd': 41, 'target': 'socket:[7604]', 'type': 'sock', 'dev': '0:8', 'ino': 7604, 'flags': 2}");
                snprintf(p, sizeof p, "/snapshots/%d/net/4026532300/tcp", s);
                set(run, p, RELAY_TCP);
                snprintf(p, sizeof p, "/snapshots/%d/net/4026532300/unix/-", s);
                set(run, p, "{'inode': 7501, 'listening': true, 'path': '/run/kbound/kernel-9001'}");
                for (int c = 0; c < 2; c++) {
                        snprintf(p, sizeof p, "/snapshots/%d/connections/%d/holders", s, c);
                        set(run, p, RELAY_HOLDER);
                }
        }
        return run;
}

static json_object *judge_relayed(const breakage *b) {
        json_object *run = relayed_run();
        if (b)
                apply(run, b);
        json_object *check = judge_run(kb_judge_identity, run);
        json_object_put(run);
        return check;
}

static void test_relay_followed(void **state) {
        (void) state;
        json_object *check = judge_relayed(NULL);
        assert_status_naming(check, "pass", "2 of them through kbound's relay", "a relayed run");
        json_object_put(check);
}

/* Relay processes are the last of each look (index 3 in the first, 4 with the cell's child). */
static const breakage relay_breaks[] = {
        /* not kbound's program: another of the same name */
        B2("/snapshots/0/processes/2/exe/ino", "998", "/snapshots/1/processes/3/exe/ino", "998",
           "it does not run kbound's relay (the team's kbound-syscall-probe)"),
        /* not the kernel's child */
        B2("/snapshots/0/processes/2/ppid", "1001", "/snapshots/1/processes/3/ppid", "1001",
           "it is not the pinned kernel's child"),
        /* the kernel's end of a relayed connection also held by the cell's child */
        B1("/snapshots/1/processes/2/fds/-",
           "{'fd': 9, 'target': 'socket:[7602]', 'type': 'sock', 'dev': '0:8', 'ino': 7602, 'flags': 2}",
           "its connection to the kernel's port 9001 is answered by socket:[7602], held by a process other than the "
           "pinned PID 2"),
        /* a TCP connection to a port that is not the kernel's */
        B2("/snapshots/0/net/4026532300/tcp/1/remote", "'127.0.0.1:9999'", "/snapshots/1/net/4026532300/tcp/1/remote",
           "'127.0.0.1:9999'", "not one of the kernel's ports"),
        /* a socket of its own that is none of the three kinds */
        B1("/snapshots/0/processes/2/fds/-",
           "{'fd': 8, 'target': 'socket:[7700]', 'type': 'sock', 'dev': '0:8', 'ino': 7700, 'flags': 2}",
           "it holds socket:[7700], which is neither the other end of one of kbound's connections"),
        /* a listener at a name that is not the kernel's */
        B2("/snapshots/0/net/4026532300/unix/3/path", "'/run/kbound/other-9001'",
           "/snapshots/1/net/4026532300/unix/3/path", "'/run/kbound/other-9001'", "it holds socket:[7501]"),
        /* a connection whose other end is in no table */
        B2("/snapshots/0/net/4026532300/tcp/2/local", "'127.0.0.1:9002'", "/snapshots/1/net/4026532300/tcp/2/local",
           "'127.0.0.1:9002'", "has no other end in the sandbox's TCP table"),
        /* no TCP table read */
        B2("/snapshots/0/net/4026532300/tcp", NULL, "/snapshots/1/net/4026532300/tcp", NULL,
           "the host could not read the TCP table of its network namespace"),
        /* no relay started for this kernel: the relay is any other process */
        B1("/expect/relay", NULL, "not by the pinned PID 2"),
};

static void test_relay_breaks(void **state) {
        (void) state;
        for (size_t i = 0; i < KB_ELEMENTSOF(relay_breaks); i++) {
                json_object *check = judge_relayed(&relay_breaks[i]);
                char what[64];
                snprintf(what, sizeof what, "relay case %zu", i);
                assert_status_naming(check, "fail", relay_breaks[i].words, what);
                json_object_put(check);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_relay_followed),
                cmocka_unit_test(test_relay_breaks),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

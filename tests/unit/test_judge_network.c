/* test_judge_network.c: boundary.network: the host's view of the kernel's namespace, and the cell's. */
#include "judge_fixture.h"

/* ---- boundary.network ---- */

#define NET "/snapshots/0/net/4026532300"

static void test_network_not_claimed(void **state) {
        static const breakage cases[] = {
                B2("/expect/allow_network", "true", "/expect/canary_connections", "{'tcp': 2, 'unix': 1}",
                   "raw-network override: network isolation NOT claimed (canary connections seen: 3)"),
                /* whatever else is the case: the boundary is not claimed */
                B3("/expect/allow_network", "true", "/probe", NULL, "/snapshots/0/processes/1/ns/net", "4026531840",
                   "network isolation NOT claimed (canary connections seen: 0)"),
        };
        expect_each(kb_judge_network, "not_claimed", cases, KB_ELEMENTSOF(cases));
}

static void test_network_host_view(void **state) {
        static const breakage fails[] = {
                B1("/snapshots/0/kernel_net", NULL, "the host could not read the kernel's network tables (ready)"),
                B1("/snapshots/1/net/4026532300", NULL,
                   "the host could not read the kernel's network tables (child alive)"),
                B1(NET "/interfaces", "['lo', 'eth0']", "the sandbox has a network interface 'eth0' besides lo"),
                /* a socket of the sandbox's network, held outside it */
                B1("/snapshots/1/outside_channels/-",
                   "{'target': 'socket:[7003]', 'pid': 4244, 'name': 'relay', 'fd': 5, 'netns': true}",
                   "socket:[7003], a socket of the sandbox's network namespace, is held by pid 4244 (relay, its fd 5), "
                   "outside the sandbox (child alive)"),
                B1("/snapshots/0/outside_channels", NULL,
                   "the host did not look for the sandbox's sockets outside it (ready)"),
                B1(NET "/interfaces", NULL, "the host could not read the sandbox's interfaces"),
                B1(NET "/routes_v4", "['eth0']", "the sandbox has a route through 'eth0'"),
                B1(NET "/routes_v6", "['lo', 'wg0']", "the sandbox has a route through 'wg0'"),
                B1(NET "/routes_v6", NULL, "the host could not read the sandbox's routes_v6"),
                B1(NET "/unix/-", "{'inode': 7500, 'listening': true, 'path': '@" CANARY_NAME "'}",
                   "the host's abstract canary socket @" CANARY_NAME " is in the sandbox's network namespace"),
                /* the canary's name is looked for in a table the host read: no table, no pass */
                B1(NET "/unix", NULL, "the host could not read the sandbox's unix sockets"),
                B2("/snapshots/0/processes/1/ns/net", "4026531840", "/snapshots/1/processes/1/ns/net", "4026531840",
                   "the kernel shares the host's network namespace"),
                B1("/host/ns/net", NULL, "the host could not compare the kernel's network namespace with its own"),
                B1("/snapshots/0/processes/1/ns/net", NULL, "could not compare the kernel's network namespace"),
                B1("/expect/canary_connections/tcp", "1", "the host's canaries saw 1 TCP and 0 unix connections"),
                B1("/expect/canary_connections/unix", "2", "the host's canaries saw 0 TCP and 2 unix connections"),
                B1("/expect/canary_connections", NULL, "the host did not count its canaries' connections"),
                B1("/expect/canary_connections/unix", NULL, "the host did not count its canaries' connections"),
        };
        EXPECT_FAILS(kb_judge_network, fails);
        static const breakage passes[] = {
                B1(NET "/unix/-", "{'inode': 7500, 'listening': true, 'path': '@another-name'}", NULL),
                B1(NET "/unix/-", "{'inode': 7500, 'listening': true, 'path': '/" CANARY_NAME "'}", NULL),
        };
        EXPECT_PASSES(kb_judge_network, passes);
}

static void test_network_cell(void **state) {
        static const breakage fails[] = {
                B1("/probe/network/tcp/0/connected", "true", "the cell connected to the host's loopback TCP canary"),
                B1("/probe/network/abstract/0/connected", "true",
                   "the cell connected to the host's abstract unix socket canary"),
                B1("/probe/network", "{'tcp': [], 'abstract': [], 'unix_visible': []}",
                   "the cell tested no canary connection"),
                B1("/probe/network", NULL, "the cell tested no canary connection"),
                B2("/probe/network/tcp", "[]", "/probe/network/abstract/0/tested", "false",
                   "the cell tested no canary connection"),
                /* ... and one that does not say so and connected is a connection */
                B2("/probe/network/abstract/0/tested", NULL, "/probe/network/abstract/0/connected", "true",
                   "the cell connected to the host's abstract unix socket canary"),
                B1("/probe/errors/-", "{'probe': 'network.tcp', 'error': 'OSError: [Errno 24]'}",
                   "the cell's network.tcp sub-probe failed: OSError: [Errno 24]"),
                B1("/probe/network/unix_visible", "['" CANARY_NAME "']",
                   "the cell sees the host's abstract canary socket in /proc/net/unix"),
        };
        EXPECT_FAILS(kb_judge_network, fails);
        static const breakage passes[] = {
                /* an abstract attempt the cell did not make is not counted, the TCP one is */
                B1("/probe/network/abstract/0/tested", "false", "1 canary connection attempt failed"),
                B1("/probe/network/abstract/-", "{'name': 'x', 'tested': true, 'connected': false}",
                   "3 canary connection attempts failed"),
                /* an abstract attempt that does not say it was not made was made (facts.def: TRUE) */
                B1("/probe/network/abstract/0/tested", NULL, "2 canary connection attempts failed"),
        };
        EXPECT_PASSES(kb_judge_network, passes);
}

#undef NET

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_network_not_claimed),
                cmocka_unit_test(test_network_host_view),
                cmocka_unit_test(test_network_cell),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

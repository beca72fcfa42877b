/* judge_network.c: boundary.network, the kernel's own network namespace and the canaries. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "verdict/judge-internal.h"

/* ---- network ---- */

static json_object *kernel_net(json_object *snap) {
        return judge_map_at(kb_fact_map_of(snap, FACT_LOOK_NET), kb_fact_str_of(snap, FACT_LOOK_KERNEL_NET));
}

json_object *kb_judge_network(const kb_judge_input *in) {
        static const char *const subprobes[] = {"network", NULL};
        verdict v;
        verdict_init(&v);
        char buf[DETAIL_MAX];
        /* -1: not counted. */
        json_object *conn = kb_fact_obj_of(in->expect, FACT_EXPECT_CANARY_CONNECTIONS);
        int64_t tcp_hits = kb_fact_int_or(conn, FACT_CANARY_COUNTS_TCP, -1),
                unix_hits = kb_fact_int_or(conn, FACT_CANARY_COUNTS_UNIX, -1);
        json_object *cell = kb_fact_obj_of(in->probe, FACT_PROBE_NETWORK);
        verdict_evidence(&v, "host_tcp_connections", json_object_new_int64(tcp_hits));
        verdict_evidence(&v, "host_unix_connections", json_object_new_int64(unix_hits));
        verdict_evidence_fact(&v, EVIDENCE_NETWORK_CELL, json_object_get(cell));
        if (kb_fact_bool_of(in->expect, FACT_EXPECT_ALLOW_NETWORK)) {
                return verdict_end_as(
                        &v, KB_CHECK_NETWORK, "not_claimed",
                        "raw-network override: network isolation NOT claimed (canary connections seen: %" PRId64 ")",
                        (tcp_hits > 0 ? tcp_hits : 0) + (unix_hits > 0 ? unix_hits : 0));
        }
        judge_look_problems(&v, in);
        int64_t host_net = judge_ns_inode(kb_fact_map_of(in->host, FACT_HOST_NS), "net");
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s), *net = kernel_net(snap);
                const char *label = kb_fact_str_or(snap, FACT_LOOK_LABEL, "?");
                if (!net) {
                        verdict_problem(&v, "the host could not read the kernel's network tables (%s)", label);
                        continue;
                }
                json_object *ifs = kb_fact_arr_of(net, FACT_NET_INTERFACES);
                if (!ifs)
                        verdict_problem(&v, "the host could not read the sandbox's interfaces");
                for (size_t i = 0; i < arr_len(ifs); i++)
                        if (strcmp(json_object_get_string(at(ifs, i)), "lo") != 0)
                                verdict_problem(&v, "the sandbox has a network interface '%s' besides lo",
                                                json_object_get_string(at(ifs, i)));
                const kb_fact_arr route_tables[] = {FACT_NET_ROUTES_V4, FACT_NET_ROUTES_V6};
                for (size_t k = 0; k < KB_ELEMENTSOF(route_tables); k++) {
                        json_object *routes = kb_fact_arr_of(net, route_tables[k]);
                        if (!routes)
                                verdict_problem(&v, "the host could not read the sandbox's %s",
                                                kb_fact_row(route_tables[k].id)->key);
                        for (size_t i = 0; i < arr_len(routes); i++)
                                if (strcmp(json_object_get_string(at(routes, i)), "lo") != 0)
                                        verdict_problem(&v, "the sandbox has a route through '%s'",
                                                        json_object_get_string(at(routes, i)));
                }
                json_object *unix_list = kb_fact_arr_of(net, FACT_NET_UNIX),
                            *names = kb_fact_arr_of(in->expect, FACT_EXPECT_ABSTRACT_CANARIES);
                if (!unix_list)
                        verdict_problem(&v, "the host could not read the sandbox's unix sockets");
                for (size_t i = 0; i < arr_len(unix_list); i++) {
                        const char *path = kb_fact_str_of(at(unix_list, i), FACT_UNIX_ENTRY_PATH);
                        if (path && path[0] == '@' && str_in(names, path + 1))
                                verdict_problem(
                                        &v,
                                        "the host's abstract canary socket %s is in the sandbox's network namespace",
                                        path);
                }
                /* A socket of the sandbox's network held outside: made there by a process that entered
                 * the namespace and left, a listener the kernel can reach and a way out. */
                json_object *channels = kb_fact_arr_of(snap, FACT_LOOK_OUTSIDE_CHANNELS);
                if (!channels)
                        verdict_problem(&v, "the host did not look for the sandbox's sockets outside it (%s)", label);
                for (size_t i = 0; i < arr_len(channels); i++) {
                        json_object *c = at(channels, i);
                        if (!kb_fact_bool_of(c, FACT_OUTSIDE_CHANNEL_NETNS))
                                continue;
                        verdict_problem(&v,
                                        "%s, a socket of the sandbox's network namespace, is held by pid %" PRId64
                                        " (%s, its fd %" PRId64 "), outside the sandbox (%s)",
                                        kb_fact_str_or(c, FACT_OUTSIDE_CHANNEL_TARGET, "?"),
                                        kb_fact_int_or(c, FACT_OUTSIDE_CHANNEL_PID, -1),
                                        kb_fact_str_or(c, FACT_OUTSIDE_CHANNEL_NAME, "?"),
                                        kb_fact_int_or(c, FACT_OUTSIDE_CHANNEL_FD, -1), label);
                }
        }
        int64_t kernel_pid = judge_kernel_pid(&v, in);
        json_object *kproc = NULL, *procs = kb_fact_arr_of(at(in->snapshots, 0), FACT_LOOK_PROCESSES);
        for (size_t i = 0; i < arr_len(procs); i++)
                if (judge_is_pid(at(procs, i), kernel_pid))
                        kproc = at(procs, i);
        int64_t kernel_netns = judge_ns_inode(kb_fact_map_of(kproc, FACT_PROCESS_NS), "net");
        if (host_net < 0 || kernel_netns < 0)
                verdict_problem(&v, "the host could not compare the kernel's network namespace with its own");
        else if (kernel_netns == host_net)
                verdict_problem(&v, "the kernel shares the host's network namespace");
        if (in->cells_absent)
                ; /* no cell ran, so no canary was listening: the namespace's tables carry the check */
        else if (tcp_hits < 0 || unix_hits < 0)
                verdict_problem(&v, "the host did not count its canaries' connections");
        else if (tcp_hits != 0 || unix_hits != 0)
                verdict_problem(&v, "the host's canaries saw %" PRId64 " TCP and %" PRId64 " unix connections",
                                tcp_hits, unix_hits);
        judge_no_probe(&v, in);
        if (judge_cell_error(kb_fact_arr_of(in->probe, FACT_PROBE_ERRORS), subprobes, buf, sizeof buf))
                verdict_problem(&v, "%s", buf);
        /* Each try by its own object's facts: a TCP try is always one; an abstract one counts unless it
         * says it was not tried (facts.def: absent reads as tried). */
        size_t tested = 0;
        json_object *tcp = kb_fact_arr_of(cell, FACT_PROBE_NETWORK_TCP),
                    *abstract = kb_fact_arr_of(cell, FACT_PROBE_NETWORK_ABSTRACT);
        for (size_t i = 0; i < arr_len(tcp); i++) {
                tested++;
                if (kb_fact_bool_of(at(tcp, i), FACT_PROBE_TCP_CONNECTED))
                        verdict_problem(&v, "the cell connected to the host's loopback TCP canary");
        }
        for (size_t i = 0; i < arr_len(abstract); i++) {
                if (!kb_fact_bool_of(at(abstract, i), FACT_PROBE_ABSTRACT_TESTED))
                        continue;
                tested++;
                if (kb_fact_bool_of(at(abstract, i), FACT_PROBE_ABSTRACT_CONNECTED))
                        verdict_problem(&v, "the cell connected to the host's abstract unix socket canary");
        }
        if (in->probe && tested == 0)
                verdict_problem(&v, "the cell tested no canary connection");
        if (arr_len(kb_fact_arr_of(cell, FACT_PROBE_NETWORK_UNIX_VISIBLE)) > 0)
                verdict_problem(&v, "the cell sees the host's abstract canary socket in /proc/net/unix");
        char pass[256];
        if (in->cells_absent)
                snprintf(pass, sizeof pass,
                         "the kernel's own network namespace holds only lo and no route (read by the host)");
        else
                snprintf(pass, sizeof pass,
                         "the kernel's own network namespace holds only lo and no route (read by the host); %zu canary "
                         "connection attempt%s failed and the host's canaries saw none",
                         tested, tested == 1 ? "" : "s");
        return verdict_end(&v, KB_CHECK_NETWORK, pass);
}

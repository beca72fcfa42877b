/* judge_network.c: boundary.network, the kernel's own network namespace and the canaries. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "verdict/judge-internal.h"

/* ---- network ---- */

static json_object *kernel_net(json_object *snap) {
        const char *key = kb_json_str(snap, "kernel_net");
        return key ? kb_json_get(kb_json_get(snap, "net"), key) : NULL;
}

json_object *kb_judge_network(const kb_judge_input *in) {
        static const char *const subprobes[] = {"network", NULL};
        verdict v;
        verdict_init(&v);
        char buf[DETAIL_MAX];
        json_object *conn = kb_json_get(in->expect, "canary_connections");
        int64_t tcp_hits = int_or(conn, "tcp", -1), unix_hits = int_or(conn, "unix", -1);
        json_object *cell = kb_json_get(in->probe, "network");
        verdict_evidence(&v, "host_tcp_connections", json_object_new_int64(tcp_hits));
        verdict_evidence(&v, "host_unix_connections", json_object_new_int64(unix_hits));
        verdict_evidence(&v, "cell", json_object_get(cell));
        if (kb_json_true(in->expect, "allow_network")) {
                return verdict_end_as(
                        &v, KB_CHECK_NETWORK, "not_claimed",
                        "raw-network override: network isolation NOT claimed (canary connections seen: %" PRId64 ")",
                        (tcp_hits > 0 ? tcp_hits : 0) + (unix_hits > 0 ? unix_hits : 0));
        }
        judge_look_problems(&v, in);
        json_object *host_ns = kb_json_get(in->host, "ns");
        int64_t host_net = int_or(host_ns, "net", -1);
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s), *net = kernel_net(snap);
                if (!net) {
                        verdict_problem(&v, "the host could not read the kernel's network tables (%s)",
                                        str_or(snap, "label", "?"));
                        continue;
                }
                json_object *ifs = kb_json_get(net, "interfaces");
                if (!ifs)
                        verdict_problem(&v, "the host could not read the sandbox's interfaces");
                for (size_t i = 0; i < arr_len(ifs); i++)
                        if (strcmp(json_object_get_string(at(ifs, i)), "lo") != 0)
                                verdict_problem(&v, "the sandbox has a network interface '%s' besides lo",
                                                json_object_get_string(at(ifs, i)));
                static const char *const route_keys[] = {"routes_v4", "routes_v6"};
                for (size_t k = 0; k < KB_ELEMENTSOF(route_keys); k++) {
                        json_object *routes = kb_json_get(net, route_keys[k]);
                        if (!routes)
                                verdict_problem(&v, "the host could not read the sandbox's %s", route_keys[k]);
                        for (size_t i = 0; i < arr_len(routes); i++)
                                if (strcmp(json_object_get_string(at(routes, i)), "lo") != 0)
                                        verdict_problem(&v, "the sandbox has a route through '%s'",
                                                        json_object_get_string(at(routes, i)));
                }
                json_object *unix_list = kb_json_get(net, "unix"),
                            *names = kb_json_get(in->expect, "abstract_canaries");
                if (!unix_list)
                        verdict_problem(&v, "the host could not read the sandbox's unix sockets");
                for (size_t i = 0; i < arr_len(unix_list); i++) {
                        const char *path = kb_json_str(at(unix_list, i), "path");
                        if (path && path[0] == '@' && str_in(names, path + 1))
                                verdict_problem(
                                        &v,
                                        "the host's abstract canary socket %s is in the sandbox's network namespace",
                                        path);
                }
                /* A socket of the sandbox's network held outside: made there by a process that entered
                 * the namespace and left, a listener the kernel can reach and a way out. */
                json_object *channels = kb_json_get(snap, "outside_channels");
                if (!channels)
                        verdict_problem(&v, "the host did not look for the sandbox's sockets outside it (%s)",
                                        str_or(snap, "label", "?"));
                for (size_t i = 0; i < arr_len(channels); i++) {
                        json_object *c = at(channels, i);
                        if (!kb_json_true(c, "netns"))
                                continue;
                        verdict_problem(&v,
                                        "%s, a socket of the sandbox's network namespace, is held by pid %" PRId64
                                        " (%s, its fd %" PRId64 "), outside the sandbox (%s)",
                                        str_or(c, "target", "?"), int_or(c, "pid", -1), str_or(c, "name", "?"),
                                        int_or(c, "fd", -1), str_or(snap, "label", "?"));
                }
        }
        int64_t kernel_netns = -1;
        json_object *kproc = NULL, *procs = kb_json_get(at(in->snapshots, 0), "processes");
        for (size_t i = 0; i < arr_len(procs); i++)
                if (int_or(at(procs, i), "pid", -1) == int_or(in->expect, "kernel_pid", -2))
                        kproc = at(procs, i);
        kernel_netns = int_or(kb_json_get(kproc, "ns"), "net", -1);
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
        size_t tested = 0;
        static const char *const conn_keys[] = {"tcp", "abstract"};
        for (size_t k = 0; k < KB_ELEMENTSOF(conn_keys); k++) {
                json_object *arr = kb_json_get(cell, conn_keys[k]);
                for (size_t i = 0; i < arr_len(arr); i++) {
                        json_object *a = at(arr, i);
                        if (k == 1 && kb_json_get(a, "tested") && !kb_json_true(a, "tested"))
                                continue;
                        tested++;
                        if (kb_json_true(a, "connected"))
                                verdict_problem(&v, "the cell connected to the host's %s canary",
                                                k == 0 ? "loopback TCP" : "abstract unix socket");
                }
        }
        if (in->probe && tested == 0)
                verdict_problem(&v, "the cell tested no canary connection");
        if (arr_len(kb_json_get(cell, "unix_visible")) > 0)
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

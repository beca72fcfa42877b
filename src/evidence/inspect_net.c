/* inspect_net.c: the network tables (sockets, interfaces, routes) of each network namespace. */
#include <stdio.h>
#include <string.h>
#include "evidence/inspect-internal.h"
#include "base/cleanup.h"
#include "base/procfs.h"

/* The socket tables with an inode column: a socket of the namespace is in one of these or unix. */
static const char *const net_tables[] = {"tcp",  "tcp6", "udp",   "udp6",    "udplite", "udplite6", "raw",
                                         "raw6", "icmp", "icmp6", "netlink", "packet",  NULL};

/* Whether the namespace pid is in has no socket of proto ("TCP" in file "sockstat", "TCP6" in
 * "sockstat6") in its hash tables, as the kernel counts them for that namespace: then its net
 * table (tcp, tcp6) lists no socket with an inode, and is not read, since reading it walks every
 * bucket of the host's whole established hash (about 10 ms each, with 262144 buckets), however
 * few sockets the namespace has. Any doubt (unread, malformed): false, and the table is read. */
static bool none_in_use(const kb_inspect_target *t, pid_t pid, const char *file, const char *proto) {
        _cleanup_free_ char *text = NULL;
        long inuse = -1;
        return kb_inspect_read_proc(t->proc_root, pid, file, KB_PROCFS_NET_MAX, &text, NULL) >= 0 &&
               kb_procfs_sockstat_inuse(text, proto, &inuse) == 0 && inuse == 0;
}

/* The network tables of the namespace pid is in; its unix table is diag_unix (taken) when given,
 * else /proc/<pid>/net/unix. */
static int net_facts(const kb_inspect_target *t, pid_t pid, json_object *diag_unix, json_object *errors,
                     json_object **ret) {
        _cleanup_json_ json_object *net = json_object_new_object(), *inodes = json_object_new_array();
        if (!net || !inodes) {
                json_object_put(diag_unix);
                return -ENOMEM;
        }
        int r = 0;
        _cleanup_free_ char *unix_text = NULL;
        json_object *unix_list = diag_unix;
        if (!unix_list) {
                r = kb_inspect_read_proc(t->proc_root, pid, "net/unix", KB_PROCFS_NET_MAX, &unix_text, NULL);
                if (r >= 0)
                        r = kb_procfs_unix_parse(unix_text, &unix_list);
        }
        if (r == -ENOMEM ||
            (r < 0 ? kb_inspect_note(errors, WHAT_NET, "unix", r) : kb_fact_set_arr(net, FACT_NET_UNIX, unix_list)) < 0)
                return -ENOMEM;
        bool no_tcp = none_in_use(t, pid, "net/sockstat", "TCP"),
             no_tcp6 = none_in_use(t, pid, "net/sockstat6", "TCP6");
        for (const char *const *table = net_tables; *table; table++) {
                char name[32];
                _cleanup_free_ char *text = NULL;
                snprintf(name, sizeof name, "net/%s", *table);
                bool is_tcp = strcmp(*table, "tcp") == 0;
                if ((is_tcp && no_tcp) || (strcmp(*table, "tcp6") == 0 && no_tcp6)) {
                        if (is_tcp && kb_fact_set_arr(net, FACT_NET_TCP, json_object_new_array()) < 0)
                                return -ENOMEM;
                        continue; /* none to list (none_in_use) */
                }
                r = kb_inspect_read_proc(t->proc_root, pid, name, KB_PROCFS_NET_MAX, &text, NULL);
                if (r == -ESRCH && kb_inspect_process_exists(t->proc_root, pid))
                        continue; /* a table this kernel does not have (no IPv6, no udplite...) */
                if (r >= 0)
                        r = kb_procfs_net_inodes(text, inodes);
                /* The IPv4 TCP sockets whole (addresses, state): which of kbound's relay's connections
                 * ends at which socket of the kernel's (judge_identity). */
                json_object *tcp = NULL;
                if (r >= 0 && strcmp(*table, "tcp") == 0) {
                        r = kb_procfs_tcp_parse(text, &tcp);
                        if (r >= 0 && kb_fact_set_arr(net, FACT_NET_TCP, tcp) < 0)
                                return -ENOMEM;
                }
                if (r == -ENOMEM || (r < 0 && kb_inspect_note(errors, WHAT_NET, *table, r) < 0))
                        return -ENOMEM;
        }
        if (kb_fact_set_arr(net, FACT_NET_SOCKET_INODES, TAKE_PTR(inodes)) < 0)
                return -ENOMEM;
        const struct {
                const char *table; /* net/<table> */
                kb_fact_arr fact;
                int kind; /* 0 dev, 1 route, 2 ipv6_route */
        } lists[] = {{"dev", FACT_NET_INTERFACES, 0},
                     {"route", FACT_NET_ROUTES_V4, 1},
                     {"ipv6_route", FACT_NET_ROUTES_V6, 2}};
        for (size_t i = 0; i < KB_ELEMENTSOF(lists); i++) {
                char name[32];
                _cleanup_free_ char *text = NULL;
                json_object *v = NULL;
                snprintf(name, sizeof name, "net/%s", lists[i].table);
                r = kb_inspect_read_proc(t->proc_root, pid, name, KB_PROCFS_NET_MAX, &text, NULL);
                if (r == -ESRCH && i == 2 && kb_inspect_process_exists(t->proc_root, pid)) {
                        /* no IPv6 in this kernel: no IPv6 routes */
                        if (kb_fact_set_arr(net, lists[i].fact, json_object_new_array()) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (r >= 0)
                        r = lists[i].kind == 0 ? kb_procfs_net_dev_parse(text, &v)
                                               : kb_procfs_routes_parse(text, lists[i].kind == 2, &v);
                if (r == -ENOMEM || (r < 0 ? kb_inspect_note(errors, WHAT_NET, lists[i].table, r)
                                           : kb_fact_set_arr(net, lists[i].fact, v)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(net);
        return 0;
}

int kb_inspect_net_namespace(const kb_inspect_target *t, json_object *snap, pid_t pid, int64_t netns, sockets *socks,
                             uint64_t own_netns, json_object **ret_kernel_net) {
        json_object *errors = kb_fact_arr_of(snap, FACT_LOOK_ERRORS), *net = kb_fact_map_of(snap, FACT_LOOK_NET);
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long) netns);
        if (!json_object_object_get_ex(net, key, NULL)) {
                json_object *facts = NULL;
                /* kbound's own namespace (the raw-network override) and the sandbox's own are
                 * listed from sock_diag, which no socket's name can break and which says each
                 * socket's peer and queue; a namespace kbound does not enter, as text. */
                json_object *diag_unix = NULL;
                if ((uint64_t) netns == own_netns) {
                        if (socks->list && !(diag_unix = kb_inspect_unix_table(socks->list, socks->n)))
                                return -ENOMEM;
                } else if (kb_inspect_peers_namespace(socks, pid, netns, errors, &diag_unix) < 0)
                        return -ENOMEM;
                int r = net_facts(t, pid, diag_unix, errors, &facts);
                if (r == -ESRCH)
                        return 0;
                if (r < 0 || kb_inspect_map_add(net, key, facts) < 0)
                        return -ENOMEM;
        }
        if (pid == t->kernel_pid) {
                json_object_object_get_ex(net, key, ret_kernel_net);
                if (kb_fact_set_str(snap, FACT_LOOK_KERNEL_NET, key) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* inspect.c: the host's two looks at a sandbox (pre-exec, snapshot) as the list of their steps. */
#include "kbound/inspect.h"
#include "base/cleanup.h"
#include "evidence/inspect-internal.h"

int kb_inspect_pre_exec(const kb_inspect_target *t, json_object **ret) {
        if (!t || !t->proc_root || !ret)
                return -EINVAL;
        _cleanup_json_ json_object *snap = json_object_new_object();
        _cleanup_free_ proc_entry *procs = NULL;
        size_t n = 0;
        bool kernel_seen = false;
        json_object *errors = NULL, *launcher = NULL;
        if (!snap || kb_inspect_look_at_processes(t, "pre-exec", snap, &procs, &n, &kernel_seen) < 0)
                return -ENOMEM;
        errors = kb_fact_arr_of(snap, FACT_LOOK_ERRORS);
        json_object *processes = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
        /* The init's call first: it shows whether it was still waiting while everything was read. */
        /* init's mount table, which every reference of the sandbox's processes is placed in. */
        if (kb_inspect_init_facts(t, snap, errors) < 0 || kb_inspect_pre_exec_mounts(t, snap, errors) < 0 ||
            kb_inspect_ns_holder_facts(t, procs, n, processes, snap, errors) < 0 ||
            kb_inspect_launcher_facts(t, procs, n, processes, errors, &launcher) < 0 ||
            kb_fact_set_obj(snap, FACT_LOOK_LAUNCHER, launcher) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(snap);
        return 0;
}

/* What a look's sockets hold, the tracing of the sandbox's included. */
static void look_sockets_done(sockets *s) {
        kb_inspect_peers_free(&s->peers);
        kb_inspect_sockets_done(s);
}

int kb_inspect_snapshot(const kb_inspect_target *t, const char *label, json_object **ret) {
        if (!t || !t->proc_root || !ret)
                return -EINVAL;
        _cleanup_json_ json_object *snap = json_object_new_object(), *net = json_object_new_object(),
                                   *mount_tables = json_object_new_object(), *reach_list = json_object_new_array();
        json_object *reach = reach_list; /* the look's, once added */
        if (!snap || !net || !mount_tables || !reach_list || kb_fact_set_map(snap, FACT_LOOK_NET, TAKE_PTR(net)) < 0 ||
            kb_fact_set_map(snap, FACT_LOOK_MOUNT_TABLES, TAKE_PTR(mount_tables)) < 0 ||
            kb_fact_set_arr(snap, FACT_LOOK_REACH, TAKE_PTR(reach_list)) < 0)
                return -ENOMEM;
        _cleanup_free_ proc_entry *procs = NULL;
        size_t n = 0;
        bool kernel_seen = false;
        json_object *processes = NULL, *errors = NULL;
        if (kb_inspect_look_at_processes(t, label, snap, &procs, &n, &kernel_seen) < 0)
                return -ENOMEM;
        processes = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
        errors = kb_fact_arr_of(snap, FACT_LOOK_ERRORS);
        int r;
        json_object *kernel_net = NULL;
        /* kbound's network namespace's unix sockets (sock_diag), and who holds which. */
        _cleanup_(look_sockets_done) sockets socks = {.t = t, .procs = procs, .n_procs = n, .processes = processes};
        uint64_t own_netns = 0;
        if (kb_inspect_sockets_init(&socks, errors) < 0)
                return -ENOMEM;
        (void) kb_inspect_ns_inode(t->proc_root, getpid(), "net", &own_netns);

        /* Every mount table among the sandbox's processes: the kernel's ("mounts") and any other
         * mount namespace's ("mount_tables", by namespace inode), each looked at through the root
         * of a process of that namespace; and every network namespace. */
        sandbox_table *tables = calloc(KB_INSPECT_MOUNT_TABLES_MAX, sizeof *tables);
        if (!tables)
                return -ENOMEM;
        size_t n_tables = 0;
        r = kb_inspect_snapshot_tables(t, processes, snap, tables, &n_tables, &kernel_net, &socks, own_netns);
        json_object *launcher = NULL;
        /* The sockets the sandbox holds in kbound's network (the sandbox's own were offered as its
         * namespaces were listed; the host's follow with them, below). */
        if (r >= 0 && kb_inspect_peers_offer(&socks, socks.list, socks.n, KB_PEERS_FOUND_KBOUND, 0) < 0)
                r = -ENOMEM;
        if (r >= 0 &&
            (kb_inspect_kbound_side_sockets(&socks, snap) < 0 || kb_inspect_connection_facts(&socks, snap) < 0 ||
             kb_inspect_launcher_facts(t, procs, n, processes, errors, &launcher) < 0 ||
             kb_fact_set_obj(snap, FACT_LOOK_LAUNCHER, launcher) < 0))
                r = -ENOMEM;

        /* Who outside is in the sandbox's namespaces, or holds them, its pipes or its network's
         * sockets (after the network tables: every socket of them is looked for). */
        if (r >= 0 && kb_inspect_ns_holder_facts(t, procs, n, processes, snap, errors) < 0)
                r = -ENOMEM;

        if (r >= 0)
                r = kb_inspect_resource_totals(t, processes, snap);
        /* Which of those filesystems a namespace outside the sandbox holds too. */
        if (r >= 0)
                r = kb_inspect_outside_mounts(t, procs, n, tables, n_tables, snap);

        /* What of the host the mounts expose: the canaries, and every bound socket. */
        if (r >= 0)
                r = kb_inspect_canary_reach(t, tables, n_tables, reach);
        if (r >= 0)
                r = kb_inspect_host_sockets(&socks, snap, tables, n_tables, reach);
        /* Every socket the sandbox holds, traced to its other ends through every list read. */
        if (r >= 0)
                r = kb_inspect_peers_facts(&socks, snap);
        kb_inspect_tables_close(tables, n_tables);
        if (r < 0)
                return -ENOMEM;

        r = 0;
        if (!kernel_seen) {
                if (kb_inspect_note(errors, WHAT_KERNEL_MISSING, NULL, ESRCH) < 0)
                        return -ENOMEM;
                r = -ESRCH;
        }
        *ret = TAKE_PTR(snap);
        return r;
}

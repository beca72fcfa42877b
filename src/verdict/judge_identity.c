/* judge_identity.c: identity.pid2, the pinned PID 2 alone holds the other end of kbound's connections. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "verdict/judge-internal.h"

/* ---- identity.pid2 ---- */

/* "pid H (PID n in the sandbox), name" or "host pid H (name), outside the sandbox" for a holder
 * ({"pid", "name", "side"}) of snap. */
const char *judge_holder_words(json_object *snap, json_object *h, char *buf, size_t size) {
        int64_t pid = kb_fact_int_or(h, FACT_HOLDER_PID, -1), inner = -1;
        const char *side = kb_fact_str_or(h, FACT_HOLDER_SIDE, "?"), *name = kb_fact_str_or(h, FACT_HOLDER_NAME, "?");
        json_object *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
        for (size_t p = 0; p < arr_len(procs); p++)
                if (kb_fact_has(h, FACT_HOLDER_PID) && judge_is_pid(at(procs, p), pid))
                        inner = judge_inner_pid(at(procs, p));
        if (strcmp(side, "sandbox") == 0)
                snprintf(buf, size, "pid %" PRId64 " (PID %" PRId64 " in the sandbox), %s", pid, inner, name);
        else if (strcmp(side, "kbound") == 0)
                snprintf(buf, size, "kbound itself (pid %" PRId64 ")", pid);
        else
                snprintf(buf, size, "host pid %" PRId64 " (%s), outside the sandbox%s", pid, name,
                         strcmp(side, "launch") == 0 ? " (started by kbound's launcher)" : "");
        return buf;
}

/* Whether holder h is the pinned kernel (kernel_pid, -1: not known, none is): that pid, of the
 * sandbox's side. */
static bool holder_is_kernel(json_object *h, int64_t kernel_pid) {
        int64_t pid;
        const char *side = kb_fact_str_of(h, FACT_HOLDER_SIDE);
        return kernel_pid > 0 && kb_fact_int_of(h, FACT_HOLDER_PID, &pid) && pid == kernel_pid && side &&
               strcmp(side, "sandbox") == 0;
}

/* ---- kbound's relay, for a kernel that speaks only TCP (docs/transports.md) ---- */

/* The sandbox processes of snap that hold socket:[inode]: how many, and whether the pinned kernel
 * is the only one. */
static size_t socket_holders(json_object *snap, int64_t inode, int64_t kernel_pid, bool *ret_only_kernel) {
        char target[40];
        snprintf(target, sizeof target, "socket:[%" PRId64 "]", inode);
        json_object *procs = kb_fact_arr_of(snap, FACT_LOOK_PROCESSES);
        size_t n = 0;
        bool only_kernel = true;
        for (size_t i = 0; i < arr_len(procs); i++) {
                json_object *fds = kb_fact_arr_of(at(procs, i), FACT_PROCESS_FDS);
                bool holds = false;
                for (size_t f = 0; f < arr_len(fds) && !holds; f++) {
                        const char *t = kb_fact_str_of(at(fds, f), FACT_FD_TARGET);
                        holds = t && strcmp(t, target) == 0;
                }
                if (holds) {
                        n++;
                        only_kernel &= judge_is_pid(at(procs, i), kernel_pid);
                }
        }
        *ret_only_kernel = only_kernel;
        return n;
}

/* The port of "127.0.0.1:PORT", or -1 for any other address. */
static int64_t loopback_port(const char *address) {
        if (!address || strncmp(address, "127.0.0.1:", 10) != 0)
                return -1;
        char *end;
        long port = strtol(address + 10, &end, 10);
        return *end == '\0' && port > 0 && port < 65536 ? port : -1;
}

/* Why one socket of the relay (socket:[inode]) is not one of the three it may hold, or NULL: the
 * other end of one of kbound's connections, its listener at one of the kernel's endpoints, or a
 * connection to one of the kernel's ports on the loopback whose other end only the pinned kernel
 * holds (a connection still being made or closing carries nothing). */
static const char *relay_socket_problem(json_object *snap, json_object *net, json_object *relay, int64_t inode,
                                        int64_t kernel_pid, char *buf, size_t size) {
        json_object *conns = kb_fact_arr_of(snap, FACT_LOOK_CONNECTIONS);
        for (size_t c = 0; c < arr_len(conns); c++) {
                int64_t peer;
                if (kb_fact_int_of(at(conns, c), FACT_CONNECTION_PEER, &peer) && peer == inode)
                        return NULL;
        }
        json_object *unix_list = kb_fact_arr_of(net, FACT_NET_UNIX), *ports = kb_fact_arr_of(relay, FACT_RELAY_PORTS);
        const char *prefix = kb_fact_str_or(relay, FACT_RELAY_PREFIX, "");
        size_t prefix_len = strlen(prefix);
        for (size_t u = 0; u < arr_len(unix_list); u++) {
                json_object *e = at(unix_list, u);
                int64_t mine;
                const char *path = kb_fact_str_of(e, FACT_UNIX_ENTRY_PATH);
                if (!kb_fact_int_of(e, FACT_UNIX_ENTRY_INODE, &mine) || mine != inode)
                        continue;
                /* its listener at "<prefix>-<port>", one of the kernel's ipc names */
                char *end;
                if (path && kb_fact_bool_of(e, FACT_UNIX_ENTRY_LISTENING) && prefix_len &&
                    strncmp(path, prefix, prefix_len) == 0 && path[prefix_len] == '-' &&
                    int_in(ports, strtol(path + prefix_len + 1, &end, 10)) && *end == '\0')
                        return NULL;
        }
        json_object *tcp = kb_fact_arr_of(net, FACT_NET_TCP);
        for (size_t t = 0; t < arr_len(tcp); t++) {
                json_object *e = at(tcp, t);
                int64_t mine, state = kb_fact_int_or(e, FACT_TCP_ENTRY_STATE, -1);
                if (!kb_fact_int_of(e, FACT_TCP_ENTRY_INODE, &mine) || mine != inode)
                        continue;
                const char *local = kb_fact_str_of(e, FACT_TCP_ENTRY_LOCAL),
                           *remote = kb_fact_str_of(e, FACT_TCP_ENTRY_REMOTE);
                int64_t port = loopback_port(remote);
                if (loopback_port(local) < 0 || !int_in(ports, port)) {
                        snprintf(buf, size,
                                 "it holds a TCP socket from %s to %s, which is not one of the kernel's ports",
                                 local ? local : "?", remote ? remote : "?");
                        return buf;
                }
                if (state != 1) /* TCP_ESTABLISHED */
                        return NULL;
                for (size_t o = 0; o < arr_len(tcp); o++) {
                        json_object *other = at(tcp, o);
                        const char *ol = kb_fact_str_of(other, FACT_TCP_ENTRY_LOCAL),
                                   * or = kb_fact_str_of(other, FACT_TCP_ENTRY_REMOTE);
                        int64_t theirs;
                        if (!ol || ! or || strcmp(ol, remote) != 0 || strcmp(or, local) != 0 ||
                            !kb_fact_int_of(other, FACT_TCP_ENTRY_INODE, &theirs))
                                continue;
                        bool only_kernel;
                        size_t holders = socket_holders(snap, theirs, kernel_pid, &only_kernel);
                        if (holders > 0 && only_kernel)
                                return NULL;
                        snprintf(buf, size,
                                 "its connection to the kernel's port %" PRId64 " is answered by socket:[%" PRId64
                                 "], held by %s",
                                 port, theirs,
                                 holders ? "a process other than the pinned PID 2" : "no process the host found");
                        return buf;
                }
                snprintf(buf, size,
                         "its connection to the kernel's port %" PRId64 " has no other end in the sandbox's TCP table",
                         port);
                return buf;
        }
        snprintf(buf, size,
                 "it holds socket:[%" PRId64
                 "], which is neither the other end of one of kbound's connections, nor its "
                 "listener at one of the kernel's endpoints, nor a TCP connection of its own to the kernel's ports",
                 inode);
        return buf;
}

/* Why holder h, which answers one of kbound's connections, is not kbound's relay passing it on to
 * the pinned kernel alone, or NULL when it is: a sandbox process running the relay's program (the
 * team's kbound-syscall-probe, by device and inode), the pinned kernel's child, and every socket it
 * holds one of those relay_socket_problem allows. Bytes reach the relay only from kbound and leave
 * it only for sockets the kernel alone holds, however it pairs them. */
static const char *relay_problem(const kb_judge_input *in, json_object *snap, json_object *h, int64_t kernel_pid,
                                 char *buf, size_t size) {
        json_object *relay = kb_fact_obj_of(in->expect, FACT_EXPECT_RELAY);
        int64_t pid = kb_fact_int_or(h, FACT_HOLDER_PID, -1);
        const char *side = kb_fact_str_of(h, FACT_HOLDER_SIDE);
        json_object *p = judge_find_pid(snap, pid);
        if (!relay)
                return "no relay was started for this kernel";
        if (!p || !side || strcmp(side, "sandbox") != 0)
                return "it is not a sandbox process the host read";
        json_object *exe = kb_fact_obj_of(p, FACT_PROCESS_EXE), *program = kb_fact_obj_of(relay, FACT_RELAY_PROGRAM);
        if (!judge_same_file(judge_file_id(exe), judge_file_id(program)))
                return "it does not run kbound's relay (the team's kbound-syscall-probe)";
        int64_t ppid;
        if (!kb_fact_int_of(p, FACT_PROCESS_PPID, &ppid) || ppid != kernel_pid)
                return "it is not the pinned kernel's child";
        int64_t netns = judge_ns_inode(kb_fact_map_of(p, FACT_PROCESS_NS), "net");
        char key[32];
        snprintf(key, sizeof key, "%" PRId64, netns);
        json_object *net = netns > 0 ? judge_map_at(kb_fact_map_of(snap, FACT_LOOK_NET), key) : NULL;
        if (!kb_fact_arr_of(net, FACT_NET_TCP))
                return "the host could not read the TCP table of its network namespace";
        json_object *fds = kb_fact_arr_of(p, FACT_PROCESS_FDS);
        for (size_t f = 0; f < arr_len(fds); f++) {
                const char *t = kb_fact_str_of(at(fds, f), FACT_FD_TARGET);
                long long inode;
                if (!t || sscanf(t, "socket:[%lld]", &inode) != 1)
                        continue; /* its stdio: boundary.descriptors judges every descriptor */
                const char *why = relay_socket_problem(snap, net, relay, inode, kernel_pid, buf, size);
                if (why)
                        return why;
        }
        return NULL;
}

/* Whether holder h is kbound's relay carrying the connection to the pinned kernel alone (a run with
 * a relay only); if not, why into why (when there is a relay to speak of). */
static bool holder_is_relay(const kb_judge_input *in, json_object *snap, json_object *h, int64_t kernel_pid, char *why,
                            size_t size) {
        if (!kb_fact_obj_of(in->expect, FACT_EXPECT_RELAY))
                return false;
        char buf[400];
        const char *problem = relay_problem(in, snap, h, kernel_pid, buf, sizeof buf);
        if (problem)
                snprintf(why, size, "%s", problem);
        return problem == NULL;
}

json_object *kb_judge_identity(const kb_judge_input *in) {
        verdict v;
        verdict_begin(&v, in);
        /* The cell's word first: a kernel that broke its own cell is named for it before anything
         * the host could not see because of it (a look that never came). */
        json_object *cell = kb_fact_obj_of(in->expect, FACT_EXPECT_IDENTITY);
        const char *cell_error = kb_fact_str_of(in->expect, FACT_EXPECT_IDENTITY_ERROR);
        int64_t cell_pid = kb_fact_int_or(cell, FACT_IDENTITY_PID, -1);
        json_object *nspid = kb_fact_arr_of(cell, FACT_IDENTITY_NSPID);
        json_object *last = arr_len(nspid) ? at(nspid, arr_len(nspid) - 1) : NULL;
        int64_t cell_inner = last && json_object_is_type(last, json_type_int) ? json_object_get_int64(last) : -1;
        /* PID 2 in kbound's sandbox; an audited kernel's own pid as the host found it (-1: not known). */
        json_object *audit = kb_fact_obj_of(in->expect, FACT_EXPECT_AUDIT);
        int64_t expected = audit ? kb_fact_int_or(audit, FACT_AUDIT_KERNEL_NSPID, -1) : 2;
        if (in->cells_absent)
                ; /* the host's evidence alone */
        else if (!cell || cell_error)
                verdict_problem(&v, "the identity cell gave no answer: %s", cell_error ? cell_error : "no result");
        else if (cell_pid != expected || cell_inner != expected)
                verdict_problem(
                        &v, "the kernel reports pid %" PRId64 " (NSpid ends in %" PRId64 "), expected %" PRId64 "%s",
                        cell_pid, cell_inner, expected,
                        cell_pid > expected && cell_pid == cell_inner
                                ? ": a cell that runs in a child of the kernel (a shell, octave-cli) reports "
                                  "the kernel process, its parent ($PPID, getppid()), never its own "
                                  "(docs/probes-cells.md, \"What a pack writer meets\")"
                                : "");
        int64_t kernel_pid = judge_kernel_pid(&v, in);
        json_object *endpoints = kb_fact_arr_of(at(in->snapshots, 0), FACT_LOOK_ENDPOINTS);
        json_object *judged = json_object_new_object(), *connections = json_object_new_array();
        char who[256];
        size_t n_relayed = 0; /* connections answered through kbound's relay */
        if (!judged || !connections)
                v.oom = true;
        if (arr_len(endpoints) == 0)
                verdict_problem(&v, "the host was given no kernel endpoint to look for");
        for (size_t i = 0; i < arr_len(endpoints); i++) {
                json_object *e = at(endpoints, i);
                const char *path = kb_fact_str_or(e, FACT_ENDPOINT_PATH, "?"),
                           *error = kb_fact_str_of(e, FACT_ENDPOINT_ERROR);
                size_t found = 0;
                if (error)
                        verdict_problem(&v, "the host could not find the socket file of the kernel's endpoint %s: %s",
                                        path, error);
                for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                        json_object *conns = kb_fact_arr_of(at(in->snapshots, s), FACT_LOOK_CONNECTIONS);
                        for (size_t c = 0; c < arr_len(conns); c++) {
                                const char *to = kb_fact_str_of(at(conns, c), FACT_CONNECTION_ENDPOINT);
                                found += to && strcmp(to, path) == 0;
                        }
                }
                if (found == 0)
                        verdict_problem(&v, "the host found no connection of kbound's to the kernel's endpoint %s",
                                        path);
        }
        /* Every connection kbound talks over, in every look: its other end, found by inode, must be
         * held by the pinned PID 2 and no other process. */
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *snap = at(in->snapshots, s), *conns = kb_fact_arr_of(snap, FACT_LOOK_CONNECTIONS);
                for (size_t c = 0; c < arr_len(conns); c++) {
                        json_object *conn = at(conns, c), *holders = kb_fact_arr_of(conn, FACT_CONNECTION_HOLDERS);
                        const char *ep = kb_fact_str_or(conn, FACT_CONNECTION_ENDPOINT, "?");
                        int64_t mine = kb_fact_int_or(conn, FACT_CONNECTION_KBOUND_SOCKET, -1),
                                peer = kb_fact_int_or(conn, FACT_CONNECTION_PEER, -1);
                        char key[512];
                        /* Judged once per look that saw it held differently; through a relay, in every
                         * look (what the relay holds may change while the holders do not). */
                        snprintf(key, sizeof key, "%" PRId64 "-%" PRId64 " %s", mine, peer,
                                 holders ? json_object_to_json_string_ext(holders, JSON_C_TO_STRING_PLAIN) : "none");
                        bool seen = !judged || json_object_object_get_ex(judged, key, NULL);
                        if (seen && !kb_fact_obj_of(in->expect, FACT_EXPECT_RELAY))
                                continue;
                        if (!seen) {
                                json_object_object_add(judged, key, NULL);
                                if (connections)
                                        json_object_array_add(connections, json_object_get(conn));
                        }
                        bool kernel = false, relayed = false;
                        char relay_why[400] = "";
                        for (size_t h = 0; h < arr_len(holders); h++) {
                                json_object *holder = at(holders, h);
                                if (holder_is_kernel(holder, kernel_pid))
                                        kernel = true;
                                else if (holder_is_relay(in, snap, holder, kernel_pid, relay_why, sizeof relay_why))
                                        kernel = relayed = true;
                        }
                        n_relayed += relayed && !seen;
                        if (arr_len(holders) == 0)
                                verdict_problem(
                                        &v,
                                        "PID 2 is not the kernel: kbound's connection to %s (socket:[%" PRId64 "]) is "
                                        "answered by socket:[%" PRId64 "], which no process the host found holds",
                                        ep, mine, peer);
                        else if (!kernel)
                                verdict_problem(
                                        &v,
                                        "PID 2 is not the kernel: kbound's connection to %s is answered by %s, not "
                                        "by the pinned PID 2 (host pid %" PRId64 ")%s%s%s",
                                        ep, judge_holder_words(snap, at(holders, 0), who, sizeof who), kernel_pid,
                                        relay_why[0] ? " nor by kbound's relay to it (" : "", relay_why,
                                        relay_why[0] ? ")" : "");
                        for (size_t h = 0; h < arr_len(holders); h++) {
                                json_object *holder = at(holders, h);
                                char why[400];
                                if (holder_is_kernel(holder, kernel_pid) ||
                                    holder_is_relay(in, snap, holder, kernel_pid, why, sizeof why) ||
                                    (!kernel && h == 0))
                                        continue;
                                verdict_problem(
                                        &v, "kbound's connection to %s is held by %s, not only by the pinned kernel",
                                        ep, judge_holder_words(snap, holder, who, sizeof who));
                        }
                }
        }
        json_object_put(judged);
        size_t n_conn = arr_len(connections);
        verdict_evidence_fact(&v, EVIDENCE_PID2_ENDPOINTS, json_object_get(endpoints));
        verdict_evidence(&v, "connections", connections);
        verdict_evidence_fact(&v, EVIDENCE_PID2_CELL, json_object_get(cell));
        verdict_evidence(&v, "kernel_host_pid", json_object_new_int64(kernel_pid));
        char pass[768], through[300] = "";
        if (n_relayed)
                snprintf(through, sizeof through,
                         " (%zu of them through kbound's relay, a child of PID 2 running the team's "
                         "kbound-syscall-probe, every socket it holds one of kbound's connections, its listeners, or a "
                         "TCP connection whose other end PID 2 alone holds)",
                         n_relayed);
        snprintf(pass, sizeof pass,
                 "the other end of each of kbound's %zu connections to the kernel (found by inode, not by path) is "
                 "held by "
                 "the pinned %s (host pid %" PRId64 ") alone%s%s",
                 n_conn, audit ? "kernel" : "PID 2", kernel_pid, through,
                 in->cells_absent ? ""
                 : audit          ? "; the kernel reports the pid the host found it has in its pid namespace"
                                  : "; the kernel reports pid 2");
        return verdict_end(&v, KB_CHECK_PID2, pass);
}

/* judge_identity.c: identity.pid2, the pinned PID 2 alone holds the other end of kbound's connections. */
#include <inttypes.h>
#include <stdio.h>
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
        if (in->cells_absent)
                ; /* the host's evidence alone */
        else if (!cell || cell_error)
                verdict_problem(&v, "the identity cell gave no answer: %s", cell_error ? cell_error : "no result");
        else if (cell_pid != 2 || cell_inner != 2)
                verdict_problem(&v, "the kernel reports pid %" PRId64 " (NSpid ends in %" PRId64 "), expected 2%s",
                                cell_pid, cell_inner,
                                cell_pid > 2 && cell_pid == cell_inner
                                        ? ": a cell that runs in a child of the kernel (a shell, octave-cli) reports "
                                          "the kernel process, its parent ($PPID, getppid()), never its own "
                                          "(docs/probes-cells.md, \"What a pack writer meets\")"
                                        : "");
        int64_t kernel_pid = judge_kernel_pid(&v, in);
        json_object *endpoints = kb_fact_arr_of(at(in->snapshots, 0), FACT_LOOK_ENDPOINTS);
        json_object *judged = json_object_new_object(), *connections = json_object_new_array();
        char who[256];
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
                        /* Judged once per look that saw it held differently. */
                        snprintf(key, sizeof key, "%" PRId64 "-%" PRId64 " %s", mine, peer,
                                 holders ? json_object_to_json_string_ext(holders, JSON_C_TO_STRING_PLAIN) : "none");
                        if (!judged || json_object_object_get_ex(judged, key, NULL))
                                continue;
                        json_object_object_add(judged, key, NULL);
                        if (connections)
                                json_object_array_add(connections, json_object_get(conn));
                        bool kernel = false;
                        for (size_t h = 0; h < arr_len(holders); h++)
                                kernel |= holder_is_kernel(at(holders, h), kernel_pid);
                        if (arr_len(holders) == 0)
                                verdict_problem(
                                        &v,
                                        "PID 2 is not the kernel: kbound's connection to %s (socket:[%" PRId64 "]) is "
                                        "answered by socket:[%" PRId64 "], which no process the host found holds",
                                        ep, mine, peer);
                        else if (!kernel)
                                verdict_problem(
                                        &v,
                                        "PID 2 is not the kernel: kbound's connection to %s is answered by %s, not by "
                                        "the "
                                        "pinned PID 2 (host pid %" PRId64 ")",
                                        ep, judge_holder_words(snap, at(holders, 0), who, sizeof who), kernel_pid);
                        for (size_t h = 0; h < arr_len(holders); h++) {
                                json_object *holder = at(holders, h);
                                if (holder_is_kernel(holder, kernel_pid) || (!kernel && h == 0))
                                        continue;
                                verdict_problem(
                                        &v, "kbound's connection to %s is held by %s, not only by the pinned kernel",
                                        ep, judge_holder_words(snap, holder, who, sizeof who));
                        }
                }
        }
        json_object_put(judged);
        size_t n_conn = arr_len(connections);
        verdict_evidence(&v, "endpoints", json_object_get(endpoints));
        verdict_evidence(&v, "connections", connections);
        verdict_evidence(&v, "cell", json_object_get(cell));
        verdict_evidence(&v, "kernel_host_pid", json_object_new_int64(kernel_pid));
        char pass[512];
        snprintf(pass, sizeof pass,
                 "the other end of each of kbound's %zu connections to the kernel (found by inode, not by path) is "
                 "held by "
                 "the pinned PID 2 (host pid %" PRId64 ") alone%s",
                 n_conn, kernel_pid, in->cells_absent ? "" : "; the kernel reports pid 2");
        return verdict_end(&v, KB_CHECK_PID2, pass);
}

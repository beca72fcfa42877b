/* judge_sockets.c: boundary.sockets, no host unix socket reachable through the sandbox's mounts. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "verdict/judge-internal.h"

json_object *kb_judge_sockets(const kb_judge_input *in) {
        verdict v;
        verdict_init(&v);
        judge_look_problems(&v, in);
        char buf[DETAIL_MAX];
        json_object *exposed = json_object_new_array();
        size_t n = judge_reach_problems(&v, in, "socket", KB_CHECK_SOCKETS, exposed);
        verdict_evidence(&v, "exposed", exposed);
        json_object *snap = at(in->snapshots, 0), *not_entered = kb_json_get(snap, "socket_namespaces_not_entered");
        json_object *counts = kb_json_get(snap, "host_sockets");
        int64_t namespaces = int_or(snap, "socket_namespaces", 0),
                skipped = int_or(snap, "socket_namespaces_skipped", 0);
        int64_t checked = int_or(counts, "checked", 0), abstract = int_or(snap, "abstract_sockets", 0);
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *look = at(in->snapshots, s);
                if (judge_fact_error(look, "kbound's unix sockets", buf, sizeof buf))
                        verdict_problem(&v, "the host could not list %s", buf);
                if (arr_len(kb_json_get(look, "mounts")) == 0)
                        verdict_problem(&v, "the host could not read the sandbox's mount table (%s)",
                                        str_or(look, "label", "?"));
                if (!kb_json_get(look, "host_sockets") || !kb_json_get(look, "socket_namespaces_not_entered"))
                        verdict_problem(&v, "the host did not list the host's unix sockets (%s)",
                                        str_or(look, "label", "?"));
                if (int_or(look, "socket_namespaces_skipped", 0) > 0)
                        verdict_problem(&v,
                                        "the host did not list the sockets of %" PRId64
                                        " network namespaces (more than kbound "
                                        "reads in one look)",
                                        int_or(look, "socket_namespaces_skipped", 0));
        }
        if (namespaces == 0)
                verdict_problem(&v, "the host read no network namespace's socket table");
        /* Namespaces kbound could not enter: only paths found on the host were placed; the rest is
         * not claimed, and the namespace is named. */
        char left[512] = "";
        size_t unplaced = 0;
        for (size_t i = 0; i < arr_len(not_entered); i++) {
                json_object *ne = at(not_entered, i);
                unplaced += (size_t) int_or(ne, "unplaced", 0);
                if (i < 3)
                        snprintf(left + strlen(left), sizeof left - strlen(left),
                                 "%snetwork namespace of pid %" PRId64 " (%s%s%s)", i ? ", " : "",
                                 int_or(ne, "pid", -1), str_or(ne, "error", "?"),
                                 kb_json_str(ne, "table_error") ? "; its table: " : "", str_or(ne, "table_error", ""));
                else if (i == 3)
                        snprintf(left + strlen(left), sizeof left - strlen(left), " and %zu more (see evidence)",
                                 arr_len(not_entered) - 3);
        }
        bool raw = kb_json_true(in->expect, "allow_network");
        verdict_evidence(&v, "sockets_checked", json_object_new_int64(checked));
        verdict_evidence(&v, "on_other_filesystems", json_object_new_int64(int_or(counts, "elsewhere", 0)));
        verdict_evidence(&v, "namespaces_read", json_object_new_int64(namespaces));
        verdict_evidence(&v, "namespaces_not_entered", json_object_get(not_entered));
        verdict_evidence(&v, "namespaces_skipped", json_object_new_int64(skipped));
        verdict_evidence(&v, "abstract_sockets", json_object_new_int64(abstract));
        verdict_evidence(&v, "not_placed", json_object_get(kb_json_get(counts, "not_claimed")));
        /* What is not claimed, the raw-network override's first: the detail has a ceiling. */
        char pass[2 * DETAIL_MAX], extra[DETAIL_MAX] = ""; /* pass holds extra and its own words */
        if (raw)
                snprintf(extra, sizeof extra,
                         "; NOT claimed: the %" PRId64
                         " abstract unix sockets of kbound's network namespace, which the "
                         "kernel shares (raw-network override)",
                         abstract);
        if (arr_len(not_entered) > 0)
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                         "; NOT claimed: the sockets of %zu network namespace%s kbound could not enter, checked only "
                         "by the "
                         "paths their tables show%s: %s",
                         arr_len(not_entered), arr_len(not_entered) == 1 ? "" : "s",
                         unplaced ? " (some not found on the host)" : "", left);
        json_object *unplaced_sockets = kb_json_get(counts, "not_claimed"), *first = at(unplaced_sockets, 0);
        if (arr_len(unplaced_sockets) > 0) {
                json_object *holder = at(kb_json_get(first, "held_by"), 0);
                char held[128] = "held by no process the host found";
                if (holder)
                        snprintf(held, sizeof held, "held by pid %" PRId64 " (%s)", int_or(holder, "pid", -1),
                                 str_or(holder, "name", "?"));
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                         "; NOT claimed: %zu socket%s on filesystems the sandbox mounts whose files the host could not "
                         "find "
                         "by their names (removed or moved since bound, a relative name, another user's): first %s, "
                         "socket:[%" PRId64 "], %s",
                         arr_len(unplaced_sockets), arr_len(unplaced_sockets) == 1 ? "" : "s",
                         str_or(first, "path", "?"), int_or(first, "inode", -1), held);
        }
        snprintf(pass, sizeof pass,
                 "none of the host's %" PRId64 " bound pathname unix sockets (any type; %" PRId64
                 " network namespace%s "
                 "listed) is reachable through the sandbox's mounts (%zu on filesystems the sandbox mounts, each "
                 "placed by "
                 "its file's device and inode)%s",
                 checked, namespaces, namespaces == 1 ? "" : "s", n, extra);
        return verdict_end(&v, KB_CHECK_SOCKETS, pass);
}

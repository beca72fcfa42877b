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
        json_object *snap = at(in->snapshots, 0),
                    *not_entered = kb_fact_arr_of(snap, FACT_LOOK_SOCKET_NAMESPACES_NOT_ENTERED);
        json_object *counts = kb_fact_obj_of(snap, FACT_LOOK_HOST_SOCKETS);
        /* The first look's counts, as the evidence and the detail show them (-1: not read, which
         * fails below). */
        int64_t namespaces = kb_fact_int_or(snap, FACT_LOOK_SOCKET_NAMESPACES, -1),
                skipped = kb_fact_int_or(snap, FACT_LOOK_SOCKET_NAMESPACES_SKIPPED, -1);
        int64_t checked = kb_fact_int_or(counts, FACT_HOST_SOCKETS_CHECKED, -1),
                abstract = kb_fact_int_or(snap, FACT_LOOK_ABSTRACT_SOCKETS, -1);
        for (size_t s = 0; s < arr_len(in->snapshots); s++) {
                json_object *look = at(in->snapshots, s);
                const char *label = kb_fact_str_or(look, FACT_LOOK_LABEL, "?");
                int64_t look_skipped;
                if (judge_look_error(look, WHAT_KBOUND_SOCKETS, buf, sizeof buf))
                        verdict_problem(&v, "the host could not list %s", buf);
                if (arr_len(kb_fact_arr_of(look, FACT_LOOK_MOUNTS)) == 0)
                        verdict_problem(&v, "the host could not read the sandbox's mount table (%s)", label);
                if (!kb_fact_obj_of(look, FACT_LOOK_HOST_SOCKETS) ||
                    !kb_fact_arr_of(look, FACT_LOOK_SOCKET_NAMESPACES_NOT_ENTERED) ||
                    !kb_fact_int_of(look, FACT_LOOK_SOCKET_NAMESPACES_SKIPPED, &look_skipped))
                        verdict_problem(&v, "the host did not list the host's unix sockets (%s)", label);
                else if (look_skipped > 0)
                        verdict_problem(&v,
                                        "the host did not list the sockets of %" PRId64
                                        " network namespaces (more than kbound "
                                        "reads in one look)",
                                        look_skipped);
        }
        if (namespaces <= 0)
                verdict_problem(&v, "the host read no network namespace's socket table");
        /* Namespaces kbound does not enter (another sandbox's, a rootless container's): their
         * sockets are read as text and placed by the paths it shows (on the host, or where a process
         * of that namespace sees them). One whose every named socket was placed so is claimed, its
         * sockets each placed by device and inode; one with a socket not placed, or whose table could
         * not be read as such, is not claimed, and the namespace is named. */
        char left[512] = "";
        size_t unplaced = 0, partial = 0, by_text = 0;
        for (size_t i = 0; i < arr_len(not_entered); i++) {
                json_object *ne = at(not_entered, i);
                const char *table_error = kb_fact_str_of(ne, FACT_NOT_ENTERED_TABLE_ERROR);
                int64_t n_unplaced;
                bool all_placed =
                        !table_error && kb_fact_int_of(ne, FACT_NOT_ENTERED_UNPLACED, &n_unplaced) && n_unplaced == 0;
                if (all_placed) {
                        by_text++;
                        continue;
                }
                unplaced += kb_fact_int_of(ne, FACT_NOT_ENTERED_UNPLACED, &n_unplaced) && n_unplaced > 0
                                    ? (size_t) n_unplaced
                                    : 0;
                if (partial < 3)
                        snprintf(left + strlen(left), sizeof left - strlen(left),
                                 "%snetwork namespace of pid %" PRId64 " (%s%s%s)", partial ? ", " : "",
                                 kb_fact_int_or(ne, FACT_NOT_ENTERED_PID, -1),
                                 kb_fact_str_or(ne, FACT_NOT_ENTERED_ERROR, "?"), table_error ? "; its table: " : "",
                                 table_error ? table_error : "");
                partial++;
        }
        if (partial > 3)
                snprintf(left + strlen(left), sizeof left - strlen(left), " and %zu more (see evidence)", partial - 3);
        bool raw = kb_fact_bool_of(in->expect, FACT_EXPECT_ALLOW_NETWORK);
        verdict_evidence(&v, "sockets_checked", json_object_new_int64(checked));
        verdict_evidence(&v, "on_other_filesystems",
                         json_object_new_int64(kb_fact_int_or(counts, FACT_HOST_SOCKETS_ELSEWHERE, -1)));
        verdict_evidence(&v, "namespaces_read", json_object_new_int64(namespaces));
        verdict_evidence_fact(&v, EVIDENCE_SOCKETS_NAMESPACES_NOT_ENTERED, json_object_get(not_entered));
        verdict_evidence(&v, "namespaces_skipped", json_object_new_int64(skipped));
        verdict_evidence(&v, "abstract_sockets", json_object_new_int64(abstract));
        verdict_evidence_fact(&v, EVIDENCE_SOCKETS_NOT_PLACED,
                              json_object_get(kb_fact_get(counts, FACT_HOST_SOCKETS_NOT_CLAIMED)));
        /* What is not claimed, the raw-network override's first: the detail has a ceiling. Each part
         * is also the evidence's not_tested, which the report reads as held in part. */
        char pass[2 * DETAIL_MAX], extra[DETAIL_MAX] = "",
                                   part[DETAIL_MAX / 2]; /* pass holds extra and its own words */
        if (raw) {
                snprintf(part, sizeof part,
                         "not claimed: the %" PRId64
                         " abstract unix sockets of kbound's network namespace, which the kernel shares "
                         "(raw-network override)",
                         abstract);
                verdict_in_part(&v, "%s", part);
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "; NOT%s", part + strlen("not"));
        }
        if (partial > 0) {
                if (snprintf(
                            part, sizeof part,
                            "not claimed: the sockets of %zu network namespace%s kbound does not enter, some not found "
                            "by the paths their tables show%s: %s",
                            partial, partial == 1 ? "" : "s", unplaced ? "" : " (a table not read as such)",
                            left) >= (int) sizeof part)
                        memcpy(part + sizeof part - 4, "...", 4); /* the evidence names each namespace */
                verdict_in_part(&v, "%s", part);
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "; NOT%s", part + strlen("not"));
        }
        json_object *unplaced_sockets = kb_fact_arr_of(counts, FACT_HOST_SOCKETS_NOT_CLAIMED),
                    *first = at(unplaced_sockets, 0);
        if (arr_len(unplaced_sockets) > 0) {
                json_object *holder = at(kb_fact_arr_of(first, FACT_SOCKET_HELD_BY), 0);
                char held[128] = "held by no process the host found";
                if (holder)
                        snprintf(held, sizeof held, "held by pid %" PRId64 " (%s)",
                                 kb_fact_int_or(holder, FACT_HOLDER_PID, -1),
                                 kb_fact_str_or(holder, FACT_HOLDER_NAME, "?"));
                snprintf(part, sizeof part,
                         "not claimed: %zu socket%s on filesystems the sandbox mounts whose files the host could not "
                         "find (removed or moved to another folder since bound, a relative name, another user's): "
                         "first %s, socket:[%" PRId64 "], %s",
                         arr_len(unplaced_sockets), arr_len(unplaced_sockets) == 1 ? "" : "s",
                         kb_fact_str_or(first, FACT_SOCKET_PATH, "?"), kb_fact_int_or(first, FACT_SOCKET_INODE, -1),
                         held);
                verdict_in_part(&v, "%s", part);
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "; NOT%s", part + strlen("not"));
        }
        if (by_text > 0)
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                         "; the sockets of %zu network namespace%s kbound does not enter (another sandbox's or "
                         "container's) each found by the path its table shows",
                         by_text, by_text == 1 ? "" : "s");
        snprintf(pass, sizeof pass,
                 "none of the host's %" PRId64 " bound pathname unix sockets (any type; %" PRId64
                 " network namespace%s "
                 "listed) is reachable through the sandbox's mounts (%zu on filesystems the sandbox mounts, each "
                 "placed by "
                 "its file's device and inode)%s",
                 checked, namespaces, namespaces == 1 ? "" : "s", n, extra);
        return verdict_end(&v, KB_CHECK_SOCKETS, pass);
}

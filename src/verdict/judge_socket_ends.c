/* judge_socket_ends.c: every socket a sandbox process holds, by where its other ends are, for
 * boundary.descriptors: its own network namespace, its peer and who holds it, the listener its
 * connection waits in, the connections waiting in its queue, and who may have queued messages
 * (descriptors among them) in it. */
#include <inttypes.h>
#include <stdio.h>
#include "verdict/judge-internal.h"

static bool is(const char *s, const char *want) {
        return s && strcmp(s, want) == 0;
}

/* "a" or "an", for a socket's state as a message says it ("an unconnected"). */
static const char *article(const char *state) {
        return state && strchr("aeiou", state[0]) && state[0] ? "an" : "a";
}

/* True if inode is a socket of the network namespace p is in, as its tables (text or sock_diag) list it. */
static bool socket_of_namespace(json_object *snap, json_object *p, int64_t inode) {
        int64_t netns = judge_ns_inode(kb_fact_map_of(p, FACT_PROCESS_NS), "net");
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long) netns);
        json_object *net = netns > 0 ? judge_map_at(kb_fact_map_of(snap, FACT_LOOK_NET), key) : NULL;
        if (int_in(kb_fact_arr_of(net, FACT_NET_SOCKET_INODES), inode))
                return true;
        json_object *unix_list = kb_fact_arr_of(net, FACT_NET_UNIX);
        for (size_t i = 0; i < arr_len(unix_list); i++) {
                int64_t mine;
                if (kb_fact_int_of(at(unix_list, i), FACT_UNIX_ENTRY_INODE, &mine) && mine == inode)
                        return true;
        }
        return false;
}

/* Why a socket of kbound's network namespace that p holds (k: its kbound_net_sockets entry) is a
 * channel out, or NULL. A unix socket lives in the namespace of the side that connected, so the
 * kernel's end of each of kbound's connections is one; any other, whatever name it carries, joins
 * the host's network: its peer must be one of kbound's own sockets, found by inode. What waits in
 * the kernel's end comes from kbound, which sends no descriptors. */
static const char *host_net_socket_problem(json_object *snap, json_object *k, char *buf, size_t size) {
        /* A peer not read is none: no socket of kbound's. */
        int64_t inode = kb_fact_int_or(k, FACT_SOCKET_INODE, -1), peer = kb_fact_int_or(k, FACT_SOCKET_PEER, 0);
        const char *state = kb_fact_str_or(k, FACT_SOCKET_STATE, "?"), *type = kb_fact_str_or(k, FACT_SOCKET_TYPE, "?"),
                   *path = kb_fact_str_of(k, FACT_SOCKET_PATH);
        /* The kernel's end of one of kbound's connections to its endpoints, and nothing else: a
         * socket whose peer is another of kbound's sockets (the block or seccomp channel, a
         * keeper's) is a channel to kbound all the same. */
        json_object *connections = kb_fact_arr_of(snap, FACT_LOOK_CONNECTIONS);
        for (size_t i = 0; peer > 0 && i < arr_len(connections); i++) {
                int64_t mine, theirs;
                if (kb_fact_int_of(at(connections, i), FACT_CONNECTION_KBOUND_SOCKET, &mine) && mine == peer &&
                    kb_fact_int_of(at(connections, i), FACT_CONNECTION_PEER, &theirs) && theirs == inode &&
                    int_in(kb_fact_arr_of(snap, FACT_LOOK_KBOUND_SOCKETS), peer))
                        return NULL;
        }
        char named[300] = "";
        if (path)
                snprintf(named, sizeof named, ", named %s", path);
        if (peer <= 0) {
                snprintf(buf, size,
                         "socket:[%" PRId64
                         "] (a %s %s unix socket of kbound's network namespace%s) is connected to no "
                         "socket of kbound's (a channel out)",
                         inode, state, type, named);
                return buf;
        }
        json_object *holders = kb_fact_arr_of(k, FACT_SOCKET_PEER_HELD_BY);
        char who[256] = "no process the host found";
        if (arr_len(holders) > 0)
                judge_holder_words(snap, at(holders, 0), who, sizeof who);
        snprintf(buf, size,
                 "socket:[%" PRId64 "] is a unix %s socket of kbound's network namespace%s, whose peer socket:[%" PRId64
                 "] is held by %s, not by kbound (a channel out)",
                 inode, type, named, peer, who);
        return buf;
}

/* "the sandbox's network namespace", "kbound's network namespace", "the network namespace of host
 * pid N" or "no network namespace the host read", for where o (a SANDBOX_SOCKET or SOCKET_END,
 * by its facts) was found. */
static const char *where_found(json_object *o, kb_fact_str found_fact, kb_fact_int pid_fact, char *buf, size_t size) {
        const char *found = kb_fact_str_or(o, found_fact, "none");
        if (is(found, "sandbox"))
                return "the sandbox's network namespace";
        if (is(found, "kbound"))
                return "kbound's network namespace";
        if (is(found, "host")) {
                snprintf(buf, size, "the network namespace of host pid %" PRId64, kb_fact_int_or(o, pid_fact, -1));
                return buf;
        }
        return "no network namespace the host read";
}

/* The first process outside the sandbox the look found holding target ("socket:[N]"): an outside
 * channel (a process outside holding a socket of the sandbox's network), or the launch side's. */
static const char *held_outside(json_object *snap, const char *target, char *buf, size_t size) {
        json_object *channels = kb_fact_arr_of(snap, FACT_LOOK_OUTSIDE_CHANNELS);
        for (size_t i = 0; i < arr_len(channels); i++) {
                json_object *c = at(channels, i);
                if (!is(kb_fact_str_of(c, FACT_OUTSIDE_CHANNEL_TARGET), target))
                        continue;
                snprintf(buf, size, "pid %" PRId64 " (%s, its fd %" PRId64 "), a process outside the sandbox",
                         kb_fact_int_or(c, FACT_OUTSIDE_CHANNEL_PID, -1),
                         kb_fact_str_or(c, FACT_OUTSIDE_CHANNEL_NAME, "?"),
                         kb_fact_int_or(c, FACT_OUTSIDE_CHANNEL_FD, -1));
                return buf;
        }
        json_object *launcher = kb_fact_obj_of(snap, FACT_LOOK_LAUNCHER);
        if (str_in(kb_fact_arr_of(launcher, FACT_LAUNCHER_OUTSIDE_INODES), target)) {
                snprintf(buf, size, "kbound's side of the sandbox");
                return buf;
        }
        return NULL;
}

/* Why e (a SOCKET_END; what: "its peer", ...) is not the sandbox's own, or NULL: it must be a
 * socket of the sandbox's network namespace held by sandbox processes and by no process outside.
 * kbound_ok: one of kbound's own sockets (of its network, held by kbound itself) is not a way out
 * either (a connection kbound makes to the kernel, waiting to be accepted). */
static const char *end_problem(json_object *snap, json_object *e, const char *what, bool kbound_ok, char *buf,
                               size_t size) {
        int64_t inode = kb_fact_int_or(e, FACT_SOCKET_END_INODE, -1);
        const char *found = kb_fact_str_of(e, FACT_SOCKET_END_FOUND);
        json_object *holders = kb_fact_arr_of(e, FACT_SOCKET_END_HELD_BY);
        const char *side = kb_fact_str_of(at(holders, 0), FACT_HOLDER_SIDE);
        char target[40], where[96], who[256];
        snprintf(target, sizeof target, "socket:[%" PRId64 "]", inode);
        if (inode <= 0) {
                snprintf(buf, size, "%s has closed: what it sent may still wait, from a sender the host cannot name",
                         what);
                return buf;
        }
        if (kbound_ok && is(found, "kbound") && is(side, "kbound"))
                return NULL;
        if (is(found, "sandbox")) {
                if (held_outside(snap, target, who, sizeof who)) {
                        snprintf(buf, size, "%s (%s) is held by %s (a channel out)", what, target, who);
                        return buf;
                }
                if (is(side, "sandbox"))
                        return NULL;
        }
        if (arr_len(holders) > 0)
                judge_holder_words(snap, at(holders, 0), who, sizeof who);
        else
                snprintf(who, sizeof who,
                         "no process the host found (in a message in flight, or where the host "
                         "does not look)");
        snprintf(buf, size, "%s (%s), a socket of %s, is held by %s, not by a sandbox process", what, target,
                 where_found(e, FACT_SOCKET_END_FOUND, FACT_SOCKET_END_NETNS_PID, where, sizeof where), who);
        return buf;
}

/* Why a socket of the sandbox's own network namespace (s: its SANDBOX_SOCKET) reaches outside it,
 * or NULL: its peer, the listener its connection waits in, the connections waiting in its queue
 * and any other socket connected to it must each be the sandbox's own, and what waits in its queue
 * must come from one of those. */
static const char *own_socket_problem(json_object *snap, json_object *s, char *buf, size_t size) {
        json_object *sock = kb_fact_obj_of(s, FACT_SANDBOX_SOCKET_SOCKET), *e;
        const char *type = kb_fact_str_or(sock, FACT_SOCKET_TYPE, "?"),
                   *state = kb_fact_str_or(sock, FACT_SOCKET_STATE, "?"),
                   *name = kb_fact_str_of(sock, FACT_SOCKET_PATH);
        int64_t inode = kb_fact_int_or(s, FACT_SANDBOX_SOCKET_INODE, -1),
                peer = kb_fact_int_or(sock, FACT_SOCKET_PEER, 0), rqueue;
        char head[200], why[DETAIL_MAX / 2];
        snprintf(head, sizeof head, "socket:[%" PRId64 "] (%s %s unix %s socket of the sandbox's network namespace)",
                 inode, article(state), state, type);
        if (peer > 0) {
                e = kb_fact_obj_of(s, FACT_SANDBOX_SOCKET_PEER);
                if (!e) {
                        snprintf(buf, size, "%s: the host did not trace its peer socket:[%" PRId64 "]", head, peer);
                        return buf;
                }
                if (end_problem(snap, e, "its peer", false, why, sizeof why)) {
                        snprintf(buf, size, "%s: %s", head, why);
                        return buf;
                }
        }
        if ((e = kb_fact_obj_of(s, FACT_SANDBOX_SOCKET_LISTENER)) &&
            end_problem(snap, e, "the listener its connection waits in", false, why, sizeof why)) {
                snprintf(buf, size, "%s: %s", head, why);
                return buf;
        }
        json_object *pending = kb_fact_arr_of(s, FACT_SANDBOX_SOCKET_PENDING);
        int64_t waiting = kb_fact_int_or(s, FACT_SANDBOX_SOCKET_PENDING_COUNT, 0);
        for (size_t i = 0; i < arr_len(pending); i++)
                if (end_problem(snap, at(pending, i), "the connecting socket of a connection waiting in its queue",
                                true, why, sizeof why)) {
                        snprintf(buf, size, "%s: %s", head, why);
                        return buf;
                }
        if (waiting > (int64_t) arr_len(pending)) {
                snprintf(buf, size,
                         "%s: %" PRId64 " connections wait in its queue, more than the host traced (%zu): the others' "
                         "senders are unknown",
                         head, waiting, arr_len(pending));
                return buf;
        }
        json_object *from = kb_fact_arr_of(s, FACT_SANDBOX_SOCKET_CONNECTED_FROM);
        for (size_t i = 0; i < arr_len(from); i++)
                if (end_problem(snap, at(from, i), "another socket connected to it", false, why, sizeof why)) {
                        snprintf(buf, size, "%s: %s (it may have queued messages, descriptors too)", head, why);
                        return buf;
                }
        /* What waits in it: a connection's comes from its peer (traced above); a datagram socket
         * bound to a name takes messages from any process that reaches the name, and a message of no
         * bytes, which can carry descriptors, shows in no queue length: its senders are unknown,
         * whatever its queue says. */
        if (is(type, "dgram") && name) {
                snprintf(buf, size,
                         "%s is bound to %s: any process that reaches that name may queue messages in it, "
                         "descriptors too, and a message of no bytes shows in no queue length (its senders are "
                         "unknown)",
                         head, name);
                return buf;
        }
        if (is(state, "listening"))
                return NULL;
        if (!kb_fact_int_of(sock, FACT_SOCKET_RQUEUE, &rqueue)) {
                snprintf(buf, size, "%s: the host could not read what waits in its queue", head);
                return buf;
        }
        if (rqueue > 0 && peer <= 0 && !kb_fact_obj_of(s, FACT_SANDBOX_SOCKET_LISTENER)) {
                snprintf(buf, size,
                         "%s: %" PRId64 " bytes wait in its queue from a sender that is gone (it has no peer now): the "
                         "host cannot say whose they are, or what descriptors they carry",
                         head, rqueue);
                return buf;
        }
        return NULL;
}

const char *judge_socket_problem(json_object *snap, json_object *p, const char *target, int64_t inode, char *buf,
                                 size_t size) {
        json_object *all = kb_fact_arr_of(snap, FACT_LOOK_SANDBOX_SOCKETS), *s = NULL;
        for (size_t i = 0; i < arr_len(all) && !s; i++) {
                int64_t mine;
                if (kb_fact_int_of(at(all, i), FACT_SANDBOX_SOCKET_INODE, &mine) && mine == inode)
                        s = at(all, i);
        }
        const char *found = kb_fact_str_of(s, FACT_SANDBOX_SOCKET_FOUND);
        if (all && !s) {
                snprintf(buf, size,
                         "%s is not a socket of the sandbox's network namespace: the host did not trace it to its "
                         "other ends (it is in no list of the look)",
                         target);
                return buf;
        }
        /* A socket of the sandbox's own network namespace (sock_diag lists it there): every other
         * end traced. */
        if (is(found, "sandbox"))
                return own_socket_problem(snap, s, buf, size);
        /* A socket of another family, which its namespace's tables list (it reaches that
         * namespace only), or any socket of a sandbox that shares kbound's network (the raw-network
         * override: the network is not claimed); never one sock_diag lists in another of the host's
         * namespaces. */
        if (!is(found, "host") && socket_of_namespace(snap, p, inode))
                return NULL;
        json_object *host_net = kb_fact_arr_of(snap, FACT_LOOK_KBOUND_NET_SOCKETS);
        for (size_t i = 0; i < arr_len(host_net); i++) {
                int64_t mine;
                if (kb_fact_int_of(at(host_net, i), FACT_SOCKET_INODE, &mine) && mine == inode)
                        return host_net_socket_problem(snap, at(host_net, i), buf, size);
        }
        if (kb_fact_bool_of(s, FACT_SANDBOX_SOCKET_CLOSED))
                return NULL; /* closed while the look read it: it holds nothing now */
        char where[96], why[DETAIL_MAX / 2], peer[DETAIL_MAX / 2 + 2] = "";
        json_object *sock = kb_fact_obj_of(s, FACT_SANDBOX_SOCKET_SOCKET),
                    *e = kb_fact_obj_of(s, FACT_SANDBOX_SOCKET_PEER);
        if (!s || !found || is(found, "none")) {
                snprintf(buf, size, "%s is not a socket of the sandbox's network namespace: %s", target,
                         !s ? "the host did not trace it to its other ends"
                            : "it is in no network namespace the host read");
                return buf;
        }
        if (e && end_problem(snap, e, "its peer", false, why, sizeof why))
                snprintf(peer, sizeof peer, "; %s", why);
        snprintf(buf, size,
                 "%s is not a socket of the sandbox's network namespace but %s %s unix %s socket of %s: made outside "
                 "and handed in (a channel out)%s",
                 target, article(kb_fact_str_of(sock, FACT_SOCKET_STATE)), kb_fact_str_or(sock, FACT_SOCKET_STATE, "?"),
                 kb_fact_str_or(sock, FACT_SOCKET_TYPE, "?"),
                 where_found(s, FACT_SANDBOX_SOCKET_FOUND, FACT_SANDBOX_SOCKET_NETNS_PID, where, sizeof where), peer);
        return buf;
}

void judge_socket_look_problems(verdict *v, json_object *snap) {
        json_object *errors = kb_fact_arr_of(snap, FACT_LOOK_ERRORS);
        const char *label = kb_fact_str_or(snap, FACT_LOOK_LABEL, "?");
        const char *words = kb_fact_what_text(WHAT_SANDBOX_SOCKETS);
        for (size_t i = 0; i < arr_len(errors); i++) {
                const char *what = kb_fact_str_of(at(errors, i), FACT_ERROR_WHAT);
                if (!what || strncmp(what, words, strlen(words)) != 0)
                        continue;
                const char *netns = what[strlen(words)] == '/' ? what + strlen(words) + 1 : "?";
                verdict_problem(v,
                                "the host could not list the unix sockets of the sandbox's network namespace %s with "
                                "sock_diag (%s look: %s): their peers, the connections waiting in them and what waits "
                                "in their queues are not known",
                                netns, label, kb_fact_str_or(at(errors, i), FACT_ERROR_ERROR, "?"));
        }
        if (!kb_fact_arr_of(snap, FACT_LOOK_SANDBOX_SOCKETS))
                verdict_problem(v, "the host did not trace the sandbox's sockets to their other ends (%s look)", label);
}

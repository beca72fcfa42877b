/* canary.h: canaries kbound plants where real secrets live, so that reaching one from a sandbox is
 * proof of a leak (the values are random tokens that exist nowhere else). */
#pragma once

#include <stdint.h>
#include <json-c/json.h>
#include "kbound/common.h"

/* A keyring canary: joins a fresh anonymous session keyring for kbound itself (so nothing is ever
 * added to the keyring of the login session kbound runs in) and adds a "user" key named
 * description holding payload to it, with possessor-only permissions (no view, read or search for
 * anyone else, the same uid included). Every sandbox is started with a fresh, verified empty
 * keyring of its own in a user namespace of its own (kb_sandbox_launch), so nothing there can
 * possess this key: a cell that finds it by name and reads payload is proof of a leak. The session keyring belongs to
 * the calling thread: call before starting the threads that launch sandboxes. Returns 0 and the key's serial; -ENOSYS
 * (no keys in this kernel) or -EPERM (keyctl refused to kbound's process tree, e.g. by a container's seccomp filter,
 * which every sandbox inherits too): no key can be inherited, nothing planted; -errno otherwise. */
KB_EXPORT int kb_canary_keyring_plant(const char *description, const char *payload, int32_t *ret_serial);

/* Canary listeners on the host's loopback: one TCP socket on 127.0.0.1 and one abstract unix
 * socket, both listening, both counting every connection that reaches them. Loopback only: a
 * probe never needs another host. */
typedef struct kb_canary_net kb_canary_net;
KB_EXPORT int kb_canary_net_open(kb_canary_net **ret);
/* Adds "tcp_ports" and "abstract_sockets" to params. */
KB_EXPORT int kb_canary_net_params(const kb_canary_net *c, json_object *params);
/* Accepts (and closes) whatever connected since the last call; returns the running totals. */
KB_EXPORT void kb_canary_net_count(kb_canary_net *c, unsigned *ret_tcp, unsigned *ret_unix);
KB_EXPORT void kb_canary_net_destroy(kb_canary_net **cp);

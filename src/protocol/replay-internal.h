/* replay-internal.h: a bounded memory of what one connection has received (signatures, msg_ids),
 * so a message seen before can be refused, as jupyter_client's Session refuses a repeated
 * signature (its digest_history). Used by client.c and its tests. */
#pragma once

#include <stddef.h>

/* jupyter_client remembers 2^16 signatures per session; so do we, per kind. */
#define KB_REPLAY_HISTORY_DEFAULT 65536

typedef struct kb_replay_history kb_replay_history;

/* A history of up to capacity entries (rounded up to a power of two, at least 2), small until it
 * fills. Returns 0,
 * -EINVAL (capacity 0 or over 2^24) or -ENOMEM. */
int kb_replay_history_new(size_t capacity, kb_replay_history **ret);

/* Frees *hp and sets it to NULL. Accepts NULL. */
void kb_replay_history_destroy(kb_replay_history **hp);

/* Remembers data[0..len) (by its SHA-256) unless it is remembered already. Past capacity the
 * oldest entry is forgotten first, so a repeat is caught only within the last capacity entries.
 * The memory grows with the entries (doubling) up to the capacity's. Returns 0 (new, now
 * remembered), -EEXIST (seen before; nothing changes), -EIO (OpenSSL could not hash it) or
 * -ENOMEM (no room to grow); nothing changes on an error. */
int kb_replay_history_add(kb_replay_history *h, const void *data, size_t len);

/* How many entries are remembered now (at most the capacity). */
size_t kb_replay_history_count(const kb_replay_history *h);

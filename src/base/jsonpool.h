/* jsonpool.h: JSON values held once however often they repeat (internal). The host's looks at a
 * sandbox repeat most of what the look before found (the same mount table, the same processes,
 * their mappings) and much within one look (the same device, the same options, the same reach);
 * kept whole, each look costs kbound its full size in json-c objects (about 0.8 KiB an object).
 * Interned into one pool, equal parts of every look are one object: what is read is the same. */
#pragma once

#include <stddef.h>
#include <json-c/json.h>

typedef struct kb_json_pool kb_json_pool;

/* A new, empty pool. Returns 0 or -ENOMEM. */
int kb_json_pool_new(kb_json_pool **ret);

/* Lets go of what the pool holds (the values interned keep their parts) and frees it; sets *pp to
 * NULL. Accepts NULL and *pp == NULL. */
void kb_json_pool_free(kb_json_pool **pp);

/* Makes each part of *v (and *v itself) the value the pool already holds equal to it (the same type
 * and value; an object's members in the same order), and adds the parts it did not hold, so that
 * equal parts of every value interned into one pool are one object. *v may be replaced by the
 * pool's equal value (its reference moves there). A value interned must not change afterwards, nor
 * be interned by another thread: it is shared. A value the pool has no room for (out of memory,
 * or one of many alike in hash) stays its own. Returns how many parts were replaced. */
size_t kb_json_pool_intern(kb_json_pool *p, json_object **v);

/* jsonpool.c: JSON values held once (jsonpool.h): hash-consing, from the leaves up, so that the
 * parts of a value are the pool's before the value itself is looked up by their identities. */
#include "base/jsonpool.h"
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define POOL_SLOTS_MIN 1024 /* a power of two; the pool grows past half full */
/* A lookup gives up after this many slots: what the kernel wrote (a cell's result) is interned
 * too, and values made to share one hash cost a bounded search each, then stay their own. */
#define POOL_PROBES_MAX 128

typedef struct pool_slot {
        uint64_t hash;
        json_object *value; /* a reference the pool holds; NULL: empty */
} pool_slot;

struct kb_json_pool {
        pool_slot *slots;
        size_t n_slots; /* a power of two */
        size_t count;
};

/* splitmix64's finalizer: every bit of x moves about half of the result's. */
static uint64_t mix(uint64_t x) {
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
}

/* FNV-1a of len bytes, from h. */
static uint64_t bytes_hash(uint64_t h, const char *s, size_t len) {
        h ^= 0xcbf29ce484222325ULL;
        for (size_t i = 0; i < len; i++)
                h = (h ^ (unsigned char) s[i]) * 0x100000001b3ULL;
        return mix(h);
}

static uint64_t ref_hash(uint64_t h, const json_object *part) {
        return mix(h + (uint64_t) (uintptr_t) part);
}

/* The hash of v, whose parts are already the pool's: a container's is that of its parts'
 * identities (and an object's keys), in order. */
static uint64_t value_hash(json_object *v) {
        json_type type = json_object_get_type(v);
        uint64_t h = mix((uint64_t) type + 1);
        switch (type) {
        case json_type_boolean:
                return mix(h ^ (uint64_t) json_object_get_boolean(v));
        case json_type_int:
                return mix(h ^ (uint64_t) json_object_get_int64(v));
        case json_type_double: {
                double d = json_object_get_double(v);
                uint64_t bits;
                memcpy(&bits, &d, sizeof bits);
                return mix(h ^ bits);
        }
        case json_type_string:
                return bytes_hash(h, json_object_get_string(v), (size_t) json_object_get_string_len(v));
        case json_type_array:
                for (size_t i = 0; i < json_object_array_length(v); i++)
                        h = ref_hash(h, json_object_array_get_idx(v, i));
                return h;
        case json_type_object: {
                json_object_object_foreach(v, key, part) h = ref_hash(bytes_hash(h, key, strlen(key)), part);
                return h;
        }
        default:
                return h;
        }
}

/* Whether a and b, whose parts are the pool's, are equal: scalars by value, containers by their
 * parts' identities (and an object's keys) in the same order. */
static bool value_equal(json_object *a, json_object *b) {
        json_type type = json_object_get_type(a);
        if (a == b)
                return true;
        if (type != json_object_get_type(b))
                return false;
        switch (type) {
        case json_type_array: {
                size_t n = json_object_array_length(a);
                if (n != json_object_array_length(b))
                        return false;
                for (size_t i = 0; i < n; i++)
                        if (json_object_array_get_idx(a, i) != json_object_array_get_idx(b, i))
                                return false;
                return true;
        }
        case json_type_object: {
                if (json_object_object_length(a) != json_object_object_length(b))
                        return false;
                struct lh_entry *eb = json_object_get_object(b)->head;
                json_object_object_foreach(a, key, part) {
                        if (!eb || strcmp(key, (const char *) lh_entry_k(eb)) != 0 ||
                            part != (json_object *) lh_entry_v(eb))
                                return false;
                        eb = eb->next;
                }
                return true;
        }
        default:
                return json_object_equal(a, b);
        }
}

/* Doubles the slots (rehashing what they hold). A value that would lie further than
 * POOL_PROBES_MAX from its hash's slot, where no lookup would find it, is let go (the values
 * interned keep it; later ones do not share it). Returns 0 or -ENOMEM (nothing changed). */
static int grow(kb_json_pool *p) {
        size_t n = p->n_slots * 2;
        pool_slot *slots = calloc(n, sizeof *slots);
        if (!slots)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_slots; i++) {
                if (!p->slots[i].value)
                        continue;
                size_t at = p->slots[i].hash & (n - 1);
                int probe = 0;
                while (slots[at].value && ++probe < POOL_PROBES_MAX)
                        at = (at + 1) & (n - 1);
                if (slots[at].value) {
                        json_object_put(p->slots[i].value);
                        p->count--;
                        continue;
                }
                slots[at] = p->slots[i];
        }
        free(p->slots);
        p->slots = slots;
        p->n_slots = n;
        return 0;
}

/* The pool's value equal to v (v's parts already the pool's), v itself once added, or v when
 * there is no room for it. Borrowed. */
static json_object *lookup_or_add(kb_json_pool *p, json_object *v) {
        if (2 * (p->count + 1) > p->n_slots && grow(p) < 0)
                return v;
        uint64_t h = value_hash(v);
        size_t at = h & (p->n_slots - 1);
        for (int probe = 0; probe < POOL_PROBES_MAX; probe++, at = (at + 1) & (p->n_slots - 1)) {
                pool_slot *s = &p->slots[at];
                if (!s->value) {
                        *s = (pool_slot){.hash = h, .value = json_object_get(v)};
                        p->count++;
                        return v;
                }
                if (s->hash == h && value_equal(s->value, v))
                        return s->value;
        }
        return v;
}

/* v with its parts made the pool's, then v itself or the pool's equal value (borrowed). */
static json_object *intern(kb_json_pool *p, json_object *v, size_t *n) {
        if (!v)
                return NULL;
        if (json_object_is_type(v, json_type_object)) {
                json_object_object_foreach(v, key, part) {
                        json_object *same = intern(p, part, n);
                        if (same == part)
                                continue;
                        /* The part replaced is put here: not used past this point. */
                        if (json_object_object_add(v, key, json_object_get(same)) == 0)
                                (*n)++;
                        else
                                json_object_put(same);
                }
        } else if (json_object_is_type(v, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        json_object *part = json_object_array_get_idx(v, i), *same = intern(p, part, n);
                        if (same == part)
                                continue;
                        if (json_object_array_put_idx(v, i, json_object_get(same)) == 0)
                                (*n)++;
                        else
                                json_object_put(same);
                }
        }
        return lookup_or_add(p, v);
}

int kb_json_pool_new(kb_json_pool **ret) {
        kb_json_pool *p = calloc(1, sizeof *p);
        if (!p)
                return -ENOMEM;
        p->slots = calloc(POOL_SLOTS_MIN, sizeof *p->slots);
        if (!p->slots) {
                free(p);
                return -ENOMEM;
        }
        p->n_slots = POOL_SLOTS_MIN;
        *ret = p;
        return 0;
}

void kb_json_pool_free(kb_json_pool **pp) {
        if (!pp || !*pp)
                return;
        for (size_t i = 0; i < (*pp)->n_slots; i++)
                json_object_put((*pp)->slots[i].value);
        free((*pp)->slots);
        free(*pp);
        *pp = NULL;
}

size_t kb_json_pool_intern(kb_json_pool *p, json_object **v) {
        size_t n = 0;
        if (!p || !v || !*v)
                return 0;
        json_object *same = intern(p, *v, &n);
        if (same != *v) {
                json_object_get(same);
                json_object_put(*v);
                *v = same;
                n++;
        }
        return n;
}

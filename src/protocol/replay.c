/* replay.c: a bounded set of SHA-256 digests that forgets its oldest entry first (replay-internal.h). */
#include "protocol/replay-internal.h"
#include <errno.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define DIGEST_LEN 32 /* SHA-256 */
#define CAPACITY_MAX (1u << 24)

/* The tables start this small and double as they fill, up to the capacity: a connection that
 * receives a few hundred messages (a check) touches a few pages, not the 2.5 MiB of a full history
 * (whose bucket array a random hash would touch all over). */
#define SLOTS_MIN 256

struct kb_replay_history {
        size_t capacity;     /* a power of two: the most entries remembered */
        size_t slots;        /* a power of two up to capacity: the tables' size now */
        unsigned bits;       /* log2(slots): the bits of a bucket index */
        size_t count;        /* entries remembered */
        size_t next;         /* the slot the next entry takes: the oldest one once full */
        uint64_t multiplier; /* random and odd: see bucket_of */
        unsigned char (*digests)[DIGEST_LEN];
        uint32_t *bucket; /* per bucket: its first slot + 1; 0 when empty */
        uint32_t *chain;  /* per slot: the next slot + 1 in the same bucket; 0 at the end */
        /* SHA-256, fetched from OpenSSL's providers once (an implicit fetch per digest costs
         * more than hashing a msg_id), and one digest context reused for every entry. */
        EVP_MD *sha256;
        EVP_MD_CTX *md_ctx;
};

/* Multiply-shift hashing with a random odd multiplier. A kernel knows its HMAC key and could
 * search for messages whose digests share a bucket, so that every later message walks one long
 * chain; it cannot aim at buckets chosen by a multiplier it never sees. */
static size_t bucket_of(const kb_replay_history *h, const unsigned char *digest) {
        uint64_t x;
        memcpy(&x, digest, sizeof(x));
        return (size_t) ((x * h->multiplier) >> (64 - h->bits));
}

/* Makes the tables slots entries long (a power of two, >= the entries held, which fill slots
 * 0..count-1 in order: the tables only grow before the first entry is forgotten) and files every
 * entry in its bucket again. Returns 0 or -ENOMEM (nothing changed). */
static int resize(kb_replay_history *h, size_t slots) {
        unsigned char(*digests)[DIGEST_LEN] = realloc(h->digests, slots * sizeof(*h->digests));
        if (!digests)
                return -ENOMEM;
        h->digests = digests;
        uint32_t *chain = realloc(h->chain, slots * sizeof(*h->chain));
        if (!chain)
                return -ENOMEM;
        h->chain = chain;
        uint32_t *bucket = calloc(slots, sizeof(*bucket));
        if (!bucket)
                return -ENOMEM;
        free(h->bucket);
        h->bucket = bucket;
        h->slots = slots;
        for (h->bits = 0; ((size_t) 1 << h->bits) < slots; h->bits++)
                ;
        for (size_t slot = 0; slot < h->count; slot++) {
                size_t b = bucket_of(h, h->digests[slot]);
                h->chain[slot] = h->bucket[b];
                h->bucket[b] = (uint32_t) slot + 1;
        }
        return 0;
}

int kb_replay_history_new(size_t capacity, kb_replay_history **ret) {
        if (capacity == 0 || capacity > CAPACITY_MAX)
                return -EINVAL;
        kb_replay_history *h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->capacity = 2;
        while (h->capacity < capacity)
                h->capacity *= 2;
        h->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
        h->md_ctx = EVP_MD_CTX_new();
        if (!h->sha256 || !h->md_ctx || getrandom(&h->multiplier, sizeof(h->multiplier), 0) != sizeof(h->multiplier) ||
            resize(h, h->capacity < SLOTS_MIN ? h->capacity : SLOTS_MIN) < 0) {
                kb_replay_history_destroy(&h);
                return -ENOMEM;
        }
        h->multiplier |= 1;
        *ret = h;
        return 0;
}

void kb_replay_history_destroy(kb_replay_history **hp) {
        if (!hp || !*hp)
                return;
        free((*hp)->digests);
        free((*hp)->bucket);
        free((*hp)->chain);
        EVP_MD_CTX_free((*hp)->md_ctx);
        EVP_MD_free((*hp)->sha256);
        free(*hp);
        *hp = NULL;
}

/* Unlinks slot from its bucket's chain, making room for a new entry there. */
static void forget(kb_replay_history *h, size_t slot) {
        uint32_t *link = &h->bucket[bucket_of(h, h->digests[slot])];
        while (*link && *link != slot + 1)
                link = &h->chain[*link - 1];
        if (*link)
                *link = h->chain[slot];
        h->chain[slot] = 0;
}

int kb_replay_history_add(kb_replay_history *h, const void *data, size_t len) {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int digest_len = 0;
        if (EVP_DigestInit_ex2(h->md_ctx, h->sha256, NULL) != 1 || EVP_DigestUpdate(h->md_ctx, data, len) != 1 ||
            EVP_DigestFinal_ex(h->md_ctx, digest, &digest_len) != 1 || digest_len != DIGEST_LEN)
                return -EIO;

        size_t b = bucket_of(h, digest);
        for (uint32_t i = h->bucket[b]; i; i = h->chain[i - 1])
                if (memcmp(h->digests[i - 1], digest, DIGEST_LEN) == 0)
                        return -EEXIST;
        if (h->count == h->slots && h->slots < h->capacity) {
                if (resize(h, h->slots * 2) < 0)
                        return -ENOMEM;
                b = bucket_of(h, digest);
        }
        size_t slot = h->next;
        if (h->count == h->capacity)
                forget(h, slot);
        else
                h->count++;
        memcpy(h->digests[slot], digest, DIGEST_LEN);
        h->chain[slot] = h->bucket[b];
        h->bucket[b] = (uint32_t) slot + 1;
        h->next = (slot + 1) & (h->capacity - 1);
        return 0;
}

size_t kb_replay_history_count(const kb_replay_history *h) {
        return h->count;
}

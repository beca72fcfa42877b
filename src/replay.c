/* replay.c: a bounded set of SHA-256 digests that forgets its oldest entry first (replay-internal.h). */
/* The low-level SHA-256 for the same reason as wire.c: EVP goes through OpenSSL 3's provider
 * machinery for every digest, which costs more than hashing a msg_id. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "replay-internal.h"
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <openssl/sha.h>

#define DIGEST_LEN SHA256_DIGEST_LENGTH
#define CAPACITY_MAX (1u << 24)

struct kb_replay_history {
        size_t capacity;     /* a power of two */
        unsigned bits;       /* log2(capacity): the bits of a bucket index */
        size_t count;        /* entries remembered */
        size_t next;         /* the slot the next entry takes: the oldest one once full */
        uint64_t multiplier; /* random and odd: see bucket_of */
        unsigned char (*digests)[DIGEST_LEN];
        uint32_t *bucket;    /* per bucket: its first slot + 1; 0 when empty */
        uint32_t *chain;     /* per slot: the next slot + 1 in the same bucket; 0 at the end */
};

int kb_replay_history_new(size_t capacity, kb_replay_history **ret) {
        if (capacity == 0 || capacity > CAPACITY_MAX)
                return -EINVAL;
        kb_replay_history *h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->capacity = 2;
        h->bits = 1;
        while (h->capacity < capacity) {
                h->capacity *= 2;
                h->bits++;
        }
        /* calloc: pages nobody has touched yet cost no memory, so a short run stays small. */
        h->digests = calloc(h->capacity, sizeof(*h->digests));
        h->bucket = calloc(h->capacity, sizeof(*h->bucket));
        h->chain = calloc(h->capacity, sizeof(*h->chain));
        if (!h->digests || !h->bucket || !h->chain ||
            getrandom(&h->multiplier, sizeof(h->multiplier), 0) != sizeof(h->multiplier)) {
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
        free(*hp);
        *hp = NULL;
}

/* Multiply-shift hashing with a random odd multiplier. A kernel knows its HMAC key and could
 * search for messages whose digests share a bucket, so that every later message walks one long
 * chain; it cannot aim at buckets chosen by a multiplier it never sees. */
static size_t bucket_of(const kb_replay_history *h, const unsigned char *digest) {
        uint64_t x;
        memcpy(&x, digest, sizeof(x));
        return (size_t) ((x * h->multiplier) >> (64 - h->bits));
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
        unsigned char digest[DIGEST_LEN];
        SHA256_CTX ctx;
        SHA256_Init(&ctx);
        SHA256_Update(&ctx, data, len);
        SHA256_Final(digest, &ctx);

        size_t b = bucket_of(h, digest);
        for (uint32_t i = h->bucket[b]; i; i = h->chain[i - 1])
                if (memcmp(h->digests[i - 1], digest, DIGEST_LEN) == 0)
                        return -EEXIST;
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

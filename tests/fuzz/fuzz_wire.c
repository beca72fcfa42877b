/* fuzz_wire.c: libFuzzer target for kb_wire_decode: hostile frames, signed or not, then a re-encode check. */
#include "kbound/wire.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Input layout (tests/fuzz/make_wire_seeds.py writes the same):
 *   byte 0      flags: bit 0 = re-sign the message correctly, so mutations reach the JSON parser;
 *               bit 1 = decode with the empty key (unsigned mode)
 *   then frames, each a 2-byte big-endian length and that many bytes; a length running past the
 *   end takes what is left. */
#define FUZZ_KEY "fuzz-key-0123456789abcdef"
#define FUZZ_MAX_FRAMES 48 /* above the limit below, so -E2BIG is reachable */
#define FLAG_SIGN 0x01
#define FLAG_UNSIGNED 0x02

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t split_frames(const uint8_t *data, size_t size, kb_frame *frames) {
        size_t n = 0, pos = 0;
        while (pos < size && n < FUZZ_MAX_FRAMES) {
                size_t len = size - pos >= 2 ? ((size_t) data[pos] << 8) | data[pos + 1] : 0;
                pos += size - pos >= 2 ? 2 : size - pos;
                if (len > size - pos)
                        len = size - pos;
                frames[n++] = (kb_frame){data + pos, len};
                pos += len;
        }
        return n;
}

/* Replaces the signature frame with the right HMAC, if the message has the frames for one. */
static void sign_in_place(kb_frame *frames, size_t n, const kb_hmac *key, char hex[KB_HMAC_HEX_LEN + 1]) {
        size_t delim_len = strlen(KB_WIRE_DELIMITER);
        for (size_t i = 0; i < n; i++) {
                if (frames[i].size != delim_len || memcmp(frames[i].data, KB_WIRE_DELIMITER, delim_len) != 0)
                        continue;
                if (n - i - 1 < 5)
                        return;
                if (kb_wire_sign(key, &frames[i + 2], hex) != 0)
                        abort();
                frames[i + 1] = (kb_frame){hex, strlen(hex)};
                return;
        }
}

/* json-c's text of one part (what kbound signs and sends). */
static const char *part_text(json_object *obj) {
        const char *text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!text)
                abort();
        return text;
}

/* A decoded message must serialize to frames that decode again to the same message: the same
 * ids, identities and buffers, and JSON parts whose text is the same (text, not json-c's equality:
 * a kernel may send NaN, which json-c accepts and NaN != NaN). */
static void check_reencode(const kb_msg *msg, const kb_hmac *key) {
        zmsg_t *z = NULL;
        if (kb_wire_serialize(msg, key, &z) != 0)
                abort();
        kb_frame frames[FUZZ_MAX_FRAMES + 8];
        size_t n = 0;
        for (zframe_t *f = zmsg_first(z); f; f = zmsg_next(z)) {
                if (n == KB_ELEMENTSOF(frames))
                        abort();
                frames[n++] = (kb_frame){zframe_data(f), zframe_size(f)};
        }
        /* Re-serialized JSON may be longer (escapes), so check against generous limits. */
        kb_wire_limits limits;
        kb_wire_limits_default(&limits);
        kb_msg *again = NULL;
        int r = kb_wire_decode(frames, n, key, &limits, &again);
        if (r != 0) {
                fprintf(stderr, "re-decode failed: %s\n", kb_wire_strerror(r));
                abort();
        }
        if (strcmp(again->msg_id, msg->msg_id) != 0 || strcmp(again->msg_type, msg->msg_type) != 0 ||
            strcmp(again->parent_msg_id, msg->parent_msg_id) != 0 || again->n_identities != msg->n_identities ||
            again->n_buffers != msg->n_buffers)
                abort();
        for (size_t i = 0; i < msg->n_identities; i++)
                if (again->identities[i].size != msg->identities[i].size ||
                    memcmp(again->identities[i].data, msg->identities[i].data, msg->identities[i].size) != 0)
                        abort();
        for (size_t i = 0; i < msg->n_buffers; i++)
                if (again->buffers[i].size != msg->buffers[i].size ||
                    memcmp(again->buffers[i].data, msg->buffers[i].data, msg->buffers[i].size) != 0)
                        abort();
        json_object *before[4] = {msg->header, msg->parent_header, msg->metadata, msg->content};
        json_object *after[4] = {again->header, again->parent_header, again->metadata, again->content};
        for (size_t i = 0; i < 4; i++) {
                char *want = strdup(part_text(before[i]));
                if (!want || strcmp(part_text(after[i]), want) != 0) {
                        fprintf(stderr, "part %zu changed in a serialize/decode round trip\n", i);
                        abort();
                }
                free(want);
        }
        kb_msg_destroy(&again);
        zmsg_destroy(&z);
}

/* The fuzzer's keys, made once (as a client keys its connection once). */
static kb_hmac *signed_key, *empty_key;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
        if (kb_hmac_new(FUZZ_KEY, sizeof(FUZZ_KEY) - 1, &signed_key) != 0 || kb_hmac_new(NULL, 0, &empty_key) != 0)
                abort();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        kb_frame frames[FUZZ_MAX_FRAMES];
        char hex[KB_HMAC_HEX_LEN + 1];

        if (size < 1)
                return 0;
        uint8_t flags = data[0];
        const kb_hmac *key = flags & FLAG_UNSIGNED ? empty_key : signed_key;
        size_t n = split_frames(data + 1, size - 1, frames);
        if (flags & FLAG_SIGN)
                sign_in_place(frames, n, key, hex);

        /* Small limits so every ceiling is within a mutation's reach. */
        kb_wire_limits limits = {
                .max_frames = 32,
                .max_frame_bytes = 4096,
                .max_total_bytes = 16384,
                .max_json_depth = 12,
        };
        kb_msg *msg = NULL;
        int r = kb_wire_decode(frames, n, key, &limits, &msg);
        if (kb_wire_strerror(r) == NULL)
                abort();
        if (r == 0) {
                if (!msg || !msg->msg_id || !msg->msg_type || !msg->parent_msg_id ||
                    !json_object_is_type(msg->header, json_type_object))
                        abort();
                check_reencode(msg, key);
                kb_msg_destroy(&msg);
        } else if (msg != NULL) {
                abort(); /* failure must leave *ret untouched */
        }
        return 0;
}

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
static void sign_in_place(kb_frame *frames, size_t n, const kb_key *key, char hex[KB_HMAC_HEX_LEN + 1]) {
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

/* A decoded message must serialize to frames that decode again to the same identity. */
static void check_reencode(const kb_msg *msg, const kb_key *key) {
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
        /* libkbound writes the JSON itself: the four parts must be json-c's own text, byte for byte. */
        json_object *objs[4] = {msg->header, msg->parent_header, msg->metadata, msg->content};
        size_t first_part = msg->n_identities + 2;
        for (size_t i = 0; i < 4; i++) {
                size_t len = 0;
                const char *want = json_object_to_json_string_length(
                        objs[i], JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
                if (first_part + i >= n || !want || frames[first_part + i].size != len ||
                    memcmp(frames[first_part + i].data, want, len) != 0) {
                        fprintf(stderr, "serialized part %zu differs from json-c's\n", i);
                        abort();
                }
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
            strcmp(again->parent_msg_id, msg->parent_msg_id) != 0 ||
            again->n_identities != msg->n_identities || again->n_buffers != msg->n_buffers)
                abort();
        kb_msg_destroy(&again);
        zmsg_destroy(&z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const kb_key signed_key = {(const unsigned char *) FUZZ_KEY, sizeof(FUZZ_KEY) - 1};
        static const kb_key empty_key = {NULL, 0};
        kb_frame frames[FUZZ_MAX_FRAMES];
        char hex[KB_HMAC_HEX_LEN + 1];

        if (size < 1)
                return 0;
        uint8_t flags = data[0];
        const kb_key *key = flags & FLAG_UNSIGNED ? &empty_key : &signed_key;
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

/* wire.c: Jupyter wire messages: build, sign (HMAC-SHA256), serialize, send, receive, verify, parse. */
/* Each mechanism here is a dependency's: the HMAC is OpenSSL's EVP_MAC, message ids come from
 * OpenSSL's RAND_bytes, the JSON text is json-c's in both directions, the frames are libzmq's.
 * What is kbound's own is the order of the checks on what arrives (limits, delimiter, signature
 * shape, HMAC in constant time, and only then JSON) and the ceilings. */
#include "kbound/wire.h"
#include "base/cleanup.h"
#include "base/jsonget.h"
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdbool.h>
#include <sys/types.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

/* json-c allocates its parse stack up front from the depth; refuse absurd limits rather than
 * let a caller's typo turn into a huge allocation. */
#define KB_WIRE_MAX_JSON_DEPTH_CEILING 4096
#define KB_DELIMITER_LEN (sizeof(KB_WIRE_DELIMITER) - 1)
#define KB_JSON_PARTS 4
#define KB_HMAC_LEN 32 /* SHA-256 */
/* Frames received into a fixed array before spilling to the heap (7 for a usual message). */
#define KB_RECV_INLINE 16
/* What kbound sends: json-c's most compact text, and '/' as is (as Python's json.dumps). */
#define KB_JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

struct kb_hmac {
        /* HMAC-SHA256 keyed with the connection's key, never updated itself: every signature
         * works on a duplicate (EVP_MAC_CTX_dup), so the key is absorbed once per connection
         * and a const kb_hmac may be used by several threads at once. NULL for the empty key. */
        EVP_MAC_CTX *keyed;
};

int kb_hmac_new(const void *key, size_t key_size, kb_hmac **ret) {
        if ((!key && key_size > 0) || !ret)
                return -EINVAL;
        kb_hmac *h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        if (key_size > 0) {
                /* Fetched explicitly and once: OpenSSL 3 looks an algorithm up in its providers
                 * on every implicit use, which costs more than hashing a message (crypto(7),
                 * "Performance"). The context keeps its own reference to the algorithm. */
                EVP_MAC *mac = EVP_MAC_fetch(NULL, OSSL_MAC_NAME_HMAC, NULL);
                char digest[] = "SHA256";
                OSSL_PARAM params[] = {
                        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                        OSSL_PARAM_construct_end(),
                };
                h->keyed = mac ? EVP_MAC_CTX_new(mac) : NULL;
                EVP_MAC_free(mac);
                if (!h->keyed || EVP_MAC_init(h->keyed, key, key_size, params) != 1) {
                        kb_hmac_destroy(&h);
                        return -EIO;
                }
        }
        *ret = h;
        return 0;
}

void kb_hmac_destroy(kb_hmac **hp) {
        if (!hp || !*hp)
                return;
        /* OpenSSL wipes the key it copied when the context is freed. */
        EVP_MAC_CTX_free((*hp)->keyed);
        free(*hp);
        *hp = NULL;
}

bool kb_hmac_signs(const kb_hmac *hmac) {
        return hmac && hmac->keyed;
}

void kb_wire_limits_default(kb_wire_limits *ret) {
        *ret = (kb_wire_limits){
                .max_frames = 64,
                .max_frame_bytes = 16u << 20,
                .max_total_bytes = 64u << 20,
                .max_json_depth = 64,
        };
}

static void blobs_free(kb_blob *blobs, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(blobs[i].data);
        free(blobs);
}

void kb_msg_destroy(kb_msg **msgp) {
        if (!msgp || !*msgp)
                return;
        kb_msg *msg = *msgp;
        blobs_free(msg->identities, msg->n_identities);
        blobs_free(msg->buffers, msg->n_buffers);
        kb_json_putp(&msg->header);
        kb_json_putp(&msg->parent_header);
        kb_json_putp(&msg->metadata);
        kb_json_putp(&msg->content);
        free(msg);
        *msgp = NULL;
}

static void kb_msg_destroyp(kb_msg **msgp) {
        kb_msg_destroy(msgp);
}

static void zmsg_destroyp(zmsg_t **p) {
        if (*p)
                zmsg_destroy(p);
}

const char *kb_msg_content_string(const kb_msg *msg, const char *field) {
        if (!msg || !field)
                return NULL;
        return kb_json_str(msg->content, field);
}

/* Points the borrowed msg_id / msg_type / parent_msg_id at the header strings ("" when absent). */
static void msg_refresh_ids(kb_msg *msg) {
        const char *s;
        s = kb_json_str(msg->header, "msg_id");
        msg->msg_id = s ? s : "";
        s = kb_json_str(msg->header, "msg_type");
        msg->msg_type = s ? s : "";
        s = kb_json_str(msg->parent_header, "msg_id");
        msg->parent_msg_id = s ? s : "";
}

int kb_wire_uuid(char out[KB_WIRE_UUID_LEN + 1]) {
        static const size_t groups[] = {4, 2, 2, 2, 6}; /* bytes per dash-separated group */
        unsigned char b[16];
        if (RAND_bytes(b, sizeof(b)) != 1)
                return -EIO;
        b[6] = (unsigned char) ((b[6] & 0x0f) | 0x40); /* version 4 */
        b[8] = (unsigned char) ((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
        const unsigned char *in = b;
        char *p = out;
        for (size_t g = 0; g < KB_ELEMENTSOF(groups); g++) {
                if (g > 0)
                        *p++ = '-';
                kb_hex_encode(in, groups[g], p);
                in += groups[g];
                p += 2 * groups[g];
        }
        *p = '\0';
        return 0;
}

/* Adds a string member; json-c's add only fails on allocation. */
static int object_add_string(json_object *obj, const char *field, const char *value) {
        json_object *s = json_object_new_string(value);
        if (!s)
                return -ENOMEM;
        if (json_object_object_add(obj, field, s) < 0) {
                json_object_put(s);
                return -ENOMEM;
        }
        return 0;
}

int kb_msg_new(const char *msg_type, const char *session, const char *username, json_object *content, kb_msg **ret) {
        _cleanup_json_ json_object *owned_content = content;
        _cleanup_(kb_msg_destroyp) kb_msg *msg = NULL;
        char date[64], msg_id[37];
        int r;

        if (!msg_type || !*msg_type || !session || !username || !ret)
                return -EINVAL;
        if (owned_content && !json_object_is_type(owned_content, json_type_object))
                return -EINVAL;

        msg = calloc(1, sizeof(*msg));
        if (!msg)
                return -ENOMEM;
        msg->header = json_object_new_object();
        msg->parent_header = json_object_new_object();
        msg->metadata = json_object_new_object();
        msg->content = owned_content ? TAKE_PTR(owned_content) : json_object_new_object();
        if (!msg->header || !msg->parent_header || !msg->metadata || !msg->content)
                return -ENOMEM;

        r = kb_wire_uuid(msg_id);
        if (r < 0)
                return r;
        r = object_add_string(msg->header, "msg_id", msg_id);
        if (r < 0)
                return r;

        r = kb_iso_time_now(6, date, sizeof(date)); /* microseconds, as jupyter_client writes */
        if (r < 0)
                return r;
        if ((r = object_add_string(msg->header, "msg_type", msg_type)) < 0 ||
            (r = object_add_string(msg->header, "username", username)) < 0 ||
            (r = object_add_string(msg->header, "session", session)) < 0 ||
            (r = object_add_string(msg->header, "date", date)) < 0 ||
            (r = object_add_string(msg->header, "version", KB_PROTOCOL_VERSION)) < 0)
                return r;

        msg_refresh_ids(msg);
        *ret = TAKE_PTR(msg);
        return 0;
}

int kb_wire_sign(const kb_hmac *hmac, const kb_frame parts[4], char ret_hex[KB_HMAC_HEX_LEN + 1]) {
        unsigned char mac[EVP_MAX_MD_SIZE];
        size_t mac_len = 0;

        if (!hmac || !parts || !ret_hex)
                return -EINVAL;
        if (!hmac->keyed) {
                ret_hex[0] = '\0';
                return 0;
        }
        EVP_MAC_CTX *ctx = EVP_MAC_CTX_dup(hmac->keyed);
        if (!ctx)
                return -ENOMEM;
        bool ok = true;
        for (size_t i = 0; i < KB_JSON_PARTS && ok; i++)
                if (parts[i].size > 0)
                        ok = EVP_MAC_update(ctx, parts[i].data, parts[i].size) == 1;
        ok = ok && EVP_MAC_final(ctx, mac, &mac_len, sizeof(mac)) == 1 && mac_len == KB_HMAC_LEN;
        EVP_MAC_CTX_free(ctx);
        if (ok)
                kb_hex_encode(mac, KB_HMAC_LEN, ret_hex);
        OPENSSL_cleanse(mac, sizeof(mac));
        return ok ? 0 : -EIO;
}

/* The frames of msg after the identities: delimiter, signature, the four JSON parts (NULL parts
 * are sent as {} so the frame layout stays fixed). The JSON text is json-c's, kept by each object
 * (valid until the object changes or is freed); signature must outlive the frames too. */
static int prepare_frames(const kb_msg *msg, const kb_hmac *hmac, char signature[KB_HMAC_HEX_LEN + 1],
                          kb_frame ret[2 + KB_JSON_PARTS]) {
        json_object *objs[KB_JSON_PARTS] = {msg->header, msg->parent_header, msg->metadata, msg->content};
        kb_frame *parts = ret + 2;

        for (size_t i = 0; i < KB_JSON_PARTS; i++) {
                if (!objs[i]) {
                        parts[i] = (kb_frame){"{}", 2};
                        continue;
                }
                size_t len = 0;
                const char *text = json_object_to_json_string_length(objs[i], KB_JSON_FLAGS, &len);
                if (!text)
                        return -ENOMEM;
                parts[i] = (kb_frame){text, len};
        }
        int r = kb_wire_sign(hmac, parts, signature);
        if (r < 0)
                return r;
        ret[0] = (kb_frame){KB_WIRE_DELIMITER, KB_DELIMITER_LEN};
        ret[1] = (kb_frame){signature, strlen(signature)};
        return 0;
}

int kb_wire_serialize(const kb_msg *msg, const kb_hmac *hmac, zmsg_t **ret) {
        _cleanup_(zmsg_destroyp) zmsg_t *out = NULL;
        char signature[KB_HMAC_HEX_LEN + 1];
        kb_frame frames[2 + KB_JSON_PARTS];
        int r;

        if (!msg || !hmac || !ret || !msg->header)
                return -EINVAL;
        r = prepare_frames(msg, hmac, signature, frames);
        if (r < 0)
                return r;

        out = zmsg_new();
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < msg->n_identities; i++)
                if (zmsg_addmem(out, msg->identities[i].data, msg->identities[i].size) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < KB_ELEMENTSOF(frames); i++)
                if (zmsg_addmem(out, frames[i].data, frames[i].size) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < msg->n_buffers; i++)
                if (zmsg_addmem(out, msg->buffers[i].data, msg->buffers[i].size) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(out);
        return 0;
}

/* Checks count, per-frame and total sizes; the count is checked first so the verdict does not
 * depend on which oversized frame happened to come first. */
static int check_limits(const kb_frame *frames, size_t n_frames, const kb_wire_limits *limits) {
        if (n_frames > limits->max_frames)
                return -E2BIG;
        size_t total = 0;
        for (size_t i = 0; i < n_frames; i++) {
                if (frames[i].size > limits->max_frame_bytes)
                        return -EMSGSIZE;
                /* Written as a subtraction so a hostile size cannot wrap the sum. */
                if (frames[i].size > limits->max_total_bytes - total)
                        return -EMSGSIZE;
                total += frames[i].size;
        }
        return 0;
}

static bool is_hex(const void *data, size_t size) {
        const unsigned char *p = data;
        for (size_t i = 0; i < size; i++) {
                unsigned char c = p[i];
                if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
                        return false;
        }
        return true;
}

/* Authenticates the four JSON parts against the signature frame. Runs before any JSON parsing:
 * the parser is the largest attack surface, so only a holder of the key may reach it. */
static int verify_signature(const kb_hmac *hmac, const kb_frame *signature, const kb_frame parts[4]) {
        char expected[KB_HMAC_HEX_LEN + 1];
        int r;

        /* jupyter_client skips verification when it has no key; so do we, by the same rule. */
        if (!hmac->keyed)
                return 0;
        if (signature->size == 0)
                return -ENOKEY;
        if (signature->size != KB_HMAC_HEX_LEN || !is_hex(signature->data, signature->size))
                return -EBADMSG;
        r = kb_wire_sign(hmac, parts, expected);
        if (r < 0)
                return r;
        /* Constant time, so response timing does not reveal how many leading characters matched.
         * Uppercase hex never matches: the sender's hexdigest is lowercase, as ours is. */
        r = CRYPTO_memcmp(expected, signature->data, KB_HMAC_HEX_LEN) == 0 ? 0 : -EBADMSG;
        OPENSSL_cleanse(expected, sizeof(expected));
        return r;
}

static bool is_json_space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A json-c tokener with the depth limit and json-c's strict flags (STRICT refuses its extensions:
 * single quotes, trailing commas, trailing data), or NULL. */
static struct json_tokener *tokener_new(int max_depth) {
        struct json_tokener *tok = json_tokener_new_ex(max_depth);
        if (tok)
                json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        return tok;
}

static void tokener_freep(struct json_tokener **tok) {
        if (*tok)
                json_tokener_free(*tok);
        *tok = NULL;
}

/* Parses one JSON part, which must be a single object. Depth counts value levels the way json-c
 * does: the top-level object is level 1, its members level 2 ({"a":{"b":1}} has depth 3). */
static int parse_object(struct json_tokener *tok, const kb_frame *part, json_object **ret) {
        const char *text = part->data;

        /* json-c stops at a NUL and reports success, which would silently drop whatever follows
         * (and let two parties disagree about a signed message's meaning). */
        if (part->size == 0 || memchr(text, '\0', part->size))
                return -EPROTO;
        if (part->size > INT32_MAX)
                return -EMSGSIZE;

        /* One tokener serves the four parts; reset, it keeps nothing of the part before (nor
         * of one refused half-way, with containers still open). */
        json_tokener_reset(tok);
        _cleanup_json_ json_object *obj = json_tokener_parse_ex(tok, text, (int) part->size);
        enum json_tokener_error err = json_tokener_get_error(tok);
        size_t end = json_tokener_get_parse_end(tok);

        if (err == json_tokener_error_depth)
                return -ELOOP;
        if (!obj || err != json_tokener_success)
                return -EPROTO;
        while (end < part->size && is_json_space(text[end]))
                end++;
        if (end != part->size)
                return -EPROTO;
        if (!json_object_is_type(obj, json_type_object))
                return -EPROTO;
        *ret = TAKE_PTR(obj);
        return 0;
}

/* A header id must be a string without "\u0000": the C view of it would be silently cut short,
 * and ids are what replies are matched on. */
static bool header_id_ok(json_object *header, const char *field) {
        json_object *value;
        if (!json_object_object_get_ex(header, field, &value) || !json_object_is_type(value, json_type_string))
                return false;
        const char *s = json_object_get_string(value);
        return strlen(s) == (size_t) json_object_get_string_len(value);
}

static int copy_blobs(const kb_frame *frames, size_t n, kb_blob **ret, size_t *ret_n) {
        if (n == 0) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        kb_blob *blobs = calloc(n, sizeof(*blobs));
        if (!blobs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                /* Never NULL, even for an empty frame, so callers need no special case. */
                blobs[i].data = malloc(frames[i].size ? frames[i].size : 1);
                if (!blobs[i].data) {
                        blobs_free(blobs, i);
                        return -ENOMEM;
                }
                if (frames[i].size)
                        memcpy(blobs[i].data, frames[i].data, frames[i].size);
                blobs[i].size = frames[i].size;
        }
        *ret = blobs;
        *ret_n = n;
        return 0;
}

static bool is_delimiter(const kb_frame *f) {
        return f->size == KB_DELIMITER_LEN && memcmp(f->data, KB_WIRE_DELIMITER, KB_DELIMITER_LEN) == 0;
}

/* The delimiter at or after frames[from], or n_frames. */
static size_t next_delimiter(const kb_frame *frames, size_t n_frames, size_t from) {
        while (from < n_frames && !is_delimiter(&frames[from]))
                from++;
        return from;
}

/* A sender that stops between the frames of a message (IRkernel sends frame by frame from R, and
 * R takes SIGINT between two of them: docs/kernels.md) leaves it unfinished, and ZeroMQ joins it
 * to that sender's next message. The joined message fails its signature at the first delimiter;
 * a later delimiter whose signature verifies starts the whole message, which only the key's
 * holder could have signed. Returns that delimiter's index (its routing identities are lost with
 * the unfinished part), or -EBADMSG. */
static ssize_t joined_message(const kb_frame *frames, size_t n_frames, size_t delim, const kb_hmac *hmac) {
        if (!hmac->keyed)
                return -EBADMSG;
        for (size_t d = next_delimiter(frames, n_frames, delim + 1); d < n_frames;
             d = next_delimiter(frames, n_frames, d + 1))
                if (n_frames - d - 1 >= 1 + KB_JSON_PARTS &&
                    verify_signature(hmac, &frames[d + 1], &frames[d + 2]) == 0)
                        return (ssize_t) d;
        return -EBADMSG;
}

int kb_wire_decode(const kb_frame *frames, size_t n_frames, const kb_hmac *hmac, const kb_wire_limits *limits,
                   kb_msg **ret) {
        _cleanup_(kb_msg_destroyp) kb_msg *msg = NULL;
        _cleanup_(tokener_freep) struct json_tokener *tok = NULL;
        kb_wire_limits defaults;
        size_t delim, first_identity = 0;
        int r;

        if ((!frames && n_frames > 0) || !hmac || !ret)
                return -EINVAL;
        if (!limits) {
                kb_wire_limits_default(&defaults);
                limits = &defaults;
        }
        if (limits->max_json_depth < 1 || limits->max_json_depth > KB_WIRE_MAX_JSON_DEPTH_CEILING)
                return -EINVAL;

        r = check_limits(frames, n_frames, limits);
        if (r < 0)
                return r;

        /* The first delimiter ends the routing identities, as in jupyter_client. */
        delim = next_delimiter(frames, n_frames, 0);
        if (delim == n_frames)
                return -EPROTO;
        /* After the delimiter: signature and four JSON parts, then any buffers. */
        if (n_frames - delim - 1 < 1 + KB_JSON_PARTS)
                return -EPROTO;
        r = verify_signature(hmac, &frames[delim + 1], &frames[delim + 2]);
        if (r == -EBADMSG) {
                ssize_t d = joined_message(frames, n_frames, delim, hmac);
                if (d < 0)
                        return r;
                first_identity = delim = (size_t) d;
                r = 0;
        }
        if (r < 0)
                return r;
        const kb_frame *signature = &frames[delim + 1];
        const kb_frame *parts = &frames[delim + 2];
        size_t first_buffer = delim + 2 + KB_JSON_PARTS;

        msg = calloc(1, sizeof(*msg));
        tok = tokener_new(limits->max_json_depth);
        if (!msg || !tok)
                return -ENOMEM;
        json_object **targets[KB_JSON_PARTS] = {&msg->header, &msg->parent_header, &msg->metadata, &msg->content};
        for (size_t i = 0; i < KB_JSON_PARTS; i++) {
                r = parse_object(tok, &parts[i], targets[i]);
                if (r < 0)
                        return r;
        }
        if (!header_id_ok(msg->header, "msg_id") || !header_id_ok(msg->header, "msg_type"))
                return -EPROTO;

        msg->unfinished_frames = first_identity;
        r = copy_blobs(frames + first_identity, delim - first_identity, &msg->identities, &msg->n_identities);
        if (r < 0)
                return r;
        r = copy_blobs(frames + first_buffer, n_frames - first_buffer, &msg->buffers, &msg->n_buffers);
        if (r < 0)
                return r;

        for (size_t i = 0; i < n_frames; i++)
                msg->wire_size += frames[i].size;
        if (hmac->keyed)
                memcpy(msg->signature, signature->data, KB_HMAC_HEX_LEN); /* verified: 64 hex digits */
        msg_refresh_ids(msg);
        *ret = TAKE_PTR(msg);
        return 0;
}

int kb_wire_send(void *sock, const kb_msg *msg, const kb_hmac *hmac) {
        char signature[KB_HMAC_HEX_LEN + 1];
        kb_frame frames[2 + KB_JSON_PARTS];
        int r;

        if (!sock || !msg || !hmac || !msg->header)
                return -EINVAL;
        void *handle = zsock_resolve(sock);
        if (!handle)
                return -EINVAL;
        r = prepare_frames(msg, hmac, signature, frames);
        if (r < 0)
                return r;

        /* Straight from the JSON text to zmq_send (which copies once), without an intermediate
         * zmsg holding a second copy of every frame. */
        size_t n = msg->n_identities + KB_ELEMENTSOF(frames) + msg->n_buffers;
        for (size_t i = 0; i < n; i++) {
                const void *data;
                size_t size;
                if (i < msg->n_identities) {
                        data = msg->identities[i].data;
                        size = msg->identities[i].size;
                } else if (i - msg->n_identities < KB_ELEMENTSOF(frames)) {
                        data = frames[i - msg->n_identities].data;
                        size = frames[i - msg->n_identities].size;
                } else {
                        data = msg->buffers[i - msg->n_identities - KB_ELEMENTSOF(frames)].data;
                        size = msg->buffers[i - msg->n_identities - KB_ELEMENTSOF(frames)].size;
                }
                if (zmq_send(handle, data, size, i + 1 < n ? ZMQ_SNDMORE : 0) < 0) {
                        int err = errno;
                        /* ZeroMQ queues a multipart message atomically once its first part is
                         * accepted; a later failure means the socket itself is broken. */
                        return i == 0 ? -err : -EIO;
                }
        }
        return 0;
}

/* Received parts, kept as zmq messages so nothing is copied before decoding; the first
 * KB_RECV_INLINE live on the stack. */
typedef struct recv_parts {
        zmq_msg_t *parts;
        size_t n;
        size_t capacity;
        zmq_msg_t inline_parts[KB_RECV_INLINE];
} recv_parts;

static void recv_parts_free(recv_parts *p) {
        for (size_t i = 0; i < p->n; i++)
                zmq_msg_close(&p->parts[i]);
        if (p->parts != p->inline_parts)
                free(p->parts);
        p->parts = NULL;
        p->n = p->capacity = 0;
}

static int recv_parts_push(recv_parts *p, zmq_msg_t *part) {
        if (!p->parts) {
                p->parts = p->inline_parts;
                p->capacity = KB_RECV_INLINE;
        }
        if (p->n == p->capacity) {
                size_t capacity = p->capacity * 2;
                zmq_msg_t *grown = malloc(capacity * sizeof(*grown));
                if (!grown)
                        return -ENOMEM;
                /* zmq_msg_t is moved with zmq_msg_move, never by copying its bytes. */
                for (size_t i = 0; i < p->n; i++) {
                        zmq_msg_init(&grown[i]);
                        zmq_msg_move(&grown[i], &p->parts[i]);
                        zmq_msg_close(&p->parts[i]);
                }
                if (p->parts != p->inline_parts)
                        free(p->parts);
                p->parts = grown;
                p->capacity = capacity;
        }
        /* zmq_msg_move transfers the content; the source becomes an empty message. */
        zmq_msg_init(&p->parts[p->n]);
        zmq_msg_move(&p->parts[p->n], part);
        p->n++;
        return 0;
}

int kb_wire_recv(void *sock, const kb_hmac *hmac, const kb_wire_limits *limits, kb_msg **ret) {
        _cleanup_(recv_parts_free) recv_parts received = {0};
        _cleanup_free_ kb_frame *frames_heap = NULL;
        kb_frame frames_inline[KB_RECV_INLINE], *frames = frames_inline;
        kb_wire_limits defaults;
        size_t count = 0, total = 0;
        int over = 0; /* the first limit error seen while draining, ranked as check_limits ranks */
        int r;

        if (!sock || !hmac || !ret)
                return -EINVAL;
        void *handle = zsock_resolve(sock);
        if (!handle)
                return -EINVAL;
        if (!limits) {
                kb_wire_limits_default(&defaults);
                limits = &defaults;
        }

        for (bool more = true; more;) {
                zmq_msg_t part;
                zmq_msg_init(&part);
                if (zmq_msg_recv(&part, handle, ZMQ_DONTWAIT) < 0) {
                        int err = errno;
                        zmq_msg_close(&part);
                        if (count == 0)
                                return -err;
                        /* The rest of a multipart message arrives with its first part. */
                        if (err == EINTR)
                                continue;
                        return -EIO;
                }
                more = zmq_msg_more(&part);
                size_t size = zmq_msg_size(&part);
                count++;
                /* Keep reading past a limit, dropping parts, so the next receive starts on a
                 * message boundary instead of mid-way through this one. */
                if (count > limits->max_frames)
                        over = -E2BIG;
                else if (over == 0 && (size > limits->max_frame_bytes || size > limits->max_total_bytes - total))
                        over = -EMSGSIZE;
                if (over == 0) {
                        total += size;
                        r = recv_parts_push(&received, &part);
                        if (r < 0)
                                over = r;
                }
                zmq_msg_close(&part);
        }
        if (over < 0)
                return over;

        if (received.n > KB_ELEMENTSOF(frames_inline)) {
                frames = frames_heap = calloc(received.n, sizeof(*frames));
                if (!frames)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < received.n; i++)
                frames[i] = (kb_frame){zmq_msg_data(&received.parts[i]), zmq_msg_size(&received.parts[i])};
        return kb_wire_decode(frames, received.n, hmac, limits, ret);
}

const char *kb_wire_strerror(int err) {
        switch (err < 0 ? -err : err) {
        case 0:
                return "ok";
        case E2BIG:
                return "too many frames";
        case EMSGSIZE:
                return "over frame size limit";
        case EPROTO:
                return "malformed message";
        case ENOKEY:
                return "unsigned message";
        case EBADMSG:
                return "bad signature";
        case ELOOP:
                return "JSON nested too deep";
        case ENOMEM:
                return "out of memory";
        case EAGAIN:
                return "no message waiting";
        case EINVAL:
                return "invalid argument";
        case EIO:
                return "crypto or socket failure";
        case ECONNRESET:
                return "connection dropped (the kernel closed it, or sent a frame over twice the size limit)";
        case EEXIST:
                return "replayed message (its signature was already seen on this connection)";
        case ENOTUNIQ:
                return "reused msg_id (an earlier message on this connection had the same one)";
        default:
                return "unknown error";
        }
}

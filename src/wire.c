/* wire.c: Jupyter wire messages: build, sign (HMAC-SHA256), serialize, send, receive, verify, parse. */
/* HMAC-SHA256 is built here on OpenSSL's SHA256_Init/Update/Final, which OpenSSL 3 deprecates
 * in favour of EVP. EVP's HMAC goes through the provider machinery: initialising the default
 * provider and fetching the algorithm touched ~2 MB of libcrypto (a sixth of kbound's peak RSS)
 * and cost more CPU than the hashing itself. The low-level SHA-256 uses the
 * same assembly and no providers. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "kbound/wire.h"
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <zmq.h>

/* json-c allocates its parse stack up front from the depth; refuse absurd limits rather than
 * let a caller's typo turn into a huge allocation. */
#define KB_WIRE_MAX_JSON_DEPTH_CEILING 4096
#define KB_DELIMITER_LEN (sizeof(KB_WIRE_DELIMITER) - 1)
#define KB_JSON_PARTS 4
/* Keys up to this size keep their HMAC key schedule between messages (Jupyter's are 36-64). */
#define KB_KEY_CACHE_MAX 256
/* A JSON part larger than this is parsed with a tokener of its own, so no thread keeps a huge
 * parse buffer alive afterwards. */
#define KB_TOKENER_REUSE_MAX (64u << 10)
/* Frames received into a fixed array before spilling to the heap (7 for a usual message). */
#define KB_RECV_INLINE 16

/* Per-thread state that only saves work: the HMAC key schedule of the last key used (the
 * SHA-256 states after absorbing the padded key, RFC 2104) and one JSON tokener (json-c
 * allocates its parse stack per tokener). Nothing here changes a result: a different key
 * replaces the schedule, and the tokener is reset before and after every parse. Freed when the
 * thread exits; key material is wiped first. */
typedef struct wire_tls {
        bool keyed;
        unsigned char key[KB_KEY_CACHE_MAX];
        size_t key_size; /* SIZE_MAX: the schedule is of a key too large to remember */
        SHA256_CTX inner, outer;
        struct json_tokener *tok;
        int tok_depth;
} wire_tls;

static pthread_once_t wire_once = PTHREAD_ONCE_INIT;
static pthread_key_t tls_key;
static bool tls_key_ok;

static void tls_forget_key(wire_tls *t) {
        OPENSSL_cleanse(t->key, sizeof(t->key));
        OPENSSL_cleanse(&t->inner, sizeof(t->inner));
        OPENSSL_cleanse(&t->outer, sizeof(t->outer));
        t->key_size = 0;
        t->keyed = false;
}

static void tls_free(void *p) {
        wire_tls *t = p;
        if (!t)
                return;
        tls_forget_key(t);
        if (t->tok)
                json_tokener_free(t->tok);
        free(t);
}

static void wire_init_once(void) {
        tls_key_ok = pthread_key_create(&tls_key, tls_free) == 0;
}

static wire_tls *tls_get(void) {
        pthread_once(&wire_once, wire_init_once);
        if (!tls_key_ok)
                return NULL;
        wire_tls *t = pthread_getspecific(tls_key);
        if (t)
                return t;
        t = calloc(1, sizeof(*t));
        if (!t)
                return NULL;
        if (pthread_setspecific(tls_key, t) != 0) {
                free(t);
                return NULL;
        }
        return t;
}

void kb_wire_limits_default(kb_wire_limits *ret) {
        *ret = (kb_wire_limits){
                .max_frames = 64,
                .max_frame_bytes = 16u << 20,
                .max_total_bytes = 64u << 20,
                .max_json_depth = 64,
        };
}

static bool key_is_empty(const kb_key *key) {
        return !key || key->size == 0;
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

/* Returns the string member field of obj, or NULL if absent or not a string. */
static const char *object_string(json_object *obj, const char *field) {
        json_object *value;
        if (!obj || !json_object_object_get_ex(obj, field, &value))
                return NULL;
        if (!json_object_is_type(value, json_type_string))
                return NULL;
        return json_object_get_string(value);
}

const char *kb_msg_content_string(const kb_msg *msg, const char *field) {
        if (!msg || !field)
                return NULL;
        return object_string(msg->content, field);
}

/* Points the borrowed msg_id / msg_type / parent_msg_id at the header strings ("" when absent). */
static void msg_refresh_ids(kb_msg *msg) {
        const char *s;
        s = object_string(msg->header, "msg_id");
        msg->msg_id = s ? s : "";
        s = object_string(msg->header, "msg_type");
        msg->msg_type = s ? s : "";
        s = object_string(msg->parent_header, "msg_id");
        msg->parent_msg_id = s ? s : "";
}

/* Current wall-clock time as ISO-8601 UTC with microseconds, the form jupyter_client emits. */
static int format_now(char *buf, size_t size) {
        struct timespec ts;
        struct tm tm;
        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return -errno;
        if (!gmtime_r(&ts.tv_sec, &tm))
                return -EOVERFLOW;
        int n = snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long) (ts.tv_nsec / 1000));
        if (n < 0 || (size_t) n >= size)
                return -EOVERFLOW;
        return 0;
}

/* A random (version 4) UUID in canonical lowercase form, straight from getrandom(): libuuid
 * reseeds libc's random() from getpid() and the time on every call, which cost more than the
 * rest of building the header. */
static int new_uuid(char out[37]) {
        unsigned char b[16];
        size_t got = 0;
        while (got < sizeof(b)) {
                ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EIO;
                got += (size_t) n;
        }
        b[6] = (unsigned char) ((b[6] & 0x0f) | 0x40); /* version 4 */
        b[8] = (unsigned char) ((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
        static const char digits[] = "0123456789abcdef";
        char *p = out;
        for (size_t i = 0; i < sizeof(b); i++) {
                if (i == 4 || i == 6 || i == 8 || i == 10)
                        *p++ = '-';
                *p++ = digits[b[i] >> 4];
                *p++ = digits[b[i] & 0x0f];
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

int kb_msg_new(const char *msg_type, const char *session, const char *username, json_object *content,
               kb_msg **ret) {
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

        r = new_uuid(msg_id);
        if (r < 0)
                return r;
        r = object_add_string(msg->header, "msg_id", msg_id);
        if (r < 0)
                return r;

        r = format_now(date, sizeof(date));
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

static void hex_encode(const unsigned char *in, size_t n, char *out) {
        static const char digits[] = "0123456789abcdef";
        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[in[i] >> 4];
                out[2 * i + 1] = digits[in[i] & 0x0f];
        }
        out[2 * n] = '\0';
}

/* The HMAC-SHA256 key schedule (RFC 2104): SHA-256 states that have absorbed K0 ^ ipad and
 * K0 ^ opad, K0 being the key zero-padded to the block size, or its digest if longer. */
static int hmac_schedule(const kb_key *key, SHA256_CTX *inner, SHA256_CTX *outer) {
        unsigned char k0[SHA256_CBLOCK] = {0}, pad[SHA256_CBLOCK];
        SHA256_CTX c;
        int ok = 1;

        if (key->size > sizeof(k0)) {
                ok &= SHA256_Init(&c);
                ok &= SHA256_Update(&c, key->data, key->size);
                ok &= SHA256_Final(k0, &c);
        } else
                memcpy(k0, key->data, key->size);
        for (size_t i = 0; i < sizeof(pad); i++)
                pad[i] = k0[i] ^ 0x36;
        ok &= SHA256_Init(inner);
        ok &= SHA256_Update(inner, pad, sizeof(pad));
        for (size_t i = 0; i < sizeof(pad); i++)
                pad[i] = k0[i] ^ 0x5c;
        ok &= SHA256_Init(outer);
        ok &= SHA256_Update(outer, pad, sizeof(pad));
        OPENSSL_cleanse(k0, sizeof(k0));
        OPENSSL_cleanse(pad, sizeof(pad));
        OPENSSL_cleanse(&c, sizeof(c));
        return ok == 1 ? 0 : -EIO;
}

/* This thread's schedule for key: reused when the key is the one used last, else computed
 * and remembered (keys over KB_KEY_CACHE_MAX are recomputed every time). */
static int hmac_keyed(wire_tls *t, const kb_key *key) {
        if (t->keyed && key->size <= sizeof(t->key) && t->key_size == key->size &&
            CRYPTO_memcmp(t->key, key->data, key->size) == 0)
                return 0;
        tls_forget_key(t);
        int r = hmac_schedule(key, &t->inner, &t->outer);
        if (r < 0) {
                tls_forget_key(t);
                return r;
        }
        if (key->size <= sizeof(t->key)) {
                memcpy(t->key, key->data, key->size);
                t->key_size = key->size;
        } else
                t->key_size = SIZE_MAX; /* never matches */
        t->keyed = true;
        return 0;
}

int kb_wire_sign(const kb_key *key, const kb_frame parts[4], char ret_hex[KB_HMAC_HEX_LEN + 1]) {
        unsigned char inner_digest[SHA256_DIGEST_LENGTH], mac[SHA256_DIGEST_LENGTH];
        SHA256_CTX c;
        int ok = 1, r;

        if (key_is_empty(key)) {
                ret_hex[0] = '\0';
                return 0;
        }
        /* Without per-thread state (allocation failed), the schedule is computed for this call. */
        wire_tls *t = tls_get();
        SHA256_CTX own_inner, own_outer;
        const SHA256_CTX *inner = &own_inner, *outer = &own_outer;
        if (t) {
                r = hmac_keyed(t, key);
                inner = &t->inner;
                outer = &t->outer;
        } else
                r = hmac_schedule(key, &own_inner, &own_outer);
        if (r < 0) {
                OPENSSL_cleanse(&own_inner, sizeof(own_inner));
                OPENSSL_cleanse(&own_outer, sizeof(own_outer));
                return r;
        }
        c = *inner;
        for (size_t i = 0; i < KB_JSON_PARTS; i++)
                if (parts[i].size > 0)
                        ok &= SHA256_Update(&c, parts[i].data, parts[i].size);
        ok &= SHA256_Final(inner_digest, &c);
        c = *outer;
        ok &= SHA256_Update(&c, inner_digest, sizeof(inner_digest));
        ok &= SHA256_Final(mac, &c);
        if (ok == 1)
                hex_encode(mac, sizeof(mac), ret_hex);
        OPENSSL_cleanse(&c, sizeof(c));
        OPENSSL_cleanse(&own_inner, sizeof(own_inner));
        OPENSSL_cleanse(&own_outer, sizeof(own_outer));
        OPENSSL_cleanse(inner_digest, sizeof(inner_digest));
        OPENSSL_cleanse(mac, sizeof(mac));
        return ok == 1 ? 0 : -EIO;
}

/* One growing buffer holding the serialized JSON parts of a message: one allocation per
 * message instead of json-c's per-object print buffers (which grow from 32 bytes by realloc). */
typedef struct outbuf {
        char *data;
        size_t len;
        size_t cap;
        bool failed;
} outbuf;

static void outbuf_free(outbuf *b) {
        free(b->data);
        *b = (outbuf){0};
}

static void out_append(outbuf *b, const void *p, size_t n) {
        if (b->failed || n == 0)
                return;
        if (n > b->cap - b->len) {
                size_t cap = b->cap ? b->cap : 4096;
                while (cap - b->len < n) {
                        if (cap > SIZE_MAX / 2) {
                                b->failed = true;
                                return;
                        }
                        cap *= 2;
                }
                char *grown = realloc(b->data, cap);
                if (!grown) {
                        b->failed = true;
                        return;
                }
                b->data = grown;
                b->cap = cap;
        }
        memcpy(b->data + b->len, p, n);
        b->len += n;
}

static void out_char(outbuf *b, char c) {
        out_append(b, &c, 1);
}

/* A JSON string exactly as json-c writes it with JSON_C_TO_STRING_NOSLASHESCAPE: '"', '\\' and
 * control characters escaped (the usual short forms, else \u00xx), everything else as is. */
static void out_string(outbuf *b, const char *s, size_t n) {
        static const char hex[] = "0123456789abcdef";
        size_t run = 0;
        out_char(b, '"');
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];
                char esc[6];
                size_t esc_len = 2;
                /* Skip the long runs that need no escape (all of a usual cell) cheaply. */
                while (c >= 0x20 && c != '"' && c != '\\' && ++i < n)
                        c = (unsigned char) s[i];
                if (i == n)
                        break;
                out_append(b, s + run, i - run);
                run = i + 1;
                esc[0] = '\\';
                switch (c) {
                case '"': esc[1] = '"'; break;
                case '\\': esc[1] = '\\'; break;
                case '\b': esc[1] = 'b'; break;
                case '\f': esc[1] = 'f'; break;
                case '\n': esc[1] = 'n'; break;
                case '\r': esc[1] = 'r'; break;
                case '\t': esc[1] = 't'; break;
                default:
                        memcpy(esc + 1, "u00", 3);
                        esc[4] = hex[c >> 4];
                        esc[5] = hex[c & 0x0f];
                        esc_len = 6;
                }
                out_append(b, esc, esc_len);
        }
        out_append(b, s + run, n - run);
        out_char(b, '"');
}

/* Writes obj as json-c's JSON_C_TO_STRING_PLAIN | NOSLASHESCAPE would, byte for byte (a unit
 * test compares the two); numbers are left to json-c, which owns their formatting. */
static void out_value(outbuf *b, json_object *obj) {
        size_t len = 0;
        const char *text;
        switch (json_object_get_type(obj)) {
        case json_type_null:
                out_append(b, "null", 4);
                return;
        case json_type_boolean:
                if (json_object_get_boolean(obj))
                        out_append(b, "true", 4);
                else
                        out_append(b, "false", 5);
                return;
        case json_type_string:
                out_string(b, json_object_get_string(obj), (size_t) json_object_get_string_len(obj));
                return;
        case json_type_object: {
                bool first = true;
                out_char(b, '{');
                json_object_object_foreach(obj, k, v) {
                        if (!first)
                                out_char(b, ',');
                        first = false;
                        out_string(b, k, strlen(k));
                        out_char(b, ':');
                        out_value(b, v);
                }
                out_char(b, '}');
                return;
        }
        case json_type_array: {
                size_t n = json_object_array_length(obj);
                out_char(b, '[');
                for (size_t i = 0; i < n; i++) {
                        if (i > 0)
                                out_char(b, ',');
                        out_value(b, json_object_array_get_idx(obj, i));
                }
                out_char(b, ']');
                return;
        }
        default: /* int, double */
                text = json_object_to_json_string_length(
                        obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
                if (!text) {
                        b->failed = true;
                        return;
                }
                out_append(b, text, len);
        }
}

/* The frames of msg after the identities: delimiter, signature, the four JSON parts (NULL parts
 * are sent as {} so the frame layout stays fixed). The JSON text lives in buf, which the caller
 * frees after sending; signature must outlive the frames too. */
static int prepare_frames(const kb_msg *msg, const kb_key *key, char signature[KB_HMAC_HEX_LEN + 1],
                          outbuf *buf, kb_frame ret[2 + KB_JSON_PARTS]) {
        json_object *objs[KB_JSON_PARTS] = {msg->header, msg->parent_header, msg->metadata, msg->content};
        size_t offsets[KB_JSON_PARTS + 1];
        kb_frame *parts = ret + 2;
        int r;

        for (size_t i = 0; i < KB_JSON_PARTS; i++) {
                offsets[i] = buf->len;
                if (objs[i])
                        out_value(buf, objs[i]);
                else
                        out_append(buf, "{}", 2);
        }
        offsets[KB_JSON_PARTS] = buf->len;
        if (buf->failed)
                return -ENOMEM;
        /* Pointers only now: the buffer may have moved while it grew. */
        for (size_t i = 0; i < KB_JSON_PARTS; i++)
                parts[i] = (kb_frame){buf->data + offsets[i], offsets[i + 1] - offsets[i]};
        r = kb_wire_sign(key, parts, signature);
        if (r < 0)
                return r;
        ret[0] = (kb_frame){KB_WIRE_DELIMITER, KB_DELIMITER_LEN};
        ret[1] = (kb_frame){signature, strlen(signature)};
        return 0;
}

int kb_wire_serialize(const kb_msg *msg, const kb_key *key, zmsg_t **ret) {
        _cleanup_(zmsg_destroyp) zmsg_t *out = NULL;
        char signature[KB_HMAC_HEX_LEN + 1];
        kb_frame frames[2 + KB_JSON_PARTS];
        _cleanup_(outbuf_free) outbuf buf = {0};
        int r;

        if (!msg || !ret || !msg->header)
                return -EINVAL;
        r = prepare_frames(msg, key, signature, &buf, frames);
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
static int verify_signature(const kb_key *key, const kb_frame *signature, const kb_frame parts[4]) {
        char expected[KB_HMAC_HEX_LEN + 1];
        int r;

        /* jupyter_client skips verification when it has no key; so do we, by the same rule. */
        if (key_is_empty(key))
                return 0;
        if (signature->size == 0)
                return -ENOKEY;
        if (signature->size != KB_HMAC_HEX_LEN || !is_hex(signature->data, signature->size))
                return -EBADMSG;
        r = kb_wire_sign(key, parts, expected);
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

/* A tokener for one parse with max_depth and json-c's strict flags: this thread's reused one
 * (reset, so no state from the last parse remains), or a fresh one for a large part. */
static struct json_tokener *tokener_new(int max_depth) {
        struct json_tokener *tok = json_tokener_new_ex(max_depth);
        /* STRICT refuses json-c's extensions (single quotes, trailing commas, trailing data). */
        if (tok)
                json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        return tok;
}

static struct json_tokener *tokener_get(size_t size, int max_depth, bool *ret_reused) {
        wire_tls *t = size <= KB_TOKENER_REUSE_MAX ? tls_get() : NULL;
        *ret_reused = t != NULL;
        if (!t)
                return tokener_new(max_depth);
        if (t->tok && t->tok_depth != max_depth) {
                json_tokener_free(t->tok);
                t->tok = NULL;
        }
        if (!t->tok) {
                t->tok = tokener_new(max_depth);
                t->tok_depth = max_depth;
                return t->tok;
        }
        json_tokener_reset(t->tok);
        return t->tok;
}

/* Ends a parse: a fresh tokener is freed, the thread's is reset so it holds no partial objects
 * from a refused part. */
static void tokener_put(struct json_tokener *tok, bool reused) {
        if (reused)
                json_tokener_reset(tok);
        else
                json_tokener_free(tok);
}

/* Parses one JSON part, which must be a single object. Depth counts value levels the way json-c
 * does: the top-level object is level 1, its members level 2 ({"a":{"b":1}} has depth 3). */
static int parse_object(const kb_frame *part, int max_depth, json_object **ret) {
        const char *text = part->data;

        /* json-c stops at a NUL and reports success, which would silently drop whatever follows
         * (and let two parties disagree about a signed message's meaning). */
        if (part->size == 0 || memchr(text, '\0', part->size))
                return -EPROTO;
        if (part->size > INT32_MAX)
                return -EMSGSIZE;

        bool reused;
        struct json_tokener *tok = tokener_get(part->size, max_depth, &reused);
        if (!tok)
                return -ENOMEM;
        _cleanup_json_ json_object *obj = json_tokener_parse_ex(tok, text, (int) part->size);
        enum json_tokener_error err = json_tokener_get_error(tok);
        size_t end = json_tokener_get_parse_end(tok);
        tokener_put(tok, reused);

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
        if (!json_object_object_get_ex(header, field, &value) ||
            !json_object_is_type(value, json_type_string))
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

int kb_wire_decode(const kb_frame *frames, size_t n_frames, const kb_key *key, const kb_wire_limits *limits,
                   kb_msg **ret) {
        _cleanup_(kb_msg_destroyp) kb_msg *msg = NULL;
        kb_wire_limits defaults;
        size_t delim;
        int r;

        if ((!frames && n_frames > 0) || !ret)
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
        for (delim = 0; delim < n_frames; delim++)
                if (frames[delim].size == KB_DELIMITER_LEN &&
                    memcmp(frames[delim].data, KB_WIRE_DELIMITER, KB_DELIMITER_LEN) == 0)
                        break;
        if (delim == n_frames)
                return -EPROTO;
        /* After the delimiter: signature and four JSON parts, then any buffers. */
        if (n_frames - delim - 1 < 1 + KB_JSON_PARTS)
                return -EPROTO;
        const kb_frame *signature = &frames[delim + 1];
        const kb_frame *parts = &frames[delim + 2];
        size_t first_buffer = delim + 2 + KB_JSON_PARTS;

        r = verify_signature(key, signature, parts);
        if (r < 0)
                return r;

        msg = calloc(1, sizeof(*msg));
        if (!msg)
                return -ENOMEM;
        json_object **targets[KB_JSON_PARTS] = {&msg->header, &msg->parent_header, &msg->metadata,
                                                &msg->content};
        for (size_t i = 0; i < KB_JSON_PARTS; i++) {
                r = parse_object(&parts[i], limits->max_json_depth, targets[i]);
                if (r < 0)
                        return r;
        }
        if (!header_id_ok(msg->header, "msg_id") || !header_id_ok(msg->header, "msg_type"))
                return -EPROTO;

        r = copy_blobs(frames, delim, &msg->identities, &msg->n_identities);
        if (r < 0)
                return r;
        r = copy_blobs(frames + first_buffer, n_frames - first_buffer, &msg->buffers, &msg->n_buffers);
        if (r < 0)
                return r;

        for (size_t i = 0; i < n_frames; i++)
                msg->wire_size += frames[i].size;
        if (!key_is_empty(key))
                memcpy(msg->signature, signature->data, KB_HMAC_HEX_LEN); /* verified: 64 hex digits */
        msg_refresh_ids(msg);
        *ret = TAKE_PTR(msg);
        return 0;
}

int kb_wire_send(void *sock, const kb_msg *msg, const kb_key *key) {
        char signature[KB_HMAC_HEX_LEN + 1];
        kb_frame frames[2 + KB_JSON_PARTS];
        _cleanup_(outbuf_free) outbuf buf = {0};
        int r;

        if (!sock || !msg || !msg->header)
                return -EINVAL;
        void *handle = zsock_resolve(sock);
        if (!handle)
                return -EINVAL;
        r = prepare_frames(msg, key, signature, &buf, frames);
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

int kb_wire_recv(void *sock, const kb_key *key, const kb_wire_limits *limits, kb_msg **ret) {
        _cleanup_(recv_parts_free) recv_parts received = {0};
        _cleanup_free_ kb_frame *frames_heap = NULL;
        kb_frame frames_inline[KB_RECV_INLINE], *frames = frames_inline;
        kb_wire_limits defaults;
        size_t count = 0, total = 0;
        int over = 0; /* the first limit error seen while draining, ranked as check_limits ranks */
        int r;

        if (!sock || !ret)
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
                else if (over == 0 &&
                         (size > limits->max_frame_bytes || size > limits->max_total_bytes - total))
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
        return kb_wire_decode(frames, received.n, key, limits, ret);
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

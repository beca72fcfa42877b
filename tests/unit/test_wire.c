/* test_wire.c: unit tests for the wire module: signing (RFC 4231 and Jupyter known answers), every
 * decode rejection, msg_new, serialization, one socket trip. */
/* cmocka needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "kbound/wire.h"
#include <cmocka.h>
#include <pthread.h>
#include <regex.h>
#include <string.h>
#include <zmq.h>

/* Known-answer vector. The expected hex was computed independently of this code base with
 * CPython's standard library:
 *   import hmac, hashlib
 *   h = hmac.new(b"kbound-test-key-7f3a", digestmod=hashlib.sha256)
 *   for p in (KAT_HEADER, KAT_PARENT, KAT_METADATA, KAT_CONTENT): h.update(p)
 *   h.hexdigest()
 * with the four byte strings below, exactly as written (no trailing newline). */
#define KAT_KEY "kbound-test-key-7f3a"
#define KAT_HEADER                                                                                                     \
        "{\"msg_id\":\"b1c2d3e4-0000-4000-8000-000000000001\",\"msg_type\":\"kernel_info_request\","                   \
        "\"username\":\"kb\",\"session\":\"s-1\",\"date\":\"2026-01-01T00:00:00.000000Z\","                            \
        "\"version\":\"5.3\"}"
#define KAT_PARENT "{}"
#define KAT_METADATA "{}"
#define KAT_CONTENT "{\"code\":\"print(1)\",\"silent\":false}"
#define KAT_HMAC "a0059bd48cc3bb79f100673198a090b506b673adc4a053a19f1ab5fe934e92a6"

#define MAX_TEST_FRAMES 16

/* Keyed once for the whole run (group setup), as a client keys its connection once. */
static kb_hmac *test_key, *empty_key;

static kb_hmac *hmac_of(const void *key, size_t size) {
        kb_hmac *h = NULL;
        assert_int_equal(kb_hmac_new(key, size, &h), 0);
        assert_non_null(h);
        return h;
}

static int keys_setup(void **state) {
        if (kb_hmac_new(KAT_KEY, sizeof(KAT_KEY) - 1, &test_key) < 0 || kb_hmac_new(NULL, 0, &empty_key) < 0)
                return -1;
        return 0;
}

static int keys_teardown(void **state) {
        kb_hmac_destroy(&test_key);
        kb_hmac_destroy(&empty_key);
        return 0;
}

static kb_frame str_frame(const char *s) {
        return (kb_frame){s, strlen(s)};
}

/* A hand-built multipart message: identities, delimiter, signature, four parts, buffers. */
typedef struct test_wire {
        kb_frame frames[MAX_TEST_FRAMES];
        size_t n;
        char signature[KB_HMAC_HEX_LEN + 1];
} test_wire;

/* Builds a message from the KAT parts, replacing any part given as non-NULL in `override`
 * (index 0..3 = header, parent, metadata, content), and signs it with key. */
static void build_wire(test_wire *w, const kb_hmac *key, const kb_frame *override, size_t n_ids, const kb_frame *ids,
                       size_t n_bufs, const kb_frame *bufs) {
        kb_frame parts[4] = {str_frame(KAT_HEADER), str_frame(KAT_PARENT), str_frame(KAT_METADATA),
                             str_frame(KAT_CONTENT)};
        if (override)
                for (size_t i = 0; i < 4; i++)
                        if (override[i].data)
                                parts[i] = override[i];
        assert_int_equal(kb_wire_sign(key, parts, w->signature), 0);
        assert_true(n_ids + n_bufs + 6 <= MAX_TEST_FRAMES);
        w->n = 0;
        for (size_t i = 0; i < n_ids; i++)
                w->frames[w->n++] = ids[i];
        w->frames[w->n++] = str_frame(KB_WIRE_DELIMITER);
        w->frames[w->n++] = str_frame(w->signature);
        for (size_t i = 0; i < 4; i++)
                w->frames[w->n++] = parts[i];
        for (size_t i = 0; i < n_bufs; i++)
                w->frames[w->n++] = bufs[i];
}

/* Index of the signature frame in a message built without identities. */
enum { SIG = 1, HEADER = 2, PARENT = 3, METADATA = 4, CONTENT = 5 };

/* Decodes w with default limits; on failure checks that *ret was left untouched. */
static int decode(const test_wire *w, const kb_hmac *key, const kb_wire_limits *limits, kb_msg **ret) {
        kb_msg *sentinel = (kb_msg *) (uintptr_t) 0x1;
        kb_msg *msg = sentinel;
        int r = kb_wire_decode(w->frames, w->n, key, limits, &msg);
        if (r < 0) {
                assert_ptr_equal(msg, sentinel);
                *ret = NULL;
        } else {
                assert_non_null(msg);
                *ret = msg;
        }
        return r;
}

static int decode_only(const test_wire *w, const kb_hmac *key, const kb_wire_limits *limits) {
        kb_msg *msg = NULL;
        int r = decode(w, key, limits, &msg);
        kb_msg_destroy(&msg);
        return r;
}

/* Builds a signed message whose content is `content` (any bytes, with explicit size). */
static void build_with_content(test_wire *w, const void *content, size_t size) {
        kb_frame override[4] = {{0}};
        override[3] = (kb_frame){content, size};
        build_wire(w, test_key, override, 0, NULL, 0, NULL);
}

static void build_with_header(test_wire *w, const char *header) {
        kb_frame override[4] = {{0}};
        override[0] = str_frame(header);
        build_wire(w, test_key, override, 0, NULL, 0, NULL);
}

static void test_limits_default(void **state) {
        kb_wire_limits l;
        kb_wire_limits_default(&l);
        assert_int_equal(l.max_frames, 64);
        assert_int_equal(l.max_frame_bytes, 16u << 20);
        assert_int_equal(l.max_total_bytes, 64u << 20);
        assert_int_equal(l.max_json_depth, 64);
}

static void test_sign_known_answer(void **state) {
        kb_frame parts[4] = {str_frame(KAT_HEADER), str_frame(KAT_PARENT), str_frame(KAT_METADATA),
                             str_frame(KAT_CONTENT)};
        char hex[KB_HMAC_HEX_LEN + 1];
        assert_int_equal(kb_wire_sign(test_key, parts, hex), 0);
        assert_string_equal(hex, KAT_HMAC);
}

static void test_decode_known_answer(void **state) {
        /* The verifier must accept a signature it did not compute itself. */
        test_wire w;
        build_wire(&w, test_key, NULL, 0, NULL, 0, NULL);
        w.frames[SIG] = str_frame(KAT_HMAC);
        kb_msg *msg = NULL;
        assert_int_equal(decode(&w, test_key, NULL, &msg), 0);
        assert_string_equal(msg->msg_id, "b1c2d3e4-0000-4000-8000-000000000001");
        assert_string_equal(msg->msg_type, "kernel_info_request");
        assert_string_equal(msg->parent_msg_id, "");
        assert_string_equal(kb_msg_content_string(msg, "code"), "print(1)");
        assert_null(kb_msg_content_string(msg, "silent")); /* not a string */
        assert_null(kb_msg_content_string(msg, "absent"));
        assert_int_equal(msg->n_identities, 0);
        assert_int_equal(msg->n_buffers, 0);
        /* The verified signature is kept: it is what a replay of the message would carry. */
        assert_string_equal(msg->signature, KAT_HMAC);
        kb_msg_destroy(&msg);
        assert_null(msg);
        kb_msg_destroy(&msg); /* NULL is accepted */
        kb_msg_destroy(NULL);
}

static void test_sign_depends_on_every_part_and_key(void **state) {
        kb_frame parts[4] = {str_frame(KAT_HEADER), str_frame(KAT_PARENT), str_frame(KAT_METADATA),
                             str_frame(KAT_CONTENT)};
        char base[KB_HMAC_HEX_LEN + 1], other[KB_HMAC_HEX_LEN + 1];
        assert_int_equal(kb_wire_sign(test_key, parts, base), 0);
        for (size_t i = 0; i < 4; i++) {
                kb_frame changed[4];
                memcpy(changed, parts, sizeof(changed));
                changed[i] = str_frame("{\"x\":1}");
                assert_int_equal(kb_wire_sign(test_key, changed, other), 0);
                assert_string_not_equal(base, other);
        }
        kb_hmac *other_key = hmac_of("another key", 11);
        assert_int_equal(kb_wire_sign(other_key, parts, other), 0);
        assert_string_not_equal(base, other);
        kb_hmac_destroy(&other_key);
}

/* RFC 4231's HMAC-SHA256 test cases (section 4; keys and data as given there). The data goes in
 * as the message's four parts, split at arbitrary points: the HMAC covers their concatenation. */
typedef struct rfc4231_case {
        unsigned char key[131];
        size_t key_len;
        unsigned char data[152];
        size_t data_len;
        const char *hmac; /* hex; test case 5 gives only the first 128 bits */
} rfc4231_case;

static void test_sign_rfc4231(void **state) {
        static const char tc6_data[] = "Test Using Larger Than Block-Size Key - Hash Key First";
        static const char tc7_data[] = "This is a test using a larger than block-size key and a larger than "
                                       "block-size data. The key needs to be hashed before being used by the "
                                       "HMAC algorithm.";
        static rfc4231_case cases[7];
        memset(cases, 0, sizeof(cases));
        memset(cases[0].key, 0x0b, cases[0].key_len = 20);
        memcpy(cases[0].data, "Hi There", cases[0].data_len = 8);
        cases[0].hmac = "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7";
        memcpy(cases[1].key, "Jefe", cases[1].key_len = 4);
        memcpy(cases[1].data, "what do ya want for nothing?", cases[1].data_len = 28);
        cases[1].hmac = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
        memset(cases[2].key, 0xaa, cases[2].key_len = 20);
        memset(cases[2].data, 0xdd, cases[2].data_len = 50);
        cases[2].hmac = "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe";
        for (size_t i = 0; i < 25; i++)
                cases[3].key[i] = (unsigned char) (i + 1);
        cases[3].key_len = 25;
        memset(cases[3].data, 0xcd, cases[3].data_len = 50);
        cases[3].hmac = "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b";
        memset(cases[4].key, 0x0c, cases[4].key_len = 20);
        memcpy(cases[4].data, "Test With Truncation", cases[4].data_len = 20);
        cases[4].hmac = "a3b6167473100ee06e0c796c2955552b";
        memset(cases[5].key, 0xaa, cases[5].key_len = 131); /* longer than a block: hashed first */
        memcpy(cases[5].data, tc6_data, cases[5].data_len = sizeof(tc6_data) - 1);
        cases[5].hmac = "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54";
        memset(cases[6].key, 0xaa, cases[6].key_len = 131);
        memcpy(cases[6].data, tc7_data, cases[6].data_len = sizeof(tc7_data) - 1);
        cases[6].hmac = "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2";

        for (size_t i = 0; i < KB_ELEMENTSOF(cases); i++) {
                const rfc4231_case *tc = &cases[i];
                kb_hmac *h = hmac_of(tc->key, tc->key_len);
                assert_true(kb_hmac_signs(h));
                char hex[KB_HMAC_HEX_LEN + 1];
                /* Whole in the first part; then cut in four uneven pieces, empty ones included. */
                kb_frame whole[4] = {{tc->data, tc->data_len}, {"", 0}, {"", 0}, {"", 0}};
                assert_int_equal(kb_wire_sign(h, whole, hex), 0);
                assert_int_equal(strlen(hex), KB_HMAC_HEX_LEN);
                assert_memory_equal(hex, tc->hmac, strlen(tc->hmac));
                size_t a = tc->data_len / 3, b = a + 1;
                kb_frame cut[4] = {
                        {tc->data, a}, {tc->data + a, 0}, {tc->data + a, b - a}, {tc->data + b, tc->data_len - b}};
                char again[KB_HMAC_HEX_LEN + 1];
                assert_int_equal(kb_wire_sign(h, cut, again), 0);
                assert_string_equal(again, hex);
                kb_hmac_destroy(&h);
                assert_null(h);
        }
        kb_hmac_destroy(NULL);
}

/* Keys that differ in one byte, or are longer than a SHA-256 block, each give their own HMAC, and
 * one keyed HMAC signs the same again and again (each signature works on a duplicate of the keyed
 * context, never on the context itself). Expected values from CPython's hmac as for KAT_HMAC
 * (keys: KAT_KEY with the last byte 'b'; 300 bytes (i * 7 + 1) & 0xff for i = 0..299, and the
 * first 64 and 65 of them: a key of exactly one block is used as is, one byte more is hashed). */
#define KAT_HMAC_SAME_LENGTH "d35d53cfb7cbc7506f09bad0e6c41e7ece31c6c68ba439e4d4cafe03b1bef37a"
#define KAT_HMAC_LONG_KEY "136d34441f179de888aaafc029007f7cb9003a6ffb3ff064572a17a8d729aa1b"
#define KAT_HMAC_KEY_64 "2c63b4d26acaa0db37b86bcbab099baec1881762984411e81bc78b0d2af1cc0f"
#define KAT_HMAC_KEY_65 "1f529f93accfb4d3416312f5a518cc3504cf899713459dd1ae7eff89138a1a33"

#define SHARED_ROUNDS 2000

/* Signs the KAT message SHARED_ROUNDS times with the shared test_key; NULL if every one was right. */
static void *sign_shared(void *arg) {
        kb_frame parts[4] = {str_frame(KAT_HEADER), str_frame(KAT_PARENT), str_frame(KAT_METADATA),
                             str_frame(KAT_CONTENT)};
        char hex[KB_HMAC_HEX_LEN + 1];
        for (int i = 0; i < SHARED_ROUNDS; i++)
                if (kb_wire_sign(test_key, parts, hex) != 0 || strcmp(hex, KAT_HMAC) != 0)
                        return (void *) (uintptr_t) (i + 1);
        return NULL;
}

static void test_sign_keys_and_threads(void **state) {
        kb_frame parts[4] = {str_frame(KAT_HEADER), str_frame(KAT_PARENT), str_frame(KAT_METADATA),
                             str_frame(KAT_CONTENT)};
        unsigned char long_key[300];
        for (size_t i = 0; i < sizeof(long_key); i++)
                long_key[i] = (unsigned char) ((i * 7 + 1) & 0xff);
        kb_hmac *same_length = hmac_of("kbound-test-key-7f3b", 20), *long_kb = hmac_of(long_key, sizeof(long_key));
        kb_hmac *key64 = hmac_of(long_key, 64), *key65 = hmac_of(long_key, 65);
        const kb_hmac *keys[] = {test_key, test_key,    same_length, long_kb, long_kb,
                                 test_key, same_length, key64,       key65,   key64};
        const char *want[] = {KAT_HMAC,          KAT_HMAC,       KAT_HMAC_SAME_LENGTH, KAT_HMAC_LONG_KEY,
                              KAT_HMAC_LONG_KEY, KAT_HMAC,       KAT_HMAC_SAME_LENGTH, KAT_HMAC_KEY_64,
                              KAT_HMAC_KEY_65,   KAT_HMAC_KEY_64};
        char hex[KB_HMAC_HEX_LEN + 1];
        for (size_t i = 0; i < KB_ELEMENTSOF(keys); i++) {
                assert_int_equal(kb_wire_sign(keys[i], parts, hex), 0);
                assert_string_equal(hex, want[i]);
        }
        kb_hmac_destroy(&same_length);
        kb_hmac_destroy(&long_kb);
        kb_hmac_destroy(&key64);
        kb_hmac_destroy(&key65);

        /* One keyed HMAC used by four threads at once, as the header promises. */
        pthread_t threads[4];
        for (size_t i = 0; i < KB_ELEMENTSOF(threads); i++)
                assert_int_equal(pthread_create(&threads[i], NULL, sign_shared, NULL), 0);
        for (size_t i = 0; i < KB_ELEMENTSOF(threads); i++) {
                void *result = (void *) 1;
                assert_int_equal(pthread_join(threads[i], &result), 0);
                assert_null(result);
        }
}

/* A missing hmac is a caller's error, never "unsigned": verification must not be skipped by
 * forgetting to key a connection. */
static void test_hmac_required(void **state) {
        kb_frame parts[4] = {str_frame(KAT_HEADER), str_frame(KAT_PARENT), str_frame(KAT_METADATA),
                             str_frame(KAT_CONTENT)};
        char hex[KB_HMAC_HEX_LEN + 1];
        assert_int_equal(kb_wire_sign(NULL, parts, hex), -EINVAL);
        test_wire w;
        build_wire(&w, test_key, NULL, 0, NULL, 0, NULL);
        kb_msg *msg = NULL;
        assert_int_equal(kb_wire_decode(w.frames, w.n, NULL, NULL, &msg), -EINVAL);
        assert_null(msg);
        kb_hmac *h = NULL;
        assert_int_equal(kb_hmac_new(NULL, 5, &h), -EINVAL);
        assert_null(h);
        assert_false(kb_hmac_signs(NULL));
        assert_false(kb_hmac_signs(empty_key));
        assert_true(kb_hmac_signs(test_key));
}

/* The JSON parts are json-c's text: compact, '/' not escaped (as Python's json.dumps, so a
 * kernel's signature over the same text matches), and whatever the content (every control
 * character, quotes, backslash, slash, UTF-8, an embedded NUL, nesting, every number form
 * json-c has) they parse back to the same values. */
static void test_serialize_json_c_text(void **state) {
        char controls[34];
        for (int i = 0; i < 32; i++)
                controls[i] = (char) (i + 1 == 32 ? 0x7f : i + 1);
        controls[32] = '"';
        controls[33] = '\\';
        json_object *c = json_object_new_object();
        json_object_object_add(c, "controls", json_object_new_string_len(controls, sizeof(controls)));
        json_object_object_add(c, "nul", json_object_new_string_len("a\0b", 3));
        json_object_object_add(c, "text",
                               json_object_new_string("path/to \xc3\xa9t\xc3\xa9 \xf0\x9f\x99\x82 \"q\" \\ end\n"));
        json_object_object_add(c, "k\"e\\y\t/", json_object_new_string(""));
        json_object *arr = json_object_new_array();
        json_object_array_add(arr, json_object_new_int64(INT64_MIN));
        json_object_array_add(arr, json_object_new_int64(INT64_MAX));
        json_object_array_add(arr, json_object_new_uint64(UINT64_MAX));
        json_object_array_add(arr, json_object_new_double(0.1));
        json_object_array_add(arr, json_object_new_double(-0.0));
        json_object_array_add(arr, json_object_new_double(1e300));
        json_object_array_add(arr, json_object_new_double(3.0));
        json_object_array_add(arr, json_object_new_boolean(1));
        json_object_array_add(arr, json_object_new_boolean(0));
        json_object_array_add(arr, NULL);
        json_object_array_add(arr, json_object_new_object());
        json_object_array_add(arr, json_object_new_array());
        json_object *nested = json_object_new_object();
        json_object_object_add(nested, "deeper", json_object_new_array());
        json_object_array_add(json_object_object_get(nested, "deeper"), json_object_new_string("x"));
        json_object_array_add(arr, nested);
        json_object_object_add(c, "values", arr);
        json_object_object_add(c, "null", NULL);

        kb_msg *msg = NULL;
        assert_int_equal(kb_msg_new("execute_request", "sess \"1\"", "us\ter", c, &msg), 0);
        zmsg_t *z = NULL;
        assert_int_equal(kb_wire_serialize(msg, test_key, &z), 0);
        assert_int_equal(zmsg_size(z), 6);
        json_object *objs[4] = {msg->header, msg->parent_header, msg->metadata, msg->content};
        zframe_t *f = zmsg_first(z);
        f = zmsg_next(z); /* after the delimiter and the signature */
        for (size_t i = 0; i < 4; i++) {
                f = zmsg_next(z);
                assert_non_null(f);
                size_t len = 0;
                const char *want = json_object_to_json_string_length(
                        objs[i], JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
                assert_int_equal(zframe_size(f), len);
                assert_memory_equal(zframe_data(f), want, len);
                json_object *back = NULL;
                assert_non_null(back = json_tokener_parse(want));
                assert_true(json_object_equal(back, objs[i]));
                json_object_put(back);
                if (i == 3) {
                        assert_non_null(memmem(want, len, "\"path/to ", 9));
                        assert_null(memmem(want, len, "\\/", 2));
                        assert_null(memmem(want, len, "\": ", 3)); /* compact: no space after ':' */
                        static const char nul[] = "\"nul\":\"a\\u0000b\"";
                        assert_non_null(memmem(want, len, nul, strlen(nul)));
                }
        }
        zmsg_destroy(&z);
        kb_msg_destroy(&msg);
}

static void test_roundtrip_new_serialize_decode(void **state) {
        json_object *content = json_object_new_object();
        json_object_object_add(content, "code", json_object_new_string("x = \"é/\\n\"\n"));
        kb_msg *msg = NULL;
        assert_int_equal(kb_msg_new("execute_request", "session-1", "alice", content, &msg), 0);

        zmsg_t *z = NULL;
        assert_int_equal(kb_wire_serialize(msg, test_key, &z), 0);
        assert_int_equal(zmsg_size(z), 6);
        kb_frame frames[6];
        size_t n = 0;
        for (zframe_t *f = zmsg_first(z); f; f = zmsg_next(z))
                frames[n++] = (kb_frame){zframe_data(f), zframe_size(f)};
        assert_memory_equal(frames[0].data, KB_WIRE_DELIMITER, strlen(KB_WIRE_DELIMITER));
        assert_int_equal(frames[1].size, KB_HMAC_HEX_LEN);

        kb_msg *back = NULL;
        assert_int_equal(kb_wire_decode(frames, n, test_key, NULL, &back), 0);
        assert_string_equal(back->msg_id, msg->msg_id);
        assert_string_equal(back->msg_type, "execute_request");
        assert_string_equal(kb_msg_content_string(back, "code"), "x = \"é/\\n\"\n");
        assert_true(json_object_equal(back->header, msg->header));

        /* The same frames under another key are refused. */
        kb_hmac *wrong = hmac_of("wrong", 5);
        kb_msg *none = NULL;
        assert_int_equal(kb_wire_decode(frames, n, wrong, NULL, &none), -EBADMSG);
        assert_null(none);
        kb_hmac_destroy(&wrong);

        kb_msg_destroy(&back);
        kb_msg_destroy(&msg);
        zmsg_destroy(&z);
}

/* A sender stopped between the frames of one message (IRkernel sends frame by frame from R, and
 * SIGINT lands between two): ZeroMQ joins the unfinished frames to its next message. That next
 * message is still whole and signed, and is kept; the unfinished part is dropped and counted. */
static void test_decode_unfinished_joined_to_next(void **state) {
        kb_msg *first = NULL, *second = NULL;
        assert_int_equal(kb_msg_new("stream", "s", "u", NULL, &first), 0);
        assert_int_equal(kb_msg_new("status", "s", "u", NULL, &second), 0);
        zmsg_t *a = NULL, *b = NULL;
        assert_int_equal(kb_wire_serialize(first, test_key, &a), 0);
        assert_int_equal(kb_wire_serialize(second, test_key, &b), 0);
        kb_frame frames[16];
        size_t n = 0;
        frames[n++] = str_frame("topic-1");
        for (zframe_t *f = zmsg_first(a); f && n < 5; f = zmsg_next(a)) /* delimiter, sig, header, parent */
                frames[n++] = (kb_frame){zframe_data(f), zframe_size(f)};
        size_t unfinished = n;
        frames[n++] = str_frame("topic-2");
        for (zframe_t *f = zmsg_first(b); f; f = zmsg_next(b))
                frames[n++] = (kb_frame){zframe_data(f), zframe_size(f)};

        kb_msg *back = NULL;
        assert_int_equal(kb_wire_decode(frames, n, test_key, NULL, &back), 0);
        assert_string_equal(back->msg_id, second->msg_id);
        assert_string_equal(back->msg_type, "status");
        assert_int_equal(back->unfinished_frames, unfinished + 1);
        assert_int_equal(back->n_identities, 0);
        kb_msg_destroy(&back);

        /* Stopped right after its delimiter: the signature frame is the next message's topic. */
        kb_frame short_frames[16];
        size_t m = 0;
        short_frames[m++] = frames[0];
        short_frames[m++] = frames[1];
        for (size_t i = unfinished; i < n; i++)
                short_frames[m++] = frames[i];
        assert_int_equal(kb_wire_decode(short_frames, m, test_key, NULL, &back), 0);
        assert_string_equal(back->msg_id, second->msg_id);
        assert_int_equal(back->unfinished_frames, 3);
        kb_msg_destroy(&back);

        /* Only a signed message is kept: one content bit flipped in the whole one, and nothing is. */
        char bad[256];
        size_t last = n - 1;
        assert_true(frames[last].size < sizeof bad);
        memcpy(bad, frames[last].data, frames[last].size);
        bad[0] ^= 0x01;
        frames[last] = (kb_frame){bad, frames[last].size};
        assert_int_equal(kb_wire_decode(frames, n, test_key, NULL, &back), -EBADMSG);
        assert_null(back);
        /* A whole message says so. */
        zmsg_t *z = NULL;
        assert_int_equal(kb_wire_serialize(second, test_key, &z), 0);
        size_t k = 0;
        for (zframe_t *f = zmsg_first(z); f; f = zmsg_next(z))
                frames[k++] = (kb_frame){zframe_data(f), zframe_size(f)};
        assert_int_equal(kb_wire_decode(frames, k, test_key, NULL, &back), 0);
        assert_int_equal(back->unfinished_frames, 0);
        kb_msg_destroy(&back);
        zmsg_destroy(&z);
        zmsg_destroy(&a);
        zmsg_destroy(&b);
        kb_msg_destroy(&first);
        kb_msg_destroy(&second);
}

static bool matches(const char *pattern, const char *s) {
        regex_t re;
        assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
        int r = regexec(&re, s, 0, NULL, 0);
        regfree(&re);
        return r == 0;
}

static const char *header_string(const kb_msg *msg, const char *field) {
        json_object *v = NULL;
        assert_true(json_object_object_get_ex(msg->header, field, &v));
        assert_true(json_object_is_type(v, json_type_string));
        return json_object_get_string(v);
}

static void test_msg_new_header(void **state) {
        kb_msg *a = NULL, *b = NULL;
        assert_int_equal(kb_msg_new("kernel_info_request", "sess-42", "bob", NULL, &a), 0);
        assert_int_equal(kb_msg_new("kernel_info_request", "sess-42", "bob", NULL, &b), 0);

        const char *uuid_re = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";
        assert_true(matches(uuid_re, header_string(a, "msg_id")));
        assert_string_equal(a->msg_id, header_string(a, "msg_id"));
        assert_string_not_equal(a->msg_id, b->msg_id); /* every message gets a fresh id */
        assert_true(matches("^[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{6}Z$",
                            header_string(a, "date")));
        assert_string_equal(header_string(a, "msg_type"), "kernel_info_request");
        assert_string_equal(a->msg_type, "kernel_info_request");
        assert_string_equal(header_string(a, "version"), "5.3");
        assert_string_equal(header_string(a, "username"), "bob");
        assert_string_equal(header_string(a, "session"), "sess-42");
        assert_string_equal(a->parent_msg_id, "");
        assert_true(json_object_is_type(a->parent_header, json_type_object));
        assert_int_equal(json_object_object_length(a->parent_header), 0);
        assert_int_equal(json_object_object_length(a->metadata), 0);
        assert_true(json_object_is_type(a->content, json_type_object));
        assert_int_equal(json_object_object_length(a->content), 0);
        kb_msg_destroy(&a);
        kb_msg_destroy(&b);
}

static void test_msg_new_invalid_takes_content(void **state) {
        /* Ownership of content passes even on failure: valgrind/ASan would report a leak here. */
        kb_msg *msg = NULL;
        assert_int_equal(kb_msg_new(NULL, "s", "u", json_object_new_object(), &msg), -EINVAL);
        assert_int_equal(kb_msg_new("", "s", "u", json_object_new_object(), &msg), -EINVAL);
        assert_int_equal(kb_msg_new("x", NULL, "u", json_object_new_object(), &msg), -EINVAL);
        assert_int_equal(kb_msg_new("x", "s", "u", json_object_new_array(), &msg), -EINVAL);
        assert_null(msg);
}

static void test_reject_too_many_frames(void **state) {
        kb_frame bufs[2] = {str_frame("a"), str_frame("b")};
        test_wire w;
        build_wire(&w, test_key, NULL, 0, NULL, 2, bufs); /* 8 frames */
        kb_wire_limits l;
        kb_wire_limits_default(&l);
        l.max_frames = 8;
        assert_int_equal(decode_only(&w, test_key, &l), 0);
        l.max_frames = 7;
        assert_int_equal(decode_only(&w, test_key, &l), -E2BIG);
}

static void test_reject_frame_too_big(void **state) {
        test_wire w;
        build_wire(&w, test_key, NULL, 0, NULL, 0, NULL);
        kb_wire_limits l;
        kb_wire_limits_default(&l);
        l.max_frame_bytes = strlen(KAT_HEADER); /* the largest frame, exactly at the limit */
        assert_int_equal(decode_only(&w, test_key, &l), 0);
        l.max_frame_bytes = strlen(KAT_HEADER) - 1;
        assert_int_equal(decode_only(&w, test_key, &l), -EMSGSIZE);
}

static void test_reject_total_too_big(void **state) {
        test_wire w;
        build_wire(&w, test_key, NULL, 0, NULL, 0, NULL);
        size_t total = 0;
        for (size_t i = 0; i < w.n; i++)
                total += w.frames[i].size;
        kb_wire_limits l;
        kb_wire_limits_default(&l);
        l.max_total_bytes = total;
        assert_int_equal(decode_only(&w, test_key, &l), 0);
        l.max_total_bytes = total - 1;
        assert_int_equal(decode_only(&w, test_key, &l), -EMSGSIZE);
}

static void test_reject_no_delimiter(void **state) {
        test_wire w;
        build_wire(&w, test_key, NULL, 0, NULL, 0, NULL);
        w.frames[0] = str_frame("<IDS|MSG"); /* near miss */
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        kb_msg *msg = NULL;
        assert_int_equal(kb_wire_decode(NULL, 0, test_key, NULL, &msg), -EPROTO);
        assert_null(msg);
}

static void test_reject_too_few_frames(void **state) {
        test_wire w;
        build_wire(&w, test_key, NULL, 0, NULL, 0, NULL);
        w.n = 5; /* delimiter, signature, three JSON parts */
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        w.n = 1;
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
}

static void test_reject_bad_json(void **state) {
        test_wire w;
        build_with_content(&w, "{\"code\":", 8);
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        build_with_content(&w, "{\"a\":'x'}", 9); /* json-c extensions refused in strict mode */
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        build_with_content(&w, "{\"a\":1,}", 8);
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        build_with_content(&w, "{\"a\":\"\xff\"}", 9); /* not UTF-8 */
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        build_with_content(&w, "", 0);
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
}

/* One tokener parses the four parts of a message: a part refused half-way (open containers on
 * its stack) must leave nothing behind, and every message starts clean. */
static void test_parse_after_refused_part(void **state) {
        static const char *broken[] = {"{\"a\":[1,{\"b\":", "{\"a\":\"unterminated", "{\"a\":1}}"};
        test_wire w;
        for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
                build_with_content(&w, broken[i], strlen(broken[i]));
                assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
                build_wire(&w, test_key, NULL, 0, NULL, 0, NULL);
                kb_msg *msg = NULL;
                assert_int_equal(decode(&w, test_key, NULL, &msg), 0);
                assert_string_equal(kb_msg_content_string(msg, "code"), "print(1)");
                kb_msg_destroy(&msg);
        }
}

static void test_reject_trailing_garbage(void **state) {
        test_wire w;
        build_with_content(&w, "{}x", 3);
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        build_with_content(&w, "{}{}", 4);
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        build_with_content(&w, "{} \n", 4); /* whitespace is not garbage */
        assert_int_equal(decode_only(&w, test_key, NULL), 0);
}

static void test_reject_json_not_object(void **state) {
        static const char *not_objects[] = {"[]", "null", "1", "\"s\"", "true"};
        test_wire w;
        for (size_t i = 0; i < KB_ELEMENTSOF(not_objects); i++) {
                build_with_content(&w, not_objects[i], strlen(not_objects[i]));
                assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
                kb_frame override[4] = {{0}};
                override[1] = str_frame(not_objects[i]); /* parent_header */
                build_wire(&w, test_key, override, 0, NULL, 0, NULL);
                assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
                override[1] = (kb_frame){0};
                override[2] = str_frame(not_objects[i]); /* metadata */
                build_wire(&w, test_key, override, 0, NULL, 0, NULL);
                assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        }
}

static void test_reject_header_fields(void **state) {
        test_wire w;
        build_with_header(&w, "{\"msg_type\":\"status\"}");
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        build_with_header(&w, "{\"msg_id\":\"abc\"}");
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        build_with_header(&w, "{\"msg_id\":7,\"msg_type\":\"status\"}");
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        build_with_header(&w, "{\"msg_id\":\"abc\",\"msg_type\":null}");
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        /* An escaped NUL would silently shorten the id callers match replies on. */
        build_with_header(&w, "{\"msg_id\":\"abc\\u0000x\",\"msg_type\":\"status\"}");
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        build_with_header(&w, "{\"msg_id\":\"abc\",\"msg_type\":\"status\"}");
        assert_int_equal(decode_only(&w, test_key, NULL), 0);
}

static void test_reject_unsigned_with_key(void **state) {
        test_wire w;
        build_wire(&w, test_key, NULL, 0, NULL, 0, NULL);
        w.frames[SIG] = str_frame("");
        assert_int_equal(decode_only(&w, test_key, NULL), -ENOKEY);
}

static void test_reject_signature_wrong_length(void **state) {
        test_wire w;
        build_wire(&w, test_key, NULL, 0, NULL, 0, NULL);
        w.frames[SIG].size = KB_HMAC_HEX_LEN - 1; /* a correct prefix is still wrong */
        assert_int_equal(decode_only(&w, test_key, NULL), -EBADMSG);
        char longer[KB_HMAC_HEX_LEN + 2];
        memcpy(longer, w.signature, KB_HMAC_HEX_LEN);
        longer[KB_HMAC_HEX_LEN] = '0';
        w.frames[SIG] = (kb_frame){longer, KB_HMAC_HEX_LEN + 1};
        assert_int_equal(decode_only(&w, test_key, NULL), -EBADMSG);
}

static void test_reject_signature_not_hex(void **state) {
        test_wire w;
        build_wire(&w, test_key, NULL, 0, NULL, 0, NULL);
        w.signature[10] = 'g';
        assert_int_equal(decode_only(&w, test_key, NULL), -EBADMSG);
        build_wire(&w, test_key, NULL, 0, NULL, 0, NULL);
        w.signature[0] = '\0'; /* right length, but a NUL inside */
        assert_int_equal(decode_only(&w, test_key, NULL), -EBADMSG);
}

static void test_reject_signature_mismatch(void **state) {
        char content[] = KAT_CONTENT;
        test_wire w;
        build_with_content(&w, content, strlen(content));
        assert_int_equal(decode_only(&w, test_key, NULL), 0);
        content[9] ^= 0x01; /* one bit of "print" flipped after signing: 'p' -> 'q' */
        assert_int_equal(content[9], 'q');
        assert_int_equal(decode_only(&w, test_key, NULL), -EBADMSG);
        content[9] ^= 0x01;
        assert_int_equal(decode_only(&w, test_key, NULL), 0);

        /* Uppercase hex names the same bytes but is not what any Jupyter peer sends. */
        for (size_t i = 0; i < KB_HMAC_HEX_LEN; i++)
                if (w.signature[i] >= 'a' && w.signature[i] <= 'f')
                        w.signature[i] = (char) (w.signature[i] - 'a' + 'A');
        assert_int_equal(decode_only(&w, test_key, NULL), -EBADMSG);
}

static void test_reject_depth(void **state) {
        kb_wire_limits l;
        kb_wire_limits_default(&l);
        l.max_json_depth = 3;
        static const char deep[] = "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]}";
        test_wire w;
        /* Depth counts value levels: object 1, its member 2, the member's member 3. */
        build_with_content(&w, "{\"a\":{\"b\":1}}", strlen("{\"a\":{\"b\":1}}"));
        assert_int_equal(decode_only(&w, test_key, &l), 0);
        build_with_content(&w, "{\"a\":{\"b\":[1]}}", strlen("{\"a\":{\"b\":[1]}}"));
        assert_int_equal(decode_only(&w, test_key, &l), -ELOOP);
        build_with_content(&w, deep, strlen(deep));
        assert_int_equal(decode_only(&w, test_key, &l), -ELOOP);
        /* The header is held to the same limit. */
        build_with_header(&w, "{\"msg_id\":\"a\",\"msg_type\":\"b\",\"x\":{\"y\":{}}}");
        assert_int_equal(decode_only(&w, test_key, &l), 0);
        build_with_header(&w, "{\"msg_id\":\"a\",\"msg_type\":\"b\",\"x\":{\"y\":{\"z\":0}}}");
        assert_int_equal(decode_only(&w, test_key, &l), -ELOOP);
        l.max_json_depth = 0;
        assert_int_equal(decode_only(&w, test_key, &l), -EINVAL);
}

static void test_reject_embedded_nul(void **state) {
        static const char nul_after[] = "{\"code\":\"1\"}\0{\"evil\":1}";
        static const char nul_inside[] = "{\"code\":\"a\0b\"}";
        test_wire w;
        build_with_content(&w, nul_after, sizeof(nul_after) - 1);
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        build_with_content(&w, nul_inside, sizeof(nul_inside) - 1);
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
        build_with_content(&w, "{}\0", 3);
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO);
}

static void test_signature_checked_before_json(void **state) {
        test_wire w;
        build_with_content(&w, "{not json", 9);
        assert_int_equal(decode_only(&w, test_key, NULL), -EPROTO); /* properly signed: reaches parser */
        w.signature[0] = w.signature[0] == '0' ? '1' : '0';
        assert_int_equal(decode_only(&w, test_key, NULL), -EBADMSG);
        w.frames[SIG] = str_frame("");
        assert_int_equal(decode_only(&w, test_key, NULL), -ENOKEY);
        /* Depth bombs are not parsed either without a valid signature. */
        build_with_content(&w, "[[[[[[[[[[", 10);
        w.frames[SIG] = str_frame(KAT_HMAC);
        kb_wire_limits l;
        kb_wire_limits_default(&l);
        l.max_json_depth = 2;
        assert_int_equal(decode_only(&w, test_key, &l), -EBADMSG);
}

static void test_limits_checked_before_signature(void **state) {
        test_wire w;
        build_wire(&w, test_key, NULL, 0, NULL, 0, NULL);
        w.frames[SIG] = str_frame("short");
        kb_wire_limits l;
        kb_wire_limits_default(&l);
        l.max_frame_bytes = 10;
        assert_int_equal(decode_only(&w, test_key, &l), -EMSGSIZE);
        kb_wire_limits_default(&l);
        l.max_frames = 5;
        assert_int_equal(decode_only(&w, test_key, &l), -E2BIG);
}

static void test_identities_and_buffers(void **state) {
        static const unsigned char id0[] = {0x00, 0x6b, 0x8b, 0x45, 0x67}; /* ROUTER-style binary id */
        kb_frame ids[2] = {{id0, sizeof(id0)}, str_frame("second-identity")};
        static const unsigned char buf0[] = {0xff, 0x00, 0x01};
        kb_frame bufs[3] = {{buf0, sizeof(buf0)}, {"", 0}, str_frame(KB_WIRE_DELIMITER)};
        test_wire w;
        build_wire(&w, test_key, NULL, 2, ids, 3, bufs);

        kb_msg *msg = NULL;
        assert_int_equal(decode(&w, test_key, NULL, &msg), 0);
        assert_int_equal(msg->n_identities, 2);
        assert_int_equal(msg->identities[0].size, sizeof(id0));
        assert_memory_equal(msg->identities[0].data, id0, sizeof(id0));
        assert_int_equal(msg->identities[1].size, strlen("second-identity"));
        assert_memory_equal(msg->identities[1].data, "second-identity", strlen("second-identity"));
        assert_int_equal(msg->n_buffers, 3);
        assert_memory_equal(msg->buffers[0].data, buf0, sizeof(buf0));
        assert_int_equal(msg->buffers[1].size, 0);
        assert_non_null(msg->buffers[1].data);
        assert_memory_equal(msg->buffers[2].data, KB_WIRE_DELIMITER, strlen(KB_WIRE_DELIMITER));
        /* wire_size counts every frame as received: what the client's per-execution caps use. */
        size_t wire_size = 0;
        for (size_t i = 0; i < w.n; i++)
                wire_size += w.frames[i].size;
        assert_true(wire_size > sizeof(id0) + sizeof(buf0));
        assert_int_equal(msg->wire_size, wire_size);

        /* Serialized again, they come back in the same places. */
        zmsg_t *z = NULL;
        assert_int_equal(kb_wire_serialize(msg, test_key, &z), 0);
        assert_int_equal(zmsg_size(z), 2 + 6 + 3);
        zframe_t *first = zmsg_first(z);
        assert_int_equal(zframe_size(first), sizeof(id0));
        assert_memory_equal(zframe_data(first), id0, sizeof(id0));
        kb_frame frames[MAX_TEST_FRAMES];
        size_t n = 0;
        for (zframe_t *f = first; f; f = zmsg_next(z))
                frames[n++] = (kb_frame){zframe_data(f), zframe_size(f)};
        kb_msg *again = NULL;
        assert_int_equal(kb_wire_decode(frames, n, test_key, NULL, &again), 0);
        assert_int_equal(again->n_identities, 2);
        assert_int_equal(again->n_buffers, 3);
        assert_memory_equal(again->buffers[0].data, buf0, sizeof(buf0));
        assert_string_equal(again->msg_id, msg->msg_id);
        kb_msg_destroy(&again);
        zmsg_destroy(&z);
        kb_msg_destroy(&msg);
}

static void test_parent_msg_id(void **state) {
        kb_frame override[4] = {{0}};
        override[1] = str_frame("{\"msg_id\":\"parent-1\",\"msg_type\":\"execute_request\"}");
        test_wire w;
        build_wire(&w, test_key, override, 0, NULL, 0, NULL);
        kb_msg *msg = NULL;
        assert_int_equal(decode(&w, test_key, NULL, &msg), 0);
        assert_string_equal(msg->parent_msg_id, "parent-1");
        kb_msg_destroy(&msg);
}

static void test_unsigned_mode(void **state) {
        kb_frame parts[4] = {str_frame(KAT_HEADER), str_frame(KAT_PARENT), str_frame(KAT_METADATA),
                             str_frame(KAT_CONTENT)};
        char hex[KB_HMAC_HEX_LEN + 1] = "not touched";
        assert_int_equal(kb_wire_sign(empty_key, parts, hex), 0);
        assert_string_equal(hex, "");

        test_wire w;
        build_wire(&w, empty_key, NULL, 0, NULL, 0, NULL);
        assert_int_equal(w.frames[SIG].size, 0);
        assert_int_equal(decode_only(&w, empty_key, NULL), 0);
        /* Like jupyter_client without a key, the signature frame is not interpreted (nor kept). */
        w.frames[SIG] = str_frame("whatever");
        assert_int_equal(decode_only(&w, empty_key, NULL), 0);
        kb_msg *unsigned_msg = NULL;
        assert_int_equal(decode(&w, empty_key, NULL, &unsigned_msg), 0);
        assert_string_equal(unsigned_msg->signature, "");
        kb_msg_destroy(&unsigned_msg);
        /* But an unsigned message never passes where a key is set. */
        w.frames[SIG] = str_frame("");
        assert_int_equal(decode_only(&w, test_key, NULL), -ENOKEY);

        kb_msg *msg = NULL;
        assert_int_equal(kb_msg_new("status", "s", "u", NULL, &msg), 0);
        zmsg_t *z = NULL;
        assert_int_equal(kb_wire_serialize(msg, empty_key, &z), 0);
        zmsg_first(z);
        assert_int_equal(zframe_size(zmsg_next(z)), 0); /* empty signature frame */
        zmsg_destroy(&z);
        kb_msg_destroy(&msg);
}

static void test_strerror(void **state) {
        static const int codes[] = {E2BIG, EMSGSIZE, EPROTO, ENOKEY, EBADMSG, ELOOP, ENOMEM, EAGAIN, EEXIST, ENOTUNIQ};
        for (size_t i = 0; i < KB_ELEMENTSOF(codes); i++) {
                const char *s = kb_wire_strerror(-codes[i]);
                assert_non_null(s);
                assert_true(strlen(s) > 0);
                assert_string_not_equal(s, "unknown error");
                for (size_t j = 0; j < i; j++)
                        assert_string_not_equal(s, kb_wire_strerror(-codes[j]));
        }
        assert_string_equal(kb_wire_strerror(-EBADMSG), "bad signature");
        assert_string_equal(kb_wire_strerror(-12345), "unknown error");
}

/* Waits up to 2 s for sock to become readable. */
static void wait_readable(zsock_t *sock) {
        zmq_pollitem_t item = {zsock_resolve(sock), 0, ZMQ_POLLIN, 0};
        assert_int_equal(zmq_poll(&item, 1, 2000), 1);
}

static void send_raw(zsock_t *sock, size_t n_frames, size_t frame_size) {
        zmsg_t *z = zmsg_new();
        char *filler = calloc(1, frame_size + 1);
        assert_non_null(filler);
        for (size_t i = 0; i < n_frames; i++)
                zmsg_addmem(z, filler, frame_size);
        free(filler);
        assert_int_equal(zmsg_send(&z, sock), 0);
}

static void test_socket_round_trip(void **state) {
        zsock_t *server = zsock_new_pair("@inproc://kbound-test-wire");
        zsock_t *client = zsock_new_pair(">inproc://kbound-test-wire");
        assert_non_null(server);
        assert_non_null(client);
        kb_wire_limits l;
        kb_wire_limits_default(&l);
        l.max_frames = 8;
        l.max_frame_bytes = 4096;

        kb_msg *got = NULL;
        assert_int_equal(kb_wire_recv(server, test_key, &l, &got), -EAGAIN); /* nothing queued: no block */
        assert_null(got);

        /* An over-limit message, then a good one: the first is drained whole and the second
         * decodes, so the socket stays in step. */
        send_raw(client, 20, 1);
        send_raw(client, 3, 5000);
        kb_msg *sent = NULL;
        json_object *content = json_object_new_object();
        json_object_object_add(content, "code", json_object_new_string("1+1"));
        assert_int_equal(kb_msg_new("execute_request", "s", "u", content, &sent), 0);
        assert_int_equal(kb_wire_send(client, sent, test_key), 0);

        wait_readable(server);
        assert_int_equal(kb_wire_recv(server, test_key, &l, &got), -E2BIG);
        wait_readable(server);
        assert_int_equal(kb_wire_recv(server, test_key, &l, &got), -EMSGSIZE);
        wait_readable(server);
        assert_int_equal(kb_wire_recv(server, test_key, &l, &got), 0);
        assert_string_equal(got->msg_id, sent->msg_id);
        assert_string_equal(got->msg_type, "execute_request");
        assert_string_equal(kb_msg_content_string(got, "code"), "1+1");
        assert_int_equal(got->n_identities, 0);
        kb_msg_destroy(&got);
        assert_int_equal(kb_wire_recv(server, test_key, &l, &got), -EAGAIN);

        /* A wrongly keyed message is received whole and refused. */
        kb_hmac *wrong = hmac_of("wrong", 5);
        assert_int_equal(kb_wire_send(client, sent, wrong), 0);
        kb_hmac_destroy(&wrong);
        wait_readable(server);
        assert_int_equal(kb_wire_recv(server, test_key, &l, &got), -EBADMSG);
        assert_null(got);
        assert_int_equal(kb_wire_recv(server, test_key, &l, &got), -EAGAIN);

        kb_msg_destroy(&sent);
        zsock_destroy(&client);
        zsock_destroy(&server);
}

/* One generator for every msg_id and the client's session: canonical version-4 UUIDs, never the
 * same twice. */
static void test_uuid(void **state) {
        (void) state;
        regex_t re;
        assert_int_equal(regcomp(&re, "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
                                 REG_EXTENDED | REG_NOSUB),
                         0);
        char a[KB_WIRE_UUID_LEN + 1], b[KB_WIRE_UUID_LEN + 1];
        assert_int_equal(kb_wire_uuid(a), 0);
        assert_int_equal(kb_wire_uuid(b), 0);
        assert_int_equal(strlen(a), KB_WIRE_UUID_LEN);
        assert_int_equal(regexec(&re, a, 0, NULL, 0), 0);
        assert_int_equal(regexec(&re, b, 0, NULL, 0), 0);
        assert_string_not_equal(a, b);
        regfree(&re);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_limits_default),
                cmocka_unit_test(test_uuid),
                cmocka_unit_test(test_sign_known_answer),
                cmocka_unit_test(test_decode_known_answer),
                cmocka_unit_test(test_decode_unfinished_joined_to_next),
                cmocka_unit_test(test_sign_depends_on_every_part_and_key),
                cmocka_unit_test(test_sign_rfc4231),
                cmocka_unit_test(test_sign_keys_and_threads),
                cmocka_unit_test(test_hmac_required),
                cmocka_unit_test(test_serialize_json_c_text),
                cmocka_unit_test(test_roundtrip_new_serialize_decode),
                cmocka_unit_test(test_msg_new_header),
                cmocka_unit_test(test_msg_new_invalid_takes_content),
                cmocka_unit_test(test_reject_too_many_frames),
                cmocka_unit_test(test_reject_frame_too_big),
                cmocka_unit_test(test_reject_total_too_big),
                cmocka_unit_test(test_reject_no_delimiter),
                cmocka_unit_test(test_reject_too_few_frames),
                cmocka_unit_test(test_reject_bad_json),
                cmocka_unit_test(test_reject_trailing_garbage),
                cmocka_unit_test(test_parse_after_refused_part),
                cmocka_unit_test(test_reject_json_not_object),
                cmocka_unit_test(test_reject_header_fields),
                cmocka_unit_test(test_reject_unsigned_with_key),
                cmocka_unit_test(test_reject_signature_wrong_length),
                cmocka_unit_test(test_reject_signature_not_hex),
                cmocka_unit_test(test_reject_signature_mismatch),
                cmocka_unit_test(test_reject_depth),
                cmocka_unit_test(test_reject_embedded_nul),
                cmocka_unit_test(test_signature_checked_before_json),
                cmocka_unit_test(test_limits_checked_before_signature),
                cmocka_unit_test(test_identities_and_buffers),
                cmocka_unit_test(test_parent_msg_id),
                cmocka_unit_test(test_unsigned_mode),
                cmocka_unit_test(test_strerror),
                cmocka_unit_test(test_socket_round_trip),
        };
        return cmocka_run_group_tests(tests, keys_setup, keys_teardown);
}

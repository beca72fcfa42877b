/* wire.h: Jupyter wire messages: build, sign (HMAC-SHA256), serialize, receive, verify, parse. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <czmq.h>
#include <json-c/json.h>
#include "kbound/common.h"

#define KB_WIRE_DELIMITER "<IDS|MSG>"
#define KB_PROTOCOL_VERSION "5.3"
#define KB_HMAC_HEX_LEN 64

/* Ceilings applied to everything received. Anything past them is refused, never truncated. */
typedef struct kb_wire_limits {
        size_t max_frames;      /* whole multipart message, identities and buffers included */
        size_t max_frame_bytes; /* any one frame */
        size_t max_total_bytes; /* sum of all frames */
        int max_json_depth;     /* nesting depth of any of the four JSON frames */
} kb_wire_limits;

/* Defaults: 64 frames, 16 MiB a frame, 64 MiB in all, JSON depth 64. */
KB_EXPORT void kb_wire_limits_default(kb_wire_limits *ret);

/* A borrowed view of one frame. */
typedef struct kb_frame {
        const void *data;
        size_t size;
} kb_frame;

/* An owned byte string (identities and buffers are binary). */
typedef struct kb_blob {
        unsigned char *data;
        size_t size;
} kb_blob;

/* A connection's signing key made ready once: OpenSSL's HMAC-SHA256 (EVP_MAC) keyed with it.
 * Never changed after kb_hmac_new, so one may be used by several threads at once. Made from an
 * empty key it signs nothing and verifies nothing (jupyter_client's rule for a connection
 * without a key). */
typedef struct kb_hmac kb_hmac;

/* Keys an HMAC-SHA256 with key[0..key_size) (the bytes of the connection file's "key" string;
 * the context keeps its own copy, wiped when it is freed). key may be NULL when key_size is 0.
 * Returns 0, -EINVAL, -ENOMEM, or -EIO (OpenSSL could not make the HMAC). */
KB_EXPORT int kb_hmac_new(const void *key, size_t key_size, kb_hmac **ret);

/* Frees *hp and sets it to NULL. Accepts NULL and *hp == NULL. */
KB_EXPORT void kb_hmac_destroy(kb_hmac **hp);

/* Whether hmac signs (was made from a non-empty key). false for NULL. */
KB_EXPORT bool kb_hmac_signs(const kb_hmac *hmac);

typedef struct kb_msg {
        kb_blob *identities;
        size_t n_identities;
        json_object *header; /* always an object */
        json_object *parent_header;
        json_object *metadata;
        json_object *content;
        kb_blob *buffers;
        size_t n_buffers;
        /* Borrowed from header / parent_header; never NULL ("" when absent). */
        const char *msg_id;
        const char *msg_type;
        const char *parent_msg_id;
        size_t wire_size; /* bytes of all its frames as received (0 for a message built here) */
        /* Frames of an unfinished message that ZeroMQ joined in front of this one, dropped: its
         * sender stopped between frames (kb_wire_decode). 0 for a whole message. */
        size_t unfinished_frames;
        /* The signature as received and verified (lowercase hex), "" when the connection has no
         * key or for a message built here: what a replay of this message would carry again. */
        char signature[KB_HMAC_HEX_LEN + 1];
} kb_msg;

/* Builds a new request with a fresh msg_id (a random version 4 UUID from OpenSSL's RAND_bytes),
 * the given session and username, the current time as ISO-8601 UTC with microseconds, and
 * version KB_PROTOCOL_VERSION. Takes ownership of content (NULL means {}), also on failure.
 * parent_header and metadata start as {}.
 * Returns 0, -ENOMEM, -EINVAL, or -EIO (OpenSSL's random generator failed). */
KB_EXPORT int kb_msg_new(const char *msg_type, const char *session, const char *username, json_object *content,
                         kb_msg **ret);

/* Frees msg and everything it owns; sets *msgp to NULL. Accepts NULL and *msgp == NULL. */
KB_EXPORT void kb_msg_destroy(kb_msg **msgp);

/* Convenience accessors for content fields. Return a borrowed string, or NULL if missing or not a
 * string. */
KB_EXPORT const char *kb_msg_content_string(const kb_msg *msg, const char *field);

/* Computes the lowercase hex HMAC-SHA256 of the four JSON parts (header, parent_header, metadata,
 * content) in that order. With an hmac made from the empty key, ret_hex becomes "".
 * Returns 0, -EINVAL, -ENOMEM or -EIO (OpenSSL). */
KB_EXPORT int kb_wire_sign(const kb_hmac *hmac, const kb_frame parts[4], char ret_hex[KB_HMAC_HEX_LEN + 1]);

/* Serializes msg into frames ready to send: identities, delimiter, signature, four JSON parts
 * (json-c's text, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), buffers. json-c keeps
 * an object's text inside the object, so this writes to msg's JSON objects: one message is not
 * serialized or sent by two threads at once. Returns 0, -EINVAL, -ENOMEM or -EIO. */
KB_EXPORT int kb_wire_serialize(const kb_msg *msg, const kb_hmac *hmac, zmsg_t **ret);

/* Decodes one received multipart message. Order of checks (all before any JSON is parsed, except
 * the last two): frame count and sizes against limits, the delimiter, the signature's presence and
 * length, then the HMAC compared in constant time; then the JSON parts are parsed with the depth
 * limit, and the header must be an object with string msg_id and msg_type.
 * Errors, each distinct so callers can say what was wrong:
 *   -E2BIG      more frames than limits->max_frames
 *   -EMSGSIZE   a frame over max_frame_bytes, or all frames over max_total_bytes
 *   -EPROTO     malformed: no delimiter, fewer than 5 frames after it, JSON invalid or not an
 *               object, header lacks msg_id/msg_type
 *   -ENOKEY     unsigned (empty signature) while a key is set
 *   -EBADMSG    signature of the wrong length, not hex, or not matching
 *   -ELOOP      a JSON part nested deeper than max_json_depth
 *   -ENOMEM
 *   -EINVAL     no hmac, or max_json_depth outside 1..4096 (a caller's error)
 * (-EEXIST and -ENOTUNIQ are the client's: a replayed signature, a reused msg_id.)
 * On success *ret owns copies of everything; on failure *ret is untouched. */
KB_EXPORT int kb_wire_decode(const kb_frame *frames, size_t n_frames, const kb_hmac *hmac, const kb_wire_limits *limits,
                             kb_msg **ret);

/* Sends msg on sock, a libzmq socket or a czmq zsock_t (czmq's zsock_resolve tells them apart;
 * non-blocking is the caller's socket option), serialized as kb_wire_serialize does.
 * Returns 0, -EINVAL, -EAGAIN, -EIO... */
KB_EXPORT int kb_wire_send(void *sock, const kb_msg *msg, const kb_hmac *hmac);

/* Receives one whole multipart message from sock (as kb_wire_send takes it) without blocking (call after a poll says it
 * is readable) and decodes it as kb_wire_decode does. Frames past the limits are drained and dropped so the socket
 * stays in step. Returns what kb_wire_decode returns, or -EAGAIN if nothing was there. */
KB_EXPORT int kb_wire_recv(void *sock, const kb_hmac *hmac, const kb_wire_limits *limits, kb_msg **ret);

/* A random (version 4, RFC 4122) UUID in canonical lowercase form, from OpenSSL's RAND_bytes: every
 * msg_id and the client's session id. Returns 0, or -EIO when no random bytes could be had. */
#define KB_WIRE_UUID_LEN 36
KB_EXPORT int kb_wire_uuid(char out[KB_WIRE_UUID_LEN + 1]);

/* A short human name for a kb_wire_decode error ("bad signature", "over frame size limit", ...). */
KB_EXPORT const char *kb_wire_strerror(int err);

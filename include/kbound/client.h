/* client.h: a Jupyter client over the five channels: readiness, execute, interrupt, shutdown, hb. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "kbound/common.h"
#include "kbound/connection.h"
#include "kbound/error.h"
#include "kbound/wire.h"

typedef struct kb_client kb_client;

/* Called for every message sent ("out") or received ("in"), after verification, before dispatch:
 * the transcript hook. It must not keep msg. */
typedef void (*kb_client_msg_fn)(void *userdata, kb_channel channel, const char *direction, const kb_msg *msg);

typedef struct kb_client_options {
        const char *username;    /* header.username; NULL → "kbound" */
        kb_wire_limits limits;   /* zero-filled → kb_wire_limits_default() */
        int death_fd;            /* a pidfd of the kernel (readable once it exited); <= 0: none */
        int cancel_fd;           /* readable when the caller wants every wait to end; <= 0: none */
        kb_client_msg_fn on_msg; /* optional transcript hook */
        void *on_msg_userdata;
} kb_client_options;

#define KB_EXECUTION_TEXT_MAX (1024 * 1024)
/* Rich outputs (display_data, execute_result, error) kept per execution, counted in wire bytes:
 * room for any real figure, and a ceiling on what a flooding kernel can make kbound hold. */
#define KB_EXECUTION_OUTPUTS_MAX (32 * 1024 * 1024)

/* Everything one execute_request produced, collected by parent msg_id. */
typedef struct kb_execution {
        char *msg_id;
        bool got_reply;                  /* execute_reply arrived */
        bool saw_busy, saw_idle;         /* iopub status for this request */
        char *status;                    /* execute_reply content.status: "ok", "error", "abort", "aborted", ... */
        int64_t execution_count;         /* -1 if absent */
        char *ename, *evalue;            /* for status "error" */
        json_object *reply;              /* the execute_reply content */
        char *stdout_text, *stderr_text; /* concatenated stream output, each capped; may hold NUL
                                          * bytes (a kernel's), so use the lengths */
        size_t stdout_len, stderr_len;
        bool text_truncated;    /* a stream went past KB_EXECUTION_TEXT_MAX */
        json_object *outputs;   /* array of {"msg_type", "data", "metadata"} for display_data,
                                 * update_display_data and execute_result */
        json_object *errors;    /* array of iopub "error" contents */
        size_t outputs_bytes;   /* wire bytes of what outputs and errors hold */
        bool outputs_truncated; /* outputs or errors went past KB_EXECUTION_OUTPUTS_MAX; the
                                 * rest was dropped */
        uint64_t n_iopub;       /* iopub messages received for it, and their wire bytes */
        uint64_t iopub_bytes;
        int64_t sent_ms, reply_ms, idle_ms; /* kb_now_ms() stamps */
} kb_execution;

/* Called for each iopub message belonging to ex. Return non-zero to make kb_client_execute_wait
 * return 1 right after it (e.g. a marker has arrived); 0 to keep waiting. */
typedef int (*kb_iopub_fn)(void *userdata, kb_execution *ex, const kb_msg *msg);

typedef struct kb_execute_options {
        bool silent;
        bool store_history;
        bool stop_on_error;
        bool allow_stdin; /* the kernel may ask for input; the caller must then answer it (an
                           * input_request is seen by the on_msg hook; answer with
                           * kb_client_request_send on KB_CHANNEL_STDIN) */
} kb_execute_options;

/* Connects the five channels (shell, control, stdin: DEALER; iopub: SUB to everything; hb: REQ)
 * to conn's endpoints, with ip_override replacing conn->ip (see kb_connection_endpoint). Does not
 * wait for the kernel. Tells czmq not to install its signal handlers (the process's signal
 * handling stays the caller's). Sockets are made with libzmq directly, so running out of
 * descriptors is an error here, never czmq's assertion. The connection's key is made ready for
 * signing here, once (kb_hmac_new). Returns 0, -ENAMETOOLONG, -ENOMEM, -EIO (OpenSSL could not key
 * the HMAC), or -errno from libzmq (-EMFILE: no descriptor left for a socket). */
KB_EXPORT int kb_client_new(const kb_connection *conn, const char *ip_override, const kb_client_options *options,
                            kb_client **ret);

/* Frees c and closes its sockets (linger 0); sets *cp to NULL. Accepts NULL. */
KB_EXPORT void kb_client_destroy(kb_client **cp);

/* The session id this client puts in every header. */
KB_EXPORT const char *kb_client_session(const kb_client *c);

/* Waits until the kernel answers: repeats kernel_info_request (a fresh msg_id each time, every
 * retry_ms) until a kernel_info_reply to one of them arrived AND iopub has delivered at least one
 * message (so iopub is subscribed). *ret_info (may be NULL) gets the reply content.
 * Returns 0, -ETIMEDOUT, -ESRCH (the death fd says the kernel exited), -ECANCELED (the cancel fd
 * became readable), or a receive error. */
KB_EXPORT int kb_client_wait_ready(kb_client *c, int64_t deadline_ms, json_object **ret_info);

/* Sends an execute_request and returns the collector for it. Returns 0, -ENOMEM, -EIO. */
KB_EXPORT int kb_client_execute_start(kb_client *c, const char *code, const kb_execute_options *options,
                                      kb_execution **ret);

/* Receives and dispatches messages until ex has its execute_reply and its idle status, fn asks to
 * stop (returns 1), or deadline_ms. Messages for other requests are kept for their own waits (up
 * to a ceiling) or dropped (iopub of finished requests). Returns 0 (complete), 1 (fn stopped),
 * -ETIMEDOUT, -ESRCH (kernel exited, seen on the death fd), -ECONNRESET (libzmq dropped a
 * channel's connection, e.g. for a frame over twice the frame limit: a message was lost), or a
 * kb_wire_recv error: a message that fails verification ends the wait (see kb_client_last_error,
 * which also names the channel of a -ECONNRESET, and kb_client_error for its words). Every wait
 * below ends the same ways. */
KB_EXPORT int kb_client_execute_wait(kb_client *c, kb_execution *ex, int64_t deadline_ms, kb_iopub_fn fn,
                                     void *userdata);

/* After a wait for ex ended with -ETIMEDOUT: what did and did not arrive for it, in words, for the
 * diagnosis ("no execute_reply, although the kernel published busy and idle for the request"),
 * adding how much iopub traffic it got when that was a flood (over KB_EXECUTION_TEXT_MAX) and how
 * many messages answered requests this client never sent (a wrong parent msg_id).
 * buf is always NUL-terminated. */
KB_EXPORT void kb_execution_explain_timeout(const kb_client *c, const kb_execution *ex, char *buf, size_t size);

/* Frees ex (and stops tracking it). Accepts NULL. */
KB_EXPORT void kb_execution_destroy(kb_client *c, kb_execution **exp);

/* Convenience: execute code and wait for completion. */
KB_EXPORT int kb_client_execute(kb_client *c, const char *code, const kb_execute_options *options, int64_t deadline_ms,
                                kb_execution **ret);

/* Sends msg_type with content (taken, NULL → {}) on channel (shell or control) and waits for the
 * reply to it. Returns 0 and *ret_reply (the reply message, caller destroys), -ETIMEDOUT, -ESRCH,
 * or a receive error. */
KB_EXPORT int kb_client_request(kb_client *c, kb_channel channel, const char *msg_type, json_object *content,
                                int64_t deadline_ms, kb_msg **ret_reply);

/* Sends msg_type with content (taken, NULL → {}) on channel without waiting; *ret_id gets its
 * msg_id (malloc'd). Whatever answers it is kept until kb_client_reply_take. Returns 0 or -errno. */
KB_EXPORT int kb_client_request_send(kb_client *c, kb_channel channel, const char *msg_type, json_object *content,
                                     char **ret_id);

/* The reply to msg_id id on channel if it has arrived during any wait (the caller destroys it),
 * else NULL. Never waits. */
KB_EXPORT kb_msg *kb_client_reply_take(kb_client *c, kb_channel channel, const char *id);

/* Waits until deadline_ms for traffic and routes what arrived, as every wait does (executions
 * collect their iopub, replies are kept for kb_client_reply_take, the on_msg hook sees each): for
 * messages no request waits for, such as a comm's iopub or an input_request. Returns 1 if
 * something arrived, 0 at the deadline, or the errors of any wait (-ESRCH, -ECANCELED, ...). */
KB_EXPORT int kb_client_poll(kb_client *c, int64_t deadline_ms);

/* interrupt_request on control; *ret_status (may be NULL) gets the reply's status string. */
KB_EXPORT int kb_client_interrupt(kb_client *c, int64_t deadline_ms, char **ret_status);

/* shutdown_request on control (restart false); waits for shutdown_reply. */
KB_EXPORT int kb_client_shutdown(kb_client *c, int64_t deadline_ms);

/* One heartbeat ping: 1 if echoed before deadline_ms, 0 if not (the socket is then reset so a
 * later ping can work), negative on error. Only a hint: busy kernels (IRkernel) may not answer. */
KB_EXPORT int kb_client_heartbeat(kb_client *c, int64_t deadline_ms);

/* The kernel's offence that ended the call which just failed on c, as the client recorded it: the
 * channel, and an errno-style code: a kb_wire_recv error, -ECONNRESET (a dropped connection),
 * -EEXIST (a replayed message: its signature was already seen on this connection; the last 65536
 * signatures and msg_ids are remembered) or -ENOTUNIQ (a msg_id already seen on this connection).
 * The call returns that code. Every send and every wait starts with none recorded, so a failure
 * that was no offence of the kernel's (its death, the deadline, a send that failed) leaves
 * *ret_error 0. A record on the object, beside the call's -errno, because it is a fact about the
 * peer (which channel, which message type) that callers compose into their own sentences
 * (kb_kernel_start: "kernel sent a bad message on iopub during start-up"); the failure itself
 * reaches callers as the call's -errno, and its words as an error through kb_client_error. */
KB_EXPORT void kb_client_last_error(const kb_client *c, kb_channel *ret_channel, int *ret_error);

/* The failure r of the call that just ended on c, as an error: the kernel's offence named by its
 * channel ("bad message on iopub: bad signature", "lost messages on iopub: connection dropped
 * (...)", "bad message on iopub: replayed message (msg_type 'stream'): its signature was already
 * seen on this connection (refused)"), any other failure in the wire's words ("crypto or socket
 * failure") or the errno's. Returns r (-EIO for an r that is not negative). */
KB_EXPORT int kb_client_error(const kb_client *c, int r, kb_error **ret_error);

/* The recorded offence's words without its channel, for callers composing their own sentence
 * (fallback is the error described when the client recorded none). buf is always NUL-terminated. */
KB_EXPORT void kb_client_error_detail(const kb_client *c, int fallback, char *buf, size_t size);

/* Counters for reports: messages dropped because nobody waited for them, messages received.
 * Accepts NULL (both 0). */
KB_EXPORT void kb_client_stats(const kb_client *c, uint64_t *ret_received, uint64_t *ret_dropped);
/* Messages the kernel left unfinished (it stopped between their frames) that ZeroMQ joined to its
 * next one: the unfinished part was dropped, the next message kept (kb_wire_decode). */
KB_EXPORT uint64_t kb_client_unfinished(const kb_client *c);

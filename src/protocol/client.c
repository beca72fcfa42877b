/* client.c: a Jupyter client over the five channels, correlating everything by parent msg_id. */
#include "kbound/client.h"
#include "base/cleanup.h"
#include "protocol/replay-internal.h"
#include "protocol/execution-internal.h"
#include "base/jsonget.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#define PENDING_MAX 32     /* replies nobody has asked for yet; oldest dropped past this */
#define TRACKED_MAX 16     /* executions collecting iopub output at once */
#define READY_RETRY_MS 250 /* kernel_info_request resend interval while waiting for readiness */
#define READY_IDS_MAX 64
#define IDLE_GRACE_MS 2000                /* how long to wait for "idle" once the execute_reply is in */
#define DEATH_AFTER_DISCONNECT_MS 500     /* how long a dropped connection waits for the pidfd */
#define DEATH_DRAIN_MAX_MS 2000           /* how long a death waits for connections another process keeps open */
#define SENT_IDS_MAX 256                  /* recent request msg_ids, to tell replies to requests we never sent */
#define MSG_ID_MAX 64                     /* our msg_ids are canonical uuids (36 characters) */
#define RECV_HWM 16                       /* messages libzmq queues per socket before pushing back */
#define PUMP_DRAIN_MAX 256                /* messages taken from one socket per pump, so no channel starves */
#define PUMP_BYTES_MAX (64 * 1024 * 1024) /* wire bytes taken from one socket per pump */
#define MSG_TYPE_SHOWN_MAX 48             /* a refused message's msg_type, as quoted in errors */

struct kb_client {
        /* libzmq sockets, not czmq's zsock_t: zsock_new asserts when libzmq cannot make a socket
         * (out of descriptors, EMFILE), and that abort would leave the team folders and the
         * connection key on disk. Made here, a failure is an error like any other. */
        void *sock[_KB_CHANNEL_MAX];
        void *monitor[_KB_CHANNEL_MAX]; /* disconnect events of shell, iopub, stdin, control */
        char *endpoint_hb;
        kb_hmac *hmac; /* the connection's key, keyed once (wire.h) */
        char *session;
        char *username;
        kb_wire_limits limits;
        int death_fd;
        int cancel_fd;
        kb_client_msg_fn on_msg;
        void *on_msg_userdata;

        kb_msg *pending[PENDING_MAX];
        kb_channel pending_channel[PENDING_MAX];
        size_t n_pending;

        kb_execution *tracked[TRACKED_MAX];
        size_t n_tracked;

        /* The wait in progress, so dispatch can call its callback. */
        kb_execution *wait_ex;
        kb_iopub_fn wait_fn;
        void *wait_userdata;
        bool wait_stop;
        int64_t wait_last_iopub_ms; /* when iopub last delivered something for wait_ex */

        bool iopub_seen;
        kb_channel last_error_channel;
        int last_error;
        char last_error_msg_type[MSG_TYPE_SHOWN_MAX + 1]; /* of a refused replay; "" otherwise */

        /* What this connection received, all channels together (one Session, as jupyter_client
         * keeps one): a signature seen again is a replay, a msg_id seen again a reuse. */
        kb_replay_history *seen_signatures; /* NULL without a key: nothing is signed */
        kb_replay_history *seen_msg_ids;
        uint64_t n_received, n_dropped;
        uint64_t n_unfinished; /* unfinished messages ZeroMQ joined to a sender's next (wire.c) */

        /* A ring of the msg_ids we sent: a message whose parent is none of them answers nothing
         * of ours (a kernel replying with a wrong parent), and counts as foreign. */
        char sent_ids[SENT_IDS_MAX][MSG_ID_MAX];
        size_t n_sent;
        uint64_t n_foreign;
};

/* czmq's global set-up (zsys_init) is not thread-safe, and kernels are checked on several
 * threads at once: run it exactly once. The only process-wide state kbound touches. */
static pthread_once_t czmq_once = PTHREAD_ONCE_INIT;

static void czmq_setup(void) {
        /* czmq installs its own SIGINT/SIGTERM handlers when it initialises, replacing the
         * caller's: a library must leave the process's signal handling alone. */
        zsys_handler_set(NULL);
        zsys_init();
}

/* Sets one integer option; -errno on failure. */
static int set_int(void *s, int option, int value) {
        return zmq_setsockopt(s, option, &value, sizeof(value)) < 0 ? -errno : 0;
}

/* A libzmq socket of type in czmq's context, configured and connected to endpoint. Returns 0 and
 * *ret, or -errno (-EMFILE: out of descriptors). */
/* routing_id: the socket's ZMQ identity, or NULL for libzmq's own. */
static int socket_new(int type, const char *endpoint, const kb_wire_limits *limits, const char *routing_id,
                      void **ret) {
        void *s = zmq_socket(zsys_init(), type);
        if (!s)
                return -errno;
        /* libzmq drops the peer for a frame past this, so a hostile kernel cannot make us buffer
         * gigabytes; frames between the limit and twice it still reach the decoder, which names them. */
        int64_t maxmsg = (int64_t) limits->max_frame_bytes * 2;
        int r = set_int(s, ZMQ_LINGER, 0);
        if (r >= 0)
                r = set_int(s, ZMQ_SNDTIMEO, 1000);
        if (r >= 0)
                r = set_int(s, ZMQ_RECONNECT_IVL, 20);
        if (r >= 0 && zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg)) < 0)
                r = -errno;
        /* libzmq reads ahead into a queue of up to RCVHWM messages, 1000 by default: with frames of
         * 16 MiB that is gigabytes a flooding kernel makes kbound hold. A short queue pushes back
         * on the kernel instead (its PUB socket drops past its own high-water mark, as it would for
         * any slow subscriber). */
        if (r >= 0)
                r = set_int(s, ZMQ_RCVHWM, RECV_HWM);
        if (r >= 0 && routing_id && zmq_setsockopt(s, ZMQ_ROUTING_ID, routing_id, strlen(routing_id)) < 0)
                r = -errno;
        if (r >= 0 && type == ZMQ_SUB && zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0) < 0)
                r = -errno;
        if (r >= 0 && type == ZMQ_REQ) {
                r = set_int(s, ZMQ_REQ_RELAXED, 1);
                if (r >= 0)
                        r = set_int(s, ZMQ_REQ_CORRELATE, 1);
        }
        if (r >= 0 && zmq_connect(s, endpoint) < 0)
                r = -errno;
        if (r < 0) {
                zmq_close(s);
                return r;
        }
        *ret = s;
        return 0;
}

/* Watches channel ch for a dropped connection. libzmq drops the peer for a frame past
 * ZMQ_MAXMSGSIZE (or any protocol error) and reconnects, and the message is gone without a trace:
 * a kernel could make kbound lose output and still see the reply. The monitor is how we learn of
 * it. The endpoint carries the session id, unique to this client. */
static int monitor_new(kb_client *c, kb_channel ch) {
        char endpoint[128];
        snprintf(endpoint, sizeof(endpoint), "inproc://kbound-monitor-%s-%d", c->session, (int) ch);
        if (zmq_socket_monitor(c->sock[ch], endpoint, ZMQ_EVENT_DISCONNECTED) < 0)
                return -errno;
        void *m = zmq_socket(zsys_init(), ZMQ_PAIR);
        if (!m)
                return -errno;
        c->monitor[ch] = m;
        if (set_int(m, ZMQ_LINGER, 0) < 0 || zmq_connect(m, endpoint) < 0)
                return -errno;
        return 0;
}

/* Closes *s if open and sets it to NULL. */
static void socket_close(void **s) {
        if (*s)
                zmq_close(*s);
        *s = NULL;
}

int kb_client_new(const kb_connection *conn, const char *ip_override, const kb_client_options *options,
                  kb_client **ret) {
        static const int types[_KB_CHANNEL_MAX] = {
                [KB_CHANNEL_SHELL] = ZMQ_DEALER,   [KB_CHANNEL_IOPUB] = ZMQ_SUB, [KB_CHANNEL_STDIN] = ZMQ_DEALER,
                [KB_CHANNEL_CONTROL] = ZMQ_DEALER, [KB_CHANNEL_HB] = ZMQ_REQ,
        };
        pthread_once(&czmq_once, czmq_setup);
        kb_client *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->death_fd = -1;
        c->cancel_fd = -1;
        kb_wire_limits_default(&c->limits);
        if (options) {
                if (options->limits.max_frames)
                        c->limits = options->limits;
                c->death_fd = options->death_fd > 0 ? options->death_fd : -1;
                c->cancel_fd = options->cancel_fd > 0 ? options->cancel_fd : -1;
                c->on_msg = options->on_msg;
                c->on_msg_userdata = options->on_msg_userdata;
        }
        c->username = strdup(options && options->username ? options->username : "kbound");
        char session[KB_WIRE_UUID_LEN + 1];
        int ur = kb_wire_uuid(session);
        c->session = ur == 0 ? strdup(session) : NULL;
        if (!c->username || !c->session) {
                kb_client_destroy(&c);
                return ur < 0 ? ur : -ENOMEM;
        }
        const char *key = conn->key ? conn->key : "";
        int hr = kb_hmac_new(key, strlen(key), &c->hmac);
        if (hr >= 0)
                hr = kb_replay_history_new(KB_REPLAY_HISTORY_DEFAULT, &c->seen_msg_ids);
        if (hr >= 0 && kb_hmac_signs(c->hmac))
                hr = kb_replay_history_new(KB_REPLAY_HISTORY_DEFAULT, &c->seen_signatures);
        if (hr < 0) {
                kb_client_destroy(&c);
                return hr;
        }

        for (int ch = 0; ch < _KB_CHANNEL_MAX; ch++) {
                char endpoint[256];
                int r = kb_connection_endpoint(conn, (kb_channel) ch, ip_override, endpoint, sizeof(endpoint));
                if (r < 0) {
                        kb_client_destroy(&c);
                        return r;
                }
                if (ch == KB_CHANNEL_HB) {
                        c->endpoint_hb = strdup(endpoint);
                        if (!c->endpoint_hb) {
                                kb_client_destroy(&c);
                                return -ENOMEM;
                        }
                }
                /* The kernel sends input_request on stdin to the identity its execute_request came
                 * from on shell (the messaging spec: "The stdin socket of the client is required to
                 * have the same zmq IDENTITY as the client's shell socket"), as jupyter_client does
                 * with its session id. */
                bool same_identity = ch == KB_CHANNEL_SHELL || ch == KB_CHANNEL_STDIN;
                r = socket_new(types[ch], endpoint, &c->limits, same_identity ? c->session : NULL, &c->sock[ch]);
                if (r < 0) {
                        kb_client_destroy(&c);
                        return r;
                }
                if (ch != KB_CHANNEL_HB) {
                        r = monitor_new(c, (kb_channel) ch);
                        if (r < 0) {
                                kb_client_destroy(&c);
                                return r;
                        }
                }
        }
        *ret = c;
        return 0;
}

static void execution_free(kb_execution *ex) {
        if (!ex)
                return;
        free(ex->msg_id);
        free(ex->status);
        free(ex->ename);
        free(ex->evalue);
        json_object_put(ex->reply);
        free(ex->stdout_text);
        free(ex->stderr_text);
        json_object_put(ex->outputs);
        json_object_put(ex->errors);
        free(ex);
}

void kb_client_destroy(kb_client **cp) {
        if (!cp || !*cp)
                return;
        kb_client *c = *cp;
        for (int ch = 0; ch < _KB_CHANNEL_MAX; ch++) {
                if (c->monitor[ch] && c->sock[ch])
                        zmq_socket_monitor(c->sock[ch], NULL, 0);
                socket_close(&c->monitor[ch]);
                socket_close(&c->sock[ch]);
        }
        for (size_t i = 0; i < c->n_pending; i++)
                kb_msg_destroy(&c->pending[i]);
        kb_replay_history_destroy(&c->seen_signatures);
        kb_replay_history_destroy(&c->seen_msg_ids);
        /* Executions belong to their callers; only forget them. */
        kb_hmac_destroy(&c->hmac);
        free(c->endpoint_hb);
        free(c->session);
        free(c->username);
        free(c);
        *cp = NULL;
}

const char *kb_client_session(const kb_client *c) {
        return c->session;
}

void kb_client_last_error(const kb_client *c, kb_channel *ret_channel, int *ret_error) {
        if (ret_channel)
                *ret_channel = c->last_error_channel;
        if (ret_error)
                *ret_error = c->last_error;
}

/* Every send and wait starts with no offence recorded, so the record describes the call that just
 * failed, never an older one. */
static void record_clear(kb_client *c) {
        c->last_error = 0;
        c->last_error_channel = KB_CHANNEL_SHELL;
        c->last_error_msg_type[0] = '\0';
}

/* r in words: the wire's (its refusals, its send), else the errno's own. */
static const char *failure_words(int r) {
        const char *words = kb_wire_strerror(r);
        return strcmp(words, "unknown error") != 0 ? words : strerror(r < 0 ? -r : r);
}

void kb_client_error_detail(const kb_client *c, int fallback, char *buf, size_t size) {
        int err = c->last_error ? c->last_error : fallback;
        if (err == -EEXIST)
                snprintf(buf, size,
                         "replayed message (msg_type '%s'): its signature was already seen on this "
                         "connection (refused)",
                         c->last_error_msg_type);
        else if (err == -ENOTUNIQ)
                snprintf(buf, size,
                         "reused msg_id (msg_type '%s'): an earlier message on this connection had the "
                         "same msg_id (refused)",
                         c->last_error_msg_type);
        else
                snprintf(buf, size, "%s", kb_wire_strerror(err));
}

int kb_client_error(const kb_client *c, int r, kb_error **ret_error) {
        if (r >= 0)
                r = -EIO; /* asked about a call that did not fail: still an error, never a success */
        if (!c || c->last_error != r)
                return kb_error_make(ret_error, r, "%s", failure_words(r));
        char detail[160];
        kb_client_error_detail(c, r, detail, sizeof(detail));
        return kb_error_make(ret_error, r, "%s on %s: %s", r == -ECONNRESET ? "lost messages" : "bad message",
                             kb_channel_name(c->last_error_channel), detail);
}

void kb_client_stats(const kb_client *c, uint64_t *ret_received, uint64_t *ret_dropped) {
        if (ret_received)
                *ret_received = c ? c->n_received : 0;
        if (ret_dropped)
                *ret_dropped = c ? c->n_dropped : 0;
}

uint64_t kb_client_unfinished(const kb_client *c) {
        return c ? c->n_unfinished : 0;
}

/* Builds, signs and sends one request; *ret_msg_id (may be NULL) gets a copy of its msg_id. */
static int send_request(kb_client *c, kb_channel channel, const char *msg_type, json_object *content,
                        char **ret_msg_id) {
        record_clear(c);
        kb_msg *msg = NULL;
        int r = kb_msg_new(msg_type, c->session, c->username, content, &msg);
        if (r < 0)
                return r;
        char *id = NULL;
        if (ret_msg_id) {
                id = strdup(msg->msg_id);
                if (!id) {
                        kb_msg_destroy(&msg);
                        return -ENOMEM;
                }
        }
        if (c->on_msg)
                c->on_msg(c->on_msg_userdata, channel, "out", msg);
        snprintf(c->sent_ids[c->n_sent++ % SENT_IDS_MAX], MSG_ID_MAX, "%s", msg->msg_id);
        r = kb_wire_send(c->sock[channel], msg, c->hmac);
        kb_msg_destroy(&msg);
        if (r < 0) {
                free(id);
                return r;
        }
        if (ret_msg_id)
                *ret_msg_id = id;
        return 0;
}

static kb_execution *tracked_find(kb_client *c, const char *msg_id) {
        for (size_t i = 0; i < c->n_tracked; i++)
                if (strcmp(c->tracked[i]->msg_id, msg_id) == 0)
                        return c->tracked[i];
        return NULL;
}

static void tracked_remove(kb_client *c, kb_execution *ex) {
        for (size_t i = 0; i < c->n_tracked; i++)
                if (c->tracked[i] == ex) {
                        memmove(&c->tracked[i], &c->tracked[i + 1], (c->n_tracked - i - 1) * sizeof(ex));
                        c->n_tracked--;
                        return;
                }
}

static void pending_push(kb_client *c, kb_channel channel, kb_msg *msg) {
        if (c->n_pending == PENDING_MAX) {
                kb_msg_destroy(&c->pending[0]);
                memmove(&c->pending[0], &c->pending[1], (PENDING_MAX - 1) * sizeof(kb_msg *));
                memmove(&c->pending_channel[0], &c->pending_channel[1], (PENDING_MAX - 1) * sizeof(kb_channel));
                c->n_pending--;
                c->n_dropped++;
        }
        c->pending[c->n_pending] = msg;
        c->pending_channel[c->n_pending] = channel;
        c->n_pending++;
}

/* Takes the pending reply on channel whose parent is msg_id, or NULL. */
static kb_msg *pending_take(kb_client *c, kb_channel channel, const char *msg_id) {
        for (size_t i = 0; i < c->n_pending; i++) {
                if (c->pending_channel[i] != channel || strcmp(c->pending[i]->parent_msg_id, msg_id) != 0)
                        continue;
                kb_msg *msg = c->pending[i];
                memmove(&c->pending[i], &c->pending[i + 1], (c->n_pending - i - 1) * sizeof(kb_msg *));
                memmove(&c->pending_channel[i], &c->pending_channel[i + 1],
                        (c->n_pending - i - 1) * sizeof(kb_channel));
                c->n_pending--;
                return msg;
        }
        return NULL;
}

static bool sent_by_us(const kb_client *c, const char *msg_id) {
        size_t n = c->n_sent < SENT_IDS_MAX ? c->n_sent : SENT_IDS_MAX;
        for (size_t i = 0; i < n; i++)
                if (strcmp(c->sent_ids[i], msg_id) == 0)
                        return true;
        return false;
}

/* Routes one verified message. Takes ownership of msg. */
static int dispatch(kb_client *c, kb_channel channel, kb_msg *msg) {
        int r = 0;
        c->n_received++;
        /* No parent at all is legitimate (a kernel's first "starting" status); a parent we never
         * sent is not. */
        if (msg->parent_msg_id[0] && !sent_by_us(c, msg->parent_msg_id))
                c->n_foreign++;
        if (c->on_msg)
                c->on_msg(c->on_msg_userdata, channel, "in", msg);
        if (channel == KB_CHANNEL_IOPUB) {
                c->iopub_seen = true;
                kb_execution *ex = tracked_find(c, msg->parent_msg_id);
                if (!ex) {
                        c->n_dropped++;
                } else {
                        r = kb_execution_apply_iopub(ex, msg);
                        if (ex == c->wait_ex)
                                c->wait_last_iopub_ms = kb_now_ms();
                        if (r >= 0 && ex == c->wait_ex && c->wait_fn && c->wait_fn(c->wait_userdata, ex, msg))
                                c->wait_stop = true;
                }
                kb_msg_destroy(&msg);
                return r;
        }
        if (channel == KB_CHANNEL_SHELL && strcmp(msg->msg_type, "execute_reply") == 0) {
                kb_execution *ex = tracked_find(c, msg->parent_msg_id);
                if (ex && !ex->got_reply) {
                        r = kb_execution_apply_reply(ex, msg);
                        kb_msg_destroy(&msg);
                        return r;
                }
        }
        if (channel == KB_CHANNEL_STDIN) {
                /* Only the on_msg hook sees an input_request: the caller who allowed stdin answers
                 * it; a kernel asking anyway gets no answer. */
                c->n_dropped++;
                kb_msg_destroy(&msg);
                return 0;
        }
        pending_push(c, channel, msg);
        return 0;
}

/* A verified message seen before on this connection: the same signature again is a replay (one
 * signed message sent twice: output printed twice, a second reply, a second idle), as
 * jupyter_client's Session refuses it; a msg_id seen again with other content is a kernel
 * reusing ids, which makes messages indistinguishable. Returns 0, -EEXIST, -ENOTUNIQ or -EIO. */
static int refuse_seen(kb_client *c, const kb_msg *msg) {
        int r = 0;
        if (c->seen_signatures && msg->signature[0])
                r = kb_replay_history_add(c->seen_signatures, msg->signature, strlen(msg->signature));
        if (r < 0)
                return r; /* -EEXIST, or -EIO: a message that cannot be checked is refused too */
        r = kb_replay_history_add(c->seen_msg_ids, msg->msg_id, strlen(msg->msg_id));
        return r == -EEXIST ? -ENOTUNIQ : r;
}

/* Receives and dispatches one message from channel, adding its size to *bytes. Returns 1, 0 if
 * nothing was queued, or a receive, replay or dispatch error. */
static int receive_one(kb_client *c, kb_channel channel, size_t *bytes) {
        kb_msg *msg = NULL;
        int r = kb_wire_recv(c->sock[channel], c->hmac, &c->limits, &msg);
        if (r == -EAGAIN)
                return 0;
        if (r >= 0) {
                r = refuse_seen(c, msg);
                if (r < 0)
                        snprintf(c->last_error_msg_type, sizeof(c->last_error_msg_type), "%s", msg->msg_type);
        }
        if (r < 0) {
                kb_msg_destroy(&msg);
                c->last_error_channel = channel;
                c->last_error = r;
                return r;
        }
        *bytes += msg->wire_size;
        if (msg->unfinished_frames)
                c->n_unfinished++;
        r = dispatch(c, channel, msg);
        return r < 0 ? r : 1;
}

/* Receives and dispatches what is queued on the sockets items[0..n) (channels order[]) report
 * ready, bounded per socket so one flooding channel cannot starve the others, and stopping at the
 * deadline: what is still queued then was not delivered in time. The byte budget (per socket, so
 * a flood on one cannot starve the next) returns to the caller and the cancel fd every so often
 * even without a deadline: the console has none. Returns 1 if something was dispatched, 0 if
 * not, or a receive error. */
static int drain_ready(kb_client *c, const zmq_pollitem_t *items, const kb_channel *order, size_t n,
                       int64_t deadline_ms) {
        int got = 0;
        for (size_t i = 0; i < n; i++) {
                if (!(items[i].revents & ZMQ_POLLIN))
                        continue;
                size_t bytes = 0;
                for (int k = 0; k < PUMP_DRAIN_MAX && bytes < PUMP_BYTES_MAX; k++) {
                        if (kb_ms_left(deadline_ms) == 0)
                                break;
                        int q = receive_one(c, order[i], &bytes);
                        if (q < 0)
                                return q;
                        if (q == 0)
                                break;
                        got = 1;
                }
        }
        return got;
}

/* The kernel is dead: what it sent before dying is dispatched. A kernel that answers and exits at
 * once (shutdown_reply, then exit) is seen dead before libzmq's I/O thread has read its last bytes,
 * the more so on a loaded machine, so the wait is for the event, not for a while: each channel's
 * DISCONNECTED (its monitor), which libzmq sends once it has read that connection to its end.
 * Then the sockets are drained once more. Only connections some other process keeps open (a
 * child that inherited the kernel's sockets) never end: those are waited for DEATH_DRAIN_MAX_MS.
 * seen: the monitors' poll items of the pass that saw the death (their events count). Returns 1
 * if something was dispatched, else -ESRCH (or a receive error). */
static int after_death(kb_client *c, const kb_channel *order, size_t n_order, const zmq_pollitem_t *seen,
                       int64_t deadline_ms) {
        bool open[_KB_CHANNEL_MAX] = {false};
        size_t n_open = 0;
        int64_t end = kb_now_ms() + DEATH_DRAIN_MAX_MS;
        if (deadline_ms >= 0 && deadline_ms < end)
                end = deadline_ms;
        for (size_t i = 0; i < n_order; i++)
                if (c->monitor[order[i]] && !(seen[i].revents & ZMQ_POLLIN)) {
                        open[order[i]] = true;
                        n_open++;
                }
        for (bool last = n_open == 0;; last = last || n_open == 0) {
                zmq_pollitem_t items[2 * _KB_CHANNEL_MAX];
                kb_channel which[2 * _KB_CHANNEL_MAX];
                size_t n = 0;
                for (size_t i = 0; i < n_order; i++)
                        items[n++] = (zmq_pollitem_t){.socket = c->sock[order[i]], .events = ZMQ_POLLIN};
                size_t monitors = n;
                for (size_t i = 0; i < n_order; i++)
                        if (open[order[i]]) {
                                which[n] = order[i];
                                items[n++] = (zmq_pollitem_t){.socket = c->monitor[order[i]], .events = ZMQ_POLLIN};
                        }
                int wait_ms = last ? 0 : kb_ms_left(end);
                int r = zmq_poll(items, (int) n, wait_ms < 0 ? 0 : wait_ms);
                if (r < 0 && errno != EINTR)
                        return -errno;
                int got = r > 0 ? drain_ready(c, items, order, n_order, deadline_ms) : 0;
                if (got != 0)
                        return got;
                for (size_t i = monitors; r > 0 && i < n; i++)
                        if (items[i].revents & ZMQ_POLLIN) {
                                zmsg_t *event = zmsg_recv(c->monitor[which[i]]);
                                zmsg_destroy(&event);
                                open[which[i]] = false;
                                n_open--;
                        }
                if (last || (wait_ms == 0 && n_open > 0))
                        return -ESRCH; /* drained after every connection ended, or waited as long as allowed */
        }
}

/* Waits until deadline_ms (< 0: no deadline) for traffic and dispatches what arrived. Returns 1 if
 * something was dispatched, 0 on timeout, -ESRCH if the death fd fired (after draining what was
 * queued), -ECONNRESET if a connection dropped, or a receive error. Never runs past deadline_ms by
 * more than the cost of one message: a message may be a 16 MiB frame whose HMAC and parse take
 * a noticeable time, and a kernel can queue hundreds of them. */
static int pump(kb_client *c, int64_t deadline_ms) {
        static const kb_channel order[] = {KB_CHANNEL_IOPUB, KB_CHANNEL_SHELL, KB_CHANNEL_CONTROL, KB_CHANNEL_STDIN};
        record_clear(c);
        zmq_pollitem_t items[2 * KB_ELEMENTSOF(order) + 2];
        size_t n = 0;
        for (size_t i = 0; i < KB_ELEMENTSOF(order); i++)
                items[n++] = (zmq_pollitem_t){.socket = c->sock[order[i]], .events = ZMQ_POLLIN};
        size_t monitor_item = n;
        for (size_t i = 0; i < KB_ELEMENTSOF(order); i++)
                items[n++] = (zmq_pollitem_t){.socket = c->monitor[order[i]], .events = ZMQ_POLLIN};
        size_t death_item = n, cancel_item = n;
        if (c->death_fd >= 0) {
                death_item = n;
                items[n++] = (zmq_pollitem_t){.fd = c->death_fd, .events = ZMQ_POLLIN};
        }
        if (c->cancel_fd >= 0) {
                cancel_item = n;
                items[n++] = (zmq_pollitem_t){.fd = c->cancel_fd, .events = ZMQ_POLLIN};
        }
        int r = zmq_poll(items, (int) n, kb_ms_left(deadline_ms));
        if (r < 0)
                return errno == EINTR ? 0 : -errno;
        if (c->cancel_fd >= 0 && (items[cancel_item].revents & ZMQ_POLLIN))
                return -ECANCELED;
        /* iopub first: a kernel publishes outputs before the reply, and a reply processed first
         * would end a wait before its last outputs are counted. */
        int got = drain_ready(c, items, order, KB_ELEMENTSOF(order), deadline_ms);
        if (got != 0)
                return got;
        if (c->death_fd >= 0 && (items[death_item].revents & ZMQ_POLLIN))
                return after_death(c, order, KB_ELEMENTSOF(order), items + monitor_item, deadline_ms);
        for (size_t i = 0; i < KB_ELEMENTSOF(order); i++) {
                if (!(items[monitor_item + i].revents & ZMQ_POLLIN))
                        continue;
                zmsg_t *event = zmsg_recv(c->monitor[order[i]]);
                zmsg_destroy(&event);
                /* A kernel that exits closes its sockets a moment before its pidfd says so: that
                 * is a death, not a dropped connection, and what the kernel sent before it (a
                 * reply on another channel still on its way) is drained as for any death. The
                 * wait for it is part of the caller's. */
                int wait_ms = kb_ms_left(deadline_ms);
                if (wait_ms < 0 || wait_ms > DEATH_AFTER_DISCONNECT_MS)
                        wait_ms = DEATH_AFTER_DISCONNECT_MS;
                struct pollfd death = {.fd = c->death_fd, .events = POLLIN};
                if (c->death_fd >= 0 && poll(&death, 1, wait_ms) > 0)
                        return after_death(c, order, KB_ELEMENTSOF(order), items + monitor_item, deadline_ms);
                c->last_error_channel = order[i];
                c->last_error = -ECONNRESET;
                return -ECONNRESET;
        }
        return 0;
}

void kb_execution_explain_timeout(const kb_client *c, const kb_execution *ex, char *buf, size_t size) {
        char extra[192] = "";
        size_t n = 0;
        /* A flood is why a wait ran out while messages kept arriving: say how much came. */
        if (ex->iopub_bytes > KB_EXECUTION_TEXT_MAX)
                n += (size_t) snprintf(extra, sizeof(extra),
                                       "; the kernel flooded iopub with %llu "
                                       "message(s), %llu MiB, for the request",
                                       (unsigned long long) ex->n_iopub, (unsigned long long) (ex->iopub_bytes >> 20));
        if (c->n_foreign > 0 && n < sizeof(extra))
                snprintf(extra + n, sizeof(extra) - n,
                         "; %llu message(s) answered requests kbound never "
                         "sent (wrong parent msg_id)",
                         (unsigned long long) c->n_foreign);
        if (ex->got_reply)
                snprintf(buf, size, "execute_reply arrived but no idle status%s", extra);
        else if (ex->saw_idle)
                snprintf(buf, size,
                         "no execute_reply, although the kernel published busy and idle for the "
                         "request%s",
                         extra);
        else if (ex->saw_busy)
                snprintf(buf, size, "no execute_reply; the kernel went busy and stayed busy%s", extra);
        else
                snprintf(buf, size,
                         "no execute_reply and nothing at all for the request (no status, no "
                         "output)%s",
                         extra);
}

int kb_client_wait_ready(kb_client *c, int64_t deadline_ms, json_object **ret_info) {
        char *ids[READY_IDS_MAX] = {0};
        size_t n_ids = 0;
        kb_msg *reply = NULL;
        int r = 0;

        while (!reply || !c->iopub_seen) {
                if (kb_ms_left(deadline_ms) == 0) {
                        r = -ETIMEDOUT;
                        goto finish;
                }
                /* Every retry is a fresh request with a fresh msg_id: a kernel still starting drops
                 * early ones, and each answered one makes it publish status on iopub. */
                char *id = NULL;
                r = send_request(c, KB_CHANNEL_SHELL, "kernel_info_request", NULL, &id);
                if (r < 0 && r != -EAGAIN)
                        goto finish;
                if (id) {
                        if (n_ids == READY_IDS_MAX) {
                                free(ids[0]);
                                memmove(&ids[0], &ids[1], (READY_IDS_MAX - 1) * sizeof(char *));
                                n_ids--;
                        }
                        ids[n_ids++] = id;
                }
                int64_t retry_at = kb_now_ms() + READY_RETRY_MS;
                if (deadline_ms >= 0 && retry_at > deadline_ms)
                        retry_at = deadline_ms;
                while (kb_ms_left(retry_at) > 0 && (!reply || !c->iopub_seen)) {
                        r = pump(c, retry_at);
                        if (r < 0)
                                goto finish;
                        for (size_t i = 0; i < n_ids && !reply; i++)
                                reply = pending_take(c, KB_CHANNEL_SHELL, ids[i]);
                }
        }
        /* What the kernel sent with its reply and is already here is read before the kernel counts
         * as ready: a replay of that reply, queued behind it, is a fault of the start-up, not of
         * the first cell (test_hostile_replay's --from-start). */
        r = pump(c, kb_now_ms());
        if (r < 0)
                goto finish;
        r = 0;
        if (ret_info)
                *ret_info = json_object_get(reply->content);
finish:
        kb_msg_destroy(&reply);
        for (size_t i = 0; i < n_ids; i++)
                free(ids[i]);
        return r;
}

int kb_client_execute_start(kb_client *c, const char *code, const kb_execute_options *options, kb_execution **ret) {
        if (c->n_tracked == TRACKED_MAX)
                return -EBUSY;
        kb_execution *ex = calloc(1, sizeof(*ex));
        if (!ex)
                return -ENOMEM;
        ex->execution_count = -1;
        ex->outputs = json_object_new_array();
        ex->errors = json_object_new_array();
        json_object *content = json_object_new_object();
        if (!ex->outputs || !ex->errors || !content) {
                json_object_put(content);
                execution_free(ex);
                return -ENOMEM;
        }
        kb_execute_options defaults = {.store_history = true, .stop_on_error = true};
        const kb_execute_options *o = options ? options : &defaults;
        json_object_object_add(content, "code", json_object_new_string(code));
        json_object_object_add(content, "silent", json_object_new_boolean(o->silent));
        json_object_object_add(content, "store_history", json_object_new_boolean(o->store_history));
        json_object_object_add(content, "user_expressions", json_object_new_object());
        json_object_object_add(content, "allow_stdin", json_object_new_boolean(o->allow_stdin));
        json_object_object_add(content, "stop_on_error", json_object_new_boolean(o->stop_on_error));
        ex->sent_ms = kb_now_ms();
        int r = send_request(c, KB_CHANNEL_SHELL, "execute_request", content, &ex->msg_id);
        if (r < 0) {
                execution_free(ex);
                return r;
        }
        c->tracked[c->n_tracked++] = ex;
        *ret = ex;
        return 0;
}

int kb_client_execute_wait(kb_client *c, kb_execution *ex, int64_t deadline_ms, kb_iopub_fn fn, void *userdata) {
        c->wait_ex = ex;
        c->wait_fn = fn;
        c->wait_userdata = userdata;
        c->wait_stop = false;
        c->wait_last_iopub_ms = 0;
        int r;
        for (;;) {
                if (c->wait_stop) {
                        r = 1;
                        break;
                }
                if (ex->got_reply && ex->saw_idle) {
                        r = 0;
                        break;
                }
                int64_t until = deadline_ms;
                if (ex->got_reply) {
                        /* Some kernels never publish idle for aborted requests; the reply is what
                         * counts, idle only orders the outputs. The grace runs from the last
                         * output still arriving for it, though: a reply overtaking a backlog of
                         * output must not end the wait with part of that output unseen. */
                        int64_t last = ex->reply_ms > c->wait_last_iopub_ms ? ex->reply_ms : c->wait_last_iopub_ms;
                        int64_t grace = last + IDLE_GRACE_MS;
                        bool grace_first = until < 0 || grace < until;
                        if (grace_first)
                                until = grace;
                        if (kb_ms_left(until) == 0) {
                                /* The deadline, not the grace, with output still arriving after
                                 * the reply: the request has not completed. */
                                r = grace_first || c->wait_last_iopub_ms <= ex->reply_ms ? 0 : -ETIMEDOUT;
                                break;
                        }
                }
                if (kb_ms_left(until) == 0) {
                        r = -ETIMEDOUT;
                        break;
                }
                r = pump(c, until);
                if (r < 0)
                        break;
        }
        c->wait_ex = NULL;
        c->wait_fn = NULL;
        c->wait_userdata = NULL;
        return r;
}

void kb_execution_destroy(kb_client *c, kb_execution **exp) {
        if (!exp || !*exp)
                return;
        if (c)
                tracked_remove(c, *exp);
        execution_free(*exp);
        *exp = NULL;
}

int kb_client_execute(kb_client *c, const char *code, const kb_execute_options *options, int64_t deadline_ms,
                      kb_execution **ret) {
        kb_execution *ex = NULL;
        int r = kb_client_execute_start(c, code, options, &ex);
        if (r < 0)
                return r;
        r = kb_client_execute_wait(c, ex, deadline_ms, NULL, NULL);
        if (r < 0) {
                kb_execution_destroy(c, &ex);
                return r;
        }
        *ret = ex;
        return 0;
}

/* The reply to id on channel, until deadline_ms. A connection that drops on another channel than
 * the reply's ends the wait unless past_other_drops: a kernel shutting down may close its other
 * sockets before its reply reaches kbound (IJavascript closes them all and stays; through kbound's
 * TCP relay the shell's close can come first). */
static int reply_wait(kb_client *c, kb_channel channel, const char *id, int64_t deadline_ms, bool past_other_drops,
                      kb_msg **ret_reply) {
        for (;;) {
                kb_msg *reply = pending_take(c, channel, id);
                if (reply) {
                        if (ret_reply)
                                *ret_reply = reply;
                        else
                                kb_msg_destroy(&reply);
                        return 0;
                }
                if (kb_ms_left(deadline_ms) == 0)
                        return -ETIMEDOUT;
                int r = pump(c, deadline_ms);
                if (r == -ECONNRESET && past_other_drops && c->last_error_channel != channel) {
                        c->last_error = 0;
                        continue;
                }
                if (r < 0)
                        return r;
        }
}

int kb_client_request(kb_client *c, kb_channel channel, const char *msg_type, json_object *content, int64_t deadline_ms,
                      kb_msg **ret_reply) {
        _cleanup_free_ char *id = NULL;
        int r = send_request(c, channel, msg_type, content, &id);
        return r < 0 ? r : reply_wait(c, channel, id, deadline_ms, false, ret_reply);
}

int kb_client_request_send(kb_client *c, kb_channel channel, const char *msg_type, json_object *content,
                           char **ret_id) {
        if (!c || !msg_type || !ret_id)
                return -EINVAL;
        return send_request(c, channel, msg_type, content, ret_id);
}

kb_msg *kb_client_reply_take(kb_client *c, kb_channel channel, const char *id) {
        return c && id ? pending_take(c, channel, id) : NULL;
}

int kb_client_poll(kb_client *c, int64_t deadline_ms) {
        return pump(c, deadline_ms);
}

int kb_client_interrupt(kb_client *c, int64_t deadline_ms, char **ret_status) {
        kb_msg *reply = NULL;
        int r = kb_client_request(c, KB_CHANNEL_CONTROL, "interrupt_request", NULL, deadline_ms, &reply);
        if (r < 0)
                return r;
        if (ret_status) {
                const char *status = kb_msg_content_string(reply, "status");
                *ret_status = strdup(status ? status : "");
                if (!*ret_status)
                        r = -ENOMEM;
        }
        kb_msg_destroy(&reply);
        return r;
}

int kb_client_shutdown(kb_client *c, int64_t deadline_ms) {
        json_object *content = json_object_new_object();
        if (!content)
                return -ENOMEM;
        json_object_object_add(content, "restart", json_object_new_boolean(0));
        _cleanup_free_ char *id = NULL;
        int r = send_request(c, KB_CHANNEL_CONTROL, "shutdown_request", content, &id);
        return r < 0 ? r : reply_wait(c, KB_CHANNEL_CONTROL, id, deadline_ms, true, NULL);
}

int kb_client_heartbeat(kb_client *c, int64_t deadline_ms) {
        void *hb = c->sock[KB_CHANNEL_HB];
        if (!hb)
                return -EIO; /* a reset below failed */
        static const char ping[] = "kbound-ping";
        if (zmq_send(hb, ping, sizeof(ping) - 1, 0) < 0)
                return -EIO;
        zmq_pollitem_t item = {.socket = hb, .events = ZMQ_POLLIN};
        int r = zmq_poll(&item, 1, kb_ms_left(deadline_ms));
        if (r > 0) {
                zmsg_t *echo = zmsg_recv(hb);
                zmsg_destroy(&echo);
                return 1;
        }
        /* A REQ socket that got no answer is stuck in "expect reply"; start over. */
        socket_close(&c->sock[KB_CHANNEL_HB]);
        r = socket_new(ZMQ_REQ, c->endpoint_hb, &c->limits, NULL, &c->sock[KB_CHANNEL_HB]);
        return r < 0 ? r : 0;
}

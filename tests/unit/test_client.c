/* test_client.c: the client against hostile kernels: a scripted fake kernel on ipc sockets in a
 * temporary folder (no sandbox, no real kernel) answers each request the way a test asks (a bad
 * signature, a replayed or truncated message, a wrong parent, an oversized frame...), and the
 * client must refuse each with its own errno and words; plus what it does out of descriptors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zmq.h>
#include "kbound/client.h"

static long fds_open(void) {
        DIR *d = opendir("/proc/self/fd");
        assert_non_null(d);
        long n = 0;
        for (struct dirent *de = readdir(d); de; de = readdir(d))
                n += de->d_name[0] != '.';
        closedir(d);
        return n - 1;
}

/* czmq's zsock_new asserts when libzmq cannot make a socket: out of descriptors, kbound aborted
 * (SIGABRT) with team folders and a connection key left on disk. kb_client_new must say -EMFILE. */
static void test_out_of_descriptors_is_an_error(void **state) {
        char dir[] = "/tmp/kb-client-XXXXXX", prefix[64];
        assert_non_null(mkdtemp(dir));
        snprintf(prefix, sizeof(prefix), "%s/k", dir);
        kb_connection *conn = NULL;
        assert_int_equal(kb_connection_new_ipc(prefix, &conn), 0);

        /* A first client starts libzmq's context (its threads' pollers, which libzmq itself cannot
         * do without: kbound checks the limit before any kernel starts, for that). */
        long before = fds_open();
        kb_client *c = NULL;
        assert_int_equal(kb_client_new(conn, NULL, NULL, &c), 0);
        assert_true(fds_open() - before >= 13); /* one per socket: 5 channels, 4 monitors and peers */
        kb_client_destroy(&c);
        /* libzmq closes sockets on its reaper thread: wait until the client's descriptors are gone
         * (the context's stay), so the limit below means what it says. */
        for (int i = 0; i < 500 && fds_open() > before + 5; i++)
                usleep(10000);
        assert_true(fds_open() <= before + 5);

        /* Room for a few sockets, not for all thirteen of a client. */
        struct rlimit saved, low;
        assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
        low = saved;
        low.rlim_cur = (rlim_t) fds_open() + 4;
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
        int r = kb_client_new(conn, NULL, NULL, &c);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
        assert_int_equal(r, -EMFILE);
        assert_null(c);

        /* And with descriptors again, a client works: nothing was left half made. */
        assert_int_equal(kb_client_new(conn, NULL, NULL, &c), 0);
        kb_client_destroy(&c);
        kb_connection_destroy(&conn);
        assert_int_equal(rmdir(dir), 0);
}

/* ---- a scripted fake kernel ---- */

/* How the fake kernel answers an execute_request (kernel_info_request is always answered well). */
typedef enum answer {
        ANSWER_WELL,          /* execute_reply ok, busy and idle on iopub */
        ANSWER_BAD_SIGNATURE, /* execute_reply with one hex digit of its signature changed */
        ANSWER_UNSIGNED,      /* execute_reply with an empty signature */
        ANSWER_REPLAY,        /* the same signed execute_reply twice */
        ANSWER_REUSED_ID,     /* two different replies with the same msg_id */
        ANSWER_WRONG_PARENT,  /* execute_reply to a msg_id the client never sent */
        ANSWER_DIES_FIRST,    /* shutdown_reply sent after its death fd fired, then its sockets closed */
        ANSWER_CLOSES_FIRST,  /* iopub closed, then the death fd, then the shutdown_reply */
        ANSWER_OVERSIZE,      /* content over max_frame_bytes (below twice it: libzmq delivers it) */
        ANSWER_OVERSIZE_DROP, /* content over twice max_frame_bytes: libzmq drops the connection */
        ANSWER_TRUNCATED,     /* the multipart message ends after metadata: no content frame */
        ANSWER_TOO_MANY,      /* more frames than max_frames */
        ANSWER_NOT_JSON,      /* correctly signed, but content is not JSON */
} answer;

#define FRAME_MAX 4096 /* the client's max_frame_bytes here: libzmq drops frames over 8192 */

typedef struct fake_kernel {
        char dir[64];
        kb_connection *conn;
        kb_hmac *hmac;
        answer answer;
        atomic_bool stop;
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t bound_cond;
        int bound; /* 1 once its sockets listen, -1 if they could not */
        int death; /* the client's death fd: an eventfd the kernel writes as it "dies" */
        kb_client *client;
} fake_kernel;

/* A reply to request (taking content), signed with the kernel's key. parent_id NULL: request's. */
static zmsg_t *reply_to(fake_kernel *fk, const kb_msg *request, const char *msg_type, const char *parent_id,
                        json_object *content) {
        kb_msg *m = NULL;
        if (kb_msg_new(msg_type, "fake-kernel-session", "kernel", content, &m) < 0)
                return NULL;
        json_object_put(m->parent_header);
        m->parent_header = json_object_new_object();
        json_object_object_add(m->parent_header, "msg_id",
                               json_object_new_string(parent_id ? parent_id : request->msg_id));
        json_object_object_add(m->parent_header, "msg_type", json_object_new_string(request->msg_type));
        zmsg_t *z = NULL;
        int r = kb_wire_serialize(m, fk->hmac, &z);
        kb_msg_destroy(&m);
        return r < 0 ? NULL : z;
}

static json_object *status_content(const char *state) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "execution_state", json_object_new_string(state));
        return c;
}

static void publish_status(fake_kernel *fk, zsock_t *iopub, const kb_msg *request, const char *state) {
        zmsg_t *z = reply_to(fk, request, "status", NULL, status_content(state));
        if (z)
                zmsg_send(&z, iopub);
}

static json_object *execute_reply_content(size_t padding) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "status", json_object_new_string("ok"));
        json_object_object_add(c, "execution_count", json_object_new_int(1));
        if (padding > 0) {
                char *pad = malloc(padding + 1);
                memset(pad, 'x', padding);
                pad[padding] = '\0';
                json_object_object_add(c, "padding", json_object_new_string(pad));
                free(pad);
        }
        return c;
}

/* Sends z on the router to identity (z is consumed). */
static void send_to(zsock_t *router, zframe_t *identity, zmsg_t **z) {
        zmsg_pushmem(*z, zframe_data(identity), zframe_size(identity));
        zmsg_send(z, router);
}

static void answer_execute(fake_kernel *fk, zsock_t *shell, zsock_t *iopub, zframe_t *identity, const kb_msg *request) {
        answer a = fk->answer;
        zmsg_t *z = NULL;
        publish_status(fk, iopub, request, "busy");
        switch (a) {
        case ANSWER_WELL:
                z = reply_to(fk, request, "execute_reply", NULL, execute_reply_content(0));
                send_to(shell, identity, &z);
                publish_status(fk, iopub, request, "idle");
                return;
        case ANSWER_WRONG_PARENT:
                z = reply_to(fk, request, "execute_reply", "00000000-not-a-request-of-yours", execute_reply_content(0));
                send_to(shell, identity, &z);
                publish_status(fk, iopub, request, "idle");
                return;
        case ANSWER_REPLAY: {
                /* No idle: the client keeps reading after the first reply, and meets the second. */
                z = reply_to(fk, request, "execute_reply", NULL, execute_reply_content(0));
                zmsg_t *again = zmsg_dup(z);
                send_to(shell, identity, &z);
                send_to(shell, identity, &again);
                return;
        }
        case ANSWER_REUSED_ID: {
                z = reply_to(fk, request, "execute_reply", NULL, execute_reply_content(0));
                /* A second message with another content (another signature) and the same id. */
                kb_frame frames[6];
                size_t n = 0;
                for (zframe_t *f = zmsg_first(z); f && n < 6; f = zmsg_next(z))
                        frames[n++] = (kb_frame){zframe_data(f), zframe_size(f)};
                kb_msg *copy = NULL;
                if (kb_wire_decode(frames, n, fk->hmac, NULL, &copy) < 0)
                        return;
                json_object_object_add(copy->content, "status", json_object_new_string("error"));
                zmsg_t *second = NULL;
                kb_wire_serialize(copy, fk->hmac, &second);
                kb_msg_destroy(&copy);
                send_to(shell, identity, &z);
                send_to(shell, identity, &second);
                return;
        }
        case ANSWER_OVERSIZE:
                z = reply_to(fk, request, "execute_reply", NULL, execute_reply_content(FRAME_MAX + 1000));
                break;
        case ANSWER_OVERSIZE_DROP:
                z = reply_to(fk, request, "execute_reply", NULL, execute_reply_content(3 * FRAME_MAX));
                break;
        default:
                z = reply_to(fk, request, "execute_reply", NULL, execute_reply_content(0));
                break;
        }
        if (!z)
                return;
        zmsg_first(z); /* the delimiter */
        zframe_t *signature = zmsg_next(z);
        if (a == ANSWER_BAD_SIGNATURE) {
                char *hex = (char *) zframe_data(signature);
                hex[0] = hex[0] == '0' ? '1' : '0';
        } else if (a == ANSWER_UNSIGNED) {
                zframe_reset(signature, "", 0);
        } else if (a == ANSWER_TRUNCATED) {
                zframe_t *content = zmsg_last(z);
                zmsg_remove(z, content);
                zframe_destroy(&content);
        } else if (a == ANSWER_TOO_MANY) {
                for (int i = 0; i < 20; i++)
                        zmsg_addmem(z, "", 0);
        } else if (a == ANSWER_NOT_JSON) {
                /* Signed correctly over a content frame that is not JSON: only the parser can say. */
                zframe_t *content = zmsg_last(z);
                zframe_reset(content, "{\"status\":", 10);
                kb_frame parts[4];
                zframe_t *f = zmsg_first(z);
                f = zmsg_next(z);
                for (size_t i = 0; i < 4; i++) {
                        f = zmsg_next(z);
                        parts[i] = (kb_frame){zframe_data(f), zframe_size(f)};
                }
                char hex[KB_HMAC_HEX_LEN + 1];
                kb_wire_sign(fk->hmac, parts, hex);
                zframe_reset(signature, hex, strlen(hex));
        }
        send_to(shell, identity, &z);
}

static void *fake_kernel_run(void *arg) {
        fake_kernel *fk = arg;
        zsock_t *shell = zsock_new(ZMQ_ROUTER), *control = zsock_new(ZMQ_ROUTER), *iopub = zsock_new(ZMQ_PUB);
        zsock_t *hb = zsock_new(ZMQ_REP);
        char endpoint[256];
        int ok = shell && control && iopub && hb;
        const kb_channel channels[] = {KB_CHANNEL_SHELL, KB_CHANNEL_CONTROL, KB_CHANNEL_IOPUB, KB_CHANNEL_HB};
        zsock_t *socks[] = {shell, control, iopub, hb};
        for (size_t i = 0; ok && i < 4; i++)
                ok = kb_connection_endpoint(fk->conn, channels[i], NULL, endpoint, sizeof(endpoint)) == 0 &&
                     zsock_bind(socks[i], "%s", endpoint) == 0;
        pthread_mutex_lock(&fk->lock);
        fk->bound = ok ? 1 : -1;
        pthread_cond_signal(&fk->bound_cond);
        pthread_mutex_unlock(&fk->lock);

        while (ok && !atomic_load(&fk->stop)) {
                zmq_pollitem_t items[] = {
                        {zsock_resolve(shell), 0, ZMQ_POLLIN, 0},
                        {zsock_resolve(control), 0, ZMQ_POLLIN, 0},
                        {zsock_resolve(hb), 0, ZMQ_POLLIN, 0},
                };
                if (zmq_poll(items, 3, 20) <= 0)
                        continue;
                if (items[2].revents & ZMQ_POLLIN) {
                        zmsg_t *ping = zmsg_recv(hb);
                        zmsg_send(&ping, hb);
                }
                for (int k = 0; k < 2; k++) {
                        if (!(items[k].revents & ZMQ_POLLIN))
                                continue;
                        zsock_t *router = k == 0 ? shell : control;
                        zmsg_t *in = zmsg_recv(router);
                        zframe_t *identity = in ? zmsg_pop(in) : NULL;
                        kb_frame frames[16];
                        size_t n = 0;
                        for (zframe_t *f = in ? zmsg_first(in) : NULL; f && n < 16; f = zmsg_next(in))
                                frames[n++] = (kb_frame){zframe_data(f), zframe_size(f)};
                        kb_msg *request = NULL;
                        if (identity && kb_wire_decode(frames, n, fk->hmac, NULL, &request) == 0) {
                                zmsg_t *z = NULL;
                                if (strcmp(request->msg_type, "kernel_info_request") == 0) {
                                        publish_status(fk, iopub, request, "busy");
                                        json_object *info = json_object_new_object();
                                        json_object_object_add(info, "status", json_object_new_string("ok"));
                                        z = reply_to(fk, request, "kernel_info_reply", NULL, info);
                                        send_to(router, identity, &z);
                                        publish_status(fk, iopub, request, "idle");
                                } else if (strcmp(request->msg_type, "execute_request") == 0) {
                                        answer_execute(fk, router, iopub, identity, request);
                                } else if ((fk->answer == ANSWER_DIES_FIRST || fk->answer == ANSWER_CLOSES_FIRST) &&
                                           strcmp(request->msg_type, "shutdown_request") == 0) {
                                        /* seen dead well before its last bytes arrive, as on a
                                         * loaded machine; the reply still goes out before the
                                         * sockets close (linger). CLOSES_FIRST: a socket of
                                         * another channel closes first, as ipykernel's do */
                                        if (fk->answer == ANSWER_CLOSES_FIRST) {
                                                zsock_destroy(&socks[2]);
                                                iopub = NULL;
                                                usleep(50 * 1000);
                                        }
                                        assert_int_equal(eventfd_write(fk->death, 1), 0);
                                        usleep(400 * 1000);
                                        json_object *c = json_object_new_object();
                                        json_object_object_add(c, "status", json_object_new_string("ok"));
                                        z = reply_to(fk, request, "shutdown_reply", NULL, c);
                                        zsock_set_linger(router, 5000);
                                        send_to(router, identity, &z);
                                        atomic_store(&fk->stop, true);
                                } else {
                                        char type[64];
                                        snprintf(type, sizeof(type), "%.*s_reply",
                                                 (int) (strlen(request->msg_type) - strlen("_request")),
                                                 request->msg_type);
                                        json_object *c = json_object_new_object();
                                        json_object_object_add(c, "status", json_object_new_string("ok"));
                                        z = reply_to(fk, request, type, NULL, c);
                                        send_to(router, identity, &z);
                                }
                        }
                        kb_msg_destroy(&request);
                        zframe_destroy(&identity);
                        zmsg_destroy(&in);
                }
        }
        for (size_t i = 0; i < 4; i++)
                zsock_destroy(&socks[i]);
        return NULL;
}

/* Starts a fake kernel that answers execute_request as `a`, and a client connected to it and
 * ready (kernel_info answered, iopub flowing). */
static fake_kernel *fake_kernel_start(answer a) {
        fake_kernel *fk = calloc(1, sizeof(*fk));
        assert_non_null(fk);
        fk->answer = a;
        snprintf(fk->dir, sizeof(fk->dir), "/tmp/kb-client-XXXXXX");
        assert_non_null(mkdtemp(fk->dir));
        char prefix[96];
        snprintf(prefix, sizeof(prefix), "%s/k", fk->dir);
        assert_int_equal(kb_connection_new_ipc(prefix, &fk->conn), 0);
        assert_int_equal(kb_hmac_new(fk->conn->key, strlen(fk->conn->key), &fk->hmac), 0);
        pthread_mutex_init(&fk->lock, NULL);
        pthread_cond_init(&fk->bound_cond, NULL);
        assert_int_equal(pthread_create(&fk->thread, NULL, fake_kernel_run, fk), 0);
        pthread_mutex_lock(&fk->lock);
        while (fk->bound == 0)
                pthread_cond_wait(&fk->bound_cond, &fk->lock);
        pthread_mutex_unlock(&fk->lock);
        assert_int_equal(fk->bound, 1);

        fk->death = eventfd(0, EFD_CLOEXEC);
        assert_true(fk->death >= 0);
        kb_client_options options = {
                .death_fd = fk->death,
                .limits = {.max_frames = 16,
                           .max_frame_bytes = FRAME_MAX,
                           .max_total_bytes = 64 * 1024,
                           .max_json_depth = 16},
        };
        assert_int_equal(kb_client_new(fk->conn, NULL, &options, &fk->client), 0);
        assert_int_equal(kb_client_wait_ready(fk->client, kb_now_ms() + 20000, NULL), 0);
        return fk;
}

static void fake_kernel_stop(fake_kernel **fkp) {
        fake_kernel *fk = *fkp;
        kb_client_destroy(&fk->client);
        atomic_store(&fk->stop, true);
        assert_int_equal(pthread_join(fk->thread, NULL), 0);
        kb_hmac_destroy(&fk->hmac);
        for (int ch = 0; ch < _KB_CHANNEL_MAX; ch++) {
                char endpoint[256];
                if (kb_connection_endpoint(fk->conn, (kb_channel) ch, NULL, endpoint, sizeof(endpoint)) == 0)
                        unlink(endpoint + strlen("ipc://"));
        }
        kb_connection_destroy(&fk->conn);
        close(fk->death);
        assert_int_equal(rmdir(fk->dir), 0);
        pthread_mutex_destroy(&fk->lock);
        pthread_cond_destroy(&fk->bound_cond);
        free(fk);
        *fkp = NULL;
}

/* Runs one cell against a kernel answering as `a`; expects the wait to end with want_error, the
 * client to name the shell channel and that error, and its words to be want_words. */
static void expect_refused(answer a, int want_error, const char *want_words) {
        fake_kernel *fk = fake_kernel_start(a);
        kb_execution *ex = NULL;
        int r = kb_client_execute(fk->client, "1 + 1", NULL, kb_now_ms() + 20000, &ex);
        assert_int_equal(r, want_error);
        assert_null(ex);
        kb_channel channel = _KB_CHANNEL_MAX;
        int error = 0;
        kb_client_last_error(fk->client, &channel, &error);
        assert_int_equal(channel, KB_CHANNEL_SHELL);
        assert_int_equal(error, want_error);
        kb_error *words = NULL;
        assert_int_equal(kb_client_error(fk->client, r, &words), want_error);
        assert_non_null(words);
        assert_int_equal(words->err, -want_error);
        assert_string_equal(words->msg, want_words);
        kb_error_free(&words);
        /* The record is the failed call's: the next call starts without it (it may record its own
         * offence, never inherit this one; with the deadline already passed it is a timeout, or a
         * send the dropped connection refused), and a failure that is no offence of the kernel's
         * is said as itself, never as the refusal before it. */
        int again = kb_client_execute(fk->client, "2", NULL, kb_now_ms(), &ex);
        assert_true(again < 0);
        kb_client_last_error(fk->client, &channel, &error);
        assert_true(error == 0 || error == again);
        assert_int_equal(kb_client_error(fk->client, -ETIMEDOUT, &words), -ETIMEDOUT);
        assert_string_equal(words->msg, strerror(ETIMEDOUT));
        kb_error_free(&words);
        fake_kernel_stop(&fk);
}

/* The harness itself: a kernel that answers well is answered well, so the refusals below are the
 * client's and not the fake kernel's. */
static void test_fake_kernel_answers_well(void **state) {
        fake_kernel *fk = fake_kernel_start(ANSWER_WELL);
        kb_execution *ex = NULL;
        assert_int_equal(kb_client_execute(fk->client, "1 + 1", NULL, kb_now_ms() + 20000, &ex), 0);
        assert_true(ex->got_reply);
        assert_string_equal(ex->status, "ok");
        assert_int_equal(ex->execution_count, 1);
        kb_execution_destroy(fk->client, &ex);
        kb_channel channel;
        int error = -1;
        kb_client_last_error(fk->client, &channel, &error);
        assert_int_equal(error, 0);
        assert_int_equal(kb_client_shutdown(fk->client, kb_now_ms() + 20000), 0);
        fake_kernel_stop(&fk);
}

/* A kernel that answers shutdown_request and exits at once is seen dead (its pidfd) before libzmq
 * has read its reply, the more so under load: the client waits for its connections to end, not
 * for a while, and gets the reply (a fixed 100 ms wait made lifecycle.shutdown fail "the kernel
 * died before it answered" under load; this kernel answers 400 ms after its death fd fired). */
static void test_reply_after_death_is_read(void **state) {
        (void) state;
        fake_kernel *fk = fake_kernel_start(ANSWER_DIES_FIRST);
        int r = kb_client_shutdown(fk->client, kb_now_ms() + 20000);
        fake_kernel_stop(&fk); /* first: a failed assertion must not leave the fake kernel running */
        assert_int_equal(r, 0);
}

/* The same, a connection of another channel dropping first (the kernel closes its iopub, then
 * dies, its reply still on its way): the drop, then the death, must not end the wait before what
 * the kernel sent is drained (a clean-clone run's conformance `shutdown` said "the kernel process
 * died" so). */
static void test_reply_after_drop_and_death_is_read(void **state) {
        (void) state;
        fake_kernel *fk = fake_kernel_start(ANSWER_CLOSES_FIRST);
        int r = kb_client_shutdown(fk->client, kb_now_ms() + 20000);
        fake_kernel_stop(&fk);
        assert_int_equal(r, 0);
}

static void test_bad_signature_refused(void **state) {
        expect_refused(ANSWER_BAD_SIGNATURE, -EBADMSG, "bad message on shell: bad signature");
}

static void test_unsigned_refused(void **state) {
        expect_refused(ANSWER_UNSIGNED, -ENOKEY, "bad message on shell: unsigned message");
}

static void test_replay_refused(void **state) {
        expect_refused(ANSWER_REPLAY, -EEXIST,
                       "bad message on shell: replayed message (msg_type 'execute_reply'): its signature was "
                       "already seen on this connection (refused)");
}

static void test_reused_msg_id_refused(void **state) {
        expect_refused(ANSWER_REUSED_ID, -ENOTUNIQ,
                       "bad message on shell: reused msg_id (msg_type 'execute_reply'): an earlier message on "
                       "this connection had the same msg_id (refused)");
}

static void test_oversize_frame_refused(void **state) {
        expect_refused(ANSWER_OVERSIZE, -EMSGSIZE, "bad message on shell: over frame size limit");
}

static void test_oversize_frame_drops_connection(void **state) {
        expect_refused(ANSWER_OVERSIZE_DROP, -ECONNRESET,
                       "lost messages on shell: connection dropped (the kernel closed it, or sent a frame over "
                       "twice the size limit)");
}

static void test_truncated_multipart_refused(void **state) {
        expect_refused(ANSWER_TRUNCATED, -EPROTO, "bad message on shell: malformed message");
}

static void test_too_many_frames_refused(void **state) {
        expect_refused(ANSWER_TOO_MANY, -E2BIG, "bad message on shell: too many frames");
}

static void test_signed_garbage_refused(void **state) {
        expect_refused(ANSWER_NOT_JSON, -EPROTO, "bad message on shell: malformed message");
}

/* A reply to a request the client never sent answers nothing: the wait runs out, and the
 * diagnosis says what came instead. */
static void test_wrong_parent_is_foreign(void **state) {
        fake_kernel *fk = fake_kernel_start(ANSWER_WRONG_PARENT);
        kb_execution *ex = NULL;
        static const char want[] = "no execute_reply, although the kernel published busy and idle for the "
                                   "request; 1 message(s) answered requests kbound never sent (wrong parent msg_id)";
        assert_int_equal(kb_client_execute_start(fk->client, "1 + 1", NULL, &ex), 0);
        /* Short waits, each running out, until everything the kernel sent has arrived (on a busy
         * machine that may take a while; the result must not depend on it). */
        char words[512] = "";
        for (int64_t give_up = kb_now_ms() + 20000; strcmp(words, want) != 0 && kb_now_ms() < give_up;) {
                assert_int_equal(kb_client_execute_wait(fk->client, ex, kb_now_ms() + 200, NULL, NULL), -ETIMEDOUT);
                kb_execution_explain_timeout(fk->client, ex, words, sizeof(words));
        }
        assert_false(ex->got_reply);
        assert_string_equal(words, want);
        kb_execution_destroy(fk->client, &ex);
        fake_kernel_stop(&fk);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_out_of_descriptors_is_an_error),
                cmocka_unit_test(test_fake_kernel_answers_well),
                cmocka_unit_test(test_reply_after_death_is_read),
                cmocka_unit_test(test_reply_after_drop_and_death_is_read),
                cmocka_unit_test(test_bad_signature_refused),
                cmocka_unit_test(test_unsigned_refused),
                cmocka_unit_test(test_replay_refused),
                cmocka_unit_test(test_reused_msg_id_refused),
                cmocka_unit_test(test_oversize_frame_refused),
                cmocka_unit_test(test_oversize_frame_drops_connection),
                cmocka_unit_test(test_truncated_multipart_refused),
                cmocka_unit_test(test_too_many_frames_refused),
                cmocka_unit_test(test_signed_garbage_refused),
                cmocka_unit_test(test_wrong_parent_is_foreign),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

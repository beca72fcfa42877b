/* wire_bench.c: wire throughput through libkbound: build, sign, send, receive, verify and parse
 * execute_request messages over a real zmq socket pair (ipc), the same work bench/wire_session.py
 * makes jupyter_client's Session do. Prints one JSON object. Not installed; run by scripts/bench.
 * With --zmq-only it measures the floor both implementations pay: the same frames (one message
 * serialized once, before timing) sent with zmq_send and received with zmq_msg_recv, nothing else. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <kbound/wire.h>

#define WINDOW 64 /* messages in flight before reading them back, as a pipelining client would */

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static char *read_file(const char *path) {
        FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        char *buf = calloc(1, 1024 * 1024 + 1);
        size_t n = buf ? fread(buf, 1, 1024 * 1024, f) : 0;
        fclose(f);
        if (buf)
                buf[n] = '\0';
        return buf;
}

static json_object *execute_content(const char *code) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "code", json_object_new_string(code));
        json_object_object_add(c, "silent", json_object_new_boolean(0));
        json_object_object_add(c, "store_history", json_object_new_boolean(0));
        json_object_object_add(c, "user_expressions", json_object_new_object());
        json_object_object_add(c, "allow_stdin", json_object_new_boolean(0));
        json_object_object_add(c, "stop_on_error", json_object_new_boolean(0));
        return c;
}

/* The floor: send the frames of one prepared message `batch` times, then receive them all. */
static int zmq_only_batch(void *tx, void *rx, zmsg_t *frames, long batch, long *bad) {
        for (long i = 0; i < batch; i++) {
                size_t n = zmsg_size(frames), j = 0;
                for (zframe_t *f = zmsg_first(frames); f; f = zmsg_next(frames), j++)
                        if (zmq_send(tx, zframe_data(f), zframe_size(f), j + 1 < n ? ZMQ_SNDMORE : 0) < 0)
                                return -1;
        }
        for (long i = 0; i < batch; i++) {
                zmq_pollitem_t item = {.socket = rx, .events = ZMQ_POLLIN};
                if (zmq_poll(&item, 1, 5000) <= 0)
                        return -1;
                size_t parts = 0;
                for (int more = 1; more; parts++) {
                        zmq_msg_t part;
                        zmq_msg_init(&part);
                        if (zmq_msg_recv(&part, rx, ZMQ_DONTWAIT) < 0)
                                return -1;
                        more = zmq_msg_more(&part);
                        zmq_msg_close(&part);
                }
                if (parts != zmsg_size(frames))
                        (*bad)++;
        }
        return 0;
}

int main(int argc, char **argv) {
        bool zmq_only = argc == 4 && strcmp(argv[1], "--zmq-only") == 0;
        if (zmq_only) {
                argc--;
                argv++;
        }
        if (argc != 3) {
                fprintf(stderr, "usage: %s [--zmq-only] MESSAGES CODE_FILE\n", argv[0]);
                return 2;
        }
        long total = strtol(argv[1], NULL, 10);
        char *code = read_file(argv[2]);
        if (total <= 0 || !code) {
                fprintf(stderr, "wire_bench: bad message count or unreadable %s\n", argv[2]);
                return 2;
        }
        char dir[] = "/tmp/kbound-wire-bench-XXXXXX";
        if (!mkdtemp(dir)) {
                perror("mkdtemp");
                return 1;
        }
        char endpoint[128];
        snprintf(endpoint, sizeof(endpoint), "ipc://%s/s", dir);
        zsys_handler_set(NULL);
        zsock_t *rx = zsock_new(ZMQ_PAIR), *tx = zsock_new(ZMQ_PAIR);
        if (!rx || !tx || zsock_bind(rx, "%s", endpoint) < 0 || zsock_connect(tx, "%s", endpoint) < 0) {
                fprintf(stderr, "wire_bench: cannot set up the sockets\n");
                return 1;
        }
        zsock_set_rcvhwm(rx, 0);
        zsock_set_sndhwm(tx, 0);
        static const char key_text[] = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";
        /* One keyed HMAC for the connection, as kbound's client makes one. */
        kb_hmac *key = NULL;
        if (kb_hmac_new(key_text, strlen(key_text), &key) < 0) {
                fprintf(stderr, "wire_bench: cannot key the HMAC\n");
                return 1;
        }
        kb_wire_limits limits;
        kb_wire_limits_default(&limits);

        size_t bytes = 0;
        long done = 0, bad = 0;
        zmsg_t *prepared = NULL;
        if (zmq_only) {
                kb_msg *m = NULL;
                if (kb_msg_new("execute_request", "bench-session", "bench", execute_content(code), &m) < 0 ||
                    kb_wire_serialize(m, key, &prepared) < 0) {
                        fprintf(stderr, "wire_bench: cannot prepare the message\n");
                        return 1;
                }
                bytes = strlen(json_object_to_json_string_ext(m->content,
                                                              JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                kb_msg_destroy(&m);
        }
        double t0 = now_s();
        while (done < total) {
                long batch = total - done < WINDOW ? total - done : WINDOW;
                if (zmq_only) {
                        if (zmq_only_batch(zsock_resolve(tx), zsock_resolve(rx), prepared, batch, &bad) < 0) {
                                fprintf(stderr, "wire_bench: zmq send/receive failed\n");
                                return 1;
                        }
                        done += batch;
                        continue;
                }
                for (long i = 0; i < batch; i++) {
                        kb_msg *m = NULL;
                        if (kb_msg_new("execute_request", "bench-session", "bench", execute_content(code), &m) < 0 ||
                            kb_wire_send(tx, m, key) < 0) {
                                fprintf(stderr, "wire_bench: send failed\n");
                                return 1;
                        }
                        kb_msg_destroy(&m);
                }
                for (long i = 0; i < batch; i++) {
                        kb_msg *m = NULL;
                        int r;
                        zmq_pollitem_t item = {.socket = zsock_resolve(rx), .events = ZMQ_POLLIN};
                        if (zmq_poll(&item, 1, 5000) <= 0) {
                                fprintf(stderr, "wire_bench: nothing received within 5 s\n");
                                return 1;
                        }
                        r = kb_wire_recv(rx, key, &limits, &m);
                        if (r < 0 || strcmp(m->msg_type, "execute_request") != 0) {
                                bad++;
                                continue;
                        }
                        if (done == 0 && i == 0)
                                bytes = strlen(json_object_to_json_string_ext(
                                        m->content, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                        kb_msg_destroy(&m);
                }
                done += batch;
        }
        double elapsed = now_s() - t0;
        printf("{\"impl\": \"%s\", \"messages\": %ld, \"failed\": %ld, \"content_bytes\": %zu, "
               "\"seconds\": %.6f, \"msgs_per_sec\": %.1f}\n",
               zmq_only ? "zmq-only" : "libkbound", done, bad, bytes, elapsed, (double) done / elapsed);
        zmsg_destroy(&prepared);
        kb_hmac_destroy(&key);
        zsock_destroy(&tx);
        zsock_destroy(&rx);
        char sock_path[160];
        snprintf(sock_path, sizeof(sock_path), "%s/s", dir);
        unlink(sock_path);
        rmdir(dir);
        free(code);
        return bad ? 1 : 0;
}

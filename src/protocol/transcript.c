/* transcript.c: one redacted JSON line per Jupyter message, written atomically under a lock. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "kbound/transcript.h"
#include "base/cleanup.h"

struct kb_transcript {
        pthread_mutex_t lock;
        int fd;
        int64_t opened_ms;
        uint64_t seq;
        uint64_t n_lines, n_errors;
        uint64_t bytes, max_bytes;
        bool truncated;
        int first_error;
        const kb_secrets *redact[KB_TRANSCRIPT_REDACT_MAX];
        size_t n_redact;
};

struct kb_transcript_source {
        kb_transcript *t;
        char *kernel;
        char *team;
};

int kb_transcript_open(const char *path, kb_transcript **ret) {
        if (!path || !*path)
                return -EINVAL;
        /* A FIFO or device is refused without waiting on it (kb_open_regular). Not O_TRUNC: a
         * file that is refused below must be left as it was. */
        struct stat st;
        _cleanup_close_ int fd = kb_open_regular(AT_FDCWD, path, O_WRONLY | O_CREAT | O_NOFOLLOW, 0600, &st);
        if (fd < 0)
                return fd;
        /* Someone else's file keeps its owner (who could read what kernels printed), and a second
         * hard link is a second name we cannot make private. */
        if (st.st_uid != geteuid() || st.st_nlink > 1)
                return -EPERM;
        if (ftruncate(fd, 0) < 0)
                return -errno;
        /* An existing file keeps its mode through O_TRUNC: make it private now. */
        if (fchmod(fd, 0600) < 0)
                return -errno;
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
                return -errno;
        kb_transcript *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        if (pthread_mutex_init(&t->lock, NULL) != 0) {
                free(t);
                return -ENOMEM;
        }
        t->fd = TAKE_FD(fd);
        t->opened_ms = kb_now_ms();
        t->max_bytes = KB_TRANSCRIPT_MAX_BYTES;
        *ret = t;
        return 0;
}

void kb_transcript_set_max_bytes(kb_transcript *t, uint64_t max_bytes) {
        pthread_mutex_lock(&t->lock);
        t->max_bytes = max_bytes;
        pthread_mutex_unlock(&t->lock);
}

int kb_transcript_redact(kb_transcript *t, const kb_secrets *s) {
        pthread_mutex_lock(&t->lock);
        int r = 0;
        if (t->n_redact == KB_TRANSCRIPT_REDACT_MAX)
                r = -E2BIG;
        else
                t->redact[t->n_redact++] = s;
        pthread_mutex_unlock(&t->lock);
        return r;
}

int kb_transcript_source_new(kb_transcript *t, const char *kernel, const char *team, kb_transcript_source **ret) {
        kb_transcript_source *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->t = t;
        s->kernel = strdup(kernel ? kernel : "");
        s->team = strdup(team ? team : "");
        if (!s->kernel || !s->team) {
                kb_transcript_source_destroy(&s);
                return -ENOMEM;
        }
        *ret = s;
        return 0;
}

void kb_transcript_source_destroy(kb_transcript_source **sp) {
        if (!sp || !*sp)
                return;
        free((*sp)->kernel);
        free((*sp)->team);
        free(*sp);
        *sp = NULL;
}

static void note_error(kb_transcript *t, int r) {
        t->n_errors++;
        if (!t->first_error)
                t->first_error = r;
}

/* A new reference to v, or to {} when the message has none. */
static json_object *part(json_object *v) {
        return v ? json_object_get(v) : json_object_new_object();
}

/* The last line of a transcript that reached its size cap; later messages count as errors. Called
 * under the lock. */
static void write_truncated(kb_transcript *t) {
        char line[160];
        int n = snprintf(line, sizeof(line),
                         "{\"truncated\":true,\"reason\":\"the transcript reached its size cap of %llu bytes\"}\n",
                         (unsigned long long) t->max_bytes);
        (void) kb_write_all(t->fd, line, (size_t) n);
        t->truncated = true;
}

void kb_transcript_on_msg(void *userdata, kb_channel channel, const char *direction, const kb_msg *msg) {
        kb_transcript_source *src = userdata;
        kb_transcript *t = src->t;
        pthread_mutex_lock(&t->lock);
        /* A message the kernel layer could not redact is lost, and the transcript says so; past
         * the cap, a message is lost without the cost of building and redacting its line. */
        bool lost = !msg || t->truncated;
        if (lost)
                note_error(t, !msg ? -ENOMEM : -EFBIG);
        pthread_mutex_unlock(&t->lock);
        if (lost)
                return;
        char now[40];
        /* ISO-8601 UTC with milliseconds; a clock that cannot be read leaves the time empty. */
        if (kb_iso_time_now(3, now, sizeof(now)) < 0)
                now[0] = '\0';
        int64_t elapsed = kb_now_ms() - t->opened_ms;

        json_object *line = json_object_new_object();
        json_object *buffers = json_object_new_array();
        if (!line || !buffers) {
                json_object_put(line);
                json_object_put(buffers);
                pthread_mutex_lock(&t->lock);
                note_error(t, -ENOMEM);
                pthread_mutex_unlock(&t->lock);
                return;
        }
        for (size_t i = 0; i < msg->n_buffers; i++)
                json_object_array_add(buffers, json_object_new_int64((int64_t) msg->buffers[i].size));
        json_object *type = NULL;
        json_object_object_get_ex(msg->header, "msg_type", &type);
        json_object_object_add(line, "time", json_object_new_string(now));
        json_object_object_add(line, "elapsed_ms", json_object_new_int64(elapsed));
        json_object_object_add(line, "kernel", json_object_new_string(src->kernel));
        json_object_object_add(line, "team", json_object_new_string(src->team));
        json_object_object_add(line, "channel", json_object_new_string(kb_channel_name(channel)));
        json_object_object_add(line, "direction", json_object_new_string(direction));
        json_object_object_add(line, "msg_type", type ? json_object_get(type) : NULL);
        json_object_object_add(line, "header", part(msg->header));
        json_object_object_add(line, "parent_header", part(msg->parent_header));
        json_object_object_add(line, "metadata", part(msg->metadata));
        json_object_object_add(line, "content", part(msg->content));
        json_object_object_add(line, "buffers", buffers);

        pthread_mutex_lock(&t->lock);
        /* The sequence number is taken under the lock, so file order and seq order agree. */
        json_object_object_add(line, "seq", json_object_new_int64((int64_t) ++t->seq));
        int r = 0;
        for (size_t i = 0; i < t->n_redact && r == 0; i++) {
                json_object *redacted = kb_secrets_redact(t->redact[i], line);
                json_object_put(line);
                line = redacted;
                if (!line)
                        r = -ENOMEM;
        }
        const char *text =
                line ? json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
                     : NULL;
        if (r == 0 && !text)
                r = -ENOMEM;
        if (r == 0) {
                /* json-c escapes every control character inside strings, so the line holds no
                 * newline of its own; line and newline go out in one write(). */
                size_t len = strlen(text);
                char *buf = NULL;
                if (t->truncated || t->bytes + len + 1 > t->max_bytes) {
                        /* Hostile output must not fill the disk: past the cap, one line says so
                         * and the run fails (every later message is a lost line). */
                        if (!t->truncated)
                                write_truncated(t);
                        r = -EFBIG;
                } else if (!(buf = malloc(len + 1)))
                        r = -ENOMEM;
                else {
                        memcpy(buf, text, len);
                        buf[len] = '\n';
                        r = kb_write_all(t->fd, buf, len + 1);
                        if (r == 0)
                                t->bytes += len + 1;
                        free(buf);
                }
        }
        if (r < 0)
                note_error(t, r);
        else
                t->n_lines++;
        pthread_mutex_unlock(&t->lock);
        json_object_put(line);
}

bool kb_transcript_truncated(kb_transcript *t) {
        pthread_mutex_lock(&t->lock);
        bool r = t->truncated;
        pthread_mutex_unlock(&t->lock);
        return r;
}

void kb_transcript_stats(kb_transcript *t, uint64_t *ret_lines, uint64_t *ret_errors) {
        pthread_mutex_lock(&t->lock);
        if (ret_lines)
                *ret_lines = t->n_lines;
        if (ret_errors)
                *ret_errors = t->n_errors;
        pthread_mutex_unlock(&t->lock);
}

int kb_transcript_close(kb_transcript **tp) {
        if (!tp || !*tp)
                return 0;
        kb_transcript *t = *tp;
        int r = t->first_error;
        if (fsync(t->fd) < 0 && r == 0)
                r = -errno;
        if (close(t->fd) < 0 && r == 0)
                r = -errno;
        pthread_mutex_destroy(&t->lock);
        free(t);
        *tp = NULL;
        return r;
}

/* boundary_child.c: kbound-probe as the process the kernel spawned. It says it is alive, waits
 * until the host has looked at the sandbox with it running (the go file), then reports what any
 * child of the kernel can read: its own environment and every /proc/<pid>/environ and cmdline it
 * may open. And it looks for kbound's canary key in the keyrings it possesses. */
#include "boundary_probe.h"
#include "tool_io.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define KEYCTL_READ 11
#define KEY_PAYLOAD_MAX 4096

extern char **environ;

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static bool exists(const char *path) {
        struct stat st;
        return stat(path, &st) == 0;
}

/* This program's environment as KEY=value lines (entries without "=" left out, as Python's
 * os.environ leaves them). */
static json_object *own_environment(void) {
        size_t len = 0;
        for (char **e = environ; e && *e; e++)
                len += strlen(*e) + 1;
        char *text = malloc(len + 1);
        if (!text)
                return NULL;
        len = 0;
        for (char **e = environ; e && *e; e++) {
                if (!strchr(*e, '='))
                        continue;
                if (len)
                        text[len++] = '\n';
                memcpy(text + len, *e, strlen(*e));
                len += strlen(*e);
        }
        json_object *j = probe_text(text, len);
        free(text);
        return j;
}

/* The first PROBE_FILE_CAP bytes of /proc/<pid>/<file>, NULs turned into "\n", or NULL. */
static json_object *proc_text(pid_t pid, const char *file) {
        char path[64], *buf = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "/proc/%ld/%s", (long) pid, file);
        if (kb_tool_read_file(path, PROBE_FILE_CAP, &buf, &len) < 0)
                return NULL;
        for (size_t i = 0; i < len; i++)
                if (buf[i] == '\0')
                        buf[i] = '\n';
        json_object *j = probe_text(buf, len);
        free(buf);
        return j;
}

/* Up to PROBE_PROCS_MAX processes, in pid order, whose environ or cmdline this program may read
 * (an unreadable one of the two is ""). */
static int proc_dump(json_object **ret) {
        pid_t *pids = NULL;
        size_t n = 0;
        int r = probe_proc_pids(&pids, &n);
        if (r < 0)
                return r;
        json_object *out = json_object_new_array();
        for (size_t i = 0; out && i < n && json_object_array_length(out) < PROBE_PROCS_MAX; i++) {
                json_object *e = proc_text(pids[i], "environ"), *c = proc_text(pids[i], "cmdline");
                if (!e && !c)
                        continue;
                json_object *o = json_object_new_object();
                json_object_object_add(o, "pid", json_object_new_int64(pids[i]));
                json_object_object_add(o, "environ", e ? e : json_object_new_string(""));
                json_object_object_add(o, "cmdline", c ? c : json_object_new_string(""));
                json_object_array_add(out, o);
        }
        free(pids);
        *ret = out;
        return out ? 0 : -ENOMEM;
}

int probe_subprocess(probe_ctx *c, json_object **ret, char *why, size_t n) {
        const char *marker = probe_param_str(c, "child_marker"), *go = probe_param_str(c, "child_go");
        double wait = probe_param_number(c, "child_wait_s", 10);
        pid_t self = getpid();
        /* The host's cue: it looks at the sandbox with this process alive, then creates the go file.
         * The cell relays this line to its own output at once (docs/probes-cells.md). */
        if (marker && marker[0]) {
                printf("%s %ld\n", marker, (long) self);
                if (fflush(stdout) != 0)
                        return -errno;
        }
        for (double t0 = now_s(); go && go[0] && !exists(go) && now_s() - t0 < wait;)
                nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
        bool went = go && go[0] && exists(go);
        json_object *procs = NULL;
        int r = proc_dump(&procs);
        if (r < 0)
                return r;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "spawned", json_object_new_boolean(1));
        json_object_object_add(o, "pid", json_object_new_int64(self));
        json_object_object_add(o, "error", NULL);
        json_object_object_add(o, "environ", own_environment());
        json_object_object_add(o, "proc", procs);
        json_object_object_add(o, "go", json_object_new_boolean(went));
        *ret = o;
        return o ? 0 : -ENOMEM;
}

/* kbound holds a canary key in its own session keyring: this process must not find it by name
 * (request_key(2) searches the keyrings a process possesses) nor read it. No callout: the
 * callout_info is NULL, so the kernel never runs /sbin/request-key for it. */
int probe_keys(probe_ctx *c, json_object **ret, char *why, size_t n) {
        const char *name = probe_param_str(c, "keyring_canary");
        json_object *o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        json_object_object_add(o, "tested", json_object_new_boolean(name && name[0]));
        json_object_object_add(o, "found", json_object_new_boolean(0));
        json_object_object_add(o, "payload", NULL);
        json_object_object_add(o, "error", NULL);
        *ret = o;
        if (!name || !name[0]) {
                json_object_object_add(o, "error", json_object_new_string("no keyring canary to look for"));
                return 0;
        }
        long serial = syscall(SYS_request_key, "user", name, NULL, 0L);
        if (serial < 0) {
                json_object_object_add(o, "error", probe_errno(errno)); /* ENOKEY: not possessed */
                return 0;
        }
        json_object_object_add(o, "found", json_object_new_boolean(1));
        char payload[KEY_PAYLOAD_MAX];
        long got = syscall(SYS_keyctl, KEYCTL_READ, serial, payload, (long) sizeof payload);
        if (got < 0)
                json_object_object_add(o, "error", probe_errno(errno));
        else
                json_object_object_add(
                        o, "payload",
                        probe_text(payload, (size_t) got < sizeof payload ? (size_t) got : sizeof payload));
        return 0;
}

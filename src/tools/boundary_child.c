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
 * os.environ leaves them), as the subprocess's environ. */
static int set_own_environment(json_object *o) {
        size_t len = 0;
        for (char **e = environ; e && *e; e++)
                len += strlen(*e) + 1;
        char *text = malloc(len + 1);
        if (!text)
                return -ENOMEM;
        len = 0;
        for (char **e = environ; e && *e; e++) {
                if (!strchr(*e, '='))
                        continue;
                if (len)
                        text[len++] = '\n';
                memcpy(text + len, *e, strlen(*e));
                len += strlen(*e);
        }
        int r = probe_set_text(o, FACT_PROBE_SUBPROCESS_ENVIRON, text, len);
        free(text);
        return r;
}

/* The first PROBE_FILE_CAP bytes of /proc/<pid>/<file>, NULs turned into "\n" (malloc'd, its length
 * in *ret_len), or NULL. */
static char *proc_text(pid_t pid, const char *file, size_t *ret_len) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/%s", (long) pid, file);
        char *buf = probe_read_file(path, ret_len);
        for (size_t i = 0; buf && i < *ret_len; i++)
                if (buf[i] == '\0')
                        buf[i] = '\n';
        return buf;
}

/* One process's entry of the dump, appended to out: an unreadable one of environ (env NULL) and
 * cmdline (cmd NULL) is "". 0 or -ENOMEM. */
static int dump_one(json_object *out, pid_t pid, const char *env, size_t env_len, const char *cmd, size_t cmd_len) {
        json_object *o = json_object_new_object();
        if (kb_fact_set_int(o, FACT_PROBE_PROC_DUMP_PID, pid) < 0 ||
            probe_set_text(o, FACT_PROBE_PROC_DUMP_ENVIRON, env ? env : "", env_len) < 0 ||
            probe_set_text(o, FACT_PROBE_PROC_DUMP_CMDLINE, cmd ? cmd : "", cmd_len) < 0 ||
            json_object_array_add(out, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        return 0;
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
        r = out ? 0 : -ENOMEM;
        for (size_t i = 0; r >= 0 && i < n && json_object_array_length(out) < PROBE_PROCS_MAX; i++) {
                size_t env_len = 0, cmd_len = 0;
                char *env = proc_text(pids[i], "environ", &env_len), *cmd = proc_text(pids[i], "cmdline", &cmd_len);
                if (env || cmd)
                        r = dump_one(out, pids[i], env, env_len, cmd, cmd_len);
                free(env);
                free(cmd);
        }
        free(pids);
        if (r < 0) {
                json_object_put(out);
                return r;
        }
        *ret = out;
        return 0;
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
        /* the dump gets a reference of its own, so that it is put once however far this gets */
        bool ok = kb_fact_set_bool(o, FACT_PROBE_SUBPROCESS_SPAWNED, true) == 0 &&
                  kb_fact_set_int(o, FACT_PROBE_SUBPROCESS_PID, self) == 0 &&
                  kb_fact_set_null(o, FACT_PROBE_SUBPROCESS_ERROR) == 0 && set_own_environment(o) == 0 &&
                  kb_fact_set_arr(o, FACT_PROBE_SUBPROCESS_PROC, json_object_get(procs)) == 0 &&
                  kb_fact_set_bool(o, FACT_PROBE_SUBPROCESS_GO, went) == 0;
        json_object_put(procs);
        if (!ok) {
                json_object_put(o);
                return -ENOMEM;
        }
        *ret = o;
        return 0;
}

/* Looks for the canary key name (NULL or "": none to look for) and reads it, writing what it
 * finds over the keys' facts already in o. 0 or -ENOMEM. */
static int look_for_key(json_object *o, const char *name) {
        if (!name || !name[0])
                return kb_fact_set_str(o, FACT_PROBE_KEYS_ERROR, "no keyring canary to look for");
        long serial = syscall(SYS_request_key, "user", name, NULL, 0L);
        if (serial < 0)
                return probe_set_errno(o, FACT_PROBE_KEYS_ERROR, errno); /* ENOKEY: not possessed */
        char payload[KEY_PAYLOAD_MAX];
        long got = syscall(SYS_keyctl, KEYCTL_READ, serial, payload, (long) sizeof payload);
        int e = got < 0 ? errno : 0;
        if (kb_fact_set_bool(o, FACT_PROBE_KEYS_FOUND, true) < 0)
                return -ENOMEM;
        if (e)
                return probe_set_errno(o, FACT_PROBE_KEYS_ERROR, e);
        return probe_set_text(o, FACT_PROBE_KEYS_PAYLOAD, payload,
                              (size_t) got < sizeof payload ? (size_t) got : sizeof payload);
}

/* kbound holds a canary key in its own session keyring: this process must not find it by name
 * (request_key(2) searches the keyrings a process possesses) nor read it. No callout: the
 * callout_info is NULL, so the kernel never runs /sbin/request-key for it. */
int probe_keys(probe_ctx *c, json_object **ret, char *why, size_t n) {
        const char *name = probe_param_str(c, "keyring_canary");
        json_object *o = json_object_new_object();
        /* Each fact in its place first; what the look finds replaces it there. */
        if (kb_fact_set_bool(o, FACT_PROBE_KEYS_TESTED, name && name[0]) < 0 ||
            kb_fact_set_bool(o, FACT_PROBE_KEYS_FOUND, false) < 0 || kb_fact_set_null(o, FACT_PROBE_KEYS_PAYLOAD) < 0 ||
            kb_fact_set_null(o, FACT_PROBE_KEYS_ERROR) < 0 || look_for_key(o, name) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        *ret = o;
        return 0;
}

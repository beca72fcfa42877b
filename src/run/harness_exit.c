/* harness_exit.c: the wait for a kernel's exit after its shutdown_reply, as check and conformance
 * share it: on the pinned pidfd, with what holds a kernel that is slow to go read by the host, and
 * the SIGTERM a kernel manager sends one that does not go. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kbound/kernel.h"
#include "base/cleanup.h"
#include "kbound/sandbox.h"
#include "run/harness-internal.h"
#include "base/procfs.h"
#include "verdict/rules.h"

/* The kernel's child processes (every thread's /proc/<pid>/task/<tid>/children), each with its
 * name and state ("Z": a zombie it never reaped), into children and words. */
static void children_of(pid_t kernel, json_object *children, char *words, size_t size) {
        char path[64];
        size_t said = 0;
        snprintf(words, size, "none");
        snprintf(path, sizeof path, "/proc/%d/task", (int) kernel);
        DIR *tasks = opendir(path);
        for (struct dirent *t; tasks && (t = readdir(tasks));) {
                if (t->d_name[0] == '.')
                        continue;
                char rel[320];
                snprintf(rel, sizeof rel, "/proc/%d/task/%s/children", (int) kernel, t->d_name);
                _cleanup_free_ char *list = NULL;
                if (kb_read_file(AT_FDCWD, rel, O_RDONLY, 4096, &list, NULL) < 0)
                        continue;
                char *save = NULL;
                for (char *tok = strtok_r(list, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
                        snprintf(rel, sizeof rel, "/proc/%s/stat", tok);
                        _cleanup_free_ char *text = NULL;
                        kb_procfs_stat st = {0};
                        if (kb_read_file(AT_FDCWD, rel, O_RDONLY, 4096, &text, NULL) < 0 ||
                            kb_procfs_stat_parse(text, &st) < 0)
                                continue;
                        json_object *c = json_object_new_object();
                        json_object_object_add(c, "pid", json_object_new_int64(st.pid));
                        json_object_object_add(c, "comm", json_object_new_string(st.comm));
                        json_object_object_add(c, "state", json_object_new_string_len(&st.state, 1));
                        json_object_array_add(children, c);
                        size_t used = said ? strlen(words) : 0;
                        if (used < size)
                                snprintf(words + used, size - used, "%shost pid %d %s (%c)", said ? ", " : "",
                                         (int) st.pid, st.comm, st.state);
                        said++;
                }
        }
        if (tasks)
                closedir(tasks);
}

/* The kernel's threads, each with its name, state and the kernel function it waits in (wchan),
 * into threads: what a process that does not exit is doing (a join, a lock, a read). */
static void threads_of(pid_t kernel, json_object *threads) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task", (int) kernel);
        DIR *tasks = opendir(path);
        for (struct dirent *t; tasks && (t = readdir(tasks));) {
                if (t->d_name[0] == '.')
                        continue;
                char rel[320];
                _cleanup_free_ char *text = NULL, *wchan = NULL;
                kb_procfs_stat st = {0};
                snprintf(rel, sizeof rel, "/proc/%d/task/%s/stat", (int) kernel, t->d_name);
                if (kb_read_file(AT_FDCWD, rel, O_RDONLY, 4096, &text, NULL) < 0 || kb_procfs_stat_parse(text, &st) < 0)
                        continue;
                snprintf(rel, sizeof rel, "/proc/%d/task/%s/wchan", (int) kernel, t->d_name);
                (void) kb_read_file(AT_FDCWD, rel, O_RDONLY, 256, &wchan, NULL);
                json_object *o = json_object_new_object();
                json_object_object_add(o, "tid", json_object_new_int64(st.pid));
                json_object_object_add(o, "comm", json_object_new_string(st.comm));
                json_object_object_add(o, "state", json_object_new_string_len(&st.state, 1));
                if (wchan && *wchan)
                        json_object_object_add(o, "wchan", json_object_new_string(wchan));
                json_object_array_add(threads, o);
        }
        if (tasks)
                closedir(tasks);
}

/* Waits on pidfd until it is readable (the process exited), or until deadline. Returns 1 exited,
 * 0 not by then, -errno. */
static int pidfd_wait(int pidfd, int64_t deadline) {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        int n;
        do
                n = poll(&p, 1, kb_ms_left(deadline));
        while (n < 0 && errno == EINTR);
        return n < 0 ? -errno : n > 0;
}

int kb_harness_wait_exit(kb_harness *h, int64_t replied_ms, json_object *ev, kb_harness_exit *ret) {
        int pidfd = kb_kernel_pidfd(h->kernel);
        pid_t kernel = kb_sandbox_kernel_pid(kb_kernel_sandbox(h->kernel));
        *ret = (kb_harness_exit){.exit_ms = -1};
        snprintf(ret->held, sizeof ret->held, "none");
        int r = pidfd_wait(pidfd, kb_harness_deadline_in(h, replied_ms + KB_SHUTDOWN_PROMPT_MS - kb_now_ms()));
        if (r == 0 && !kb_harness_deadline_passed(h)) {
                /* Not gone yet: what it holds now, said whether it goes later or never. */
                json_object *held = json_object_new_object(), *children = json_object_new_array(),
                            *threads = json_object_new_array();
                if (held && children && threads) {
                        children_of(kernel, children, ret->held, sizeof ret->held);
                        threads_of(kernel, threads);
                        json_object_object_add(held, "after_ms", json_object_new_int64(KB_SHUTDOWN_PROMPT_MS));
                        json_object_object_add(held, "children", TAKE_PTR(children));
                        json_object_object_add(held, "threads", TAKE_PTR(threads));
                        json_object_object_add(ev, "still_running", TAKE_PTR(held));
                }
                json_object_put(held);
                json_object_put(children);
                json_object_put(threads);
                ret->late = true;
                /* As a kernel manager ends a kernel that does not go: SIGTERM, then a last wait. */
                int64_t term_ms = kb_now_ms() - replied_ms;
                int s = kb_kernel_signal(h->kernel, SIGTERM);
                if (s == -ESRCH)
                        r = 1; /* gone between the wait and the signal */
                else if (s < 0)
                        r = s;
                else {
                        ret->terminated = true;
                        json_object_object_add(ev, "sigterm_ms", json_object_new_int64(term_ms));
                        r = pidfd_wait(pidfd, kb_harness_deadline_in(h, KB_SHUTDOWN_TERM_MS));
                }
        }
        if (r < 0)
                return r;
        if (r == 1)
                ret->exit_ms = kb_now_ms() - replied_ms;
        json_object_object_add(ev, "exit_ms", ret->exit_ms >= 0 ? json_object_new_int64(ret->exit_ms) : NULL);
        json_object_object_add(ev, "late", json_object_new_boolean(ret->late));
        if (!ret->terminated)
                json_object_object_add(ev, "sigterm_ms", NULL);
        return r;
}

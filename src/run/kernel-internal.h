/* kernel-internal.h: what kernel.c shares with kernel_exit.c, kernel_redact.c, kernel_log.c and their
 * tests. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>
#include "kbound/client.h"
#include "kbound/connection.h"
#include "kbound/kernel.h"
#include "kbound/sandbox.h"
#include "kbound/secrets.h"

/* The first part of the kernel's socket names, in its runtime folder. */
#define SOCKET_PREFIX "kernel"

/* One kernel (kernel.c starts it, kernel_exit.c sees it go). */
struct kb_kernel {
        char *team_dir, *workspace, *runtime_dir, *host_dir, *log_path;
        char *socket_dir;             /* where the host reaches the kernel's sockets: runtime_dir, or the sandbox's
                                       * own tmpfs through its descriptor (/proc/self/fd/N) */
        char *tools_dir, *probe_copy; /* base_dir/tools/<team>/ and its copy of kbound-syscall-probe */
        char *boundary_copy;          /* and of kbound-probe */
        kb_connection *connection;
        kb_sandbox *sandbox; /* sandboxed kernels */
        pid_t child;         /* unsandboxed kernels: our direct child (its own process group) */
        int child_pidfd;
        kb_client *client;
        json_object *info;
        int64_t startup_ms;
        kb_client_msg_fn on_msg; /* the caller's transcript hook */
        void *on_msg_userdata;
        kb_secrets *key_secret; /* the connection key, so on_msg never sees it */
        bool stopped;
        int wait_status;
        int workspace_fd; /* unsandboxed kernels: the host folder, opened on first use */
        /* A kernel that speaks only TCP (kb_kernelspec.tcp_only, sandboxed): its ports on the
         * sandbox's own loopback, "P1,...", reached through kbound's relay; "" otherwise. */
        bool tcp;
        char relay_ports[64];
        kb_sandbox_hardening hardening; /* what it runs under (the caller's, with IP sockets for TCP) */
        bool hardened;                  /* the caller gave one */
};

/* Replaces *text (malloc'd, *len bytes, NULs allowed) by its redacted copy and *len by its
 * length. Returns 0 or -ENOMEM (then *text is freed and NULL, *len 0: nothing unredacted stays). */
int kb_kernel_redact_in_place(const kb_kernel *k, char **text, size_t *len);

/* *o replaced by its redacted copy (kb_kernel_redact); 0 or -ENOMEM (then *o is NULL). */
int kb_kernel_redact_json_in_place(const kb_kernel *k, json_object **o);

/* " (it made none of its ipc sockets: a kernel that speaks only TCP says so ...)" for a kernel of
 * ipc transport none of whose sockets is in the sandbox's socket folder (it may bind TCP whatever its
 * connection file says, as IJavascript does), else "": said when it died or went silent at start-up. */
const char *kb_kernel_tcp_hint(const kb_kernel *k);

/* Why the kernel stopped, in words (its exit, the sandbox's diagnosis, its log's error line),
 * waiting until deadline_ms for it to be reaped; at_start: it died before it answered, where a
 * memory limit kept as RLIMIT_AS is a likely cause. A malloc'd string, or NULL. */
char *kb_kernel_death_words(kb_kernel *k, size_t log_bytes, int64_t deadline_ms, bool at_start);

/* The line of text (a kernel's log) that says why it stopped: the last one that reads as an error
 * ("Error: No such device", "OSError: [Errno 19] ...", "Error in library(x) : ...", "FATAL ...",
 * "panic: ..."), where a stack trace's frames follow it or not. Returns its start in text with its
 * length in *ret_len, or NULL when no line reads so. */
const char *kb_kernel_log_error_line(const char *text, size_t *ret_len);

/* The error line of the last scan_bytes of the log at path, trimmed, at most 300 bytes; a malloc'd
 * string, or NULL (none, unreadable, out of memory). The caller redacts it: the kernel wrote it. */
char *kb_kernel_log_error_line_of(const char *path, size_t scan_bytes);

/* kernel.h: one running kernel: team directories, connection file, launch (sandboxed or not),
 * client, readiness, and teardown that leaves nothing behind. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "kbound/client.h"
#include "kbound/kernelspec.h"
#include "kbound/sandbox.h"

struct kb_kernel;

typedef struct kb_kernel_options {
        const kb_kernelspec *spec;
        const char *base_dir; /* host directory (0700) that holds teams/<team>/ */
        const char *team;     /* kb_team_name_valid, else -EINVAL */
        bool sandbox;         /* false only for protocol debugging (`--sandbox off`) */
        const char *bwrap;    /* absolute path; required when sandbox */
        bool allow_network;
        const char *rootfs;
        char *const *ro_paths;                 /* extra read-only binds */
        char *const *host_env;                 /* kbound's environment, filtered by kb_sandbox_env */
        const kb_sandbox_user *user;           /* who the kernel runs as (kb_sandbox_user_resolve); NULL:
                                                * kbound's own user, which must then not be root */
        const kb_sandbox_hardening *hardening; /* seccomp filter, nested user namespaces; NULL:
                                                * the strictest defaults */
        const char *syscall_probe;             /* host path of kbound-syscall-probe to show inside; may be NULL */
        bool tcp;      /* the kernel speaks TCP, through kbound's relay (which is syscall_probe), whatever its
                        * kernelspec says (kb_kernelspec.tcp_only: the same); sandboxed kernels only */
        bool host_tcp; /* unsandboxed (`kbound audit` over tcp): a tcp connection file on the host's
                        * 127.0.0.1, ports kbound picks and holds until the launch, reached directly */
        const char *boundary_probe; /* host path of kbound-probe to show inside; may be NULL */
        kb_client_msg_fn on_msg;    /* transcript hook, may be NULL; it never sees the connection
                                     * key: a message echoing it (or a fragment, see
                                     * kb_secrets_add_token) arrives with it redacted, and one that
                                     * cannot be redacted (out of memory) arrives as msg NULL, to be
                                     * counted as lost */
        void *on_msg_userdata;
        int cancel_fd;       /* readable → every wait ends with -ECANCELED; <= 0: none */
        int64_t deadline_ms; /* launch + readiness */
        /* Sandboxed kernels: called while bwrap's init waits, before the kernel's program runs
         * (kb_sandbox_policy.before_exec); may be NULL. */
        void (*before_exec)(void *userdata, const kb_sandbox *sb);
        void *before_exec_userdata;
        /* A launcher other than kbound's own (`kbound audit`): called, with sandbox false, in place of the
         * launch, with the kernel's argv (the kernelspec's as it is, host paths) and environment; *ret gets
         * the sandbox it started (kb_sandbox_audit_launch). Returns 0 or -errno with *ret_error. NULL: none. */
        int (*launch)(void *userdata, const struct kb_kernel *k, char *const *argv, char *const *env, kb_sandbox **ret,
                      kb_error **ret_error);
        void *launch_userdata;
} kb_kernel_options;

typedef struct kb_kernel kb_kernel;

/* File descriptors kbound holds for one running kernel, for callers that check the limit before
 * they start any: the five channels' libzmq sockets and four disconnect monitors with their four
 * internal peers, one descriptor each; the five ipc connections; the pidfd; the log, the info
 * pipe and bwrap's own pipes; check's canary listeners; and, at their peaks, the host's looks
 * (each process's folder, root and tables, a namespace's sock_diag socket) and sandbox.session's
 * trial sandbox with its own pipes and log keeper. Measured (docs/faults.md): `kbound check` of
 * one python3 kernel needs a limit of 64-70, of two 106-112, so about 42 each; rounded up. */
#define KB_KERNEL_FDS 48

/* Creates teams/<team>/{workspace,run,host} under base_dir (0700 each; -EEXIST if the team's
 * folder exists), writes the connection file (ipc transport in run/, 0600), launches the kernel
 * as options->user (when that switches: workspace/ and run/ and the connection file belong to it,
 * teams/ and the team folder are root's with search for its group only, host/ stays root's)
 * (in bwrap unless !sandbox), connects a client with the kernel's pidfd as its death fd, and waits
 * until the kernel answers kernel_info with iopub flowing; then removes the connection file (the
 * kernel has read it: the key stays in memory only, and a cell cannot read it back from disk).
 * Errors: -EPERM when bwrap ran but did not isolate the kernel as PID 2 of a new pid namespace
 * (or, without options->user, when kbound is root: a kernel never runs as root) and -EXDEV when
 * its /workspace is not what was asked (both a leaky sandbox), the other errors of kb_sandbox_launch,
 * kb_client_wait_ready (-ETIMEDOUT, -ESRCH: the kernel exited; its log tail is in the error), -EEXIST, -EINVAL (not
 * a valid team name: nothing is created), -ENOMEM. On failure everything started is stopped, the team folder removed,
 * and *ret_error (if ret_error) gets the error, one line, redacted with the connection's key (it can quote the
 * kernel's log); running out of memory has no words but its errno. */
KB_EXPORT int kb_kernel_start(const kb_kernel_options *options, kb_kernel **ret, kb_error **ret_error);

KB_EXPORT kb_client *kb_kernel_client(const kb_kernel *k);
/* What the kernel's sandbox runs under: the caller's hardening, with IP sockets for a kernel that
 * speaks only TCP (borrowed; NULL: the strictest defaults). */
KB_EXPORT const kb_sandbox_hardening *kb_kernel_hardening(const kb_kernel *k);
/* A kernel that speaks only TCP: its ports on the sandbox's loopback, "P1,...", which kbound's relay
 * reaches (docs/transports.md); NULL for an ipc kernel. */
KB_EXPORT const char *kb_kernel_relay_ports(const kb_kernel *k);
/* Where the relay listens inside ("<prefix>-<port>", the ipc names kbound connects to); NULL for an
 * ipc kernel. */
KB_EXPORT const char *kb_kernel_relay_prefix(const kb_kernel *k);
/* And the relay's program on the host (the team's copy of kbound-syscall-probe, bound read-only
 * at KB_SANDBOX_PROBE_PROGRAM); NULL for an ipc kernel. */
KB_EXPORT const char *kb_kernel_relay_program(const kb_kernel *k);
KB_EXPORT kb_sandbox *kb_kernel_sandbox(const kb_kernel *k); /* NULL when not sandboxed */
KB_EXPORT int kb_kernel_pidfd(const kb_kernel *k);
KB_EXPORT json_object *kb_kernel_info(const kb_kernel *k); /* kernel_info_reply content, borrowed,
                                                            * connection key redacted */
KB_EXPORT const char *kb_kernel_team_dir(const kb_kernel *k);
KB_EXPORT const char *kb_kernel_workspace(const kb_kernel *k); /* host path */
/* A directory descriptor (borrowed) of the workspace as the kernel sees it: the sandbox's own
 * /workspace (a tmpfs with --workspace-max, which the host path above then does not show until it
 * is copied there by kb_kernel_destroy with keep), or the host folder. -1 if it cannot be opened.
 * Every host read and write of the workspace goes through it. */
KB_EXPORT int kb_kernel_workspace_fd(kb_kernel *k);
KB_EXPORT const char *kb_kernel_runtime_dir(const kb_kernel *k);
/* Where the host reaches the kernel's ipc sockets: the runtime folder above, or, when they are in a
 * tmpfs of the sandbox's own (kb_sandbox_runtime_in_memory), a path through the descriptor kbound
 * holds of it ("/proc/self/fd/N"), valid in kbound's own process only. */
KB_EXPORT const char *kb_kernel_socket_dir(const kb_kernel *k);
KB_EXPORT const char *kb_kernel_host_dir(const kb_kernel *k); /* host-only: log, canaries */
KB_EXPORT const char *kb_kernel_log_path(const kb_kernel *k);
KB_EXPORT int64_t kb_kernel_startup_ms(const kb_kernel *k); /* launch → first kernel_info reply */
/* The port of ch on 127.0.0.1 of a kernel reached directly over TCP (kb_kernel_options.host_tcp), or
 * -ENOTSUP. */
KB_EXPORT int kb_kernel_tcp_port(const kb_kernel *k, kb_channel ch);
/* The path of ch's ipc socket as the kernel sees it (inside the sandbox: under KB_SANDBOX_RUNTIME).
 * Returns 0, -ENOTSUP (a tcp connection), -ENAMETOOLONG. */
KB_EXPORT int kb_kernel_socket_path(const kb_kernel *k, kb_channel ch, char *buf, size_t size);

/* Redaction with this kernel's connection key, for whatever the caller shows of the kernel's own
 * text (cell output, replies): every copy or fragment of the key (kb_secrets_add_token) becomes
 * "[redacted:connection-key]". Every error, diagnosis, log tail and kernel_info this object hands out is
 * already redacted. A hostile kernel can still encode its key (base64, reversed) past any
 * redaction; the key is per kernel and useless once it is stopped.
 * kb_kernel_redact_text: a malloc'd copy (NULL if text is NULL or out of memory).
 * kb_kernel_redact: a new reference (o itself when nothing matched), NULL if out of memory.
 * kb_kernel_redact_execution: redacts ex's texts, reply, outputs and errors in place; returns 0 or
 * -ENOMEM (a text that could not be redacted is dropped, never left unredacted). */
KB_EXPORT char *kb_kernel_redact_text(const kb_kernel *k, const char *text);
KB_EXPORT json_object *kb_kernel_redact(const kb_kernel *k, json_object *o);
KB_EXPORT int kb_kernel_redact_execution(const kb_kernel *k, kb_execution *ex);

/* Sends sig to the kernel process through its pidfd. Returns 0, -ESRCH. */
KB_EXPORT int kb_kernel_signal(kb_kernel *k, int sig);

/* 1 if the kernel process is alive, 0 if not. */
KB_EXPORT int kb_kernel_alive(const kb_kernel *k);

/* The end of the kernel's log (stdout+stderr), at most max_bytes, as one line (newlines become
 * spaces) for diagnoses, starting at a whole word and with the connection key redacted; malloc'd,
 * never NULL unless out of memory. */
KB_EXPORT char *kb_kernel_log_tail(const kb_kernel *k, size_t max_bytes);

/* Why the kernel is gone, in words, once its pidfd said it exited: waits until deadline_ms for its
 * sandbox (or, unsandboxed, the process) to exit as well and reaps it, then returns a malloc'd one
 * line such as "the kernel exited with status 42; its log ends: ..." (at most log_bytes of log).
 * Without a known status (still running at the deadline) it says only "the kernel process died".
 * NULL only when out of memory. */
KB_EXPORT char *kb_kernel_death_diagnosis(kb_kernel *k, size_t log_bytes, int64_t deadline_ms);

/* Asks the kernel to shut down (shutdown_request, up to grace_ms), then kills whatever is left
 * and reaps it before deadline_ms. *ret_status (may be NULL) gets the wait status. Idempotent.
 * Returns 0 or -ETIMEDOUT. */
KB_EXPORT int kb_kernel_stop(kb_kernel *k, int grace_ms, int64_t deadline_ms, int *ret_status);

/* Stops the kernel if needed and removes its team folder unless keep. Sets *kp to NULL. */
KB_EXPORT void kb_kernel_destroy(kb_kernel **kp, bool keep);

/* seccomp.h: the kernel's attack surface as data (which calls and socket families a sandboxed kernel
 * may not use, with the errno it gets and why) and the seccomp filter built from it with libseccomp:
 * a raw BPF program in a sealed memfd, which is what `bwrap --seccomp FD` reads. */
#pragma once

#include "kbound/common.h"
#include "kbound/sysabi.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which socket families socket(2) and socketpair(2) may create. Every other family, named or not,
 * gets EAFNOSUPPORT; AF_VSOCK is refused in every mode. */
typedef enum kb_seccomp_sockets {
        KB_SECCOMP_SOCKETS_DEFAULT = 0, /* "default": AF_UNIX and AF_NETLINK (getifaddrs needs it) */
        KB_SECCOMP_SOCKETS_UNIX,        /* "unix": AF_UNIX only */
        KB_SECCOMP_SOCKETS_INET,        /* "inet": the default plus AF_INET and AF_INET6 */
        KB_SECCOMP_SOCKETS_MAX_,
} kb_seccomp_sockets;

/* A zero-initialised policy is the full filter: the default socket families, nothing left allowed. */
typedef struct kb_seccomp_policy {
        kb_seccomp_sockets sockets;
        /* The escape hatch: names of call entries (kb_seccomp_entry.name, e.g. "keyctl",
         * "ioctl:TIOCSTI") the filter leaves allowed, NULL-terminated; NULL for none. A socket
         * family cannot be named here: `sockets` decides those. Borrowed. */
        char *const *allow;
} kb_seccomp_policy;

/* How an entry's call is matched. */
typedef enum kb_seccomp_match {
        KB_SECCOMP_MATCH_CALL,        /* every invocation of the call */
        KB_SECCOMP_MATCH_FLAG,        /* argument `arg` has every bit of `value` set */
        KB_SECCOMP_MATCH_VALUE,       /* the low 32 bits of argument `arg` equal `value` */
        KB_SECCOMP_MATCH_PERSONALITY, /* argument 0 is neither PER_LINUX (0) nor the query 0xffffffff */
        KB_SECCOMP_MATCH_FAMILY,      /* socket(2) or socketpair(2) with address family `value` */
} kb_seccomp_match;

/* One thing the filter can refuse: a call (possibly with an argument condition) or a socket
 * family. The table is constant data: the docs, the report and the probe cells use it. */
typedef struct kb_seccomp_entry {
        const char *name;    /* stable id: "keyctl", "clone:CLONE_NEWUSER", "ioctl:TIOCSTI", "AF_VSOCK" */
        const char *syscall; /* the call as libseccomp and the man pages name it ("socket" for families) */
        kb_seccomp_match match;
        int arg;             /* the argument the condition reads (FLAG, VALUE); -1 otherwise. Given for
                              * the common ABI: clone's flags are argument 1 on s390, and the filter
                              * knows it */
        uint64_t value;      /* the flag, value or family number the condition compares with; else 0 */
        int errnum;          /* what the call returns when refused: EPERM, ENOSYS or EAFNOSUPPORT */
        const char *why;     /* one line: why a kernel is better off without it */
        const char *anchors; /* which peer sandboxes refuse it too ("flatpak, moby, systemd @mount") */
} kb_seccomp_entry;

/* The number of entries, and entry i (0 <= i < count), in a fixed order: calls, then families.
 * kb_seccomp_entry_at returns NULL past the end. The entries are static: never freed. */
KB_EXPORT size_t kb_seccomp_entry_count(void);
KB_EXPORT const kb_seccomp_entry *kb_seccomp_entry_at(size_t i);

/* The entry named name, or NULL. */
KB_EXPORT const kb_seccomp_entry *kb_seccomp_entry_find(const char *name);

/* The entry's syscall number on this machine's native ABI (what a probe passes to syscall(2)), or
 * -ENOSYS if the native ABI has no such call (e.g. "umount" and "vm86" exist only for 32-bit
 * x86; the filter still refuses them there). -EINVAL for NULL. */
KB_EXPORT int kb_seccomp_entry_syscall_nr(const kb_seccomp_entry *entry);

/* Whether kbound's filter has rules for abi on this machine (the native ABI; x86_64's i386 and x32;
 * aarch64's arm), each the same rules. */
KB_EXPORT bool kb_seccomp_abi_filtered(kb_sysabi abi);

/* The number of the call libseccomp names name on abi, as a process calling through it passes it
 * (x32's with KB_SYSABI_X32_BIT; i386's direct socket and socketpair, which libseccomp names by
 * socketcall's pseudo numbers). -ENOSYS if abi has no such call, -EINVAL for NULL or an ABI the
 * filter has no rules for. kb_seccomp_entry_syscall_nr_on: the same for an entry's call. */
KB_EXPORT int kb_seccomp_syscall_nr_on(const char *name, kb_sysabi abi);
KB_EXPORT int kb_seccomp_entry_syscall_nr_on(const kb_seccomp_entry *entry, kb_sysabi abi);

/* Whether a filter built from policy (NULL: the default policy) refuses entry: a family when
 * `sockets` does not allow it, a call unless policy->allow names it. Assumes a policy that
 * kb_seccomp_policy_check accepted. */
KB_EXPORT bool kb_seccomp_blocks(const kb_seccomp_policy *policy, const kb_seccomp_entry *entry);

/* Checks a policy (NULL is the default policy, and valid). Returns 0, or -EINVAL for a `sockets`
 * value out of range or an allow name that is not a call entry (unknown, or a socket family). */
KB_EXPORT int kb_seccomp_policy_check(const kb_seccomp_policy *policy);

/* "default", "unix", "inet" <-> the enum. from_string returns 0, or -EINVAL for anything else
 * (also NULL). to_string returns NULL for a value out of range. */
KB_EXPORT int kb_seccomp_sockets_from_string(const char *s, kb_seccomp_sockets *ret);
KB_EXPORT const char *kb_seccomp_sockets_to_string(kb_seccomp_sockets sockets);

/* Builds the filter for policy (NULL: the default policy) and returns, in *ret_fd, a memfd holding
 * the raw BPF program (struct sock_filter[], exported by libseccomp), sealed against every change,
 * O_CLOEXEC, its offset at 0: pass it to one bwrap as `--seccomp FD` (bwrap reads it from the
 * current offset, so each launch needs its own fd; clear FD_CLOEXEC in the child, as for
 * --info-fd). The caller owns the fd.
 * The filter: default action allow; each blocked entry gets its errno (never a kill, which would
 * look like a crash); rules for the native ABI and the compat ABIs it may run (x86_64: x86 and
 * x32; aarch64: arm), each with the same rules; a syscall from any other architecture kills the
 * process. Nothing is loaded into the calling process.
 * Returns 0; -EINVAL (see kb_seccomp_policy_check); -ENOSYS if libseccomp does not know a call of
 * the table (too old a libseccomp: building a weaker filter instead would fail open);
 * -EOPNOTSUPP if the running kernel cannot confirm SECCOMP_RET_KILL_PROCESS through seccomp(2)
 * (older than Linux 4.14, or valgrind, which lacks the call: libseccomp asks); -E2BIG if
 * the program is longer than the kernel accepts (BPF_MAXINSNS); -ENOMEM; or another -errno from
 * memfd_create, libseccomp or the seals. Keeps no state between calls (libseccomp probes the
 * running kernel on its first use and caches the answer in its own globals). */
KB_EXPORT int kb_seccomp_build(const kb_seccomp_policy *policy, int *ret_fd);

/* The whole program in fd (made by kb_seccomp_build; read with pread, so its offset stays) in a new
 * buffer: *ret (free it) of *ret_len bytes, a whole number of instructions. Returns 0, -EBADMSG
 * (not a program: empty, or not whole instructions), -ENOMEM, -EIO (read short), -errno. */
KB_EXPORT int kb_seccomp_program_read(int fd, void **ret, size_t *ret_len);

/* The number of BPF instructions in a program fd made by kb_seccomp_build (its size / 8; an fstat,
 * no read). Returns 0, -EBADMSG if the size is not a whole number of instructions, or -errno. */
KB_EXPORT int kb_seccomp_instructions(int fd, size_t *ret_count);

/* seccomp_compare.h: what a stack of seccomp programs answers a call, run as the kernel runs them,
 * and which calls of kbound's table it answers otherwise than the program kbound built, on every
 * system-call ABI the filter has rules for. The host's proof of the filter in force reads the
 * programs (PTRACE_SECCOMP_GET_FILTER) and holds them to kbound's instruction for instruction; this
 * says what a difference changes, so a report can name the ABI and the call (docs/seccomp.md). */
#pragma once

#include "kbound/common.h"
#include "kbound/sysabi.h"
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

/* A raw classic BPF program as seccomp loads it (struct sock_filter[len]), borrowed. */
typedef struct kb_seccomp_prog {
        const void *insns;
        size_t len; /* instructions */
} kb_seccomp_prog;

/* Runs the programs (oldest first, as they were stacked) on one call as the kernel does: each from
 * its first instruction; the answer is the action of highest precedence among theirs (kill process,
 * kill thread, trap, errno, user notification, trace, log, allow), the newest's on a tie. Returns 0
 * and the answer (SECCOMP_RET_*, with its data) in *ret; -EINVAL for no program, or one the kernel
 * would not have run (a jump or a load out of bounds, an instruction seccomp refuses). */
KB_EXPORT int kb_seccomp_run(const kb_seccomp_prog *progs, size_t n, const struct seccomp_data *d, uint32_t *ret);

/* One call the stack in force answers otherwise than kbound's program. */
typedef struct kb_seccomp_difference {
        kb_sysabi abi;
        char call[80]; /* the entry ("keyctl", "AF_VSOCK"), with its way in when not its own call
                        * ("AF_VSOCK through socketpair", "AF_VSOCK through socketcall(SOCKET)") */
        long nr;       /* the call's number on that ABI */
        uint32_t built, in_force;
} kb_seccomp_difference;

/* Every entry of kbound's table (with the arguments its rule reads: a clone flag, an ioctl request, a
 * personality other than the default; each family by socket(2), socketpair(2) and, on i386,
 * socketcall(2)) on every ABI kbound's filter has rules for, run through built and through the
 * stack in_force (n programs, oldest first). Those answered otherwise go to ret (at most max, in
 * the table's order, ABI by ABI), and *ret_n says how many there are in all (more than max when
 * they did not fit). Returns 0, or -EINVAL for a program that cannot be run. */
KB_EXPORT int kb_seccomp_compare(const kb_seccomp_prog *built, const kb_seccomp_prog *in_force, size_t n,
                                 kb_seccomp_difference *ret, size_t max, size_t *ret_n);

/* An answer as words: "allow", "errno EPERM", "kill process", "kill thread", "trap", "trace", "log",
 * "user notification" (size at least 48). Returns buf. */
KB_EXPORT const char *kb_seccomp_action_text(uint32_t action, char *buf, size_t size);

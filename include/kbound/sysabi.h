/* sysabi.h: the system-call ABIs a process of this machine's architecture can reach the Linux kernel
 * through, and a call through each (docs/seccomp.md, "Every ABI"). A filter that refuses a call on
 * one ABI and lets it through on another is no filter: kbound's has rules for each of them, the
 * attack-surface tries make every refused call through each the running kernel accepts, and the host
 * asks the kernel which those are. libc only: kbound-syscall-probe and kbound-probe compile it in. */
#pragma once

#include "kbound/common.h"
#include <stdbool.h>
#include <stddef.h>

/* The ABIs, native first. On x86_64: x86_64 (syscall), i386 (int 0x80, IA32 emulation) and x32
 * (syscall with __X32_SYSCALL_BIT, usually compiled out or off); on aarch64: aarch64 and arm
 * (AArch32), which a 64-bit process cannot call through; elsewhere the native ABI alone. */
typedef enum kb_sysabi {
        KB_SYSABI_NATIVE,
        KB_SYSABI_COMPAT32, /* i386 on x86_64, arm on aarch64 */
        KB_SYSABI_X32,      /* x86_64 only */
        KB_SYSABI_MAX_,
} kb_sysabi;

/* Bit 30 of an x32 system call's number (arch/x86/include/uapi/asm/unistd.h). */
#define KB_SYSABI_X32_BIT 0x40000000L

/* abi's name as the reports say it ("x86_64", "i386", "x32", "aarch64", "arm"), or NULL when this
 * machine's architecture has no such ABI. */
KB_EXPORT const char *kb_sysabi_name(kb_sysabi abi);

/* How a process reaches it ("syscall", "int 0x80", "syscall with __X32_SYSCALL_BIT"), for messages;
 * NULL as for kb_sysabi_name. */
KB_EXPORT const char *kb_sysabi_how(kb_sysabi abi);

/* Whether this program can make calls through abi: the native ABI always; i386 and x32 from an
 * x86_64 build; never arm from aarch64 (that takes a 32-bit program). */
KB_EXPORT bool kb_sysabi_callable(kb_sysabi abi);

/* Whether a pointer passed through abi must lie below 4 GiB (i386 and x32: the kernel reads 32 bits
 * of it). kb_sysabi_low gives such memory. */
KB_EXPORT bool kb_sysabi_narrow(kb_sysabi abi);

/* A copy of the n bytes at src in memory a narrow ABI can point at (a fresh private page below
 * 4 GiB, never unmapped: for processes that make a few calls and exit, as the tries' are); src
 * itself for any other ABI. (void *) -1 when no such page could be had, which every call answers
 * with EFAULT. n at most 4096. */
KB_EXPORT void *kb_sysabi_low(kb_sysabi abi, const void *src, size_t n);

/* The system call nr of abi (x32's number with KB_SYSABI_X32_BIT) with six arguments, a narrow
 * ABI's each in its low 32 bits. Returns what the kernel returned, or -errno; -ENOSYS when this
 * program cannot call through abi (kb_sysabi_callable). A kernel without the ABI answers ENOSYS
 * (x32) or kills the caller with SIGSEGV (int 0x80 without IA32 emulation): call it in a process of
 * its own where that may be. */
KB_EXPORT long kb_sysabi_call(kb_sysabi abi, long nr, long a0, long a1, long a2, long a3, long a4, long a5);

/* Whether the running kernel accepts calls through abi, from this process's place: getpid through it
 * in a forked child, whose answer says (its own pid: yes; ENOSYS, or killed by SIGSEGV or SIGILL:
 * the kernel does not run the ABI; killed by SIGSYS: a seccomp filter this process runs under
 * kills calls through it, and every process it starts inherits that). why (why_size bytes) says
 * what getpid answered, either way ("getpid through int 0x80 answered 1234"). The caller must not
 * ignore SIGCHLD; the child only makes the call and exits, so a multi-threaded caller may use it.
 * Returns 1 (accepted), 0 (not), -EOPNOTSUPP when this program cannot call through abi (why says
 * so), -EINVAL, or -errno from pipe2, fork or waitpid. */
KB_EXPORT int kb_sysabi_accepted(kb_sysabi abi, char *why, size_t why_size);

/* sysabi.c: the system-call ABIs of this machine's architecture and a call through each (sysabi.h).
 * libc only: the static programs compile it in. */
#include "kbound/sysabi.h"
#include "base/child.h"
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct abi_row {
        const char *name;
        const char *how;
        bool callable;
        bool narrow;
} abi_row;

#if defined(__x86_64__)
static const abi_row rows[KB_SYSABI_MAX_] = {
        [KB_SYSABI_NATIVE] = {"x86_64", "syscall", true, false},
        [KB_SYSABI_COMPAT32] = {"i386", "int 0x80", true, true},
        [KB_SYSABI_X32] = {"x32", "syscall with __X32_SYSCALL_BIT", true, true},
};
#elif defined(__aarch64__)
static const abi_row rows[KB_SYSABI_MAX_] = {
        [KB_SYSABI_NATIVE] = {"aarch64", "svc", true, false},
        /* AArch32 calls come only from a 32-bit program: no 64-bit process can make one */
        [KB_SYSABI_COMPAT32] = {"arm", "svc from a 32-bit program", false, true},
};
#else
static const abi_row rows[KB_SYSABI_MAX_] = {
        [KB_SYSABI_NATIVE] = {"native", "syscall", true, false},
};
#endif

static const abi_row *row_of(kb_sysabi abi) {
        if ((unsigned) abi >= KB_SYSABI_MAX_ || !rows[abi].name)
                return NULL;
        return &rows[abi];
}

const char *kb_sysabi_name(kb_sysabi abi) {
        const abi_row *r = row_of(abi);
        return r ? r->name : NULL;
}

const char *kb_sysabi_how(kb_sysabi abi) {
        const abi_row *r = row_of(abi);
        return r ? r->how : NULL;
}

bool kb_sysabi_callable(kb_sysabi abi) {
        const abi_row *r = row_of(abi);
        return r && r->callable;
}

bool kb_sysabi_narrow(kb_sysabi abi) {
        const abi_row *r = row_of(abi);
        return r && r->narrow;
}

void *kb_sysabi_low(kb_sysabi abi, const void *src, size_t n) {
        if (!kb_sysabi_narrow(abi))
                return (void *) src;
#if defined(__x86_64__)
        if (n > 4096)
                return (void *) -1;
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        if (p == MAP_FAILED)
                return (void *) -1;
        if (n)
                memcpy(p, src, n);
        return p;
#else
        return (void *) -1;
#endif
}

#if defined(__x86_64__)
/* A 32-bit x86 call from 64-bit code: the number in eax, the arguments in ebx, ecx, edx, esi, edi,
 * ebp. The kernel clears r8-r11 on this path. rbp may be the frame pointer, so it is kept in r13
 * and put back; nothing is pushed (the red zone below rsp may hold the caller's locals). */
static long int80(long nr, long a0, long a1, long a2, long a3, long a4, long a5) {
        long ret;
        register long ebp_value __asm__("r12") = a5;
        __asm__ volatile("mov %%rbp, %%r13\n\t"
                         "mov %%r12, %%rbp\n\t"
                         "int $0x80\n\t"
                         "mov %%r13, %%rbp"
                         : "=a"(ret)
                         : "0"(nr), "b"(a0), "c"(a1), "d"(a2), "S"(a3), "D"(a4), "r"(ebp_value)
                         : "memory", "cc", "r8", "r9", "r10", "r11", "r13");
        return (long) (int32_t) ret; /* eax: the result, -errno on failure */
}
#endif

long kb_sysabi_call(kb_sysabi abi, long nr, long a0, long a1, long a2, long a3, long a4, long a5) {
        if (!kb_sysabi_callable(abi))
                return -ENOSYS;
#if defined(__x86_64__)
        if (abi == KB_SYSABI_COMPAT32)
                return int80(nr, (long) (uint32_t) a0, (long) (uint32_t) a1, (long) (uint32_t) a2, (long) (uint32_t) a3,
                             (long) (uint32_t) a4, (long) (uint32_t) a5);
        if (abi == KB_SYSABI_X32) {
                /* x32 passes 64-bit registers whose values are 32-bit ones; a negative int (an fd of
                 * -1) stays negative, as an x32 program's compiler would extend it */
                long r = syscall(nr, (long) (int32_t) a0, (long) (int32_t) a1, (long) (int32_t) a2, (long) (int32_t) a3,
                                 (long) (int32_t) a4, (long) (int32_t) a5);
                return r < 0 ? -errno : r;
        }
#endif
        long r = syscall(nr, a0, a1, a2, a3, a4, a5);
        return r < 0 ? -errno : r;
}

/* getpid's number on abi, or -1. */
static long getpid_nr(kb_sysabi abi) {
#if defined(__x86_64__)
        switch (abi) {
        case KB_SYSABI_NATIVE:
                return SYS_getpid;
        case KB_SYSABI_COMPAT32:
                return 20; /* arch/x86/entry/syscalls/syscall_32.tbl */
        case KB_SYSABI_X32:
                return KB_SYSABI_X32_BIT | SYS_getpid;
        default:
                return -1;
        }
#else
        return abi == KB_SYSABI_NATIVE ? SYS_getpid : -1;
#endif
}

typedef struct abi_try {
        kb_sysabi abi;
        long nr;
} abi_try;

/* The child of kb_sysabi_accepted: getpid through the ABI, and its own pid the native way. */
static int try_getpid(int answer_fd, void *arg) {
        const abi_try *t = arg;
        /* whatever the parent catches, a kernel's refusal must end this child */
        static const int fatal[] = {SIGSEGV, SIGILL, SIGBUS, SIGSYS};
        for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
                signal(fatal[i], SIG_DFL);
        long answers[2] = {kb_sysabi_call(t->abi, t->nr, 0, 0, 0, 0, 0, 0), (long) syscall(SYS_getpid)};
        ssize_t w = write(answer_fd, answers, sizeof answers);
        return w == (ssize_t) sizeof answers ? 0 : 1;
}

int kb_sysabi_accepted(kb_sysabi abi, char *why, size_t why_size) {
        if (!why || why_size == 0)
                return -EINVAL;
        const char *name = kb_sysabi_name(abi), *how = kb_sysabi_how(abi);
        long nr = getpid_nr(abi);
        if (!name)
                return -EINVAL;
        if (!kb_sysabi_callable(abi) || nr < 0) {
                snprintf(why, why_size, "not tried: a %s call cannot be made from this program (%s)", name, how);
                return -EOPNOTSUPP;
        }
        abi_try try = {.abi = abi, .nr = nr};
        long answers[2] = {0, 0};
        ssize_t got;
        pid_t pid = kb_child_answer(try_getpid, &try, answers, sizeof answers, &got);
        if (pid < 0)
                return pid;
        int status = 0;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (WIFSIGNALED(status)) {
                int sig = WTERMSIG(status);
                const char *sig_name = sigabbrev_np(sig);
                snprintf(why, why_size, "getpid through %s killed the process that made it with SIG%s%s", how,
                         sig_name ? sig_name : "?",
                         sig == SIGSYS ? ": a seccomp filter kills calls through it"
                                       : ": this kernel does not run the ABI");
                return 0;
        }
        if (got != (ssize_t) sizeof answers) {
                snprintf(why, why_size, "getpid through %s: the process that made it exited with status %d unheard",
                         how, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                return -EIO;
        }
        if (answers[0] >= 0) {
                snprintf(why, why_size, "getpid through %s answered %ld%s", how, answers[0],
                         answers[0] == answers[1] ? "" : ", not the caller's pid");
                return answers[0] == answers[1] ? 1 : 0;
        }
        const char *e = strerrorname_np((int) -answers[0]);
        snprintf(why, why_size, "getpid through %s answered %s%s", how, e ? e : "an error",
                 answers[0] == -ENOSYS ? ": this kernel does not run the ABI" : "");
        return 0;
}

/* syscall_tries.h: one harmless try of each call the seccomp table refuses (docs/seccomp.md,
 * "Trying each call harmlessly"). The one argument set: kbound-syscall-probe runs it inside
 * sandboxes and tests/unit/test_seccomp.c runs it against the filter and without it, through every
 * system-call ABI (kbound/sysabi.h). Needs only libc (the probe is linked statically) and takes each
 * call's number from the caller, who has it from libseccomp, as the filter does; the only numbers of
 * its own are libc's socket(2) and socketpair(2), for the native ABI's families. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kbound/sysabi.h"

typedef enum kb_try_form {
        /* Nothing happens whether the call is allowed or refused: the arguments make the kernel
         * stop before it acts, or the call creates one object that is closed at once. Safe in a
         * multi-threaded process, though the probe still runs each one in a fresh process. */
        KB_TRY_HARMLESS,
        /* The real thing (a user namespace, a byte pushed into a pty the try opened): only in a
         * single-threaded process that exits right after. */
        KB_TRY_CHILD,
} kb_try_form;

/* The call a try makes: through which ABI, and the call's number there (x32's with its bit). */
typedef struct kb_call {
        kb_sysabi abi;
        long nr;
} kb_call;

/* One try: the call, and the entry's value (the clone flag, the ioctl request; 0 for the others).
 * Returns what the call returned (>= 0) or -errno. A HARMLESS try is harmless through every ABI
 * (its pointers are copied below 4 GiB for i386 and x32, its one structure read the same way by
 * each); a CHILD try is for the native ABI only. */
typedef long (*kb_try_fn)(const kb_call *call, uint64_t value);

typedef struct kb_try {
        const char *name; /* the kb_seccomp_entry it exercises ("keyctl", "clone:CLONE_NEWUSER") */
        kb_try_form form;
        kb_try_fn run;
        /* The kernel may refuse with the filter's own errno before it reads the arguments (a
         * capability or a sysctl comes first): without privilege in the initial user namespace a
         * run without the filter cannot always tell the kernel's answer from the filter's. */
        bool gated;
} kb_try;

/* The number of tries, and try i (0 <= i < count), in a fixed order; NULL past the end. Static
 * data, never freed. Each call entry of the table has a harmless try; a few have a child form too.
 * A try exists whether or not this ABI has the call: the caller skips it when the number is
 * negative (kb_seccomp_entry_syscall_nr says -ENOSYS). */
size_t kb_tries_count(void);
const kb_try *kb_tries_at(size_t i);

/* The try of entry name in form, or NULL. */
const kb_try *kb_tries_find(const char *name, kb_try_form form);

/* socket(2) (pair false) or socketpair(2) of family with a type the family accepts (SOCK_RAW for
 * AF_NETLINK, SOCK_STREAM otherwise), protocol 0; whatever it creates is closed at once. The
 * family is passed as a whole register, so a value with bits above 32 reaches the filter as is.
 * Returns what the call returned (>= 0) or -errno. Never call it without a filter that refuses the
 * family unless the family is built into every kernel: socket(2) makes the host kernel load a
 * family's module on demand, for anyone, from inside any namespace. */
long kb_tries_family(long family, bool pair);

/* How kb_tries_family_inert reaches socket creation: socket(2), socketpair(2), or (32-bit x86)
 * socketcall(2)'s SOCKET or SOCKETPAIR operation. */
typedef enum kb_family_route {
        KB_FAMILY_SOCKET,
        KB_FAMILY_SOCKETPAIR,
        KB_FAMILY_SOCKETCALL_SOCKET,
        KB_FAMILY_SOCKETCALL_SOCKETPAIR,
} kb_family_route;

/* A family try that is harmless without any filter: call->nr is socket's, socketpair's or
 * socketcall's number on call->abi (as route says), and the type carries a flag no kernel defines,
 * which socket creation refuses with EINVAL before it looks at the family: nothing is created and
 * no module loaded, so it needs no gate (a filter of the family answers first, EAFNOSUPPORT for
 * kbound's). The compat ABIs' families are tried so; on those, kbound's canary of a filter of
 * families (bit 32 of the family) cannot be passed. Returns what the call returned or -errno. */
long kb_tries_family_inert(const kb_call *call, long family, kb_family_route route);

/* Opens a pty pair; returns the terminal (slave) side and the master in *ret_master, both
 * O_CLOEXEC, or -errno (and nothing to close). */
int kb_tries_open_pty(int *ret_master);

/* syscall_tries.h: one harmless try of each call the seccomp table refuses (docs/seccomp.md,
 * "Trying each call harmlessly"). The one argument set: kbound-syscall-probe runs it inside
 * sandboxes and tests/unit/test_seccomp.c runs it against the filter and without it. Needs only
 * libc (the probe is linked statically) and takes each call's number from the caller, who has it
 * from libseccomp, as the filter does; the only numbers of its own are libc's socket(2) and
 * socketpair(2), for the families. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum kb_try_form {
        /* Nothing happens whether the call is allowed or refused: the arguments make the kernel
         * stop before it acts, or the call creates one object that is closed at once. Safe in a
         * multi-threaded process, though the probe still runs each one in a fresh process. */
        KB_TRY_HARMLESS,
        /* The real thing (a user namespace, a byte pushed into a pty the try opened): only in a
         * single-threaded process that exits right after. */
        KB_TRY_CHILD,
} kb_try_form;

/* One try: nr is the call's number on the native ABI, value the entry's (the clone flag, the
 * ioctl request; 0 for the others). Returns what the call returned (>= 0) or -errno. */
typedef long (*kb_try_fn)(long nr, uint64_t value);

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

/* Opens a pty pair; returns the terminal (slave) side and the master in *ret_master, both
 * O_CLOEXEC, or -errno (and nothing to close). */
int kb_tries_open_pty(int *ret_master);

/* canary.c: canaries planted where real secrets live (canary.h). */
#include "kbound/canary.h"
#include <errno.h>
#include <linux/keyctl.h>

/* From <keyutils.h> (not a dependency): every possessor permission. */
#ifndef KEY_POS_ALL
#define KEY_POS_ALL 0x3f000000
#endif
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int kb_canary_keyring_plant(const char *description, const char *payload, int32_t *ret_serial) {
        if (!description || !*description || !payload)
                return -EINVAL;
        /* Raw syscalls: libkeyutils would be one more dependency for two calls. */
        if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0)
                return -errno;
        long serial = syscall(SYS_add_key, "user", description, payload, strlen(payload), KEY_SPEC_SESSION_KEYRING);
        if (serial < 0)
                return -errno;
        /* Possessor only: no view, read or search for the user, group or others, so the one way to
         * reach the key is to possess kbound's session keyring (a same-uid sandbox would otherwise
         * see its name in /proc/keys). */
        if (syscall(SYS_keyctl, KEYCTL_SETPERM, serial, (unsigned long) KEY_POS_ALL) < 0)
                return -errno;
        if (ret_serial)
                *ret_serial = (int32_t) serial;
        return 0;
}

/* cli_cleanup.h: the command line's cleanup attributes. The library keeps its own in an internal
 * header (src/base/cleanup.h) and exports only destructors; the command line uses the public API
 * alone, as any program linking libkbound does, so it names its few helpers here. */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <kbound/common.h>
#include <kbound/error.h>

static inline void cli_freep(void *p) {
        free(*(void **) p);
}
/* Closes *fd if open and sets it to -1 (errno kept). */
static inline void cli_closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
                *fd = -1;
        }
}
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(cli_freep)
#define _cleanup_close_ _cleanup_(cli_closep)
#define _cleanup_json_ _cleanup_(kb_json_putp)
#define _cleanup_error_ _cleanup_(kb_error_free)

/* Ownership transfer: the value, with the variable reset so its cleanup does nothing. */
#define TAKE_PTR(p)                                                                                                    \
        ({                                                                                                             \
                __typeof__(p) _tp = (p);                                                                               \
                (p) = NULL;                                                                                            \
                _tp;                                                                                                   \
        })
#define TAKE_FD(fd)                                                                                                    \
        ({                                                                                                             \
                int _tf = (fd);                                                                                        \
                (fd) = -1;                                                                                             \
                _tf;                                                                                                   \
        })

/* cleanup.h: the library's ownership idiom (systemd's): _cleanup_ attributes that free or close a
 * variable when it goes out of scope, and TAKE_PTR/TAKE_FD to hand it on. Internal: the public
 * headers export destructors (kb_json_putp, kb_error_free, kb_strv_free) but no macro, so a
 * program linking libkbound keeps its own names. */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "kbound/common.h"
#include "kbound/error.h"

static inline void kb_freep(void *p) {
        free(*(void **) p);
}
/* Closes *fd if open and sets it to -1, so a second call (or a cleanup after an explicit close)
 * can never close a number another thread has been handed since. */
static inline void kb_closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
                *fd = -1;
        }
}
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(kb_freep)
#define _cleanup_close_ _cleanup_(kb_closep)
/* Typed helpers for objects whose destructors accept NULL: json-c's, and kbound's errors. */
#define _cleanup_json_ _cleanup_(kb_json_putp)
#define _cleanup_error_ _cleanup_(kb_error_free)

/* Ownership transfer: return the value and reset the variable so its cleanup does nothing. */
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

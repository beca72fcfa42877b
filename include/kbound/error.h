/* error.h: one error carrier (crun's libcrun_error_t): an errno and a one-line message with its
 * context, made where a failure is found and handed up to the caller that says it. */
#pragma once

#include "kbound/common.h"

/* Functions return int, >= 0 on success and -errno on failure, everywhere. Where the caller needs
 * more than the errno to say what went wrong (which folder could not be made, which line of
 * bwrap's log says why, what a tool printed before it failed, which mount point was swapped), the
 * function also takes `kb_error **ret_error` (may be NULL: the caller wants the errno only; else
 * the address of a NULL pointer), and on failure, and only then, *ret_error gets an error whose
 * err is the errno it returned. Why a
 * struct rather than a message buffer or a malloc'd string beside the return: the message comes
 * with the errno it explains, one shape crosses every layer and the public API (kb_kernel_start,
 * kb_sandbox_launch, kb_image_unpack hand theirs to the command line), and one destructor frees
 * it. The library never prints it: the command line says it (kb_error_text), naming the object.
 * Out of memory while an error is made costs its words, never the failure: the function still
 * returns its -errno, and *ret_error is left with a NULL msg, or NULL. */
typedef struct kb_error {
        int err;   /* the positive errno the failing function returned negated */
        char *msg; /* one line: what failed, on what, and why; NULL if there was no memory for it */
} kb_error;

/* Makes the error: *ret (when ret is not NULL and *ret is still NULL) gets err and the message fmt
 * formats. An error already in *ret is kept, since the first one made is the one nearest the cause
 * (kb_error_prefix adds context to it on the way up). err is a positive errno; a negative one is
 * taken as its absolute value, and 0 as EIO, so the result is always a failure. Never aborts:
 * without memory for the message *ret gets a NULL msg, without memory for the error *ret stays
 * NULL. Returns -err, so a failure reads `return kb_error_make(ret_error, EEXIST, "the team folder
 * %s already exists", path);`. */
KB_EXPORT int kb_error_make(kb_error **ret, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Puts "<what fmt formats>: " before the message of the error in *e, as it goes up through a
 * caller that knows more of the context. Nothing happens when e or *e is NULL, and the message is
 * left as it was when there is no memory for the longer one. */
KB_EXPORT void kb_error_prefix(kb_error **e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The words for a failure r (-errno) that came with e (may be NULL): e's message, else the errno's
 * own words (strerror of e's errno, else of -r). Never NULL; borrowed from e or static. */
KB_EXPORT const char *kb_error_text(const kb_error *e, int r);

/* Frees *e and sets it to NULL. Accepts NULL and a NULL *e; its form is the one
 * __attribute__((cleanup)) takes. */
KB_EXPORT void kb_error_free(kb_error **e);

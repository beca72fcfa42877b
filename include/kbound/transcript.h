/* transcript.h: a record of every Jupyter message sent or received, one JSON line each, safe to
 * write from several kernels' threads at once, with secrets redacted. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "kbound/client.h"
#include "kbound/connection.h"
#include "kbound/secrets.h"
#include "kbound/wire.h"

typedef struct kb_transcript kb_transcript;
typedef struct kb_transcript_source kb_transcript_source;

#define KB_TRANSCRIPT_REDACT_MAX 8
/* Default size cap: past it one final {"truncated": true, ...} line is written and every later
 * message counts as an error (-EFBIG), so the run cannot pass with a cut transcript. */
#define KB_TRANSCRIPT_MAX_BYTES (256ULL * 1024 * 1024)

/* Creates (or truncates) the file at path for writing: O_NOFOLLOW (a planted symlink is refused
 * with -ELOOP), O_CLOEXEC, mode 0600 also when it existed (what a kernel printed may be private),
 * and it must be a regular file (-EINVAL otherwise, e.g. a FIFO or a device). An existing file
 * owned by another user, or with more than one hard link, is refused with -EPERM and left as it
 * was (its owner, or the other name, could read what kernels printed).
 * Returns 0, -EINVAL, -EPERM, -ENOMEM, or -errno from open. */
KB_EXPORT int kb_transcript_open(const char *path, kb_transcript **ret);

/* Changes the size cap (default KB_TRANSCRIPT_MAX_BYTES); for tests. */
KB_EXPORT void kb_transcript_set_max_bytes(kb_transcript *t, uint64_t max_bytes);
/* Whether the size cap was reached (the last line says so). */
KB_EXPORT bool kb_transcript_truncated(kb_transcript *t);

/* Every later line is redacted with s (borrowed: it must outlive the transcript and not change
 * while messages flow). Call before any kernel starts. Returns 0 or -E2BIG past
 * KB_TRANSCRIPT_REDACT_MAX sets. */
KB_EXPORT int kb_transcript_redact(kb_transcript *t, const kb_secrets *s);

/* A writer for one kernel: its lines carry kernel (the kernelspec name) and team. Returns 0 or
 * -ENOMEM. A source must be destroyed before its transcript is closed. */
KB_EXPORT int kb_transcript_source_new(kb_transcript *t, const char *kernel, const char *team,
                                       kb_transcript_source **ret);
KB_EXPORT void kb_transcript_source_destroy(kb_transcript_source **sp);

/* The kb_client_msg_fn to install with a source as its userdata. Writes one line:
 *   {"seq", "time" (ISO-8601 UTC, ms), "elapsed_ms" (monotonic since open), "kernel", "team",
 *    "channel", "direction" ("in"|"out"), "msg_type", "header", "parent_header", "metadata",
 *    "content", "buffers": [byte length of each]}
 * Signatures, identities and buffer bytes are never written. The line is redacted with every set
 * given to kb_transcript_redact and written with one write() under a lock, so lines of concurrent
 * kernels never interleave. A line that cannot be built or written is counted as an error (see
 * kb_transcript_close) rather than written partially or unredacted; so is a NULL msg (a message
 * the kernel layer could not redact) and every message past the size cap. */
KB_EXPORT void kb_transcript_on_msg(void *source, kb_channel channel, const char *direction, const kb_msg *msg);

/* Lines written so far, and lines lost to errors. */
KB_EXPORT void kb_transcript_stats(kb_transcript *t, uint64_t *ret_lines, uint64_t *ret_errors);

/* Flushes to disk and closes; sets *tp to NULL. Returns 0, or the first error (-errno) of any
 * line or of the close, so a caller can say the transcript is incomplete. Accepts NULL. */
KB_EXPORT int kb_transcript_close(kb_transcript **tp);

/* common.h: export macro and small helpers shared by every kbound module. */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdint.h>
#include <sys/types.h>

struct json_object;
struct stat;

#if defined(KBOUND_BUILDING)
#define KB_EXPORT __attribute__((visibility("default")))
#else
#define KB_EXPORT
#endif

/* Monotonic clock in milliseconds; deadlines everywhere are absolute values of this clock. */
KB_EXPORT int64_t kb_now_ms(void);

/* Milliseconds left until deadline_ms (0 if passed); deadline_ms < 0 means "no deadline" → -1. */
KB_EXPORT int kb_ms_left(int64_t deadline_ms);

/* Reads the regular file at path (relative to dirfd, or AT_FDCWD) into a NUL-terminated malloc'd
 * buffer, refusing anything over max bytes, also a file that grows after it was measured.
 * open_flags are added to O_RDONLY|O_CLOEXEC|O_NOCTTY|O_NONBLOCK (e.g. O_NOFOLLOW); a FIFO or
 * device is refused, never waited on. The buffer is wiped
 * before it is freed on failure, since callers read keys this way.
 * Returns 0, -EMSGSIZE, -EINVAL (not a regular file), -ENOMEM, or -errno from open/read. */
KB_EXPORT int kb_read_file(int dirfd, const char *path, int open_flags, size_t max, char **ret, size_t *ret_len);

/* Parses untrusted JSON text strictly: no NUL bytes, valid UTF-8, nesting at most max_depth,
 * nothing after the value. Returns 0 and a new reference, -EPROTO, or -ENOMEM. */
KB_EXPORT int kb_json_parse_strict(const char *text, size_t len, int max_depth, struct json_object **ret);

/* Lowercase hex of in[0..n) into out, which must hold 2 * n + 1 bytes; NUL-terminated. */
KB_EXPORT void kb_hex_encode(const void *in, size_t n, char *out);

/* Fills buf with 2*n_bytes lowercase hex characters of fresh randomness (the kernel's CSPRNG) and
 * a NUL. buf must hold 2*n_bytes+1; n_bytes at most 64. Returns 0, -EINVAL or -errno from
 * getrandom. */
KB_EXPORT int kb_random_hex(char *buf, size_t n_bytes);

/* Writes all of buf[0..len) to fd, retrying short writes and EINTR. Returns 0, -errno of the
 * failed write (ENOSPC stays ENOSPC), or -EIO if write(2) wrote nothing. */
KB_EXPORT int kb_write_all(int fd, const void *buf, size_t len);

/* One message of len bytes down a unix socket, with the descriptor fd in it (SCM_RIGHTS) unless
 * fd < 0. System calls only (safe in the child of a threaded fork). 0 or -errno. */
KB_EXPORT int kb_fd_send(int sock, const void *data, size_t len, int fd);

/* Receives one message of exactly len bytes from a unix socket into data, and the descriptor in it
 * (close-on-exec) into *ret_fd, -1 when it carried none. 0, -EBADMSG for a message of another size
 * (a descriptor in it is closed), or -errno. */
KB_EXPORT int kb_fd_recv(int sock, void *data, size_t len, int *ret_fd);

/* Opens path (relative to dirfd, or AT_FDCWD) with flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK and
 * mode, and refuses anything but a regular file: O_NONBLOCK only so that opening a FIFO cannot
 * wait for a peer forever (the caller clears it if it wants blocking writes). *ret_st (may be
 * NULL) gets its fstat. Returns the descriptor, -EINVAL (not a regular file) or -errno. */
KB_EXPORT int kb_open_regular(int dirfd, const char *path, int flags, mode_t mode, struct stat *ret_st);

/* Copies the regular file src to a new file path (created exclusively, never through a symlink)
 * with mode, at most max bytes: what kbound hands into a sandbox by path is a copy in its own
 * folders, because the sandbox user (bwrap runs as it) may not reach the original (a build tree
 * under a 0700 home). Returns 0, -EINVAL (src not a regular file), -EFBIG (over max), -EEXIST,
 * -errno; on failure no file is left at path. */
KB_EXPORT int kb_copy_file(const char *src, const char *path, mode_t mode, size_t max);

/* Removes path and everything under it without following symlinks (the kernel could have planted
 * some in its workspace) and without crossing into another filesystem. A path that does not
 * exist is already removed. Returns 0 or -errno of the first failure. */
KB_EXPORT int kb_remove_tree(const char *path);

/* The current wall-clock time as ISO-8601 UTC ("2026-01-02T03:04:05.678Z") with frac_digits
 * (0 to 9; 0: no fraction) digits of the second, into buf. Returns 0, -EINVAL, -EOVERFLOW (buf too
 * small, or a time gmtime cannot break down) or -errno of clock_gettime. */
KB_EXPORT int kb_iso_time_now(unsigned frac_digits, char *buf, size_t size);

/* The value of NAME in envp ("NAME=value" entries, NULL-terminated; envp may be NULL), like getenv
 * on an environment that is not the process's own. NULL if absent. Borrowed from envp. */
KB_EXPORT const char *kb_env_get(char *const *envp, const char *name);

/* The kernel's PATH in a sandbox unless its kernelspec sets one (kb_sandbox_env), and what an
 * execvp-style search there walks then (kernelspec in an image, view in the sandbox's view). */
#define KB_SANDBOX_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* The next candidate of an execvp-style search: *cursor starts at a PATH value ("a:b:c"); each
 * call skips empty and relative entries (execvp in a sandbox must not search its working folder)
 * and gives "<entry>/<program>" in *ret_candidate (malloc'd). Returns 1 and a candidate, 0 when
 * the entries are used up, -ENOMEM. */
KB_EXPORT int kb_path_next(const char **cursor, const char *program, char **ret_candidate);

/* Frees a NULL-terminated string vector and its strings. Accepts NULL. */
KB_EXPORT void kb_strv_free(char **v);

/* Optional log sink: the library never prints; callers that want progress give one of these. */
typedef void (*kb_log_fn)(void *userdata, int level, const char *message);
enum { KB_LOG_ERROR = 3, KB_LOG_WARN = 4, KB_LOG_INFO = 6, KB_LOG_DEBUG = 7 };

/* Drops the reference *p holds (if any) and sets it to NULL: a destructor in the form
 * __attribute__((cleanup)) takes. The library's own cleanup macros are internal
 * (src/base/cleanup.h); a program using the library defines its own if it wants them. */
KB_EXPORT void kb_json_putp(struct json_object **p);

#define KB_ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

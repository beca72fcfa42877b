/* kernel-internal.h: what kernel.c shares with kernel_log.c and their tests. */
#pragma once

#include <stddef.h>

/* The line of text (a kernel's log) that says why it stopped: the last one that reads as an error
 * ("Error: No such device", "OSError: [Errno 19] ...", "Error in library(x) : ...", "FATAL ...",
 * "panic: ..."), where a stack trace's frames follow it or not. Returns its start in text with its
 * length in *ret_len, or NULL when no line reads so. */
const char *kb_kernel_log_error_line(const char *text, size_t *ret_len);

/* The error line of the last scan_bytes of the log at path, trimmed, at most 300 bytes; a malloc'd
 * string, or NULL (none, unreadable, out of memory). The caller redacts it: the kernel wrote it. */
char *kb_kernel_log_error_line_of(const char *path, size_t scan_bytes);

/* tool_io.h: what kbound's static programs (kbound-syscall-probe, kbound-probe) share of reading
 * files and naming errors. Needs only libc: the programs run in sandboxes whose root may hold none. */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* The size of the buffer kb_tool_errno_name may need for a number glibc has no name for. */
#define KB_TOOL_ERRNO_NAME_MAX 24

/* The errno's name as errno.h spells it ("EPERM"), or "E<number>" in buf (KB_TOOL_ERRNO_NAME_MAX
 * bytes) when glibc has no name for it. */
const char *kb_tool_errno_name(int e, char *buf, size_t n);

/* Reads at most cap bytes of path into a malloc'd buffer, NUL-terminated (the content may hold NULs
 * of its own: *ret_len says how much was read). Opened with O_NONBLOCK, so a FIFO or a terminal
 * someone left there answers at once (EAGAIN, or an empty read) instead of holding the program.
 * Returns 0, or -errno (nothing to free). */
int kb_tool_read_file(const char *path, size_t cap, char **ret, size_t *ret_len);

/* The options every program has: -h/--help prints usage(stdout, argv0), -V/--version the program's
 * name and version. Returns the exit status (0) for option 'h' or 'V', -1 for any other. */
int kb_tool_help_version(int option, const char *program, void (*usage)(FILE *f, const char *argv0), const char *argv0);

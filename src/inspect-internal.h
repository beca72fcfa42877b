/* inspect-internal.h: the host's lookups inside a sandbox's mount tree, shared by inspect.c and its
 * tests. A sandbox's processes can rename and swap what lies on a path between the host's read of
 * a mount table and its look at a mount point, so every lookup refuses symbolic links anywhere on
 * the path and proves, with statx, which mount it ended on. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Opens the root of the mount whose id (mountinfo's first field) is mnt_id at its mount point path,
 * resolved from root_fd as the sandbox would (RESOLVE_IN_ROOT) with no symbolic link followed on
 * the way (a link swapped in is refused, never followed), and proves with statx that what it found
 * is that mount's root (STATX_MNT_ID, STATX_ATTR_MOUNT_ROOT). Returns 0 with *ret_fd (an O_PATH
 * descriptor, the caller closes it) and *ret_st; else -errno with a message in why: -ELOOP (a
 * symbolic link on the path), -EXDEV (another mount is there), -ENOTDIR... from the lookup, -ENOSYS
 * (this Linux does not tell a file's mount). */
int kb_inspect_open_mount_root(int root_fd, const char *path, int64_t mnt_id, int *ret_fd, struct stat *ret_st,
                               char *why, size_t size);

/* Looks up inner (a path inside the mount, from its root; "" is the root) beneath mount_fd (from
 * kb_inspect_open_mount_root) without following a symbolic link or crossing into another mount,
 * and stats what it names. writable says whether the sandbox can write to that filesystem (through
 * this mount or any other: a rename moves what every mount of it shows): a file missing then may
 * have been moved away for the moment of the look, so only where it cannot is -ENOENT returned as
 * such (a proof of absence); otherwise it is -EAGAIN. Returns 0 with *ret_st, or -errno with a
 * message in why. */
int kb_inspect_stat_in_mount(int mount_fd, const char *inner, bool writable, struct stat *ret_st, char *why,
                             size_t size);

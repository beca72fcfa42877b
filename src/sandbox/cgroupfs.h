/* cgroupfs.h: finding and reading the cgroup files kbound makes and judges (sandbox_cgroup.c). */
#pragma once

#include <stdint.h>
#include <json-c/json.h>

#define KB_CGROUPFS_FILE_MAX 256

/* A cgroup file's first number: -1 for "max" (or an unlimited v1 value), -2 when unreadable. For
 * memory.events (v2) and memory.oom_control (v1), the oom_kill count. */
int64_t kb_cgroupfs_value(const char *dir, const char *file);

/* The mount in mounts (kb_procfs_mountinfo_parse's table) of the cgroup hierarchy that holds cgroup
 * path (as /proc/<pid>/cgroup names it): for controller "" the cgroup2 mount, else the v1 mount
 * whose options name controller. *ret_mountpoint gets its mount point (in mounts) and *ret_rest
 * what of path lies below its root (in path): path's folder is the two joined. Returns 0, or
 * -ENOENT (no such hierarchy holds path). */
int kb_cgroupfs_mount(json_object *mounts, const char *controller, const char *path, const char **ret_mountpoint,
                      const char **ret_rest);

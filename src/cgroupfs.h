/* cgroupfs.h: reading the cgroup files kbound makes and judges (sandbox_cgroup.c). */
#pragma once

#include <stdint.h>

#define KB_CGROUPFS_FILE_MAX 256

/* A cgroup file's first number: -1 for "max" (or an unlimited v1 value), -2 when unreadable. For
 * memory.events (v2) and memory.oom_control (v1), the oom_kill count. */
int64_t kb_cgroupfs_value(const char *dir, const char *file);

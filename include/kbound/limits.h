/* limits.h: what one sandbox may consume of the host, as one table: each limit's option, default,
 * and how it is enforced (docs/limits.md). The host reads what is in force (sandbox.resources). */
#pragma once

#include "kbound/common.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum kb_limit_id {
        KB_LIMIT_MEMORY,    /* bytes: a cgroup's memory (and swap) of the whole sandbox, else each
                             * process's address space (RLIMIT_AS) */
        KB_LIMIT_TASKS,     /* processes and threads: a cgroup's pids.max, else RLIMIT_NPROC set
                             * inside the sandbox's user namespace (counted there alone) */
        KB_LIMIT_TMP,       /* bytes: the size of the sandbox's /tmp tmpfs (bwrap --size) */
        KB_LIMIT_WORKSPACE, /* bytes: the size of /workspace, a tmpfs of its own (bwrap --size) in
                             * place of the team's host folder, copied out with --keep */
        KB_LIMIT_LOG,       /* bytes: what is kept of the kernel's log on disk (a pipe kbound drains,
                             * the older half rotated away) */
        KB_LIMIT_CPU,       /* CPUs: the processor time the whole sandbox may take per period, in CPUs'
                             * worth (a cgroup's cpu.max or cfs quota; none by default) */
        KB_LIMIT_MAX_ID,
} kb_limit_id;

typedef struct kb_limit_info {
        const char *id;     /* "memory": the report's key */
        const char *option; /* "--memory-max" */
        bool bytes;         /* a size (K, M, G accepted) or a count */
        uint64_t fallback;  /* the default */
        const char *what;   /* the resource, for messages */
} kb_limit_info;

/* What one sandbox may use; 0 for a limit: none asked (reported as not claimed). */
typedef struct kb_limits {
        uint64_t max[KB_LIMIT_MAX_ID];
} kb_limits;

KB_EXPORT const kb_limit_info *kb_limit_get(kb_limit_id id);
/* Every limit at its default. */
KB_EXPORT void kb_limits_default(kb_limits *l);
/* Parses an option's value for limit id: a count, a size with K, M or G after it, or "none" (0).
 * Returns 0, or -EINVAL. */
KB_EXPORT int kb_limit_parse(kb_limit_id id, const char *arg, uint64_t *ret);
/* The limit for a message: "2.0 GiB", "512", "none" (buf of at least 32 bytes). */
KB_EXPORT const char *kb_limit_format(kb_limit_id id, uint64_t value, char *buf, size_t size);

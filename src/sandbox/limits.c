/* limits.c: the table of what one sandbox may consume (limits.h). */
#include "kbound/limits.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kb_limit_info table[KB_LIMIT_MAX_ID] = {
        [KB_LIMIT_MEMORY] = {"memory", "--memory-max", true, UINT64_C(2) << 30, "memory"},
        [KB_LIMIT_TASKS] = {"tasks", "--tasks-max", false, 512, "processes and threads"},
        [KB_LIMIT_TMP] = {"tmp", "--tmp-size", true, UINT64_C(512) << 20, "/tmp"},
        [KB_LIMIT_WORKSPACE] = {"workspace", "--workspace-max", true, UINT64_C(1) << 30, "/workspace"},
        [KB_LIMIT_LOG] = {"log", "--log-max", true, UINT64_C(16) << 20, "the kernel's log"},
        [KB_LIMIT_CPU] = {"cpu", "--cpu-max", false, 0, "processor time"},
};

const kb_limit_info *kb_limit_get(kb_limit_id id) {
        return id < KB_LIMIT_MAX_ID ? &table[id] : NULL;
}

void kb_limits_default(kb_limits *l) {
        for (size_t i = 0; i < KB_LIMIT_MAX_ID; i++)
                l->max[i] = table[i].fallback;
}

int kb_limit_parse(kb_limit_id id, const char *arg, uint64_t *ret) {
        if (id >= KB_LIMIT_MAX_ID || !arg || !ret)
                return -EINVAL;
        if (strcmp(arg, "none") == 0) {
                *ret = 0;
                return 0;
        }
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(arg, &end, 10);
        uint64_t mult = 1;
        if (end && *end && table[id].bytes) {
                mult = strcmp(end, "K") == 0   ? UINT64_C(1) << 10
                       : strcmp(end, "M") == 0 ? UINT64_C(1) << 20
                       : strcmp(end, "G") == 0 ? UINT64_C(1) << 30
                                               : 0;
                end = mult ? end + 1 : end;
        }
        if (errno || end == arg || *end || arg[0] == '-' || v == 0 || mult == 0 || v > UINT64_MAX / mult)
                return -EINVAL;
        *ret = (uint64_t) v * mult;
        return 0;
}

const char *kb_limit_format(kb_limit_id id, uint64_t value, char *buf, size_t size) {
        if (value == 0)
                snprintf(buf, size, "none");
        else if (id < KB_LIMIT_MAX_ID && table[id].bytes && value >= (UINT64_C(1) << 30))
                snprintf(buf, size, "%.1f GiB", (double) value / (double) (UINT64_C(1) << 30));
        else if (id < KB_LIMIT_MAX_ID && table[id].bytes)
                snprintf(buf, size, "%.1f MiB", (double) value / (double) (UINT64_C(1) << 20));
        else
                snprintf(buf, size, "%llu", (unsigned long long) value);
        return buf;
}

/* inspect_image.c: where a process image lies, so that an execve since an earlier look shows. */
#include <stdio.h>
#include <stdlib.h>
#include "base/cleanup.h"
#include "evidence/inspect-internal.h"
#include "base/procfs.h"

json_object *kb_inspect_image_of(const char *proc_root, pid_t pid, const kb_procfs_stat *st) {
        /* The IMAGE facts in kb_procfs_stat.layout's order (procfs.h); an automatic array, as the
         * facts are constant objects, not constant expressions (clang refuses them in a static). */
        const kb_fact_int layout_facts[KB_PROCFS_LAYOUT_FIELDS] = {
                FACT_IMAGE_START_CODE, FACT_IMAGE_END_CODE,  FACT_IMAGE_START_STACK, FACT_IMAGE_START_DATA,
                FACT_IMAGE_END_DATA,   FACT_IMAGE_START_BRK, FACT_IMAGE_ARG_START,   FACT_IMAGE_ARG_END,
                FACT_IMAGE_ENV_START,  FACT_IMAGE_ENV_END,
        };
        _cleanup_free_ char *text = NULL; /* before any goto: a jump may not enter its scope */
        json_object *o = json_object_new_object();
        if (!o || kb_fact_set_int(o, FACT_IMAGE_STARTTIME, (int64_t) st->starttime) < 0)
                goto oom;
        for (size_t i = 0; i < KB_PROCFS_LAYOUT_FIELDS; i++)
                if (kb_fact_set_int(o, layout_facts[i], (int64_t) st->layout[i]) < 0)
                        goto oom;
        /* Whether the layout is randomized at all: without it, a new image of the same program
         * may lie where the old one did. Readable only by a tracer (root, or kbound's own user over
         * its descendants); left out (not known) otherwise. */
        if (kb_inspect_read_proc(proc_root, pid, "personality", 64, &text, NULL) == 0) {
                char *end;
                unsigned long v = strtoul(text, &end, 16);
                if (end != text && kb_fact_set_int(o, FACT_IMAGE_PERSONALITY, (int64_t) v) < 0)
                        goto oom;
        }
        return o;
oom:
        json_object_put(o);
        return NULL;
}

int kb_inspect_image(const char *proc_root, pid_t pid, json_object **ret) {
        if (!proc_root || !ret)
                return -EINVAL;
        _cleanup_free_ char *text = NULL;
        kb_procfs_stat st;
        int r = kb_inspect_read_proc(proc_root, pid, "stat", KB_PROCFS_STAT_MAX, &text, NULL);
        if (r >= 0)
                r = kb_procfs_stat_parse(text, &st);
        if (r < 0)
                return r;
        *ret = kb_inspect_image_of(proc_root, pid, &st);
        return *ret ? 0 : -ENOMEM;
}

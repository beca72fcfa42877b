/* fuzz_kernelspec.c: libFuzzer target feeding untrusted bytes to kb_kernelspec_parse and argv. */
#include "kbound/kernelspec.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        kb_kernelspec *spec = NULL;
        char **argv = NULL;

        if (kb_kernelspec_parse((const char *) data, size, "fuzz", "/usr/share/jupyter/kernels/fuzz", &spec) < 0)
                return 0;
        /* Invariants every consumer relies on: a non-empty argv with a non-empty program, a known
         * interrupt mode, env entries shaped NAME=value. */
        if (!spec->argv || !spec->argv[0] || spec->argv[0][0] == '\0' || !spec->env)
                __builtin_trap();
        if (strcmp(spec->interrupt_mode, "signal") != 0 && strcmp(spec->interrupt_mode, "message") != 0)
                __builtin_trap();
        for (char **e = spec->env; *e; e++)
                if ((*e)[0] == '=' || !strchr(*e, '='))
                        __builtin_trap();
        if (kb_kernelspec_argv(spec, "/run/kbound/{resource_dir}/kernel.json", &argv) == 0)
                kb_strv_free(argv);
        kb_kernelspec_destroy(&spec);
        return 0;
}

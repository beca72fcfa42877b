/* syscall_table_gen.c: writes, at build time, the seccomp table that kbound-syscall-probe compiles
 * in: every entry of src/sandbox/seccomp.c's table, read through the library, with the call's number on
 * every ABI the filter has rules for (kbound/sysabi.h) from libseccomp, which is where the filter gets
 * them. The probe runs without the library and without libseccomp; generating its table from theirs
 * is what keeps the two from drifting.
 * Usage: kbound-syscall-table-gen OUTPUT.h */
#include "kbound/seccomp.h"
#include <seccomp.h>
#include <stdio.h>
#include <string.h>

/* The native ABI's name, as the probe reports it; NULL for one kbound does not know. */
static const char *native_arch_name(void) {
        static const struct {
                uint32_t token;
                const char *name;
        } arches[] = {
                {SCMP_ARCH_X86_64, "x86_64"},     {SCMP_ARCH_X86, "x86"},       {SCMP_ARCH_X32, "x32"},
                {SCMP_ARCH_AARCH64, "aarch64"},   {SCMP_ARCH_ARM, "arm"},       {SCMP_ARCH_PPC64LE, "ppc64le"},
                {SCMP_ARCH_PPC64, "ppc64"},       {SCMP_ARCH_S390X, "s390x"},   {SCMP_ARCH_RISCV64, "riscv64"},
                {SCMP_ARCH_MIPSEL64, "mips64el"}, {SCMP_ARCH_MIPS64, "mips64"},
        };
        uint32_t native = seccomp_arch_native();
        for (size_t i = 0; i < KB_ELEMENTSOF(arches); i++)
                if (arches[i].token == native)
                        return arches[i].name;
        return NULL;
}

/* Writes s as a C string literal. The table's names are plain ASCII; anything else is refused. */
static int put_literal(FILE *f, const char *s) {
        for (const char *p = s; *p; p++)
                if (*p < 0x20 || *p > 0x7e || *p == '"' || *p == '\\')
                        return -EINVAL;
        return fprintf(f, "\"%s\"", s) < 0 ? -EIO : 0;
}

/* The number of name on abi as the table writes it: -1 for a call the ABI lacks or an ABI the filter
 * has no rules for. Returns 0 or -errno (a name libseccomp does not know, which the filter could not
 * refuse either). */
static int nr_on(const char *name, kb_sysabi abi, long *ret) {
        if (!kb_seccomp_abi_filtered(abi)) {
                *ret = -1;
                return 0;
        }
        int nr = kb_seccomp_syscall_nr_on(name, abi);
        if (nr < 0 && nr != -ENOSYS)
                return nr;
        *ret = nr < 0 ? -1 : nr;
        return 0;
}

/* "#define NAME {native, compat32, x32}" of call's numbers on each ABI. */
static int put_numbers(FILE *f, const char *macro, const char *call) {
        fprintf(f, "#define %s {", macro);
        for (kb_sysabi abi = 0; abi < KB_SYSABI_MAX_; abi++) {
                long nr;
                int r = nr_on(call, abi, &nr);
                if (r < 0)
                        return r;
                fprintf(f, "%s%ldL", abi ? ", " : "", nr);
        }
        fputs("}\n", f);
        return 0;
}

static int write_table(FILE *f, const char *arch) {
        int getpid_nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, "getpid");
        if (getpid_nr < 0)
                return -ENOSYS;
        fprintf(f,
                "/* Generated at build time by kbound-syscall-table-gen from src/sandbox/seccomp.c's table and\n"
                " * libseccomp's syscall numbers for each ABI the filter has rules for. Do not edit: edit\n"
                " * src/sandbox/seccomp.c. */\n"
                "#pragma once\n\n"
                "#define KB_PROBE_TABLE_ARCH \"%s\"\n"
                "/* for a compile-time check that the probe is built for the ABI the numbers are for */\n"
                "#define KB_PROBE_TABLE_NR_GETPID %d\n\n"
                "/* Numbers on each ABI in kb_sysabi's order (native, compat32, x32); -1: none */\n",
                arch, getpid_nr);
        static const struct {
                const char *macro, *call;
        } calls[] = {{"KB_PROBE_NR_GETPID", "getpid"},
                     {"KB_PROBE_NR_SOCKET", "socket"},
                     {"KB_PROBE_NR_SOCKETPAIR", "socketpair"},
                     {"KB_PROBE_NR_SOCKETCALL", "socketcall"}};
        for (size_t i = 0; i < KB_ELEMENTSOF(calls); i++) {
                int r = put_numbers(f, calls[i].macro, calls[i].call);
                if (r < 0)
                        return r;
        }
        fputs("\n/* X(name, syscall, is_family, native number, compat32 number, x32 number, value); -1: none */\n"
              "#define KB_PROBE_TABLE(X) \\\n",
              f);
        for (size_t i = 0; i < kb_seccomp_entry_count(); i++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_at(i);
                long nr[KB_SYSABI_MAX_];
                for (kb_sysabi abi = 0; abi < KB_SYSABI_MAX_; abi++) {
                        int r = nr_on(e->syscall, abi, &nr[abi]);
                        if (r < 0)
                                return r;
                }
                fputs("        X(", f);
                int r = put_literal(f, e->name);
                if (r < 0)
                        return r;
                fputs(", ", f);
                r = put_literal(f, e->syscall);
                if (r < 0)
                        return r;
                fprintf(f, ", %d", e->match == KB_SECCOMP_MATCH_FAMILY ? 1 : 0);
                for (kb_sysabi abi = 0; abi < KB_SYSABI_MAX_; abi++)
                        fprintf(f, ", %ldL", nr[abi]);
                fprintf(f, ", UINT64_C(0x%llx)) \\\n", (unsigned long long) e->value);
        }
        fputs("        /* end */\n", f);
        return ferror(f) ? -EIO : 0;
}

int main(int argc, char **argv) {
        if (argc != 2) {
                fprintf(stderr, "usage: %s OUTPUT.h\n", argv[0]);
                return 2;
        }
        const char *arch = native_arch_name();
        if (!arch) {
                fprintf(stderr, "%s: libseccomp's native architecture 0x%08x is not one kbound knows\n", argv[0],
                        seccomp_arch_native());
                return 1;
        }
        /* Written beside the target and renamed over it, so a failed run never leaves half a table
         * that a later build would compile. */
        char tmp[4096];
        if (snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]) >= (int) sizeof tmp) {
                fprintf(stderr, "%s: output path too long\n", argv[0]);
                return 1;
        }
        FILE *f = fopen(tmp, "we");
        if (!f) {
                fprintf(stderr, "%s: %s: %s\n", argv[0], tmp, strerror(errno));
                return 1;
        }
        int r = write_table(f, arch);
        if (fclose(f) != 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, argv[1]) < 0)
                r = -errno;
        if (r < 0) {
                unlink(tmp);
                fprintf(stderr, "%s: writing %s: %s\n", argv[0], argv[1], strerror(-r));
                return 1;
        }
        return 0;
}

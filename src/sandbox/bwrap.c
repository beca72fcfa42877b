/* bwrap.c: what the bubblewrap at hand can do (bwrap.h): its --help read against one table of the
 * options kbound's sandbox uses. */
#include "kbound/bwrap.h"
#include "base/cleanup.h"
#include "kbound/sandbox.h"
#include "sandbox/sandbox-internal.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define PROBE_TIMEOUT_MS 5000
#define HELP_MAX 65536

/* Every option kb_sandbox_plan can use. A row's .without says what stands in when a bwrap lacks
 * it; NULL there means the claim it carries cannot be made without it. */
static const kb_bwrap_option_info options[KB_BWRAP_OPTION_MAX] = {
        [KB_BWRAP_UNSHARE_ALL] = {"--unshare-all", "user, mount, pid, network, ipc, uts and cgroup namespaces", NULL},
        [KB_BWRAP_UNSHARE_PID] = {"--unshare-pid", "a pid namespace, in which the kernel is PID 2", NULL},
        [KB_BWRAP_UNSHARE_USER] = {"--unshare-user", "a user namespace", NULL},
        [KB_BWRAP_SHARE_NET] = {"--share-net", "the host's network, under the raw-network override only", NULL},
        [KB_BWRAP_DIE_WITH_PARENT] = {"--die-with-parent", "the sandbox dies with kbound", NULL},
        [KB_BWRAP_NEW_SESSION] = {"--new-session", "no controlling terminal (no TIOCSTI into kbound's)", NULL},
        [KB_BWRAP_DISABLE_USERNS] = {"--disable-userns", "no nested user namespaces",
                                     "kbound sets the sandbox's user.max_user_namespaces itself, from the host, as "
                                     "--disable-userns does, and proves a nested user namespace refused before the "
                                     "kernel starts (kbound's seccomp filter refuses them too)"},
        [KB_BWRAP_SECCOMP] = {"--seccomp", "kbound's seccomp filter on every sandbox process", NULL},
        [KB_BWRAP_CAP_DROP] = {"--cap-drop", "no capability in the sandbox", NULL},
        [KB_BWRAP_HOSTNAME] = {"--hostname", "the team's own hostname", NULL},
        [KB_BWRAP_RO_BIND] = {"--ro-bind", "read-only system folders and kbound's syscall probe", NULL},
        [KB_BWRAP_RO_BIND_TRY] = {"--ro-bind-try", "read-only system paths a host may lack", NULL},
        [KB_BWRAP_BIND] = {"--bind", "the team's workspace and runtime folders", NULL},
        [KB_BWRAP_SYMLINK] = {"--symlink", "the /bin, /lib... links of a merged /usr", NULL},
        [KB_BWRAP_PROC] = {"--proc", "the sandbox's own /proc", NULL},
        [KB_BWRAP_DEV] = {"--dev", "the sandbox's own minimal /dev", NULL},
        [KB_BWRAP_TMPFS] = {"--tmpfs", "private /tmp and masked /proc entries", NULL},
        [KB_BWRAP_DIR] = {"--dir", "an empty /var", NULL},
        [KB_BWRAP_REMOUNT_RO] = {"--remount-ro", "a read-only root and masks", NULL},
        [KB_BWRAP_CHDIR] = {"--chdir", "the kernel starts in its workspace", NULL},
        [KB_BWRAP_BLOCK_FD] = {"--block-fd", "the host's look before the kernel's program runs", NULL},
        [KB_BWRAP_INFO_FD] = {"--info-fd", "the sandbox's pid namespace and init, to pin the kernel", NULL},
        [KB_BWRAP_FILE] = {"--file", "the connection file copied into the sandbox's socket folder", NULL},
        [KB_BWRAP_SIZE] = {"--size",
                           "a size for the sandbox's /tmp and /dev/shm (--tmp-size), its /workspace "
                           "(--workspace-max) and its socket folder",
                           "kbound gives each in-memory folder bwrap makes (/tmp, /dev/shm, /workspace, the socket "
                           "folder) its size itself, from the host, before the kernel starts; sandbox.resources "
                           "reads every size from the sandbox's mount table as with --size"},
};

const kb_bwrap_option_info *kb_bwrap_option_get(kb_bwrap_option option) {
        return option < KB_BWRAP_OPTION_MAX ? &options[option] : NULL;
}

int kb_bwrap_arity(const char *opt) {
        if (!opt)
                return -1;
        static const char *const zero[] = {"--help",
                                           "--version",
                                           "--unshare-all",
                                           "--share-net",
                                           "--unshare-user",
                                           "--unshare-user-try",
                                           "--unshare-ipc",
                                           "--unshare-pid",
                                           "--unshare-net",
                                           "--unshare-uts",
                                           "--unshare-cgroup",
                                           "--unshare-cgroup-try",
                                           "--disable-userns",
                                           "--assert-userns-disabled",
                                           "--clearenv",
                                           "--new-session",
                                           "--die-with-parent",
                                           "--as-pid-1",
                                           NULL};
        static const char *const one[] = {"--args",
                                          "--userns",
                                          "--userns2",
                                          "--pidns",
                                          "--uid",
                                          "--gid",
                                          "--hostname",
                                          "--chdir",
                                          "--unsetenv",
                                          "--lock-file",
                                          "--sync-fd",
                                          "--remount-ro",
                                          "--exec-label",
                                          "--file-label",
                                          "--proc",
                                          "--dev",
                                          "--tmpfs",
                                          "--mqueue",
                                          "--dir",
                                          "--seccomp",
                                          "--add-seccomp-fd",
                                          "--block-fd",
                                          "--userns-block-fd",
                                          "--info-fd",
                                          "--json-status-fd",
                                          "--cap-add",
                                          "--cap-drop",
                                          "--perms",
                                          "--size",
                                          NULL};
        static const char *const two[] = {
                "--setenv",    "--bind",         "--bind-try", "--dev-bind",   "--dev-bind-try",
                "--ro-bind",   "--ro-bind-try",  "--bind-fd",  "--ro-bind-fd", "--file",
                "--bind-data", "--ro-bind-data", "--symlink",  "--chmod",      NULL};
        const char *const *lists[] = {zero, one, two};
        for (int n = 0; n < 3; n++)
                for (const char *const *o = lists[n]; *o; o++)
                        if (strcmp(*o, opt) == 0)
                                return n;
        return -1;
}

/* Whether the line (up to its end) starts, after blanks, with exactly name as a word. */
static bool line_lists(const char *line, const char *name) {
        line += strspn(line, " \t");
        size_t n = strlen(name);
        return strncmp(line, name, n) == 0 &&
               (line[n] == ' ' || line[n] == '\t' || line[n] == '\n' || line[n] == '\0' || line[n] == '=');
}

void kb_bwrap_parse_help(const char *help, uint64_t *ret_has) {
        uint64_t has = 0;
        for (const char *line = help; line && *line;) {
                for (size_t i = 0; i < KB_BWRAP_OPTION_MAX; i++)
                        if (line_lists(line, options[i].name))
                                has |= UINT64_C(1) << i;
                const char *nl = strchr(line, '\n');
                line = nl ? nl + 1 : NULL;
        }
        *ret_has = has;
}

/* Whether help is bubblewrap's: its first line is bwrap's usage line ("usage: ARGV0 [OPTIONS...]
 * [--] COMMAND [ARGS...]", every release from 0.4.1 to 0.12 prints it so). Any program prints a
 * version; this and the version line together say what the program is. */
static bool help_is_bubblewraps(const char *help) {
        static const char usage_tail[] = " [OPTIONS...] [--] COMMAND [ARGS...]";
        const char *nl = strchr(help, '\n');
        size_t len = nl ? (size_t) (nl - help) : strlen(help), tail = strlen(usage_tail);
        return strncmp(help, "usage: ", 7) == 0 && len > 7 + tail && strncmp(help + len - tail, usage_tail, tail) == 0;
}

int kb_bwrap_probe(const char *path, kb_bwrap *ret) {
        if (!path || !ret)
                return -EINVAL;
        _cleanup_free_ char *version = NULL, *help = NULL;
        int r = kb_sandbox_bwrap_version(path, &version);
        if (r < 0)
                return r;
        char *argv[] = {(char *) path, (char *) "--help", NULL};
        int status;
        r = kb_sandbox_run_capture(argv, NULL, NULL, -1, 0, HELP_MAX, kb_now_ms() + PROBE_TIMEOUT_MS, &status, &help);
        if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !help)
                return r == -ENOMEM ? -ENOMEM : -EIO;
        if (!help_is_bubblewraps(help))
                return -ENOEXEC;
        kb_bwrap b = {.has = 0};
        snprintf(b.version, sizeof b.version, "%s", version);
        kb_bwrap_parse_help(help, &b.has);
        *ret = b;
        return 0;
}

bool kb_bwrap_has(const kb_bwrap *b, kb_bwrap_option option) {
        return b && option < KB_BWRAP_OPTION_MAX && (b->has & (UINT64_C(1) << option));
}

void kb_bwrap_hardening(const kb_bwrap *b, kb_sandbox_hardening *h) {
        h->disable_userns = true;
        h->host_userns = !kb_bwrap_has(b, KB_BWRAP_DISABLE_USERNS);
        h->tmpfs_size = true;
        h->host_sizes = !kb_bwrap_has(b, KB_BWRAP_SIZE);
}

/* Appends "sep text" (sep only after the first) to buf, cutting at size. */
static void append(char *buf, size_t size, size_t count, const char *sep, const char *a, const char *b) {
        if (!buf || !size)
                return; /* counting only */
        size_t used = strlen(buf);
        if (used < size)
                snprintf(buf + used, size - used, "%s%s%s", count ? sep : "", a, b ? b : "");
}

size_t kb_bwrap_missing(const kb_bwrap *b, char *buf, size_t size) {
        size_t n = 0;
        if (size)
                buf[0] = '\0';
        for (size_t i = 0; i < KB_BWRAP_OPTION_MAX; i++)
                if (!options[i].without && !kb_bwrap_has(b, (kb_bwrap_option) i)) {
                        append(buf, size, n, ", ", options[i].name, NULL);
                        n++;
                }
        return n;
}

size_t kb_bwrap_stand_ins(const kb_bwrap *b, char *buf, size_t size) {
        size_t n = 0;
        if (size)
                buf[0] = '\0';
        for (size_t i = 0; i < KB_BWRAP_OPTION_MAX; i++)
                if (options[i].without && !kb_bwrap_has(b, (kb_bwrap_option) i)) {
                        char head[64];
                        snprintf(head, sizeof head, "no %s: ", options[i].name);
                        append(buf, size, n, "; ", head, options[i].without);
                        n++;
                }
        return n;
}

int kb_bwrap_describe(const kb_bwrap *b, const char *path, char **ret) {
        char missing[512], stand_ins[1024];
        size_t n_missing = kb_bwrap_missing(b, missing, sizeof missing);
        size_t n_stand_ins = kb_bwrap_stand_ins(b, stand_ins, sizeof stand_ins);
        int r = n_missing ? asprintf(ret,
                                     "bubblewrap %s at %s lacks %s, which kbound's sandbox needs and nothing can stand "
                                     "in for: use bubblewrap 0.4.1 or later (docs/platforms.md lists those tried)",
                                     b->version, path, missing)
                          : asprintf(ret, "bubblewrap %s at %s has every option kbound's sandbox needs%s%s", b->version,
                                     path, n_stand_ins ? "; " : "", n_stand_ins ? stand_ins : "");
        if (r < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return n_missing == 0;
}

int kb_sandbox_bwrap_setuid(const char *path) {
        struct stat st;
        if (!path || stat(path, &st) < 0)
                return path ? -errno : -EINVAL;
        return (st.st_mode & S_ISUID) ? 1 : 0;
}

int kb_sandbox_bwrap_version(const char *bwrap, char **ret_version) {
        if (!bwrap || !ret_version)
                return -EINVAL;
        char *argv[] = {(char *) bwrap, (char *) "--version", NULL};
        int status;
        _cleanup_free_ char *out = NULL;
        int r = kb_sandbox_run_capture(argv, NULL, NULL, -1, 0, 4096, kb_now_ms() + 5000, &status, &out);
        if (r == -ENOENT || r == -ENOTDIR)
                return -ENOENT;
        if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -EIO;
        /* "bubblewrap 0.8.0\n", exactly: a program that prints another name ("true (GNU coreutils)
         * 9.1") is not bubblewrap, whatever its version. */
        char *nl = strchr(out, '\n');
        if (nl)
                *nl = '\0';
        static const char name[] = "bubblewrap ";
        const char *ver = out + strlen(name);
        if (strncmp(out, name, strlen(name)) != 0 || !*ver || strlen(ver) > 64 || ver[0] < '0' || ver[0] > '9' ||
            strspn(ver, "0123456789.") != strlen(ver))
                return -ENOEXEC;
        char *copy = strdup(ver);
        if (!copy)
                return -ENOMEM;
        *ret_version = copy;
        return 0;
}

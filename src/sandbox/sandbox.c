/* sandbox.c: sandbox policy → the kernel's environment and the bwrap argv (pure planning, no launch). */
#include "kbound/sandbox.h"
#include "sandbox/sandbox-internal.h"
#include "base/strv.h"
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Ceilings on what a policy or environment may hold; both come partly from untrusted kernelspecs. */
#define ENV_MAX_ENTRIES 4096
#define ARGV_MAX_ENTRIES 65536
#define HOSTNAME_MAX 64

/* Pushes up to three arguments: one option and its operands. */
static int strv_push3(kb_strv *v, const char *a, const char *b, const char *c) {
        int r = kb_strv_push(v, a);
        if (r >= 0 && b)
                r = kb_strv_push(v, b);
        if (r >= 0 && c)
                r = kb_strv_push(v, c);
        return r;
}

/* Pushes option, fd as a number, and then dest when not NULL (bwrap's descriptor options). */
static int strv_push_fd(kb_strv *v, const char *option, int fd, const char *dest) {
        char number[16];
        snprintf(number, sizeof number, "%d", fd);
        return strv_push3(v, option, number, dest);
}

/* Length of the NAME part of "NAME=value" (or of the whole string if it has no '='). */
static size_t env_name_len(const char *entry) {
        const char *eq = strchr(entry, '=');
        return eq ? (size_t) (eq - entry) : strlen(entry);
}

bool kb_sandbox_env_allowed(const char *name) {
        if (!name)
                return false;
        size_t len = env_name_len(name);
        /* Locale and time zone only: they change how a kernel formats output, never what it may
         * reach. Everything else in a daemon's environment may be a credential. */
        if ((len == 4 && strncmp(name, "LANG", 4) == 0) || (len == 8 && strncmp(name, "LANGUAGE", 8) == 0) ||
            (len == 2 && strncmp(name, "TZ", 2) == 0))
                return true;
        return len > 3 && strncmp(name, "LC_", 3) == 0;
}

/* Sets entry (a "NAME=value" string) in v, replacing an entry of the same name. */
static int env_set(kb_strv *v, const char *entry) {
        size_t len = env_name_len(entry);
        if (len == 0 || entry[len] != '=')
                return 0; /* not a variable: ignore rather than pass something bwrap would misread */
        for (size_t i = 0; i < v->n; i++)
                if (env_name_len(v->items[i]) == len && strncmp(v->items[i], entry, len) == 0) {
                        char *copy = strdup(entry);
                        if (!copy)
                                return -ENOMEM;
                        free(v->items[i]);
                        v->items[i] = copy;
                        return 0;
                }
        if (v->n >= ENV_MAX_ENTRIES)
                return -E2BIG;
        return kb_strv_push(v, entry);
}

static bool env_is_jpy_parent_pid(const char *entry) {
        /* ipykernel's parent poller kills the kernel when its "parent" looks like PID 1, which is
         * exactly what bwrap's init is inside the sandbox. */
        return env_name_len(entry) == 14 && strncmp(entry, "JPY_PARENT_PID", 14) == 0;
}

int kb_sandbox_env(char *const *host_env, char *const *spec_env, char ***ret_env) {
        static const char *const base[] = {
                ("PATH=" KB_SANDBOX_PATH),
                ("HOME=" KB_SANDBOX_WORKSPACE),
                "TMPDIR=/tmp",
                "LANG=C.UTF-8",
        };
        kb_strv v = {.max = ARGV_MAX_ENTRIES};
        int r = 0;
        for (size_t i = 0; r >= 0 && i < KB_ELEMENTSOF(base); i++)
                r = env_set(&v, base[i]);
        for (char *const *p = host_env; r >= 0 && p && *p; p++)
                if (kb_sandbox_env_allowed(*p))
                        r = env_set(&v, *p);
        for (char *const *p = spec_env; r >= 0 && p && *p; p++)
                if (!env_is_jpy_parent_pid(*p))
                        r = env_set(&v, *p);
        if (r < 0) {
                kb_strv_clear(&v);
                return r == -E2BIG ? -E2BIG : -ENOMEM;
        }
        return kb_strv_take(&v, ret_env);
}

static bool path_ok(const char *p) {
        return p && p[0] == '/' && strlen(p) < PATH_MAX;
}

bool kb_sandbox_runtime_in_memory(const kb_sandbox_hardening *h) {
        return h && h->tmpfs_size;
}

const char *kb_sandbox_handoff_inside(const kb_sandbox_hardening *h) {
        return kb_sandbox_runtime_in_memory(h) ? KB_SANDBOX_HANDOFF : KB_SANDBOX_RUNTIME;
}

bool kb_sandbox_workspace_sized(const kb_sandbox_hardening *h) {
        return h && h->limits.max[KB_LIMIT_WORKSPACE] && h->tmpfs_size;
}

bool kb_team_name_valid(const char *team) {
        if (!team)
                return false;
        size_t len = strlen(team);
        if (len < 1 || len > KB_TEAM_NAME_MAX || team[0] == '.')
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = team[i];
                bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                          c == '.' || c == '-';
                if (!ok)
                        return false;
        }
        return true;
}

/* "kbound-<team>" cut to HOST_NAME_MAX, with '_' and '.' turned into '-' (hostname alphabet). */
static void team_hostname(const char *team, char out[HOSTNAME_MAX + 1]) {
        int n = snprintf(out, HOSTNAME_MAX + 1, "kbound-%s", team);
        size_t len = n < 0 ? 0 : ((size_t) n > HOSTNAME_MAX ? HOSTNAME_MAX : (size_t) n);
        out[len] = '\0';
        for (size_t i = 0; i < len; i++)
                if (out[i] == '_' || out[i] == '.')
                        out[i] = '-';
}

/* Joins root and rel ("/usr") into out. Returns false if it does not fit. */
static bool join_path(char *out, size_t size, const char *root, const char *rel) {
        size_t rl = strlen(root);
        while (rl > 1 && root[rl - 1] == '/')
                rl--;
        if (rl == 1 && root[0] == '/')
                rl = 0;
        int n = snprintf(out, size, "%.*s%s", (int) rl, root, rel);
        return n >= 0 && (size_t) n < size;
}

/* One top-level system path (/bin, /lib64, ...) of root ("" for the host): a symlink is recreated
 * as the same symlink (merged-/usr), a directory is bound read-only, anything missing is skipped. */
static int plan_system_link_or_dir(kb_strv *v, const char *root, const char *dest) {
        char src[PATH_MAX];
        if (!join_path(src, sizeof src, root, dest))
                return -ENAMETOOLONG;
        struct stat st;
        if (lstat(src, &st) < 0)
                return 0;
        if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t n = readlink(src, target, sizeof target - 1);
                if (n <= 0)
                        return 0;
                target[n] = '\0';
                return strv_push3(v, "--symlink", target, dest);
        }
        if (S_ISDIR(st.st_mode))
                return strv_push3(v, "--ro-bind-try", src, dest);
        return 0;
}

/* /etc entries the host lends to the sandbox. Never all of /etc: the kernel is root in its user
 * namespace and would read /etc/shadow, ssh host keys and daemon configs. These are the files
 * that the dynamic loader, Python, R, TLS and Jupyter read; nothing in them is a secret. Not all
 * of /etc/ssl either: /etc/ssl/private holds the host's TLS keys, readable to a uid-0 kernel. */
static const char *const host_etc[] = {
        "ld.so.cache",
        "ld.so.conf",
        "ld.so.conf.d",
        "alternatives",
        "R",
        "ssl/certs",
        "ssl/openssl.cnf",
        "ca-certificates",
        "ca-certificates.conf",
        "localtime",
        "timezone",
        "nsswitch.conf",
        "passwd",
        "group",
        "hosts",
        "host.conf",
        "gai.conf",
        "fonts",
        "mime.types",
        "matplotlibrc",
        "jupyter",
        "ipython",
        "locale.alias",
        "locale.conf",
        "os-release",
        "debian_version",
        "protocols",
        "services",
        "magic",
        "magic.mime",
        "papersize",
        "texmf",
        "xdg",
};

static int plan_host_etc_entry(kb_strv *v, const char *name) {
        char src[PATH_MAX];
        int n = snprintf(src, sizeof src, "/etc/%s", name);
        if (n < 0 || (size_t) n >= sizeof src)
                return -ENAMETOOLONG;
        if (access(src, F_OK) < 0)
                return 0;
        /* -try: a file removed between the check and bwrap's mount is not a reason to fail. */
        return strv_push3(v, "--ro-bind-try", src, src);
}

static int plan_host_system(kb_strv *v, bool allow_network) {
        static const char *const links[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
        int r = strv_push3(v, "--ro-bind", "/usr", "/usr");
        for (size_t i = 0; r >= 0 && i < KB_ELEMENTSOF(links); i++)
                r = plan_system_link_or_dir(v, "", links[i]);
        for (size_t i = 0; r >= 0 && i < KB_ELEMENTSOF(host_etc); i++)
                r = plan_host_etc_entry(v, host_etc[i]);
        /* Name resolution only means something when the network is shared. */
        if (r >= 0 && allow_network)
                r = plan_host_etc_entry(v, "resolv.conf");
        if (r < 0)
                return r;
        /* python3, python3.11, ...: Debian's site configuration for each installed Python. */
        DIR *d = opendir("/etc");
        if (!d)
                return 0;
        struct dirent *de;
        while (r >= 0 && (de = readdir(d)))
                if (strncmp(de->d_name, "python3", 7) == 0)
                        r = plan_host_etc_entry(v, de->d_name);
        closedir(d);
        return r;
}

/* What of an image's root the sandbox shows: its own /usr, /etc (whole: it is the image's, not the
 * host's) and /opt, and its top-level links (or directories, on images without merged /usr). */
static const char *const rootfs_dirs[] = {"/usr", "/etc", "/opt"};
static const char *const rootfs_links[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};

/* The image is mounted read-only like the host's system paths. Trust boundary: the image is
 * untrusted content and bwrap follows symlinks in a bind source, so nothing is bound through one
 * of the image's links: /usr must be a real directory (lstat), and a link at /etc, /opt, /bin...
 * is recreated as the same link inside the sandbox, where it resolves within the image. */
static int plan_rootfs_system(kb_strv *v, const char *rootfs) {
        char usr[PATH_MAX];
        struct stat st;
        if (!join_path(usr, sizeof usr, rootfs, "/usr") || lstat(usr, &st) < 0 || !S_ISDIR(st.st_mode))
                return -EINVAL; /* not a root filesystem */
        int r = strv_push3(v, "--ro-bind", usr, "/usr");
        for (size_t i = 1; r >= 0 && i < KB_ELEMENTSOF(rootfs_dirs); i++)
                r = plan_system_link_or_dir(v, rootfs, rootfs_dirs[i]);
        for (size_t i = 0; r >= 0 && i < KB_ELEMENTSOF(rootfs_links); i++)
                r = plan_system_link_or_dir(v, rootfs, rootfs_links[i]);
        return r;
}

static const char *const proc_readonly[] = {"sys", "sysrq-trigger", "irq", "bus", "fs", NULL};
/* /proc/keys lists every key the reader may view, and keys get "view" for their owner's uid by
 * default: a sandbox running as the invoking user would see the names of that user's keys. */
static const char *const proc_masked[] = {"kcore",         "keys", "timer_list", "timer_stats", "sched_debug",
                                          "latency_stats", "acpi", "scsi",       "asound",      NULL};

const char *const *kb_sandbox_proc_readonly(void) {
        return proc_readonly;
}

const char *const *kb_sandbox_proc_masked(void) {
        return proc_masked;
}

/* --proc /proc, then the host-global entries read-only and the hidden ones masked. Trust boundary:
 * bwrap covers /proc/sys itself only when its access(W_OK) test succeeds, which it does not for a
 * sandbox whose uid maps to the host's root, so kbound never relies on it. The source of each
 * read-only bind is the host's /proc entry: sysctls resolve through the reader's own namespaces, so
 * the sandbox still sees its own network and IPC values, only never writable. Entries this kernel
 * does not have are skipped (bwrap cannot bind onto a missing /proc file). */
static int plan_proc(kb_strv *v) {
        int r = strv_push3(v, "--proc", "/proc", NULL);
        for (const char *const *e = proc_readonly; r >= 0 && *e; e++) {
                char path[64];
                struct stat st;
                snprintf(path, sizeof path, "/proc/%s", *e);
                if (lstat(path, &st) == 0)
                        r = strv_push3(v, "--ro-bind", path, path);
        }
        for (const char *const *e = proc_masked; r >= 0 && *e; e++) {
                char path[64];
                struct stat st;
                snprintf(path, sizeof path, "/proc/%s", *e);
                if (lstat(path, &st) < 0)
                        continue;
                if (S_ISDIR(st.st_mode)) {
                        r = strv_push3(v, "--tmpfs", path, NULL);
                        if (r >= 0)
                                r = strv_push3(v, "--remount-ro", path, NULL);
                } else {
                        r = strv_push3(v, "--ro-bind", "/dev/null", path);
                }
        }
        return r;
}

bool kb_sandbox_rootfs_visible(const char *path) {
        if (!path || path[0] != '/')
                return false;
        for (size_t i = 0; i < KB_ELEMENTSOF(rootfs_dirs) + KB_ELEMENTSOF(rootfs_links); i++) {
                const char *top =
                        i < KB_ELEMENTSOF(rootfs_dirs) ? rootfs_dirs[i] : rootfs_links[i - KB_ELEMENTSOF(rootfs_dirs)];
                size_t len = strlen(top);
                if (strncmp(path, top, len) == 0 && (path[len] == '/' || path[len] == '\0'))
                        return true;
        }
        return false;
}

const char *const *kb_sandbox_sized_paths(void) {
        static const char *const paths[] = {"/tmp", "/dev/shm", KB_SANDBOX_WORKSPACE, KB_SANDBOX_RUNTIME, NULL};
        return paths;
}

uint64_t kb_sandbox_sized_size(const kb_sandbox_hardening *h, const char *path) {
        if (!h || !h->tmpfs_size || !path)
                return 0;
        if (strcmp(path, "/tmp") == 0 || strcmp(path, "/dev/shm") == 0)
                return h->limits.max[KB_LIMIT_TMP];
        if (strcmp(path, KB_SANDBOX_WORKSPACE) == 0)
                return h->limits.max[KB_LIMIT_WORKSPACE];
        if (strcmp(path, KB_SANDBOX_RUNTIME) == 0)
                return KB_SANDBOX_RUNTIME_SIZE;
        return 0;
}

/* --tmpfs path, with --size first when it has a size and the bwrap sizes it (else kbound's
 * stand-in does, once bwrap has made it: kb_sandbox_launch). */
static int plan_tmpfs(kb_strv *v, const kb_sandbox_hardening *h, const char *path) {
        uint64_t size = kb_sandbox_sized_size(h, path);
        if (size && !h->host_sizes) {
                char bytes[32];
                snprintf(bytes, sizeof bytes, "%llu", (unsigned long long) size);
                int r = strv_push3(v, "--size", bytes, NULL);
                if (r < 0)
                        return r;
        }
        return strv_push3(v, "--tmpfs", path, NULL);
}

/* The probe program as the sandbox's PID 2: it sets RLIMIT_NPROC (tasks, counted in the
 * sandbox's user namespace alone) and RLIMIT_AS (memory, per process) and execs the kernel's argv.
 * Nothing when no limit is asked. */
static int plan_rlimits(kb_strv *v, const kb_limits *l) {
        uint64_t tasks = l->max[KB_LIMIT_TASKS], memory = l->max[KB_LIMIT_MEMORY];
        if (!tasks && !memory)
                return 0;
        char nproc[32], as[32];
        snprintf(nproc, sizeof nproc, "%llu", (unsigned long long) tasks);
        snprintf(as, sizeof as, "%llu", (unsigned long long) memory);
        int r = strv_push3(v, KB_SANDBOX_PROBE_PROGRAM, KB_SANDBOX_LIMITS_ARG, nproc);
        if (r >= 0)
                r = strv_push3(v, as, "--", NULL);
        return r;
}

int kb_sandbox_plan(const kb_sandbox_policy *policy, char *const *kernel_argv, int info_fd, char ***ret_argv) {
        if (!policy || !ret_argv || !kernel_argv || !kernel_argv[0] || info_fd < 0 ||
            info_fd == KB_SANDBOX_SECCOMP_FD || info_fd == KB_SANDBOX_BLOCK_FD)
                return -EINVAL;
        if (!kb_team_name_valid(policy->team) || !path_ok(policy->workspace) || !path_ok(policy->runtime_dir) ||
            (policy->rootfs && !path_ok(policy->rootfs)) ||
            (policy->syscall_probe && !path_ok(policy->syscall_probe)) ||
            (policy->boundary_probe && !path_ok(policy->boundary_probe)) ||
            (policy->relay_prefix && (!policy->syscall_probe || !policy->relay_ports || !*policy->relay_ports)))
                return -EINVAL;
        for (char *const *p = policy->ro_paths; p && *p; p++)
                if (!path_ok(*p))
                        return -EINVAL;

        kb_strv v = {.max = ARGV_MAX_ENTRIES};
        char hostname[HOSTNAME_MAX + 1];
        team_hostname(policy->team, hostname);

        int r = kb_strv_push(&v, policy->bwrap ? policy->bwrap : "bwrap");
        /* Every namespace; the network one is given back only under the explicit raw-network
         * override. --unshare-pid is implied by --unshare-all but stated: PID 2 depends on it. */
        if (r >= 0)
                r = strv_push3(&v, "--unshare-all", "--unshare-pid", NULL);
        if (r >= 0 && policy->allow_network)
                r = kb_strv_push(&v, "--share-net");
        /* --die-with-parent: nothing outlives kbound. --new-session: no TIOCSTI into our tty. */
        if (r >= 0)
                r = strv_push3(&v, "--die-with-parent", "--new-session", NULL);
        /* A user namespace always (--disable-userns needs it stated), nested ones refused (by
         * --disable-userns, or by kbound's stand-in for a bwrap without it), and the seccomp filter the launcher hands
         * over at KB_SANDBOX_SECCOMP_FD (docs/seccomp.md). */
        if (r >= 0)
                r = kb_strv_push(&v, "--unshare-user");
        if (r >= 0 && policy->hardening && policy->hardening->disable_userns && !policy->hardening->host_userns)
                r = kb_strv_push(&v, "--disable-userns");
        if (r >= 0)
                r = strv_push_fd(&v, "--seccomp", KB_SANDBOX_SECCOMP_FD, NULL);
        if (r >= 0)
                r = strv_push3(&v, "--cap-drop", "ALL", NULL);
        if (r >= 0)
                r = strv_push3(&v, "--hostname", hostname, NULL);
        if (r >= 0)
                r = policy->rootfs ? plan_rootfs_system(&v, policy->rootfs)
                                   : plan_host_system(&v, policy->allow_network);
        if (r >= 0)
                r = plan_proc(&v);
        if (r >= 0)
                r = strv_push3(&v, "--dev", "/dev", NULL);
        /* Every folder the sandbox can write in memory has a size (--tmp-size): /tmp and /dev/shm,
         * each its own tmpfs; /dev itself read-only (bwrap's is a tmpfs of no size, its nodes bind
         * mounts, which stay usable); /var/tmp is /tmp, for tools that insist on it. */
        if (r >= 0)
                r = plan_tmpfs(&v, policy->hardening, "/tmp");
        if (r >= 0)
                r = plan_tmpfs(&v, policy->hardening, "/dev/shm");
        if (r >= 0)
                r = strv_push3(&v, "--remount-ro", "/dev", NULL);
        /* /var is not the host's: an empty one. */
        if (r >= 0)
                r = strv_push3(&v, "--dir", "/var", NULL);
        if (r >= 0)
                r = strv_push3(&v, "--symlink", "../tmp", "/var/tmp");
        for (char *const *p = policy->ro_paths; r >= 0 && p && *p; p++)
                r = strv_push3(&v, "--ro-bind", *p, *p);
        /* The team's directories last, so no read-only path can shadow them. */
        /* With a size asked, /workspace is a tmpfs of that size (the host reaches it through a
         * descriptor, kb_sandbox_workspace_fd); the team's host folder, which nothing bounds,
         * only with --workspace-max none. */
        if (r >= 0 && kb_sandbox_workspace_sized(policy->hardening))
                r = plan_tmpfs(&v, policy->hardening, KB_SANDBOX_WORKSPACE);
        else if (r >= 0)
                r = strv_push3(&v, "--bind", policy->workspace, KB_SANDBOX_WORKSPACE);
        /* The kernel's sockets: a small tmpfs of their own, beside the team's runtime folder bound
         * read-only (the connection file); the folder itself read-write only with no --size. */
        if (r >= 0 && kb_sandbox_runtime_in_memory(policy->hardening)) {
                r = plan_tmpfs(&v, policy->hardening, KB_SANDBOX_RUNTIME);
                if (r >= 0)
                        r = strv_push3(&v, "--ro-bind", policy->runtime_dir, KB_SANDBOX_HANDOFF);
                const char *name = policy->connection_file ? strrchr(policy->connection_file, '/') : NULL;
                char dest[PATH_MAX];
                if (r >= 0 && name && name[1]) {
                        snprintf(dest, sizeof dest, "%s%s", KB_SANDBOX_RUNTIME, name);
                        r = strv_push_fd(&v, "--file", KB_SANDBOX_CONNECTION_FD, dest);
                }
        } else if (r >= 0)
                r = strv_push3(&v, "--bind", policy->runtime_dir, KB_SANDBOX_RUNTIME);
        if (r >= 0 && policy->syscall_probe)
                r = strv_push3(&v, "--ro-bind", policy->syscall_probe, KB_SANDBOX_PROBE_PROGRAM);
        if (r >= 0 && policy->boundary_probe)
                r = strv_push3(&v, "--ro-bind", policy->boundary_probe, KB_SANDBOX_BOUNDARY_PROGRAM);
        /* The root tmpfs read-only: a write outside the team's directories fails inside, visibly. */
        if (r >= 0)
                r = strv_push3(&v, "--remount-ro", "/", NULL);
        if (r >= 0)
                r = strv_push3(&v, "--chdir", KB_SANDBOX_WORKSPACE, NULL);
        /* bwrap's init waits here until the host has looked at the sandbox (kb_sandbox_launch). */
        if (r >= 0)
                r = strv_push_fd(&v, "--block-fd", KB_SANDBOX_BLOCK_FD, NULL);
        if (r >= 0)
                r = strv_push_fd(&v, "--info-fd", info_fd, NULL);
        if (r >= 0)
                r = kb_strv_push(&v, "--");
        /* The limits kept in the sandbox's user namespace are set there, by kbound's own program
         * as PID 2, which then becomes the kernel (exec: the same pid). */
        if (r >= 0 && policy->syscall_probe && policy->hardening)
                r = plan_rlimits(&v, &policy->hardening->limits);
        /* A kernel that speaks only TCP: kbound's relay, started by PID 2 (which then becomes the
         * kernel) as its child. */
        if (r >= 0 && policy->relay_prefix)
                r = strv_push3(&v, KB_SANDBOX_PROBE_PROGRAM, "--relay", policy->relay_prefix);
        if (r >= 0 && policy->relay_prefix)
                r = strv_push3(&v, policy->relay_ports, "--", NULL);
        for (char *const *p = kernel_argv; r >= 0 && *p; p++)
                r = kb_strv_push(&v, *p);
        if (r < 0) {
                kb_strv_clear(&v);
                return r;
        }
        return kb_strv_take(&v, ret_argv);
}

/* Absolute path of an existing file, or -ENOENT. */
static int absolute_existing(const char *path, char **ret_path) {
        if (access(path, F_OK) < 0)
                return -ENOENT;
        char *abs = path[0] == '/' ? strdup(path) : realpath(path, NULL);
        if (!abs)
                return errno == ENOMEM || path[0] == '/' ? -ENOMEM : -ENOENT;
        *ret_path = abs;
        return 0;
}

static const char *envp_get(char *const *envp, const char *name) {
        size_t len = strlen(name);
        for (char *const *p = envp; p && *p; p++)
                if (strncmp(*p, name, len) == 0 && (*p)[len] == '=')
                        return *p + len + 1;
        return NULL;
}

/* Searches PATH (from envp, not getenv: the library does not read its process's environment)
 * for name. Relative PATH entries are skipped: they would make the choice depend on the cwd. */
static int search_path(const char *name, const char *path, char **ret_path) {
        if (!path)
                path = "/usr/local/bin:/usr/bin:/bin";
        const char *p = path;
        while (*p) {
                const char *end = strchr(p, ':');
                size_t len = end ? (size_t) (end - p) : strlen(p);
                char candidate[PATH_MAX];
                if (len > 0 && p[0] == '/' && len + 1 + strlen(name) < sizeof candidate) {
                        int w = snprintf(candidate, sizeof candidate, "%.*s/%s", (int) len, p, name);
                        if (w < 0 || (size_t) w >= sizeof candidate)
                                break;
                        struct stat st;
                        if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && access(candidate, X_OK) == 0) {
                                char *copy = strdup(candidate);
                                if (!copy)
                                        return -ENOMEM;
                                *ret_path = copy;
                                return 0;
                        }
                }
                if (!end)
                        break;
                p = end + 1;
        }
        return -ENOENT;
}

int kb_sandbox_find_bwrap(const char *explicit_path, char *const *envp, char **ret_path) {
        const char *chosen = explicit_path;
        if (!chosen || !*chosen)
                chosen = envp_get(envp, "KBOUND_BWRAP");
        if (chosen && *chosen)
                return strchr(chosen, '/') ? absolute_existing(chosen, ret_path)
                                           : search_path(chosen, envp_get(envp, "PATH"), ret_path);
        return search_path("bwrap", envp_get(envp, "PATH"), ret_path);
}

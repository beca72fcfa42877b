/* machine_checks.c: can this machine enforce the sandbox? doctor's items (kb_sandbox_preflight), one per
 * prerequisite, each with a fix. (The preflight of a kernel's own program and paths is view.c.) */
#include "kbound/sandbox.h"
#include "base/cleanup.h"
#include "kbound/bwrap.h"
#include "sandbox/sandbox-internal.h"
#include "base/facts.h"
#include "base/procfs.h"
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PREFLIGHT_ITEMS 9
/* The longest team name (64) and kernel socket name the runtime layout produces. */
#define SUN_PATH_USABLE 107 /* sizeof(sun_path) - 1: the path needs its NUL */
#define PREFLIGHT_TIMEOUT_MS 10000

static int item_add(kb_preflight_item **items, size_t *n, const char *name, bool ok, bool required, char *detail_take) {
        if (!detail_take)
                return -ENOMEM;
        kb_preflight_item *it = calloc(1, sizeof *it);
        char *name_copy = strdup(name);
        if (!it || !name_copy) {
                free(it);
                free(name_copy);
                free(detail_take);
                return -ENOMEM;
        }
        it->name = name_copy;
        it->ok = ok;
        it->required = required;
        it->detail = detail_take;
        items[(*n)++] = it;
        return 0;
}

static char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *format, ...) {
        va_list ap;
        va_start(ap, format);
        char *s = NULL;
        int r = vasprintf(&s, format, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

/* A folder of its own under runtime_base's parent for the trial sandbox ("kbound-doctor-XXXXXX":
 * not a run's base folder, so no run's clean-up takes it mid-trial), with the team folders and
 * the syscall probe's copy laid out as kb_kernel_start lays them. Returns 0 and the malloc'd
 * folder, or -errno. */
static int trial_folders(const char *runtime_base, const kb_sandbox_user *user, const char *syscall_probe,
                         char **ret_base) {
        const char *slash = strrchr(runtime_base, '/');
        _cleanup_free_ char *base = NULL;
        if (!slash || asprintf(&base, "%.*s/kbound-doctor-XXXXXX", (int) (slash - runtime_base), runtime_base) < 0)
                return slash ? -ENOMEM : -EINVAL;
        if (!mkdtemp(base))
                return -errno;
        char path[PATH_MAX];
        int r = kb_sandbox_user_pass_through(user, base);
        static const char *const given[] = {"workspace", "run"};
        for (size_t i = 0; r >= 0 && i < KB_ELEMENTSOF(given); i++) {
                snprintf(path, sizeof path, "%s/%s", base, given[i]);
                r = mkdir(path, 0700) < 0 ? -errno : kb_sandbox_user_give(user, path);
        }
        if (r >= 0 && syscall_probe) {
                snprintf(path, sizeof path, "%s/tools", base);
                r = mkdir(path, 0700) < 0 ? -errno : kb_sandbox_user_pass_through(user, path);
                snprintf(path, sizeof path, "%s/tools/syscall-probe", base);
                if (r >= 0)
                        r = kb_copy_file(syscall_probe, path, 0555, 64u << 20);
        }
        if (r < 0) {
                (void) kb_remove_tree(base);
                return r;
        }
        *ret_base = TAKE_PTR(base);
        return 0;
}

/* What the trial sandbox showed of the sizes check asks for: every in-memory folder kbound sizes
 * read from the trial kernel's mount table (as sandbox.resources reads it at every look). */
typedef struct trial_sizes {
        bool tried;    /* the trial started and its mount table was read */
        bool ok;       /* each folder a tmpfs of its own of at most its size */
        char bad[256]; /* the first that was not, with what it was */
} trial_sizes;

static void read_trial_sizes(pid_t kernel_pid, const kb_sandbox_hardening *h, trial_sizes *ret) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/mountinfo", (int) kernel_pid);
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_object *mounts = NULL;
        if (kb_read_file(AT_FDCWD, path, O_RDONLY, 4u << 20, &text, NULL) < 0 ||
            kb_procfs_mountinfo_parse(text, &mounts) < 0) {
                snprintf(ret->bad, sizeof ret->bad, "the trial sandbox's mount table could not be read");
                return;
        }
        ret->tried = ret->ok = true;
        for (const char *const *p = kb_sandbox_sized_paths(); *p && ret->ok; p++) {
                uint64_t want = kb_sandbox_sized_size(h, *p);
                if (!want)
                        continue;
                json_object *m = kb_procfs_mount_of(mounts, *p);
                const char *mp = kb_fact_str_of(m, FACT_MOUNT_MOUNTPOINT),
                           *fstype = kb_fact_str_of(m, FACT_MOUNT_FSTYPE);
                int64_t size = kb_procfs_tmpfs_size(kb_fact_arr_of(m, FACT_MOUNT_SUPER));
                if (!mp || strcmp(mp, *p) != 0 || !fstype || strcmp(fstype, "tmpfs") != 0)
                        snprintf(ret->bad, sizeof ret->bad, "%s is not a tmpfs of its own", *p);
                else if (size < 0 || (uint64_t) size > want)
                        snprintf(ret->bad, sizeof ret->bad, "%s is a tmpfs of %s", *p,
                                 size < 0 ? "no size of its own" : "more than asked");
                ret->ok = ret->bad[0] == '\0';
        }
}

/* Starts the sandbox `check` starts, through the same plan and launcher (every namespace, kbound's
 * seccomp filter, the limits asked and this bwrap's stand-ins, the syscall probe's copy bound, the
 * block channel, PID 2 pinned by a verified pidfd), with a program that waits, as the sandbox
 * user: the one test of whether this bwrap, user namespaces, AppArmor, seccomp and the sysctls let
 * kbound's sandbox run here, so doctor and check cannot disagree. Its in-memory folders' sizes are
 * then read as sandbox.resources reads them (*ret_sizes). */
static int check_sandbox(const char *bwrap, const kb_bwrap *info, const kb_sandbox_user *user, const char *runtime_base,
                         const char *syscall_probe, const kb_limits *limits, bool *ret_ok, char **ret_detail,
                         trial_sizes *ret_sizes) {
        *ret_ok = false;
        _cleanup_free_ char *base = NULL;
        int r = trial_folders(runtime_base, user, syscall_probe, &base);
        if (r < 0) {
                *ret_detail =
                        fmt("cannot lay out a trial sandbox's folders next to %s: %s", runtime_base, strerror(-r));
                return *ret_detail ? 0 : -ENOMEM;
        }
        char workspace[PATH_MAX], run[PATH_MAX], probe[PATH_MAX], log[PATH_MAX];
        snprintf(workspace, sizeof workspace, "%s/workspace", base);
        snprintf(run, sizeof run, "%s/run", base);
        snprintf(probe, sizeof probe, "%s/tools/syscall-probe", base);
        snprintf(log, sizeof log, "%s/bwrap.log", base);
        char **env = NULL;
        r = kb_sandbox_env(NULL, NULL, &env);
        kb_sandbox_hardening hardening = {.limits = *limits};
        kb_bwrap_hardening(info, &hardening);
        kb_sandbox_policy policy = {
                .team = "doctor",
                .workspace = workspace,
                .runtime_dir = run,
                .env = env,
                .bwrap = bwrap,
                .user = user,
                .hardening = &hardening,
                .syscall_probe = syscall_probe ? probe : NULL,
        };
        char *argv[] = {"sleep", "60", NULL};
        kb_sandbox *sb = NULL;
        _cleanup_error_ kb_error *error = NULL;
        if (r >= 0)
                r = kb_sandbox_launch(&policy, argv, log, kb_now_ms() + PREFLIGHT_TIMEOUT_MS, &sb, &error);
        if (r >= 0)
                r = kb_sandbox_verify(sb);
        if (r >= 0)
                read_trial_sizes(kb_sandbox_kernel_pid(sb), &hardening, ret_sizes);
        kb_sandbox_destroy(&sb);
        kb_strv_free(env);
        (void) kb_remove_tree(base);
        if (r == -ENOMEM)
                return r;
        char stand_ins[160] = "";
        if (hardening.host_sizes || hardening.host_userns)
                snprintf(stand_ins, sizeof stand_ins, ", kbound's stand-ins for %s%s%s made",
                         hardening.host_sizes ? "--size" : "",
                         hardening.host_sizes && hardening.host_userns ? " and " : "",
                         hardening.host_userns ? "--disable-userns" : "");
        *ret_ok = r >= 0;
        *ret_detail = r >= 0 ? fmt("the sandbox kbound's check starts (user, pid, net, ipc, uts, cgroup and mount "
                                   "namespaces, kbound's seccomp filter%s%s, PID 2 pinned by pidfd) started as %s",
                                   syscall_probe ? ", its syscall probe bound" : "", stand_ins,
                                   user ? user->name : "kbound's user")
                             : fmt("the sandbox kbound's check starts failed to start as %s: %s",
                                   user ? user->name : "kbound's user", kb_error_text(error, r));
        return *ret_detail ? 0 : -ENOMEM;
}

static int read_sysctl(const char *path, long *ret) {
        char buf[32];
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        if (n <= 0)
                return -EIO;
        buf[n] = '\0';
        char *end;
        errno = 0;
        long v = strtol(buf, &end, 10);
        if (errno || end == buf)
                return -EIO;
        *ret = v;
        return 0;
}

static char *check_apparmor(bool userns_ok, bool *ret_ok) {
        long restrict_userns = 0;
        if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", &restrict_userns) < 0) {
                *ret_ok = true;
                return fmt("kernel.apparmor_restrict_unprivileged_userns is not present: no AppArmor "
                           "user-namespace restriction applies");
        }
        if (restrict_userns == 0 || geteuid() == 0) {
                *ret_ok = true;
                return fmt("kernel.apparmor_restrict_unprivileged_userns=%ld%s", restrict_userns,
                           restrict_userns ? " (running as root: not affected)" : "");
        }
        if (userns_ok) {
                *ret_ok = true;
                return fmt("kernel.apparmor_restrict_unprivileged_userns=1, and bwrap is allowed (a profile "
                           "grants it user namespaces)");
        }
        *ret_ok = false;
        /* Disabling the restriction system-wide would weaken every program; the distribution
         * ships a profile that lets bwrap alone create user namespaces. */
        return fmt("kernel.apparmor_restrict_unprivileged_userns=1 (Ubuntu 24.04+) refuses user namespaces to "
                   "bwrap: load the distribution's bwrap-userns-restrict profile (Ubuntu 24.04: install "
                   "package apparmor-profiles and copy /usr/share/apparmor/extra-profiles/bwrap-userns-restrict "
                   "to /etc/apparmor.d/; 25.04+ ships it there) with "
                   "`sudo apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict` (docs/ci.md); do not "
                   "disable the restriction");
}

static char *check_pidfd(bool *ret_ok) {
        _cleanup_close_ int pidfd = kb_sandbox_pidfd_open(getpid());
        if (pidfd < 0) {
                *ret_ok = false;
                return fmt("pidfd_open failed (%s): Linux 5.3 or newer is needed to pin the kernel process",
                           strerror(-pidfd));
        }
        /* Signal 0 checks permission and liveness without sending anything. */
        int r = kb_sandbox_pidfd_send_signal(pidfd, 0);
        *ret_ok = r == 0;
        return r == 0 ? fmt("pidfd_open and pidfd_send_signal work")
                      : fmt("pidfd_send_signal failed (%s): Linux 5.1 or newer is needed", strerror(-r));
}

/* Team names vary in length, so say how long a team name may be under runtime_base; the default
 * teams ("kbound-<kernel>") need about 24 characters. */
#define IPC_TEAM_MIN 24
static char *check_ipc_path(const char *runtime_base, bool *ret_ok) {
        static const char layout[] = "/teams//run/kernel-5";
        if (!runtime_base || runtime_base[0] != '/') {
                *ret_ok = false;
                return fmt("no absolute runtime directory given");
        }
        size_t fixed = strlen(runtime_base) + strlen(layout);
        long room = (long) SUN_PATH_USABLE - (long) fixed;
        *ret_ok = room >= IPC_TEAM_MIN;
        if (*ret_ok)
                return fmt("ipc socket paths under %s leave room for team names of up to %ld characters "
                           "(unix socket limit %d bytes)",
                           runtime_base, room > 64 ? 64L : room, SUN_PATH_USABLE);
        return fmt("ipc socket paths under %s leave room for team names of only %ld characters (unix socket "
                   "limit %d bytes): set KBOUND_RUNTIME_DIR or TMPDIR to a shorter directory",
                   runtime_base, room < 0 ? 0L : room, SUN_PATH_USABLE);
}

/* The user the sandbox will run as, and whether it can reach the folder team folders go under. */
static char *check_sandbox_user(const char *name, const char *runtime_base, kb_sandbox_user *ret_user,
                                bool *ret_resolved, bool *ret_ok) {
        *ret_resolved = *ret_ok = false;
        int r = kb_sandbox_user_resolve(name, ret_user);
        if (r == -ENOENT)
                return name && *name ? fmt("no user '%s'", name)
                                     : fmt("kbound is root and the sandbox user %s does not exist, so check, run, "
                                           "conformance and console refuse to start kernels (exit 3; never as root, "
                                           "nor as nobody): run scripts/setup or install the kbound package, or "
                                           "create it (useradd --system --user-group --no-create-home --home-dir "
                                           "/nonexistent --shell /usr/sbin/nologin %s), or name a user of its own "
                                           "with --sandbox-user",
                                           KB_SANDBOX_USER_DEFAULT, KB_SANDBOX_USER_DEFAULT);
        if (r == -EPERM)
                return fmt("refused: %s", geteuid() == 0 ? "the sandbox user must not be root (uid or gid 0)"
                                                         : "an ordinary user can only run sandboxes as itself");
        if (r < 0)
                return fmt("cannot read the user database: %s", strerror(-r));
        *ret_resolved = true;
        /* The team folders are made under runtime_base's parent; bwrap, as the sandbox user, binds
         * them and so must be able to walk there. */
        _cleanup_free_ char *parent = runtime_base ? strdup(runtime_base) : NULL;
        char *slash = parent ? strrchr(parent, '/') : NULL;
        if (slash)
                *(slash == parent ? slash + 1 : slash) = '\0';
        _cleanup_free_ char *blocker = NULL;
        int reach = parent ? kb_sandbox_user_can_reach(ret_user, parent, &blocker) : -EINVAL;
        const char *who = ret_user->switch_user ? "kbound is root: kernels run as" : "kernels run as kbound's user,";
        if (reach < 0)
                return fmt("%s %s (uid %u, gid %u); the runtime folder %s cannot be checked: %s", who, ret_user->name,
                           (unsigned) ret_user->uid, (unsigned) ret_user->gid, parent ? parent : "?", strerror(-reach));
        if (reach == 0)
                return fmt("%s %s (uid %u, gid %u), who cannot reach %s (stopped at %s): set KBOUND_RUNTIME_DIR to a "
                           "folder it can traverse, such as /tmp",
                           who, ret_user->name, (unsigned) ret_user->uid, (unsigned) ret_user->gid, parent,
                           blocker ? blocker : "?");
        *ret_ok = true;
        return fmt("%s %s (uid %u, gid %u), never as root%s", who, ret_user->name, (unsigned) ret_user->uid,
                   (unsigned) ret_user->gid,
                   ret_user->switch_user && strcmp(ret_user->name, "nobody") == 0
                           ? "; a shared account: a user of the sandbox's own is better (scripts/setup "
                             "creates " KB_SANDBOX_USER_DEFAULT ")"
                           : "");
}

/* How each limit asked (the defaults unless given) is enforced here (limits.h): a trial cgroup made
 * and removed; the in-memory folders' sizes as the trial sandbox showed them (sizes). Not ok when
 * check would fail sandbox.resources: a size not in force, or --cpu-max with no cpu cgroup. */
static char *check_limits(const kb_bwrap *info, const kb_limits *l, const trial_sizes *sizes, bool *ret_ok) {
        kb_limits mem_tasks = *l;
        mem_tasks.max[KB_LIMIT_CPU] = 0;
        kb_cgroup cg;
        int r = kb_cgroup_create(&cg, &mem_tasks, "doctor");
        int version = cg.version;
        kb_cgroup_destroy(&cg);
        /* --cpu-max, none by default: a trial of its own, so it says nothing of the others */
        kb_limits only_cpu = {0};
        only_cpu.max[KB_LIMIT_CPU] = 1;
        kb_cgroup cpu_cg;
        int cpu_r = kb_cgroup_create(&cpu_cg, &only_cpu, "doctor");
        int cpu_version = cpu_cg.version;
        kb_cgroup_destroy(&cpu_cg);
        bool sizes_asked = l->max[KB_LIMIT_TMP] || l->max[KB_LIMIT_WORKSPACE];
        bool cpu_ok = !l->max[KB_LIMIT_CPU] || cpu_r == 0;
        *ret_ok = sizes->ok && cpu_ok;
        char m[32], t[32], z[32], w[32], lg[32];
        kb_limit_format(KB_LIMIT_MEMORY, l->max[KB_LIMIT_MEMORY], m, sizeof m);
        kb_limit_format(KB_LIMIT_TASKS, l->max[KB_LIMIT_TASKS], t, sizeof t);
        kb_limit_format(KB_LIMIT_TMP, l->max[KB_LIMIT_TMP], z, sizeof z);
        kb_limit_format(KB_LIMIT_WORKSPACE, l->max[KB_LIMIT_WORKSPACE], w, sizeof w);
        kb_limit_format(KB_LIMIT_LOG, l->max[KB_LIMIT_LOG], lg, sizeof lg);
        char cgroups[320];
        if (r == 0)
                snprintf(cgroups, sizeof cgroups,
                         "memory (%s, swap included) and tasks (%s) for each whole sandbox by "
                         "a cgroup v%d of its own",
                         m, t, version);
        else
                snprintf(cgroups, sizeof cgroups,
                         "no cgroup can be made here (%s): memory (%s) per process by "
                         "RLIMIT_AS, tasks (%s) by RLIMIT_NPROC in the sandbox's user namespace",
                         strerror(-r), m, t);
        char cpu[200];
        if (cpu_r == 0)
                snprintf(cpu, sizeof cpu, "processor time (--cpu-max, none by default) by a cgroup v%d of its own",
                         cpu_version);
        else
                snprintf(cpu, sizeof cpu, "processor time cannot be bounded here (%s: no cpu cgroup%s)",
                         strerror(-cpu_r),
                         l->max[KB_LIMIT_CPU] ? "; check cannot start with --cpu-max: run as root or in a delegated "
                                                "cgroup, or drop --cpu-max"
                                              : "; check refuses --cpu-max here");
        char folders[512];
        bool by_kbound = !kb_bwrap_has(info, KB_BWRAP_SIZE);
        if (!sizes_asked)
                snprintf(folders, sizeof folders, "/tmp, /dev/shm and /workspace not sized (none asked: not claimed)");
        else if (sizes->ok)
                snprintf(folders, sizeof folders,
                         "/tmp and /dev/shm (%s each), /workspace (%s) and the socket folder in memory, each sized "
                         "by %s, as the trial sandbox's mount table shows",
                         z, w, by_kbound ? "kbound's stand-in for --size (this bwrap has none)" : "bwrap's --size");
        else
                snprintf(folders, sizeof folders, "check will fail sandbox.resources: %s%s; fix: %s",
                         sizes->bad[0] ? sizes->bad : "not tried",
                         sizes->tried ? " in the trial sandbox" : " (the trial sandbox did not start)",
                         sizes->tried ? "use a bubblewrap with --size (0.8.0+), or give up the sizes with --tmp-size "
                                        "none --workspace-max none (reported as not claimed)"
                                      : "see the sandbox item");
        return fmt("%s; %s; the kernel's log (%s on disk) by a pipe kbound drains; %s", cgroups, folders, lg, cpu);
}

int kb_sandbox_preflight(const char *bwrap, const char *runtime_base, const char *sandbox_user,
                         const char *syscall_probe, const kb_limits *limits, kb_preflight_item ***ret) {
        if (!ret)
                return -EINVAL;
        kb_preflight_item **items = calloc(PREFLIGHT_ITEMS + 1, sizeof *items);
        if (!items)
                return -ENOMEM;
        size_t n = 0;
        int r;

        kb_sandbox_user user;
        bool user_resolved, user_ok;
        r = item_add(items, &n, "sandbox-user", false, true,
                     check_sandbox_user(sandbox_user, runtime_base, &user, &user_resolved, &user_ok));
        if (r >= 0)
                items[n - 1]->ok = user_ok;

        kb_bwrap info = {.has = 0};
        int probed = bwrap && bwrap[0] == '/' ? kb_bwrap_probe(bwrap, &info) : -ENOENT;
        bool have_bwrap = probed == 0;
        /* A set-uid bwrap runs, but kbound cannot prove anything about what it builds. */
        bool setuid = have_bwrap && kb_sandbox_bwrap_setuid(bwrap) > 0;
        bool usable = false;
        if (setuid)
                r = item_add(items, &n, "bwrap", false, true,
                             fmt("bubblewrap %s at %s: %s", info.version, bwrap, KB_SANDBOX_SETUID_WHY));
        else if (have_bwrap) {
                /* The words check refuses with (cli_find_bwrap_version): one account of the options. */
                char *account = NULL;
                r = kb_bwrap_describe(&info, bwrap, &account);
                usable = r > 0;
                if (r >= 0)
                        r = item_add(items, &n, "bwrap", usable, true, account);
        } else if (probed == -ENOEXEC)
                r = item_add(items, &n, "bwrap", false, true,
                             fmt("%s is not bubblewrap (its --version does not say \"bubblewrap VERSION\", or its "
                                 "--help is not bwrap's): install bubblewrap (apt-get install bubblewrap) or name "
                                 "its bwrap with --bwrap or KBOUND_BWRAP",
                                 bwrap));
        else
                r = item_add(items, &n, "bwrap", false, true,
                             fmt("%s%s does not run: install bubblewrap (apt-get install bubblewrap) or name "
                                 "it with --bwrap or KBOUND_BWRAP",
                                 bwrap ? bwrap : "bwrap", bwrap ? "" : " not found,"));

        /* The seccomp filter every sandbox runs under (docs/seccomp.md). */
        _cleanup_close_ int seccomp_fd = -1;
        size_t insns = 0;
        if (r >= 0) {
                int b = kb_seccomp_build(NULL, &seccomp_fd);
                if (b == 0)
                        (void) kb_seccomp_instructions(seccomp_fd, &insns);
                r = item_add(
                        items, &n, "seccomp", b == 0, true,
                        b == 0 ? fmt("kbound's seccomp filter builds (%zu instructions); every sandbox runs under it",
                                     insns)
                               : fmt("the seccomp filter cannot be built here (%s): %s", strerror(-b),
                                     b == -ENOSYS ? "libseccomp is too old for the filter's calls"
                                                  : "a kernel with seccomp (Linux 4.14+) is needed"));
        }
        /* The trial first: the limits' item reads the sizes it showed. */
        kb_limits asked;
        if (limits)
                asked = *limits;
        else
                kb_limits_default(&asked);
        bool userns_ok = false;
        trial_sizes sizes = {.ok = false};
        char *sandbox_detail = NULL;
        if (r >= 0) {
                if (usable && user_resolved && seccomp_fd >= 0 && runtime_base)
                        r = check_sandbox(bwrap, &info, &user, runtime_base, syscall_probe, &asked, &userns_ok,
                                          &sandbox_detail, &sizes);
                else
                        sandbox_detail = fmt("not tried: %s", !have_bwrap      ? "no bwrap"
                                                              : setuid         ? "bwrap is set-uid root"
                                                              : !usable        ? "bwrap lacks options kbound needs"
                                                              : !user_resolved ? "no sandbox user"
                                                              : seccomp_fd < 0 ? "no seccomp filter"
                                                                               : "no runtime folder");
        }
        if (r >= 0) {
                bool limits_ok = false;
                char *detail = check_limits(&info, &asked, &sizes, &limits_ok);
                r = item_add(items, &n, "limits", limits_ok, true, detail);
        }
        if (r >= 0)
                r = item_add(items, &n, "sandbox", userns_ok, true, TAKE_PTR(sandbox_detail));
        free(sandbox_detail);
        if (r >= 0) {
                bool ok;
                char *detail = check_apparmor(userns_ok, &ok);
                r = item_add(items, &n, "apparmor", ok, false, detail);
        }
        if (r >= 0) {
                bool ok;
                char *detail = check_pidfd(&ok);
                r = item_add(items, &n, "pidfd", ok, true, detail);
        }
        if (r >= 0) {
                bool ok;
                char *detail = check_ipc_path(runtime_base, &ok);
                r = item_add(items, &n, "ipc-path", ok, true, detail);
        }
        if (r < 0) {
                kb_preflight_free(items);
                return r;
        }
        *ret = items;
        return 0;
}

void kb_preflight_free(kb_preflight_item **items) {
        if (!items)
                return;
        for (kb_preflight_item **p = items; *p; p++) {
                free((*p)->name);
                free((*p)->detail);
                free(*p);
        }
        free(items);
}

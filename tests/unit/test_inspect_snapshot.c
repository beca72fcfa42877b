/* test_inspect_snapshot.c: kb_inspect_snapshot on a fake /proc (its proc_root) in a scratch folder:
 * which processes are the sandbox's, their credentials, namespaces (kbound's own or not), what
 * their descriptors are, the secrets in their environments and command lines, who outside holds
 * their namespaces and pipes, the launcher, the mount tables, the resources, and what cannot be read.
 * The fake's namespaces are files whose inode is the namespace's (as an nsfs file's is), linked
 * as "net:[N]" is; kbound's own are the test's real ones. What the snapshot takes from outside
 * proc_root (sock_diag's list of this network's unix sockets, the files the fake links name) is
 * real and made by the test: a socket pair, files in the scratch folder, "/" as the kernel's root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "evidence/inspect-internal.h"
#include "base/facts.h"
#include "kbound/inspect.h"
#include "kbound/secrets.h"
#include "base/procfs.h"
#include "kbound/sandbox.h"
#include "tmp_tree.h"
#include "valgrind_skip.h"

/* Fake pids, above any pid_max, so none is a real process. */
#define LAUNCHER 90000001 /* kbound's child, bwrap's launcher */
#define INIT 90000002     /* bwrap's init, the sandbox's PID 1 */
#define KERNEL 90000003   /* the pinned kernel, init's child */
#define STRAY 90000004    /* in the sandbox's pid namespace, no descendant of init */
#define OUTSIDER 90000005 /* outside, in the sandbox's network namespace, holding one of its pipes */
#define BROKEN 90000006   /* outside, its namespace links unreadable */
#define GONE 90000007     /* init's child that ends while it is read: a stat, no status */
#define KERNEL_THREAD 90000103

#define CANARY "kb-canary-3f9e1d7a"
#define SHARED_PIPE "pipe:[777002]"   /* the kernel's and OUTSIDER's */
#define LAUNCHER_PIPE "pipe:[777001]" /* the kernel's and the launcher's */

typedef struct fake {
        tree *dir;
        char proc[PATH_MAX]; /* dir/proc: the target's proc_root */
        pid_t self;
        int pair[2];          /* a real socket pair: pair[0] kbound's, pair[1] the kernel's */
        uint64_t pair_ino[2]; /* their inodes */
        kb_secrets *secrets;
        kb_inspect_canary canaries[2];
        char canary_paths[2][PATH_MAX];
        kb_inspect_target t;
        json_object *snap; /* the test's snapshot, put at teardown */
        json_object *pre;  /* the test's pre-exec look, put at teardown */
} fake;

/* dir/proc/<pid>/<name> holding len bytes (len 0: strlen(text)). */
static void proc_file(fake *f, pid_t pid, const char *name, const char *text, size_t len) {
        char rel[PATH_MAX];
        assert_true(snprintf(rel, sizeof rel, "proc/%d/%s", (int) pid, name) < (int) sizeof rel);
        tmp_tree_write(f->dir->root, rel, text, len ? len : strlen(text));
}

static void proc_link(fake *f, pid_t pid, const char *name, const char *target) {
        char rel[PATH_MAX];
        assert_true(snprintf(rel, sizeof rel, "proc/%d/%s", (int) pid, name) < (int) sizeof rel);
        tmp_tree_link(f->dir->root, rel, target);
}

static uint64_t inode_of(const char *path) {
        struct stat st;
        if (stat(path, &st) < 0)
                fail_msg("stat %s: %s", path, strerror(errno));
        return (uint64_t) st.st_ino;
}

/* The inode of the fake namespace object (dir/nsobj/<object>), made when first asked for. */
static uint64_t fake_ns_ino(fake *f, const char *object) {
        char rel[128], path[PATH_MAX];
        snprintf(rel, sizeof rel, "nsobj/%s", object);
        tmp_tree_path(f->dir->root, rel, path);
        if (access(path, F_OK) < 0)
                tmp_tree_write(f->dir->root, rel, "", 0);
        return inode_of(path);
}

static uint64_t own_ns_ino(const char *type) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/ns/%s", type);
        return inode_of(path);
}

/* pid's ns/<type> as /proc has it, a link "<type>:[N]": here to a file beside it that is the
 * fake namespace object (a hard link of it: its inode is N) or, object NULL, a link to the
 * test's own namespace of that type (N its inode). */
static void fake_ns_under(fake *f, pid_t pid, const char *under, const char *type, const char *object) {
        uint64_t ino = object ? fake_ns_ino(f, object) : own_ns_ino(type);
        char name[96], text[64], path[PATH_MAX];
        snprintf(text, sizeof text, "%s:[%llu]", type, (unsigned long long) ino);
        snprintf(name, sizeof name, "%sns/%s", under, type);
        proc_link(f, pid, name, text);
        snprintf(name, sizeof name, "%sns/%s", under, text);
        if (!object) {
                char own[64];
                snprintf(own, sizeof own, "/proc/self/ns/%s", type);
                proc_link(f, pid, name, own);
                return;
        }
        char rel[128], obj[PATH_MAX];
        snprintf(rel, sizeof rel, "proc/%d/%s", (int) pid, name);
        tmp_tree_path(f->dir->root, rel, path);
        snprintf(obj, sizeof obj, "%s/nsobj/%s", f->dir->root, object);
        if (link(obj, path) < 0)
                fail_msg("link %s: %s", path, strerror(errno));
}

/* All seven of the namespaces of pid (under "": its own folder; "task/<tid>/": one of its threads):
 * objects[i] for kb_inspect_namespaces()[i] (NULL: kbound's own). */
static void fake_namespaces_under(fake *f, pid_t pid, const char *under, const char *const objects[NS_TYPES]) {
        const char *const *types = kb_inspect_namespaces();
        for (size_t i = 0; i < NS_TYPES; i++)
                fake_ns_under(f, pid, under, types[i], objects[i]);
}

static void fake_namespaces(fake *f, pid_t pid, const char *const objects[NS_TYPES]) {
        fake_namespaces_under(f, pid, "", objects);
}

/* The stat and status of thread tid of pid (task/<tid>/), its state letter (S, Z) and tracer. */
static void fake_thread(fake *f, pid_t pid, pid_t tid, char state, pid_t tracer) {
        char name[64], text[1024];
        snprintf(name, sizeof name, "task/%d/stat", (int) tid);
        snprintf(text, sizeof text, "%d (python3) %c %d %d %d 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 0\n", (int) tid,
                 state, (int) pid, (int) pid, (int) pid);
        proc_file(f, pid, name, text, 0);
        snprintf(name, sizeof name, "task/%d/status", (int) tid);
        snprintf(text, sizeof text,
                 "Name:\tpython3\nState:\t%c\nTgid:\t%d\nPid:\t%d\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\n"
                 "Gid:\t1000\t1000\t1000\t1000\nGroups:\t\nNSpid:\t%d\t9\nCapInh:\t0000000000000000\n"
                 "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\n"
                 "CapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t2\nTracerPid:\t%d\n",
                 state, (int) pid, (int) tid, (int) tid, (int) tracer);
        proc_file(f, pid, name, text, 0);
}

/* One fake process's stat and status. */
typedef struct fake_proc {
        pid_t pid, ppid, session;
        const char *comm;
        unsigned uid;
        const char *cap_eff;
        int no_new_privs, seccomp;
        pid_t nspid; /* its pid in the sandbox's namespace, 0 for none */
        long rss_kb, threads;
} fake_proc;

static void fake_process(fake *f, const fake_proc *p) {
        char text[2048], nspid[32] = "";
        snprintf(text, sizeof text, "%d (%s) S %d %d %d 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 0\n", (int) p->pid,
                 p->comm, (int) p->ppid, (int) p->session, (int) p->session);
        proc_file(f, p->pid, "stat", text, 0);
        if (p->nspid)
                snprintf(nspid, sizeof nspid, "\t%d", (int) p->nspid);
        snprintf(text, sizeof text,
                 "Name:\t%s\nState:\tS (sleeping)\nPPid:\t%d\nUid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\n"
                 "Groups:\t\nNSpid:\t%d%s\nNSsid:\t%d\nThreads:\t%ld\nVmHWM:\t%ld kB\nVmRSS:\t%ld kB\n"
                 "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n"
                 "SigIgn:\t0000000001001000\nSigCgt:\t0000000180000000\nCapInh:\t0000000000000000\n"
                 "CapPrm:\t%s\nCapEff:\t%s\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\n"
                 "NoNewPrivs:\t%d\nSeccomp:\t%d\nSeccomp_filters:\t%d\nTracerPid:\t0\n",
                 p->comm, (int) p->ppid, p->uid, p->uid, p->uid, p->uid, p->uid, p->uid, p->uid, p->uid, (int) p->pid,
                 nspid, (int) p->session, p->threads, p->rss_kb, p->rss_kb, p->cap_eff, p->cap_eff, p->no_new_privs,
                 p->seccomp, p->seccomp);
        proc_file(f, p->pid, "status", text, 0);
}

/* A zombie leader pid (its main thread has exited, State Z), the kernel's child, of its pid nspid
 * in the sandbox and two threads, with what every sandbox process has; its main thread's folder
 * says Z too. */
static void fake_zombie_leader(fake *f, pid_t pid, pid_t kernel, pid_t session, int nspid);

/* What every sandbox process has besides stat and status: environ (NULL: a folder, which cannot
 * be read as a file), cmdline, maps (none), uid_map, gid_map, limits, cgroup, an empty fd table, a
 * task folder with the main thread. */
static void fake_member_files(fake *f, pid_t pid, const char *env_text, size_t env_len, const char *cmdline,
                              size_t cmdline_len) {
        char task[64];
        snprintf(task, sizeof task, "proc/%d/environ", (int) pid);
        if (env_text)
                proc_file(f, pid, "environ", env_text, env_len);
        else
                tmp_tree_mkdir(f->dir->root, task);
        proc_file(f, pid, "cmdline", cmdline, cmdline_len);
        proc_file(f, pid, "maps", "", 0);
        proc_file(f, pid, "uid_map", "         0       1000          1\n", 0);
        proc_file(f, pid, "gid_map", "         0       1000          1\n", 0);
        proc_file(f, pid, "limits",
                  "Limit                     Soft Limit           Hard Limit           Units     \n"
                  "Max processes             512                  512                  processes \n"
                  "Max address space         unlimited            unlimited            bytes     \n",
                  0);
        proc_file(f, pid, "cgroup", "0::/kbound/team-a\n", 0);
        proc_file(f, pid, "personality", "00000000\n", 0);
        snprintf(task, sizeof task, "proc/%d/fd", (int) pid);
        tmp_tree_mkdir(f->dir->root, task);
        snprintf(task, sizeof task, "proc/%d/task/%d", (int) pid, (int) pid);
        tmp_tree_mkdir(f->dir->root, task);
}

/* The network tables of the sandbox's network namespace, as each of its processes shows them: a
 * listener of the kernel's, lo and no route (no IPv6: no ipv6_route). */
static void fake_sandbox_net(fake *f, pid_t pid) {
        proc_file(f, pid, "net/unix",
                  "Num       RefCount Protocol Flags    Type St Inode Path\n"
                  "0000000000000000: 00000002 00000000 00010000 0001 01 555001 /run/kbound/shell\n",
                  0);
        proc_file(f, pid, "net/dev",
                  "Inter-|   Receive                                                |  Transmit\n"
                  " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop "
                  "fifo colls carrier compressed\n"
                  "    lo:       0       0    0    0    0     0          0         0        0       0    0    0    "
                  "0     0       0          0\n",
                  0);
        proc_file(f, pid, "net/route",
                  "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n", 0);
        /* a kernel that speaks only TCP listening on its loopback (NET.tcp) */
        proc_file(f, pid, "net/tcp",
                  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
                  "   0: 0100007F:2329 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 555101 1 "
                  "0000000000000000 100 0 0 10 0\n",
                  0);
}

/* The mount of "/" as mountinfo shows it: "<id> <parent> <maj:min>". */
static void root_mount(char *buf, size_t size, long long *ret_id) {
        struct statx sx;
        assert_int_equal(statx(AT_FDCWD, "/", 0, STATX_MNT_ID, &sx), 0);
        assert_true(sx.stx_mask & STATX_MNT_ID);
        *ret_id = (long long) sx.stx_mnt_id;
        snprintf(buf, size, "%lld 1 %u:%u", *ret_id, sx.stx_dev_major, sx.stx_dev_minor);
}

static int setup(void **state) {
        fake *f = calloc(1, sizeof *f);
        void *dir = NULL;
        if (!f || tmp_tree_setup(&dir, "kb-fakeproc") < 0) {
                free(f);
                return -1;
        }
        f->dir = dir;
        f->self = getpid();
        snprintf(f->proc, sizeof f->proc, "%s/proc", f->dir->root);
        const char *root = f->dir->root;
        char path[PATH_MAX], text[4096];

        /* Every fake process's stat and status: pid, parent, session, name, uid, CapEff, NoNewPrivs,
         * Seccomp, its pid in the sandbox (NSpid; 0: none), VmRSS in kB, Threads. */
        const fake_proc procs[] = {
                {f->self, 1, f->self, "kbound", 0, "000001ffffffffff", 0, 0, 0, 9999, 1},
                {LAUNCHER, f->self, f->self, "bwrap", 1000, "0000000000000000", 0, 0, 0, 100, 1},
                {INIT, LAUNCHER, INIT, "bwrap", 1000, "0000000000000000", 1, 0, 1, 512, 1},
                {KERNEL, INIT, INIT, "python3", 1000, "0000000000000000", 1, 2, 2, 2048, 4},
                {STRAY, 1, STRAY, "sleep", 0, "00000000a80425fb", 0, 0, 7, 256, 1},
                {OUTSIDER, 1, OUTSIDER, "sshd", 0, "000001ffffffffff", 0, 0, 0, 1, 1},
                {BROKEN, 1, BROKEN, "cron", 0, "0", 0, 0, 0, 1, 1},
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(procs); i++)
                fake_process(f, &procs[i]);

        /* Real things the fake's links point at. */
        tmp_tree_write(root, "work/notes.txt", "notes\n", 6);
        tmp_tree_write(root, "work/lib.so", "ELF", 3);
        tmp_tree_write(root, "bin/bwrap", "#!", 2);
        tmp_tree_write(root, "bin/python3", "#!", 2);
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, f->pair), 0);
        for (int i = 0; i < 2; i++) {
                struct stat st;
                assert_int_equal(fstat(f->pair[i], &st), 0);
                f->pair_ino[i] = (uint64_t) st.st_ino;
        }

        /* kbound itself: its own namespaces, one of the pair, and its mount table (a cgroup2 mount
         * in the scratch folder, where the sandbox's cgroup's limits lie). */
        const char *const own[NS_TYPES] = {NULL};
        fake_namespaces(f, f->self, own);
        snprintf(text, sizeof text, "%d", (int) f->self);
        tmp_tree_link(root, "proc/self", text);
        snprintf(text, sizeof text, "socket:[%llu]", (unsigned long long) f->pair_ino[0]);
        proc_link(f, f->self, "fd/3", text);
        char root_line[128];
        long long root_id;
        root_mount(root_line, sizeof root_line, &root_id);
        snprintf(text, sizeof text,
                 "%s / / rw,relatime - ext4 /dev/root rw\n7 %lld 0:31 / %s/cg rw - cgroup2 cgroup2 rw\n", root_line,
                 root_id, root);
        proc_file(f, f->self, "mountinfo", text, 0);
        tmp_tree_write(root, "cg/kbound/memory.max", "524288\n", 7);
        tmp_tree_write(root, "cg/kbound/team-a/memory.max", "1048576\n", 8);
        tmp_tree_write(root, "cg/kbound/team-a/pids.max", "64\n", 3);

        /* The launcher: kbound's child running bwrap, with one of the kernel's pipes. */
        fake_namespaces(f, LAUNCHER, own);
        static const char argv[] = "bwrap\0--unshare-all\0--\0python3";
        proc_file(f, LAUNCHER, "cmdline", argv, sizeof argv);
        static const char env[] = "PATH=/usr/bin\0LANG=C.UTF-8";
        proc_file(f, LAUNCHER, "environ", env, sizeof env);
        snprintf(path, sizeof path, "%s/bin/bwrap", root);
        proc_link(f, LAUNCHER, "exe", path);
        proc_file(f, LAUNCHER, "maps",
                  "00400000-00452000 r-xp 00000000 fe:01 173521 /usr/bin/bwrap\n"
                  "00652000-00653000 r--p 00052000 fe:01 173521 /usr/bin/bwrap\n"
                  "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n",
                  0);
        proc_link(f, LAUNCHER, "fd/5", LAUNCHER_PIPE);

        /* The sandbox: init, the kernel, a stray process of its pid namespace, one that ends. */
        const char *const sandbox[NS_TYPES] = {"sbx-user", "sbx-mnt", "sbx-pid", "sbx-net", "sbx-ipc", NULL, NULL};
        const char *const stray[NS_TYPES] = {"sbx-user", "stray-mnt", "sbx-pid", "sbx-net", "sbx-ipc", NULL, NULL};
        fake_namespaces(f, INIT, sandbox);
        fake_member_files(f, INIT, NULL, 0, "bwrap", 0);
        snprintf(text, sizeof text, "%s / / ro,nosuid - ext4 /dev/root rw\n", root_line);
        proc_file(f, INIT, "mountinfo", text, 0);
        snprintf(text, sizeof text, "%d 0x5 0x7ffd 0x1 0x0 0x0 0x0 0x7ffd 0x7f00\n", (int) SYS_read); /* read(5, ...) */
        proc_file(f, INIT, "syscall", text, 0);

        fake_namespaces(f, KERNEL, sandbox);
        static const char kernel_env[] = "HOME=/home/sandbox\0TOKEN=" CANARY "\0LANG=C";
        static const char kernel_cmd[] = "python3\0-m\0ipykernel_launcher\0-f\0/run/kbound/kernel.json";
        fake_member_files(f, KERNEL, kernel_env, sizeof kernel_env, kernel_cmd, sizeof kernel_cmd);
        /* its personality (readable by a tracer: where the host may read it, the look keeps it) */
        proc_file(f, KERNEL, "personality", "00000000\n", 0);
        proc_link(f, KERNEL, "fd/0", "/dev/null");
        proc_file(f, KERNEL, "fdinfo/0", "pos:\t0\nflags:\t0100002\nmnt_id:\t25\nino:\t4\n", 0);
        proc_link(f, KERNEL, "fd/1", LAUNCHER_PIPE);
        proc_link(f, KERNEL, "fd/2", SHARED_PIPE);
        snprintf(path, sizeof path, "%s/work/notes.txt", root);
        proc_link(f, KERNEL, "fd/3", path);
        snprintf(text, sizeof text, "socket:[%llu]", (unsigned long long) f->pair_ino[1]);
        proc_link(f, KERNEL, "fd/4", text);
        proc_link(f, KERNEL, "fd/5", "anon_inode:[pidfd]");
        proc_file(f, KERNEL, "fdinfo/5", "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nPid:\t2\n", 0);
        snprintf(path, sizeof path, "%s/work", root);
        proc_link(f, KERNEL, "cwd", path);
        proc_link(f, KERNEL, "root", "/");
        snprintf(path, sizeof path, "%s/bin/python3", root);
        proc_link(f, KERNEL, "exe", path);
        /* a thread of its own working directory (unshare(CLONE_FS)) */
        snprintf(text, sizeof text, "task/%d/cwd", KERNEL_THREAD);
        proc_link(f, KERNEL, text, "/");
        snprintf(text, sizeof text, "task/%d/root", KERNEL_THREAD);
        proc_link(f, KERNEL, text, "/");
        /* that thread's status, its namespaces (its process's) and its descriptor table (empty) */
        fake_thread(f, KERNEL, KERNEL_THREAD, 'S', 0);
        snprintf(text, sizeof text, "task/%d/", KERNEL_THREAD);
        fake_namespaces_under(f, KERNEL, text, sandbox);
        snprintf(path, sizeof path, "proc/%d/task/%d/fd", KERNEL, KERNEL_THREAD);
        tmp_tree_mkdir(f->dir->root, path);
        /* its mount table: "/" as it is, a mount whose id is not the one there, one missing */
        snprintf(text, sizeof text,
                 "%s / / ro,nosuid - ext4 /dev/root rw\n"
                 "900001 %lld 0:4242 / / rw,nosuid,nodev - tmpfs tmpfs rw\n"
                 "900002 %lld 0:4243 / /kb-no-such-folder rw - tmpfs tmpfs rw\n",
                 root_line, root_id, root_id);
        proc_file(f, KERNEL, "mountinfo", text, 0);
        for (size_t i = 0; i < KB_ELEMENTSOF(procs); i++)
                if (procs[i].pid == INIT || procs[i].pid == KERNEL || procs[i].pid == STRAY)
                        fake_sandbox_net(f, procs[i].pid);

        static const char stray_cmd[] = "sleep\0" CANARY;
        fake_namespaces(f, STRAY, stray);
        fake_member_files(f, STRAY, "", 0, stray_cmd, sizeof stray_cmd);
        proc_link(f, STRAY, "root", "/");
        proc_file(f, STRAY, "mountinfo", "900100 1 0:4244 / / rw shared:3 master:2 propagate_from:1 - tmpfs tmpfs rw\n",
                  0);

        snprintf(text, sizeof text, "%d (python3) Z %d %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 0\n", GONE, KERNEL, INIT,
                 INIT);
        proc_file(f, GONE, "stat", text, 0);

        /* Outside: a process in the sandbox's network namespace holding one of its pipes, with a
         * bind mount of that namespace and the kernel's tmpfs in its mount table; and one whose
         * namespace links and mount table cannot be read. */
        const char *const outsider[NS_TYPES] = {NULL, "outsider-mnt", NULL, "sbx-net", NULL, NULL, NULL};
        fake_namespaces(f, OUTSIDER, outsider);
        proc_link(f, OUTSIDER, "fd/9", SHARED_PIPE);
        snprintf(text, sizeof text,
                 "800001 1 0:4242 / / rw - tmpfs tmpfs rw\n"
                 "800002 800001 0:4 net:[%llu] /run/netns/sbx rw - nsfs nsfs rw\n",
                 (unsigned long long) fake_ns_ino(f, "sbx-net"));
        proc_file(f, OUTSIDER, "mountinfo", text, 0);
        proc_link(f, BROKEN, "ns/user", "not a namespace");
        snprintf(path, sizeof path, "proc/%d/mountinfo", BROKEN);
        tmp_tree_mkdir(root, path);

        /* What the snapshot looks for. */
        assert_int_equal(kb_secrets_new(&f->secrets), 0);
        assert_int_equal(kb_secrets_add_token(f->secrets, "canary:env", CANARY), 0);
        snprintf(f->canary_paths[0], PATH_MAX, "%s/no-such-canary", root);
        snprintf(f->canary_paths[1], PATH_MAX, "%s/work/notes.txt", root);
        f->canaries[0] = (kb_inspect_canary){"credential file", f->canary_paths[0], "boundary.credentials"};
        f->canaries[1] = (kb_inspect_canary){"team canary", f->canary_paths[1], "boundary.cross_team"};
        f->t = (kb_inspect_target){.proc_root = f->proc,
                                   .init_pid = INIT,
                                   .kernel_pid = KERNEL,
                                   .launcher_pid = LAUNCHER,
                                   .pidns_ino = fake_ns_ino(f, "sbx-pid"),
                                   .secrets = (const kb_secrets *const *) &f->secrets,
                                   .n_secrets = 1,
                                   .canaries = f->canaries,
                                   .n_canaries = 2,
                                   .socket_claim = "boundary.sockets"};
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fake *f = *state;
        close(f->pair[0]);
        close(f->pair[1]);
        kb_secrets_destroy(&f->secrets);
        json_object_put(f->snap);
        json_object_put(f->pre);
        void *dir = f->dir;
        tree_teardown(&dir);
        free(f);
        return 0;
}

/* ---- reading the snapshot ---- */

/* o holds to facts.def's declaration of type, strictly: every required fact there, every fact of its
 * declared JSON type, and no key facts.def does not declare (a producer that spells a fact its own
 * way fails here). The problems are printed when it does not. */
static void assert_declared(json_object *o, kb_fact_object type, const char *what) {
        json_object *problems = json_object_new_array();
        int n = kb_fact_validate(o, type, true, problems, 64);
        if (n != 0) {
                for (size_t i = 0; i < json_object_array_length(problems); i++)
                        fprintf(stderr, "%s breaks facts.def's %s: %s\n", what, kb_fact_object_name(type),
                                json_object_get_string(json_object_array_get_idx(problems, i)));
                json_object_put(problems);
                fail_msg("%s: %d problem(s) against facts.def's %s", what, n, kb_fact_object_name(type));
        }
        json_object_put(problems);
}

/* A snapshot of f's tree, which kb_inspect_snapshot must answer with want, held to facts.def. */
static json_object *snapshot(fake *f, int want) {
        json_object_put(f->snap);
        f->snap = NULL;
        assert_int_equal(kb_inspect_snapshot(&f->t, "ready", &f->snap), want);
        assert_non_null(f->snap);
        assert_declared(f->snap, KB_FACT_OBJECT_LOOK, "the snapshot");
        return f->snap;
}

/* The look before exec of f's tree (there is no kernel yet), held to facts.def. */
static json_object *pre_exec(fake *f) {
        kb_inspect_target t = f->t;
        t.kernel_pid = 0;
        json_object_put(f->pre);
        f->pre = NULL;
        assert_int_equal(kb_inspect_pre_exec(&t, &f->pre), 0);
        assert_non_null(f->pre);
        assert_declared(f->pre, KB_FACT_OBJECT_LOOK, "the pre-exec look");
        return f->pre;
}

/* The facts are read by facts.def's names, as the judges read them: the test spells no key. */

/* The fact of o, which must be there. */
#define member(o, fact) member_of((o), (fact).id)
static json_object *member_of(json_object *o, kb_fact_id id) {
        json_object *v = kb_fact_member(o, id);
        if (!v)
                fail_msg("no %s.%s in %s", kb_fact_object_name(kb_fact_row(id)->object), kb_fact_row(id)->key,
                         json_object_to_json_string(o));
        return v;
}

#define int_at(o, fact) json_object_get_int64(member((o), (fact)))
#define str_at(o, fact) json_object_get_string(member((o), (fact)))
#define bool_at(o, fact) json_object_get_boolean(member((o), (fact)))

/* The entry key of map, a fact whose keys are data (a namespace's name, a device), which must be
 * there. */
static json_object *entry(json_object *map, const char *key) {
        json_object *v = json_object_object_get(map, key);
        if (!v)
                fail_msg("no \"%s\" in %s", key, json_object_to_json_string(map));
        return v;
}

/* The element of array a whose integer fact is value, or NULL. */
#define find_by(a, fact, value) find_by_id((a), (fact).id, (value))
static json_object *find_by_id(json_object *a, kb_fact_id id, int64_t value) {
        for (size_t i = 0; a && i < json_object_array_length(a); i++) {
                json_object *v = kb_fact_member(json_object_array_get_idx(a, i), id);
                if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) == value)
                        return json_object_array_get_idx(a, i);
        }
        return NULL;
}

static json_object *process(json_object *snap, pid_t pid) {
        json_object *p = find_by(member(snap, FACT_LOOK_PROCESSES), FACT_PROCESS_PID, pid);
        if (!p)
                fail_msg("process %d is not among %s", (int) pid,
                         json_object_to_json_string(member(snap, FACT_LOOK_PROCESSES)));
        return p;
}

/* Whether errors holds an ERROR of kind what (with suffix) saying error. */
static bool has_error(json_object *errors, kb_fact_what what, const char *suffix, const char *error) {
        char words[256];
        kb_fact_what_words(what, suffix, words, sizeof words);
        for (size_t i = 0; i < json_object_array_length(errors); i++) {
                json_object *e = json_object_array_get_idx(errors, i);
                if (strcmp(kb_fact_str_or(e, FACT_ERROR_WHAT, ""), words) == 0 &&
                    strcmp(kb_fact_str_or(e, FACT_ERROR_ERROR, ""), error) == 0)
                        return true;
        }
        return false;
}

/* o's path fact names path, and o's inode fact is the very file there. */
#define assert_names_file(o, path_fact, ino_fact, path)                                                                \
        do {                                                                                                           \
                assert_string_equal(str_at((o), (path_fact)), (path));                                                 \
                assert_int_equal(int_at((o), (ino_fact)), inode_of(path));                                             \
        } while (0)

static bool has_string(json_object *a, const char *s) {
        for (size_t i = 0; a && i < json_object_array_length(a); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(a, i)), s) == 0)
                        return true;
        return false;
}

static bool has_int(json_object *a, int64_t v) {
        for (size_t i = 0; a && i < json_object_array_length(a); i++)
                if (json_object_get_int64(json_object_array_get_idx(a, i)) == v)
                        return true;
        return false;
}

#define assert_error(errors, what, suffix, error)                                                                      \
        do {                                                                                                           \
                if (!has_error((errors), (what), (suffix), (error)))                                                   \
                        fail_msg("no {%s%s%s: %s} in %s", kb_fact_what_text(what), (suffix) ? "/" : "",                \
                                 (suffix) ? (const char *) (suffix) : "", (error),                                     \
                                 json_object_to_json_string(errors));                                                  \
        } while (0)

/* ---- the tests ---- */

/* init, its descendants and the stray of its pid namespace are the sandbox's, nobody else; each
 * with what its status and stat say; the one that ended is counted, not listed. */
static void test_processes(void **state) {
        fake *f = *state;
        json_object *snap = snapshot(f, 0);
        assert_string_equal(str_at(snap, FACT_LOOK_LABEL), "ready");
        json_object *procs = member(snap, FACT_LOOK_PROCESSES);
        assert_int_equal(json_object_array_length(procs), 3);
        json_object *kernel = process(snap, KERNEL), *stray = process(snap, STRAY);
        (void) process(snap, INIT);
        assert_null(find_by(procs, FACT_PROCESS_PID, LAUNCHER));
        assert_null(find_by(procs, FACT_PROCESS_PID, OUTSIDER));
        assert_null(find_by(procs, FACT_PROCESS_PID, f->self));
        assert_int_equal(int_at(snap, FACT_LOOK_VANISHED), 1);

        assert_string_equal(str_at(kernel, FACT_PROCESS_NAME), "python3");
        assert_int_equal(int_at(kernel, FACT_PROCESS_PPID), INIT);
        assert_int_equal(int_at(kernel, FACT_PROCESS_SESSION), INIT);
        assert_int_equal(json_object_get_int64(json_object_array_get_idx(member(kernel, FACT_PROCESS_UID), 1)), 1000);
        assert_string_equal(str_at(kernel, FACT_PROCESS_CAP_EFF), "0000000000000000");
        assert_int_equal(int_at(kernel, FACT_PROCESS_NO_NEW_PRIVS), 1);
        assert_int_equal(int_at(kernel, FACT_PROCESS_SECCOMP), 2);
        json_object *nspid = member(kernel, FACT_PROCESS_NSPID);
        assert_int_equal(json_object_array_length(nspid), 2);
        assert_int_equal(json_object_get_int64(json_object_array_get_idx(nspid, 1)), 2);
        assert_string_equal(str_at(kernel, FACT_PROCESS_UID_MAP), "0 1000 1");
        assert_string_equal(str_at(kernel, FACT_PROCESS_CMDLINE),
                            "python3 -m ipykernel_launcher -f /run/kbound/kernel.json");
        assert_string_equal(str_at(stray, FACT_PROCESS_CAP_EFF), "00000000a80425fb");
        assert_int_equal(json_object_get_int64(json_object_array_get_idx(member(stray, FACT_PROCESS_UID), 0)), 0);
}

/* The canary is found by name in the kernel's environment and the stray's command line, nowhere
 * else; an environment that cannot be read is an error of that process, not an absence. */
static void test_secrets_and_errors(void **state) {
        fake *f = *state;
        json_object *snap = snapshot(f, 0);
        json_object *kernel = process(snap, KERNEL), *stray = process(snap, STRAY), *init = process(snap, INIT);
        assert_true(has_string(member(kernel, FACT_PROCESS_ENVIRON_SECRETS), "canary:env"));
        assert_int_equal(json_object_array_length(member(kernel, FACT_PROCESS_CMDLINE_SECRETS)), 0);
        assert_true(has_string(member(stray, FACT_PROCESS_CMDLINE_SECRETS), "canary:env"));
        assert_int_equal(json_object_array_length(member(stray, FACT_PROCESS_ENVIRON_SECRETS)), 0);
        assert_false(kb_fact_has(init, FACT_PROCESS_ENVIRON_SECRETS));
        assert_error(member(init, FACT_PROCESS_ERRORS), WHAT_ENVIRON, NULL, "Invalid argument");
        assert_int_equal(json_object_array_length(member(init, FACT_PROCESS_CMDLINE_SECRETS)), 0);
}

/* Namespaces: the kernel's user, mnt, pid, net and ipc are the sandbox's own, its uts and cgroup
 * are kbound's; the sandbox's are listed, kbound's are not; the outsider in its network namespace
 * is a holder, the one whose links cannot be read is counted as unreadable. */
static void test_namespaces(void **state) {
        fake *f = *state;
        json_object *snap = snapshot(f, 0);
        json_object *ns = member(process(snap, KERNEL), FACT_PROCESS_NS);
        uint64_t sbx_net = fake_ns_ino(f, "sbx-net");
        assert_int_equal(json_object_get_int64(entry(ns, "net")), sbx_net);
        assert_true((uint64_t) json_object_get_int64(entry(ns, "net")) != own_ns_ino("net"));
        assert_int_equal(json_object_get_int64(entry(ns, "user")), fake_ns_ino(f, "sbx-user"));
        assert_int_equal(json_object_get_int64(entry(ns, "uts")), own_ns_ino("uts"));
        assert_int_equal(json_object_get_int64(entry(ns, "cgroup")), own_ns_ino("cgroup"));
        assert_int_equal(kb_inspect_process_ns(process(snap, STRAY), NS_MNT), fake_ns_ino(f, "stray-mnt"));

        json_object *listed = member(snap, FACT_LOOK_SANDBOX_NAMESPACES);
        assert_true(has_int(listed, (int64_t) sbx_net));
        assert_true(has_int(listed, (int64_t) fake_ns_ino(f, "stray-mnt")));
        assert_false(has_int(listed, (int64_t) own_ns_ino("uts")));
        assert_false(has_int(listed, (int64_t) own_ns_ino("net")));

        /* A fake namespace answers no NS_GET_USERNS: recorded, not guessed; kbound's own answers. */
        assert_error(member(process(snap, KERNEL), FACT_PROCESS_ERRORS), WHAT_NS_OWNERS, "net",
                     "Inappropriate ioctl for device");
        assert_non_null(entry(member(process(snap, KERNEL), FACT_PROCESS_NS_OWNERS), "uts"));

        json_object *holders = member(snap, FACT_LOOK_NS_HOLDERS);
        assert_int_equal(json_object_array_length(holders), 1);
        json_object *h = json_object_array_get_idx(holders, 0);
        assert_int_equal(int_at(h, FACT_NS_HOLDER_PID), OUTSIDER);
        assert_string_equal(str_at(h, FACT_NS_HOLDER_NAME), "sshd");
        assert_string_equal(str_at(h, FACT_NS_HOLDER_NS), "net");
        assert_int_equal(int_at(h, FACT_NS_HOLDER_INODE), sbx_net);
        json_object *outside = member(snap, FACT_LOOK_NS_OUTSIDE);
        assert_int_equal(int_at(outside, FACT_NS_OUTSIDE_READ), 2); /* the launcher and the outsider; not kbound */
        assert_int_equal(int_at(outside, FACT_NS_OUTSIDE_UNREADABLE), 1);
        assert_int_equal(int_at(outside, FACT_NS_OUTSIDE_HOLDERS), 1);
}

/* Descriptors: each is what its link names (a device, a pipe, a file, a socket), with its fdinfo
 * where there is one; a pipe the outsider holds too is a channel out, the launcher's is its own;
 * the kernel's end of kbound's socket pair is one of kbound's network's sockets, its peer kbound's. */
static void test_descriptors(void **state) {
        fake *f = *state;
        json_object *snap = snapshot(f, 0);
        json_object *fds = member(process(snap, KERNEL), FACT_PROCESS_FDS);
        assert_int_equal(json_object_array_length(fds), 6);
        json_object *null = find_by(fds, FACT_FD_FD, 0), *pipe = find_by(fds, FACT_FD_FD, 2),
                    *file = find_by(fds, FACT_FD_FD, 3);
        assert_string_equal(str_at(null, FACT_FD_TARGET), "/dev/null");
        assert_string_equal(str_at(null, FACT_FD_TYPE), "chr");
        assert_string_equal(str_at(null, FACT_FD_RDEV), "1:3");
        assert_int_equal(int_at(null, FACT_FD_FLAGS), 0100002);
        assert_int_equal(int_at(null, FACT_FD_MNT_ID), 25);
        assert_string_equal(str_at(pipe, FACT_FD_TARGET), SHARED_PIPE);
        assert_true(kb_fact_has(pipe, FACT_FD_STAT_ERROR));
        assert_string_equal(str_at(pipe, FACT_FD_FDINFO_ERROR), "unreadable");
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/work/notes.txt", f->dir->root);
        assert_string_equal(str_at(file, FACT_FD_TYPE), "reg");
        assert_int_equal(int_at(file, FACT_FD_INO), inode_of(path));
        json_object *pidfd = find_by(fds, FACT_FD_FD, 5); /* fdinfo names the process a pidfd refers to */
        assert_int_equal(int_at(pidfd, FACT_FD_PID), 2);
        assert_true(kb_fact_has(pidfd, FACT_FD_STAT_ERROR));

        json_object *channels = member(snap, FACT_LOOK_OUTSIDE_CHANNELS);
        assert_int_equal(json_object_array_length(channels), 1);
        json_object *c = json_object_array_get_idx(channels, 0);
        assert_string_equal(str_at(c, FACT_OUTSIDE_CHANNEL_TARGET), SHARED_PIPE);
        assert_int_equal(int_at(c, FACT_OUTSIDE_CHANNEL_PID), OUTSIDER);
        assert_int_equal(int_at(c, FACT_OUTSIDE_CHANNEL_FD), 9);

        json_object *inodes = member(member(snap, FACT_LOOK_LAUNCHER), FACT_LAUNCHER_OUTSIDE_INODES);
        char own_socket[40];
        snprintf(own_socket, sizeof own_socket, "socket:[%llu]", (unsigned long long) f->pair_ino[0]);
        assert_true(has_string(inodes, LAUNCHER_PIPE));
        assert_true(has_string(inodes, own_socket));
        assert_false(has_string(inodes, SHARED_PIPE));

        assert_true(has_int(member(snap, FACT_LOOK_KBOUND_SOCKETS), (int64_t) f->pair_ino[0]));
        json_object *held =
                find_by(member(snap, FACT_LOOK_KBOUND_NET_SOCKETS), FACT_SOCKET_INODE, (int64_t) f->pair_ino[1]);
        if (!held)
                fail_msg("the kernel's socket is not in %s",
                         json_object_to_json_string(member(snap, FACT_LOOK_KBOUND_NET_SOCKETS)));
        assert_int_equal(int_at(held, FACT_SOCKET_PEER), f->pair_ino[0]);
        json_object *peer = json_object_array_get_idx(member(held, FACT_SOCKET_PEER_HELD_BY), 0);
        assert_int_equal(int_at(peer, FACT_HOLDER_PID), f->self);
        assert_string_equal(str_at(peer, FACT_HOLDER_SIDE), "kbound");
}

/* The launcher is init's parent: its command line, its environment as digests, its program and
 * the files it maps, each once. */
static void test_launcher(void **state) {
        fake *f = *state;
        json_object *snap = snapshot(f, 0);
        json_object *l = member(snap, FACT_LOOK_LAUNCHER);
        assert_int_equal(int_at(l, FACT_LAUNCHER_PID), LAUNCHER);
        assert_int_equal(int_at(l, FACT_LAUNCHER_PPID), f->self);
        assert_int_equal(int_at(l, FACT_LAUNCHER_SPAWNED), LAUNCHER);
        json_object *argv = member(l, FACT_LAUNCHER_ARGV);
        assert_int_equal(json_object_array_length(argv), 4);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(argv, 1)), "--unshare-all");
        char *const env[] = {"PATH=/usr/bin", "LANG=C.UTF-8", NULL};
        json_object *want = kb_inspect_env_digests(env);
        assert_true(json_object_equal(member(l, FACT_LAUNCHER_ENVIRON), want));
        json_object_put(want);
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/bin/bwrap", f->dir->root);
        assert_names_file(member(l, FACT_LAUNCHER_EXE), FACT_FILE_ID_PATH, FACT_FILE_ID_INO, path);
        json_object *maps = member(l, FACT_LAUNCHER_MAP_FILES);
        assert_int_equal(json_object_array_length(maps), 1);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(maps, 0)), "254:1:173521");
}

/* Resources: the rlimits and cgroup each process shows, the limit in force up the cgroup's path in
 * kbound's cgroup2 mount, and the memory and tasks of the whole sandbox. */
static void test_resources(void **state) {
        fake *f = *state;
        json_object *snap = snapshot(f, 0);
        json_object *kernel = process(snap, KERNEL);
        assert_int_equal(int_at(member(kernel, FACT_PROCESS_LIMITS), FACT_PROC_LIMITS_NPROC), 512);
        assert_int_equal(int_at(member(kernel, FACT_PROCESS_LIMITS), FACT_PROC_LIMITS_AS), -1);
        assert_string_equal(str_at(member(kernel, FACT_PROCESS_CGROUPS), FACT_PROC_CGROUPS_UNIFIED), "/kbound/team-a");
        json_object *res = member(snap, FACT_LOOK_RESOURCES);
        assert_int_equal(int_at(res, FACT_RESOURCES_RSS_BYTES), (2048 + 512 + 256) * 1024);
        assert_int_equal(int_at(res, FACT_RESOURCES_TASKS), 4 + 1 + 1);
        json_object *cg = entry(member(res, FACT_RESOURCES_CGROUPS), "unified:/kbound/team-a");
        assert_int_equal(int_at(cg, FACT_CGROUP_MEMORY_MAX), 524288);
        assert_int_equal(int_at(cg, FACT_CGROUP_PIDS_MAX), 64);
}

/* Mount tables: the kernel's, each mount point proven to be that mount's root or why not; the
 * stray's namespace's table by its inode; which of their filesystems a namespace outside holds, and
 * the outsider's bind mount of the sandbox's network namespace. The kernel's own thread with its
 * own working directory, and the files it maps, placed in its view. */
static void test_mounts(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect_snapshot", "test_mounts");
        fake *f = *state;
        json_object *snap = snapshot(f, 0);
        json_object *mounts = member(snap, FACT_LOOK_MOUNTS);
        assert_int_equal(json_object_array_length(mounts), 3);
        json_object *root = json_object_array_get_idx(mounts, 0);
        struct stat st;
        assert_int_equal(stat("/", &st), 0);
        if (!kb_fact_has(root, FACT_MOUNT_TARGET))
                fail_msg("\"/\" not proven: %s", json_object_to_json_string(root));
        assert_int_equal(int_at(member(root, FACT_MOUNT_TARGET), FACT_STAT_INO), st.st_ino);
        assert_non_null(strstr(str_at(json_object_array_get_idx(mounts, 1), FACT_MOUNT_TARGET_ERROR),
                               "a different mount is there"));
        assert_non_null(strstr(str_at(json_object_array_get_idx(mounts, 2), FACT_MOUNT_TARGET_ERROR),
                               "No such file or directory"));
        char key[32];
        snprintf(key, sizeof key, "%llu", (unsigned long long) fake_ns_ino(f, "stray-mnt"));
        json_object *stray_table = entry(member(snap, FACT_LOOK_MOUNT_TABLES), key);
        assert_string_equal(str_at(json_object_array_get_idx(stray_table, 0), FACT_MOUNT_DEV), "0:4244");

        json_object *outside = member(snap, FACT_LOOK_OUTSIDE_MOUNTS);
        json_object *devices = member(outside, FACT_OUTSIDE_MOUNTS_DEVICES);
        char root_dev[32];
        snprintf(root_dev, sizeof root_dev, "%s", str_at(root, FACT_MOUNT_DEV));
        assert_int_equal(json_object_get_int64(entry(devices, root_dev)), f->self);
        assert_int_equal(json_object_get_int64(entry(devices, "0:4242")), OUTSIDER);
        assert_null(json_object_object_get(devices, "0:4243"));
        assert_null(json_object_object_get(devices, "0:4244"));
        assert_int_equal(int_at(outside, FACT_OUTSIDE_MOUNTS_NAMESPACES), 2);
        assert_int_equal(int_at(outside, FACT_OUTSIDE_MOUNTS_UNREADABLE), 1);
        json_object *ns_mounts = member(snap, FACT_LOOK_NS_MOUNTS);
        assert_int_equal(json_object_array_length(ns_mounts), 1);
        assert_int_equal(int_at(json_object_array_get_idx(ns_mounts, 0), FACT_NS_MOUNT_PID), OUTSIDER);
        assert_string_equal(str_at(json_object_array_get_idx(ns_mounts, 0), FACT_NS_MOUNT_MOUNTPOINT),
                            "/run/netns/sbx");

        json_object *refs = member(process(snap, KERNEL), FACT_PROCESS_REFS);
        char work[PATH_MAX];
        snprintf(work, sizeof work, "%s/work", f->dir->root);
        assert_names_file(member(refs, FACT_REFS_CWD), FACT_REF_LINK_TARGET, FACT_REF_LINK_INO, work);
        json_object *threads = member(refs, FACT_REFS_THREADS);
        assert_int_equal(json_object_array_length(threads), 1);
        assert_int_equal(int_at(json_object_array_get_idx(threads, 0), FACT_THREAD_REF_TID), KERNEL_THREAD);
}

/* The kernel's maps: the library mapped three times over, one of its pages shared and writable,
 * a library missing in its view, and a deleted file. */
static void fake_maps_with(fake *f, const char *extra) {
        char lib[PATH_MAX], text[4 * PATH_MAX];
        struct stat st;
        snprintf(lib, sizeof lib, "%s/work/lib.so", f->dir->root);
        assert_int_equal(stat(lib, &st), 0);
        unsigned maj = major(st.st_dev), min = minor(st.st_dev);
        snprintf(text, sizeof text,
                 "7f0000000000-7f0000001000 r-xp 00000000 %02x:%02x %llu %s\n"
                 "7f0000001000-7f0000002000 r--p 00001000 %02x:%02x %llu %s\n"
                 "7f0000002000-7f0000003000 rw-s 00000000 %02x:%02x %llu %s\n"
                 "7f0000003000-7f0000004000 r-xp 00000000 08:01 4242 /kb-no-such-folder/lib.so\n"
                 "7f0000004000-7f0000005000 r-xp 00000000 08:01 4343 %s/work/old.so (deleted)\n%s",
                 maj, min, (unsigned long long) st.st_ino, lib, maj, min, (unsigned long long) st.st_ino, lib, maj, min,
                 (unsigned long long) st.st_ino + 1, lib, f->dir->root, extra);
        proc_file(f, KERNEL, "maps", text, 0);
}

static void fake_maps(fake *f) {
        fake_maps_with(f, "");
}

/* The maps the kernel holds, each placed in its view: the very file, another file at its path,
 * nothing there, or a deleted one (not looked up). */
static void test_maps(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect_snapshot", "test_maps");
        fake *f = *state;
        fake_maps(f);
        json_object *snap = snapshot(f, 0);
        json_object *maps = member(member(process(snap, KERNEL), FACT_PROCESS_REFS), FACT_REFS_MAPS);
        assert_int_equal(json_object_array_length(maps), 4); /* r-xp and r--p are one kind */
        json_object *same = json_object_array_get_idx(maps, 0), *other = json_object_array_get_idx(maps, 1),
                    *none = json_object_array_get_idx(maps, 2), *gone = json_object_array_get_idx(maps, 3);
        assert_string_equal(str_at(same, FACT_MAPPING_REACH), "same");
        assert_string_equal(str_at(other, FACT_MAPPING_REACH), "other");
        assert_true(bool_at(other, FACT_MAPPING_SHARED));
        assert_true(bool_at(other, FACT_MAPPING_WRITABLE));
        assert_string_equal(str_at(none, FACT_MAPPING_REACH), "none");
        assert_true(bool_at(gone, FACT_MAPPING_DELETED));
        assert_false(kb_fact_has(gone, FACT_MAPPING_REACH));
}

/* A shared mapping that is read-only now: smaps, read a line at a time, says whether the process
 * may make it writable ("mw" among its VmFlags), for each such mapping by its own flags; without
 * smaps, the look says it could not read it and claims nothing either way. */
static void test_maps_vm_flags(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect_snapshot", "test_maps_vm_flags");
        fake *f = *state;
        char lib[PATH_MAX], maps[4 * PATH_MAX], smaps[16 * PATH_MAX], fields[1024] = "";
        struct stat st;
        snprintf(lib, sizeof lib, "%s/work/lib.so", f->dir->root);
        assert_int_equal(stat(lib, &st), 0);
        unsigned maj = major(st.st_dev), min = minor(st.st_dev);
        unsigned long long ino = (unsigned long long) st.st_ino;
        /* two shared read-only mappings of two files, and a private one between them */
        snprintf(maps, sizeof maps,
                 "7f0000000000-7f0000001000 r--s 00000000 %02x:%02x %llu %s\n"
                 "7f0000001000-7f0000002000 r-xp 00000000 %02x:%02x %llu %s\n"
                 "7f0000002000-7f0000003000 r--s 00000000 %02x:%02x %llu %s\n",
                 maj, min, ino, lib, maj, min, ino, lib, maj, min, ino + 1, lib);
        proc_file(f, KERNEL, "maps", maps, 0);
        /* smaps: each line of maps, some twenty fields, VmFlags last */
        for (int i = 0; i < 20; i++)
                snprintf(fields + strlen(fields), sizeof fields - strlen(fields), "Field%02d:            4 kB\n", i);
        char *line[3];
        char *copy = strdup(maps);
        assert_non_null(copy);
        line[0] = strtok(copy, "\n");
        line[1] = strtok(NULL, "\n");
        line[2] = strtok(NULL, "\n");
        snprintf(smaps, sizeof smaps,
                 "%s\n%sVmFlags: rd sh mr mw me ms sd\n%s\n%sVmFlags: rd ex mr mw me sd\n%s\n%sVmFlags: rd sh mr me ms "
                 "sd\n",
                 line[0], fields, line[1], fields, line[2], fields);
        free(copy);
        proc_file(f, KERNEL, "smaps", smaps, 0);
        json_object *snap = snapshot(f, 0);
        json_object *got = member(member(process(snap, KERNEL), FACT_PROCESS_REFS), FACT_REFS_MAPS);
        assert_int_equal(json_object_array_length(got), 3);
        json_object *may = json_object_array_get_idx(got, 0), *priv = json_object_array_get_idx(got, 1),
                    *may_not = json_object_array_get_idx(got, 2);
        assert_true(bool_at(may, FACT_MAPPING_SHARED));
        assert_false(bool_at(may, FACT_MAPPING_WRITABLE));
        assert_true(bool_at(may, FACT_MAPPING_MAY_WRITE));
        assert_false(kb_fact_has(priv, FACT_MAPPING_MAY_WRITE)); /* private: its own copy */
        assert_int_equal(int_at(may_not, FACT_MAPPING_INO), (int64_t) ino + 1);
        assert_false(bool_at(may_not, FACT_MAPPING_MAY_WRITE));

        /* smaps gone (the process ended between the two reads, say): the maps alone, flag unknown */
        char gone[PATH_MAX];
        snprintf(gone, sizeof gone, "%s/proc/%d/smaps", f->dir->root, (int) KERNEL);
        assert_int_equal(unlink(gone), 0);
        snap = snapshot(f, 0);
        json_object *kernel = process(snap, KERNEL);
        got = member(member(kernel, FACT_PROCESS_REFS), FACT_REFS_MAPS);
        assert_int_equal(json_object_array_length(got), 3);
        for (size_t i = 0; i < 3; i++)
                assert_false(kb_fact_has(json_object_array_get_idx(got, i), FACT_MAPPING_MAY_WRITE));
        assert_error(member(kernel, FACT_PROCESS_ERRORS), WHAT_SMAPS, NULL, "No such file or directory");
}

/* Canaries: one missing on the host is an error of its entry; one there with no host mount table
 * to place it in is said so, never taken as unexposed. (Its folder is named with openat2 first.) */
static void test_reach(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect_snapshot", "test_reach");
        fake *f = *state;
        json_object *snap = snapshot(f, 0);
        json_object *reach = member(snap, FACT_LOOK_REACH);
        json_object *missing = NULL, *unplaced = NULL;
        for (size_t i = 0; i < json_object_array_length(reach); i++) {
                json_object *e = json_object_array_get_idx(reach, i);
                const char *name = str_at(e, FACT_REACH_NAME);
                if (strcmp(str_at(e, FACT_REACH_KIND), "canary") != 0)
                        continue;
                if (strcmp(name, "credential file") == 0)
                        missing = e;
                else if (strcmp(name, "team canary") == 0)
                        unplaced = e;
        }
        assert_non_null(missing);
        assert_non_null(unplaced);
        assert_string_equal(str_at(missing, FACT_REACH_CLAIM), "boundary.credentials");
        assert_string_equal(str_at(missing, FACT_REACH_ERROR), "No such file or directory");
        assert_string_equal(str_at(unplaced, FACT_REACH_ERROR), "no host mount holds it");
        assert_int_equal(json_object_array_length(member(unplaced, FACT_REACH_EXPOSED)), 0);
}

/* A kernel that is not among the sandbox's processes: -ESRCH, and the snapshot still comes back
 * with the error in it. */
static void test_kernel_missing(void **state) {
        fake *f = *state;
        char path[PATH_MAX + 16];
        snprintf(path, sizeof path, "%s/%d", f->proc, KERNEL);
        tmp_tree_remove(path);
        json_object *snap = snapshot(f, -ESRCH);
        assert_error(member(snap, FACT_LOOK_ERRORS), WHAT_KERNEL_MISSING, NULL, "No such process");
        assert_null(find_by(member(snap, FACT_LOOK_PROCESSES), FACT_PROCESS_PID, KERNEL));
        (void) process(snap, INIT);
        json_object *none = NULL;
        assert_int_equal(kb_inspect_snapshot(NULL, "ready", &none), -EINVAL);
        assert_null(none);
}

/* The look before exec: the same walk of the processes, bwrap's init's system call (blocked reading
 * kbound's --block-fd) and mount table, each mount point proven through init's root as a
 * snapshot's are (a kernel that dies at start-up has its mounts judged on it), who outside holds
 * what, and the launcher; no kernel yet, so no network tables, reach or resources. */
static void test_pre_exec(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect_snapshot", "test_pre_exec");
        fake *f = *state;
        /* (The fake's init has no root otherwise: its unreadable root and mappings are looked at.) */
        proc_link(f, INIT, "root", "/");
        json_object *pre = pre_exec(f);
        assert_string_equal(str_at(pre, FACT_LOOK_LABEL), "pre-exec");
        (void) process(pre, INIT);
        json_object *init = member(pre, FACT_LOOK_INIT);
        assert_int_equal(int_at(init, FACT_INIT_PID), INIT);
        assert_int_equal(int_at(init, FACT_INIT_READS_FD), 5);
        json_object *mounts = member(pre, FACT_LOOK_MOUNTS);
        assert_int_equal(json_object_array_length(mounts), 1);
        struct stat st;
        assert_int_equal(stat("/", &st), 0);
        json_object *root = json_object_array_get_idx(mounts, 0);
        if (!kb_fact_has(root, FACT_MOUNT_TARGET))
                fail_msg("\"/\" of init's table not proven: %s", json_object_to_json_string(root));
        assert_int_equal(int_at(member(root, FACT_MOUNT_TARGET), FACT_STAT_INO), st.st_ino);
        assert_int_equal(int_at(member(pre, FACT_LOOK_LAUNCHER), FACT_LAUNCHER_PID), LAUNCHER);
        assert_non_null(member(pre, FACT_LOOK_NS_OUTSIDE));
        assert_false(kb_fact_has(pre, FACT_LOOK_NET));
        assert_false(kb_fact_has(pre, FACT_LOOK_REACH));
        assert_false(kb_fact_has(pre, FACT_LOOK_RESOURCES));
}

/* kbound's own facts, from the real /proc, hold to facts.def's HOST. */
static void test_host(void **state) {
        (void) state;
        json_object *host = NULL;
        assert_int_equal(kb_inspect_host("/proc", &host), 0);
        assert_declared(host, KB_FACT_OBJECT_HOST, "kb_inspect_host");
        assert_int_equal(int_at(host, FACT_HOST_PID), getpid());
        assert_int_equal(int_at(host, FACT_HOST_UID), getuid());
        assert_int_equal(json_object_get_int64(entry(member(host, FACT_HOST_NS), "net")), own_ns_ino("net"));
        assert_true(json_object_array_length(member(host, FACT_HOST_MOUNTS)) > 0);
        json_object_put(host);
}

/* ---- every fact declared is produced ---- */

static bool is_pseudo(kb_fact_object o) {
        return o == KB_FACT_OBJECT_NONE || o == KB_FACT_OBJECT_INTS || o == KB_FACT_OBJECT_STRS ||
               o == KB_FACT_OBJECT_BOOLS || o == KB_FACT_OBJECT_ANYS || o == KB_FACT_OBJECT_INT_LISTS ||
               o == KB_FACT_OBJECT_MOUNT_LISTS;
}

static void mark(json_object *o, kb_fact_object type, bool seen[]);

/* An element of an array or map fact of element type of. */
static void mark_element(json_object *e, kb_fact_object of, bool seen[]) {
        if (of == KB_FACT_OBJECT_MOUNT_LISTS) {
                for (size_t i = 0; json_object_is_type(e, json_type_array) && i < json_object_array_length(e); i++)
                        mark(json_object_array_get_idx(e, i), KB_FACT_OBJECT_MOUNT, seen);
        } else if (!is_pseudo(of) && json_object_is_type(e, json_type_object))
                mark(e, of, seen);
}

/* Every fact o (an object of type) holds, and those of the objects it holds, into seen. */
static void mark(json_object *o, kb_fact_object type, bool seen[]) {
        kb_fact_id first, end;
        kb_fact_rows_of(type, &first, &end);
        for (kb_fact_id id = first; id < end; id++) {
                json_object *v = kb_fact_member(o, id);
                const kb_fact_info *row = kb_fact_row(id);
                if (!v)
                        continue;
                seen[id] = true;
                if (row->kind == KB_FACT_OBJ)
                        mark_element(v, row->of, seen);
                else if (row->kind == KB_FACT_ARR)
                        for (size_t i = 0; json_object_is_type(v, json_type_array) && i < json_object_array_length(v);
                             i++)
                                mark_element(json_object_array_get_idx(v, i), row->of, seen);
                else if (row->kind == KB_FACT_MAP && json_object_is_type(v, json_type_object)) {
                        json_object_object_foreach(v, key, value) {
                                (void) key;
                                mark_element(value, row->of, seen);
                        }
                }
        }
}

/* The object types a look holds, at any depth. */
static void reachable_from(kb_fact_object type, bool reachable[]) {
        if (reachable[type])
                return;
        reachable[type] = true;
        kb_fact_id first, end;
        kb_fact_rows_of(type, &first, &end);
        for (kb_fact_id id = first; id < end; id++) {
                const kb_fact_info *row = kb_fact_row(id);
                kb_fact_object of = row->of == KB_FACT_OBJECT_MOUNT_LISTS ? KB_FACT_OBJECT_MOUNT : row->of;
                if ((row->kind == KB_FACT_OBJ || row->kind == KB_FACT_ARR || row->kind == KB_FACT_MAP) &&
                    !is_pseudo(of))
                        reachable_from(of, reachable);
        }
}

/* The facts a look may hold that no look of the fake makes: each only on an error path the fake does
 * not walk, or on another kind of machine. Anything else declared (and so read by some judge) that no
 * look produces is a fact produced by nobody, spelled one way by a reader and another by inspection,
 * or not at all. One listed here that a look of the fake does produce is listed wrongly, unless the
 * machine running the test can produce it (by_machine). */
static const struct {
        const char *fact;
        bool by_machine;
} made_elsewhere[] = {
        /* cgroup v1 controllers: the fake is a cgroup v2 host */
        {"PROC_CGROUPS.memory", false},
        {"PROC_CGROUPS.pids", false},
        {"PROC_CGROUPS.cpu", false},
        /* the launcher's program unreadable */
        {"LAUNCHER.exe_error", false},
        /* a pipe's other end polled through a copy of the end (pidfd_getfd): only of live
         * processes, never of the fake's (its pipes get pipe_error "not a live /proc");
         * test_descriptors' pipe cases hold it */
        {"FD.pipe_other_end", false},
        /* an inotify mark's file found in the holder's view by its handle: open_by_handle_at needs a
         * real filesystem's handle (the fake's is made up, so its mark gets place_error);
         * test_descriptors' inotify case holds it, as root */
        {"WATCH.at", true},
        /* the descriptor an epoll's watched file is, by kcmp: only live processes compare, never
         * the fake's; test_inspect's test_epoll_anonymous holds it */
        {"WATCH.held_at", false},
        /* a holder by one of its threads, a channel held by a thread or a socket of the sandbox's
         * network held outside: the fake's holders are main threads, and the outsider holds a pipe */
        {"NS_HOLDER.thread", false},
        {"OUTSIDE_CHANNEL.thread", false},
        {"OUTSIDE_CHANNEL.netns", false},
        /* the same open file in the sandbox and outside: kcmp compares live processes' descriptors,
         * the fake's are links in a folder (the memory file both map gives sandbox_pid) */
        {"OUTSIDE_CHANNEL.sandbox_fd", false},
        {"OUTSIDE_CHANNEL.sandbox_tid", false},
        /* a mount point that is a device (a /dev/null bound over a file): the fake's are folders */
        {"STAT.rdev", false},
        /* the seccomp filters in force, read by ptrace from real processes where the host may
         * (root): test_inspect_filter reads them, every fact of them */
        {"PROCESS.filter", false},
        {"FILTER.tid", false},
        {"FILTER.error", false},
        {"FILTER.built", false},
        {"FILTER.lengths", false},
        {"FILTER.kbound", false},
        {"FILTER.first_difference", false},
        {"FILTER.differences", false},
        {"FILTER.differences_more", false},
        {"FILTER_DIFF.abi", false},
        {"FILTER_DIFF.call", false},
        {"FILTER_DIFF.nr", false},
        {"FILTER_DIFF.built", false},
        {"FILTER_DIFF.in_force", false},
        /* a socket of another of the host's network namespaces: the fake's namespaces are files,
         * which kbound cannot enter (it reads them as text) */
        {"SANDBOX_SOCKET.netns_pid", false},
        {"SOCKET_END.netns_pid", false},
        /* a socket closed while a look reads it: the fake's links do not change under the look */
        {"SANDBOX_SOCKET.closed", false},
        /* a socket of the host's that the host could not place: what the machine running the test has */
        {"SOCKET.why", true},
        {"SOCKET.uid", true},
        {"SOCKET.held_by", true},
        /* the kernel's IPC namespace, read from inside it (a thread or helper joins it, opens
         * /proc/sysvipc/shm and makes a message-queue filesystem there): the fake's namespaces are
         * files, never joined; test_holds.sh's ipc holds read them from real sandboxes */
        {"IPC.mqueue_dev", false},
        {"IPC.shm", false},
        {"IPC.shm_foreign", false},
        {"SYSV_SHM.key", false},
        {"SYSV_SHM.id", false},
        {"SYSV_SHM.nattch", false},
        {"SYSV_SHM.sandbox", false},
        {"OUTSIDE_CHANNEL.sysv", false},
        /* a file of the sandbox's own filesystems held outside (stat through the holder's link: a
         * real device and inode), a working directory there: test_holds.sh's pty and cwd holds */
        {"OUTSIDE_CHANNEL.sandbox_fs", false},
        {"OUTSIDE_CHANNEL.link", false},
};

/* Whether row is in made_elsewhere (*ret_by_machine: as a fact the machine may produce). */
static bool made_elsewhere_has(const kb_fact_info *row, bool *ret_by_machine) {
        char name[128];
        snprintf(name, sizeof name, "%s.%s", kb_fact_object_name(row->object), row->key);
        for (size_t i = 0; i < KB_ELEMENTSOF(made_elsewhere); i++)
                if (strcmp(made_elsewhere[i].fact, name) == 0) {
                        *ret_by_machine = made_elsewhere[i].by_machine;
                        return true;
                }
        return false;
}

#define OTHER_NET 90000008       /* outside, in a network namespace kbound does not enter */
#define KERNEL_THREAD_2 90000104 /* a thread of the kernel's whose links cannot be read */
#define ZOMBIE 90000009          /* the kernel's child whose main thread has exited alone */
#define ZOMBIE_THREAD 90000105   /* its live thread */
#define ZOMBIE_2 90000010        /* another, whose live thread ends while it is read through it */
#define ZOMBIE_2_THREAD 90000106 /* that thread: a stat saying it runs, and nothing else */
#define MOVER 90000012           /* outside, holds the sandbox's net namespace at a new number when read again */
#define LETGO 90000013           /* outside, held it when first read, not when read again */
#define FORKER 90000014          /* outside, its children are born in the sandbox's pid namespace */
#define ENDING 90000015          /* outside, in a third network namespace, ending: its root is gone */
#define STAND_IN 90000016        /* another process of that namespace */
#define VIEWER 90000017          /* outside, in a fourth network namespace, its root a folder of the fake */
#define RUN_OTHER 90000018       /* kbound's child in a pid namespace of its own: another sandbox of the run */

#define FAKE_SOCKS 7 /* the real sockets fake_everything makes */

/* Three processes outside in kbound's own namespaces: MOVER holds the sandbox's network namespace
 * open at fd 7 when the walk reads its table (/proc/<pid>/fd) and at fd 12 when it is read again
 * (its thread's table: /proc/<pid>/task/<pid>/fd), as a holder that renumbers its descriptor does;
 * LETGO holds it at fd 7, then nowhere; FORKER's pid_for_children is the sandbox's pid namespace. */
static void fake_holders_outside(fake *f) {
        const char *const own[NS_TYPES] = {NULL};
        const fake_proc procs[] = {
                {MOVER, 1, MOVER, "mover", 0, "0", 0, 0, 0, 1, 1},
                {LETGO, 1, LETGO, "letgo", 0, "0", 0, 0, 0, 1, 1},
                {FORKER, 1, FORKER, "forker", 0, "0", 0, 0, 0, 1, 1},
        };
        char net[64], pid[64], path[64];
        snprintf(net, sizeof net, "net:[%llu]", (unsigned long long) fake_ns_ino(f, "sbx-net"));
        snprintf(pid, sizeof pid, "pid:[%llu]", (unsigned long long) fake_ns_ino(f, "sbx-pid"));
        for (size_t i = 0; i < KB_ELEMENTSOF(procs); i++) {
                fake_process(f, &procs[i]);
                fake_namespaces(f, procs[i].pid, own);
                snprintf(path, sizeof path, "proc/%d/task/%d/fd", (int) procs[i].pid, (int) procs[i].pid);
                tmp_tree_mkdir(f->dir->root, path);
        }
        proc_link(f, MOVER, "fd/7", net);
        snprintf(path, sizeof path, "task/%d/fd/12", MOVER);
        proc_link(f, MOVER, path, net);
        proc_link(f, LETGO, "fd/7", net);
        snprintf(path, sizeof path, "task/%d/ns/pid_for_children", FORKER);
        proc_link(f, FORKER, path, pid);
}

/* What the fake adds for the coverage: a host mount table (kb_inspect_host of the fake), the
 * kernel's endpoints, one of them connected to kbound (the kernel holding the accepted end) and
 * another connection to it waiting to be accepted (the kernel holding its listener and its
 * connecting socket), a datagram socket of the kernel's that one of kbound's is connected to, a
 * namespace kbound does not enter whose unix table is read as text, a thread whose links cannot be
 * read, and the kernel's maps. socks[FAKE_SOCKS] is closed by the caller. */
static void fake_everything(fake *f, int socks[FAKE_SOCKS], json_object **ret_host) {
        char path[PATH_MAX], text[2 * PATH_MAX], root_line[128], root_dev[32];
        long long root_id;
        /* shared memory the kernel maps and the outsider maps too (the same device and inode) */
#define SHM_MAP "7f0000006000-7f0000007000 rw-s 00000000 00:01 4545 /memfd:shm (deleted)\n"
        fake_maps_with(f, SHM_MAP);
        /* and, privately, the deleted library the kernel maps (one replaced while both ran): not a channel */
        proc_file(f, OUTSIDER, "maps", SHM_MAP "7f0000008000-7f0000009000 r-xp 00000000 08:01 4343 /old.so (deleted)\n",
                  0);
        fake_holders_outside(f); /* a holder by a descriptor */
#undef SHM_MAP
        /* what the kernel's anonymous objects reach, by their fdinfo: an epoll's watched file, an
         * inotify and a fanotify mark, an io_uring's registered files, a pidfd's NSpid */
        proc_link(f, KERNEL, "fd/7", "anon_inode:[eventpoll]");
        proc_file(f, KERNEL, "fdinfo/7",
                  "pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t1057\n"
                  "tfd:        4 events:       19 data:                4  pos:0 ino:2a03 sdev:8\n",
                  0);
        proc_link(f, KERNEL, "fd/8", "anon_inode:inotify");
        proc_file(f, KERNEL, "fdinfo/8",
                  "pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t1057\n"
                  "inotify wd:1 ino:2 sdev:800001 mask:fce ignored_mask:0 fhandle-bytes:8 fhandle-type:1 "
                  "f_handle:0200000000000000\n",
                  0);
        proc_link(f, KERNEL, "fd/9", "anon_inode:[fanotify]");
        proc_file(f, KERNEL, "fdinfo/9",
                  "pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t1057\n"
                  "fanotify flags:0 event-flags:0\nfanotify mnt_id:19 mflags:0 mask:3b ignored_mask:0\n",
                  0);
        proc_link(f, KERNEL, "fd/10", "anon_inode:[io_uring]");
        proc_file(f, KERNEL, "fdinfo/10", "pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t1057\nSqMask:\t0x3\nUserFiles:\t0\n",
                  0);
        proc_file(f, KERNEL, "fdinfo/5", "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nPid:\t2\nNSpid:\t2\n", 0);
        /* the scratch folder's work folder bound at /kb-work in the kernel's table and the stray's: a
         * canary in it is exposed there (not confirmed: there is no /kb-work to look through) */
        root_mount(root_line, sizeof root_line, &root_id);
        assert_int_equal(sscanf(root_line, "%*d %*d %31s", root_dev), 1);
        snprintf(text, sizeof text,
                 "%s / / ro,nosuid - ext4 /dev/root rw\n"
                 "900001 %lld 0:4242 / / rw,nosuid,nodev - tmpfs tmpfs rw\n"
                 "900002 %lld 0:4243 / /kb-no-such-folder rw - tmpfs tmpfs rw\n"
                 "900003 900001 %s %s/work /kb-work rw - ext4 /dev/root rw\n",
                 root_line, root_id, root_id, root_dev, f->dir->root);
        proc_file(f, KERNEL, "mountinfo", text, 0);
        snprintf(text, sizeof text,
                 "900100 1 0:4244 / / rw shared:3 master:2 propagate_from:1 - tmpfs tmpfs rw\n"
                 "900101 900100 %s %s/work /kb-work rw - ext4 /dev/root rw\n",
                 root_dev, f->dir->root);
        proc_file(f, STRAY, "mountinfo", text, 0);
        snprintf(path, sizeof path, "proc/%d/task/%d", KERNEL, KERNEL_THREAD_2);
        tmp_tree_mkdir(f->dir->root, path);
        /* the kernel's thread of its own: traced by the outsider, in a network namespace of its own,
         * a descriptor table of its own holding a file */
        fake_thread(f, KERNEL, KERNEL_THREAD, 'S', OUTSIDER);
        snprintf(text, sizeof text, "proc/%d/task/%d/ns/net", KERNEL, KERNEL_THREAD);
        tmp_tree_path(f->dir->root, text, path);
        assert_int_equal(unlink(path), 0);
        snprintf(text, sizeof text, "task/%d/", KERNEL_THREAD);
        fake_ns_under(f, KERNEL, text, "net", "thread-net");
        snprintf(path, sizeof path, "%s/work/notes.txt", f->dir->root);
        snprintf(text, sizeof text, "task/%d/fd/33", KERNEL_THREAD);
        proc_link(f, KERNEL, text, path);
        snprintf(text, sizeof text, "task/%d/fdinfo/33", KERNEL_THREAD);
        proc_file(f, KERNEL, text, "pos:\t0\nflags:\t0100000\nmnt_id:\t25\nino:\t4\n", 0);
        /* the zombie leader (State Z, nothing of its own) and its live thread, which holds the file */
        fake_zombie_leader(f, ZOMBIE, KERNEL, INIT, 9);
        const char *const sandbox_ns[NS_TYPES] = {"sbx-user", "sbx-mnt", "sbx-pid", "sbx-net", "sbx-ipc", NULL, NULL};
        fake_thread(f, ZOMBIE, ZOMBIE_THREAD, 'S', 0);
        char under[64];
        snprintf(under, sizeof under, "task/%d/", ZOMBIE_THREAD);
        fake_namespaces_under(f, ZOMBIE, under, sandbox_ns);
        static const struct {
                const char *name, *text;
        } thread_files[] = {
                {"maps", "x"},
                {"uid_map", "         0       1000          1\n"},
                {"gid_map", "         0       1000          1\n"},
                {"environ", "x"},
                {"cmdline", "x"},
                {"limits", "Max processes             512                  512                  processes \n"},
                {"cgroup", "0::/kbound/team-a\n"}};
        for (size_t i = 0; i < KB_ELEMENTSOF(thread_files); i++) {
                snprintf(text, sizeof text, "%s%s", under, thread_files[i].name);
                proc_file(f, ZOMBIE, text, thread_files[i].text, 0);
        }
        snprintf(text, sizeof text, "%scwd", under);
        proc_link(f, ZOMBIE, text, path);
        snprintf(text, sizeof text, "%sroot", under);
        proc_link(f, ZOMBIE, text, "/");
        snprintf(text, sizeof text, "%sfd/4", under);
        proc_link(f, ZOMBIE, text, path);
        char bin[PATH_MAX];
        snprintf(bin, sizeof bin, "%s/bin/python3", f->dir->root);
        snprintf(text, sizeof text, "%sexe", under);
        proc_link(f, ZOMBIE, text, bin);
        /* a second zombie leader, read through a thread whose files are gone (it ended) */
        fake_zombie_leader(f, ZOMBIE_2, KERNEL, INIT, 10);
        snprintf(text, sizeof text, "task/%d/stat", ZOMBIE_2_THREAD);
        snprintf(path, sizeof path, "%d (python3) S %d %d %d 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 2 0 0\n",
                 ZOMBIE_2_THREAD, KERNEL, INIT, INIT);
        proc_file(f, ZOMBIE_2, text, path, 0);
        assert_int_equal(kb_inspect_host(f->proc, ret_host), 0);
        f->t.host = *ret_host;

        static char runtime[PATH_MAX];
        static const char *const endpoints[] = {KB_SANDBOX_RUNTIME "/shell", KB_SANDBOX_RUNTIME "/control", NULL};
        snprintf(runtime, sizeof runtime, "%s/runtime", f->dir->root);
        tmp_tree_mkdir(f->dir->root, "runtime");
        f->t.own_runtime = runtime;
        f->t.endpoints = endpoints;
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        size_t len = strlen(runtime);
        if (len + sizeof "/shell" > sizeof sa.sun_path)
                fail_msg("the scratch folder's path is too long for a socket: %s", runtime);
        memcpy(sa.sun_path, runtime, len);
        memcpy(sa.sun_path + len, "/shell", sizeof "/shell");
        socks[0] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        socks[1] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_int_equal(bind(socks[0], (struct sockaddr *) &sa, sizeof sa), 0);
        assert_int_equal(listen(socks[0], 1), 0);
        assert_int_equal(connect(socks[1], (struct sockaddr *) &sa, sizeof sa), 0);
        socks[2] = accept4(socks[0], NULL, NULL, SOCK_CLOEXEC);
        assert_true(socks[2] >= 0);
        struct stat st;
        assert_int_equal(fstat(socks[1], &st), 0);
        snprintf(text, sizeof text, "socket:[%llu]", (unsigned long long) st.st_ino);
        proc_link(f, f->self, "fd/6", text);
        assert_int_equal(fstat(socks[2], &st), 0);
        snprintf(text, sizeof text, "socket:[%llu]", (unsigned long long) st.st_ino);
        proc_link(f, KERNEL, "fd/6", text);
        /* a listener of the kernel's with a connection it has not accepted: the kernel holds the
         * listener and the connecting socket */
        struct sockaddr_un pa = sa;
        memcpy(pa.sun_path + len, "/waits", sizeof "/waits");
        socks[6] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_int_equal(bind(socks[6], (struct sockaddr *) &pa, sizeof pa), 0);
        assert_int_equal(listen(socks[6], 4), 0);
        socks[3] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_int_equal(connect(socks[3], (struct sockaddr *) &pa, sizeof pa), 0);
        const struct {
                int sock;
                const char *fd;
        } kernel_holds[] = {{6, "fd/20"}, {3, "fd/21"}, {4, "fd/22"}};
        /* a datagram socket of the kernel's, bound to an abstract name, and one of kbound's
         * connected to it; the name the kernel's own (autobind), so two runs of the test never
         * want the same one */
        struct sockaddr_un da = {.sun_family = AF_UNIX};
        socklen_t da_len = sizeof da;
        socks[4] = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        socks[5] = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        assert_int_equal(bind(socks[4], (struct sockaddr *) &da, sizeof(sa_family_t)), 0);
        assert_int_equal(getsockname(socks[4], (struct sockaddr *) &da, &da_len), 0);
        assert_int_equal(connect(socks[5], (struct sockaddr *) &da, da_len), 0);
        for (size_t i = 0; i < KB_ELEMENTSOF(kernel_holds); i++) {
                assert_int_equal(fstat(socks[kernel_holds[i].sock], &st), 0);
                snprintf(text, sizeof text, "socket:[%llu]", (unsigned long long) st.st_ino);
                proc_link(f, KERNEL, kernel_holds[i].fd, text);
        }
        assert_int_equal(fstat(socks[5], &st), 0);
        snprintf(text, sizeof text, "socket:[%llu]", (unsigned long long) st.st_ino);
        proc_link(f, f->self, "fd/7", text);

        const fake_proc other = {OTHER_NET, 1, OTHER_NET, "netns-holder", 0, "0", 0, 0, 0, 1, 1};
        const char *const other_ns[NS_TYPES] = {NULL, NULL, NULL, "other-net", NULL, NULL, NULL};
        fake_process(f, &other);
        fake_namespaces(f, OTHER_NET, other_ns);
        /* a name holding a newline: the table is refused, its lines of the table's shape still read */
        snprintf(text, sizeof text,
                 "Num       RefCount Protocol Flags    Type St Inode Path\n"
                 "0000000000000000: 00000002 00000000 00010000 0001 01 666001 %s\n"
                 "0000000000000000: 00000002 00000000 00010000 0001 01 666002 /kb-no-such-folder/sock\n"
                 "0000000000000000: 00000002 00000000 00010000 0001 01 666003 @forged\nname\n",
                 sa.sun_path);
        proc_file(f, OTHER_NET, "net/unix", text, 0);
        proc_link(f, OTHER_NET, "root", "/");
        /* in kbound's mount namespace: its table is kbound's "/" */
        snprintf(text, sizeof text, "%s / / rw,relatime - ext4 /dev/root rw\n", root_line);
        proc_file(f, OTHER_NET, "mountinfo", text, 0);
}

/* A holder outside is confirmed by the object it holds, not by its descriptor's number: MOVER,
 * whose descriptor moved between the two reads, is a holder named at its new number; LETGO, which
 * let go, is transient; FORKER, whose children would be born in the sandbox, is a holder of the
 * sandbox's pid namespace by its pid_for_children. */
static void test_holders_followed(void **state) {
        fake *f = *state;
        fake_holders_outside(f);
        json_object *snap = snapshot(f, 0), *holders = member(snap, FACT_LOOK_NS_HOLDERS);
        json_object *mover = find_by(holders, FACT_NS_HOLDER_PID, MOVER),
                    *forker = find_by(holders, FACT_NS_HOLDER_PID, FORKER);
        assert_string_equal(str_at(mover, FACT_NS_HOLDER_NS), "net");
        assert_int_equal(int_at(mover, FACT_NS_HOLDER_FD), 12);
        assert_int_equal(int_at(mover, FACT_NS_HOLDER_INODE), fake_ns_ino(f, "sbx-net"));
        assert_string_equal(str_at(forker, FACT_NS_HOLDER_NS), "pid_for_children");
        assert_int_equal(int_at(forker, FACT_NS_HOLDER_INODE), fake_ns_ino(f, "sbx-pid"));
        assert_false(kb_fact_has(forker, FACT_NS_HOLDER_FD));
        for (size_t i = 0; i < json_object_array_length(holders); i++)
                assert_int_not_equal(int_at(json_object_array_get_idx(holders, i), FACT_NS_HOLDER_PID), LETGO);
        json_object *outside = member(snap, FACT_LOOK_NS_OUTSIDE);
        assert_int_equal(int_at(outside, FACT_NS_OUTSIDE_TRANSIENT), 1);
        assert_int_equal(int_at(outside, FACT_NS_OUTSIDE_HOLDERS), 3); /* OUTSIDER, MOVER, FORKER */
}

static void fake_zombie_leader(fake *f, pid_t pid, pid_t kernel, pid_t session, int nspid) {
        char text[1024];
        snprintf(text, sizeof text, "%d (python3) Z %d %d %d 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 2 0 0\n", (int) pid,
                 (int) kernel, (int) session, (int) session);
        proc_file(f, pid, "stat", text, 0);
        snprintf(text, sizeof text,
                 "Name:\tpython3\nState:\tZ (zombie)\nPPid:\t%d\nUid:\t1000\t1000\t1000\t1000\n"
                 "Gid:\t1000\t1000\t1000\t1000\nGroups:\t\nNSpid:\t%d\t%d\nThreads:\t2\nCapInh:\t0000000000000000\n"
                 "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\n"
                 "CapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t2\nTracerPid:\t0\n",
                 (int) kernel, (int) pid, nspid);
        proc_file(f, pid, "status", text, 0);
        fake_member_files(f, pid, "", 0, "python3", 0);
        fake_thread(f, pid, pid, 'Z', 0);
}

/* Every thread of a sandbox process is read for what the kernel keeps per thread: the kernel's
 * thread of its own working directory, tracer and descriptor table (a host file in it, listed
 * with the process's descriptors under its tid), one whose files cannot be read (noted, not
 * skipped), and a zombie leader read through its live thread. */
static void test_threads(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect_snapshot", "test_threads");
        fake *f = *state;
        int socks[FAKE_SOCKS] = {-1, -1, -1, -1, -1, -1, -1};
        json_object *host = NULL;
        fake_everything(f, socks, &host);
        json_object *snap = snapshot(f, 0), *kernel = process(snap, KERNEL),
                    *tasks = member(kernel, FACT_PROCESS_TASKS);
        json_object *t = find_by(tasks, FACT_TASK_TID, KERNEL_THREAD);
        if (!t)
                fail_msg("thread %d is not among %s", KERNEL_THREAD, json_object_to_json_string(tasks));
        assert_string_equal(str_at(t, FACT_TASK_STATE), "S");
        assert_int_equal(int_at(t, FACT_TASK_TRACER_PID), OUTSIDER);
        assert_int_equal(int_at(t, FACT_TASK_SECCOMP_FILTERS), 2);
        assert_true(bool_at(t, FACT_TASK_OWN_FILES)); /* kcmp cannot compare the fake's: read */
        entry(member(t, FACT_TASK_NS), "net");        /* a network namespace of its own */
        assert_null(json_object_object_get(member(t, FACT_TASK_NS), "mnt"));
        json_object *fd = NULL, *fds = member(kernel, FACT_PROCESS_FDS);
        for (size_t i = 0; i < json_object_array_length(fds); i++)
                if (kb_fact_int_or(json_object_array_get_idx(fds, i), FACT_FD_TID, 0) == KERNEL_THREAD)
                        fd = json_object_array_get_idx(fds, i);
        if (!fd)
                fail_msg("the thread's own table is not among the kernel's fds: %s", json_object_to_json_string(fds));
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/work/notes.txt", f->dir->root);
        assert_int_equal(int_at(fd, FACT_FD_FD), 33);
        assert_string_equal(str_at(fd, FACT_FD_TARGET), path);
        /* the thread whose files are missing: each noted, none taken as its end */
        t = find_by(tasks, FACT_TASK_TID, KERNEL_THREAD_2);
        if (!t)
                fail_msg("thread %d is not among %s", KERNEL_THREAD_2, json_object_to_json_string(tasks));
        assert_true(has_error(member(t, FACT_TASK_ERRORS), WHAT_STATUS, NULL, strerror(ENOENT)));
        /* the zombie leader: its links, maps and table read through its live thread */
        json_object *z = process(snap, ZOMBIE);
        assert_string_equal(str_at(z, FACT_PROCESS_STATE), "Z");
        assert_int_equal(int_at(z, FACT_PROCESS_READ_THROUGH), ZOMBIE_THREAD);
        assert_names_file(member(member(z, FACT_PROCESS_REFS), FACT_REFS_CWD), FACT_REF_LINK_TARGET, FACT_REF_LINK_INO,
                          path);
        json_object *zfds = member(z, FACT_PROCESS_FDS);
        assert_int_equal(json_object_array_length(zfds), 1);
        assert_string_equal(str_at(json_object_array_get_idx(zfds, 0), FACT_FD_TARGET), path);
        entry(member(z, FACT_PROCESS_NS), "pid");
        /* the one read through a thread that ended, its leader still there: the look says it could
         * not read it, never counts it as gone */
        assert_null(find_by(member(snap, FACT_LOOK_PROCESSES), FACT_PROCESS_PID, ZOMBIE_2));
        assert_true(has_error(member(snap, FACT_LOOK_ERRORS), WHAT_PROCESS_UNREAD, NULL, strerror(ESRCH)));
        for (int i = 0; i < FAKE_SOCKS; i++)
                close(socks[i]);
        f->t.host = NULL;
        json_object_put(host);
}

/* Every fact a look may hold (a fact of LOOK or of an object a look holds, at any depth) is produced
 * by a look of the fake, the snapshot or the one before exec, or is one of made_elsewhere: a fact
 * declared and read but produced by nobody (SURFACE's in_process was one) is named here. */
static void test_every_fact_produced(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect_snapshot", "test_every_fact_produced");
        fake *f = *state;
        int socks[FAKE_SOCKS] = {-1, -1, -1, -1, -1, -1, -1};
        json_object *host = NULL;
        fake_everything(f, socks, &host);
        bool seen[_KB_FACT_ID_MAX] = {false}, reachable[_KB_FACT_OBJECT_MAX] = {false};
        mark(snapshot(f, 0), KB_FACT_OBJECT_LOOK, seen);
        mark(pre_exec(f), KB_FACT_OBJECT_LOOK, seen);
        for (int i = 0; i < FAKE_SOCKS; i++)
                close(socks[i]);
        f->t.host = NULL;
        json_object_put(host);
        reachable_from(KB_FACT_OBJECT_LOOK, reachable);
        char missing[4096] = "", stale[1024] = "";
        size_t n = 0, n_stale = 0;
        for (kb_fact_id id = 0; id < _KB_FACT_ID_MAX; id++) {
                const kb_fact_info *row = kb_fact_row(id);
                bool by_machine = false, listed = made_elsewhere_has(row, &by_machine);
                char *out = !seen[id] && !listed ? missing : seen[id] && listed && !by_machine ? stale : NULL;
                size_t size = out == missing ? sizeof missing : sizeof stale, *count = out == missing ? &n : &n_stale;
                if (!reachable[row->object] || !out)
                        continue;
                size_t used = strlen(out);
                snprintf(out + used, size - used, "%s%s.%s", (*count)++ ? ", " : "", kb_fact_object_name(row->object),
                         row->key);
        }
        if (n > 0)
                fail_msg("%zu fact(s) a look may hold, produced by no look of the fake: %s", n, missing);
        if (n_stale > 0)
                fail_msg("made_elsewhere lists %zu fact(s) the fake's looks do produce: %s", n_stale, stale);
}

/* What the kernel's anonymous objects reach, as their fdinfo says (the kernel's s_dev encoding,
 * hex inodes), the tracer it has (none), and the memory file the outsider maps too, found by its
 * device and inode. */
static void test_object_reach(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect_snapshot", "test_object_reach");
        fake *f = *state;
        int socks[FAKE_SOCKS] = {-1, -1, -1, -1, -1, -1, -1};
        json_object *host = NULL;
        fake_everything(f, socks, &host);
        json_object *snap = snapshot(f, 0), *kernel = process(snap, KERNEL);
        json_object *fds = member(kernel, FACT_PROCESS_FDS);
        assert_int_equal(int_at(kernel, FACT_PROCESS_TRACER_PID), 0);
        json_object *w = json_object_array_get_idx(member(find_by(fds, FACT_FD_FD, 7), FACT_FD_WATCHES), 0);
        assert_string_equal(str_at(w, FACT_WATCH_KIND), "epoll");
        assert_string_equal(str_at(w, FACT_WATCH_DEV), "0:8");
        assert_int_equal(int_at(w, FACT_WATCH_INO), 0x2a03);
        assert_int_equal(int_at(w, FACT_WATCH_FD), 4);
        w = json_object_array_get_idx(member(find_by(fds, FACT_FD_FD, 8), FACT_FD_WATCHES), 0);
        assert_string_equal(str_at(w, FACT_WATCH_KIND), "inotify");
        assert_string_equal(str_at(w, FACT_WATCH_DEV), "8:1");
        assert_int_equal(int_at(w, FACT_WATCH_INO), 2);
        json_object *marks = member(find_by(fds, FACT_FD_FD, 9), FACT_FD_WATCHES);
        assert_int_equal(json_object_array_length(marks), 1); /* "fanotify flags:" is the group, no mark */
        w = json_object_array_get_idx(marks, 0);
        assert_string_equal(str_at(w, FACT_WATCH_KIND), "fanotify-mount");
        assert_int_equal(int_at(w, FACT_WATCH_MNT_ID), 0x19);
        assert_int_equal(int_at(find_by(fds, FACT_FD_FD, 10), FACT_FD_REGISTERED_FILES), 0);
        json_object *nspid = member(find_by(fds, FACT_FD_FD, 5), FACT_FD_NSPID);
        assert_int_equal(json_object_array_length(nspid), 1);
        assert_int_equal(json_object_get_int64(json_object_array_get_idx(nspid, 0)), 2);
        json_object *channels = member(snap, FACT_LOOK_OUTSIDE_CHANNELS), *mapped = NULL;
        for (size_t i = 0; i < json_object_array_length(channels); i++) {
                if (kb_fact_bool_of(json_object_array_get_idx(channels, i), FACT_OUTSIDE_CHANNEL_MAPPED))
                        mapped = json_object_array_get_idx(channels, i);
                if (kb_fact_int_or(json_object_array_get_idx(channels, i), FACT_OUTSIDE_CHANNEL_INO, -1) == 4343)
                        fail_msg("a private mapping outside of a deleted library is a channel: %s",
                                 json_object_to_json_string(channels));
        }
        if (!mapped)
                fail_msg("the outsider's mapping of the kernel's memory file is not a channel: %s",
                         json_object_to_json_string(channels));
        assert_int_equal(int_at(mapped, FACT_OUTSIDE_CHANNEL_PID), OUTSIDER);
        assert_string_equal(str_at(mapped, FACT_OUTSIDE_CHANNEL_DEV), "0:1");
        assert_int_equal(int_at(mapped, FACT_OUTSIDE_CHANNEL_INO), 4545);
        /* the very object the kernel maps, named with how the kernel holds it */
        assert_true(kb_fact_bool_of(mapped, FACT_OUTSIDE_CHANNEL_OBJECT));
        assert_int_equal(int_at(mapped, FACT_OUTSIDE_CHANNEL_SANDBOX_PID), KERNEL);
        assert_string_equal(str_at(mapped, FACT_OUTSIDE_CHANNEL_SANDBOX_HOW), "map");
        for (int i = 0; i < FAKE_SOCKS; i++)
                close(socks[i]);
        f->t.host = NULL;
        json_object_put(host);
}

/* The sockets the kernel holds, traced by sock_diag to their other ends: the fake's are real
 * sockets of the test's own network namespace (kbound's, to the look), whose sock_diag list says
 * where each connection waits and who sends to what; the fake's network namespace itself, a file,
 * cannot be listed, and the look says so. */
static void test_socket_ends(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect_snapshot", "test_socket_ends");
        fake *f = *state;
        int socks[FAKE_SOCKS] = {-1, -1, -1, -1, -1, -1, -1};
        json_object *host = NULL;
        fake_everything(f, socks, &host);
        json_object *snap = snapshot(f, 0), *traced = member(snap, FACT_LOOK_SANDBOX_SOCKETS);
        struct stat st;
        uint64_t ino[FAKE_SOCKS];
        for (int i = 0; i < FAKE_SOCKS; i++) {
                assert_int_equal(fstat(socks[i], &st), 0);
                ino[i] = (uint64_t) st.st_ino;
        }
        /* the accepted end of kbound's connection: kbound's socket is its peer */
        json_object *s = find_by(traced, FACT_SANDBOX_SOCKET_INODE, (int64_t) ino[2]), *e;
        assert_string_equal(str_at(s, FACT_SANDBOX_SOCKET_FOUND), "kbound");
        e = member(s, FACT_SANDBOX_SOCKET_PEER);
        assert_int_equal(int_at(e, FACT_SOCKET_END_INODE), (int64_t) ino[1]);
        assert_string_equal(str_at(json_object_array_get_idx(member(e, FACT_SOCKET_END_HELD_BY), 0), FACT_HOLDER_SIDE),
                            "kbound");
        /* the listener's waiting connection, by its connecting socket, and that socket's listener */
        s = find_by(traced, FACT_SANDBOX_SOCKET_INODE, (int64_t) ino[6]);
        assert_int_equal(int_at(s, FACT_SANDBOX_SOCKET_PENDING_COUNT), 1);
        e = json_object_array_get_idx(member(s, FACT_SANDBOX_SOCKET_PENDING), 0);
        assert_int_equal(int_at(e, FACT_SOCKET_END_INODE), (int64_t) ino[3]);
        assert_int_equal(int_at(json_object_array_get_idx(member(e, FACT_SOCKET_END_HELD_BY), 0), FACT_HOLDER_PID),
                         KERNEL);
        s = find_by(traced, FACT_SANDBOX_SOCKET_INODE, (int64_t) ino[3]);
        assert_int_equal(int_at(member(s, FACT_SANDBOX_SOCKET_SOCKET), FACT_SOCKET_PEER), 0);
        assert_int_equal(int_at(member(s, FACT_SANDBOX_SOCKET_LISTENER), FACT_SOCKET_END_INODE), (int64_t) ino[6]);
        /* the datagram socket kbound's is connected to */
        s = find_by(traced, FACT_SANDBOX_SOCKET_INODE, (int64_t) ino[4]);
        e = json_object_array_get_idx(member(s, FACT_SANDBOX_SOCKET_CONNECTED_FROM), 0);
        assert_int_equal(int_at(e, FACT_SOCKET_END_INODE), (int64_t) ino[5]);
        assert_string_equal(str_at(e, FACT_SOCKET_END_FOUND), "kbound");
        assert_int_equal(json_object_array_length(member(s, FACT_SANDBOX_SOCKET_CONNECTED_FROM)), 1);
        /* the fake's network namespace is a file: no sock_diag socket can be made in it */
        char words[256];
        kb_fact_what_words(WHAT_SANDBOX_SOCKETS, NULL, words, sizeof words);
        json_object *errors = member(snap, FACT_LOOK_ERRORS);
        bool noted = false;
        for (size_t i = 0; i < json_object_array_length(errors); i++)
                noted |= strncmp(str_at(json_object_array_get_idx(errors, i), FACT_ERROR_WHAT), words, strlen(words)) ==
                         0;
        if (!noted)
                fail_msg("the fake's network namespace was listed, or its failure not noted: %s",
                         json_object_to_json_string(errors));
        for (int i = 0; i < FAKE_SOCKS; i++)
                close(socks[i]);
        f->t.host = NULL;
        json_object_put(host);
}

/* A network namespace kbound does not enter is read through one of its processes, where that
 * process sees its sockets' paths: one that ends meanwhile (ENDING: its table still read, its root
 * gone, as an exiting process gives up its root before its namespaces) stands for nothing, and the
 * next process of the namespace (STAND_IN, the same table) is read instead: one entry, its pid, a
 * socket not found by its path there. */
static void test_text_namespace_stand_in(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect_snapshot", "test_text_namespace_stand_in");
        fake *f = *state;
        int socks[FAKE_SOCKS] = {-1, -1, -1, -1, -1, -1, -1};
        json_object *host = NULL;
        fake_everything(f, socks, &host);
        const fake_proc ending = {ENDING, 1, ENDING, "ending", 0, "0", 0, 0, 0, 1, 1},
                        stand_in = {STAND_IN, 1, ENDING, "stand-in", 0, "0", 0, 0, 0, 1, 1};
        const char *const third[NS_TYPES] = {NULL, NULL, NULL, "third-net", NULL, NULL, NULL};
        fake_process(f, &ending);
        fake_namespaces(f, ENDING, third);
        fake_process(f, &stand_in);
        fake_namespaces(f, STAND_IN, third);
        proc_file(f, ENDING, "net/unix",
                  "Num       RefCount Protocol Flags    Type St Inode Path\n"
                  "0000000000000000: 00000002 00000000 00010000 0001 01 777001 /kb-no-such-folder/third\n",
                  0);
        char table[PATH_MAX], again[PATH_MAX], rel[64];
        snprintf(rel, sizeof rel, "proc/%d/net/unix", ENDING);
        tmp_tree_path(f->dir->root, rel, table);
        snprintf(rel, sizeof rel, "proc/%d/net/unix", STAND_IN);
        tmp_tree_path(f->dir->root, rel, again);
        if (link(table, again) < 0) /* one namespace: one table */
                fail_msg("link %s: %s", again, strerror(errno));
        proc_link(f, STAND_IN, "root", "/");
        json_object *snap = snapshot(f, 0), *ne = member(snap, FACT_LOOK_SOCKET_NAMESPACES_NOT_ENTERED);
        assert_null(find_by(ne, FACT_NOT_ENTERED_PID, ENDING));
        json_object *read = find_by(ne, FACT_NOT_ENTERED_PID, STAND_IN);
        assert_non_null(read);
        assert_int_equal(int_at(read, FACT_NOT_ENTERED_UNPLACED), 1);
        assert_int_equal(int_at(read, FACT_NOT_ENTERED_PLACED_BY_PATH), 0);
        /* OTHER_NET's, read through its live process, as before */
        assert_non_null(find_by(ne, FACT_NOT_ENTERED_PID, OTHER_NET));
        for (int i = 0; i < FAKE_SOCKS; i++)
                close(socks[i]);
        f->t.host = NULL;
        json_object_put(host);
}

/* A network namespace kbound does not enter has its sockets' paths looked for where its process
 * sees them, never by the same name in kbound's view: its table gives a socket's inode, not its
 * file's, so a host socket at that name (one of the test's own here; /run/dbus/system_bus_socket,
 * which a container has too) is not shown to be the namespace's. VIEWER's root is a folder of the
 * fake: the host's socket is not there (not placed), and a socket bound at a name only that view
 * has is (placed, in VIEWER's mount namespace). */
static void test_text_namespace_own_view(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect_snapshot", "test_text_namespace_own_view");
        fake *f = *state;
        int socks[FAKE_SOCKS] = {-1, -1, -1, -1, -1, -1, -1};
        json_object *host = NULL;
        fake_everything(f, socks, &host);
        const fake_proc viewer = {VIEWER, 1, VIEWER, "viewer", 0, "0", 0, 0, 0, 1, 1};
        const char *const fourth[NS_TYPES] = {NULL, NULL, NULL, "fourth-net", NULL, NULL, NULL};
        fake_process(f, &viewer);
        fake_namespaces(f, VIEWER, fourth);
        /* the host's: a socket's file at a path of kbound's view; the view's, at a name only it has */
        char host_path[PATH_MAX], view_root[PATH_MAX], view_path[PATH_MAX + 32], text[3 * PATH_MAX];
        tmp_tree_path(f->dir->root, "host.sock", host_path);
        tmp_tree_mkdir(f->dir->root, "view/srv");
        tmp_tree_path(f->dir->root, "view", view_root);
        snprintf(view_path, sizeof view_path, "%s/srv/own.sock", view_root);
        int fds[2] = {socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
        struct sockaddr_un a = {.sun_family = AF_UNIX}, b = {.sun_family = AF_UNIX};
        assert_true(strlen(host_path) < sizeof a.sun_path && strlen(view_path) < sizeof b.sun_path);
        memcpy(a.sun_path, host_path, strlen(host_path) + 1);
        memcpy(b.sun_path, view_path, strlen(view_path) + 1);
        /* each socket closed once bound: its file stays, and no namespace kbound lists holds it */
        assert_int_equal(bind(fds[0], (struct sockaddr *) &a, sizeof a), 0);
        assert_int_equal(bind(fds[1], (struct sockaddr *) &b, sizeof b), 0);
        close(fds[0]);
        close(fds[1]);
        snprintf(text, sizeof text,
                 "Num       RefCount Protocol Flags    Type St Inode Path\n"
                 "0000000000000000: 00000002 00000000 00010000 0001 01 888001 %s\n"
                 "0000000000000000: 00000002 00000000 00010000 0001 01 888002 /srv/own.sock\n",
                 host_path);
        proc_file(f, VIEWER, "net/unix", text, 0);
        proc_link(f, VIEWER, "root", view_root);
        char root_line[128];
        long long root_id;
        root_mount(root_line, sizeof root_line, &root_id);
        snprintf(text, sizeof text, "%s / / rw,relatime - ext4 /dev/root rw\n", root_line);
        proc_file(f, VIEWER, "mountinfo", text, 0);
        json_object *snap = snapshot(f, 0), *ne = member(snap, FACT_LOOK_SOCKET_NAMESPACES_NOT_ENTERED);
        json_object *read = find_by(ne, FACT_NOT_ENTERED_PID, VIEWER);
        if (!read)
                fail_msg("VIEWER's namespace is not among %s", json_object_to_json_string(ne));
        assert_int_equal(int_at(read, FACT_NOT_ENTERED_UNPLACED), 1);
        assert_int_equal(int_at(read, FACT_NOT_ENTERED_PLACED_BY_PATH), 1);
        json_object *reach = member(snap, FACT_LOOK_REACH);
        char shown[PATH_MAX + 64];
        snprintf(shown, sizeof shown, "/srv/own.sock (in the mount namespace of pid %d)", VIEWER);
        bool own = false;
        for (size_t i = 0; i < json_object_array_length(reach); i++) {
                const char *p = str_at(json_object_array_get_idx(reach, i), FACT_REACH_PATH);
                if (strncmp(p, host_path, strlen(host_path)) == 0)
                        fail_msg("the host's socket was taken for the namespace's: %s", p);
                own |= strcmp(p, shown) == 0;
        }
        if (!own)
                fail_msg("%s is not in the reach: %s", shown, json_object_to_json_string(reach));
        for (int i = 0; i < FAKE_SOCKS; i++)
                close(socks[i]);
        f->t.host = NULL;
        json_object_put(host);
}

/* Another sandbox of the same run (kbound's descendant, in a pid namespace not kbound's) is looked
 * at as any host process, not as kbound's side: its mapping of the kernel's shared memory (the same
 * device and inode, not the same open file: kcmp would not see it) is a channel. */
static void test_run_sandbox_is_outside(void **state) {
        KB_TEST_SKIP_WITHOUT_OPENAT2("test_inspect_snapshot", "test_run_sandbox_is_outside");
        fake *f = *state;
        int socks[FAKE_SOCKS] = {-1, -1, -1, -1, -1, -1, -1};
        json_object *host = NULL;
        fake_everything(f, socks, &host);
        const fake_proc other = {RUN_OTHER, f->self, RUN_OTHER, "python3", 1000, "0", 1, 2, 2, 1, 1};
        const char *const other_ns[NS_TYPES] = {"run-user", "run-mnt", "run-pid", "run-net", "run-ipc", NULL, NULL};
        fake_process(f, &other);
        fake_namespaces(f, RUN_OTHER, other_ns);
        proc_file(f, RUN_OTHER, "maps", "7f0000006000-7f0000007000 rw-s 00000000 00:01 4545 /memfd:shm (deleted)\n", 0);
        json_object *snap = snapshot(f, 0), *channels = member(snap, FACT_LOOK_OUTSIDE_CHANNELS), *mapped = NULL;
        for (size_t i = 0; i < json_object_array_length(channels); i++) {
                json_object *c = json_object_array_get_idx(channels, i);
                if (kb_fact_int_or(c, FACT_OUTSIDE_CHANNEL_PID, -1) == RUN_OTHER &&
                    kb_fact_bool_of(c, FACT_OUTSIDE_CHANNEL_MAPPED))
                        mapped = c;
        }
        if (!mapped)
                fail_msg("another sandbox's mapping of the kernel's memory file is not a channel: %s",
                         json_object_to_json_string(channels));
        assert_int_equal(int_at(mapped, FACT_OUTSIDE_CHANNEL_INO), 4545);
        assert_int_equal(int_at(mapped, FACT_OUTSIDE_CHANNEL_SANDBOX_PID), KERNEL);
        for (int i = 0; i < FAKE_SOCKS; i++)
                close(socks[i]);
        f->t.host = NULL;
        json_object_put(host);
}

/* Each test on a fake tree of its own (two of them change it). */
#define ON_FAKE(test) cmocka_unit_test_setup_teardown(test, setup, teardown)

int main(void) {
        const struct CMUnitTest tests[] = {
                /* what the fake tree alone decides */
                ON_FAKE(test_processes),
                ON_FAKE(test_secrets_and_errors),
                ON_FAKE(test_namespaces),
                ON_FAKE(test_holders_followed),
                ON_FAKE(test_launcher),
                ON_FAKE(test_resources),
                /* with sock_diag's list of this network's sockets */
                ON_FAKE(test_descriptors),
                /* looked up through "/" with openat2 */
                ON_FAKE(test_mounts),
                ON_FAKE(test_maps),
                ON_FAKE(test_maps_vm_flags),
                /* the canaries, and a kernel that is not there */
                ON_FAKE(test_reach),
                ON_FAKE(test_kernel_missing),
                /* the look before exec, kbound's own facts, and every fact a look may hold */
                ON_FAKE(test_pre_exec),
                cmocka_unit_test(test_host),
                ON_FAKE(test_every_fact_produced),
                ON_FAKE(test_object_reach),
                ON_FAKE(test_threads),
                ON_FAKE(test_socket_ends),
                ON_FAKE(test_text_namespace_stand_in),
                ON_FAKE(test_text_namespace_own_view),
                ON_FAKE(test_run_sandbox_is_outside),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

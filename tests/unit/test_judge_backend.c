/* test_judge_backend.c: sandbox.backend: the namespaces, their owners and the bwrap kbound launched. */
#include "judge_fixture.h"

/* ---- sandbox.backend ---- */

static void test_backend(void **state) {
        static const breakage fails[] = {
                B1("/host/ns", NULL, "the host could not read its own namespaces"),
                B1("/host/ns", "{}", "the host could not read its own namespaces"),
                B1("/host", NULL, "the host could not read its own namespaces"),
                B1("/snapshots/0/processes/1/ns/pid", NULL, "could not read the pid namespace of pid 1002 (python3)"),
                B1("/snapshots/1/processes/2/ns/mnt", "4026531841", "pid 1003 (python3) shares kbound's mnt namespace"),
                B1("/snapshots/0/processes/0/ns/net", "4026531840", "pid 1001 (bwrap) shares kbound's net namespace"),
                B1("/snapshots/1/processes/1/ns/cgroup", "4026531835",
                   "pid 1002 (python3) shares kbound's cgroup namespace"),
                /* the override shares the network, nothing else */
                B2("/expect/allow_network", "true", "/snapshots/0/processes/1/ns/ipc", "4026531839",
                   "pid 1002 (python3) shares kbound's ipc namespace"),
                /* only a JSON true is the override, and anything else is evidence facts.def does not
                 * declare: it fails (it passed as no override before facts.def) */
                B2("/expect/allow_network", "'true'", "/snapshots/0/processes/1/ns/net", "4026531840",
                   "pid 1002 (python3) shares kbound's net namespace"),
                B1("/expect/allow_network", "'true'", "allow_network: string, not a bool"),
                /* a thread that moved alone (setns, unshare in one thread): its namespaces apart from
                 * its process's, judged the same way */
                B2("/snapshots/0/processes/1/tasks/0/ns", "{'net': 4026531840}",
                   "/snapshots/0/processes/1/tasks/0/ns_owners", "{'net': [4026531837]}",
                   "thread 1010 of pid 1002 (python3) shares kbound's net namespace"),
                B2("/snapshots/1/processes/1/tasks/1/ns", "{'ipc': 4026539999}",
                   "/snapshots/1/processes/1/tasks/1/ns_owners", "{'ipc': [4026531837]}",
                   "the ipc namespace of thread 1011 of pid 1002 (python3) is owned by user namespace 4026531837"),
                B1("/snapshots/1/processes/1/tasks/1/ns", "{'ipc': 4026539999}",
                   "the host could not read who owns the ipc namespace of thread 1011 of pid 1002 (python3)"),
                B1("/snapshots/0/processes/1/tasks/0/errors", "[{'what': 'ns', 'error': 'Permission denied'}]",
                   "the host could not read the namespaces of thread 1010 of pid 1002 (python3)"),
                B1("/snapshots/0/processes/1/tasks", NULL,
                   "the host could not list the threads of pid 1002 (python3): the namespaces of each"),
        };
        EXPECT_FAILS(kb_judge_backend, fails);
        static const breakage passes[] = {
                B3("/expect/allow_network", "true", "/snapshots/0/processes/1/ns/net", "4026531840",
                   "/snapshots/1/processes/1/ns/net", "4026531840",
                   "user, mnt, pid, ipc, uts, cgroup namespaces differ from kbound's for all 5 processes the host saw; "
                   "network shared (raw-network override)"),
                /* a thread in a namespace of its own made inside the sandbox's */
                B2("/snapshots/0/processes/1/tasks/0/ns", "{'net': 4026539998}",
                   "/snapshots/0/processes/1/tasks/0/ns_owners", "{'net': " OWNED "}", NULL),
        };
        EXPECT_PASSES(kb_judge_backend, passes);
}

/* The running bwrap must be the one kbound launched: program, command line, environment. */
static void test_backend_launch(void **state) {
#define RUN_ARGV "/snapshots/1/launcher/argv"
#define RUN_ENV "/snapshots/1/launcher/environ"
        static const breakage fails[] = {
                B1(RUN_ARGV "/1", "'--share-net'",
                   "the running bwrap's command line is not the one kbound built: argument 1 is '--share-net' where "
                   "kbound's is '--unshare-all'"),
                /* an added option shifts every argument after it: the first difference is named */
                B1(RUN_ARGV "/20", "'--bind'", "argument 20 is '--bind' where kbound's is '--block-fd'"),
                /* what a stand-in added is not shown unless it is an option's name or kbound's own */
                B1(RUN_ARGV "/18", "'kbound-leak-token-1234'",
                   "argument 18 is '(an argument kbound did not plan, not shown)' where kbound's is"),
                B1(RUN_ARGV "/-", "'--as-pid-1'", "it goes on past kbound's last argument with '--as-pid-1'"),
                B1(RUN_ARGV "/29", NULL, "it ends before kbound's argument 29 ('/run/kbound/connection.json')"),
                B1(RUN_ARGV "/0", "'/tmp/stand-in'", "argument 0 is '(an argument kbound did not plan, not shown)'"),
                B1(RUN_ARGV, "[]", "the host could not read the running bwrap's command line"),
                B2(RUN_ARGV, "[]", "/snapshots/1/errors/-",
                   "{'what': 'the launcher\\u0027s command line', 'error': 'EACCES'}",
                   "the host could not read the running bwrap's command line: the launcher's command line: EACCES"),
                B1("/snapshots/1/errors/-",
                   "{'what': 'the launcher\\u0027s command line (too many arguments)', 'error': 'E2BIG'}",
                   "could not read all of the running bwrap's command line"),
                B1(RUN_ENV "/1", "'HOME=sha256:0000'",
                   "the running bwrap's environment is not the one kbound passed: HOME has another value (values never "
                   "shown)"),
                B1(RUN_ENV "/-", "'LD_PRELOAD=sha256:1234'", "it has LD_PRELOAD, which kbound did not pass"),
                B1(RUN_ENV "/2", "'LD_PRELOAD=sha256:1234'", "it has LD_PRELOAD, which kbound did not pass"),
                B1(RUN_ENV "/3", NULL, "the running bwrap's environment is not the one kbound passed: it lacks LANG"),
                B2(RUN_ENV "/0", "'HOME=sha256:fc83'", RUN_ENV "/1", "'PATH=sha256:3df5'", "its order differs at HOME"),
                B1(RUN_ENV, NULL, "the host could not read the running bwrap's environment"),
                B1("/expect/launch/env", NULL, "kbound kept no record of the environment it started bwrap with"),
                B1("/snapshots/1/launcher/exe/ino", "4243",
                   "the running bwrap (/usr/bin/bwrap) is not the program kbound started (/usr/bin/bwrap)"),
                B2("/snapshots/1/launcher/exe", "{'path': '/usr/bin/bash', 'dev': '8:1', 'ino': 17}",
                   "/expect/launch/program/path", "'/tmp/leaky-bwrap'",
                   "the running bwrap (/usr/bin/bash) is not the program kbound started (/tmp/leaky-bwrap)"),
                B1("/snapshots/1/launcher/exe", NULL, "the host could not read which program the running bwrap is"),
                B1("/expect/launch", NULL, "kbound kept no record of the bwrap it launched"),
                B1("/snapshots/1/launcher", NULL, "the host did not find the process that runs bwrap"),
        };
        EXPECT_FAILS(kb_judge_backend, fails);
        /* the token a stand-in added never reaches the verdict */
        json_object *run = good_run();
        set(run, RUN_ARGV "/18", "'kbound-leak-token-1234'");
        json_object *check = judge_run(kb_judge_backend, run);
        assert_null(strstr(text_of(check), "kbound-leak-token-1234"));
        json_object_put(check);
        json_object_put(run);
        static const breakage passes[] = {
                /* the first look's launcher does not count: the last one does */
                B1("/snapshots/0/launcher/argv/1", "'--share-net'",
                   "the running bwrap is the program, command line and "
                   "environment kbound launched"),
        };
        EXPECT_PASSES(kb_judge_backend, passes);
#undef RUN_ARGV
#undef RUN_ENV
}

/* Every namespace is owned by the sandbox's user namespace, a child of kbound's, and no process
 * outside is in one: a namespace that existed before (a helper's, joined by bwrap) fails. */
static void test_backend_namespace_owners(void **state) {
#define OWNERS(look, proc) "/snapshots/" #look "/processes/" #proc "/ns_owners"
        static const breakage fails[] = {
                B1(OWNERS(0, 1) "/net", "[4026532999, 4026531837]",
                   "the net namespace of pid 1002 (python3) is owned by user namespace 4026532999, not by the "
                   "sandbox's "
                   "(4026532200) nor one inside it: a namespace made elsewhere"),
                B1("/pre_exec/processes/0/ns_owners/mnt", "[4026531837]",
                   "the mnt namespace of pid 1001 (bwrap) is owned by user namespace 4026531837"),
                /* bwrap's user namespace made inside a helper's (nsenter -U) */
                B1("/pre_exec/processes/0/ns_owners/pid", "[4026532200, 4026532100, 4026531837]",
                   "the sandbox's user namespace (4026532200) is not a child of kbound's (4026531837): its parent is "
                   "4026532100 (pre-exec)"),
                B1(OWNERS(0, 0) "/pid", "[4026532200]",
                   "the sandbox's user namespace (4026532200) is not a child of kbound's (4026531837): its parent is "
                   "none "
                   "the host can see (ready)"),
                B1(OWNERS(0, 0) "/pid", "[4026531837]",
                   "the sandbox's namespaces are owned by kbound's own user namespace (ready)"),
                B2("/snapshots/1/processes/2/ns/user", "4026532300", OWNERS(1, 2) "/user", "[4026532100, 4026531837]",
                   "pid 1003 (python3) is in user namespace 4026532300, not the sandbox's (4026532200) nor one inside "
                   "it"),
                B1(OWNERS(0, 1) "/mnt", NULL,
                   "the host could not read who owns the mnt namespace of pid 1002 (python3)"),
                B1("/snapshots/0/processes/1/errors/-", "{'what': 'ns_owners/ipc', 'error': 'Permission denied'}",
                   "could not read who owns the ipc namespace of pid 1002 (python3): ns_owners/ipc: Permission denied"),
                /* no process in the pid namespace kbound pinned shows who owns it */
                B1("/expect/pidns", "4026539999",
                   "the host could not tell which user namespace owns the sandbox (pre-exec)"),
                B1("/snapshots/1/ns_holders/-", "{'pid': 777, 'name': 'relay', 'ns': 'net', 'inode': 4026532300}",
                   "pid 777 (relay), outside the sandbox, is in the sandbox's net namespace (child alive)"),
                /* with its parent, when the look read it */
                B1("/snapshots/1/ns_holders/-",
                   "{'pid': 777, 'name': 'relay', 'ppid': 700, 'ns': 'net', 'inode': 4026532300}",
                   "pid 777 (relay, child of pid 700), outside the sandbox, is in the sandbox's net namespace"),
                B1("/pre_exec/ns_holders/-", "{'pid': 778, 'name': 'sleep', 'ns': 'user', 'inode': 4026532200}",
                   "pid 778 (sleep), outside the sandbox, is in the sandbox's user namespace (pre-exec)"),
                B1("/snapshots/0/ns_outside/holders", "70",
                   "70 processes outside the sandbox are in its namespaces or hold them open (ready)"),
                /* a namespace held open from outside, by a descriptor or a bind mount, can be joined */
                B1("/snapshots/1/ns_holders/-",
                   "{'pid': 779, 'name': 'holder', 'ns': 'net', 'inode': 4026532300, 'fd': 5}",
                   "pid 779 (holder), outside the sandbox, holds the sandbox's net namespace open (fd 5), so it can "
                   "join it (child alive)"),
                B1("/snapshots/0/ns_holders/-",
                   "{'pid': 781, 'name': 'agent', 'ns': 'net', 'inode': 4026532300, 'fd': 7, 'thread': 790}",
                   "thread 790 of pid 781 (agent), outside the sandbox, holds the sandbox's net namespace open (fd "
                   "7)"),
                B1("/snapshots/0/ns_holders/-",
                   "{'pid': 782, 'name': 'agent', 'ns': 'net', 'inode': 4026532300, "
                   "'thread': 791}",
                   "thread 791 of pid 782 (agent), outside the sandbox, is in the sandbox's net namespace (ready)"),
                /* a process whose children are born in the sandbox (setns(CLONE_NEWPID) for them alone) */
                B1("/snapshots/0/ns_holders/-",
                   "{'pid': 783, 'name': 'forker', 'ns': 'pid_for_children', 'inode': 4026532301}",
                   "pid 783 (forker), outside the sandbox, starts its children in the sandbox's pid namespace "
                   "(ns/pid_for_children): each one it forks is born inside (ready)"),
                B1("/snapshots/1/ns_outside/fd_tables_unreadable", "2",
                   "the host read the namespaces of 2 processes outside the sandbox but not all their descriptors"),
                B1("/snapshots/0/ns_outside/fd_tables_read", NULL,
                   "the host did not read the descriptors of the processes outside the sandbox (ready)"),
                /* each count is required: one not read is never 0 */
                B1("/snapshots/1/ns_outside/fd_tables_unreadable", NULL,
                   "the host did not read the descriptors of the processes outside the sandbox (child alive)"),
                B1("/pre_exec/ns_outside/holders", NULL,
                   "the host did not count the processes outside the sandbox in its namespaces (pre-exec)"),
                B1("/pre_exec/ns_holders/-", "{'pid': 780, 'name': 'sh', 'ns': 'user', 'inode': 4026532200, 'fd': 3}",
                   "pid 780 (sh), outside the sandbox, holds the sandbox's user namespace open (fd 3)"),
                B1("/snapshots/0/ns_mounts/-",
                   "{'pid': 5000, 'ns': 'net', 'inode': 4026532300, 'mountpoint': '/run/netns/team'}",
                   "the sandbox's net namespace is bind-mounted at /run/netns/team in the mount namespace of pid "
                   "5000, outside the sandbox"),
                B1("/snapshots/1/ns_mounts", NULL,
                   "the host did not check the mount namespaces outside the sandbox for its namespaces (child "
                   "alive)"),
                B1("/snapshots/0/ns_outside", NULL,
                   "the host did not check which processes outside the sandbox are in its namespaces (ready)"),
                B1("/snapshots/0/errors/-", "{'what': 'kbound\\u0027s own namespaces', 'error': 'EACCES'}",
                   "did not check which processes outside the sandbox are in its namespaces (ready): kbound's own "
                   "namespaces"),
                B1("/pre_exec", NULL, "the host took no look at the sandbox before the kernel's program ran"),
        };
        EXPECT_FAILS(kb_judge_backend, fails);
        static const breakage passes[] = {
                /* a namespace made inside the sandbox's user namespace is the sandbox's */
                B1(OWNERS(1, 2) "/net", "[4026532210, 4026532200, 4026531837]", NULL),
                /* the override shares kbound's own network namespace, owned above the sandbox */
                B3("/expect/allow_network", "true", "/snapshots/0/processes/1/ns/net", "4026531840",
                   OWNERS(0, 1) "/net", "[4026531837]", "network shared (raw-network override)"),
                /* another user's processes cannot be read by an unprivileged kbound: counted, not judged */
                B1("/snapshots/1/ns_outside/unreadable", "40",
                   "(120 processes outside read; 40 of other users could not be read (kbound is not root), not "
                   "judged)"),
                /* as root every process can be read: one that could not be was exiting, or worse */
                B2("/host/uid", "0", "/snapshots/1/ns_outside/unreadable", "1",
                   "(120 processes outside read; 1 more could not be read, not judged)"),
        };
        EXPECT_PASSES(kb_judge_backend, passes);
#undef OWNERS
}

/* Every mount of every table of every look is one kbound planned, matched by what it shows, where,
 * and its options: a mount nobody asked for fails naming it, whatever lies under it (a read-only
 * folder of the host's holding no canary here), and so does one planned that shows something else,
 * with other options, or is not there. */
static void test_backend_mounts(void **state) {
#define M "/snapshots/1/mounts"
#define PLANNED "/expect/launch/mounts"
#define IN_USR_LIB64                                                                                                   \
        "{'id': 322, 'parent': 301, 'nodev': true, 'dev': '8:1', 'root': '/opt/kbound', 'mountpoint': "                \
        "'/usr/lib64/kbound', 'fstype': 'ext4', 'source': '/dev/sda1', 'writable': false, 'options': ['ro', "          \
        "'nosuid'], 'super': [], 'target': {'type': 'dir', 'dev': '8:1', 'ino': 7001}}"
#define ETC                                                                                                            \
        "{'id': 320, 'parent': 300, 'nodev': true, 'dev': '8:1', 'root': '/etc', 'mountpoint': '/mnt/etc', "           \
        "'fstype': 'ext4', 'source': '/dev/sda1', 'writable': false, 'options': ['ro', 'nosuid'], 'super': [], "       \
        "'target': {'type': 'dir', 'dev': '8:1', 'ino': 393217}}"
        static const breakage fails[] = {
                B1(M "/-", ETC,
                   "a mount at /mnt/etc (ext4 /dev/sda1, root /etc, read-only) that kbound did not plan: nothing of "
                   "its bwrap command line makes one there"),
                B1("/pre_exec/mounts/-", ETC, "before the kernel ran: a mount at /mnt/etc (ext4 /dev/sda1"),
                /* in another mount namespace of the sandbox: the kernel's own copy of the planned ones
                 * passes, the extra one does not */
                B3("/snapshots/1/mount_tables", "{'4026532299': " SANDBOX_MOUNTS "}",
                   "/snapshots/1/mount_tables/4026532299/-", ETC, "/snapshots/1/processes/2/ns/mnt", "4026532299",
                   "in the mount namespace of pid 1003 (python3): a mount at /mnt/etc (ext4 /dev/sda1, root /etc, "
                   "read-only) that kbound did not plan"),
                /* a second mount where one was planned: the host's /tmp over the sandbox's */
                B1(M "/-",
                   "{'id': 321, 'parent': 309, 'nodev': true, 'dev': '8:1', 'root': '/tmp', 'mountpoint': '/tmp', "
                   "'fstype': 'ext4', 'source': '/dev/sda1', 'writable': true, 'options': ['rw', 'nosuid'], "
                   "'super': [], 'target': {'type': 'dir', 'dev': '8:1', 'ino': 12}}",
                   "a mount at /tmp (ext4 /dev/sda1, root /tmp, writable) that kbound did not plan"),
                /* what a bind shows: the planned host object, by device and inode */
                B1(M "/1/target/ino", "42",
                   "the mount at /usr (ext4 /dev/sda1, root /usr, read-only) is not the one kbound planned there "
                   "(--ro-bind /usr /usr): it shows device 8:1 inode 42, not /usr (device 8:1 inode 131073 on the "
                   "host)"),
                /* replaced on the host while bwrap bound it: either object the path named, no other */
                B2(M "/1/target/ino", "42", PLANNED "/1/source_after", "{'path': '/usr', 'dev': '8:1', 'ino': 43}",
                   "it shows device 8:1 inode 42, not /usr (device 8:1 inode 131073 on the host, then device 8:1 "
                   "inode 43 once bwrap's mounts were made)"),
                B2(M "/1/target", NULL, M "/1/target_error", "'a symbolic link is on the path'",
                   "(--ro-bind /usr /usr): the host could not see what it shows (a symbolic link is on the path)"),
                B2(PLANNED "/1/source", NULL, PLANNED "/1/source_error", "'Permission denied'",
                   "kbound could not name the object it planned there (Permission denied)"),
                /* the options */
                B1(M "/1/writable", "true", "it is writable, where kbound planned it read-only"),
                B1(M "/11/writable", "false",
                   "(--bind " TEAM_A "/workspace /workspace): it is read-only, where "
                   "kbound planned it writable"),
                B1(M "/9/nodev", "false", "it lets device nodes be opened (no nodev), where kbound planned nodev"),
                B1(M "/6/nodev", "true", "it refuses device nodes, where kbound planned them allowed"),
                B1(M "/9/options", "['rw']", "set-user-ID bits work on it (no nosuid), where kbound planned nosuid"),
                /* a fresh filesystem is new: of its type, and on no device kbound's mount namespace or one
                 * outside holds */
                B1(M "/9/fstype", "'ramfs'", "(--tmpfs /tmp): its filesystem is ramfs, not a new tmpfs"),
                B1(M "/9/dev", "'0:25'", "a filesystem of kbound's own mount namespace (device 0:25), not a new one"),
                B1("/snapshots/1/outside_mounts/devices/0:44", "4242",
                   "a filesystem the mount namespace of pid 4242, outside the sandbox, holds (device 0:44)"),
                B1(PLANNED "/11/size", "1048576", "(--tmpfs /tmp): no size, where kbound asked 1048576 bytes"),
                B2(PLANNED "/11/size", "1048576", M "/9/super", "['size=2048k']",
                   "a size of 2097152 bytes, where kbound asked 1048576"),
                /* bwrap's covers are of the sandbox's own proc */
                B1(M "/3/dev", "'0:22'",
                   "the mount at /proc/sys (proc proc, root /sys, read-only) is not the one kbound planned there "
                   "(--proc /proc: bwrap's read-only cover): not /sys of the sandbox's own proc (device 0:22, root "
                   "/sys)"),
                /* a mount of the root's own tree is where the plan says, or it is not planned */
                B1(M "/11/mountpoint", "'/mnt/ws'",
                   "a mount at /mnt/ws (ext4 /dev/sda1, root " TEAM_A "/workspace, writable) that kbound did not "
                   "plan"),
                B1(M "/11/mountpoint", "'/mnt/ws'",
                   "kbound planned a mount at /workspace (--bind " TEAM_A "/workspace /workspace) and the table has "
                   "none"),
                /* a planned mount that is not there */
                B1(M "/9", NULL, "kbound planned a mount at /tmp (--tmpfs /tmp) and the table has none"),
                B1("/pre_exec/mounts/8", NULL,
                   "before the kernel ran: kbound planned a mount at /dev/pts (--dev /dev: its own devpts) and the "
                   "table has none"),
                /* nothing to match against, or nothing matched */
                B1(PLANNED, NULL, "kbound kept no record of the mounts it planned"),
                B1(M, NULL, "the host could not read the sandbox's mount table (child alive)"),
                B1("/snapshots/0/mount_tables", NULL,
                   "the host did not read the mount tables of the sandbox's other mount namespaces (ready)"),
        };
        EXPECT_FAILS(kb_judge_backend, fails);
        static const breakage passes[] = {
                /* bwrap's covers are made only where it may write: optional */
                B2(M "/4", NULL, M "/3", NULL,
                   "every mount of the 3 mount tables of every look is one of the 14 "
                   "kbound planned"),
                /* the host's /usr replaced by a rename between kbound's plan and bwrap's bind: every
                 * look shows the object the path named once the mounts were made */
                B4(PLANNED "/1/source_after", "{'path': '/usr', 'dev': '8:1', 'ino': 42}", M "/1/target/ino", "42",
                   "/snapshots/0/mounts/1/target/ino", "42", "/pre_exec/mounts/1/target/ino", "42", NULL),
                /* a tmpfs's size is kept in pages */
                B4(PLANNED "/11/size", "1048576", M "/9/super", "['mode=755', 'size=1024k']",
                   "/snapshots/0/mounts/9/super", "['size=1024k']", "/pre_exec/mounts/9/super", "['size=1024k']", NULL),
                B4(PLANNED "/11/size", "1048000", M "/9/super", "['size=1024k']", "/snapshots/0/mounts/9/super",
                   "['size=1024k']", "/pre_exec/mounts/9/super", "['size=1024k']", NULL),
                /* a destination the plan reaches through a link of a bound host folder lands
                 * elsewhere: the same object, where the plan's mount point has no mount */
                B4(PLANNED "/-",
                   PLANNED_BIND("/usr/lib/kbound", "--ro-bind /opt/kbound /usr/lib/kbound", "/opt/kbound", "8:1", 7001,
                                true, true),
                   M "/-", IN_USR_LIB64, "/snapshots/0/mounts/-", IN_USR_LIB64, "/pre_exec/mounts/-", IN_USR_LIB64,
                   NULL),
        };
        EXPECT_PASSES(kb_judge_backend, passes);
#undef M
#undef PLANNED
#undef ETC
#undef IN_USR_LIB64
}

/* A zombie whose threads have all exited holds nothing: an unprivileged host cannot read what it
 * no longer has (the kernel gives a task with no memory to root: its ns links, fd table and
 * environ refuse the reader), and those unread facts fail no check; the same unread facts of a
 * live process fail each. */
static void zombie_unread(json_object *run, const char *state) {
        const char *p = "/snapshots/1/processes/2";
        char ptr[128];
        snprintf(ptr, sizeof ptr, "%s/state", p);
        set(run, ptr, state);
        snprintf(ptr, sizeof ptr, "%s/ns", p);
        set(run, ptr, "{'user': 4026532201, 'pid': 4026532203}");
        snprintf(ptr, sizeof ptr, "%s/ns_owners", p);
        set(run, ptr, "{'user': " OWNED ", 'pid': " OWNED "}");
        snprintf(ptr, sizeof ptr, "%s/fds", p);
        set(run, ptr, "[]"); /* as inspect_fd.c leaves a table it could not read, its error noted */
        snprintf(ptr, sizeof ptr, "%s/environ_secrets", p);
        drop(run, ptr);
        snprintf(ptr, sizeof ptr, "%s/errors", p);
        set(run, ptr,
            "[{'what': 'fd', 'error': 'Permission denied'}, {'what': 'environ', 'error': 'Permission denied'}]");
}

static void test_zombie_unread(void **state) {
        (void) state;
        const struct {
                judge_fn judge;
                const char *live_words;
        } cases[] = {
                {kb_judge_backend, "could not read the mnt namespace of pid 1003"},
                {kb_judge_descriptors, "could not read the descriptors of pid 1003"},
                {kb_judge_credentials, "could not read the environment of pid 1003"},
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(cases); i++) {
                json_object *run = good_run();
                zombie_unread(run, "'Z'");
                json_object *check = judge_run(cases[i].judge, run);
                assert_status_naming(check, "pass", NULL, "a zombie's unread facts");
                json_object_put(check);
                json_object_put(run);
                run = good_run();
                zombie_unread(run, "'S'");
                check = judge_run(cases[i].judge, run);
                assert_status_naming(check, "fail", cases[i].live_words, "a live process's unread facts");
                json_object_put(check);
                json_object_put(run);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_backend),
                cmocka_unit_test(test_backend_launch),
                cmocka_unit_test(test_backend_namespace_owners),
                cmocka_unit_test(test_backend_mounts),
                cmocka_unit_test(test_zombie_unread),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

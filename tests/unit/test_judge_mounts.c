/* test_judge_mounts.c: kb_judge_mount_problems, boundary.write_outside and boundary.workspace_writable. */
#include "judge_fixture.h"
#include "base/procfs.h"

/* ---- kb_judge_mount_problems, on the good run's last look ---- */

#define M "/snapshots/1/mounts"
#define PLANNED "/expect/launch/mounts"

/* The problems kb_judge_mount_problems finds in run's last look (host table, /proc entries and team
 * binds of the run). */
static int mount_problems_of(json_object *run, json_object **ret_problems) {
        json_object *mounts = NULL, *host_mounts = NULL, *entries = NULL, *binds = NULL;
        (void) json_pointer_get(run, M, &mounts);
        (void) json_pointer_get(run, "/host/mounts", &host_mounts);
        (void) json_pointer_get(run, "/host/proc_entries", &entries);
        (void) json_pointer_get(run, "/expect/team_binds", &binds);
        json_object *problems = json_object_new_array(), *outside = NULL, *argv = NULL;
        assert_non_null(problems);
        (void) json_pointer_get(run, "/snapshots/1/outside_mounts", &outside);
        (void) json_pointer_get(run, "/snapshots/1/launcher/argv", &argv);
        kb_judge_mount_facts facts = {.host_mounts = host_mounts,
                                      .proc_entries = entries,
                                      .team_binds = binds,
                                      .outside = outside,
                                      .bwrap_argv = argv};
        int n = kb_judge_mount_problems(mounts, &facts, problems);
        assert_int_equal(n, (int) json_object_array_length(problems));
        *ret_problems = problems;
        return n;
}

/* A writable tmpfs on device dev, mounted at mp. */
#define TMPFS_AT(id, parent, dev, mp)                                                                                  \
        "{'id': " #id ", 'parent': " #parent ", 'nodev': true, 'dev': '" dev "', 'root': '/', 'mountpoint': '" mp      \
        "', "                                                                                                          \
        "'fstype': 'tmpfs', 'source': 'tmpfs', 'writable': true, 'options': ['rw'], 'super': [], 'target': {'type': "  \
        "'dir', 'dev': '" dev "', "                                                                                    \
        "'ino': 1}}"

static void test_mount_problems(void **state) {
        static const struct {
                breakage b;
                int problems;
        } cases[] = {
                /* a private filesystem type on a device the host also mounts is the host's */
                {B1(M "/-", TMPFS_AT(320, 305, "0:25", "/dev/shm"),
                    "a writable mount at /dev/shm (tmpfs tmpfs, root /) is backed by the host"),
                 1},
                {B1(M "/-", TMPFS_AT(320, 305, "0:45", "/dev/shm"), NULL), 0},
                {B1(M "/8/dev", "'0:24'", "a writable mount at /dev/pts (devpts devpts, root /) is backed by the host"),
                 1},
                {B1(M "/2/dev", "'0:22'", "a writable mount at /proc (proc proc, root /) is backed by the host"), 1},
                {B1(M "/9/fstype", "'ext4'", "a writable mount at /tmp (ext4 tmpfs, root /) is backed by the host"), 1},
                /* the team's binds, by what their target is */
                {B1(M "/11/target/ino", "5999",
                    "a writable mount at /workspace (ext4 /dev/sda1, root " TEAM_A "/workspace) is backed by the host"),
                 1},
                {B1(M "/10/target/dev", "'8:2'",
                    "a writable mount at /run/kbound (ext4 /dev/sda1, root " TEAM_A "/runtime) is backed by the host"),
                 1},
                {B1("/expect/team_binds", NULL, "a writable mount at /run/kbound"), 2},
                {B1(M "/-",
                    "{'id': 322, 'nodev': true, 'parent': 300, 'dev': '8:1', 'root': '" TEAM_A
                    "/workspace', 'mountpoint': '/mnt', "
                    "'fstype': 'ext4', 'source': '/dev/sda1', 'writable': true, 'options': ['rw'], 'super': [], "
                    "'target': {'type': 'dir', 'dev': "
                    "'8:1', "
                    "'ino': 5000}}",
                    NULL),
                 0},
                /* character devices: /dev/null-like ones and the terminal node (5:0) are harmless */
                {B1(M "/6/target/rdev", "'136:0'",
                    "a writable mount at /dev/null (devtmpfs udev, root /null) is backed by the host"),
                 1},
                {B2(M "/6/target/type", "'blk'", M "/6/target/rdev", "'8:0'", "a writable mount at /dev/null"), 1},
                {B1(M "/7/target/rdev", "'4:1'",
                    "a writable mount at /dev/tty (devtmpfs udev, root /tty) is backed by the host"),
                 1},
                {B1(M "/-",
                    "{'id': 326, 'parent': 305, 'dev': '0:5', 'root': '/zero', 'mountpoint': '/dev/zero', "
                    "'fstype': 'devtmpfs', 'source': 'udev', 'writable': true, 'options': ['rw'], 'super': [], "
                    "'target': {'type': 'chr', 'dev': '0:5', "
                    "'ino': 8, 'rdev': '1:5'}}",
                    NULL),
                 0},
                /* what the host could not examine is not the sandbox's own */
                {B2(M "/10/target", NULL, M "/10/target_error", "'Permission denied'",
                    "a writable mount at /run/kbound (ext4 /dev/sda1, root " TEAM_A
                    "/runtime) could not be examined by "
                    "the host (Permission denied)"),
                 1},
                {B1(M "/6/target", NULL,
                    "a writable mount at /dev/null (devtmpfs udev, root /null) is backed by the host"),
                 1},
                {B2(M "/9/target", NULL, M "/9/target_error", "'Permission denied'", NULL), 0},
                /* unknown writability is writable */
                {B1(M "/1/writable", NULL,
                    "a writable mount at /usr (ext4 /dev/sda1, root /usr) is backed by the host"),
                 1},
                {B1(M "/1/writable", "'false'", "a writable mount at /usr"), 1},
                /* a mount hidden under a later one is not reachable: the later one is judged */
                {B1(M "/-",
                    "{'id': 323, 'nodev': true, 'parent': 300, 'dev': '8:1', 'root': '/home/u', 'mountpoint': '/tmp', "
                    "'fstype': 'ext4', "
                    "'source': '/dev/sda1', 'writable': true, 'options': ['rw'], 'super': [], 'target': {'type': "
                    "'dir', 'dev': '8:1', 'ino': 2}}",
                    "a writable mount at /tmp (ext4 /dev/sda1, root /home/u) is backed by the host"),
                 1},
                {B2(M "/-",
                    "{'id': 323, 'nodev': true, 'parent': 300, 'dev': '8:1', 'root': '/home/u', 'mountpoint': '/tmp', "
                    "'fstype': 'ext4', "
                    "'source': '/dev/sda1', 'writable': true, 'options': ['rw'], 'super': [], 'target': {'type': "
                    "'dir', 'dev': '8:1', 'ino': 2}}",
                    M "/-",
                    "{'id': 324, 'nodev': true, 'parent': 323, 'dev': '0:46', 'root': '/', 'mountpoint': '/tmp', "
                    "'fstype': 'tmpfs', "
                    "'source': 'tmpfs', 'writable': false, 'options': ['ro'], 'super': []}",
                    NULL),
                 0},
                /* /proc: host-global entries covered read-only; no writable proc rooted inside one */
                {B1(M "/3/writable", "true", "a writable proc mount at /proc/sys exposes /proc/sys (its root /sys)"),
                 2},
                {B1(M "/3/writable", "true",
                    "/proc/sys (the host's /proc/sys) is writable in the sandbox: no read-only "
                    "mount covers it"),
                 2},
                {B1(M "/4", NULL, "/proc/sysrq-trigger (the host's /proc/sysrq-trigger) is writable in the sandbox"),
                 1},
                {B2("/host/proc_entries", "['sys']", M "/4", NULL, NULL), 0},
                {B1(M "/-",
                    "{'id': 325, 'nodev': true, 'parent': 300, 'dev': '0:41', 'root': '/sys/kernel', 'mountpoint': "
                    "'/mnt/k', "
                    "'fstype': 'proc', 'source': 'proc', 'writable': true, 'options': ['rw'], 'super': [], 'target': "
                    "{'type': 'dir', 'dev': '0:41', "
                    "'ino': 4026531900}}",
                    "a writable proc mount at /mnt/k exposes /proc/sys (its root /sys/kernel)"),
                 1},
                {B1(M, "[]", "the host could not read the sandbox's mount table"), 1},
        };
        json_object *run = good_run(), *problems = NULL;
        assert_int_equal(mount_problems_of(run, &problems), 0);
        json_object_put(problems);
        json_object_put(run);
        for (size_t i = 0; i < KB_ELEMENTSOF(cases); i++) {
                run = good_run();
                apply(run, &cases[i].b);
                int n = mount_problems_of(run, &problems);
                if (n != cases[i].problems)
                        fail_msg("case %zu: %d problems, not %d: %s", i, n, cases[i].problems, text_of(problems));
                bool named = !cases[i].b.words;
                for (size_t p = 0; !named && p < json_object_array_length(problems); p++)
                        named = strstr(json_object_get_string(json_object_array_get_idx(problems, p)),
                                       cases[i].b.words);
                if (!named)
                        fail_msg("case %zu: nothing names '%s': %s", i, cases[i].b.words, text_of(problems));
                json_object_put(problems);
                json_object_put(run);
        }
        kb_judge_mount_facts none = {0};
        assert_int_equal(kb_judge_mount_problems(NULL, &none, NULL), -EINVAL);
        json_object *out = json_object_new_array(); /* refused, so still the test's to free */
        assert_int_equal(kb_judge_mount_problems(NULL, NULL, out), -EINVAL);
        json_object_put(out);
}

/* ---- boundary.write_outside ---- */

static void test_write_outside(void **state) {
        static const breakage fails[] = {
                B1("/host", NULL, "the host could not read its own mounts"),
                /* without the host's table every tmpfs would look private */
                B1("/host/mounts", NULL, "the host could not read its own mounts"),
                B1("/host/mounts", "[]", "the host could not read its own mounts"),
                B1(M, NULL, "the host could not read the sandbox's mount table"),
                B1(M "/1/writable", "true",
                   "a writable mount at /usr (ext4 /dev/sda1, root /usr) is backed by the host"),
                B1(M "/4", NULL, "/proc/sysrq-trigger (the host's /proc/sysrq-trigger) is writable in the sandbox"),
                /* the cell's sub-probes */
                B1("/probe/errors/-", "{'probe': 'write_outside', 'error': 'MemoryError: '}",
                   "the cell's write_outside sub-probe failed: MemoryError"),
                B1("/probe/errors/-", "{'probe': 'mounts.parse', 'error': 'IndexError: list index out of range'}",
                   "the cell's mounts.parse sub-probe failed: IndexError"),
                B1("/probe/errors/-", "{'probe': 'sysctl', 'error': 'EPERM'}",
                   "the cell's sysctl sub-probe failed: EPERM"),
                B1("/probe/errors/-", "{'probe': 'sysctl'}", "the cell's sysctl sub-probe failed: ?"),
                B1("/probe/write_outside", "[]", "the cell reported no write attempts"),
                B1("/probe/write_outside", NULL, "the cell reported no write attempts"),
                B1("/probe/sysctl", "[]", "the cell reported no attempt on host settings"),
                B1("/probe/sysctl", "{}", "the cell reported no attempt on host settings"),
                /* where a created file landed, by the host's table */
                B1("/probe/write_outside/3/created", "true",
                   "the cell created a file in /usr, on a mount the host does not class as the sandbox's own"),
                B1("/probe/write_outside/-", "{'path': '/home/u', 'created': true}",
                   "the cell created a file in /home/u, on a mount the host does not class as the sandbox's own"),
                B1(M "/9/dev", "'0:25'", "the cell created a file in /tmp, on a mount the host does not class"),
                B1("/probe/write_outside/1/path", NULL, "the cell created a file in ?"),
                B1("/expect/escapes_seen", "['/var/tmp/kbound-escape-5f3a']",
                   "the host sees the cell's file at /var/tmp/kbound-escape-5f3a"),
                B1("/probe/sysctl/1/opened", "true",
                   "the cell opened the host setting /proc/sysrq-trigger for writing"),
        };
        EXPECT_FAILS(kb_judge_write_outside, fails);
        static const breakage passes[] = {
                /* another sub-probe's error is another check's */
                B1("/probe/errors/-", "{'probe': 'network.tcp', 'error': 'OSError'}", NULL),
                /* a file created in the team's workspace stays the team's */
                B1("/probe/write_outside/-", "{'path': '/workspace/sub', 'created': true}",
                   "(3 writes stayed private)"),
        };
        EXPECT_PASSES(kb_judge_write_outside, passes);
}

/* Every mount table among the sandbox's processes is judged, in every look: a process left in
 * bwrap's mount namespace keeps a writable host bind that the kernel's own namespace covers. */
#define LEAK_TABLE                                                                                                     \
        "{'4026532299': [{'id': 400, 'parent': 399, 'nodev': true, 'dev': '0:40', 'root': '/', 'mountpoint': '/', "    \
        "'fstype': 'tmpfs', 'source': 'tmpfs', 'writable': false, 'options': ['ro'], 'super': [], 'target': {'type': " \
        "'dir', 'dev': '0:40', 'ino': "                                                                                \
        "1}}, "                                                                                                        \
        "{'id': 401, 'parent': 400, 'nodev': true, 'dev': '8:1', 'root': '/tmp/leak', 'mountpoint': '/mnt/hostleak', " \
        "'fstype': 'ext4', 'source': '/dev/sda1', 'writable': true, 'options': ['rw'], 'super': [], 'target': "        \
        "{'type': 'dir', 'dev': '8:1', "                                                                               \
        "'ino': 4242}}]}"

static void test_write_outside_every_table(void **state) {
        static const breakage fails[] = {
                B2("/snapshots/1/mount_tables", LEAK_TABLE, "/snapshots/1/processes/0/ns/mnt", "4026532299",
                   "in the mount namespace of pid 1001 (bwrap): a writable mount at /mnt/hostleak (ext4 /dev/sda1, "
                   "root "
                   "/tmp/leak) is backed by the host"),
                /* a namespace seen only in the first look counts as much */
                B2("/snapshots/0/mount_tables", LEAK_TABLE, "/snapshots/0/processes/0/ns/mnt", "4026532299",
                   "a writable mount at /mnt/hostleak"),
                /* and a problem of the kernel's table in the first look only */
                B1("/snapshots/0/mounts/1/writable", "true", "a writable mount at /usr (ext4 /dev/sda1, root /usr)"),
                /* a mount still tied to a peer group receives what is mounted outside, read-only or not;
                 * in the last look only (the final look, after a change of the table) as much */
                B1("/snapshots/0/mounts/1/master", "12",
                   "the sandbox's mount at /usr is a slave of peer group 12: mounts made under it outside the sandbox "
                   "appear in the sandbox"),
                B1("/snapshots/1/mounts/9/shared", "40", "the sandbox's mount at /tmp is a member of peer group 40"),
                /* a table the host could not read */
                B1("/snapshots/1/errors/-", "{'what': 'a mount table', 'error': 'Permission denied'}",
                   "the host could not read every mount table of the sandbox (a mount table: Permission denied)"),
                /* the other namespaces' tables not read are not none */
                B1("/snapshots/1/mount_tables", NULL,
                   "the host did not read the mount tables of the sandbox's other mount namespaces (child alive)"),
                /* a process in a mount namespace of its own whose table the look lacks (it ended, or
                 * its namespace changed, before the table was read): not judged, never the kernel's */
                B1("/snapshots/1/processes/2/ns/mnt", "4026532299",
                   "the host did not read the mount table of pid 1003 (python3)'s mount namespace 4026532299 (child "
                   "alive)"),
                /* a process whose mount namespace the host could not read: the kernel's table is
                 * not taken for it */
                B1("/snapshots/1/processes/2/ns/mnt", NULL,
                   "the host could not read the mount namespace of pid 1003 (python3) (child alive): what it "
                   "reaches there was not judged"),
                B1("/snapshots/1/processes/1/ns/mnt", NULL,
                   "the host could not read the mount namespace of pid 1002 (python3) (child alive): what it "
                   "reaches there was not judged"),
        };
        EXPECT_FAILS(kb_judge_write_outside, fails);
        /* too many namespaces to inspect: every host-judged check fails */
        static const breakage over[] = {
                B1("/snapshots/1/errors/-", "{'what': 'more mount namespaces than kbound inspects', 'error': 'E2BIG'}",
                   "the host did not inspect every mount namespace of the sandbox (child alive)"),
        };
        for (size_t j = 0; j < KB_ELEMENTSOF(judges); j++)
                if (judges[j].host_looks)
                        expect_each(judges[j].judge, "fail", over, KB_ELEMENTSOF(over));
        static const breakage passes[] = {
                /* another namespace with nothing but what the kernel's has */
                B2("/snapshots/1/mount_tables", "{'4026532299': " SANDBOX_MOUNTS "}", "/snapshots/1/processes/2/ns/mnt",
                   "4026532299", "the sandbox's 2 mount tables"),
        };
        EXPECT_PASSES(kb_judge_write_outside, passes);
}

/* A filesystem of a private type is the sandbox's own only if no mount namespace outside the
 * sandbox holds it, and, where some outside process's table was unreadable, if bwrap was told to
 * make it there. */
static void test_write_outside_private_filesystems(void **state) {
#define OUTSIDE "/snapshots/1/outside_mounts"
#define ARGV "/snapshots/1/launcher/argv"
        static const breakage fails[] = {
                B1(OUTSIDE "/devices/0:44", "4242",
                   "a writable mount at /tmp (tmpfs tmpfs, root /) is not the sandbox's own: the mount namespace of "
                   "pid "
                   "4242, outside the sandbox, holds its device 0:44 too"),
                /* the first look's outside namespaces count too */
                B1("/snapshots/0/outside_mounts/devices/0:41", "777",
                   "a writable mount at /proc (proc proc, root /) is not "
                   "the sandbox's own: the mount namespace of pid 777"),
                B1(OUTSIDE, NULL,
                   "is not the sandbox's own: the host did not read the mount namespaces outside the sandbox"),
                B1(OUTSIDE "/unreadable", NULL, "the host did not read the mount namespaces outside the sandbox"),
                B1(OUTSIDE "/devices", "[]", "the host did not read the mount namespaces outside the sandbox"),
                /* unreadable outside processes: only what bwrap was told to make there */
                B2(OUTSIDE "/unreadable", "2", M "/-", TMPFS_AT(330, 305, "0:45", "/dev/shm"),
                   "a writable mount at /dev/shm (tmpfs tmpfs, root /) is not the sandbox's own: the host could not "
                   "read "
                   "the mount tables of 2 processes outside the sandbox, and bwrap was not told to make it there"),
                B2(OUTSIDE "/unreadable", "1", ARGV "/16", "'--dir'", "a writable mount at /tmp (tmpfs tmpfs, root /)"),
                /* a bind after the tmpfs: the last operation at /tmp binds */
                B2(OUTSIDE "/unreadable", "1", ARGV,
                   "['bwrap', '--die-with-parent', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', "
                   "'--bind', '/x', '/tmp', '--', 'python3']",
                   "the mount tables of 1 process outside the sandbox"),
                /* a --dev over /dev/pts: the devpts is no longer --dev's */
                B2(OUTSIDE "/unreadable", "1", ARGV,
                   "['bwrap', '--die-with-parent', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', "
                   "'--tmpfs', '/dev/pts', '--', 'python3']",
                   "a writable mount at /dev/pts (devpts devpts, root /)"),
                /* a command line bwrap's grammar cannot read plans nothing */
                B2(OUTSIDE "/unreadable", "1", ARGV "/1", "'--frobnicate'", "bwrap was not told to make it there"),
        };
        EXPECT_FAILS(kb_judge_write_outside, fails);
        static const breakage passes[] = {
                /* unreadable outside processes, and every private mount is one bwrap was told to make */
                B1(OUTSIDE "/unreadable", "3", NULL),
                /* a device outside namespaces hold is judged as what it is (a team bind here) */
                B1(OUTSIDE "/devices/8:1", "1", NULL),
        };
        EXPECT_PASSES(kb_judge_write_outside, passes);
#undef OUTSIDE
#undef ARGV
}

/* Only kbound's own /dev nodes let device nodes be opened, read-only mounts included. */
static void test_write_outside_devices(void **state) {
#define RODEV                                                                                                          \
        "{'id': 330, 'parent': 300, 'nodev': false, 'dev': '0:60', 'root': '/', 'mountpoint': '/mnt/rodev', "          \
        "'fstype': 'tmpfs', 'source': 'none', 'writable': false, 'options': ['ro'], 'super': [], 'target': {'type': "  \
        "'dir', 'dev': '0:60', 'ino': 1}}"
        static const breakage fails[] = {
                B1(M "/-", RODEV,
                   "a mount at /mnt/rodev (tmpfs none, root /) lets device nodes be opened (no nodev) and is not one "
                   "of "
                   "kbound's own /dev nodes"),
                B1(M "/1/nodev", "false", "a mount at /usr (ext4 /dev/sda1, root /usr) lets device nodes be opened"),
                /* unknown is not nodev */
                B1(M "/1/nodev", NULL, "a mount at /usr (ext4 /dev/sda1, root /usr) lets device nodes be opened"),
                B1(M "/1/nodev", "'true'", "a mount at /usr (ext4 /dev/sda1, root /usr) lets device nodes be opened"),
                /* a read-only bind of a device that is not /dev/null-like */
                B2(M "/6/writable", "false", M "/6/target/rdev", "'1:11'",
                   "a mount at /dev/null (devtmpfs udev, root /null) lets device nodes be opened"),
                /* a devpts is --dev's only if it is the sandbox's own */
                B2(M "/8/writable", "false", "/snapshots/1/outside_mounts/devices/0:43", "99",
                   "a mount at /dev/pts (devpts devpts, root /) lets device nodes be opened"),
                B2(M "/8/writable", "false", M "/8/dev", "'0:24'",
                   "a mount at /dev/pts (devpts devpts, root /) lets device"),
                /* in another mount namespace of the sandbox too */
                B2("/snapshots/1/mount_tables", "{'4026532299': [" RODEV "]}", "/snapshots/1/processes/2/ns/mnt",
                   "4026532299", "in the mount namespace of pid 1003 (python3): a mount at /mnt/rodev (tmpfs none"),
        };
        EXPECT_FAILS(kb_judge_write_outside, fails);
        /* (planned, each: an unplanned one fails whatever it is, test_write_outside_unplanned) */
        static const breakage passes[] = {
                /* a device-allowing mount hidden under a later one is not reached */
                B4(M "/-", RODEV, M "/-",
                   "{'id': 331, 'parent': 330, 'nodev': true, 'dev': '0:61', 'root': '/', 'mountpoint': '/mnt/rodev', "
                   "'fstype': 'tmpfs', 'source': 'tmpfs', 'writable': false, 'options': ['ro'], 'super': []}",
                   PLANNED "/-",
                   "{'mountpoint': '/mnt/rodev', 'kind': 'bind', 'asked': '--dev-bind /srv/rodev /mnt/rodev', "
                   "'source': {'dev': '0:60', 'ino': 1}, 'read_only': true, 'nodev': false, 'nosuid': false}",
                   PLANNED "/-",
                   "{'mountpoint': '/mnt/rodev', 'kind': 'fresh', 'asked': '--tmpfs /mnt/rodev', 'fstype': 'tmpfs', "
                   "'read_only': true, 'nodev': true, 'nosuid': false}",
                   NULL),
                /* a /dev/null-like node bound anywhere */
                B2(M "/-",
                   "{'id': 332, 'parent': 300, 'nodev': false, 'dev': '0:5', 'root': '/zero', 'mountpoint': "
                   "'/mnt/zero', "
                   "'fstype': 'devtmpfs', 'source': 'udev', 'writable': false, 'options': ['ro'], 'super': [], "
                   "'target': {'type': 'chr', 'dev': '0:5', "
                   "'ino': 8, 'rdev': '1:5'}}",
                   PLANNED "/-",
                   "{'mountpoint': '/mnt/zero', 'kind': 'bind', 'asked': '--dev-bind /dev/zero /mnt/zero', "
                   "'source': {'dev': '0:5', 'ino': 8}, 'read_only': true, 'nodev': false, 'nosuid': false}",
                   NULL),
        };
        EXPECT_PASSES(kb_judge_write_outside, passes);
#undef RODEV
}

/* A mount kbound did not plan, or not so, fails when it lets the sandbox write or open devices where
 * the plan did not, whatever lies under it (sandbox.backend names every difference): a private
 * tmpfs, the sandbox's own, passes every other rule of this check. */
static void test_write_outside_unplanned(void **state) {
        static const breakage fails[] = {
                B1(M "/-", TMPFS_AT(340, 300, "0:70", "/mnt/scratch"),
                   "a mount at /mnt/scratch (tmpfs tmpfs, root /, writable) that kbound did not plan"),
                /* before the kernel ran too */
                B1("/pre_exec/mounts/-", TMPFS_AT(340, 300, "0:70", "/mnt/scratch"),
                   "before the kernel ran: a mount at /mnt/scratch (tmpfs tmpfs, root /, writable) that kbound did "
                   "not plan"),
                /* planned read-only, built writable */
                B2(M "/9/writable", "true", PLANNED "/11/read_only", "true",
                   "the mount at /tmp (tmpfs tmpfs, root /, writable) is not the one kbound planned there (--tmpfs "
                   "/tmp): it is writable, where kbound planned it read-only"),
        };
        EXPECT_FAILS(kb_judge_write_outside, fails);
        static const breakage passes[] = {
                /* read-only and nodev: it widens no write (sandbox.backend fails it) */
                B1(M "/-",
                   "{'id': 341, 'parent': 300, 'nodev': true, 'dev': '8:1', 'root': '/etc', 'mountpoint': '/mnt/etc', "
                   "'fstype': 'ext4', 'source': '/dev/sda1', 'writable': false, 'options': ['ro', 'nosuid'], "
                   "'super': [], 'target': {'type': 'dir', 'dev': '8:1', 'ino': 393217}}",
                   NULL),
                /* planned writable, built read-only: nothing more is written */
                B1(M "/10/writable", "false", NULL),
        };
        EXPECT_PASSES(kb_judge_write_outside, passes);
}

#undef M
#undef PLANNED

/* ---- boundary.workspace_writable ---- */

static void test_workspace(void **state) {
        static const breakage fails[] = {
                B1("/probe/errors/-", "{'probe': 'workspace', 'error': 'OSError: [Errno 28]'}",
                   "the cell's workspace sub-probe failed: OSError: [Errno 28]"),
                B2("/probe/workspace/written", "false", "/probe/workspace/error", "'EACCES'",
                   "the cell could not write to its workspace (EACCES)"),
                B1("/probe/workspace", NULL, "the cell could not write to its workspace (no reason given)"),
                B1("/probe/workspace/written", "1", "the cell could not write to its workspace"),
                B1("/expect/workspace_read_back", "false", "the host did not find the cell's nonce in the workspace"),
                B1("/expect/workspace_read_back", "'true'", "the host did not find the cell's nonce"),
                B1("/expect/workspace_read_back", NULL, "the host did not find the cell's nonce"),
        };
        EXPECT_FAILS(kb_judge_workspace, fails);
}

/* ---- /proc covers, on mountinfo text ---- */

static int problems_for(const char *mountinfo, const char *entries_json, json_object **ret_problems) {
        json_object *mounts = NULL;
        assert_int_equal(kb_procfs_mountinfo_parse(mountinfo, &mounts), 0);
        /* These are about /proc's covers: every mount refuses device nodes, no filesystem is held
         * outside the sandbox. */
        for (size_t i = 0; i < json_object_array_length(mounts); i++)
                json_object_object_add(json_object_array_get_idx(mounts, i), "nodev", json_object_new_boolean(true));
        json_object *entries = parse(entries_json),
                    *outside = parse("{'devices': {}, 'namespaces': 1, 'unreadable': 0}");
        json_object *problems = json_object_new_array();
        kb_judge_mount_facts facts = {.proc_entries = entries, .outside = outside};
        int n = kb_judge_mount_problems(mounts, &facts, problems);
        json_object_put(mounts);
        json_object_put(entries);
        json_object_put(outside);
        if (ret_problems)
                *ret_problems = problems;
        else
                json_object_put(problems);
        return n;
}

#define ROOT_LINE "1 0 0:40 /newroot / ro - tmpfs tmpfs rw\n"
#define PROC_LINE "2 1 0:41 / /proc rw,nosuid - proc proc rw\n"
#define ENTRIES "[\"sys\", \"sysrq-trigger\", \"irq\"]"

static void test_proc_covered(void **state) {
        /* every entry covered: by a read-only proc bind, a read-only /dev/null, a writable tmpfs mask */
        assert_int_equal(problems_for(ROOT_LINE PROC_LINE "3 2 0:21 /sys /proc/sys ro - proc proc rw\n"
                                                          "4 2 0:6 /null /proc/sysrq-trigger ro - devtmpfs d rw\n"
                                                          "5 2 0:44 / /proc/irq rw - tmpfs tmpfs rw\n",
                                      ENTRIES, NULL),
                         0);
        /* entries this host lacks need no cover */
        assert_int_equal(problems_for(ROOT_LINE PROC_LINE, "[]", NULL), 0);
        /* a read-only proc needs no cover */
        assert_int_equal(problems_for(ROOT_LINE "2 1 0:41 / /proc ro - proc proc rw\n", ENTRIES, NULL), 0);
        /* a writable proc hidden under a later mount is not reachable */
        assert_int_equal(problems_for(ROOT_LINE "2 1 0:41 / /mnt rw - proc proc rw\n"
                                                "3 1 0:44 / /mnt ro - tmpfs tmpfs rw\n",
                                      ENTRIES, NULL),
                         0);
}

static void test_proc_exposed(void **state) {
        json_object *p = NULL;
        /* bwrap's old behaviour for a uid-0 sandbox: nothing covered */
        assert_int_equal(problems_for(ROOT_LINE PROC_LINE, ENTRIES, &p), 3);
        assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(p, 0)), "/proc/sys"));
        json_object_put(p);
        /* one cover missing */
        assert_int_equal(problems_for(ROOT_LINE PROC_LINE "3 2 0:21 /sys /proc/sys ro - proc proc rw\n"
                                                          "4 2 0:21 /irq /proc/irq ro - proc proc rw\n",
                                      ENTRIES, &p),
                         1);
        assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(p, 0)), "sysrq-trigger"));
        json_object_put(p);
        /* a cover that is itself a writable proc mount: named as the uncovered entry of /proc and as
         * a writable mount of the entry itself */
        assert_int_equal(
                problems_for(ROOT_LINE PROC_LINE "3 2 0:21 /sys /proc/sys rw - proc proc rw\n", "[\"sys\"]", NULL), 2);
        /* a cover that is read-only per mount but a proc bind made writable below it */
        assert_int_equal(problems_for(ROOT_LINE PROC_LINE "3 2 0:21 /sys /proc/sys ro - proc proc rw\n"
                                                          "4 3 0:21 /sys/kernel /proc/sys/kernel rw - proc proc rw\n",
                                      "[\"sys\"]", &p),
                         1);
        assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(p, 0)), "exposes /proc/sys"));
        json_object_put(p);
        /* the host's proc bound writable somewhere else entirely */
        assert_int_equal(problems_for(ROOT_LINE "2 1 0:21 / /hostproc rw - proc proc rw\n", "[\"sys\"]", NULL), 1);
        /* a second proc mounted writable over the cover */
        assert_int_equal(problems_for(ROOT_LINE PROC_LINE "3 2 0:21 /sys /proc/sys ro - proc proc rw\n"
                                                          "4 3 0:41 /sys /proc/sys rw - proc proc rw\n",
                                      "[\"sys\"]", NULL),
                         2);
}

static void test_mounts_missing(void **state) {
        json_object *problems = json_object_new_array();
        kb_judge_mount_facts none = {0};
        assert_int_equal(kb_judge_mount_problems(NULL, &none, problems), 1);
        assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(problems, 0)), "could not read"));
        json_object *empty = json_object_new_array();
        assert_int_equal(kb_judge_mount_problems(empty, &none, problems), 1);
        json_object_put(empty);
        json_object_put(problems);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_mount_problems),
                cmocka_unit_test(test_proc_covered),
                cmocka_unit_test(test_proc_exposed),
                cmocka_unit_test(test_mounts_missing),
                cmocka_unit_test(test_write_outside),
                cmocka_unit_test(test_write_outside_every_table),
                cmocka_unit_test(test_write_outside_private_filesystems),
                cmocka_unit_test(test_write_outside_devices),
                cmocka_unit_test(test_write_outside_unplanned),
                cmocka_unit_test(test_workspace),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

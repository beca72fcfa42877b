/* test_judge_resources.c: sandbox.resources on small looks: the limits in force read from each
 * process's cgroups (only the sandbox's own count) and rlimits, the sizes of the writable tmpfs,
 * OOM kills, the peaks, and limits given up. Each case breaks one thing of a passing look. */
#include "judge_fixture.h"

#define OWN_MEM "/sys/fs/cgroup/memory/kbound-1-0-team"
#define OWN_PIDS "/sys/fs/cgroup/pids/kbound-1-1-team"
#define OWN_CPU "/sys/fs/cgroup/cpu/kbound-1-2-team"
#define MIB (1024 * 1024)

/* Two processes (bwrap's init, the kernel) in the sandbox's own cgroups, rlimits set in the kernel
 * only for tasks, both for memory; /tmp and /dev/shm sized 512 MiB, /workspace 1 GiB, the socket
 * folder 1 MiB, the team's host folder read-only beside it. */
static const char look[] =
        "{'label': 'ready', 'errors': [],"
        " 'processes': ["
        "  {'pid': 1001, 'name': 'bwrap', 'nspid': [1001, 1], 'limits': {'nproc': -1, 'as': 2147483648},"
        "   'cgroups': {'memory': '/kbound-1-0-team', 'pids': '/kbound-1-1-team'}},"
        "  {'pid': 1002, 'name': 'python3', 'nspid': [1002, 2], 'limits': {'nproc': 512, 'as': 2147483648},"
        "   'cgroups': {'memory': '/kbound-1-0-team', 'pids': '/kbound-1-1-team'}}],"
        " 'resources': {'rss_bytes': 73400320, 'tasks': 9, 'used': {'/tmp': 8192, '/dev/shm': 0, '/workspace': 45056},"
        "  'cgroups': {'memory:/kbound-1-0-team': {'dir': '" OWN_MEM "', 'memory_max': 2147483648,"
        "                 'memory_peak': 80000000, 'oom_kill': 0},"
        "              'pids:/kbound-1-1-team': {'dir': '" OWN_PIDS "', 'pids_max': 512, 'pids_peak': 11}}},"
        " 'mounts': ["
        "  {'mountpoint': '/', 'fstype': 'tmpfs', 'writable': false, 'super': ['ro']},"
        "  {'mountpoint': '/tmp', 'fstype': 'tmpfs', 'writable': true, 'super': ['rw', 'size=524288k']},"
        "  {'mountpoint': '/dev/shm', 'fstype': 'tmpfs', 'writable': true, 'super': ['rw', 'size=524288k']},"
        "  {'mountpoint': '/workspace', 'fstype': 'tmpfs', 'writable': true, 'super': ['rw', 'size=1048576k']},"
        "  {'mountpoint': '/run/kbound', 'fstype': 'tmpfs', 'writable': true, 'super': ['rw', 'size=1024k']},"
        "  {'mountpoint': '/run/kbound-host', 'fstype': 'ext4', 'writable': false, 'super': ['rw']}]}";

/* The look's cgroups with the sandbox's cpu cgroup too, its limit in thousandths of a CPU (a new
 * key with a slash is set whole: json-c's pointer does not unescape a last segment it adds). */
#define CGROUPS_WITH_CPU(milli)                                                                                        \
        "{'memory:/kbound-1-0-team': {'dir': '" OWN_MEM "', 'memory_max': 2147483648, 'memory_peak': 80000000,"        \
        " 'oom_kill': 0}, 'pids:/kbound-1-1-team': {'dir': '" OWN_PIDS "', 'pids_max': 512, 'pids_peak': 11},"         \
        " 'cpu:/kbound-1-2-team': {'dir': '" OWN_CPU "', 'cpu_max_milli': " milli "}}"

static const char expect[] =
        "{'limits': {'memory': 2147483648, 'tasks': 512, 'tmp': 536870912, 'workspace': 1073741824, 'log': 16777216,"
        "  'cpu': 0, 'tmpfs_size': true},"
        " 'cgroup': {'version': 1, 'dirs': ['" OWN_MEM "', '" OWN_PIDS "', '" OWN_CPU "']},"
        " 'kernel_log': {'pipe': 'pipe:[77]', 'max': 16777216, 'written': 20971520, 'dropped': 12582912,"
        "  'kept': 8388608}}";

static json_object *run_of(void) {
        json_object *run = json_object_new_object();
        json_object *snaps = json_object_new_array();
        json_object_array_add(snaps, parse(look));
        json_object_object_add(run, "snapshots", snaps);
        json_object_object_add(run, "expect", parse(expect));
        json_object_object_add(run, "host", json_object_new_object());
        return run;
}

/* The small looks hold only what sandbox.resources reads: whether the evidence is whole, as
 * facts.def declares it, is test_judge's (kb_judge_malformed), so it is given as nothing broken. */
static json_object *judge(json_object *run) {
        json_object *whole = json_object_new_array();
        kb_judge_input in = {.host = member(run, "host"),
                             .snapshots = member(run, "snapshots"),
                             .expect = member(run, "expect"),
                             .malformed = whole};
        json_object *check = kb_judge_resources(&in);
        json_object_put(whole);
        return check;
}

static void expect_result(const breakage *b, const char *status) {
        json_object *run = run_of();
        apply(run, b);
        json_object *check = judge(run);
        assert_status_naming(check, status, b->words, b->edits[0].pointer);
        json_object_put(check);
        json_object_put(run);
}

static void test_pass_by_cgroups(void **state) {
        static const breakage b =
                B1("/expect/limits/tmpfs_size", "true",
                   "memory at most 2.0 GiB for the whole sandbox (its memory cgroup, swap included) "
                   "(peak 76.3 MiB), tasks at most 512 for the whole sandbox (its pids cgroup) (peak 11)");
        expect_result(&b, "pass");
}

static void test_fails(void **state) {
        static const breakage fails[] = {
                /* no cgroup of the sandbox's own, and the kernel's address space unbounded */
                B2("/snapshots/0/processes/1/cgroups", "{}", "/snapshots/0/processes/1/limits/as", "-1",
                   "pid 1002 (python3) runs with no memory limit of at most 2.0 GiB in force (cgroup: none; address "
                   "space: unlimited)"),
                /* an enclosing cgroup (a container's) is shared: its limit never counts */
                B2("/expect/cgroup/dirs", "[]", "/snapshots/0/processes/1/limits/nproc", "-1",
                   "pid 1002 (python3) runs with no tasks limit of at most 512 in force"),
                /* a limit above the one asked */
                B2("/snapshots/0/resources/cgroups/memory:~1kbound-1-0-team/memory_max", "4294967296",
                   "/snapshots/0/processes/0/limits/as", "4294967296",
                   "pid 1001 (bwrap) runs with no memory limit of at most 2.0 GiB in force (cgroup: above it"),
                B1("/snapshots/0/processes/1/limits", NULL, "the host could not read the limits of pid 1002 (python3)"),
                B1("/snapshots/0/mounts/1/super", "['rw']",
                   "the sandbox's /tmp is a writable tmpfs of no size of its own (the limit is 512.0 MiB each)"),
                B1("/snapshots/0/mounts/2/super", "['rw', 'size=1048576k']",
                   "the sandbox's /dev/shm is a writable tmpfs larger than asked"),
                /* any other writable tmpfs counts the same */
                B1("/snapshots/0/mounts/-",
                   "{'mountpoint': '/mnt/x', 'fstype': 'tmpfs', 'writable': true, 'super': ['rw']}",
                   "the sandbox's /mnt/x is a writable tmpfs of no size of its own"),
                B1("/snapshots/0/resources/cgroups/memory:~1kbound-1-0-team/oom_kill", "2",
                   "the sandbox's memory cgroup killed 2 process(es) at its limit"),
                B1("/expect/limits", NULL, "kbound did not record which limits it asked"),
                B1("/snapshots/0/mounts", NULL, "the host could not read the kernel's mount table"),
                /* processor time asked: no cgroup of the sandbox's own, one above the limit, or one
                 * kbound did not make (not in /expect/cgroup/dirs) */
                B1("/expect/limits/cpu", "1",
                   "pid 1001 (bwrap) runs with no cpu limit of at most 1 CPU(s) in force (cgroup: none"),
                B4("/expect/limits/cpu", "1", "/snapshots/0/processes/0/cgroups/cpu", "'/kbound-1-2-team'",
                   "/snapshots/0/processes/1/cgroups/cpu", "'/kbound-1-2-team'", "/snapshots/0/resources/cgroups",
                   CGROUPS_WITH_CPU("2000"),
                   "pid 1001 (bwrap) runs with no cpu limit of at most 1 CPU(s) in force (cgroup: above it"),
                /* the workspace: the host's disk, a tmpfs of no size or larger than asked (its own
                 * limit, not /tmp's: 1 GiB passes), or a bwrap without --size */
                B1("/snapshots/0/mounts/3",
                   "{'mountpoint': '/workspace', 'fstype': 'ext4', 'writable': true, 'super': ['rw']}",
                   "the sandbox's /workspace is not a tmpfs of at most 1.0 GiB: nothing bounds what it writes there"),
                B1("/snapshots/0/mounts/3/super", "['rw']", "the sandbox's /workspace is not a tmpfs of at most"),
                B1("/snapshots/0/mounts/3/super", "['rw', 'size=2097152k']",
                   "the sandbox's /workspace is not a tmpfs of at most 1.0 GiB"),
                B2("/snapshots/0/mounts/3/fstype", "'ext4'", "/expect/limits/tmpfs_size", "false",
                   "nothing bounds what it writes there (this bwrap has no --size)"),
                /* the socket folder: the team's host folder, read-write */
                B2("/snapshots/0/mounts/4/fstype", "'ext4'", "/expect/limits/tmpfs_size", "false",
                   "the sandbox's /run/kbound (the kernel's sockets) is the team's folder on the host's disk: "
                   "nothing bounds what it writes there (this bwrap has no --size)"),
                /* the log: a file the sandbox writes itself, or more of it on disk than asked */
                B2("/expect/kernel_log", NULL, "/expect/kernel_log_file", "{'dev': '8:1', 'ino': 12}",
                   "the kernel's log is a file the sandbox writes itself: nothing bounds it (asked 16.0 MiB)"),
                B1("/expect/kernel_log", NULL, "the kernel's log is a file the sandbox writes itself"),
                B1("/expect/kernel_log/kept", "16777217",
                   "16777217 bytes of the kernel's log are on disk, more than the 16.0 MiB asked"),
                B1("/expect/kernel_log/kept", NULL, "-1 bytes of the kernel's log are on disk"),
                /* a limit not recorded is not "not asked" */
                B1("/expect/limits/tmp", NULL, "kbound did not record whether it asked a tmp limit"),
                B1("/expect/limits/cpu", "'1'", "kbound did not record whether it asked a cpu limit"),
                /* writability not known is writable: the tmpfs is held to the limit, the host folder
                 * counts as written */
                B2("/snapshots/0/mounts/2/writable", NULL, "/snapshots/0/mounts/2/super", "['rw']",
                   "the sandbox's /dev/shm is a writable tmpfs of no size of its own"),
                B2("/snapshots/0/mounts/4/fstype", "'ext4'", "/snapshots/0/mounts/4/writable", NULL,
                   "the sandbox's /run/kbound (the kernel's sockets) is the team's folder on the host's disk"),
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(fails); i++)
                expect_result(&fails[i], "fail");
}

static void test_passes(void **state) {
        static const breakage passes[] = {
                /* no cgroup could be made: the limits inside stand alone, and say so */
                B3("/expect/cgroup", "{'version': 0, 'dirs': [], 'error': 'Permission denied'}",
                   "/snapshots/0/processes/0/cgroups", "{}", "/snapshots/0/processes/1/cgroups", "{}",
                   "memory at most 2.0 GiB per process (RLIMIT_AS) (peak 70.0 MiB), tasks at most 512 in the "
                   "sandbox's user namespace (RLIMIT_NPROC) (peak 9)"),
                /* bwrap's init has no RLIMIT_NPROC of its own: it forks PID 2 once */
                B2("/expect/cgroup/dirs", "['" OWN_MEM "']", "/snapshots/0/processes/0/limits/nproc", "-1",
                   "tasks at most 512 in the sandbox's user namespace (RLIMIT_NPROC)"),
                /* given up: reported as not claimed */
                B2("/expect/limits/tmp", "0", "/snapshots/0/mounts/1/super", "['rw']",
                   "NOT claimed (none asked): /tmp size"),
                B2("/expect/limits/tmp", "0", "/snapshots/0/mounts/4/fstype", "'ext4'",
                   "NOT claimed (none asked): /tmp size, the socket folder's size (host disk)"),
                /* processor time: none asked by default, and said so; asked, the sandbox's own cpu
                 * cgroup (v1 here) bounds every process */
                B1("/expect/limits/tmpfs_size", "true", "processor time (--cpu-max)"),
                B4("/expect/limits/cpu", "2", "/snapshots/0/processes/0/cgroups/cpu", "'/kbound-1-2-team'",
                   "/snapshots/0/processes/1/cgroups/cpu", "'/kbound-1-2-team'", "/snapshots/0/resources/cgroups",
                   CGROUPS_WITH_CPU("1500"), "processor time at most 2 CPU(s) for the whole sandbox (its cpu cgroup)"),
                /* the socket folder's tmpfs is one of the in-memory folders */
                B1("/expect/limits/tmpfs_size", "true", "each of its 3 writable in-memory folders at most 512.0 MiB"),
                /* the log's figures, and the log given up (its file then unbounded, said so) */
                B1("/expect/limits/tmpfs_size", "true",
                   "the kernel's log at most 16.0 MiB on disk (20971520 bytes written, 12582912 rotated away)"),
                B1("/expect/limits/tmpfs_size", "true",
                   "/workspace at most 1.0 GiB (a tmpfs of its own; 45056 bytes used at most)"),
                /* the workspace given up: the team's host folder, not claimed */
                B2("/expect/limits/workspace", "0", "/snapshots/0/mounts/3/fstype", "'ext4'",
                   "NOT claimed (none asked): workspace size"),
                B3("/expect/limits/log", "0", "/expect/kernel_log", NULL, "/expect/kernel_log_file",
                   "{'dev': '8:1', 'ino': 12}", "NOT claimed (none asked): log size"),
                B3("/expect/limits/log", "0", "/expect/limits/memory", "0", "/expect/limits/tasks", "0",
                   "NOT claimed (none asked): memory, tasks, log size"),
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(passes); i++)
                expect_result(&passes[i], "pass");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_pass_by_cgroups),
                cmocka_unit_test(test_fails),
                cmocka_unit_test(test_passes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

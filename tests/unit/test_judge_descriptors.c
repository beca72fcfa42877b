/* test_judge_descriptors.c: boundary.descriptors: every descriptor of every sandbox process. */
#include "judge_fixture.h"

/* ---- boundary.descriptors ---- */

#define KFDS "/snapshots/0/processes/1/fds"
#define KFD_NEW KFDS "/-"
/* A descriptor of pipe 7900 held by the kernel: flags 0 its read end, 1 its write end; more, its
 * other facts. */
#define PIPE_END(flags, more) "{'fd': 30, 'target': 'pipe:[7900]', 'type': 'fifo', 'flags': " #flags ", " more "}"

static void test_descriptors_files(void **state) {
        static const breakage fails[] = {
                B1(KFD_NEW,
                   "{'fd': 20, 'target': '/etc/shadow', 'type': 'reg', 'dev': '8:1', 'ino': 1234, 'flags': 32768, "
                   "'mnt_id': 20}",
                   "fd 20 of pid 1002 (python3): /etc/shadow is on a host mount (mount id 20) outside the sandbox"),
                /* the same in a thread's own descriptor table (clone without CLONE_FILES) */
                B1(KFD_NEW,
                   "{'fd': 3, 'tid': 1010, 'target': '/home/u', 'type': 'dir', 'dev': '8:1', 'ino': 4000, 'flags': "
                   "010000000, 'mnt_id': 20}",
                   "fd 3 of thread 1010 (its own descriptor table) of pid 1002 (python3): /home/u is on a host mount "
                   "(mount id 20)"),
                /* a zombie leader read through its live thread: that thread's table is the process's */
                B3("/snapshots/0/processes/1/state", "'Z'", "/snapshots/0/processes/1/read_through", "1010", KFD_NEW,
                   "{'fd': 20, 'target': '/etc/shadow', 'type': 'reg', 'dev': '8:1', 'ino': 1234, 'flags': 32768, "
                   "'mnt_id': 20}",
                   "fd 20 of pid 1002 (python3): /etc/shadow is on a host mount"),
                /* fdinfo unreadable: no mount id, never on one of the process's mounts */
                B1(KFD_NEW,
                   "{'fd': 21, 'target': '/usr/lib/os.py', 'type': 'reg', 'dev': '8:1', 'ino': 99, "
                   "'fdinfo_error': 'unreadable'}",
                   "fd 21 of pid 1002 (python3): /usr/lib/os.py is on a host mount (mount id -1)"),
                B1(KFDS "/6/target", NULL, "fd 6 of pid 1002 (python3): the host could not read what it refers to"),
                B1(KFD_NEW, "{'fd': 22, 'target': 'net:[4026531840]', 'mnt_id': 4}",
                   "fd 22 of pid 1002 (python3): net:[4026531840] is a kind of descriptor kbound does not let through"),
                /* a terminal is not /dev/null-like, even the "current terminal" node */
                B1(KFD_NEW,
                   "{'fd': 23, 'target': '/dev/tty', 'type': 'chr', 'dev': '0:5', 'ino': 12, 'rdev': '5:0', "
                   "'flags': 2, 'mnt_id': 21}",
                   "fd 23 of pid 1002 (python3): /dev/tty is on a host mount (mount id 21)"),
                B1(KFD_NEW,
                   "{'fd': 24, 'target': '/dev/pts/3', 'type': 'chr', 'dev': '0:24', 'ino': 6, 'rdev': '136:3', "
                   "'flags': 2, 'mnt_id': 22}",
                   "fd 24 of pid 1002 (python3): /dev/pts/3 is on a host mount (mount id 22)"),
                B1(KFDS "/0/rdev", "'8:0'", "fd 0 of pid 1002 (python3): /dev/null is on a host mount (mount id 21)"),
                B1(KFDS "/0/type", "'blk'", "fd 0 of pid 1002 (python3): /dev/null is on a host mount (mount id 21)"),
                /* the kernel's log: write-only and append-only, that file and no other */
                B1(KFDS "/1/flags", "33794",
                   "fd 1 of pid 1002 (python3): " LOG_PATH " is on a host mount (mount id 20)"),
                B1(KFDS "/2/flags", "32769",
                   "fd 2 of pid 1002 (python3): " LOG_PATH " is on a host mount (mount id 20)"),
                B1(KFDS "/2/flags", NULL, "fd 2 of pid 1002 (python3): " LOG_PATH " is on a host mount"),
                B1(KFDS "/1/ino", "778", "fd 1 of pid 1002 (python3): " LOG_PATH " is on a host mount (mount id 20)"),
                B1(KFDS "/1/dev", "'8:2'", "fd 1 of pid 1002 (python3): " LOG_PATH " is on a host mount (mount id 20)"),
                B1(KFDS "/1/type", "'fifo'",
                   "fd 1 of pid 1002 (python3): " LOG_PATH " is on a host mount (mount id 20)"),
                B1("/expect/kernel_log_file", NULL, "fd 1 of pid 1002 (python3): " LOG_PATH " is on a host mount"),
                /* a log file known by half its identity is not known */
                B1("/expect/kernel_log_file/ino", NULL, "fd 1 of pid 1002 (python3): " LOG_PATH " is on a host mount"),
                /* a keeper's log is a pipe: a file is no log of it */
                B2("/expect/kernel_log_file", NULL, "/expect/kernel_log", LOG_KEEPER("pipe:[7300]"),
                   "fd 1 of pid 1002 (python3): " LOG_PATH " is on a host mount"),
                /* anonymous memory only on the device kbound learned for it */
                B1(KFDS "/10/dev", "'0:25'",
                   "fd 10 of pid 1002 (python3): /memfd:ipc-shm (deleted) is on a host mount (mount id 16)"),
                B1("/host/memfd_dev", NULL, "fd 10 of pid 1002 (python3): /memfd:ipc-shm (deleted) is on a host mount"),
        };
        EXPECT_FAILS(kb_judge_descriptors, fails);
        static const breakage passes[] = {
                B1(KFD_NEW,
                   "{'fd': 20, 'target': '/usr/lib/os.py', 'type': 'reg', 'dev': '8:1', 'ino': 99, 'flags': 32768, "
                   "'mnt_id': 301}",
                   "all 36 open descriptors"),
                B1(KFD_NEW,
                   "{'fd': 20, 'target': '/dev/zero', 'type': 'chr', 'dev': '0:5', 'ino': 7, 'rdev': '1:5', "
                   "'flags': 0, 'mnt_id': 21}",
                   NULL),
                B1(KFD_NEW,
                   "{'fd': 20, 'target': '/dev/urandom', 'type': 'chr', 'dev': '0:5', 'ino': 9, 'rdev': '1:9', "
                   "'flags': 0, 'mnt_id': 21}",
                   NULL),
                /* the terminal node of the sandbox's own /dev (its mount 307) */
                B1(KFD_NEW,
                   "{'fd': 20, 'target': '/dev/tty', 'type': 'chr', 'dev': '0:5', 'ino': 12, 'rdev': '5:0', "
                   "'flags': 2, 'mnt_id': 307}",
                   NULL),
        };
        EXPECT_PASSES(kb_judge_descriptors, passes);
}

/* A device opened through one of the process's own mounts: only kbound's own /dev nodes and the
 * sandbox's own ptys. */
static void test_descriptors_devices(void **state) {
#define RODEV_MOUNT                                                                                                    \
        "{'id': 330, 'parent': 300, 'nodev': false, 'dev': '0:60', 'root': '/', 'mountpoint': '/mnt/rodev', "          \
        "'fstype': 'tmpfs', 'source': 'none', 'writable': false, 'options': ['ro'], 'super': [], 'target': {'type': "  \
        "'dir', 'dev': '0:60', 'ino': 1}}"
        static const breakage fails[] = {
                B2("/snapshots/0/mounts/-", RODEV_MOUNT, KFD_NEW,
                   "{'fd': 20, 'target': '/mnt/rodev/kmsg', 'type': 'chr', 'dev': '0:60', 'ino': 3, 'rdev': '1:11', "
                   "'flags': 1, 'mnt_id': 330}",
                   "fd 20 of pid 1002 (python3): /mnt/rodev/kmsg is a device (chr 1:11) opened through the mount at "
                   "/mnt/rodev (mount id 330), which is not one of kbound's own /dev nodes"),
                /* the node bound at /dev/null is /dev/null; another device opened through it is not */
                B1(KFD_NEW,
                   "{'fd': 20, 'target': '/dev/null', 'type': 'chr', 'dev': '0:5', 'ino': 5, 'rdev': '1:1', "
                   "'flags': 0, 'mnt_id': 306}",
                   "/dev/null is a device (chr 1:1) opened through the mount at /dev/null (mount id 306)"),
                /* a pty of a devpts a namespace outside the sandbox holds */
                B2(KFD_NEW,
                   "{'fd': 20, 'target': '/dev/pts/0', 'type': 'chr', 'dev': '0:43', 'ino': 3, 'rdev': '136:0', "
                   "'flags': 2, 'mnt_id': 308}",
                   "/snapshots/0/outside_mounts/devices/0:43", "1",
                   "/dev/pts/0 is a device (chr 136:0) opened through the mount at /dev/pts (mount id 308)"),
                B1(KFD_NEW,
                   "{'fd': 20, 'target': '/usr/sda', 'type': 'blk', 'dev': '8:1', 'ino': 3, 'rdev': '8:0', "
                   "'flags': 0, 'mnt_id': 301}",
                   "/usr/sda is a device (blk 8:0) opened through the mount at /usr"),
        };
        EXPECT_FAILS(kb_judge_descriptors, fails);
        static const breakage passes[] = {
                /* the sandbox's own ptys */
                B1(KFD_NEW,
                   "{'fd': 20, 'target': '/dev/pts/0', 'type': 'chr', 'dev': '0:43', 'ino': 3, 'rdev': '136:0', "
                   "'flags': 2, 'mnt_id': 308}",
                   NULL),
                B1(KFD_NEW,
                   "{'fd': 20, 'target': '/dev/pts/ptmx', 'type': 'chr', 'dev': '0:43', 'ino': 2, 'rdev': '5:2', "
                   "'flags': 2, 'mnt_id': 308}",
                   NULL),
                /* /dev/null-like, through any mount */
                B2("/snapshots/0/mounts/-", RODEV_MOUNT, KFD_NEW,
                   "{'fd': 20, 'target': '/mnt/rodev/null', 'type': 'chr', 'dev': '0:60', 'ino': 4, 'rdev': '1:3', "
                   "'flags': 1, 'mnt_id': 330}",
                   NULL),
        };
        EXPECT_PASSES(kb_judge_descriptors, passes);
#undef RODEV_MOUNT
}

/* The look before the kernel's program ran: what bwrap's init held then, the kernel inherits. */
static void test_descriptors_pre_exec(void **state) {
#define PRE_FDS "/pre_exec/processes/0/fds"
        static const breakage fails[] = {
                /* a pipe handed in by a stand-in, whose far end a helper outside holds */
                B1(PRE_FDS "/-",
                   "{'fd': 9, 'target': 'pipe:[9999]', 'type': 'fifo', 'dev': '0:14', 'ino': 9999, 'flags': 1, "
                   "'mnt_id': 14}",
                   "before the kernel ran, fd 9 of the sandbox's PID 1 (pid 1001) was pipe:[9999], which kbound did "
                   "not hand "
                   "in"),
                /* kbound's number, another object */
                B1(PRE_FDS "/3/ino", "8103",
                   "fd 4 of the sandbox's PID 1 (pid 1001) was socket:[8102], which kbound did not"),
                B1(PRE_FDS "/0/ino", "6", "fd 0 of the sandbox's PID 1 (pid 1001) was /dev/null, which kbound did not"),
                /* bwrap's own: one O_PATH descriptor of the host's /proc and one eventfd, no more */
                /* a second eventfd shared with the bwrap outside: not its status channel, and then
                 * neither is told apart from it */
                B2(PRE_FDS "/-", "{'fd': 9, 'target': 'anon_inode:[eventfd]', 'flags': 526338, 'mnt_id': 17}",
                   "/pre_exec/launcher/shared_files/-",
                   "{'target': 'anon_inode:[eventfd]', 'pid': 1000, 'name': 'bwrap', 'fd': 6, 'sandbox_pid': 1001, "
                   "'sandbox_fd': 9}",
                   "fd 9 of the sandbox's PID 1 (pid 1001) was anon_inode:[eventfd]"),
                /* bwrap's eventfd shared with kbound, not the bwrap it spawned */
                B1("/pre_exec/launcher/shared_files/0/pid", "5000",
                   "fd 8 of the sandbox's PID 1 (pid 1001) was anon_inode:[eventfd]"),
                /* an anonymous object a process outside holds too */
                B2(PRE_FDS "/-", "{'fd': 9, 'target': 'anon_inode:[timerfd]', 'flags': 2, 'mnt_id': 17}",
                   "/pre_exec/outside_channels/-",
                   "{'target': 'anon_inode:[timerfd]', 'pid': 6001, 'name': 'helper', 'fd': 3, 'sandbox_pid': 1001, "
                   "'sandbox_fd': 9}",
                   "fd 9 of the sandbox's PID 1 (pid 1001) was anon_inode:[timerfd]"),
                B1(PRE_FDS "/5/flags", "0",
                   "fd 7 of the sandbox's PID 1 (pid 1001) was /proc, which kbound did not hand in"),
                B1(PRE_FDS "/5/dev", "'0:40'", "fd 7 of the sandbox's PID 1 (pid 1001) was /proc"),
                B1(PRE_FDS "/4", NULL, "did not hold kbound's block channel as fd 6"),
                B1(PRE_FDS "/4/ino", "8101", "did not hold kbound's block channel as fd 6"),
                /* fdinfo not read: not O_PATH, so not bwrap's own /proc descriptor */
                B1(PRE_FDS "/5/flags", NULL,
                   "fd 7 of the sandbox's PID 1 (pid 1001) was /proc, which kbound did not hand in"),
                /* a block channel kbound did not record is none: nothing it was waiting on is kbound's */
                B1("/expect/launch/block_fd", NULL, "kbound kept no record of the block channel it handed bwrap"),
                B1("/expect/launch/block_fd", NULL, "bwrap's init was not waiting on kbound's block channel (fd -1)"),
                B1("/pre_exec/processes/0/errors/-", "{'what': 'fd', 'error': 'Permission denied'}",
                   "the host could not read the descriptors of PID 1 before the kernel ran (fd: Permission denied)"),
                /* the sandbox did not wait */
                B1("/pre_exec/processes/-", KERNEL_PROC,
                   "the sandbox did not wait for kbound: pid 1002 (python3, PID 2 in the sandbox) ran before kbound "
                   "let "
                   "the kernel start"),
                B2("/pre_exec/init/reads_fd", "-1", "/pre_exec/init/syscall", "'running'",
                   "bwrap's init was not waiting on kbound's block channel (fd 6) when the host looked (it was in: "
                   "running)"),
                B1("/pre_exec/init", NULL, "the host could not see whether bwrap's init waited before the kernel ran"),
                B1("/pre_exec/launcher/argv/20", "'--sync-fd'",
                   "the running bwrap was not started with --block-fd 6: nothing made the sandbox wait"),
                B1("/pre_exec/launcher/argv/21", "'7'", "the running bwrap was not started with --block-fd 6"),
                B2("/pre_exec/processes/0/exe/path", "'/usr/bin/python3'", "/pre_exec/processes/0/exe/ino", "5",
                   "before the kernel ran, the sandbox's PID 1 (pid 1001) was already /usr/bin/python3, not the bwrap "
                   "outside (/usr/bin/bwrap)"),
                B1("/pre_exec/launcher/exe", NULL, "was already /usr/bin/bwrap, not the bwrap outside (unknown)"),
                B1("/pre_exec/processes", "[]", "the host found no process in the sandbox before the kernel ran"),
                B1("/pre_exec/errors/-", "{'what': 'the process list', 'error': 'ENOMEM'}",
                   "could not list processes before the kernel ran (the process list: ENOMEM)"),
                B1("/pre_exec", NULL, "the host took no look at the sandbox before the kernel's program ran"),
                B1("/expect/launch", NULL, "kbound kept no record of the descriptors it handed bwrap"),
        };
        EXPECT_FAILS(kb_judge_descriptors, fails);
        static const breakage passes[] = {
                /* kbound's info pipe and syscall probe, had bwrap kept them */
                B2(PRE_FDS "/-",
                   "{'fd': 3, 'target': 'pipe:[8099]', 'type': 'fifo', 'dev': '0:14', 'ino': 8099, 'flags': 1}",
                   PRE_FDS "/-",
                   "{'fd': 5, 'target': '/build/kbound-syscall-probe', 'type': 'reg', 'dev': '8:1', 'ino': 999, "
                   "'flags': 2097152}",
                   "holding only the descriptors kbound handed it and bwrap's own (9)"),
                /* an eventfd only the sandbox holds reaches nothing */
                B1(PRE_FDS "/-", "{'fd': 9, 'target': 'anon_inode:[eventfd]', 'flags': 526338, 'mnt_id': 17}",
                   "bwrap's own (8)"),
        };
        EXPECT_PASSES(kb_judge_descriptors, passes);
#undef PRE_FDS
}

/* A process in a mount namespace of its own is judged by its own table. */
static void test_descriptors_other_mount_namespace(void **state) {
#define OWN_TABLE                                                                                                      \
        "{'4026532299': [{'id': 400, 'parent': 399, 'nodev': true, 'dev': '0:50', 'root': '/', 'mountpoint': '/', "    \
        "'fstype': "                                                                                                   \
        "'tmpfs', "                                                                                                    \
        "'source': 'tmpfs', 'writable': true, 'options': ['rw'], 'super': []}]}"
#define CHILD_FD "/snapshots/1/processes/2/fds/-"
        static const breakage fails[] = {
                /* the kernel's mount 311 is not in the child's table */
                B3("/snapshots/1/mount_tables", OWN_TABLE, "/snapshots/1/processes/2/ns/mnt", "4026532299", CHILD_FD,
                   "{'fd': 9, 'target': '/workspace/x', 'type': 'reg', 'dev': '8:1', 'ino': 5011, 'flags': 32768, "
                   "'mnt_id': 311}",
                   "fd 9 of pid 1003 (python3): /workspace/x is on a host mount (mount id 311)"),
        };
        EXPECT_FAILS(kb_judge_descriptors, fails);
        static const breakage passes[] = {
                B4("/snapshots/1/mount_tables", OWN_TABLE, "/snapshots/1/processes/2/ns/mnt", "4026532299", CHILD_FD,
                   "{'fd': 9, 'target': '/scratch', 'type': 'reg', 'dev': '0:50', 'ino': 3, 'flags': 32768, 'mnt_id': "
                   "400}",
                   "/snapshots/1/processes/2/refs",
                   "{'cwd': {'target': '/', 'type': 'dir', 'dev': '0:50', 'ino': 1, 'mnt_id': 400}, "
                   "'root': {'target': '/', 'type': 'dir', 'dev': '0:50', 'ino': 1, 'mnt_id': 400}, "
                   "'exe': {'target': '/sh', 'type': 'reg', 'dev': '0:50', 'ino': 2, 'mnt_id': 400}, 'threads': [], "
                   "'maps': []}",
                   NULL),
        };
        EXPECT_PASSES(kb_judge_descriptors, passes);
#undef OWN_TABLE
#undef CHILD_FD
}

#define KREFS "/snapshots/0/processes/1/refs"
#define HOST_DIR "{'target': '/home/u/src', 'type': 'dir', 'dev': '8:1', 'ino': 4000, 'mnt_id': 20}"

/* Every reference a sandbox process holds but its descriptors: working directory, root, program,
 * each thread's own, mapped files; read by the host (inspect_refs.c). */
static void test_descriptors_references(void **state) {
        static const breakage fails[] = {
                /* a working directory or root on a host mount (runc's CVE-2024-21626; an nsenter'd process) */
                B1(KREFS "/cwd", HOST_DIR,
                   "the working directory of pid 1002 (python3), /home/u/src (dev 8:1, inode 4000), is on mount 20, "
                   "which is not one of the sandbox's"),
                B1(KREFS "/root", "{'target': '/', 'type': 'dir', 'dev': '8:1', 'ino': 2, 'mnt_id': 20}",
                   "the root of pid 1002 (python3), / (dev 8:1, inode 2), is on mount 20"),
                B1(KREFS "/exe", "{'target': '/opt/x', 'type': 'reg', 'dev': '8:1', 'ino': 9, 'mnt_id': 20}",
                   "the program of pid 1002 (python3), /opt/x (dev 8:1, inode 9), is on mount 20"),
                /* a thread with a working directory of its own (unshare(CLONE_FS)) */
                B1(KREFS "/threads",
                   "[{'tid': 1010, 'cwd': " HOST_DIR ", 'root': {'target': '/', 'type': 'dir', "
                   "'dev': '0:40', 'ino': 1, 'mnt_id': 300}}]",
                   "the working directory of thread 1010 of pid 1002 (python3), /home/u/src"),
                /* missing and unreadable facts never pass */
                B1(KREFS, NULL, "the host did not read what pid 1002 (python3) holds besides its descriptors"),
                B2(KREFS "/cwd", NULL, KREFS "/cwd_error", "'Permission denied'",
                   "the host could not read the working directory of pid 1002 (python3): Permission denied"),
                B1(KREFS "/threads/-", "{'tid': 1011, 'cwd_error': 'Permission denied'}",
                   "the host could not read the working directory of thread 1011 of pid 1002"),
                B2(KREFS "/maps", NULL, "/snapshots/0/processes/1/errors/-", "{'what': 'maps', 'error': 'EACCES'}",
                   "the host could not read the memory mappings of pid 1002 (python3)"),
                B1(KREFS "/threads", NULL, "the host could not read the threads of pid 1002 (python3): not read"),
                B1(KREFS "/maps", NULL, "the host could not read the memory mappings of pid 1002 (python3): not read"),
                /* mappings: a host file the sandbox does not reach, shared and writable or not */
                B1(KREFS "/maps/-",
                   "{'path': '/etc/shadow', 'dev': '8:1', 'ino': 77, 'shared': true, 'writable': true, 'reach': "
                   "'none'}",
                   "pid 1002 (python3) holds a shared, writable mapping of /etc/shadow (dev 8:1, inode 77), a file the "
                   "sandbox does not reach at that path (nothing is there)"),
                B1(KREFS "/maps/-",
                   "{'path': '/usr/lib/x.so', 'dev': '8:1', 'ino': 78, 'shared': false, 'writable': false, 'reach': "
                   "'other'}",
                   "a mapping of /usr/lib/x.so (dev 8:1, inode 78), a file the sandbox does not reach at that path "
                   "(another file is there)"),
                B1(KREFS "/maps/-",
                   "{'path': '/usr/lib/y', 'dev': '8:1', 'ino': 79, 'shared': true, 'writable': true, 'reach': "
                   "'same', 'mnt_id': 301}",
                   "a shared, writable mapping of /usr/lib/y, on the read-only mount at /usr: writes to it go back"),
                B1(KREFS "/maps/-",
                   "{'path': '/srv/gone', 'dev': '8:1', 'ino': 80, 'shared': true, 'writable': true, 'deleted': true}",
                   "a shared, writable mapping of a deleted file /srv/gone (dev 8:1) the host cannot place"),
                B1(KREFS "/maps/-",
                   "{'path': '/usr/lib/z', 'dev': '8:1', 'ino': 81, 'shared': false, 'writable': false, "
                   "'reach_error': 'Permission denied'}",
                   "a mapping of /usr/lib/z: the host could not place it (Permission denied)"),
                /* bwrap's init's image is mapped privately: a shared, writable mapping of it, or one
                 * that does not say it is not (facts.def: REQUIRED_TRUE), writes to the host's file */
                B3("/pre_exec/processes/0/refs/maps/-",
                   "{'path': '/opt/bwrap/lib.so', 'dev': '8:1', 'ino': 4243, 'shared': true, 'writable': true, "
                   "'reach': 'none'}",
                   "/pre_exec/launcher/map_files", "['8:1:4242', '8:1:4243']", "/pre_exec/processes/0/exe", BWRAP_EXE,
                   "pid 1001 (bwrap) holds a shared, writable mapping of /opt/bwrap/lib.so"),
                B3("/pre_exec/processes/0/refs/maps/-",
                   "{'path': '/opt/bwrap/lib.so', 'dev': '8:1', 'ino': 4243, 'reach': 'none'}",
                   "/pre_exec/launcher/map_files", "['8:1:4242', '8:1:4243']", "/pre_exec/processes/0/exe", BWRAP_EXE,
                   "pid 1001 (bwrap) holds a shared, writable mapping of /opt/bwrap/lib.so"),
                /* a tracer outside the sandbox, or none known */
                B1("/snapshots/1/processes/2/tracer_pid", "5000",
                   "pid 1003 (python3) is traced by pid 5000, a process outside the sandbox"),
                B1("/snapshots/0/processes/1/tracer_pid", NULL,
                   "the host could not read whether pid 1002 (python3) is traced (TracerPid)"),
                B1("/pre_exec/processes/0/tracer_pid", "1000", "pid 1001 (bwrap) is traced by pid 1000"),
                /* PTRACE_SEIZE takes one thread: each thread's tracer, and threads not listed */
                B1("/snapshots/0/processes/1/tasks/1/tracer_pid", "5000",
                   "thread 1011 of pid 1002 (python3) is traced by pid 5000, a process outside the sandbox"),
                B1("/snapshots/1/processes/1/tasks/0/tracer_pid", NULL,
                   "the host could not read whether thread 1010 of pid 1002 (python3) is traced"),
                B1("/snapshots/0/processes/1/tasks", NULL, "the host could not list the threads of pid 1002 (python3)"),
                /* a zombie leader whose threads live on holds what they hold: not passed as a zombie */
                B2(KREFS "/cwd", NULL, "/snapshots/0/processes/1/state", "'Z'",
                   "the host could not read the working directory of pid 1002 (python3)"),
                /* the same before the kernel ran, in bwrap's init */
                B1("/pre_exec/processes/0/refs/cwd", HOST_DIR,
                   "the working directory of pid 1001 (bwrap), /home/u/src (dev 8:1, inode 4000), is on mount 20"),
        };
        EXPECT_FAILS(kb_judge_descriptors, fails);
        static const breakage passes[] = {
                /* shared and writable on a writable mount of the sandbox's own; deleted, on its tmpfs */
                B1(KREFS "/maps/-",
                   "{'path': '/tmp/shm', 'dev': '0:44', 'ino': 5, 'shared': true, 'writable': true, 'reach': 'same', "
                   "'mnt_id': 309}",
                   "and all 47 other references"),
                /* traced by a process of the sandbox's own */
                B1("/snapshots/1/processes/2/tracer_pid", "1002", NULL),
                B1(KREFS "/maps/-",
                   "{'path': '/tmp/x', 'dev': '0:44', 'ino': 6, 'shared': true, 'writable': true, 'deleted': true}",
                   NULL),
                /* a zombie holds no references of its own */
                B4(KREFS "/cwd", NULL, KREFS "/maps", NULL, "/snapshots/0/processes/1/state", "'Z'",
                   "/snapshots/0/processes/1/tasks", "[]", NULL),
                B3(KREFS "/threads", NULL, "/snapshots/0/processes/1/state", "'Z'", "/snapshots/0/processes/1/tasks",
                   "[{'tid': 1010, 'state': 'Z', 'errors': []}]", NULL),
                /* traced by a thread of the sandbox's own (a tracer is a thread) */
                B1("/snapshots/0/processes/1/tasks/1/tracer_pid", "1010", NULL),
                B1("/snapshots/1/processes/2/tracer_pid", "1011", NULL),
                /* a thread that has exited is traced by no one */
                B2("/snapshots/0/processes/1/tasks/1/tracer_pid", "5000", "/snapshots/0/processes/1/tasks/1/state",
                   "'Z'", NULL),
                /* bwrap's init: its program and the launcher's own libraries, from the host, are its image */
                B4("/pre_exec/processes/0/refs/maps/-",
                   "{'path': '/opt/bwrap/lib.so', 'dev': '8:1', 'ino': 4243, 'shared': false, 'writable': false, "
                   "'reach': 'none'}",
                   "/pre_exec/launcher/map_files", "['8:1:4242', '8:1:4243']", "/pre_exec/processes/0/exe", BWRAP_EXE,
                   "/pre_exec/processes/0/refs/exe",
                   "{'target': '/usr/bin/bwrap', 'type': 'reg', 'dev': '8:1', 'ino': 4242, 'mnt_id': 20}", NULL),
        };
        EXPECT_PASSES(kb_judge_descriptors, passes);
}
#undef KREFS
#undef HOST_DIR

#define KNET "/snapshots/0/kbound_net_sockets/0"

#define SOCKS "/snapshots/0/sandbox_sockets"
static void test_descriptors_channels(void **state) {
        static const breakage fails[] = {
                B1(KFDS "/6/target", "'pipe:[9001]'",
                   "fd 6 of pid 1002 (python3): pipe:[9001] is shared with kbound's side of the sandbox (a channel "
                   "out)"),
                B1(KFDS "/11/target", "'socket:[9002]'",
                   "fd 11 of pid 1002 (python3): socket:[9002] is shared with kbound's side of the sandbox"),
                /* the launch side as the last look saw it counts for every look */
                B1("/snapshots/1/launcher/outside_inodes/-", "'pipe:[7300]'",
                   "fd 1 of pid 1003 (python3): pipe:[7300] is shared with kbound's side of the sandbox"),
                /* any other process outside holding the same pipe or socket, in the same look */
                B1("/snapshots/1/outside_channels/-",
                   "{'target': 'pipe:[7300]', 'pid': 4242, 'name': 'relay', 'fd': 9}",
                   "fd 1 of pid 1003 (python3): pipe:[7300] is shared with pid 4242 (relay, its fd 9), a process "
                   "outside the sandbox (a channel out)"),
                B1("/snapshots/0/outside_channels/-",
                   "{'target': 'socket:[7400]', 'pid': 4243, 'name': 'spy', 'fd': 3}",
                   "socket:[7400] is shared with pid 4243 (spy, its fd 3), a process outside the sandbox"),
                B1("/snapshots/1/outside_channels", NULL,
                   "the host did not check which processes outside the sandbox hold its pipes and sockets (child "
                   "alive)"),
                B1(KFDS "/11/target", "'socket:[8888]'",
                   "fd 11 of pid 1002 (python3): socket:[8888] is not a socket of the sandbox's network namespace: "
                   "the host did not trace it to its other ends (it is in no list of the look)"),
                /* a socket of another family: only its namespace's tables place it */
                B1("/snapshots/0/net/4026532300/socket_inodes", "[]",
                   "fd 11 of pid 1002 (python3): socket:[7400] is not a socket of the sandbox's network namespace: it "
                   "is in no network namespace the host read"),
                /* a unix socket no sock_diag list of the look has */
                B2(SOCKS "/2/found", "'none'", "/snapshots/0/net/4026532300/unix/2", NULL,
                   "fd 12 of pid 1002 (python3): socket:[7003] is not a socket of the sandbox's network namespace: it "
                   "is in no network namespace the host read"),
                /* the process's own namespace's tables, not another one's */
                B1("/snapshots/0/processes/1/ns/net", "4026532399",
                   "fd 11 of pid 1002 (python3): socket:[7400] is not a socket of the sandbox's network namespace"),
                /* a socket of kbound's network namespace is the kernel's end of kbound's connection only
                 * if its peer is one of kbound's own sockets, by inode: a name proves nothing (the
                 * host-network socket named like the kernel's endpoint) */
                B2(KNET "/peer", "9999", KNET "/peer_held_by", HOST_HOLDER,
                   "fd 5 of pid 1002 (python3): socket:[7101] is a unix stream socket of kbound's network namespace, "
                   "named "
                   "/run/kbound/kernel-shell, whose peer socket:[9999] is held by host pid 6001 (python3), outside the "
                   "sandbox (started by kbound's launcher), not by kbound (a channel out)"),
                B2(KNET "/peer", "9999", KNET "/peer_held_by", "[]",
                   "whose peer socket:[9999] is held by no process the host found, not by kbound"),
                B1("/snapshots/0/kbound_sockets", "[9102]",
                   "socket:[7101] is a unix stream socket of kbound's network"),
                B1("/snapshots/0/kbound_sockets", NULL, "socket:[7101] is a unix stream socket of kbound's network"),
                /* kbound's socket, but not the one of a connection to this socket: another channel
                 * of kbound's (the control connection's, the block channel's) */
                B1(KNET "/peer", "9102", "whose peer socket:[9102] is held by"),
                B1("/snapshots/0/connections", "[]", "whose peer socket:[9101] is held by"),
                /* a listener, or an unconnected datagram socket, of the host's network */
                B3(KNET "/peer", "0", KNET "/state", "'listening'", KNET "/peer_held_by", NULL,
                   "fd 5 of pid 1002 (python3): socket:[7101] (a listening stream unix socket of kbound's network "
                   "namespace, named /run/kbound/kernel-shell) is connected to no socket of kbound's (a channel out)"),
                B3(KNET "/peer", "0", KNET "/type", "'dgram'", KNET "/path", NULL,
                   "socket:[7101] (a connected dgram unix socket of kbound's network namespace) is connected to no "
                   "socket"),
                B1("/snapshots/0/kbound_net_sockets", NULL, "socket:[7101] is not a socket"),
                B1("/snapshots/0/kbound_net_sockets", "[]", "socket:[7101] is not a socket"),
                B1("/snapshots/1/errors/-", "{'what': 'kbound\\u0027s unix sockets', 'error': 'Permission denied'}",
                   "the host could not list kbound's unix sockets: Permission denied"),
                B1("/snapshots/1/errors/-",
                   "{'what': 'the launch side\\u0027s descriptors', 'error': 'Permission denied'}",
                   "the host could not read the launch side's descriptors: Permission denied"),
                /* the kernel's log pipe (its keeper reads it, bwrap's outer process holds it as its
                 * stdout): held for reading in the sandbox, or by another process outside, it is a
                 * channel like any other */
                B3("/expect/kernel_log", LOG_KEEPER("pipe:[7300]"), "/snapshots/1/launcher/outside_inodes/-",
                   "'pipe:[7300]'", "/snapshots/1/processes/2/fds/1/flags", "0",
                   "fd 1 of pid 1003 (python3): pipe:[7300] is shared with kbound's side of the sandbox"),
                B3("/expect/kernel_log", LOG_KEEPER("pipe:[7300]"), "/snapshots/1/launcher/outside_inodes/-",
                   "'pipe:[7300]'", "/snapshots/1/outside_channels/-",
                   "{'target': 'pipe:[7300]', 'pid': 4242, 'name': 'tee', 'fd': 9}",
                   "fd 1 of pid 1003 (python3): pipe:[7300] is shared with pid 4242 (tee, its fd 9)"),
                /* another pipe than the log's is not let through by the log's */
                B2("/expect/kernel_log", LOG_KEEPER("pipe:[7301]"), "/snapshots/1/launcher/outside_inodes/-",
                   "'pipe:[7300]'", "fd 1 of pid 1003 (python3): pipe:[7300] is shared with kbound's side"),
        };
        EXPECT_FAILS(kb_judge_descriptors, fails);
        static const breakage passes[] = {
                /* the log pipe, written, shared with the launch side only */
                B2("/expect/kernel_log", LOG_KEEPER("pipe:[7300]"), "/snapshots/1/launcher/outside_inodes/-",
                   "'pipe:[7300]'", NULL),
        };
        EXPECT_PASSES(kb_judge_descriptors, passes);
}

#undef KNET

/* Every socket of the sandbox's own network namespace is traced to its other ends (sock_diag): its
 * peer, the listener its connection waits in, the connections waiting in its queue, any other
 * socket connected to it, each held by sandbox processes only; and what waits in its queue comes
 * from one of those. The kernel's unbound socket (7003, fd 12) stands for each kind. */
#define OWN(state, type, rqueue, extra)                                                                                \
        "{'inode': 7003, 'found': 'sandbox', 'socket': {'inode': 7003, 'type': '" type "', 'state': '" state "', "     \
        "'peer': 0, 'rqueue': " #rqueue "}" extra "}"
#define PEERED(peer_end, rqueue)                                                                                       \
        "{'inode': 7003, 'found': 'sandbox', 'socket': {'inode': 7003, 'type': 'stream', 'state': 'connected', "       \
        "'peer': 7500, 'rqueue': " #rqueue "}, 'peer': " peer_end "}"
#define END(inode, found, holders) "{'inode': " #inode ", 'found': '" found "', 'held_by': " holders "}"
#define HOST_END(inode, holders) "{'inode': " #inode ", 'found': 'host', 'netns_pid': 4300, 'held_by': " holders "}"
#define KERNEL_HOLDS "[{'pid': 1002, 'name': 'python3', 'side': 'sandbox'}]"
#define KBOUND_HOLDS "[{'pid': 5000, 'name': 'kbound', 'side': 'kbound'}]"
#define LISTENER(pending, count)                                                                                       \
        "{'inode': 7001, 'found': 'sandbox', 'socket': {'inode': 7001, 'type': 'stream', 'state': 'listening', "       \
        "'path': '/run/kbound/kernel-shell', 'peer': 0, 'rqueue': " #count "}, 'pending': " pending                    \
        ", 'pending_count': " #count "}"
#define HANDED_IN                                                                                                      \
        "{'inode': 7003, 'found': 'host', 'netns_pid': 4300, 'socket': {'inode': 7003, 'type': 'stream', 'state': "    \
        "'connected', 'peer': 7501, 'rqueue': 0}, 'peer': " HOST_END(7501, "[{'pid': 4303, 'name': 'keeper', "         \
                                                                           "'side': 'host'}]") "}"
#define SOCKETS_ERROR                                                                                                  \
        "{'what': 'the unix sockets of the sandbox\\u0027s network namespace (sock_diag)/4026532300', "                \
        "'error': 'Operation not permitted'}"
static void test_descriptors_socket_ends(void **state) {
        static const breakage fails[] = {
                /* its peer held by a process outside (it holds a socket of the sandbox's network) */
                B2(SOCKS "/2", PEERED(END(7500, "sandbox", KERNEL_HOLDS), 0), "/snapshots/0/outside_channels/-",
                   "{'target': 'socket:[7500]', 'pid': 4244, 'name': 'relay', 'fd': 5, 'netns': true}",
                   "fd 12 of pid 1002 (python3): socket:[7003] (a connected unix stream socket of the sandbox's "
                   "network namespace): its peer (socket:[7500]) is held by pid 4244 (relay, its fd 5), a process "
                   "outside the sandbox (a channel out)"),
                B2(SOCKS "/2", PEERED(END(7500, "sandbox", KERNEL_HOLDS), 0), "/snapshots/0/launcher/outside_inodes/-",
                   "'socket:[7500]'",
                   "its peer (socket:[7500]) is held by kbound's side of the sandbox (a channel out)"),
                /* held by no process the host found: in a message in flight, an io_uring's files */
                B1(SOCKS "/2", PEERED(END(7500, "sandbox", "[]"), 0),
                   "fd 12 of pid 1002 (python3): socket:[7003] (a connected unix stream socket of the sandbox's "
                   "network namespace): its peer (socket:[7500]), a socket of the sandbox's network namespace, is held "
                   "by no process the host found"),
                B1(SOCKS "/2", PEERED(END(7500, "sandbox", HOST_HOLDER), 0),
                   "its peer (socket:[7500]), a socket of the sandbox's network namespace, is held by host pid 6001 "
                   "(python3), outside the sandbox (started by kbound's launcher), not by a sandbox process"),
                /* a peer in another network namespace (a datagram socket connected out), in kbound's,
                 * in none the host read */
                B1(SOCKS "/2", PEERED(HOST_END(7500, HOST_HOLDER), 0),
                   "its peer (socket:[7500]), a socket of the network namespace of host pid 4300, is held by host pid "
                   "6001 (python3)"),
                B1(SOCKS "/2", PEERED(END(7500, "kbound", KBOUND_HOLDS), 0),
                   "its peer (socket:[7500]), a socket of kbound's network namespace, is held by kbound itself (pid "
                   "5000), not by a sandbox process"),
                B1(SOCKS "/2", PEERED(END(7500, "none", "[]"), 0),
                   "its peer (socket:[7500]), a socket of no network namespace the host read, is held by no process"),
                /* a peer sock_diag named but the host did not trace */
                B1(SOCKS "/2/socket/peer", "7500",
                   "socket:[7003] (an unconnected unix stream socket of the sandbox's network namespace): the host did "
                   "not trace its peer socket:[7500]"),
                /* its connection waits in a listener of the host's (connected out, not accepted yet) */
                B1(SOCKS "/2",
                   OWN("connected", "stream", 0,
                       ", 'listener': " HOST_END(7600, "[{'pid': 4301, 'name': 'listener', 'side': 'host'}]")),
                   "fd 12 of pid 1002 (python3): socket:[7003] (a connected unix stream socket of the sandbox's "
                   "network namespace): the listener its connection waits in (socket:[7600]), a socket of the network "
                   "namespace of host pid 4300, is held by host pid 4301 (listener), outside the sandbox, not by a "
                   "sandbox process"),
                /* a connection from outside waiting in the kernel's listener */
                B1(SOCKS "/0", LISTENER("[" HOST_END(7700, "[{'pid': 4302, 'name': 'client', 'side': 'host'}]") "]", 1),
                   "fd 3 of pid 1002 (python3): socket:[7001] (a listening unix stream socket of the sandbox's network "
                   "namespace): the connecting socket of a connection waiting in its queue (socket:[7700]), a socket "
                   "of the network namespace of host pid 4300, is held by host pid 4302 (client)"),
                /* from a socket of kbound's network that kbound does not hold */
                B1(SOCKS "/0", LISTENER("[" END(9103, "kbound", HOST_HOLDER) "]", 1),
                   "the connecting socket of a connection waiting in its queue (socket:[9103]), a socket of kbound's "
                   "network namespace, is held by host pid 6001 (python3)"),
                B1(SOCKS "/0", LISTENER("[" END(0, "none", "[]") "]", 1),
                   "the connecting socket of a connection waiting in its queue has closed: what it sent may still "
                   "wait, from a sender the host cannot name"),
                B1(SOCKS "/0", LISTENER("[]", 20),
                   "socket:[7001] (a listening unix stream socket of the sandbox's network namespace): 20 connections "
                   "wait in its queue, more than the host traced (0)"),
                /* a socket of the host's connected to it: it may have queued messages there */
                B1(SOCKS "/2", OWN("unconnected", "dgram", 0, ", 'connected_from': [" HOST_END(7800, HOST_HOLDER) "]"),
                   "socket:[7003] (an unconnected unix dgram socket of the sandbox's network namespace): another "
                   "socket "
                   "connected to it (socket:[7800]), a socket of the network namespace of host pid 4300, is held by "
                   "host pid 6001 (python3), outside the sandbox (started by kbound's launcher), not by a sandbox "
                   "process (it may have queued messages, descriptors too)"),
                /* a datagram socket bound to a name: any sender, unseen; connected or not */
                B2(SOCKS "/2/socket/type", "'dgram'", SOCKS "/2/socket/path", "'/workspace/d.sock'",
                   "fd 12 of pid 1002 (python3): socket:[7003] (an unconnected unix dgram socket of the sandbox's "
                   "network namespace) is bound to /workspace/d.sock: any process that reaches that name may queue "
                   "messages in it, descriptors too, and a message of no bytes shows in no queue length"),
                B4(SOCKS "/2/socket/type", "'dgram'", SOCKS "/2/socket/path", "'@kbound-abstract'",
                   SOCKS "/2/socket/peer", "7500", SOCKS "/2/peer", END(7500, "sandbox", KERNEL_HOLDS),
                   "is bound to @kbound-abstract: any process that reaches that name"),
                /* bytes waiting from a peer that is gone, or unknown */
                B1(SOCKS "/2", OWN("connected", "stream", 5, ""),
                   "fd 12 of pid 1002 (python3): socket:[7003] (a connected unix stream socket of the sandbox's "
                   "network namespace): 5 bytes wait in its queue from a sender that is gone (it has no peer now)"),
                B1(SOCKS "/2", OWN("unconnected", "dgram", 1, ""),
                   "1 bytes wait in its queue from a sender that is gone"),
                B1(SOCKS "/2/socket/rqueue", NULL,
                   "socket:[7003] (an unconnected unix stream socket of the sandbox's network namespace): the host "
                   "could "
                   "not read what waits in its queue"),
                /* made outside and handed in: a socket of another network namespace, its peer's holder named */
                B1(SOCKS "/2", HANDED_IN,
                   "fd 12 of pid 1002 (python3): socket:[7003] is not a socket of the sandbox's network namespace but "
                   "a "
                   "connected unix stream socket of the network namespace of host pid 4300: made outside and handed "
                   "in (a channel out); its peer (socket:[7501]), a socket of the network namespace of host pid 4300, "
                   "is held by host pid 4303 (keeper), outside the sandbox, not by a sandbox process"),
                /* the tracing itself: a namespace not listed, no tracing at all */
                B1("/snapshots/1/errors/-", SOCKETS_ERROR,
                   "the host could not list the unix sockets of the sandbox's network namespace 4026532300 with "
                   "sock_diag (child alive look: Operation not permitted): their peers, the connections waiting in "
                   "them and what waits in their queues are not known"),
                B1("/snapshots/1/sandbox_sockets", NULL,
                   "the host did not trace the sandbox's sockets to their other ends (child alive look)"),
                /* and a socket the tables list but no list traced (7101, kbound's network's, still judged) */
                B2("/snapshots/0/sandbox_sockets", NULL, KFDS "/11/target", "'socket:[8888]'",
                   "fd 11 of pid 1002 (python3): socket:[8888] is not a socket of the sandbox's network namespace: "
                   "the host did not trace it to its other ends"),
                B1(SOCKS "/2", NULL,
                   "socket:[7003] is not a socket of the sandbox's network namespace: the host did not trace it to its "
                   "other ends (it is in no list of the look)"),
        };
        EXPECT_FAILS(kb_judge_descriptors, fails);
        static const breakage passes[] = {
                /* a socket pair of the kernel's own, bytes waiting from its peer */
                B1(SOCKS "/2", PEERED(END(7500, "sandbox", KERNEL_HOLDS), 3), NULL),
                /* a connection waiting in the kernel's listener from kbound's own socket, or the sandbox's */
                B1(SOCKS "/0", LISTENER("[" END(9101, "kbound", KBOUND_HOLDS) "]", 1), NULL),
                B1(SOCKS "/0", LISTENER("[" END(7003, "sandbox", KERNEL_HOLDS) "]", 1), NULL),
                /* its own connection waiting in the sandbox's listener */
                B1(SOCKS "/2", OWN("connected", "stream", 0, ", 'listener': " END(7001, "sandbox", KERNEL_HOLDS)),
                   NULL),
                /* an unbound datagram socket: only its peer, the sandbox's, can have sent to it */
                B1(SOCKS "/2",
                   "{'inode': 7003, 'found': 'sandbox', 'socket': {'inode': 7003, 'type': 'dgram', 'state': "
                   "'connected', 'peer': 7500, 'rqueue': 9}, 'peer': " END(7500, "sandbox", KERNEL_HOLDS) "}",
                   NULL),
                /* another family's socket its namespace lists; one closed while the look read it */
                B2(SOCKS "/4/closed", "true", "/snapshots/0/net/4026532300/socket_inodes", "[]", NULL),
        };
        EXPECT_PASSES(kb_judge_descriptors, passes);
}
#undef OWN
#undef PEERED
#undef END
#undef HOST_END
#undef KERNEL_HOLDS
#undef KBOUND_HOLDS
#undef LISTENER
#undef HANDED_IN
#undef SOCKETS_ERROR
#undef SOCKS

/* An object no path names passes once the host found its other holders and every one is the
 * sandbox's own; no kind passes by its name. */
#define OUT_CH(target, fd)                                                                                             \
        "{'target': '" target "', 'pid': 6001, 'name': 'helper', 'fd': 3, 'sandbox_pid': 1002, 'sandbox_fd': " #fd "}"
#define EPOLL_WATCH(dev, ino)                                                                                          \
        "{'fd': 30, 'target': 'anon_inode:[eventpoll]', 'watches': [{'kind': 'epoll', 'dev': '" dev "', 'ino': " #ino  \
        ", 'fd': 5}]}"
#define MARK(target, kind, where) "{'fd': 30, 'target': '" target "', 'watches': [{'kind': '" kind "', " where "}]}"
static void test_descriptors_anonymous(void **state) {
        static const breakage fails[] = {
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[userfaultfd]'}",
                   "fd 30 of pid 1002 (python3): anon_inode:[userfaultfd] is an object the host cannot trace"),
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:bpf-map'}",
                   "fd 30 of pid 1002 (python3): anon_inode:bpf-map is an object the host cannot trace"),
                /* io_uring: registered files its fdinfo names by path only */
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[io_uring]', 'registered_files': 2}",
                   "anon_inode:[io_uring] has 2 registered files"),
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[io_uring]'}",
                   "anon_inode:[io_uring] is an object the host cannot trace"),
                /* what it reaches unread */
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[eventpoll]', 'fdinfo_error': 'EACCES'}",
                   "anon_inode:[eventpoll]: the host could not read what it reaches"),
                /* the same open file a process outside holds (the look's kcmp), or kbound's side */
                B1("/snapshots/0/outside_channels/-", OUT_CH("anon_inode:[eventfd]", 8),
                   "fd 8 of pid 1002 (python3): anon_inode:[eventfd] is the very open file pid 6001 (helper, its fd "
                   "3) holds, a process outside the sandbox"),
                /* the same in a thread's own table: the channel names that table (sandbox_tid) */
                B2(KFD_NEW, "{'fd': 8, 'tid': 1010, 'target': 'anon_inode:[eventfd]', 'flags': 2, 'mnt_id': 15}",
                   "/snapshots/0/outside_channels/-",
                   "{'target': 'anon_inode:[eventfd]', 'pid': 6001, 'name': 'helper', 'fd': 3, 'sandbox_pid': 1002, "
                   "'sandbox_fd': 8, 'sandbox_tid': 1010}",
                   "fd 8 of thread 1010 (its own descriptor table) of pid 1002 (python3): anon_inode:[eventfd] is the "
                   "very open file pid 6001"),
                B1("/snapshots/0/outside_channels/-", OUT_CH("/memfd:ipc-shm (deleted)", 10),
                   "fd 10 of pid 1002 (python3): /memfd:ipc-shm (deleted) is the very open file pid 6001"),
                B1("/snapshots/1/launcher/shared_files/-", OUT_CH("anon_inode:[eventpoll]", 7),
                   "anon_inode:[eventpoll] is the very open file pid 6001 (helper, its fd 3) holds, on kbound's side"),
                /* the kernel (PID 2) is not bwrap's init: an eventfd it shares with the bwrap outside is no status
                   channel */
                B1("/snapshots/0/launcher/shared_files/-",
                   "{'target': 'anon_inode:[eventfd]', 'pid': 1000, 'name': 'bwrap', 'fd': 5, 'sandbox_pid': 1002, "
                   "'sandbox_fd': 8}",
                   "anon_inode:[eventfd] is the very open file pid 1000 (bwrap, its fd 5) holds"),
                /* an epoll watching a file no sandbox process holds */
                B1(KFD_NEW, EPOLL_WATCH("0:8", 4001),
                   "anon_inode:[eventpoll] watches a file no process of the sandbox holds (device 0:8, inode 4001"),
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[eventpoll]', 'watches': [{'kind': 'epoll', 'fd': 5}]}",
                   "watches a file no process of the sandbox holds (device ?"),
                /* an anonymous object: its device and inode are every such object's (the epoll's own
                 * here), so only kcmp's held_at places it */
                B1(KFD_NEW,
                   "{'fd': 30, 'target': 'anon_inode:[eventpoll]', 'dev': '0:14', 'ino': 1054, 'watches': [{'kind': "
                   "'epoll', 'dev': '0:14', 'ino': 1054, 'fd': 8}]}",
                   "anon_inode:[eventpoll] watches an anonymous object (device 0:14, inode 1054, every such object's; "
                   "added as fd 8) that is none of its holder's descriptors (kcmp)"),
                /* inotify and fanotify marks on what the sandbox does not show: another filesystem,
                 * or a file of a filesystem bound only in part (/usr and the workspace are 8:1) */
                B1(KFD_NEW, MARK("anon_inode:inotify", "inotify", "'dev': '0:99', 'ino': 12"),
                   "anon_inode:inotify has a inotify mark on device 0:99, inode 12, a file the host cannot place"),
                B1(KFD_NEW, MARK("anon_inode:inotify", "inotify", "'dev': '8:1', 'ino': 12345"),
                   "anon_inode:inotify has a inotify mark on device 8:1, inode 12345"),
                /* ... and the host's look for it by its handle says why it did not find it */
                B1(KFD_NEW,
                   MARK("anon_inode:inotify", "inotify",
                        "'dev': '8:1', 'ino': 12345, 'place_error': 'Operation not permitted'"),
                   "a file the host cannot place in the sandbox's view (by its handle: Operation not permitted)"),
                B1(KFD_NEW, MARK("anon_inode:[fanotify]", "fanotify-mount", "'mnt_id': 20"),
                   "anon_inode:[fanotify] has a fanotify mark on mount 20, not one of the process's own"),
                B1(KFD_NEW, MARK("anon_inode:[fanotify]", "fanotify-inode", "'ino': 12"),
                   "anon_inode:[fanotify] has a fanotify-inode mark on device ?"),
                B1(KFD_NEW, MARK("anon_inode:[fanotify]", "fanotify-filesystem", "'dev': '8:1'"),
                   "has a fanotify mark on the filesystem 8:1, which the process's mounts do not hold whole"),
                /* a pipe's end whose other end no process the host read holds: open (in flight in a
                 * socket's queue, red-team keep-pipe), not polled, or which end unknown */
                B1(KFD_NEW, PIPE_END(0, "'pipe_other_end': 'open'"),
                   "fd 30 of pid 1002 (python3): pipe:[7900] (its read end): its write end is held by no process "
                   "the host found (it is open: in flight in a socket's queue, or held where no descriptor table "
                   "shows it)"),
                B1(KFD_NEW, PIPE_END(1, "'pipe_other_end': 'open'"),
                   "pipe:[7900] (its write end): its read end is held by no process the host found (it is open"),
                B1(KFD_NEW, PIPE_END(0, "'pipe_error': 'Operation not permitted'"),
                   "pipe:[7900] (its read end): its write end is held by no process the host found (Operation not "
                   "permitted)"),
                B1(KFD_NEW, PIPE_END(0, "'ino': 7900"),
                   "its write end is held by no process the host found (the host "
                   "did not poll it)"),
                B1(KFD_NEW, "{'fd': 30, 'target': 'pipe:[7900]', 'pipe_other_end': 'none'}",
                   "pipe:[7900]: the host could not read which end of the pipe it is"),
                /* pidfds of processes outside, or not the look's */
                B1("/snapshots/1/processes/1/fds/-", "{'fd': 30, 'target': 'anon_inode:[pidfd]', 'pid': 5000}",
                   "fd 30 of pid 1002 (python3): a pidfd of pid 5000, a process outside the sandbox"),
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[pidfd]', 'pid': 1003}",
                   "a pidfd of pid 1003, a process outside"),
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[pidfd]', 'fdinfo_error': 'unreadable'}",
                   "fd 30 of pid 1002 (python3): anon_inode:[pidfd]: the host could not read what it reaches"),
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[pidfd]', 'pid': 0}",
                   "fd 30 of pid 1002 (python3): a pidfd of a process outside kbound's pid namespace"),
                /* the pid now is another process than the look's (NSpid disagrees), or NSpid unread */
                B1("/snapshots/1/processes/1/fds/-",
                   "{'fd': 30, 'target': 'anon_inode:[pidfd]', 'pid': 1003, 'nspid': [1003, 9]}",
                   "a pidfd of pid 1003, whose pid in its own namespace is not its sandbox pid"),
                B1("/snapshots/1/processes/1/fds/-", "{'fd': 30, 'target': 'anon_inode:[pidfd]', 'pid': 1003}",
                   "a pidfd of pid 1003, whose pid in its own namespace"),
                /* a thread's: its id in its own namespace must be that thread's */
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[pidfd]', 'pid': 1010, 'nspid': [1010, 4]}",
                   "a pidfd of thread 1010 of pid 1002, whose id in its own namespace is not its sandbox id"),
                /* a shared mapping of a memory file a process outside maps too */
                B2("/snapshots/0/processes/1/refs/maps/-",
                   "{'path': '/memfd:ipc-shm (deleted)', 'dev': '0:1', 'ino': 3, 'shared': true, 'writable': true, "
                   "'reach': 'same', 'mnt_id': 16}",
                   "/snapshots/0/outside_channels/-",
                   "{'target': '/memfd:ipc-shm (deleted)', 'pid': 6001, 'name': 'helper', 'fd': -1, 'mapped': true, "
                   "'dev': '0:1', 'ino': 3, 'object': true, 'sandbox_pid': 1002, 'sandbox_how': 'map'}",
                   "pid 6001 (helper), a process outside the sandbox, holds /memfd:ipc-shm (deleted) mapped (device "
                   "0:1, inode 3), the very memory object pid 1002 (python3) of the sandbox holds mapped"),
        };
        EXPECT_FAILS(kb_judge_descriptors, fails);
        static const breakage passes[] = {
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[timerfd]'}", NULL),
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[signalfd]'}", NULL),
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:inotify'}", NULL),
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[io_uring]', 'registered_files': 0}", NULL),
                /* watches on what the sandbox holds and shows */
                B1(KFD_NEW, EPOLL_WATCH("0:8", 7101), NULL),
                /* an anonymous object, the very file of its holder's fd 8 (kcmp) */
                B1(KFD_NEW,
                   "{'fd': 30, 'target': 'anon_inode:[eventpoll]', 'dev': '0:14', 'ino': 1054, 'watches': [{'kind': "
                   "'epoll', 'dev': '0:14', 'ino': 1054, 'fd': 8, 'held_at': 8}]}",
                   NULL),
                B1(KFD_NEW, MARK("anon_inode:inotify", "inotify", "'dev': '8:1', 'ino': 5000"), NULL), /* its cwd */
                B1(KFD_NEW, MARK("anon_inode:inotify", "inotify", "'dev': '8:1', 'ino': 5010"),
                   NULL), /* a file it holds */
                B1(KFD_NEW, MARK("anon_inode:inotify", "inotify", "'dev': '0:40', 'ino': 77"),
                   NULL), /* its own tmpfs */
                /* a folder under a bind of part of a filesystem (/usr/lib/python3/dist-packages through
                 * the /usr bind): found in the holder's view by its handle */
                B1(KFD_NEW,
                   MARK("anon_inode:inotify", "inotify",
                        "'dev': '8:1', 'ino': 12345, 'at': '/usr/lib/python3/dist-packages'"),
                   NULL),
                B1(KFD_NEW,
                   MARK("anon_inode:[fanotify]", "fanotify-inode", "'dev': '8:1', 'ino': 12345, 'at': '/usr/lib'"),
                   NULL),
                B1(KFD_NEW, MARK("anon_inode:[fanotify]", "fanotify-filesystem", "'dev': '0:40'"), NULL),
                B1(KFD_NEW, MARK("anon_inode:[fanotify]", "fanotify-mount", "'mnt_id': 311"), NULL),
                /* a channel out of another object is not this one's */
                B1("/snapshots/0/outside_channels/-", OUT_CH("anon_inode:[eventfd]", 99), NULL),
                /* a pipe whose other end a sandbox process holds, or whose other end is gone */
                B2(KFD_NEW, PIPE_END(0, "'pipe_other_end': 'open'"), KFD_NEW,
                   "{'fd': 31, 'target': 'pipe:[7900]', 'flags': 1}", NULL),
                B1(KFD_NEW, PIPE_END(0, "'pipe_other_end': 'none'"), NULL),
                B1(KFD_NEW, PIPE_END(1, "'pipe_other_end': 'none'"), NULL),
                /* pidfds of the sandbox's own processes, or of one that exited */
                B1("/snapshots/1/processes/1/fds/-",
                   "{'fd': 30, 'target': 'anon_inode:[pidfd]', 'pid': 1003, 'nspid': [1003, 7]}", NULL),
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[pidfd]', 'pid': 1001, 'nspid': [1001, 1]}", NULL),
                /* a PIDFD_THREAD pidfd of one of the kernel's own threads */
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[pidfd]', 'pid': 1011, 'nspid': [1011, 4]}", NULL),
                B1(KFD_NEW, "{'fd': 30, 'target': 'anon_inode:[pidfd]', 'pid': -1}", NULL),
        };
        EXPECT_PASSES(kb_judge_descriptors, passes);
}
#undef OUT_CH
#undef EPOLL_WATCH
#undef MARK

static void test_descriptors_unreadable_tables(void **state) {
        static const breakage fails[] = {
                B2("/snapshots/1/processes/2/fds", "[]", "/snapshots/1/processes/2/errors",
                   "[{'what': 'fd', 'error': 'Permission denied'}]",
                   "the host could not read the descriptors of pid 1003 (fd: Permission denied)"),
                B1("/snapshots/0/processes/0/fds", NULL,
                   "the host could not read the descriptors of pid 1001 (no table)"),
                /* a table cut short (more descriptors than kbound inspects) is not the whole table */
                B1("/snapshots/0/processes/1/errors/-", "{'what': 'fd', 'error': 'Argument list too long'}",
                   "the host could not read the descriptors of pid 1002 (fd: Argument list too long)"),
        };
        EXPECT_FAILS(kb_judge_descriptors, fails);
}

#undef KFDS
#undef KFD_NEW

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_descriptors_files),
                cmocka_unit_test(test_descriptors_devices),
                cmocka_unit_test(test_descriptors_pre_exec),
                cmocka_unit_test(test_descriptors_other_mount_namespace),
                cmocka_unit_test(test_descriptors_references),
                cmocka_unit_test(test_descriptors_channels),
                cmocka_unit_test(test_descriptors_socket_ends),
                cmocka_unit_test(test_descriptors_anonymous),
                cmocka_unit_test(test_descriptors_unreadable_tables),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

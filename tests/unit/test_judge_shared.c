/* test_judge_shared.c: boundary.descriptors on what the sandbox shares through memory, its own
 * filesystems and its IPC namespace (issue 35, items 4, 5, 8, 9): every holder outside, found by
 * the object, fails whatever the sandbox side holds it by; the sandbox's own message queues and a
 * program run from its own memory file pass; a shared mapping that may be made writable is judged
 * as a writable one. */
#include "judge_fixture.h"

#define KFD_NEW "/snapshots/0/processes/1/fds/-"
#define KMAP_NEW "/snapshots/0/processes/1/refs/maps/-"
#define OUT_NEW "/snapshots/0/outside_channels/-"
#define IPC "/snapshots/0/ipc"

/* A memory file of the kernel's: as a descriptor, a shared or a private mapping. */
#define MEM_FD "{'fd': 30, 'target': '/memfd:rt-mem (deleted)', 'type': 'reg', 'dev': '0:1', 'ino': 17, 'mnt_id': 16}"
#define MEM_MAP(shared)                                                                                                \
        "{'path': '/memfd:rt-mem (deleted)', 'dev': '0:1', 'ino': 17, 'shared': " shared ", 'writable': false, "       \
        "'may_write': false, 'deleted': true}"
/* Its holder outside, as inspect_shared.c finds it by device and inode: held as fd 5 or mapped. */
#define HELD_OUT(how, sandbox_how)                                                                                     \
        "{'target': '/memfd:rt-mem (deleted)', 'pid': 6001, 'name': 'helper', " how ", 'dev': '0:1', 'ino': 17, "      \
        "'object': true, 'sandbox_pid': 1002, " sandbox_how "}"
#define BY_FD "'fd': 5"
#define BY_MAP "'fd': -1, 'mapped': true"
#define IN_FD "'sandbox_how': 'fd', 'sandbox_fd': 30"
#define IN_MAP "'sandbox_how': 'map'"

static void test_memory_objects(void **state) {
        static const breakage fails[] = {
                /* every combination of how each side holds the same memory file */
                B2(KFD_NEW, MEM_FD, OUT_NEW, HELD_OUT(BY_MAP, IN_FD),
                   "pid 6001 (helper), a process outside the sandbox, holds /memfd:rt-mem (deleted) mapped (device "
                   "0:1, "
                   "inode 17), the very memory object pid 1002 (python3) of the sandbox holds as fd 30 (shared memory "
                   "out)"),
                B2(KFD_NEW, MEM_FD, OUT_NEW, HELD_OUT(BY_FD, IN_FD),
                   "holds /memfd:rt-mem (deleted) as fd 5 (device 0:1, inode 17), the very memory object pid 1002 "
                   "(python3) of the sandbox holds as fd 30"),
                B2(KMAP_NEW, MEM_MAP("true"), OUT_NEW, HELD_OUT(BY_FD, IN_MAP),
                   "holds /memfd:rt-mem (deleted) as fd 5 (device 0:1, inode 17), the very memory object pid 1002 "
                   "(python3) of the sandbox holds mapped"),
                /* a private mapping sees the host's writes until it writes itself */
                B2(KMAP_NEW, MEM_MAP("false"), OUT_NEW, HELD_OUT(BY_FD, IN_MAP),
                   "the very memory object pid 1002 (python3) of the sandbox holds mapped"),
                B2(KMAP_NEW, MEM_MAP("false"), OUT_NEW, HELD_OUT(BY_MAP, IN_MAP),
                   "holds /memfd:rt-mem (deleted) mapped (device 0:1, inode 17), the very memory object"),
                /* held by a thread of its own, as the program it runs */
                B1(OUT_NEW,
                   "{'target': '/memfd:prog (deleted)', 'pid': 6001, 'name': 'helper', 'fd': 4, 'thread': 6002, "
                   "'dev': '0:1', 'ino': 18, 'object': true, 'sandbox_pid': 1002, 'sandbox_how': 'exe'}",
                   "holds /memfd:prog (deleted) as fd 4 (its thread 6002) (device 0:1, inode 18), the very memory "
                   "object pid 1002 (python3) of the sandbox holds as its program"),
        };
        EXPECT_FAILS(kb_judge_descriptors, fails);
        static const breakage passes[] = {
                /* the kernel's own memory file, held and mapped, nobody outside */
                B2(KFD_NEW, MEM_FD, KMAP_NEW, MEM_MAP("true"), NULL),
                /* a program run from the kernel's own memory file (memfd_create, then execveat) */
                B1("/snapshots/0/processes/1/refs/exe",
                   "{'target': '/memfd:rt-sleep (deleted)', 'type': 'reg', 'dev': '0:1', 'ino': 19, 'mnt_id': 0}",
                   NULL),
        };
        EXPECT_PASSES(kb_judge_descriptors, passes);
}

/* Item 4: a read-only shared mapping of a file opened for writing may be made writable
 * (mprotect): smaps' VmFlags "mw", absent read as may. */
static void test_may_write(void **state) {
        static const breakage fails[] = {
                B1(KMAP_NEW,
                   "{'path': '/usr/lib/target.txt', 'dev': '8:1', 'ino': 90, 'shared': true, 'writable': false, "
                   "'may_write': true, 'reach': 'same', 'mnt_id': 301}",
                   "pid 1002 (python3) holds a shared mapping that may be made writable (its file was opened for "
                   "writing) of /usr/lib/target.txt, on the read-only mount at /usr: writes to it go back to the file, "
                   "past the mount"),
                B1(KMAP_NEW,
                   "{'path': '/usr/lib/target.txt', 'dev': '8:1', 'ino': 90, 'shared': true, 'writable': false, "
                   "'reach': 'same', 'mnt_id': 301}",
                   "a shared mapping that may be made writable (its file was opened for writing) of "
                   "/usr/lib/target.txt"),
                B1(KMAP_NEW,
                   "{'path': '/etc/target', 'dev': '8:1', 'ino': 91, 'shared': true, 'writable': false, "
                   "'may_write': true, 'reach': 'none'}",
                   "a shared mapping that may be made writable (its file was opened for writing) of /etc/target (dev "
                   "8:1, inode 91), a file the sandbox does not reach at that path"),
        };
        EXPECT_FAILS(kb_judge_descriptors, fails);
        static const breakage passes[] = {
                /* one whose file was opened read-only, on the read-only /usr bind */
                B1(KMAP_NEW,
                   "{'path': '/usr/lib/cache', 'dev': '8:1', 'ino': 92, 'shared': true, 'writable': false, "
                   "'may_write': false, 'reach': 'same', 'mnt_id': 301}",
                   NULL),
        };
        EXPECT_PASSES(kb_judge_descriptors, passes);
}

/* Item 9 and the sandbox's other own filesystems: a file of one held outside, however held. */
static void test_own_filesystems(void **state) {
        static const breakage fails[] = {
                /* the master of a pty of the sandbox's own devpts */
                B1(OUT_NEW,
                   "{'target': '/dev/pts/ptmx', 'pid': 6001, 'name': 'helper', 'fd': 3, 'dev': '0:43', 'ino': 2, "
                   "'sandbox_fs': true}",
                   "pid 6001 (helper), a process outside the sandbox, holds /dev/pts/ptmx as fd 3 (device 0:43, inode "
                   "2), a file of the sandbox's own devpts at /dev/pts (a channel into the sandbox)"),
                /* a working directory in the sandbox's tmpfs */
                B1(OUT_NEW,
                   "{'target': '/tmp', 'pid': 6001, 'name': 'helper', 'fd': -1, 'link': 'cwd', 'dev': '0:40', "
                   "'ino': 9, 'sandbox_fs': true}",
                   "holds /tmp as its working directory (device 0:40, inode 9), a file of the sandbox's own tmpfs at "
                   "/"),
                /* a message queue of the sandbox's IPC namespace */
                B1(OUT_NEW,
                   "{'target': '/rt-kb', 'pid': 6001, 'name': 'helper', 'fd': 7, 'dev': '0:70', 'ino': 88, "
                   "'sandbox_fs': true}",
                   "holds /rt-kb as fd 7 (device 0:70, inode 88), a file of the message-queue filesystem of the "
                   "sandbox's IPC namespace"),
        };
        EXPECT_FAILS(kb_judge_descriptors, fails);
        static const breakage passes[] = {
                /* false FAIL a: the kernel's own message queue, which no mount table shows */
                B1(KFD_NEW, "{'fd': 30, 'target': '/rt-own', 'type': 'reg', 'dev': '0:70', 'ino': 88, 'mnt_id': 76}",
                   NULL),
        };
        EXPECT_PASSES(kb_judge_descriptors, passes);
}

/* Item 8: the SysV segments of the sandbox's IPC namespace, and what of it could not be read. */
static void test_ipc_namespace(void **state) {
        static const breakage fails[] = {
                B2(IPC "/shm/0/nattch", "2", OUT_NEW,
                   "{'target': '/SYSV52544b42', 'pid': 6001, 'name': 'helper', 'fd': -1, 'mapped': true, 'dev': '0:1', "
                   "'ino': 0, 'sysv': true}",
                   "the SysV shared memory segment 0 (key 0x52544b42) of the sandbox's IPC namespace is attached 1 "
                   "time(s) outside the sandbox's processes (ready): pid 6001 (helper) (shared memory out)"),
                /* attached outside by a process the host did not find */
                B1(IPC "/shm/0/nattch", "3",
                   "is attached 2 time(s) outside the sandbox's processes (ready): by a process the host did not find"),
                B1(IPC "/shm/0/sandbox", "2",
                   "has 1 attachments, and the sandbox's processes map it 2 times (ready): a mapping of the sandbox's "
                   "is another namespace's segment"),
                B1(IPC "/shm_foreign", "1",
                   "processes of the sandbox map 1 SysV shared memory segment(s) of no segment of its IPC namespace"),
                B2(IPC "/shm", NULL, IPC "/shm_error", "'Permission denied'",
                   "the host could not read the SysV shared memory segments of the sandbox's IPC namespace, nor so who "
                   "maps them (ready): Permission denied"),
                B2(IPC "/mqueue_dev", NULL, IPC "/mqueue_error", "'Operation not permitted'",
                   "the host could not learn the message-queue filesystem of the sandbox's IPC namespace (ready), so "
                   "its queues held outside could not be looked for: Operation not permitted"),
                B1(IPC, NULL,
                   "the host did not read the kernel's IPC namespace (ready): its SysV segments and message queues "
                   "held outside could not be looked for"),
                /* without the IPC namespace's word, a file on the queue's device is on no mount */
                B2(IPC "/mqueue_dev", NULL, KFD_NEW,
                   "{'fd': 30, 'target': '/rt-own', 'type': 'reg', 'dev': '0:70', 'ino': 88, 'mnt_id': 76}",
                   "fd 30 of pid 1002 (python3): /rt-own is on a host mount (mount id 76)"),
                /* a device node is never a queue, whatever its device */
                B1(KFD_NEW,
                   "{'fd': 30, 'target': '/rt-own', 'type': 'chr', 'dev': '0:70', 'ino': 88, 'rdev': '1:11', "
                   "'mnt_id': 76}",
                   "fd 30 of pid 1002 (python3): /rt-own"),
        };
        EXPECT_FAILS(kb_judge_descriptors, fails);
        static const breakage passes[] = {
                /* a segment the sandbox alone maps, twice */
                B2(IPC "/shm/0/nattch", "2", IPC "/shm/0/sandbox", "2", NULL),
                /* none at all */
                B1(IPC "/shm", "[]", NULL),
        };
        EXPECT_PASSES(kb_judge_descriptors, passes);
}

/* Item 9 for sandbox.session: a pty of the sandbox's own devpts held outside is a terminal into it. */
static void test_session_outside_pty(void **state) {
        static const breakage fails[] = {
                B1(OUT_NEW,
                   "{'target': '/dev/pts/ptmx', 'pid': 6001, 'name': 'helper', 'fd': 3, 'dev': '0:43', 'ino': 2, "
                   "'sandbox_fs': true}",
                   "pid 6001 (helper), a process outside the sandbox, holds /dev/pts/ptmx of the sandbox's own devpts "
                   "(ready): a terminal into the sandbox"),
        };
        EXPECT_FAILS(kb_judge_session, fails);
        static const breakage passes[] = {
                /* a file of its tmpfs is boundary.descriptors' (test_own_filesystems), no terminal */
                B1(OUT_NEW,
                   "{'target': '/tmp/x', 'pid': 6001, 'name': 'helper', 'fd': 3, 'dev': '0:40', 'ino': 9, "
                   "'sandbox_fs': true}",
                   NULL),
        };
        EXPECT_PASSES(kb_judge_session, passes);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_memory_objects),      cmocka_unit_test(test_may_write),
                cmocka_unit_test(test_own_filesystems),     cmocka_unit_test(test_ipc_namespace),
                cmocka_unit_test(test_session_outside_pty),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

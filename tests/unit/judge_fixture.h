/* judge_fixture.h: the judge's tests' canned host facts (good_run) and how they are broken and
 * judged. Facts are written as JSON, as inspect.c produces them. A complete, realistic run that
 * passes every check (good_run) is the starting point of most tests: each breaks exactly one thing
 * in it and asserts that the check fails naming that thing, so every test can fail. Test JSON is
 * written with single quotes (parse() turns them into double quotes); an apostrophe inside a
 * string is written \u0027. Include it first; each test_judge_*.c is its own cmocka program. */
#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kbound/judge.h"

typedef json_object *(*judge_fn)(const kb_judge_input *in);

/* ---- building facts ---- */

static inline json_object *parse(const char *text) {
        char *copy = strdup(text);
        assert_non_null(copy);
        for (char *c = copy; *c; c++)
                if (*c == '\'')
                        *c = '"';
        json_object *o = json_tokener_parse(copy);
        if (!o)
                fail_msg("bad test JSON: %s", copy);
        free(copy);
        return o;
}

/* Sets the member or element at pointer (RFC 6901; ".../-" appends to an array) to the JSON text
 * value, replacing what was there. */
static inline void set(json_object *run, const char *pointer, const char *value) {
        json_object *v = parse(value);
        if (json_pointer_set(&run, pointer, v) < 0) {
                json_object_put(v);
                fail_msg("cannot set %s", pointer);
        }
}

/* Removes the member or element at pointer. */
static inline void drop(json_object *run, const char *pointer) {
        char parent_path[512];
        const char *slash = strrchr(pointer, '/');
        json_object *parent = NULL, *target = NULL;
        assert_non_null(slash);
        snprintf(parent_path, sizeof parent_path, "%.*s", (int) (slash - pointer), pointer);
        if (json_pointer_get(run, parent_path, &parent) < 0 || json_pointer_get(run, pointer, &target) < 0)
                fail_msg("nothing to drop at %s", pointer);
        if (json_object_is_type(parent, json_type_array))
                json_object_array_del_idx(parent, strtoul(slash + 1, NULL, 10), 1);
        else
                json_object_object_del(parent, slash + 1);
}

static inline json_object *member(json_object *o, const char *key) {
        json_object *v = NULL;
        return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static inline kb_judge_input input_of(json_object *run) {
        json_object *why = member(run, "probe_error");
        return (kb_judge_input){.host = member(run, "host"),
                                .snapshots = member(run, "snapshots"),
                                .probe = member(run, "probe"),
                                .probe_error = why ? json_object_get_string(why) : NULL,
                                .expect = member(run, "expect"),
                                .pre_exec = member(run, "pre_exec")};
}

/* ---- the good run ---- */

/* kbound's own namespaces, and the sandbox's. */
#define HOST_NS                                                                                                        \
        "{'user': 4026531837, 'mnt': 4026531841, 'pid': 4026531836, 'net': 4026531840, 'ipc': 4026531839, "            \
        "'uts': 4026531838, 'cgroup': 4026531835}"
#define SANDBOX_NS                                                                                                     \
        "{'user': 4026532201, 'mnt': 4026532202, 'pid': 4026532203, 'net': 4026532300, 'ipc': 4026532205, "            \
        "'uts': 4026532206, 'cgroup': 4026532207}"

/* Who owns the sandbox's namespaces (inspect.c's "ns_owners"): bwrap made the user namespace
 * 4026532200 (a child of kbound's) with every other namespace, and, for --disable-userns, the
 * processes' own 4026532201 inside it. */
#define SANDBOX_USERNS "4026532200"
#define OWNED "[" SANDBOX_USERNS ", 4026531837]"
#define SANDBOX_OWNERS                                                                                                 \
        "{'user': " OWNED ", 'mnt': " OWNED ", 'pid': " OWNED ", 'net': " OWNED ", 'ipc': " OWNED ", 'uts': " OWNED    \
        ", 'cgroup': " OWNED "}"

/* What a sandbox process holds besides its descriptors (inspect_refs.c): its working directory on
 * the workspace bind (mount 311), its root the sandbox's tmpfs root (300), its program and a
 * library on the read-only /usr bind (301), mapped privately, and a read-only shared mapping. */
#define REFS                                                                                                           \
        "{'cwd': {'target': '/workspace', 'type': 'dir', 'dev': '8:1', 'ino': 5000, 'mnt_id': 311}, "                  \
        "'root': {'target': '/', 'type': 'dir', 'dev': '0:40', 'ino': 1, 'mnt_id': 300}, "                             \
        "'exe': {'target': '/usr/bin/python3.11', 'type': 'reg', 'dev': '8:1', 'ino': 247970, 'mnt_id': 301}, "        \
        "'threads': [], "                                                                                              \
        "'maps': [{'path': '/usr/lib/x86_64-linux-gnu/libc.so.6', 'dev': '8:1', 'ino': 250001, 'shared': false, "      \
        "'writable': false, 'reach': 'same', 'mnt_id': 301}, "                                                         \
        "{'path': '/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache', 'dev': '8:1', 'ino': 332280, "                \
        "'shared': true, 'writable': false, 'reach': 'same', 'mnt_id': 301}]}"

/* A thread of a sandbox process but its main one, as inspect_threads.c reports it: the process's
 * credentials and filter, traced by no one, in its process's namespaces, sharing its table. */
#define TASK(tid, inner)                                                                                               \
        "{'tid': " #tid ", 'state': 'S', 'nspid': [" #tid ", " #inner "], 'uid': [1000, 1000, 1000, 1000], "           \
        "'gid': [1000, 1000, 1000, 1000], 'groups': [1000], 'cap_inh': '0000000000000000', "                           \
        "'cap_prm': '0000000000000000', 'cap_eff': '0000000000000000', 'cap_bnd': '0000000000000000', "                \
        "'cap_amb': '0000000000000000', 'no_new_privs': 1, 'seccomp': 2, 'seccomp_filters': 1, 'tracer_pid': 0, "      \
        "'errors': []}"

/* A sandbox process as inspect.c reports it: host uid 1000 mapped to itself, no capabilities, its
 * threads but the main one (tasks). */
#define PROC(pid, inner, name, ppid, session, fds) PROC_T(pid, inner, name, ppid, session, fds, "[]")
#define PROC_T(pid, inner, name, ppid, session, fds, tasks)                                                            \
        "{'pid': " #pid ", 'nspid': [" #pid ", " #inner "], 'name': '" name "', 'state': 'S', 'ppid': " #ppid ", "     \
        "'uid': [1000, 1000, 1000, 1000], 'gid': [1000, 1000, 1000, 1000], 'groups': [1000], "                         \
        "'cap_inh': '0000000000000000', 'cap_prm': '0000000000000000', 'cap_eff': '0000000000000000', "                \
        "'cap_bnd': '0000000000000000', 'cap_amb': '0000000000000000', 'no_new_privs': 1, 'seccomp': 2, "              \
        "'seccomp_filters': 1, 'tracer_pid': 0, 'session': " #session ", 'pgrp': " #session                            \
        ", 'tty_nr': 0, 'ns': " SANDBOX_NS ", "                                                                        \
        "'ns_owners': " SANDBOX_OWNERS ", "                                                                            \
        "'uid_map': '1000 1000 1', 'gid_map': '1000 1000 1', 'cmdline': '" name "', 'environ_secrets': [], "           \
        "'cmdline_secrets': [], 'fds': " fds ", 'refs': " REFS ", 'tasks': " tasks ", 'errors': []}"

/* kbound's /dev/null (host mount 21) as stdin, and the log it opened write-only, append-only
 * (O_WRONLY|O_APPEND|O_LARGEFILE = 0102001 = 33793) on the host's root (mount 20). */
#define FD_HOST_NULL                                                                                                   \
        "{'fd': 0, 'target': '/dev/null', 'type': 'chr', 'dev': '0:5', 'ino': 5, 'rdev': '1:3', 'flags': 32768, "      \
        "'mnt_id': 21}"
#define LOG_PATH "/home/u/.local/state/kbound/team-a/kernel.log"
#define FD_LOG(n)                                                                                                      \
        "{'fd': " #n ", 'target': '" LOG_PATH "', 'type': 'reg', 'dev': '8:1', 'ino': 777, 'flags': 33793, "           \
        "'mnt_id': 20}"

/* The kernel's log as kbound's keeper holds it (expect "kernel_log"): a pipe the kernel writes,
 * kept up to a bound. The good run has no keeper: its log is the file kbound opened
 * (expect "kernel_log_file"). */
#define LOG_KEEPER(pipe) "{'pipe': '" pipe "', 'max': 16777216, 'written': 4096, 'dropped': 0, 'kept': 4096}"

#define INIT_PROC PROC(1001, 1, "bwrap", 1000, 1000, "[" FD_HOST_NULL ", " FD_LOG(1) ", " FD_LOG(2) "]")

/* The kernel: its listeners (7001, 7002) and an unbound socket (7003) in the sandbox's unix table,
 * a netlink socket (7400) in its other tables, its end of kbound's shell connection (7101, in
 * kbound's namespace, named by the listener it was accepted from; kbound's end is 9101), a pipe of
 * its own, anonymous objects, a workspace file, anonymous memory. */
#define KERNEL_FDS                                                                                                     \
        "[" FD_HOST_NULL                                                                                               \
        ", " FD_LOG(1) ", " FD_LOG(2) ", "                                                                             \
                                      "{'fd': 3, 'target': 'socket:[7001]', 'type': 'sock', 'dev': '0:8', 'ino': "     \
                                      "7001, 'flags': 2050, 'mnt_id': 8}, "                                            \
                                      "{'fd': 4, 'target': 'socket:[7002]', 'type': 'sock', 'dev': '0:8', 'ino': "     \
                                      "7002, 'flags': 2050, 'mnt_id': 8}, "                                            \
                                      "{'fd': 5, 'target': 'socket:[7101]', 'type': 'sock', 'dev': '0:8', 'ino': "     \
                                      "7101, 'flags': 2050, 'mnt_id': 8}, "                                            \
                                      "{'fd': 6, 'target': 'pipe:[7200]', 'type': 'fifo', 'dev': '0:14', 'ino': "      \
                                      "7200, 'flags': 0, 'mnt_id': 14, 'pipe_other_end': 'none'}, "                    \
                                      "{'fd': 7, 'target': 'anon_inode:[eventpoll]', 'flags': 524290, 'mnt_id': 15}, " \
                                      "{'fd': 8, 'target': 'anon_inode:[eventfd]', 'flags': 526338, 'mnt_id': 15}, "   \
                                      "{'fd': 9, 'target': '/workspace/notes.ipynb', 'type': 'reg', 'dev': '8:1', "    \
                                      "'ino': 5010, 'flags': 32768, "                                                  \
                                      "'mnt_id': 311}, "                                                               \
                                      "{'fd': 10, 'target': '/memfd:ipc-shm (deleted)', 'type': 'reg', 'dev': '0:1', " \
                                      "'ino': 3, 'flags': 32770, "                                                     \
                                      "'mnt_id': 16}, "                                                                \
                                      "{'fd': 11, 'target': 'socket:[7400]', 'type': 'sock', 'dev': '0:8', 'ino': "    \
                                      "7400, 'flags': 2, 'mnt_id': 8}, "                                               \
                                      "{'fd': 12, 'target': 'socket:[7003]', 'type': 'sock', 'dev': '0:8', 'ino': "    \
                                      "7003, 'flags': 2, 'mnt_id': 8}]"

/* ipykernel's threads (its heartbeat, control, iopub, ...): two of them. */
#define KERNEL_PROC PROC_T(1002, 2, "python3", 1001, 1002, KERNEL_FDS, "[" TASK(1010, 3) ", " TASK(1011, 4) "]")

/* The cell's child: /dev/null opened inside the sandbox (its mount 306), pipes to the kernel. */
#define CHILD_PROC                                                                                                     \
        PROC(1003, 7, "python3", 1002, 1002,                                                                           \
             "[{'fd': 0, 'target': '/dev/null', 'type': 'chr', 'dev': '0:5', 'ino': 5, 'rdev': '1:3', 'flags': "       \
             "32768, "                                                                                                 \
             "'mnt_id': 306}, {'fd': 1, 'target': 'pipe:[7300]', 'type': 'fifo', 'dev': '0:14', 'ino': 7300, "         \
             "'flags': 1, 'mnt_id': 14, 'pipe_other_end': 'none'}, {'fd': 2, 'target': 'pipe:[7301]', 'type': "        \
             "'fifo', 'dev': '0:14', 'ino': 7301, 'flags': 1, 'mnt_id': 14, 'pipe_other_end': 'none'}]")

/* The run's base folder (kbound-XXXXXX under the runtime parent /tmp, on the host's root
 * filesystem 8:1) and its team folders. */
#define BASE "/tmp/kbound-AbC123"
#define TEAM_A BASE "/teams/team-a"
#define TEAM_B_CANARY BASE "/teams/team-b/workspace/canary.txt"
#define CREDENTIAL_CANARY "/home/u/.ssh/id_ed25519"
#define HOST_SOCKET "/run/dbus/system_bus_socket"
#define SHELL "/run/kbound/kernel-shell"
#define CONTROL "/run/kbound/kernel-control"
/* A process outside the sandbox, started by kbound's launcher, as a socket's holder. */
#define HOST_HOLDER "[{'pid': 6001, 'name': 'python3', 'side': 'launch'}]"

/* The kernel's mount table as bwrap builds it (index: id): 0: 300 /, 1: 301 /usr, 2: 302 /proc,
 * 3: 303 /proc/sys, 4: 304 /proc/sysrq-trigger, 5: 305 /dev, 6: 306 /dev/null, 7: 307 /dev/tty,
 * 8: 308 /dev/pts, 9: 309 /tmp, 10: 310 /run/kbound, 11: 311 /workspace. */
#define SANDBOX_MOUNTS                                                                                                 \
        "[{'id': 300, 'nodev': true, 'parent': 299, 'dev': '0:40', 'root': '/', 'mountpoint': '/', 'fstype': "         \
        "'tmpfs', "                                                                                                    \
        "'source': 'tmpfs', 'writable': false, 'options': ['ro', 'nosuid'], 'super': [], 'target': {'type': 'dir', "   \
        "'dev': '0:40', 'ino': 1}}, "                                                                                  \
        "{'id': 301, 'nodev': true, 'parent': 300, 'dev': '8:1', 'root': '/usr', 'mountpoint': '/usr', 'fstype': "     \
        "'ext4', "                                                                                                     \
        "'source': '/dev/sda1', 'writable': false, 'options': ['ro', 'nosuid'], 'super': [], 'target': {'type': "      \
        "'dir', 'dev': '8:1', 'ino': 131073}}, "                                                                       \
        "{'id': 302, 'nodev': true, 'parent': 300, 'dev': '0:41', 'root': '/', 'mountpoint': '/proc', 'fstype': "      \
        "'proc', "                                                                                                     \
        "'source': 'proc', 'writable': true, 'options': ['rw', 'nosuid'], 'super': [], 'target': {'type': 'dir', "     \
        "'dev': '0:41', 'ino': 1}}, "                                                                                  \
        "{'id': 303, 'nodev': true, 'parent': 302, 'dev': '0:41', 'root': '/sys', 'mountpoint': '/proc/sys', "         \
        "'fstype': 'proc', "                                                                                           \
        "'source': 'proc', 'writable': false, 'options': ['ro', 'nosuid'], 'super': [], 'target': {'type': 'dir', "    \
        "'dev': '0:41', 'ino': 4026531855}}, "                                                                         \
        "{'id': 304, 'nodev': true, 'parent': 302, 'dev': '0:41', 'root': '/sysrq-trigger', 'mountpoint': "            \
        "'/proc/sysrq-trigger', "                                                                                      \
        "'fstype': 'proc', 'source': 'proc', 'writable': false, 'options': ['ro', 'nosuid'], 'super': [], 'target': "  \
        "{'type': 'reg', 'dev': '0:41', "                                                                              \
        "'ino': 4026532080}}, "                                                                                        \
        "{'id': 305, 'nodev': true, 'parent': 300, 'dev': '0:42', 'root': '/', 'mountpoint': '/dev', 'fstype': "       \
        "'tmpfs', "                                                                                                    \
        "'source': 'tmpfs', 'writable': true, 'options': ['rw', 'nosuid'], 'super': [], 'target': {'type': 'dir', "    \
        "'dev': '0:42', 'ino': 1}}, "                                                                                  \
        "{'id': 306, 'nodev': false, 'parent': 305, 'dev': '0:5', 'root': '/null', 'mountpoint': '/dev/null', "        \
        "'fstype': 'devtmpfs', "                                                                                       \
        "'source': 'udev', 'writable': true, 'options': ['rw', 'nosuid'], 'super': [], 'target': {'type': 'chr', "     \
        "'dev': '0:5', 'ino': 5, 'rdev': '1:3'}}, "                                                                    \
        "{'id': 307, 'nodev': false, 'parent': 305, 'dev': '0:5', 'root': '/tty', 'mountpoint': '/dev/tty', "          \
        "'fstype': 'devtmpfs', "                                                                                       \
        "'source': 'udev', 'writable': true, 'options': ['rw', 'nosuid'], 'super': [], 'target': {'type': 'chr', "     \
        "'dev': '0:5', 'ino': 12, 'rdev': '5:0'}}, "                                                                   \
        "{'id': 308, 'nodev': false, 'parent': 305, 'dev': '0:43', 'root': '/', 'mountpoint': '/dev/pts', 'fstype': "  \
        "'devpts', "                                                                                                   \
        "'source': 'devpts', 'writable': true, 'options': ['rw', 'nosuid'], 'super': [], 'target': {'type': 'dir', "   \
        "'dev': '0:43', 'ino': 1}}, "                                                                                  \
        "{'id': 309, 'nodev': true, 'parent': 300, 'dev': '0:44', 'root': '/', 'mountpoint': '/tmp', 'fstype': "       \
        "'tmpfs', "                                                                                                    \
        "'source': 'tmpfs', 'writable': true, 'options': ['rw', 'nosuid'], 'super': [], 'target': {'type': 'dir', "    \
        "'dev': '0:44', 'ino': 1}}, "                                                                                  \
        "{'id': 310, 'nodev': true, 'parent': 300, 'dev': '8:1', 'root': '" TEAM_A                                     \
        "/runtime', 'mountpoint': '/run/kbound', "                                                                     \
        "'fstype': 'ext4', 'source': '/dev/sda1', 'writable': true, 'options': ['rw', 'nosuid'], 'super': [], "        \
        "'target': {'type': 'dir', 'dev': '8:1', "                                                                     \
        "'ino': 5001}}, "                                                                                              \
        "{'id': 311, 'nodev': true, 'parent': 300, 'dev': '8:1', 'root': '" TEAM_A                                     \
        "/workspace', 'mountpoint': '/workspace', "                                                                    \
        "'fstype': 'ext4', 'source': '/dev/sda1', 'writable': true, 'options': ['rw', 'nosuid'], 'super': [], "        \
        "'target': {'type': 'dir', 'dev': '8:1', "                                                                     \
        "'ino': 5000}}]"

/* The bwrap kbound launched (its program, command line and environment), as kb_sandbox_launch_facts
 * and the launcher's facts show them. */
#define BWRAP_EXE "{'path': '/usr/bin/bwrap', 'dev': '8:1', 'ino': 4242}"
#define BWRAP_ARGV                                                                                                     \
        "['/usr/bin/bwrap', '--unshare-all', '--unshare-pid', '--die-with-parent', '--new-session', "                  \
        "'--unshare-user', '--seccomp', '4', '--ro-bind', '/usr', '/usr', '--proc', '/proc', '--dev', '/dev', "        \
        "'--tmpfs', '/tmp', '--bind', '" TEAM_A "/workspace', '/workspace', '--block-fd', '6', '--info-fd', '3', "     \
        "'--', 'python3', '-m', 'ipykernel_launcher', '-f', '/run/kbound/connection.json']"
#define BWRAP_ENV "['PATH=sha256:3df5', 'HOME=sha256:fc83', 'TMPDIR=sha256:65c1', 'LANG=sha256:63e4']"
#define LAUNCHER                                                                                                       \
        "{'pid': 1000, 'ppid': 5000, 'spawned': 1000, 'kbound': 5000, 'argv': " BWRAP_ARGV ", 'environ': " BWRAP_ENV   \
        ", 'exe': " BWRAP_EXE ", 'outside_inodes': ['pipe:[9001]', 'socket:[9002]'], 'shared_files': []}"
/* Before exec, the bwrap outside (the launcher, 1000) shares one eventfd with its init: its status
 * channel, the same open file as init's fd 8 (kcmp). */
#define LAUNCHER_PRE_EXEC                                                                                              \
        "{'pid': 1000, 'ppid': 5000, 'spawned': 1000, 'kbound': 5000, 'argv': " BWRAP_ARGV ", 'environ': " BWRAP_ENV   \
        ", 'exe': " BWRAP_EXE ", 'outside_inodes': ['pipe:[9001]', 'socket:[9002]'], 'shared_files': [{'target': "     \
        "'anon_inode:[eventfd]', 'pid': 1000, 'name': 'bwrap', 'fd': 5, 'sandbox_pid': 1001, 'sandbox_fd': 8}]}"
/* Nothing outside the sandbox is in its namespaces; 120 processes outside were read. */
#define NS_OUTSIDE                                                                                                     \
        "'ns_holders': [], 'outside_channels': [], 'ns_outside': {'read': 120, 'unreadable': 0, 'holders': 0, "        \
        "'fd_tables_read': 120, 'fd_tables_unreadable': 0, 'kbound_helpers': 0, 'transient': 0, "                      \
        "'fd_tables_read_again': 0}"

/* The look before the kernel's program ran: bwrap's init alone, blocked reading kbound's block channel (fd
 * 6), holding what kbound handed it (stdin, the log, the seccomp channel at 4, the block channel) and
 * bwrap's own O_PATH descriptor of the host's /proc (7) and eventfd (8). */
#define PRE_INIT_FDS                                                                                                   \
        "[" FD_HOST_NULL ", " FD_LOG(1) ", " FD_LOG(2) ", "                                                            \
                                                       "{'fd': 4, 'target': 'socket:[8102]', 'type': 'sock', 'dev': "  \
                                                       "'0:8', 'ino': 8102, 'flags': 2, 'mnt_id': 8}, "                \
                                                       "{'fd': 6, 'target': 'socket:[8100]', 'type': 'sock', 'dev': "  \
                                                       "'0:8', 'ino': 8100, 'flags': 2, 'mnt_id': 8}, "                \
                                                       "{'fd': 7, 'target': '/proc', 'type': 'dir', 'dev': '0:22', "   \
                                                       "'ino': 1, 'flags': 2097152, 'mnt_id': 24}, "                   \
                                                       "{'fd': 8, 'target': 'anon_inode:[eventfd]', 'type': "          \
                                                       "'unknown', 'dev': '0:16', 'ino': 20, 'flags': 526338, "        \
                                                       "'mnt_id': 17}]"
#define PRE_EXEC_LOOK                                                                                                  \
        "{'label': 'pre-exec', 'taken_ms': 900, 'errors': [], 'vanished': 0, 'mounts': " SANDBOX_MOUNTS ", "           \
        "'processes': [" PROC(1001, 1, "bwrap", 1000, 1000,                                                            \
                              PRE_INIT_FDS) "], " NS_OUTSIDE ", "                                                      \
                                            "'init': {'pid': 1001, 'syscall': '0 0x6', 'reads_fd': 6}, "               \
                                            "'launcher': " LAUNCHER_PRE_EXEC "}"
/* The mounts kbound planned (kb_sandbox_planned_mounts), one for each of SANDBOX_MOUNTS in its order:
 * bwrap's root, /usr bound from the host, a fresh /proc with bwrap's optional covers of its own
 * entries, --dev's tmpfs, two of its host nodes and its devpts, /tmp, the team's runtime folder and
 * workspace. */
#define COVER(entry)                                                                                                   \
        "{'mountpoint': '/proc/" entry "', 'kind': 'cover', 'asked': '--proc /proc: bwrap\\u0027s read-only cover', "  \
        "'fstype': 'proc', 'root': '/" entry "', 'read_only': true, 'nodev': true, 'optional': true}"
#define PLANNED_BIND(mp, asked, path, dev, ino, ro, nodev)                                                             \
        "{'mountpoint': '" mp "', 'kind': 'bind', 'asked': '" asked "', 'source': {'path': '" path "', 'dev': '" dev   \
        "', 'ino': " #ino "}, 'read_only': " #ro ", 'nodev': " #nodev "}"
#define PLANNED_FRESH(mp, asked, fstype, ro, nodev)                                                                    \
        "{'mountpoint': '" mp "', 'kind': 'fresh', 'asked': '" asked "', 'fstype': '" fstype "', 'read_only': " #ro    \
        ", 'nodev': " #nodev "}"
#define PLANNED_ROOT PLANNED_FRESH("/", "bwrap\\u0027s own root (a tmpfs)", "tmpfs", true, true)
#define PLANNED_USR PLANNED_BIND("/usr", "--ro-bind /usr /usr", "/usr", "8:1", 131073, true, true)
#define PLANNED_PROC                                                                                                   \
        PLANNED_FRESH("/proc", "--proc /proc", "proc", false, true)                                                    \
        ", " COVER("sys") ", " COVER("sysrq-trigger") ", " COVER("irq") ", " COVER("bus")
#define PLANNED_NULL                                                                                                   \
        PLANNED_BIND("/dev/null", "--dev /dev: the host\\u0027s /dev/null", "/dev/null", "0:5", 5, false, false)
#define PLANNED_TTY                                                                                                    \
        PLANNED_BIND("/dev/tty", "--dev /dev: the host\\u0027s /dev/tty", "/dev/tty", "0:5", 12, false, false)
#define PLANNED_PTS PLANNED_FRESH("/dev/pts", "--dev /dev: its own devpts", "devpts", false, false)
#define PLANNED_DEV                                                                                                    \
        PLANNED_FRESH("/dev", "--dev /dev", "tmpfs", false, true) ", " PLANNED_NULL ", " PLANNED_TTY ", " PLANNED_PTS
#define PLANNED_TEAM                                                                                                   \
        PLANNED_BIND("/run/kbound", "--bind " TEAM_A "/runtime /run/kbound", TEAM_A "/runtime", "8:1", 5001, false,    \
                     true)                                                                                             \
        ", " PLANNED_BIND("/workspace", "--bind " TEAM_A "/workspace /workspace", TEAM_A "/workspace", "8:1", 5000,    \
                          false, true)
#define PLANNED_MOUNTS                                                                                                 \
        "[" PLANNED_ROOT ", " PLANNED_USR ", " PLANNED_PROC ", " PLANNED_DEV                                           \
        ", " PLANNED_FRESH("/tmp", "--tmpfs /tmp", "tmpfs", false, true) ", " PLANNED_TEAM "]"

/* What kbound handed bwrap, by number and object (kb_sandbox_launch_facts "fds"), and the mounts it
 * planned. */
#define LAUNCH                                                                                                         \
        "{'program': " BWRAP_EXE ", 'argv': " BWRAP_ARGV ", 'env': " BWRAP_ENV ", 'mounts': " PLANNED_MOUNTS ", "      \
        "'fds': [{'fd': 0, 'what': 'stdin (/dev/null)', 'dev': '0:5', 'ino': 5}, "                                     \
        "{'fd': 1, 'what': 'the kernel\\u0027s log', 'dev': '8:1', 'ino': 777}, "                                      \
        "{'fd': 2, 'what': 'the kernel\\u0027s log', 'dev': '8:1', 'ino': 777}, "                                      \
        "{'fd': 3, 'what': 'the info pipe', 'dev': '0:14', 'ino': 8099}, "                                             \
        "{'fd': 4, 'what': 'the seccomp channel', 'dev': '0:8', 'ino': 8102}, "                                        \
        "{'fd': 5, 'what': 'the syscall probe', 'dev': '8:1', 'ino': 999}, "                                           \
        "{'fd': 6, 'what': 'the block channel', 'dev': '0:8', 'ino': 8100}], "                                         \
        "'proc': {'dev': '0:22', 'ino': 1}, 'block_fd': 6}"

/* The kernel's sockets traced to their other ends (sock_diag): its listeners and its unbound socket
 * in the sandbox's network namespace, nothing waiting in them; its end of kbound's shell connection
 * in kbound's, kbound's socket its peer; the netlink socket in no unix list. */
#define SANDBOX_SOCKETS                                                                                                \
        "[{'inode': 7001, 'found': 'sandbox', 'socket': {'inode': 7001, 'type': 'stream', 'state': 'listening', "      \
        "'path': '" SHELL "', 'peer': 0, 'rqueue': 0}}, "                                                              \
        "{'inode': 7002, 'found': 'sandbox', 'socket': {'inode': 7002, 'type': 'stream', 'state': 'listening', "       \
        "'path': '" CONTROL "', 'peer': 0, 'rqueue': 0}}, "                                                            \
        "{'inode': 7003, 'found': 'sandbox', 'socket': {'inode': 7003, 'type': 'stream', 'state': 'unconnected', "     \
        "'peer': 0, 'rqueue': 0}}, "                                                                                   \
        "{'inode': 7101, 'found': 'kbound', 'socket': {'inode': 7101, 'type': 'stream', 'state': 'connected', "        \
        "'path': '" SHELL "', 'peer': 9101, 'rqueue': 0}, 'peer': {'inode': 9101, 'found': 'kbound', "                 \
        "'held_by': [{'pid': 5000, 'name': 'kbound', 'side': 'kbound'}]}}, "                                           \
        "{'inode': 7400, 'found': 'none'}]"

/* One look at the sandbox, before the cell's child exists. */
#define READY_LOOK                                                                                                     \
        "{'label': 'ready', 'taken_ms': 1000, 'errors': [], 'vanished': 0, "                                           \
        "'processes': [" INIT_PROC ", " KERNEL_PROC "], "                                                              \
        "'mounts': " SANDBOX_MOUNTS ", 'mount_tables': {}, "                                                           \
        "'outside_mounts': {'devices': {'8:1': 5000, '0:5': 5000}, 'namespaces': 3, 'unreadable': 0}, 'ns_mounts': "   \
        "[], "                                                                                                         \
        "'net': {'4026532300': {'unix': [{'inode': 7001, 'listening': true, 'path': '" SHELL "'}, "                    \
        "{'inode': 7002, 'listening': true, 'path': '" CONTROL "'}, {'inode': 7003, 'listening': false}], "            \
        "'socket_inodes': [7400], 'interfaces': ['lo'], 'routes_v4': [], 'routes_v6': ['lo']}}, "                      \
        "'kernel_net': '4026532300', "                                                                                 \
        "'kbound_sockets': [9101, 9102], "                                                                             \
        "'kbound_net_sockets': [{'inode': 7101, 'type': 'stream', 'state': 'connected', 'path': '" SHELL "', "         \
        "'peer': 9101, 'peer_held_by': [{'pid': 5000, 'name': 'kbound', 'side': 'kbound'}]}], "                        \
        "'endpoints': [{'path': '" SHELL "', 'file': {'type': 'sock', 'dev': '8:1', 'ino': 5101}}, "                   \
        "{'path': '" CONTROL "', 'file': {'type': 'sock', 'dev': '8:1', 'ino': 5102}}], "                              \
        "'connections': [{'endpoint': '" SHELL "', 'kbound_socket': 9101, 'peer': 7101, "                              \
        "'holders': [{'pid': 1002, 'name': 'python3', 'side': 'sandbox'}]}, "                                          \
        "{'endpoint': '" CONTROL "', 'kbound_socket': 9102, 'peer': 7102, "                                            \
        "'holders': [{'pid': 1002, 'name': 'python3', 'side': 'sandbox'}]}], "                                         \
        "'launcher': " LAUNCHER ", " NS_OUTSIDE ", "                                                                   \
        "'reach': [{'name': 'credential file', 'path': '" CREDENTIAL_CANARY "', 'kind': 'canary', "                    \
        "'claim': 'boundary.credentials', 'exposed': []}, "                                                            \
        "{'name': 'sibling team canary', 'path': '" TEAM_B_CANARY "', 'kind': 'canary', "                              \
        "'claim': 'boundary.cross_team', 'exposed': []}, "                                                             \
        "{'name': 'listening unix stream socket', 'path': '" HOST_SOCKET "', 'kind': 'socket', "                       \
        "'claim': 'boundary.sockets', 'exposed': [], 'socket': {'inode': 4001, 'type': 'stream', "                     \
        "'state': 'listening', 'path': '" HOST_SOCKET "', 'peer': 0}}], "                                              \
        "'socket_namespaces': 2, 'socket_namespaces_not_entered': [], 'socket_namespaces_skipped': 0, "                \
        "'abstract_sockets': 3, 'host_sockets': {'checked': 4, 'elsewhere': 3, 'vanished': 0, 'not_claimed': []}, "    \
        "'sandbox_sockets': " SANDBOX_SOCKETS "}"

/* The system-call ABIs as the host found them: x86_64 and i386 run, x32 not. */
#define ABIS                                                                                                           \
        "{'x86_64': {'native': true, 'how': 'syscall', 'accepted': true, 'answer': 'getpid through syscall "           \
        "answered 5001'}, 'i386': {'how': 'int 0x80', 'accepted': true, 'answer': 'getpid through int 0x80 answered "  \
        "5002'}, 'x32': {'how': 'syscall with __X32_SYSCALL_BIT', 'accepted': false, 'answer': 'getpid through "       \
        "syscall with __X32_SYSCALL_BIT answered ENOSYS: this kernel does not run the ABI'}}"
#define HOST                                                                                                           \
        "{'pid': 5000, 'session': 4990, 'uid': 1000, 'ns': " HOST_NS ", 'proc_entries': ['sys', 'sysrq-trigger'], "    \
        "'memfd_dev': '0:1', 'abis': " ABIS ", 'filter_read': false, 'filter_read_why': 'the kernel refuses the "      \
        "read (PTRACE_SECCOMP_GET_FILTER needs CAP_SYS_ADMIN and a reader under no seccomp filter)', 'mounts': ["      \
        "{'id': 20, 'nodev': false, 'parent': 1, 'dev': '8:1', 'root': '/', 'mountpoint': '/', 'fstype': 'ext4', "     \
        "'source': '/dev/sda1', 'writable': true, 'options': ['rw', 'nosuid'], 'super': []}, "                         \
        "{'id': 21, 'nodev': false, 'parent': 20, 'dev': '0:5', 'root': '/', 'mountpoint': '/dev', 'fstype': "         \
        "'devtmpfs', "                                                                                                 \
        "'source': 'udev', 'writable': true, 'options': ['rw', 'nosuid'], 'super': []}, "                              \
        "{'id': 22, 'nodev': false, 'parent': 21, 'dev': '0:24', 'root': '/', 'mountpoint': '/dev/pts', 'fstype': "    \
        "'devpts', "                                                                                                   \
        "'source': 'devpts', 'writable': true, 'options': ['rw', 'nosuid'], 'super': []}, "                            \
        "{'id': 23, 'nodev': true, 'parent': 21, 'dev': '0:25', 'root': '/', 'mountpoint': '/dev/shm', 'fstype': "     \
        "'tmpfs', "                                                                                                    \
        "'source': 'tmpfs', 'writable': true, 'options': ['rw', 'nosuid'], 'super': []}, "                             \
        "{'id': 24, 'nodev': true, 'parent': 20, 'dev': '0:22', 'root': '/', 'mountpoint': '/proc', 'fstype': "        \
        "'proc', "                                                                                                     \
        "'source': 'proc', 'writable': true, 'options': ['rw', 'nosuid'], 'super': []}, "                              \
        "{'id': 25, 'nodev': true, 'parent': 20, 'dev': '0:26', 'root': '/', 'mountpoint': '/run', 'fstype': "         \
        "'tmpfs', "                                                                                                    \
        "'source': 'tmpfs', 'writable': true, 'options': ['rw', 'nosuid'], 'super': []}]}"

#define CANARY_NAME "kbound-canary-5f3a"

/* The probe cell's result: it tried, and everything it tried was refused or stayed private. */
#define PROBE                                                                                                          \
        "{'pid': 2, 'errors': [], "                                                                                    \
        "'workspace': {'path': '/workspace/kbound-probe-5f3a.txt', 'written': true, 'error': null}, "                  \
        "'write_outside': [{'path': '/', 'fstype': 'tmpfs', 'mount_point': '/', 'created': false, 'error': 'EROFS'}, " \
        "{'path': '/tmp', 'fstype': 'tmpfs', 'mount_point': '/tmp', 'created': true, 'error': null}, "                 \
        "{'path': '/dev/shm', 'fstype': 'tmpfs', 'mount_point': '/dev', 'created': true, 'error': null}, "             \
        "{'path': '/usr', 'fstype': 'ext4', 'mount_point': '/usr', 'created': false, 'error': 'EROFS'}], "             \
        "'sysctl': [{'path': '/proc/sys/kernel/core_pattern', 'opened': false, 'error': 'EROFS'}, "                    \
        "{'path': '/proc/sysrq-trigger', 'opened': false, 'error': 'EROFS'}], "                                        \
        "'network': {'interfaces': ['lo'], 'routes_v4': [], 'routes_v6': ['lo'], "                                     \
        "'tcp': [{'port': 41234, 'connected': false, 'error': 'ECONNREFUSED'}], "                                      \
        "'abstract': [{'name': '" CANARY_NAME "', 'tested': true, 'connected': false, 'error': 'ECONNREFUSED'}], "     \
        "'unix_visible': []}, "                                                                                        \
        "'credentials': {'subprocess': {'spawned': true, 'pid': 7, 'error': null, 'environ': 'HOME=/workspace', "      \
        "'proc': [{'pid': 1, 'environ': '', 'cmdline': 'bwrap'}, {'pid': 2, 'environ': '', 'cmdline': 'python3'}, "    \
        "{'pid': 7, 'environ': 'HOME=/workspace', 'cmdline': 'python3 -I -c'}], 'go': true}, "                         \
        "'files': [{'path': '" CREDENTIAL_CANARY "', 'exists': false, 'content': null}], "                             \
        "'keys': {'tested': true, 'found': false, 'payload': null, 'error': 'ENOKEY'}}, "                              \
        "'cross_team': [{'path': '" TEAM_B_CANARY "', 'exists': false, 'readable': false, 'content': null}]}"

/* What kbound's filter refuses (a few of its entries), and the attack-surface cell's answers: a
 * spawned program tried every entry, the kernel itself two; vm86 does not exist on this ABI. */
#define SECCOMP                                                                                                        \
        "{'blocked': {'ptrace': 'EPERM', 'add_key': 'EPERM', 'clone:CLONE_NEWUSER': 'EPERM', "                         \
        "'socket:AF_PACKET': 'EAFNOSUPPORT', 'vm86': 'EPERM'}, 'not_claimed': [], 'sockets': 'default'}"
#define TRY(name, errno_) "{'name': '" name "', 'errno': " errno_ ", 'ret': -1, 'tested': true, 'why': ''}"
#define TRIES                                                                                                          \
        "[" TRY("ptrace", "'EPERM'") ", " TRY("add_key", "'EPERM'") ", " TRY(                                          \
                "clone:CLONE_NEWUSER", "'EPERM'") ", " TRY("socket:AF_PACKET",                                         \
                                                           "'EAFNOSUPPORT'") ", {'name': 'vm86', 'errno': null, "      \
                                                                             "'ret': null, 'tested': false, "          \
                                                                             "'why': 'no such call on x86_64'}]"
/* The same tries through i386, where vm86 exists and is refused; x32 not run by the kernel. */
#define TRIES_I386                                                                                                     \
        "[" TRY("ptrace", "'EPERM'") ", " TRY("add_key", "'EPERM'") ", " TRY(                                          \
                "clone:CLONE_NEWUSER", "'EPERM'") ", " TRY("socket:AF_PACKET",                                         \
                                                           "'EAFNOSUPPORT'") ", " TRY("vm86", "'EPERM'") "]"
#define COMPAT                                                                                                         \
        "[{'abi': 'i386', 'accepted': true, 'why': 'getpid through int 0x80 answered 7', 'results': " TRIES_I386       \
        "}, {'abi': 'x32', 'accepted': false, 'why': 'getpid through syscall with __X32_SYSCALL_BIT answered "         \
        "ENOSYS'}]"
#define SURFACE                                                                                                        \
        "{'child': {'version': 1, 'arch': 'x86_64', 'seccomp': 2, 'filters': 1, 'results': " TRIES                     \
        ", 'compat': " COMPAT                                                                                          \
        "}, 'in_process': {'results': [" TRY("ptrace", "'EPERM'") ", " TRY("socket:AF_PACKET", "'EAFNOSUPPORT'") "]}}"

/* Every canary file the run planted for the checks' claims (kb_canary_set.planted): all of them. */
#define CANARIES_PLANTED                                                                                               \
        "[{'name': 'credential file', 'check': 'boundary.credentials', 'planted': true, 'path': '" BASE                \
        "/host-secrets/credentials'}, "                                                                                \
        "{'name': 'credential canary in the user\\u0027s home', 'check': 'boundary.credentials', 'planted': true, "    \
        "'path': '/home/u/.kbound-canary-Ab12Cd'}, "                                                                   \
        "{'name': 'another team\\u0027s workspace', 'check': 'boundary.cross_team', 'planted': true, 'path': '" BASE   \
        "/teams/team-b/workspace'}, "                                                                                  \
        "{'name': 'another team\\u0027s canary', 'check': 'boundary.cross_team', 'planted': true, 'path': "            \
        "'" TEAM_B_CANARY "'}]"

/* What kbound arranged and saw outside the cell. */
/* The twin sandbox, its bwrap killed, gone within 3 ms (kb_sandbox_lifetime). */
#define LIFETIME                                                                                                       \
        "{'bound_ms': 2000, 'init_gone_ms': 3, 'pid2_gone_ms': 3, 'survived': false, 'stopped_by_kbound': false}"
#define EXPECT                                                                                                         \
        "{'allow_network': false, 'kernel_pid': 1002, 'kernel_log_file': {'dev': '8:1', 'ino': 777}, "                 \
        "'team_binds': [{'name': 'workspace', 'dev': '8:1', 'ino': 5000, 'path': '" TEAM_A "/workspace'}, "            \
        "{'name': 'runtime', 'dev': '8:1', 'ino': 5001, 'path': '" TEAM_A "/runtime'}], 'base_dir': '" BASE "', "      \
        "'abstract_canaries': ['" CANARY_NAME "'], 'canary_connections': {'tcp': 0, 'unix': 0}, "                      \
        "'escapes_seen': [], 'escape_dirs': 4, 'workspace_read_back': true, 'secrets_in_probe': [], "                  \
        "'sibling_in_probe': [], 'secrets_guarded': 5, 'keyring': 'planted in the session keyring', "                  \
        "'identity': {'pid': 2, 'ppid': 1, 'nspid': [2]}, 'bwrap': '/usr/bin/bwrap', 'bwrap_version': '0.8.0', "       \
        "'pidns': 4026532203, 'launch': " LAUNCH ", "                                                                  \
        "'limits': {'memory': 0, 'tasks': 0, 'tmp': 0, 'workspace': 0, 'log': 0, 'cpu': 0}, "                          \
        "'seccomp': " SECCOMP ", 'surface': " SURFACE ", 'lifetime': " LIFETIME ", 'canaries': " CANARIES_PLANTED "}"

/* {"host", "snapshots": [ready, child alive], "probe", "expect"}: a run every check passes. The
 * second look is the first one again with the cell's child (host pid 1003, PID 7 inside) alive. */
static inline json_object *good_run(void) {
        json_object *run = parse("{'host': " HOST ", 'snapshots': [" READY_LOOK "], 'probe': " PROBE
                                 ", 'expect': " EXPECT ", 'pre_exec': " PRE_EXEC_LOOK "}");
        set(run, "/pre_exec/processes/0/exe", BWRAP_EXE);
        json_object *ready = NULL, *alive = NULL;
        assert_int_equal(json_pointer_get(run, "/snapshots/0", &ready), 0);
        assert_int_equal(json_object_deep_copy(ready, &alive, NULL), 0);
        assert_int_equal(json_pointer_set(&run, "/snapshots/-", alive), 0);
        set(run, "/snapshots/1/label", "'child alive'");
        set(run, "/snapshots/1/taken_ms", "1500");
        set(run, "/snapshots/1/processes/-", CHILD_PROC);
        return run;
}

/* ---- judging and asserting ---- */

static inline const char *str_member(json_object *o, const char *key) {
        json_object *v = member(o, key);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static inline const char *status_of(json_object *check) {
        assert_non_null(check);
        assert_non_null(str_member(check, "status"));
        return str_member(check, "status");
}

static inline const char *detail_of(json_object *check) {
        assert_non_null(str_member(check, "detail"));
        return str_member(check, "detail");
}

static inline const char *text_of(json_object *o) {
        return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* True if the detail or one of the problems in the evidence holds words. */
static inline bool check_names(json_object *check, const char *words) {
        if (strstr(detail_of(check), words))
                return true;
        json_object *problems = member(member(check, "evidence"), "problems");
        for (size_t i = 0; problems && i < json_object_array_length(problems); i++)
                if (strstr(json_object_get_string(json_object_array_get_idx(problems, i)), words))
                        return true;
        return false;
}

static inline json_object *judge_run(judge_fn judge, json_object *run) {
        kb_judge_input in = input_of(run);
        json_object *check = judge(&in);
        assert_non_null(check);
        return check;
}

static inline void assert_status_naming(json_object *check, const char *status, const char *words, const char *what) {
        if (strcmp(status_of(check), status) != 0)
                fail_msg("%s: %s, not %s: %s", what, status_of(check), status, text_of(check));
        if (words && !check_names(check, words))
                fail_msg("%s: nothing names '%s': %s", what, words, text_of(check));
}

/* One change to the good run: value is JSON text, NULL removes what pointer names. */
typedef struct edit {
        const char *pointer, *value;
} edit;

/* Up to four changes that break (or keep) one thing, and what the verdict must name. */
typedef struct breakage {
        edit edits[4];
        const char *words;
} breakage;

#define B1(p, v, words)                                                                                                \
        { {{p, v}}, words }
#define B2(p1, v1, p2, v2, words)                                                                                      \
        { {{p1, v1}, {p2, v2}}, words }
#define B3(p1, v1, p2, v2, p3, v3, words)                                                                              \
        { {{p1, v1}, {p2, v2}, {p3, v3}}, words }
#define B4(p1, v1, p2, v2, p3, v3, p4, v4, words)                                                                      \
        { {{p1, v1}, {p2, v2}, {p3, v3}, {p4, v4}}, words }

static inline void apply(json_object *run, const breakage *b) {
        for (size_t e = 0; e < KB_ELEMENTSOF(b->edits) && b->edits[e].pointer; e++) {
                if (b->edits[e].value)
                        set(run, b->edits[e].pointer, b->edits[e].value);
                else
                        drop(run, b->edits[e].pointer);
        }
}

/* Each case, applied alone to the good run, gives status and names its words. */
static inline void expect_each(judge_fn judge, const char *status, const breakage *cases, size_t n) {
        for (size_t i = 0; i < n; i++) {
                json_object *run = good_run();
                apply(run, &cases[i]);
                json_object *check = judge_run(judge, run);
                char what[256];
                snprintf(what, sizeof what, "case %zu (%s)", i, cases[i].edits[0].pointer);
                assert_status_naming(check, status, cases[i].words, what);
                json_object_put(check);
                json_object_put(run);
        }
}

#define EXPECT_FAILS(judge, cases) expect_each(judge, "fail", cases, KB_ELEMENTSOF(cases))
#define EXPECT_PASSES(judge, cases) expect_each(judge, "pass", cases, KB_ELEMENTSOF(cases))

/* Every check the judge makes from a kb_judge_input, with its id. */
static const struct {
        const char *id;
        judge_fn judge;
        bool host_looks;  /* rests on the host's looks */
        bool needs_probe; /* rests on the probe cell too */
} judges[] = {
        {"sandbox.backend", kb_judge_backend, true, false},
        {"sandbox.session", kb_judge_session, true, false},
        {"sandbox.attack_surface", kb_judge_attack_surface, true, false},
        {"identity.pid2", kb_judge_identity, true, false},
        {"boundary.descriptors", kb_judge_descriptors, true, false},
        {"boundary.write_outside", kb_judge_write_outside, true, true},
        {"boundary.workspace_writable", kb_judge_workspace, false, true},
        {"boundary.network", kb_judge_network, true, true},
        {"boundary.sockets", kb_judge_sockets, true, false},
        {"boundary.credentials", kb_judge_credentials, true, true},
        {"boundary.cross_team", kb_judge_cross_team, true, true},
};

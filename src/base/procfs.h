/* procfs.h: parsers for the /proc files kbound reads about sandbox processes. Pure: text in,
 * structured facts out; the text comes from processes a kernel controls (its name, its mounts),
 * so every parser bounds what it keeps and refuses what it cannot read. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

/* Ceilings on what is read from one /proc file. */
#define KB_PROCFS_STATUS_MAX (16 * 1024)
#define KB_PROCFS_STAT_MAX 4096
#define KB_PROCFS_MOUNTINFO_MAX (4 * 1024 * 1024)
#define KB_PROCFS_MOUNTS_MAX 20000
#define KB_PROCFS_IDS_MAX 64 /* NSpid levels, supplementary groups kept */

/* /proc/<pid>/status as a PROCESS object holding its status facts (facts.def: name, state, ppid,
 * uid and gid (the four ids: real, effective, saved, filesystem), groups (at most KB_PROCFS_IDS_MAX),
 * nspid and nssid (outermost first), the capability and signal sets (hex strings as the kernel
 * prints them; signal n is bit n-1), no_new_privs, seccomp, seccomp_filters, threads, vm_rss_kb,
 * vm_hwm_kb; each absent when the kernel does not print its line).
 * Returns 0 and a new object, -EPROTO when PPid, Uid, Gid or NSpid is missing or malformed,
 * -ENOMEM. */
int kb_procfs_status_parse(const char *text, json_object **ret);

/* The fields of /proc/<pid>/stat kbound uses. */
/* The fields of a process's memory layout /proc/<pid>/stat gives, in kb_procfs_stat.layout, in
 * stat's order: start_code, end_code, start_stack, start_data, end_data, start_brk, arg_start,
 * arg_end, env_start, env_end (facts.def's IMAGE names them). */
#define KB_PROCFS_LAYOUT_FIELDS 10

typedef struct kb_procfs_stat {
        pid_t pid;
        char comm[17]; /* up to 16 bytes of the process name */
        char state;
        pid_t ppid, pgrp, session;
        int tty_nr;   /* 0: no controlling terminal */
        long threads; /* num_threads; 0 when the line stops before it */
        /* Where the process image lies (stat fields 22 and 26-28, 45-51): when it started, and the
         * bounds of its code, data, heap start, stack start, arguments and environment. An execve
         * keeps the pid and the start time but lays the new image out afresh (at other addresses,
         * with address randomization). All 0 when the line stops before them, or when the reader may
         * not see another process's memory layout (the kernel then shows 0). */
        unsigned long long starttime;
        unsigned long long layout[KB_PROCFS_LAYOUT_FIELDS];
} kb_procfs_stat;

/* Parses /proc/<pid>/stat (the name in parentheses may itself hold spaces and parentheses: the
 * fields after it start at the last ')'). Returns 0, -EPROTO. */
int kb_procfs_stat_parse(const char *text, kb_procfs_stat *ret);

/* /proc/<pid>/mountinfo as a JSON array of MOUNT objects (facts.def), one per line in order (later
 * lines are mounted on top of earlier ones): id, parent, dev ("major:minor"), root, mountpoint (with
 * the kernel's \ooo escapes decoded), options (per-mount), fstype, source, super (superblock
 * options), writable (per-mount and superblock both rw), nodev (its per-mount options have nodev),
 * and shared, master, propagate_from where the line has those propagation ties.
 * Returns 0 and a new array, -EPROTO for a malformed line, -E2BIG past KB_PROCFS_MOUNTS_MAX lines,
 * -ENOMEM. */
int kb_procfs_mountinfo_parse(const char *text, json_object **ret);

/* A tmpfs's size from its superblock options (a kb_procfs_mountinfo_parse mount's "super", strings
 * such as "size=524288k"), in bytes; -1 if it has none (bwrap's default: half the host's RAM). */
int64_t kb_procfs_tmpfs_size(json_object *super);

/* True if path equals prefix or lies below it, component-wise ("/a" holds "/a/b", not "/ab"). */
bool kb_procfs_path_under(const char *path, const char *prefix);

/* The mount of mounts (a kb_procfs_mountinfo_parse array) that a lookup of path ends on, walking
 * the mount tree by parent ids from the namespace's root: at each level a child stacked at the
 * same mount point (it covers the whole of its parent), else the child whose mount point is the
 * longest prefix of path. A mount hidden under a later one is never reached.
 * Borrowed, or NULL when the table has no root. */
json_object *kb_procfs_mount_of(json_object *mounts, const char *path);

/* Parses /proc/<pid>/net/tcp into an array of TCP_ENTRY (facts.def): each socket's local and remote
 * address ("127.0.0.1:9001"), state and inode. Returns 0 and a new array, -EPROTO, -ENOMEM. */
int kb_procfs_tcp_parse(const char *text, json_object **ret);

/* Ceilings on the network tables read from /proc/<pid>/net (a shared host namespace can be big). */
#define KB_PROCFS_NET_MAX (16 * 1024 * 1024)
#define KB_PROCFS_NET_LINES_MAX 200000

/* /proc/<pid>/net/unix as a JSON array of UNIX_ENTRY objects (facts.def: inode, listening
 * (SO_ACCEPTCON), path (a pathname socket's path, or "@name" for an abstract one; absent when
 * unbound)). The path is the
 * rest of the line: a namespace's own sockets are named by whoever bound them, so a line that does
 * not have the table's shape (or an empty one: a name ending in a newline) is refused, never
 * guessed at. A name holding a newline followed by a whole forged line cannot be told from two
 * sockets: kbound reads its own namespace and those it can enter with sock_diag (sockdiag.h)
 * instead. Returns 0, -EPROTO, -E2BIG, -ENOMEM. */
int kb_procfs_unix_parse(const char *text, json_object **ret);

/* The lines of a /proc/<pid>/net/unix that have the table's shape, as kb_procfs_unix_parse gives
 * them; *ret_skipped counts the others (the header among them, when it is not one). For a table
 * kb_procfs_unix_parse refused: its paths can still be looked for, but a path from it may be cut
 * short or forged by whoever named a socket. Returns 0, -E2BIG, -ENOMEM. */
int kb_procfs_unix_parse_lenient(const char *text, json_object **ret, size_t *ret_skipped);

/* From /proc/<pid>/net/sockstat or sockstat6, the "inuse" count of the line of proto ("TCP",
 * "TCP6"): the sockets of that protocol hashed in the reader's network namespace (listening or
 * connected: every one its net table lists with an inode). Returns 0 and *ret, -ENOENT (no such
 * line), -EPROTO. */
int kb_procfs_sockstat_inuse(const char *text, const char *proto, long *ret);

/* The socket inodes of one /proc/<pid>/net table with an "inode" column in its header (tcp, tcp6,
 * udp, udp6, udplite, udplite6, raw, raw6, icmp, icmp6, netlink, packet), appended to inodes (a
 * JSON array). Returns the number appended, -EPROTO (no inode column, or a malformed line), -E2BIG,
 * -ENOMEM. */
int kb_procfs_net_inodes(const char *text, json_object *inodes);

/* The interface names of /proc/<pid>/net/dev, as a JSON array. Returns 0, -EPROTO, -ENOMEM. */
int kb_procfs_net_dev_parse(const char *text, json_object **ret);

/* The device of every route: /proc/<pid>/net/route (device first, after a header line; v6 false)
 * or /proc/<pid>/net/ipv6_route (device last, no header; v6 true), as a JSON array of names.
 * Returns 0, -EPROTO, -ENOMEM. */
int kb_procfs_routes_parse(const char *text, bool v6, json_object **ret);

/* /proc/<pid>/fdinfo/<fd>: the open flags (octal), the mount id and, for a pidfd, the pid it
 * refers to (in the reader's namespace; 0 or -1 when outside it or gone). */
typedef struct kb_procfs_fdinfo {
        unsigned long flags;
        long long mnt_id; /* -1 when absent */
        long long pid;    /* "Pid:" of a pidfd; LLONG_MIN when absent */
} kb_procfs_fdinfo;
int kb_procfs_fdinfo_parse(const char *text, kb_procfs_fdinfo *ret);

/* What else /proc/<pid>/fdinfo/<fd> says of what the descriptor reaches, into fd (an FD of
 * facts.def): a pidfd's NSpid; every file an epoll instance watches ("tfd:" lines: the watched
 * file's device and inode, the descriptor it was added by), every inode an inotify instance
 * watches, and every inode, mount or filesystem a fanotify instance marks (WATCHES); and how many
 * files an io_uring instance has registered (REGISTERED_FILES). Devices come in the kernel's own
 * encoding (hex) and are written as "major:minor". A line of another shape is left alone (the
 * kernel says more than this reads). Returns 0, -ENOMEM. */
int kb_procfs_fdinfo_reach(const char *text, json_object *fd);

/* Paths between a mount's view and its filesystem's (m: one mount of a kb_procfs_mountinfo_parse
 * array). kb_procfs_path_in_mount: where fs_path (a path inside the filesystem, from its root)
 * appears under m, false if it is not below m's root. kb_procfs_fs_path: the path inside the
 * filesystem of path (a path under m's mount point), false if path is not under it. */
bool kb_procfs_path_in_mount(json_object *m, const char *fs_path, char *out, size_t size);
bool kb_procfs_fs_path(json_object *m, const char *path, char *out, size_t size);

/* A device as /proc's tables and every fact of kbound's name it: "major:minor", in decimal. buf
 * holds at least KB_PROCFS_DEV_MAX bytes; returns buf. */
#define KB_PROCFS_DEV_MAX 24
const char *kb_procfs_dev(unsigned major, unsigned minor, char *buf);

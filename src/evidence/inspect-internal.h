/* inspect-internal.h: what inspect.c and the inspect_*.c files (one concern each) share; not exported. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include "kbound/error.h"
#include "kbound/inspect.h"
#include "base/facts.h"
#include "base/procfs.h"
#include "base/sockdiag.h"

#define ENVIRON_MAX (1024 * 1024)
#define CMDLINE_MAX (256 * 1024)
#define NS_HOLDERS_MAX 64 /* processes outside the sandbox in its namespaces, kept (all counted) */
/* How long a look reads again what is unreadable or there only for a moment because a process of
 * kbound's own is in the middle of something (a bwrap setting up another sandbox is not dumpable
 * until its program runs; a fork of kbound's lives a few milliseconds), before it counts. */
#define KB_INSPECT_REREAD_MS 1000

/* The indices of kb_inspect_namespaces()'s names. */
enum { NS_USER, NS_MNT, NS_PID, NS_NET, NS_IPC, NS_UTS, NS_CGROUP, NS_TYPES };

/* One host process of a look's walk (kb_inspect_look_at_processes), classified. */
typedef struct proc_entry {
        pid_t pid, ppid;
        bool member;                  /* of the sandbox */
        bool launch;                  /* kbound or one of its descendants outside the sandbox */
        bool run_sandbox;             /* of the launch side, in a pid namespace not kbound's: a process
                                       * of another sandbox of this run, whose holds of this one's
                                       * objects are judged as any host process's */
        char state;                   /* /proc/<pid>/stat's: 'Z' for a zombie (main thread) */
        unsigned long long starttime; /* when it started (stat's field 22): a pid reused is another */
        long threads;
        int ns_read; /* outside the sandbox: 1 ns[] read, 0 gone meanwhile, -1 not readable (another
                      * user's process) */
        uint64_t ns[NS_TYPES];
        char comm[17];
} proc_entry;

/* A few namespace inodes (the sandbox's, kbound's), looked up linearly: there are tens. */
#define NS_SET_MAX 1024
typedef struct ns_set {
        uint64_t ino[NS_SET_MAX];
        size_t n;
} ns_set;

/* One mount table of the sandbox: the kernel's, or that of another mount namespace among its
 * processes, with the root of a process of that namespace that its paths are looked up from. */
typedef struct sandbox_table {
        pid_t pid;
        json_object *mounts; /* borrowed from the snapshot */
        int root_fd;         /* -1 when it could not be opened */
} sandbox_table;

/* What the tracing of the sandbox's sockets to their other ends gathers (inspect_peers.c). */
typedef struct peer_trace peer_trace;

/* A look's unix sockets: kbound's network namespace as sock_diag lists it, and who holds what. */
typedef struct sockets {
        const kb_inspect_target *t;
        const proc_entry *procs;
        size_t n_procs;
        json_object *processes; /* the look's sandbox processes (borrowed) */
        kb_sockdiag_unix *list; /* kbound's network namespace; NULL when it could not be listed */
        size_t n;
        json_object *members; /* "socket:[N]" → [pid]: held by sandbox processes */
        json_object *own;     /* "socket:[N]" → [pid]: held by kbound itself */
        json_object *launch;  /* the same for kbound's other descendants, read when first needed */
        json_object *others;  /* the same for every other process, read when first needed */
        peer_trace *peers;    /* the sockets the sandbox holds, traced (inspect_peers.c) */
} sockets;

/* ---- JSON and /proc helpers (inspect_common.c) ---- */

/* Adds v under key to map, an object whose keys are data (facts.def's MAP kind: a namespace's
 * name, a device, a cgroup), or to a set of kbound's own; never a fact, which goes through
 * kb_fact_set_*. v may be NULL (out of memory); on failure v is put. Returns 0, -ENOMEM. */
int kb_inspect_map_add(json_object *map, const char *key, json_object *v);

/* Appends v to the array a; v may be NULL (out of memory); on failure v is put. Returns 0,
 * -ENOMEM. */
int kb_inspect_push(json_object *a, json_object *v);

/* Appends an ERROR {what: what's words ("/suffix" when suffix is not NULL), error: strerror} to
 * errors. Returns 0, -ENOMEM. */
int kb_inspect_note(json_object *errors, kb_fact_what what, const char *suffix, int err);

/* A STAT object (type, dev, ino, rdev) of a stat; NULL if out of memory. */
json_object *kb_inspect_stat_facts(const struct stat *st);

/* "reg", "dir", "chr", "blk", "fifo", "sock", "lnk" or "unknown": a STAT's or an FD's type. */
const char *kb_inspect_file_type(mode_t mode);

/* Reads <proc_root>/<pid>/<name> (max bytes). -ESRCH when the process is gone. */
int kb_inspect_read_proc(const char *proc_root, pid_t pid, const char *name, size_t max, char **ret, size_t *ret_len);

/* Whether <proc_root>/<pid> is there. */
bool kb_inspect_process_exists(const char *proc_root, pid_t pid);

/* Whether <proc_root>/<pid>/root can still be opened, or fails for another cause than its being
 * gone (EACCES: another user's): a process that has ended, or is ending, has given up its root. */
bool kb_inspect_process_has_root(const char *proc_root, pid_t pid);

/* ---- namespaces (inspect_namespace.c) ---- */

/* Inode of <proc_root>/<pid>/ns/<name>; -ESRCH when the process is gone, -ENOENT when this kernel
 * has no such namespace type. */
int kb_inspect_ns_inode(const char *proc_root, pid_t pid, const char *name, uint64_t *ret);

/* A process's ns map {name: inode} of pid; a type this kernel lacks is left out, one that cannot
 * be read is noted in errors as "ns/<name>". */
int kb_inspect_ns_object(const char *proc_root, pid_t pid, json_object *errors, json_object **ret);

/* Every namespace inode of pid (kb_inspect_namespaces() order; 0 for a type this kernel lacks)
 * through one open of its ns folder. The links are read, not followed: "net:[4026531840]" names the
 * inode, and a readlink costs a third of a stat through the link (this runs for every host process
 * in every look). Returns 0, -ESRCH (gone), -EACCES or -EPERM (another user's process: reading a
 * namespace link needs ptrace rights over it), -EPROTO, -errno. */
int kb_inspect_ns_inodes_all(const char *proc_root, pid_t pid, uint64_t ret[NS_TYPES]);

/* Appends to chain the user namespaces above the namespace open at fd, nearest first: its owner
 * (for a user namespace, its parent), that one's parent, and so on as far as kbound's own user
 * namespace lets it see (the kernel answers EPERM above it, and for the first user namespace).
 * Returns 0, -ELOOP, -ENOMEM, -errno. */
int kb_inspect_owner_chain(int fd, bool is_user, json_object *chain);

/* "ns_owners": {name: [owner, owner's parent, ...]} of pid: who owns each of its namespaces, as
 * user namespace inodes (kb_inspect_owner_chain); for "user", the chain starts at its parent. A
 * namespace that cannot be opened or asked is noted in errors as "ns_owners/<name>". -ESRCH when
 * pid is gone. */
int kb_inspect_ns_owners_object(const char *proc_root, pid_t pid, json_object *errors, json_object **ret);

/* Whether the pid namespace of pid is a descendant of the pid namespace whose inode is ancestor
 * (NS_GET_PARENT, walked up as far as kbound sees). False when it cannot be read. */
bool kb_inspect_pidns_below(const char *proc_root, pid_t pid, uint64_t ancestor);

/* The inode of proc's (a PROCESS's) namespace of type (NS_USER...), -1 when its ns does not have it. */
int64_t kb_inspect_process_ns(json_object *proc, size_t type);

/* Whether ino is in set. */
bool kb_inspect_ns_set_has(const ns_set *set, uint64_t ino);

/* Adds ino unless it is 0, already there, or in except. -E2BIG when full. */
int kb_inspect_ns_set_add(ns_set *set, uint64_t ino, const ns_set *except);

/* The namespace type of an nsfs link target ("net:[4026532008]": a descriptor opened from
 * /proc/<pid>/ns/ or from a bind mount of one; a bind mount's root in mountinfo reads the same)
 * and its inode into *ret_ino; NULL for any other target ("pipe:[N]", "socket:[N]", a path). */
const char *kb_inspect_nsfs_target(const char *target, uint64_t *ret_ino);

/* Calls visit(link, ino, userdata) for every namespace link of thread tid of pid
 * (<proc_root>/<pid>/task/<tid>/ns/: "net", ..., "pid_for_children", "time_for_children"; link is a
 * static name, "ns" for one this kbound does not know) until visit returns < 0; children_only: the
 * *_for_children links alone (a process's own namespaces read already). Returns 0 (also for a
 * thread gone meanwhile), -errno when the folder cannot be read, or visit's error. */
int kb_inspect_ns_links(const char *proc_root, pid_t pid, pid_t tid, bool children_only,
                        int (*visit)(const char *link, uint64_t ino, void *userdata), void *userdata);

/* ---- what a process holds (inspect_fd.c) ---- */

/* Every open descriptor of the table <proc_root>/<pid>/fd (a process's, or with proc_root
 * "<root>/<pid>/task" a thread's): what it refers to, without opening it (stat follows the magic
 * link to the object; opening a terminal or a FIFO could have side effects), and its fdinfo.
 * Returns 0, -ESRCH (gone), -ENOMEM; a table that cannot be read is noted in errors (fd) and
 * *ret is then empty. */
int kb_inspect_fd_facts(const char *proc_root, pid_t pid, json_object *errors, json_object **ret);

/* A process's refs (REFS): what it holds but its descriptors (inspect_refs.c), read at <root>/<pid>
 * (the process's own folder, or the folder of the live thread it is read through): its cwd, root
 * and exe (REF_LINKs, or why not) and its file mappings (MAPPINGs, each mapped file once per kind
 * of mapping, placed in the view of t's kernel: reach "same" with mnt_id, "other", "none", or
 * reach_error); its threads' own are kb_inspect_thread_facts's. Unreadable maps go to errors.
 * Returns 0 or -ENOMEM. */
int kb_inspect_ref_facts(const kb_inspect_target *t, const char *root, pid_t pid, json_object *errors,
                         json_object *proc);
/* A REF_LINK (target, type, dev, ino, mnt_id) of what the magic link at link (a process's or a
 * thread's cwd, root, exe) refers to: statx follows it to the very dentry and mount the process
 * holds, whatever its path text says. NULL with *ret_err when it cannot be read. */
json_object *kb_inspect_link_facts(const char *link, int *ret_err);
/* The files pid maps, each once, as "maj:min:ino" (the launcher's: what bwrap's init was started
 * with). Returns 0 and a new array, -ESRCH, -ENOMEM, -errno. */
int kb_inspect_map_files(const char *proc_root, pid_t pid, json_object **ret);
/* The pre-exec look's "mounts": init's mount table, each mount point proven through init's root
 * (already the sandbox's) to be its mount's root, as a later look's (target, target_error), so a
 * kernel that dies at start-up still has its mounts judged. An unreadable table goes to errors.
 * -ENOMEM only. */
int kb_inspect_pre_exec_mounts(const kb_inspect_target *t, json_object *snap, json_object *errors);
/* ---- every thread of a sandbox process (inspect_threads.c) ---- */

/* The thread a process's own files (links, maps, descriptors, namespaces, texts) are read through:
 * pid, unless its main thread has exited (state, its status's: "Z") while another thread lives on,
 * whose tid it is then (its folder is <proc_root>/<pid>/task/<tid>). */
pid_t kb_inspect_read_through(const char *proc_root, pid_t pid, const char *state);

/* True when every thread of pid has exited (its stat: a zombie or dead main thread, and a count of
 * threads of 1, that one): its descriptors, maps and folders were let go before it became one
 * (exit_files, exit_mm), so it holds nothing, whatever its unreadable files say. False when any
 * other thread lives or is still counted, or the stat cannot be read. */
bool kb_inspect_all_exited(const char *proc_root, pid_t pid);
/* The thread a PROCESS of the look was read through: its READ_THROUGH, or its pid (absent, that
 * fact reads as 0: the main thread). */
pid_t kb_inspect_process_via(json_object *proc);

/* Every thread of pid but its main one, for what the kernel keeps per thread, into proc (a PROCESS
 * whose ns, refs and fds were read through thread via): "tasks" (a TASK each: its status's
 * credentials, tracer and seccomp state, the namespaces it is in apart from the process), REFS's
 * "threads" (those whose working directory or root differ), and the descriptors of each thread's
 * table that is not one read already (kcmp KCMP_FILES against via's and each table read; one kcmp
 * cannot compare is read), appended to the process's fds with the thread's tid. A thread that
 * ends meanwhile is left out; what cannot be read goes to errors (the process's) or the TASK's.
 * Returns 0, -ESRCH (the process is gone), -ENOMEM. */
int kb_inspect_thread_facts(const kb_inspect_target *t, pid_t pid, pid_t via, json_object *errors, json_object *proc);

/* ---- the seccomp filters in force (inspect_filter.c) ---- */

/* The FILTER (facts.def) of process pid into proc: the seccomp filters in force in its main thread
 * (a live one of a zombie leader's), read with PTRACE_SECCOMP_GET_FILTER while the thread is
 * stopped for a moment (seized, interrupted, read, detached, a signal that arrived meanwhile handed
 * back), compared with t->seccomp_program instruction for instruction and, when none is it, call by
 * call on every ABI (kbound/seccomp_compare.h). Nothing is read without that program or when the
 * host cannot read filters (HOST's filter_read, in t->host); a read that fails is the FILTER's
 * error. Returns 0, -ESRCH (gone), -ENOMEM. */
int kb_inspect_filter_facts(const kb_inspect_target *t, pid_t pid, json_object *proc);

/* HOST's filter_read and filter_read_why: the same read, of a child of kbound's own that loaded a
 * one-instruction filter. -ENOMEM only. */
int kb_inspect_filter_access(json_object *host);

/* The IMAGE (facts.def) of process pid from its parsed stat st, with its personality when the host
 * may read it (inspect_image.c). NULL if out of memory. */
json_object *kb_inspect_image_of(const char *proc_root, pid_t pid, const kb_procfs_stat *st);

/* The program pid runs, a FILE_ID (stat through /proc/<pid>/exe: the file the kernel holds, whatever
 * its path now names), into o as exe_fact, or why not as error_fact (a process's or the launcher's
 * exe and exe_error). -ENOMEM only. */
int kb_inspect_exe_facts(const char *proc_root, pid_t pid, json_object *o, kb_fact_obj exe_fact,
                         kb_fact_str error_fact);

/* What the sandbox shares through memory or its own filesystems, gathered from a look's processes,
 * to be found again outside it by the object (inspect_shared.c): its anonymous objects (their
 * descriptors, for kcmp), its memory objects (memory files, shared anonymous memory, deleted files:
 * by device and inode, held by a descriptor, a mapping shared or private, or as a program), and,
 * with kb_inspect_shared_own, the filesystems of its own and its IPC namespace's SysV segments. */
typedef struct shared_set shared_set;
int kb_inspect_shared_new(json_object *processes, const char *memfd_dev, shared_set **ret);
/* Adds to s what the look snap says is the sandbox's own: every device of its mount tables that no
 * mount namespace outside holds (snap's outside_mounts; none before that is read), its IPC
 * namespace's message-queue filesystem, and its SysV segments (snap's ipc). -ENOMEM only. */
int kb_inspect_shared_own(shared_set *s, json_object *snap);
void kb_inspect_shared_free(shared_set **s);
/* Whether more were held than kbound traces (an error of the look). */
bool kb_inspect_shared_truncated(const shared_set *s);
/* Whether a descriptor with this target may be one of s's (an anonymous target the sandbox holds). */
bool kb_inspect_shared_wants(const shared_set *s, const char *target);
/* Appends an OUTSIDE_CHANNEL to channels for every sandbox descriptor that descriptor fd of thread
 * tid of e (outside the sandbox) is the same open file as (kcmp). -ENOMEM only. */
int kb_inspect_shared_match(const shared_set *s, const proc_entry *e, pid_t tid, int fd, const char *target,
                            json_object *channels);
/* Descriptor fd (its link's target) of thread tid of e, outside the sandbox: an anonymous object the
 * same open file as a sandbox descriptor (kb_inspect_shared_match, appended at once), or a file
 * (stat through the link: its device and inode) that is one of s's memory objects, on a filesystem
 * of the sandbox's own, or a SysV segment of its namespace, kept to be confirmed as an
 * OUTSIDE_CHANNEL (kb_inspect_shared_confirm). -ENOMEM only. */
int kb_inspect_shared_fd(shared_set *s, const char *proc_root, const proc_entry *e, pid_t tid, int fd,
                         const char *target, json_object *channels);
/* The same for every file e maps (its /proc/<pid>/maps, by device and inode, shared or private).
 * -ENOMEM only. */
int kb_inspect_shared_maps(shared_set *s, const char *proc_root, const proc_entry *e, json_object *channels);
/* The same for the working directory and root of thread tid of e (on a filesystem of the sandbox's
 * own). -ENOMEM only. */
int kb_inspect_shared_links(shared_set *s, const char *proc_root, const proc_entry *e, pid_t tid,
                            json_object *channels);
/* The holds found outside, read again (at least 20 ms after each was seen, then for 100 ms), of
 * whatever process, as a name is no proof (another kbound's look holds this sandbox's root for a
 * moment, and any process can take kbound's name): one still held by any descriptor of any
 * thread, any thread's working directory or root, or a mapping, or whose process cannot be read
 * again, is appended to channels; one let go (or gone) is counted in *ret_transient. -ENOMEM only. */
int kb_inspect_shared_confirm(shared_set *s, const char *proc_root, json_object *channels, int64_t *ret_transient);

/* ---- the kernel's IPC namespace (inspect_ipc.c) ---- */

/* snap's "ipc": the kernel's IPC namespace, read from inside it (a short-lived thread joins it as
 * root; a helper joins its user namespace first otherwise): its SysV segments with how many of each
 * one's attachments are the mappings of the sandbox's pid namespace's processes (counted between two
 * readings that agree), and the device of its message-queue filesystem. Entered only when one of
 * the sandbox's user namespaces owns it, read while the kernel is still the sandbox's. What cannot
 * be read is said in it. Nothing when the kernel or its namespace was not read. -ENOMEM only. */
int kb_inspect_ipc_facts(const kb_inspect_target *t, json_object *processes, json_object *snap);

/* Calls visit(fd, target, userdata) with the number and link target of each descriptor in the
 * table dir (/proc/<pid>/fd or a thread's; one that cannot be read is passed over), until visit
 * returns < 0. Returns 0 (also when the process is gone), -errno when the table cannot be read, or
 * visit's error. */
int kb_inspect_fd_targets_at(const char *dir, int (*visit)(int fd, const char *target, void *userdata), void *userdata);

/* kb_inspect_fd_targets_at for the table /proc/<pid>/fd (the main thread's). */
int kb_inspect_fd_targets(const char *proc_root, pid_t pid, int (*visit)(int fd, const char *target, void *userdata),
                          void *userdata);

/* The file each inotify or fanotify inode mark of fd (an FD of pid, its watches read) watches,
 * found in pid's view: opened by the handle its fdinfo shows (open_by_handle_at, root only) on a
 * mount of its filesystem in pid's table, the path the kernel names for it looked up again from
 * pid's root and proven that very file; into the watch's "at", or why not into "place_error".
 * Returns 0 or -ENOMEM (inspect_watch.c). */
int kb_inspect_place_watches(const char *proc_root, pid_t pid, json_object *fd);

/* Whether the other end of pipe descriptor fd of pid (o, an FD with its flags read) still exists
 * anywhere: a copy of it (pidfd_getfd) polled at once shows POLLHUP on a read end with no writer
 * left and POLLERR on a write end with no reader; into o's pipe_other_end ("none" or "open"), or
 * why not into pipe_error (pid may be a thread of proc_root "/proc/<pid>/task", whose own table fd is in; any other
 * proc_root, a test's, is never polled). Returns 0 or -ENOMEM
 * (inspect_pipe.c). */
int kb_inspect_pipe_other_end(const char *proc_root, pid_t pid, long fd, json_object *o);

/* Pipe and socket inodes in pid's descriptor table, appended to inodes as "pipe:[N]"/"socket:[N]". */
int kb_inspect_channel_inodes(const char *proc_root, pid_t pid, json_object *inodes);

/* ---- an object held outside, read again (inspect_still.c) ---- */

/* An object of the sandbox a process outside was seen holding: a namespace (by its nsfs inode,
 * unique among every namespace of every type), a socket (socket:[ino]) or a file (by device and
 * inode: a memory object, a file of the sandbox's own filesystems); where it holds it now. */
typedef struct kb_held {
        bool socket;
        bool file;
        char dev[KB_PROCFS_DEV_MAX]; /* a file's, "maj:min" */
        uint64_t ino;
        /* out, kb_inspect_still_holds: */
        bool found;
        pid_t tid;        /* the thread whose link or descriptor table shows it */
        int fd;           /* the descriptor; -1: the thread is in the namespace (a link) */
        const char *type; /* the link's name ("net", "pid_for_children") or the nsfs type, or "socket" */
} kb_held;

/* Reads pid again, all of it: every thread's namespace links (kb_inspect_ns_links), working
 * directory and root, and every descriptor table it has (each thread's own, told apart by kcmp),
 * and marks each of objects it holds now, at whatever number, through whichever thread (a file's
 * mappings are not read here). A table that changes while read (a
 * descriptor listed, gone before its link was read) is read again, and an object not found is
 * looked for through the whole process again, each a bounded number of times: a holder that
 * renumbers its descriptor every millisecond is found at its new number. Returns 0, -ESRCH (the
 * process is gone and was seen holding none: it holds nothing), -E2BIG (more threads than one read
 * takes), -errno (its links or a table could not be read: nothing is proven let go). */
int kb_inspect_still_holds(const char *proc_root, pid_t pid, kb_held *objects, size_t n);

/* ---- the process walk (inspect_process.c) ---- */

/* What every look starts with: snap gets "label", "taken_ms", "processes" (each sandbox process
 * inspected), "errors", "vanished", "ns_holders" and "ns_outside"; the host's processes, listed
 * and classified, are returned for the rest of the look (*ret_procs, malloc'd). *ret_kernel_seen:
 * t->kernel_pid was among the sandbox's processes. -ENOMEM only. */
int kb_inspect_look_at_processes(const kb_inspect_target *t, const char *label, json_object *snap,
                                 proc_entry **ret_procs, size_t *ret_n, bool *ret_kernel_seen);

/* ---- the launcher and bwrap's init (inspect_launcher.c) ---- */

/* The process running bwrap outside the sandbox (init's parent), what it was started with, and the
 * channels the launch side (kbound, the launcher and its helpers) holds. */
int kb_inspect_launcher_facts(const kb_inspect_target *t, const proc_entry *procs, size_t n, json_object *processes,
                              json_object *errors, json_object **ret);

/* "init": {"pid", "syscall" (the start of /proc/<pid>/syscall: the call it is in and its first
 * argument), "reads_fd" (the descriptor it is blocked reading, -1 when it is not in read(2))} of
 * bwrap's init; what cannot be read is noted in errors. -ENOMEM only. */
int kb_inspect_init_facts(const kb_inspect_target *t, json_object *snap, json_object *errors);

/* ---- the sandbox's namespaces held from outside (inspect_holders.c) ---- */

/* snap's "sandbox_namespaces" [inode]: the namespaces of the sandbox's processes and the user
 * namespaces above them, less kbound's own and those above kbound's user namespace, which every
 * host process shares (what the outside's mounts and holders are looked for by). kbound's own
 * unreadable is noted in errors, and nothing listed. -ENOMEM only. */
int kb_inspect_sandbox_ns_facts(const kb_inspect_target *t, json_object *processes, json_object *snap,
                                json_object *errors);

/* "ns_holders" [push_holder's], "outside_channels" [{"target",
 * "pid", "name", "fd", "thread"}] (the sandbox's pipes and sockets that a process outside but the
 * launch side holds too) and "ns_outside" {"read", "unreadable", "holders", "kbound_helpers",
 * "transient", "fd_tables_read", "fd_tables_unreadable"}:
 * the processes outside the sandbox (the launch side too) that are in one of the sandbox's
 * namespaces (any of their threads), or hold one open through a descriptor (any of their tables).
 * The sandbox's namespaces are snap's sandbox_namespaces (kb_inspect_sandbox_ns_facts). A process
 * outside whose namespaces kbound cannot read (another user's, when kbound is not root) is counted
 * as unreadable, not judged; one whose namespaces were read but not its descriptors is counted in
 * fd_tables_unreadable, which the judge fails. kbound's own process is not read (its looks open
 * the sandbox's namespaces themselves). What a look also does for a moment (a thread in one, a
 * descriptor of one, a fork of kbound's program in one) is a holder only if still there at least
 * NS_CONFIRM_MS later ("transient" counts those gone by then). -ENOMEM only. */
int kb_inspect_ns_holder_facts(const kb_inspect_target *t, const proc_entry *procs, size_t n, json_object *processes,
                               json_object *snap, json_object *errors);

/* ---- mount tables (inspect_mount.c) ---- */

/* A sandbox's processes can rename and swap what lies on a path between the host's read of a
 * mount table and its look at a mount point, so every lookup refuses symbolic links anywhere on
 * the path and proves, with statx, which mount it ended on. */

/* Opens the root of the mount whose id (mountinfo's first field) is mnt_id at its mount point path,
 * resolved from root_fd as the sandbox would (RESOLVE_IN_ROOT) with no symbolic link followed on
 * the way (a link swapped in is refused, never followed), and proves with statx that what it found
 * is that mount's root (STATX_MNT_ID, STATX_ATTR_MOUNT_ROOT). Returns 0 with *ret_fd (an O_PATH
 * descriptor, the caller closes it) and *ret_st; else -errno with an error saying what is there:
 * -ELOOP (a symbolic link on the path), -EXDEV (another mount is there), -ENOTDIR... from the
 * lookup, -ENOSYS (this Linux does not tell a file's mount). */
int kb_inspect_open_mount_root(int root_fd, const char *path, int64_t mnt_id, int *ret_fd, struct stat *ret_st,
                               kb_error **ret_error);

/* Looks up inner (a path inside the mount, from its root; "" is the root) beneath mount_fd (from
 * kb_inspect_open_mount_root) without following a symbolic link or crossing into another mount,
 * and stats what it names. writable says whether the sandbox can write to that filesystem (through
 * this mount or any other: a rename moves what every mount of it shows): a file missing then may
 * have been moved away for the moment of the look, so only where it cannot is -ENOENT returned as
 * such (a proof of absence); otherwise it is -EAGAIN. Returns 0 with *ret_st, or -errno with an
 * error. */
int kb_inspect_stat_in_mount(int mount_fd, const char *inner, bool writable, struct stat *ret_st, kb_error **ret_error);

/* What path is inside the namespace whose root is root_fd (links followed as there, never out of
 * it): for placing a host socket's file through a holder's root, confirmed by device and inode. */
int kb_inspect_stat_in_root(int root_fd, const char *path, struct stat *st);
/* The name path has in the view whose root is root_fd, for matching it against that view's mount
 * table: its folder with every link on the way followed as there (never out of it), and "." "..",
 * "//" folded, its last name kept as it is (lstat's object: a socket, a link itself). A link on the
 * way otherwise sends the match to the filesystem that holds the link, not the file's (/var/run
 * is a link to /run). A folded name is the kernel's for that folder, confirmed by looking it up
 * again there without links (device and inode). Returns 0 and the name in out, or -errno. */
int kb_inspect_name_in_root(int root_fd, const char *path, char *out, size_t size);
/* The path the kernel names descriptor fd by (readlink of /proc/self/fd/<fd>), which must be
 * absolute. Returns its length, or -errno (-ENOENT: not a path). */
ssize_t kb_inspect_fd_name(int fd, char *buf, size_t size);
/* The folder path inside the namespace whose root is root_fd, opened to be listed (links followed
 * as there, never out of it). Returns the descriptor or -errno. */
int kb_inspect_open_dir_in_root(int root_fd, const char *path);

/* Every mount table among processes into snap ("mounts": the kernel's, "mount_tables": any other
 * namespace's by inode), each with its targets looked up through the root of a process of that
 * namespace, into tables (the kernel's first; roots left open for the caller, who closes them with
 * kb_inspect_tables_close); and the network tables of every network namespace ("net",
 * "kernel_net": kb_inspect_net_namespace). What cannot be read is noted in the snapshot's errors.
 * Returns 0 or -ENOMEM. */
int kb_inspect_snapshot_tables(const kb_inspect_target *t, json_object *processes, json_object *snap,
                               sandbox_table *tables, size_t *ret_n, json_object **ret_kernel_net, sockets *socks,
                               uint64_t own_netns);

/* The devices ("maj:min") the mounts of tables are on, as keys of devs. */
void kb_inspect_table_devices(const sandbox_table *tables, size_t n_tables, json_object *devs);

/* Closes the roots of tables (kb_inspect_snapshot_tables) and frees the array. */
void kb_inspect_tables_close(sandbox_table *tables, size_t n_tables);

/* "outside_mounts": which devices of the sandbox's mount tables (those of tables) a mount
 * namespace outside the sandbox also holds: {"devices": {dev: a pid whose namespace holds it},
 * "namespaces": outside namespaces read, "unreadable": outside processes whose table could not be
 * read}. A filesystem an outside namespace holds is not the sandbox's own, whatever its type.
 * Every process of the walk that is not the sandbox's counts (kbound and the launcher too); each
 * namespace is read once, known by its ns inode or, where kbound may not read that, by its table's
 * first mount. A process that has exited meanwhile (or is a zombie) has no namespace to read.
 * Also "ns_mounts" [{"pid", "ns", "inode", "mountpoint"}]: a bind mount of one of the sandbox's
 * namespaces (snap's "sandbox_namespaces") in a mount namespace outside, which keeps it alive and
 * lets whoever can open it join it, as `ip netns add` does. */
int kb_inspect_outside_mounts(const kb_inspect_target *t, const proc_entry *procs, size_t n,
                              const sandbox_table *tables, size_t n_tables, json_object *snap);

/* ---- network tables (inspect_net.c) ---- */

/* The network tables of netns, the network namespace of pid (a sandbox process), into snap's "net"
 * by its inode unless there already, and snap's "kernel_net" (*ret_kernel_net: those tables)
 * when pid is the kernel; kbound's own namespace (own_netns: the raw-network override) has its
 * unix table from socks's sock_diag list, the sandbox's own from a sock_diag list made there
 * (kb_inspect_peers_namespace). What cannot be read is noted in snap's errors.
 * Returns 0 (also when pid has gone), -ENOMEM. */
int kb_inspect_net_namespace(const kb_inspect_target *t, json_object *snap, pid_t pid, int64_t netns, sockets *socks,
                             uint64_t own_netns, json_object **ret_kernel_net);

/* ---- what of the host the mounts expose (inspect_reach.c) ---- */

/* A new entry of the look's "reach" {name, path, kind, claim, exposed: []}, appended to out.
 * Returns it (borrowed; *ret_exposed: its "exposed" array), NULL if out of memory. */
json_object *kb_inspect_reach_entry(const char *name, const char *path, const char *kind, const char *claim,
                                    json_object *out, json_object **ret_exposed);

/* Where the sandbox's mounts expose the host object at path (its name in the mount namespace whose
 * table is table, as kb_inspect_name_in_root gives it; host_st: what is there), into e's "exposed": in every mount
 * table of the sandbox, every mount of the same filesystem whose root holds it and that is not covered at that place,
 * confirmed by a look through that table's root (reach_confirm). The entry also carries the host mount's device and,
 * for anything but a directory, its link count: another name of it may lie anywhere on that filesystem. */
int kb_inspect_expose(const kb_inspect_target *t, json_object *table, const char *path, const struct stat *host_st,
                      const sandbox_table *tables, size_t n_tables, json_object *e, json_object *exposed);

/* Where the sandbox's mounts expose the host object at path (kb_inspect_reach_entry,
 * kb_inspect_expose). */
int kb_inspect_reach_one(const kb_inspect_target *t, const sandbox_table *tables, size_t n_tables, const char *name,
                         const char *path, const char *kind, const char *claim, json_object *out);

/* Where the sandbox's mounts expose each of t's canaries (kb_inspect_reach_one), into reach.
 * -ENOMEM only. */
int kb_inspect_canary_reach(const kb_inspect_target *t, const sandbox_table *tables, size_t n_tables,
                            json_object *reach);

/* ---- kbound's unix sockets (inspect_sockets.c) ---- */

/* "socket:[inode]" into buf: how a descriptor's link names the socket. */
void kb_inspect_socket_key(char *buf, size_t size, uint32_t inode);

/* Who holds the socket inode: [{"pid", "name", "side"}], side "kbound", "sandbox", "launch"
 * (kbound's other descendants, bwrap's launcher among them) or "host", the first of these that
 * does; the launch side's descriptors are read only when neither kbound nor the sandbox holds it,
 * the rest of the host's only when the launch side does not either. Returns a new array, NULL if
 * out of memory. */
json_object *kb_inspect_holders_of(sockets *s, uint32_t inode);

/* "stream", "dgram", "seqpacket" or "other". */
const char *kb_inspect_socket_type_name(uint8_t type);

/* "listening", "connected", "unconnected", "connecting" or "other". */
const char *kb_inspect_socket_state_name(uint8_t state);

/* {"inode", "type", "state", "path", "peer"} of u. */
json_object *kb_inspect_socket_facts(const kb_sockdiag_unix *u);

/* A network namespace's unix table (UNIX_ENTRYs: {"inode", "listening", "path"}) from its
 * sock_diag list, which no name can break: kbound's own for a sandbox that shares it (the
 * raw-network override), the sandbox's own. NULL if out of memory. */
json_object *kb_inspect_unix_table(const kb_sockdiag_unix *list, size_t n);

/* Reads the look's sandbox processes' descriptor tables again, every 10 ms for at most 200 ms,
 * until one holds the socket inode (a connection the sandbox accepted after its tables were
 * read); what is found is added to s->members. Returns 1 if held now, 0, -ENOMEM. */
int kb_inspect_resolve_unheld(sockets *s, uint32_t inode);

/* Reads kbound's own descriptors again into s->own: a socket libzmq's I/O thread made since they
 * were read (a channel's connect retried) is kbound's all the same. -ENOMEM only. */
int kb_inspect_own_reread(sockets *s);

/* Whether a sandbox process that held the socket inode when the look read its descriptors (s->members) still
 * does, read once more. Returns 1, 0, -ENOMEM. */
int kb_inspect_still_held(sockets *s, uint32_t inode);

/* Reads kbound's network namespace (sock_diag) and who holds what: the sandbox's processes (from
 * the look's descriptor tables) and kbound itself. A list that cannot be had is recorded in errors
 * ("kbound's unix sockets"): the checks that need it fail. */
int kb_inspect_sockets_init(sockets *s, json_object *errors);

/* Frees what s holds (not s itself), but its peers (kb_inspect_peers_free). */
void kb_inspect_sockets_done(sockets *s);

/* "kbound_sockets": the inodes of kbound's own unix sockets; "kbound_net_sockets": every socket of
 * kbound's network namespace a sandbox process holds (kb_inspect_socket_facts, and who holds its
 * peer: "peer_held_by", kb_inspect_holders_of). A unix socket lives in the network namespace of the
 * side that connected, so the kernel's end of each of kbound's connections is here, and so is any
 * socket of the host's network handed into the sandbox. */
int kb_inspect_kbound_side_sockets(sockets *s, json_object *snap);

/* "endpoints": the kernel's endpoints kbound must be connected to (sandbox paths; "file": the
 * socket file in the team's runtime folder, or "error"); "connections": every connection of
 * kbound's own to a socket file in the team's runtime folder ({"endpoint", "kbound_socket", "peer",
 * "holders": kb_inspect_holders_of the peer}). The peer of each is the kernel's end, found by
 * inode, not by a name: whatever listens at a path, this is the socket kbound talks over. */
int kb_inspect_connection_facts(sockets *s, json_object *snap);

/* ---- a helper process in a sandbox's namespaces (inspect_enter.c) ---- */

#define KB_INSPECT_ENTER_MAX 2 /* descriptors a helper hands back */

/* What a helper does once it has joined the namespaces: opens n descriptors there (n as given to
 * kb_inspect_enter), each fd[i], or the errno that kept it in err[i] (both hold 0 and -1 when
 * called). It runs in a vfork of kbound, sharing its memory: system calls only, and nothing
 * written but err and fd. */
typedef void kb_inspect_enter_fn(const void *arg, int err[], int fd[]);

/* Runs fn(arg) in a short-lived helper of kbound's that joins userns (the user namespace owning ns,
 * which kbound's own user owns: every capability in it is the owner's), then ns (a namespace of
 * nstype, CLONE_NEW*), and hands back what it opened, then exits; reaped before this returns. The
 * caller decides which namespaces kbound may enter. Returns 0 with each of the n (at most
 * KB_INSPECT_ENTER_MAX) results in ret_fd[i] (the caller's) or ret_err[i] (an errno: the step the
 * kernel refused, the helper's own, or EIO when it sent no descriptor), or -errno when no helper
 * could be made (ret_* then -1 and 0); -EINVAL for n out of range. */
int kb_inspect_enter(int userns, int ns, int nstype, kb_inspect_enter_fn *fn, const void *arg, size_t n, int ret_err[],
                     int ret_fd[]);

/* ---- another network namespace's sock_diag socket (inspect_diag.c) ---- */

/* A sock_diag socket (kb_sockdiag_open) that answers for the network namespace open at netns, made
 * without kbound joining it: by a short-lived thread that joins it (root), or, when that is
 * refused and userns is given (>= 0: the user namespace owning netns, which kbound's own user
 * owns), by a short-lived fork of kbound that joins userns and then netns and hands the socket
 * back, reaped before this returns. The caller decides which namespaces kbound may enter.
 * Returns the descriptor, or -errno of the step refused (-EPERM: kbound may not join it). */
int kb_inspect_diag_socket(int netns, int userns);

/* ---- the sandbox's sockets traced to their other ends (inspect_peers.c) ---- */

/* Where sock_diag listed a socket: no namespace the host read, the sandbox's own, kbound's, another
 * of the host's (FOUND in facts.def's SANDBOX_SOCKET and SOCKET_END). */
enum { KB_PEERS_FOUND_NONE, KB_PEERS_FOUND_SANDBOX, KB_PEERS_FOUND_KBOUND, KB_PEERS_FOUND_HOST };

/* The unix sockets of netns, the network namespace of pid (a sandbox process), listed by sock_diag
 * from a socket made there (kb_inspect_diag_socket), when the namespace is the sandbox's own: owned
 * by one of the user namespaces of the sandbox's tree (bwrap's init's and those above it, below
 * kbound's), and opened while pid is still in the sandbox's pid namespace. The list is kept for the
 * tracing and offered to it; *ret_unix is its unix table (kb_inspect_unix_table). When pid is
 * gone, *ret_unix is NULL; when the namespace is not the sandbox's own, or cannot be listed, it is
 * NULL and errors gets "the unix sockets of the sandbox's network namespace/<netns>" (the caller
 * reads the table as text). -ENOMEM only. */
int kb_inspect_peers_namespace(sockets *s, pid_t pid, int64_t netns, json_object *errors, json_object **ret_unix);

/* What one network namespace's sock_diag list (found: KB_PEERS_FOUND_*; rep: a process of it, for
 * another of the host's) shows of the sockets the sandbox holds (s->members): each socket, its
 * peer, the listener its connection waits in, the connections waiting in its queue, and other
 * sockets whose peer it is. -ENOMEM only. */
int kb_inspect_peers_offer(sockets *s, const kb_sockdiag_unix *list, size_t n, int found, pid_t rep);

/* snap's "sandbox_sockets": every socket the sandbox's processes hold (SANDBOX_SOCKET), where the
 * lists offered found it and each of its other ends, and who holds each. -ENOMEM only. */
int kb_inspect_peers_facts(sockets *s, json_object *snap);

/* Frees what the tracing gathered; NULL after. */
void kb_inspect_peers_free(peer_trace **pt);

/* ---- the host's unix sockets (inspect_host_sockets.c) ---- */

/* Every bound pathname unix socket of the host (any type, any state), from kbound's network
 * namespace and every other one the /proc walk finds (one process each; the sandbox's own is
 * skipped): where the sandbox's mounts expose its file (place_socket). Adds "socket_namespaces"
 * (how many were listed), "socket_namespaces_not_entered" ([{pid, error, table_error,
 * placed_by_path, unplaced}]), "socket_namespaces_skipped" (past SOCKET_NAMESPACES_MAX),
 * "host_sockets" {checked, elsewhere, vanished, not_claimed} and "abstract_sockets" (bound to
 * abstract names in kbound's namespace, which a sandbox sharing it reaches). */
int kb_inspect_host_sockets(sockets *s, json_object *snap, const sandbox_table *tables, size_t n_tables,
                            json_object *reach);

/* Into proc: "limits" {"nproc", "as"} (soft values of /proc/<pid>/limits; -1 unlimited, -2
 * unread) and "cgroups" {"memory", "pids", "unified": path as /proc/<pid>/cgroup shows it}.
 * -ESRCH, -ENOMEM; other errors noted. */
int kb_inspect_resource_facts(const char *proc_root, pid_t pid, json_object *errors, json_object *proc);
/* Into snap: "resources" {"cgroups": {"controller:path": {"dir", "memory_max", "memory_peak",
 * "oom_kill", "pids_max", "pids_peak"}}, "rss_bytes", "tasks" (of every sandbox process),
 * "used": {"/tmp", "/dev/shm": bytes, -errno}}. -ENOMEM only. */
int kb_inspect_resource_totals(const kb_inspect_target *t, json_object *processes, json_object *snap);

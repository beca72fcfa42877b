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

/* /proc/<pid>/status as a JSON object: "name" (string), "state" (one letter), "ppid", "uid" and
 * "gid" (arrays of the four ids: real, effective, saved, filesystem), "groups" (array, at most
 * KB_PROCFS_IDS_MAX), "nspid" and "nssid" (arrays, outermost first), "cap_inh", "cap_prm",
 * "cap_eff", "cap_bnd", "cap_amb" (hex strings as the kernel prints them), "no_new_privs",
 * "seccomp", "seccomp_filters" (integers; absent when the kernel does not print them).
 * Returns 0 and a new object, -EPROTO when PPid, Uid, Gid or NSpid is missing or malformed,
 * -ENOMEM. */
int kb_procfs_status_parse(const char *text, json_object **ret);

/* The fields of /proc/<pid>/stat kbound uses. */
typedef struct kb_procfs_stat {
        pid_t pid;
        char comm[17];   /* up to 16 bytes of the process name */
        char state;
        pid_t ppid, pgrp, session;
        int tty_nr;      /* 0: no controlling terminal */
} kb_procfs_stat;

/* Parses /proc/<pid>/stat (the name in parentheses may itself hold spaces and parentheses: the
 * fields after it start at the last ')'). Returns 0, -EPROTO. */
int kb_procfs_stat_parse(const char *text, kb_procfs_stat *ret);

/* /proc/<pid>/mountinfo as a JSON array, one object per line in order (later lines are mounted on
 * top of earlier ones): "id", "parent" (integers), "dev" ("major:minor"), "root", "mountpoint"
 * (with the kernel's \ooo escapes decoded), "options" (per-mount, array of strings), "fstype",
 * "source", "super" (superblock options, array), "writable" (per-mount and superblock both rw).
 * Returns 0 and a new array, -EPROTO for a malformed line, -E2BIG past KB_PROCFS_MOUNTS_MAX lines,
 * -ENOMEM. */
int kb_procfs_mountinfo_parse(const char *text, json_object **ret);

/* True if path equals prefix or lies below it, component-wise ("/a" holds "/a/b", not "/ab"). */
bool kb_procfs_path_under(const char *path, const char *prefix);

/* The mount of mounts (a kb_procfs_mountinfo_parse array) that a lookup of path ends on, walking
 * the mount tree by parent ids from the namespace's root: at each level a child stacked at the
 * same mount point (it covers the whole of its parent), else the child whose mount point is the
 * longest prefix of path. A mount hidden under a later one is never reached.
 * Borrowed, or NULL when the table has no root. */
json_object *kb_procfs_mount_of(json_object *mounts, const char *path);

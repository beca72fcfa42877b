/* judge.h: the verdicts, as pure functions of evidence. Host facts (inspect.h), a cell's probe
 * result and what kbound itself arranged and observed go in; a check object ({"id", "status",
 * "detail", "evidence"}, docs/report-format.md) comes out. The rule throughout: the host proves,
 * the cell only reports. A cell's account can make a check fail, never pass; evidence that is
 * missing, truncated or that errored fails the check, never passes it. No I/O, no clock, no
 * globals: every branch is unit-tested on canned facts (tests/unit/test_judge*.c). */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <json-c/json.h>
#include "kbound/common.h"

/* A check object. status is "pass", "fail", "unsupported", "not_claimed" or "untested"; evidence
 * (taken; NULL → {}). Returns a new object, NULL if out of memory. */
KB_EXPORT json_object *kb_judge_check(const char *id, const char *status, json_object *evidence, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Everything a verdict may rest on. All borrowed; any may be NULL (then whatever needed it fails).
 * Each object is declared, fact by fact, in src/base/facts.def (host: HOST, snapshots and
 * pre_exec: LOOK, probe: PROBE, expect: EXPECT), with what a missing fact means; the judges read
 * nothing else. expect holds what kbound arranged and saw outside the cells (scenario.c builds
 * it): the override, the pinned kernel's host pid, the kernel's log (its keeper's pipe, or without
 * a keeper the file kbound opened), the team's folders, the canaries, what the launch and the
 * filter were, the limits asked, the lifetime twin, and the identity and attack-surface cells'
 * results (or, when a cell gave none, why). */
typedef struct kb_judge_input {
        json_object *host;       /* kb_inspect_host */
        json_object *snapshots;  /* kb_inspect_snapshot array, in the order taken */
        json_object *probe;      /* the probe cell's result; NULL if there is none */
        const char *probe_error; /* why there is none */
        json_object *expect;
        /* Not NULL when no cell runs by design (no probe set for the kernel's language: this says
         * why): the checks the host carries alone are judged on its evidence only, and nothing is
         * asked of a cell. A cell that should have run and did not is probe_error, never this. */
        const char *cells_absent;
        json_object *pre_exec; /* kb_inspect_pre_exec: the look before the kernel's program ran */
        /* What of host, snapshots, pre_exec, expect and probe breaks its declaration in facts.def
         * (kb_judge_malformed), worked out once by the caller; NULL: each judge works it out. */
        json_object *malformed;
} kb_judge_input;

/* Every place the evidence of in breaks its declaration (src/base/facts.def: a required fact
 * missing, a fact of the wrong kind, a key of the host's that nothing declares; a cell's result
 * may say more than is declared), as strings naming where ("look 'ready': processes[3].uid:
 * required, absent"), at most 8 per object; an empty array when it is all as declared. Every
 * host-judged check fails while there is one. NULL if out of memory. */
KB_EXPORT json_object *kb_judge_malformed(const kb_judge_input *in);

/* sandbox.backend: every process of every look lives in namespaces (user, mnt, pid, net, ipc, uts,
 * cgroup: those kbound itself has) other than kbound's; the network one is shared only under the
 * raw-network override. */
KB_EXPORT json_object *kb_judge_backend(const kb_judge_input *in);

/* sandbox.privileges: in every look, every process runs with no host uid, gid or supplementary
 * group 0, empty effective, permitted and ambient capabilities, and no_new_privs set; uid/gid maps
 * and seccomp mode are reported. Fails on a process whose status could not be read, a look without
 * the kernel, or no look at all. */
KB_EXPORT json_object *kb_judge_privileges(json_object *snapshots);
/* The same, from a judge input (the check table's form; it reads only in->snapshots). */
KB_EXPORT json_object *kb_judge_privileges_of(const kb_judge_input *in);

/* sandbox.session: no process has a controlling terminal; the kernel's session is led by a process
 * of the sandbox, not kbound's; and the sandbox cannot outlive kbound: the bwrap that runs it is
 * the process kbound spawned, kbound's child, started (as its command line shows, parsed with
 * bwrap's own option grammar) with --die-with-parent. */
KB_EXPORT json_object *kb_judge_session(const kb_judge_input *in);

/* sandbox.resources: every limit asked (expect "limits": memory, tasks, tmp; 0 none) is in force
 * for every process of every look, as the host reads it: a memory and a pids cgroup on the
 * process's path whose limit is at most the one asked, else its RLIMIT_AS and RLIMIT_NPROC; every
 * writable tmpfs of the kernel's mount table sized at most "tmp". A memory cgroup that killed at
 * its limit fails too. The evidence has the peaks ("used"). */
KB_EXPORT json_object *kb_judge_resources(const kb_judge_input *in);

/* identity.pid2: kbound is connected to every endpoint it was given, and the other end of each of
 * kbound's connections to the kernel (its peer socket, found by inode with sock_diag, in every
 * look) is held by the pinned PID 2 and no other process; and the identity cell agrees (pid 2,
 * NSpid ending in 2). What PID 2 does with the bytes (a forwarder relaying them to another process
 * of the sandbox) is beyond what the host can see. */
KB_EXPORT json_object *kb_judge_identity(const kb_judge_input *in);

/* boundary.descriptors: every open descriptor of every sandbox process refers to something inside
 * the sandbox: a file on one of the process's own mounts, a pipe or socket of the sandbox (a socket
 * in one of its network namespace's tables, or a unix socket of kbound's network namespace whose
 * peer is one of kbound's own sockets, by inode: the kernel's end of kbound's connections; no pipe
 * or socket shared with the launch side), an
 * anonymous inode of a harmless kind (eventfd, epoll, timerfd, signalfd, inotify, a pidfd of a
 * sandbox process), anonymous memory; the only exceptions are the kernel's log (write-only append)
 * and /dev/null-like devices. Anything else fails naming pid, fd and target. */
KB_EXPORT json_object *kb_judge_descriptors(const kb_judge_input *in);

/* What a mount table is judged against (all borrowed; any may be NULL, and then whatever needed it
 * is not proven): kbound's own mount table (kb_inspect_host "mounts"), the /proc entries that exist
 * on this host ("proc_entries"), the team's binds (judge input "team_binds"), a look's
 * "outside_mounts" (kb_inspect_snapshot) and the running bwrap's command line (a look's launcher
 * "argv"). */
typedef struct kb_judge_mount_facts {
        json_object *host_mounts;
        json_object *proc_entries;
        json_object *team_binds;
        json_object *outside;
        json_object *bwrap_argv;
        /* The table is bwrap's init's, read before exec, when no mount namespace outside the
         * sandbox is read (outside is NULL): a filesystem of a private type is then the sandbox's
         * own only where the running bwrap was told to make it. */
        bool before_exec;
} kb_judge_mount_facts;

/* What is wrong with a sandbox's mount table (kb_procfs_mountinfo_parse form, with "target" facts)
 * as the host reads it: every problem is appended to problems (strings naming the mount). Every
 * mount that a lookup can reach, read-only or not, must refuse device nodes (nodev), except the
 * nodes kbound's --dev binds (a single harmless character device: null, zero, full, random,
 * urandom, tty) and a devpts of the sandbox's own. Every writable one must be the sandbox's own:
 * a filesystem of a private type (tmpfs, ramfs, devpts, mqueue, proc) whose device no mount
 * namespace outside the sandbox holds (kbound's included) and, where the host could not read every
 * outside process's table, that the running bwrap was told to make at that place; or one of the
 * team's binds; or a harmless character device. Under every writable proc mount, proc_entries
 * must be covered read-only, and no writable proc mount may be rooted inside one. Returns the
 * number of problems appended, or -ENOMEM (-EINVAL without problems or facts); a NULL or empty
 * mounts is itself a problem ("not read"). */
KB_EXPORT int kb_judge_mount_problems(json_object *mounts, const kb_judge_mount_facts *facts, json_object *problems);

/* boundary.write_outside: no problem (kb_judge_mount_problems) in any mount table of the sandbox in
 * any look (the kernel's and any other mount namespace among its processes), and
 * the cell's attempts (fail-only): no write landed on a mount the host classes as not private, none
 * appeared on the host, no host setting opened for writing; the cell must have tried, without a
 * sub-probe error. */
KB_EXPORT json_object *kb_judge_write_outside(const kb_judge_input *in);

/* boundary.workspace_writable: the cell wrote its nonce and the host read it back. */
KB_EXPORT json_object *kb_judge_workspace(const kb_judge_input *in);

/* boundary.network: (not_claimed under the raw-network override) the kernel's network namespace is
 * not kbound's, the host's read of its tables shows no interface but lo, no route but through lo,
 * no host abstract canary; the host's canaries counted no connection; the cell's attempts
 * (fail-only) all failed, at least one was made, without a sub-probe error. */
KB_EXPORT json_object *kb_judge_network(const kb_judge_input *in);

/* boundary.sockets: no bound pathname unix socket of the host (any type and state) is reachable
 * through the sandbox's mounts (inspect's "reach" entries of kind "socket", every mount table), and
 * none with more than one name (hard link) lies on a filesystem a sandbox mount shows; namespaces
 * past the ceiling and kbound's own list missing fail. Sockets whose files the host could not find
 * by their names, namespaces kbound could not enter and, under the raw-network override, the
 * abstract sockets of kbound's namespace are named as not claimed in the detail. */
KB_EXPORT json_object *kb_judge_sockets(const kb_judge_input *in);

/* sandbox.attack_surface: every process of every look runs under seccomp (mode 2) with exactly
 * kbound's own filters plus the one kbound handed bwrap (so the filter was neither dropped nor
 * swapped for another one without the count changing); and from inside (fail-only, but required):
 * the attack_surface cell's spawned program, and the cell itself where it can, tried every entry the
 * filter refuses and got the filter's errno for each; anything let through fails, naming it.
 * Entries left allowed by the policy are reported not claimed. */
KB_EXPORT json_object *kb_judge_attack_surface(const kb_judge_input *in);

/* boundary.credentials: no daemon secret or canary in the environment or command line of any
 * sandbox process in any look (read by the host), the child the cell spawned among them (seen
 * alive by the host), no credential canary reachable through any mount table's mounts nor, when it
 * has more than one name (hard links), on a filesystem a sandbox mount shows; and from the cell
 * (fail-only): its subprocess ran, waited for the host and dumped /proc, nothing of it matched a
 * secret, no credential file seen, kbound's keyring canary not found. */
KB_EXPORT json_object *kb_judge_credentials(const kb_judge_input *in);

/* boundary.cross_team: no canary of another team reachable through the mounts (host), and no mount
 * of any mount table showing anything under the run's teams/ folder but the team's own two binds,
 * nor anything of another kbound run's base folder (a kbound-XXXXXX sibling of base_dir), nor a
 * folder that holds either; and from the cell (fail-only): its attempts found nothing, without a
 * sub-probe error. */
KB_EXPORT json_object *kb_judge_cross_team(const kb_judge_input *in);

/* ---- a kernel that did not start ----
 *
 * When the kernel dies, or never answers, at start-up, the look before exec (in->pre_exec, taken
 * while bwrap's init waited on kbound's block channel) is the only look at the sandbox there is,
 * and the sandbox is often why the kernel died (a host /dev bound without device nodes, a mount
 * over what it loads). Each check that can be judged on that look alone has one of these (the
 * check table's judge_before_start): what the look shows wrong fails the check, said as seen
 * before the kernel ran; a check it shows nothing wrong with is not_run, never a pass (a pass needs
 * the looks at the running kernel). The evidence says "before_start": true. They read in->host,
 * in->pre_exec and in->expect (what kbound arranged before exec: the launch, the team's binds,
 * the base folder); never the snapshots, the probe or the kernel's pid, which a kernel that did
 * not start does not have. A new check object; NULL if out of memory. */

/* sandbox.backend: init's namespaces are not kbound's, are owned by the sandbox's user namespace
 * (a child of kbound's), no process outside is in one or holds one, and the running bwrap is the
 * program, command line and environment kbound launched. */
KB_EXPORT json_object *kb_judge_backend_before_start(const kb_judge_input *in);
/* sandbox.privileges: init has no host uid, gid or group 0 and no capability (no_new_privs is set
 * with the filter, after the look). */
KB_EXPORT json_object *kb_judge_privileges_before_start(const kb_judge_input *in);
/* sandbox.session: init has no controlling terminal but a pty of the sandbox's own, and the running
 * bwrap is kbound's child, started with --die-with-parent. */
KB_EXPORT json_object *kb_judge_session_before_start(const kb_judge_input *in);
/* boundary.descriptors: init waited on the block channel holding only what kbound handed it, and
 * its working directory, root, program and mapped files lie on its own mounts. */
KB_EXPORT json_object *kb_judge_descriptors_before_start(const kb_judge_input *in);
/* boundary.write_outside: init's mount table (its mount points proven its mounts' roots, as every
 * look's) under kb_judge_mount_problems' rules with before_exec set. */
KB_EXPORT json_object *kb_judge_write_outside_before_start(const kb_judge_input *in);
/* boundary.credentials: no daemon secret or canary in init's environment or command line. */
KB_EXPORT json_object *kb_judge_credentials_before_start(const kb_judge_input *in);
/* boundary.cross_team: no mount of init's table shows another team's folders or another kbound
 * run's. */
KB_EXPORT json_object *kb_judge_cross_team_before_start(const kb_judge_input *in);

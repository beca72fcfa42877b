/* judge.h: the verdicts, as pure functions of evidence. Host facts (inspect.h) and a cell's probe
 * result go in; a check object ({"id", "status", "detail", "evidence"}, docs/report-format.md)
 * comes out. The rule throughout: the host proves, the cell only reports. A cell's account can
 * make a check fail, never pass; evidence that is missing, truncated or that errored fails the
 * check (or leaves it untested, saying why), never passes it. No I/O, no clock, no globals. */
#pragma once

#include <stdarg.h>
#include <json-c/json.h>
#include "kbound/common.h"

/* A check object. status is "pass", "fail", "unsupported", "not_claimed" or "untested"; evidence
 * (taken; NULL → {}). Returns a new object, NULL if out of memory. */
KB_EXPORT json_object *kb_judge_check(const char *id, const char *status, json_object *evidence, const char *fmt,
                                      ...) __attribute__((format(printf, 4, 5)));

/* sandbox.privileges from the host's snapshots (a JSON array of kb_inspect_snapshot objects): in
 * every snapshot, every process runs with no host uid, gid or supplementary group 0, empty
 * effective, permitted and ambient capabilities, and no_new_privs set; uid/gid maps and seccomp
 * mode are reported. Fails on a process whose status could not be read, a snapshot without the
 * kernel, or no snapshot at all. */
KB_EXPORT json_object *kb_judge_privileges(json_object *snapshots);

/* What is wrong with a sandbox's mount table (kb_procfs_mountinfo_parse form) as the host reads
 * it: every problem is appended to problems (strings naming the mount). proc_entries: the names
 * of kb_sandbox_proc_readonly that exist on this host (kb_inspect_host "proc_entries"): under every
 * writable proc mount each must be covered by a read-only mount (or a mask that is not proc), and
 * no writable proc mount may have its root inside one of them. Returns the number of problems
 * appended, or -ENOMEM; a NULL mounts is itself a problem ("not read"). */
KB_EXPORT int kb_judge_mount_problems(json_object *mounts, json_object *proc_entries, json_object *problems);

/* check.h: the checks every kernel gets, as one table (src/verdict/check.c): each check's id, what a pass
 * claims, its phase and place in the run, what it needs (the host's looks alone, or a cell of the
 * language's pack), who judges it and the words the report's summary uses. Everything that names
 * a check (the scenario that runs them, the judges, the report, `kbound check --list-checks`, the
 * tests through that list) reads it from here; adding a check is a row, a judge and its facts. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>
#include "kbound/common.h"
#include "kbound/judge.h"

/* In the order they run and are reported (docs/probes.md). */
typedef enum kb_check {
        KB_CHECK_BACKEND,
        KB_CHECK_PRIVILEGES,
        KB_CHECK_SESSION,
        KB_CHECK_ATTACK_SURFACE,
        KB_CHECK_RESOURCES,
        KB_CHECK_PID2,
        KB_CHECK_PIDFD,
        KB_CHECK_DESCRIPTORS,
        KB_CHECK_WRITE_OUTSIDE,
        KB_CHECK_WORKSPACE_WRITABLE,
        KB_CHECK_NETWORK,
        KB_CHECK_SOCKETS,
        KB_CHECK_CREDENTIALS,
        KB_CHECK_CROSS_TEAM,
        KB_CHECK_INTERRUPT_CONTROL,
        KB_CHECK_INTERRUPT_PIDFD,
        KB_CHECK_PERSISTENCE,
        KB_CHECK_SHUTDOWN,
        _KB_CHECK_MAX,
        _KB_CHECK_INVALID = -EINVAL,
} kb_check;

typedef enum kb_check_phase {
        KB_CHECK_PHASE_SANDBOX,
        KB_CHECK_PHASE_IDENTITY,
        KB_CHECK_PHASE_BOUNDARY, /* together "the full boundary"; judged only for a run not cancelled */
        KB_CHECK_PHASE_INTERRUPT,
        KB_CHECK_PHASE_PERSISTENCE,
        KB_CHECK_PHASE_LIFECYCLE,
        _KB_CHECK_PHASE_MAX,
} kb_check_phase;

/* What a pass needs. */
typedef enum kb_check_needs {
        KB_CHECK_NEEDS_HOST, /* the host's looks alone; a pack's cells can add ways to fail it */
        KB_CHECK_NEEDS_CELL, /* a cell of the language's pack: without one the check is untested */
        _KB_CHECK_NEEDS_MAX,
} kb_check_needs;

/* Which part of the run's time a judged check is reported to have taken. */
typedef enum kb_check_time {
        KB_CHECK_TIME_LOOKS,    /* the host's looks */
        KB_CHECK_TIME_IDENTITY, /* the identity cell */
        KB_CHECK_TIME_PROBE,    /* the probe cell */
        KB_CHECK_TIME_SURFACE,  /* the attack-surface cell */
        _KB_CHECK_TIME_MAX,
} kb_check_time;

typedef struct kb_check_info {
        const char *id;    /* "boundary.network": the report's check id */
        const char *claim; /* what a pass claims, one sentence (docs/probes.md "Per check") */
        kb_check_phase phase;
        kb_check_needs needs;
        /* Judged once the evidence is in, from it alone; NULL: a step of the run reports it as it
         * happens (the pidfd's identity, the interrupts, persistence, the shutdown). */
        json_object *(*judge)(const kb_judge_input *in);
        kb_check_time time; /* for a judged check */
        /* For a kernel that did not start: what the look before exec alone shows of the check
         * (judge.h, "a kernel that did not start"); NULL: nothing, it needs the running kernel. */
        json_object *(*judge_before_start)(const kb_judge_input *in);
        /* A check that needs a cell but whose judge can fail it on the host's evidence alone: without
         * a pack it is judged so, and a pass becomes untested. */
        bool host_part;
        const char *without_cell; /* what needs the cell, for the untested detail ("writing to the workspace") */
        const char *summary;      /* a boundary check's words in the report's summary ("host sockets") */
} kb_check_info;

/* The row of c, or NULL for a value that is no check. */
KB_EXPORT const kb_check_info *kb_check_get(kb_check c);
/* The id of c ("sandbox.backend"), or NULL. */
KB_EXPORT const char *kb_check_id(kb_check c);
/* The check with this id, or _KB_CHECK_INVALID (for NULL too). */
KB_EXPORT kb_check kb_check_from_id(const char *id);
/* "sandbox", "identity", "boundary", ...: the phase's name, the first part of its checks' ids. */
KB_EXPORT const char *kb_check_phase_name(kb_check_phase p);
/* "host" or "cell". */
KB_EXPORT const char *kb_check_needs_name(kb_check_needs n);
/* True if id names a check of the full boundary. */
KB_EXPORT bool kb_check_is_boundary(const char *id);

/* check.c: the table of checks (check.h), in the order they run and are reported. The claims are
 * docs/probes.md's "Per check" column; a docs test holds the docs to these ids. */
#include "kbound/check.h"
#include <string.h>

static const kb_check_info checks[_KB_CHECK_MAX] = {
        [KB_CHECK_BACKEND] = {.id = "sandbox.backend",
                              .claim = "the kernel runs in namespaces of its own, made by the bwrap kbound built",
                              .phase = KB_CHECK_PHASE_SANDBOX,
                              .needs = KB_CHECK_NEEDS_HOST,
                              .judge = kb_judge_backend,
                              .judge_before_start = kb_judge_backend_before_start,
                              .time = KB_CHECK_TIME_LOOKS},
        [KB_CHECK_PRIVILEGES] = {.id = "sandbox.privileges",
                                 .claim = "no sandbox process is host root or holds capabilities",
                                 .phase = KB_CHECK_PHASE_SANDBOX,
                                 .needs = KB_CHECK_NEEDS_HOST,
                                 .judge = kb_judge_privileges_of,
                                 .judge_before_start = kb_judge_privileges_before_start,
                                 .time = KB_CHECK_TIME_LOOKS},
        [KB_CHECK_SESSION] = {.id = "sandbox.session",
                              .claim = "no terminal reaches the sandbox, and it cannot outlive kbound",
                              .phase = KB_CHECK_PHASE_SANDBOX,
                              .needs = KB_CHECK_NEEDS_HOST,
                              .judge = kb_judge_session,
                              .judge_before_start = kb_judge_session_before_start,
                              .time = KB_CHECK_TIME_LOOKS},
        [KB_CHECK_ATTACK_SURFACE] = {.id = "sandbox.attack_surface",
                                     .claim = "the kernel cannot ask Linux for what the sandboxes users trust refuse",
                                     .phase = KB_CHECK_PHASE_SANDBOX,
                                     .needs = KB_CHECK_NEEDS_CELL,
                                     .judge = kb_judge_attack_surface,
                                     .time = KB_CHECK_TIME_SURFACE,
                                     .host_part = true,
                                     .without_cell = "trying the refused calls (the host saw every process under "
                                                     "kbound's filter)"},
        [KB_CHECK_RESOURCES] =
                {.id = "sandbox.resources",
                 .claim = "the sandbox cannot take the host's memory, tasks, CPU, RAM through its in-memory "
                          "folders, or disk through its log",
                 .phase = KB_CHECK_PHASE_SANDBOX,
                 .needs = KB_CHECK_NEEDS_HOST,
                 .judge = kb_judge_resources,
                 .time = KB_CHECK_TIME_LOOKS},
        [KB_CHECK_PID2] = {.id = "identity.pid2",
                           .claim = "PID 2 holds the kernel end of every connection kbound talks over",
                           .phase = KB_CHECK_PHASE_IDENTITY,
                           .needs = KB_CHECK_NEEDS_HOST,
                           .judge = kb_judge_identity,
                           .time = KB_CHECK_TIME_IDENTITY},
        [KB_CHECK_PIDFD] = {.id = "identity.pidfd",
                            .claim = "kbound's pidfd refers to exactly that live process",
                            .phase = KB_CHECK_PHASE_IDENTITY,
                            .needs = KB_CHECK_NEEDS_HOST},
        [KB_CHECK_DESCRIPTORS] =
                {.id = "boundary.descriptors",
                 .claim = "every reference a sandbox process holds refers to something inside the sandbox",
                 .phase = KB_CHECK_PHASE_BOUNDARY,
                 .needs = KB_CHECK_NEEDS_HOST,
                 .judge = kb_judge_descriptors,
                 .judge_before_start = kb_judge_descriptors_before_start,
                 .time = KB_CHECK_TIME_LOOKS,
                 .summary = "descriptors"},
        [KB_CHECK_WRITE_OUTSIDE] =
                {.id = "boundary.write_outside",
                 .claim = "no write from a cell reaches anything the host sees outside the workspace, and "
                          "no host-global setting is writable",
                 .phase = KB_CHECK_PHASE_BOUNDARY,
                 .needs = KB_CHECK_NEEDS_HOST,
                 .judge = kb_judge_write_outside,
                 .judge_before_start = kb_judge_write_outside_before_start,
                 .time = KB_CHECK_TIME_PROBE,
                 .summary = "write outside"},
        [KB_CHECK_WORKSPACE_WRITABLE] = {.id = "boundary.workspace_writable",
                                         .claim = "the workspace is writable",
                                         .phase = KB_CHECK_PHASE_BOUNDARY,
                                         .needs = KB_CHECK_NEEDS_CELL,
                                         .judge = kb_judge_workspace,
                                         .time = KB_CHECK_TIME_PROBE,
                                         .without_cell = "writing to the workspace",
                                         .summary = "workspace"},
        [KB_CHECK_NETWORK] = {.id = "boundary.network",
                              .claim = "no network beyond the sandbox's own lo",
                              .phase = KB_CHECK_PHASE_BOUNDARY,
                              .needs = KB_CHECK_NEEDS_HOST,
                              .judge = kb_judge_network,
                              .time = KB_CHECK_TIME_PROBE,
                              .summary = "network"},
        [KB_CHECK_SOCKETS] = {.id = "boundary.sockets",
                              .claim = "no host daemon's unix socket is reachable",
                              .phase = KB_CHECK_PHASE_BOUNDARY,
                              .needs = KB_CHECK_NEEDS_HOST,
                              .judge = kb_judge_sockets,
                              .time = KB_CHECK_TIME_LOOKS,
                              .summary = "host sockets"},
        [KB_CHECK_CREDENTIALS] =
                {.id = "boundary.credentials",
                 .claim = "no daemon secret reaches anything the kernel spawns, and no canary or key of "
                          "kbound's is reachable",
                 .phase = KB_CHECK_PHASE_BOUNDARY,
                 .needs = KB_CHECK_NEEDS_HOST,
                 .judge = kb_judge_credentials,
                 .judge_before_start = kb_judge_credentials_before_start,
                 .time = KB_CHECK_TIME_PROBE,
                 .summary = "credentials"},
        [KB_CHECK_CROSS_TEAM] = {.id = "boundary.cross_team",
                                 .claim = "another team's files are neither visible nor readable",
                                 .phase = KB_CHECK_PHASE_BOUNDARY,
                                 .needs = KB_CHECK_NEEDS_HOST,
                                 .judge = kb_judge_cross_team,
                                 .judge_before_start = kb_judge_cross_team_before_start,
                                 .time = KB_CHECK_TIME_PROBE,
                                 .summary = "cross-team"},
        [KB_CHECK_INTERRUPT_CONTROL] = {.id = "interrupt.control",
                                        .claim = "interrupt_request stops a running cell",
                                        .phase = KB_CHECK_PHASE_INTERRUPT,
                                        .needs = KB_CHECK_NEEDS_CELL,
                                        .without_cell = "interrupting a running cell"},
        [KB_CHECK_INTERRUPT_PIDFD] = {.id = "interrupt.pidfd",
                                      .claim = "SIGINT through the pinned pidfd stops a running cell",
                                      .phase = KB_CHECK_PHASE_INTERRUPT,
                                      .needs = KB_CHECK_NEEDS_CELL,
                                      .without_cell = "interrupting a running cell"},
        [KB_CHECK_PERSISTENCE] = {.id = "persistence.namespace",
                                  .claim = "the same kernel namespace answers afterwards",
                                  .phase = KB_CHECK_PHASE_PERSISTENCE,
                                  .needs = KB_CHECK_NEEDS_CELL,
                                  .without_cell = "reading a variable back"},
        [KB_CHECK_SHUTDOWN] = {.id = "lifecycle.shutdown",
                               .claim = "the kernel shuts down when asked",
                               .phase = KB_CHECK_PHASE_LIFECYCLE,
                               .needs = KB_CHECK_NEEDS_HOST},
};

static const char *const phase_names[_KB_CHECK_PHASE_MAX] = {
        [KB_CHECK_PHASE_SANDBOX] = "sandbox",         [KB_CHECK_PHASE_IDENTITY] = "identity",
        [KB_CHECK_PHASE_BOUNDARY] = "boundary",       [KB_CHECK_PHASE_INTERRUPT] = "interrupt",
        [KB_CHECK_PHASE_PERSISTENCE] = "persistence", [KB_CHECK_PHASE_LIFECYCLE] = "lifecycle",
};

static const char *const needs_names[_KB_CHECK_NEEDS_MAX] = {
        [KB_CHECK_NEEDS_HOST] = "host",
        [KB_CHECK_NEEDS_CELL] = "cell",
};

const kb_check_info *kb_check_get(kb_check c) {
        return c >= 0 && c < _KB_CHECK_MAX ? &checks[c] : NULL;
}

const char *kb_check_id(kb_check c) {
        const kb_check_info *i = kb_check_get(c);
        return i ? i->id : NULL;
}

kb_check kb_check_from_id(const char *id) {
        for (kb_check c = 0; id && c < _KB_CHECK_MAX; c++)
                if (strcmp(checks[c].id, id) == 0)
                        return c;
        return _KB_CHECK_INVALID;
}

const char *kb_check_phase_name(kb_check_phase p) {
        return p >= 0 && p < _KB_CHECK_PHASE_MAX ? phase_names[p] : NULL;
}

const char *kb_check_needs_name(kb_check_needs n) {
        return n >= 0 && n < _KB_CHECK_NEEDS_MAX ? needs_names[n] : NULL;
}

bool kb_check_is_boundary(const char *id) {
        const kb_check_info *i = kb_check_get(kb_check_from_id(id));
        return i && i->phase == KB_CHECK_PHASE_BOUNDARY;
}

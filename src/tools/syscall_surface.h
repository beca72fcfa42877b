/* syscall_surface.h: the attack-surface tries of kbound's static programs (docs/seccomp.md,
 * "Trying each call harmlessly"), run and written as JSON. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

/* Tries every entry of kbound's seccomp table, each in a forked process of its own (socket
 * families only under a filter that visibly refuses them), and writes one JSON object to out
 * (facts.def's SURFACE_TRIES, its results TRY):
 * {"version": 1, "arch", "seccomp", "filters", "results": [{"name", "errno", "ret", "tested", "why"
 * [, "socketpair": {...}]}]}. one_line: no newline inside it. The caller must be single-threaded
 * (it forks); it checks out for write errors. Resets SIGCHLD to its default, so the tries'
 * processes can be waited for. */
void kb_surface_write(FILE *out, bool one_line);

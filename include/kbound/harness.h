/* harness.h: the kernel under test, as `check` (scenario.h) and `conformance` (conformance.h)
 * share it: how the run of one kernel ended. The harness itself (starting the kernel with its
 * language pack, recording checks, the long cell, wait errors) is internal (src/harness-internal.h). */
#pragma once

/* How a kernel's check or conformance run ended, for the exit code. */
typedef enum kb_check_outcome {
        KB_CHECK_DONE,         /* every check ran; statuses say pass or fail */
        KB_CHECK_NOT_ENFORCED, /* the sandbox or the probes could not be set up (exit 3) */
        KB_CHECK_CANCELLED,    /* a signal or the deadline ended it early */
} kb_check_outcome;

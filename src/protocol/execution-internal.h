/* execution-internal.h: an execution's record of the kernel's messages (execution.c), for the
 * client that dispatches them. */
#ifndef KBOUND_EXECUTION_INTERNAL_H
#define KBOUND_EXECUTION_INTERNAL_H

#include "kbound/client.h"

/* An iopub message of ex's request: status, stream text, rich outputs and errors kept, each within
 * its bound. 0 or -ENOMEM. */
int kb_execution_apply_iopub(kb_execution *ex, const kb_msg *msg);

/* ex's execute_reply: its status, count, error name and value. 0 or -ENOMEM. */
int kb_execution_apply_reply(kb_execution *ex, const kb_msg *msg);

#endif

/* cli_ci.c: what a CI job reads besides the reports it asked for: GitHub's job summary and its
 * annotations, when kbound runs under GitHub Actions. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <kbound/report.h>
#include "cli.h"

static void write_step_summary(json_object *run, const char *path) {
        /* Appended: every step of a job writes its own part, and the runner shows them all. */
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
        if (fd < 0) {
                cli_error("cannot open GITHUB_STEP_SUMMARY %s: %s (no job summary written)", path, strerror(errno));
                return;
        }
        int r = kb_report_write_fd(run, fd, kb_report_markdown);
        if (r < 0)
                cli_error("cannot write the job summary to %s: %s", path, strerror(-r));
        if (close(fd) < 0 && r >= 0)
                cli_error("cannot write the job summary to %s: %s", path, strerror(errno));
}

void cli_ci_output(json_object *run, FILE *out) {
        const char *summary = getenv("GITHUB_STEP_SUMMARY");
        if (summary && *summary)
                write_step_summary(run, summary);
        const char *actions = getenv("GITHUB_ACTIONS");
        if (actions && strcmp(actions, "true") == 0)
                (void) kb_report_github_annotations(run, out);
}

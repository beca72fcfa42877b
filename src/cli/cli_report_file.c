/* cli_report_file.c: where the reports go (--json, --junit: paths checked before anything
 * starts, standard output among them) and their writing, and a standard output that remembers why
 * a write to it failed (cli.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <kbound/report.h>
#include "cli.h"

/* Whether paths a and b name one file: the same string, the same inode, or (neither there yet)
 * the same name in the same folder. */
static bool same_file(const char *a, const char *b) {
        if (strcmp(a, b) == 0)
                return true;
        struct stat sa, sb;
        bool ha = stat(a, &sa) == 0, hb = stat(b, &sb) == 0;
        if (ha && hb)
                return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
        if (ha || hb)
                return false;
        _cleanup_free_ char *da = strdup(a), *db = strdup(b);
        if (!da || !db)
                return false;
        char *slash_a = strrchr(da, '/'), *slash_b = strrchr(db, '/');
        const char *name_a = slash_a ? slash_a + 1 : da, *name_b = slash_b ? slash_b + 1 : db;
        if (strcmp(name_a, name_b) != 0)
                return false;
        if (slash_a)
                *slash_a = '\0';
        if (slash_b)
                *slash_b = '\0';
        _cleanup_free_ char *ra = realpath(slash_a ? (*da ? da : "/") : ".", NULL);
        _cleanup_free_ char *rb = realpath(slash_b ? (*db ? db : "/") : ".", NULL);
        return ra && rb && strcmp(ra, rb) == 0;
}

/* 1 or 2 when path is the file standard output or standard error already is, else -1. */
static int std_stream_of(const char *path) {
        if (strcmp(path, "-") == 0)
                return STDOUT_FILENO;
        struct stat sp, sf;
        if (stat(path, &sp) < 0)
                return -1;
        for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++)
                if (fstat(fd, &sf) == 0 && sf.st_dev == sp.st_dev && sf.st_ino == sp.st_ino)
                        return fd;
        return -1;
}

static const char *report_path_error(int r) {
        switch (r) {
        case -EISDIR:
                return "it is a directory";
        case -EINVAL:
                return "not a regular file, character device or FIFO (a block device or a socket)";
        case -ENOENT:
                return "no such folder, or a symlink to nothing";
        case -EOPNOTSUPP:
                return "its folder takes no new file (a file system such as /proc or /sys), so the report could "
                       "not be written there";
        default:
                return strerror(-r);
        }
}

int cli_reports_check(const char *cmd, cli_report *reports, size_t n, const char *transcript_path,
                      bool *ret_stdout_taken) {
        const char *stdout_option = NULL;
        for (size_t i = 0; i < n; i++) {
                cli_report *rep = &reports[i];
                rep->fd = -1;
                if (!rep->path)
                        continue;
                if (!rep->path[0]) {
                        cli_error("%s: %s takes a file name (or - for standard output), not ''", cmd, rep->option);
                        return KB_EXIT_USAGE;
                }
                rep->fd = std_stream_of(rep->path);
                if (rep->fd == STDOUT_FILENO) {
                        if (stdout_option) {
                                cli_error("%s: %s and %s both go to standard output: one of them must go to a file",
                                          cmd, stdout_option, rep->option);
                                return KB_EXIT_USAGE;
                        }
                        stdout_option = rep->option;
                }
                if (rep->fd < 0) {
                        int r = kb_report_check_path(rep->path, NULL);
                        if (r < 0) {
                                cli_error("%s: cannot write the %s report to %s: %s", cmd, rep->option, rep->path,
                                          report_path_error(r));
                                return KB_EXIT_USAGE;
                        }
                }
                for (size_t j = 0; j < i; j++)
                        if (reports[j].path && reports[j].fd < 0 && rep->fd < 0 &&
                            same_file(reports[j].path, rep->path)) {
                                cli_error("%s: %s and %s name the same file %s: the second would replace the first",
                                          cmd, reports[j].option, rep->option, rep->path);
                                return KB_EXIT_USAGE;
                        }
                if (transcript_path && rep->fd < 0 && same_file(transcript_path, rep->path)) {
                        cli_error("%s: %s and --transcript name the same file %s", cmd, rep->option, rep->path);
                        return KB_EXIT_USAGE;
                }
        }
        if (ret_stdout_taken)
                *ret_stdout_taken = stdout_option != NULL;
        return 0;
}

int cli_reports_write(const cli_report *reports, size_t n, json_object *run) {
        int exit_code = 0;
        for (size_t i = 0; i < n; i++) {
                const cli_report *rep = &reports[i];
                if (!rep->path)
                        continue;
                int r;
                if (rep->fd >= 0) {
                        fflush(rep->fd == STDOUT_FILENO ? stdout : stderr);
                        r = kb_report_write_fd(run, rep->fd, rep->render);
                } else {
                        r = kb_report_write_file(run, rep->path, rep->render);
                }
                if (r < 0) {
                        /* kb_report_write_file removes an earlier report it could not replace: say
                         * whether one is still there, since a CI job would read it as this run's. */
                        struct stat st;
                        bool earlier = rep->fd < 0 && stat(rep->path, &st) == 0 && S_ISREG(st.st_mode);
                        cli_error("cannot write the %s report to %s: %s%s", rep->option,
                                  rep->fd == STDOUT_FILENO ? "standard output" : rep->path,
                                  r == -ENXIO   ? "a FIFO nobody is reading"
                                  : r == -EFBIG ? "the report is over kbound's size limit"
                                                : report_path_error(r),
                                  rep->fd >= 0 ? ""
                                  : earlier    ? " (an earlier report is still there and could not be removed: it is "
                                                 "NOT this run's; remove it)"
                                               : " (no report is left there: not an earlier run's either)");
                        exit_code = KB_EXIT_FAIL;
                }
        }
        return exit_code;
}

/* The errno of the first write to standard output that failed (0: none). stdio keeps only an
 * error flag, and the errno of a write it made behind our back is gone by the time we look. */
static int stdout_errno;

static ssize_t stdout_write(void *cookie, const char *data, size_t len) {
        size_t done = 0;
        while (done < len) {
                ssize_t n = write(STDOUT_FILENO, data + done, len - done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        if (!stdout_errno)
                                stdout_errno = n < 0 ? errno : EIO;
                        return done > 0 ? (ssize_t) done : -1;
                }
                done += (size_t) n;
        }
        return (ssize_t) done;
}

void cli_stdout_install(void) {
        /* A terminal keeps the real stdout (line-buffered, as people expect); a file or a pipe,
         * where a full disk or a closed reader can happen, gets one that remembers why. */
        if (isatty(STDOUT_FILENO))
                return;
        FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){.write = stdout_write});
        if (!f)
                return;
        fflush(stdout);
        stdout = f;
}

int cli_stdout_close(void) {
        errno = 0;
        bool failed = fflush(stdout) != 0;
        int err = stdout_errno ? stdout_errno : errno;
        if (!failed && !ferror(stdout))
                return 0;
        cli_error("cannot write to standard output: %s", err ? strerror(err) : "a write to it failed");
        return KB_EXIT_FAIL;
}

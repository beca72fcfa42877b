/* cli_signal.c: the signals kbound stops on (a self-pipe the waits poll), and the children it
 * ends: kbound as the subreaper of whatever a sandbox leaves orphaned, and their reaping (cli.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "cli.h"

static int signal_pipe[2] = {-1, -1};
static volatile sig_atomic_t signal_received;

static void on_signal(int sig) {
        int saved = errno;
        signal_received = sig;
        if (signal_pipe[1] >= 0) {
                char c = (char) sig;
                ssize_t n = write(signal_pipe[1], &c, 1);
                (void) n;
        }
        errno = saved;
}

int cli_signals_install(void) {
        if (signal_pipe[0] >= 0)
                return signal_pipe[0];
        if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
                return -1;
        struct sigaction sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        /* A kernel or a report reader going away must be an error we see, not a silent death. */
        signal(SIGPIPE, SIG_IGN);
        return signal_pipe[0];
}

int cli_signal_received(void) {
        return signal_received;
}

static void stop_signals(sigset_t *set) {
        sigemptyset(set);
        sigaddset(set, SIGINT);
        sigaddset(set, SIGTERM);
        sigaddset(set, SIGHUP);
}

void cli_signals_unblock(void) {
        sigset_t set;
        stop_signals(&set);
        (void) sigprocmask(SIG_UNBLOCK, &set, NULL);
}

void cli_signals_hold(void) {
        sigset_t set;
        stop_signals(&set);
        (void) sigprocmask(SIG_BLOCK, &set, NULL);
        /* Pending signals survive execve; the self-pipe (O_CLOEXEC) and signal_received do not. */
        if (signal_received)
                (void) raise(signal_received);
}

void cli_become_subreaper(void) {
        /* Anything a sandbox leaves orphaned (a bwrap whose parent was killed, say) is re-parented
         * to kbound instead of PID 1, so cli_reap_orphans() can end it. */
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

/* The children of pid found in /proc; returns how many were put in pids (at most max). */
static size_t children_of(pid_t parent, pid_t *pids, size_t max) {
        DIR *d = opendir("/proc");
        size_t n = 0;
        struct dirent *de;
        while (d && n < max && (de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0)
                        continue;
                char path[64], line[256];
                snprintf(path, sizeof(path), "/proc/%ld/status", pid);
                FILE *f = fopen(path, "re");
                if (!f)
                        continue;
                while (fgets(line, sizeof(line), f))
                        if (strncmp(line, "PPid:", 5) == 0) {
                                if (strtol(line + 5, NULL, 10) == parent)
                                        pids[n++] = (pid_t) pid;
                                break;
                        }
                fclose(f);
        }
        if (d)
                closedir(d);
        return n;
}

void cli_reap_orphans(void) {
        pid_t self = getpid();
        for (int round = 0; round < 50; round++) {
                pid_t pids[64];
                size_t n = children_of(self, pids, 64);
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
                if (n == 0)
                        return;
                for (size_t i = 0; i < n; i++)
                        kill(pids[i], SIGKILL);
                usleep(20000);
        }
}

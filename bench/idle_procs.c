/* idle_procs.c: N idle host processes for scripts/bench's "hostprocs" section (the host's looks walk
 * every process of the host). Forks N children that pause and die with it; prints "ready N" once
 * they exist, then waits for a signal. Never installed. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv) {
        long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
        pid_t parent = getpid();
        long made = 0;
        for (; made < n; made++) {
                pid_t p = fork();
                if (p == 0) {
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        if (getppid() != parent)
                                _exit(0);
                        pause();
                        _exit(0);
                }
                if (p < 0)
                        break;
        }
        printf("ready %ld\n", made);
        fflush(stdout);
        pause();
        return 0;
}

/* inspect_filter.c: the seccomp filters in force in a sandbox process, read by the host and held to
 * the program kbound built for the launch, instruction for instruction, and whether the host can read
 * them at all (docs/seccomp.md). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include "kbound/seccomp_compare.h"
#include "kbound/sysabi.h"
#include "base/child.h"
#include "base/cleanup.h"
#include "evidence/inspect-internal.h"

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif

#define FILTERS_MAX 64      /* filters read of one thread (the kernel allows 32768 instructions in all) */
#define STOP_WAIT_MS 1000   /* how long a thread may take to stop once interrupted */
#define DIFFERENCES_KEPT 16 /* differences listed; the rest counted */

/* The filters of one thread, oldest first. */
typedef struct filters {
        struct sock_filter *prog[FILTERS_MAX];
        size_t len[FILTERS_MAX];
        size_t n;
} filters;

static void filters_free(filters *f) {
        for (size_t i = 0; i < f->n; i++)
                free(f->prog[i]);
        f->n = 0;
}

/* The read of one thread, done by a thread of its own (the tracer is a thread: should the tracee
 * not stop in time, that thread ends, and the kernel lets the tracee go as it was). */
typedef struct read_job {
        pid_t tid;
        filters out;
        int r; /* 0, -ESRCH (gone), -ETIMEDOUT, -errno */
} read_job;

static void sleep_us(long us) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = us * 1000};
        nanosleep(&ts, NULL);
}

/* Every filter of the stopped tracee, oldest first (index 0 is the first installed). */
static int get_filters(pid_t tid, filters *out) {
        for (unsigned long i = 0; i < FILTERS_MAX; i++) {
                long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *) i, NULL);
                if (n < 0)
                        return errno == ENOENT && i > 0 ? 0 : -errno;
                if (n == 0 || n > BPF_MAXINSNS)
                        return -EBADMSG;
                struct sock_filter *prog = calloc((size_t) n, sizeof *prog);
                if (!prog)
                        return -ENOMEM;
                long got = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *) i, prog);
                if (got != n) {
                        free(prog);
                        return got < 0 ? -errno : -EAGAIN;
                }
                out->prog[out->n] = prog;
                out->len[out->n++] = (size_t) n;
        }
        return -E2BIG;
}

/* Seize (no options: if kbound dies meanwhile, nothing happens to the tracee), interrupt, wait for
 * the stop, read, detach. A signal the tracee was about to take when it stopped (a signal-delivery
 * stop) is handed back at the detach, so nothing it was sent is lost; a group stop stays a stop. */
static void *read_thread(void *arg) {
        read_job *job = arg;
        pid_t tid = job->tid;
        if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
                job->r = -errno;
                return NULL;
        }
        if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
                job->r = errno == ESRCH ? -ESRCH : -errno;
                return NULL; /* the thread's end detaches */
        }
        int status = 0;
        int64_t until = kb_now_ms() + STOP_WAIT_MS;
        for (;;) {
                pid_t w = waitpid(tid, &status, __WALL | WNOHANG);
                if (w == tid)
                        break;
                if (w < 0 && errno != EINTR) {
                        job->r = -errno;
                        return NULL;
                }
                if (kb_now_ms() >= until) {
                        job->r = -ETIMEDOUT;
                        return NULL;
                }
                sleep_us(200);
        }
        if (!WIFSTOPPED(status)) {
                job->r = -ESRCH; /* it ended */
                return NULL;
        }
        int event = status >> 16, resend = 0;
        if (event == 0 && WSTOPSIG(status) != SIGTRAP)
                resend = WSTOPSIG(status); /* a signal-delivery stop: the signal goes back */
        job->r = get_filters(tid, &job->out);
        if (ptrace(PTRACE_DETACH, tid, NULL, (void *) (long) resend) < 0 && job->r == 0)
                job->r = -errno;
        return NULL;
}

/* Reads thread tid's filters into *out. Returns 0 or -errno (see read_job). */
static int read_filters(pid_t tid, filters *out) {
        read_job job = {.tid = tid};
        pthread_t th;
        int e = pthread_create(&th, NULL, read_thread, &job);
        if (e)
                return -e;
        pthread_join(th, NULL);
        if (job.r < 0) {
                filters_free(&job.out);
                return job.r;
        }
        *out = job.out;
        return 0;
}

/* The words of a failed read. */
static const char *read_error(int r, char *buf, size_t n) {
        switch (r) {
        case -EACCES:
                return "the kernel refuses the read (PTRACE_SECCOMP_GET_FILTER needs CAP_SYS_ADMIN and a reader "
                       "under no seccomp filter)";
        case -EPERM:
                return "ptrace refused (another tracer, or a security module)";
        case -EINVAL:
        case -EMEDIUMTYPE:
                return "this kernel keeps no copy of a loaded filter to give (CONFIG_CHECKPOINT_RESTORE), or the "
                       "thread has none";
        case -ETIMEDOUT:
                return "the thread did not stop within a second of being interrupted";
        default:
                snprintf(buf, n, "%s", strerror(-r));
                return buf;
        }
}

/* A thread of pid that can be read: pid itself, unless it is a zombie leader, then one of its
 * live threads (kb_inspect_read_through); 0 when none lives. */
static pid_t thread_to_read(const kb_inspect_target *t, pid_t pid, const char *state) {
        pid_t tid = kb_inspect_read_through(t->proc_root, pid, state);
        return tid == pid && state && state[0] == 'Z' ? 0 : tid;
}

/* FILTER_DIFFs of what the filters in force answer otherwise than kbound's program. -ENOMEM. */
static int difference_facts(const kb_seccomp_prog *built, const filters *f, json_object *o) {
        kb_seccomp_prog in_force[FILTERS_MAX];
        for (size_t i = 0; i < f->n; i++)
                in_force[i] = (kb_seccomp_prog){.insns = f->prog[i], .len = f->len[i]};
        kb_seccomp_difference diffs[DIFFERENCES_KEPT];
        size_t found = 0;
        if (kb_seccomp_compare(built, in_force, f->n, diffs, DIFFERENCES_KEPT, &found) < 0)
                return kb_fact_set_str(o, FACT_FILTER_ERROR, "a filter in force cannot be run as a seccomp program");
        json_object *list = json_object_new_array();
        if (!list || kb_fact_set_arr(o, FACT_FILTER_DIFFERENCES, list) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < found && i < DIFFERENCES_KEPT; i++) {
                char built_text[48], in_force_text[48];
                json_object *d = json_object_new_object();
                if (!d || kb_inspect_push(list, d) < 0 ||
                    kb_fact_set_str(d, FACT_FILTER_DIFF_ABI, kb_sysabi_name(diffs[i].abi)) < 0 ||
                    kb_fact_set_str(d, FACT_FILTER_DIFF_CALL, diffs[i].call) < 0 ||
                    kb_fact_set_int(d, FACT_FILTER_DIFF_NR, diffs[i].nr) < 0 ||
                    kb_fact_set_str(d, FACT_FILTER_DIFF_BUILT,
                                    kb_seccomp_action_text(diffs[i].built, built_text, sizeof built_text)) < 0 ||
                    kb_fact_set_str(d, FACT_FILTER_DIFF_IN_FORCE,
                                    kb_seccomp_action_text(diffs[i].in_force, in_force_text, sizeof in_force_text)) < 0)
                        return -ENOMEM;
        }
        if (found > DIFFERENCES_KEPT &&
            kb_fact_set_int(o, FACT_FILTER_DIFFERENCES_MORE, (int64_t) (found - DIFFERENCES_KEPT)) < 0)
                return -ENOMEM;
        return 0;
}

/* The FILTER facts of filters read against kbound's program. -ENOMEM. */
static int compare_facts(const kb_inspect_target *t, const filters *f, json_object *o) {
        const struct sock_filter *built = t->seccomp_program;
        size_t built_len = t->seccomp_program_len / sizeof *built;
        json_object *lengths = json_object_new_array();
        if (!lengths || kb_fact_set_arr(o, FACT_FILTER_LENGTHS, lengths) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < f->n; i++)
                if (kb_inspect_push(lengths, json_object_new_int64((int64_t) f->len[i])) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < f->n; i++)
                if (f->len[i] == built_len && memcmp(f->prog[i], built, t->seccomp_program_len) == 0)
                        return kb_fact_set_int(o, FACT_FILTER_KBOUND, (int64_t) i);
        /* none is kbound's: where the oldest (the one bwrap loaded first) parts from it, and what that
         * changes, call by call, ABI by ABI */
        if (f->n > 0) {
                size_t at = 0, shorter = f->len[0] < built_len ? f->len[0] : built_len;
                while (at < shorter && memcmp(&f->prog[0][at], &built[at], sizeof *built) == 0)
                        at++;
                if (kb_fact_set_int(o, FACT_FILTER_FIRST_DIFFERENCE, (int64_t) at) < 0)
                        return -ENOMEM;
        }
        const kb_seccomp_prog kbound = {.insns = built, .len = built_len};
        return f->n > 0 ? difference_facts(&kbound, f, o) : 0;
}

int kb_inspect_filter_facts(const kb_inspect_target *t, pid_t pid, json_object *proc) {
        if (!t->seccomp_program || t->seccomp_program_len == 0 || !kb_fact_bool_of(t->host, FACT_HOST_FILTER_READ))
                return 0;
        pid_t tid = thread_to_read(t, pid, kb_fact_str_of(proc, FACT_PROCESS_STATE));
        if (tid == 0)
                return 0; /* a zombie: it makes no calls */
        json_object *o = json_object_new_object();
        if (!o || kb_fact_set_obj(proc, FACT_PROCESS_FILTER, o) < 0 || kb_fact_set_int(o, FACT_FILTER_TID, tid) < 0 ||
            kb_fact_set_int(o, FACT_FILTER_BUILT, (int64_t) (t->seccomp_program_len / sizeof(struct sock_filter))) < 0)
                return -ENOMEM;
        filters f = {.n = 0};
        int r = read_filters(tid, &f);
        if (r == -ESRCH)
                return -ESRCH;
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                char buf[128];
                return kb_fact_set_str(o, FACT_FILTER_ERROR, read_error(r, buf, sizeof buf));
        }
        r = compare_facts(t, &f, o);
        filters_free(&f);
        return r;
}

/* ---- what the host can do (kbound's own facts) ---- */

/* The child probe_filter_read reads: loads a one-instruction filter, says whether it did ('x', or
 * 'e') and waits to be read and killed. */
static int load_and_wait(int answer_fd, void *arg) {
        (void) arg;
        struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        struct sock_fprog prog = {.len = 1, .filter = &allow};
        char c = 'x';
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                c = 'e';
        if (write(answer_fd, &c, 1) != 1)
                return 1;
        for (;;)
                pause();
}

/* Whether the host can read the filters in force: the same read, of a child of kbound's own that
 * loads a one-instruction filter and waits. Returns 1 (it can), 0 (why says why not), -errno. */
static int probe_filter_read(char *why, size_t n) {
        char c = 0;
        ssize_t got;
        pid_t pid = kb_child_answer(load_and_wait, NULL, &c, 1, &got);
        if (pid < 0)
                return pid;
        int r = 0;
        filters f = {.n = 0};
        if (got != 1 || c != 'x') {
                snprintf(why, n, "a child of kbound's could not load a filter to read");
        } else {
                r = read_filters(pid, &f);
                if (r == 0 && (f.n != 1 || f.len[0] != 1 || f.prog[0][0].k != SECCOMP_RET_ALLOW))
                        snprintf(why, n, "the read of a child of kbound's gave another filter than it loaded");
                else if (r == 0)
                        r = 1;
                else {
                        char buf[128];
                        snprintf(why, n, "%s", read_error(r, buf, sizeof buf));
                        r = 0;
                }
        }
        filters_free(&f);
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
                ;
        return r;
}

int kb_inspect_filter_access(json_object *h) {
        char why[256] = "";
        int r = probe_filter_read(why, sizeof why);
        if (r < 0)
                snprintf(why, sizeof why, "not known: %s", strerror(-r));
        if (kb_fact_set_bool(h, FACT_HOST_FILTER_READ, r == 1) < 0 ||
            (r != 1 && kb_fact_set_str(h, FACT_HOST_FILTER_READ_WHY, why) < 0))
                return -ENOMEM;
        return 0;
}

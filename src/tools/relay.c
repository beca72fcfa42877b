/* relay.c: kbound-syscall-probe --relay, kbound's byte relay for kernels that speak only TCP: it
 * listens on unix sockets in the sandbox's socket folder, where kbound connects as to any ipc
 * kernel, and carries each connection's bytes to the kernel's TCP port on the sandbox's own
 * loopback and back (ZMTP is the same byte stream over both; docs/transports.md). */
#include "relay.h"
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define RELAY_PORTS_MAX 8
#define RELAY_PAIRS_MAX 64
#define RELAY_BUF 16384
/* How often a connection whose kernel port did not answer yet tries again: kbound's side stays
 * connected meanwhile (ZMTP waits for the greeting), so the kernel is reached once it listens. */
#define RELAY_RETRY_MS 20
/* Once the kernel is gone, how long the relay may take to pass on what it had already sent (its
 * last reply, a shutdown_reply) before it exits too, letting bwrap's init end the sandbox. */
#define RELAY_DRAIN_MS 1000

static volatile sig_atomic_t kernel_gone;

static void on_kernel_gone(int sig) {
        (void) sig;
        kernel_gone = 1;
}

/* One of kbound's connections and the relay's TCP connection to the kernel's port for it. */
typedef struct pair {
        int unix_fd, tcp_fd; /* tcp_fd -1: waiting to try again at retry_at */
        int port;
        int64_t retry_at;
        bool connecting;
        bool unix_eof, tcp_eof;
        size_t to_tcp_len, to_unix_len;
        char to_tcp[RELAY_BUF], to_unix[RELAY_BUF];
} pair;

static void pair_close(pair *p) {
        if (p->unix_fd >= 0)
                close(p->unix_fd);
        if (p->tcp_fd >= 0)
                close(p->tcp_fd);
        p->unix_fd = p->tcp_fd = -1;
}

/* Moves what buf holds to fd. false: the connection is broken. */
static bool flush(int fd, char *buf, size_t *len) {
        while (*len > 0) {
                ssize_t n = send(fd, buf, *len, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN;
                memmove(buf, buf + n, *len - (size_t) n);
                *len -= (size_t) n;
        }
        return true;
}

/* Reads what fd has into buf (empty before). false: broken; *eof at end of stream. */
static bool fill(int fd, char *buf, size_t *len, bool *eof) {
        ssize_t n;
        do
                n = recv(fd, buf, RELAY_BUF, MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return errno == EAGAIN;
        if (n == 0)
                *eof = true;
        *len = (size_t) n;
        return true;
}

static int64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Starts p's TCP connection to 127.0.0.1:p->port. false: no socket could be made. */
static bool tcp_start(pair *p) {
        p->tcp_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (p->tcp_fd < 0)
                return false;
        struct sockaddr_in to = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t) p->port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        p->connecting = true;
        if (connect(p->tcp_fd, (struct sockaddr *) &to, sizeof to) < 0 && errno != EINPROGRESS) {
                close(p->tcp_fd);
                p->tcp_fd = -1;
                p->retry_at = now_ms() + RELAY_RETRY_MS;
        }
        return true;
}

/* One step of p after poll: false when it is over (both ends closed, or broken). */
static bool pair_step(pair *p, short unix_ev, short tcp_ev) {
        if (p->tcp_fd < 0) {
                /* kbound's end gone while waiting: over; else try again when it is time */
                if (unix_ev & (POLLHUP | POLLERR))
                        return false;
                return now_ms() < p->retry_at || tcp_start(p);
        }
        if (p->connecting) {
                if (!(tcp_ev & (POLLOUT | POLLERR | POLLHUP)))
                        return true;
                int err = 0;
                socklen_t len = sizeof err;
                if (getsockopt(p->tcp_fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                        return false;
                if (err) { /* the kernel does not listen yet: again a little later */
                        close(p->tcp_fd);
                        p->tcp_fd = -1;
                        p->retry_at = now_ms() + RELAY_RETRY_MS;
                        return true;
                }
                p->connecting = false;
                return true;
        }
        if ((unix_ev & (POLLIN | POLLHUP | POLLERR)) && p->to_tcp_len == 0 && !p->unix_eof &&
            !fill(p->unix_fd, p->to_tcp, &p->to_tcp_len, &p->unix_eof))
                return false;
        if ((tcp_ev & (POLLIN | POLLHUP | POLLERR)) && p->to_unix_len == 0 && !p->tcp_eof &&
            !fill(p->tcp_fd, p->to_unix, &p->to_unix_len, &p->tcp_eof))
                return false;
        if (!flush(p->tcp_fd, p->to_tcp, &p->to_tcp_len) || !flush(p->unix_fd, p->to_unix, &p->to_unix_len))
                return false;
        /* An end that closed is passed on once what it sent has gone; one that hung up whole (it
         * reads no more either) ends the pair, or poll would report it again at once. */
        if (p->unix_eof && p->to_tcp_len == 0) {
                (void) shutdown(p->tcp_fd, SHUT_WR);
                if (unix_ev & (POLLHUP | POLLERR))
                        return false;
        }
        if (p->tcp_eof && p->to_unix_len == 0) {
                (void) shutdown(p->unix_fd, SHUT_WR);
                if (tcp_ev & (POLLHUP | POLLERR))
                        return false;
        }
        return !(p->unix_eof && p->tcp_eof && p->to_tcp_len == 0 && p->to_unix_len == 0);
}

/* A connection accepted on listener i: the relay's TCP connection to 127.0.0.1:port started. */
static void accept_one(int listener, int port, pair *pairs, size_t *n) {
        int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
                return;
        if (*n == RELAY_PAIRS_MAX) {
                close(fd);
                return;
        }
        pair *p = &pairs[*n];
        *p = (pair){.unix_fd = fd, .tcp_fd = -1, .port = port};
        if (!tcp_start(p)) {
                close(fd);
                return;
        }
        (*n)++;
}

/* The relay's loop: it ends once the kernel (its parent) has, told by the parent-death signal, and
 * what the kernel sent before has been passed on (or RELAY_DRAIN_MS passed). */
static void relay_loop(const int *listeners, const int *ports, size_t n_ports) {
        static pair pairs[RELAY_PAIRS_MAX];
        size_t n = 0;
        int64_t drain_until = -1;
        for (;;) {
                if (kernel_gone && drain_until < 0) {
                        drain_until = now_ms() + RELAY_DRAIN_MS;
                        n_ports = 0; /* no new connection: nothing will answer it */
                }
                if (drain_until >= 0 && (n == 0 || now_ms() >= drain_until))
                        return;
                struct pollfd pfd[RELAY_PORTS_MAX + 2 * RELAY_PAIRS_MAX];
                size_t k = 0;
                bool waiting = false;
                for (size_t i = 0; i < n_ports; i++)
                        pfd[k++] = (struct pollfd){.fd = listeners[i], .events = POLLIN};
                for (size_t i = 0; i < n; i++) {
                        pair *p = &pairs[i];
                        short ue = 0, te = 0;
                        if (p->connecting)
                                te = POLLOUT;
                        else {
                                if (p->to_tcp_len == 0 && !p->unix_eof)
                                        ue |= POLLIN;
                                if (p->to_unix_len > 0)
                                        ue |= POLLOUT;
                                if (p->to_unix_len == 0 && !p->tcp_eof)
                                        te |= POLLIN;
                                if (p->to_tcp_len > 0)
                                        te |= POLLOUT;
                        }
                        pfd[k++] = (struct pollfd){.fd = p->unix_fd, .events = ue};
                        pfd[k++] = (struct pollfd){.fd = p->tcp_fd, .events = te}; /* -1: ignored */
                        if (p->tcp_fd < 0)
                                waiting = true;
                }
                int timeout = waiting ? RELAY_RETRY_MS : drain_until >= 0 ? 50 : -1;
                if (poll(pfd, k, timeout) < 0) {
                        if (errno == EINTR)
                                continue;
                        _exit(1);
                }
                /* the pairs polled this round, stepped by their own results; then the accepted */
                size_t polled = n;
                bool over[RELAY_PAIRS_MAX] = {false};
                for (size_t i = 0; i < polled; i++)
                        over[i] = !pair_step(&pairs[i], pfd[n_ports + 2 * i].revents, pfd[n_ports + 2 * i + 1].revents);
                size_t kept = 0;
                for (size_t i = 0; i < n; i++) {
                        if (over[i])
                                pair_close(&pairs[i]);
                        else if (kept++ != i)
                                pairs[kept - 1] = pairs[i];
                }
                n = kept;
                for (size_t i = 0; i < n_ports; i++)
                        if (pfd[i].revents & POLLIN)
                                accept_one(listeners[i], ports[i], pairs, &n);
        }
}

/* "P1,P2,...": at most RELAY_PORTS_MAX ports, each 1..65535. Returns how many, 0 on error. */
static size_t parse_ports(const char *s, int *ports) {
        size_t n = 0;
        while (*s && n < RELAY_PORTS_MAX) {
                char *end;
                errno = 0;
                long v = strtol(s, &end, 10);
                if (errno || end == s || v < 1 || v > 65535 || (*end && *end != ','))
                        return 0;
                ports[n++] = (int) v;
                s = *end ? end + 1 : end;
        }
        return *s ? 0 : n;
}

int relay_main(int argc, char **argv) {
        int ports[RELAY_PORTS_MAX], listeners[RELAY_PORTS_MAX];
        size_t n = argc >= 6 ? parse_ports(argv[3], ports) : 0;
        if (n == 0 || strcmp(argv[4], "--") != 0) {
                fprintf(stderr, "kbound-syscall-probe: usage: %s --relay PREFIX PORT,... -- ARGV...\n", argv[0]);
                return 127;
        }
        /* The listeners first, where kbound looks for the kernel's ipc sockets ("PREFIX-PORT"),
         * before the kernel's program runs: kbound's sockets reconnect until the kernel listens. */
        for (size_t i = 0; i < n; i++) {
                struct sockaddr_un a = {.sun_family = AF_UNIX};
                int w = snprintf(a.sun_path, sizeof a.sun_path, "%s-%d", argv[2], ports[i]);
                listeners[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (w < 0 || (size_t) w >= sizeof a.sun_path || listeners[i] < 0 ||
                    bind(listeners[i], (struct sockaddr *) &a, sizeof a) < 0 || listen(listeners[i], 16) < 0) {
                        fprintf(stderr, "kbound-syscall-probe: --relay cannot listen on %s: %s\n", a.sun_path,
                                strerror(errno));
                        return 127;
                }
        }
        pid_t kernel = getpid();
        pid_t relay = fork();
        if (relay < 0) {
                fprintf(stderr, "kbound-syscall-probe: --relay cannot fork: %s\n", strerror(errno));
                return 127;
        }
        if (relay == 0) {
                /* The relay ends with the kernel, its parent (SIGTERM when it dies, then what it
                 * sent is passed on); it has nothing of the kernel's but stdio (the kernel's log). */
                struct sigaction sa = {.sa_handler = on_kernel_gone};
                sigemptyset(&sa.sa_mask);
                if (sigaction(SIGTERM, &sa, NULL) < 0 || prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != kernel)
                        _exit(0);
                (void) prctl(PR_SET_NAME, "kbound-relay");
                signal(SIGPIPE, SIG_IGN);
                signal(SIGINT, SIG_IGN); /* the kernel's interrupts are the kernel's */
                int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (devnull >= 0) {
                        dup2(devnull, STDIN_FILENO);
                        close(devnull);
                }
                relay_loop(listeners, ports, n);
                _exit(0);
        }
        for (size_t i = 0; i < n; i++)
                close(listeners[i]);
        execvp(argv[5], argv + 5);
        fprintf(stderr, "kbound-syscall-probe: cannot run %s: %s\n", argv[5], strerror(errno));
        return 127;
}

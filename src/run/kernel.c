/* kernel.c: one running kernel: team folders, connection file, launch, client, teardown. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "kbound/connection.h"
#include "base/cleanup.h"
#include "kbound/kernel.h"
#include "kbound/secrets.h"
#include "base/jsonget.h"
#include "sandbox/sandbox-internal.h"
#include "run/kernel-internal.h"

#define CONNECTION_FILE "kernel.json"
#define LOG_FILE "kernel.log"
/* The folder of the teams' copies of kbound's own programs (one folder a team), and the syscall
 * probe's and the boundary probe's names in it. */
#define TOOLS_DIR "tools"
#define PROBE_COPY "syscall-probe"
#define BOUNDARY_COPY "probe"
/* kbound's static programs are about 1 MiB each; anything far larger is not one of them. */
#define PROBE_COPY_MAX (64u << 20)

/* The ports a TCP-only kernel binds on the sandbox's own loopback, one per channel: the sandbox
 * has its own network namespace, so fixed ports meet nothing; unprivileged ones, as the kernel
 * holds no capability. */
#define RELAY_PORT_BASE 9001

static char *path_join(const char *a, const char *b) {
        char *p = NULL;
        if (asprintf(&p, "%s/%s", a, b) < 0)
                return NULL;
        return p;
}

static int mkdir_private(const char *path) {
        if (mkdir(path, 0700) < 0)
                return -errno;
        return 0;
}

static bool switches(const kb_sandbox_user *u) {
        return u && u->switch_user;
}

/* Resolves a command name through the PATH found in env, as bwrap does inside the sandbox. */
static char *resolve_command(const char *name, char *const *env) {
        if (strchr(name, '/'))
                return strdup(name);
        const char *path = "/usr/local/bin:/usr/bin:/bin";
        for (char *const *e = env; e && *e; e++)
                if (strncmp(*e, "PATH=", 5) == 0)
                        path = *e + 5;
        const char *p = path;
        while (*p) {
                const char *end = strchrnul(p, ':');
                char *candidate = NULL;
                if (asprintf(&candidate, "%.*s/%s", (int) (end - p), p, name) < 0)
                        return NULL;
                if (access(candidate, X_OK) == 0)
                        return candidate;
                free(candidate);
                p = *end ? end + 1 : end;
        }
        return NULL;
}

/* Unsandboxed launch, for protocol debugging only. The child gets its own session (so the whole
 * group can be killed), the same minimal environment a sandboxed kernel gets, and the same user,
 * keyring and parent-death set-up (kb_sandbox_spawn): never root, even here. */
static int launch_plain(kb_kernel *k, char *const *argv, char *const *env, const kb_sandbox_user *user) {
        _cleanup_free_ char *program = resolve_command(argv[0], env);
        /* Checked here too for a path, so a missing program is named, not seen as exit 127. */
        if (!program || access(program, X_OK) < 0)
                return -ENOENT;
        _cleanup_close_ int log_fd = open(k->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (log_fd < 0)
                return -errno;
        kb_spawn_options so = kb_spawn_options_kernel(log_fd, user);
        so.new_session = true;
        so.chdir_to = k->workspace;
        pid_t pid;
        int r = kb_sandbox_spawn(program, argv, env, &so, &pid);
        if (r < 0)
                return r;
        k->child = pid;
        k->child_pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (k->child_pidfd < 0) {
                r = -errno;
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                k->child = 0;
                return r;
        }
        return 0;
}

/* Environment for an unsandboxed kernel: paths that only exist inside the sandbox become the
 * team's host folders. */
static char **env_unsandboxed(char **env, const char *workspace) {
        for (char **e = env; *e; e++) {
                if (strncmp(*e, "HOME=", 5) == 0 || strncmp(*e, "TMPDIR=", 7) == 0) {
                        char *n = NULL;
                        if (asprintf(&n, "%.*s%s", (int) (strchr(*e, '=') - *e + 1), *e, workspace) < 0)
                                return NULL;
                        free(*e);
                        *e = n;
                }
        }
        return env;
}

/* kb_msg's strings are never NULL: an absent field reads as "". */
static const char *or_empty(const char *s) {
        return s ? s : "";
}

/* Between the client and the caller's hook: the kernel can read its own connection file and echo
 * the key (in a banner, in a cell's output), and whoever records messages must never write it.
 * A message containing the key (or a fragment of it) is handed on as a copy with it replaced; one
 * that cannot be redacted (out of memory) is handed on as NULL, so the recorder counts it lost. */
static void kernel_on_msg(void *userdata, kb_channel channel, const char *direction, const kb_msg *msg) {
        kb_kernel *k = userdata;
        if (!k->key_secret) {
                k->on_msg(k->on_msg_userdata, channel, direction, msg);
                return;
        }
        kb_msg copy = *msg;
        copy.header = kb_secrets_redact(k->key_secret, msg->header);
        copy.parent_header = kb_secrets_redact(k->key_secret, msg->parent_header);
        copy.metadata = kb_secrets_redact(k->key_secret, msg->metadata);
        copy.content = kb_secrets_redact(k->key_secret, msg->content);
        if ((msg->header && !copy.header) || (msg->parent_header && !copy.parent_header) ||
            (msg->metadata && !copy.metadata) || (msg->content && !copy.content)) {
                k->on_msg(k->on_msg_userdata, channel, direction, NULL);
                goto out;
        }
        /* The borrowed strings must come from the redacted header too. */
        copy.msg_id = or_empty(kb_json_str(copy.header, "msg_id"));
        copy.msg_type = or_empty(kb_json_str(copy.header, "msg_type"));
        copy.parent_msg_id = or_empty(kb_json_str(copy.parent_header, "msg_id"));
        k->on_msg(k->on_msg_userdata, channel, direction, &copy);
out:
        json_object_put(copy.header);
        json_object_put(copy.parent_header);
        json_object_put(copy.metadata);
        json_object_put(copy.content);
}

/* r as an error: what, the errno's words and the end of the kernel's log. Returns r. */
static int start_error(kb_kernel *k, int r, const char *what, kb_error **ret_error) {
        if (!ret_error)
                return r;
        _cleanup_free_ char *tail = kb_kernel_log_tail(k, 600);
        return kb_error_make(ret_error, r, "%s: %s%s%s", what, strerror(-r), tail && *tail ? "; kernel log: " : "",
                             tail ? tail : "");
}

/* Why readiness failed (r), as an error: death (with the exit status), silence, or the message
 * that failed verification, named by channel and reason rather than by a bare errno. Returns r. */
static int not_ready_error(kb_kernel *k, int r, kb_error **ret_error) {
        if (!ret_error)
                return r;
        if (r == -ESRCH) {
                _cleanup_free_ char *death = kb_kernel_death_words(k, 600, kb_now_ms() + 1000, true);
                return kb_error_make(ret_error, r, "kernel exited during start-up: %s", death ? death : "");
        }
        if (r == -ETIMEDOUT) {
                /* A start-up timeout is its own finding: what the log holds by then (debugpy's
                 * frozen-modules warning, say) is context, not a cause anyone found. */
                _cleanup_free_ char *tail = kb_kernel_log_tail(k, 600);
                return kb_error_make(
                        ret_error, r, "kernel did not answer kernel_info in time (a start-up timeout)%s%s%s",
                        kb_kernel_tcp_hint(k), tail && *tail ? "; its log so far, for context: " : "; its log is empty",
                        tail && *tail ? tail : "");
        }
        if (r == -ECANCELED)
                return start_error(k, r, "cancelled", ret_error);
        kb_channel ch;
        char detail[192];
        kb_client_last_error(k->client, &ch, NULL);
        kb_client_error_detail(k->client, r, detail, sizeof(detail));
        _cleanup_free_ char *tail = kb_kernel_log_tail(k, 600);
        return kb_error_make(ret_error, r, "kernel sent a bad message on %s during start-up: %s%s%s",
                             kb_channel_name(ch), detail, tail && *tail ? "; kernel log: " : "", tail ? tail : "");
}

/* Makes folder (0700, searchable by the sandbox user's group when kbound switches to it); an
 * existing one is kept when shared is true (teams/ and tools/ hold every team's folder). */
static int mkdir_pass_through(const kb_sandbox_user *user, const char *folder, bool shared) {
        if (mkdir(folder, 0700) < 0)
                return errno == EEXIST && shared ? 0 : -errno;
        return kb_sandbox_user_pass_through(user, folder);
}

/* The team's read-only copies of kbound's programs, in base_dir/tools/<team>/: bwrap runs as
 * the sandbox user and binds it by path, and that user may not reach the original (a build tree
 * under root's 0700 home); nor can every bwrap bind a descriptor (--ro-bind-fd is bwrap 0.10+ and
 * a Debian 12 backport, which still fails when the user cannot reach the file's folder). The
 * folders are kbound's, searchable by the sandbox user's group alone, and outside teams/: the
 * copy is no team's folder, and no team can write it. Returns 0 or -errno with an error. */
static int copy_probes(kb_kernel *k, const kb_kernel_options *o, kb_error **ret_error) {
        _cleanup_free_ char *tools = path_join(o->base_dir, TOOLS_DIR);
        k->tools_dir = tools ? path_join(tools, o->team) : NULL;
        if (k->tools_dir && o->syscall_probe)
                k->probe_copy = path_join(k->tools_dir, PROBE_COPY);
        if (k->tools_dir && o->boundary_probe)
                k->boundary_copy = path_join(k->tools_dir, BOUNDARY_COPY);
        if (!k->tools_dir || (o->syscall_probe && !k->probe_copy) || (o->boundary_probe && !k->boundary_copy))
                return -ENOMEM;
        int r = mkdir_pass_through(o->user, tools, true);
        if (r >= 0)
                r = mkdir_pass_through(o->user, k->tools_dir, false);
        if (r == -EEXIST) {
                free(k->tools_dir);
                k->tools_dir = NULL; /* not ours: never remove it */
        }
        const char *program = o->syscall_probe;
        if (r >= 0 && o->syscall_probe)
                r = kb_copy_file(o->syscall_probe, k->probe_copy, 0555, PROBE_COPY_MAX);
        if (r >= 0 && o->boundary_probe) {
                program = o->boundary_probe;
                r = kb_copy_file(o->boundary_probe, k->boundary_copy, 0555, PROBE_COPY_MAX);
        }
        if (r < 0)
                return kb_error_make(ret_error, r, "cannot copy kbound's probe %s into %s/%s: %s",
                                     program ? program : "programs", tools, o->team, strerror(-r));
        return 0;
}

/* What one start holds until the kernel answers: its connection file's paths and the kernel's
 * argv and environment. */
typedef struct start_state {
        char *conn_path;     /* the connection file on the host: run/kernel.json */
        char *conn_inside;   /* and where a sandboxed kernel reads it (NULL: unsandboxed) */
        char *socket_prefix; /* the kernel's sockets, as the host reaches them */
        char **argv, **env;
} start_state;

static void start_done(start_state *s) {
        free(s->conn_path);
        free(s->conn_inside);
        free(s->socket_prefix);
        kb_strv_free(s->argv);
        kb_strv_free(s->env);
}

/* The team's folder, base_dir/teams/<team>, made afresh (teams/ is every team's) and searchable
 * by the sandbox user. Returns 0 or -errno, with an error when the team's folder cannot be made. */
static int make_team_dir(kb_kernel *k, const kb_kernel_options *o, kb_error **ret_error) {
        _cleanup_free_ char *teams = path_join(o->base_dir, "teams");
        if (!teams)
                return -ENOMEM;
        int r = mkdir_pass_through(o->user, teams, true);
        if (r < 0)
                return r;
        k->team_dir = path_join(teams, o->team);
        if (!k->team_dir)
                return -ENOMEM;
        r = mkdir_private(k->team_dir);
        if (r < 0) {
                free(k->team_dir);
                k->team_dir = NULL; /* not ours: never remove it */
                if (r == -EEXIST)
                        return kb_error_make(ret_error, r, "the team folder %s/%s already exists", teams, o->team);
                return kb_error_make(ret_error, r, "cannot create the team folder %s/%s: %s", teams, o->team,
                                     strerror(-r));
        }
        return kb_sandbox_user_pass_through(o->user, k->team_dir);
}

/* The team's copies of kbound-syscall-probe and kbound-probe (copy_probes) for a sandbox. Fail
 * closed: the tasks and memory limits kept inside the sandbox are set by the syscall probe. Returns 0, -ENOENT (limits
 * asked and no probe) or -errno, with an error. */
static int probe_ready(kb_kernel *k, const kb_kernel_options *o, kb_error **ret_error) {
        if (o->sandbox && !o->syscall_probe && o->hardening &&
            (o->hardening->limits.max[KB_LIMIT_TASKS] || o->hardening->limits.max[KB_LIMIT_MEMORY]))
                return kb_error_make(ret_error, ENOENT,
                                     "cannot enforce --tasks-max and --memory-max without kbound-syscall-probe "
                                     "(set KBOUND_SYSCALL_PROBE, or give both as none)");
        if (o->sandbox && (o->syscall_probe || o->boundary_probe))
                return copy_probes(k, o, ret_error);
        return 0;
}

/* The team's workspace (the sandbox user's), run/ and host/ (kbound's; run/ is handed over with
 * the connection file), and the kernel's log path in host/. Returns 0 or -errno. */
static int make_team_folders(kb_kernel *k, const kb_kernel_options *o) {
        k->workspace = path_join(k->team_dir, "workspace");
        k->runtime_dir = path_join(k->team_dir, "run");
        k->host_dir = path_join(k->team_dir, "host");
        if (!k->workspace || !k->runtime_dir || !k->host_dir)
                return -ENOMEM;
        k->log_path = path_join(k->host_dir, LOG_FILE);
        if (!k->log_path)
                return -ENOMEM;
        int r = mkdir_private(k->workspace);
        if (r >= 0)
                r = kb_sandbox_user_give(o->user, k->workspace);
        if (r >= 0)
                r = mkdir_private(k->runtime_dir);
        if (r >= 0)
                r = mkdir_private(k->host_dir);
        return r;
}

/* The kernel's connection (ipc, its sockets under run/) and its file in run/, handed to the
 * sandbox user with the folder; its key a secret of this object's from then on. Returns 0 or
 * -errno, with an error for all but running out of memory. */
static int write_connection(kb_kernel *k, const kb_kernel_options *o, start_state *s, kb_error **ret_error) {
        _cleanup_free_ char *ip_inside = NULL;
        s->socket_prefix = path_join(k->runtime_dir, SOCKET_PREFIX);
        s->conn_path = path_join(k->runtime_dir, CONNECTION_FILE);
        if (!s->socket_prefix || !s->conn_path)
                return -ENOMEM;
        /* A wrapper that shares the host's network (`kbound audit --transport tcp`): ports kbound
         * picks on 127.0.0.1, held bound until the launch so nothing else takes them. */
        int r = o->host_tcp && !o->sandbox ? kb_connection_new_tcp("127.0.0.1", &k->connection)
                                           : kb_connection_new_ipc(s->socket_prefix, &k->connection);
        if (r < 0 && o->host_tcp && !o->sandbox)
                return kb_error_make(ret_error, r, "cannot pick ports on 127.0.0.1: %s", strerror(-r));
        if (r < 0)
                return kb_error_make(ret_error, r, "%s",
                                     r == -ENAMETOOLONG ? "ipc socket path too long for sun_path (108 bytes): "
                                                          "use a shorter --runtime-dir"
                                                        : "cannot make a connection");
        /* A kernel that speaks only TCP reads a tcp connection file on the sandbox's loopback, with
         * the key and ports kbound's own (ipc) side has: the relay listens where kbound connects
         * and carries each connection to the port of the same number. */
        kb_connection file = *k->connection;
        const char *ip_file = NULL;
        if (k->tcp) {
                size_t used = 0;
                for (size_t i = 0; i < _KB_CHANNEL_MAX; i++) {
                        k->connection->ports[i] = RELAY_PORT_BASE + (int) i;
                        used += (size_t) snprintf(k->relay_ports + used, sizeof k->relay_ports - used, "%s%d",
                                                  i ? "," : "", k->connection->ports[i]);
                }
                file = *k->connection;
                file.transport = KB_TRANSPORT_TCP;
                ip_file = "127.0.0.1";
        }
        /* Inside the sandbox the runtime folder is KB_SANDBOX_RUNTIME: the kernel sees that path in
         * its connection file and creates its sockets there (a tmpfs of their own, the file copied
         * in by bwrap, when kb_sandbox_runtime_in_memory); host paths never reach it. */
        if (o->sandbox) {
                ip_inside = strdup(KB_SANDBOX_RUNTIME "/" SOCKET_PREFIX);
                s->conn_inside = strdup(KB_SANDBOX_RUNTIME "/" CONNECTION_FILE);
                if (!ip_inside || !s->conn_inside)
                        return -ENOMEM;
        }
        r = kb_connection_write(&file, ip_file ? ip_file : ip_inside, s->conn_path);
        if (r < 0)
                return kb_error_make(ret_error, r, "cannot write the connection file %s: %s", s->conn_path,
                                     strerror(-r));
        /* Written while run/ was still ours alone (kb_connection_write insists), then handed over
         * with the folder: the kernel reads the file and creates its sockets there. */
        r = kb_sandbox_user_give(o->user, s->conn_path);
        if (r >= 0)
                r = kb_sandbox_user_give(o->user, k->runtime_dir);
        if (r < 0)
                return kb_error_make(ret_error, r, "cannot hand the runtime folder to the sandbox user");
        /* From here on the kernel can read its key: everything kernel-controlled this object hands
         * out (errors, log tails, kernel_info, transcript messages) is redacted with it. */
        if (k->connection->key && *k->connection->key &&
            (kb_secrets_new(&k->key_secret) < 0 ||
             kb_secrets_add_token(k->key_secret, "connection-key", k->connection->key) < 0))
                return -ENOMEM;
        return 0;
}

/* Everything a kernel needs before it is launched: never as root, the team's folders, the
 * syscall probe's copy, the connection file, the kernel's argv and environment. Returns 0 or
 * -errno (with an error where there are words for it). */
static int start_prepare(kb_kernel *k, const kb_kernel_options *o, start_state *s, kb_error **ret_error) {
        /* The promise every caller relies on: no kernel runs as the host's root. */
        if (!switches(o->user) && geteuid() == 0)
                return kb_error_make(ret_error, EPERM,
                                     "kbound is root and no unprivileged sandbox user was given: a kernel never "
                                     "runs as root");
        /* A kernel that speaks only TCP needs IP sockets (on its own loopback: boundary.network
         * still holds it to that) and kbound's relay, which is kbound-syscall-probe. */
        k->hardened = o->hardening != NULL;
        if (o->hardening)
                k->hardening = *o->hardening;
        k->tcp = o->sandbox && (o->spec->tcp_only || o->tcp);
        if (k->tcp && !o->syscall_probe)
                return kb_error_make(ret_error, ENOENT,
                                     "kernel %s speaks TCP (%s), and kbound's relay for it is kbound-syscall-probe, "
                                     "which was not found",
                                     o->spec->name, o->tcp ? "--transport tcp" : "its kernelspec's metadata");
        if (k->tcp) {
                k->hardened = true;
                k->hardening.seccomp.sockets = KB_SECCOMP_SOCKETS_INET;
        }
        int r = make_team_dir(k, o, ret_error);
        if (r >= 0)
                r = probe_ready(k, o, ret_error);
        if (r >= 0)
                r = make_team_folders(k, o);
        if (r >= 0)
                r = write_connection(k, o, s, ret_error);
        if (r >= 0)
                r = kb_kernelspec_argv(o->spec, s->conn_inside ? s->conn_inside : s->conn_path, &s->argv);
        if (r >= 0)
                r = kb_sandbox_env(o->host_env, o->spec->env, &s->env);
        return r;
}

/* The kernel launched in its sandbox (kb_sandbox_launch), its error's words redacted: they can
 * quote the kernel's log. Returns 0, -EPERM (bwrap ran, but what it built is not the sandbox asked
 * for: no pid namespace in its report, or PID 2 not what it should be; a leaky sandbox, not a
 * missing one), or -errno. */
static int launch_sandboxed(kb_kernel *k, const kb_kernel_options *o, const start_state *s, kb_error **ret_error) {
        kb_sandbox_policy policy = {
                .team = o->team,
                .workspace = k->workspace,
                .runtime_dir = k->runtime_dir,
                .connection_file = s->conn_path,
                .rootfs = o->rootfs,
                .allow_network = o->allow_network,
                .ro_paths = o->ro_paths,
                .env = s->env,
                .bwrap = o->bwrap,
                .user = o->user,
                .hardening = k->hardened ? &k->hardening : NULL,
                .syscall_probe = k->probe_copy,
                .boundary_probe = k->boundary_copy,
                .relay_prefix = kb_kernel_relay_prefix(k),
                .relay_ports = k->relay_ports,
                .before_exec = o->before_exec,
                .before_exec_userdata = o->before_exec_userdata,
        };
        int r = kb_sandbox_launch(&policy, s->argv, k->log_path, o->deadline_ms, &k->sandbox, ret_error);
        if (r >= 0)
                return r;
        /* Without memory for the redacted words the error keeps none (its errno's), never the key. */
        if (ret_error && *ret_error)
                (void) kb_kernel_redact_in_place(k, &(*ret_error)->msg, NULL);
        if (r == -EPROTO || r == -EPERM) {
                r = -EPERM;
                if (ret_error && *ret_error)
                        (*ret_error)->err = EPERM;
        }
        return r;
}

/* The kernel launched unsandboxed (launch_plain), its environment's sandbox paths made the team's
 * host folders. Returns 0 or -errno, with an error naming the program. */
static int launch_unsandboxed(kb_kernel *k, const kb_kernel_options *o, const start_state *s, kb_error **ret_error) {
        if (!env_unsandboxed(s->env, k->workspace))
                return -ENOMEM;
        int r = launch_plain(k, s->argv, s->env, o->user);
        if (r < 0) {
                _cleanup_free_ char *what = NULL;
                if (asprintf(&what, "kernel program '%s' %s", s->argv[0],
                             r == -ENOENT ? "not found" : "cannot be started") < 0) {
                        what = NULL; /* asprintf leaves it undefined on failure */
                        return -ENOMEM;
                }
                return start_error(k, r, what, ret_error);
        }
        return 0;
}

/* The client on the kernel's sockets, and the kernel ready (kb_client_wait_ready). in_memory: the
 * sockets are in the sandbox's own tmpfs, reached through the descriptor the host opened before
 * the kernel ran; bwrap copied the connection file there before the kernel's program ran, so the
 * host's copy goes now. Returns 0 or -errno, with an error for all but running out of memory. */
static int start_client(kb_kernel *k, const kb_kernel_options *o, start_state *s, bool in_memory,
                        kb_error **ret_error) {
        if (in_memory) {
                (void) unlink(s->conn_path);
                if (asprintf(&k->socket_dir, "/proc/self/fd/%d", kb_sandbox_runtime_fd(k->sandbox)) < 0) {
                        k->socket_dir = NULL;
                        return -ENOMEM;
                }
                free(s->socket_prefix);
                s->socket_prefix = path_join(k->socket_dir, SOCKET_PREFIX);
                if (!s->socket_prefix)
                        return -ENOMEM;
        }
        kb_client_options copts = {
                .death_fd = kb_kernel_pidfd(k),
                .cancel_fd = o->cancel_fd,
        };
        if (o->on_msg) {
                k->on_msg = o->on_msg;
                k->on_msg_userdata = o->on_msg_userdata;
                copts.on_msg = kernel_on_msg;
                copts.on_msg_userdata = k;
        }
        int r = kb_client_new(k->connection, o->sandbox ? s->socket_prefix : NULL, &copts, &k->client);
        if (r < 0)
                return kb_error_make(ret_error, r, "cannot connect the client sockets");
        r = kb_client_wait_ready(k->client, o->deadline_ms, &k->info);
        if (r < 0)
                return not_ready_error(k, r, ret_error);
        return 0;
}

int kb_kernel_start(const kb_kernel_options *o, kb_kernel **ret, kb_error **ret_error) {
        kb_kernel *k = calloc(1, sizeof(*k));
        _cleanup_(start_done) start_state s = {0};
        /* The team names a folder under base_dir: "a/b" or ".." would name another one. */
        if (!kb_team_name_valid(o->team)) {
                free(k);
                return -EINVAL;
        }
        if (!k)
                return -ENOMEM;
        k->child_pidfd = -1;
        k->workspace_fd = -1;

        int r = start_prepare(k, o, &s, ret_error);
        if (r < 0)
                goto fail;
        int64_t launched = kb_now_ms();
        kb_connection_release_ports(k->connection); /* the kernel binds them now (a no-op for ipc) */
        r = o->launch ? o->launch(o->launch_userdata, k, s.argv, s.env, &k->sandbox, ret_error)
                      : (o->sandbox ? launch_sandboxed : launch_unsandboxed)(k, o, &s, ret_error);
        if (r < 0)
                goto fail;
        bool in_memory = k->sandbox && kb_sandbox_runtime_in_memory(o->hardening);
        r = start_client(k, o, &s, in_memory, ret_error);
        if (r < 0)
                goto fail;
        /* A kernel that answers has read its connection file: the key need not stay on disk,
         * where a kbound killed by SIGKILL would leave it (docs/faults.md). The client and this
         * object keep it in memory. */
        if (in_memory)
                (void) unlinkat(kb_sandbox_runtime_fd(k->sandbox), CONNECTION_FILE, 0);
        else
                (void) unlink(s.conn_path);
        /* kernel_info is the kernel's own words (implementation, banner): reports quote it. */
        if (kb_kernel_redact_json_in_place(k, &k->info) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        k->startup_ms = kb_now_ms() - launched;
        *ret = k;
        return 0;

fail:
        kb_kernel_destroy(&k, false);
        return r;
}

const kb_sandbox_hardening *kb_kernel_hardening(const kb_kernel *k) {
        return k->hardened ? &k->hardening : NULL;
}

const char *kb_kernel_relay_ports(const kb_kernel *k) {
        return k->tcp ? k->relay_ports : NULL;
}

const char *kb_kernel_relay_prefix(const kb_kernel *k) {
        return k->tcp ? KB_SANDBOX_RUNTIME "/" SOCKET_PREFIX : NULL;
}

const char *kb_kernel_relay_program(const kb_kernel *k) {
        return k->tcp ? k->probe_copy : NULL;
}

kb_client *kb_kernel_client(const kb_kernel *k) {
        return k->client;
}
kb_sandbox *kb_kernel_sandbox(const kb_kernel *k) {
        return k->sandbox;
}
json_object *kb_kernel_info(const kb_kernel *k) {
        return k->info;
}
const char *kb_kernel_team_dir(const kb_kernel *k) {
        return k->team_dir;
}
const char *kb_kernel_workspace(const kb_kernel *k) {
        return k->workspace;
}
const char *kb_kernel_runtime_dir(const kb_kernel *k) {
        return k->runtime_dir;
}
const char *kb_kernel_socket_dir(const kb_kernel *k) {
        return k->socket_dir ? k->socket_dir : k->runtime_dir;
}
const char *kb_kernel_host_dir(const kb_kernel *k) {
        return k->host_dir;
}
const char *kb_kernel_log_path(const kb_kernel *k) {
        return k->log_path;
}
int64_t kb_kernel_startup_ms(const kb_kernel *k) {
        return k->startup_ms;
}

int kb_kernel_tcp_port(const kb_kernel *k, kb_channel ch) {
        if (!k->connection || k->connection->transport != KB_TRANSPORT_TCP)
                return -ENOTSUP;
        return k->connection->ports[ch];
}

int kb_kernel_socket_path(const kb_kernel *k, kb_channel ch, char *buf, size_t size) {
        if (!k->connection || k->connection->transport != KB_TRANSPORT_IPC)
                return -ENOTSUP;
        char endpoint[PATH_MAX];
        int r = kb_connection_endpoint(k->connection, ch, k->sandbox ? KB_SANDBOX_RUNTIME "/" SOCKET_PREFIX : NULL,
                                       endpoint, sizeof endpoint);
        if (r < 0)
                return r;
        const char *path = strncmp(endpoint, "ipc://", 6) == 0 ? endpoint + 6 : endpoint;
        if ((size_t) snprintf(buf, size, "%s", path) >= size)
                return -ENAMETOOLONG;
        return 0;
}

int kb_kernel_signal(kb_kernel *k, int sig) {
        if (k->sandbox)
                return kb_sandbox_signal(k->sandbox, sig);
        if (k->child_pidfd < 0)
                return -ESRCH;
        if (syscall(SYS_pidfd_send_signal, k->child_pidfd, sig, NULL, 0) < 0)
                return -errno;
        return 0;
}

/* A kept team folder gets what the kernel left in a workspace of its own (a tmpfs, gone with the
 * descriptor), and host/workspace-copy.txt says what was copied and what was not. The kernel has
 * stopped: nothing writes there any more. */
static void save_workspace(kb_kernel *k) {
        int fd = kb_sandbox_workspace_fd(k->sandbox);
        if (fd < 0 || !k->workspace || !k->host_dir)
                return;
        struct stat in, host;
        if (fstat(fd, &in) < 0 || stat(k->workspace, &host) < 0 ||
            (in.st_dev == host.st_dev && in.st_ino == host.st_ino))
                return; /* the team's host folder itself was bound: nothing to copy */
        kb_workspace_copied c;
        int r = kb_sandbox_workspace_copy_out(fd, k->workspace, 0, kb_now_ms() + 30000, &c);
        _cleanup_free_ char *note = path_join(k->host_dir, "workspace-copy.txt");
        FILE *f = note ? fopen(note, "wxe") : NULL;
        if (!f)
                return;
        if (r < 0)
                fprintf(f, "the sandbox's /workspace could not be copied here: %s\n", strerror(-r));
        else
                fprintf(f,
                        "copied from the sandbox's /workspace (a tmpfs of its own) to ../workspace: %llu files, %llu "
                        "folders, %llu bytes; %llu entries left out (links, FIFOs, sockets, devices, unreadable)%s\n",
                        (unsigned long long) c.files, (unsigned long long) c.dirs, (unsigned long long) c.bytes,
                        (unsigned long long) c.skipped, c.truncated ? "; cut short (entries or time)" : "");
        fclose(f);
}

int kb_kernel_workspace_fd(kb_kernel *k) {
        if (!k)
                return -1;
        if (k->sandbox)
                return kb_sandbox_workspace_fd(k->sandbox);
        if (k->workspace_fd < 0 && k->workspace)
                k->workspace_fd = open(k->workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return k->workspace_fd;
}

void kb_kernel_destroy(kb_kernel **kp, bool keep) {
        if (!kp || !*kp)
                return;
        kb_kernel *k = *kp;
        kb_client_destroy(&k->client);
        kb_kernel_stop(k, 0, kb_now_ms() + 5000, NULL);
        if (keep && k->team_dir)
                save_workspace(k);
        kb_sandbox_destroy(&k->sandbox);
        kb_closep(&k->workspace_fd);
        if (k->child > 0) {
                kill(-k->child, SIGKILL);
                kill(k->child, SIGKILL);
                waitpid(k->child, NULL, 0);
        }
        kb_closep(&k->child_pidfd);
        kb_connection_destroy(&k->connection);
        kb_secrets_destroy(&k->key_secret);
        json_object_put(k->info);
        if (k->team_dir && !keep)
                kb_remove_tree(k->team_dir);
        if (k->tools_dir && !keep)
                kb_remove_tree(k->tools_dir);
        free(k->tools_dir);
        free(k->team_dir);
        free(k->workspace);
        free(k->runtime_dir);
        free(k->socket_dir);
        free(k->host_dir);
        free(k->probe_copy);
        free(k->boundary_copy);
        free(k->log_path);
        free(k);
        *kp = NULL;
}

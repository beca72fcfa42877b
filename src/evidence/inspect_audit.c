/* inspect_audit.c: which process is the kernel of a sandbox kbound did not build: the holder of the
 * kernel end of kbound's connections, found from the host as identity.pid2 finds it (sock_diag for
 * the other end of each of kbound's sockets, every descriptor table for who holds it). */
#include "kbound/inspect.h"
#include "base/cleanup.h"
#include "base/sockdiag.h"
#include "evidence/inspect-internal.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HOLDERS_MAX 64

/* A socket file of the kernel's folder, by device and inode. */
typedef struct sock_file {
        dev_t dev;
        uint32_t ino;
} sock_file;

typedef struct seen {
        const uint32_t *peers;
        size_t n_peers;
        pid_t pid;
        pid_t *holders; /* per peer: the first holder found (0: none), -1 when two hold it */
} seen;

static int own_socket(int fd, const char *target, void *userdata) {
        json_object *own = userdata;
        (void) fd;
        if (strncmp(target, "socket:[", 8) == 0)
                return kb_inspect_map_add(own, target, json_object_new_boolean(true));
        return 0;
}

static int peer_seen(int fd, const char *target, void *userdata) {
        seen *s = userdata;
        (void) fd;
        for (size_t i = 0; i < s->n_peers; i++) {
                char key[32];
                kb_inspect_socket_key(key, sizeof key, s->peers[i]);
                if (strcmp(key, target) != 0)
                        continue;
                if (s->holders[i] == 0)
                        s->holders[i] = s->pid;
                else if (s->holders[i] != s->pid)
                        s->holders[i] = -1;
        }
        return 0;
}

/* The socket files in dir (at most max), into files. Returns how many, or -errno. */
static int socket_files(const char *dir, sock_file *files, size_t max) {
        DIR *d = opendir(dir);
        if (!d)
                return -errno;
        size_t n = 0;
        struct dirent *de;
        while (n < max && (de = readdir(d))) {
                struct stat st;
                if (de->d_name[0] != '.' && fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISSOCK(st.st_mode))
                        files[n++] = (sock_file){st.st_dev, (uint32_t) st.st_ino};
        }
        closedir(d);
        return (int) n;
}

int kb_inspect_kernel_holder(const char *proc_root, const char *socket_dir, pid_t *ret_pid, size_t *ret_connections,
                             char *why, size_t why_size) {
        sock_file files[16];
        int nf = socket_files(socket_dir, files, 16);
        if (nf < 0) {
                snprintf(why, why_size, "cannot read the kernel's socket folder %s: %s", socket_dir, strerror(-nf));
                return nf;
        }
        _cleanup_free_ kb_sockdiag_unix *list = NULL;
        size_t n = 0;
        int r = kb_sockdiag_unix_list(-1, &list, &n);
        if (r < 0) {
                snprintf(why, why_size, "cannot list kbound's unix sockets (sock_diag): %s", strerror(-r));
                return r;
        }
        _cleanup_json_ json_object *own = json_object_new_object();
        if (!own)
                return -ENOMEM;
        r = kb_inspect_fd_targets(proc_root, getpid(), own_socket, own);
        if (r < 0) {
                snprintf(why, why_size, "cannot read kbound's own descriptors: %s", strerror(-r));
                return r;
        }
        /* The other end of each of kbound's sockets that is bound to a file of the kernel's folder. */
        uint32_t peers[HOLDERS_MAX];
        size_t n_peers = 0;
        for (size_t i = 0; i < n && n_peers < HOLDERS_MAX; i++) {
                char key[32];
                kb_inspect_socket_key(key, sizeof key, list[i].inode);
                if (!list[i].peer || !json_object_object_get_ex(own, key, NULL))
                        continue;
                const kb_sockdiag_unix *peer = kb_sockdiag_find(list, n, list[i].peer);
                for (int f = 0; peer && peer->has_file && f < nf; f++)
                        if (peer->file_dev == files[f].dev && peer->file_ino == files[f].ino) {
                                peers[n_peers++] = peer->inode;
                                break;
                        }
        }
        *ret_connections = n_peers;
        if (n_peers == 0) {
                snprintf(why, why_size, "kbound has no connection to a socket of %s", socket_dir);
                return -ENOENT;
        }
        pid_t holders[HOLDERS_MAX] = {0};
        seen s = {.peers = peers, .n_peers = n_peers, .holders = holders};
        DIR *d = opendir(proc_root);
        if (!d)
                return -errno;
        struct dirent *de;
        while ((de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0 || pid > INT_MAX || pid == getpid())
                        continue;
                s.pid = (pid_t) pid;
                /* Gone, or a table kbound may not read: such a holder is "none found" below. */
                (void) kb_inspect_fd_targets(proc_root, s.pid, peer_seen, &s);
        }
        closedir(d);
        pid_t kernel = 0;
        for (size_t i = 0; i < n_peers; i++) {
                if (holders[i] <= 0) {
                        snprintf(why, why_size,
                                 holders[i] == 0 ? "the kernel end of one of kbound's connections (socket %u) is held "
                                                   "by no process the host can read"
                                                 : "the kernel end of one of kbound's connections (socket %u) is held "
                                                   "by more than one process",
                                 peers[i]);
                        return -ESRCH;
                }
                if (kernel && holders[i] != kernel) {
                        snprintf(why, why_size,
                                 "the kernel ends of kbound's connections are held by different processes (%d and %d)",
                                 (int) kernel, (int) holders[i]);
                        return -EPERM;
                }
                kernel = holders[i];
        }
        *ret_pid = kernel;
        return 0;
}

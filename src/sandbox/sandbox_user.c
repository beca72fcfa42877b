/* sandbox_user.c: who the sandbox runs as on the host (never root), and what that user can reach. */
#include "kbound/sandbox.h"
#include "base/cleanup.h"
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PW_BUF_MAX (1 << 20)

/* getpwnam_r/getpwuid_r with a buffer that grows on ERANGE. name NULL: by uid. Returns 0, -ENOENT,
 * -errno. */
static int lookup(const char *name, uid_t uid, uid_t *ret_uid, gid_t *ret_gid, char *ret_name, size_t name_size) {
        size_t size = 1024;
        for (;;) {
                _cleanup_free_ char *buf = malloc(size);
                if (!buf)
                        return -ENOMEM;
                struct passwd pw, *found = NULL;
                int e = name ? getpwnam_r(name, &pw, buf, size, &found) : getpwuid_r(uid, &pw, buf, size, &found);
                if (e == ERANGE && size < PW_BUF_MAX) {
                        size *= 2;
                        continue;
                }
                if (e != 0)
                        return -e;
                if (!found)
                        return -ENOENT;
                *ret_uid = pw.pw_uid;
                *ret_gid = pw.pw_gid;
                snprintf(ret_name, name_size, "%s", pw.pw_name);
                return 0;
        }
}

int kb_sandbox_user_resolve(const char *name, kb_sandbox_user *ret) {
        if (!ret)
                return -EINVAL;
        kb_sandbox_user u = {0};
        bool root = geteuid() == 0;
        int r;
        if (name && *name) {
                r = lookup(name, 0, &u.uid, &u.gid, u.name, sizeof u.name);
                if (r < 0)
                        return r;
        } else if (root) {
                /* No fallback to a shared account such as nobody: a kernel running as a user other
                 * daemons run as (or whose files they own) shares their processes and files, and a
                 * missing dedicated user is a set-up to fix, said so, never silently worked around. */
                r = lookup(KB_SANDBOX_USER_DEFAULT, 0, &u.uid, &u.gid, u.name, sizeof u.name);
                if (r < 0)
                        return r;
        } else {
                u.uid = getuid();
                u.gid = getgid();
                if (lookup(NULL, u.uid, &u.uid, &u.gid, u.name, sizeof u.name) < 0) {
                        /* A CI user without a passwd entry (a container's arbitrary uid) is fine. */
                        u.uid = getuid();
                        u.gid = getgid();
                        snprintf(u.name, sizeof u.name, "uid %u", (unsigned) u.uid);
                }
        }
        /* The one promise this type exists for: the kernel never runs as the host's root. */
        if (u.uid == 0 || u.gid == 0)
                return -EPERM;
        if (!root && u.uid != getuid())
                return -EPERM;
        u.switch_user = root;
        *ret = u;
        return 0;
}

int kb_sandbox_user_can_reach(const kb_sandbox_user *user, const char *path, char **ret_blocker) {
        if (!user || !path || path[0] != '/' || strlen(path) >= PATH_MAX)
                return -EINVAL;
        char prefix[PATH_MAX];
        size_t len = strlen(path);
        /* Every ancestor and the path itself must be searchable by user: "/", "/a", "/a/b", ... */
        for (size_t i = 0; i <= len; i++) {
                if (i != len && path[i] != '/')
                        continue;
                size_t n = i == 0 ? 1 : i;
                memcpy(prefix, path, n);
                prefix[n] = '\0';
                struct stat st;
                if (stat(prefix, &st) < 0)
                        return -errno;
                if (!S_ISDIR(st.st_mode))
                        continue; /* the last component may be a file: reaching it is enough */
                mode_t need = st.st_uid == user->uid ? S_IXUSR : st.st_gid == user->gid ? S_IXGRP : S_IXOTH;
                if (!(st.st_mode & need)) {
                        if (ret_blocker) {
                                *ret_blocker = strdup(prefix);
                                if (!*ret_blocker)
                                        return -ENOMEM;
                        }
                        return 0;
                }
        }
        return 1;
}

int kb_sandbox_user_give(const kb_sandbox_user *user, const char *path) {
        if (user && user->switch_user && lchown(path, user->uid, user->gid) < 0)
                return -errno;
        return 0;
}

int kb_sandbox_user_pass_through(const kb_sandbox_user *user, const char *path) {
        if (!user || !user->switch_user)
                return 0;
        if (lchown(path, (uid_t) -1, user->gid) < 0 || chmod(path, 0710) < 0)
                return -errno;
        return 0;
}

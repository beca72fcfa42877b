/* image.c: an OCI image layout, OCI archive or docker archive unpacked into a private rootfs by
 * skopeo (copy, digests checked) and umoci (unpack), with its disk use bounded. */
#include "kbound/image.h"
#include "base/cleanup.h"
#include "base/jsonget.h"
#include "sandbox/image-internal.h"
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Ceilings on the image's metadata (untrusted): far above any real manifest (the JSON ones are
 * image_tree.c's). */
#define IMAGE_MAX_LAYERS 1024
#define IMAGE_MAX_ENV 4096
#define IMAGE_TAG_MAX 255
/* How often the free space is read while a tool runs. */
#define IMAGE_WATCH_MS 200
/* The name kbound gives the image in its private layout. */
#define IMAGE_REF "kbound"
/* What a tool's error quotes of its log. */
#define IMAGE_LOG_TAIL 400

static void strv_free(char **v) {
        for (char **p = v; p && *p; p++)
                free(*p);
        free(v);
}

void kb_image_destroy(kb_image **imgp) {
        if (!imgp || !*imgp)
                return;
        kb_image *img = *imgp;
        if (img->work_dir) {
                /* Everything kbound wrote for the image, never the work folder itself (the
                 * caller's). */
                static const char *const parts[] = {"rootfs", "layout", "tmp", "tool.log", "tool.out"};
                for (size_t i = 0; i < KB_ELEMENTSOF(parts); i++) {
                        char path[PATH_MAX];
                        if (snprintf(path, sizeof(path), "%s/%s", img->work_dir, parts[i]) < (int) sizeof(path))
                                image_remove_tree(path);
                }
        }
        free(img->path);
        free(img->tag);
        free(img->manifest_digest);
        free(img->config_digest);
        free(img->user);
        strv_free(img->env);
        free(img->work_dir);
        free(img->rootfs);
        free(img->cache_entry);
        if (img->cache_lock_fd >= 0)
                close(img->cache_lock_fd); /* the entry may be replaced once no run uses it */
        free(img);
        *imgp = NULL;
}

const char *kb_image_rootfs(const kb_image *img) {
        return img->rootfs;
}
const char *kb_image_path(const kb_image *img) {
        return img->path;
}
const char *kb_image_tag(const kb_image *img) {
        return img->tag;
}
const char *kb_image_format(const kb_image *img) {
        return img->format;
}
const char *kb_image_manifest_digest(const kb_image *img) {
        return img->manifest_digest;
}
const char *kb_image_config_digest(const kb_image *img) {
        return img->config_digest;
}
const char *kb_image_user(const kb_image *img) {
        return img->user ? img->user : "";
}
char *const *kb_image_env(const kb_image *img) {
        return img->env;
}
uint64_t kb_image_unpacked_bytes(const kb_image *img) {
        return img->unpacked_bytes;
}
uint64_t kb_image_max_bytes(const kb_image *img) {
        return img->max_bytes;
}

json_object *kb_image_json(const kb_image *img) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "path", json_object_new_string(img->path));
        json_object_object_add(o, "tag", img->tag ? json_object_new_string(img->tag) : NULL);
        json_object_object_add(o, "format", json_object_new_string(img->format));
        json_object_object_add(o, "manifest_digest", json_object_new_string(img->manifest_digest));
        json_object_object_add(o, "config_digest", json_object_new_string(img->config_digest));
        json_object_object_add(o, "user", json_object_new_string(kb_image_user(img)));
        json_object_object_add(o, "unpacked_bytes", json_object_new_int64((int64_t) img->unpacked_bytes));
        json_object_object_add(o, "max_bytes", json_object_new_int64((int64_t) img->max_bytes));
        json_object_object_add(o, "cache", img->cache_state ? json_object_new_string(img->cache_state) : NULL);
        return o;
}

const char *kb_image_cache_state(const kb_image *img) {
        return img->cache_state;
}

const char *kb_image_cache_entry(const kb_image *img) {
        return img->cache_entry;
}

const char *kb_image_cache_note(const kb_image *img) {
        return img->cache_note[0] ? img->cache_note : NULL;
}

/* override (an absolute path, if set in envp) or name in PATH of envp. Returns 0, -ENOENT. */
static int find_tool(char *const *envp, const char *name, const char *override, char **ret) {
        const char *explicit_path = kb_env_get(envp, override);
        if (explicit_path && *explicit_path) {
                if (explicit_path[0] != '/' || access(explicit_path, X_OK) < 0)
                        return -ENOENT;
                *ret = strdup(explicit_path);
                return *ret ? 0 : -ENOMEM;
        }
        const char *path = kb_env_get(envp, "PATH");
        for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin";;) {
                const char *colon = strchrnul(p, ':');
                size_t len = (size_t) (colon - p);
                if (len > 0 && p[0] == '/') {
                        char *candidate = NULL;
                        struct stat st;
                        if (asprintf(&candidate, "%.*s/%s", (int) len, p, name) < 0)
                                return -ENOMEM;
                        if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && access(candidate, X_OK) == 0) {
                                *ret = candidate;
                                return 0;
                        }
                        free(candidate);
                }
                if (!*colon)
                        break;
                p = colon + 1;
        }
        return -ENOENT;
}

/* What every tool run shares: the folder, the tools' environment, the limits. */
typedef struct tool_run {
        const char *work_dir;
        char *env[4];
        char log_path[PATH_MAX];
        int cancel_fd;
        int64_t deadline_ms;
        uint64_t max_bytes;
        uint64_t avail_at_start; /* free bytes when kbound started writing */
} tool_run;

static int avail_bytes(const char *dir, uint64_t *ret) {
        struct statvfs sv;
        if (statvfs(dir, &sv) < 0)
                return -errno;
        *ret = (uint64_t) sv.f_bavail * (uint64_t) sv.f_frsize;
        return 0;
}

/* True when the filesystem has lost more than max_bytes since kbound started, or is nearly full.
 * Conservative: whatever else writes to the same filesystem counts too. */
static bool over_limit(const tool_run *t) {
        uint64_t now = 0;
        if (avail_bytes(t->work_dir, &now) < 0)
                return false;
        return now < KB_IMAGE_RESERVE_BYTES || (t->avail_at_start > now && t->avail_at_start - now > t->max_bytes);
}

/* The last line(s) of path, at most IMAGE_LOG_TAIL bytes, newlines as spaces; malloc'd. */
/* The message of a logrus line (skopeo's and umoci's: time="..." level=fatal msg="..."), the last
 * one in text, unescaped; NULL when there is none. */
static char *logfmt_message(const char *text) {
        const char *at = NULL;
        for (const char *p = strstr(text, "msg=\""); p; p = strstr(p + 1, "msg=\""))
                at = p + 5;
        if (!at)
                return NULL;
        char *out = malloc(strlen(at) + 1), *o = out;
        if (!out)
                return NULL;
        for (const char *p = at; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1])
                        p++;
                *o++ = *p;
        }
        *o = '\0';
        return out;
}

static char *log_tail(const char *path) {
        char buf[IMAGE_LOG_TAIL + 1];
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return strdup("");
        off_t end = lseek(fd, 0, SEEK_END);
        off_t from = end > IMAGE_LOG_TAIL ? end - IMAGE_LOG_TAIL : 0;
        ssize_t n = pread(fd, buf, IMAGE_LOG_TAIL, from);
        if (n < 0)
                n = 0;
        buf[n] = '\0';
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
                buf[--n] = '\0';
        for (ssize_t i = 0; i < n; i++)
                if (buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t')
                        buf[i] = ' ';
        /* The tools' own words, without their log's time and level. */
        char *message = logfmt_message(buf);
        return message ? message : strdup(buf);
}

/* What a regular file given as --image is, from its tar headers (docker save, podman save and OCI
 * archives are all tar files): 1 when an entry is manifest.json or oci-layout (an image skopeo can
 * read, or fail on for a reason of its own), 2 for a compressed file (skopeo reads those itself),
 * 0 when it is no tar at all or a tar without either entry (not an image: a usage error), -errno. */
static int archive_kind(const char *path) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        image_tar t = {.fd = fd};
        image_tar_entry e;
        int r;
        while ((r = image_tar_next(&t, &e)) > 0)
                if (strcmp(e.name, "manifest.json") == 0 || strcmp(e.name, "oci-layout") == 0)
                        return 1;
        if (r == -ENOTSUP)
                return 2;
        return r == -EPROTO ? 0 : r; /* the end, or no (POSIX) tar header */
}

/* A tool that ended with status (not a success) as an error quoting the end of its log. Returns
 * -EIO. */
static int tool_failed(const tool_run *t, const char *program, int status, kb_error **ret_error) {
        if (!ret_error)
                return -EIO;
        _cleanup_free_ char *tail = log_tail(t->log_path);
        const char *base = strrchr(program, '/');
        return kb_error_make(ret_error, EIO, "%s failed (%s %d): %s", base ? base + 1 : program,
                             WIFEXITED(status) ? "exit status" : "signal",
                             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                             tail && *tail ? tail : "it said nothing");
}

/* Runs argv[0] (absolute) with the tools' environment, stdin /dev/null, stdout to out_path (or the
 * log), stderr to the log. Returns 0 when it exits 0; -EIO (it failed: *ret_error quotes the
 * log), -EFBIG, -ECANCELED, -ETIMEDOUT (it was killed), -errno. */
static int run_tool(const tool_run *t, char *const *argv, const char *out_path, kb_error **ret_error) {
        _cleanup_close_ int log_fd = open(t->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        _cleanup_close_ int out_fd = -1, null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int pidfd = -1;
        if (log_fd < 0 || null_fd < 0)
                return -errno;
        if (out_path && (out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
                return -errno;
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                /* Only async-signal-safe calls from here on. Its own group, so a kill reaches
                 * whatever it starts; dies with kbound. */
                setpgid(0, 0);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(127);
                if (dup2(null_fd, 0) < 0 || dup2(out_fd >= 0 ? out_fd : log_fd, 1) < 0 || dup2(log_fd, 2) < 0)
                        _exit(127);
                execve(argv[0], argv, t->env);
                _exit(127);
        }
        setpgid(pid, pid);
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        int r = 0;
        for (;;) {
                struct pollfd fds[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = t->cancel_fd, .events = POLLIN}};
                int wait_ms = IMAGE_WATCH_MS;
                if (t->deadline_ms >= 0) {
                        int left = kb_ms_left(t->deadline_ms);
                        if (left == 0) {
                                r = -ETIMEDOUT;
                                break;
                        }
                        if (left < wait_ms)
                                wait_ms = left;
                }
                int n = poll(fds, t->cancel_fd > 0 ? 2 : 1, pidfd >= 0 ? wait_ms : 10);
                if (n < 0 && errno != EINTR) {
                        r = -errno;
                        break;
                }
                if (t->cancel_fd > 0 && (fds[1].revents & POLLIN)) {
                        r = -ECANCELED;
                        break;
                }
                int status;
                pid_t w = (pidfd < 0 || (fds[0].revents & POLLIN)) ? waitpid(pid, &status, WNOHANG) : 0;
                if (w == pid)
                        return WIFEXITED(status) && WEXITSTATUS(status) == 0
                                       ? 0
                                       : tool_failed(t, argv[0], status, ret_error);
                if (over_limit(t)) {
                        r = -EFBIG;
                        break;
                }
        }
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        return r;
}

static int read_blob(const char *layout, const char *digest, json_object **ret) {
        char path[PATH_MAX];
        if (!image_digest_valid(digest))
                return -EPROTO;
        if (snprintf(path, sizeof(path), "%s/blobs/sha256/%s", layout, digest + 7) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        return image_read_json(path, ret);
}

/* The tag (ref.name) of the only manifest of an index; NULL when there is none or several. */
static char *only_ref_name(json_object *index) {
        json_object *manifests, *annotations;
        if (!json_object_object_get_ex(index, "manifests", &manifests) ||
            !json_object_is_type(manifests, json_type_array) || json_object_array_length(manifests) != 1)
                return NULL;
        json_object *m = json_object_array_get_idx(manifests, 0);
        if (!json_object_object_get_ex(m, "annotations", &annotations))
                return NULL;
        const char *name = kb_json_str(annotations, "org.opencontainers.image.ref.name");
        return name && *name && strlen(name) <= IMAGE_TAG_MAX ? strdup(name) : NULL;
}

/* The first RepoTags entry of a docker archive's manifest.json (one image only). */
static char *docker_repo_tag(json_object *manifest) {
        json_object *tags;
        if (!json_object_is_type(manifest, json_type_array) || json_object_array_length(manifest) != 1 ||
            !json_object_object_get_ex(json_object_array_get_idx(manifest, 0), "RepoTags", &tags) ||
            !json_object_is_type(tags, json_type_array) || json_object_array_length(tags) < 1)
                return NULL;
        json_object *t = json_object_array_get_idx(tags, 0);
        const char *s = json_object_is_type(t, json_type_string) ? json_object_get_string(t) : NULL;
        return s && *s && strlen(s) <= IMAGE_TAG_MAX ? strdup(s) : NULL;
}

/* A tag may name a reference in an index or an archive: printable, no blanks, bounded. */
static bool tag_valid(const char *tag) {
        size_t len = strlen(tag);
        if (len == 0 || len > IMAGE_TAG_MAX)
                return false;
        for (const char *p = tag; *p; p++)
                if ((unsigned char) *p <= ' ' || *p == 0x7f)
                        return false;
        return true;
}

/* Splits "PATH[:TAG]": PATH as given if it exists, else at the last ':' if what is before exists.
 * A path that itself holds ':' is refused (skopeo's transports split there). */
static int split_image_arg(const char *arg, char **ret_path, char **ret_tag) {
        struct stat st;
        _cleanup_free_ char *path = NULL, *tag = NULL;
        if (stat(arg, &st) == 0) {
                path = strdup(arg);
        } else {
                const char *colon = strrchr(arg, ':');
                if (!colon)
                        return -ENOENT;
                path = strndup(arg, (size_t) (colon - arg));
                tag = strdup(colon + 1);
                if (!path || !tag)
                        return -ENOMEM;
                if (stat(path, &st) < 0)
                        return -ENOENT;
                if (!tag_valid(tag))
                        return -EINVAL;
        }
        if (!path)
                return -ENOMEM;
        char *abs = realpath(path, NULL);
        if (!abs)
                return -errno;
        if (strchr(abs, ':')) {
                free(abs);
                return -EINVAL;
        }
        *ret_path = abs;
        *ret_tag = TAKE_PTR(tag);
        return 0;
}

/* Reads the private layout's index (the one manifest named IMAGE_REF), the manifest (layers'
 * sizes against the limit) and the config (user, env) into img. */
static int read_copy(kb_image *img, const char *layout, kb_error **ret_error) {
        char path[PATH_MAX];
        _cleanup_json_ json_object *index = NULL, *manifest = NULL, *config = NULL;
        json_object *manifests, *layers, *cfg, *inner, *env;
        int r;

        if (snprintf(path, sizeof(path), "%s/index.json", layout) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        if ((r = image_read_json(path, &index)) < 0)
                return r == -ENOMEM ? r : -EPROTO;
        if (!json_object_object_get_ex(index, "manifests", &manifests) ||
            !json_object_is_type(manifests, json_type_array) || json_object_array_length(manifests) != 1)
                return -EPROTO;
        const char *digest = kb_json_str(json_object_array_get_idx(manifests, 0), "digest");
        if (!image_digest_valid(digest))
                return -EPROTO;
        if (!(img->manifest_digest = strdup(digest)))
                return -ENOMEM;
        if ((r = read_blob(layout, digest, &manifest)) < 0)
                return r == -ENOMEM ? r : -EPROTO;
        if (!json_object_object_get_ex(manifest, "layers", &layers) || !json_object_is_type(layers, json_type_array) ||
            json_object_array_length(layers) > IMAGE_MAX_LAYERS)
                return -EPROTO;
        uint64_t total = 0;
        for (size_t i = 0; i < json_object_array_length(layers); i++) {
                json_object *size;
                if (!json_object_object_get_ex(json_object_array_get_idx(layers, i), "size", &size) ||
                    !json_object_is_type(size, json_type_int) || json_object_get_int64(size) < 0)
                        return -EPROTO;
                total += (uint64_t) json_object_get_int64(size);
        }
        if (total > img->max_bytes)
                return kb_error_make(ret_error, EFBIG, "its layers alone take %llu bytes, over the %llu-byte limit",
                                     (unsigned long long) total, (unsigned long long) img->max_bytes);
        if (!json_object_object_get_ex(manifest, "config", &cfg) || !image_digest_valid(kb_json_str(cfg, "digest")))
                return -EPROTO;
        if (!(img->config_digest = strdup(kb_json_str(cfg, "digest"))))
                return -ENOMEM;
        if ((r = read_blob(layout, img->config_digest, &config)) < 0)
                return r == -ENOMEM ? r : -EPROTO;
        const char *user = NULL;
        size_t n_env = 0;
        env = NULL;
        if (json_object_object_get_ex(config, "config", &inner) && json_object_is_type(inner, json_type_object)) {
                user = kb_json_str(inner, "User");
                if (json_object_object_get_ex(inner, "Env", &env) && !json_object_is_type(env, json_type_array))
                        env = NULL;
        }
        if (!(img->user = strdup(user ? user : "")))
                return -ENOMEM;
        n_env = env ? json_object_array_length(env) : 0;
        if (n_env > IMAGE_MAX_ENV)
                return -EPROTO;
        img->env = calloc(n_env + 1, sizeof(char *));
        if (!img->env)
                return -ENOMEM;
        for (size_t i = 0, k = 0; i < n_env; i++) {
                json_object *e = json_object_array_get_idx(env, i);
                if (!json_object_is_type(e, json_type_string) || !strchr(json_object_get_string(e), '='))
                        continue;
                if (!(img->env[k++] = strdup(json_object_get_string(e))))
                        return -ENOMEM;
        }
        return 0;
}

/* One unpack's tools, paths and tool runs (all below the work folder but the tools). */
typedef struct unpack_job {
        const kb_image_options *o;
        const char *work_dir; /* o->work_dir, or the cache's build folder */
        char *cache_key, *cache_entry, *cache_build;
        kb_image *img;                          /* what is being made */
        struct stat st;                         /* what is at the image's path */
        char *skopeo, *umoci;                   /* the tools */
        char *layout, *tmp, *rootfs, *tool_out; /* below the work folder */
        char *path_env, *home_env, *tmp_env;    /* the tools' environment */
        char *dest;                             /* skopeo's destination: the private layout */
        tool_run t;
} unpack_job;

static void unpack_job_done(unpack_job *j) {
        free(j->cache_key);
        free(j->cache_entry);
        free(j->cache_build);
        free(j->skopeo);
        free(j->umoci);
        free(j->layout);
        free(j->tmp);
        free(j->rootfs);
        free(j->tool_out);
        free(j->path_env);
        free(j->home_env);
        free(j->tmp_env);
        free(j->dest);
}

/* The image argument split into img->path and img->tag, and what is at that path (j->st).
 * Returns 0, or -errno (with an error when the argument is at fault). */
static int image_locate(unpack_job *j, kb_error **ret_error) {
        const kb_image_options *o = j->o;
        kb_image *img = j->img;
        int r = split_image_arg(o->image, &img->path, &img->tag);
        if (r < 0)
                return kb_error_make(ret_error, r,
                                     r == -ENOENT   ? "no such file or folder"
                                     : r == -EINVAL ? "its path holds ':' (skopeo splits image names there: "
                                                      "rename or link it) or its tag is not printable text"
                                                    : "cannot resolve its path: %s",
                                     strerror(-r));
        if (stat(img->path, &j->st) < 0)
                return -errno;
        return 0;
}

/* skopeo and umoci, in the caller's PATH or where KBOUND_SKOPEO and KBOUND_UMOCI say. Returns 0,
 * -ENOPKG (one is missing: the error says how to install it), -ENOMEM. */
static int tools_find(unpack_job *j, kb_error **ret_error) {
        const kb_image_options *o = j->o;
        int r = find_tool(o->envp, "skopeo", "KBOUND_SKOPEO", &j->skopeo);
        if (r >= 0)
                r = find_tool(o->envp, "umoci", "KBOUND_UMOCI", &j->umoci);
        if (r < 0)
                return kb_error_make(ret_error, r == -ENOENT ? ENOPKG : -r,
                                     "%s not found (PATH, or %s): install it (Debian/Ubuntu: apt-get install "
                                     "skopeo umoci)",
                                     j->skopeo ? "umoci" : "skopeo", j->skopeo ? "KBOUND_UMOCI" : "KBOUND_SKOPEO");
        return 0;
}

/* The paths below the work folder named, its tmp made and the tools' run set up. Returns 0, or
 * -errno (the error names the folder it could not make). */
static int job_plan(unpack_job *j, kb_error **ret_error) {
        const kb_image_options *o = j->o;
        kb_image *img = j->img;
        const char *path = kb_env_get(o->envp, "PATH");
        if (!(img->work_dir = strdup(j->work_dir)) || asprintf(&j->layout, "%s/layout", j->work_dir) < 0 ||
            asprintf(&j->tmp, "%s/tmp", j->work_dir) < 0 || asprintf(&j->rootfs, "%s/rootfs", j->work_dir) < 0 ||
            asprintf(&j->tool_out, "%s/tool.out", j->work_dir) < 0 ||
            asprintf(&j->path_env, "PATH=%s", path ? path : "/usr/bin:/bin") < 0 ||
            asprintf(&j->home_env, "HOME=%s", j->tmp) < 0 || asprintf(&j->tmp_env, "TMPDIR=%s", j->tmp) < 0 ||
            asprintf(&j->dest, "oci:%s:" IMAGE_REF, j->layout) < 0)
                return -ENOMEM;
        if (mkdir(j->tmp, 0700) < 0) {
                int e = errno;
                return kb_error_make(ret_error, e, "cannot make %s: %s", j->tmp, strerror(e));
        }
        /* The tools get a private home and temporary folder (skopeo may stage blobs there: it is
         * inside the watched folder), and none of kbound's environment. */
        j->t = (tool_run){
                .work_dir = j->work_dir,
                .env = {j->path_env, j->home_env, j->tmp_env, NULL},
                .cancel_fd = o->cancel_fd,
                .deadline_ms = o->deadline_ms,
                .max_bytes = img->max_bytes,
        };
        /* A cut path would be another file, created and emptied for each tool's words. */
        if (snprintf(j->t.log_path, sizeof(j->t.log_path), "%s/tool.log", j->work_dir) >= (int) sizeof(j->t.log_path))
                return kb_error_make(ret_error, ENAMETOOLONG, "the work folder's path is too long: %s", j->work_dir);
        return avail_bytes(j->work_dir, &j->t.avail_at_start);
}

/* skopeo's copy of an OCI layout (a folder with an oci-layout file). Returns as run_tool, or
 * -EINVAL (not a layout), -ENOMEM. */
static int copy_layout(kb_image *img, const unpack_job *j, kb_error **ret_error) {
        char probe[PATH_MAX];
        struct stat pst;
        /* Cut, it would name another file, whose presence would decide what the folder is. */
        if (snprintf(probe, sizeof(probe), "%s/oci-layout", img->path) >= (int) sizeof(probe))
                return kb_error_make(ret_error, ENAMETOOLONG, "its path is too long");
        if (stat(probe, &pst) < 0)
                return kb_error_make(ret_error, EINVAL,
                                     "a folder without an oci-layout file is not an OCI image layout (for an "
                                     "unpacked root filesystem use --rootfs)");
        img->format = "oci-layout";
        _cleanup_free_ char *src = NULL;
        if (asprintf(&src, "oci:%s%s%s", img->path, img->tag ? ":" : "", img->tag ? img->tag : "") < 0)
                return -ENOMEM;
        /* --insecure-policy: the signature policy governs pulls from registries; a local
         * layout or archive carries no signature, and every blob is still checked against
         * its digest. */
        char *argv[] = {j->skopeo, "--insecure-policy", "copy", "--quiet", src, j->dest, NULL};
        return run_tool(&j->t, argv, NULL, ret_error);
}

/* skopeo's copy of an archive (a regular file): a docker archive or an OCI archive, whichever
 * skopeo reads (each says at once when it is the other). Returns as run_tool (-EIO: neither read
 * it, the error quoting both), or -EINVAL (no image archive at all), -errno. */
static int copy_archive(kb_image *img, const unpack_job *j, kb_error **ret_error) {
        static const char *const archive_formats[] = {"docker-archive", "oci-archive"};
        int r = archive_kind(img->path);
        if (r == 0)
                return kb_error_make(ret_error, EINVAL,
                                     "not an image: a docker save or podman save archive or an OCI archive is a tar "
                                     "file with a manifest.json or an oci-layout entry, and this file has neither");
        if (r < 0)
                return kb_error_make(ret_error, r, "cannot read it: %s", strerror(-r));
        kb_error *errors[KB_ELEMENTSOF(archive_formats)] = {NULL};
        bool copied = false;
        for (size_t i = 0; i < KB_ELEMENTSOF(archive_formats) && !copied; i++) {
                _cleanup_free_ char *src = NULL;
                if (asprintf(&src, "%s:%s%s%s", archive_formats[i], img->path, img->tag ? ":" : "",
                             img->tag ? img->tag : "") < 0) {
                        r = -ENOMEM;
                        break;
                }
                char *argv[] = {j->skopeo, "--insecure-policy", "copy", "--quiet", src, j->dest, NULL};
                r = run_tool(&j->t, argv, NULL, &errors[i]);
                copied = r == 0;
                if (copied)
                        img->format = archive_formats[i];
                if (r != 0 && r != -EIO)
                        break;
        }
        if (!copied && r == -EIO)
                kb_error_make(ret_error, EIO,
                              "neither a docker archive nor an OCI archive that skopeo can read: "
                              "as a docker archive, %s; as an OCI archive, %s",
                              errors[0] && errors[0]->msg ? errors[0]->msg : "?",
                              errors[1] && errors[1]->msg ? errors[1]->msg : "?");
        for (size_t i = 0; i < KB_ELEMENTSOF(errors); i++)
                kb_error_free(&errors[i]);
        return r;
}

/* The image copied by skopeo into the private layout: a folder is an OCI layout; a file an
 * archive. Sets img->format. Returns 0, or -errno (with an error where there are words for it). */
static int image_copy(unpack_job *j, kb_error **ret_error) {
        kb_image *img = j->img;
        int r;
        if (S_ISDIR(j->st.st_mode))
                r = copy_layout(img, j, ret_error);
        else if (S_ISREG(j->st.st_mode))
                r = copy_archive(img, j, ret_error);
        else
                return kb_error_make(ret_error, EINVAL, "neither a folder nor a regular file");
        if (r == -EFBIG)
                return kb_error_make(ret_error, EFBIG, "copying it took more than the %llu-byte limit",
                                     (unsigned long long) img->max_bytes);
        return r;
}

/* The copy's index, manifest and config read (read_copy), then umoci's unpack of it into the
 * rootfs, within the limit; the copy removed once it has served. Returns 0, or -errno (with an
 * error where there are words for it). */
static int image_unpack_copy(unpack_job *j, kb_error **ret_error) {
        kb_image *img = j->img;
        int r = read_copy(img, j->layout, ret_error);
        if (r < 0) /* read_copy's own words, if it had any, are kept */
                return kb_error_make(ret_error, r, "skopeo's copy of it has a malformed index, manifest or config");
        char *unpack_argv[] = {j->umoci, "raw", "unpack", "--rootless", "--image", j->dest + 4, j->rootfs, NULL};
        r = run_tool(&j->t, unpack_argv, NULL, ret_error);
        if (r == -EFBIG)
                return kb_error_make(ret_error, EFBIG, "unpacking it took more than the %llu-byte limit",
                                     (unsigned long long) img->max_bytes);
        if (r < 0)
                return r;
        /* The copy has served: only the unpacked root stays for the run. */
        image_remove_tree(j->layout);
        img->unpacked_bytes = image_walk_path(j->rootfs, false);
        if (img->unpacked_bytes > img->max_bytes)
                return kb_error_make(ret_error, EFBIG, "unpacked it takes %llu bytes, over the %llu-byte limit",
                                     (unsigned long long) img->unpacked_bytes, (unsigned long long) img->max_bytes);
        return 0;
}

/* The name the image carries, when the user gave none: its index's only ref.name, or the
 * archive's manifest (read with tar; it holds no layer kbound would look into). Best effort. */
static void image_name_read(const unpack_job *j) {
        kb_image *img = j->img;
        _cleanup_free_ char *tar = NULL;
        if (img->tag)
                return;
        if (strcmp(img->format, "oci-layout") == 0) {
                char index_path[PATH_MAX];
                _cleanup_json_ json_object *index = NULL;
                if (snprintf(index_path, sizeof(index_path), "%s/index.json", img->path) < (int) sizeof(index_path) &&
                    image_read_json(index_path, &index) == 0)
                        img->tag = only_ref_name(index);
        } else if (find_tool(j->o->envp, "tar", "KBOUND_TAR", &tar) == 0) {
                bool docker = strcmp(img->format, "docker-archive") == 0;
                char *argv[] = {tar, "-xOf", img->path, docker ? "manifest.json" : "index.json", NULL};
                _cleanup_json_ json_object *meta = NULL;
                if (run_tool(&j->t, argv, j->tool_out, NULL) == 0 && image_read_json(j->tool_out, &meta) == 0)
                        img->tag = docker ? docker_repo_tag(meta) : only_ref_name(meta);
        }
}

/* The words for a failure no step said more about (a step's own are kept), and all that was
 * written removed. Returns r. */
static int unpack_failed(kb_image **imgp, int r, kb_error **ret_error) {
        kb_image_destroy(imgp);
        return kb_error_make(ret_error, r, "%s",
                             r == -ECANCELED   ? "interrupted"
                             : r == -ETIMEDOUT ? "the deadline passed while it was being unpacked"
                             : r == -ENOMEM    ? "out of memory"
                                               : strerror(-r));
}

/* With a cache folder: the image's key (its manifest digest, read in place) and its entry, found
 * verified (1: nothing to unpack) or to be built in the entry's build folder, which becomes the
 * work folder (0). An image that cannot be keyed (a compressed archive) is unpacked for the run,
 * as without a cache, and img->cache_note says why. Returns 1, 0, or -errno. */
static int cache_begin(unpack_job *j, kb_error **ret_error) {
        kb_image *img = j->img;
        int r = image_cache_key(img->path, img->tag, S_ISDIR(j->st.st_mode), &j->cache_key);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                snprintf(img->cache_note, sizeof img->cache_note, "not kept in the cache: %s",
                         r == -ENOTSUP ? "a compressed archive's manifest cannot be read in place"
                                       : "its manifest digest could not be read in place");
                return 0;
        }
        r = image_cache_lookup(j->o->cache_dir, j->cache_key, img, &img->cache_lock_fd, &j->cache_entry, ret_error);
        if (r != 0)
                return r;
        if (asprintf(&j->cache_build, "%s.build", j->cache_entry) < 0)
                return -ENOMEM;
        if (mkdir(j->cache_build, 0700) < 0) {
                int e = errno;
                return kb_error_make(ret_error, e, "cannot make %s: %s", j->cache_build, strerror(e));
        }
        j->work_dir = j->cache_build;
        return 0;
}

int kb_image_unpack(const kb_image_options *o, kb_image **ret, kb_error **ret_error) {
        /* The steps, in their order: each returns 0 or -errno, having said why where it can. */
        static int (*const steps[])(unpack_job *, kb_error **) = {
                tools_find,
                job_plan,
                image_copy,
                image_unpack_copy,
        };
        _cleanup_(unpack_job_done) unpack_job j = {.o = o};

        if (!o || !o->image || !o->work_dir || o->work_dir[0] != '/' || !ret ||
            (o->cache_dir && o->cache_dir[0] != '/'))
                return -EINVAL;
        j.work_dir = o->work_dir;
        j.img = calloc(1, sizeof(*j.img));
        if (!j.img)
                return -ENOMEM;
        j.img->cache_lock_fd = -1;
        j.img->max_bytes = o->max_bytes ? o->max_bytes : KB_IMAGE_MAX_BYTES_DEFAULT;
        int r = image_locate(&j, ret_error);
        if (r >= 0 && o->cache_dir)
                r = cache_begin(&j, ret_error);
        if (r == 1) { /* kept, and verified */
                *ret = TAKE_PTR(j.img);
                return 0;
        }
        for (size_t i = 0; r >= 0 && i < KB_ELEMENTSOF(steps); i++)
                r = steps[i](&j, ret_error);
        if (r < 0) {
                if (j.cache_build) /* under the lock still: nothing of a half-built entry stays */
                        image_remove_tree(j.cache_build);
                return unpack_failed(&j.img, r, ret_error);
        }
        image_name_read(&j);
        unlink(j.tool_out);
        unlink(j.t.log_path);
        kb_remove_tree(j.tmp);
        j.img->rootfs = TAKE_PTR(j.rootfs);
        if (j.cache_build) {
                r = image_cache_store(j.img, j.cache_key, j.cache_build, j.cache_entry, ret_error);
                if (r < 0) {
                        image_remove_tree(j.cache_build);
                        return unpack_failed(&j.img, r, ret_error);
                }
                (void) flock(j.img->cache_lock_fd, LOCK_SH);
        }
        *ret = TAKE_PTR(j.img);
        return 0;
}

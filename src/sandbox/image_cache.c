/* image_cache.c: unpacked images kept by their manifest digest (the caller's cache folder, images/),
 * each with the digest of its tree, verified before it is used again. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "base/cleanup.h"
#include "base/jsonget.h"
#include "sandbox/image-internal.h"

#define CACHE_META "meta.json"
#define CACHE_META_MAX (1024 * 1024)
#define CACHE_META_DEPTH 8
#define TAR_ENTRY_MAX (4 * 1024 * 1024)

/* ---- the key ---- */

/* The entry name of an uncompressed tar archive read in place into *ret (at most max bytes).
 * Returns 0, -ENOENT (no such entry), -ENOTSUP (a compressed file), -EPROTO (no tar), -errno. */
static int tar_entry(const char *path, const char *name, size_t max, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        image_tar t = {.fd = fd};
        image_tar_entry e;
        int r;
        while ((r = image_tar_next(&t, &e)) > 0) {
                if (!e.size_read)
                        return -EPROTO;
                if (strcmp(e.name, name) != 0 || (e.type != '0' && e.type != '\0'))
                        continue;
                if (e.size > max)
                        return -EMSGSIZE;
                char *buf = malloc(e.size + 1);
                if (!buf)
                        return -ENOMEM;
                ssize_t got = pread(fd, buf, e.size, e.data_at);
                if (got != (ssize_t) e.size) {
                        free(buf);
                        return got < 0 ? -errno : -EPROTO;
                }
                buf[e.size] = '\0';
                *ret = buf;
                *ret_len = e.size;
                return 0;
        }
        return r == 0 ? -ENOENT : r;
}

/* The digest of the manifest an OCI index names for tag (its ref.name), or of its only manifest. */
static int index_manifest(const char *text, size_t len, const char *tag, char **ret_key) {
        _cleanup_json_ json_object *index = NULL;
        json_object *manifests = NULL;
        if (kb_json_parse_strict(text, len, CACHE_META_DEPTH, &index) < 0 ||
            !json_object_object_get_ex(index, "manifests", &manifests) ||
            !json_object_is_type(manifests, json_type_array))
                return -EPROTO;
        const char *digest = NULL;
        size_t n = json_object_array_length(manifests), matches = 0;
        for (size_t i = 0; i < n; i++) {
                json_object *m = json_object_array_get_idx(manifests, i);
                const char *name = kb_json_str(kb_json_get(m, "annotations"), "org.opencontainers.image.ref.name");
                if (!tag || (name && strcmp(name, tag) == 0)) {
                        digest = kb_json_str(m, "digest");
                        matches++;
                }
        }
        if (matches != 1 || !image_digest_valid(digest))
                return -EPROTO;
        *ret_key = strdup(digest);
        return *ret_key ? 0 : -ENOMEM;
}

/* "sha256:" and the hex of data's SHA-256. */
static int sha256_key(const void *data, size_t len, char **ret_key) {
        unsigned char md[32];
        unsigned int md_len = 0;
        if (!EVP_Digest(data, len, md, &md_len, EVP_sha256(), NULL) || md_len != sizeof md)
                return -EIO;
        char *key = malloc(7 + 64 + 1);
        if (!key)
                return -ENOMEM;
        memcpy(key, "sha256:", 7);
        for (size_t i = 0; i < sizeof md; i++)
                snprintf(key + 7 + 2 * i, 3, "%02x", md[i]);
        *ret_key = key;
        return 0;
}

int image_cache_key(const char *path, const char *tag, bool is_dir, char **ret_key) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r;
        if (is_dir) {
                char index[PATH_MAX];
                if (snprintf(index, sizeof index, "%s/index.json", path) >= (int) sizeof index)
                        return -ENAMETOOLONG;
                r = kb_read_file(AT_FDCWD, index, O_NOFOLLOW, TAR_ENTRY_MAX, &text, &len);
                return r < 0 ? r : index_manifest(text, len, tag, ret_key);
        }
        r = tar_entry(path, "index.json", TAR_ENTRY_MAX, &text, &len);
        if (r == 0)
                return index_manifest(text, len, tag, ret_key);
        if (r != -ENOENT)
                return r;
        /* A docker archive: its manifest.json (with the tag asked for, which picks one of its
         * images) stands for the manifest it has not got. */
        r = tar_entry(path, "manifest.json", TAR_ENTRY_MAX, &text, &len);
        if (r < 0)
                return r == -ENOENT ? -EPROTO : r;
        _cleanup_free_ char *keyed = NULL;
        if (asprintf(&keyed, "docker-archive\n%s\n%s", tag ? tag : "", text) < 0)
                return -ENOMEM;
        return sha256_key(keyed, strlen(keyed), ret_key);
}

/* ---- the entries ---- */

/* The key's hex, checked: it names a folder. */
static const char *key_hex(const char *key) {
        return image_digest_valid(key) ? key + 7 : NULL;
}

static const char *format_known(const char *format) {
        static const char *const formats[] = {"oci-layout", "docker-archive", "oci-archive"};
        for (size_t i = 0; format && i < KB_ELEMENTSOF(formats); i++)
                if (strcmp(format, formats[i]) == 0)
                        return formats[i];
        return NULL;
}

/* What meta.json holds, into img (when it is whole and names key). Returns 0, -EPROTO. */
static int meta_read(const char *entry, const char *key, kb_image *img, char **ret_tree) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/" CACHE_META, entry) >= (int) sizeof path)
                return -ENAMETOOLONG;
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        _cleanup_json_ json_object *meta = NULL;
        int r = kb_read_file(AT_FDCWD, path, O_NOFOLLOW, CACHE_META_MAX, &text, &len);
        if (r < 0)
                return r;
        if (kb_json_parse_strict(text, len, CACHE_META_DEPTH, &meta) < 0)
                return -EPROTO;
        const char *k = kb_json_str(meta, "key"), *tree = kb_json_str(meta, "tree_digest");
        const char *manifest = kb_json_str(meta, "manifest_digest"), *config = kb_json_str(meta, "config_digest");
        const char *format = format_known(kb_json_str(meta, "format")), *user = kb_json_str(meta, "user");
        const char *tag = kb_json_str(meta, "tag");
        json_object *env = kb_json_get(meta, "env");
        int64_t bytes = -1;
        if (!k || strcmp(k, key) != 0 || !tree || !image_digest_valid(manifest) || !image_digest_valid(config) ||
            !format || !user || !env || !json_object_is_type(env, json_type_array) ||
            !kb_json_int(meta, "unpacked_bytes", &bytes) || bytes < 0)
                return -EPROTO;
        size_t n = json_object_array_length(env);
        char **vars = calloc(n + 1, sizeof *vars);
        if (!vars)
                return -ENOMEM;
        for (size_t i = 0, o = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(env, i);
                if (json_object_is_type(e, json_type_string) && !(vars[o++] = strdup(json_object_get_string(e))))
                        r = -ENOMEM;
        }
        if (r < 0 || !(*ret_tree = strdup(tree)) || !(img->manifest_digest = strdup(manifest)) ||
            !(img->config_digest = strdup(config)) || !(img->user = strdup(user)) ||
            (!img->tag && tag && !(img->tag = strdup(tag)))) {
                for (size_t i = 0; i < n; i++)
                        free(vars[i]);
                free(vars);
                return -ENOMEM;
        }
        img->env = vars;
        img->format = format;
        img->unpacked_bytes = (uint64_t) bytes;
        return 0;
}

/* img's facts as they were when the entry was made back to none (a half-read meta). */
static void facts_clear(kb_image *img, char *tag_before) {
        free(img->manifest_digest);
        free(img->config_digest);
        free(img->user);
        for (char **p = img->env; p && *p; p++)
                free(*p);
        free(img->env);
        if (img->tag != tag_before)
                free(img->tag);
        img->tag = tag_before;
        img->manifest_digest = img->config_digest = img->user = NULL;
        img->env = NULL;
        img->format = NULL;
        img->unpacked_bytes = 0;
}

int image_cache_lookup(const char *cache_dir, const char *key, kb_image *img, int *ret_lock_fd, char **ret_entry,
                       kb_error **ret_error) {
        const char *hex = key_hex(key);
        if (!cache_dir || cache_dir[0] != '/' || !hex)
                return -EINVAL;
        _cleanup_free_ char *images = NULL, *lock = NULL, *entry = NULL, *build = NULL, *rootfs = NULL;
        if (asprintf(&images, "%s/images", cache_dir) < 0 || asprintf(&lock, "%s/%s.lock", images, hex) < 0 ||
            asprintf(&entry, "%s/%s", images, hex) < 0 || asprintf(&build, "%s.build", entry) < 0 ||
            asprintf(&rootfs, "%s/rootfs", entry) < 0)
                return -ENOMEM;
        if (mkdir(images, 0700) < 0 && errno != EEXIST)
                return kb_error_make(ret_error, errno, "cannot make %s: %s", images, strerror(errno));
        _cleanup_close_ int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return kb_error_make(ret_error, errno, "cannot open %s: %s", lock, strerror(errno));
        /* Exclusive while it is looked at and, on a miss, built: a second run of the same image waits
         * and then finds it. Runs using an entry hold it shared, so none is replaced under them. */
        while (flock(fd, LOCK_EX) < 0)
                if (errno != EINTR)
                        return kb_error_make(ret_error, errno, "cannot lock %s: %s", lock, strerror(errno));
        image_remove_tree(build); /* a build a killed run left: the lock is ours */
        struct stat st;
        int found = 0;
        if (lstat(entry, &st) == 0) {
                char *tag_before = img->tag;
                _cleanup_free_ char *tree = NULL, *now = NULL;
                int r = S_ISDIR(st.st_mode) && lstat(rootfs, &st) == 0 && S_ISDIR(st.st_mode)
                                ? meta_read(entry, key, img, &tree)
                                : -EPROTO;
                if (r == -ENOMEM)
                        return r;
                if (r == 0 && img->unpacked_bytes > img->max_bytes) {
                        uint64_t bytes = img->unpacked_bytes;
                        facts_clear(img, tag_before);
                        return kb_error_make(ret_error, EFBIG,
                                             "its copy in the cache (%s) takes %llu bytes, over the %llu-byte limit",
                                             entry, (unsigned long long) bytes, (unsigned long long) img->max_bytes);
                }
                if (r == 0)
                        r = image_tree_digest(rootfs, &now);
                if (r == 0 && strcmp(now, tree) == 0) {
                        found = 1;
                } else {
                        facts_clear(img, tag_before);
                        snprintf(img->cache_note, sizeof img->cache_note,
                                 r < 0 ? "its copy in the cache was incomplete or unreadable (%s): removed, and the "
                                         "image unpacked again"
                                       : "its copy in the cache did not verify (its files changed since it was "
                                         "unpacked%s): removed, and the image unpacked again",
                                 r < 0 ? strerror(-r) : "");
                        image_remove_tree(entry);
                }
        }
        if (found) {
                img->rootfs = TAKE_PTR(rootfs);
                img->cache_entry = strdup(entry);
                img->cache_state = "reused";
                (void) flock(fd, LOCK_SH);
        }
        *ret_lock_fd = TAKE_FD(fd);
        *ret_entry = TAKE_PTR(entry);
        return found;
}

int image_cache_store(kb_image *img, const char *key, const char *build, const char *entry, kb_error **ret_error) {
        _cleanup_free_ char *rootfs = NULL, *tree = NULL, *meta_path = NULL, *tmp = NULL, *final_rootfs = NULL;
        if (asprintf(&rootfs, "%s/rootfs", build) < 0 || asprintf(&meta_path, "%s/" CACHE_META, build) < 0 ||
            asprintf(&tmp, "%s.tmp", meta_path) < 0 || asprintf(&final_rootfs, "%s/rootfs", entry) < 0)
                return -ENOMEM;
        int r = image_tree_digest(rootfs, &tree);
        if (r < 0)
                return kb_error_make(ret_error, r, "cannot read the unpacked image to keep it: %s", strerror(-r));
        _cleanup_json_ json_object *meta = json_object_new_object(), *env = json_object_new_array();
        if (!meta || !env)
                return -ENOMEM;
        for (char **p = img->env; p && *p; p++)
                json_object_array_add(env, json_object_new_string(*p));
        json_object_object_add(meta, "key", json_object_new_string(key));
        json_object_object_add(meta, "format", json_object_new_string(img->format));
        json_object_object_add(meta, "manifest_digest", json_object_new_string(img->manifest_digest));
        json_object_object_add(meta, "config_digest", json_object_new_string(img->config_digest));
        json_object_object_add(meta, "tag", img->tag ? json_object_new_string(img->tag) : NULL);
        json_object_object_add(meta, "user", json_object_new_string(img->user ? img->user : ""));
        json_object_object_add(meta, "env", json_object_get(env));
        json_object_object_add(meta, "unpacked_bytes", json_object_new_int64((int64_t) img->unpacked_bytes));
        json_object_object_add(meta, "tree_digest", json_object_new_string(tree));
        const char *text = json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PLAIN);
        _cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || kb_write_all(fd, text, strlen(text)) < 0 || fsync(fd) < 0 || rename(tmp, meta_path) < 0)
                return kb_error_make(ret_error, errno ? errno : EIO, "cannot record the image in the cache (%s): %s",
                                     meta_path, strerror(errno ? errno : EIO));
        /* Whole, then in place: a run killed before this leaves a build the next one removes. */
        if (rename(build, entry) < 0)
                return kb_error_make(ret_error, errno, "cannot keep the image in the cache (%s): %s", entry,
                                     strerror(errno));
        free(img->rootfs);
        img->rootfs = TAKE_PTR(final_rootfs);
        free(img->work_dir);
        img->work_dir = NULL; /* the cache's now: nothing of it goes with the run */
        if (!(img->cache_entry = strdup(entry)))
                return -ENOMEM;
        img->cache_state = "stored";
        return 0;
}

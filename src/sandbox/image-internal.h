/* image-internal.h: what image.c (the unpack) shares with image_cache.c (the unpacked images kept
 * by their manifest digest). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>
#include "kbound/error.h"
#include "kbound/image.h"

struct kb_image {
        char *path;
        char *tag;
        const char *format;
        char *manifest_digest;
        char *config_digest;
        char *user;
        char **env;
        char *work_dir; /* NULL for an image of the cache: nothing of it is removed with the run */
        char *rootfs;
        uint64_t unpacked_bytes;
        uint64_t max_bytes;
        const char *cache_state; /* NULL (no cache), "stored" or "reused" */
        char *cache_entry;       /* the cache's folder of this image, or NULL */
        int cache_lock_fd;       /* held shared while the run uses the entry; -1 */
        char cache_note[256];    /* why the cache was not used, or an entry was replaced ("" none) */
};

/* image.c's helpers the cache uses. */
uint64_t image_walk_path(const char *path, bool open_up);
void image_remove_tree(const char *path);
int image_read_json(const char *path, json_object **ret);
bool image_digest_valid(const char *d);

/* A walk of the headers of a tar archive open at fd (the caller's), read in place: zeroed but for fd
 * before the first image_tar_next. */
typedef struct image_tar {
        int fd;
        off_t at;         /* the next header's offset */
        int entries;      /* headers read */
        bool size_unread; /* the last entry's size could not be read: the walk cannot pass it */
} image_tar;

/* One entry as its header says it (untrusted: the archive's words). */
typedef struct image_tar_entry {
        char name[101];          /* the header's name, without a leading "./" */
        char type;               /* the typeflag: '0' or '\0' for a regular file */
        unsigned long long size; /* its content's bytes, when size_read */
        bool size_read;          /* the header's size field is an octal number */
        off_t data_at;           /* where its content starts */
} image_tar_entry;

/* The walk's next entry into *ret. Returns 1; 0 at the end (a short read, the archive's zero
 * block, or the 100,000th header read); -ENOTSUP when the file is compressed (gzip, zstd, xz or
 * bzip2: checked at the first header only); -EPROTO when a header is no POSIX tar header, or after
 * an entry whose size could not be read; -errno. */
int image_tar_next(image_tar *t, image_tar_entry *ret);

/* The key an image is kept by: the digest of its manifest as the image holds it, read without
 * unpacking anything (an OCI layout's or OCI archive's index.json: the manifest of the tag, or the
 * only one; a docker archive has no manifest digest, so the sha256 of its manifest.json). Returns 0
 * and "sha256:<hex>", -ENOTSUP (a compressed archive, whose entries cannot be read in place),
 * -EPROTO (no such manifest, or a malformed index), -errno. */
int image_cache_key(const char *path, const char *tag, bool is_dir, char **ret_key);

/* The digest of the tree below root (sha256, hex): every entry in name order, its type, mode,
 * size and path, a regular file's content, a link's target; links are never followed. What is
 * verified before a kept image is used again. Returns 0, -errno. */
int image_tree_digest(const char *root, char **ret_hex);

/* The cache's entry for key below cache_dir (images/<hex>, made as needed), locked for the caller
 * (*ret_lock_fd, exclusive). When it holds a complete image whose tree still has its recorded
 * digest and fits max_bytes, img gets its facts (format, digests, user, env, tag when img has none,
 * size, rootfs, entry) and 1 is returned, the lock made shared; 0 when there is none (one that does
 * not verify is removed, and img->cache_note says why); -errno. */
int image_cache_lookup(const char *cache_dir, const char *key, kb_image *img, int *ret_lock_fd, char **ret_entry,
                       kb_error **ret_error);

/* After an unpack into build (entry's sibling, built under the exclusive lock): records img's facts
 * and its tree's digest there and renames it to entry; img then refers to the entry's rootfs and
 * owns nothing that the run removes. Returns 0 or -errno. */
int image_cache_store(kb_image *img, const char *key, const char *build, const char *entry, kb_error **ret_error);

/* image.h: kernel images as users have them (an OCI image layout folder, an OCI archive, a
 * `docker save` archive), unpacked into a private root filesystem with Debian's skopeo and umoci,
 * to be checked exactly as an unpacked image given with --rootfs. */
#pragma once

#include "kbound/common.h"
#include "kbound/error.h"
#include <json-c/json.h>
#include <stdint.h>

/* What an image may take on disk while it is copied and unpacked, unless the caller says. */
#define KB_IMAGE_MAX_BYTES_DEFAULT (8ULL << 30)
/* The free space kbound leaves on the filesystem whatever the limit (so a disk never fills). */
#define KB_IMAGE_RESERVE_BYTES (512ULL << 20)

typedef struct kb_image_options {
        const char *image;     /* "PATH" or "PATH:TAG": an OCI image layout folder (holding
                                * oci-layout and index.json), or a file: a `docker save` archive
                                * or an OCI archive (`podman save --format oci-archive`) */
        const char *work_dir;  /* an existing private folder of the caller's; the image is copied
                                * and unpacked below it (layout/, rootfs/, tmp/) */
        char *const *envp;     /* PATH finds skopeo, umoci and tar; KBOUND_SKOPEO and KBOUND_UMOCI
                                * name them explicitly. Nothing else of it reaches the tools. */
        uint64_t max_bytes;    /* disk the copy and the unpacked root may take together; 0:
                                * KB_IMAGE_MAX_BYTES_DEFAULT */
        int cancel_fd;         /* readable → the tool is killed, -ECANCELED; <= 0: none */
        int64_t deadline_ms;   /* absolute (kb_now_ms); < 0: none */
        const char *cache_dir; /* an existing folder of the caller's (absolute) where unpacked images
                                * are kept by their manifest digest (images/<hex>/), or NULL: the
                                * image is unpacked below work_dir for this run alone */
} kb_image_options;

typedef struct kb_image kb_image;

/* Copies the image into a private OCI layout with skopeo (converting a docker archive; every blob
 * checked against its digest), refuses it if its layers alone exceed max_bytes, unpacks it with
 * `umoci raw unpack --rootless` (which works unprivileged and as root: files belong to the caller)
 * into work_dir/rootfs, then removes the copy. No layer, whiteout or tar entry is handled by
 * kbound itself. While a tool runs, the filesystem's free space is watched: past max_bytes used
 * (or under KB_IMAGE_RESERVE_BYTES left) the tool is killed. Tools run in their own process group,
 * die with the calling thread, and see only PATH, HOME and TMPDIR (inside work_dir).
 * Errors: -ENOENT (no such image path), -EINVAL (not an image
 * layout folder or archive, a path with ':' and no such file, a bad tag), -ENAMETOOLONG (the image's or
 * work_dir's path leaves no room for the names kbound adds), -EFBIG (over max_bytes),
 * -ENOPKG (skopeo or umoci is not installed), -EIO (a tool failed: the error quotes its last words),
 * -EPROTO (the copy's index, manifest or config is malformed), -ECANCELED, -ETIMEDOUT, -ENOMEM. On failure
 * whatever was written below work_dir is removed and *ret_error (if ret_error) gets the error, one line. */
KB_EXPORT int kb_image_unpack(const kb_image_options *o, kb_image **ret, kb_error **ret_error);
/* With o->cache_dir, the image's manifest digest is read in place first (an OCI layout's or OCI
 * archive's index.json; a docker archive, which has none, is keyed by its manifest.json and the tag),
 * and cache_dir/images/<hex> is used when it holds that image whole: its tree's digest, recorded when
 * it was unpacked, is computed again and must match, and its size must fit max_bytes (else -EFBIG).
 * One that does not verify is removed and the image unpacked again; an unpack is built beside the
 * entry and renamed into place once whole, under a lock (images/<hex>.lock) that a second run of
 * the same image waits on. The run holds the lock shared while it uses the entry, so none is
 * replaced under it; kb_image_destroy removes nothing of the cache. A compressed archive is
 * unpacked for the run alone (its entries cannot be read in place). */

/* The unpacked root filesystem (absolute; a folder with the image's /usr). */
KB_EXPORT const char *kb_image_rootfs(const kb_image *img);

/* The image as the user named it (path, absolute), its tag (the one given, else the only name in
 * the image's own index or the archive's manifest; NULL if none), its format ("oci-layout",
 * "docker-archive", "oci-archive"), the digest of the manifest that was unpacked ("sha256:..."),
 * and its config's digest (what `docker images --no-trunc` calls the image ID). */
KB_EXPORT const char *kb_image_path(const kb_image *img);
KB_EXPORT const char *kb_image_tag(const kb_image *img);
KB_EXPORT const char *kb_image_format(const kb_image *img);
KB_EXPORT const char *kb_image_manifest_digest(const kb_image *img);
KB_EXPORT const char *kb_image_config_digest(const kb_image *img);
/* The image config's "User" ("" if unset), and its "Env" (NULL-terminated, never NULL). */
KB_EXPORT const char *kb_image_user(const kb_image *img);
KB_EXPORT char *const *kb_image_env(const kb_image *img);
/* The bytes the unpacked root takes on disk, and the limit it was held to. */
KB_EXPORT uint64_t kb_image_unpacked_bytes(const kb_image *img);
KB_EXPORT uint64_t kb_image_max_bytes(const kb_image *img);

/* How the cache served it: NULL (not kept: no cache asked for, or an image that cannot be keyed),
 * "stored" (unpacked now and kept) or "reused" (the kept copy, verified); the cache's folder of the
 * image (NULL when not kept); and why the cache was not used or a kept copy was replaced (NULL when
 * nothing is to be said). */
KB_EXPORT const char *kb_image_cache_state(const kb_image *img);
KB_EXPORT const char *kb_image_cache_entry(const kb_image *img);
KB_EXPORT const char *kb_image_cache_note(const kb_image *img);

/* {"path", "tag", "format", "manifest_digest", "config_digest", "user", "unpacked_bytes",
 * "max_bytes", "cache"}: a new object for reports, NULL if out of memory. */
KB_EXPORT json_object *kb_image_json(const kb_image *img);

/* Removes the unpacked root (and anything else kbound wrote below work_dir; nothing of the cache's,
 * whose lock it lets go) and frees img; sets *imgp to NULL. Accepts NULL. */
KB_EXPORT void kb_image_destroy(kb_image **imgp);

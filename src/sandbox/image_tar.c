/* image_tar.c: an image archive's tar headers read in place, one at a time (docker save, podman save
 * and OCI archives are all tar files): what image.c tells of a file before a tool reads it, and
 * the entries image_cache.c keys an image by. Nothing of an archive is unpacked here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sandbox/image-internal.h"

#define TAR_BLOCK 512
#define TAR_ENTRIES_MAX 100000 /* headers read before a walk ends: far above any image's */

/* The magic numbers of the compressed files skopeo reads itself: gzip, zstd, xz, bzip2. */
static bool compressed(const unsigned char *h, ssize_t n) {
        static const unsigned char gzip[] = {0x1f, 0x8b}, zstd[] = {0x28, 0xb5, 0x2f, 0xfd},
                                   xz[] = {0xfd, '7', 'z', 'X', 'Z'}, bzip2[] = {'B', 'Z', 'h'};
        return (n >= 2 && !memcmp(h, gzip, 2)) || (n >= 4 && !memcmp(h, zstd, 4)) || (n >= 5 && !memcmp(h, xz, 5)) ||
               (n >= 3 && !memcmp(h, bzip2, 3));
}

int image_tar_next(image_tar *t, image_tar_entry *ret) {
        /* an entry whose size could not be read has no known end, so nothing after it can be found */
        if (t->size_unread)
                return -EPROTO;
        if (t->entries >= TAR_ENTRIES_MAX)
                return 0;
        unsigned char h[TAR_BLOCK];
        ssize_t n = pread(t->fd, h, sizeof h, t->at);
        if (n < 0)
                return -errno;
        if (t->entries++ == 0 && compressed(h, n))
                return -ENOTSUP;
        if (n < (ssize_t) sizeof h || h[0] == '\0')
                return 0; /* the end: a short read or the archive's zero block */
        if (memcmp(h + 257, "ustar", 5) != 0)
                return -EPROTO; /* no (POSIX) tar header */
        char name[101];
        memcpy(name, h, 100);
        name[100] = '\0';
        const char *base = strncmp(name, "./", 2) == 0 ? name + 2 : name;
        memcpy(ret->name, base, strlen(base) + 1);
        ret->type = (char) h[156];
        ret->data_at = t->at + TAR_BLOCK;
        char size_text[13];
        memcpy(size_text, h + 124, 12);
        size_text[12] = '\0';
        char *end;
        ret->size = strtoull(size_text, &end, 8);
        ret->size_read = end != size_text;
        if (ret->size_read)
                t->at += TAR_BLOCK + (off_t) ((ret->size + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK);
        else
                t->size_unread = true;
        return 1;
}

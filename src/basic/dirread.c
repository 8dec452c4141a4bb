/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "dirread.h"

#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

struct linux_dirent64 {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[];
};

void dirread_init(struct dirread *d, int fd) {
        d->fd = fd;
        d->got = d->off = 0;
}

const char *dirread_next(struct dirread *d, unsigned char *ret_type) {
        const struct linux_dirent64 *de;

        if (d->off >= d->got) {
                errno = 0;
                d->got = syscall(SYS_getdents64, d->fd, d->buf, sizeof d->buf);
                d->off = 0;
                if (d->got <= 0)
                        return NULL;
        }
        de = (const void *) (d->buf + d->off);
        d->off += de->reclen;
        if (ret_type)
                *ret_type = de->type;
        return de->name;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A directory's entries through getdents64 into the caller's buffer, usually
 * on its stack. readdir() needs a DIR, which glibc allocates with a 32 KiB
 * buffer on every opendir: in a process that forks (the Python binding calls
 * a function per fork), each page of that fresh allocation is a
 * copy-on-write fault. The fd stays the caller's.
 */
#pragma once

#include <stddef.h>

struct dirread {
        int fd;
        long got, off;
        char buf[4096] __attribute__((aligned(8)));
};

void dirread_init(struct dirread *d, int fd);
/* The next entry's name (and its d_type in *ret_type), NULL at the end or on
 * an error (errno then set, else 0). "." and ".." are returned like others. */
const char *dirread_next(struct dirread *d, unsigned char *ret_type);

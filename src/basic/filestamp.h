/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What stat(2) says of the files something was built from, to tell later,
 * without reading them again, whether any may have changed since: a
 * configuration read once and used for many jobs (settings/config.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

struct filestamp {
        char *path;
        int err; /* 0, or stat's -errno (-ENOENT: absent) */
        dev_t dev;
        ino_t ino;
        mode_t mode;
        uid_t uid;
        gid_t gid;
        off_t size;
        struct timespec mtime, ctime;
};

struct filestamps {
        struct filestamp *v;
        size_t n;
};

/* How long before a build a file must have last changed for its stamp to
 * vouch for what was read: a write within the same timestamp tick as the
 * stamp, of the same size, would leave stat's answer as it was. */
#define FILESTAMP_SETTLE_NS (2ULL * 1000000000ULL)

/* Stamps path now (absent is a state too). 0 or -ENOMEM. */
int filestamps_add(struct filestamps *s, const char *path);
/* Every path's stat is as stamped. */
bool filestamps_unchanged(const struct filestamps *s);
/* Every path present had last changed FILESTAMP_SETTLE_NS before since (a
 * CLOCK_REALTIME time taken before the files were read): what was read is
 * what is stamped. */
bool filestamps_settled(const struct filestamps *s, const struct timespec *since);
void filestamps_done(struct filestamps *s);

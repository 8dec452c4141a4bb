/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

/* the rules, with owner (a uid besides root's, or 0) allowed to own too */
static int judge(const struct stat *st, enum trust_kind kind, uid_t owner, char *why, size_t size) {
        if (st->st_uid != 0 && st->st_uid != owner) {
                if (owner)
                        snprintf(why, size, "owned by uid %u, not root nor uid %u", (unsigned) st->st_uid,
                                 (unsigned) owner);
                else
                        snprintf(why, size, "owned by uid %u, not root", (unsigned) st->st_uid);
                return -EPERM;
        }
        if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(kind == TRUST_ANCESTOR && (st->st_mode & S_ISVTX))) {
                snprintf(why, size, "writable by group or others (mode %04o)", (unsigned) (st->st_mode & 07777));
                return -EPERM;
        }
        return 0;
}

int trust_judge(const struct stat *st, enum trust_kind kind, char *why, size_t size) {
        return judge(st, kind, 0, why, size);
}

static int check_type(int fd, const char *path, bool directory, char *why, size_t size, struct stat *ret) {
        if (fstat(fd, ret) < 0)
                return negative_errno();
        if (directory && !S_ISDIR(ret->st_mode)) {
                snprintf(why, size, "%s is not a directory", path);
                return -ENOTDIR;
        }
        if (!directory && !S_ISREG(ret->st_mode)) {
                snprintf(why, size, "%s is not a regular file", path);
                return S_ISDIR(ret->st_mode) ? -EISDIR : -EINVAL;
        }
        return 0;
}

/* the walk of trust_open with check: see trust.h */
static int open_checked(const char *path, bool directory, uid_t owner, char *why, size_t size) {
        int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (directory ? O_DIRECTORY : 0);
        _cleanup_free_ char *real = NULL;
        _cleanup_close_ int dfd = -1;
        struct stat st;
        char *p, *slash;
        int r;

        why[0] = '\0';
        /* absent (a build tree's config dir, a user without profiles): one
         * stat, not realpath's readlink of each component and its frame of
         * pages, on every job (bench/NOTES.md, row 10) */
        if (stat(path, &st) < 0 && errno == ENOENT)
                return -ENOENT;
        real = realpath(path, NULL);
        if (!real)
                return negative_errno();
        dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        /* real is absolute and canonical: judge "/", then each directory
         * below it, reached through the fd of the one above */
        p = real + 1;
        for (;;) {
                char w[128];
                int fd;

                slash = strchr(p, '/');
                if (fstat(dfd, &st) < 0)
                        return negative_errno();
                /* a directory being opened is itself the one holding the
                 * files: the sticky allowance ends above it */
                if (judge(&st, slash || directory ? TRUST_ANCESTOR : TRUST_PARENT, owner, w, sizeof w) < 0) {
                        snprintf(why, size, "its directory %.*s is %s", p - real > 1 ? (int) (p - real - 1) : 1, real,
                                 w);
                        return -EPERM;
                }
                if (!slash)
                        break;
                *slash = '\0';
                fd = openat(dfd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                *slash = '/';
                if (fd < 0)
                        return negative_errno();
                close(dfd);
                dfd = fd;
                p = slash + 1;
        }
        if (*p == '\0') { /* the path is "/" itself */
                snprintf(why, size, "%s is not a %s", real, directory ? "usable directory" : "regular file");
                return -EINVAL;
        }
        {
                _cleanup_close_ int fd = openat(dfd, p, flags | O_NOFOLLOW);
                char w[128];
                if (fd < 0)
                        return negative_errno();
                r = check_type(fd, real, directory, why, size, &st);
                if (r < 0)
                        return r;
                if (judge(&st, TRUST_FILE, owner, w, sizeof w) < 0) {
                        if (strcmp(real, path) == 0)
                                snprintf(why, size, "it is %s", w);
                        else
                                snprintf(why, size, "its target %s is %s", real, w);
                        return -EPERM;
                }
                return TAKE_FD(fd);
        }
}

int trust_open(const char *path, bool directory, bool check, char *why, size_t size) {
        int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (directory ? O_DIRECTORY : 0);
        struct stat st;
        int r;

        why[0] = '\0';
        if (!check) {
                _cleanup_close_ int fd = open(path, flags);
                if (fd < 0)
                        return negative_errno();
                r = check_type(fd, path, directory, why, size, &st);
                return r < 0 ? r : TAKE_FD(fd);
        }
        return open_checked(path, directory, 0, why, size);
}

int trust_open_owned(const char *path, uid_t owner, char *why, size_t size) {
        return open_checked(path, false, owner, why, size);
}

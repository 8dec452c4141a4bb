/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Opening a configuration file that root may act on. When leash runs as root
 * (a scheduler's prolog), a limit taken from a file an ordinary user can edit
 * is a privilege escalation. So the file is judged by what it really is: the
 * path is resolved (realpath: a symlink is judged by its target), then walked
 * from "/" one component at a time with O_NOFOLLOW, each directory fstat'ed
 * through the fd that leads to the next one, so what is judged is what is
 * opened (a symlink swapped in after realpath makes the open fail, not
 * succeed elsewhere).
 *
 * The rules: the file and every directory on its path must be owned by root
 * and not writable by group or others. A directory above the file's own
 * directory may be world-writable if it has the sticky bit (/tmp): there, no
 * one but root can rename or remove root's entries. The file's own directory
 * (or, when a directory is opened, that directory) gets no such allowance. POSIX ACLs need no separate look: a named-user or
 * group entry shows up in the group permission bits (the ACL mask).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

enum trust_kind {
        TRUST_FILE,     /* the configuration file itself */
        TRUST_PARENT,   /* the directory holding it */
        TRUST_ANCESTOR, /* any directory above that */
};

/* 0 when st passes the rules for kind, else -EPERM with why ("owned by uid
 * 1000, not root", "writable by group or others (mode 0666)"). Pure. */
int trust_judge(const struct stat *st, enum trust_kind kind, char *why, size_t size);

/* Opens path read-only (O_CLOEXEC|O_NONBLOCK, a regular file or, with
 * directory, a directory). With check, applies the rules to the resolved
 * path and fills why with "PATH is owned by ..." naming the culprit; -EPERM
 * then. Other failures: -errno (-ENOENT, -ENOTDIR, -EISDIR, -EINVAL for a
 * file that is not regular, with why filled too). */
int trust_open(const char *path, bool directory, bool check, char *why, size_t size);

/* trust_open of a regular file with check, where owner (a uid) may own the
 * file and the directories on its path as root may: a library a user names
 * for their own leash (LEASH_NVML_LIBRARY), opened by fd. */
int trust_open_owned(const char *path, uid_t owner, char *why, size_t size);

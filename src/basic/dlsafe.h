/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dlopen() that a static leash can survive. The leash binary is linked
 * -static-pie (HACKING.md, "static leash") and loads two optional libraries
 * at run time: the NVIDIA driver's libnvidia-ml.so.1 and libsystemd.so.0.
 * Such a library brings the system's own libc.so.6 into a process whose libc
 * is linked in; glibc supports that only when both are the same glibc
 * version. Seen on a lent H200 machine (Ubuntu 24.04, glibc 2.39) with a
 * leash linked on Debian 12 (glibc 2.36): every dlopen of libnvidia-ml.so.1
 * died with SIGFPE inside the loader, taking `leash check` and every GPU job's
 * supervisor with it (docs/gpu-check.out).
 *
 * So a static program first compares its own glibc version with the one of
 * the system's dynamic loader (the file every dynamic program of this
 * architecture names as its interpreter) and refuses, with a reason, where
 * they differ or the loader cannot be read. A dynamically linked program
 * (libleash.so, a --disable-static-leash build) loads as usual.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* true in a program with no dynamic loader (static or static-pie) */
bool dl_linked_statically(void);

/* The glibc version of the system's dynamic loader ("2.39"), read from the
 * loader file at path (NULL: this architecture's). -errno when it cannot be
 * read or names no version. */
int dl_system_glibc_version(const char *path, char *buf, size_t size);

/* dlopen(name, flags), or NULL with *ret_why set to a sentence (static text
 * or buf) saying why: a static program whose glibc differs from the
 * system's, or dlerror()'s text. */
void *dl_open_checked(const char *name, int flags, char *buf, size_t size, const char **ret_why);

/* dl_open_checked of the file open at fd (a file judged through that fd:
 * trust_open_owned), loaded through /proc/self/fd/N so that a path swapped
 * after the judgement cannot load another file; name (its path) for the
 * why. The fd may be closed once this returns. */
void *dl_open_fd_checked(int fd, const char *name, int flags, char *buf, size_t size, const char **ret_why);

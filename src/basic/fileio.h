/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whole-file reads and single-write stores relative to a directory fd. cgroupfs
 * files are small and produced in one go by the kernel; a write must be one
 * write(2) for the kernel to parse it, so a short write is an error.
 * read_file_at and read_fd_at0 are for such files only (procfs, cgroupfs,
 * sysfs), read in chunks of half a page: there a read that does not fill its
 * chunk has read to the end, and they stop without a second read to see EOF
 * (a longer read may stop short at a page's end: a list of pids longer than
 * a page is not whole after it). Not for pipes, nor for a file another
 * process appends to.
 */
#pragma once

#include <stddef.h>

/* Reads at most size-1 bytes and NUL-terminates. -ENOENT if absent. */
int read_file_at(int dirfd, const char *name, char *buf, size_t size, size_t *ret_len);
/* Reads to EOF into a malloc'd NUL-terminated buffer; -EFBIG past max bytes. */
int read_fd_alloc(int fd, size_t max, char **ret, size_t *ret_len);
/* Reads a whole file (at most 64 MiB) into a malloc'd NUL-terminated buffer. */
int read_file_at_alloc(int dirfd, const char *name, char **ret, size_t *ret_len);
/* One write(2) of s; -errno of the write (EINVAL, EBUSY...) on failure. */
int write_string_at(int dirfd, const char *name, const char *s);
/* Reads from an already open fd at offset 0 (pread), NUL-terminated. */
int read_fd_at0(int fd, char *buf, size_t size, size_t *ret_len);
/* Opens /dev/null on each of fds 0, 1 and 2 that is closed, so that no file
 * leash opens later becomes "stderr" and receives its error lines (nor the
 * job's). */
int fd_sanitize_stdio(void);

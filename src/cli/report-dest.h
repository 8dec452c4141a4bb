/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where `leash run --report` writes: decided before the job starts, written
 * after it ended, through descriptors opened before it started. See
 * report-dest.c for the rules a root leash applies to paths a job can touch.
 */
#pragma once

#include <stdbool.h>

struct report_dest {
        const char *path; /* as given, for messages */
        int fd;           /* where the text goes: a descriptor, or the unnamed file */
        bool own_fd;
        int dirfd;      /* a regular file: the directory that will hold it */
        char *name;     /* its final name in dirfd */
        bool tmpfile;   /* fd is an O_TMPFILE, linked under a random name at the end */
        char *tmp_name; /* no O_TMPFILE here: the random name fd was created as */
};

/* Decides where the report goes and opens it; 0, or 125 after printing a
 * one-line error naming the path (nothing is left behind). */
int report_prepare(const char *path, struct report_dest *d);
/* Writes text and puts the file in place; -errno. */
int report_commit(struct report_dest *d, const char *text);
void report_close(struct report_dest *d);

/* Exposed for tests: "fd:N" and the names of a descriptor leash holds
 * (/dev/stdout, /dev//stdout, /dev/./stdout, /dev/fd/N, /proc/self/fd/N,
 * /proc/thread-self/fd/N, /proc/PID/fd/N with leash's PID) -> N; 0 = a path;
 * -EINVAL for a malformed number. */
int report_fd_of(const char *path, int *ret_fd);

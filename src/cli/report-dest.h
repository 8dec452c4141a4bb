/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where `leash run --report` and `--series` write: decided before the job
 * starts, written through descriptors opened before it started (the report
 * after the job ended, the series row by row while it runs). See
 * report-dest.c for the rules a root leash applies to paths a job can touch.
 */
#pragma once

#include <stdbool.h>

struct report_dest {
        const char *option; /* "--report", "--series": for messages */
        const char *path;   /* as given, for messages */
        bool live;          /* written while the job runs: the final name itself, no rename */
        bool created;       /* live: leash made the file (report_discard removes it) */
        int fd;             /* where the text goes: a descriptor, or the unnamed file */
        bool own_fd;
        int dirfd;      /* a regular file: the directory that will hold it */
        char *name;     /* its final name in dirfd */
        bool tmpfile;   /* fd is an O_TMPFILE, linked under a random name at the end */
        char *tmp_name; /* no O_TMPFILE here: the random name fd was created as */
};

/* Decides where the output of option goes and opens it; 0, or 125 after
 * printing a one-line error naming the option and the path (nothing is left
 * behind). live: the file is opened under its final name now (an existing
 * one truncated: it must be a regular file with one link), for rows written
 * as they come; else it is an unnamed file put in place by report_commit. */
int report_prepare(const char *option, const char *path, bool live, struct report_dest *d);
/* Writes text and puts the file in place; -errno. */
int report_commit(struct report_dest *d, const char *text);
/* A run that never started: removes a live file leash created. */
void report_discard(struct report_dest *d);
void report_close(struct report_dest *d);

/* Exposed for tests: "-" (standard output), "fd:N" and the names of a descriptor leash holds
 * (/dev/stdout, /dev//stdout, /dev/./stdout, /dev/fd/N, /proc/self/fd/N,
 * /proc/thread-self/fd/N, /proc/PID/fd/N with leash's PID) -> N; 0 = a path;
 * -EINVAL for a malformed number. */
int report_fd_of(const char *path, int *ret_fd);

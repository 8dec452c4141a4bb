/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/PID/stat, the one parser of it: "PID (comm) S ppid pgrp session ...".
 * The comm may hold spaces and parentheses: it ends at the last ')'. Times are
 * in clock ticks (sysconf(_SC_CLK_TCK)).
 * Beside it, the one reader of /proc/self/ns/TYPE: which namespace this is.
 */
#pragma once

#include <sys/types.h>

struct procstat {
        pid_t ppid, pgrp, session;
        char state;
        char comm[64];                                   /* 15 bytes from the kernel; a kernel thread's may be longer */
        unsigned long long start;                        /* clock ticks since boot: with the pid, who the process is */
        unsigned long long utime, stime, cutime, cstime; /* clock ticks */
};

/* The text of /proc/PID/stat -> the fields above; -EINVAL when it is not one. */
int procstat_parse(const char *text, struct procstat *ret);
/* Reads and parses PID/stat under proc_fd (an fd on /proc), or /proc/PID/stat
 * with AT_FDCWD: 0, -ESRCH when there is no such process, -EINVAL, -errno. */
int procstat_read(int proc_fd, pid_t pid, struct procstat *ret);

/* The inode of this process's namespace of a type ("pid", "cgroup"): the
 * link's text "TYPE:[INODE]" (readlink: the kernel names it without making
 * the nsfs inode that a stat of the link would), the st_ino a stat gives. */
int proc_self_ns_inode(const char *type, unsigned long long *ret);

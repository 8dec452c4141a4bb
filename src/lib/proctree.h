/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A process tree read from /proc: the one reader of /proc/PID/stat's
 * identity fields and of the per-thread children lists, for escape.c (the
 * job's processes outside its cgroup) and tree.c (the job without a cgroup).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proctree_stat {
        pid_t ppid, pgrp, session;
        char state;
        char comm[16];
        unsigned long long start; /* clock ticks since boot: with the pid, who the process is */
        unsigned long long utime, stime, cutime, cstime; /* clock ticks */
};

/* /proc/PID/stat's text -> the fields above. */
int proctree_parse_stat(const char *text, struct proctree_stat *ret);
/* Reads and parses /proc/PID/stat. */
int proctree_stat(pid_t pid, struct proctree_stat *ret);
/* Appends the children of every thread of pid (0: the caller) to list, with
 * parent[] their parent's pid, while *n < max. */
void proctree_children(pid_t pid, pid_t *list, pid_t *parent, size_t *n, size_t max);

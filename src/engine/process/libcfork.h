/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * glibc's fork() for a child that runs the caller's code, where the caller
 * has threads: see libcfork.c.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* The caller has (or had) more than one thread: a raw clone of it may copy
 * a malloc lock another thread holds. */
bool libcfork_needed(void);
/* fork(), and a pidfd of the child (close-on-exec). Returns 0 in the child;
 * in the parent the pid, *ret_pidfd set; -1 and errno with no child left. */
pid_t libcfork(int *ret_pidfd);
/* The same child, made in the cgroup of cgroup_fd: a fork() whose child
 * clones the job with CLONE_INTO_CGROUP | CLONE_PARENT and exits. Returns
 * 0 in the job, the job's pid in the caller (*ret_pidfd set), -1 and errno
 * with no child left: EINVAL or E2BIG where the kernel lacks
 * CLONE_INTO_CGROUP (before 5.7), ENOSYS without clone3. */
pid_t libcfork_into(int cgroup_fd, int *ret_pidfd);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A process tree read from /proc: the per-thread children lists and the
 * pidfd helpers, for escape.c (the job's processes outside its cgroup) and
 * tree.c (the job without a cgroup). /proc/PID/stat itself is read by
 * basic/procstat.c, the one parser of it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Called for each child found; returns false to stop the walk. */
typedef bool (*proctree_child_fn)(pid_t child, pid_t parent, void *userdata);
/* Calls fn for each child of every thread of pid (0: the caller); each list
 * is read whole: -ENOMEM when one could not be (the walk may miss some). */
int proctree_for_children(pid_t pid, proctree_child_fn fn, void *userdata);
/* Appends the children of every thread of pid (0: the caller) to list, with
 * parent[] their parent's pid, while *n < max. */
void proctree_children(pid_t pid, pid_t *list, pid_t *parent, size_t *n, size_t max);

/* A pidfd says its process ended (poll, no wait): every thread of it, and
 * only then. Not /proc/PID/stat's state Z, which a process shows once its
 * main thread has ended (pthread_exit) while its other threads run on: a
 * job that hid so from a walk kept itself and its children from every
 * signal, SIGKILL included, and outlived leash (tests/helpers/lh-zleader). */
bool proctree_pidfd_ended(int pidfd);
/* The id of the cgroup2 cgroup a pidfd's process is in (a zombie's too: its
 * last), from one ioctl (PIDFD_GET_INFO, Linux 6.13): 0, or -errno
 * (-ENOTTY before 6.13: read /proc/PID/cgroup instead). */
int proctree_pidfd_cgroup_id(int pidfd, uint64_t *ret);
/* sig through a pidfd: 0 or -errno. */
int proctree_pidfd_signal(int pidfd, int sig);
/* Waits, at most timeout_ms in all, until every pidfd (those < 0 skipped)
 * says its process ended. */
void proctree_wait_ended(const int *pidfds, size_t n, int timeout_ms);

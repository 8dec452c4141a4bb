/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The isolation mode (--isolate): the job in new pid and mount namespaces,
 * under a small init, with the cgroup filesystem and the kernel's tunables
 * read-only. See isolate.c. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "../leash.h"

struct isolate_plan {
        bool on;
        int status_rfd; /* leash's end: the job's wait status, from the init */
        int status_wfd; /* the init's end */
};

#define ISOLATE_PLAN_INIT \
        { .on = false, .status_rfd = -1, .status_wfd = -1 }

/* In the parent, before anything exists: refuses what cannot work (not root,
 * a forked function) and makes the status pipe. */
int isolate_prepare(bool isolate, bool fork_mode, struct isolate_plan *p, struct leash_error *err);
void isolate_plan_done(struct isolate_plan *p);

/* clone3(CLONE_NEWPID | CLONE_NEWNS | CLONE_INTO_CGROUP | CLONE_PIDFD),
 * fork-like: the init runs no exec, so leash cannot sleep in a vfork until
 * one. 0 in the child, the pid in the parent, -1 with errno. */
pid_t isolate_clone(int cgroup_fd, int *ret_pidfd);

/* In the child (pid 1 of the new namespace): sets up the mounts and the
 * session, forks the job and returns in it (pid 2; the signal mask as it was
 * at the clone). The init itself never returns: it forwards signals to the
 * job, reaps, and when the job has ended passes its wait status to leash and
 * exits. On a setup failure it returns -errno (nothing forked). errfd is
 * closed in the init once the job is forked. */
int isolate_child(const struct isolate_plan *p, int errfd);

/* After the init was reaped: the job's own status (and the processes the
 * kernel killed with the namespace) replace the init's. */
void isolate_collect(const struct isolate_plan *p, struct leash_result *r);

/* leash check: can this process make the namespaces? 0 yes, -errno no. */
int isolate_probe(void);

/* The report's "isolation" value for this run. */
const char *isolate_describe(const struct leash_spec *spec, const struct leash_result *r, bool isolated);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "../../sandbox/sandbox.h"

#define SPAWN_RLIMITS_MAX 4

struct sandbox_plan;
struct isolate_plan;
struct holder;

struct spawn_rlimit {
        int resource;
        rlim_t value;
};

struct spawn_params {
        char *const *argv; /* NULL with spawn_fork() */
        int cgroup_fd;
        const sigset_t *child_mask; /* NULL: the caller's mask as it is */
        struct spawn_rlimit rlimits[SPAWN_RLIMITS_MAX];
        unsigned n_rlimits;
        bool force_fallback;                /* fork + self-migration instead of clone3 (tests) */
        bool raw_fork;                      /* spawn_fork: a raw clone even where the caller has threads (tests) */
        bool sigchld_ignored;               /* give the job SIGCHLD=SIG_IGN */
        const struct sandbox_plan *sandbox; /* NULL: nothing to apply */
        const struct isolate_plan *isolate; /* NULL: no --isolate */
        struct holder *holder;              /* NULL: none; else made, and the job forked from it (holder.c) */
        bool close_held;                    /* spawn_fork: close the library's fds (heldfd.c) before seccomp */
};

struct spawn_failure {
        enum spawn_step step;
        int error;          /* positive errno */
        int rlimit;         /* SPAWN_STEP_RLIMIT: the resource that failed */
        uint64_t rlimit_to; /* ... and the value asked for */
};

/* Starts argv in the job cgroup. Returns 0 when a child was made: either the
 * command runs (ret_failure->step == SPAWN_STEP_NONE, *ret_pidfd valid) or
 * the child failed before or at exec and has been reaped (ret_failure says
 * where and why). A negative return means no child exists. */
int spawn_job(const struct spawn_params *p, pid_t *ret_pid, int *ret_pidfd, struct spawn_failure *ret_failure,
              bool *ret_used_clone3);

/* The same, but the child does not exec: spawn_fork() returns 1 in the
 * child, set up (in the cgroup, rlimits, sandbox; environ = the job's
 * environment), and 0 in the parent with the same outputs as spawn_job().
 * When the child was made inside the cgroup (clone3), the parent does
 * not wait for the child's setup: it gets the read end of the setup pipe
 * in ret_setup_fd instead (-1 when it did wait), and
 * spawn_setup_result() reads it once the child has ended. */
int spawn_fork(const struct spawn_params *p, pid_t *ret_pid, int *ret_pidfd, struct spawn_failure *ret_failure,
               int *ret_setup_fd);
/* The setup's outcome from the setup fd of an ended child, and closes fd:
 * 1 set up; 0 not, with the failed step in ret_failure (SPAWN_STEP_NONE: it
 * was killed before it was set up). */
int spawn_setup_result(int fd, struct spawn_failure *ret_failure);

const char *spawn_step_to_string(enum spawn_step s);

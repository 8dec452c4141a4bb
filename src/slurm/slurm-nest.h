/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The nest mode's placement: Slurm's job and step cgroups (CgroupPlugin=
 * cgroup/v2), adopted read-only.  leash finds the job cgroup from where
 * Slurm put a task (/proc/PID/cgroup), writes no limit there and moves no
 * process; it signals and kills only the tasks' subtrees (step_<S>/user),
 * never slurmstepd's (step_<S>/slurm).  See slurm-nest.c.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../engine/leash.h"

/* slurmstepd's cgroups below the job cgroup, as a pattern of their paths
 * there (struct leash_sampling's not_the_jobs): the sampler leaves them out. */
#define SLURM_NEST_STEPD_CGROUPS "step_*/slurm"

/* From /proc/PID/cgroup text: the cgroup2 path of job_<job_id>, when the
 * process sits in .../job_<job_id>/step_<step> or below (user/task_N, or
 * slurm/ before slurmstepd moved it); -ENOENT without a cgroup2 line, -EPERM
 * when it is not in that job's step. Only read: adoption opens the job
 * directory, it never writes there. */
int slurm_nest_job_path(const char *cgroup_text, uint32_t job_id, const char *step, char *ret, size_t size);
/* The same for a live pid: opens Slurm's job cgroup (ret_path: its path; on
 * -EPERM, the cgroup the process is in). */
int slurm_nest_open_job(pid_t pid, uint32_t job_id, const char *step, int *ret_fd, char *ret_path, size_t size);
/* sig to every task process of every step (step_* /user subtrees), never to
 * slurmstepd; how many got it. */
int slurm_nest_signal(int job_fd, int sig);
/* cgroup.kill on every step's user subtree; how many processes were there. */
int slurm_nest_kill(int job_fd);

struct slurm_nest_step {
        unsigned leftovers;       /* processes killed in step_<S>/user at its end */
        struct leash_usage usage; /* step_<S>'s own files: memory.peak, memory.events, cpu.stat */
};
/* At the end of step_<step>: count and kill what is left in its user
 * subtree, then read its accounting. killed: the job's ladder has killed the
 * tasks' subtrees (slurm_nest_kill): what they still hold is dying, and is
 * waited for (up to 2 s) before what is left is counted. -ENOENT when Slurm
 * removed it. */
int slurm_nest_step_end(int job_fd, const char *step, bool killed, struct slurm_nest_step *ret);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A job's events (supervise.c): what job.c calls once the job runs. The
 * arrow points one way: supervise.c knows the job object's data
 * (job-object.h), never job.c.
 */
#pragma once

#include "../process/job-object.h"
#include "../process/spawn.h"

/* From the start of the job (start, fork or adopt). */
int supervise_begin(struct leash_job *j);
/* The child failed before it ran anything of the job's: the job has ended
 * (reason exec_error or setup_error, start_error filled). Returns -errno. */
int supervise_start_failed(struct leash_job *j, const struct spawn_failure *sf, struct leash_error *err);
/* Kills the whole job now (cgroup.kill, and the main process through its pidfd). */
void supervise_kill_now(struct leash_job *j, const char *why);
/* SIGKILL to every process of the job cgroup (cgroup.kill, never with leash
 * inside it: then each process but leash and its watchdog). */
void supervise_kill_tree(struct leash_job *j);
/* The job has ended: no deadline is armed any more. */
void supervise_end(struct leash_job *j);
/* Records a signal in the report's log. */
void supervise_log_signal(struct leash_job *j, int sig, const char *why);

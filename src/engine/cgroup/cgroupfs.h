/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job cgroup, written through cgroupfs directly via held directory fds:
 * create it, enable controllers in the parent, write limits, signal and kill
 * its processes, wait for it to empty, remove it, and sweep job cgroups whose
 * leash died. (The prefix is cgroupfs_ because cgroup_ is libcgroup's.)
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../leash.h"

enum {
        CTL_MEMORY = 1 << 0,
        CTL_PIDS = 1 << 1,
        CTL_CPU = 1 << 2,
        CTL_IO = 1 << 3,
};
#define CTL_COUNT 4
extern const char *const cgroupfs_controller_names[CTL_COUNT];

/* "cpuset cpu io memory pids" -> CTL_* mask. */
unsigned cgroupfs_parse_controllers(const char *text);
/* "0-3,5\n" -> how many CPUs; -EINVAL when it is not a CPU list. */
int cgroupfs_parse_cpulist(const char *text);
/* "max 100000" -> 0 (no cap), "150000 100000" -> 1.5: cores allowed by cpu.max. */
double cgroupfs_parse_cpu_max(const char *text);

/* Enables the wanted controllers that the parent's cgroup.controllers offers
 * in its cgroup.subtree_control; *ret_available = what job cgroups get. */
int cgroupfs_enable_controllers(int parent_fd, unsigned want, unsigned *ret_available);

/* Read-only: the wanted controllers a child of this cgroup has or would get
 * (enabled already, or offered and can_enable). */
int cgroupfs_offered_controllers(int fd, bool can_enable, unsigned want, unsigned *ret);

/* How each asked-for limit would be enforced with these controllers. */
void cgroupfs_plan_enforcement(const struct leash_spec *c, unsigned available,
                               enum leash_enforcer ret[_LEASH_LIMIT_MAX], const char *ret_note[_LEASH_LIMIT_MAX]);

/* mkdir <name>@<pid>[.<n>] under the parent; returns its dirfd. */
int cgroupfs_create_job(int parent_fd, const char *name, char *ret_dirname, size_t size, int *ret_fd);

/* Writes the cgroup limit files of the plan. */
int cgroupfs_apply_limits(int job_fd, const struct leash_spec *c, const enum leash_enforcer plan[_LEASH_LIMIT_MAX],
                          struct leash_error *err);

/* fn(fd, depth, rel, userdata) for the cgroup fd (depth 0, rel "") and each
 * cgroup below it (rel: its path below fd, "step_0/user"), depth first, down
 * to CGROUPFS_WALK_DEPTH levels below fd (a job may hold cgroups of its own:
 * a nested leash's, Slurm's steps, any a job of uid 0 makes). fn returns
 * CGROUPFS_WALK_PRUNE to have nothing below that cgroup walked. A cgroup
 * that went while walked is passed by. Returns how many cgroups fn saw, or
 * fn's first negative return; *ret_truncated (may be NULL): a cgroup deeper
 * than that exists, and was not walked. */
#define CGROUPFS_WALK_DEPTH 16
#define CGROUPFS_WALK_PRUNE 1
typedef int (*cgroupfs_walk_fn)(int fd, unsigned depth, const char *rel, void *userdata);
int cgroupfs_walk(int fd, cgroupfs_walk_fn fn, void *userdata, bool *ret_truncated);

/* sig to every process of the job, in its cgroup and every cgroup below it,
 * but skip (0: none), with the cgroup frozen meanwhile so that no pid read
 * from cgroup.procs is recycled before it is signalled; returns how many got
 * it. */
int cgroupfs_signal_all(int job_fd, int sig, pid_t skip);
/* sig to every process of the job but those in skip, without freezing it:
 * for when leash itself is in the job cgroup (escape.c). */
int cgroupfs_signal_each(int job_fd, int sig, const pid_t *skip, size_t n_skip);
/* The CPUs the job can run on at once: its effective cpuset (else the online
 * CPUs), capped by its cpu.max. At least 1. */
double cgroupfs_job_cores(int job_fd);
/* From an fd of cgroup.events (pread, which also re-arms its POLLPRI):
 * 1 populated, 0 empty. */
int cgroupfs_events_populated(int events_fd);
/* SIGKILL to the whole job: cgroup.kill, or freeze + kill each + thaw. */
int cgroupfs_kill(int job_fd);
/* 1 when processes remain (cgroup.events "populated 1"), 0 when empty. */
int cgroupfs_populated(int job_fd);
/* memory.events counts an OOM kill in this cgroup. */
bool cgroupfs_oom_killed(int job_fd);
/* Waits (inotify on cgroup.events, bounded) until the job is empty. */
int cgroupfs_wait_empty(int job_fd, int timeout_ms);
/* rmdir, killing and waiting once more if it is still busy; cgroups the job
 * made inside its own are removed first, depth-first. */
int cgroupfs_remove(int parent_fd, const char *dirname, int job_fd);

/* clone3(CLONE_INTO_CGROUP) understood by this kernel? (no process made) */
bool cgroupfs_probe_clone_into_cgroup(void);

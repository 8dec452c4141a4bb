/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Looking at running jobs from outside (`leash ps`, `stat`, `top`): which
 * directories under a cgroup parent are leash jobs, what their records say
 * (jobstate.c), and one sample of each now (src/engine/sample/sample.c), read
 * through a dirfd per job. Nothing here writes to a cgroup. A job is a child
 * of the parent that carries a record this reader may believe, or whose name
 * is leash's grammar NAME@PID[.N] (a non-root reader cannot read root's
 * trusted record, and still sees root's jobs by name). Cores "now" needs two
 * samples: the caller takes them an interval apart (monitor_cores).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jobstate.h"
#include "../leash.h"
#include "../sample/sample.h"

struct monitor_job {
        char dirname[256];
        char cgroup[4096]; /* its path */
        bool has_state;    /* st is a record this reader believes */
        struct jobstate st;
        char name[80];   /* the record's name, else the directory's up to '@' */
        pid_t leash_pid; /* 0 when unknown */
        bool leash_alive;
        pid_t main_pid; /* the process whose parent is leash, 0 when none */
        uid_t uid;      /* the main process's (or the first process's) real uid */
        bool has_uid;
        uint64_t started_ns; /* CLOCK_REALTIME, LEASH_NULL when unknown */
        uint64_t sampled_ns; /* CLOCK_MONOTONIC of the sample */
        struct leash_sample s;
        uint64_t mem_peak;         /* memory.peak, LEASH_NULL when the kernel gives none */
        struct sample_proc *procs; /* with monitor_read(..., want_procs) */
        size_t n_procs;
};

void monitor_job_done(struct monitor_job *j);
void monitor_jobs_free(struct monitor_job *jobs, size_t n);

/* The parent as `leash run` would use it (NULL: the placement chain),
 * without creating or moving anything; the decision into *p. *ret_fd is -1
 * (and 0 returned) when the default parent does not exist yet, or there is
 * no cgroup (PLACEMENT_NONE): there are no jobs to list. */
int monitor_open_parent(const char *requested, int *ret_fd, struct placement *p, struct leash_error *err);
/* Every job under the parent, sampled now, sorted by directory name. */
int monitor_list(int parent_fd, const char *parent_path, int proc_fd, struct monitor_job **ret, size_t *ret_n);
/* One job: a directory name under the parent, or a cgroup path under the
 * cgroup2 mount. -ENOENT when there is none, -ENOTDIR when not a cgroup. */
int monitor_read(int parent_fd, const char *parent_path, const char *dirname, int proc_fd, bool want_procs,
                 struct monitor_job *ret);
/* The cgroup (a path under the cgroup2 mount) of a process: -ESRCH when gone. */
int monitor_cgroup_of_pid(pid_t pid, char *ret, size_t size);
/* cores over the interval between two samples of the same job (in j->s) */
void monitor_cores(struct monitor_job *j, const struct monitor_job *prev);
/* A compact text of the job's limits: "memory=1G wall_time=90s disk=10M" */
void monitor_limits_text(const struct monitor_job *j, char *buf, size_t size);

/* The json-c adapter (report.c): {"jobs": [...]} or one job object. */
int report_monitor_json(const struct monitor_job *jobs, size_t n, bool single, char **ret);
